"""signal_run.py - one open-loop run for tests/e2e/test_signal.sh."""
# One sfload run against the watched sfserver in slot SLOT, the target's
# response-stream windows (pinned sf_responses, read with bpftool) collected
# while it runs; then, with no traffic, how long until its response and send
# streams publish a quiet window and its verdict says quiet.  Prints one
# JSON object.
import json, subprocess, sys, time

root, sfload, slot, port, rate, duration = sys.argv[1:7]
slot = int(slot)


def dump(name):
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned",
                          root + "/" + name, "key", str(slot), "0", "0", "0"],
                         check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    # bpftool -j: raw bytes in "value", the BTF-formatted one in
    # "formatted" (a one-element list on some versions)
    return (j[0] if isinstance(j, list) else j)["formatted"]["value"]


def streams_dump():
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned",
                          root + "/sf_streams"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[slot * 3]["formatted"]["value"]  # send stream


got = {}


def collect(s):
    for w in s["hist"]:
        if w["seq"] and w["seq"] == w["seq_end"]:
            got[w["seq"]] = w


before = dump("sf_responses")
seq0 = before["published"]
t0 = time.monotonic_ns()
gen = subprocess.Popen([sfload, "--rate", str(rate), "--duration", duration,
                        "--json", "--no-progress", "127.0.0.1:" + port],
                       stdout=subprocess.PIPE, text=True)
while gen.poll() is None:
    time.sleep(0.3)
    collect(dump("sf_responses"))
out = gen.stdout.read()
t1 = time.monotonic_ns()
rep = json.loads(out) if out.strip() else {}
after = dump("sf_responses")
collect(after)
ws = [w for q, w in sorted(got.items())
      if q > seq0 and w["start_ns"] >= t0 and w["end_ns"] <= t1
      and w["samples"]]
res = {"rate": float(rate), "gen_rc": gen.returncode, "report": rep,
       "achieved": rep.get("achieved_rps"), "windows": len(ws),
       "missed": len([q for q in range(seq0 + 1, after["published"] + 1)
                      if q not in got])}
if ws:
    res["rps_obs"] = sum(w["samples"] for w in ws) * 1e9 / sum(
        w["sum_ns"] for w in ws)
    res["err_pct"] = 100.0 * (res["rps_obs"] - res["achieved"]) / \
        res["achieved"]
# quiet: poll until both streams' newest windows are quiet and the verdict
# says so; the time from the run's end
info = json.loads(subprocess.run(["bpftool", "-j", "map", "lookup", "pinned",
                                  root + "/sf_info", "key", "0", "0", "0",
                                  "0"], check=True, capture_output=True,
                                 text=True).stdout)
info = (info[0] if isinstance(info, list) else info)["formatted"]["value"]
T = info["max_age_ns"]
res["max_age_ns"] = T
quiet_at = None
while time.monotonic_ns() < t1 + 3 * T:
    r = dump("sf_responses")
    s = streams_dump()
    v = dump("sf_verdict")
    rq = r["hist"][(r["published"] - 1) % 16]["flags"] & 2 if r["published"] else 0
    sq = s["hist"][(s["published"] - 1) % 16]["flags"] & 2 if s["published"] else 0
    if rq and sq and v["quiet_ns"] and v["state"] in (0, 1):
        quiet_at = time.monotonic_ns()
        res["verdict_why"] = v["why"]
        res["slack_permille"] = v["slack_permille"]
        break
    time.sleep(0.02)
res["quiet_after_ns"] = quiet_at - t1 if quiet_at else None
print(json.dumps(res))
