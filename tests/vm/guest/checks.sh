# SPDX-License-Identifier: GPL-2.0
# tests/vm/guest/checks.sh - the check helpers of the guest scripts (bash).
# Sourced.  One "ok N - ..." or "not ok N - ..." line per check (the host's
# boot.sh counts them); checks_done prints the summary and returns the
# verdict.

n=0 n_ok=0 n_fail=0
ok() { n=$((n + 1)); n_ok=$((n_ok + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); n_fail=$((n_fail + 1)); echo "not ok $n - $*"; }
note() { echo "# $*"; }
# check DESC CMD...: CMD (run in this shell, so functions may set
# variables) must succeed; its output is shown when it does not
check() {
	local desc=$1
	shift
	if "$@" > /tmp/check.out 2>&1; then
		ok "$desc"
	else
		fail "$desc"
		sed 's/^/#   /' /tmp/check.out | head -20
	fi
}
# refuse DESC CMD...: CMD must fail
refuse() {
	local desc=$1
	shift
	if "$@" >/dev/null 2>&1; then fail "$desc"; else ok "$desc"; fi
}
# wait_for SECONDS CMD...: poll CMD every 0.1 s
wait_for() {
	local i=0 limit=$(($1 * 10))
	shift
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge $limit ] && return 1
		sleep 0.1
	done
}
checks_done() {
	echo "guest: $n_ok passed, $n_fail failed"
	[ "$n_fail" = 0 ] && [ "$n" -gt 0 ]
}
