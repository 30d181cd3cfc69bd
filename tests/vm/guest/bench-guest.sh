#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The overhead benchmark, run as /test.sh by the guest's /init
# when tests/vm/bench.sh boots the Debian 6.12 guest: the only kernel here
# that permits fentry, so satfeed's fentry mode can be measured against the
# paper's bpftrace method (tests/bench/listing1.bt) and both floors.
#
#   1. mounts what bpftrace and sfbench need if /init did not: tracefs (the
#      raw_syscalls tracepoints' ids), bpffs (sfbench's private pin root),
#      debugfs
#   2. sfbench --attach MODE --bpftrace /satfeed/listing1.bt for each
#      mode of SF_MODES (default "fentry tp_btf"): none / empty / satfeed /
#      bpftrace interleaved, with BPF run-time accounting per program
#   3. prints each mode's table, results ('key value') and rounds between
#      markers the host (tests/vm/bench.sh) cuts out of the console log:
#        SATFEED-BENCH-BEGIN <kind> <mode>  ...  SATFEED-BENCH-END <kind> <mode>
#      kind: table, results, rounds, log (sfbench's stderr), bpftrace
#   4. checks that nothing was left in bpffs
#
# Exit status 0 when every sfbench run succeeded (every figure present and
# finite, satfeed and bpftrace counted the traced worker's sends) and bpffs
# is empty again.  Figures are never judged here.
#
# Settings (kernel command line words): SF_MODES="fentry tp_btf",
# SF_ROUNDS=3, SF_SCALE=0.1, SF_BATCHES=8, SF_TARGETS=16, SF_BT_WAIT=240
# (seconds bpftrace may take to compile and attach, or to stop, under TCG).
set -u
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

MODES=${SF_MODES:-fentry tp_btf}
ROUNDS=${SF_ROUNDS:-3}
SCALE=${SF_SCALE:-0.1}
BATCHES=${SF_BATCHES:-8}
TARGETS=${SF_TARGETS:-16}
BT_WAIT=${SF_BT_WAIT:-240}
D=/satfeed	# listing1.bt; the binaries are in /bin

say() { echo "SATFEED-BENCH: $*"; }

mnt() { # TYPE DIR
	grep -q " $2 $1 " /proc/mounts && return 0
	mkdir -p "$2"
	# bpffs readable by root only, as the host harness mounts it
	if [ "$1" = bpf ]; then set -- "$1" "$2" -o mode=0700; fi
	mount -t "$1" ${3:+"$3" "$4"} "$1" "$2" ||
		{ say "cannot mount $1 at $2"; return 1; }
}
mnt bpf /sys/fs/bpf || exit 1
mnt tracefs /sys/kernel/tracing || exit 1
mnt debugfs /sys/kernel/debug || true
[ -d /sys/kernel/tracing/events/raw_syscalls ] ||
	{ say "no raw_syscalls tracepoints in tracefs"; exit 1; }
[ -e /proc/sys/kernel/bpf_stats_enabled ] ||
	{ say "no kernel.bpf_stats_enabled"; exit 1; }
for b in sfbench satfeed-loader satfeedctl bpftrace; do
	command -v $b >/dev/null || { say "$b missing from the initramfs"; exit 1; }
done
say "kernel $(uname -r), $(nproc) CPUs, bpftrace $(bpftrace --version 2>&1 | awk '{print $2}')"
say "settings: modes '$MODES' rounds $ROUNDS scale $SCALE batches $BATCHES targets $TARGETS"

# dump KIND MODE FILE: a file between markers
dump() {
	echo "SATFEED-BENCH-BEGIN $1 $2"
	[ -f "$3" ] && cat "$3"
	echo "SATFEED-BENCH-END $1 $2"
}

# uptime seconds: the guest's wall clock is whatever QEMU gave it
now() { awk '{ printf "%d", $1 }' /proc/uptime; }

rc=0
cd /tmp || exit 1
for mode in $MODES; do
	say "sfbench --attach $mode: start"
	t0=$(now)
	sfbench --attach "$mode" --loader "$(command -v satfeed-loader)" \
		--ctl "$(command -v satfeedctl)" --bpftrace "$D/listing1.bt" \
		--bpftrace-wait "$BT_WAIT" --bpftrace-out /tmp/bt-$mode.out \
		--no-probes \
		--rounds "$ROUNDS" --scale "$SCALE" --batches "$BATCHES" \
		--targets "$TARGETS" \
		--results /tmp/results-$mode.txt --raw /tmp/rounds-$mode.txt \
		> /tmp/table-$mode.txt 2> /tmp/log-$mode.txt
	st=$?
	say "sfbench --attach $mode: exit $st after $(( $(now) - t0 )) s"
	[ $st = 0 ] || rc=1
	dump table "$mode" /tmp/table-$mode.txt
	dump results "$mode" /tmp/results-$mode.txt
	dump rounds "$mode" /tmp/rounds-$mode.txt
	dump log "$mode" /tmp/log-$mode.txt
	tail -n 40 /tmp/bt-$mode.out > /tmp/bt-tail 2>/dev/null
	dump bpftrace "$mode" /tmp/bt-tail
done

left=$(ls -A /sys/fs/bpf)
if [ -n "$left" ]; then
	say "left in bpffs: $left"
	rc=1
fi
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = 0 ] ||
	{ say "kernel.bpf_stats_enabled left on"; rc=1; }
say "done, status $rc"
exit $rc
