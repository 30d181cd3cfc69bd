"""sweep.py - satfeed fidelity validation: the sweep driver.

Python 3 standard library only.  Drives one already-running, already-watched
server with sfload: measures its capacity, then sweeps offered rates from
~10% to ~120% of it; per level reads satfeed's closed windows (satfeedctl
show --json, polled every 0.2 s during the level, so a stream loses no
window to the 4-window history below 20 windows a second, 41k events/s at
2048 samples; past that the level's figures come from the windows seen) and
writes build/validate/<server>.csv (report.py reads it).

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

import probe
import satrule
from fidelity import CSV_FIELDS, log


def show(ctl, bpffs, pid, cgroup=None):
    """The watched target's part of satfeedctl show --json: pid PID, or
    (pid None) the cgroup CGROUP."""
    sel = ["--pid", str(pid)] if pid is not None else ["--cgroup", cgroup]
    out = subprocess.run([ctl, "--bpffs", bpffs, "show", "--json"] + sel,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("satfeedctl show failed (%d): %s" %
                           (out.returncode, out.stderr.strip()))
    doc = json.loads(out.stdout)
    for t in doc.get("targets", []):
        if pid is None or t.get("pid") == pid:
            return t
    raise RuntimeError("%s is not watched under %s" % (
        "pid %d" % pid if pid is not None else cgroup, bpffs))


def snapshot(t, now):
    """Every figure and verdict of one show --json reading of a target,
    without the window histories (those are kept once, by seq)."""
    s = {k: v for k, v in t.items() if k not in ("send", "recv", "poll")}
    for k in ("send", "recv", "poll"):
        if k in t:
            s[k] = {f: v for f, v in t[k].items() if f != "windows"}
    s["t_ns"] = now
    return s


def keybytes(key):
    return " ".join(str((key >> (8 * i)) & 0xff) for i in range(4))


def verdict(a, slot):
    """The engine's verdict for slot (sf_verdict, bpftool's formatted
    JSON without the lock), or None when the engine has no verdict map or
    bpftool fails."""
    pin = os.path.join(a.bpffs, "sf_verdict")
    if not os.path.exists(pin):
        return None
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned", pin,
                          "key"] + keybytes(slot).split(),
                         capture_output=True, text=True)
    try:
        doc = json.loads(out.stdout)
        v = (doc.get("formatted") or doc)["value"]
    except (ValueError, KeyError, TypeError, AttributeError):
        log("warning: bpftool map lookup %s: %s" % (pin, out.stderr.strip()))
        return None
    return {k: x for k, x in v.items() if k != "lock"}


class Level:
    """What one level saw: every closed window (by stream and seq), the
    counters, the engine's verdicts and the reference rule's states, each
    with the CLOCK_MONOTONIC time it was read at."""

    def __init__(self, rule):
        self.seen = {"send": {}, "recv": {}, "poll": {}}
        self.rule = rule
        self.calls = []         # (t_ns, send windows, send calls, poll calls)
        self.states = []        # (t_ns, reference state, its wps_avg)
        self.verdicts = []      # (t_ns, satfeed_verdict as a dict)
        self.snaps = []         # snapshot() of every reading
        self.t_verdict = 0

    def take(self, a, t):
        """One satfeedctl show of the target, then (every 0.4 s: bpftool
        costs ~50 ms of CPU) the engine's verdict."""
        now = time.monotonic_ns()
        for s in self.seen:
            for w in t.get(s, {}).get("windows", []) or []:
                self.seen[s][w["seq"]] = w
        c = (t["send"]["seq"], t["send"]["calls"], t["poll"]["calls"])
        self.calls.append((now,) + c)
        snap = snapshot(t, now)
        if a.probe_port:
            snap["probe"] = probe.probe(a.probe_port, a.pid, a.cgroup)
        self.snaps.append(snap)
        self.rule.update(t)
        self.states.append((now, self.rule.state, self.rule.svc_avg))
        if t.get("slot") is None or now - self.t_verdict < 400000000:
            return
        self.t_verdict = now
        v = verdict(a, t["slot"])
        if v is not None:
            self.verdicts.append((time.monotonic_ns(), v))


