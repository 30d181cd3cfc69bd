"""textfile_reads.py PATH - read the exposition file PATH over and over for
1.5 s while `satfeedctl export --textfile` rewrites it; every read must be a
whole file (ends with a newline, starts with satfeed_up's HELP), and no
series of one read may be missing from a later read: with ABI 4 the age
timer closes windows of targets that see few events (aged, quiet), so a
figure may go from absent to present between two rewrites, but a series
never goes away while the targets stay.  Prints "N reads, M line count(s),
no series dropped"; exits with the torn tail on a torn read, or with the
series that went away."""
import sys
import time

path, end, reads, sizes = sys.argv[1], time.monotonic() + 1.5, 0, set()
prev = set()
while time.monotonic() < end:
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if not text.endswith("\n") or not lines[0].startswith("# HELP satfeed_up"):
        sys.exit("torn read: %r" % text[-200:])
    series = {l.rsplit(" ", 1)[0] for l in lines if l and not l.startswith("#")}
    gone = prev - series
    if gone:
        sys.exit("read %d: %d series went away, e.g. %s" %
                 (reads + 1, len(gone), sorted(gone)[0]))
    prev = series
    sizes.add(len(lines))
    reads += 1
print(reads, "reads,", len(sizes), "line count(s), no series dropped")
