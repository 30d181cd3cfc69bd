#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/e2e/test_tools.sh - end-to-end tests of tools/workload/sfserver and
# tools/workload/sfload.
#
# Builds both tools into a temporary directory, runs sfserver on ephemeral
# loopback ports and drives it with sfload, and checks the reports, the exit
# codes and the one-send-per-request property.  memcached mode is tested when
# /usr/bin/memcached exists (under CI=true, as root, it is installed first).
# Every process started here is killed on every exit path.
#
# Usage: tests/e2e/test_tools.sh        (from anywhere; about 40 s)
# Exit:  0 when every check passed, 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/tests/lib.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sftools.XXXXXX")
CC=${CC:-gcc}
CFLAGS="-O2 -g -Wall -Wextra -Werror -pthread"
PIDS=()
PASS=0
FAIL=0

cleanup() {
	sf_stop_children "${PIDS[@]}"
	rm -rf "$TMP"
}
sf_trap_cleanup cleanup

ok() {
	PASS=$((PASS + 1))
	echo "ok   - $1"
}

not_ok() {
	FAIL=$((FAIL + 1))
	echo "FAIL - $1"
	if [ -n "${2:-}" ] && [ -s "$2" ]; then
		sed 's/^/       | /' "$2" | head -20
	fi
}

# skip NAME REASON: a check that cannot run here; under CI=true that fails.
skip() {
	if [ "${CI:-}" = true ]; then
		not_ok "$1 (cannot run: $2; CI=true)"
	else
		echo "skip - $2: $1"
	fi
}

# strace and memcached are this suite's packages (install-deps.sh test)
if [ "$(id -u)" = 0 ]; then
	bash "$ROOT/tools/install-deps.sh" test >"$TMP/deps.out" 2>&1 ||
		not_ok "tools/install-deps.sh test" "$TMP/deps.out"
fi

# check NAME COMMAND...: pass when COMMAND succeeds.
check() {
	local name=$1
	shift
	if "$@" >"$TMP/check.out" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "$TMP/check.out"
	fi
}

# expect_exit NAME CODE PATTERN COMMAND...: COMMAND exits with CODE and
# prints exactly one line on stderr that matches the regex PATTERN.
expect_exit() {
	local name=$1 code=$2 pat=$3 rc=0 lines
	shift 3
	"$@" >"$TMP/ee.out" 2>"$TMP/ee.err" || rc=$?
	lines=$(wc -l <"$TMP/ee.err")
	if [ "$rc" -eq "$code" ] && [ "$lines" -eq 1 ] &&
	   grep -Eq -- "$pat" "$TMP/ee.err"; then
		ok "$name"
	else
		echo "exit $rc, wanted $code; stderr:" >"$TMP/ee.why"
		cat "$TMP/ee.err" >>"$TMP/ee.why"
		not_ok "$name" "$TMP/ee.why"
	fi
}

# start_server NAME ARGS...: start sfserver on an ephemeral port; sets PORT
# and SERVER_PID.
start_server() {
	local name=$1 i
	shift
	rm -f "$TMP/$name.port"
	"$TMP/sfserver" --port 0 --port-file "$TMP/$name.port" "$@" \
		>"$TMP/$name.out" 2>&1 &
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	for i in $(seq 100); do
		[ -s "$TMP/$name.port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$TMP/$name.port" 2>/dev/null || echo 0)
}

stop_server() {
	local rc=0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" || rc=$?
	return "$rc"
}


# check_json FILE PYTHON-EXPR: the expression over the report dict r holds.
check_json() {
	python3 "$ROOT/tests/e2e/check_report.py" "$1" "$2"
}

# The report is exact and sane: achieved within 2% of offered, nothing lost.
WITHIN2='abs(r["achieved_rps"] - r["offered_rps"]) <= 0.02 * r["offered_rps"]'
WITHIN2+=' and r["errors"] == 0 and r["timeouts"] == 0'
WITHIN2+=' and r["replies"] == r["requests"]'
WITHIN2+=' and 0 < r["p50_us"] <= r["p99_us"] <= r["max_us"]'

