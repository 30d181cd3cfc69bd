#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The sched_ext benchmark, run as /test.sh by the guest's /init when
# tests/vm/scx-bench.sh boots the Debian 7.x guest (-smp 4, by default with
# QEMU -icount: guest time is the instruction count).
#
# The engine (fentry) watches the bundled server (sfserver, SF_THREADS
# threads, SF_WORK_US of spinning per request) in every phase, so the only
# difference between the two halves is the scheduler:
#   1. capacity, alone (no antagonists, the default scheduler): rising rates
#      (x SF_CAP_STEP from SF_CAP_START) until served < 95% of offered, a
#      timeout, or p99 above 20x the first rate's; then the midpoint of the
#      last pass and the first failure is tried
#   2. SF_ANTAGONISTS busy loops per CPU start and run to the end
#   3. the default scheduler (EEVDF): sfload at each of SF_LEVELS percent
#      of the capacity (SF_WARMUP s of warm-up, SF_DURATION s measured)
#   4. scx_satfeed -p SERVER: the same levels
# Per run one line on the console:
#   SCX-BENCH sched=S load=PCT offered= served= p50_us= p99_us= timeouts=
#             ant_cpus= reserved= level= seconds=
# ant_cpus: the antagonists' CPU time over the run divided by its length,
# in CPUs (their progress: each is a pure busy loop); reserved and level:
# scx_satfeed's mean reservation and demand level over the measured part
# (0 under the default scheduler).  "SCX-BENCH capacity=..." carries the
# capacity.  Figures are printed, never judged; the exit status says only
# whether every run produced them and everything was torn down.
#
# Settings (kernel command line words): SF_WINDOW=64, SF_WORK_US=300,
# SF_THREADS=1 (the policy reads one waiting thread's share: see
# docs/sched_ext.md), SF_LEVELS="20 60 90", SF_WARMUP=2, SF_DURATION=6,
# SF_CAP_START=400, SF_CAP_STEP=1.4, SF_CAP_DURATION=3, SF_ANTAGONISTS=1,
# SF_MIN_SHARED=2.
set -u
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

WINDOW=${SF_WINDOW:-64}
WORK_US=${SF_WORK_US:-300}
THREADS=${SF_THREADS:-1}
LEVELS=${SF_LEVELS:-20 60 90}
WARMUP=${SF_WARMUP:-2}
DURATION=${SF_DURATION:-6}
CAP_START=${SF_CAP_START:-400}
CAP_STEP=${SF_CAP_STEP:-1.4}
CAP_DURATION=${SF_CAP_DURATION:-3}
ANTAGONISTS=${SF_ANTAGONISTS:-1}
MIN_SHARED=${SF_MIN_SHARED:-2}
PORT=9700
NCPU=$(nproc)
SCX=/sys/kernel/sched_ext
STATS_MS=250

say() { echo "SCX-BENCH: $*"; }
die() { say "error: $*"; exit 1; }

# jget JSON KEY: the number after "KEY": in a one-line JSON object
jget() {
	awk -v k="\"$2\":" '{ i = index($0, k); if (!i) exit 1
		s = substr($0, i + length(k)); match(s, /^[-0-9.e+]+/)
		if (!RLENGTH) exit 1; print substr(s, 1, RLENGTH) }' <<<"$1"
}
# uptime in centiseconds (the guest's clock: instructions under -icount)
now_cs() { awk '{ split($1, t, "."); print t[1] * 100 + t[2] }' /proc/uptime; }
# the antagonists' CPU time so far, in clock ticks (USER_HZ)
ant_ticks() {
	local a s=0
	for a in $ANTS; do
		s=$((s + $(awk '{ print $14 + $15 }' /proc/"$a"/stat)))
	done
	echo "$s"
}

# run RATE WARMUP DURATION: sfload's JSON report in $REP
run() {
	REP=$(sfload -r "$1" -c 4 -W "$2" -d "$3" -D 1 -G --json \
		127.0.0.1:$PORT 2>/tmp/sfload.err)
	local rc=$?
	[ "$rc" = 0 ] && [ -n "$REP" ] && return 0
	say "sfload -r $1 exited $rc: $(tail -1 /tmp/sfload.err)"
	return 1
}

