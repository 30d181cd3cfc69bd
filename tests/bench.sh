#!/usr/bin/env bash
# bench.sh - satfeed's overhead benchmark; `make bench` runs it.
#
#   bash tests/bench.sh            full run (7 rounds, about two minutes)
#   bash tests/bench.sh --quick    short setting (< 60 s): `make test` runs it
#                                  to check that every measurement is made and
#                                  the output is well formed
#   bash tests/bench.sh -- ARGS    extra sfbench options (sfbench --help)
#
# It runs build/sfbench (tests/sfbench.c), which interleaves no tracing, empty
# programs on the same hooks and satfeed (64 targets), and prints a plain-text
# table at the end.  Figures are printed, never asserted: the exit status is
# non-zero only when a measurement is missing or not a finite number, or when
# something was left behind.
#
# Cleanup on every path: sfbench undoes its own setup (a private satfeed load
# under /sys/fs/bpf/sfbench-<pid>, empty programs, worker processes, the BPF
# statistics switch); this script checks afterwards, unloads anything left
# under its pin root, restores kernel.bpf_stats_enabled, and unmounts bpffs
# if it had to mount it.  Files: $OUTPUT/bench/{table.txt,results.txt,rounds.txt,log.txt}.
set -uo pipefail
cd "$(dirname "$0")/.."
# one satfeed test at a time on this machine (tests/lib.sh takes the same lock)
exec 9>"${SF_LOCK:-/run/lock/satfeed-tests.lock}"
flock -w 900 9 || { echo "${0##*/}: another satfeed test held the lock for 15 minutes" >&2; exit 1; }

B=${OUTPUT:-build}
OUT=$B/bench
quick=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; args+=(--quick) ;;
	--) shift; args+=("$@"); break ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench.sh: unknown argument '$1' (--quick, -- SFBENCH-ARGS)" >&2; exit 2 ;;
	esac
	shift
done

fail() { echo "bench.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (BPF programs, satfeed-loader)"
for f in "$B/sfbench" "$B/satfeed-loader" "$B/satfeedctl"; do
	[ -x "$f" ] || fail "$f is missing (make all $B/sfbench)"
done
mkdir -p "$OUT" || fail "cannot create $OUT"

BPFFS=/sys/fs/bpf
ROOT=$BPFFS/sfbench-$$
mounted=0
if ! mountpoint -q "$BPFFS"; then
	mount -t bpf -o mode=0700 bpf "$BPFFS" || fail "cannot mount bpffs at $BPFFS"
	mounted=1
fi
bpffs_before=$(ls -A "$BPFFS")
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
bench_pid=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
		kill -TERM "$bench_pid" 2>/dev/null	# sfbench cleans up on TERM
		wait "$bench_pid" 2>/dev/null
	fi
	if [ -e "$ROOT" ]; then
		echo "bench.sh: $ROOT was left behind; unloading it" >&2
		"$B/satfeed-loader" --bpffs "$ROOT" unload >/dev/null
		rc=1
	fi
	if [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)" != "$stats_before" ]; then
		# sfbench holds the statistics through a file descriptor, which
		# the kernel releases when it exits; this is a second guard
		sysctl -q -w kernel.bpf_stats_enabled="$stats_before" || true
	fi
	if [ "$(ls -A "$BPFFS")" != "$bpffs_before" ]; then
		echo "bench.sh: note: $BPFFS changed during the run (another user of bpffs?)" >&2
	fi
	if [ "$mounted" = 1 ] && [ -z "$(ls -A "$BPFFS" | grep -v -e '^maps.debug$' -e '^progs.debug$')" ]; then
		umount "$BPFFS" || true
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

start=$(date +%s)
# sfbench pins its measuring workers to one CPU itself (sched_setaffinity,
# what taskset does) and keeps its orchestrating process on another.
"$B/sfbench" --bpffs "$ROOT" --loader "$B/satfeed-loader" --ctl "$B/satfeedctl" \
	--results "$OUT/results.txt" --raw "$OUT/rounds.txt" "${args[@]}" \
	>"$OUT/table.txt" 2> >(tee "$OUT/log.txt" >&2) &
bench_pid=$!
wait "$bench_pid"
status=$?
bench_pid=
wait	# the tee of the log
secs=$(( $(date +%s) - start ))

cat "$OUT/table.txt"
echo "(${secs} s; table in $OUT/table.txt, figures in $OUT/results.txt)"
[ "$status" -eq 0 ] || fail "sfbench failed (exit $status)"

# Well-formed output: every expected figure present once, a finite number.
# ratio.* lines are derived and may be undefined on a noisy machine.
expected=()
for ph in u_getppid u_rw u_epoll t_pair t_rw t_epoll; do
	for c in none empty satfeed; do expected+=("time.$c.$ph"); done
	case $ph in u_*) k=all ;; *) k=own ;; esac
	for c in empty satfeed; do
		for p in enter exit; do expected+=("bpf.$c.$p.$ph.$k"); done
	done
done
expected+=(bpf.satfeed.traced_event.t_pair mem.total_bytes mem.targets)
if ! grep -q -- --no-probes <<<"${args[*]:-}"; then
	for p in empty gate gate_task filter hash direct ktime lock atomic \
		 sock sock_cast task sample sample_direct; do
		expected+=("probe.$p")
	done
fi
bad=0
for k in "${expected[@]}"; do
	n=$(grep -c "^$k " "$OUT/results.txt")
	v=$(awk -v k="$k" '$1 == k { print $2 }' "$OUT/results.txt")
	if [ "$n" -ne 1 ]; then
		echo "bench.sh: figure $k: found $n times" >&2; bad=1
	elif ! [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
		echo "bench.sh: figure $k is not a finite number: '$v'" >&2; bad=1
	fi
done
for section in '^1-2\. syscall cost' '^3\. BPF time per program run' \
	       '^4\. map memory' 'total [0-9]+ B'; do
	grep -Eq "$section" "$OUT/table.txt" ||
		{ echo "bench.sh: the table lacks '$section'" >&2; bad=1; }
done
if grep -Eiq '(^|[ (])-?(nan|inf)x?([ ),]|$)' "$OUT/table.txt"; then
	echo "bench.sh: the table shows a figure that is not a number" >&2; bad=1
fi
[ "$bad" -eq 0 ] || fail "malformed output"
if [ "$quick" = 1 ]; then
	echo "bench.sh --quick: ${#expected[@]} figures present and finite"
fi