# ---- build ----
if ! $CC $CFLAGS -I"$ROOT/tools/workload" "$ROOT"/tools/workload/sfserver/*.c \
	-luring -o "$TMP/sfserver" >"$TMP/build.out" 2>&1 ||
   ! $CC $CFLAGS -I"$ROOT/tools/workload" "$ROOT"/tools/workload/sfload/*.c \
	-o "$TMP/sfload" -lm >>"$TMP/build.out" 2>&1; then
	not_ok "build sfserver and sfload with -Wall -Wextra -Werror" \
		"$TMP/build.out"
	echo "$PASS passed, $FAIL failed"
	exit 1
fi
ok "build sfserver and sfload with -Wall -Wextra -Werror"

check "sfserver --help exits 0" \
	sh -c "'$TMP/sfserver' --help | grep -q '^Exit status'"
check "sfload --help exits 0" \
	sh -c "'$TMP/sfload' --help | grep -q '^Exit status'"

# ---- histogram accuracy (sfload_hist.h) ----
cat >"$TMP/hist_test.c" <<'EOF'
#include <stdio.h>
#include "sfload_hist.h"
static struct hist h;
int main(void)
{
	static const double ps[] = { 50, 90, 99, 99.9, 100 };
	uint64_t v, n = 1000000, want, got;
	unsigned int i;

	hist_init(&h);
	for (v = 1; v <= n; v++)
		hist_add(&h, v * 997);	/* 997 ns .. 997 ms */
	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		want = (uint64_t)(ps[i] / 100 * n + 0.5) * 997;
		got = hist_percentile(&h, ps[i]);
		if (got < want || got > want + want / 128) {
			printf("p%g: got %llu want %llu\n", ps[i],
			       (unsigned long long)got,
			       (unsigned long long)want);
			return 1;
		}
	}
	for (v = 0; v < 2 * HIST_SUB; v++)	/* exact below 256 ns */
		if (hist_bucket_high(hist_index(v)) != v)
			return 2;
	if (hist_index(HIST_MAX_VALUE) != HIST_BUCKETS - 1 ||
	    hist_index(~0ull) != HIST_BUCKETS - 1)
		return 3;
	for (v = 1; v < (1ull << 40); v = v * 3 + 1)	/* bucket contains v */
		if (hist_bucket_high(hist_index(v)) < v ||
		    (hist_index(v) && hist_bucket_high(hist_index(v) - 1) >= v))
			return 4;
	return h.count == n && h.max == n * 997 ? 0 : 5;
}
EOF
if $CC -O2 -Wall -Wextra -Werror -I"$ROOT/tools/workload" "$TMP/hist_test.c" \
	-o "$TMP/hist_test" >"$TMP/hist.out" 2>&1 &&
   "$TMP/hist_test" >>"$TMP/hist.out" 2>&1; then
	ok "histogram percentiles within 2^-7 above the true value"
else
	not_ok "histogram percentiles within 2^-7 above the true value" \
		"$TMP/hist.out"
fi

# ---- bad arguments: exit 2 with a one-line message ----
expect_exit "sfload without arguments exits 2" 2 'missing HOST:PORT' \
	"$TMP/sfload"
expect_exit "sfload without --rate exits 2" 2 'rate is required' \
	"$TMP/sfload" 127.0.0.1:9
expect_exit "sfload --rate abc exits 2" 2 'invalid --rate' \
	"$TMP/sfload" --rate abc 127.0.0.1:9
expect_exit "sfload --rate -5 exits 2" 2 'invalid --rate' \
	"$TMP/sfload" --rate -5 127.0.0.1:9
expect_exit "sfload --connections 0 exits 2" 2 'invalid --connections' \
	"$TMP/sfload" --rate 10 --connections 0 127.0.0.1:9
expect_exit "sfload --proto gopher exits 2" 2 'invalid --proto' \
	"$TMP/sfload" --rate 10 --proto gopher 127.0.0.1:9
expect_exit "sfload --no-pipeline --proto http exits 2" 2 \
	'--no-pipeline needs --proto sf' \
	"$TMP/sfload" --rate 10 --no-pipeline --proto http 127.0.0.1:9
