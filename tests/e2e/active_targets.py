"""active_targets.py - read `satfeedctl targets --json` on stdin and print
each active target as "ID:SYSCALLS" (ID the pid, or the cgroup id)."""
import json
import sys

for t in json.load(sys.stdin)["targets"]:
    if t["state"] == "active":
        print("%s:%s" % (t.get("pid", t.get("cgroup")), t["syscalls"]))
