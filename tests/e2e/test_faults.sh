#!/usr/bin/env bash
# tests/e2e/test_faults.sh - satfeed's control plane under faults and races:
# kill -9 of satfeedctl add/remove and of satfeed-loader load, load
# --replace and unload, at random points and before each of their bpf(),
# mkdir, rename and unlink calls in turn (strace fault injection); two loads
# at once; load --replace carrying the targets over; adds of zombies and of
# processes exiting meanwhile, and a new process reusing such a pid;
# `targets` read slowly under add/remove churn; conflicting selectors;
# `rules` racing its target's exit, whose pid a new process then takes.
# After each fault the maps are read with bpftool (pin_state.py): nothing
# visible may be wrong right away, `satfeedctl check` must see exactly what
# is left over, and after the next command nothing at all may be.
#
# Run as root from the repository root:  bash tests/e2e/test_faults.sh
# Needs: make all, bpftool, python3, strace, util-linux (unshare).
# SF_FAULTS_LONG=1 runs the long campaign (every bpf() call of a replace,
# more iterations: about 15 minutes) instead of the ~2 minute one.
# SF_FAULTS_SEED=N repeats a run's random choices.
#
# The whole test runs in a private mount namespace on a private bpffs
# (mode 0700): /sys/fs/bpf is not touched.
if [ "$(id -u)" = 0 ] && [ -z "${SF_FAULTS_NS:-}" ]; then
	SF_FAULTS_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"

sf_begin test_faults

LONG=${SF_FAULTS_LONG:-0}
# iterations: quick or long
iters() { if [ "$LONG" = 1 ]; then echo "$2"; else echo "$1"; fi; }

if ! command -v strace >/dev/null; then
	sf_fail "strace present" "tools/install-deps.sh test installs it"
	sf_finish
fi
MNT=$SF_TMP/bpf
mkdir "$MNT"
if ! mount -t bpf -o mode=0700 bpf "$MNT"; then
	sf_fail "mount a private bpffs at $MNT"
	sf_finish
fi
ROOT=$MNT/satfeed
SWAP=$MNT/satfeed~swap
L() { "$LOADER" --bpffs "$ROOT" "$@"; }
C() { "$CTL" --bpffs "$ROOT" "$@"; }
sf_cleanup_faults() { L unload >/dev/null 2>&1; umount "$MNT" 2>/dev/null; }

