"""export_check.py - the HTTP side of tests/e2e/test_export.sh.

  fetch URL [METHOD] [ACCEPT]
      one request; prints the status, the Content-Type, a blank line and
      the body
  windows PROM TARGET SHOW_JSONL SECONDS
      the samples Prometheus scraped over the last SECONDS for TARGET
      (a pid), scrape by scrape: every scrape whose window sequence is in
      the history of one of the `satfeedctl show --json` documents in
      SHOW_JSONL (one a line, read while the windows closed: a stream
      keeps only SATFEED_HISTORY of them) must carry exactly that
      window's mean, variance and rate
  counters PROM TARGET SHOW_JSON
      the latest scraped counters and gauges of TARGET equal show --json's
  query PROM PROMQL
      an instant query; prints "LABELS VALUE" per series
  label PROM PROMQL NAME
      the same query; prints the value of the label NAME per series
  rules PROM
      the health of every alerting and recording rule Prometheus loaded
  scrape PROM
      the health and last error of Prometheus' (first) scrape target
  age TIMESTAMP MAX
      "yes" when the Unix time TIMESTAMP is 0 to MAX s before now, else
      how long before now it is
  slow URL IDLE PARTIAL NOREAD
      open IDLE connections that send nothing, PARTIAL that send half a
      request, NOREAD that send a whole request and never read the answer,
      then time one ordinary scrape while they are all open; prints
      "status S ms T"
  latency URL N
      N scrapes one after the other; prints the mean and the maximum in ms
  unique FILE
      every sample of the exposition in FILE names a series once (the
      same metric name and labels on two lines is a failure)
  reading SHOW_JSON FILE
      the verdict and headline figures of every target of show --json
      (its "saturation" and "reading") equal the exposition in FILE read
      just after: state set, level, reasons, stale, each figure's exact
      value and window, its age no less than show's and at most 10 s more
      (the idle share, stamped at every tick: from 0 to show's + 10 s)
  promql PROM DOC
      every ```promql block of DOC (docs/prometheus.md) is a query that
      Prometheus evaluates without an error; one after a line
      "<!-- check: share -->" gives values from 0 to 1 only, one after
      "<!-- check: some -->" at least one series
  alert PROM NAME TARGET
      the state of alert NAME for target TARGET: pending, firing or none

Every value is compared as the double the exposition's decimal parses to:
the exporter prints an exact decimal (an integer over a power of ten),
Prometheus parses it to the nearest double and returns that double's
shortest representation, which float() reads back unchanged; the
expected double is computed from show --json's exact integers with
Fraction, rounded once.
"""
import http.client
import json
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal
from fractions import Fraction

STREAMS = ("send", "recv", "poll", "response", "service")
# the streams that count failed calls
CORE = ("send", "recv", "poll")


def fetch(url, method="GET", accept=None, timeout=10):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    headers = {"Accept": accept} if accept else {}
    c.request(method, u.path or "/", headers=headers)
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    return r.status, r.getheader("Content-Type", ""), body


def query(prom, promql, at=None):
    q = {"query": promql}
    if at is not None:
        q["time"] = "%.3f" % at
    with urllib.request.urlopen(prom + "/api/v1/query?" +
                                urllib.parse.urlencode(q), timeout=10) as r:
        j = json.load(r)
    if j.get("status") != "success":
        raise SystemExit("query %s: %s" % (promql, j))
    return j["data"]["result"]


def api(prom, endpoint):
    """The data of Prometheus' /api/v1/ENDPOINT."""
    with urllib.request.urlopen(prom + "/api/v1/" + endpoint) as r:
        return json.load(r)["data"]


def by_stream(result):
    """{stream: {timestamp: value string}} of a range query's matrix."""
    out = {}
    for series in result:
        s = series["metric"].get("stream")
        out[s] = {ts: v for ts, v in series["values"]}
    return out


def show_target(path, target):
    with open(path) as f:
        show = json.load(f)
    for t in show["targets"]:
        if str(t.get("pid")) == target:
            return t
    raise SystemExit("target %s not in %s" % (target, path))


