#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/bench.sh - the overhead benchmark in the Debian 6.12 guest:
# satfeed in fentry mode (the mode the development hosts refuse) against
# the paper's bpftrace method (tests/bench/listing1.bt) and the empty-
# program floor of the same hooks, then the same in tp_btf mode, side by
# side in one boot.
#
#   1. setup-kernel.sh (cached): the bookworm-backports kernel
#   2. bpftrace from Debian on the host (apt-get install when missing): its
#      binary and every library ldd lists (about 200 MB unpacked, hence
#      2 GiB of guest memory)
#   3. an initramfs with busybox, bash, satfeed-loader, satfeedctl, sfbench,
#      bpftrace, tests/bench/listing1.bt and guest/bench-guest.sh as /test.sh
#   4. boot.sh (QEMU TCG); the guest runs build/sfbench --attach fentry and
#      --attach tp_btf, each with --bpftrace, and prints tables, results and
#      rounds between markers on the console
#   5. here: those cut out into $OUT (table-MODE.txt, results-MODE.txt,
#      rounds-MODE.txt, log-MODE.txt; results.txt has both modes, every key
#      beginning with its mode), every expected figure checked present once
#      and finite, the two tables printed
#
# Figures are printed, never asserted.  By default the guest's clock counts
# instructions (QEMU -icount shift=0): a figure is the number of guest
# instructions a call takes, in ns at 1 per ns, deterministic from run to
# run, and blind to what an instruction really costs (cache misses,
# retpolines): a cost model like callgrind's, for the kernel.  Compare
# ratios inside one run.  Takes the test
# lock (/run/lock/satfeed-tests.lock) for the whole run; the guest is
# private, the host's bpffs is not touched.
#
# Usage: tests/vm/bench.sh [--quick] [--wallclock] [-G SECONDS] [-T SECONDS]
#                          [-a 'SF_KEY=val ...']
#   --quick  short setting (3 rounds, fewer calls; 3-4 minutes here):
#            what `make test` runs to check every figure is made
#   --wallclock
#            guest time from the host's clock (TCG's default) instead of
#            QEMU -icount shift=0 (1 ns per guest instruction): real
#            emulated time, but it moves with the host's load
#   -G       the guest's budget in guest seconds (default 400 with
#            --quick, 1500 without); the wall-clock limits scale it by this
#            host's speed, measured first in the same run (vm_calibrate in
#            lib.sh), up to VM_TIMEOUT_MAX
#   -T       the wall-clock limit outright instead of the scaled one
#   -a       guest settings (see the header of guest/bench-guest.sh), e.g.
#            -a 'SF_MODES=fentry SF_ROUNDS=5'
# Environment: VM_DIR (default build/vm), BUILD (default build), OUT
# (default $VM_DIR/bench), VM_QUIET=1 (console only in the log).
# Exit: 0 the guest run completed and every figure is there; 1 otherwise;
# 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=${OUT:-$VM_DIR/bench}
TIMEOUT=${VM_TIMEOUT:-}
GUEST_LIMIT=
vm_args 'quick wallclock' "$@"

# Guest settings.  Under TCG a syscall costs 3-10x a real one here, and
# every round starts bpftrace (about 8 s to compile and attach), loads
# satfeed and adds its targets (an exec each), so rounds are dear and the
# calls per phase are a fraction of sfbench's defaults.
if [ $QUICK = 1 ]; then
	SETTINGS="SF_ROUNDS=3 SF_SCALE=0.1 SF_BATCHES=8 SF_TARGETS=16"
	GUEST_LIMIT=${GUEST_LIMIT:-400}
else
	SETTINGS="SF_ROUNDS=5 SF_SCALE=0.4 SF_BATCHES=8 SF_TARGETS=64"
	GUEST_LIMIT=${GUEST_LIMIT:-1500}
fi
MODES=(fentry tp_btf)

