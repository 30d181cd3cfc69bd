"""proto_test.py PORT - the sf wire protocol against a running sfserver:
requests split into 7-byte pieces, 5000 coalesced in one write, a request's
own work_us, and backpressure; run by tests/e2e/test_tools.sh."""
import socket, struct, sys, threading, time
port = int(sys.argv[1])
def req(i, work=0):
    return struct.pack("<QQII8x", i, 1000 + i, work, 0)
def replies(s, n):
    buf = bytearray()
    while len(buf) < 32 * n:
        d = s.recv(1 << 20)
        if not d:
            sys.exit("server closed after %d bytes" % len(buf))
        buf += d
    return [struct.unpack_from("<QQII", buf, 32 * k) for k in range(n)]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.connect(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
data = b"".join(req(i) for i in range(50))
for k in range(0, len(data), 7):
    s.send(data[k:k + 7])
    time.sleep(0.0005)
r = replies(s, 50)
assert [x[0] for x in r] == list(range(50)), "split: ids out of order"
assert all(x[1] == 1000 + x[0] for x in r), "split: send_time not echoed"
s.sendall(b"".join(req(i, 3 if i == 0 else 0) for i in range(5000)))
r = replies(s, 5000)
assert [x[0] for x in r] == list(range(5000)), "coalesced: ids out of order"
assert r[0][2] == 3 and r[1][2] == 0, "work_us not honoured: %r" % (r[:2],)
N = 300000
t = threading.Thread(
    target=lambda: s.sendall(b"".join(req(i) for i in range(N))))
t.start()
time.sleep(1.0)
r = replies(s, N)
t.join()
assert [x[0] for x in r] == list(range(N)), "backpressure: ids out of order"
