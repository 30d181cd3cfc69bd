# shellcheck shell=bash
# tests/lib/host.sh - what a host script sets up and must put back: the
# cleanup traps, the bpffs and tracefs mounts, the /sys/fs/bpf snapshot,
# pin roots left behind, kernel.bpf_stats_enabled, ports.  Part of
# tests/lib.sh.

# sf_trap_cleanup FUNC: FUNC runs on every exit path: the normal end, an
# error, and SIGINT/SIGTERM/SIGHUP, which exit 130/143/129 so that FUNC
# sees the status in $?.
sf_trap_cleanup() {
	trap "$1" EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

# sf_stop_children PID...: SIGTERM to each of the script's children, then
# reap them all (none is left running, none becomes a zombie).
sf_stop_children() {
	local p
	for p in "$@"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "$@"; do
		wait "$p" 2>/dev/null || true
	done
}

# sf_untrap: the traps of sf_trap_cleanup off (first thing in FUNC, so an
# exit inside it does not run it again).
sf_untrap() { trap - EXIT INT TERM HUP; }

# ---- bpffs and tracefs ----

SF_BPFFS=/sys/fs/bpf
SF_TRACEFS=/sys/kernel/tracing
SF_BPFFS_MOUNTED=0
SF_TRACEFS_MOUNTED=0

# sf_bpffs_mount: mount bpffs at /sys/fs/bpf unless something is, readable
# by root only (pins are capabilities: nobody else may open them).
sf_bpffs_mount() {
	mountpoint -q "$SF_BPFFS" && return 0
	mount -t bpf -o mode=0700 bpf "$SF_BPFFS" || return 1
	SF_BPFFS_MOUNTED=1
}

# sf_bpffs_unmount: undo sf_bpffs_mount, if it mounted and nothing but the
# kernel's own debug files is left there.
sf_bpffs_unmount() {
	[ "$SF_BPFFS_MOUNTED" = 1 ] || return 0
	if [ -z "$(ls -A "$SF_BPFFS" | grep -v -e '^maps.debug$' -e '^progs.debug$')" ]; then
		umount "$SF_BPFFS" || true
	fi
}

# sf_tracefs_mount / sf_tracefs_unmount: the same for tracefs (tracepoint
# ids for bpftrace and satfeed's classic attach mode).
sf_tracefs_mount() {
	mountpoint -q "$SF_TRACEFS" && return 0
	mount -t tracefs tracefs "$SF_TRACEFS" || return 1
	SF_TRACEFS_MOUNTED=1
}
sf_tracefs_unmount() {
	[ "$SF_TRACEFS_MOUNTED" = 1 ] || return 0
	umount "$SF_TRACEFS" 2>/dev/null || true
}

sf_bpffs_list() { find "$SF_BPFFS" 2>/dev/null | sort; }

# sf_snapshot FILE: record the current /sys/fs/bpf tree.
sf_snapshot() { sf_bpffs_list >"$1"; }

# sf_root_unload ROOT: unload a satfeed engine pinned under ROOT, if there
# is one; fails when ROOT is still there afterwards.
sf_root_unload() {
	[ -e "$1" ] || return 0
	"$LOADER" --bpffs "$1" unload >/dev/null 2>&1
	[ ! -e "$1" ]
}

# ---- the engine's ABI version ----

# sf_abi_version: SATFEED_ABI_VERSION, the ABI this tree's readers speak.
sf_abi_version() {
	awk '/^#define SATFEED_ABI_VERSION/ { print $3 }' "$SF_REPO/bpf/satfeed.h"
}

# sf_history: SATFEED_HISTORY, the closed windows a stream keeps.
sf_history() {
	awk '/^#define SATFEED_HISTORY/ { print $3 }' "$SF_REPO/bpf/satfeed.h"
}

SF_INFO_ORIG=

# sf_abi_break: make the engine pinned at SF_PIN_ROOT say ABI 99 (the first
# u32 of sf_info, rewritten with bpftool; the rest as it was), as an engine
# newer than its readers would, for them to refuse it.  What sf_info held
# goes to SF_INFO_ORIG for sf_abi_restore.  Fails, nothing changed, when
# bpftool cannot read or write the map.
sf_abi_break() {
	local info

	info=$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 -j) ||
		return 1
	SF_INFO_ORIG=$(sf_json_get "$info" '" ".join(b[2:] for b in j["value"])')
	# shellcheck disable=SC2086 # the bytes: words
	bpftool map update pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 \
		value hex 63 00 00 00 ${SF_INFO_ORIG#?? ?? ?? ?? }
}

# sf_abi_restore: sf_info as sf_abi_break found it.
sf_abi_restore() {
	# shellcheck disable=SC2086 # the bytes: words
	bpftool map update pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 \
		value hex $SF_INFO_ORIG
}

# ---- kernel.bpf_stats_enabled ----

SF_STATS_BEFORE=

sf_bpf_stats() { cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0; }

# sf_bpf_stats_save: remember the switch, for sf_bpf_stats_restore.
sf_bpf_stats_save() { SF_STATS_BEFORE=$(sf_bpf_stats); }

# sf_bpf_stats_restore: the switch as sf_bpf_stats_save found it.  The
# kernel drops a statistics holder's file descriptor when it exits; this
# guards against a sysctl left on.
sf_bpf_stats_restore() {
	[ -n "$SF_STATS_BEFORE" ] || return 0
	[ "$(sf_bpf_stats)" = "$SF_STATS_BEFORE" ] && return 0
	sysctl -q -w kernel.bpf_stats_enabled="$SF_STATS_BEFORE" || true
}

# ---- ports ----

# sf_free_port: a TCP port on 127.0.0.1 that nothing listens on now.
sf_free_port() { python3 "$SF_LIB/free_port.py"; }

# sf_wait_port PORT: up to 5 s for a listener on 127.0.0.1:PORT.
sf_wait_port() {
	local _
	for _ in $(seq 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}
