#!/usr/bin/env bash
# bench_paper.sh - satfeed against the paper's own method: the Listing-1
# baseline as a bpftrace script (tests/bench/listing1.bt), side by side
# with no tracing, empty programs (the floor) and satfeed.
#
#   bash tests/bench/bench_paper.sh            full run (about 10 minutes here)
#   bash tests/bench/bench_paper.sh --quick    short setting (< 90 s): checks that
#                                        every figure is made and finite
#
# Part A, syscall cost: build/sfbench --bpftrace tests/bench/listing1.bt rotates
#   none / empty / satfeed (64 targets) / bpftrace, interleaved in rounds:
#   an unrelated process's getppid, write+read and epoll_wait, the traced
#   process's send+recv pair, write+read and epoll_wait.  Section 6 of its
#   table has the ratios against no tracing, the floor and satfeed.
# Part B, memcached (-t 1, loopback, pinned to the last CPU; build/sfload
#   --proto memcached on the first) at a fixed offered load of 70% of its
#   capacity, measured in the same run (the rate it serves when offered
#   more), repeated in interleaved rounds of: no tracing; satfeed (a private
#   load, memcached added with --send sendmsg --recv read --poll
#   epoll_wait); bpftrace tests/bench/listing1.bt on memcached's pid; no tracing
#   again (none2: the A/A control).  Achieved throughput, p50/p99/p99.9 per
#   run; the p99 change against the same round's no-tracing run, with a
#   bootstrap 95% interval over rounds.  Also measured: the machine's
#   stalls (a clock-reading thread per CPU), and the CPU time satfeed's and
#   bpftrace's programs take at that load (kernel accounting, one extra run
#   each).
# Part C, what watching costs the server: the same memcached at 10%, 40% and
#   70% of that capacity, with no tracing and with satfeed, in interleaved
#   rounds; memcached's own CPU time per request (its threads' schedstat
#   run time, which holds satfeed's programs run in its syscalls) and p99,
#   each against the same round's no-tracing run (tests/bench/ab_report.py).
#
# Figures are printed, never asserted; the exit status is non-zero when a
# figure is missing or not a finite number, when satfeed or bpftrace did not
# see memcached's calls, or when something was left behind.  Takes the test
# lock (/run/lock/satfeed-tests.lock) for the whole run, pins only under a
# private root /sys/fs/bpf/sfpaper-<pid>.  Files: $OUTPUT/bench_paper/.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh

B=${OUTPUT:-build}
OUT=$B/bench_paper
quick=0
case ${1:-} in
--quick) quick=1 ;;
"") ;;
-h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
*) echo "bench_paper.sh: unknown argument '$1' (--quick)" >&2; exit 2 ;;
esac

fail() { echo "bench_paper.sh: $*" >&2; exit 1; }
log() { echo "bench_paper.sh: $*" >&2; }

[ "$(id -u)" -eq 0 ] || fail "needs root (BPF programs, satfeed-loader)"
for f in sfbench satfeed-loader satfeedctl sfload; do
	[ -x "$B/$f" ] || fail "$B/$f is missing (make all $B/sfbench)"
