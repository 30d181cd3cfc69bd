"""test_sfload_proto.py [SFLOAD] - sfload's --proto http and --proto dns
against small servers of known behaviour (no root, a few seconds): the
counts sfload reports must be exactly what the server did.

  http: a keep-alive server whose every 5th response is a 404 (error
        replies), whose bodies arrive in two pieces, and a server that
        answers chunked (sfload must refuse the framing: exit 1, the
        connection counted lost, its replies not counted as successes);
  dns:  a UDP responder that drops every 10th query (timeouts), answers
        every 7th with RCODE 3 (error replies), and sends one forged
        answer per 50 queries (a name sfload never asked: a bad reply,
        never a match); then the bad command lines.
Run by validate.sh before it takes the lock; exits 1 with what differed.
"""
import json
import socket
import subprocess
import sys
import threading
import time

SFLOAD = sys.argv[1] if len(sys.argv) > 1 else "build/sfload"
fails = []


def check(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))


def sfload(*args):
    p = subprocess.run([SFLOAD, "--json", "-G", "--warmup", "0",
                        "--drain", "0.5"] + list(args),
                       capture_output=True, text=True, timeout=30)
    rep = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, rep, p.stderr


def http_server(chunked):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def conn(s):
        try:
            serve(s)
        except OSError:     # sfload closed the connection: its choice
            pass

    def serve(s):
        buf, n = b"", 0
        while True:
            d = s.recv(65536)
            if not d:
                return
            buf += d
            while b"\r\n\r\n" in buf:
                head, buf = buf.split(b"\r\n\r\n", 1)
                assert head.startswith(b"GET /x HTTP/1.1\r\n"), head
                n += 1
                if chunked:
                    s.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: "
                              b"chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
                    continue
                st = b"404 Not Found" if n % 5 == 0 else b"200 OK"
                body = b"y" * 300
                s.sendall(b"HTTP/1.1 " + st + b"\r\nContent-Length: 300"
                          b"\r\nServer: t\r\n\r\n" + body[:100])
                s.sendall(body[100:])

    def accept():
        while True:
            s, _ = ls.accept()
            threading.Thread(target=conn, args=(s,), daemon=True).start()
    threading.Thread(target=accept, daemon=True).start()
    return ls.getsockname()[1]


def dns_server():
    us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    us.bind(("127.0.0.1", 0))

    def serve():
        n = 0
        while True:
            q, peer = us.recvfrom(512)
            n += 1
            if n % 10 == 0:
                continue
            a = bytearray(q)
            a[2] |= 0x80
            if n % 7 == 0:
                a[3] = (a[3] & 0xf0) | 3
            us.sendto(bytes(a), peer)
            if n % 50 == 1:
                f = bytearray(q)
                f[2] |= 0x80
                f[13:14] = b"z"          # q... -> z...: not sfload's name
                us.sendto(bytes(f), peer)
    threading.Thread(target=serve, daemon=True).start()
    return us.getsockname()[1]


def main():
    port = http_server(False)
    rc, rep, err = sfload("--proto", "http", "--path", "/x", "--rate", "500",
                          "--duration", "1", "-c", "3",
                          "127.0.0.1:%d" % port)
    check("http: exit status (%s)" % err.strip(), rc, 0)
    if rep:
        check("http: requests", rep["requests"], 500)
        check("http: error replies (every 5th per connection is a 404)",
              rep["errors"], sum(n // 5 for n in (167, 167, 166)))
        check("http: replies", rep["replies"] + rep["errors"], 500)
        check("http: timeouts", rep["timeouts"], 0)
        check("http: proto", rep["proto"], "http")
    port = http_server(True)
    rc, rep, err = sfload("--proto", "http", "--path", "/x", "--rate", "100",
                          "--duration", "0.5", "127.0.0.1:%d" % port)
    check("http chunked: exit status", rc, 1)
    check("http chunked: says why", "Content-Length" in err, True)
    if rep:
        check("http chunked: replies", rep["replies"], 0)

    port = dns_server()
    rc, rep, err = sfload("--proto", "dns", "--rate", "1000", "--duration",
                          "1", "-c", "2", "127.0.0.1:%d" % port)
    check("dns: exit status (%s)" % err.strip(), rc, 0)
    if rep:
        n = 1000
        dropped = n // 10
        nx = sum(1 for k in range(1, n + 1) if k % 10 and k % 7 == 0)
        check("dns: requests", rep["requests"], n)
        check("dns: timeouts (every 10th dropped)", rep["timeouts"], dropped)
        check("dns: errors (RCODE 3, and forged answers)", rep["errors"],
              nx + n // 50)
        check("dns: replies", rep["replies"], n - dropped - nx)
        check("dns: proto", rep["proto"], "dns")
    for bad in (["--proto", "dns", "--zone", "a..b"],
                ["--proto", "dns", "--zone", "a_b.test"],
                ["--proto", "http", "--path", "x"],
                ["--proto", "http", "--path", "/a b"]):
        p = subprocess.run([SFLOAD, "--rate", "1"] + bad + ["127.0.0.1:9"],
                           capture_output=True, text=True)
        check("%s: exit status" % " ".join(bad), p.returncode, 2)
    for f in fails:
        print("test_sfload_proto: FAIL:", f, file=sys.stderr)
    print("test_sfload_proto: %s" % ("ok" if not fails else
                                     "%d failed" % len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
