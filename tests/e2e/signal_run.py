"""signal_run.py - one open-loop run for tests/e2e/test_signal.sh."""
# One sfload run against the watched sfserver in slot SLOT, the target's
# response-stream windows (pinned sf_responses, read with bpftool) collected
# while it runs; then, with no traffic, how long until its response and send
# streams publish a quiet window and its verdict says quiet.  Prints one
# JSON object.
#
# With CTL and DIR: while the load runs (from a second in), `CTL show
# --json --slot SLOT` and the exporter's textfile (CTL export --textfile
# DIR, started here) are read a few times: "readings" lists, per read, the
# reading's resp_rate, service_mean and service_p99 (exact strings, with
# their window), the rate of the response stream's newest window in the
# same document computed here from its samples and sum_ns
# (floor(samples * 10^12 / sum_ns) thousandths), the rate of the windows of
# that document closed in the run, and the exporter's satfeed_response_rate_per_second and
# satfeed_service_time_mean_seconds of the target (None when absent).
# And, from `CTL show --json` before the run and once the target is quiet
# after it: "svc", the service-time stream's windows published since, read
# during the run as the response stream's are (their samples and sum_ns
# summed: the engine's mean over the whole run, to set beside the server's
# own), "lost" when one closed that no read saw (the stream keeps 8);
# "send_calls" and "resp_calls", what the send and response streams counted
# meanwhile.
#
# CONNS (default 1): sfload's connections.  sfload runs --no-pipeline: one
# request pending per connection, so that a server falling behind (a slow
# or busy machine) still reads each request in a receive of its own and
# answers it with a response of its own in the engine's sense; pipelined
# requests read together are one response (docs/figures.md, "Limits").
#
#   signal_run.py ROOT SFLOAD SLOT PORT RATE DURATION [CTL DIR [CONNS]]
import json, os, re, subprocess, sys, time
from decimal import Decimal

root, sfload, slot, port, rate, duration = sys.argv[1:7]
ctl, tfdir, conns = (sys.argv[7:10] + [None, None, "1"])[:3]
slot = int(slot)


def dump(name):
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned",
                          root + "/" + name, "key", str(slot), "0", "0", "0"],
                         check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    # bpftool -j: raw bytes in "value", the BTF-formatted one in
    # "formatted" (a one-element list on some versions)
    return (j[0] if isinstance(j, list) else j)["formatted"]["value"]


def streams_dump():
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned",
                          root + "/sf_streams"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[slot * 3]["formatted"]["value"]  # send stream


got = {}        # the response stream's windows seen, by seq
svc_got = {}    # the service-time stream's


def collect(s, into=got):
    for w in s["hist"]:
        if w["seq"] and w["seq"] == w["seq_end"]:
            into[w["seq"]] = w


def exported(path):
    """{metric: value string} of the target's series (slot SLOT)."""
    vals = {}
    try:
        text = open(path).read()
    except OSError:
        return vals
    for line in text.splitlines():
        m = re.match(r'(\w+)\{([^}]*)\} (\S+)$', line)
        if m and re.search(r'(^|,)slot="%d"' % slot, m.group(2)):
            vals.setdefault(m.group(1), m.group(3))
    return vals


