#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/scx-bench.sh - what scx_satfeed does to a server and to the rest
# of the machine, measured: in one boot of the Debian 7.x guest (4 CPUs,
# QEMU TCG), the bundled server's p99 latency and served rate and the
# CPU-bound antagonists' progress under the default scheduler and under
# scx_satfeed, at about 20%, 60% and 90% of the server's capacity
# (measured first, in the same boot).  See guest/scx-bench-guest.sh.
#
#   1. setup-kernel.sh (cached): the trixie-backports kernel
#   2. the engine binaries and scx_satfeed (as tests/vm/scx.sh builds them)
#   3. an initramfs with guest/scx-bench-guest.sh as /test.sh
#   4. boot.sh with 4 CPUs and, by default, QEMU -icount shift=0: guest
#      time is the instruction count (1 ns per instruction), so the figures
#      do not move with the host's load; compare inside one run
#   5. here: the guest's SCX-BENCH lines into $OUT/results.txt, the table
#      $OUT/table.md, the plot $OUT/scx-bench.png (gnuplot), every figure
#      checked present and finite
#
# Figures are printed, never asserted.  The table and plot in
# docs/sched_ext.md were made by `make bench-scx` (this script, no option).
#
# Usage: tests/vm/scx-bench.sh [--quick] [--wallclock] [-T SECONDS]
#                              [-a 'SF_KEY=val ...']
#   --quick      shorter runs (2 s measured, 1 s warm-up): checks that every
#                figure is made; its numbers are noisier
#   --wallclock  guest time from the host's clock instead of -icount
#   -T           guest timeout (default 1500, 900 with --quick)
#   -a           guest settings (see guest/scx-bench-guest.sh)
# Environment: VM_DIR (default build/vm), BUILD (default build), OUT
# (default $VM_DIR/scx-bench), VM_QUIET=1.
# Takes the test lock for the run.  Exit: 0 every figure is there; 1
# otherwise; 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=${OUT:-$VM_DIR/scx-bench}
TIMEOUT=
vm_args 'quick wallclock' "$@"
if [ $QUICK = 1 ]; then
	SETTINGS="SF_WARMUP=1 SF_DURATION=2 SF_CAP_DURATION=2"
	TIMEOUT=${TIMEOUT:-900}
else
	SETTINGS=
	TIMEOUT=${TIMEOUT:-1500}
fi
command -v gnuplot >/dev/null ||
	vm_die "gnuplot missing (tools/install-deps.sh bench)"

vm_select_kernel trixie7
vm_begin
make -s -C "$ROOT" all >/dev/null
vm_build_scx

BINS=(-b /bin/bash -b "$SCX_OUT/scx/scx_satfeed")
vm_bins satfeed-loader satfeedctl sfserver sfload
LOG=$VM_DIR/scx-bench-console.log
vm_boot "$VM_DIR/scx-bench-stage/initrd.gz" \
	"$ROOT/tests/vm/guest/scx-bench-guest.sh" "$LOG" \
	-T "$TIMEOUT" -c 4 -a "$SETTINGS $APPEND" >&2
rc=$VM_RC secs=$VM_SECS

mkdir -p "$OUT"
rm -f "$OUT"/results.txt "$OUT"/table.md "$OUT"/scx-bench.dat "$OUT"/scx-bench.png
grep -E '^SCX-BENCH( |:)' "$LOG" > "$OUT/results.txt" || true
sed 's/^/  /' "$OUT/results.txt"

# ---- every figure present and finite ----
bad=0
[ "$rc" = 0 ] || { echo "scx-bench.sh: the guest run failed (console: $LOG)" >&2; bad=1; }
cap=$(sed -n 's/^SCX-BENCH capacity=\([0-9.]*\)$/\1/p' "$OUT/results.txt")
[ -n "$cap" ] || { echo "scx-bench.sh: no capacity line" >&2; bad=1; }
levels=$(sed -n 's/.*SF_LEVELS="\{0,1\}\([0-9 ]*\).*/\1/p' <<<"$APPEND")
levels=${levels:-20 60 90}
KEYS="offered served p50_us p99_us timeouts ant_cpus reserved level seconds"
for s in default scx_satfeed; do
	for l in $levels; do
		line=$(grep -c "^SCX-BENCH sched=$s load=$l " "$OUT/results.txt" || true)
		if [ "$line" != 1 ]; then
			echo "scx-bench.sh: $line lines for $s at $l%" >&2
			bad=1
			continue
		fi
		for k in $KEYS; do
			grep "^SCX-BENCH sched=$s load=$l " "$OUT/results.txt" |
				grep -qE " $k=[0-9]+(\.[0-9]+)?( |\$)" || {
				echo "scx-bench.sh: $s at $l%: $k missing or not finite" >&2
				bad=1; }
		done
	done
