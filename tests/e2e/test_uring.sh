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
#  2. a multishot RECV armed before `add` (attach to a running server):
#     sfserver --io uring-ms and one client connection that made 3
#     requests (its multishot RECV armed and used), then `add`, then
#     STEPS requests one at a time: the recv stream counts exactly STEPS
#     (one CQE each), the send stream too; the same with `add` before the
#     client connected counts STEPS + 3 each (the submission seen: not
#     twice).  And under sfload at 8000 req/s, `add` a second into the
#     run: the receives after it are counted (at least one per 2 sends;
#     the engine without the wake-up hook counted none).
#  3. an engine without sf_uring_task_add (its pin removed: as the loader
#     leaves it on a kernel without the tracepoint): add and discover say
#     so in one line, and only for io_uring receive members.
#  4. rates: for each mode, 5 open-loop rates from the bundled generator;
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

# ms_steps before|after: a client connection to sfserver --io uring-ms
# makes 3 requests, then STEPS more; `add` comes before it connects or
# between the two parts.  Both streams count exactly what followed the add.
STEPS=${STEPS:-200}
ms_steps() {
	local when=$1 go=$SF_TMP/go.$RANDOM out=$SF_TMP/client.$RANDOM.out
	local want=$STEPS client _
	[ "$when" = before ] && want=$((STEPS + 3))
	start_server uring-ms || return 1
	if [ "$when" = before ]; then
		ASSERT_OK "add --pid $SRV before its client connects" \
			"$CTL" add --pid "$SRV"
	fi
	sf_bg python3 "$SF_REPO/tests/e2e/sfserver_client.py" "$PORT" steps \
		"$STEPS" "$go" >"$out" 2>&1
	client=$BG_PID
	for _ in $(seq 1 100); do
		grep -q '^armed$' "$out" 2>/dev/null && break
		sleep 0.05
	done
	ASSERT_MATCH "$when: the client's multishot RECV was armed and used" \
		'^armed$' "$(cat "$out" 2>&1)"
	if [ "$when" = after ]; then
		ASSERT_OK "add --pid $SRV after its multishot RECV was armed" \
			"$CTL" add --pid "$SRV"
	fi
	touch "$go"
	wait "$client"
	ASSERT_MATCH "$when: the client's $STEPS requests were answered" \
		"^served $STEPS\$" "$(tail -n 1 "$out" 2>&1)"
	sleep 0.2
	read -r sc rc pc ec ac nc <<<"$(counts "$SRV")"
	ASSERT_EQ "add $when the multishot RECV: recv samples == requests after the add (one CQE each, exact)" \
		"$want" "$rc"
	ASSERT_EQ "add $when the multishot RECV: send samples == requests after the add" \
		"$want" "$sc"
	ASSERT_EQ "add $when the multishot RECV: no errors, EAGAIN or non-socket ops" \
		"0 0 0" "$ec $ac $nc"
	"$CTL" remove --pid "$SRV" >/dev/null 2>&1
	sf_kill "$SRV"
}

if [[ " $MODES " == *" uring-ms "* ]]; then
	sf_log "--- --io uring-ms: a multishot RECV armed before add ---"
	ms_steps before
	ms_steps after
	if start_server uring-ms; then
		sf_bg "$SFLOAD" --rate 8000 --duration 3 --warmup 0 --json \
			--no-progress "127.0.0.1:$PORT" >/dev/null
		LOAD=$BG_PID
		sleep 1
		ASSERT_OK "add --pid $SRV a second into an 8000 req/s run" \
			"$CTL" add --pid "$SRV"
		wait "$LOAD"
		ASSERT_EQ "the 8000 req/s run ended" 0 "$?"
		sleep 0.3
		read -r sc rc pc ec ac nc <<<"$(counts "$SRV")"
		sf_log "8000 req/s, added after 1 s: $sc send, $rc recv samples, $pc waits"
		ASSERT_EQ "8000 req/s, added into the run: sends counted" yes \
			"$([ "$sc" -ge 8000 ] && echo yes || echo "no ($sc)")"
		ASSERT_EQ "8000 req/s, added into the run: the pre-armed receives counted (>= 1 per 2 sends)" \
			yes "$([ "$rc" -ge $((sc / 2)) ] && echo yes || echo "no ($rc recv for $sc sends)")"
		"$CTL" remove --pid "$SRV" >/dev/null 2>&1
		sf_kill "$SRV"
	fi
fi

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

# An engine without sf_uring_task_add (the loader leaves it out on a kernel
# without the io_uring_task_add tracepoint): add and discover say in one
# line that a multishot receive armed before them is not counted; a member
# list with no io_uring receive says nothing.  Its pin is removed here; its
# link keeps it attached until the unload.
sf_bg sleep 60
IDLE=$BG_PID
NOTE='^satfeedctl: note: this engine has no sf_uring_task_add \(see the loader.s note\): a multishot io_uring receive armed before this add is not counted until it is armed again$'
ASSERT_OK "add --pid $IDLE (the engine has sf_uring_task_add)" "$CTL" add --pid "$IDLE"
ASSERT_EQ "... no io_uring note" "" "$ERR"
"$CTL" remove --pid "$IDLE" >/dev/null 2>&1
ASSERT_OK "remove the pin of sf_uring_task_add" rm "$SF_PIN_ROOT/progs/sf_uring_task_add"
ASSERT_OK "add --pid $IDLE (sf_uring_task_add not there)" "$CTL" add --pid "$IDLE"
ASSERT_MATCH "... says so in one line" "$NOTE" "$ERR"
"$CTL" remove --pid "$IDLE" >/dev/null 2>&1
ASSERT_OK "add --pid $IDLE --recv recvfrom,io_uring_read (no io_uring receive)" \
	"$CTL" add --pid "$IDLE" --recv recvfrom,io_uring_read
ASSERT_EQ "... no io_uring note" "" "$ERR"
"$CTL" remove --pid "$IDLE" >/dev/null 2>&1
ASSERT_OK "discover --pid $IDLE --seconds 0.1 (sf_uring_task_add not there)" \
	"$CTL" discover --pid "$IDLE" --seconds 0.1
ASSERT_MATCH "... says so in one line" "$NOTE" "$ERR"
sf_kill "$IDLE"

ASSERT_OK "unload" "$LOADER" unload
sf_finish