expect_exit "sfload --set-ratio 2 exits 2" 2 'invalid --set-ratio' \
	"$TMP/sfload" --rate 10 --set-ratio 2 127.0.0.1:9
expect_exit "sfload target without port exits 2" 2 'expected HOST:PORT' \
	"$TMP/sfload" --rate 10 127.0.0.1
expect_exit "sfload unknown option exits 2" 2 "unknown option '--bogus'" \
	"$TMP/sfload" --rate 10 --bogus 127.0.0.1:9
expect_exit "sfload oversized run exits 2" 2 'shorten the run' \
	"$TMP/sfload" --rate 1e8 --duration 100 127.0.0.1:9
expect_exit "sfserver --threads 0 exits 2" 2 'invalid --threads' \
	"$TMP/sfserver" --threads 0
expect_exit "sfserver --port 70000 exits 2" 2 'invalid --port' \
	"$TMP/sfserver" --port 70000
expect_exit "sfserver --io foo exits 2" 2 'invalid --io' \
	"$TMP/sfserver" --io foo
expect_exit "sfserver --addr bad exits 2" 2 'invalid --addr' \
	"$TMP/sfserver" --addr not-an-ip
expect_exit "sfserver stray argument exits 2" 2 'unexpected argument' \
	"$TMP/sfserver" extra
expect_exit "sfserver --proxy without a port exits 2" 2 'invalid --proxy' \
	"$TMP/sfserver" --proxy 127.0.0.1
expect_exit "sfserver --proxy with a name exits 2" 2 'invalid --proxy' \
	"$TMP/sfserver" --proxy localhost:9700
expect_exit "sfserver --io uring --proxy exits 2" 2 'cannot --proxy' \
	"$TMP/sfserver" --io uring --proxy 127.0.0.1:9700

# ---- target policy and unreachable servers ----
expect_exit "sfload refuses a non-loopback target" 2 'non-loopback' \
	"$TMP/sfload" --rate 10 10.255.255.1:80
expect_exit "sfload refuses a non-loopback IPv6 target" 2 'non-loopback' \
	"$TMP/sfload" --rate 10 '[2001:db8::1]:80'
expect_exit "sfload --allow-addr=OTHER still refuses" 2 'non-loopback' \
	"$TMP/sfload" --rate 10 --allow-addr=10.0.0.1 10.255.255.1:80
FREE=$(sf_free_port)
START=$(date +%s%N)
expect_exit "sfload against a closed port exits 1" 1 'cannot connect' \
	"$TMP/sfload" --rate 10 "127.0.0.1:$FREE"
ELAPSED=$((($(date +%s%N) - START) / 1000000))
if [ "$ELAPSED" -le 2500 ]; then
	ok "closed port reported within 2 s (${ELAPSED} ms)"
else
	not_ok "closed port reported within 2 s (${ELAPSED} ms)"
fi
START=$(date +%s%N)
expect_exit "sfload --allow-addr to an unroutable host exits 1" 1 \
	'cannot connect' \
	"$TMP/sfload" --rate 10 --allow-addr=192.0.2.1 192.0.2.1:9
ELAPSED=$((($(date +%s%N) - START) / 1000000))
if [ "$ELAPSED" -le 3000 ]; then
	ok "connect attempt bounded by 2 s (${ELAPSED} ms)"
else
	not_ok "connect attempt bounded by 2 s (${ELAPSED} ms)"
fi

# ---- sf protocol against sfserver ----
start_server sf1
if [ "$PORT" != 0 ] &&
   grep -qx "listening on 127.0.0.1:$PORT" "$TMP/sf1.out"; then
	ok "sfserver listens on an ephemeral port and reports it"
else
	not_ok "sfserver listens on an ephemeral port and reports it" \
		"$TMP/sf1.out"
fi
for RATE in 2000 8000; do
	if "$TMP/sfload" --rate "$RATE" --duration 2 --json \
		"127.0.0.1:$PORT" >"$TMP/r$RATE.json" 2>"$TMP/r$RATE.err" &&
	   check_json "$TMP/r$RATE.json" "$WITHIN2" >>"$TMP/r$RATE.err" 2>&1
	then
		ok "sf at $RATE req/s: achieved within 2% of offered"
	else
		not_ok "sf at $RATE req/s: achieved within 2% of offered" \
			"$TMP/r$RATE.err"
	fi