# scx_mean FROM: mean reserved CPUs and level over the --json lines of
# /tmp/scx.json after line FROM, skipping the warm-up's lines
scx_mean() {
	awk -v from="$1" -v skip="$(( (WARMUP * 1000 + STATS_MS - 1) / STATS_MS ))" '
	function get(s, k,   i) {
		i = index(s, "\"" k "\":"); if (!i) return 0
		s = substr(s, i + length(k) + 3); match(s, /^[0-9]+/)
		return substr(s, 1, RLENGTH) + 0
	}
	NR > from + skip && /^\{/ { n++; r += get($0, "reserved"); l += get($0, "level") }
	END { if (n) printf "%.2f %.1f\n", r / n, l / n; else print "nan nan" }' \
		/tmp/scx.json
}

command -v scx_satfeed >/dev/null || die "scx_satfeed missing from the initramfs"
[ "$(cat $SCX/state 2>/dev/null)" = disabled ] || die "sched_ext absent or busy"
say "kernel $(uname -r), $NCPU CPUs, clock $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
say "settings: work ${WORK_US} us, $THREADS threads, levels '$LEVELS' %, warm-up $WARMUP s, measured $DURATION s, $ANTAGONISTS antagonists per CPU, min shared $MIN_SHARED, window $WINDOW"

sfserver -p $PORT -w "$WORK_US" -t "$THREADS" -q &
SRV=$!
sleep 0.5
satfeed-loader --attach fentry --window "$WINDOW" load >/dev/null &&
	satfeedctl add --pid "$SRV" >/dev/null || die "cannot load the engine"

# ---- 1. capacity, alone ----
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
[ -n "$cap" ] || die "saturated at the first rate $CAP_START"
# the midpoint (busybox awk has no sqrt)
mid=$(awk -v a="$cap" -v b="$rate" 'BEGIN { printf "%.0f", (a + b) / 2 }')
if run "$mid" 0.5 "$CAP_DURATION" &&
   awk -v r="$mid" -v s="$(jget "$REP" served_rps)" -v p="$(jget "$REP" p99_us)" \
	-v b="$base" -v t="$(jget "$REP" timeouts)" \
	'BEGIN { exit !(s >= 0.95 * r && t == 0 && p <= 20 * b) }'; then
	cap=$mid
fi
echo "SCX-BENCH capacity=$cap"

# ---- 2. antagonists ----
ANTS=
for i in $(seq $((NCPU * ANTAGONISTS))); do
	(while :; do :; done) &
	ANTS="$ANTS $!"
done

# level SCHED PCT: one run at PCT % of the capacity
level() {
	local rate from t0 t1 a0 a1 res lvl
	rate=$(awk -v c="$cap" -v p="$2" 'BEGIN { printf "%.0f", c * p / 100 }')
	from=$(wc -l < /tmp/scx.json)
	t0=$(now_cs) a0=$(ant_ticks)
	run "$rate" "$WARMUP" "$DURATION" || return 1
	t1=$(now_cs) a1=$(ant_ticks)
	read -r res lvl <<<"$(scx_mean "$from")"
	[ "$1" = default ] && res=0 lvl=0
	echo "SCX-BENCH sched=$1 load=$2 offered=$rate" \
	     "served=$(jget "$REP" served_rps) p50_us=$(jget "$REP" p50_us)" \
	     "p99_us=$(jget "$REP" p99_us) timeouts=$(jget "$REP" timeouts)" \
	     "ant_cpus=$(awk -v a=$((a1 - a0)) -v t=$((t1 - t0)) \
			'BEGIN { printf "%.3f", t ? a / t : 0 }')" \
	     "reserved=$res level=$lvl seconds=$(awk -v t=$((t1 - t0)) \
			'BEGIN { printf "%.2f", t / 100 }')"
}

rc=0
: > /tmp/scx.json
# ---- 3. the default scheduler ----
for l in $LEVELS; do level default "$l" || rc=1; done

# ---- 4. scx_satfeed ----
scx_satfeed -p "$SRV" --json --interval-ms $STATS_MS \
	--min-shared "$MIN_SHARED" > /tmp/scx.json 2> /tmp/scx.err &
SCXP=$!
for i in $(seq 100); do
	[ "$(cat $SCX/state)" = enabled ] && break
	sleep 0.1
done
if [ "$(cat $SCX/state)" = enabled ]; then
	for l in $LEVELS; do level scx_satfeed "$l" || rc=1; done
else
	say "scx_satfeed did not attach: $(cat /tmp/scx.err)"
	rc=1
fi
kill -INT "$SCXP" 2>/dev/null
wait "$SCXP" || { say "scx_satfeed exited $?: $(cat /tmp/scx.err)"; rc=1; }

kill $ANTS "$SRV" 2>/dev/null
wait 2>/dev/null
satfeed-loader unload >/dev/null || rc=1
[ "$(cat $SCX/state)" = disabled ] || { say "sched_ext still $(cat $SCX/state)"; rc=1; }
[ -z "$(ls -A /sys/fs/bpf)" ] || { say "left in bpffs: $(ls -A /sys/fs/bpf)"; rc=1; }
say "done, status $rc"
exit $rc
