# shellcheck shell=bash
# tests/lib/lock.sh - the satfeed tests' machine-wide lock.  Part of
# tests/lib.sh.
#
# Every suite that loads BPF programs, pins under /sys/fs/bpf or takes a CPU
# for timings holds it for its whole run, on fd 9, so suites (and people)
# never meet in /sys/fs/bpf/satfeed or in each other's figures.
#
#   sf_take_test_lock || exit 1     prints why on failure, returns 1; after
#                                   a wait, "# NAME: waited N s for the
#                                   test lock" on stderr (tests/run.sh
#                                   sums them)
#   sf_run_locked CMD [ARG...]      runs CMD holding the lock (for programs
#                                   that do not take it themselves)

SF_LOCK=${SF_LOCK:-/run/lock/satfeed-tests.lock}
# how long a suite waits for the lock before it fails (seconds): a machine
# shared with long runs (make validate, the guests) may need more
SF_LOCK_WAIT=${SF_LOCK_WAIT:-900}

sf_take_test_lock() {
	local dir=${SF_LOCK%/*} waited=$SF_LOCK_WAIT me=${0##*/}
	local t0=$SECONDS

	# a minimal system may have no /run/lock (no systemd-tmpfiles)
	if [ -n "$dir" ] && [ ! -d "$dir" ] && ! mkdir -p -m 1777 "$dir"; then
		echo "$me: cannot create the lock's directory $dir" >&2
		return 1
	fi
	if ! { exec 9>"$SF_LOCK"; } 2>/dev/null; then
		echo "$me: cannot open the test lock $SF_LOCK for writing" >&2
		return 1
	fi
	if ! flock -w "$waited" 9; then
		echo "$me: another satfeed test held $SF_LOCK for $((waited / 60)) minutes (SF_LOCK_WAIT=SECONDS waits longer)" >&2
		return 1
	fi
	if [ $((SECONDS - t0)) -gt 0 ]; then
		echo "# $me: waited $((SECONDS - t0)) s for the test lock" >&2
	fi
	return 0
}

sf_run_locked() {
	(sf_take_test_lock || exit 1; "$@")
}