done
"$TMP/sfload" --rate 500 --duration 1 --warmup 0 "127.0.0.1:$PORT" \
	>"$TMP/text.out" 2>&1 || true
check "sfload text report" grep -q 'latency from scheduled send' \
	"$TMP/text.out"
RC=0
stop_server "$SERVER_PID" || RC=$?
if [ "$RC" -eq 0 ] &&
   grep -Eq '^sfserver: served 25500 requests on 3 connections' \
	"$TMP/sf1.out"; then
	ok "sfserver exits 0 on SIGTERM with a summary line"
else
	not_ok "sfserver exits 0 on SIGTERM with a summary line (rc $RC)" \
		"$TMP/sf1.out"
fi

# Wire protocol: requests split into 7-byte pieces, 5000 coalesced in one
# write, a request's own work_us, and backpressure (300000 requests written
# before any reply is read, through a small receive buffer, so sfserver's
# sends block and it must resume them in order).
start_server sfp
check "sf wire protocol: split, coalesced, work_us, backpressure" \
	timeout 60 python3 "$ROOT/tests/e2e/proto_test.py" "$PORT"
stop_server "$SERVER_PID" || true
check "sfserver served exactly the 305050 requests" \
	grep -q '^sfserver: served 305050 requests on 1 connection' \
	"$TMP/sfp.out"
# its own service time: R responses (coalesced requests are none of their
# own, so fewer than served), mean = sum / R
svc_line_ok() {
	python3 - "$1" "$2" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^sfserver: served (\d+) requests", text, re.M)
v = re.search(r"^sfserver: service time: (\d+) responses, mean (\d+) ns, "
              r"sum (\d+) ns$", text, re.M)
if not m or not v:
    sys.exit("no summary or service time line in:\n" + text)
served, n, mean, tot = int(m.group(1)), *map(int, v.groups())
print("served %d, responses %d, mean %d ns, sum %d ns" % (served, n, mean,
                                                          tot))
if not (0 < n <= served and mean == tot // n and
        eval(sys.argv[2], {}, {"served": served, "n": n})):
    sys.exit("not as expected: " + sys.argv[2])
PY
}
check "sfserver reports its service time: fewer responses than the coalesced requests" \
	svc_line_ok "$TMP/sfp.out" 'n < served'

# --no-pipeline: a server past its capacity (--work-us 400: 2500/s, offered
# 3000/s on 16 connections).  Open loop, the requests queued on a connection
# are read together and answered as fewer responses than requests; with at
# most one pending per connection each request is a response of its own,
# and the report says which mode ran.
for np in pipe nopipe; do
	start_server "sfo-$np" --work-us 400
	"$TMP/sfload" --rate 3000 --duration 1 --warmup 0.2 --connections 16 \
		--json $([ "$np" = nopipe ] && echo --no-pipeline) \
		"127.0.0.1:$PORT" >"$TMP/sfo-$np.json" 2>"$TMP/sfo-$np.err"
	stop_server "$SERVER_PID" || true
done
check "sfload past capacity, open loop: fewer responses than requests" \
	svc_line_ok "$TMP/sfo-pipe.out" 'n < served'
check "sfload --no-pipeline past capacity: one response per request" \
	svc_line_ok "$TMP/sfo-nopipe.out" 'n == served'
check "sfload --no-pipeline: the report says no_pipeline, every request answered" \
	check_json "$TMP/sfo-nopipe.json" \
	'r["no_pipeline"] is True and r["replies"] == r["requests"] and r["errors"] == 0'
check "sfload without it: the report says no_pipeline false" \
	check_json "$TMP/sfo-pipe.json" 'r["no_pipeline"] is False'