def show():
    """The target in `CTL show --json`."""
    out = subprocess.run([ctl, "--bpffs", root, "show", "--json", "--slot",
                          str(slot)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out, parse_float=Decimal)["targets"][0]


def reading():
    """One read of show --json's reading and the exporter's textfile."""
    t = show()
    rd, resp = t["reading"], t["response"]
    fig = {k: None if rd.get(k) is None else
           {"value": str(rd[k]["value"]), "window": rd[k]["window"]}
           for k in ("resp_rate", "service_mean", "service_p99")}
    ws = [w for w in resp["windows"] if w["samples"]]
    fig["newest_window_rate"] = None
    if resp["windows"] and resp["windows"][-1]["sum_ns"]:
        w = resp["windows"][-1]
        milli = w["samples"] * 10**12 // w["sum_ns"]
        fig["newest_window_rate"] = "%d.%03d" % (milli // 1000, milli % 1000)
    # the windows of this read closed inside the run
    fig["run_windows_rate"] = float(
        sum(w["samples"] for w in ws if w["start_ns"] >= t0) * 10**9 /
        sum(w["sum_ns"] for w in ws if w["start_ns"] >= t0)) \
        if any(w["start_ns"] >= t0 for w in ws) else None
    exp = exported(os.path.join(tfdir, "satfeed.prom"))
    for m in ("satfeed_response_rate_per_second",
              "satfeed_service_time_mean_seconds",
              "satfeed_service_time_p99_seconds"):
        fig["exp_" + m] = exp.get(m)
    return fig


before = dump("sf_responses")
seq0 = before["published"]
exporter = None
shown0 = show() if ctl else None
if ctl:
    exporter = subprocess.Popen([ctl, "--bpffs", root, "export",
                                 "--textfile", tfdir, "--interval", "0.2"],
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
readings = []
try:
    t0 = time.monotonic_ns()
    gen = subprocess.Popen([sfload, "--rate", str(rate), "--duration",
                            duration, "--json", "--no-progress",
                            "--connections", conns, "--no-pipeline",
                            "127.0.0.1:" + port],
                           stdout=subprocess.PIPE, text=True)
    while gen.poll() is None:
        time.sleep(0.3)
        collect(dump("sf_responses"))
        collect(dump("sf_service"), svc_got)
        # sfload's warm-up and the first windows first
        if ctl and time.monotonic_ns() - t0 > 1.5e9 and gen.poll() is None:
            readings.append(reading())
    out = gen.stdout.read()
    t1 = time.monotonic_ns()
finally:
    if exporter:
        exporter.terminate()
        exporter.wait()
rep = json.loads(out) if out.strip() else {}
after = dump("sf_responses")
collect(after)
ws = [w for q, w in sorted(got.items())
      if q > seq0 and w["start_ns"] >= t0 and w["end_ns"] <= t1
      and w["samples"]]
res = {"rate": float(rate), "gen_rc": gen.returncode, "report": rep,
       "readings": readings,
       "achieved": rep.get("achieved_rps"), "windows": len(ws),
       "missed": len([q for q in range(seq0 + 1, after["published"] + 1)
                      if q not in got])}
if ws:
    res["rps_obs"] = sum(w["samples"] for w in ws) * 1e9 / sum(
        w["sum_ns"] for w in ws)
    res["err_pct"] = 100.0 * (res["rps_obs"] - res["achieved"]) / \
        res["achieved"]
# quiet: poll until both streams' newest windows are quiet and the verdict
# says so; the time from the run's end
info = json.loads(subprocess.run(["bpftool", "-j", "map", "lookup", "pinned",
                                  root + "/sf_info", "key", "0", "0", "0",
                                  "0"], check=True, capture_output=True,
                                 text=True).stdout)
info = (info[0] if isinstance(info, list) else info)["formatted"]["value"]
T = info["max_age_ns"]
H = info["history"]     # closed windows a stream keeps (SATFEED_HISTORY)
res["max_age_ns"] = T
quiet_at = None
while time.monotonic_ns() < t1 + 3 * T:
    r = dump("sf_responses")
    s = streams_dump()
    v = dump("sf_verdict")
    rq = r["hist"][(r["published"] - 1) % H]["flags"] & 2 if r["published"] else 0
    sq = s["hist"][(s["published"] - 1) % H]["flags"] & 2 if s["published"] else 0
    if rq and sq and v["quiet_ns"] and v["state"] in (0, 1):
        quiet_at = time.monotonic_ns()
        res["verdict_why"] = v["why"]
        res["slack_permille"] = v["slack_permille"]
        break
    time.sleep(0.02)
collect(dump("sf_service"), svc_got)
res["quiet_after_ns"] = quiet_at - t1 if quiet_at else None
if ctl:
    t = show()
    svc = [w for q, w in svc_got.items() if q > shown0["service"]["seq"]]
    res["svc"] = {"n": sum(w["samples"] for w in svc),
                  "sum_ns": sum(w["sum_ns"] for w in svc),
                  "windows": len(svc),
                  "lost": t["service"]["seq"] - shown0["service"]["seq"] >
                  len(svc)}
    res["send_calls"] = t["send"]["calls"] - shown0["send"]["calls"]
    res["resp_calls"] = t["response"]["calls"] - shown0["response"]["calls"]
print(json.dumps(res))
