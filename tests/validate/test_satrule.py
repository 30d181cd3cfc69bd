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


def feed(rule, steps):
    """steps: (send windows closed, sends, waits) per reading."""
    sw = sc = pc = 0
    rule.update(sw, sc, pc + 1)
    pc = 1
    for closed, sends, waits in steps:
        sw, sc, pc = sw + closed, sc + sends, pc + waits
        rule.update(sw, sc, pc)
    return rule


def test_rule():
    r = satrule.Rule()
    check("no reading yet", r.state, satrule.UNKNOWN)
    r.update(0, 0, 0)
    r.update(1, 2048, 0)
    check("no wait counted ever", r.state, satrule.UNKNOWN)
    r = feed(satrule.Rule(), [(1, 2048, 2040)])
    check("first window, one wait per send", (r.state, r.wps_avg),
          (satrule.OK, 996))
    r = feed(satrule.Rule(), [(0, 1000, 1000)])
    check("no send window closed", r.state, satrule.UNKNOWN)
    # saturated from the start: 0 waits per send
    r = feed(satrule.Rule(), [(1, 2048, 0)])
    check("saturated first window", (r.state, r.wps_avg), (satrule.FULL, 0))
    # from OK, one window of no waits is not yet FULL (1/8 weight)
    r = feed(satrule.Rule(), [(1, 2048, 2048)] + [(1, 2048, 0)])
    check("one saturated window after OK", (r.state, r.wps_avg),
          (satrule.OK, 875))
    # the EWMA in integers: (7 * 1000 + 0) >> 3 = 875, again 765, ...
    avg = 1000
    for _ in range(30):
        avg = (7 * avg) >> 3
    r = feed(satrule.Rule(), [(1, 2048, 2048)] + [(30, 30 * 2048, 0)])
    check("30 saturated windows", (r.state, r.wps_avg), (satrule.FULL, avg))
    # thresholds: 150 is OK, 149 NEAR, 30 NEAR, 29 FULL
    for wps, want in ((150, satrule.OK), (149, satrule.NEAR),
                      (30, satrule.NEAR), (29, satrule.FULL)):
        check("state of %d" % wps, satrule.state_of(wps), want)
    # bursts: saturated half of the time stays NEAR, not FULL
    r = feed(satrule.Rule(), [(1, 2048, 2048)] +
             [(4, 4 * 2048, 0), (4, 4 * 2048, 4 * 200)] * 10)
    check("saturated in bursts", r.state, satrule.NEAR)


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
