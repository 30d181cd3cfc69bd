# SPDX-License-Identifier: GPL-2.0
# tests/vm/guest/busyloop.sh - the counting busy loop of the sched_ext
# guest scripts: scx-guest.sh's antagonists and scx-bench-guest.sh's busy
# loops.  Sourced.  A loop's work is the count it writes, not its CPU time,
# which a single-threaded TCG guest misreports (docs/sched_ext.md).

# antagonist: count forever; every 1024 iterations the count goes to
# /tmp/ant.PID (PID: the loop's own, $BASHPID)
antagonist() {
	local i=0
	while :; do
		i=$((i + 1))
		[ $((i & 1023)) = 0 ] && echo "$i" > /tmp/ant.$BASHPID
	done
}
# ant_count PID: the iterations busy loop PID has written (0: none yet)
ant_count() { cat /tmp/ant."$1" 2>/dev/null || echo 0; }
