#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/boot.sh - boot the guest under QEMU (TCG) and judge the run.
#
# The serial console goes to $VM_DIR/console.log (and to stdout unless
# VM_QUIET=1).  The run passes when the guest printed
# "SATFEED-VM-RESULT: PASS", its dmesg dump is complete, and nothing on the
# console (the dumped dmesg included) looks like a kernel WARN, BUG, oops,
# panic or "Call Trace".  QEMU is killed after the timeout.
#
# TCG runs single-threaded by default (VM_TCG_THREAD=single): with QEMU 7.2's
# multi-threaded TCG, live kernel text patching (fentry attach/detach, static
# keys flipped by tracepoint enable) intermittently left a stale int3 that a
# second vCPU executed ("Oops: int3" at __x64_sys_sendto+0x5), a guest crash
# the same kernel never shows on hardware.  VM_TCG_THREAD=multi to try it.
#
# Usage: tests/vm/boot.sh [-k VMLINUZ] [-i INITRD] [-T SECONDS] [-m MiB]
#                         [-c CPUS] [-a 'KEY=val ...'] [-l LOG]
#   defaults: the VM_KERNEL kernel (its kernel.env), $VM_DIR/initrd.gz, 240 s
#   (VM_TIMEOUT), 1024 MiB, 2 CPUs, log $VM_DIR/console.log
# VM_QEMU_OPTS: more QEMU options, e.g. "-icount shift=0,sleep=on" (guest
# time from the instruction count; tests/vm/bench.sh uses it).
# Exit: 0 pass, 1 fail, 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VMLINUZ=
INITRD=$VM_DIR/initrd.gz
TIMEOUT=${VM_TIMEOUT:-240}
MEM=1024
CPUS=2
APPEND_EXTRA=
LOG=$VM_DIR/console.log
while getopts "k:i:T:m:c:a:l:h" opt; do
	case $opt in
	k) VMLINUZ=$OPTARG ;;
	i) INITRD=$OPTARG ;;
	T) TIMEOUT=$OPTARG ;;
	m) MEM=$OPTARG ;;
	c) CPUS=$OPTARG ;;
	a) APPEND_EXTRA=$OPTARG ;;
	l) LOG=$OPTARG ;;
	*) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
if [ -z "$VMLINUZ" ]; then
	VMLINUZ=$(vm_kernel_env && echo "$VMLINUZ") || exit 1
fi
[ -f "$VMLINUZ" ] || vm_die "kernel $VMLINUZ missing"
[ -f "$INITRD" ] || vm_die "initramfs $INITRD missing"
command -v qemu-system-x86_64 >/dev/null || vm_die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"

# loglevel=5: warnings and worse reach the console live, so a guest that
# hangs after a WARN still shows it.  panic=-1 + -no-reboot: a panic ends
# QEMU at once instead of waiting for the timeout.
APPEND="console=ttyS0 loglevel=5 panic=-1 $APPEND_EXTRA"
mkdir -p "$(dirname "$LOG")"
vm_log "booting $(basename "$VMLINUZ") (timeout ${TIMEOUT}s): $APPEND"
start=$(date +%s)
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu max -m "$MEM" -smp "$CPUS" ${VM_QEMU_OPTS:-} \
	-kernel "$VMLINUZ" -initrd "$INITRD" -append "$APPEND" \
	-nographic -no-reboot < /dev/null 2>&1 |
	tr -d '\r' | if [ "${VM_QUIET:-0}" = 1 ]; then cat > "$LOG"; else tee "$LOG"; fi
qrc=${PIPESTATUS[0]}
set -e
secs=$(( $(date +%s) - start ))

fail=0
reasons=()
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	reasons+=("guest did not power off within ${TIMEOUT}s")
	fail=1
elif [ "$qrc" != 0 ]; then
	reasons+=("qemu exited with status $qrc")
	fail=1
fi
grep -q '^SATFEED-VM-RESULT: PASS' "$LOG" || {
	reasons+=("no PASS marker from the guest test"); fail=1; }
grep -q '^SATFEED-VM: dmesg end' "$LOG" || {
	reasons+=("guest dmesg dump missing or incomplete"); fail=1; }
BAD='WARNING:|kernel BUG|BUG:|Oops|Call Trace|cut here|Kernel panic|general protection fault|UBSAN:|KASAN:|refcount_t:|unreferenced object|list_(add|del) corruption|scheduling while atomic|lockdep|possible recursive locking|hung_task|soft lockup|RCU stall'
if grep -nE "$BAD" "$LOG" > "$VM_DIR/console.bad"; then
	reasons+=("kernel trouble on the console:")
	fail=1
fi

npass=$(grep -cE '^ok [0-9]+' "$LOG" || true)
nfail=$(grep -cE '^not ok [0-9]+' "$LOG" || true)
echo "---- guest checks failed:" >&2
grep -E '^not ok [0-9]+' "$LOG" >&2 || echo "(none)" >&2
if [ "$fail" = 0 ]; then
	echo "vm-test: PASS in ${secs}s (console: $LOG)"
else
	echo "vm-test: FAIL in ${secs}s (console: $LOG)"
	for r in "${reasons[@]}"; do echo "  - $r"; done
	[ -s "$VM_DIR/console.bad" ] && sed 's/^/    /' "$VM_DIR/console.bad" | head -40
	# A failure outside the checks still counts as one failed check.
	[ "$nfail" = 0 ] && nfail=1
fi
echo "vm-test: $npass passed, $nfail failed"
exit "$fail"
