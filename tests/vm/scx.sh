#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/scx.sh - scx_satfeed, the sched_ext scheduler of kmod-example/scx,
# in the Debian 7.x guest (the first Debian kernel with sched_ext).
#
#   1. setup-kernel.sh (cached): the trixie-backports kernel and headers
#   2. the engine binaries (make all) and scx_satfeed, built against the
#      guest kernel's BTF (make -C kmod-example scx)
#   3. an initramfs with busybox, bash, bpftool, the engine binaries,
#      scx_satfeed and guest/scx-guest.sh as /test.sh
#   4. boot.sh with 4 CPUs, two cores of two SMT threads each (SCX_SMP),
#      and QEMU -icount shift=0 (guest time is the
#      instruction count, as in tests/vm/bench.sh): the server's load, and
#      so the demand the policy reads at each rate, does not move with the
#      host's speed or load; the guest's checks (see guest/scx-guest.sh)
#      decide, and boot.sh judges the console and dmesg
#   5. here: the reserved CPUs and perf targets at each load level, from the
#      guest's SCX-RESULT lines, into $VM_DIR/scx-result.txt
#
# Part of `make test` (tests/run.sh).  Run time: 14-21 minutes here
# (2026-11-27: 856-1272 s; the guest about 340 s of its 600 s budget).
# Limits: the guest's budget is GUEST_LIMIT guest seconds (-G); the
# wall-clock limits scale it by this host's speed, measured first in the
# same run (vm_calibrate in lib.sh, 4 CPUs), up to VM_TIMEOUT_MAX.  The
# guest gets the factor as SF_HOST_FACTOR (wall seconds per guest second;
# for its notes: its own waits are in guest time and need no scaling).
#
# Usage: tests/vm/scx.sh [--wallclock] [-G SECONDS] [-T SECONDS]
#                        [-a 'SF_KEY=val ...']
#   --wallclock  guest time from the host's clock (TCG's default) instead
#                of -icount: the demand at each rate then depends on how
#                fast the host runs the guest
#   -G           the guest's budget in guest seconds (default 600)
#   -T           the wall-clock limit outright instead of the scaled one
#   -a           guest settings (see the header of guest/scx-guest.sh)
# Environment: VM_DIR (default build/vm), BUILD (default build), VM_QUIET=1,
# SCX_SMP: QEMU's -smp (default 4,sockets=1,cores=2,threads=2: the guest
# sees SMT siblings, so the scheduler's whole-core reservations are
# exercised; "4" boots four cores without SMT).  Under TCG the siblings
# share nothing: the topology is only what the guest's sysfs says.
# Takes the test lock (/run/lock/satfeed-tests.lock, SF_LOCK) for the run.
# Exit: 0 every guest check passed and the console is clean; 1 otherwise;
# 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TIMEOUT=${VM_TIMEOUT:-}
GUEST_LIMIT=600
vm_args wallclock "$@"

# sched_ext: Debian's 7.x kernels only
vm_select_kernel trixie7
vm_begin
make -s -C "$ROOT" all >/dev/null
vm_build_scx

BINS=(-b /bin/bash -b "$(command -v bpftool)" -b "$SCX_OUT/scx/scx_satfeed")
vm_bins satfeed-loader satfeedctl sfserver sfload
FILES=(-f "$ROOT/tests/vm/guest/checks.sh:/checks.sh"
       -f "$ROOT/tests/vm/guest/busyloop.sh:/busyloop.sh")
LOG=$VM_DIR/scx-console.log
SMP=${SCX_SMP:-4,sockets=1,cores=2,threads=2}
vm_boot "$VM_DIR/scx-initrd.gz" "$ROOT/tests/vm/guest/scx-guest.sh" "$LOG" \
	-c "$SMP" -a "$APPEND"
rc=$VM_RC

{
	echo "scx_satfeed in the $KVER guest (-smp $SMP, QEMU TCG${ICOUNT:+ -icount})"
	grep '^SCX-RESULT ' "$LOG" | sed 's/^SCX-RESULT /  /' || true
} > "$VM_DIR/scx-result.txt"
sed 's/^/vm: /' "$VM_DIR/scx-result.txt" >&2
vm_log "scx run: $VM_SECS s"
exit $rc
