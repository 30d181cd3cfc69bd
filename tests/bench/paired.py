"""paired.py - the paired comparison both memcached parts of
tests/bench/bench_paper.sh report (paper_report.py, ab_report.py): per
round, the log of the ratio of a configuration's figure to the same round's
no-tracing run; the median over rounds and a bootstrap 95% interval (rounds
resampled), as percent changes.
"""
import math
import random
import statistics as st


def change(xs, base, boot, seed=1):
    """(median, low, high) percent change of xs against base, paired by
    index; NaNs when no pair has both figures above 0."""
    d = [math.log(a / b) for a, b in zip(xs, base) if a > 0 and b > 0]
    if not d:
        return float("nan"), float("nan"), float("nan")
    rng = random.Random(seed)
    med = st.median(d)
    bs = sorted(st.median([d[rng.randrange(len(d))] for _ in d])
                for _ in range(boot))
    lo, hi = bs[int(0.025 * boot)], bs[min(boot - 1, int(0.975 * boot))]
    pct = lambda x: 100.0 * (math.exp(x) - 1.0)
    return pct(med), pct(lo), pct(hi)