vm_begin
BPFTRACE=$(command -v bpftrace) || vm_die "bpftrace not installed"
# the Makefile names its outputs relative to the tree (OUTPUT=build)
OUTREL=${BUILD#"$ROOT"/}
make -s -C "$ROOT" OUTPUT="$OUTREL" all "$OUTREL/sfbench" >/dev/null

BINS=(-b /bin/bash -b "$BPFTRACE")
vm_bins satfeed-loader satfeedctl sfbench
FILES=(-f "$ROOT/tests/bench/listing1.bt:/satfeed/")
# a staging tree and console.bad of its own: `make vm-test` may share VM_DIR
LOG=$VM_DIR/bench-console.log
vm_boot "$VM_DIR/bench-stage/initrd.gz" "$ROOT/tests/vm/guest/bench-guest.sh" \
	"$LOG" -m 2048 -a "$SETTINGS $APPEND" >&2
rc=$VM_RC secs=$VM_SECS

# --- the guest's output, cut out of the console log ---
mkdir -p "$OUT"
rm -f "$OUT"/*.txt
cut_out() { # KIND MODE -> stdout
	# without the guest's heartbeat lines (guest/init)
	awk -v b="SATFEED-BENCH-BEGIN $1 $2" -v e="SATFEED-BENCH-END $1 $2" '
		$0 == e { on = 0 }
		/^SATFEED-VM: alive / { next }
		on { print }
		$0 == b { on = 1 }' "$LOG"
}
for m in "${MODES[@]}"; do
	for k in table results rounds log bpftrace; do
		cut_out "$k" "$m" > "$OUT/$k-$m.txt"
	done
	# one file, every key naming its mode (fentry's already do)
	awk -v m="$m" '{ k = $1; if (k !~ "^" m "\\.") k = m "." k
		print k, $2 }' "$OUT/results-$m.txt"
done > "$OUT/results.txt"

for m in "${MODES[@]}"; do
	echo
	echo "==== $m mode (6.12 guest, QEMU TCG)"
	cat "$OUT/table-$m.txt"
done
grep '^SATFEED-BENCH: sfbench' "$LOG" || true

# --- every expected figure present once and finite ---
PH=(u_getppid u_rw u_epoll t_pair t_rw t_epoll)
expected=()
for m in "${MODES[@]}"; do
	for ph in "${PH[@]}"; do
		for c in none empty satfeed bpftrace; do
			expected+=("$m.time.$c.$ph")
		done
		expected+=("$m.ratio.bt_none.$ph" "$m.ratio.bt_empty.$ph")
		case $ph in u_*) k=all ;; *) k=own ;; esac
		# the program classes the phase's syscalls run: all in tp_btf;
		# in fentry the fexit (exit) ones on the traced families, the
		# fentry (enter) ones on the waits, nothing on getppid
		cls="enter exit"
		if [ "$m" = fentry ]; then
			case $ph in
			u_getppid) cls= ;;
			*epoll) cls="enter exit" ;;
			*) cls="exit" ;;
			esac
			for c in empty satfeed; do
				for p in enter exit; do
					expected+=("$m.runs.$c.$p.$ph")
				done
			done
		fi
		for c in empty satfeed; do
			for p in $cls; do expected+=("$m.bpf.$c.$p.$ph.$k"); done
		done
	done
	expected+=("$m.bpf.satfeed.traced_event.t_pair" "$m.mem.total_bytes"
		   "$m.mem.targets" "$m.bpf.bpftrace.sum.u_getppid.all"
		   "$m.bpf.bpftrace.sum.t_pair.own")
	# the target's bound (the point ratio divides by noise in fentry
	# mode, where satfeed runs nothing on getppid: not required)
	expected+=("$m.ratio.ovh_bt_sf.target_lower"
		   "$m.target.u_getppid.sf_none_spread_ns")
	if [ "$m" = fentry ]; then
		for k in satfeed_ovh_ns floor_ovh_ns spread_ns \
			 satfeed_runs_per_op; do
			expected+=("$m.target.u_getppid.$k")
		done
	fi
done
bad=0
[ "$rc" = 0 ] || { echo "bench.sh: the guest run failed (console: $LOG)" >&2; bad=1; }
sf_check_figures "$OUT/results.txt" "${expected[@]}" || bad=1
for m in "${MODES[@]}"; do
	sf_check_sections "$OUT/table-$m.txt" '^1-2\. syscall cost' \
		'^3\. BPF time per program run' '^6\. against the paper' \
		"^satfeed overhead benchmark: $m mode" || bad=1
	sf_check_table_numbers "$OUT/table-$m.txt" || bad=1
done
echo "(${secs} s; tables and figures in $OUT, console in $LOG)"
[ "$bad" = 0 ] || { echo "bench.sh: FAILED" >&2; exit 1; }
[ $QUICK = 1 ] && echo "vm/bench.sh --quick: ${#expected[@]} figures present and finite"
exit 0
