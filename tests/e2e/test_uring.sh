#!/usr/bin/env bash
# tests/e2e/test_uring.sh - io_uring servers in satfeed's streams (tp_btf
# mode on this host; tests/vm/guest checks the fentry mode):
#
#  1. exactness: the bundled server in each io_uring mode (--io uring: one
#     RECV and one SEND per request; --io uring-ms: one multishot RECV per
#     connection), watched from before its first request, while a second,
#     unwatched io_uring server takes load too: the target's send calls
#     equal the requests it served, exactly (one SEND CQE each), its
#     io_uring_enter waits are in the poll stream, and nothing is counted
#     as an error or as a non-socket op.
#  2. rates: for each mode, 5 open-loop rates from the bundled generator;
#     RPS_obs of the send windows closed wholly inside each run is within
#     2% of the generator's achieved rate (sf_rate_run, tests/lib/
#     workload.sh: the epoll server's check in test_e2e.sh).
#
# Run as root from the repository root:  bash tests/e2e/test_uring.sh
# Needs: make all, liburing (tools/install-deps.sh), bpftool, python3.
. "$(dirname "$0")/../lib.sh"

sf_begin test_uring "$SFSERVER" "$SFLOAD"

RATES=${RATES:-1000 2000 4000 6000 9000}
MODES=${MODES:-uring uring-ms}
MIN_WINDOWS=4	# whole windows wanted inside each run
TOLERANCE_PCT=2

ASSERT_OK "load (tp_btf)" "$LOADER" --attach tp_btf load
[ "$RC" = 0 ] || sf_finish

# start_server MODE: sets SRV, PORT and SRVLOG
start_server() {
	SRVLOG=$SF_TMP/server.$1.$RANDOM.log
	if ! sf_sfserver "$SRVLOG" --io "$1"; then
		sf_fail "sfserver --io $1 started" "no port file after 5 s: $(cat "$SRVLOG")"
		return 1
	fi
	PORT=$SRV_PORT
	sf_pass "sfserver --io $1 started: pid $SRV, port $PORT"
}

# counts PID: "send_calls recv_calls poll_calls errors eagain not_socket"
counts() {
	sf_json_get "$("$CTL" show --json --pid "$1")" \
		'(lambda t: "%d %d %d %d %d %d" % (t["send"]["calls"], t["recv"]["calls"], t["poll"]["calls"], sum(t[s]["errors"] for s in ("send", "recv", "poll")), sum(t[s]["eagain"] for s in ("send", "recv", "poll")), sum(t[s]["not_socket"] for s in ("send", "recv"))))(j["targets"][0])'
}

# bad member lists: one clear line, exit 2, nothing added
sf_bg sleep 60
IDLE=$BG_PID
ASSERT_RC "add --send io_uring_recv (a recv member)" 2 "$CTL" add --pid "$IDLE" --send io_uring_recv
ASSERT_MATCH "... says which family it is" "^satfeedctl: 'io_uring_recv' is a recv-family syscall, not send; the send family is: [a-z_,]*io_uring_send[a-z_,]*$" "$ERR"
ASSERT_RC "add --poll io_uring_bogus (unknown)" 2 "$CTL" add --pid "$IDLE" --poll io_uring_bogus
ASSERT_MATCH "... says it is unknown" "^satfeedctl: unknown syscall 'io_uring_bogus'; the poll family is: [a-z_0-9,]*io_uring_wait$" "$ERR"
ASSERT_OK "targets after the refused adds" "$CTL" targets --json
ASSERT_EQ "nothing was added" '{"targets":[]}' "$OUT"
ASSERT_OK "add with io_uring members only" "$CTL" add --pid "$IDLE" \
	--send io_uring_send,io_uring_writev --recv io_uring_recv --poll io_uring_wait
ASSERT_MATCH "... listed by name" '"syscalls":"io_uring_send,io_uring_writev,io_uring_recv,io_uring_wait"' \
	"$("$CTL" targets --json)"
"$CTL" remove --pid "$IDLE" >/dev/null 2>&1
sf_kill "$IDLE"

for mode in $MODES; do
	sf_log "--- --io $mode: exact counts ---"
	start_server "$mode" || continue
	TSRV=$SRV TPORT=$PORT TLOG=$SRVLOG
	start_server "$mode" || { sf_kill "$TSRV"; continue; }
	OSRV=$SRV OPORT=$PORT
	ASSERT_OK "add --pid $TSRV (sfserver --io $mode)" "$CTL" add --pid "$TSRV"
	ASSERT_MATCH "$mode: the default families include the io_uring members" \
		'io_uring_send,.*io_uring_recv,.*io_uring_wait' \
		"$(sf_json_get "$("$CTL" show --json --pid "$TSRV")" 'j["targets"][0]["syscalls"]')"
	# the unwatched server is driven at the same time: its rings' CQEs
	# must not reach the target
	sf_bg "$SFLOAD" --rate 3000 --duration 3 --json --no-progress "127.0.0.1:$OPORT"
	OLOAD=$BG_PID
	ASSERT_OK "$mode: sfload 3000 req/s for 3 s on the watched server" \
		"$SFLOAD" --rate 3000 --duration 3 --json --no-progress "127.0.0.1:$TPORT"
	wait "$OLOAD"
	ASSERT_EQ "$mode: the unwatched server's load ran" 0 "$?"
	sleep 0.3
	read -r sc rc pc ec ac nc <<<"$(counts "$TSRV")"
	sf_kill "$TSRV"
	served=$(sed -n 's/^sfserver: served \([0-9]*\) requests.*/\1/p' "$TLOG")
	ASSERT_EQ "$mode: send samples+failures == requests the target served (exact)" "${served:-none}" "$sc"
	ASSERT_EQ "$mode: no errors, EAGAIN or non-socket ops counted" "0 0 0" "$ec $ac $nc"
	ASSERT_EQ "$mode: recv completions counted (>= 1 per 2 requests)" yes \
		"$([ "$rc" -ge $((sc / 2)) ] && echo yes || echo "no ($rc recv for $sc sends)")"
	ASSERT_EQ "$mode: io_uring_enter waits counted" yes \
		"$([ "$pc" -ge $((sc / 4)) ] && echo yes || echo "no ($pc waits for $sc sends)")"
	"$CTL" remove --pid "$TSRV" >/dev/null 2>&1
	sf_kill "$OSRV"

	sf_log "--- --io $mode: RPS_obs against the generator at several rates ---"
	start_server "$mode" || continue
	ASSERT_OK "add --pid $SRV (sfserver --io $mode)" "$CTL" add --pid "$SRV"
	n=0
	for rate in $RATES; do
		sf_rate_run "$mode rate $rate" "$SRV" "$PORT" "$rate" \
			"$(sf_rate_duration "$rate" "$MIN_WINDOWS")" "$TOLERANCE_PCT" || continue
		sf_log "$mode rate $rate: $(sf_json_get "$J" '"achieved %.1f RPS_obs %.1f err %+.3f%% poll mean %.1f us waits/req %.2f" % (j["achieved"], j.get("rps_obs", 0), j.get("err_pct", 999), j.get("poll_mean_ns", 0) / 1000, j["waits_per_req"])')"
		n=$((n + 1))
	done
	ASSERT_EQ "$mode: ran at >= 5 rates" yes "$([ "$n" -ge 5 ] && echo yes || echo "no ($n)")"
	"$CTL" remove --pid "$SRV" >/dev/null 2>&1
	sf_kill "$SRV"
done

ASSERT_OK "unload" "$LOADER" unload
sf_finish
