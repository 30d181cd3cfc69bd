#!/usr/bin/env bash
# install-deps.sh - install what satfeed needs to build and test, from
# Debian's registry only.  Idempotent: a machine that has everything returns
# at once.  bookworm's libbpf (1.1) and bpftool (7.1) are too old, so they come
# from bookworm-backports, whose versions move: we ask apt for the candidate
# rather than naming one.
set -euo pipefail

need_main=(clang-19 llvm-19 gcc make pkg-config zlib1g-dev python3
	   iproute2 util-linux procps)
need_bpo=(libbpf-dev bpftool libelf-dev)
extra=("$@")	# e.g. memcached gnuplot, for validate/bench

missing=()
for p in "${need_main[@]}" "${extra[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
# backports: installed AND at least the 1.4 libbpf series (bookworm has 1.1)
bpo_missing=()
for p in "${need_bpo[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		bpo_missing+=("$p")
done
if dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null | grep -q '^1:1\.[0-3]\.'; then
	bpo_missing+=(libbpf-dev)
fi

if [ ${#missing[@]} -eq 0 ] && [ ${#bpo_missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]} ${bpo_missing[*]}); run as root" >&2
	exit 1
fi

src=/etc/apt/sources.list.d/bookworm-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$uri" ] || uri=http://deb.debian.org/debian
	cat > "$src" <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
if [ ${#missing[@]} -gt 0 ]; then
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
apt-get install -y -q --no-install-recommends -t bookworm-backports \
	"${need_bpo[@]}" >/dev/null
echo "install-deps: installed ${missing[*]} ${need_bpo[*]}"
