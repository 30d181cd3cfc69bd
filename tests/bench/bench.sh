#!/usr/bin/env bash
# bench.sh - satfeed's overhead benchmark; `make bench` runs it.
#
#   bash tests/bench/bench.sh            full run (7 rounds, about two minutes)
#   bash tests/bench/bench.sh --quick    short setting (< 60 s): `make test` runs it
#                                  to check that every measurement is made and
#                                  the output is well formed
#   bash tests/bench/bench.sh -- ARGS    extra sfbench options (sfbench --help)
#
# It runs build/sfbench (tests/bench/sfbench/), which interleaves no tracing, empty
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
#
# The main run loads satfeed without understudies; a second run (section 5,
# the probes, skipped) loads it with them, and a table compares the two on
# an unrelated getppid() and a traced send+recv pair
# ($OUTPUT/bench/understudy/).  A third run loads it without the figures
# of issue 22 that have a switch (satfeed-loader --no-responses: the
# response stream, service time, per-connection state), and the last table
# says what they cost ($OUTPUT/bench/responses/).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
# one satfeed test at a time on this machine
sf_take_test_lock || exit 1

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
	# built before the contract changed: it would read the pins with the
	# old layout and refuse the engine's ABI (every count 0)
	[ "$f" -nt bpf/satfeed.h ] ||
		fail "$f is older than bpf/satfeed.h (make all $B/sfbench)"
done
mkdir -p "$OUT" || fail "cannot create $OUT"

ROOT=$SF_BPFFS/sfbench-$$
sf_bpffs_mount || fail "cannot mount bpffs at $SF_BPFFS"
bpffs_before=$(ls -A "$SF_BPFFS")
sf_bpf_stats_save
bench_pid=

cleanup() {
	local rc=$?
	sf_untrap
	if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then
		kill -TERM "$bench_pid" 2>/dev/null	# sfbench cleans up on TERM
		wait "$bench_pid" 2>/dev/null
	fi
	# sfbench unloads its private root itself: one left is a failure
	if [ -e "$ROOT" ]; then
		echo "bench.sh: $ROOT was left behind; unloading it" >&2
		sf_root_unload "$ROOT"
		rc=1
	fi
	sf_bpf_stats_restore
	if [ "$(ls -A "$SF_BPFFS")" != "$bpffs_before" ]; then
		echo "bench.sh: note: $SF_BPFFS changed during the run (another user of bpffs?)" >&2
	fi
	sf_bpffs_unmount
	exit "$rc"
}
sf_trap_cleanup cleanup

start=$(date +%s)
# sfbench pins its measuring workers to one CPU itself (sched_setaffinity,
# what taskset does) and keeps its orchestrating process on another.
# The main run measures the engine without understudies; a second run the
# engine with them (--understudy on: their cost does not depend on whether
# this kernel preempts), compared at the end.
# sfbench_run DIR ARGS...: one sfbench run into DIR
sfbench_run() {
	local dir=$1
	shift
	"$B/sfbench" --bpffs "$ROOT" --loader "$B/satfeed-loader" \
		--ctl "$B/satfeedctl" --results "$dir/results.txt" \
		--raw "$dir/rounds.txt" "$@" \
		>"$dir/table.txt" 2> >(tee "$dir/log.txt" >&2) &
	bench_pid=$!
	wait "$bench_pid"
	status=$?
	bench_pid=
	wait	# the tee of the log
	return $status
}
sfbench_run "$OUT" --understudy off "${args[@]}"
status=$?
secs=$(( $(date +%s) - start ))

cat "$OUT/table.txt"
echo "(${secs} s; table in $OUT/table.txt, figures in $OUT/results.txt)"
[ "$status" -eq 0 ] || fail "sfbench failed (exit $status)"

mkdir -p "$OUT/understudy" || fail "cannot create $OUT/understudy"
sfbench_run "$OUT/understudy" --understudy on --no-probes "${args[@]}" ||
	fail "sfbench --understudy on failed (exit $?; $OUT/understudy/log.txt)"