done
if [ "$bad" != 0 ]; then
	echo "scx-bench.sh: FAILED (${secs} s; console $LOG)" >&2
	exit 1
fi

# ---- the table and the plot ----
# scx-bench.dat: load offered, then per scheduler served% p99_ms ant_cpus
# (default: columns 3-5; scx_satfeed: 6-8, reserved 9, level 10)
awk -v levels="$levels" '
	/^SCX-BENCH sched=/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		k = f["sched"] SUBSEP f["load"]
		for (x in f) v[k, x] = f[x]
	}
	END {
		n = split(levels, L, " ")
		for (i = 1; i <= n; i++) {
			d = "default" SUBSEP L[i]; s = "scx_satfeed" SUBSEP L[i]
			printf "%s %s", L[i], v[d, "offered"]
			printf " %.2f %.3f %.3f", 100 * v[d, "served"] / v[d, "offered"],
				v[d, "p99_us"] / 1000, v[d, "ant_cpus"]
			printf " %.2f %.3f %.3f %s %s\n",
				100 * v[s, "served"] / v[s, "offered"],
				v[s, "p99_us"] / 1000, v[s, "ant_cpus"],
				v[s, "reserved"], v[s, "level"]
		}
	}' "$OUT/results.txt" > "$OUT/scx-bench.dat"

mode="QEMU TCG, -icount shift=0 (guest time = instruction count)"
clock="QEMU -icount"
if [ -z "$ICOUNT" ]; then
	mode="QEMU TCG, wall-clock guest time"
	clock="wall clock"
fi
{
	echo "scx_satfeed against the default scheduler, $KVER guest, 4 CPUs, $mode."
	echo "Server capacity alone: $cap req/s.  p99 in ms; served in % of offered;"
	echo "antagonists: CPUs' worth of busy-loop progress (4 busy loops)."
	echo
	echo "| load | offered req/s | default: served | p99 ms | antagonists | scx_satfeed: served | p99 ms | antagonists | reserved CPUs | level |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk '{ printf "| %s%% | %s | %s%% | %s | %s | %s%% | %s | %s | %s | %s |\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$OUT/scx-bench.dat"
} > "$OUT/table.md"

gnuplot <<EOT || { echo "scx-bench.sh: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 1200,420 font 'sans,10' noenhanced
set output '$OUT/scx-bench.png'
set grid
set key top left
set xlabel 'offered load (% of capacity alone)'
set xrange [0:100]
set multiplot layout 1,3 title "scx_satfeed vs the default scheduler: $KVER guest, 4 CPUs, 4 busy loops, $clock" noenhanced
set title 'server p99 latency' noenhanced
set ylabel 'p99 (ms, log scale)'
set logscale y
plot '$OUT/scx-bench.dat' u 1:4 w lp pt 7 lw 2 t 'default', '' u 1:7 w lp pt 5 lw 2 t 'scx_satfeed'
unset logscale y
set title 'server: served / offered' noenhanced
set ylabel 'served (% of offered)'
set yrange [0:110]
plot '$OUT/scx-bench.dat' u 1:3 w lp pt 7 lw 2 t 'default', '' u 1:6 w lp pt 5 lw 2 t 'scx_satfeed'
set title 'antagonists: progress' noenhanced
set ylabel "CPUs' worth of busy-loop progress"
set yrange [0:4.2]
set key bottom left
plot '$OUT/scx-bench.dat' u 1:5 w lp pt 7 lw 2 t 'default', '' u 1:8 w lp pt 5 lw 2 t 'scx_satfeed', '' u 1:(4-\$9) w l dt 2 lw 2 lc rgb 'gray40' t 'CPUs not reserved (scx_satfeed)'
unset multiplot
EOT

echo
cat "$OUT/table.md"
echo "(${secs} s; results, table and plot in $OUT, console in $LOG)"
[ $QUICK = 1 ] && echo "vm/scx-bench.sh --quick: every figure present and finite"
exit 0
