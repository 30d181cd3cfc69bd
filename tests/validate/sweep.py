"""sweep.py - satfeed fidelity validation: the sweep driver.

Python 3 standard library only.  Drives one already-running, already-watched
server with sfload: measures its capacity, then sweeps offered rates from
~10% to ~120% of it; per level reads satfeed's closed windows (satfeedctl
show --json, polled during the level so no window is lost to the 16-window
history) and writes build/validate/<server>.csv (report.py reads it).

Windows are selected by time: a window counts for a level when it started
after the measured interval began and ended before it ended (window
timestamps are CLOCK_MONOTONIC, the same clock as time.monotonic()).
RPS_obs of a level = sum(N) * 1e9 / sum(sum_ns) over those windows.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

from fidelity import CSV_FIELDS, log


def show(ctl, bpffs, pid):
    out = subprocess.run([ctl, "--bpffs", bpffs, "show", "--json", "--pid",
                          str(pid)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("satfeedctl show failed (%d): %s" %
                           (out.returncode, out.stderr.strip()))
    doc = json.loads(out.stdout)
    for t in doc.get("targets", []):
        if t.get("pid") == pid:
            return t
    raise RuntimeError("pid %d is not watched under %s" % (pid, bpffs))


def run_level(a, rate, duration, collect=True):
    """One sfload run; returns (sfload report dict, {stream: [windows]})."""
    cmd = [a.sfload, "--rate", "%.1f" % rate, "--connections",
           str(a.connections), "--duration", "%.3f" % duration,
           "--warmup", str(a.warmup), "--drain", "1", "--json", "-G",
           "--proto", a.proto, "127.0.0.1:%d" % a.port]
    if a.proto == "memcached":
        cmd += ["--keys", "1000", "--set-ratio", "0.1"]
    seen = {"send": {}, "recv": {}, "poll": {}}
    t_launch = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    while collect and p.poll() is None:
        time.sleep(0.2)
        try:
            t = show(a.ctl, a.bpffs, a.pid)
        except RuntimeError as e:
            log("warning:", e)
            continue
        for s in seen:
            for w in t.get(s, {}).get("windows", []) or []:
                seen[s][w["seq"]] = w
    out, err = p.communicate()
    if collect:
        t = show(a.ctl, a.bpffs, a.pid)
        for s in seen:
            for w in t.get(s, {}).get("windows", []) or []:
                seen[s][w["seq"]] = w
    if p.returncode not in (0,):
        raise RuntimeError("sfload exited %d: %s" % (p.returncode,
                                                    err.strip()[-300:]))
    rep = json.loads(out)
    # The measured interval starts after sfload's warmup.  sfload's start-up
    # (memcached preload, connect) is not in t_launch, so the interval start
    # is bounded below by t_launch + warmup; pad both ends by 100 ms.
    t0 = (t_launch + a.warmup + 0.1) * 1e9
    t1 = (t_launch + a.warmup + duration) * 1e9
    wins = {s: sorted((w for w in seen[s].values()
                       if w["start_ns"] >= t0 and w["end_ns"] <= t1),
                      key=lambda w: w["seq"]) for s in seen}
    return rep, wins


def sweep(a):
    os.makedirs(os.path.dirname(a.csv) or ".", exist_ok=True)
    # Capacity: rising rates until served < 95% of offered or p99 blows up.
    rate = a.start_rate
    base_p99 = None
    cap = None
    log("%s: capacity search from %.0f rps" % (a.server, rate))
    while rate <= a.max_rate:
        rep, _ = run_level(a, rate, a.cap_duration, collect=False)
        ok = rep["served_rps"] >= 0.95 * rate and rep["timeouts"] == 0
        if base_p99 is None:
            base_p99 = max(rep["p99_us"], 50.0)
        blown = rep["p99_us"] > 20 * base_p99
        log("  offered %8.0f served %8.0f p99 %9.1f us %s" %
            (rate, rep["served_rps"], rep["p99_us"],
             "ok" if ok and not blown else "SATURATED"))
        if not ok or blown:
            break
        cap = rate
        rate *= a.step
    if cap is None:
        raise RuntimeError("server saturated at the first rate %.0f" %
                           a.start_rate)
    if rate > a.max_rate:
        log("  capacity above --max-rate: using %.0f" % cap)
    else:
        # one bisection step between the last pass and the first failure
        mid = math.sqrt(cap * rate)
        rep, _ = run_level(a, mid, a.cap_duration, collect=False)
        if rep["served_rps"] >= 0.95 * mid and rep["p99_us"] <= 20 * base_p99:
            cap = mid
        log("  capacity %.0f rps" % cap)
    with open(a.csv + ".capacity", "w") as f:
        f.write("%.1f\n" % cap)

    lo, hi = 0.10, 1.20
    n = a.levels
    fracs = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    rows = []
    for i, fr in enumerate(fracs):
        rate = fr * cap
        # several windows per level: at least a.windows windows at this rate
        dur = min(a.max_duration, max(a.min_duration,
                                      a.windows * a.window / rate))
        rep, wins = run_level(a, rate, dur)
        sw, rw, pw = wins["send"], wins["recv"], wins["poll"]
        sum_ns = sum(w["sum_ns"] for w in sw)
        nsamp = a.window * len(sw)
        rps_obs = nsamp * 1e9 / sum_ns if sum_ns else float("nan")
        mean = (lambda xs: sum(xs) / len(xs) if xs else float("nan"))
        row = {
            "level": i + 1, "offered_rps": "%.1f" % rate,
            "served_rps": "%.3f" % rep["served_rps"],
            "achieved_rps": "%.3f" % rep["achieved_rps"],
            "rps_obs": "%.3f" % rps_obs, "send_windows": len(sw),
            "var_send_ns2": "%.1f" % mean([w["var_ns2"] for w in sw]),
            "var_recv_ns2": "%.1f" % mean([w["var_ns2"] for w in rw]),
            "recv_windows": len(rw),
            "poll_mean_ns": "%.1f" % mean([w["mean_ns"] for w in pw]),
            "poll_windows": len(pw),
            "p50_us": rep["p50_us"], "p99_us": rep["p99_us"],
            "p999_us": rep["p999_us"], "timeouts": rep["timeouts"],
            "errors": rep["errors"], "duration_s": "%.2f" % dur,
        }
        log("  level %2d offered %8.0f served %8.0f rps_obs %8.0f (%d win) "
            "p99 %9.1f us" % (i + 1, rate, rep["served_rps"], rps_obs,
                              len(sw), rep["p99_us"]))
        rows.append(row)
    with open(a.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        w.writerows(rows)
    log("wrote", a.csv)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--proto", default="sf")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--bpffs", required=True)
    ap.add_argument("--ctl", default="build/satfeedctl")
    ap.add_argument("--sfload", default="build/sfload")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--window", type=int, default=2048)
    ap.add_argument("--windows", type=int, default=6,
                   help="windows wanted per level")
    ap.add_argument("--levels", type=int, default=12)
    ap.add_argument("--start-rate", type=float, default=2000)
    ap.add_argument("--max-rate", type=float, default=400000)
    ap.add_argument("--step", type=float, default=1.25)
    ap.add_argument("--cap-duration", type=float, default=1.5)
    ap.add_argument("--min-duration", type=float, default=3)
    ap.add_argument("--max-duration", type=float, default=12)
    ap.add_argument("--warmup", type=float, default=0.5)
    a = ap.parse_args()
    try:
        sweep(a)
    except (RuntimeError, ValueError) as e:
        print("validate: sweep %s: %s" % (a.server, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
