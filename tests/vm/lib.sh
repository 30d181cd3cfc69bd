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
	. "$VM_DIR/kernel.env"
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
