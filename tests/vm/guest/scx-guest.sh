#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The sched_ext test, run as /test.sh by the guest's /init when
# tests/vm/scx.sh boots the Debian 7.x guest (-smp 4: two cores of two
# SMT threads unless SCX_SMP says otherwise).
#
# The engine (fentry) watches the bundled server (sfserver); CPU-bound
# antagonists (SF_ANTAGONISTS busy loops per CPU) compete with it; the
# scheduler scx_satfeed reserves CPUs for the server from the engine's
# windows while sfload drives it at a low and then a high rate, then stops.
# Checks:
#   - bad input (no engine, target not watched, too many reserved CPUs,
#     another scheduler running) is refused with its exit code and leaves
#     sched_ext disabled / the running scheduler in place; --dry-run
#     decides without attaching; --release-ms defaults to 2 x the
#     engine's age bound (sf_info.max_age_ns), a given one overrides it
#   - /sys/kernel/sched_ext/state is enabled with ops "satfeed" while the
#     scheduler runs, disabled after it exits
#   - the request rates are fractions of the server's capacity, measured
#     in this boot (its CPU time per request, alone)
#   - sizing: under load the reservation is at least 1 CPU and never more
#     than the server has threads, rounded up to whole cores; every
#     reservation is whole cores (each CPU with its SMT siblings) of one
#     last-level cache; it falls back to none after the load;
#     reserved CPUs run at full performance (perf target 1024) and, without
#     --perf-base, so does every other CPU; with --perf-base the shared
#     CPUs are capped only while something is reserved
#   - placement from the kernel (sched_switch / sched_wakeup in the trace
#     buffer, clock "mono" = the scheduler's bpf_ktime_get_ns), over the
#     reservations the scheduler reported: no other task (per-CPU and
#     real-time kthreads aside) is placed on a reserved CPU to run past
#     the second tick that CPU took after the reservation began (hrtimer
#     events; a tenth of a tick for the switch; kernel threads' time and
#     runs in progress at the change that outlast it reported, not
#     asserted),
#     nor more than one tick after a server thread
#     becomes runnable; the server ran on reserved CPUs more than on
#     shared ones; the antagonists kept making progress (iterations)
#   - wake-up preemption: with nothing reserved (--max-reserved 0), 20 ms
#     slices, a busy loop on every CPU, the server kept off sfload's CPU,
#     the server's wake-ups kick CPUs, and most of them run within one
#     tick (kernel trace; the guest's vCPU round robin
#     keeps a tail longer than a tick even for an idle CPU)
#   - no starvation: a server with 2x as many busy threads as CPUs, plus
#     busy loops and a load that runs on unbound kworkers (BPF maps freed
#     on the unbound workqueue), with nothing reserved for 60 s scaled to
#     the watchdog (60 s x SF_WATCHDOG_MS / 30 s): the scheduler is not
#     stopped, every antagonist, the kworker load and the stats loop make
#     progress in each half, unbound kworkers run, and no other task waits
#     longer than a quarter of the watchdog to run (kernel trace)
#   - a cgroup target: a second server started inside a cgroup v2
#     directory, watched with satfeedctl add --cgroup, scheduled with
#     scx_satfeed -c DIR: it reserves CPUs under load, with the same
#     placement from the kernel
#   - the error exit: scx_satfeed --test-stall --watchdog-ms (the targets'
#     queue is never dispatched) is stopped by the kernel's watchdog; it
#     prints the kernel's reason and message and exits 1, sched_ext is
#     disabled, and a scheduler starts again afterwards
#   - unload orders: scheduler first; scheduler restarted; engine unloaded
#     and reloaded while the scheduler runs; engine first
#   - the kernel log has no sched_ext error or watchdog stall other than
#     the provoked one, and every other "disabled" line says it was
#     unregistered from user space
# One "ok N - ..." or "not ok N - ..." line per check; "SCX-RESULT ..."
# lines carry the figures for the host's report.
#
# Settings (kernel command line words): SF_WINDOW=64, SF_WORK_US=300,
# SF_LOW_PCT=3, SF_HIGH_PCT=40 (request rates, % of the capacity measured
# in this boot), SF_PHASE=8 (guest seconds per load level),
# SF_ANTAGONISTS=1 (per CPU), SF_MIN_SHARED=2, SF_RELEASE_MS=1500,
# SF_WATCHDOG_MS=5000 (the provoked stall's watchdog and the starvation
# test's; 7.3 warns about a timeout below its rescue threshold, 4096 ms).
# Every duration is guest time (under -icount, the instruction count).
set -u
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
. /checks.sh

ROOT=/sys/fs/bpf/satfeed
SCX=/sys/kernel/sched_ext
WINDOW=${SF_WINDOW:-64}
WORK_US=${SF_WORK_US:-300}
LOW_PCT=${SF_LOW_PCT:-3}
HIGH_PCT=${SF_HIGH_PCT:-40}
PHASE=${SF_PHASE:-8}
ANTAGONISTS=${SF_ANTAGONISTS:-1}
MIN_SHARED=${SF_MIN_SHARED:-2}
RELEASE_MS=${SF_RELEASE_MS:-1500}
WATCHDOG_MS=${SF_WATCHDOG_MS:-5000}
PORT=9700
CPORT=9701
BPORT=9702
TR=/sys/kernel/tracing
CGROUP=/sys/fs/cgroup/sfsrv
NCPU=$(nproc)
SETTLE=$((RELEASE_MS / 1000 + 3))

# ---- helpers ----
scx_state() { cat $SCX/state; }
scx_disabled() { [ "$(scx_state)" = disabled ]; }
scx_enabled() {
	[ "$(scx_state)" = enabled ] && [ "$(cat $SCX/root/ops)" = satfeed ]
}
nr_scx_progs() { bpftool prog show 2>/dev/null | grep -c 'struct_ops'; }
no_scx_left() { scx_disabled && [ "$(nr_scx_progs)" = 0 ]; }

# expect_rc RC CMD...: CMD exits with RC and prints one line on stderr
expect_rc() {
	local want=$1 rc lines
	shift
	"$@" > /tmp/rc.out 2> /tmp/rc.err
	rc=$?
	lines=$(wc -l < /tmp/rc.err)
	cat /tmp/rc.err
	[ "$rc" = "$want" ] && [ "$lines" = 1 ]
}

engine_load() {
	satfeed-loader --attach fentry --window "$WINDOW" load &&
		satfeedctl add --pid "$SRV"
}
engine_unload() { satfeed-loader unload; }

