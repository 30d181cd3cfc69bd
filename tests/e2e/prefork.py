"""prefork.py - a master whose worker processes do the I/O, as nginx's
master and workers do, for tests/e2e/test_discover.sh.

  serve PORT_FILE WORKERS
      listen on 127.0.0.1 (a free port, written to PORT_FILE once the
      workers are forked), fork WORKERS processes that each accept and answer
      with epoll_wait, recvfrom and sendto (a line back for each line),
      and wait for them: the master makes no traced call itself.  SIGTERM
      ends them all.
  load PORT REQUESTS CONNECTIONS
      send REQUESTS lines over CONNECTIONS connections, one at a time on
      each, and wait for every answer; prints the count answered
"""
import os
import select
import signal
import socket
import sys


def worker(ls):
    ep = select.epoll()
    ep.register(ls.fileno(), select.EPOLLIN)
    conns = {}
    while True:
        for fd, _ in ep.poll():
            if fd == ls.fileno():
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                conns[c.fileno()] = c
                ep.register(c.fileno(), select.EPOLLIN)
                continue
            c = conns[fd]
            try:
                data = c.recv(4096)
            except BlockingIOError:
                continue
            if not data:
                ep.unregister(fd)
                conns.pop(fd).close()
                continue
            c.send(data)


def serve(port_file, n):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    ls.setblocking(False)
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            worker(ls)
            os._exit(0)
        kids.append(pid)

    def stop(*_):
        for k in kids:
            try:
                os.kill(k, signal.SIGTERM)
            except ProcessLookupError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def load(port, requests, connections):
    socks = [socket.create_connection(("127.0.0.1", port))
             for _ in range(connections)]
    done = 0
    for i in range(requests):
        s = socks[i % connections]
        s.sendall(b"ping %d\n" % i)
        want = len(b"ping %d\n" % i)
        got = 0
        while got < want:
            got += len(s.recv(4096))
        done += 1
    for s in socks:
        s.close()
    print(done)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "load":
        load(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        raise SystemExit("usage: prefork.py serve PORT_FILE WORKERS | "
                         "load PORT REQUESTS CONNECTIONS")