def run_level(a, rate, duration, rule=None, frac=None):
    """One sfload run; returns (sfload report dict, {stream: [windows]},
    Level or None).  Without a rule nothing is collected."""
    cmd = [a.sfload, "--rate", "%.1f" % rate, "--connections",
           str(a.connections), "--duration", "%.3f" % duration,
           "--warmup", str(a.warmup), "--drain", "1", "--json", "-G",
           "--proto", a.proto, "127.0.0.1:%d" % a.port]
    if a.proto == "memcached":
        cmd += ["--keys", "1000", "--set-ratio", "0.1"]
    if a.proto == "http":
        cmd += ["--path", a.path]
    lv = Level(rule) if rule else None
    t_launch = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    while lv and p.poll() is None:
        time.sleep(0.2)
        try:
            lv.take(a, show(a.ctl, a.bpffs, a.pid, a.cgroup))
        except RuntimeError as e:
            log("warning:", e)
    out, err = p.communicate()
    if lv:
        lv.take(a, show(a.ctl, a.bpffs, a.pid, a.cgroup))
    if p.returncode not in (0,):
        raise RuntimeError("sfload exited %d: %s" % (p.returncode,
                                                    err.strip()[-300:]))
    rep = json.loads(out)
    if not lv:
        return rep, None, None
    # The measured interval starts after sfload's warmup.  sfload's start-up
    # (memcached preload, connect) is not in t_launch, so the interval start
    # is bounded below by t_launch + warmup; pad both ends by 100 ms.
    lv.t0 = (t_launch + a.warmup + 0.1) * 1e9
    lv.t1 = (t_launch + a.warmup + duration) * 1e9
    wins = {s: sorted((w for w in lv.seen[s].values()
                       if w["start_ns"] >= lv.t0 and w["end_ns"] <= lv.t1),
                      key=lambda w: w["seq"]) for s in lv.seen}
    if a.raw:
        with open(a.raw, "a") as f:
            json.dump({"server": a.server, "frac": frac, "rate": rate,
                       "t0_ns": lv.t0, "t1_ns": lv.t1, "rep": rep,
                       "all": {s: sorted(lv.seen[s].values(),
                                         key=lambda w: w["seq"])
                               for s in lv.seen},
                       "calls": lv.calls, "states": lv.states,
                       "verdicts": lv.verdicts, "snapshots": lv.snaps}, f)
            f.write("\n")
    return rep, wins, lv


def capacity(a):
    """Rising rates until served < 95% of offered (from a start rate that
    is already too much: halving down to 1/16 of it); with --cap-p99 the
    rate found is then confirmed at the levels' duration (confirm())."""

    def passes(rate):
        rep, _, _ = run_level(a, rate, a.cap_duration)
        # a timeout over TCP is an answer later than sfload waits: the
        # latency blew up.  Over UDP (dns) it is a datagram the server's
        # socket dropped, already missing from served.  With any loss a
        # failure, the search stopped at dnsmasq's first lost datagrams,
        # which come in bursts well below its capacity (3 lost at the 30%
        # level, 84 at 70%), and the sweep then found no knee inside 150%
        # of it (served 96% there)
        lost_ok = (a.proto == "dns" or rep["timeouts"] == 0)
        ok = rep["served_rps"] >= 0.95 * rate and lost_ok
        log("  offered %8.0f served %8.0f p99 %9.1f us %s" %
            (rate, rep["served_rps"], rep["p99_us"],
             "ok" if ok else "SATURATED"))
        return ok

    rate = a.start_rate
    cap = None
    log("%s: capacity search from %.0f rps" % (a.server, rate))
    while rate <= a.max_rate:
        if not passes(rate):
            break
        cap = rate
        rate *= a.step
    while cap is None and rate > a.start_rate / 16:
        if passes(rate / 2):
            cap = rate / 2
        else:
            rate /= 2
    if cap is None:
        raise RuntimeError("server saturated at %.0f rps, 1/16 of the "
                           "start rate" % rate)
    if rate > a.max_rate:
        log("  capacity above --max-rate: %.0f" % cap)
    else:
        # one bisection step between the last pass and the first failure
        mid = math.sqrt(cap * rate)
        if passes(mid):
            cap = mid
        log("  capacity %.0f rps" % cap)
    return confirm(a, cap) if a.cap_p99 else cap


