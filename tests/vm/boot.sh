#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/boot.sh - boot the guest under QEMU (TCG) and judge the run.
#
# The serial console goes to the log (default $VM_DIR/console.log; kept
# there whatever the verdict, and to stdout unless VM_QUIET=1); LOG.times
# holds the host's wall clock at each "SATFEED-" line.  The run passes when
# the guest printed "SATFEED-VM-RESULT: PASS", its dmesg dump is complete,
# and nothing on the console (the dumped dmesg included) looks like a
# kernel WARN, BUG, oops, panic or "Call Trace".
#
# Limits.  Two clocks, two limits:
#   - the guest's: -G SECONDS of guest time for /test.sh (guest/init stops
#     it past that: the guest's own failure).  Under QEMU -icount guest time
#     is the instruction count, the same on every host; without -icount in
#     VM_QEMU_OPTS the guest's clock is the host's, so the guest gets
#     G * max(F, 1) seconds instead.
#   - the host's, wall clock, from this host's measured speed: with
#     VM_HOST_FACTOR=F (wall seconds per guest second, measured by
#     vm_calibrate in lib.sh), QEMU is stopped after
#         (G + 60) * max(F, 1) * 3 seconds, or
#         3 * 20 * max(F, 1) + 60 seconds without a console line
#     (the guest prints a heartbeat every 20 guest seconds), never after
#     more than VM_TIMEOUT_MAX (default 5400) seconds.  -T SECONDS sets the
#     wall limit outright (still under VM_TIMEOUT_MAX).  Without -G or F
#     the limit is VM_TIMEOUT_MAX.  A slow host makes a run slower, not red.
# A failed run says which limit or check it was: the guest's checks (its
# "not ok" lines, its own time limit, no PASS marker after a clean power
# off), a stuck guest (no console output), or host slowness (the wall limit
# hit while the guest was still progressing and no check had failed).
#
# TCG runs single-threaded by default (VM_TCG_THREAD=single): with QEMU 7.2's
# multi-threaded TCG, live kernel text patching (fentry attach/detach, static
# keys flipped by tracepoint enable) intermittently left a stale int3 that a
# second vCPU executed ("Oops: int3" at __x64_sys_sendto+0x5), a guest crash
# the same kernel never shows on hardware.  VM_TCG_THREAD=multi to try it.
#
# Usage: tests/vm/boot.sh [-k VMLINUZ] [-i INITRD] [-G SECONDS] [-T SECONDS]
#                         [-m MiB] [-c CPUS] [-a 'KEY=val ...'] [-l LOG]
#   defaults: the VM_KERNEL kernel (its kernel.env), $VM_DIR/initrd.gz,
#   no guest limit, 2048 MiB, 2 CPUs, log $VM_DIR/console.log
# VM_QEMU_OPTS: more QEMU options, e.g. "-icount shift=0,sleep=on" (guest
# time from the instruction count; lib.sh's vm_boot sets it).
# Exit: 0 pass, 1 fail, 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VMLINUZ=
INITRD=$VM_DIR/initrd.gz
TIMEOUT=
GUEST_LIMIT=0
MEM=2048
CPUS=2
APPEND_EXTRA=
LOG=$VM_DIR/console.log
HEARTBEAT=20
while getopts "k:i:G:T:m:c:a:l:h" opt; do
	case $opt in
	k) VMLINUZ=$OPTARG ;;
	i) INITRD=$OPTARG ;;
	G) GUEST_LIMIT=$OPTARG ;;
	T) TIMEOUT=$OPTARG ;;
	m) MEM=$OPTARG ;;
	c) CPUS=$OPTARG ;;
	a) APPEND_EXTRA=$OPTARG ;;
	l) LOG=$OPTARG ;;
	*) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
for v in "$GUEST_LIMIT" ${TIMEOUT:+"$TIMEOUT"}; do
	[[ $v =~ ^[0-9]+$ ]] || vm_usage "-G and -T take whole seconds, not '$v'"
done
if [ -z "$VMLINUZ" ]; then
	VMLINUZ=$(vm_kernel_env && echo "$VMLINUZ") || exit 1
fi
[ -f "$VMLINUZ" ] || vm_die "kernel $VMLINUZ missing"
[ -f "$INITRD" ] || vm_die "initramfs $INITRD missing"
command -v qemu-system-x86_64 >/dev/null || vm_die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"

