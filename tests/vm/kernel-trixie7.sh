# SPDX-License-Identifier: GPL-2.0
# tests/vm/kernel-trixie7.sh - what the trixie-backports (7.x) guest kernel
# needs beyond the bookworm-backports one.  Sourced by setup-kernel.sh after
# lib.sh, with VM_KERNEL=trixie7.
#
# Its packages come from trixie, which must never become a source of this
# bookworm system (its libc would replace bookworm's): apt runs on a
# private state under $VM_KERNEL_DIR/apt, reading only trixie and
# trixie-backports, and only downloads.
#
# Its headers were built with gcc-14 against glibc 2.41; an out-of-tree
# module build here is made with bookworm's gcc-12 (CC=gcc-12 in
# KMAKE_ARGS) and three adjustments (sf_trixie_kbuild_compat):
#   1. gcc-12 lacks -fmin-function-alignment: CONFIG_CC_HAS_MIN_FUNCTION_
#      ALIGNMENT is unset in include/config/auto.conf, so kbuild passes
#      -falign-functions instead (same alignment, the older flag);
#   2. the kbuild ELF tools that need a newer glibc than this system's
#      (objtool, modpost, resolve_btfids on 7.3) run through trixie's own
#      dynamic loader and libraries, unpacked privately: each is renamed
#      TOOL.bin and TOOL becomes a two-line wrapper;
#   3. pahole 1.24 rejects the BTF options 7.x's kbuild passes: trixie's
#      pahole (1.30) runs the same way; kernel.env's KMAKE_ARGS carries
#      PAHOLE=<its wrapper> for the module build.

SF_TRIXIE_SUITE=trixie-backports
# trixie's libraries the wrapped tools and pahole need, and pahole itself
SF_TRIXIE_TOOLCHAIN=(libc6 libelf1t64 zlib1g libzstd1 libdw1t64 liblzma5
		     libbz2-1.0 libbpf1 pahole)

# sf_trixie_apt apt-get|apt-cache ARGS...: apt on the private trixie state
# (lists refreshed at most once an hour).
sf_trixie_apt() {
	local s=$VM_KERNEL_DIR/apt cmd=$1 a
	shift
	a=(-o Dir::State="$s" -o Dir::State::Lists="$s/lists"
	   -o Dir::Cache="$s/cache" -o Dir::Etc::SourceList=/dev/null
	   -o Dir::Etc::SourceParts="$s/sources"
	   -o Dir::Etc::PreferencesParts="$s/sources"
	   -o Dir::State::status=/var/lib/dpkg/status
	   -o APT::Sandbox::User=root)
	if [ ! -f "$s/sources/trixie.sources" ]; then
		local uri
		uri=$(vm_mirror_uri) || exit 1
		mkdir -p "$s/lists/partial" "$s/cache/archives/partial" \
			"$s/sources"
		cat > "$s/sources/trixie.sources" <<EOT
Types: deb
URIs: $uri
Suites: trixie trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	fi
	if [ -z "$(find "$s/.updated" -mmin -60 2>/dev/null)" ]; then
		vm_log "apt-get update (private trixie state in $s)"
		apt-get "${a[@]}" update -qq >"$s/update.log" 2>&1 ||
			vm_die "apt-get update of trixie failed (see $s/update.log)"
		touch "$s/.updated"
	fi
	"$cmd" "${a[@]}" "$@"
}

# The glibc version this system's tools were built against, e.g. 236.
sf_glibc_num() { ldd --version | awk 'NR == 1 { split($NF, v, "."); print v[1] * 100 + v[2] }'; }

# Does ELF file $1 need a glibc symbol version newer than this system's?
sf_needs_newer_glibc() {
	local have=$1 file=$2
	readelf -V "$file" 2>/dev/null |
		awk -v have="$have" 'match($0, /GLIBC_[0-9]+\.[0-9]+/) {
			split(substr($0, RSTART + 6, RLENGTH - 6), v, ".")
			if (v[1] * 100 + v[2] > have) found = 1 }
			END { exit !found }'
}

# sf_trixie_kbuild_compat ROOT KDIR: adjust the unpacked headers in KDIR
# (see the header) with trixie's toolchain unpacked under ROOT/toolchain;
# prints the make arguments the module build needs.
sf_trixie_kbuild_compat() {
	local root=$1 kdir=$2 tc=$1/toolchain debs=$VM_KERNEL_DIR/debs
	local lib p f have n=0 want=()

	for p in "${SF_TRIXIE_TOOLCHAIN[@]}"; do
		compgen -G "$debs/${p}_*.deb" >/dev/null || want+=("$p/trixie")
	done
	if [ ${#want[@]} -gt 0 ]; then
		vm_log "apt-get download (trixie) ${want[*]}"
		(cd "$debs" && sf_trixie_apt apt-get download -q "${want[@]}" \
			>"$VM_KERNEL_DIR/apt-download-toolchain.log" 2>&1) ||
			vm_die "download of trixie's toolchain failed (see $VM_KERNEL_DIR/apt-download-toolchain.log)"
	fi
	rm -rf "$tc"
	mkdir -p "$tc"
	for p in "${SF_TRIXIE_TOOLCHAIN[@]}"; do
		dpkg-deb -x "$debs"/"${p}"_*.deb "$tc"
	done
	lib=$tc/usr/lib/x86_64-linux-gnu
	[ -x "$lib/ld-linux-x86-64.so.2" ] || vm_die "no ld.so in trixie's libc6 ($lib)"

	# 1. the older alignment flag
	sed -i 's/^CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=y$/# CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT is not set/' \
		"$kdir/include/config/auto.conf"
	# 2. every ELF tool of the headers and kbuild trees that this glibc
	# cannot run
	have=$(sf_glibc_num)
	while IFS= read -r -d '' f; do
		head -c 4 "$f" | grep -q 'ELF' || continue
		sf_needs_newer_glibc "$have" "$f" || continue
		mv "$f" "$f.bin"
		printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' \
			"$lib/ld-linux-x86-64.so.2" "$lib" "$f.bin" > "$f"
		chmod 0755 "$f"
		n=$((n + 1))
	done < <(find "$root/usr/src" "$root/usr/lib" -type f -perm -u+x \
		 ! -name '*.bin' -print0)
	vm_log "$n kbuild tools run on trixie's glibc"
	# 3. pahole
	mkdir -p "$tc/bin"
	printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' \
		"$lib/ld-linux-x86-64.so.2" "$lib" "$tc/usr/bin/pahole" \
		> "$tc/bin/pahole"
	chmod 0755 "$tc/bin/pahole"
	"$tc/bin/pahole" --version >/dev/null ||
		vm_die "trixie's pahole does not run ($tc/bin/pahole)"
	# the headers name x86_64-linux-gnu-gcc-14, which bookworm lacks
	echo "CC=gcc-12 PAHOLE=$tc/bin/pahole"
}
