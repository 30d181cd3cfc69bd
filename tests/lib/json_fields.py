"""json_fields.py PATH[=DEFAULT]... - read one JSON document on stdin and
print the value at each PATH, separated by spaces.  A PATH is keys and list
indexes joined by dots (targets.0.send.seq); DEFAULT stands for a PATH that
is absent (run_time_ns=0).  With no PATH it prints an empty line: its exit
status says whether stdin is one JSON document.  tests/lib/check.sh's
sf_json_fields."""
import json
import sys

doc = json.load(sys.stdin)
out = []
for arg in sys.argv[1:]:
    path, has_default, default = arg.partition("=")
    v = doc
    try:
        for k in path.split("."):
            v = v[int(k)] if isinstance(v, list) else v[k]
    except (KeyError, IndexError):
        if not has_default:
            raise
        v = default
    out.append(str(v))
print(" ".join(out))
