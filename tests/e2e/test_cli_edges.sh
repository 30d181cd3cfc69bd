#!/usr/bin/env bash
# tests/e2e/test_cli_edges.sh - the rough edges a new user hits (issue 9):
# every failure one line with its fix and the tool's prefix, --bpffs after
# the command, --version, several pids, kernel threads and the root cgroup,
# children doing the I/O, a pid inside a watched cgroup, a removed cgroup
# named by id or slot, saturation rules (set at add, changed in place with
# `rules`), partial and stale windows (checked
# against the stream read with bpftool), show of a gone or unwatched
# target, watch --json, watch across unload and reload, --replace of an
# engine it cannot read, and `make run PID=` ended with Ctrl-C.
#
# Run as root from the repository root:  bash tests/e2e/test_cli_edges.sh
# Needs: make all, bpftool, python3, util-linux (script), a cgroup v2 mount.
. "$(dirname "$0")/../lib.sh"

sf_begin test_cli_edges

ABI=$(sf_abi_version)

snapshot_now() { SNAP=$SF_TMP/snap.$1; sf_snapshot "$SNAP"; }
jget() { sf_json_get "$1" "$2"; }

# ONE_LINE NAME PREFIX: the last command's stderr is one line, with PREFIX
ONE_LINE() {
	ASSERT_EQ "$1: one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
	ASSERT_MATCH "$1: starts with '$2: '" "^$2: " "$ERR"
}

# BAD NAME STATUS MESSAGE_ERE CMD...: fails with STATUS, one line matching
# MESSAGE_ERE with the tool's prefix, nothing on stdout, bpffs as in $SNAP
BAD() {
	local name=$1 want=$2 msg=$3 tool
	shift 3
	tool=$(basename "$1")
	ASSERT_RC "$name" "$want" "$@"
	ASSERT_MSG "$name" "$msg"
	ONE_LINE "$name" "$tool"
	ASSERT_EQ "$name: nothing on stdout" "" "$OUT"
	ASSERT_BPFFS "$name" "$SNAP"
}

######################################################################
sf_log "--- not loaded ---"
snapshot_now unloaded
ABSENT=/sys/fs/bpf/sf-absent-$$
BAD "--bpffs after the command is taken (show)" 3 "not loaded.*$ABSENT" \
	"$CTL" show --bpffs "$ABSENT"
BAD "--bpffs after the command is taken (targets)" 3 "not loaded.*$ABSENT" \
	"$CTL" targets --json -b "$ABSENT"
BAD "an option before the command that belongs after it" 2 "--pid comes after the command" \
	"$CTL" --pid 1 show
BAD "satfeedctl: unknown option" 2 "unknown option '--bogus'" "$CTL" show --bogus
BAD "satfeedctl: an option without its value" 2 "--interval needs a value" \
	"$CTL" watch --interval
ASSERT_OK "satfeedctl --version" "$CTL" --version
ASSERT_MATCH "satfeedctl --version: version and ABI" "^satfeedctl [0-9][0-9.]* \(ABI $ABI, git [^)]+\)$" "$OUT"
ASSERT_OK "satfeedctl show --version" "$CTL" show --version
ASSERT_MATCH "satfeedctl show --version: the same" "^satfeedctl [0-9.]+ \(ABI $ABI," "$OUT"
ASSERT_OK "satfeed-loader --version" "$LOADER" --version
ASSERT_MATCH "satfeed-loader --version: version and ABI" "^satfeed-loader [0-9][0-9.]* \(ABI $ABI, git [^)]+\)$" "$OUT"
BAD "loader: unknown option" 2 "unknown option '--bogus'" "$LOADER" --bogus load
BAD "loader: unknown short option" 2 "unknown option '-x'" "$LOADER" -x load
BAD "loader: --window without its value" 2 "lacks its value" "$LOADER" load --window
BAD "loader: no command" 2 "command is required" "$LOADER"

# a pin root outside bpffs: told where a root belongs, never to mount one
mkdir -p "$SF_TMP/plain"
BAD "loader: pin root in a plain directory" 1 \
	"$SF_TMP/plain is not a bpffs: the pin root must be a directory in a bpffs, such as /sys/fs/bpf/satfeed" \
	"$LOADER" --bpffs "$SF_TMP/plain/satfeed" load
ASSERT_NOMATCH "loader: no advice to mount bpffs over a plain directory" "mount" "$ERR"
BAD "loader: pin root under a missing directory" 1 \
	"/nonexistent-$$ does not exist: the pin root must be a directory in a bpffs" \
	"$LOADER" --bpffs "/nonexistent-$$/satfeed" load
ASSERT_NOMATCH "loader: missing parent: no advice to mount" "mount" "$ERR"

