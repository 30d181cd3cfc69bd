# shellcheck shell=bash
# tests/lib/check.sh - the checks of satfeed's bash suites, and the frame
# around a suite.  Part of tests/lib.sh:
#
#     . "$(dirname "$0")/../lib.sh"
#     sf_begin "test_cli"          # lock, root check, /sys/fs/bpf snapshot, traps
#     ASSERT_RC "loader --window 1000" 2 "$LOADER" --window 1000 load
#     ...
#     sf_finish                    # cleanup, leak checks, "N passed, M failed"
#
# Every check prints "ok - NAME" or "FAIL - NAME" followed by what differed.
# The last line of a run is exactly "N passed, M failed"; the script exits
# non-zero when M > 0.  Under CI=true a check that cannot run fails; outside
# CI it is reported as "SKIP - NAME: reason" and counted separately.
#
# Cleanup (on every path: normal end, failed check, error, Ctrl-C, kill):
# every process started with sf_bg (and every pid passed to sf_track) is
# killed, every cgroup made with sf_cgroup_make is removed, and, if the test
# found satfeed unloaded, `satfeed-loader unload` is run.  Then sf_finish
# checks that /sys/fs/bpf is exactly what it was before the test (find | sort)
# and that no sf_ program is left loaded (polling up to ~2 s: programs are
# freed asynchronously after their last pin goes).

SF_PASS=0
SF_FAIL=0
SF_SKIP=0
SF_FAILED_NAMES=()
SF_PIDS=()
SF_CGROUPS=()
SF_TMP=
SF_NAME=
SF_OWN_ROOT=0          # 1: the root was absent at the start, so ours to unload
SF_FINISHED=0
SF_T0=

# Output of the last sf_run / ASSERT_RC: $OUT (stdout), $ERR (stderr), $RC.
# (Not reset here: a script that only needs the host parts keeps its own.)

_sf_ci() { [ "${CI:-}" = true ]; }

sf_log() { printf '# %s\n' "$*"; }

sf_pass() {
	SF_PASS=$((SF_PASS + 1))
	printf 'ok - %s\n' "$1"
}

# sf_fail NAME [DETAIL...]: count a failure and print what differed.
sf_fail() {
	local name=$1
	shift
	SF_FAIL=$((SF_FAIL + 1))
	SF_FAILED_NAMES+=("$name")
	printf 'FAIL - %s\n' "$name"
	local line
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/    /'
	done
}

# sf_skip NAME REASON: a check that cannot run here.  Fails under CI=true.
sf_skip() {
	if _sf_ci; then
		sf_fail "$1" "cannot run: $2" "(CI=true: a test that cannot run fails)"
	else
		SF_SKIP=$((SF_SKIP + 1))
		printf 'SKIP - %s: %s\n' "$1" "$2"
	fi
}

# sf_run CMD...: run a command, capturing $OUT, $ERR and $RC.
sf_run() {
	local o e
	o=$(mktemp "$SF_TMP/out.XXXXXX")
	e=$(mktemp "$SF_TMP/err.XXXXXX")
	"$@" >"$o" 2>"$e"
	RC=$?
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	return 0
}

_sf_show_io() {
	printf 'command: %s\n' "$SF_LAST_CMD"
	printf 'exit status: %s\n' "$RC"
	[ -n "$OUT" ] && printf 'stdout: %s\n' "$(printf '%s' "$OUT" | head -c 2000)"
	[ -n "$ERR" ] && printf 'stderr: %s\n' "$(printf '%s' "$ERR" | head -c 2000)"
	return 0
}

# ASSERT_EQ NAME EXPECTED ACTUAL
ASSERT_EQ() {
	if [ "$2" = "$3" ]; then
		sf_pass "$1"
	else
		sf_fail "$1" "expected: $2" "actual:   $3"
	fi
}

# ASSERT_NE NAME UNEXPECTED ACTUAL
ASSERT_NE() {
	if [ "$2" != "$3" ]; then
		sf_pass "$1"
	else
		sf_fail "$1" "expected anything but: $2"
	fi
}

