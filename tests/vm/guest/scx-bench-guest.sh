#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The sched_ext experiment, run as /test.sh by the guest's /init when
# tests/vm/scx-bench.sh boots the Debian 7.x guest.
#
# The engine (fentry) watches the bundled server (sfserver, SF_THREADS
# threads, SF_WORK_US of spinning per request) throughout.  The load
# generator (sfload) is kept out of the contest in every configuration:
# with 3 CPUs or more it runs pinned to CPU 0 and nothing else is pinned
# there; with 2 it runs on CPU 0 at real-time priority (SCHED_FIFO 50,
# above every fair and sched_ext task), and CPU 0 is the contest's as
# well.  Pinned: a real-time task wakes on an idle CPU when it may, and the
# idle CPU is the one scx_satfeed keeps for the server.  Below, G is the
# first CPU the contest may use (1, or 0 with 2 CPUs) and N-1 the last.
#   1. are the vCPUs independent?  A fixed job (SF_JOB iterations of a
#      shell loop) on CPU 0, alone and with a busy loop on every other CPU:
#      "SCX-BENCH vcpu alone_ms= busy_ms= slowdown=".  On independent
#      CPUs slowdown is about 1; under single-threaded TCG with -icount it
#      is about the number of busy vCPUs (one instruction stream sliced).
#   2. the co-located capacity: the server alone on the last CPU, busy
#      loops on CPUs G..N-2 (the ideal partition), rising rates until
#      served < 95% of offered, a timeout, or p99 above 20x the first
#      rate's (SF_CAP_START, x SF_CAP_STEP)
#   3. SF_REPS rounds; in each, every configuration once, in this order:
#        solo       the server, no busy loops (the default scheduler)
#        partition  server pinned to CPU N-1, busy loops pinned to G..N-2
#        default    server unpinned (G..N-1), busy loops on G..N-1 (EEVDF)
#        scx        the same, under scx_satfeed -p SERVER
#      each at SF_LEVEL % of the co-located capacity, SF_WARMUP s of
#      warm-up, SF_DURATION s measured (guest time).  N-1 busy loops run
#      in every configuration but solo.
# Per run one line on the console:
#   SCX-BENCH cfg=C rep=R rate= served= p50_us= p99_us= timeouts=
#             delay_us= runs= ant_ips= reserved= seconds=
# delay_us: the server's mean wait on a run queue per run (the kernel's
# schedstat: run_delay / pcount over the run), the wake-up-to-run delay;
# ant_ips: the busy loops' work done, iterations per guest second, summed;
# reserved: scx_satfeed's reservation at the end of the run (0 otherwise).
# Figures are printed, never judged here (tests/vm/scx-bench.sh computes
# the means and confidence intervals); the exit status says whether every
# run produced them and everything was torn down.
#
# Settings (kernel command line words): SF_WINDOW=64, SF_WORK_US=300,
# SF_THREADS=1, SF_LEVEL=50, SF_REPS=5, SF_WARMUP=1, SF_DURATION=3,
# SF_CAP_START=50, SF_CAP_STEP=1.4, SF_CAP_DURATION=2, SF_JOB=50000,
# SF_MIN_SHARED=2 (1 with 2 CPUs: scx_satfeed may then reserve one).
set -u
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

WINDOW=${SF_WINDOW:-64}
WORK_US=${SF_WORK_US:-300}
THREADS=${SF_THREADS:-1}
LEVEL=${SF_LEVEL:-50}
REPS=${SF_REPS:-5}
WARMUP=${SF_WARMUP:-1}
DURATION=${SF_DURATION:-3}
CAP_START=${SF_CAP_START:-50}
CAP_STEP=${SF_CAP_STEP:-1.4}
CAP_DURATION=${SF_CAP_DURATION:-2}
JOB=${SF_JOB:-50000}
PORT=9700
NCPU=$(nproc)
LAST=$((NCPU - 1))
if [ "$NCPU" -ge 3 ]; then
	G=1
	GEN=(taskset -c 0)
	MIN_SHARED=${SF_MIN_SHARED:-2}
else
	G=0
	GEN=(taskset -c 0 chrt -f 50)
	MIN_SHARED=${SF_MIN_SHARED:-1}
fi
SCX=/sys/kernel/sched_ext

say() { echo "SCX-BENCH: $*"; }
die() { say "error: $*"; exit 1; }

