"""test_corpus_report.py - corpus_report.judge() on levels made up for the
purpose: the knee (served < 95% of offered, or p99 > 10x the lowest
level's), first near/full, false alarms, misses, unknown past the knee and
the goal.  No root, no server; run by validate.sh.  Exits 1 with what
differed."""
import sys

import corpus_report
import satrule

PCTS = [10, 30, 50, 70, 90, 100, 110, 130, 150]
U, O, N, F = satrule.UNKNOWN, satrule.OK, satrule.NEAR, satrule.FULL
fails = []


def rows(verdicts, served=None, p99=None):
    out = []
    for i, (pct, v) in enumerate(zip(PCTS, verdicts)):
        off = 100.0 * pct
        out.append({"pct_capacity": pct, "offered_rps": off,
                    "served_rps": served[i] if served else off,
                    "p99_us": p99[i] if p99 else 100.0,
                    "verdict": float("nan") if v is None else v})
    return out


def check(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))


def main():
    # knee by served: 110% serves 94.9% of offered
    served = [100.0 * p for p in PCTS]
    served[6] = 0.949 * 11000
    served[7] = 0.8 * 13000
    served[8] = 0.7 * 15000
    j = corpus_report.judge(rows([O, O, O, O, N, F, F, F, F], served))
    check("served knee", j["knee"], 6)
    check("first near", j["near"], 4)
    check("first full", j["full"], 5)
    check("no false alarm", j["alarms"], [])
    check("no miss", j["misses"], [])
    check("goal met (full one level early)", j["goal"], True)
    # 95.0% exactly is not past the knee; p99 at exactly 10x is not either
    served2 = [100.0 * p for p in PCTS]
    served2[5] = 0.95 * 10000
    p99 = [100.0] * 9
    p99[6] = 1000.0
    p99[7] = 1000.1
    j = corpus_report.judge(rows([O] * 5 + [N, N, F, F], served2, p99))
    check("knee by p99 > 10x the 10% level's", j["knee"], 7)
    check("full on the knee: goal", j["goal"], True)
    # false alarms at 10% and 50% (not 70%); misses past the knee only
    j = corpus_report.judge(rows([N, O, F, N, O, O, O, O, N], served))
    check("false alarms", [PCTS[i] for i in j["alarms"]], [10, 50])
    check("misses (ok one or more levels past the knee)",
          [PCTS[i] for i in j["misses"]], [130])
    check("goal not met", j["goal"], False)
    # unknown past the knee is counted apart, and fails the goal
    j = corpus_report.judge(rows([O, O, O, O, O, F, F, U, None], served))
    check("unknown past the knee", [PCTS[i] for i in j["unknown"]],
          [130, 150])
    check("misses with unknown", j["misses"], [])
    check("goal not met with unknown", j["goal"], False)
    # first full two levels before the knee: goal not met
    j = corpus_report.judge(rows([O, O, O, F, F, F, F, F, F], served))
    check("full two levels early", j["goal"], False)
    # no knee in the sweep: no misses, goal not met
    j = corpus_report.judge(rows([O] * 9))
    check("no knee", j["knee"], None)
    check("no knee: goal", j["goal"], False)
    for f in fails:
        print("test_corpus_report: FAIL:", f, file=sys.stderr)
    print("test_corpus_report: %s" % ("ok" if not fails else
                                      "%d failed" % len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