done
bash tools/install-deps.sh bench || fail "tools/install-deps.sh bench failed"
mkdir -p "$OUT" || fail "cannot create $OUT"
rm -f "$OUT"/*.txt "$OUT"/*.out

sf_take_test_lock || exit 1

ROOT=$SF_BPFFS/sfpaper-$$
sf_bpffs_mount || fail "cannot mount bpffs at $SF_BPFFS"
# bpftrace's tracepoint probes and satfeed's classic mode need tracefs
sf_tracefs_mount || fail "cannot mount tracefs"
sf_bpf_stats_save
NCPU=$(nproc)
CPU_SRV=$((NCPU - 1))
CPU_CLI=0
bench_pid= mc_pid= bt_pid=

cleanup() {
	local rc=$?
	sf_untrap
	for p in $bench_pid $bt_pid $mc_pid; do
		kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# this script loads and unloads its roots: one it cannot unload fails
	for r in "$ROOT" "$ROOT-a"; do
		sf_root_unload "$r" || { log "$r was left behind"; rc=1; }
	done
	sf_bpf_stats_restore
	sf_tracefs_unmount
	sf_bpffs_unmount
	exit "$rc"
}
sf_trap_cleanup cleanup

# seconds since boot: the VM's wall clock can jump
now() { awk '{ printf "%d", $1 }' /proc/uptime; }
t0=$(now)

# ---------------------------------------------------------------- part A
if [ "$quick" = 1 ]; then
	SFB=(--quick --rounds 2 --batches 8)
else
	SFB=(--rounds 7)
fi
log "part A: sfbench with the bpftrace configuration (${SFB[*]})"
"$B/sfbench" --bpffs "$ROOT-a" --loader "$B/satfeed-loader" --ctl "$B/satfeedctl" \
	--no-probes --bpftrace tests/bench/listing1.bt --bpftrace-out "$OUT/bpftrace_syscalls.out" \
	--results "$OUT/syscalls_results.txt" --raw "$OUT/syscalls_rounds.txt" "${SFB[@]}" \
	>"$OUT/syscalls_table.txt" 2>"$OUT/syscalls_log.txt" &
bench_pid=$!
wait "$bench_pid"
sfb_status=$?
bench_pid=
tA=$(now)
[ "$sfb_status" -eq 0 ] || { cat "$OUT/syscalls_log.txt" >&2; fail "sfbench failed (exit $sfb_status)"; }

# ---------------------------------------------------------------- part B
if [ "$quick" = 1 ]; then
	REPS=1 DUR=2 WARM=0.3 STALL_S=1 BOOT=200
else
	# many short runs, paired by round: a scheduling stall of the VM
	# spoils the p99 of the run it falls in, whatever is traced
	REPS=16 DUR=3 WARM=0.5 STALL_S=4 BOOT=4000
fi
CONNS=4
PORT=$(sf_free_port)
taskset -c "$CPU_SRV" memcached -u root -t 1 -p "$PORT" -l 127.0.0.1 -U 0 -c 4096 &
mc_pid=$!
sf_wait_port "$PORT"
kill -0 "$mc_pid" 2>/dev/null || fail "memcached did not start"

load() { # RATE DURATION -> sfload's JSON report on stdout
	taskset -c "$CPU_CLI" "$B/sfload" --proto memcached --keys 1000 --set-ratio 0.1 \
		--rate "$1" --connections "$CONNS" --duration "$2" --warmup "$WARM" \
		--drain 1 --json -G "127.0.0.1:$PORT"
}
jget() { python3 "$SF_LIB/json_fields.py" "$@"; }

# The machine's own stalls: a thread on each CPU reads the clock in a loop
# and counts the gaps, i.e. the time it did not run (hypervisor steal,
# interrupts, other tasks).  They set the floor of any p99 measured here.
STALLS=$OUT/stalls.txt
: >"$STALLS"
probes=()
for c in $(seq 0 $((NCPU - 1))); do
	python3 tests/bench/stall_probe.py "$c" "$STALL_S" >"$STALLS.$c" &
	probes+=($!)
done
wait "${probes[@]}"
for c in $(seq 0 $((NCPU - 1))); do
	cat "$STALLS.$c" >>"$STALLS" 2>/dev/null
	rm -f "$STALLS.$c"
done
[ "$(wc -l <"$STALLS")" -eq "$NCPU" ] || fail "the stall probe did not report for every CPU"

# Capacity, measured in this run: offer more than can be served and take
# the rate memcached (with sfload on the other CPU) really answered at.
CAP=0
for r in 150000 150000; do
	served=$(load "$r" 1.5 2>/dev/null | jget served_rps) || true
	[[ $served =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "capacity run at $r rps gave no report"
	CAP=$(awk -v a="$CAP" -v b="$served" 'BEGIN { printf "%.0f", (a > b ? a : b) }')
done
[ "$CAP" -ge 5000 ] || fail "memcached served only $CAP rps when overloaded"
capsrc="served when overloaded (150000 rps offered, best of 2 x 1.5 s)"
RATE=$(awk -v c="$CAP" 'BEGIN { printf "%.0f", 0.7 * c }')
log "part B: memcached at $RATE rps (70% of $CAP), $REPS round(s) of none/satfeed/bpftrace/none2, $DUR s each"

bt_wait() { # wait until bpftrace's sys_enter and sys_exit are attached
	local n
	for _ in $(seq 300); do
		kill -0 "$bt_pid" 2>/dev/null || return 1
		n=$(bpftool perf list 2>/dev/null | grep -E "^pid $bt_pid .*tracepoint +sys_e(nter|xit)" | wc -l)
		[ "$n" -ge 2 ] && return 0
		sleep 0.1
	done
	return 1
}
sf_start() {
	"$B/satfeed-loader" --bpffs "$ROOT" load >/dev/null 2>"$OUT/loader.err" ||
		{ cat "$OUT/loader.err" >&2; fail "satfeed-loader load failed"; }
	"$B/satfeedctl" --bpffs "$ROOT" add --pid "$mc_pid" --send sendmsg \
		--recv read --poll epoll_wait >/dev/null ||
		fail "satfeedctl add failed"
}
sf_stop() { # -> send windows closed for memcached
	"$B/satfeedctl" --bpffs "$ROOT" show --json |
		python3 "$SF_LIB/json_fields.py" targets.0.send.seq
	"$B/satfeed-loader" --bpffs "$ROOT" unload >/dev/null || fail "unload failed"
}
bt_start() {
	taskset -c "$CPU_CLI" bpftrace tests/bench/listing1.bt "$mc_pid" \
		>"$OUT/bpftrace_memcached.out" 2>&1 &
	bt_pid=$!
	bt_wait || { cat "$OUT/bpftrace_memcached.out" >&2; fail "bpftrace did not attach"; }
}
bt_stop() { # -> sends bpftrace counted
	kill -INT "$bt_pid"
	wait "$bt_pid"
	bt_pid=
	awk '/^@send_n: /{v=$2} END{print v+0}' "$OUT/bpftrace_memcached.out"
}
prog_ids() { # CFG -> the BPF program ids of that configuration
	case $1 in
	satfeed)
		for p in "$ROOT"/progs/*; do
			bpftool -j prog show pinned "$p" | python3 "$SF_LIB/json_fields.py" id
		done ;;
	bpftrace)
		bpftool perf list 2>/dev/null | sed -n "s/^pid $bt_pid .*prog_id \([0-9]*\).*/\1/p" ;;
	esac
}
prog_time() { # IDS... -> sum of run_time_ns
	local t=0 id v
	for id in "$@"; do
		v=$(bpftool -j prog show id "$id" | python3 "$SF_LIB/json_fields.py" run_time_ns=0)
		t=$((t + v))
	done
	echo "$t"
}