# jget JSON KEY: the number after "KEY": in a one-line JSON object
jget() {
	awk -v k="\"$2\":" '{ i = index($0, k); if (!i) exit 1
		s = substr($0, i + length(k)); match(s, /^[-0-9.e+]+/)
		if (!RLENGTH) exit 1; print substr(s, 1, RLENGTH) }' <<<"$1"
}
# guest time in microseconds
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

[ "$NCPU" -ge 2 ] || die "needs at least 2 CPUs (the server's, the busy loops')"
[ "$G" = 1 ] || chrt -f 50 true ||
	die "chrt -f cannot run the load generator at real-time priority"
command -v scx_satfeed >/dev/null || die "scx_satfeed missing from the initramfs"
[ "$(cat $SCX/state 2>/dev/null)" = disabled ] || die "sched_ext absent or busy"
say "kernel $(uname -r), $NCPU CPUs, clock $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
say "settings: work ${WORK_US} us, $THREADS threads, level $LEVEL %, $REPS rounds, warm-up $WARMUP s, measured $DURATION s, min shared $MIN_SHARED, load generator: ${GEN[*]}"

# ---- 1. are the vCPUs independent? ----
job() { local i=0; while [ $i -lt "$JOB" ]; do i=$((i + 1)); done; }
timed_job() {
	local t0 t1
	t0=$(now_us)
	taskset -c 0 bash -c "$(declare -f job); JOB=$JOB; job"
	t1=$(now_us)
	echo $(((t1 - t0) / 1000))
}
spin() { while :; do :; done; }
# once untimed first: multi-threaded TCG translates the job's code on its
# first run, which made "alone" the slower of the two (slowdown 0.71)
timed_job >/dev/null
alone=$(timed_job)
SP=
for c in $(seq 1 $LAST); do
	taskset -c "$c" bash -c "$(declare -f spin); spin" &
	SP="$SP $!"
done
sleep 0.5
busy=$(timed_job)
kill $SP
wait 2>/dev/null
say "fixed job on CPU 0: $alone ms alone, $busy ms with $LAST busy vCPUs beside it"
echo "SCX-BENCH vcpu alone_ms=$alone busy_ms=$busy slowdown=$(awk -v a="$alone" -v b="$busy" 'BEGIN { printf "%.2f", a ? b / a : 0 }')"

# ---- the server, the engine, the busy loops ----
taskset -c $G-$LAST sfserver -p $PORT -w "$WORK_US" -t "$THREADS" -q &
SRV=$!
sleep 0.5
satfeed-loader --attach fentry --window "$WINDOW" load >/dev/null &&
	satfeedctl add --pid "$SRV" >/dev/null || die "cannot load the engine"

