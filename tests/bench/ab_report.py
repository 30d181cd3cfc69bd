"""ab_report.py - part C of tests/bench/bench_paper.sh: what satfeed
watching memcached costs memcached itself, at three offered rates: the
server's CPU time per request (its threads' schedstat run time over the
run, over the requests sent) and its p99, with no tracing and with satfeed,
by round; the change against the same round's no-tracing run with a
bootstrap interval (paired.py).  Prints the table and appends every figure
as 'key value' lines to RESULTS.

    ab_report.py ROUNDS RESULTS BOOT

ROUNDS: '# ...' comments, then 'round rate cfg cpu_ns requests p99_us
achieved_rps' lines (cfg none or satfeed; requests: the rate times the
warm-up and measured time, what the open-loop load sent).
"""
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired as pr  # noqa: E402

rounds, resout, boot = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [l.split() for l in open(rounds) if not l.startswith("#")]
rates = sorted({int(r[1]) for r in rows})
res = open(resout, "a")


def out(key, x):
    res.write("%s %.3f\n" % (key, x))


def col(rate, cfg, i, f=float):
    return [f(r[i]) for r in rows if int(r[1]) == rate and r[2] == cfg]


R = len(col(rates[0], "none", 0)) if rates else 0
print("memcached -t 1, its CPU time per request and p99 with no tracing and with")
print("satfeed watching it (loaded, memcached added), at three offered rates;")
print("%d round(s), the two runs of a rate in rotating order; median [min..max]" % R)
print("over rounds; change: against the same round's no-tracing run (median,")
print("bootstrap 95% interval).  The CPU time is memcached's threads' (schedstat),")
print("which holds satfeed's programs that run in memcached's syscalls.")
print("%-7s %-8s %24s %22s %24s" % ("rate", "config", "CPU ns per request",
                                    "change", "p99 us"))
for rate in rates:
    cpu = {}
    p99 = {}
    for cfg in ("none", "satfeed"):
        ns = col(rate, cfg, 3)
        reqs = col(rate, cfg, 4)
        cpu[cfg] = [a / b if b else float("nan") for a, b in zip(ns, reqs)]
        p99[cfg] = col(rate, cfg, 5)
    for cfg in ("none", "satfeed"):
        c, p = cpu[cfg], p99[cfg]
        out("ab.%d.%s.cpu_ns_per_req" % (rate, cfg), st.median(c))
        out("ab.%d.%s.p99_us" % (rate, cfg), st.median(p))
        chg = ""
        if cfg == "satfeed":
            m, lo, hi = pr.change(c, cpu["none"], boot)
            out("ab.%d.cpu_change_pct" % rate, m)
            out("ab.%d.cpu_change_lo_pct" % rate, lo)
            out("ab.%d.cpu_change_hi_pct" % rate, hi)
            out("ab.%d.cpu_added_ns" % rate,
                st.median(c) - st.median(cpu["none"]))
            chg = "%+.1f%% [%+.1f..%+.1f]" % (m, lo, hi)
            pm, plo, phi = pr.change(p, p99["none"], boot)
            out("ab.%d.p99_change_pct" % rate, pm)
        print("%-7d %-8s %24s %22s %24s" % (
            rate, cfg, "%.0f [%.0f..%.0f]" % (st.median(c), min(c), max(c)),
            chg, "%.0f [%.0f..%.0f]" % (st.median(p), min(p), max(p))))
    pm, plo, phi = pr.change(p99["satfeed"], p99["none"], boot)
    print("%-7s %-8s %24s %22s %24s" % ("", "", "", "p99 change",
                                        "%+.1f%% [%+.1f..%+.1f]" % (
                                            pm, plo, phi)))