# --proxy: a second sfserver as the backend; every request goes through
# the proxy's own connection to it (one per client connection)
start_server sfb --work-us 20
BPORT=$PORT
BACKEND_PID=$SERVER_PID
start_server sfx --threads 2 --proxy "127.0.0.1:$BPORT"
if "$TMP/sfload" --rate 2000 --duration 1 --connections 4 --json \
	"127.0.0.1:$PORT" >"$TMP/px.json" 2>"$TMP/px.err" &&
   check_json "$TMP/px.json" "$WITHIN2" >>"$TMP/px.err" 2>&1; then
	ok "--proxy: achieved within 2% of offered, every reply through the backend"
else
	not_ok "--proxy: achieved within 2% of offered, every reply through the backend" \
		"$TMP/px.err"
fi
stop_server "$SERVER_PID" || true
stop_server "$BACKEND_PID" || true
check "--proxy: proxy and backend each served the 3000 requests on 4 connections" \
	sh -c "grep -q '^sfserver: served 3000 requests on 4 connections' '$TMP/sfx.out' &&
	       grep -q '^sfserver: served 3000 requests on 4 connections' '$TMP/sfb.out'"
check "--proxy: sfserver reports its service time" \
	svc_line_ok "$TMP/sfx.out" 'True'
check "--proxy: mean service time above the backend's 20 us of work" \
	sh -c "sed -n 's/^sfserver: service time: .* mean \([0-9]*\) ns.*/\1/p' '$TMP/sfx.out' |
	       awk '{ exit !(\$1 > 20000) }'"
# a backend that refuses: the client's connection is closed, told once
start_server sfn --proxy "127.0.0.1:$BPORT"
check "--proxy, backend gone: the client's connection is closed" \
	python3 -c "import socket, sys
s = socket.create_connection(('127.0.0.1', $PORT), timeout=5)
try:
    s.sendall(bytes(32))
    sys.exit(0 if s.recv(32) == b'' else 1)
except ConnectionResetError:
    pass  # closed with data unread: reset"
stop_server "$SERVER_PID" || true
check "--proxy, backend gone: said so" \
	grep -q "cannot connect to the backend 127.0.0.1:$BPORT" "$TMP/sfn.out"

# Multi-threaded server, read/write I/O, 4 connections, Poisson arrivals
# (compared with the rate actually scheduled, which varies with --poisson).
start_server sf2 --threads 2 --io rw --work-us 5
if "$TMP/sfload" --rate 4000 --duration 2 --connections 4 --poisson --json \
	"127.0.0.1:$PORT" >"$TMP/mt.json" 2>"$TMP/mt.err" &&
   check_json "$TMP/mt.json" \
	'(abs(r["achieved_rps"] / r["scheduled_rps"] - 1) <= 0.02 and
	  r["errors"] == 0 and r["timeouts"] == 0 and r["connections"] == 4)' \
	>>"$TMP/mt.err" 2>&1; then
	ok "2 server threads, --io rw, 4 connections, poisson"
else
	not_ok "2 server threads, --io rw, 4 connections, poisson" \
		"$TMP/mt.err"
fi
stop_server "$SERVER_PID" || true

# sfload interrupted: exit 130 with a report of the part run.
start_server sf3 --io msg
"$TMP/sfload" --rate 1000 --duration 20 --json "127.0.0.1:$PORT" \
	>"$TMP/int.json" 2>"$TMP/int.err" &
LOAD_PID=$!
PIDS+=("$LOAD_PID")
sleep 1.5
kill -INT "$LOAD_PID"
RC=0
wait "$LOAD_PID" || RC=$?
if [ "$RC" -eq 130 ] &&
   check_json "$TMP/int.json" \
	'r["interrupted"] and 0.5 < r["duration_s"] < 1.5 and r["timeouts"] == 0' \
	>>"$TMP/int.err" 2>&1; then
	ok "SIGINT stops sfload with exit 130 and a partial report"
else
	echo "exit $RC" >>"$TMP/int.err"
	not_ok "SIGINT stops sfload with exit 130 and a partial report" \
		"$TMP/int.err"
fi
stop_server "$SERVER_PID" || true

# The server goes away mid-run: exit 1, and the report still comes out.
start_server sf5
"$TMP/sfload" --rate 1000 --duration 3 --json "127.0.0.1:$PORT" \
	>"$TMP/dead.json" 2>"$TMP/dead.err" &
