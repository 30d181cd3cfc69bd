"""rule_study.py - issue 23: candidate saturation rules evaluated offline
on the recorded corpus levels (build/validate/<server>.levels.jsonl, from
corpus.sh and corpus.sh --holdout; SF_VALIDATE_DIR elsewhere).

Pure Python 3 (no numpy).  Run:
    python3 tests/validate/rule_study.py [--holdout] [--dump] [--sweep]
    python3 tests/validate/rule_study.py --runs DIR,DIR,DIR [--holdout]
(--sweep: threshold sensitivity and reading margins, design set only;
--runs: every rule on several recorded runs of the corpus, each DIR one
run's build/validate: a server meets the goal where it meets it in most
runs, since one run's knee and scores move from run to run,
docs/validation.md "A second run")

Per level, the readings are the show --json snapshots taken inside the
level's measured interval [t0_ns, t1_ns] (as sweep.py's level_figures());
a reading's verdict is the candidate rule applied to that reading's figures;
the level's verdict is the mode of the readings' verdicts, a tie going to
the more saturated state (sweep.py mode()).  The knee and the goal are
corpus_report.judge()'s, imported unchanged.  The UDP drop share is the
engine's (ABI 7: saturation.drop_permille of the tick before the reading)
in recordings that have it, else the probe's (/proc/net/udp between
readings; session 11's recordings, docs/validation.md).
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import satrule                                  # noqa: E402
import corpus_report                            # noqa: E402

D = os.environ.get("SF_VALIDATE_DIR",
                   os.path.join(HERE, "..", "..", "build", "validate"))
DESIGN = ["lighttpd", "memcached-t4", "nginx", "pyhttp", "dnsmasq",
          "sfserver-iouring", "nginx-proxy"]
HOLDOUT = ["memcached-t1", "apache2-worker", "haproxy", "unbound"]
# the server's CPUs in the corpus (corpus.sh: the first half)
SRV_CPUS = max(int(os.environ.get("SF_SRV_CPUS", 0)) or
               (os.cpu_count() or 2) // 2, 1)
UNKNOWN, OK, NEAR, FULL = satrule.UNKNOWN, satrule.OK, satrule.NEAR, \
    satrule.FULL
NAME = {UNKNOWN: "unk", OK: "ok", NEAR: "near", FULL: "full", None: "-"}


def mode(states):
    return max(set(states), key=lambda k: (states.count(k), k)) \
        if states else None


def load(name, d=None):
    rows, cap, raw = corpus_report.load(d or D, name)
    return rows, cap, raw


def readings(x):
    """Per snapshot in the measured interval: the figures a rule may use.
    Deltas (probe counters, calls) are against the previous snapshot of
    the level (inside or just before the interval)."""
    snaps = x["snapshots"]
    out = []
    for k, s in enumerate(snaps):
        if not (x["t0_ns"] <= s["t_ns"] <= x["t1_ns"]):
            continue
        sat = s.get("saturation") or {}
        r = {"t": s["t_ns"], "recorded": satrule.BY_NAME.get(
            str(sat.get("state", "")).upper()),
            "quiet": "quiet" in (sat.get("reasons") or []),
            "idle": sat.get("idle_permille")
            if sat.get("seen", 0) & satrule.SEEN_IDLE else None,
            "svc": (1000 * sat["svc_avg_ns"] // sat["svc_base_ns"])
            if sat.get("svc_base_ns") else None,
            "threads": sat.get("threads"), "sleepers": sat.get("sleepers"),
            "drop_engine": sat.get("drop_permille")
            if sat.get("seen", 0) & satrule.SEEN_DROPS else None,
            "seen_any": bool(s["send"]["seq"] or
                             (s.get("recv") or {}).get("seq"))}
        # probe: /proc schedstat of the server's threads, UDP drops
        p, q = s.get("probe") or {}, None
        if k > 0:
            q = snaps[k - 1].get("probe") or {}
            dt = s["t_ns"] - snaps[k - 1]["t_ns"]
            if p.get("wait_ns") is not None and q.get("wait_ns") is not None \
                    and dt > 0:
                dw = max(p["wait_ns"] - q["wait_ns"], 0)
                dr = max(p["run_ns"] - q["run_ns"], 0)
                n = max(p.get("threads") or 1, 1)
                r["runq_tot"] = 1000 * dw // dt          # threads waiting
                r["run_tot"] = 1000 * dr // dt           # threads running
                r["runq_pt"] = 1000 * dw // (dt * n)
                # run-queue delay per unit of CPU time: the CPU's
                # queueing slowdown (0: never waits for a CPU)
                r["runq_per_run"] = 1000 * dw // dr if dr else None
                # the CPU share: CPU time over the CPUs the threads may
                # use (corpus.sh pins the server to half of them); the
                # engine's own (ABI 8) below, where recorded
                r["cpu_share"] = 1000 * dr // (dt * min(n, SRV_CPUS))
            if p.get("udp_drops") is not None and \
                    q.get("udp_drops") is not None:
                dd = max(p["udp_drops"] - q["udp_drops"], 0)
                ds = s["send"]["calls"] - snaps[k - 1]["send"]["calls"]
                r["drop_probe"] = 1000 * dd // (dd + ds) if dd + ds else 0
        r["drop_share"] = r["drop_engine"] if r["drop_engine"] is not None \
            else r.get("drop_probe")
        if sat.get("seen", 0) & satrule.SEEN_CPU:
            r["cpu_share"] = sat.get("cpu_permille")
        # the receive queue (ABI 10): the tick's most bytes left unread
        # after a receive; None in recordings made before it
        r["unread"] = sat.get("unread_max") \
            if sat.get("seen", 0) & satrule.SEEN_UNREAD else None
        # waits per send between this reading and the one before (the
        # engine's counts): near 0 with an idle share near 1000 says the
        # threads that wait are not the ones that serve (pyhttp's
        # listener; its workers block in recv())
        if k > 0:
            q_ = snaps[k - 1]
            ds = s["send"]["calls"] - q_["send"]["calls"]
            dp = (s.get("poll") or {}).get("calls", 0) - \
                (q_.get("poll") or {}).get("calls", 0)
            r["wps"] = 1000 * dp // ds if ds > 0 else None
        # the engine's poll windows (merged threads): run-queue share
        out.append(r)
    # join the nearest earlier bpftool verdict (every ~0.4 s):
    # slack/wait per thread
    vs = x.get("verdicts") or []
    for r in out:
        prev = [v for t, v in vs if t <= r["t"]]
        if prev:
            v = prev[-1]
            r["wait"] = v.get("wait_permille")
            r["slack"] = v.get("slack_permille")
    return out


def poll_runq(x):
    """The level's poll windows: runq_ns / sum_ns (permille) median."""
    ws = [w for w in (x["all"].get("poll") or [])
          if x["t0_ns"] <= w["end_ns"] <= x["t1_ns"] and w["sum_ns"]]
    v = sorted(1000 * w.get("runq_ns", 0) // w["sum_ns"] for w in ws)
    return v[len(v) // 2] if v else None


# ---------------------------------------------------------------- rules
# the idle and service thresholds of the engine's defaults: ABI 7's, and
# those every recording before session 12's rule change was made with
LIM_ABI7 = (satrule.IDLE_NEAR, satrule.IDLE_FULL, satrule.SVC_NEAR,
            satrule.SVC_FULL)
LIM_ABI5 = (250, 100, 4000, 6000)


def rule_current(r, lim=LIM_ABI7):
    """The engine's defaults before ABI 9 (satrule.state_of without the
    CPU share), quiet -> ok: ABI 7's, with the engine's drop share where
    the recording has it (older recordings have none)."""
    if r["quiet"]:
        return OK if r["seen_any"] else UNKNOWN
    return satrule.state_of(r["idle"], r["svc"], *lim,
                            drops=r["drop_engine"])


def make_rules():
    """Candidates.  Each threshold is a utilisation rho read two ways:
    idle share i per thread ~ 1 - rho; service time over its base
    S/S0 ~ 1 / (1 - rho) (M/M/1: time in a queue that grows inside the
    server); UDP drop share d: the share of arrivals the queue lost."""
    R = {}
    R["A current (ABI 7): near idle<150|svc>4x|drops>=1%, "
      "full idle<50|svc>6x|drops>=5%"] = rule_current
    R["A9 (ABI 9): A + full at CPU share >= 970"] = \
        lambda r: rule_current(r) if r["quiet"] else satrule.state_of(
            r["idle"], r["svc"], *LIM_ABI7, drops=r["drop_engine"],
            cpu=r.get("cpu_share"))
    R["A6 ABI 5/6 idle (near 250, full 100) + drops"] = \
        lambda r: rule_current(r, LIM_ABI5)
    R["B near idle<150|svc>4x, full idle<50|svc>6x"] = \
        lambda r: rule_current(dict(r, drop_engine=None),
                               (150, 50, 4000, 6000))

    def drops(r, base, near=10, full=50):
        s = base(r)
        d = r.get("drop_share")
        if d is not None and not r["quiet"]:
            if d >= full:
                s = FULL
            elif d >= near:
                s = max(s, NEAR)
        return s
    R["C = B + UDP drops >=1% near, >=5% full"] = \
        lambda r: drops(r, R["B near idle<150|svc>4x, full idle<50|svc>6x"])
    R["C' = A + UDP drops >=1% near, >=5% full"] = \
        lambda r: drops(r, lambda x: rule_current(
            dict(x, drop_engine=None), LIM_ABI5))

    def two(r, lim, drop=True, svc_full=6000):
        """near: either signal past rho 0.75 (idle < in, svc > 4x);
        full: idle < if, or svc > svc_full, or both near signals agree."""
        if r["quiet"]:
            return OK if r["seen_any"] else UNKNOWN
        i_n, i_f = lim
        idle, svc = r["idle"], r["svc"]
        if idle is None and svc is None:
            return UNKNOWN
        ni = idle is not None and idle < i_n
        ns = svc is not None and svc > 4000
        s = OK
        if ni or ns:
            s = NEAR
        if (idle is not None and idle < i_f) or \
                (svc is not None and svc > svc_full) or (ni and ns):
            s = FULL
        d = r.get("drop_share")
        if drop and d is not None:
            if d >= 50:
                s = FULL
            elif d >= 10:
                s = max(s, NEAR)
        return s
    R["D near idle<250|svc>4x|drops>=1%; full idle<100|svc>6x|"
      "(idle<250&svc>4x)|drops>=5%"] = lambda r: two(r, (250, 100))
    R["D2 as D, idle 150/50"] = lambda r: two(r, (150, 50))
    R["D3 as D, idle 200/50"] = lambda r: two(r, (200, 50))
    R["D4 as D, idle 200/100"] = lambda r: two(r, (200, 100))
    R["D5 as D3, svc full 5x"] = lambda r: two(r, (200, 50), svc_full=5000)

    R["F near idle<150|svc>4x|drops>=1%; full idle<50|svc>5x|"
      "(idle<150&svc>4x)|drops>=5%"] = \
        lambda r: two(r, (150, 50), svc_full=5000)
    R["G (recommended) near idle<150|svc>4x|drops>=1%; "
      "full idle<100|svc>5x|drops>=5%"] = \
        lambda r: two_rule(150, 100, 4000, 5000, agree=False)(r)
    R["G2 as G without the drops (today's figures only)"] = \
        lambda r: two_rule(150, 100, 4000, 5000, agree=False,
                           drop=False)(r)
    R["F2 as F without the drops"] = \
        lambda r: two(r, (150, 50), drop=False, svc_full=5000)

    def runq(r, base, near=400):
        s = base(r)
        q = r.get("runq_pt")
        if not r["quiet"] and q is not None and q >= near:
            s = max(s, NEAR)
        return s
    R["E = D3 + probe run-queue share per thread >= 400 near"] = \
        lambda r: runq(r, R["D3 as D, idle 200/50"])
    R["E2 = D3 + runq/run >= 500 near (CPU slowdown 1.5x)"] = \
        lambda r: (max(R["D3 as D, idle 200/50"](r), NEAR)
                   if not r["quiet"] and (r.get("runq_per_run") or 0) >= 500
                   else R["D3 as D, idle 200/50"](r))

    def cpu(r, base, near, full):
        """base, then the CPU share: the threads' CPU time over the
        interval times the CPUs they may use (at most one a thread)."""
        s = base(r)
        c = r.get("cpu_share")
        if not r["quiet"] and c is not None:
            if c >= full:
                s = FULL
            elif c >= near:
                s = max(s, NEAR)
        return s
    for n_, f_ in ((900, 950), (880, 950), (920, 970), (900, 970),
                   (850, 950), (930, 970), (950, 980), (1001, 970),
                   (1001, 980)):
        R["H%d/%d = A + CPU share >= %d near, >= %d full" % (
            n_, f_, n_, f_)] = (lambda n_, f_: lambda r: cpu(
                r, rule_current, n_, f_))(n_, f_)

    def blind(r, base):
        """base, but the idle share does not judge where the threads
        that wait are not the ones that serve: waits per send below 1%
        with the idle share above half (then the service time and drops
        still judge, but only towards near or full: ok from them alone
        is unknown, since the serving threads' slack is not seen)."""
        w, i = r.get("wps"), r.get("idle")
        if not r["quiet"] and w is not None and i is not None and \
                w < 10 and i > 500:
            st = base(dict(r, idle=None))
            return UNKNOWN if st == OK else st
        return base(r)
    def unread(r, base, near, full):
        """base, then the receive queue (ABI 10): the most bytes a
        receive on an accepted TCP connection left unread in the tick."""
        s = base(r)
        u = r.get("unread")
        if not r["quiet"] and u is not None:
            if full is not None and u >= full:
                s = FULL
            elif near is not None and u >= near:
                s = max(s, NEAR)
        return s
    a9 = R["A9 (ABI 9): A + full at CPU share >= 970"]
    for n_, f_ in ((16384, 65536), (8192, 32768), (32768, 131072),
                   (16384, 32768), (4096, 16384), (65536, 262144)):
        R["K%d/%d = A9 + unread >= %d B near, >= %d B full%s" % (
            n_ >> 10, f_ >> 10, n_, f_,
            " (ABI 10)" if (n_, f_) == (16384, 32768) else "")] = \
            (lambda n_, f_: lambda r: unread(r, a9, n_, f_))(n_, f_)
    R["U = A, idle not judging when waits/send < 1% and idle > 50%"] = \
        lambda r: blind(r, rule_current)
    R["UH = U + CPU share >= 1001 near, >= 970 full"] = \
        lambda r: blind(r, lambda x: cpu(x, rule_current, 1001, 970))
    return R


# ---------------------------------------------------------------- evaluation
def evaluate(name, rule, data):
    rows, cap, raw, rd = data
    rows2 = []
    for row, x, rr in zip(rows, raw, rd):
        v = mode([rule(r) for r in rr])
        row2 = dict(row)
        row2["verdict"] = v if v is not None else float("nan")
        rows2.append(row2)
    return corpus_report.judge(rows2), rows2


def summary(j, rows):
    p = lambda i: corpus_report.pct(rows, i)
    return {"knee": p(j["knee"]), "near": p(j["near"]), "full": p(j["full"]),
            "alarms": corpus_report.pcts(rows, j["alarms"]),
            "misses": corpus_report.pcts(rows, j["misses"]),
            "unknown": corpus_report.pcts(rows, j["unknown"]),
            "goal": j["goal"],
            "v": " ".join(NAME[s] for s in j["v"])}


def reproduce(names, datas):
    """The engine's recorded verdicts against satrule's defaults: those
    of ABI 7 or, for recordings made before them, ABI 5's idle
    thresholds (whichever the readings agree with)."""
    def agreeing(lim):
        return sum(rule_current(r, lim) == r["recorded"]
                   for n in names for rr in datas[n][3] for r in rr)
    lim = max((LIM_ABI7, LIM_ABI5), key=agreeing)
    print("## Reproducing the recorded verdicts with the engine's rule "
          "(idle near %d, full %d: %s)\n" % (
              lim[0], lim[1], "ABI 7" if lim == LIM_ABI7 else
              "ABI 5/6, the recording's"))
    print("| server | readings agreeing | levels agreeing (vs CSV "
          "verdict) | goal (recorded) | goal (recomputed) |")
    print("|---|---|---|---|---|")
    for n in names:
        rows, cap, raw, rd = datas[n]
        agree = tot = 0
        for rr in rd:
            for r in rr:
                tot += 1
                agree += rule_current(r, lim) == r["recorded"]
        j, rows2 = evaluate(n, lambda r: rule_current(r, lim), datas[n])
        lv = sum(1 for a, b in zip(rows, rows2)
                 if int(a["verdict"]) == b["verdict"])
        print("| %s | %d/%d | %d/%d | %s | %s |" % (
            n, agree, tot, lv, len(rows),
            "met" if corpus_report.judge(rows)["goal"] else "not met",
            "met" if j["goal"] else "not met"))
    print()


def dump(names, datas):
    """Per level medians of every candidate figure (design only)."""
    def med(xs):
        xs = sorted(x for x in xs if x is not None)
        return xs[len(xs) // 2] if xs else None
    keys = ["idle", "svc", "threads", "sleepers", "wait", "slack",
            "runq_pt", "runq_tot", "run_tot", "runq_per_run", "drop_share",
            "drop_engine", "drop_probe"]
    for n in names:
        rows, cap, raw, rd = datas[n]
        j = corpus_report.judge(rows)
        print("\n### %s (knee %s)\n" % (n, corpus_report.pct(rows, j["knee"])))
        print("| level | s/o | p99x | " + " | ".join(keys) +
              " | pollrunq | recorded |")
        print("|" + "---|" * (len(keys) + 5))
        base = rows[0]["p99_us"]
        for i, (row, x, rr) in enumerate(zip(rows, raw, rd)):
            print("| %.0f%% | %.3f | %.1f | " % (
                row["pct_capacity"], row["served_rps"] / row["offered_rps"],
                row["p99_us"] / base) +
                " | ".join(str(med([r.get(k) for r in rr])) for k in keys) +
                " | %s | %s |" % (poll_runq(x), NAME[int(row["verdict"])]))


def two_rule(i_n, i_f, s_n, s_f, d_n=10, d_f=50, agree=True, drop=True):
    """The F family: near when one signal passes its near threshold, full
    when one passes its full threshold or (agree) both pass near."""
    def rule(r):
        if r["quiet"]:
            return OK if r["seen_any"] else UNKNOWN
        idle, svc = r["idle"], r["svc"]
        if idle is None and svc is None:
            return UNKNOWN
        ni = idle is not None and idle < i_n
        ns = svc is not None and svc > s_n
        s = NEAR if ni or ns else OK
        if (idle is not None and idle < i_f) or \
                (svc is not None and svc > s_f) or (agree and ni and ns):
            s = FULL
        d = r.get("drop_share")
        if drop and d is not None:
            if d >= d_f:
                s = FULL
            elif d >= d_n:
                s = max(s, NEAR)
        return s
    return rule


def sweep(datas):
    """How wide the plateau around F is, on the design set only."""
    print("## Sensitivity (design set): servers meeting the goal\n")
    print("| idle near | idle full | svc near | svc full | met | which fail |")
    print("|---|---|---|---|---|---|")
    for i_n in (100, 125, 150, 175, 200, 250):
        for i_f in (25, 50, 75, 100):
            if i_f >= i_n:
                continue
            for s_n in (3000, 4000):
                for s_f in (4500, 5000, 5500, 6000):
                    rule = two_rule(i_n, i_f, s_n, s_f)
                    fail = [n for n in DESIGN
                            if not evaluate(n, rule, datas[n])[0]["goal"]]
                    print("| %d | %d | %.1fx | %.1fx | %d/%d | %s |" % (
                        i_n, i_f, s_n / 1000, s_f / 1000,
                        len(DESIGN) - len(fail), len(DESIGN),
                        ", ".join(fail)))
    print()


def margins(datas, names, rule):
    """Per level: the share of readings per state under rule (how close
    each level's mode is to flipping)."""
    print("## Readings per state under F (ok/near/full, of the level's "
          "readings)\n")
    for n in names:
        rows, cap, raw, rd = datas[n]
        cells = []
        for row, rr in zip(rows, rd):
            st = [rule(r) for r in rr]
            cells.append("%.0f%%:%d/%d/%d" % (
                row["pct_capacity"], st.count(OK), st.count(NEAR),
                st.count(FULL)))
        print("- %s: %s" % (n, " ".join(cells)))
    print()


def runs_main(dirs, holdout):
    """Every rule on every run: per server, the runs where it meets the
    goal; met where most runs meet it (a server a run lacks is left out
    of that run)."""
    names = DESIGN + (HOLDOUT if holdout else [])
    datas = []
    for d in dirs:
        dd = {}
        for n in names:
            if os.path.exists(os.path.join(d, n + ".csv")):
                rows, cap, raw = load(n, d)
                dd[n] = (rows, cap, raw, [readings(x) for x in raw])
        datas.append(dd)
    print("## Rules over %d runs (%s); a server is met where most of its "
          "runs meet the goal\n" % (len(dirs), ", ".join(dirs)))
    print("| rule | design met | held out met | " +
          " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for label, rule in make_rules().items():
        cells, met = [], {"design": 0, "holdout": 0}
        for n in names:
            goals = [evaluate(n, rule, dd[n])[0]["goal"]
                     for dd in datas if n in dd]
            ok = 2 * sum(goals) > len(goals)
            met["design" if n in DESIGN else "holdout"] += ok
            cells.append("%s%d/%d" % ("" if ok else "**", sum(goals),
                                      len(goals)) + ("" if ok else "**"))
        print("| %s | %d/%d | %s | %s |" % (
            label.split(" ")[0], met["design"], len(DESIGN),
            "%d/%d" % (met["holdout"], len(HOLDOUT)) if holdout else "-",
            " | ".join(cells)))
    print()
    for label in make_rules():
        print("- %s: %s" % (label.split(" ")[0], label))
    print()


def main():
    holdout = "--holdout" in sys.argv
    if "--runs" in sys.argv:
        k = sys.argv.index("--runs")
        if k + 1 >= len(sys.argv):
            sys.exit("rule_study.py: --runs needs DIR,DIR,...")
        runs_main(sys.argv[k + 1].split(","), holdout)
        return
    if "--sweep" in sys.argv:
        datas = {}
        for n in DESIGN:
            rows, cap, raw = load(n)
            datas[n] = (rows, cap, raw, [readings(x) for x in raw])
        sweep(datas)
        margins(datas, DESIGN, two_rule(150, 50, 4000, 5000))
        return
    names = DESIGN + (HOLDOUT if holdout else [])
    # a recording made before a server joined the corpus lacks it
    missing = [n for n in names
               if not os.path.exists(os.path.join(D, n + ".csv"))]
    if missing:
        print("not recorded in %s, left out: %s\n" % (D, ", ".join(missing)))
    names = [n for n in names if n not in missing]
    datas = {}
    for n in names:
        rows, cap, raw = load(n)
        datas[n] = (rows, cap, raw, [readings(x) for x in raw])
    reproduce(names, datas)
    if "--dump" in sys.argv:
        dump(names, datas)
        return
    R = make_rules()
    for label, rule in R.items():
        print("## Rule %s\n" % label)
        print("| server | set | knee | first near | first full | false "
              "alarms | misses | unknown past knee | goal | levels |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        met = {"design": 0, "holdout": 0}
        for n in names:
            j, rows2 = evaluate(n, rule, datas[n])
            s = summary(j, rows2)
            st = "design" if n in DESIGN else "holdout"
            met[st] += s["goal"]
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                n, st, s["knee"], s["near"], s["full"], s["alarms"],
                s["misses"], s["unknown"], "met" if s["goal"] else "not met",
                s["v"]))
        print("\nmet: design %d/%d%s\n" % (
            met["design"], len([n for n in names if n in DESIGN]),
            ", holdout %d/%d" % (met["holdout"],
                                 len([n for n in names if n in HOLDOUT]))
            if holdout else ""))


if __name__ == "__main__":
    main()