# understudy_row KEY LABEL: none, satfeed without and with understudies
understudy_row() {
	awk -v k="$1" -v label="$2" '
		FNR == 1 { f++ }
		$1 == "time.none." k { n[f] = $2 }
		$1 == "time.satfeed." k { s[f] = $2 }
		END {
			if (!(1 in s) || !(2 in s)) exit 1
			ratio = s[1] - n[1] > 0 ? (s[2] - n[2]) / (s[1] - n[1]) : 0
			printf "  %-26s %9.1f %9.1f %9.1f %+9.1f %8.2fx\n", label,
			       n[1], s[1], s[2], s[2] - s[1], ratio
		}' "$OUT/results.txt" "$OUT/understudy/results.txt"
}
understudy_row u_getppid x >/dev/null && understudy_row t_pair x >/dev/null ||
	fail "understudy comparison figures missing"
{
	echo
	echo "understudies (exactness on preemptible kernels, satfeed-loader --understudy):"
	echo "  the engine without and with them, $(sed -n 's/.*--attach \([a-z_]*\).*/\1/p' <<<" ${args[*]:-} --attach tp_btf") mode, two runs of"
	echo "  sfbench, ns per call (getppid) or per pair (send+recv); overhead ratio ="
	echo "  (with - none) / (without - none), each over its own run's none"
	printf '  %-26s %9s %9s %9s %9s %9s\n' phase none without with added ratio
	understudy_row u_getppid "unrelated getppid()" &&
	understudy_row t_pair "traced send+recv pair"
} | tee "$OUT/understudy/compare.txt"

# What the response stream, service time and per-connection state cost:
# the main run (with them) against a run without (--no-responses).
mkdir -p "$OUT/responses" || fail "cannot create $OUT/responses"
sfbench_run "$OUT/responses" --understudy off --no-probes --no-responses \
	"${args[@]}" ||
	fail "sfbench --no-responses failed (exit $?; $OUT/responses/log.txt)"
# figure_row KEY NETKEY LABEL: KEY without and with them, each less its
# run's NETKEY (a time's floor: none) when given
figure_row() {
	awk -v k="$1" -v nk="$2" -v label="$3" '
		FNR == 1 { f++ }
		$1 == k { v[f] = $2 }
		nk != "" && $1 == nk { n[f] = $2 }
		END {
			if (!(1 in v) || !(2 in v)) exit 1
			with = v[1] - n[1]; without = v[2] - n[2]
			printf "  %-34s %11.1f %11.1f %+11.1f\n", label,
			       without, with, with - without
		}' "$OUT/results.txt" "$OUT/responses/results.txt"
}
{
	echo
	echo "figures of issue 22 (responses, service time, per-connection state;"
	echo "  satfeed-loader --no-responses leaves them out): two runs of sfbench,"
	echo "  without them and with them (the main run); times in ns less the run's"
	echo "  none, BPF time in ns per program run, memory in bytes at the targets above."
	echo "  The age timer has no switch: it adds no per-event work but one store"
	echo "  at a wait's end; its ticks run in softirq, twice per --max-age."
	printf '  %-34s %11s %11s %11s\n' figure without with cost
	figure_row time.satfeed.t_pair time.none.t_pair \
		"traced send+recv pair (ns)" &&
	figure_row bpf.satfeed.traced_event.t_pair "" \
		"BPF time per traced event (ns)" &&
	figure_row bpf.satfeed.exit.t_pair.own "" \
		"sys_exit run, send/recv (ns)" &&
	figure_row bpf.satfeed.exit.t_udp.own "" \
		"sys_exit run, UDP send/recv (ns)" &&
	figure_row bpf.satfeed.exit.t_tcp.own "" \
		"sys_exit run, TCP req+resp (ns)" &&
	figure_row time.satfeed.t_epoll time.none.t_epoll \
		"traced epoll_wait (ns)" &&
	figure_row time.satfeed.u_getppid time.none.u_getppid \
		"unrelated getppid() (ns)" &&
	figure_row mem.total_bytes "" "map memory (bytes)"
} | tee "$OUT/responses/compare.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "responses comparison figures missing"

# Well-formed output: every expected figure present once, a finite number.
# ratio.* lines are derived and may be undefined on a noisy machine.
expected=()
for ph in u_getppid u_rw u_epoll t_pair t_rw t_epoll u_uring t_udp t_tcp; do
	for c in none empty satfeed; do expected+=("time.$c.$ph"); done
	case $ph in u_*) k=all ;; *) k=own ;; esac
	for c in empty satfeed; do
		for p in enter exit; do expected+=("bpf.$c.$p.$ph.$k"); done
	done
done
expected+=(bpf.satfeed.traced_event.t_pair mem.total_bytes mem.targets)
if ! grep -q -- --no-probes <<<"${args[*]:-}"; then
	for p in empty gate gate_task filter hash direct ktime lock atomic \
		 sock sock_cast task sample sample_direct floor lockfree; do
		expected+=("probe.$p")
	done
fi
bad=0
sf_check_figures "$OUT/results.txt" "${expected[@]}" || bad=1
sf_check_sections "$OUT/table.txt" '^1-2\. syscall cost' \
	'^3\. BPF time per program run' '^4\. map memory' 'total [0-9]+ B' ||
	bad=1
sf_check_table_numbers "$OUT/table.txt" || bad=1
[ "$bad" -eq 0 ] || fail "malformed output"
if [ "$quick" = 1 ]; then
	echo "bench.sh --quick: ${#expected[@]} figures present and finite"
fi