def confirm(a, cap):
    """--cap-p99: the capacity must also pass the knee's p99 test at the
    levels' duration: p99 at most 10x the p99 at a tenth of the rate,
    both runs as long as a level, and served >= 95% without timeouts;
    else one step (--step) lower, at most 12 times.  A server whose
    queue builds over seconds passes the short runs far past its knee
    (lighttpd on a fast host: 330,872 rps offered, 97% served in 1.5 s;
    at 165,436 for 4 s, p99 717 ms), and a p99 against the search's
    first run (1000 rps) stopped it far below (69,389, where the 150%
    level still had p99 6.4x the 10% level's)."""
    for _ in range(12):
        try:
            low, _, _ = run_level(a, cap / 10, a.min_duration)
            rep, _, _ = run_level(a, cap, a.min_duration)
        except RuntimeError as e:   # sfload failed: the server gave up
            log("  confirm %8.0f: %s" % (cap, e))
            cap /= a.step
            continue
        limit = 10 * max(low["p99_us"], 50.0)
        ok = (rep["served_rps"] >= 0.95 * cap and
              (a.proto == "dns" or rep["timeouts"] == 0) and
              rep["p99_us"] <= limit)
        log("  confirm %8.0f: served %8.0f p99 %9.1f us (limit %.1f, "
            "10x p99 at %.0f rps) %s" % (cap, rep["served_rps"],
                                         rep["p99_us"], limit, cap / 10,
                                         "ok" if ok else "SATURATED"))
        if ok:
            log("  capacity %.0f rps (confirmed)" % cap)
            return cap
        cap /= a.step
    raise RuntimeError("no rate passed the p99 confirmation down to %.0f "
                       "rps" % cap)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def mode(states):
    """The state seen most often; a tie goes to the more saturated one."""
    if not states:
        return float("nan")
    return max(set(states), key=lambda k: (states.count(k), k))


def level_figures(lv, wins):
    """The saturation columns of one level (see fidelity.py)."""
    inl = lambda t: lv.t0 <= t <= lv.t1
    calls = [c for c in lv.calls if inl(c[0])]
    shown = [satrule.BY_NAME[s["saturation"]["state"].upper()]
             for s in lv.snaps if inl(s["t_ns"]) and
             str(s.get("saturation", {}).get("state", "")).upper()
             in satrule.BY_NAME]
    # the receive queue the engine saw (ABI 10): each tick's most bytes a
    # receive left unread, as show --json published it
    unread = [s["saturation"]["unread_max"] for s in lv.snaps
              if inl(s["t_ns"]) and
              "unread_max" in s.get("saturation", {})]
    wps = float("nan")
    if len(calls) >= 2 and calls[-1][2] > calls[0][2]:
        wps = (1000 * (calls[-1][3] - calls[0][3]) //
               (calls[-1][2] - calls[0][2]))
    return dict(probe_figures([s for s in lv.snaps if inl(s["t_ns"])]), **{
        "wait_permille": median([satrule.wait_permille(w)
                                 for w in wins["poll"]]),
        "idle_permille": median([satrule.idle_permille(w)
                                 for w in wins["poll"]]),
        "cv2_send_permille": median([satrule.cv2_permille(w)
                                     for w in wins["send"]]),
        "cv2_recv_permille": median([satrule.cv2_permille(w)
                                     for w in wins["recv"]]),
        "waits_per_send_permille": wps,
        "state": mode([v["state"] for t, v in lv.verdicts if inl(t)]),
        # the verdict show --json published (saturation.state), as
        # satrule's numbers: the one read most often, and the worst
        "verdict": mode(shown),
        "verdict_worst": max(shown) if shown else float("nan"),
        "rule_state": mode([st for t, st, _ in lv.states if inl(t)]),
        "unread_median": median(unread),
        "unread_top": max(unread) if unread else float("nan"),
    })


