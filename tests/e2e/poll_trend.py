"""poll_trend.py RATES POLL_MEANS WAITS_PER_REQ - the poll stream's trend
over a sweep of rates (each argument a space-separated list, one value per
rate): the waiting time per second, its Spearman rho against the rate, and
for each pair of neighbouring rates the decrease the engine's own counts
predict; run by tests/e2e/test_e2e.sh, whose comment above the call says
what is asserted."""
import sys

rates, pm, wpr = ([float(x) for x in arg.split()] for arg in sys.argv[1:4])
n = len(rates)
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0] * len(v)
    for k, i in enumerate(order):
        r[i] = k + 1
    return r
idle = [m * w * r / 1e6 for m, w, r in zip(pm, wpr, rates)]
rr, ri = ranks(rates), ranks(idle)
rho = 1 - 6 * sum((a - b) ** 2 for a, b in zip(rr, ri)) / (n * (n * n - 1)) if n > 1 else 0
print("rho %.3f" % rho)
print("idle %s" % " ".join("%.3f" % x for x in idle))
for i in range(1, n):
    pred = (rates[i - 1] / rates[i]) * (wpr[i - 1] / max(wpr[i], 1e-9))
    print("pair %g %g %.1f %.1f %.3f %.3f %s" % (rates[i - 1], rates[i], pm[i - 1], pm[i],
          pred, pm[i] / pm[i - 1], "assert" if pred <= 0.9 else "skip"))