def show_windows(path, target):
    """{stream: {seq: window}} of every show --json document in path
    (one a line) that has target."""
    out = {s: {} for s in STREAMS}
    with open(path) as f:
        docs = [json.loads(line) for line in f if line.strip()]
    found = False
    for show in docs:
        for t in show["targets"]:
            if str(t.get("pid")) != target:
                continue
            found = True
            for s in STREAMS:
                out[s].update({w["seq"]: w for w in t[s]["windows"]})
    if not found:
        raise SystemExit("target %s not in %s" % (target, path))
    return out


def windows(prom, target, show_path, seconds):
    hists = show_windows(show_path, target)
    sel = '{target="%s"}[%ss]' % (target, seconds)
    seqs = by_stream(query(prom, "satfeed_windows_total" + sel))
    means = by_stream(query(prom, "satfeed_window_mean_seconds" + sel))
    variances = by_stream(query(prom,
                                "satfeed_window_variance_seconds_squared" +
                                sel))
    rates = by_stream(query(prom, "satfeed_window_rate_per_second" + sel))
    fails = 0
    for s in STREAMS:
        hist = hists[s]
        checked, distinct = 0, set()
        for ts, v in sorted(seqs.get(s, {}).items()):
            seq = int(float(v))
            if seq not in hist:
                continue
            w = hist[seq]
            want = {"mean": Fraction(w["mean_ns"], 10**9),
                    "variance": Fraction(w["var_ns2"], 10**18)}
            got = {"mean": means.get(s, {}).get(ts),
                   "variance": variances.get(s, {}).get(ts)}
            if s not in ("poll", "service"):  # no rate of waits, of service
                want["rate"] = Fraction(str(w["rate"]))
                got["rate"] = rates.get(s, {}).get(ts)
            for k in want:
                if got[k] is None or float(got[k]) != float(want[k]):
                    print("FAIL %s window %d (scrape at %s): %s scraped %s, "
                          "show --json %s" % (s, seq, ts, k, got[k],
                                              float(want[k])))
                    fails += 1
            checked += 1
            distinct.add(seq)
        print("%s scrapes %d windows %d" % (s, checked, len(distinct)))
    return fails


COUNTERS = [
    ("satfeed_windows_total", "seq", STREAMS),
    ("satfeed_window_pending_samples", "pending", STREAMS),
    ("satfeed_calls_total", "calls", STREAMS),
    ("satfeed_errors_total", "errors", CORE),
    ("satfeed_eagain_total", "eagain", CORE),
    ("satfeed_zero_byte_calls_total", "zero_bytes", ("send", "recv")),
    ("satfeed_not_socket_calls_total", "not_socket", ("send", "recv")),
]


def counters(prom, target, show_path):
    t = show_target(show_path, target)
    fails = checked = 0
    for metric, field, streams in COUNTERS:
        got = {r["metric"]["stream"]: r["value"][1]
               for r in query(prom, '%s{target="%s"}' % (metric, target))}
        for s in streams:
            if got.get(s) is None or int(float(got[s])) != t[s][field]:
                print("FAIL %s{stream=%s}: scraped %s, show --json %s=%s" %
                      (metric, s, got.get(s), field, t[s][field]))
                fails += 1
            checked += 1
    print("checked %d" % checked)
    return fails


def slow(url, idle, partial, noread):
    u = urllib.parse.urlsplit(url)
    held = []
    for i in range(idle + partial + noread):
        c = socket.create_connection((u.hostname, u.port))
        if i >= idle + partial:
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        elif i >= idle:
            c.sendall(b"GET /metr")
        held.append(c)
    time.sleep(0.3)
    t0 = time.monotonic()
    try:
        status, _, body = fetch(url, timeout=5)
    except OSError as e:
        status = "error(%s)" % e
    ms = (time.monotonic() - t0) * 1000
    for c in held:
        c.close()
    print("status %s ms %.1f" % (status, ms))


