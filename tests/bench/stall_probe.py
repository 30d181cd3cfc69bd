"""stall_probe.py CPU SECONDS - the machine's own stalls on one CPU.

A thread pinned to CPU reads the monotonic clock in a loop for SECONDS and
counts the gaps, the time it did not run (hypervisor steal, interrupts,
other tasks).  Prints "CPU gaps>=100us/s gaps>=1ms/s percent-of-time-lost".
"""
import os, sys, time
cpu, secs = int(sys.argv[1]), float(sys.argv[2])
os.sched_setaffinity(0, {cpu})
m = time.monotonic_ns
end = m() + int(secs * 1e9)
prev = m()
g100 = g1m = lost = 0
while True:
    t = m()
    if t > end:
        break
    g = t - prev
    prev = t
    if g >= 100000:
        g100 += 1
        lost += g
        if g >= 1000000:
            g1m += 1
print("%d %.1f %.2f %.2f" % (cpu, g100 / secs, g1m / secs, 100.0 * lost / (secs * 1e9)))