# ---- the wall-clock limits, from the host's factor ----
CEILING=${VM_TIMEOUT_MAX:-5400}
FACTOR=${VM_HOST_FACTOR:-}
f1=$(awk -v f="${FACTOR:-1}" 'BEGIN { print (f > 1 ? f : 1) }')
if [ -n "$TIMEOUT" ]; then
	how="-T"
elif [ "$GUEST_LIMIT" -gt 0 ] && [ -n "$FACTOR" ]; then
	TIMEOUT=$(awk -v g="$GUEST_LIMIT" -v f="$f1" 'BEGIN { printf "%d", (g + 60) * f * 3 }')
	how="(${GUEST_LIMIT} + 60) guest s x factor $FACTOR x 3"
else
	TIMEOUT=$CEILING
	how="VM_TIMEOUT_MAX, no guest limit or host factor"
fi
[ "$TIMEOUT" -le "$CEILING" ] || { TIMEOUT=$CEILING; how="$how, capped by VM_TIMEOUT_MAX"; }
STALL=$(awk -v f="$f1" -v b=$HEARTBEAT 'BEGIN { printf "%d", 3 * b * f + 60 }')

# loglevel=5: warnings and worse reach the console live, so a guest that
# hangs after a WARN still shows it.  panic=-1 + -no-reboot: a panic ends
# QEMU at once instead of waiting for the timeout.
APPEND="console=ttyS0 loglevel=5 panic=-1 SF_HEARTBEAT=$HEARTBEAT"
# the guest's own limit: guest seconds under -icount; on the host's clock
# without it, where the same work takes F times as long
GLIMIT=$GUEST_LIMIT
[[ " ${VM_QEMU_OPTS:-} " == *" -icount "* ]] ||
	GLIMIT=$(awk -v g="$GUEST_LIMIT" -v f="$f1" 'BEGIN { printf "%d", g * f + 0.999 }')
[ "$GLIMIT" -gt 0 ] && APPEND="$APPEND SF_GUEST_LIMIT=$GLIMIT"
# the host's factor, for the guest's notes (its waits are in guest time)
[ -n "$FACTOR" ] && APPEND="$APPEND SF_HOST_FACTOR=$FACTOR"
APPEND="$APPEND $APPEND_EXTRA"
mkdir -p "$(dirname "$LOG")"
TIMES=$LOG.times
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
vm_log "booting $(basename "$VMLINUZ"): wall limit ${TIMEOUT}s ($how)," \
	"${STALL}s without output; guest limit ${GLIMIT}s: $APPEND"

# console: read the guest's lines (LOG, stdout, LOG.times) and watch the
# two wall-clock limits; past one, stop QEMU and say which in $WORK/killed
console() {
	local line part='' now start=$EPOCHSECONDS last=$EPOCHSECONDS qpid rc
	exec 3> "$LOG" 4> "$TIMES"
	while :; do
		IFS= read -r -t 2 line && rc=0 || rc=$?
		if [ $rc = 0 ]; then
			line=$part$line part=
			printf '%s\n' "$line" >&3
			[ "${VM_QUIET:-0}" = 1 ] || printf '%s\n' "$line"
			[[ $line != SATFEED-* ]] ||
				printf '%s %s\n' "$EPOCHREALTIME" "$line" >&4
			last=$EPOCHSECONDS
			continue
		fi
		if [ $rc -le 128 ]; then	# end of the console
			part+=$line
			break
		fi
		part+=$line
		[ -n "$line" ] && last=$EPOCHSECONDS
		now=$EPOCHSECONDS
		[ -f "$WORK/killed" ] && continue
		if [ $((now - start)) -ge "$TIMEOUT" ]; then
			echo "limit $((now - last))" > "$WORK/killed"
		elif [ $((now - last)) -ge "$STALL" ]; then
			echo "stall $((now - last))" > "$WORK/killed"
		else
			continue
		fi
		qpid=$(cat "$WORK/qemu.pid" 2>/dev/null) || continue
		kill -TERM "$qpid" 2>/dev/null
		( sleep 5; kill -KILL "$qpid" 2>/dev/null ) 9>&- &
	done
	[ -z "$part" ] || printf '%s\n' "$part" >&3
}