# faults NAME SCENARIO N [KEY>=MIN...]: run one scenario of faults.py; no
# fault may be found, and each counter KEY must reach MIN (so that the
# scenario did what it is for).
faults() {
	local name=$1 scenario=$2 n=$3 kv key min got summary
	shift 3
	SF_LAST_CMD="faults.py $scenario $n"
	sf_run env CTL="$CTL" LOADER="$LOADER" python3 tests/e2e/faults.py \
		"$ROOT" "$scenario" "$n"
	summary=$(grep '^summary' <<<"$OUT")
	sf_log "$scenario: ${summary#summary }"
	if [ -n "$summary" ] && [ "$RC" = 0 ] &&
		! grep -q '^bad:' <<<"$OUT"; then
		sf_pass "$name: no fault found"
	else
		sf_fail "$name: no fault found" "$(grep -v '^#' <<<"$OUT" | head -30)" \
			"$(_sf_show_io | tail -5)"
	fi
	for kv in "$@"; do
		key=${kv%%>=*} min=${kv#*>=}
		got=$(grep -o "\b$key=[0-9]*" <<<"$summary" | cut -d= -f2)
		if [ "${got:-0}" -ge "$min" ]; then
			sf_pass "$name: $key $got >= $min"
		else
			sf_fail "$name: $key >= $min" "summary: $summary"
		fi
	done
}

# the active targets as "id:syscalls" lines, sorted
targets() {
	C targets --json | python3 "$SF_REPO/tests/e2e/active_targets.py" | sort
}

######################################################################
sf_log "--- conflicting selectors ---"
ASSERT_OK "load" L load
sf_bg sleep 100000
P1=$BG_PID
ASSERT_OK "add pid" C add --pid "$P1"
ASSERT_RC "remove --pid X --all" 2 C remove --pid "$P1" --all
ASSERT_MSG "remove --pid X --all" "give --pid, --cgroup, --slot or --all, not more than one"
ASSERT_RC "remove --all --pid X" 2 C remove --all --pid "$P1"
ASSERT_RC "add --pid X --all" 2 C add --pid "$P1" --all
ASSERT_MSG "add --pid X --all" "--all only applies to remove"
ASSERT_RC "targets --repair" 2 C targets --repair
ASSERT_EQ "conflicting selectors removed nothing" 1 \
	"$(targets | grep -c "^$P1:")"
ASSERT_OK "check a consistent root" C check
ASSERT_MATCH "check a consistent root: says so" "^$ROOT: consistent$" "$OUT"

######################################################################
sf_log "--- a zombie is never watched ---"
# the exec'd sleep never reaps its child: /bin/true stays a zombie
sf_bg bash -c '/bin/true & exec sleep 100000'
for _ in $(seq 1 50); do
	Z=$(pgrep -P "$BG_PID")
	[ -n "$Z" ] && [ "$(awk '{ print $3 }' "/proc/$Z/stat" 2>/dev/null)" = Z ] && break
	sleep 0.05
done
ASSERT_EQ "a zombie to add" Z "$(awk '{ print $3 }' "/proc/$Z/stat" 2>/dev/null)"
ASSERT_RC "add a zombie" 6 C add --pid "$Z"
ASSERT_MSG "add a zombie" "process $Z has exited"
ASSERT_NOMATCH "the zombie is not listed" "^$Z:" "$(targets)"
sf_kill "$BG_PID"

faults "add racing the process's exit, and zombies" race "$(iters 40 400)" \
	refused\>=20

######################################################################
sf_log "--- load --replace carries the targets over ---"
C remove --all >/dev/null
sf_bg sleep 100000
P2=$BG_PID
sf_bg sleep 100000
P3=$BG_PID
ASSERT_OK "add with --send" C add --pid "$P1" --send sendto --recv recvfrom
ASSERT_OK "add with --poll" C add --pid "$P2" --poll epoll_wait,poll
ASSERT_OK "add one to exit" C add --pid "$P3"
sf_kill "$P3"
BEFORE=$(targets)
PROGS_BEFORE=$(bpftool prog show pinned "$ROOT/progs/sf_proc_exit" -j | sf_json_fields id)
ASSERT_OK "load --replace" L --replace load
ASSERT_MATCH "load --replace: says what it carried" \
	"carried 2 targets over, dropped 1" "$OUT"
ASSERT_EQ "load --replace: the same targets with the same syscalls" \
	"$BEFORE" "$(targets)"
ASSERT_NE "load --replace: a new engine" "$PROGS_BEFORE" \
	"$(bpftool prog show pinned "$ROOT/progs/sf_proc_exit" -j | sf_json_fields id)"
ASSERT_OK "load --replace: consistent" C check
ASSERT_EQ "load --replace: no swap directory left" "" "$(ls -d "$SWAP" 2>/dev/null)"
ASSERT_RC "a replace that fails" 1 L --replace --btf /nonexistent load
ASSERT_EQ "a replace that fails: the old engine and its targets stay" \
	"$BEFORE" "$(targets)"
ASSERT_OK "a replace that fails: consistent" C check
ASSERT_OK "unload" L unload
ASSERT_RC "check after unload: not loaded" 3 C check

######################################################################
sf_log "--- kill -9 at random points and before each call ---"
ASSERT_OK "load" L load
faults "kill -9 of satfeedctl add/remove at random" kill-ctl \
	"$(iters 80 1000)" killed\>=40
export SF_FAULTS_CTL_STRIDE
SF_FAULTS_CTL_STRIDE=$(iters 2 1)
faults "kill -9 of satfeedctl add/remove before each bpf() call" walk-ctl 0 \
	killed\>=100 leftover\>=1
faults "targets under add/remove churn" churn "$(iters 20 300)" \
	reads\>=20 moves\>=10
ASSERT_OK "unload" L unload
faults "two loads at once" concurrent "$(iters 4 30)" rounds\>=4
faults "kill -9 of satfeed-loader load at random" kill-load "$(iters 10 100)" \
	killed\>=3
export SF_FAULTS_STRIDE
SF_FAULTS_STRIDE=$(iters 80 1)
faults "kill -9 of load --replace and unload before each call" walk-load 0 \
	killed\>=10

######################################################################
# Issue 20, item 2: `rules` racing the exit of its target.  The rules
# command's last write is delayed (strace) while the target's process is
# killed; then a new process takes its pid (ns_last_pid) and sends.  The
# target must stay gone, count none of the new process's sends, and check
# must find nothing wrong.
sf_log "--- rules racing a target's exit, and a reused pid ---"
ASSERT_OK "load for the rules race" L load
sf_bg sleep 100000
P=$BG_PID
ASSERT_OK "add the target of the race" C add --pid "$P"
SLOT=$(C targets --json | python3 -c 'import json,sys; print([t["slot"] for t in json.load(sys.stdin)["targets"] if t.get("pid") == int(sys.argv[1])][0])' "$P")
# how many bpf() calls one rules change makes: its write is the last but
# one (rules reads the slot back to print it)
NB=$(strace -f -qq -e trace=bpf -o "$SF_TMP/rules.strace" \
	"$CTL" --bpffs "$ROOT" rules --pid "$P" --wps-near 200 >/dev/null 2>&1;
     grep -c 'bpf(' "$SF_TMP/rules.strace")
sf_log "rules makes $NB bpf() calls; the one before the last is held 3 s"
strace -f -qq -o /dev/null -e trace=bpf \
	-e inject=bpf:delay_enter=3000000:when=$((NB - 1)) \
	"$CTL" --bpffs "$ROOT" rules --pid "$P" --wps-near 300 \
	>"$SF_TMP/rules.out" 2>&1 9>&- &
RP=$!
sleep 1.5
sf_kill "$P"
wait "$RP"
ASSERT_EQ "the delayed rules change finished" 0 "$?"
ASSERT_EQ "after the race: the target is gone" "1 yes" \
	"$(bpftool map dump -j pinned "$ROOT/sf_targets" | python3 tests/e2e/target_gone.py pid "$P")"
sf_run python3 tests/e2e/pid_reuse.py "$P" 1000
if [ "$OUT" = "reused $P" ]; then
	SENT=$(C show --json --slot "$SLOT" | python3 -c '
import json, sys
t = json.load(sys.stdin)["targets"][0]
print(t["send"]["calls"])')
	ASSERT_EQ "the reused pid's 1000 sends are not the gone target's" 0 "$SENT"
	ASSERT_OK "check after the race" C check
	ASSERT_NOMATCH "check after the race: no 'killed add or remove'" \
		"killed add or remove" "$OUT"
else
	sf_fail "a new process got pid $P again" "$OUT $ERR"
fi
ASSERT_MATCH "rules printed the rules it set" "wps-near 300" "$(cat "$SF_TMP/rules.out")"
ASSERT_OK "unload after the rules race" L unload

ASSERT_EQ "nothing left in the private bpffs" "maps.debug progs.debug" \
	"$(ls "$MNT" | tr '\n' ' ' | sed 's/ $//')"
sf_cleanup_faults
sf_finish