ROUNDS=$OUT/memcached_rounds.txt
echo "# round config offered achieved_rps p50_us p99_us p999_us send_p99_us timeouts" >"$ROUNDS"
cfgs=(none satfeed bpftrace none2)
bad=0
for rep in $(seq "$REPS"); do
	for k in 0 1 2 3; do
		cfg=${cfgs[$(( (rep - 1 + k) % 4 ))]}
		log "round $rep/$REPS: $cfg"
		case $cfg in
		satfeed) sf_start ;;
		bpftrace) bt_start ;;
		esac
		rep_json=$(load "$RATE" "$DUR") || fail "sfload failed"
		case $cfg in
		satfeed)
			seen=$(sf_stop)
			[ "${seen:-0}" -gt 0 ] || { log "satfeed closed no send window of memcached"; bad=1; }
			;;
		bpftrace)
			n=$(bt_stop)
			[ "${n:-0}" -gt 0 ] || { log "bpftrace counted no send of memcached"; bad=1; }
			;;
		esac
		echo "$rep $cfg $RATE $(jget achieved_rps p50_us p99_us p999_us send_p99_us timeouts <<<"$rep_json")" >>"$ROUNDS"
	done
done

# The CPU the tracing costs, from the kernel's accounting: one more run per
# method with BPF statistics on (they add two clock reads per program run,
# so these runs are not among the latency rounds).  Every run of the
# programs counts: memcached's syscalls, and sfload's and everyone else's.
ACCT=$OUT/memcached_acct.txt
: >"$ACCT"
sysctl -q -w kernel.bpf_stats_enabled=1 || fail "cannot enable BPF statistics"
for cfg in satfeed bpftrace; do
	case $cfg in
	satfeed) sf_start ;;
	bpftrace) bt_start ;;
	esac
	mapfile -t ids < <(prog_ids "$cfg")
	[ ${#ids[@]} -ge 2 ] || fail "no programs found for $cfg"
	t_a=$(prog_time "${ids[@]}")
	rep_json=$(load "$RATE" "$DUR") || fail "sfload failed"
	t_b=$(prog_time "${ids[@]}")
	case $cfg in
	satfeed) sf_stop >/dev/null ;;
	bpftrace) bt_stop >/dev/null ;;
	esac
	read -r reqs dur <<<"$(jget requests duration_s <<<"$rep_json")"
	# the load ran warm-up + duration + at most the drain; the programs'
	# time over the measured requests is the figure
	echo "$cfg $((t_b - t_a)) $reqs $dur $WARM" >>"$ACCT"
done
sf_bpf_stats_restore
tB=$(now)

# ---------------------------------------------------------------- part C
srv_cpu() { # memcached's threads' time on a CPU so far, ns
	cat /proc/"$mc_pid"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'
}
AB=$OUT/ab_rounds.txt
echo "# round rate config cpu_ns requests p99_us achieved_rps" >"$AB"
ab_rates=()
for f in 0.10 0.40 0.70; do
	ab_rates+=("$(awk -v c="$CAP" -v f="$f" 'BEGIN { printf "%.0f", f * c }')")
