"""rate_run.py - one open-loop run for tests/e2e/test_e2e.sh."""
# One open-loop run against the watched sfserver, with the server's windows
# collected while it runs (the engine keeps 16 per stream; a run may close
# more).  Prints one JSON object.
import json, math, subprocess, sys, time

ctl, sfload, pid, port, rate, duration = sys.argv[1:7]
rate = float(rate)

def show():
    out = subprocess.run([ctl, "show", "--json", "--pid", pid], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["targets"][0]

got = {"send": {}, "poll": {}, "recv": {}}

def collect(t):
    for s in got:
        for w in t[s]["windows"]:
            got[s][w["seq"]] = w

before = show()
seq0 = {s: before[s]["seq"] for s in got}
t0 = time.monotonic_ns()
gen = subprocess.Popen([sfload, "--rate", str(rate), "--duration", duration,
                        "--json", "--no-progress", "127.0.0.1:" + port],
                       stdout=subprocess.PIPE, text=True)
while gen.poll() is None:
    time.sleep(0.4)
    collect(show())
out = gen.stdout.read()
t1 = time.monotonic_ns()
time.sleep(0.1)
after = show()
collect(after)
rep = json.loads(out) if out.strip() else {}

def inside(s):
    # windows closed during the run whose every sample lies inside it: the
    # first window after seq0 holds the idle gap/wait from before the run
    # and starts before t0, so start_ns >= t0 drops it
    ws = [w for q, w in sorted(got[s].items())
          if q > seq0[s] and w["start_ns"] >= t0 and w["end_ns"] <= t1]
    missing = [q for q in range(seq0[s] + 1, after[s]["seq"] + 1)
               if q not in got[s]]
    return ws, missing

N = after["send"]["samples"]
send, miss_s = inside("send")
poll, miss_p = inside("poll")
res = {
    "rate": rate, "gen_rc": gen.returncode, "report": rep,
    "achieved": rep.get("achieved_rps"), "send_windows": len(send),
    "poll_windows": len(poll), "missed_windows": len(miss_s) + len(miss_p),
    "seq0": seq0["send"], "seq1": after["send"]["seq"],
    "send_calls": after["send"]["calls"] - before["send"]["calls"],
    "poll_calls": after["poll"]["calls"] - before["poll"]["calls"],
}
res["waits_per_req"] = res["poll_calls"] / max(1, res["send_calls"])
if send:
    tot = sum(w["sum_ns"] for w in send)
    # each window's own samples: fewer than N when the age timer closed it
    res["rps_obs"] = sum(w["samples"] for w in send) * 1e9 / tot
    res["rps_min"] = min(float(w["rate"]) for w in send)
    res["rps_max"] = max(float(w["rate"]) for w in send)
    res["err_pct"] = 100.0 * (res["rps_obs"] - res["achieved"]) / res["achieved"]
    res["send_var_ns2"] = sum(w["var_ns2"] for w in send) / len(send)
if poll:
    res["poll_mean_ns"] = (sum(w["sum_ns"] for w in poll) /
                           max(1, sum(w["samples"] for w in poll)))
print(json.dumps(res))