# ASSERT_TRUE NAME CMD...: the command succeeds (its output is shown if not).
ASSERT_TRUE() {
	local name=$1
	shift
	SF_LAST_CMD="$*"
	sf_run "$@"
	if [ "$RC" = 0 ]; then
		sf_pass "$name"
	else
		sf_fail "$name" "$(_sf_show_io)"
	fi
}

# ASSERT_OK NAME CMD...: exit status 0.
ASSERT_OK() { ASSERT_RC "$1" 0 "${@:2}"; }

# ASSERT_RC NAME STATUS CMD...: the command exits with STATUS.  Leaves $OUT,
# $ERR, $RC for further checks.
ASSERT_RC() {
	local name=$1 want=$2
	shift 2
	SF_LAST_CMD="$*"
	sf_run "$@"
	if [ "$RC" = "$want" ]; then
		sf_pass "$name: exit $want"
	else
		sf_fail "$name: exit $want" "$(_sf_show_io)"
	fi
}

# ASSERT_NONZERO NAME CMD...: any exit status but 0.
ASSERT_NONZERO() {
	local name=$1
	shift
	SF_LAST_CMD="$*"
	sf_run "$@"
	if [ "$RC" != 0 ]; then
		sf_pass "$name: exit non-zero ($RC)"
	else
		sf_fail "$name: exit non-zero" "$(_sf_show_io)"
	fi
}

# ASSERT_MATCH NAME ERE TEXT: TEXT matches the extended regex (grep -E).
ASSERT_MATCH() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then
		sf_pass "$1"
	else
		sf_fail "$1" "expected to match: $2" "text: $(printf '%s' "$3" | head -c 2000)"
	fi
}

# ASSERT_NOMATCH NAME ERE TEXT
ASSERT_NOMATCH() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then
		sf_fail "$1" "expected NOT to match: $2" "text: $(printf '%s' "$3" | head -c 2000)"
	else
		sf_pass "$1"
	fi
}

# ASSERT_MSG NAME ERE: the last command's stderr is one line matching ERE.
ASSERT_MSG() {
	if printf '%s' "$ERR" | grep -Eqi -- "$2"; then
		sf_pass "$1: message"
	else
		sf_fail "$1: message" "expected stderr to match: $2" "$(_sf_show_io)"
	fi
}

# ---- /sys/fs/bpf state ----

# ASSERT_BPFFS NAME FILE: /sys/fs/bpf is exactly as recorded in FILE.
ASSERT_BPFFS() {
	local now diff
	now=$(sf_bpffs_list)
	if [ "$now" = "$(cat "$2")" ]; then
		sf_pass "$1: /sys/fs/bpf unchanged"
	else
		diff=$(diff "$2" <(printf '%s\n' "$now") | head -40)
		sf_fail "$1: /sys/fs/bpf unchanged" "diff (before > after):" "$diff"
	fi
}


# The ids of the loaded programs whose name starts with sf_.
sf_prog_ids() {
	bpftool prog list 2>/dev/null | awk '/ name sf_/ { sub(":", "", $1); print $1 }' | sort -n | tr '\n' ' '
}

# sf_wait_no_progs: wait up to ~2.5 s for every sf_ program to be freed.
sf_wait_no_progs() {
	local _
	for _ in $(seq 1 25); do
		[ -z "$(sf_prog_ids)" ] && return 0
		sleep 0.1
	done
	return 1
}

ASSERT_NO_PROGS() {
	if sf_wait_no_progs; then
		sf_pass "$1: no sf_ programs loaded"
	else
		sf_fail "$1: no sf_ programs loaded" "still loaded after 2.5 s:" \
			"$(bpftool prog list | grep -A1 ' name sf_')"
	fi
}

# ---- processes and cgroups ----

# sf_track PID...: kill these at cleanup.
sf_track() { SF_PIDS+=("$@"); }

