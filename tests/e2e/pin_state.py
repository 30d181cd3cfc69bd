"""pin_state.py - what a satfeed pin root holds, read with bpftool only (not
with libsatfeed, whose protocol is what is being checked), and every way it
can be inconsistent.  Imported by faults.py; run alone it prints the problems
of one root and exits 1 if there are any:

    python3 tests/e2e/pin_state.py ROOT

Two classes of problem:
  visible   what a user would see or suffer: a root missing pins (maps
            without links: an engine that counts nothing), a target listed
            active that has no index entry, is missing from sf_config, or
            whose process has exited (the engine never marked it gone, so a
            process that reuses its pid would be counted into it)
  leftover  harmless debris that the next satfeed command must sweep: an
            index entry whose target is not active, an sf_config that is not
            the one its targets make, a stream of an active target in another
            generation, a swap directory of a killed load or unload
"""
import json
import os
import subprocess
import sys

MAPS = ["sf_info", "sf_config", "sf_targets", "sf_streams", "sf_pid_index",
        "sf_cgrp_index", "sf_poll_start"]
PID_SLOTS = 1024
PID_SLOT_SHARED = 0xff
MAX_CGROUP_LEVELS = 8
KIND_PID, KIND_CGROUP = 1, 2
STATE_ACTIVE = 0


