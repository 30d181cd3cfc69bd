#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/netem.sh - network robustness of RPS_obs (the paper's Table II):
# the memcached sweep without and with 10 ms delay + 1% loss between client
# and server, in the Debian 6.12 guest (this host's kernel has no netem).
#
#   1. setup-kernel.sh (cached): the bookworm-backports kernel
#   2. veth.ko and sch_netem.ko taken from that kernel's image package and
#      decompressed (xz -d) into $VM_DIR/netem-mods (neither has module
#      dependencies: modinfo -F depends is empty)
#   3. an initramfs with busybox, satfeed-loader, satfeedctl, sfload,
#      memcached, ip and tc (iproute2) plus their libraries, the two modules
#      and guest/netem-guest.sh as /test.sh
#   4. boot.sh (QEMU TCG); the guest builds netns "srv" + a veth pair,
#      measures memcached's capacity, sweeps SF_LEVELS offered rates from
#      10% to 100% of it without netem and then with netem, and prints one
#      NETEM-LEVEL line per level and one NETEM-R2 line per condition
#   5. here: those lines -> build/validate/netem.csv, a table, the two R²
#
# Not part of `make test` or `make vm-test`.  Run time: about 3-5 minutes.
#
# Usage: tests/vm/netem.sh [-G SECONDS] [-T SECONDS] [-a 'SF_KEY=val ...']
#   -G  the guest's budget in guest seconds (default 900); the wall-clock
#       limits scale it by this host's speed, measured first in the same
#       run (vm_calibrate in lib.sh), up to VM_TIMEOUT_MAX
#   -T  the wall-clock limit outright instead of the scaled one
#   -a  guest settings (see the header of guest/netem-guest.sh), e.g.
#       -a 'SF_LEVELS=8 SF_NETEM_DIRS=c2s'
# Environment: VM_DIR (default build/vm), BUILD (default build),
# OUT (default build/validate), VM_QUIET=1 (console only in the log).
# Takes the test lock (/run/lock/satfeed-tests.lock, SF_LOCK) for the run.
# Outputs: $VM_DIR/netem-console.log, $OUT/netem.csv, $OUT/netem.txt.
# Exit: 0 the guest run completed and both R² exist; 1 otherwise; 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=${OUT:-$ROOT/build/validate}
TIMEOUT=${VM_TIMEOUT:-}
GUEST_LIMIT=900
vm_args '' "$@"

# veth and sch_netem come out of the 6.12 image package
[ "$VM_KERNEL" = bpo612 ] || vm_die "netem.sh runs on the bpo612 guest only (VM_KERNEL=$VM_KERNEL)"
vm_begin
make -s -C "$ROOT" all >/dev/null

# --- the two modules, from the kernel image package (cached per KREL) ---
MODS=$VM_DIR/netem-mods
if [ "$(cat "$MODS/.krel" 2>/dev/null)" != "$KREL" ] ||
   [ ! -f "$MODS/veth.ko" ] || [ ! -f "$MODS/sch_netem.ko" ]; then
	vm_log "extracting veth and sch_netem from linux-image-$KVER"
	rm -rf "$MODS"
	mkdir -p "$MODS/x"
	dpkg-deb --fsys-tarfile "$VM_KERNEL_DIR"/debs/linux-image-"${KVER}"_*.deb |
		tar -x -C "$MODS/x" --wildcards \
			"./lib/modules/$KVER/kernel/net/sched/sch_netem.ko*" \
			"./lib/modules/$KVER/kernel/drivers/net/veth.ko*"
	for m in veth sch_netem; do
		f=$(find "$MODS/x" -name "$m.ko*" | head -1)
		[ -n "$f" ] || vm_die "$m.ko not in linux-image-$KVER"
		case $f in
		*.xz) xz -dc "$f" > "$MODS/$m.ko" ;;
		*.zst) zstd -dc "$f" > "$MODS/$m.ko" ;;
		*) cp "$f" "$MODS/$m.ko" ;;
		esac
		deps=$(modinfo -F depends "$MODS/$m.ko" 2>/dev/null || true)
		[ -z "$deps" ] || vm_die "$m.ko depends on '$deps': not handled"
	done
	rm -rf "$MODS/x"
	echo "$KREL" > "$MODS/.krel"
fi

BINS=()
vm_bins satfeed-loader satfeedctl sfload
for b in memcached ip tc; do
	p=$(command -v "$b") || vm_die "$b not found on the host"
	BINS+=(-b "$p")
done
FILES=(-f "$MODS/veth.ko:/lib/satfeed/" -f "$MODS/sch_netem.ko:/lib/satfeed/")
LOG=$VM_DIR/netem-console.log
vm_boot "$VM_DIR/netem-initrd.gz" "$ROOT/tests/vm/guest/netem-guest.sh" \
	"$LOG" -a "$APPEND" >&2
rc=$VM_RC

# --- results ---
mkdir -p "$OUT"
CSV=$OUT/netem.csv
awk '
	BEGIN { print "condition,level,offered_rps,served_rps,rps_obs,send_windows,p99_us,timeouts,duration_s" }
	/^NETEM-LEVEL / {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		print v["cond"] "," v["level"] "," v["offered"] "," v["served"] "," \
			v["rps_obs"] "," v["windows"] "," v["p99_us"] "," v["timeouts"] "," v["duration"]
	}' "$LOG" > "$CSV"
{
	echo "netem sweep: memcached -t 1 in the 6.12 guest (QEMU TCG), satfeed window $(grep -o 'window [0-9]* samples' "$LOG" | head -1 | awk '{print $2}')"
	grep -m1 '^NETEM-CAPACITY' "$LOG" | sed 's/^NETEM-CAPACITY rps=/capacity (no netem): /; s/$/ rps/' || true
	grep -m1 '^NETEM: netem on' "$LOG" | sed 's/^NETEM: //' || true
	grep -m1 '^NETEM: ping' "$LOG" | sed 's/^NETEM: //' || true
	printf '%-6s %5s %10s %10s %10s %7s %10s %8s\n' cond level offered served rps_obs windows p99_us timeouts
	awk -F, 'NR > 1 { printf "%-6s %5s %10s %10.1f %10s %7s %10s %8s\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$CSV"
	grep '^NETEM-R2' "$LOG" | sed 's/^NETEM-R2 /R² /' || true
} > "$OUT/netem.txt"
cat "$OUT/netem.txt"
nr2=$(grep -c '^NETEM-R2 .*r2=[0-9.-]*$' "$LOG" || true)
if [ "$nr2" != 2 ] || [ "$(awk 'END { print NR }' "$CSV")" -lt 3 ]; then
	echo "netem: incomplete (see $LOG)" >&2
	rc=1
fi
vm_log "netem run: $VM_SECS s; $CSV"
exit $rc
