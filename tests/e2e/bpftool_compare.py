"""bpftool_compare.py DIR - satfeedctl show --json (DIR/show.json) against
bpftool's BTF-formatted dumps of the same maps (DIR/*.json); run by
tests/e2e/test_e2e.sh."""
# Compare satfeedctl show --json with bpftool's BTF-formatted dumps.
# Prints "ok <what>" or "FAIL <what>: <detail>" lines, then "checked N".
import json, sys
from decimal import Decimal

d = sys.argv[1]
show = json.load(open(d + "/show.json"), parse_float=Decimal)
streams = {e["formatted"]["key"]: e["formatted"]["value"]
           for e in json.load(open(d + "/streams.json"))}
targets = {e["formatted"]["key"]: e["formatted"]["value"]
           for e in json.load(open(d + "/targets.json"))}
info = json.load(open(d + "/info.json"))[0]["formatted"]["value"]
n = 0

def check(what, a, b):
    global n
    n += 1
    if a == b:
        print("ok", what)
    else:
        print("FAIL %s: satfeedctl %r != bpftool %r" % (what, a, b))

check("info window_samples", show["window_samples"], info["window_samples"])
check("info history", show["history"], info["history"])
check("info abi_version", show["abi_version"], info["abi_version"])
check("info attach_mode", show["attach_mode"],
      {1: "fentry", 2: "tp_btf"}.get(info["attach_mode"]))
N = info["window_samples"]
H = info["history"]
closed = 0
per_stream = {}
for t in show["targets"]:
    slot = t["slot"]
    bt = targets[slot]
    check("target %d id" % slot, t["pid"], bt["id"])
    check("target %d kind" % slot, 1, bt["kind"])
    check("target %d state" % slot, t["state"], "gone" if bt["state"] else "active")
    # char[16] is printed as a string by bpftool
    check("target %d comm" % slot, t["comm"], bt["comm"] if isinstance(bt["comm"], str)
          else bytes(c for c in bt["comm"] if c).decode())
    for si, name in enumerate(("send", "recv", "poll")):
        s = t[name]
        b = streams[slot * 3 + si]
        w = "slot %d %s" % (slot, name)
        check(w + " gen", bt["gen"], b["gen"])
        check(w + " seq/published", s["seq"], b["published"])
        check(w + " samples/N", s["samples"], N)
        for f in ("pending", "calls", "last_ns", "errors", "eagain",
                  "zero_bytes", "not_socket"):
            check(w + " " + f, s[f], b[f])
        if not s["seq"]:
            check(w + " no window yet", s["mean_ns"], None)
            continue
        latest = b["hist"][(b["published"] - 1) % H]
        check(w + " latest mean_ns", s["mean_ns"], latest["mean_ns"])
        check(w + " latest var_ns2", s["var_ns2"], latest["var_ns2"])
        if name != "poll":
            key = "rps" if name == "send" else "rate"
            check(w + " latest %s*1000 == rate_milli" % key,
                  int(s[key] * 1000), latest["rate_milli"])
        first = max(1, s["seq"] - H + 1)
        check(w + " windows listed", [x["seq"] for x in s["windows"]],
              list(range(first, s["seq"] + 1)))
        for x in s["windows"]:
            h = b["hist"][(x["seq"] - 1) % H]
            ww = "%s window %d" % (w, x["seq"])
            for f in ("seq", "start_ns", "end_ns", "sum_ns", "mean_ns",
                      "var_ns2", "clamped", "samples", "flags"):
                check(ww + " " + f, x[f], h[f])
            check(ww + " rate*1000 == rate_milli", int(x["rate"] * 1000), h["rate_milli"])
            check(ww + " seq_end == seq (consistent)", h["seq_end"], h["seq"])
            # N samples, fewer when the age timer closed it (flags 1), none
            # in a quiet window (flags 2)
            n_w = {0: N, 2: 0}.get(h["flags"], h["samples"])
            check(ww + " samples", h["samples"], n_w)
            check(ww + " 0 < samples <= N when aged",
                  h["flags"] != 1 or 0 < h["samples"] <= N, True)
            check(ww + " mean_ns == sum_ns // samples", h["mean_ns"],
                  h["sum_ns"] // n_w if n_w else 0)
            closed += 1
            per_stream[name] = per_stream.get(name, 0) + 1
print("windows", closed)
print("streams", len(per_stream))
print("checked", n)