start=$(date +%s)
set +e
{
	# the backstop, should the console watch itself fail
	timeout -k 5 $((TIMEOUT + 60)) qemu-system-x86_64 \
		-accel "tcg,thread=${VM_TCG_THREAD:-single}" -cpu max -m "$MEM" \
		-smp "$CPUS" ${VM_QEMU_OPTS:-} -pidfile "$WORK/qemu.pid" \
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$APPEND" \
		-nographic -no-reboot < /dev/null 2>&1
	echo $? > "$WORK/qemu.rc"
} | sed -u 's/\r//g' | console
set -e
qrc=$(cat "$WORK/qemu.rc" 2>/dev/null || echo 255)
secs=$(( $(date +%s) - start ))
killed=$(cat "$WORK/killed" 2>/dev/null || true)

npass=$(grep -cE '^ok [0-9]+' "$LOG" || true)
nfail=$(grep -cE '^not ok [0-9]+' "$LOG" || true)
# the guest's clock at its last heartbeat or SATFEED line
gclock=$(sed -n 's/.*SATFEED-VM: .* t=\([0-9.]*\).*/\1/p' "$LOG" | tail -1)
progress="guest clock ${gclock:-?} s at its last report, $npass checks passed, $nfail failed"

fail=0
reasons=()
cause=
case $killed in
limit*)
	if [ "$nfail" = 0 ]; then
		cause="host slowness"
		r="host too slow: the wall-clock limit (${TIMEOUT}s: $how)"
		r+=" ran out while the guest was still running and passing"
		r+=" ($progress, last output ${killed#limit }s before):"
		r+=" not a failed check; the host ran slower than measured"
		r+=" (a load that came after the calibration?): run again on"
		r+=" a quieter host, or raise -T / VM_TIMEOUT_MAX"
		reasons+=("$r")
	else
		cause="failed checks"
		reasons+=("the wall-clock limit (${TIMEOUT}s) ran out after checks had failed ($progress)")
	fi
	fail=1 ;;
stall*)
	cause="guest stuck"
	reasons+=("guest stuck: no console output for ${killed#stall }s (heartbeat every $HEARTBEAT guest s; $progress)")
	fail=1 ;;
esac
if [ -z "$killed" ] && [ "$qrc" != 0 ]; then
	[ "$qrc" = 124 ] || [ "$qrc" = 137 ] &&
		reasons+=("qemu killed by the backstop timeout ($((TIMEOUT + 60))s)") ||
		reasons+=("qemu exited with status $qrc")
	fail=1
fi
if grep -q '^SATFEED-VM: guest time limit' "$LOG"; then
	cause=${cause:-guest time limit}
	reasons+=("the guest's own time limit (${GLIMIT}s of guest time) ran out: its work took longer than budgeted, on any host")
fi
grep -q '^SATFEED-VM-RESULT: PASS' "$LOG" || {
	reasons+=("no PASS marker from the guest test"); fail=1; }
grep -q '^SATFEED-VM: dmesg end' "$LOG" || {
	reasons+=("guest dmesg dump missing or incomplete"); fail=1; }
BAD='WARNING:|kernel BUG|BUG:|Oops|Call Trace|cut here|Kernel panic|general protection fault|UBSAN:|KASAN:|refcount_t:|unreferenced object|list_(add|del) corruption|scheduling while atomic|lockdep|possible recursive locking|hung_task|soft lockup|RCU stall'
if grep -nE "$BAD" "$LOG" > "$VM_DIR/console.bad"; then
	reasons+=("kernel trouble on the console:")
	cause=${cause:-kernel trouble}
	fail=1
fi
[ "$nfail" -gt 0 ] && cause=${cause:-failed checks}

echo "---- guest checks failed:" >&2
grep -E '^not ok [0-9]+' "$LOG" >&2 || echo "(none)" >&2
if [ "$fail" = 0 ]; then
	echo "vm-test: PASS in ${secs}s, guest clock ${gclock:-?} s (console: $LOG)"
else
	[ -n "$cause" ] || cause="the guest's result"
	echo "vm-test: FAIL in ${secs}s: $cause (console kept: $LOG)"
	for r in "${reasons[@]}"; do echo "  - $r"; done
	[ -s "$VM_DIR/console.bad" ] && sed 's/^/    /' "$VM_DIR/console.bad" | head -40
	# A failure outside the checks still counts as one failed check.
	[ "$nfail" = 0 ] && nfail=1
fi
echo "vm-test: $npass passed, $nfail failed"
exit "$fail"
