"""sfserver_client.py PORT work | PORT emfile PID - a client of sfserver on
127.0.0.1:PORT speaking the "sf" protocol (tools/workload/sf_proto.h).

  work      asks for 5 s of work in one request; prints "fast" (answered
            within 1 s) or "slow N s", then the work_us the server answered
            (the time it spun)
  emfile    holds 12 connections (more than the server's fds allow) for
            1.5 s, prints "cpu low" when the server (PID) used under 30
            clock ticks of CPU meanwhile, else the ticks, closes them and
            makes one request on a new connection ("served")
"""
import socket
import struct
import sys
import time

# id, send_time_ns, work_us, flags, reserved; the answer alike
MESSAGE = "<QQII8x"

port, mode = int(sys.argv[1]), sys.argv[2]


def request(work):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t = time.monotonic()
    s.sendall(struct.pack(MESSAGE, 7, 1, work, 0))
    r = b""
    while len(r) < 32:
        b = s.recv(32 - len(r))
        if not b:
            break
        r += b
    s.close()
    return time.monotonic() - t, struct.unpack(MESSAGE, r)[2]


def cpu_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


if mode == "work":
    took, spun = request(5000000)
    print("%s %d" % ("fast" if took < 1 else "slow %.1f s" % took, spun))
else:
    pid = int(sys.argv[3])
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(12)]
    time.sleep(0.3)
    t0 = cpu_ticks(pid)
    time.sleep(1.5)
    used = cpu_ticks(pid) - t0
    for s in held:
        s.close()
    took, spun = request(0)
    print("cpu %s served" % ("low" if used < 30 else "%d ticks" % used))
