"""test_satrule.py - the reference saturation rule (satrule.py) and the
knee check of report.py on made-up counters and levels, so that a broken
check cannot pass a sweep unnoticed.  No root, no engine; validate.sh runs
it before its sweeps.  Prints "N passed, M failed"; exit 1 on a failure."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import satrule  # noqa: E402

passed = failed = 0


def check(what, got, want):
    global passed, failed
    if got == want:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s: got %r, expected %r" % (what, got, want))


def reading(seq=0, sends=0, waits=0, idle=None, svc=(), reasons=()):
    """One show --json target: send windows and calls, poll calls, the
    verdict's idle share (None: not seen yet), service windows (seq, mean,
    samples), the verdict's reasons."""
    sat = {"seen": satrule.SEEN_IDLE if idle is not None else 0,
           "idle_permille": idle or 0, "reasons": list(reasons)}
    return {"send": {"seq": seq, "calls": sends}, "poll": {"calls": waits},
            "saturation": sat,
            "service": {"windows": [{"seq": q, "mean_ns": m, "samples": n}
                                    for q, m, n in svc]}}


def test_rule():
    r = satrule.Rule()
    check("no reading yet", r.state, satrule.UNKNOWN)
    r.update(reading())
    check("nothing known", r.state, satrule.UNKNOWN)
    r.update(reading(idle=1000))
    check("an idle share: ok", r.state, satrule.OK)
    # thresholds of the idle share (ABI 7): 150 ok, 149 near, 50 near,
    # 49 full
    for idle, want in ((150, satrule.OK), (149, satrule.NEAR),
                       (50, satrule.NEAR), (49, satrule.FULL)):
        check("idle %d" % idle, satrule.state_of(idle, None), want)
    # thresholds of the service time: 4000 ok, 4001 near, 6001 full
    for svc, want in ((4000, satrule.OK), (4001, satrule.NEAR),
                      (6000, satrule.NEAR), (6001, satrule.FULL)):
        check("service %d permille" % svc, satrule.state_of(None, svc),
              want)
    check("either rule: the worse", satrule.state_of(200, 9000),
          satrule.FULL)
    # thresholds of the drop share (ABI 7): 9 ok, 10 near, 49 near, 50 full
    for d, want in ((0, satrule.OK), (9, satrule.OK), (10, satrule.NEAR),
                    (49, satrule.NEAR), (50, satrule.FULL)):
        check("drops %d permille" % d,
              satrule.state_of(None, None, drops=d), want)
    check("drop rules off", satrule.state_of(1000, None, drops=1000,
                                             drop_near=None,
                                             drop_full=None), satrule.OK)
    r = satrule.Rule()
    sat = {"seen": satrule.SEEN_DROPS, "drop_permille": 60, "reasons": []}
    r.update({"send": {"seq": 0, "calls": 0}, "poll": {"calls": 0},
              "saturation": sat, "service": {"windows": []}})
    check("a drop share alone: full", r.state, satrule.FULL)
    sat["seen"] = 0
    r = satrule.Rule()
    r.update({"send": {"seq": 0, "calls": 0}, "poll": {"calls": 0},
              "saturation": sat, "service": {"windows": []}})
    check("a drop share not seen: unknown", r.state, satrule.UNKNOWN)
    # the CPU share (ABI 9): full at 970, no near rule by default
    for c, want in ((0, satrule.OK), (969, satrule.OK), (970, satrule.FULL),
                    (1000, satrule.FULL)):
        check("cpu %d permille" % c,
              satrule.state_of(None, None, cpu=c), want)
    check("cpu near rule when set", satrule.state_of(
        1000, None, cpu=930, cpu_near=930), satrule.NEAR)
    check("cpu rules off", satrule.state_of(1000, None, cpu=1000,
                                            cpu_full=None), satrule.OK)
    check("a busy idle share and a full CPU: full",
          satrule.state_of(400, 1000, cpu=990), satrule.FULL)
    r = satrule.Rule()
    sat = {"seen": satrule.SEEN_CPU, "cpu_permille": 975, "reasons": []}
    r.update({"send": {"seq": 0, "calls": 0}, "poll": {"calls": 0},
              "saturation": sat, "service": {"windows": []}})
    check("a CPU share alone: full", r.state, satrule.FULL)
    # the receive queue (ABI 10): near at 16384 bytes, full at 32768
    for u, want in ((0, satrule.OK), (16383, satrule.OK),
                    (16384, satrule.NEAR), (32767, satrule.NEAR),
                    (32768, satrule.FULL), (1 << 30, satrule.FULL)):
        check("unread %d bytes" % u,
              satrule.state_of(None, None, unread=u), want)
    check("unread rules off", satrule.state_of(
        1000, None, unread=1 << 20, unread_near=None, unread_full=None),
        satrule.OK)
    check("an idle server with requests queued: full",
          satrule.state_of(400, 1000, unread=100000), satrule.FULL)
    r = satrule.Rule()
    sat = {"seen": 0, "unread_max": 100000, "reasons": []}
    r.update({"send": {"seq": 0, "calls": 0}, "poll": {"calls": 0},
              "saturation": sat, "service": {"windows": []}})
    check("an unread figure not seen: unknown", r.state, satrule.UNKNOWN)
    sat = {"seen": satrule.SEEN_UNREAD, "unread_max": 20000, "reasons": []}
    r.update({"send": {"seq": 0, "calls": 0}, "poll": {"calls": 0},
              "saturation": sat, "service": {"windows": []}})
    check("an unread figure alone: near", r.state, satrule.NEAR)
    # service windows: the first sets avg and base, then a lower mean at
    # once, a higher one by EWMA 1/2; base the lowest
    r = satrule.Rule()
    r.update(reading(svc=[(1, 10000, 2048)]))
    check("first service window", (r.state, r.svc_avg, r.svc_base),
          (satrule.OK, 10000, 10000))
    r.update(reading(svc=[(1, 10000, 2048), (2, 8000, 100)]))
    check("a lower mean at once, and the base", (r.svc_avg, r.svc_base),
          (8000, 8000))
    r.update(reading(svc=[(3, 9000, 100)]))
    check("a higher mean: EWMA 1/2, not the base", (r.svc_avg, r.svc_base),
          ((8000 + 9000) >> 1, 8000))
    r.update(reading(svc=[(3, 9000, 100)]))
    check("a window used once", r.svc_avg, (8000 + 9000) >> 1)
    r.update(reading(svc=[(4, 1, 15)]))
    check("too few samples: skipped", (r.svc_avg, r.svc_base),
          ((8000 + 9000) >> 1, 8000))
    avg, q = r.svc_avg, 4
    while r.state != satrule.FULL and q < 100:
        q += 1
        r.update(reading(svc=[(q, 200000, 2048)]))
        avg = (avg + 200000) >> 1
    check("slow answers: full", (r.state, r.svc_avg), (satrule.FULL, avg))
    check("full above 6x", 1000 * avg // 8000 > 6000, True)
    r.update(reading(svc=[(q, 200000, 2048)], reasons=["quiet"]))
    check("quiet: ok, back at the base", (r.state, r.svc_avg),
          (satrule.OK, 8000))
    # waits per send still computed for the tables
    r = satrule.Rule()
    r.update(reading(0, 0, 1))
    r.update(reading(1, 2048, 2041))
    check("waits per send", r.wps_avg, 996)


def rows_for(served_frac, states, ref=None):
    """Levels 1000, 2000, ... rps offered; the engine's states, and the
    reference's (the same unless ref is given).  A failing level count is
    then one line for the engine and one for the reference."""
    rows = []
    for i, (fr, st) in enumerate(zip(served_frac, states)):
        off = 1000.0 * (i + 1)
        rows.append({"offered_rps": off, "served_rps": off * fr,
                     "state": float(st) if st is not None else math.nan,
                     "rule_state": float(ref[i] if ref else st)})
    return rows


O, N, F, U = satrule.OK, satrule.NEAR, satrule.FULL, satrule.UNKNOWN


def test_check():
    served = [1, 1, 1, 1, 0.9, 0.8]
    cs = report.check_saturation
    check("FULL on the knee", cs("s", rows_for(served, [O, O, O, N, F, F]),
                                 False), [])
    check("FULL one level early", cs("s", rows_for(
        served, [O, O, N, F, F, F]), False), [])
    check("FULL one level late", cs("s", rows_for(
        served, [O, O, O, N, N, F]), False), [])
    check("FULL two levels early", len(cs("s", rows_for(
        served, [O, N, F, F, F, F]), False)), 2)
    check("FULL two levels late", len(cs("s", rows_for(
        served + [0.7], [O, O, O, O, N, N, F]), False)), 2)
    check("never FULL", len(cs("s", rows_for(served, [O] * 6), False)), 2)
    check("lowest level not OK", len(cs("s", rows_for(
        served, [N, O, O, N, F, F]), False)), 2)
    check("no knee in the sweep", len(cs("s", rows_for(
        [1] * 6, [O, O, O, N, F, F]), False)), 1)
    check("engine UNKNOWN throughout", len(cs("s", rows_for(
        served, [U] * 6, [O, O, O, N, F, F]), False)), 2)
    check("engine right, reference wrong", len(cs("s", rows_for(
        served, [O, O, O, N, F, F], [O, F, F, F, F, F]), False)), 1)
    check("no verdict map: reference checked", cs("s", rows_for(
        served, [None] * 6, [O, O, O, N, F, F]), False), [])
    check("no verdict map, reference wrong", len(cs("s", rows_for(
        served, [None] * 6, [O, O, O, O, O, O]), False)), 1)
    q = [1, 1, 1, 0.7]
    check("quick: OK then FULL", cs("s", rows_for(q, [O, O, N, F]), True), [])
    check("quick: top not FULL", len(cs("s", rows_for(
        q, [O, O, N, N]), True)), 2)
    check("quick: top not past capacity", len(cs("s", rows_for(
        [1, 1, 0.9, 0.96], [O, O, F, F]), True)), 1)


def main():
    sys.stderr = open(os.devnull, "w")   # the report's notes
    test_rule()
    test_check()
    sys.stderr = sys.__stderr__
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
