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
# variables) must succeed; its output is shown when it does not (its
# first 20 lines and, after them, the lines that say FAIL or fail)
check() {
	local desc=$1
	shift
	if "$@" > /tmp/check.out 2>&1; then
		ok "$desc"
	else
		fail "$desc"
		# the start, then every line that says what failed (a
		# test's FAIL lines, on stderr, can come after 20 lines of
		# its stdout)
		{
			head -20 /tmp/check.out
			tail -n +21 /tmp/check.out | grep -E 'FAIL|fail' |
				head -40
		} | sed 's/^/#   /'
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
# ---- load levels from the capacity measured in this boot ----
# A guest's speed is not a constant: under QEMU -icount it follows the
# instruction count (the same on every host), without -icount the host's
# speed, and either way the kernel and the server's code.  So a rate a
# guest test drives is a share of the capacity measured in the same boot
# (as tests/validate does on the host), never a fixed req/s.
#
# capacity PORT OFFER [SFLOAD_ARGS...]: the rate (whole req/s) the server on
# 127.0.0.1:PORT answers at when offered OFFER req/s, more than it can
# serve: sfload's served_rps over 1.5 s after 0.3 s of warmup, on one
# connection unless SFLOAD_ARGS say otherwise.  Empty output: no figure.
capacity() {
	local port=$1 offer=$2
	shift 2
	sfload --rate "$offer" -d 1.5 -W 0.3 -D 0.5 --json --no-progress "$@" \
		127.0.0.1:"$port" | sed -n 's/.*"served_rps":\([0-9]*\).*/\1/p'
}
# share CAPACITY PERCENT: PERCENT % (decimals allowed) of CAPACITY in whole
# req/s, at least 1
share() {
	awk -v c="$1" -v p="$2" 'BEGIN { r = int(c * p / 100); print (r < 1 ? 1 : r) }'
}
# set_rate VAR NAME FIXED CAPACITY PERCENT: VAR = the rate of load level
# NAME: FIXED when the run set one (SF_*_RATE, for experiments), else
# PERCENT % of CAPACITY; noted either way
set_rate() {
	local r
	if [ -n "$3" ]; then
		r=$3
		note "$2 rate: $r req/s (fixed by the settings)"
	else
		r=$(share "$4" "$5")
		note "$2 rate: $r req/s ($5% of the measured capacity, $4 req/s)"
	fi
	printf -v "$1" %s "$r"
}

checks_done() {
	echo "guest: $n_ok passed, $n_fail failed"
	[ "$n_fail" = 0 ] && [ "$n" -gt 0 ]
}
