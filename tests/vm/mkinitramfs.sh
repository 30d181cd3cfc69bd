#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/mkinitramfs.sh - build the guest's initramfs.
#
# The image holds busybox-static (with a symlink per applet), the guest /init
# (tests/vm/guest/init), the caller's binaries with every shared library ldd
# lists for them, any extra files (module .ko, BPF objects, ...) and the test
# script that /init runs.
#
# Usage: tests/vm/mkinitramfs.sh [-o OUT] [-t TEST] [-b BIN[:DST]]...
#                                [-f FILE[:DST]]...
#   -o OUT        output (gzip'd newc cpio), default $VM_DIR/initrd.gz
#   -t TEST       test script, installed as /test.sh (default: none; /init
#                 then reports FAIL)
#   -b BIN[:DST]  executable plus its libraries; DST defaults to /bin/NAME
#   -f FILE[:DST] plain file; DST defaults to /NAME; DST ending in / is a dir
#   -i INIT       alternative /init (default tests/vm/guest/init)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

OUT=$VM_DIR/initrd.gz
INIT=$ROOT/tests/vm/guest/init
TEST=
BINS=()
FILES=()
while getopts "o:t:b:f:i:h" opt; do
	case $opt in
	o) OUT=$OPTARG ;;
	t) TEST=$OPTARG ;;
	b) BINS+=("$OPTARG") ;;
	f) FILES+=("$OPTARG") ;;
	i) INIT=$OPTARG ;;
	*) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done

BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
	vm_die "$BUSYBOX is not busybox-static (apt-get install busybox-static)"

STAGE=$VM_DIR/initramfs
rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,run,etc,lib,lib64,root,usr/bin,usr/sbin}
cp "$BUSYBOX" "$STAGE/bin/busybox"
for applet in $("$BUSYBOX" --list-full); do
	[ -e "$STAGE/$applet" ] || ln -s /bin/busybox "$STAGE/$applet"
done
install -m 0755 "$INIT" "$STAGE/init"
[ -n "$TEST" ] && install -m 0755 "$TEST" "$STAGE/test.sh"

# dst_of SRC SPEC DEFAULT_DIR: where SRC goes.
dst_of() {
	local src=$1 spec=$2 dir=$3 dst
	if [[ $spec == *:* ]]; then
		dst=${spec#*:}
	else
		dst=$dir/
	fi
	[[ $dst == */ ]] && dst=$dst$(basename "$src")
	echo "$dst"
}

copy_libs() {
	local lib
	# "name => /path (addr)", "/lib64/ld-linux... (addr)", "linux-vdso (addr)"
	for lib in $(ldd "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++)
			if ($i ~ /^\//) print $i }'); do
		[ -e "$STAGE$lib" ] && continue
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$lib" "$STAGE$lib"
	done
}

for spec in ${BINS[@]+"${BINS[@]}"}; do
	src=${spec%%:*}
	[ -x "$src" ] || vm_die "binary $src missing or not executable"
	dst=$(dst_of "$src" "$spec" /bin)
	mkdir -p "$STAGE$(dirname "$dst")"
	rm -f "$STAGE$dst"	# may be a busybox applet symlink
	cp -L "$src" "$STAGE$dst"
	copy_libs "$src"
done
for spec in ${FILES[@]+"${FILES[@]}"}; do
	src=${spec%%:*}
	[ -e "$src" ] || vm_die "file $src missing"
	dst=$(dst_of "$src" "$spec" "")
	mkdir -p "$STAGE$(dirname "$dst")"
	cp -rL "$src" "$STAGE$dst"
done

mkdir -p "$(dirname "$OUT")"
(cd "$STAGE" && find . -print0 | cpio --null -o -H newc --quiet -R 0:0) |
	gzip -1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
vm_log "initramfs $OUT ($(du -h "$OUT" | cut -f1))"