# scx_start NAME ARGS...: the scheduler for the server (TARGET, default
# -p $SRV), JSON stats every 250 ms into /tmp/NAME.json; SCX_PID
scx_start() {
	local name=$1
	shift
	scx_satfeed ${TARGET:--p "$SRV"} --json --interval-ms 250 \
		--min-shared "$MIN_SHARED" --release-ms "$RELEASE_MS" "$@" \
		> /tmp/"$name".json 2> /tmp/"$name".err &
	SCX_PID=$!
	wait_for 10 scx_enabled && return
	# not attached: the verifier's verdict, once
	[ -n "${VLOG_SHOWN:-}" ] && return 1
	VLOG_SHOWN=1
	scx_satfeed -p "$SRV" -v --duration 0.5 2>&1 |
		grep -v '^libbpf: \(map\|elf\|sec\|CO-RE\)' | tail -25
	return 1
}
# scx_stop NAME: SIGINT, exit 0, sched_ext disabled
scx_stop() {
	local rc
	kill -INT "$SCX_PID"
	wait "$SCX_PID"
	rc=$?
	cat /tmp/"$1".err
	grep -h 'scheduler exited' /tmp/"$1".json
	[ "$rc" = 0 ] && wait_for 5 no_scx_left
}

# jget LINE KEY: the first (top-level) value of "KEY" in a JSON line
jget() {
	awk -v k="\"$2\":" '{ i = index($0, k); if (!i) exit 1
		s = substr($0, i + length(k)); match(s, /^[^],}]*/)
		print substr(s, 1, RLENGTH) }' <<<"$1"
}
lines() { wc -l < "$1"; }
# GET_AWK: get(LINE, KEY), the number a stats JSON line holds under KEY (-1:
# none), for the awk programs below
GET_AWK='
	function get(s, k,   i) {
		i = index(s, "\"" k "\":"); if (!i) return -1
		s = substr(s, i + length(k) + 3); match(s, /^[0-9]+/)
		return substr(s, 1, RLENGTH) + 0
	}'
last() { grep '^{' "$1" | tail -1; }

