#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/run.sh - the whole guest test (`make vm-test`).
#
#   1. setup-kernel.sh: host tools, the current kernel image and headers of
#      the selected guest kernel (cached in $VM_DIR/kernel-<name>)
#   2. kmod-example against those headers: the module, sfconsumer (with its
#      BPF objects) and the policy unit test, run on the host
#   3. sfvmcheck, the guest-side checker
#   4. an initramfs with busybox, the engine binaries, sfconsumer,
#      sfvmcheck, bpftool, bash, the module, guest/test.sh and the check
#      helpers it sources (guest/checks.sh)
#   5. boot.sh: QEMU (TCG), verdict from the guest's marker and its dmesg
#
# The guest's clock is the host's (--icount for QEMU's instruction count),
# so the guest's speed follows the host's: the guest sets its load levels
# from the capacity it measures in the same boot (guest/test.sh,
# engine-test.sh).  Limits: the guest's budget is GUEST_LIMIT seconds of
# work at -icount speed (-G); the guest's own limit and the wall-clock
# limits are that budget scaled by this host's speed, measured first in
# the same run (vm_calibrate in lib.sh; the factor is printed), up to
# VM_TIMEOUT_MAX (boot.sh).
#
# The engine binaries come from the top-level build ($BUILD, default
# build/): satfeed-loader satfeedctl sfserver sfload; `make vm-test` builds
# them first.  Missing ones fail the run unless --no-engine (module-only
# development run).
#
# Usage: tests/vm/run.sh [--kernel NAME] [--no-engine] [--engine-test FILE]
#                        [--icount] [-G SECONDS] [-T SECONDS]
#                        [-a 'KEY=val ...']
#   --kernel NAME       the guest kernel: bpo612 (default; 6.12) or trixie7
#                       (7.x), as VM_KERNEL=NAME (tests/vm/lib.sh)
#   --engine-test FILE  a script run inside the guest after the consumer
#                       checks (as /engine-test.sh), e.g. the engine's own
#                       end-to-end test; it may use every binary in the image
#   --icount            guest time from QEMU's instruction count
#                       (-icount shift=0,sleep=on) instead of the host's
#                       clock
#   -G SECONDS          the guest's budget (default 300; the 6.12 run
#                       took 142 s of guest time at host factor 2.08)
#   -T SECONDS          the wall-clock limit outright instead of the
#                       scaled one
#   -a                  extra kernel command line words; SF_* words reach
#                       guest/test.sh as settings (see its header)
# Environment: VM_DIR (default build/vm), BUILD (default build), VM_TIMEOUT
# (as -T), VM_TIMEOUT_MAX (the ceiling, boot.sh), VM_HOST_FACTOR (skip the
# calibration),
# VM_QUIET=1 (console only in $VM_DIR/console-<kernel>.log), VM_TCG_THREAD,
# VM_KERNEL.
# Takes the test lock (/run/lock/satfeed-tests.lock, SF_LOCK) for the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

REQUIRE_ENGINE=1
ENGINE_TEST=$ROOT/tests/vm/engine-test.sh
TIMEOUT=${VM_TIMEOUT:-}
GUEST_LIMIT=300
ICOUNT=
APPEND=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) vm_select_kernel "$2"; shift ;;
	--no-engine) REQUIRE_ENGINE=0 ;;
	--engine-test) ENGINE_TEST=$2; shift ;;
	--icount) ICOUNT=$VM_ICOUNT ;;
	-G) GUEST_LIMIT=$2; shift ;;
	-T) TIMEOUT=$2; shift ;;
	-a) APPEND=$2; shift ;;
	-h|--help) vm_help; exit 0 ;;
	*) vm_usage "unknown argument '$1'" ;;
	esac
	shift
done

vm_begin
LOG=$VM_DIR/console-$VM_KERNEL.log
# the guest checks the module's uclamp action where the kernel has uclamp,
# and that the module refuses it elsewhere
if grep -qx 'CONFIG_UCLAMP_TASK=y' "$KDIR/include/config/auto.conf"; then
	APPEND="$APPEND SF_UCLAMP=1"
fi

vm_log "building kmod-example against $KVER"
# sfconsumer's vmlinux.h is the guest kernel's: one output tree per kernel
KBUILD_OUT=$BUILD/kmod-example-$VM_KERNEL
KBUILD_LOG=$VM_DIR/kmod-build-$VM_KERNEL.log
# shellcheck disable=SC2086 # KMAKE_ARGS: words
make -s -C "$ROOT/kmod-example" KDIR="$KDIR" KMOD_OUT="$KBUILD_OUT" \
	$KMAKE_ARGS all test > "$KBUILD_LOG" 2>&1 || {
	tail -40 "$KBUILD_LOG" >&2
	vm_die "kmod-example build or policy test failed (log: $KBUILD_LOG)"
}
grep -E '^test_(policy|topo): ' "$KBUILD_LOG" | sed 's/^/vm: host /' >&2

vm_log "building sfvmcheck"
gcc -O2 -g -Wall -Wextra -Werror -I"$ROOT/bpf" \
	"$ROOT/tests/vm/guest/sfvmcheck.c" -lbpf -o "$VM_DIR/sfvmcheck"

BINS=(-b /bin/bash -b "$(command -v bpftool)" -b "$KBUILD_OUT/sfconsumer"
      -b "$VM_DIR/sfvmcheck")
missing=()
for b in satfeed-loader satfeedctl sfserver sfload test_kernel sfcompat32; do
	if [ -x "$BUILD/$b" ]; then
		BINS+=(-b "$BUILD/$b")
	else
		missing+=("$BUILD/$b")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ $REQUIRE_ENGINE = 1 ]; then
		vm_die "engine binaries missing: ${missing[*]} (run make first, or --no-engine)"
	fi
	vm_log "no engine binaries (${missing[*]}): module-only run"
	APPEND="$APPEND SF_REQUIRE_ENGINE=0"
fi
FILES=(-f "$ROOT/kmod-example/module/satfeed_consumer.ko:/lib/satfeed/"
       -f "$ROOT/tests/vm/guest/checks.sh:/checks.sh")
[ -n "$ENGINE_TEST" ] && FILES+=(-f "$ENGINE_TEST:/engine-test.sh")

vm_boot "$VM_DIR/initrd.gz" "$ROOT/tests/vm/guest/test.sh" "$LOG" \
	-a "$APPEND"
rc=$VM_RC
grep -E '^# (engine-test: (cost|skipped|check|io_uring|rates)|concurrency: |uclamp\.min at |(low|high) rate: |level at )' "$LOG" |
	sed 's/^# /vm: /' >&2 || true
vm_log "whole vm test: $VM_SECS s"
exit $rc
