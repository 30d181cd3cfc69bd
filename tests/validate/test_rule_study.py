"""test_rule_study.py - rule_study.py's reading of a recorded level on
snapshots made up for the purpose: which snapshots count (inside the
measured interval), the figures a rule gets from each (idle share, service
time over its base, the engine's drop share where the recording has it,
else the probe's from /proc/net/udp), and the current rule on them.  No
root, no server; run by validate.sh.  Exits 1 with what differed."""
import sys

import rule_study
import satrule

fails = []


def check(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))


def snap(t, idle=None, svc=None, drop=None, udp=None, sends=0,
         reasons=()):
    seen = 0
    sat = {"state": "ok", "reasons": list(reasons)}
    if idle is not None:
        seen |= satrule.SEEN_IDLE
        sat["idle_permille"] = idle
    if svc is not None:
        sat["svc_avg_ns"], sat["svc_base_ns"] = svc
    if drop is not None:
        seen |= satrule.SEEN_DROPS
        sat["drop_permille"] = drop
    sat["seen"] = seen
    s = {"t_ns": t, "saturation": sat, "send": {"seq": 1, "calls": sends}}
    if udp is not None:
        s["probe"] = {"udp_drops": udp}
    return s


def main():
    x = {"t0_ns": 100, "t1_ns": 300, "verdicts": [],
         "snapshots": [snap(50, idle=900, udp=0, sends=0),
                       snap(100, idle=900, udp=10, sends=990),
                       snap(200, idle=90, svc=(7000, 1000), udp=10,
                            sends=1990),
                       snap(300, idle=900, drop=60, udp=110, sends=2890),
                       snap(301, idle=10)]}
    rs = rule_study.readings(x)
    check("snapshots inside [t0, t1]", [r["t"] for r in rs],
          [100, 200, 300])
    check("idle", [r["idle"] for r in rs], [900, 90, 900])
    check("service over its base, permille", rs[1]["svc"], 7000)
    check("the probe's drop share: 10 of 10 + 990 sends",
          rs[0]["drop_probe"], 10)
    check("no engine figure: the probe's", rs[0]["drop_share"], 10)
    check("the engine's drop share when recorded", rs[2]["drop_share"], 60)
    check("the engine's figure kept apart", rs[2]["drop_engine"], 60)
    check("the probe's beside it", rs[2]["drop_probe"], 100)
    cur = [rule_study.rule_current(r) for r in rs]
    check("the current rule: ok by idle; full by idle and 7x service; "
          "full by the engine's 60 permille dropped", cur,
          [satrule.OK, satrule.FULL, satrule.FULL])
    check("the probe's figure is not the engine's rule",
          rule_study.rule_current(dict(rs[0], drop_engine=None)),
          satrule.OK)
    quiet = rule_study.readings({"t0_ns": 0, "t1_ns": 10, "verdicts": [],
                                 "snapshots": [snap(5, idle=0,
                                                    reasons=["quiet"])]})
    check("quiet: ok once a window closed",
          rule_study.rule_current(quiet[0]), satrule.OK)
    check("the level's mode, ties to the worse",
          rule_study.mode([satrule.OK, satrule.FULL]), satrule.FULL)
    if fails:
        print("\n".join("FAIL: " + f for f in fails))
        sys.exit(1)
    print("test_rule_study: ok")


if __name__ == "__main__":
    main()
