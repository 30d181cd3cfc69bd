"""traffic.py - exactly N socket calls of one kind per command line, on a
unix socketpair; tests/lib/traffic.sh drives it (the commands are listed
there)."""
import os, select, socket, sys, time
a, b = socket.socketpair()
p = select.poll(); p.register(b)
e = select.epoll()
# a one-byte file to sendfile from, a file to sendfile into, a pipe to splice
src = os.open(os.environ.get("TMPDIR", "/tmp"), os.O_TMPFILE | os.O_RDWR)
os.write(src, b"x")
dst = os.open(os.environ.get("TMPDIR", "/tmp"), os.O_TMPFILE | os.O_RDWR)
pr, pw = os.pipe()
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
    elif cmd == "sendfile":
        # sendfile to the socket: counted (output fd a socket)
        for _ in range(n):
            os.sendfile(a.fileno(), src, 0, 1); b.recv(1)
    elif cmd == "sendfile_file":
        # sendfile into a regular file: not a send (not_socket)
        for _ in range(n):
            os.sendfile(dst, src, 0, 1)
    elif cmd == "splice":
        # splice from a pipe to the socket: counted; the write that fills
        # the pipe is on a pipe, not a send
        for _ in range(n):
            os.write(pw, b"x"); os.splice(pr, a.fileno(), 1); b.recv(1)
    elif cmd == "splice_pipe":
        # splice from the socket into a pipe: output not a socket
        for _ in range(n):
            a.send(b"x"); os.splice(b.fileno(), pw, 1); os.read(pr, 1)
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
