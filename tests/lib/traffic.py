"""traffic.py - exactly N socket calls of one kind per command line, on a
unix socketpair; tests/lib/traffic.sh drives it (the commands are listed
there)."""
import os, select, socket, sys, time
a, b = socket.socketpair()
p = select.poll(); p.register(b)
e = select.epoll()
print(os.getpid(), flush=True)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    w = line.split()
    cmd, n = w[0], int(w[1]) if len(w) > 1 else 0
    if cmd == "exit":
        break
    if cmd == "sendto":
        for _ in range(n):
            a.send(b"x"); b.recv(1)
    elif cmd == "sendmsg":
        for _ in range(n):
            a.sendmsg([b"x"]); b.recvmsg(1)
    elif cmd == "write":
        for _ in range(n):
            os.write(a.fileno(), b"x"); os.read(b.fileno(), 1)
    elif cmd == "pselect":
        for _ in range(n):
            select.select([b], [], [], 0)
    elif cmd == "poll":
        for _ in range(n):
            p.poll(0)
    elif cmd == "epoll":
        for _ in range(n):
            e.poll(0)
    elif cmd == "sleep":
        time.sleep(n / 1000)
    else:
        print("unknown", cmd, flush=True)
        continue
    print("done", cmd, n, flush=True)
