# SPDX-License-Identifier: GPL-2.0
# tests/vm/lib.sh - helpers shared by the guest-pipeline scripts.  Sourced,
# not run.  Sets ROOT (repository root) and VM_DIR (cache and outputs,
# default build/vm; override with the VM_DIR environment variable).

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM_DIR=${VM_DIR:-$ROOT/build/vm}
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
	. "$ROOT/tests/lib/lock.sh"
	sf_take_test_lock || vm_die "cannot take the test lock"
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