# sf_bg CMD...: start CMD in the background; its pid is in $BG_PID.
sf_bg() {
	"$@" 9>&- &
	BG_PID=$!
	SF_PIDS+=("$BG_PID")
}

# sf_kill PID: kill and reap one started process.
sf_kill() {
	kill "$1" 2>/dev/null
	local _
	for _ in $(seq 1 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# The cgroup v2 mount point ("" if there is none).
sf_cgroup2_mount() {
	awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts
}

# sf_cgroup_make NAME: create NAME under the cgroup2 mount, path in $CG_DIR.
sf_cgroup_make() {
	local m
	m=$(sf_cgroup2_mount)
	[ -n "$m" ] || return 1
	CG_DIR=$m/$1
	mkdir "$CG_DIR" || return 1
	SF_CGROUPS+=("$CG_DIR")
}

# sf_cgroup_section NAME DIR: the start of a section of checks NAME that
# needs a cgroup of its own: DIR made under the cgroup2 mount (removed at
# cleanup), its path in $CG_DIR.  Returns 1, the section skipped, when
# there is no cgroup v2 mount (a failure under CI=true), or failed, when
# the mkdir fails:  if sf_cgroup_section "cgroup target" "sf-$$"; then ...
sf_cgroup_section() {
	local m
	m=$(sf_cgroup2_mount)
	if [ -z "$m" ]; then
		sf_skip "$1" "no cgroup v2 mount"
		return 1
	fi
	if ! sf_cgroup_make "$2"; then
		sf_fail "$1: mkdir $m/$2"
		return 1
	fi
}

# Move every process out of a cgroup and remove it.
sf_cgroup_remove() {
	local dir=$1 parent p _
	[ -d "$dir" ] || return 0
	parent=$(dirname "$dir")
	for _ in 1 2 3; do
		for p in $(cat "$dir/cgroup.procs" 2>/dev/null); do
			echo "$p" >"$parent/cgroup.procs" 2>/dev/null
		done
		rmdir "$dir" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# ---- satfeed ----

sf_loaded() { [ -e "$SF_PIN_ROOT" ]; }

# sf_load [LOADER OPTIONS]: load satfeed; failures are checked by the caller.
sf_load() {
	SF_LAST_CMD="$LOADER $* load"
	sf_run "$LOADER" "$@" load
	[ "$RC" = 0 ]
}

sf_unload_quiet() { "$LOADER" unload >/dev/null 2>&1; }

# sf_json_get JSON PYEXPR: evaluate PYEXPR with j = the parsed JSON.
sf_json_get() { python3 "$SF_LIB/json_get.py" "$1" "$2" 2>&1; }

# sf_json_fields PATH[=DEFAULT]...: the values at PATHs (keys.0.key) of the
# JSON on stdin, e.g. `bpftool prog show pinned P -j | sf_json_fields id`;
# with no PATH, only whether stdin is one JSON document (exit status).
sf_json_fields() { python3 "$SF_LIB/json_fields.py" "$@"; }

# ---- begin / end ----

sf_cleanup() {
	local p c
	for p in "${SF_PIDS[@]}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	for p in "${SF_PIDS[@]}"; do
		[ -n "$p" ] && sf_kill "$p"
	done
	SF_PIDS=()
	for c in "${SF_CGROUPS[@]}"; do
		sf_cgroup_remove "$c" || echo "# warning: could not remove $c" >&2
	done
	SF_CGROUPS=()
	if [ "$SF_OWN_ROOT" = 1 ] && [ -e "$SF_PIN_ROOT" ]; then
		"$LOADER" unload >/dev/null 2>&1 ||
			echo "# warning: satfeed-loader unload failed in cleanup" >&2
	fi
}

_sf_on_exit() {
	local rc=$?
	if [ "$SF_FINISHED" != 1 ]; then
		sf_fail "$SF_NAME ended early (exit status $rc, line ${BASH_LINENO[0]})"
		sf_finish
	fi
}

# sf_begin NAME [BINARY...]: serialise with other satfeed test runs, check root, the
# binaries and that satfeed is not loaded yet, record /sys/fs/bpf, set traps.
sf_begin() {
	SF_NAME=$1
	shift
	SF_T0=$(date +%s.%N)
	cd "$SF_REPO" || exit 1
	SF_TMP=$(mktemp -d "/tmp/satfeed-$SF_NAME.XXXXXX")
	chmod 755 "$SF_TMP"
	OUT= ERR= RC=
	sf_trap_cleanup _sf_on_exit
	sf_log "$SF_NAME: $(uname -r), CI=${CI:-}"
	if [ "$(id -u)" != 0 ]; then
		sf_skip "$SF_NAME" "needs root (CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN); run as root"
		SF_FINISHED=1
		rm -rf "$SF_TMP"
		_sf_summary
		exit "$([ "$SF_FAIL" = 0 ] && echo 0 || echo 1)"
	fi
	local b missing=
	for b in "$LOADER" "$CTL" "$@"; do
		[ -x "$b" ] || missing="$missing $b"
	done
	for b in bpftool python3 flock unshare setpriv mountpoint; do
		command -v "$b" >/dev/null || missing="$missing $b"
	done
	if [ -n "$missing" ]; then
		sf_fail "$SF_NAME: binaries and tools present" "missing:$missing (make all; apt-get install bpftool python3 util-linux)"
		sf_finish
	fi
	# Only one satfeed test at a time: they share /sys/fs/bpf/satfeed.
	# not in $(...): the lock must be held by this shell's fd 9
	if ! sf_take_test_lock 2>"$SF_TMP/lock.err"; then
		sf_fail "$SF_NAME: test lock" "$(cat "$SF_TMP/lock.err")"
		sf_finish
	fi
	cat "$SF_TMP/lock.err"	# how long it waited, if it did
	if ! sf_loaded; then
		: # the usual case
	else
		sf_log "satfeed is already loaded at $SF_PIN_ROOT by someone else; waiting up to 60 s"
		for _ in $(seq 1 120); do
			sf_loaded || break
			sleep 0.5
		done
		if sf_loaded; then
			sf_fail "$SF_NAME: satfeed not loaded at start" \
				"$SF_PIN_ROOT exists; this test loads and unloads satfeed itself, so it needs it unloaded (satfeed-loader unload)"
			sf_finish
		fi
	fi
	if [ -n "$(sf_prog_ids)" ] && ! sf_wait_no_progs; then
		sf_log "warning: sf_ programs already loaded before the test: $(sf_prog_ids)"
	fi
	SF_OWN_ROOT=1
	SF_SNAP0=$SF_TMP/bpffs.before
	sf_snapshot "$SF_SNAP0"
}

_sf_summary() {
	local t
	t=$(awk -v a="$SF_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	[ "$SF_SKIP" -gt 0 ] && printf '# %d skipped\n' "$SF_SKIP"
	if [ "$SF_FAIL" -gt 0 ]; then
		printf '# failed:\n'
		printf '#   %s\n' "${SF_FAILED_NAMES[@]}"
	fi
	printf '# %s took %s s\n' "$SF_NAME" "$t"
	printf '%d passed, %d failed\n' "$SF_PASS" "$SF_FAIL"
}

# sf_finish: clean up, check for leaks, print the summary, exit.
sf_finish() {
	SF_FINISHED=1
	sf_untrap
	sf_cleanup
	if [ -n "${SF_SNAP0:-}" ] && [ -f "$SF_SNAP0" ]; then
		ASSERT_BPFFS "$SF_NAME: at the end" "$SF_SNAP0"
		ASSERT_NO_PROGS "$SF_NAME: at the end"
	fi
	[ -n "$SF_TMP" ] && rm -rf "$SF_TMP"
	_sf_summary
	[ "$SF_FAIL" = 0 ] && exit 0
	exit 1
}