# counting busy loops (antagonist): beside this script, in the guest and
# in a checkout alike
. "$(dirname "$0")/busyloop.sh"
ANTS=
# ants_start CPULIST: N-1 busy loops allowed on CPULIST
ants_start() {
	local i
	rm -f /tmp/ant.*
	ANTS=
	for i in $(seq 1 $LAST); do
		taskset -c "$1" bash -c "$(declare -f antagonist); antagonist" &
		ANTS="$ANTS $!"
	done
}
ants_stop() {
	[ -z "$ANTS" ] || { kill $ANTS; wait $ANTS 2>/dev/null; }
	ANTS=
	rm -f /tmp/ant.*
}
ants_sum() { cat /tmp/ant.* 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# the server's threads: allowed on CPULIST
pin_server() { taskset -a -p -c "$1" "$SRV" >/dev/null; }
# schedstat of every server thread: "run_delay_ns pcount"
srv_sched() {
	cat /proc/"$SRV"/task/*/schedstat |
		awk '{ d += $2; n += $3 } END { printf "%.0f %d\n", d, n }'
}

# run RATE WARMUP DURATION: sfload (out of the contest: GEN) report in $REP
run() {
	REP=$("${GEN[@]}" sfload -r "$1" -c 4 -W "$2" -d "$3" -D 1 -G --json \
		127.0.0.1:$PORT 2>/tmp/sfload.err)
	local rc=$?
	[ "$rc" = 0 ] && [ -n "$REP" ] && return 0
	say "sfload -r $1 exited $rc: $(tail -1 /tmp/sfload.err)"
	return 1
}

# ---- 2. the co-located capacity (the ideal partition) ----
pin_server "$LAST"
ants_start $G-$((LAST - 1))
rate=$CAP_START cap= base=
while :; do
	run "$rate" 0.5 "$CAP_DURATION" || die "capacity run failed"
	served=$(jget "$REP" served_rps) p99=$(jget "$REP" p99_us)
	tmo=$(jget "$REP" timeouts)
	[ -n "$base" ] || base=$(awk -v p="$p99" 'BEGIN { print (p > 50 ? p : 50) }')
	ok=$(awk -v r="$rate" -v s="$served" -v p="$p99" -v b="$base" -v t="$tmo" \
		'BEGIN { print (s >= 0.95 * r && t == 0 && p <= 20 * b) }')
	say "capacity search: offered $rate served $served p99 $p99 us timeouts $tmo: $([ "$ok" = 1 ] && echo ok || echo saturated)"
	[ "$ok" = 1 ] || break
	cap=$rate
	rate=$(awk -v r="$rate" -v s="$CAP_STEP" 'BEGIN { printf "%.0f", r * s }')
	[ "$rate" -le 200000 ] || break
done
ants_stop
[ -n "$cap" ] || die "saturated at the first rate $CAP_START"
echo "SCX-BENCH capacity=$cap"
RATE=$(awk -v c="$cap" -v p="$LEVEL" 'BEGIN { printf "%.0f", c * p / 100 }')

# one CFG REP: one measured run of configuration CFG
one() {
	local cfg=$1 t0 t1 a0 a1 s0 s1 res=0 scxp=
	case $cfg in
	solo)		pin_server $G-$LAST ;;
	partition)	pin_server "$LAST"; ants_start $G-$((LAST - 1)) ;;
	default|scx)	pin_server $G-$LAST; ants_start $G-$LAST ;;
	esac
	if [ "$cfg" = scx ]; then
		scx_satfeed -p "$SRV" --json --interval-ms 250 \
			--min-shared "$MIN_SHARED" > /tmp/scx.json 2> /tmp/scx.err &
		scxp=$!
		for i in $(seq 100); do
			[ "$(cat $SCX/state)" = enabled ] && break
			sleep 0.1
		done
		[ "$(cat $SCX/state)" = enabled ] ||
			{ say "scx_satfeed did not attach: $(cat /tmp/scx.err)"; ants_stop; return 1; }
	fi
	sleep "$WARMUP"
	t0=$(now_us) a0=$(ants_sum) s0=$(srv_sched)
	run "$RATE" 0 "$DURATION" || { ants_stop; return 1; }
	t1=$(now_us) a1=$(ants_sum) s1=$(srv_sched)
	if [ -n "$scxp" ]; then
		res=$(grep '^{' /tmp/scx.json | tail -1 | awk '{ i = index($0, "\"reserved\":")
			print substr($0, i + 11) + 0 }')
		kill -INT "$scxp"
		wait "$scxp" || { say "scx_satfeed exited $?: $(cat /tmp/scx.err)"; ants_stop; return 1; }
	fi
	ants_stop
	echo "SCX-BENCH cfg=$cfg rep=$2 rate=$RATE" \
	     "served=$(jget "$REP" served_rps) p50_us=$(jget "$REP" p50_us)" \
	     "p99_us=$(jget "$REP" p99_us) timeouts=$(jget "$REP" timeouts)" \
	     "$(awk -v a="$s0" -v b="$s1" 'BEGIN { split(a, x, " "); split(b, y, " ")
		n = y[2] - x[2]; d = n > 0 ? (y[1] - x[1]) / n / 1000 : 0
		printf "delay_us=%.1f runs=%d", d, n }')" \
	     "ant_ips=$(awk -v a=$((a1 - a0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.0f", t ? a * 1e6 / t : 0 }')" \
	     "reserved=$res seconds=$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.2f", t / 1e6 }')"
}

# ---- 3. the rounds ----
rc=0
for r in $(seq 1 "$REPS"); do
	for cfg in solo partition default scx; do
		one "$cfg" "$r" || rc=1
	done
done

kill "$SRV" 2>/dev/null
wait 2>/dev/null
satfeed-loader unload >/dev/null || rc=1
[ "$(cat $SCX/state)" = disabled ] || { say "sched_ext still $(cat $SCX/state)"; rc=1; }
[ -z "$(ls -A /sys/fs/bpf)" ] || { say "left in bpffs: $(ls -A /sys/fs/bpf)"; rc=1; }
say "done, status $rc"
exit $rc
