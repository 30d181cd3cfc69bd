#!/usr/bin/env bash
# check-fresh.sh - does satfeed work on a machine where nothing was installed
# by hand?  `make check-fresh` runs this.
#
#   tests/fresh/check-fresh.sh [--ref REV] [--only run|test] [--keep]
#
# Builds (once, then cached) a minimal Debian bookworm userland with
# debootstrap (variant minbase, plus git and make: what a new user or CI
# starts from), unpacks a fresh copy of it for every run, clones this
# repository's commit REV (default HEAD: what is committed, not the work
# tree) into it, and runs the README's two commands inside it as root:
#
#   make run            the demo
#   CI=true make test   the whole test suite
#
# Each command installs its own dependencies there, exactly as on a new
# machine.  Everything runs in a private mount namespace: the fresh root is a
# mount point of its own (the mount-namespace tests need that), with its own
# proc, sysfs, cgroup2, devtmpfs and, mounted by the tests themselves, its
# own bpffs instance, so nothing it pins or mounts is seen by the host and
# all of it goes when the run ends.  The unpacked root is deleted at the end
# unless --keep.
#
# Not part of `make test`: it downloads a distribution and its packages (a
# few hundred MB) and takes as long as the suite plus the installs.
#
# Environment: SATFEED_TESTS is passed on (tests/run.sh: run only the
# suites it names), FRESH_DIR (default build/fresh; the cache lives in
# FRESH_DIR/cache and survives between runs), FRESH_MIRROR (default: the
# host's Debian mirror).  Exit status: 0 both commands passed, 1 one failed,
# 2 bad usage.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
ref=HEAD only= keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--ref) ref=${2:?--ref needs a revision}; shift ;;
	--only) only=${2:?--only needs run or test}; shift ;;
	--keep) keep=1 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "check-fresh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $only in ''|run|test) ;; *) echo "check-fresh: --only run|test" >&2; exit 2 ;; esac

log() { printf 'check-fresh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || die "debootstrap missing (tools/install-deps.sh fresh)"
commit=$(git -C "$REPO" rev-parse --verify "$ref^{commit}") ||
	die "no such revision: $ref"

FRESH_DIR=${FRESH_DIR:-$REPO/${OUTPUT:-build}/fresh}
CACHE=$FRESH_DIR/cache
IMAGE=$CACHE/bookworm-minbase.tar
mkdir -p "$CACHE"

mirror=${FRESH_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}

t0=$(date +%s)
if [ ! -s "$IMAGE" ]; then
	log "debootstrap bookworm minbase from $mirror (cached in $IMAGE)"
	tmp=$(mktemp -d "$CACHE/debootstrap.XXXXXX")
	if ! debootstrap --variant=minbase --include=git,make,ca-certificates \
			bookworm "$tmp" "$mirror" >"$CACHE/debootstrap.log" 2>&1; then
		tail -20 "$CACHE/debootstrap.log" >&2
		rm -rf "$tmp"
		die "debootstrap failed (log: $CACHE/debootstrap.log)"
	fi
	# mktemp made it 0700; a root directory is 0755 (the suites run
	# checks as an unprivileged user, who must reach /usr/lib)
	chmod 0755 "$tmp"
	# the apt cache of the bootstrap is not part of a new machine
	rm -rf "$tmp"/var/cache/apt/archives/*.deb
	tar -C "$tmp" -cf "$IMAGE.part" . && mv "$IMAGE.part" "$IMAGE"
	rm -rf "$tmp"
fi

R=$(mktemp -d "$FRESH_DIR/root.XXXXXX")
cleanup() {
	local rc=$?
	if [ "$keep" = 1 ]; then
		log "kept the fresh root: $R"
	else
		rm -rf --one-file-system "$R"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tar -C "$R" -xf "$IMAGE"
chmod 0755 "$R"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
log "cloning $commit into the fresh root"
git clone -q --no-local "$REPO" "$R/root/satfeed"
git -C "$R/root/satfeed" checkout -q --detach "$commit"
log "fresh root ready in $(( $(date +%s) - t0 )) s"

# The inside runs in a private mount namespace (unshare -m): every mount
# below vanishes with it, whatever way it ends.
inside=$(cat <<'EOF'
set -eu
R=$1 only=$2 tests=$3
mount --bind "$R" "$R"
mount --make-rprivate "$R"
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup"
mount -t devtmpfs devtmpfs "$R/dev" 2>/dev/null || mount --rbind /dev "$R/dev"
mkdir -p "$R/dev/pts" "$R/dev/shm"
mount -t devpts devpts "$R/dev/pts" 2>/dev/null || true
mount -t tmpfs tmpfs "$R/dev/shm"
mount -t tmpfs tmpfs "$R/run"
rc=0
run() {
	local name=$1 cmd=$2 t=$(date +%s) st=0
	printf 'check-fresh: === %s\n' "$cmd" >&2
	chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		${tests:+SATFEED_TESTS="$tests"} \
		/bin/bash -c "cd /root/satfeed && $cmd" || st=$?
	printf 'check-fresh: === %s: %s in %d s\n' "$cmd" \
		"$([ $st = 0 ] && echo ok || echo "FAILED (exit $st)")" \
		$(( $(date +%s) - t )) >&2
	[ $st = 0 ] || rc=1
}
[ "$only" = test ] || run run "make run"
[ "$only" = run ] || run test "CI=true make test"
exit $rc
EOF
)
st=0
unshare --mount --propagation private bash -c "$inside" inside "$R" "$only" \
	"${SATFEED_TESTS:-}" ||
	st=$?
log "total $(( $(date +%s) - t0 )) s: $([ $st = 0 ] && echo passed || echo FAILED)"
exit $st
