"""target_gone.py pid PID | cgroup INDEX_PIN - read `bpftool map dump -j` of
sf_targets on stdin and print, for the target of pid PID (or for every cgroup
target), its engine state and whether gone_ns is set: "1 yes" once the engine
marked it gone.  For cgroups each line also gives the number of entries left
in the cgroup index pinned at INDEX_PIN (0 once the engine unindexed it)."""
import json
import subprocess
import sys

KIND_PID, KIND_CGROUP = 1, 2

kind, arg = sys.argv[1], sys.argv[2]
if kind == "cgroup":
    ix = json.loads(subprocess.run(["bpftool", "map", "dump", "-j", "pinned",
                                    arg], capture_output=True).stdout)
for e in json.load(sys.stdin):
    v = e["formatted"]["value"]
    gone = "yes" if v["gone_ns"] > 0 else "no"
    if kind == "pid" and v["kind"] == KIND_PID and v["id"] == int(arg):
        print(v["state"], gone)
    elif kind == "cgroup" and v["kind"] == KIND_CGROUP:
        print(v["state"], gone, len(ix))
