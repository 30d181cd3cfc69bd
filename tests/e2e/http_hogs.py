#!/usr/bin/env python3
"""http_hogs.py URL RATE SECONDS: clients that send a whole request and never
read the answer nor close (RATE new ones per second, for SECONDS), while a
scraper GETs URL/metrics every 0.25 s with a 3 s timeout.  Prints
"scrapes OK FAILED hogs N" and, for each failed scrape, why."""
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request


def main():
    url, rate, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    u = urllib.parse.urlsplit(url)
    host, port = u.hostname, u.port
    stop = time.monotonic() + secs
    hogs, ok, failed, why = [], [0], [0], []

    def scraper():
        while time.monotonic() < stop:
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(url + "/metrics", timeout=3) as r:
                    r.read()
                    ok[0] += 1
            except Exception as e:  # a refused, reset or timed-out scrape
                failed[0] += 1
                why.append(repr(e))
            time.sleep(max(0.0, 0.25 - (time.monotonic() - t0)))

    t = threading.Thread(target=scraper)
    t.start()
    while time.monotonic() < stop:
        try:
            s = socket.create_connection((host, port), timeout=1)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: hog\r\n\r\n")
            hogs.append(s)  # never read, never closed
        except OSError:
            pass
        time.sleep(1.0 / rate)
    t.join()
    print("scrapes %d %d hogs %d" % (ok[0], failed[0], len(hogs)))
    for w in why[:5]:
        print(w)
    for s in hogs:
        s.close()


if __name__ == "__main__":
    main()