def probe_figures(snaps):
    """The level's queueing seen from outside (probe.py): the largest
    accept backlog and unread bytes seen, the datagrams dropped, and the
    server's threads' run-queue delay in permille of the level's time
    (summed over threads: 1000 = one thread always waiting for a CPU),
    and the same per thread that ran: that delay in permille of the
    threads' runnable time (on a CPU or waiting for one), which neither
    the number of threads nor the idle ones among them move."""
    pr = [(s["t_ns"], s["probe"]) for s in snaps if s.get("probe")]
    nan = float("nan")

    def top(k):
        xs = [p[k] for _, p in pr if p.get(k) is not None]
        return max(xs) if xs else nan

    def delta(k):
        xs = [(t, p[k]) for t, p in pr if p.get(k) is not None]
        return (xs[-1][1] - xs[0][1], xs[-1][0] - xs[0][0]) \
            if len(xs) >= 2 else (nan, nan)
    drops, _ = delta("udp_drops")
    waited, span = delta("wait_ns")
    ran, _ = delta("run_ns")
    runnable = ran + waited
    return {"probe_backlog_max": top("backlog"), "probe_rxq_max": top("rxq"),
            "probe_udp_rxq_max": top("udp_rxq"), "probe_udp_drops": drops,
            "probe_runq_permille": 1000 * waited / span
            if math.isfinite(span) and span > 0 else nan,
            "probe_runq_share_permille": 1000 * waited / runnable
            if math.isfinite(runnable) and runnable > 0 else nan}


def sweep(a):
    os.makedirs(os.path.dirname(a.csv) or ".", exist_ok=True)
    # Capacity: rising rates until served < 95% of offered or p99 blows up.
    cap = a.capacity if a.capacity else capacity(a)
    with open(a.csv + ".capacity", "w") as f:
        f.write("%.1f\n" % cap)

    lo, hi = a.lo, a.hi
    n = a.levels
    fracs = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    if a.fracs:
        fracs = [float(x) for x in a.fracs.split(",")]
    rows = []
    rule = satrule.Rule()
    for i, fr in enumerate(fracs):
        rate = fr * cap
        # several windows per level: at least a.windows windows at this rate
        dur = min(a.max_duration, max(a.min_duration,
                                      a.windows * a.window / rate))
        rep, wins, lv = run_level(a, rate, dur, rule, fr)
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
            "pct_capacity": "%.0f" % (100 * fr),
        }
        row.update(level_figures(lv, wins))
        log("  level %2d offered %8.0f served %8.0f rps_obs %8.0f (%d win) "
            "p99 %9.1f us wait %s idle %s wps %s state %s rule %s" % (
                i + 1, rate, rep["served_rps"], rps_obs, len(sw),
                rep["p99_us"], row["wait_permille"], row["idle_permille"],
                row["waits_per_send_permille"], row["state"],
                row["rule_state"]))
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
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--pid", type=int)
    who.add_argument("--cgroup", help="the watched cgroup (a server whose "
                     "worker processes do the I/O)")
    ap.add_argument("--path", default="/", help="http: the path to GET")
    ap.add_argument("--probe-port", type=int, help="read the server's "
                    "socket queues on this port and its threads' run-queue "
                    "delay at every reading (probe.py)")
    ap.add_argument("--fracs", help="the levels, comma-separated fractions "
                    "of capacity (instead of --lo/--hi/--levels)")
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
    ap.add_argument("--lo", type=float, default=0.10,
                    help="lowest level, fraction of capacity")
    ap.add_argument("--hi", type=float, default=1.20,
                    help="highest level, fraction of capacity")
    ap.add_argument("--cap-p99", action="store_true",
                    help="confirm the capacity at the levels' duration with "
                    "the knee's p99 test (p99 <= 10x the p99 at a tenth "
                    "of the rate), stepping down until it passes")
    ap.add_argument("--raw", help="append every level's windows and engine "
                    "verdicts to this JSON-lines file")
    ap.add_argument("--capacity", type=float,
                    help="skip the capacity search: use this rate")
    a = ap.parse_args()
    try:
        sweep(a)
    except (RuntimeError, ValueError) as e:
        print("validate: sweep %s: %s" % (a.server, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
