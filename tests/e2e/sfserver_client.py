"""sfserver_client.py PORT work | PORT emfile PID | PORT steps N GO - a client
of sfserver on 127.0.0.1:PORT speaking the "sf" protocol
(tools/workload/sf_proto.h).

  work      asks for 5 s of work in one request; prints "fast" (answered
            within 1 s) or "slow N s", then the work_us the server answered
            (the time it spun)
  emfile    holds 12 connections (more than the server's fds allow) for
            1.5 s, prints "cpu low" when the server (PID) used under 30
            clock ticks of CPU meanwhile, else the ticks, closes them and
            makes one request on a new connection ("served")
  steps     on one connection, 3 requests one at a time (the server has
            received on it since), prints "armed", waits until the file GO
            exists (at most 20 s), then N requests one at a time, each sent
            whole only after the previous answer came: prints "served N"
            and closes
"""
import os
import socket
import struct
import sys
import time

# id, send_time_ns, work_us, flags, reserved; the answer alike
MESSAGE = "<QQII8x"

port, mode = int(sys.argv[1]), sys.argv[2]


def ask(s, ident, work):
    """One request on s and its whole answer: the answer's work_us."""
    s.sendall(struct.pack(MESSAGE, ident, 1, work, 0))
    r = b""
    while len(r) < 32:
        b = s.recv(32 - len(r))
        if not b:
            sys.exit("sfserver_client: the server closed the connection")
        r += b
    return struct.unpack(MESSAGE, r)[2]


def request(work):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    t = time.monotonic()
    spun = ask(s, 7, work)
    s.close()
    return time.monotonic() - t, spun


def cpu_ticks(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


if mode == "steps":
    n, go = int(sys.argv[3]), sys.argv[4]
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(3):
        ask(s, i, 0)
    print("armed", flush=True)
    deadline = time.monotonic() + 20
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            sys.exit("sfserver_client: no %s after 20 s" % go)
        time.sleep(0.02)
    for i in range(n):
        ask(s, 3 + i, 0)
    s.close()
    print("served %d" % n, flush=True)
elif mode == "work":
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