# --attach fentry where the kernel refuses it points at tp_btf
if "$LOADER" --attach fentry load >"$SF_TMP/fentry.out" 2>"$SF_TMP/fentry.err"; then
	sf_log "fentry loads on this kernel: the refusal cannot be checked here"
	ASSERT_OK "unload the fentry engine" "$LOADER" unload
else
	ERR=$(cat "$SF_TMP/fentry.err") OUT=$(cat "$SF_TMP/fentry.out")
	ASSERT_MSG "--attach fentry refused" "--attach tp_btf .*satfeed-loader check"
	ONE_LINE "--attach fentry refused" satfeed-loader
	ASSERT_BPFFS "--attach fentry refused" "$SNAP"
fi

######################################################################
sf_log "--- loaded: bad input ---"
# the longest age bound (T = 4294 ms): the windows in progress below are
# read, closed at N and seen go stale (3 spans, 2 s) well within T/2 and
# T, before the engine's age timer closes them (aged) or publishes a quiet
# window (ABI 4; test_cli.sh and test_reading check those)
ASSERT_OK "load --max-age 4294" "$LOADER" --max-age 4294 load
snapshot_now loaded
BAD "unknown syscall: lists the family's names" 2 \
	"unknown syscall 'epoll'; the poll family is: epoll_wait,epoll_pwait,epoll_pwait2,select,pselect6,poll,ppoll,io_uring_wait$" \
	"$CTL" add --pid $$ --poll epoll
BAD "a syscall of another family: lists this family's names" 2 \
	"'read' is a recv-family syscall, not send; the send family is: sendto,sendmsg,sendmmsg,write,writev,sendfile,splice,io_uring_send,io_uring_send_zc,io_uring_sendmsg,io_uring_sendmsg_zc,io_uring_write,io_uring_writev$" \
	"$CTL" add --pid $$ --send read
BAD "remove with no target mentions --all" 2 "remove needs --pid PID, --cgroup DIR, --slot N or --all" \
	"$CTL" remove
BAD "show --pid of an unwatched pid: no table header" 6 "pid $$ is not watched" \
	"$CTL" show --pid $$
BAD "show --slot of a free slot" 6 "slot 5 holds no target" "$CTL" show --slot 5
BAD "--slot out of range" 2 "--slot takes a slot number, 0 to 63" "$CTL" remove --slot 64
BAD "--pid with a word that is not a pid" 2 "'12x' is not a process id" "$CTL" add --pid "1 12x"
BAD "--pid of what pidof printed when nothing runs" 2 "pidof printed nothing" "$CTL" add --pid ""
BAD "a kernel thread is refused" 2 "pid 2 is a kernel thread \(kthreadd\).*--force" \
	"$CTL" add --pid 2
BAD "--idle-near that is not a number" 2 "--idle-near takes permille from 0 \(the default\) to 100000" \
	"$CTL" add --pid $$ --idle-near 15%
BAD "--idle-full above --idle-near" 2 "--idle-full \(400\) must not be above --idle-near \(300\)" \
	"$CTL" add --pid $$ --idle-near 300 --idle-full 400
BAD "--raw on add" 2 "add does not take --raw" "$CTL" add --pid $$ --raw
BAD "--slot on add" 2 "add does not take --slot" "$CTL" add --slot 1
ASSERT_EQ "bad input added nothing" '{"targets":[]}' "$("$CTL" targets --json)"

ASSERT_OK "a kernel thread with --force" "$CTL" add --pid 2 --force
ASSERT_OK "remove it" "$CTL" remove --pid 2

CG2=$(sf_cgroup2_mount)
if [ -z "$CG2" ]; then
	sf_skip "root cgroup refused" "no cgroup v2 mount"
else
	BAD "the root cgroup is refused" 2 "refusing the root cgroup.*--force" \
		"$CTL" add --cgroup "$CG2"
fi

######################################################################
sf_log "--- several pids, children ---"
sleep 300 9>&- & S1=$!
sleep 300 9>&- & S2=$!
sleep 300 9>&- & S3=$!
sf_track $S1 $S2 $S3
ASSERT_OK "add --pid 'A B' (what pidof prints) and --pid C" \
	"$CTL" add --pid "$S1 $S2" --pid "$S3"
ASSERT_EQ "three watching lines" 3 "$(printf '%s\n' "$OUT" | grep -c '^watching pid ')"
ASSERT_EQ "all three watched" "$S1 $S2 $S3" \
	"$(jget "$("$CTL" targets --json)" '" ".join(str(t["pid"]) for t in j["targets"])')"
ASSERT_OK "show --pid of two of them" "$CTL" show --pid "$S1,$S3"
ASSERT_EQ "show --pid A,C: header and two lines" 3 "$(printf '%s\n' "$OUT" | wc -l)"
ASSERT_OK "remove --pid 'A B C'" "$CTL" remove --pid "$S1 $S2 $S3"
ASSERT_MATCH "remove: all three" "removed 3 targets" "$OUT"

