"""corpus_httpd.py - the corpus's thread-per-connection server: Python's
http.server.ThreadingHTTPServer serving one directory, HTTP/1.1 keep-alive.

    python3 corpus_httpd.py PORT DIR

One thread per connection (socketserver.ThreadingMixIn): each thread
blocks in recv on its own connection and answers with send, so the
server has no event loop and makes no poll-family call while it serves.
The listening thread waits for connections in poll() (selectors), once
per accept.  protocol_version HTTP/1.1 keeps connections open (the
default, HTTP/1.0, closes after every response); TCP_NODELAY, or the
body (the second send) would wait for the client's delayed ACK; the
request log is off.
"""
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body leave in two sends; with Nagle the body waits for
    # the client's delayed ACK of the headers (40 ms at low load)
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        # a client that leaves mid-response (sfload at the end of its
        # drain) is no error of the server's
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def main():
    if len(sys.argv) != 3:
        print("usage: corpus_httpd.py PORT DIR", file=sys.stderr)
        return 2
    h = functools.partial(Handler, directory=sys.argv[2])
    Server(("127.0.0.1", int(sys.argv[1])), h).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