# phase FILE FROM TO: the mean reserved CPUs, the largest reserved-CPU perf
# target and the mean level over the second half of lines FROM+1..TO, and
# the most CPUs reserved over all of them
phase() {
	awk -v from="$2" -v to="$3" "$GET_AWK"'
	NR > from && NR <= to && /^\{/ {
		x = get($0, "reserved"); if (x > rm) rm = x
	}
	NR > from + int((to - from) / 2) && NR <= to && /^\{/ {
		n++; r += get($0, "reserved"); l += get($0, "level")
		p = get($0, "perf_reserved"); if (p > pm) pm = p
	}
	END { if (!n) { print "0 0 0 0"; exit 1 }
		printf "%.2f %d %.1f %d\n", r / n, pm, l / n, rm }' "$1"
}

# res_intervals FILE FROM TO: one line per reservation seen in the stats
# lines FROM+1..TO: "START_NS END_NS CPU,CPU..." (when it began, the last
# line that still showed it, the CPUs it held)
res_intervals() {
	awk -v from="$2" -v to="$3" "$GET_AWK"'
	NR > from && NR <= to && /^\{/ && get($0, "reserved") > 0 {
		lc = sprintf("%.0f", get($0, "last_change_ns"))
		nc = split(substr($0, index($0, "\"cpus\":[") + 8), cpu, /[}],[{]/)
		set = ""; k = 0
		for (i = 1; i <= nc; i++)
			if (get(cpu[i], "reserved") == 1) {
				set = set (set == "" ? "" : ",") get(cpu[i], "cpu"); k++
			}
		# a line read across a change holds another count: skip it
		if (k != get($0, "reserved")) next
		if (!(lc in end)) order[++n] = lc
		end[lc] = sprintf("%.0f", get($0, "now_ns")); cpus[lc] = set
	}
	END { for (i = 1; i <= n; i++) print order[i], end[order[i]], cpus[order[i]] }' "$1"
}

# trace_on / trace_off FILE: the scheduler events in the trace buffer, with
# the clock of bpf_ktime_get_ns; trace_off fails when events were lost
TRACE_EVENTS="sched_switch sched_wakeup sched_wakeup_new"
LOCK_EVENTS="contention_begin contention_end"
trace_on() {
	local e
	echo 0 > $TR/tracing_on && echo mono > $TR/trace_clock &&
		echo 8192 > $TR/buffer_size_kb && echo > $TR/trace || return 1
	for e in $TRACE_EVENTS; do
		echo 1 > $TR/events/sched/$e/enable || return 1
	done
	echo 1 > $TR/events/timer/hrtimer_expire_entry/enable || return 1
	# TLB shootdowns this CPU sent (TLB_REMOTE_SEND_IPI): it waits, not
	# preemptible, until every target vCPU has run its handler
	if [ -d $TR/events/tlb/tlb_flush ]; then
		echo 'reason == 4' > $TR/events/tlb/tlb_flush/filter &&
			echo 1 > $TR/events/tlb/tlb_flush/enable || return 1
	fi
	# waits for a contended lock (spinning: not preemptible)
	for e in $LOCK_EVENTS; do
		[ -d $TR/events/lock/$e ] || continue
		echo 1 > $TR/events/lock/$e/enable || return 1
	done
	echo 1 > $TR/tracing_on
}
trace_off() {
	local e lost
	echo 0 > $TR/tracing_on
	for e in $TRACE_EVENTS; do echo 0 > $TR/events/sched/$e/enable; done
	echo 0 > $TR/events/timer/hrtimer_expire_entry/enable
	[ -d $TR/events/tlb/tlb_flush ] &&
		echo 0 > $TR/events/tlb/tlb_flush/enable
	for e in $LOCK_EVENTS; do
		[ -d $TR/events/lock/$e ] && echo 0 > $TR/events/lock/$e/enable
	done
	cat $TR/trace > "$1"
	lost=$(cat $TR/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	echo > $TR/trace
	echo "$(grep -c sched_ "$1") events, $lost lost"
	[ "$lost" = 0 ] && grep -q sched_switch "$1"
}

# tids PID: the thread ids of PID, comma-separated
tids() { ls /proc/"$1"/task | paste -sd, -; }

# ---- topology: the scheduler reserves whole cores of one cache ----
SYSCPU=/sys/devices/system/cpu
# cpu_list LIST: the CPUs of a sysfs CPU list ("0-1,4"), one per line
cpu_list() {
	tr ',' '\n' <<<"$1" | awk -F- '{ for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }'
}
# llc CPU: the CPUs that share CPU's last-level cache (a sysfs list)
llc() {
	local d l lvl=0 best=$1
	for d in $SYSCPU/cpu"$1"/cache/index*; do
		l=$(cat "$d/level" 2>/dev/null) || continue
		[ "$l" -ge "$lvl" ] || continue
		lvl=$l
		best=$(cat "$d/shared_cpu_list")
	done
	echo "$best"
}
# threads per core (1 without SMT), from CPU 0's siblings
SMT=$(cpu_list "$(cat $SYSCPU/cpu0/topology/thread_siblings_list)" | wc -l)
# whole_cores FILE: every reservation in FILE (res_intervals lines) holds
# whole cores, each CPU's SMT siblings with it, of one last-level cache
whole_cores() {
	local s e set cpu sib n=0 bad=0
	while read -r s e set; do
		n=$((n + 1))
		for cpu in ${set//,/ }; do
			for sib in $(cpu_list "$(cat $SYSCPU/cpu"$cpu"/topology/thread_siblings_list)"); do
				[[ ",$set," == *",$sib,"* ]] && continue
				echo "reservation $set: CPU $cpu without its sibling $sib"
				bad=1
			done
			[ "$(llc "$cpu")" = "$(llc "${set%%,*}")" ] && continue
			echo "reservation $set: CPU $cpu in another cache"
			bad=1
		done
	done < "$1"
	echo "$n reservations: $(awk '{ print $3 }' "$1" | sort -u | paste -sd' ' -)"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

# kthreads: the kernel threads' pids (kthreadd's children), comma-separated
kthreads() {
	local f
	for f in /proc/[0-9]*/stat; do
		sed -n 's/^\([0-9]*\) (.*) [A-Z] 2 .*/\1/p' "$f" 2>/dev/null
	done | paste -sd, -
}

# kernel_view TRACE INTERVALS TIDS: what the kernel's events say, as
# KEY=VALUE words.  "Other" tasks: neither the targets' threads (TIDS) nor
# idle, per-CPU kthreads (NAME/N) or real-time tasks (prio < 100), which
# the scheduler does not place.  Over the reservations in INTERVALS:
# other_res_us (their time on reserved CPUs), late_runs / late_us /
# late_max_us / late_comm (the time of runs placed there after the
# reservation began, past the second tick of that CPU after it, see
# due(); kernel threads' apart, as kth_late_runs / kth_late_us, and runs
# in progress at the change apart, as held_late_runs / held_late_us: see
# kernel_checks), late_list (the first five late runs of any kind:
# CPU/pid/comm/start/end in us from the reservation's start/whether the
# run was in progress then or placed there after), evict_max_us / evict_late (from a target thread becoming
# runnable to the other task leaving a reserved CPU; late: over a tick);
# tgt_res_us / tgt_shared_us (the targets' time on reserved / other CPUs),
# tgt_wakes / tgt_wait_max_us / tgt_wait_late (a target thread's wake-up
# or preemption to its next run; late: over a tick), tgt_wait_ticks2 (of
# those, the ones the CPU it ran on took two ticks or more before: a
# preempting scheduler runs it at its first, a busy loop whose 5 ms slice
# must end first takes its second about half the time); kwu_runs /
# kwu_wait_max_us (unbound kworkers), other_wait_max_us / other_wait_comm
# (the longest any other task waited to run).
kernel_view() {
	awk -v tick="$TICK_NS" -v tids="$3" -v kth="$(kthreads)" '
	# due(c, r): when another task must have left reserved CPU c, for a
	# reservation that began at r: the second tick CPU c took after r
	# (the first may come before the timer has published the change;
	# the one after ends the slice of the task), with a tenth of a tick
	# for the handler and the switch.  Ticks are those of the CPU itself
	# (hrtimer events): under TCG a vCPU runs only when the round robin
	# of QEMU reaches it, so one tick of the clock is not one tick of the
	# CPU (three guest runs saw tasks in progress at the change leave
	# 6-8 ms after it).
	function due(c, r,   i) {
		i = ticks(c, r) + 1
		if (i + 1 > nt[c]) return 1e30
		return tk[c, i + 1] + tick / 10
	}
	# ticks(c, r): how many ticks CPU c took up to time r
	function ticks(c, r,   lo, hi, m) {
		lo = 1; hi = nt[c] + 0
		while (lo <= hi) {
			m = int((lo + hi) / 2)
			if (tk[c, m] > r) hi = m - 1; else lo = m + 1
		}
		return lo - 1
	}
	# shootdowns(c, s, e): TLB shootdowns CPU c sent from s to e
	function shootdowns(c, s, e,   i, n) {
		for (i = 1; i <= nipi[c]; i++)
			if (ipi[c, i] >= s && ipi[c, i] <= e) n++
		return n + 0
	}
	# lockwait(c, s, e): the longest wait for a contended lock on CPU c
	# from s to e, in us
	function lockwait(c, s, e,   i, m, x) {
		for (i = 1; i <= nlk[c]; i++) {
			if (lke[c, i] < s || lks[c, i] > e) continue
			x = lke[c, i] - lks[c, i]; if (x > m) m = x
		}
		return m / 1000
	}
	function bound(comm) {
		return comm ~ /\/[0-9]+(:[0-9]+H?)?$/ && comm !~ /^kworker\/u/
	}
	function other(pid, comm, prio) {
		return pid != 0 && !(pid in tgt) && !bound(comm) && prio >= 100
	}
	function field(s, k,   i, r) {
		i = index(s, " " k "="); if (!i) return ""
		r = substr(s, i + length(k) + 2); sub(/ .*/, "", r); return r
	}
	function held(c, t,   k) {
		for (k = 1; k <= ni; k++)
			if (t >= is[k] && t <= ie[k] && ((k "," c) in ires)) return k
		return 0
	}
	function segment(c, pid, comm, prio, s, e,   k, lo, hi, x, d) {
		if (pid in tgt) {
			if (held(c, e)) tres += e - s; else tsh += e - s
			return
		}
		if (!other(pid, comm, prio)) return
		for (k = 1; k <= ni; k++) {
			if (!((k "," c) in ires)) continue
			lo = s > is[k] ? s : is[k]; hi = e < ie[k] ? e : ie[k]
			if (hi <= lo) continue
			ores += hi - lo
			d = due(c, is[k])
			x = hi - (lo > d ? lo : d)
			if (x <= 0)
				continue
			if (++nlist <= 5)
				latelist = latelist sprintf("%s%d/%d/%s/%d/%d/%s/%d/%d",
				    latelist == "" ? "" : ";", c, pid, comm,
				    (s - is[k]) / 1000, (e - is[k]) / 1000,
				    s < is[k] ? "running" : "placed",
				    shootdowns(c, s, e), lockwait(c, s, e))
			if (pid in kt) {
				klate++; klatens += x
			} else if (s < is[k]) {
				hlate++; hlatens += x
			} else {
				late++; latens += x
				if (x > latemax) { latemax = x; latecomm = comm }
			}
		}
	}
	function tgt_waits(pid, t) {
		if (!(pid in tw)) { tw[pid] = t; nwait++ }
	}
	function do_switch(c, t, ev,   pp, pc, pr, np, nc, nr, x) {
		pp = field(ev, "prev_pid") + 0; pc = field(ev, "prev_comm")
		pr = field(ev, "prev_prio") + 0
		np = field(ev, "next_pid") + 0; nc = field(ev, "next_comm")
		nr = field(ev, "next_prio") + 0
		if (c in since) segment(c, pp, pc, pr, since[c], t)
		if ((c in pend) && other(pp, pc, pr)) {
			x = t - pend[c]; if (x > evmax) evmax = x
			if (x > tick) evlate++
		}
		delete pend[c]
		if (field(ev, "prev_state") ~ /^R/ && pp != 0) {
			if (pp in tgt) tgt_waits(pp, t); else wk[pp] = t
		}
		if (np in tgt) {
			if (np in tw) {
				x = t - tw[np]; twn++
				if (x > twmax) twmax = x
				if (x > tick) twlate++
				if (ticks(c, t) - ticks(c, tw[np]) >= 2)
					twtk2++
				delete tw[np]; nwait--
			}
		} else if (np in wk) {
			x = t - wk[np]
			if (nc ~ /^kworker\/u/) { kwu++; if (x > kwmax) kwmax = x }
			if (other(np, nc, nr) && x > owmax) { owmax = x; owcomm = nc }
			delete wk[np]
		}
		cur[c] = np; curc[c] = nc; curp[c] = nr; since[c] = t
		if (nwait > 0 && other(np, nc, nr) && held(c, t)) pend[c] = t
	}
	function do_wake(t, ev,   pid, c) {
		pid = field(ev, "pid") + 0
		if (!(pid in tgt)) { wk[pid] = t; return }
		tgt_waits(pid, t)
		for (c in cur)
			if (!(c in pend) && other(cur[c], curc[c], curp[c]) &&
			    held(c, t))
				pend[c] = t
	}
	BEGIN { n = split(tids, a, ","); for (i = 1; i <= n; i++) tgt[a[i]] = 1
		n = split(kth, a, ","); for (i = 1; i <= n; i++) kt[a[i]] = 1 }
	FILENAME == ARGV[1] {
		ni++; is[ni] = $1; ie[ni] = $2
		n = split($3, a, ","); for (i = 1; i <= n; i++) ires[ni "," a[i]] = 1
		next
	}
	{
		p = index($0, ": sched_")
		if (!p) p = index($0, ": hrtimer_expire_entry:")
		if (!p) p = index($0, ": tlb_flush:")
		if (!p) p = index($0, ": contention_")
		if (!p) next
		head = substr($0, 1, p - 1); ev = substr($0, p + 2)
		if (!match(head, /\[[0-9]+\]/)) next
		# (busybox awk reads a leading 0 as octal: "1" prefixed)
		c = substr(head, RSTART + 1, RLENGTH - 2)
		c = ("1" c) - ("1" substr("000000", 1, length(c)))
		nf = split(head, h, " "); split(h[nf], tp, ".")
		t = tp[1] * 1e9 + (("1" substr(tp[2] "000000", 1, 6)) - 1e6) * 1000
		last = t
		if (ev ~ /^hrtimer_expire_entry:.*function=tick_/)
			tk[c, ++nt[c]] = t
		else if (ev ~ /^tlb_flush:/)
			ipi[c, ++nipi[c]] = t
		else if (ev ~ /^contention_begin:/)
			lkb[c] = t
		else if (ev ~ /^contention_end:/ && (c in lkb)) {
			lks[c, ++nlk[c]] = lkb[c]; lke[c, nlk[c]] = t
			delete lkb[c]
		}
		else if (ev ~ /^sched_switch:/) do_switch(c, t, ev)
		else if (ev ~ /^sched_wakeup/) do_wake(t, ev)
	}
	END {
		for (c in since) segment(c, cur[c], curc[c], curp[c], since[c], last)
		printf "intervals=%d other_res_us=%d late_runs=%d late_us=%d late_max_us=%d late_comm=%s evict_max_us=%d evict_late=%d tgt_res_us=%d tgt_shared_us=%d tgt_wakes=%d tgt_wait_max_us=%d tgt_wait_late=%d kwu_runs=%d kwu_wait_max_us=%d other_wait_max_us=%d other_wait_comm=%s late_list=%s kth_late_runs=%d kth_late_us=%d tgt_wait_ticks2=%d held_late_runs=%d held_late_us=%d\n",
			ni, ores / 1000, late, latens / 1000, latemax / 1000,
			latecomm == "" ? "-" : latecomm, evmax / 1000, evlate,
			tres / 1000, tsh / 1000, twn, twmax / 1000, twlate, kwu,
			kwmax / 1000, owmax / 1000, owcomm == "" ? "-" : owcomm,
			latelist == "" ? "-" : latelist, klate, klatens / 1000,
			twtk2, hlate, hlatens / 1000
	}' "$2" "$1"
}
# kv WORDS KEY: the value of KEY=... in WORDS
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# tick_ns: the kernel's tick, from jiffies over one second
tick_ns() {
	local a b
	a=$(awk '/^now at/ { n = $3 } /^jiffies:/ { print $2, n; exit }' /proc/timer_list)
	sleep 1
	b=$(awk '/^now at/ { n = $3 } /^jiffies:/ { print $2, n; exit }' /proc/timer_list)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		if (y[2] <= x[2] || y[1] <= x[1]) exit 1
		hz = (y[1] - x[1]) * 1e9 / (y[2] - x[2]); n = split("100 250 300 1000", c, " ")
		for (i = 1; i <= n; i++) { d = hz - c[i]; if (d < 0) d = -d
			if (i == 1 || d < bd) { bd = d; best = c[i] } }
		printf "%d\n", 1e9 / best }'
}

# engine_notes: what the engine saw, as notes (why a demand was what it was)
# and the poll stream's newest windows of slots 0 and 1 (seq sum_ns runq_ns
# wait_permille idle_permille: what the policy's slack comes from)
engine_notes() {
	local slot
	satfeedctl show 2>&1 | sed 's/^/#   engine: /' | head -12
	for slot in 0 1; do
		bpftool -j map lookup pinned $ROOT/sf_streams \
			key $((slot * 3 + 2)) 0 0 0 2>/dev/null | tr ',{}' '\n\n\n' |
			grep -E '^"(seq|sum_ns|runq_ns|wait_permille|idle_permille)":' |
			paste -d' ' - - - - - | sort -t: -k2 -n | tail -3 |
			sed "s/^/#   poll slot $slot: /"
	done
}

# counting antagonists (antagonist, ant_count)
. /busyloop.sh

# load RATE SECONDS [PORT]: sfload against the server; its summary as notes
load() {
	sfload -r "$1" -c 4 -d "$2" -W 0.5 127.0.0.1:"${3:-$PORT}" \
		> /tmp/load.out 2>&1
	sed 's/^/#   sfload: /' /tmp/load.out | tail -4
}

# ---- bad input, before anything runs ----
note "kernel $(uname -r), $NCPU CPUs"
check "sched_ext is present and disabled at boot" scx_disabled
check "no engine: refused with exit 3, one line" \
	expect_rc 3 scx_satfeed -p 1
check "nothing attached after the refusal" no_scx_left

sfserver -p $PORT -w "$WORK_US" -t 1 -q &
SRV=$!
sleep 0.5
check "engine loaded (fentry), server $SRV watched" engine_load
check "target not watched: refused with exit 6" \
	expect_rc 6 scx_satfeed -p 1
check "more reserved CPUs than exist: refused with exit 2" \
	expect_rc 2 scx_satfeed -p "$SRV" --max-reserved "$NCPU"
check "no CPU left for the rest: refused with exit 2" \
	expect_rc 2 scx_satfeed -p "$SRV" --min-shared "$NCPU"
check "--test-stall without --watchdog-ms: refused with exit 2" \
	expect_rc 2 scx_satfeed -p "$SRV" --test-stall
check "a slot past satfeed's: refused with exit 2" \
	expect_rc 2 scx_satfeed -s 100000
check "nothing attached after the refusals" no_scx_left

dry_run() {
	scx_satfeed -p "$SRV" --dry-run --json --interval-ms 200 \
		--duration 1.5 > /tmp/dry.json &&
		grep -q '"dry_run":true' /tmp/dry.json && no_scx_left
}
check "--dry-run decides without attaching" dry_run
# without --release-ms: 2 x the engine's age bound (sf_info.max_age_ns)
release_default() {
	local age
	age=$(jget "$(satfeedctl show --json | tr -d '\n')" max_age_ns)
	head -1 /tmp/dry.json
	[ "${age:-0}" -gt 0 ] &&
	grep -q "release after $((2 * age / 1000000)) ms (2 x the engine's age bound)" /tmp/dry.json
}
check "--release-ms defaults to 2 x the engine's age bound" release_default

# ---- the server's capacity, alone, and the kernel's tick ----
# capacity: requests answered per second of the server's CPU time (its
# schedstat run time) over a short run at a rate it serves easily
capacity() {
	local t0 t1 rep n
	t0=$(awk '{ print $1 }' /proc/"$SRV"/schedstat)
	rep=$(sfload -r 200 -c 4 -d 2 -W 0 -G --json 127.0.0.1:$PORT 2>&1)
	t1=$(awk '{ print $1 }' /proc/"$SRV"/schedstat)
	n=$(jget "$rep" replies)
	CAP=$(awk -v n="$n" -v d=$((t1 - t0)) 'BEGIN {
		if (n + 0 < 100 || d <= 0) exit 1; printf "%.0f", n * 1e9 / d }') ||
		{ echo "$rep"; return 1; }
	LOW_RATE=$((CAP * LOW_PCT / 100))
	HIGH_RATE=$((CAP * HIGH_PCT / 100))
	[ "$LOW_RATE" -gt 0 ] && [ "$HIGH_RATE" -gt "$LOW_RATE" ]
}
check "capacity measured: the server answers $WORK_US us requests alone" capacity
echo "SCX-RESULT capacity=$CAP low_rate=$LOW_RATE high_rate=$HIGH_RATE"
measure_tick() { TICK_NS=$(tick_ns) && [ "$TICK_NS" -gt 0 ]; }
check "the kernel's tick measured from jiffies" measure_tick
note "tick ${TICK_NS:-?} ns"
check "the trace buffer works (sched_switch, clock mono)" \
	eval 'trace_on && sleep 0.2 && trace_off /tmp/t0.trace'
SRV_TIDS=$(tids "$SRV")
SRV_THREADS=$(tr ',' '\n' <<<"$SRV_TIDS" | wc -l)
# the most a reservation may hold: the threads, rounded up to whole cores
SRV_CORES_CPUS=$(( (SRV_THREADS + SMT - 1) / SMT * SMT ))
note "server threads: $SRV_TIDS"
note "topology: $SMT threads per core; CPU 0's siblings $(cat $SYSCPU/cpu0/topology/thread_siblings_list), last-level cache $(llc 0)"

# ---- antagonists, the scheduler, low and high load ----
ANTS=
for i in $(seq $((NCPU * ANTAGONISTS))); do
	antagonist &
	ANTS="$ANTS $!"
done
note "antagonists:$ANTS"

check "scheduler attached: state enabled, ops satfeed" scx_start scx1
# (the start line follows the attach, which scx_start waited for)
check "an explicit --release-ms $RELEASE_MS overrides the engine's bound" \
	wait_for 5 grep -q "release after $RELEASE_MS ms (--release-ms)" \
	/tmp/scx1.json
# the scheduler's object declares every engine map (satfeed_maps.bpf.h):
# those it reads are the engine's, the others are not created at all
one_map() { [ "$(bpftool map show 2>/dev/null | grep -c " name $1 ")" = 1 ]; }
for m in sf_info sf_targets sf_streams sf_verdict; do
	check "one $m map while the scheduler runs: the engine's" one_map $m
done
check "a second scheduler: refused with exit 9" \
	expect_rc 9 scx_satfeed -p "$SRV"
check "the first scheduler still runs" scx_enabled

L0=$(lines /tmp/scx1.json)
load "$LOW_RATE" "$PHASE"
L1=$(lines /tmp/scx1.json)
for a in $ANTS; do eval "ant0_$a=$(ant_count "$a")"; done
trace_on
load "$HIGH_RATE" "$PHASE"
check "the kernel's trace of the high load is complete" trace_off /tmp/hi.trace
engine_notes
L2=$(lines /tmp/scx1.json)
for a in $ANTS; do eval "ant1_$a=$(ant_count "$a")"; done
sleep "$SETTLE"
L3=$(lines /tmp/scx1.json)

read -r res_lo perf_lo lvl_lo max_lo <<<"$(phase /tmp/scx1.json "$L0" "$L1")"
read -r res_hi perf_hi lvl_hi max_hi <<<"$(phase /tmp/scx1.json "$L1" "$L2")"
echo "SCX-RESULT phase=low rate=$LOW_RATE reserved=$res_lo max=$max_lo perf=$perf_lo level=$lvl_lo"
echo "SCX-RESULT phase=high rate=$HIGH_RATE reserved=$res_hi max=$max_hi perf=$perf_hi level=$lvl_hi"
higher() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
check "CPUs reserved at the high rate ($res_hi)" higher "$res_hi" 0
check "never more CPUs reserved than the server has threads, in whole cores ($max_lo, $max_hi <= $SRV_CORES_CPUS: $SRV_THREADS threads, $SMT per core)" \
	test "$max_lo" -le "$SRV_CORES_CPUS" -a "$max_hi" -le "$SRV_CORES_CPUS"
check "reserved CPUs at full performance under load ($perf_hi)" \
	test "$perf_hi" = 1024

quiet=$(last /tmp/scx1.json)
q_res=$(jget "$quiet" reserved)
echo "SCX-RESULT phase=after reserved=$q_res"
check "after the load: nothing reserved ($q_res)" test "$q_res" = 0
# all_perf FILE FROM TO PERF: every CPU's perf target in those lines is PERF
all_perf() {
	[ -z "$(sed -n "$(($2 + 1)),$3p" "$1" | grep -o '"perf":[0-9]*' |
		grep -v "\"perf\":$4\$")" ]
}
check "without --perf-base no CPU is ever capped (perf 1024 throughout)" \
	all_perf /tmp/scx1.json 0 "$L3" 1024

res_intervals /tmp/scx1.json "$L1" "$L2" > /tmp/hi.res
check "every reservation of the high load is whole cores of one cache ($SMT threads per core)" \
	whole_cores /tmp/hi.res
KV=$(kernel_view /tmp/hi.trace /tmp/hi.res "$SRV_TIDS")
echo "SCX-RESULT kernel-high $KV"
kernel_checks() {
	local w=$1 kv=$2
	check "$w: reservations held during the load ($(kv "$kv" intervals))" \
		test "$(kv "$kv" intervals)" -gt 0
	# A kernel thread can hold a CPU past any scheduler's request (a
	# section with preemption or migration disabled: a preempted task with
	# migration disabled comes back pinned to its CPU), so its time there
	# is reported, not asserted: a 7.x guest saw an unbound kworker run
	# 5.6 ms past the bound once in three runs, with no run of another
	# task placed there (the scheduler's misplaced and moved both 0).  The
	# check after a server thread became runnable (next) covers every task.
	note "$w: kernel threads past the second tick into the reservation: $(kv "$kv" kth_late_runs) runs, $(kv "$kv" kth_late_us) us"
	# Runs in progress at the change that outlast the second tick are
	# reported, not asserted: the task's-CPU fix (2f3f11f) removed most,
	# but a fresh-clone CI run of 2026-11-28 still saw sfload, running
	# at the change, stay 20 ms (SCX_SLICE_DFL: a re-queue with migration
	# disabled?) in two phases.  The check after a server thread became
	# runnable (next) holds them all to one tick.
	note "$w: runs past the second tick (CPU/pid/comm/start/end us/kind/TLB shootdowns it sent/longest lock wait us): $(kv "$kv" late_list); in progress at the change: $(kv "$kv" held_late_runs) runs, $(kv "$kv" held_late_us) us"
	check "$w: no other task placed on a reserved CPU past its second tick into the reservation ($(kv "$kv" late_runs) runs, $(kv "$kv" late_us) us, longest $(kv "$kv" late_max_us) us: $(kv "$kv" late_comm))" \
		test "$(kv "$kv" late_runs)" = 0
	check "$w: no other task on a reserved CPU past one tick after a server thread became runnable (longest $(kv "$kv" evict_max_us) us)" \
		test "$(kv "$kv" evict_late)" = 0
	check "$w: the server ran on reserved CPUs ($(kv "$kv" tgt_res_us) us) more than on shared ones ($(kv "$kv" tgt_shared_us) us)" \
		test "$(kv "$kv" tgt_res_us)" -gt "$(kv "$kv" tgt_shared_us)"
}
kernel_checks kernel "$KV"
mis=$(jget "$quiet" misplaced)
moved=$(jget "$quiet" moved)
echo "SCX-RESULT misplaced=$mis moved=$moved unbound=$(jget "$quiet" unbound) pinned=$(jget "$quiet" pinned) changes=$(jget "$quiet" changes) spilled=$(jget "$quiet" spilled) preempts=$(jget "$quiet" preempts)"
# the kernel's own count of tasks put back on their CPU without
# ops.enqueue because migration was disabled (6.15+): 0 since the scheduler
# sets SCX_OPS_ENQ_MIGRATION_DISABLED (its own count is "pinned")
note "sched_ext events: $(grep -s ENQ_SKIP /sys/kernel/sched_ext/root/events | tr -s ' \n' '  ')"
note "the scheduler's per-CPU counts: $(grep -o '"cpus":.*' <<<"$quiet")"
check "the scheduler's own count: no other task run on a reserved CPU past the grace ($mis; $moved moves)" \
	test "$mis" = 0
for a in $ANTS; do
	eval "d=\$((ant1_$a - ant0_$a))"
	check "antagonist $a progressed during the high load ($d iterations)" \
		test "$d" -gt 0
done
check "scheduler first: exits 0, sched_ext disabled" scx_stop scx1

# ---- wake-up preemption: nothing reserved, every CPU busy ----
# The server's threads may use every CPU but 0, where sfload runs: else
# sfload, which blocks right after each send, frees the CPU the wake-up
# came from, and the server runs there with or without a preempting kick.
# 20 ms slices: without a kick the server waits for a busy loop's slice
# to end.  (Wake-ups later than a tick, 2026-11-27/28: with the kick 20
# of 125, 34/155, 51/143, 39/152; with it taken out of preempt_for 85 of
# 155 and 78/141.  With sfload free and 5 ms slices the kickless copy
# passed, 14 of 232.)
check "scheduler with nothing reserved (--max-reserved 0, 20 ms slices)" \
	scx_start pre --max-reserved 0 --slice-us 20000
L0=$(lines /tmp/pre.json)
for t in $(ls /proc/"$SRV"/task); do
	taskset -p -c 1-$((NCPU - 1)) "$t" > /dev/null
done
trace_on
taskset -c 0 sfload -r "$LOW_RATE" -c 4 -d "$((PHASE / 2))" -W 0.5 \
	127.0.0.1:"$PORT" > /tmp/load.out 2>&1
sed 's/^/#   sfload: /' /tmp/load.out | tail -4
check "the kernel's trace of the wake-ups is complete" trace_off /tmp/pre.trace
for t in $(ls /proc/"$SRV"/task); do
	taskset -p -c 0-$((NCPU - 1)) "$t" > /dev/null
done
L1=$(lines /tmp/pre.json)
KV=$(kernel_view /tmp/pre.trace /dev/null "$SRV_TIDS")
echo "SCX-RESULT kernel-preempt $KV"
s=$(last /tmp/pre.json)
check "wake-ups preempted other tasks ($(jget "$s" preempts) kicks), nothing reserved ($(jget "$s" reserved))" \
	eval '[ "$(jget "$s" preempts)" -gt 0 ] && [ "$(jget "$s" reserved)" = 0 ]'
# Under single-threaded TCG a kicked vCPU runs only when QEMU's round robin
# reaches it: even an idle reserved CPU took longer than a tick for a third
# of the wake-ups (docs/sched_ext.md), so the bound here is the median,
# which the kickless copy above missed
wake_ok() {
	local n=$(kv "$KV" tgt_wakes) l=$(kv "$KV" tgt_wait_late)
	[ "$n" -gt 0 ] && [ $((l * 2)) -le "$n" ]
}
note "kernel: $(kv "$KV" tgt_wait_ticks2) of $(kv "$KV" tgt_wakes) server wake-ups ran after two ticks or more of their CPU"
check "kernel: most of the server's wake-ups ran within one tick ($(kv "$KV" tgt_wait_late) of $(kv "$KV" tgt_wakes) later; longest $(kv "$KV" tgt_wait_max_us) us)" \
	wake_ok
check "scheduler stopped: exits 0" scx_stop pre

# ---- no starvation: 2x as many busy threads as CPUs, nothing reserved ----
STARVE=$((60 * WATCHDOG_MS / 30000))
busy_server() {
	sfserver -p $BPORT -w 10000 -t $((2 * NCPU)) -q &
	BSRV=$!
	sleep 0.5
	satfeedctl add --pid "$BSRV"
}
check "a server with $((2 * NCPU)) threads, watched" busy_server
# kworker load: every BPF map freed goes to the unbound workqueue
# (stopped by /tmp/kw.stop, not by a signal: a killed loop leaves its
# bpftool running, which then pins after the loop's rm -f)
kw_load() {
	local k=0
	while [ ! -e /tmp/kw.stop ]; do
		bpftool map create /sys/fs/bpf/scxkw type array key 4 value 4 \
			entries 1 name scxkw 2>/dev/null
		rm -f /sys/fs/bpf/scxkw
		k=$((k + 1))
		echo "$k" > /tmp/kw.count
	done
}
rm -f /tmp/kw.stop
kw_load &
KW=$!
TARGET="-p $BSRV"
check "scheduler for it, nothing reserved, watchdog $WATCHDOG_MS ms" \
	scx_start starve --max-reserved 0 --watchdog-ms "$WATCHDOG_MS"
TARGET=
# every thread busy: twice the rate the CPUs could serve at 10 ms a request
BRATE=$((2 * CAP * NCPU * WORK_US / 10000 + 1))
sample() {
	local a
	echo "$(cat /tmp/kw.count 2>/dev/null || echo 0) $(lines /tmp/starve.json)"
	for a in $ANTS; do ant_count "$a"; done | paste -sd' ' -
}
S0=$(sample)
trace_on
sfload -r "$BRATE" -c $((2 * NCPU)) -d "$STARVE" -W 0 -D 1 -G --json \
	127.0.0.1:$BPORT > /tmp/busy.json 2>&1 &
LD=$!
sleep $((STARVE / 2))
S1=$(sample)
wait $LD
S2=$(sample)
check "the kernel's trace of the busy server is complete" \
	trace_off /tmp/starve.trace
note "samples (kworker loops, stats lines, antagonists): $S0 / $S1 / $S2"
check "after $STARVE s of $((2 * NCPU)) busy threads: still enabled, not stopped" \
	eval 'scx_enabled && kill -0 "$SCX_PID"'
# grew A B: every number of line B is larger than the same one of line A
grew() {
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) if (y[i] + 0 <= x[i] + 0) exit 1 }'
}
check "the kworker load, the stats and every antagonist progressed in the first half" \
	grew "$(tr '\n' ' ' <<<"$S0")" "$(tr '\n' ' ' <<<"$S1")"
check "... and in the second half" \
	grew "$(tr '\n' ' ' <<<"$S1")" "$(tr '\n' ' ' <<<"$S2")"
check "the busy server was served ($(jget "$(cat /tmp/busy.json)" replies) replies)" \
	test "$(jget "$(cat /tmp/busy.json)" replies)" -gt 0
KV=$(kernel_view /tmp/starve.trace /dev/null "$(tids "$BSRV")")
echo "SCX-RESULT kernel-starve threads=$((2 * NCPU)) rate=$BRATE seconds=$STARVE $KV"
check "kernel: unbound kworkers ran ($(kv "$KV" kwu_runs) runs, longest wait $(kv "$KV" kwu_wait_max_us) us)" \
	test "$(kv "$KV" kwu_runs)" -gt 0
check "kernel: no other task waited a quarter of the watchdog to run (longest $(kv "$KV" other_wait_max_us) us: $(kv "$KV" other_wait_comm))" \
	test "$(kv "$KV" other_wait_max_us)" -lt $((WATCHDOG_MS * 250))
check "scheduler stopped after the busy server: exits 0" scx_stop starve
touch /tmp/kw.stop
wait "$KW" 2>/dev/null
check "busy server stopped, target removed" \
	eval 'satfeedctl remove --pid "$BSRV" && kill "$BSRV" && wait "$BSRV" 2>/dev/null; ! kill -0 "$BSRV" 2>/dev/null'

# ---- a cgroup target ----
# cgsrv: a second server, started inside $CGROUP (this subshell joins it,
# then becomes the server)
cgsrv() {
	mkdir -p "$CGROUP" &&
	{ (echo "$BASHPID" > "$CGROUP/cgroup.procs" &&
	   exec sfserver -p $CPORT -w "$WORK_US" -t 1 -q) & } &&
	CSRV=$! && sleep 0.5 &&
	grep -qx "$CSRV" "$CGROUP/cgroup.procs" &&
	satfeedctl add --cgroup "$CGROUP"
}
check "a server in cgroup $CGROUP, watched with add --cgroup" cgsrv
note "cgroup server $CSRV; cgroup id $(stat -c %i "$CGROUP")"
TARGET="-c $CGROUP"
check "scheduler on the cgroup target, --perf-base 512: state enabled" \
	scx_start cg --perf-base 512
TARGET=
L0=$(lines /tmp/cg.json)
trace_on
load "$HIGH_RATE" "$PHASE" "$CPORT"
check "the kernel's trace of the cgroup load is complete" \
	trace_off /tmp/cg.trace
engine_notes
L1=$(lines /tmp/cg.json)
sleep "$SETTLE"
L2=$(lines /tmp/cg.json)
read -r res_cg perf_cg lvl_cg max_cg <<<"$(phase /tmp/cg.json "$L0" "$L1")"
echo "SCX-RESULT phase=cgroup rate=$HIGH_RATE reserved=$res_cg max=$max_cg perf=$perf_cg level=$lvl_cg"
check "cgroup target: CPUs reserved under load ($res_cg)" \
	higher "$res_cg" 0
# perf_split FILE FROM TO: in every line with CPUs reserved (and read
# whole: as many CPUs flagged as reserved), reserved CPUs at 1024 and the
# others at 512
perf_split() {
	awk -v from="$2" -v to="$3" "$GET_AWK"'
	NR > from && NR <= to && /^\{/ && get($0, "reserved") > 0 {
		nc = split(substr($0, index($0, "\"cpus\":[") + 8), cpu, /[}],[{]/)
		k = 0
		for (i = 1; i <= nc; i++) k += get(cpu[i], "reserved") == 1
		if (k != get($0, "reserved")) { torn++; next }
		n++
		for (i = 1; i <= nc; i++) {
			r = get(cpu[i], "reserved"); p = get(cpu[i], "perf")
			if (p != (r == 1 ? 1024 : 512)) {
				bad++; print "cpu " get(cpu[i], "cpu") " reserved " r " perf " p
			}
		}
	}
	END { print n + 0, "lines,", bad + 0, "wrong,", torn + 0, "torn"
		exit !(n > 0 && !bad) }' "$1"
}
check "cgroup: while reserved, reserved CPUs at 1024, the others at --perf-base 512" \
	perf_split /tmp/cg.json "$L0" "$L1"
check "cgroup: released after the load, every CPU back to 1024 (no permanent cap)" \
	eval '[ "$(jget "$(last /tmp/cg.json)" reserved)" = 0 ] &&
	      all_perf /tmp/cg.json "$((L2 - 1))" "$L2" 1024'
res_intervals /tmp/cg.json "$L0" "$L1" > /tmp/cg.res
check "cgroup: every reservation is whole cores of one cache ($SMT threads per core)" \
	whole_cores /tmp/cg.res
KV=$(kernel_view /tmp/cg.trace /tmp/cg.res "$(tids "$CSRV")")
echo "SCX-RESULT kernel-cgroup $KV"
q=$(last /tmp/cg.json)
echo "SCX-RESULT cgroup-counts misplaced=$(jget "$q" misplaced) moved=$(jget "$q" moved) unbound=$(jget "$q" unbound) pinned=$(jget "$q" pinned)"
note "the scheduler's per-CPU counts: $(grep -o '"cpus":.*' <<<"$q")"
kernel_checks "cgroup, kernel" "$KV"
check "cgroup: scheduler stopped, exits 0" scx_stop cg
cg_gone() {
	satfeedctl remove --cgroup "$CGROUP" && kill "$CSRV" || return 1
	wait "$CSRV" 2>/dev/null
	wait_for 5 rmdir "$CGROUP"
}
check "cgroup server stopped, target removed, cgroup removed" cg_gone

# ---- the error exit: a stall the kernel's watchdog catches ----
# stall: the targets' queue is never dispatched; a request wakes the
# server, which then waits until the watchdog stops the scheduler
stall() {
	local rc i
	scx_satfeed -p "$SRV" --min-shared "$MIN_SHARED" --test-stall \
		--watchdog-ms "$WATCHDOG_MS" > /tmp/stall.out 2> /tmp/stall.err &
	SCX_PID=$!
	wait_for 10 scx_enabled || { cat /tmp/stall.err; return 1; }
	sfload -r 50 -c 1 -d 1 -W 0 -D 0.5 127.0.0.1:$PORT > /dev/null 2>&1
	for i in $(seq 100); do
		kill -0 "$SCX_PID" 2>/dev/null || break
		sleep 0.2
	done
	wait "$SCX_PID"
	rc=$?
	cat /tmp/stall.out /tmp/stall.err
	[ "$rc" = 1 ]
}
check "--test-stall: the kernel's watchdog stops the scheduler, exit 1" stall
stall_reason() {
	[ "$(wc -l < /tmp/stall.err)" = 1 ] &&
	grep -q "scheduler exited: stall (watchdog) (kind 1026, code 0): runnable task stall: sfserver\[[0-9]*\] failed to run for [0-9.]*s" /tmp/stall.err
}
check "the kernel's exit reason and message printed, one line" stall_reason
check "after the stall: sched_ext disabled, nothing attached" \
	wait_for 5 no_scx_left
dmesg_stall() {
	dmesg | grep -q 'sched_ext: BPF scheduler "satfeed" disabled (runnable task stall)' &&
	dmesg | grep -qE 'sched_ext: satfeed: sfserver\[[0-9]+\] failed to run for'
}
check "dmesg has the stall: disabled (runnable task stall)" dmesg_stall

check "scheduler restarted: state enabled" scx_start scx2
L0=$(lines /tmp/scx2.json)
load "$HIGH_RATE" "$PHASE"
# reserved_in FILE FROM: a line after FROM with CPUs reserved
reserved_in() {
	tail -n +"$(($2 + 1))" "$1" | grep -q '"reserved":[1-9]' && return
	tail -n 3 "$1" | cut -c 1-600
	return 1
}
# released FILE ENGINE: the scheduler runs on, sees the engine ENGINE and
# reserves nothing
released() {
	local s
	s=$(last "$1")
	scx_enabled && [ "$(jget "$s" engine)" = "\"$2\"" ] &&
		[ "$(jget "$s" reserved)" = 0 ] && return
	cut -c 1-600 <<<"$s"
	return 1
}
check "the restarted scheduler reserves CPUs under load" \
	reserved_in /tmp/scx2.json "$L0"

check "engine unloaded and reloaded while the scheduler runs" \
	eval "engine_unload && engine_load"
sleep "$SETTLE"
check "after the reload: still enabled, engine 'reloaded', nothing reserved" \
	released /tmp/scx2.json reloaded
check "scheduler stopped after the reload: exits 0" scx_stop scx2

check "scheduler restarted on the new engine" scx_start scx3
L0=$(lines /tmp/scx3.json)
load "$HIGH_RATE" "$PHASE"
engine_notes
check "it reserves CPUs from the new engine's windows" \
	reserved_in /tmp/scx3.json "$L0"

check "engine first: unloaded while the scheduler runs" engine_unload
sleep "$SETTLE"
check "without the engine: still enabled, engine 'gone', nothing reserved" \
	released /tmp/scx3.json gone
check "scheduler stopped last: exits 0, sched_ext disabled" scx_stop scx3

kill $ANTS "$SRV" 2>/dev/null
wait 2>/dev/null
bpffs_empty() {
	[ -z "$(ls -A /sys/fs/bpf)" ] && return 0
	ls -R /sys/fs/bpf | head -20
	return 1
}
check "nothing left in bpffs" bpffs_empty

# ---- the kernel's log ----
dmesg | grep -i 'sched_ext' | sed 's/^/#   /'
check "7 enable lines, 6 disable lines from user space, 1 stall" \
	eval '[ "$(dmesg | grep -c "sched_ext: BPF scheduler \"satfeed\" enabled")" = 7 ] &&
	      [ "$(dmesg | grep -c "sched_ext: BPF scheduler \"satfeed\" disabled (unregistered from user space)")" = 6 ] &&
	      [ "$(dmesg | grep -c "sched_ext: BPF scheduler \"satfeed\" disabled (runnable task stall)")" = 1 ]'
# the provoked stall's two lines aside
refuse "no other sched_ext error, stall or watchdog message" \
	eval 'dmesg | grep -vE "disabled \(runnable task stall\)|sched_ext: satfeed: sfserver\[[0-9]+\] failed to run for" |
	      grep -iE "sched_ext.*(error|stall|watchdog)|runnable task stall|disabled \((runtime error|.*stall)"'

checks_done