LOAD_PID=$!
PIDS+=("$LOAD_PID")
sleep 1
stop_server "$SERVER_PID" || true
RC=0
wait "$LOAD_PID" || RC=$?
if [ "$RC" -eq 1 ] && grep -q 'closed by the server\|send failed' \
	"$TMP/dead.err" &&
   check_json "$TMP/dead.json" 'r["errors"] + r["timeouts"] > 1000' \
	>>"$TMP/dead.err" 2>&1; then
	ok "server gone mid-run: exit 1 with a report"
else
	echo "exit $RC" >>"$TMP/dead.err"
	not_ok "server gone mid-run: exit 1 with a report" "$TMP/dead.err"
fi

# sfserver --duration ends by itself.
start_server sf4 --duration 0.5
RC=0
wait "$SERVER_PID" || RC=$?
check "sfserver --duration exits 0 by itself" \
	sh -c "[ $RC -eq 0 ] && grep -q '^sfserver: served 0 requests' '$TMP/sf4.out'"

# One send system call per request, counted by strace.
if command -v strace >/dev/null 2>&1; then
	rm -f "$TMP/st.port"
	strace -f -qq -c -U name,calls -e trace=sendto,sendmsg,write,writev \
		-o "$TMP/strace.out" "$TMP/sfserver" --port 0 \
		--port-file "$TMP/st.port" --duration 4 >/dev/null 2>&1 &
	PIDS+=("$!")
	STRACE_PID=$!
	for i in $(seq 100); do
		[ -s "$TMP/st.port" ] && break
		sleep 0.05
	done
	"$TMP/sfload" --rate 1000 --duration 1 --warmup 0 --connections 3 \
		--json "127.0.0.1:$(cat "$TMP/st.port")" >"$TMP/st.json" \
		2>&1 || true
	wait "$STRACE_PID" || true
	SENDS=$(awk '$1 == "sendto" { print $2 }' "$TMP/strace.out")
	OTHER=$(awk '$1 ~ /^(sendmsg|writev)$/ { print $2 }' "$TMP/strace.out")
	if [ "${SENDS:-0}" -eq 1000 ] && [ -z "$OTHER" ]; then
		ok "sfserver makes exactly one sendto per request (1000)"
	else
		not_ok "sfserver makes exactly one sendto per request (got ${SENDS:-0})" \
			"$TMP/strace.out"
	fi
else
	skip "one send per request (strace)" "strace not installed"
fi

# ---- memcached ----
MEMCACHED=/usr/bin/memcached
if [ -x "$MEMCACHED" ]; then
	MPORT=$(sf_free_port)
	"$MEMCACHED" -l 127.0.0.1 -p "$MPORT" -U 0 -t 1 -m 64 -u nobody \
		>"$TMP/memcached.out" 2>&1 &
	PIDS+=("$!")
	sf_wait_port "$MPORT" || true
	if "$TMP/sfload" --proto memcached --rate 2000 --duration 2 \
		--keys 500 --set-ratio 0.1 --json "127.0.0.1:$MPORT" \
		>"$TMP/mc.json" 2>"$TMP/mc.err" &&
	   check_json "$TMP/mc.json" \
		"$WITHIN2"' and r["misses"] == 0 and r["proto"] == "memcached"' \
		>>"$TMP/mc.err" 2>&1; then
		ok "memcached at 2000 req/s: achieved within 2%, no misses"
	else
		not_ok "memcached at 2000 req/s: achieved within 2%, no misses" \
			"$TMP/mc.err"
	fi
	if "$TMP/sfload" --proto memcached --rate 3000 --duration 1 \
		--connections 3 --set-ratio 0.5 --value-size 3000 --json \
		"127.0.0.1:$MPORT" >"$TMP/mc3.json" 2>"$TMP/mc3.err" &&
	   check_json "$TMP/mc3.json" "$WITHIN2" >>"$TMP/mc3.err" 2>&1; then
		ok "memcached, 3 connections, 3000-byte values"
	else
		not_ok "memcached, 3 connections, 3000-byte values" \
			"$TMP/mc3.err"
	fi
else
	skip "memcached mode" "$MEMCACHED not installed"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
