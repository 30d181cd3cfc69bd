"""textfile_reads.py PATH - read the exposition file PATH over and over for
1.5 s while `satfeedctl export --textfile` rewrites it; every read must be a
whole file (ends with a newline, starts with satfeed_up's HELP).  Prints
"N reads, M line count(s)"; exits with the torn tail on a torn read."""
import sys
import time

path, end, reads, sizes = sys.argv[1], time.monotonic() + 1.5, 0, set()
while time.monotonic() < end:
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if not text.endswith("\n") or not lines[0].startswith("# HELP satfeed_up"):
        sys.exit("torn read: %r" % text[-200:])
    sizes.add(len(lines))
    reads += 1
print(reads, "reads,", len(sizes), "line count(s)")