# a process whose child does the I/O
sf_bg bash -c 'sleep 300 9>&- & wait'
PARENT=$BG_PID
CHILD=
for _ in $(seq 1 50); do
	CHILD=$(cat /proc/"$PARENT"/task/*/children 2>/dev/null)
	[ -n "$CHILD" ] && break
	sleep 0.05
done
ASSERT_OK "add a process with a child" "$CTL" add --pid "$PARENT"
ASSERT_MATCH "add: says the child's calls are not the pid's, suggests --cgroup" \
	"^satfeedctl: note: pid $PARENT has 1 child process \([0-9]+\): their system calls are not this pid's; .*--cgroup" "$ERR"
ASSERT_OK "show of a quiet parent" "$CTL" show --pid "$PARENT"
ASSERT_MATCH "show: the quiet parent's children are pointed at" \
	"^satfeedctl: note: pid $PARENT has made no traced call yet, but has 1 child process: .*--cgroup" "$ERR"
ASSERT_OK "remove the parent" "$CTL" remove --pid "$PARENT"
# the child first: killed after its parent it would live on (reparented)
# with this script's stdout, and tests/run.sh would wait out its sleep
# for the end of the suite's output
# shellcheck disable=SC2086
[ -n "$CHILD" ] && sf_kill $CHILD
sf_kill "$PARENT"

######################################################################
sf_log "--- a pid inside a watched cgroup, removed cgroups by id and slot ---"
if sf_cgroup_section "pid inside a watched cgroup" "sfedges-$$"; then
	CG=$CG_DIR
	sf_bg sleep 300
	IN=$BG_PID
	ASSERT_TRUE "move a process into the cgroup" sh -c "echo $IN > '$CG/cgroup.procs'"
	ASSERT_OK "add --cgroup" "$CTL" add --cgroup "$CG"
	CSLOT=$(jget "$("$CTL" targets --json)" '[t["slot"] for t in j["targets"] if "cgroup" in t][0]')
	ASSERT_OK "add --pid of a process inside it" "$CTL" add --pid "$IN"
	ASSERT_MATCH "add: warns the events go to the pid only" \
		"^satfeedctl: warning: pid $IN is inside cgroup /sfedges-$$, watched in slot $CSLOT: its events will count for pid $IN only, no longer for the cgroup \(the engine looks a process up before its cgroups\)" "$ERR"
	ASSERT_OK "remove both" "$CTL" remove --all
	ASSERT_OK "add --pid first" "$CTL" add --pid "$IN"
	ASSERT_OK "then --cgroup that holds it" "$CTL" add --cgroup "$CG"
	ASSERT_MATCH "add --cgroup: warns the pid keeps its events" \
		"^satfeedctl: warning: pid $IN, watched in slot [0-9]+, is inside cgroup /sfedges-$$: its events count for pid $IN only, not for the cgroup" "$ERR"
	ASSERT_OK "remove --all" "$CTL" remove --all
	sf_kill "$IN"

	# removed: by id
	ASSERT_OK "add the cgroup again" "$CTL" add --cgroup "$CG"
	ID=$(stat -c %i "$CG")
	ASSERT_TRUE "rmdir it" rmdir "$CG"
	SF_CGROUPS=()
	ASSERT_OK "show --cgroup ID of the removed cgroup" "$CTL" show --cgroup "$ID"
	ASSERT_MATCH "show: state gone, exit 0" "^cgroup /sfedges-$$ +gone " "$OUT"
	ASSERT_OK "remove --cgroup ID of the removed cgroup" "$CTL" remove --cgroup "$ID"
	ASSERT_MATCH "removed by id" "removed 1 target" "$OUT"
	# removed: by slot
	sf_cgroup_make "sfedges-$$" || sf_fail "mkdir again"
	ASSERT_OK "add it once more" "$CTL" add --cgroup "$CG"
	SLOT=$(printf '%s' "$OUT" | sed -n 's/.* in slot \([0-9]*\)$/\1/p')
	ASSERT_TRUE "rmdir it again" rmdir "$CG"
	SF_CGROUPS=()
	ASSERT_OK "remove --slot $SLOT" "$CTL" remove --slot "$SLOT"
	ASSERT_MATCH "removed by slot" "removed 1 target" "$OUT"
	ASSERT_EQ "nothing left" '{"targets":[]}' "$("$CTL" targets --json)"
fi

######################################################################
sf_log "--- rules, partial and stale windows ---"
sf_traffic_start || sf_fail "traffic helper started"
T=$TRAFFIC_PID
ASSERT_OK "add with rules" "$CTL" add --pid "$T" --send sendto --recv recvfrom \
	--idle-near 300 --idle-full 150 --cv2-rise 500
ASSERT_EQ "show --json: the rules" "300 150 500" \
	"$(jget "$("$CTL" show --json)" '"%d %d %d" % tuple(j["targets"][0]["rules"][k] for k in ("idle_near_permille", "idle_full_permille", "cv2_rise_permille"))')"
ASSERT_MATCH "the rules are in sf_rules (bpftool)" '"idle_near_permille": 300' \
	"$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_rules" key 0 0 0 0)"
ASSERT_TRUE "traffic: sendto 100" sf_traffic sendto 100
J=$("$CTL" show --json)
# 100 sends: 99 gaps in the window in progress, none closed
ASSERT_EQ "send: a partial window of 99 samples" "partial 99 0" \
	"$(jget "$J" '"%s %d %d" % (j["targets"][0]["send"]["figures"]["window"], j["targets"][0]["send"]["figures"]["samples"], j["targets"][0]["send"]["seq"])')"
# the same stream read with bpftool: slot 0, send (0) -> key 0 0 0 0
SLOT=$(jget "$J" 'j["targets"][0]["slot"]')
K=$((SLOT * 3))
S=$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_streams" key $((K & 255)) $((K >> 8 & 255)) 0 0 -j)
ASSERT_EQ "partial figures from the running sums (bpftool's acc_sum_ns, pending)" ok \
	"$(python3 - "$S" "$J" <<'EOF'
import json, sys
s = json.loads(sys.argv[1])["formatted"]["value"]
f = json.loads(sys.argv[2])["targets"][0]["send"]["figures"]
p, s1 = s["pending"], s["acc_sum_ns"]
s2 = s["acc_sumsq_hi"] << 64 | s["acc_sumsq_lo"]
want = {"samples": p, "mean_ns": s1 // p,
        "var_ns2": (p * s2 - s1 * s1) // (p * p),
        "cv2_permille": 1000 * (p * s2 - s1 * s1) // (s1 * s1),
        "rate": round((p * 10**12 // s1) / 1000, 3)}
got = {k: f[k] for k in want}
print("ok" if got == want and f["closes_in_ns"] and f["closes_in_ns"] > 0
      else "want %s, got %s (closes_in_ns %s)" % (want, got, f["closes_in_ns"]))
EOF
)"
ASSERT_OK "show: partial figures" "$CTL" show
# RPS counts responses: none on a socketpair (no accepted connection), so
# '-'; SEND/s is the send rate, partial
ASSERT_MATCH "show: CV2.R partial, RPS - (no response), SEND/s partial (~), NEXT estimated" \
	"^pid $T python3 .* [0-9.]+~ +- +[0-9.]+~ +~[0-9.]+[a-z]+$" "$OUT"
ASSERT_TRUE "traffic: sendto 1949 (the window closes)" sf_traffic sendto 1949
J=$("$CTL" show --json)
ASSERT_EQ "send: the closed window is shown" "closed 2048 1 0" \
	"$(jget "$J" '"%s %d %d %d" % (j["targets"][0]["send"]["figures"]["window"], j["targets"][0]["send"]["figures"]["samples"], j["targets"][0]["send"]["seq"], j["targets"][0]["send"]["pending"])')"
# stale once more than 3 of its spans (and 2 s) have passed since it closed
sleep "$(jget "$J" '"%.2f" % (max(3 * (lambda w: w["end_ns"] - w["start_ns"])(j["targets"][0]["send"]["windows"][-1]) / 1e9, 2) + 0.3)')"
J=$("$CTL" show --json)
ASSERT_EQ "send: over 3 spans and 2 s later the window is stale" stale \
	"$(jget "$J" 'j["targets"][0]["send"]["figures"]["window"]')"
ASSERT_OK "show: stale figures" "$CTL" show
ASSERT_MATCH "show: the rate is marked stale (!)" "^pid $T python3 .* [0-9.]+! " "$OUT"
ASSERT_TRUE "traffic: sendto 5" sf_traffic sendto 5
# the first of them is a gap of over 2 s, so the window they open began
# that long ago: the age tick (every max_age / 2 = 0.5 s) closes it as an
# aged window of 5 at its next run, which may come before this show does.
# Either way the figures are the 5 new samples, never the stale window.
ASSERT_EQ "send: new samples after a stale window are shown (partial, or closed by the tick as aged)" "5 ok" \
	"$(jget "$("$CTL" show --json)" '(lambda s: "%d %s" % (s["figures"]["samples"], "ok" if s["figures"]["window"] == "partial" or (s["figures"]["window"] == "closed" and s["windows"][-1]["flags"] == 1 and s["windows"][-1]["samples"] == 5 and s["seq"] == 2) else "window %s, newest %s" % (s["figures"]["window"], s["windows"][-1])))(j["targets"][0]["send"])')"

######################################################################
sf_log "--- rules changed in place: the engine judges by them ---"
# the same helper, watched with its poll waits too, judged by waits per
# send alone (the tick's idle and service-time rules off for it): 100 waits
# per 2048 sends is wps 48
ASSERT_OK "remove the helper" "$CTL" remove --pid "$T"
ASSERT_OK "add it with every syscall" "$CTL" add --pid "$T"
SLOT=$(jget "$("$CTL" show --json --pid "$T")" 'j["targets"][0]["slot"]')
verdict() {
	jget "$("$CTL" show --json --pid "$T")" '"%s %d" % (lambda v: (v["state"], v.get("wps_avg_permille", -1)))(j["targets"][0]["saturation"])'
}
# the verdict reads WANT within 2 T (T = 4294 ms): the timer's tick
# evaluates the rules too
verdict_within() {
	local i
	for i in $(seq 90); do
		[ "$(verdict)" = "$1" ] && return 0
		sleep 0.1
	done
	verdict
	return 1
}
# WAITS SENDS: the waits, then one send window (the first send has no gap)
send_window() {
	sf_traffic poll "$1" && sf_traffic sendto "$2"
}
ASSERT_OK "rules: show" "$CTL" rules --pid "$T"
ASSERT_EQ "rules: the defaults, named" \
	"slot $SLOT pid $T: wps-near off (default), wps-full off (default), idle-near 150 (default), idle-full 50 (default), cv2-rise off (default), svc-near 4000 (default), svc-full 6000 (default), drop-near 10 (default), drop-full 50 (default), cpu-near off (default), cpu-full 970 (default), unread-near 16384 (default), unread-full 32768 (default)" "$OUT"
snapshot_now rules
BAD "rules: full above near is refused" 2 "saturated waits per send \(200 permille\) is above the near one \(150" \
	"$CTL" rules --pid "$T" --wps-near 150 --wps-full 200
BAD "rules: service full below near is refused" 2 "saturated service time \(4000 permille of its baseline\) is below the near one \(5000" \
	"$CTL" rules --pid "$T" --svc-near 5000 --svc-full 4000
BAD "rules: drop full below near is refused" 2 "saturated drop share \(20 permille\) is below the near one \(30" \
	"$CTL" rules --pid "$T" --drop-near 30 --drop-full 20
BAD "rules: CPU full below near is refused" 2 "saturated CPU share \(900 permille\) is below the near one \(950" \
	"$CTL" rules --pid "$T" --cpu-near 950 --cpu-full 900
BAD "rules: unread full below near is refused" 2 "saturated unread bytes \(4096 bytes\) is below the near one \(8192 bytes" \
	"$CTL" rules --pid "$T" --unread-near 8192 --unread-full 4096
BAD "rules: unread bytes above 2^30 are refused" 2 "--unread-full takes bytes from 0 \(the default\) to 1073741824" \
	"$CTL" rules --pid "$T" --unread-full 1073741825
BAD "rules: a drop share above 1000 is refused" 2 "--drop-near takes permille from 0 \(the default\) to 1000" \
	"$CTL" rules --pid "$T" --drop-near 1001
BAD "rules: an unwatched pid" 6 "pid 1 is not watched" "$CTL" rules --pid 1 --wps-near 5
BAD "rules: a bad value" 2 "--wps-near takes permille from 0 \(the default\) to 1000" \
	"$CTL" rules --pid "$T" --wps-near 12x
BAD "rules: no target" 2 "rules needs --pid PID, --cgroup DIR, --slot N or --all" \
	"$CTL" rules --wps-near 5
BAD "rules: not a family option" 2 "--send only applies to add" \
	"$CTL" rules --pid "$T" --send sendto
ASSERT_OK "rules: waits per send 150/30, the tick's rules off" \
	"$CTL" rules --pid "$T" --wps-near 150 --wps-full 30 --idle-near off \
	--idle-full off --svc-near off --svc-full off --drop-near off --drop-full off \
	--cpu-full off --unread-near off --unread-full off
ASSERT_TRUE "traffic: 100 waits, a send window" send_window 100 2049
ASSERT_EQ "wps 48 is near under 150/30" "near 48" "$(verdict)"
ASSERT_OK "rules: --wps-near 40 --wps-full 20" "$CTL" rules --pid "$T" --wps-near 40 --wps-full 20
ASSERT_EQ "rules: says what is stored" \
	"slot $SLOT pid $T: wps-near 40, wps-full 20, idle-near off, idle-full off, cv2-rise off (default), svc-near off, svc-full off, drop-near off, drop-full off, cpu-near off (default), cpu-full off, unread-near off, unread-full off" "$OUT"
ASSERT_MATCH "rules: in sf_rules (bpftool)" '"wps_near_permille": 40' \
	"$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_rules" key "$SLOT" 0 0 0)"
ASSERT_TRUE "rules changed: the next tick judges by them: wps 48 is ok under near 40" \
	verdict_within "ok 48"
ASSERT_TRUE "traffic: 100 waits, a send window" send_window 100 2048
ASSERT_EQ "the next window too" "ok 48" "$(verdict)"
ASSERT_OK "rules --slot: the others keep theirs" "$CTL" rules --slot "$SLOT" --wps-near 0 --wps-full 60
ASSERT_EQ "rules --slot: near back to its default (off), full 60" \
	"slot $SLOT pid $T: wps-near off (default), wps-full 60, idle-near off, idle-full off, cv2-rise off (default), svc-near off, svc-full off, drop-near off, drop-full off, cpu-near off (default), cpu-full off, unread-near off, unread-full off" "$OUT"
ASSERT_TRUE "traffic: 100 waits, a send window" send_window 100 2048
ASSERT_EQ "wps 48 is full under full 60" "full 48" "$(verdict)"
ASSERT_OK "rules --all: every rule off" "$CTL" rules --all --wps-near off --wps-full off
ASSERT_TRUE "traffic: 100 waits, a send window" send_window 100 2048
ASSERT_EQ "no rule on: ok" "ok 48" "$(verdict)"
# the rules it was added with, which --replace must carry (below)
ASSERT_OK "rules: wps defaults, the idle and cv2 rules of the add" \
	"$CTL" rules --all --wps-near 0 --wps-full 0 --idle-near 300 --idle-full 150 --cv2-rise 500
ASSERT_EQ "rules: all thirteen stored" \
	"slot $SLOT pid $T: wps-near off (default), wps-full off (default), idle-near 300, idle-full 150, cv2-rise 500, svc-near off, svc-full off, drop-near off, drop-full off, cpu-near off (default), cpu-full off, unread-near off, unread-full off" "$OUT"
ASSERT_OK "check: consistent after the changes" "$CTL" check

######################################################################
sf_log "--- watch --json, watch across unload and reload ---"
ASSERT_OK "watch --json --count 2" "$CTL" watch --json --count 2 --interval 0.1
ASSERT_EQ "watch --json: two lines, each one JSON object with its time" "2 ok" \
	"$(printf '%s\n' "$OUT" | python3 -c '
import json, sys, time
lines = sys.stdin.read().splitlines()
ok = all(abs(json.loads(l)["time_ns"] / 1e9 - time.time()) < 60 and
         len(json.loads(l)["targets"]) == 1 for l in lines)
print(len(lines), "ok" if ok else lines)')"

W=$SF_TMP/watch.out
"$CTL" watch --interval 0.2 --count 40 >"$W" 2>"$SF_TMP/watch.err" &
WP=$!
sf_track "$WP"
frames() { grep -c "$1" "$W"; }
wait_for() { local _; for _ in $(seq 1 50); do [ "$(frames "$1")" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }
ASSERT_TRUE "watch: first frame" wait_for '^satfeed ' 1
ASSERT_OK "load --replace under the watch" "$LOADER" --replace load
ASSERT_MATCH "replace carried the target" "carried 1 target over, dropped 0" "$OUT"
ASSERT_TRUE "watch: notices the reload" wait_for 'the engine was reloaded: following the new load' 1
ASSERT_EQ "replace: the rules came along" "300 150 500" \
	"$(jget "$("$CTL" show --json)" '"%d %d %d" % tuple(j["targets"][0]["rules"][k] for k in ("idle_near_permille", "idle_full_permille", "cv2_rise_permille"))')"
ASSERT_OK "unload under the watch" "$LOADER" unload
ASSERT_TRUE "watch: says the engine is gone and waits" wait_for '^satfeed is not loaded at' 1
ASSERT_OK "load again" "$LOADER" load
N=$(frames '^satfeed tp_btf\|^satfeed fentry')
ASSERT_TRUE "watch: follows the new load" wait_for '^satfeed tp_btf\|^satfeed fentry' $((N + 1))
wait "$WP"
ASSERT_EQ "watch: exit 0 through it all" 0 "$?"
ASSERT_EQ "watch: nothing on stderr" "" "$(cat "$SF_TMP/watch.err")"
ASSERT_MATCH "watch: the new load has no targets" "no targets: satfeedctl add" "$(tail -3 "$W")"

######################################################################
sf_log "--- --replace of an engine whose targets cannot be read ---"
ASSERT_OK "add the traffic helper" "$CTL" add --pid "$T"
ASSERT_TRUE "make the pinned engine speak ABI 99" sf_abi_break
ASSERT_OK "load --replace over it" "$LOADER" --replace load
ASSERT_MATCH "replace: says the target was dropped and how to add it again" \
	"cannot be read \(ABI mismatch.*\): 1 target dropped; add it again with satfeedctl add" "$ERR"
ASSERT_MATCH "replace: counts it dropped" "carried 0 targets over, dropped 1" "$OUT"
ASSERT_EQ "the new engine watches nothing" '{"targets":[]}' "$("$CTL" targets --json)"
sf_traffic_stop
ASSERT_OK "unload" "$LOADER" unload

######################################################################
sf_log "--- make run PID= ended with Ctrl-C ---"
if ! command -v script >/dev/null; then
	sf_skip "make run PID= and Ctrl-C" "no script(1) (bsdutils)"
else
	sf_bg sleep 300
	P=$BG_PID
	# a terminal (script) that types Ctrl-C once the watch has drawn
	( for _ in $(seq 1 100); do
		grep -q 'Ctrl-C ends' "$SF_TMP/run.tty" 2>/dev/null && break
		sleep 0.1
	  done; printf '\003' ) |
		script -qefc "make --no-print-directory -C '$SF_REPO' run PID=$P; echo make-exit=\$?" \
			"$SF_TMP/run.tty" >/dev/null 2>&1
	RUN=$(tr -d '\r' <"$SF_TMP/run.tty" | sed 's/\x1b\[[0-9;]*[HJ]//g')
	ASSERT_MATCH "make run: the hint is in the view" "^satfeed [a-z_]+, window 2048 samples, .*; Ctrl-C ends$" "$RUN"
	ASSERT_MATCH "make run: Ctrl-C ends it with exit 0" "make-exit=0" "$RUN"
	ASSERT_NOMATCH "make run: no make error" "make: \*\*\*|Interrupt|Error" "$RUN"
	ASSERT_MATCH "make run: says what happened" "stopped watching pid $P; satfeed is unloaded" "$RUN"
	ASSERT_OK "make run: the engine is unloaded" test ! -e "$SF_PIN_ROOT"
	sf_kill "$P"
fi

######################################################################
# Issue 20, items 6-10: help, the errors a new user hits.  Every claim of
# /work/notes/safety-docs.md (help, errors, locking) is checked here or in
# test_hardening.sh against the tools themselves.
sf_log "--- every command's --help and -h: its usage, exit 0, nothing done ---"
HROOT=/sys/fs/bpf/sf-help-$$
snapshot_now help
for cmd in load unload check; do
	for h in --help -h; do
		ASSERT_OK "loader $cmd $h" "$LOADER" --bpffs "$HROOT" "$cmd" "$h"
		ASSERT_MATCH "loader $cmd $h: its usage" "^Usage: satfeed-loader .*$cmd$" "$OUT"
		ASSERT_MATCH "loader $cmd $h: its options and exit status" "OPTIONS.*EXIT STATUS" "$(echo $OUT)"
		ASSERT_EQ "loader $cmd $h: nothing on stderr" "" "$ERR"
		ASSERT_BPFFS "loader $cmd $h: nothing loaded or unloaded" "$SNAP"
	done
done
for h in --help -h; do
	ASSERT_OK "loader $h" "$LOADER" "$h"
	ASSERT_MATCH "loader $h: every command" "COMMANDS.*load.*unload.*check.*LOCKING" "$(echo $OUT)"
done
ASSERT_OK "loader: --help after the options of a load" "$LOADER" --bpffs "$HROOT" --window 4096 load --replace --help
ASSERT_BPFFS "loader: load --replace --help loads nothing" "$SNAP"
for cmd in add discover remove targets rules show watch export check; do
	for h in --help -h; do
		ASSERT_OK "satfeedctl $cmd $h" "$CTL" --bpffs "$HROOT" "$cmd" "$h"
		ASSERT_MATCH "satfeedctl $cmd $h: its usage" "^Usage: satfeedctl \[--bpffs DIR\] $cmd " "$OUT"
		ASSERT_MATCH "satfeedctl $cmd $h: its entry" "^  $cmd( |$)" "$(printf '%s\n' "$OUT" | sed -n '3p')"
		ASSERT_EQ "satfeedctl $cmd $h: nothing on stderr" "" "$ERR"
	done
done
ASSERT_OK "satfeedctl add --help with a bad pid does nothing" "$CTL" add --pid 999999999 --help
ASSERT_BPFFS "satfeedctl: help touched nothing" "$SNAP"

sf_log "--- not root: 'needs root (CAP_BPF and CAP_SYS_ADMIN)' ---"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
for cmd in show "add --pid 1" check targets "rules --all" "remove --all"; do
	# shellcheck disable=SC2086
	ASSERT_RC "non-root satfeedctl $cmd" 4 "${NOBODY[@]}" "$CTL" $cmd
	ASSERT_MSG "non-root satfeedctl $cmd" "needs root \(CAP_BPF and CAP_SYS_ADMIN\)"
	ASSERT_NOMATCH "non-root satfeedctl $cmd: no bare EACCES" "cannot lock" "$ERR"
done
for cmd in load unload; do
	ASSERT_RC "non-root loader $cmd" 4 "${NOBODY[@]}" "$LOADER" --bpffs "$HROOT" "$cmd"
	ASSERT_MSG "non-root loader $cmd" "needs root \(CAP_BPF and CAP_SYS_ADMIN\)"
done
ASSERT_RC "non-root loader check" 4 "${NOBODY[@]}" "$LOADER" check
ASSERT_NOMATCH "non-root loader check: never says 'pinned: no' it cannot know" "pinned at .*: no$" "$OUT"
ASSERT_MATCH "non-root loader check: says it needs root" "pinned at .*: unknown.*needs root" "$OUT"
ASSERT_BPFFS "non-root: nothing touched" "$SNAP"

sf_log "--- not loaded: the exact command, with --bpffs; watch waits ---"
BAD "show of a root that is not loaded: the load line with its --bpffs" 3 \
	"run 'satfeed-loader --bpffs $HROOT load'" "$CTL" --bpffs "$HROOT" show
BAD "check of a root that is not loaded: the load line" 3 \
	"run 'satfeed-loader --bpffs $HROOT load'" "$CTL" --bpffs "$HROOT" check
ASSERT_OK "watch of an unloaded root waits (as documented)" \
	timeout 10 "$CTL" --bpffs "$HROOT" watch --count 2 --interval 0.1
ASSERT_EQ "watch: says so each refresh, with the load line" 2 \
	"$(printf '%s\n' "$OUT" | grep -c "satfeed is not loaded at $HROOT .*waiting for 'satfeed-loader --bpffs $HROOT load'")"
ASSERT_OK "watch --json of an unloaded root waits" \
	timeout 10 "$CTL" --bpffs "$HROOT" watch --json --count 1 --interval 0.1
ASSERT_MATCH "watch --json: loaded false" '"loaded":false' "$OUT"

sf_log "--- cgroup v2 mounted elsewhere (a hybrid host) ---"
CGM=$SF_TMP/unified
mkdir -p "$CGM" "$SF_TMP/notcg"
# a private mount namespace: every cgroup2 mount hidden, one at $CGM
HYB=$(unshare -m --propagation private bash -c '
	awk '\''$3 == "cgroup2" { print $2 }'\'' /proc/self/mounts | sort -r |
		while read -r m; do umount -l "$m"; done
	mount -t cgroup2 none "$1" || exit 9
	"$2" add --cgroup "$3" 2>&1; echo "rc=$?"
	"$2" add --cgroup "$3/absent" 2>&1; echo "rc=$?"' _ "$CGM" "$CTL" "$SF_TMP/notcg")
ASSERT_MATCH "hybrid: a directory outside cgroup v2 is refused with where it is" \
	"notcg is not a cgroup v2 directory; cgroup v2 is mounted at $CGM: the directory must be under it" "$HYB"
ASSERT_MATCH "hybrid: a missing directory says where cgroup v2 is" \
	"absent: No such file or directory; cgroup v2 is mounted at $CGM" "$HYB"
ASSERT_EQ "hybrid: both refused" "rc=2 rc=6" "$(printf '%s\n' "$HYB" | grep '^rc=' | tr '\n' ' ' | sed 's/ $//')"

sf_log "--- rules out of range; the verifier log -v promises ---"
for r in "--wps-near 5000" "--wps-full 1001" "--idle-near 100001" "--cv2-rise 200000" "--svc-near 1000001" "--cpu-full 1001"; do
	# shellcheck disable=SC2086
	BAD "rules $r is out of range" 2 "takes permille from 0 \(the default\) to [0-9]+" \
		"$CTL" --bpffs "$HROOT" rules --all $r
	# shellcheck disable=SC2086
	BAD "add $r is out of range" 2 "takes permille from 0 \(the default\) to [0-9]+" \
		"$CTL" --bpffs "$HROOT" add --pid $$ $r
done
ASSERT_RC "loader check" 0 "$LOADER" check
if printf '%s\n' "$OUT" | grep -q -- "-v shows the verifier"; then
	ASSERT_RC "loader check -v" 0 "$LOADER" -v check
	ASSERT_MATCH "check: the verifier log that check promised is shown by -v" \
		"BEGIN PROG LOAD LOG|processed [0-9]+ insns" "$ERR"
else
	ASSERT_NOMATCH "check: no promise of a verifier log for a policy refusal" \
		"verifier" "$(printf '%s\n' "$OUT" | grep 'Operation not permitted')"
	ASSERT_MATCH "check: a refused mode says why (or every mode works)" \
		"its policy: no program was verified|^fentry +available" "$OUT"
fi

sf_finish