def latency(url, n):
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        fetch(url)
        times.append((time.monotonic() - t0) * 1000)
    print("mean_ms %.2f max_ms %.2f" % (sum(times) / n, max(times)))


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def samples(path):
    """[(name, {labels}, value text)] of an exposition file."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m:
                raise SystemExit("not a sample: %r" % line)
            labels = dict(LABEL.findall(m.group(3) or ""))
            out.append((m.group(1), labels, m.group(4)))
    return out


def unique(path):
    seen, fails = {}, 0
    for name, labels, _ in samples(path):
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            print("FAIL twice: %s%s" % (name, labels))
            fails += 1
        seen[key] = True
    print("%d series, %d twice" % (len(seen), fails))
    return fails


# show --json's "reading" keys and the exporter's gauge of each
FIGURES = {
    "idle": "satfeed_idle_ratio",
    "send_rate": "satfeed_send_rate_per_second",
    "recv_rate": "satfeed_recv_rate_per_second",
    "send_cv2": "satfeed_send_dispersion_ratio",
    "recv_cv2": "satfeed_recv_dispersion_ratio",
    "wps": "satfeed_waits_per_send",
    "resp_rate": "satfeed_response_rate_per_second",
    "service_mean": "satfeed_service_time_mean_seconds",
    "service_p99": "satfeed_service_time_p99_seconds",
    "drop_share": "satfeed_receive_drop_ratio",
    "cpu_share": "satfeed_cpu_ratio",
    "unread_max": "satfeed_receive_unread_bytes",
}
# figures as old as the engine's newest tick (sf_reading.c, idle_figure(),
# drop_figure(), cpu_figure(), unread_figure())
TICK_STAMPED = ("idle", "drop_share", "cpu_share", "unread_max")
REASONS = ("wps_full", "wps_near", "idle_full", "idle_near", "cv2_rise",
           "svc_full", "svc_near", "drop_full", "drop_near", "cpu_full",
           "cpu_near", "unread_full", "unread_near", "quiet")
LEVELS = {"unknown": 0, "ok": 1, "near": 2, "full": 3}


def reading(show_path, path):
    with open(show_path) as f:
        show = json.load(f, parse_float=Decimal)
    exp = {}
    for name, labels, v in samples(path):
        if "slot" in labels:
            key = (labels["slot"], labels["gen"])
            extra = labels.get("state") or labels.get("rule") or \
                labels.get("figure") or labels.get("stream")
            exp[(name, key, extra)] = v
    fails = checked = 0

    def check(what, got, want):
        nonlocal fails, checked
        checked += 1
        if got != want:
            print("FAIL %s: exported %s, show --json %s" % (what, got, want))
            fails += 1

    for t in show["targets"]:
        key = (str(t["slot"]), str(t["gen"]))
        sat, rd = t["saturation"], t["reading"]
        name = "slot %s gen %s" % key
        if set(rd) != set(FIGURES):
            print("FAIL %s: reading has %s" % (name, sorted(rd)))
            fails += 1
        for st in list(LEVELS) + ["gone"]:
            check("%s state %s" % (name, st),
                  exp.get(("satfeed_saturation_state", key, st)),
                  "1" if sat["state"] == st else "0")
        if sat["state"] == "gone":
            check(name + " gone: no level",
                  exp.get(("satfeed_saturation_level", key, None)), None)
            continue
        check(name + " level", exp.get(("satfeed_saturation_level", key,
                                        None)), str(LEVELS[sat["state"]]))
        for r in REASONS:
            check("%s reason %s" % (name, r),
                  exp.get(("satfeed_saturation_reason", key, r)),
                  "1" if r in sat["reasons"] else "0")
        check(name + " drops",
              exp.get(("satfeed_receive_drops_total", key, None)),
              str(sat["drops"]))
        # ns to seconds, nine decimals: exact
        check(name + " cpu seconds",
              exp.get(("satfeed_cpu_seconds_total", key, None)),
              "%d.%09d" % divmod(sat["cpu_ns"], 10 ** 9))
        if sat["state"] != "unknown":
            check(name + " stale",
                  exp.get(("satfeed_saturation_stale", key, None)),
                  "1" if sat["stale"] else "0")
        for fig, metric in FIGURES.items():
            f = rd.get(fig)
            got = exp.get((metric, key, None))
            if f is None:
                check("%s %s absent" % (name, fig), got, None)
                continue
            check("%s %s value" % (name, fig),
                  None if got is None else Decimal(got), f["value"])
            for w in ("partial", "stale"):
                check("%s %s %s" % (name, fig, w),
                      exp.get(("satfeed_figure_" + w, key, fig)),
                      "1" if f["window"] == w else "0")
            age = exp.get(("satfeed_figure_age_seconds", key, fig))
            d = None if age is None else \
                Decimal(age) * 10**9 - f["age_ns"]
            if fig in TICK_STAMPED:
                # stamped anew at every tick, quiet or not: a tick between
                # show --json and the scrape makes the exported one younger
                # (a CI run: show read it before a tick, the scrape after)
                check("%s %s age: exported in [0, show's + 10 s]" %
                      (name, fig), d is not None and
                      -f["age_ns"] <= d <= 10 * 10**9, True)
                continue
            check("%s %s age: exported - show in [0, 10 s]" % (name, fig),
                  d is not None and 0 <= d <= 10 * 10**9, True)
    print("targets %d checked %d" % (len(show["targets"]), checked))
    return fails


def promql(prom, doc):
    text = open(doc).read()
    blocks = re.findall(r'(<!-- check: (\w+) -->\s*)?```promql\n(.*?)```',
                        text, re.S)
    fails = 0
    for _, check, q in blocks:
        try:
            result = query(prom, q.strip())
        except (urllib.error.HTTPError, SystemExit) as e:
            print("FAIL %r: %s" % (q.strip(), e))
            fails += 1
            continue
        values = [float(r["value"][1]) for r in result]
        if check == "share" and any(not 0 <= v <= 1 for v in values):
            print("FAIL %r: a share outside 0..1: %s" % (q.strip(), values))
            fails += 1
        if check == "some" and not values:
            print("FAIL %r: no series" % q.strip())
            fails += 1
    print("examples %d checked" % len(blocks))
    return fails if blocks else 1


def alert(prom, name, target):
    for r in query(prom, 'ALERTS{alertname="%s",target="%s"}' %
                   (name, target)):
        return r["metric"]["alertstate"]
    return "none"


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "fetch":
        status, ctype, body = fetch(args[0], *(args[1:2] or ["GET"]),
                                    accept=args[2] if len(args) > 2 else None)
        print(status)
        print(ctype)
        print()
        sys.stdout.write(body)
    elif cmd == "windows":
        sys.exit(1 if windows(*args) else 0)
    elif cmd == "counters":
        sys.exit(1 if counters(*args) else 0)
    elif cmd == "query":
        for r in query(args[0], args[1]):
            print(json.dumps(r["metric"], sort_keys=True), r["value"][1])
    elif cmd == "label":
        for r in query(args[0], args[1]):
            print(r["metric"][args[2]])
    elif cmd == "rules":
        print(" ".join(r["health"] for g in api(args[0], "rules")["groups"]
                       for r in g["rules"]))
    elif cmd == "scrape":
        t = api(args[0], "targets")["activeTargets"][0]
        print(json.dumps(t["health"]), json.dumps(t["lastError"]))
    elif cmd == "age":
        d = time.time() - float(args[0])
        print("yes" if 0 <= d < float(args[1]) else d)
    elif cmd == "slow":
        slow(args[0], *map(int, args[1:4]))
    elif cmd == "latency":
        latency(args[0], int(args[1]))
    elif cmd == "unique":
        sys.exit(1 if unique(args[0]) else 0)
    elif cmd == "reading":
        sys.exit(1 if reading(*args) else 0)
    elif cmd == "promql":
        sys.exit(1 if promql(*args) else 0)
    elif cmd == "alert":
        print(alert(*args))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
