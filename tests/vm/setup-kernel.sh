#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/setup-kernel.sh - get the guest kernel and a module build tree.
#
# Installs the host tools the guest pipeline needs (idempotent), discovers the
# current bookworm-backports kernel (never hard-coded), downloads the image,
# headers (-amd64 and -common) and kbuild packages into $VM_DIR/debs, unpacks
# them into $VM_DIR/root without installing them (installing pulls in udev,
# initramfs-tools, ...), and repoints the -amd64 headers' Makefile at the
# unpacked -common tree.  Everything is cached: a second run does no download.
#
# Writes $VM_DIR/kernel.env (shell syntax) with:
#   KREL     ABI name, e.g. 6.12.95+deb12
#   KVER     uname -r of the guest, e.g. 6.12.95+deb12-amd64
#   KDIR     headers tree for `make -C $KDIR M=...`
#   VMLINUZ  kernel image to boot
#   VMLINUX  BTF-only vmlinux (for bpftool btf dump / module BTF)
#
# Usage: tests/vm/setup-kernel.sh [--print]   (--print: cat kernel.env)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

vm_need_root
mkdir -p "$VM_DIR/debs"

vm_deps

# Discover the ABI name that linux-image-amd64 in backports points at.
discover() {
	apt-cache depends linux-image-amd64/bookworm-backports 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { v = $2; sub("^linux-image-", "", v);
			sub("-amd64$", "", v); print v; exit }'
}
KREL=$(discover || true)
if [ -z "$KREL" ]; then
	vm_apt_update force
	KREL=$(discover || true)
fi
[ -n "$KREL" ] || vm_die "cannot discover the bookworm-backports kernel (apt-cache depends linux-image-amd64/bookworm-backports)"
KVER=$KREL-amd64
PKGS=(linux-image-$KVER linux-headers-$KVER linux-headers-$KREL-common linux-kbuild-$KREL)

fetch() {
	local p missing=()
	for p in "${PKGS[@]}"; do
		compgen -G "$VM_DIR/debs/${p}_*.deb" >/dev/null || missing+=("$p/bookworm-backports")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	vm_log "apt-get download ${missing[*]}"
	# _apt cannot write into a root-owned build tree; download as root.
	(cd "$VM_DIR/debs" && apt-get download -q -o APT::Sandbox::User=root \
		"${missing[@]}" >"$VM_DIR/apt-download.log" 2>&1)
}
if ! fetch; then
	vm_apt_update force
	fetch || vm_die "apt-get download failed (see $VM_DIR/apt-download.log)"
fi

RDIR=$VM_DIR/root
STAMP=$RDIR/.satfeed-krel
if [ "$(cat "$STAMP" 2>/dev/null)" != "$KREL" ]; then
	vm_log "unpacking $KREL into $RDIR"
	rm -rf "$RDIR"
	mkdir -p "$RDIR"
	# Only /boot of the image: its modules are not needed in the guest.
	dpkg-deb --fsys-tarfile "$VM_DIR"/debs/linux-image-"${KVER}"_*.deb |
		tar -x -C "$RDIR" ./boot
	for p in "${PKGS[@]:1}"; do
		dpkg-deb -x "$VM_DIR"/debs/"${p}"_*.deb "$RDIR"
	done
	echo "$KREL" > "$STAMP"
fi

KDIR=$RDIR/usr/src/linux-headers-$KVER
COMMON=$RDIR/usr/src/linux-headers-$KREL-common
# The -amd64 Makefile includes /usr/src/linux-headers-<krel>-common/Makefile.
sed -i "s|^include .*/linux-headers-$KREL-common/Makefile\$|include $COMMON/Makefile|" \
	"$KDIR/Makefile"
grep -q "^include $COMMON/Makefile\$" "$KDIR/Makefile" ||
	vm_die "could not repoint $KDIR/Makefile"

VMLINUZ=$RDIR/boot/vmlinuz-$KVER
for f in "$VMLINUZ" "$KDIR/vmlinux" "$KDIR/scripts/basic/fixdep"; do
	[ -e "$f" ] || vm_die "missing $f after unpacking"
done

cat > "$VM_DIR/kernel.env" <<EOT
KREL=$KREL
KVER=$KVER
KDIR=$KDIR
VMLINUZ=$VMLINUZ
VMLINUX=$KDIR/vmlinux
EOT
vm_log "guest kernel $KVER ready (KDIR=$KDIR)"
[ "${1:-}" = --print ] && cat "$VM_DIR/kernel.env"
exit 0
