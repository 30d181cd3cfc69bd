#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/scx-bench.sh - the sched_ext experiment (guest/scx-bench-guest.sh)
# in one boot of the Debian 7.x guest: first whether the vCPUs are
# independent at all (a fixed job alone and beside busy vCPUs), then the
# bundled server's wake-up-to-run delay (the kernel's schedstat) and the
# busy loops' work done in four configurations: solo, an ideal static
# partition (affinity), the default scheduler, scx_satfeed; SF_REPS rounds
# of each, the load a fraction of the co-located capacity measured first,
# the load generator out of the contest (a CPU of its own, or real-time
# priority in a 2-CPU guest).
#
#   1. setup-kernel.sh (cached): the trixie-backports kernel
#   2. the engine binaries and scx_satfeed (as tests/vm/scx.sh builds them)
#   3. an initramfs with guest/scx-bench-guest.sh as /test.sh
#   4. boot.sh with --cpus CPUs (default 4) and, by default, single-threaded
#      TCG with -icount shift=0 (guest time is the instruction count, and
#      the vCPUs are one instruction stream sliced: the vCPU check shows
#      it); --mttcg: multi-threaded TCG on the host's clock instead
#   5. here: the guest's SCX-BENCH lines into $OUT/results.txt and
#      $OUT/table.md: per configuration the mean and 95% confidence
#      interval (Student's t) of each figure over the rounds, and the
#      server's delay relative to solo and to the partition
#
# Figures are printed, never asserted: docs/sched_ext.md says what this
# guest can and cannot show.
#
# Usage: tests/vm/scx-bench.sh [--quick] [--wallclock] [--mttcg]
#                              [--cpus N] [-T SECONDS] [-a 'SF_KEY=val ...']
#   --quick      2 rounds of 1 s: checks that every figure is made
#   --wallclock  guest time from the host's clock instead of -icount
#   --mttcg      multi-threaded TCG (one host thread per vCPU), implies
#                --wallclock: independent vCPUs only on a host with a free
#                core per vCPU (the vCPU check says whether they were)
#   --cpus N     guest CPUs (default 4, at least 2; with 2 the load
#                generator runs on CPU 0 at real-time priority, and CPU 0
#                is the busy loops' too)
#   -T           guest timeout (default 1800, 900 with --quick)
#   -a           guest settings (see guest/scx-bench-guest.sh)
# Environment: VM_DIR (default build/vm), BUILD (default build), OUT
# (default $VM_DIR/scx-bench), VM_QUIET=1.
# Takes the test lock for the run.  Exit: 0 every figure is there; 1
# otherwise; 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=${OUT:-$VM_DIR/scx-bench}
TIMEOUT=
CPUS=4
MTTCG=0
ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--mttcg) MTTCG=1 ;;
	--cpus)
		[ $# -ge 2 ] || vm_usage "--cpus needs a value"
		CPUS=$2
		[[ $CPUS =~ ^[0-9]+$ ]] && [ "$CPUS" -ge 2 ] ||
			vm_usage "--cpus: '$CPUS' is not a number >= 2"
		shift ;;
	*) ARGS+=("$1") ;;
	esac
	shift
done
vm_args 'quick wallclock' ${ARGS[@]+"${ARGS[@]}"}
if [ $MTTCG = 1 ]; then
	ICOUNT=
	export VM_TCG_THREAD=multi
fi
if [ $QUICK = 1 ]; then
	SETTINGS="SF_REPS=2 SF_WARMUP=1 SF_DURATION=1 SF_CAP_DURATION=1"
	TIMEOUT=${TIMEOUT:-900}
else
	SETTINGS=
	TIMEOUT=${TIMEOUT:-1800}
fi

vm_select_kernel trixie7
vm_begin
make -s -C "$ROOT" all >/dev/null
vm_build_scx

# chrt (util-linux; busybox has none): the load generator's real-time
# priority in a 2-CPU guest
BINS=(-b /bin/bash -b "$SCX_OUT/scx/scx_satfeed" -b "$(command -v chrt)")
vm_bins satfeed-loader satfeedctl sfserver sfload
FILES=(-f "$ROOT/tests/vm/guest/busyloop.sh:/busyloop.sh")
LOG=$VM_DIR/scx-bench-console.log
vm_boot "$VM_DIR/scx-bench-stage/initrd.gz" \
	"$ROOT/tests/vm/guest/scx-bench-guest.sh" "$LOG" \
	-T "$TIMEOUT" -c "$CPUS" -a "$SETTINGS $APPEND" >&2
rc=$VM_RC secs=$VM_SECS

mkdir -p "$OUT"
rm -f "$OUT"/results.txt "$OUT"/table.md
grep -E '^SCX-BENCH( |:)' "$LOG" > "$OUT/results.txt" || true
sed 's/^/  /' "$OUT/results.txt"

