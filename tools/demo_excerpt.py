"""demo_excerpt.py - read `satfeedctl show --json` on stdin and print it
abridged for tools/demo.sh: per target its pid, comm and state, then per
stream those of seq, samples, mean_ns, var_ns2 and rps it has."""
import json
import sys

FIGURES = ("seq", "samples", "mean_ns", "var_ns2", "rps", "cv2_permille",
           "idle_permille")

d = json.load(sys.stdin)
for t in d["targets"]:
    print(json.dumps({k: t[k] for k in ("pid", "comm", "state")}))
    for s in ("send", "recv", "poll"):
        v = {k: t[s].get(k) for k in FIGURES}
        print(" ", s, json.dumps({k: x for k, x in v.items() if x is not None}))
