#!/usr/bin/env bash
# install-deps.sh - install what satfeed needs, from Debian's registry only.
#
#   tools/install-deps.sh [GROUP...]      (default: build)
#   tools/install-deps.sh --list GROUP... print the packages, install nothing
#
# Groups (a suite names the groups it needs; `make test` asks for all of
# them at once, so apt resolves the whole set in one transaction):
#   build     compile the engine, the loader and the tools
#   run       the built-in demo (`make run`)
#   test      the host test suites (unit, kernel, CLI, tools, end to end)
#   bench     the overhead benchmarks (the paper's bpftrace method, memcached)
#             and the sched_ext benchmark's plot (gnuplot)
#   validate  the fidelity sweeps (memcached, gnuplot) and the corpus of
#             tests/validate/corpus.sh: lighttpd, nginx (master/workers and
#             reverse proxy), dnsmasq-base (the UDP server, no service
#             unit), python3 (the thread-per-connection server); the
#             corpus runs each on a free port with its own configuration;
#             its held-out servers need apache2-bin (the binary and its
#             MPM modules, no service or configuration), haproxy and
#             unbound (its service is never started by the corpus, which
#             runs it in the foreground with a configuration of its own)
#   vm        the QEMU guest pipeline (kernel module build, initramfs), for
#             both guest kernels: the 7.x one (tests/vm/kernel-trixie7.sh)
#             also reads ELF tools' glibc needs (binutils' readelf) and
#             fetches trixie with a private apt state that trusts
#             debian-archive-keyring; its toolchain comes from trixie
#             unpacked under build/vm, never installed
#   fresh     the clean-room check (debootstrap)
#
# Idempotent: when everything is installed it returns at once.
#
# Why one resolver: bookworm's libbpf (1.1) and bpftool (7.1) are too old, so
# they and the elfutils libraries they link come from bookworm-backports.
# elfutils ships libelf1 and libdw1 from one source package and bookworm's
# libdw1 requires bookworm's libelf1 exactly, so once libelf1 comes from
# backports, anything that pulls libdw1 (bpftrace, pahole) is uninstallable
# unless libdw1 comes from backports too.  The backports packages are named
# PACKAGE/bookworm-backports in the same apt-get call as the rest: only those
# come from backports, and the versions are whatever backports has today.
set -euo pipefail

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

declare -A main=(
	[build]="clang-19 llvm-19 gcc make pkg-config zlib1g-dev liburing-dev"
	[run]="python3"
	[test]="python3 iproute2 util-linux procps strace memcached prometheus
		prometheus-node-exporter gcc-multilib libc6-dev-i386 systemd"
	[bench]="bpftrace memcached python3 gnuplot-nox"
	[validate]="memcached gnuplot-nox python3 iproute2 lighttpd nginx
		   dnsmasq-base apache2-bin haproxy unbound"
	[vm]="qemu-system-x86 busybox-static gcc-12 make pahole cpio gzip kmod libc6-dev libssl3 zlib1g
	      xz-utils bpftrace memcached iproute2 binutils debian-archive-keyring"
	[fresh]="debootstrap git ca-certificates"
)
# From bookworm-backports, always as one consistent set.
bpo_build="libbpf-dev bpftool libelf-dev libelf1 libdw1"

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
case ${1:-} in
-h|--help) usage; exit 0 ;;
esac
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(build)

want_main=()
for g in "${groups[@]}"; do
	if [ -z "${main[$g]+x}" ]; then
		echo "install-deps: unknown group '$g' (build run test bench validate vm fresh)" >&2
		exit 2
	fi
	# shellcheck disable=SC2206
	want_main+=(${main[$g]})
done
# Every group builds satfeed first.
# shellcheck disable=SC2206
want_main+=(${main[build]})
mapfile -t want_main < <(printf '%s\n' "${want_main[@]}" | sort -u)
read -ra want_bpo <<<"$bpo_build"

if [ $list = 1 ]; then
	printf '%s\n' "${want_main[@]}"
	printf '%s/bookworm-backports\n' "${want_bpo[@]}"
	exit 0
fi

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

from_backports() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null | grep -q '~bpo12'
}

missing=()
for p in "${want_main[@]}"; do
	installed "$p" || missing+=("$p")
done
# backports: installed AND the backports build (bookworm's libbpf is 1.1, and
# a bookworm libdw1 next to a backports libelf1 is the conflict above)
bpo_missing=()
for p in "${want_bpo[@]}"; do
	{ installed "$p" && from_backports "$p"; } || bpo_missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ] && [ ${#bpo_missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]} ${bpo_missing[*]}); run as root" >&2
	exit 1
fi

mirror_uri() {
	local uri
	uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$uri" ] || uri=$(awk '/^deb / && $3 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null || true)
	echo "${uri:-http://deb.debian.org/debian}"
}

if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat > /etc/apt/sources.list.d/bookworm-backports.sources <<SRC
Types: deb
URIs: $(mirror_uri)
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=600)
log=$(mktemp /tmp/satfeed-install-deps.XXXXXX)
trap 'rm -f "$log"' EXIT
if ! apt-get -o DPkg::Lock::Timeout=600 update -q >"$log" 2>&1; then
	cat "$log" >&2
	echo "install-deps: apt-get update failed" >&2
	exit 1
fi
if ! apt-get install "${apt_opts[@]}" "${missing[@]}" \
		"${want_bpo[@]/%//bookworm-backports}" >"$log" 2>&1; then
	cat "$log" >&2
	echo "install-deps: apt-get install failed for: ${missing[*]} ${want_bpo[*]} (backports)" >&2
	exit 1
fi
echo "install-deps: installed ${missing[*]} ${bpo_missing[*]}"
