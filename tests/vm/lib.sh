# SPDX-License-Identifier: GPL-2.0
# tests/vm/lib.sh - helpers shared by the guest-pipeline scripts.  Sourced,
# not run; sources the host harness, tests/lib.sh.  Sets ROOT (repository
# root), VM_DIR (cache and outputs, default build/vm; override with the
# VM_DIR environment variable) and BUILD (the engine's build directory,
# default build/).

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM_DIR=${VM_DIR:-$ROOT/build/vm}
BUILD=${BUILD:-$ROOT/build}
. "$ROOT/tests/lib.sh"
export DEBIAN_FRONTEND=noninteractive

vm_log() { printf 'vm: %s\n' "$*" >&2; }
vm_die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

vm_need_root() {
	[ "$(id -u)" = 0 ] || vm_die "must run as root (apt-get, qemu image build)"
}

# Take the satfeed tests' lock (SF_LOCK) on fd 9 for the rest of the
# script: a guest takes a whole CPU for minutes, not beside another test's
# timings.
vm_take_test_lock() {
	sf_take_test_lock || vm_die "cannot take the test lock"
}

# The Debian mirror URI the system's apt sources use (not the security one).
vm_mirror_uri() {
	local uri
	uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null)
	[ -n "$uri" ] || uri=$(awk '/^deb / && $3 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$uri" ] || vm_die "cannot find the Debian mirror URI in the apt sources"
	echo "$uri"
}

# vm_help: the calling script's header comment, from its third line to
# `set -e...`, as its --help.
vm_help() { sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# vm_begin: how every script that boots a guest starts, once its arguments
# are read: root, the test lock for the rest of the script, the guest
# kernel (setup-kernel.sh, cached) and its settings (KVER, KREL, KDIR,
# VMLINUZ); VM_START is when it began.
vm_begin() {
	VM_START=$(date +%s)
	vm_need_root
	vm_take_test_lock
	"$ROOT/tests/vm/setup-kernel.sh"
	vm_kernel_env
}

# apt-get update at most once per hour unless the backports lists are missing.
vm_apt_update() {
	local stamp=$VM_DIR/.apt-updated force=${1:-}
	mkdir -p "$VM_DIR"
	if [ -z "$force" ] && [ -f "$stamp" ] &&
	   [ -n "$(find "$stamp" -mmin -60 2>/dev/null)" ] &&
	   ls /var/lib/apt/lists/*bookworm-backports*Packages >/dev/null 2>&1; then
		return 0
	fi
	vm_log "apt-get update"
	apt-get update -qq >/dev/null || vm_die "apt-get update failed"
	touch "$stamp"
}

# vm_deps: the guest pipeline's host packages, through the project's one
# installer (tools/install-deps.sh, group vm).
vm_deps() {
	bash "$ROOT/tools/install-deps.sh" vm ||
		vm_die "tools/install-deps.sh vm failed"
}

# ---- the guest kernel ----
# VM_KERNEL selects it (tests/vm/setup-kernel.sh fetches it):
#   bpo612   Debian bookworm-backports' kernel (6.12; the default)
#   trixie7  Debian trixie-backports' kernel (7.x: PREEMPT_LAZY, sched_ext),
#            fetched with a private apt state (tests/vm/kernel-trixie7.sh)
# Each has its own cache, VM_KERNEL_DIR, holding its kernel.env.
vm_select_kernel() {
	case $1 in
	bpo612|trixie7) ;;
	*) vm_die "unknown guest kernel '$1' (VM_KERNEL: bpo612 or trixie7)" ;;
	esac
	VM_KERNEL=$1
	VM_KERNEL_DIR=$VM_DIR/kernel-$VM_KERNEL
	export VM_KERNEL
}
vm_select_kernel "${VM_KERNEL:-bpo612}"

# vm_kernel_env: load the selected kernel's kernel.env (KREL KVER KDIR
# VMLINUZ VMLINUX KMAKE_ARGS).
vm_kernel_env() {
	[ -f "$VM_KERNEL_DIR/kernel.env" ] ||
		vm_die "no $VM_KERNEL_DIR/kernel.env: run VM_KERNEL=$VM_KERNEL tests/vm/setup-kernel.sh"
	. "$VM_KERNEL_DIR/kernel.env"
}