# ---- every figure present and finite ----
bad=0
[ "$rc" = 0 ] || { echo "scx-bench.sh: the guest run failed (console: $LOG)" >&2; bad=1; }
cap=$(sed -n 's/^SCX-BENCH capacity=\([0-9.]*\)$/\1/p' "$OUT/results.txt")
[ -n "$cap" ] || { echo "scx-bench.sh: no capacity line" >&2; bad=1; }
grep -qE '^SCX-BENCH vcpu alone_ms=[0-9]+ busy_ms=[0-9]+ slowdown=[0-9.]+$' \
	"$OUT/results.txt" || { echo "scx-bench.sh: no vCPU check line" >&2; bad=1; }
reps=$(sed -n 's/.*SF_REPS=\([0-9]*\).*/\1/p' <<<"$SETTINGS $APPEND" | tail -1)
reps=${reps:-5}
KEYS="rate served p50_us p99_us timeouts delay_us runs ant_ips reserved seconds"
for c in solo partition default scx; do
	n=$(grep -c "^SCX-BENCH cfg=$c " "$OUT/results.txt" || true)
	[ "$n" = "$reps" ] ||
		{ echo "scx-bench.sh: $n runs of $c, not $reps" >&2; bad=1; }
	for k in $KEYS; do
		[ -z "$(grep "^SCX-BENCH cfg=$c " "$OUT/results.txt" |
			grep -vE " $k=[0-9]+(\.[0-9]+)?( |\$)")" ] || {
			echo "scx-bench.sh: $c: $k missing or not finite" >&2
			bad=1; }
	done
done
if [ "$bad" != 0 ]; then
	echo "scx-bench.sh: FAILED (${secs} s; console $LOG)" >&2
	exit 1
fi

# ---- the table: mean and 95% CI per configuration ----
mode="single-threaded QEMU TCG, -icount shift=0 (guest time = instruction count)"
[ -z "$ICOUNT" ] && mode="QEMU TCG ($([ $MTTCG = 1 ] && echo multi || echo single)-threaded), guest time from the host's clock"
{
	echo "scx_satfeed experiment, $KVER guest, $CPUS CPUs, $mode, host $(nproc) CPUs."
	sed -n 's/^SCX-BENCH vcpu \(.*\)/vCPU check (fixed job on CPU 0, alone and beside busy vCPUs): \1./p' "$OUT/results.txt"
	echo "Co-located capacity (server alone on its CPU, busy loops on the others): $cap req/s."
	echo "Means over $reps rounds, +- the 95% confidence interval (Student's t)."
	echo
	awk '
	function t95(df) {	# Student t, two-sided 95%
		split("12.71 4.30 3.18 2.78 2.57 2.45 2.36 2.31 2.26 2.23", T, " ")
		return df < 1 ? 0 : df <= 10 ? T[df] : df <= 30 ? 2.1 : 1.96
	}
	/^SCX-BENCH cfg=/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		c = f["cfg"]; n[c]++
		for (k in f) if (k != "cfg") { s[c, k] += f[k]; q[c, k] += f[k] * f[k] }
	}
	function ci(c, k,   m, v) {
		m = s[c, k] / n[c]
		v = n[c] > 1 ? (q[c, k] - n[c] * m * m) / (n[c] - 1) : 0
		return sprintf("%.1f +- %.1f", m, t95(n[c] - 1) * sqrt(v > 0 ? v : 0) / sqrt(n[c]))
	}
	END {
		print "| configuration | rate req/s | served req/s | server delay per run us | vs solo | vs partition | p50 us | p99 us | busy loops: iterations/s | reserved |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		ds = s["solo", "delay_us"] / n["solo"]
		dp = s["partition", "delay_us"] / n["partition"]
		split("solo partition default scx", C, " ")
		for (i = 1; i <= 4; i++) {
			c = C[i]; d = s[c, "delay_us"] / n[c]
			printf "| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f |\n",
				(c == "scx" ? "scx_satfeed" : c), s[c, "rate"] / n[c],
				ci(c, "served"), ci(c, "delay_us"),
				(ds > 0 ? sprintf("%.2fx", d / ds) : "-"),
				(dp > 0 ? sprintf("%.2fx", d / dp) : "-"),
				ci(c, "p50_us"), ci(c, "p99_us"), ci(c, "ant_ips"),
				s[c, "reserved"] / n[c]
		}
	}' "$OUT/results.txt"
} > "$OUT/table.md"

echo
cat "$OUT/table.md"
echo "(${secs} s; results and table in $OUT, console in $LOG)"
[ $QUICK = 1 ] && echo "vm/scx-bench.sh --quick: every figure present and finite"
exit 0
