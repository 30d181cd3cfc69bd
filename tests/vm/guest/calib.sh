#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The host-speed calibration, run as /test.sh by the guest's /init when
# vm_calibrate (tests/vm/lib.sh) boots a guest of busybox alone under the
# same QEMU options as the run it calibrates.
#
# A fixed piece of work on the guest's own clock (QEMU -icount: guest time
# is the instruction count, the same on every host): SF_CALIB_LOOPS turns
# of a shell loop, first on one CPU, then one such loop on every CPU at
# once.  Each phase is framed by two lines whose arrival the host stamps
# with its wall clock:
#   SATFEED-CALIB: begin PHASE t=GUEST_SECONDS
#   SATFEED-CALIB: end PHASE t=GUEST_SECONDS
# (PHASE one or all); wall seconds / guest seconds of a phase is how slow
# this host runs the guest, the factor every wall-clock limit is scaled by.
LOOPS=${SF_CALIB_LOOPS:-100000}

up() { cut -d' ' -f1 /proc/uptime; }
spin() {
	i=0
	while [ $i -lt "$LOOPS" ]; do i=$((i + 1)); done
}

echo "SATFEED-CALIB: begin one t=$(up)"
spin
echo "SATFEED-CALIB: end one t=$(up)"
echo "SATFEED-CALIB: begin all t=$(up)"
c=0
while [ $c -lt "$(nproc)" ]; do
	spin &
	c=$((c + 1))
done
wait
echo "SATFEED-CALIB: end all t=$(up)"
