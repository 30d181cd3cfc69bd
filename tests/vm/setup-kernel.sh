#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/setup-kernel.sh - get the guest kernel and a module build tree.
#
# Installs the host tools the guest pipeline needs (idempotent), discovers
# the current kernel of the selected Debian suite (never hard-coded),
# downloads the image, headers (-amd64 and -common) and kbuild packages into
# $VM_KERNEL_DIR/debs, unpacks them into $VM_KERNEL_DIR/root without
# installing them (installing pulls in udev, initramfs-tools, ...), and
# repoints the -amd64 headers' Makefile at the unpacked -common tree.
# Everything is cached: a second run does no download.
#
# The kernel is VM_KERNEL's (tests/vm/lib.sh):
#   bpo612   linux-image-amd64 of bookworm-backports (6.12)
#   trixie7  linux-image-amd64 of trixie-backports (7.x), through a private
#            apt state, with the module build adjustments of
#            tests/vm/kernel-trixie7.sh
#
# Writes $VM_KERNEL_DIR/kernel.env (shell syntax) with:
#   KREL        ABI name, e.g. 6.12.95+deb12
#   KVER        uname -r of the guest, e.g. 6.12.95+deb12-amd64
#   KDIR        headers tree for `make -C $KDIR M=...`
#   VMLINUZ     kernel image to boot
#   VMLINUX     BTF-only vmlinux (for bpftool btf dump / module BTF)
#   KMAKE_ARGS  extra make arguments for a module build (may be empty)
#
# Usage: [VM_KERNEL=bpo612|trixie7] tests/vm/setup-kernel.sh [--print]
#   --print: cat kernel.env
set -euo pipefail
. "$(dirname "$0")/lib.sh"

vm_need_root
mkdir -p "$VM_KERNEL_DIR/debs"

vm_deps

# kapt apt-get|apt-cache ARGS...: apt with the sources that hold the kernel
case $VM_KERNEL in
bpo612)
	SUITE=bookworm-backports
	kapt() { "$@" -o APT::Sandbox::User=root; }
	kapt_refresh() { vm_apt_update force; }
	;;
trixie7)
	SUITE=trixie-backports
	. "$ROOT/tests/vm/kernel-trixie7.sh"
	kapt() { sf_trixie_apt "$@"; }
	kapt_refresh() { rm -f "$VM_KERNEL_DIR/apt/.updated"; }
	;;
esac

# Discover the ABI name that linux-image-amd64 in $SUITE points at.
discover() {
	kapt apt-cache depends "linux-image-amd64/$SUITE" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { v = $2; sub("^linux-image-", "", v);
			sub("-amd64$", "", v); print v; exit }'
}
KREL=$(discover || true)
if [ -z "$KREL" ]; then
	kapt_refresh
	KREL=$(discover || true)
fi
[ -n "$KREL" ] || vm_die "cannot discover the $SUITE kernel (apt-cache depends linux-image-amd64/$SUITE)"
KVER=$KREL-amd64
# From 7.x on, linux-image-<ver> is a meta package: the kernel is in
# linux-binary-<ver> (usr/lib/modules/<ver>/vmlinuz).  The first package
# holds the image.
if kapt apt-cache show "linux-binary-$KVER/$SUITE" >/dev/null 2>&1; then
	IMAGE_PKG=linux-binary-$KVER
	IMAGE_PATH=usr/lib/modules/$KVER/vmlinuz
else
	IMAGE_PKG=linux-image-$KVER
	IMAGE_PATH=boot/vmlinuz-$KVER
fi
PKGS=("$IMAGE_PKG" linux-headers-$KVER linux-headers-$KREL-common linux-kbuild-$KREL)

DEBS=$VM_KERNEL_DIR/debs
fetch() {
	local p missing=()
	for p in "${PKGS[@]}"; do
		compgen -G "$DEBS/${p}_*.deb" >/dev/null || missing+=("$p/$SUITE")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	vm_log "apt-get download ${missing[*]}"
	# _apt cannot write into a root-owned build tree; download as root.
	(cd "$DEBS" && kapt apt-get download -q "${missing[@]}" \
		>"$VM_KERNEL_DIR/apt-download.log" 2>&1)
}
if ! fetch; then
	kapt_refresh
	fetch || vm_die "apt-get download failed (see $VM_KERNEL_DIR/apt-download.log)"
fi

RDIR=$VM_KERNEL_DIR/root
STAMP=$RDIR/.satfeed-krel
KDIR=$RDIR/usr/src/linux-headers-$KVER
COMMON=$RDIR/usr/src/linux-headers-$KREL-common
KMAKE_ARGS=
if [ "$(cat "$STAMP" 2>/dev/null)" != "$KREL" ]; then
	vm_log "unpacking $KREL into $RDIR"
	rm -rf "$RDIR"
	mkdir -p "$RDIR"
	# Only the image itself: its modules are not needed in the guest.
	dpkg-deb --fsys-tarfile "$DEBS"/"${IMAGE_PKG}"_*.deb |
		tar -x -C "$RDIR" "./$IMAGE_PATH"
	for p in "${PKGS[@]:1}"; do
		dpkg-deb -x "$DEBS"/"${p}"_*.deb "$RDIR"
	done
	if [ "$VM_KERNEL" = trixie7 ]; then
		sf_trixie_kbuild_compat "$RDIR" "$KDIR" > "$RDIR/.kmake-args"
	fi
	echo "$KREL" > "$STAMP"
fi
KMAKE_ARGS=$(cat "$RDIR/.kmake-args" 2>/dev/null || true)

# The -amd64 Makefile includes /usr/src/linux-headers-<krel>-common/Makefile
# (and from 7.x on sets KBUILD_OUTPUT to its own /usr/src path).
sed -i -e "s|^include .*/linux-headers-$KREL-common/Makefile\$|include $COMMON/Makefile|" \
	-e "s|^KBUILD_OUTPUT=.*/linux-headers-$KVER\$|KBUILD_OUTPUT=$KDIR|" \
	"$KDIR/Makefile"
grep -q "^include $COMMON/Makefile\$" "$KDIR/Makefile" ||
	vm_die "could not repoint $KDIR/Makefile"

VMLINUZ=$RDIR/$IMAGE_PATH
for f in "$VMLINUZ" "$KDIR/vmlinux" "$KDIR/scripts/basic/fixdep"; do
	[ -e "$f" ] || vm_die "missing $f after unpacking"
done

cat > "$VM_KERNEL_DIR/kernel.env" <<EOT
KREL=$KREL
KVER=$KVER
KDIR=$KDIR
VMLINUZ=$VMLINUZ
VMLINUX=$KDIR/vmlinux
KMAKE_ARGS="$KMAKE_ARGS"
EOT
vm_log "guest kernel $KVER ready (KDIR=$KDIR)"
[ "${1:-}" = --print ] && cat "$VM_KERNEL_DIR/kernel.env"
exit 0