def bpftool(*args):
    r = subprocess.run(["bpftool", "-j"] + list(args), capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError("bpftool %s: %s" % (" ".join(args),
                                              r.stderr.strip()))
    return json.loads(r.stdout or "null")


def batch(lines):
    """Outputs of several bpftool commands run by one bpftool process."""
    r = subprocess.run(["bpftool", "-j", "batch", "file", "-"],
                       input="\n".join(lines) + "\n", capture_output=True,
                       text=True)
    # bpftool 7.5 ends a batch read from stdin with an error about the
    # file: what counts is that every command has its output
    try:
        out = json.loads(r.stdout)[:len(lines)]
        if len(out) == len(lines):
            return [o["output"] for o in out]
    except (ValueError, KeyError, TypeError):
        pass
    raise RuntimeError("bpftool batch: %s%s" % (r.stdout[-300:],
                                                r.stderr.strip()))


def dump_cmd(root, name):
    return "map dump pinned " + os.path.join(root, name)


def lookup_cmd(root, name, key):
    k = " ".join(str(b) for b in key.to_bytes(4, "little"))
    return "map lookup pinned %s key %s" % (os.path.join(root, name), k)


def entries(out):
    return {e["formatted"]["key"]: e["formatted"]["value"] for e in out}


def dump(root, name):
    return entries(bpftool("map", "dump", "pinned", os.path.join(root, name)))


def lookup(root, name, key):
    return batch([lookup_cmd(root, name, key)])[0]["formatted"]["value"]


def swap_dir(root):
    parent, base = os.path.split(root.rstrip("/"))
    return os.path.join(parent, base + "~swap")


def proc_dead(pid):
    """Has process pid exited (gone, or a zombie)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def config_of(targets, max_targets):
    """sf_config as sf_config_build() makes it from the target table."""
    pid_slot = [0] * PID_SLOTS
    nr_pid = nr_cg = 0
    levels = set()
    for slot in range(max_targets):
        t = targets.get(slot)
        if not t:
            continue
        if t["kind"] == KIND_PID:
            nr_pid += 1
            b = t["id"] % PID_SLOTS
            pid_slot[b] = PID_SLOT_SHARED if pid_slot[b] else slot + 1
        elif t["kind"] == KIND_CGROUP:
            nr_cg += 1
            levels.add(t["level"] % 64)
    lv = sorted(levels, reverse=True)
    return {"nr_pid_targets": nr_pid, "nr_cgroup_targets": nr_cg,
            "nr_cgroup_levels": len(lv),
            "cgroup_level": lv + [0] * (MAX_CGROUP_LEVELS - len(lv)),
            "pid_slot": pid_slot}


def layout_problems(root):
    """A root is absent or complete: every map, and a link per program."""
    if not os.path.lexists(root):
        return []
    have = set(os.listdir(root))
    missing = [m for m in MAPS if m not in have]
    progs = set(os.listdir(os.path.join(root, "progs"))) \
        if "progs" in have else set()
    links = set(os.listdir(os.path.join(root, "links"))) \
        if "links" in have else set()
    out = []
    if missing:
        out.append("root holds no %s" % ",".join(missing))
    if not progs:
        out.append("root holds no programs")
    if progs != links:
        out.append("programs without links: %s" %
                   ",".join(sorted(progs - links) or ["-"]))
    return out


def problems(root, check_procs=True):
    """(visible, leftover): lists of one-line descriptions."""
    visible = layout_problems(root)
    leftover = []
    if os.path.lexists(swap_dir(root)):
        leftover.append("%s exists" % swap_dir(root))
    if visible or not os.path.lexists(root):
        return visible, leftover
    info, targets, pix, cix, cfg = (entries(o) for o in batch(
        [dump_cmd(root, m) for m in ("sf_info", "sf_targets", "sf_pid_index",
                                     "sf_cgrp_index", "sf_config")]))
    n = info[0]["max_targets"]
    cfg = cfg[0]
    targets = {s: t for s, t in targets.items() if t["kind"] and s < n}
    index = {KIND_PID: pix, KIND_CGROUP: cix}
    active = sorted(s for s, t in targets.items()
                    if t["state"] == STATE_ACTIVE)
    gens = batch([lookup_cmd(root, "sf_streams", s * 3 + i)
                  for s in active for i in range(3)]) if active else []
    gens = [g["formatted"]["value"]["gen"] for g in gens]
    for slot, t in sorted(targets.items()):
        if t["state"] != STATE_ACTIVE:
            continue
        what = "%s %d in slot %d" % ("pid" if t["kind"] == KIND_PID else
                                     "cgroup", t["id"], slot)
        ix = index[t["kind"]].get(t["id"])
        if not ix or ix["slot"] != slot or ix["gen"] != t["gen"]:
            visible.append("active %s has no index entry (%s)" % (what, ix))
        if t["kind"] == KIND_PID and \
           cfg["pid_slot"][t["id"] % PID_SLOTS] not in (slot + 1,
                                                        PID_SLOT_SHARED):
            visible.append("active %s is missing from sf_config" % what)
        if t["kind"] == KIND_PID and check_procs and proc_dead(t["id"]):
            visible.append("active %s: the process has exited" % what)
        for s in range(3):
            g = gens[active.index(slot) * 3 + s]
            if g != t["gen"]:
                leftover.append("active %s: stream %d in gen %d, not %d" %
                                (what, s, g, t["gen"]))
    for kind, ixs in index.items():
        for key, ix in ixs.items():
            t = targets.get(ix["slot"])
            if not t or t["kind"] != kind or t["id"] != key or \
               t["gen"] != ix["gen"] or t["state"] != STATE_ACTIVE:
                leftover.append("index entry %d -> slot %d gen %d has no active target"
                                % (key, ix["slot"], ix["gen"]))
    want = config_of(targets, n)
    if any(cfg[k] != v for k, v in want.items()):
        leftover.append("sf_config is not the one its targets make")
    return visible, leftover


def pinned_prog_ids(root):
    d = os.path.join(root, "progs")
    if not os.path.isdir(d):
        return set()
    return {bpftool("prog", "show", "pinned", os.path.join(d, p))["id"]
            for p in os.listdir(d)}


def sf_prog_ids():
    return {p["id"] for p in bpftool("prog", "list")
            if p.get("name", "").startswith("sf_")}


if __name__ == "__main__":
    v, l = problems(sys.argv[1])
    for p in v:
        print("visible:", p)
    for p in l:
        print("leftover:", p)
    sys.exit(1 if v or l else 0)