done
[ "$quick" = 1 ] && REPS_C=1 || REPS_C=8
log "part C: memcached's CPU per request at ${ab_rates[*]} rps, $REPS_C round(s) of none/satfeed, $DUR s each"
for rep in $(seq "$REPS_C"); do
	for rate in "${ab_rates[@]}"; do
		for k in 0 1; do
			cfg=$( [ $(( (rep + k) % 2 )) = 0 ] && echo none || echo satfeed)
			[ "$cfg" = satfeed ] && sf_start
			c0=$(srv_cpu)
			rep_json=$(load "$rate" "$DUR") || fail "sfload failed"
			c1=$(srv_cpu)
			if [ "$cfg" = satfeed ]; then
				seen=$(sf_stop)
				[ "${seen:-0}" -gt 0 ] || { log "satfeed closed no send window of memcached"; bad=1; }
			fi
			# what the open loop sent: the warm-up and the measured time
			reqs=$(awk -v r="$rate" -v d="$DUR" -v w="$WARM" 'BEGIN { printf "%.0f", r * (d + w) }')
			echo "$rep $rate $cfg $((c1 - c0)) $reqs $(jget p99_us achieved_rps <<<"$rep_json")" >>"$AB"
		done
	done
done
kill "$mc_pid" 2>/dev/null; wait "$mc_pid" 2>/dev/null; mc_pid=
tC=$(now)

# ---------------------------------------------------------------- report
python3 tests/bench/paper_report.py "$ROUNDS" "$RATE" "$CAP" "$capsrc" "$DUR" "$OUT/memcached_results.txt" \
	"$STALLS" "$ACCT" "$BOOT" >"$OUT/memcached_table.txt" || bad=1
python3 tests/bench/ab_report.py "$AB" "$OUT/memcached_results.txt" "$BOOT" \
	>"$OUT/ab_table.txt" || bad=1

{
	echo "satfeed against the paper's Listing-1 method (bpftrace $(bpftrace --version | awk '{print $2}')), $(uname -r), $NCPU CPUs"
	echo
	echo "A. syscall cost (build/sfbench --bpftrace tests/bench/listing1.bt ${SFB[*]}):"
	sed -n '/^1-2\./,/^  than the socket/p' "$OUT/syscalls_table.txt"
	echo
	sed -n '/^6\./,$p' "$OUT/syscalls_table.txt"
	echo
	echo "B. memcached at 70% of capacity:"
	cat "$OUT/memcached_table.txt"
	echo
	echo "C. what watching costs memcached, at three rates:"
	cat "$OUT/ab_table.txt"
} >"$OUT/table.txt"
cat "$OUT/table.txt"
echo "(part A $((tA - t0)) s, part B $((tB - tA)) s, part C $((tC - tB)) s; table in $OUT/table.txt, figures in $OUT/syscalls_results.txt and $OUT/memcached_results.txt)"

# well-formed: every expected figure present once and finite
expected=()
for ph in u_getppid u_rw u_epoll t_pair t_rw t_epoll; do
	for c in none empty satfeed bpftrace; do expected+=("S time.$c.$ph"); done
	expected+=("S ratio.bt_none.$ph" "S ratio.bt_empty.$ph")
done
expected+=("S ratio.ovh_bt_sf.target" "S bpf.bpftrace.sum.u_getppid.all")
for c in none satfeed bpftrace none2; do
	for k in achieved_rps p50_us p99_us p999_us; do expected+=("M mc.$c.$k"); done
done
for c in none2 satfeed bpftrace; do
	for k in p99_change_pct p99_change_lo_pct p99_change_hi_pct send_p99_change_pct; do
		expected+=("M mc.$k.$c")
	done
done
for c in satfeed bpftrace; do
	expected+=("M mc.bpf_ns_per_req.$c" "M mc.bpf_cpu_pct.$c")
done
for c in $(seq 0 $((NCPU - 1))); do
	expected+=("M mc.stall.cpu$c.gaps_100us_per_s" "M mc.stall.cpu$c.lost_pct")
done
expected+=("M mc.capacity_rps" "M mc.p99_spread_pct.none")
for r in "${ab_rates[@]}"; do
	for c in none satfeed; do
		expected+=("M ab.$r.$c.cpu_ns_per_req" "M ab.$r.$c.p99_us")
	done
	expected+=("M ab.$r.cpu_change_pct" "M ab.$r.cpu_added_ns")
done
syscall_keys=() memcached_keys=()
for e in "${expected[@]}"; do
	case ${e%% *} in
	S) syscall_keys+=("${e#* }") ;;
	M) memcached_keys+=("${e#* }") ;;
	esac
done
sf_check_figures "$OUT/syscalls_results.txt" "${syscall_keys[@]}" || bad=1
sf_check_figures "$OUT/memcached_results.txt" "${memcached_keys[@]}" || bad=1
sf_check_table_numbers "$OUT/table.txt" || bad=1
[ "$bad" -eq 0 ] || fail "malformed output or missing figures"
[ "$quick" = 1 ] && echo "bench_paper.sh --quick: ${#expected[@]} figures present and finite"
exit 0
