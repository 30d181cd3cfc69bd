#!/usr/bin/env bash
# tests/e2e/test_signal.sh - the signal a governor reads (issue 22):
#
#  1. responses, not sends: the bundled server answering with one send
#     (--io sendto) and with two (--io sendfile: writev + sendfile, as a web
#     server sends headers and a file); for each, the response stream's
#     windows closed inside an open-loop run give
#         RPS_obs = sum(samples) * 1e9 / sum(sum_ns)
#     within 1% of the rate sfload achieved (the send stream reads 2x for
#     the second); and a reverse proxy (--proxy: each request sent on to a
#     second sfserver, the backend, not watched, over a connection the
#     proxy opened itself): only its client-facing (accepted) connections
#     count, so RPS_obs is again within 1% of sfload's rate while its send
#     stream counts 2 sends per response (within 1%).  sfload runs with
#     --no-pipeline (signal_run.py): requests that pile up on a connection
#     while a slow machine's server is behind would be read together and
#     count as one response (docs/figures.md, "Limits");
#  2. a quiet target: after the run, with no traffic, the response and send
#     streams publish a quiet window and the verdict says quiet (neither
#     near nor full) within 2 T (sf_info.max_age_ns), the idle share then
#     about 100%;
#  3. the one reading (tools/lib/sf_reading.c) shows them, read during the
#     run: `show --json`'s resp_rate, a closed window's, is the rate
#     computed from the samples and sum_ns of the response stream's newest
#     window in the same document, exactly (so within 1%); the exporter's
#     satfeed_response_rate_per_second and satfeed_service_time_mean_seconds
#     of the target are there and > 0; service_mean is > 0 and below
#     sfload's own mean latency from the actual send (service time leaves
#     out the network and the client), service_p99 is there;
#  4. service time against the server's own: sfserver measures it per
#     connection as the engine defines it (first receive after a response
#     to the first send, each at the return of the call, in user space) and
#     prints it on exit.  The engine's service samples of the run (the
#     service-time windows of `show --json`, all of them kept) are exactly
#     sfserver's responses, and sfserver's mean minus the engine's lies in
#     [0, SVC_TOL_NS] (see below: the direction and the bound).
#
# Run as root from the repository root:  bash tests/e2e/test_signal.sh
# Needs: make all build/sfserver build/sfload, bpftool, python3.
. "$(dirname "$0")/../lib.sh"

sf_begin test_signal "$SFSERVER" "$SFLOAD"

RATE=${RATE:-3000}
DURATION=${DURATION:-6}
TOLERANCE_PCT=1
# sfload's connections.  A response is the first send after a receive on
# a connection (satfeed.h): requests that arrive together in one receive
# are answered by sends that are no response of their own.  sfload sends
# the requests it owes in a burst after a late wake-up (2 CPUs shared with
# other jobs); on one connection they coalesce: measured with 1
# connection, 3000 req/s, a QEMU guest running beside: RPS_obs 2908
# (--io sendto) and 2765 (--io sendfile) for 3000 served, sfserver
# counting the same responses as the engine.  Round-robin over 16
# connections, each sees a request every 5 ms.
CONNS=16
# sfserver - engine, mean service time over a whole run, must lie in
# [0, SVC_TOL_NS] ns.  Both read the clock when the calls returned: the
# engine at the syscall's exit, sfserver after the return to user space.
# On the receive the two readings are a few hundred ns apart; on the
# response's send sfserver's comes later by the engine's response
# accounting (after its reading) and, more, by any run of the client the
# send woke, which preempts the server on its way back to user space and
# which the engine does not see.  So sfserver reads longer, never shorter.
# Measured in two runs (2 CPUs, a QEMU guest and other tests beside, means
# of 18-19.5 k responses, engine's mean in brackets): --io sendto +4.7 and
# +4.2 us (17.3, 13.5 us), --io sendfile +7.4 and +6.0 us (18.5, 15.1 us),
# --proxy +5.3 and +7.0 us (58.1, 65.9 us); twice the largest:
SVC_TOL_NS=${SVC_TOL_NS:-15000}

# reading_checks IO JSON: part 3 on signal_run.py's "readings"
reading_checks() {
	local io=$1 j=$2 lat
	ASSERT_EQ "$io: >= 2 readings during the run" yes \
		"$(sf_json_get "$j" '"yes" if len(j["readings"]) >= 2 else "no (%d)" % len(j["readings"])')"
	sf_log "$io: resp_rate read during the run: $(sf_json_get "$j" '" ".join(str(r["resp_rate"] and r["resp_rate"]["value"]) for r in j["readings"])') (RPS_obs of the run's windows $(sf_json_get "$j" '"%.3f" % j.get("rps_obs", 0)'))"
	ASSERT_EQ "$io: show --json resp_rate: closed in most reads" yes \
		"$(sf_json_get "$j" '"yes" if 2 * sum(1 for r in j["readings"] if r["resp_rate"] and r["resp_rate"]["window"] == "closed") > len(j["readings"]) else "no"')"
	ASSERT_EQ "$io: show --json resp_rate (closed) is floor(samples 10^12 / sum_ns) of the newest response window" "" \
		"$(sf_json_get "$j" '" ".join("%s!=%s" % (r["resp_rate"] and r["resp_rate"]["value"], r["newest_window_rate"]) for r in j["readings"] if r["resp_rate"] is None or (r["resp_rate"]["window"] == "closed" and r["resp_rate"]["value"] != r["newest_window_rate"]))')"
	ASSERT_EQ "$io: exporter: satfeed_response_rate_per_second and satfeed_service_time_mean_seconds > 0 during the run" "" \
		"$(sf_json_get "$j" '" ".join("%s/%s" % (r["exp_satfeed_response_rate_per_second"], r["exp_satfeed_service_time_mean_seconds"]) for r in j["readings"] if not (r["exp_satfeed_response_rate_per_second"] and float(r["exp_satfeed_response_rate_per_second"]) > 0 and r["exp_satfeed_service_time_mean_seconds"] and float(r["exp_satfeed_service_time_mean_seconds"]) > 0))')"
	lat=$(sf_json_get "$j" '"%.6f" % (float(j["report"].get("send_mean_us", 0)) / 1e6)')
	ASSERT_EQ "$io: service_mean > 0 and below sfload's mean latency from the send ($(sf_json_get "$j" '" ".join(str(r["service_mean"] and r["service_mean"]["value"]) for r in j["readings"])') s < $lat s)" "" \
		"$(sf_json_get "$j" '" ".join(str(r["service_mean"]) for r in j["readings"] if r["service_mean"] is None or not 0 < float(r["service_mean"]["value"]) < float(j["report"]["send_mean_us"]) / 1e6)')"
	ASSERT_EQ "$io: service_p99 > 0 with the service stream's window" "" \
		"$(sf_json_get "$j" '" ".join(str(r["service_p99"]) for r in j["readings"] if r["service_p99"] is None or not float(r["service_p99"]["value"]) > 0 or r["service_p99"]["window"] != r["service_mean"]["window"])')"
}

ASSERT_OK "load" "$LOADER" load
[ "$RC" = 0 ] || sf_finish

# svc_checks IO JSON LOG: part 4, sfserver's own service time (its exit
# line in LOG) against the engine's service samples of the run
svc_checks() {
	local io=$1 j=$2 own n e
	own=$(sed -n 's/^sfserver: service time: \([0-9]*\) responses, mean [0-9]* ns, sum \([0-9]*\) ns$/\1 \2/p' "$3")
	ASSERT_MATCH "$io: sfserver reports its service time" \
		'^[1-9][0-9]* [0-9]+$' "$own"
	[ -n "$own" ] || return
	e=$(sf_json_get "$j" '"%d %d %d %s" % (j["svc"]["n"], j["svc"]["sum_ns"], j["svc"]["windows"], j["svc"]["lost"])')
	sf_log "$io: service time: engine $e (samples sum_ns windows lost), sfserver $own (responses sum_ns)"
	ASSERT_EQ "$io: every service window of the run still kept" \
		False "${e##* }"
	n=${own% *}
	ASSERT_EQ "$io: the engine's service samples == sfserver's responses" \
		"$n" "${e%% *}"
	ASSERT_EQ "$io: mean service time, sfserver - engine in [0, $SVC_TOL_NS] ns ($(python3 -c "e='$e'.split(); o='$own'.split(); print('sfserver %.0f ns, engine %.0f ns' % (int(o[1]) / int(o[0]), int(e[1]) / max(int(e[0]), 1)))"))" yes \
		"$(python3 -c "e='$e'.split(); o='$own'.split(); d = int(o[1]) / int(o[0]) - int(e[1]) / max(int(e[0]), 1); print('yes' if 0 <= d <= $SVC_TOL_NS else 'no: %+.0f ns' % d)")"
}

for IO in sendto sendfile proxy; do
	L="--io $IO"; [ "$IO" = proxy ] && L="--proxy (--io sendto)"
	sf_log "--- $L ---"
	args=(--io "$IO")
	if [ "$IO" = proxy ]; then
		# the backend: a second sfserver, not watched
		if ! sf_sfserver "$SF_TMP/backend.log"; then
			sf_fail "backend sfserver started" "no port file after 5 s"
			continue
		fi
		BSRV=$SRV
		args=(--proxy "127.0.0.1:$SRV_PORT")
	fi
	if ! sf_sfserver "$SF_TMP/server-$IO.log" "${args[@]}"; then
		sf_fail "sfserver ${args[*]} started" "no port file after 5 s"
		continue
	fi
	ASSERT_OK "add sfserver ${args[*]}" "$CTL" add --pid "$SRV"
	SLOT=$("$CTL" show --json --pid "$SRV" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["slot"])')
	mkdir -p "$SF_TMP/textfile-$IO"
	J=$(python3 "$SF_REPO/tests/e2e/signal_run.py" "$SF_PIN_ROOT" \
		"$SFLOAD" "$SLOT" "$SRV_PORT" "$RATE" "$DURATION" "$CTL" \
		"$SF_TMP/textfile-$IO" "$CONNS" 2>"$SF_TMP/run.err")
	ran=0
	if ! printf '%s' "$J" | sf_json_fields >/dev/null 2>&1; then
		sf_fail "$L: run" "output: $J" \
			"stderr: $(head -c 2000 "$SF_TMP/run.err")"
	else
		ran=1
		ASSERT_EQ "$L: sfload exit 0, no errors" "0 0" \
			"$(sf_json_get "$J" '"%s %s" % (j["gen_rc"], j["report"].get("errors"))')"
		ASSERT_EQ "$L: >= 3 response windows inside the run" yes \
			"$(sf_json_get "$J" '"yes" if j["windows"] >= 3 else "no (%d)" % j["windows"]')"
		ASSERT_EQ "$L: RPS_obs from responses within ${TOLERANCE_PCT}% of achieved ($(sf_json_get "$J" '"%.1f vs %.1f" % (j.get("rps_obs", 0), j["achieved"])'))" yes \
			"$(sf_json_get "$J" '"yes" if abs(j.get("err_pct", 999)) <= '"$TOLERANCE_PCT"' else "no"')"
		reading_checks "$L" "$J"
		ASSERT_EQ "$L: quiet within 2 T of the last request ($(sf_json_get "$J" 'j["quiet_after_ns"]') ns, T $(sf_json_get "$J" 'j["max_age_ns"]'))" yes \
			"$(sf_json_get "$J" '"yes" if j["quiet_after_ns"] is not None and j["quiet_after_ns"] <= 2 * j["max_age_ns"] else "no"')"
	fi
	ASSERT_OK "remove sfserver $L" "$CTL" remove --pid "$SRV"
	kill "$SRV" 2>/dev/null
	wait "$SRV" 2>/dev/null
	if [ "$IO" = proxy ]; then
		kill "$BSRV" 2>/dev/null
		wait "$BSRV" 2>/dev/null
	fi
	[ "$ran" = 1 ] || continue
	if [ "$IO" = proxy ]; then
		ASSERT_EQ "--proxy: the send stream counts 2 sends per response, within 1% ($(sf_json_get "$J" '"%d sends, %d responses" % (j["send_calls"], j["resp_calls"])'))" yes \
			"$(sf_json_get "$J" '"yes" if j["resp_calls"] and abs(j["send_calls"] / j["resp_calls"] - 2) <= 0.02 else "no"')"
	fi
	svc_checks "$L" "$J" "$SF_TMP/server-$IO.log"
done

ASSERT_OK "unload" "$LOADER" unload
sf_finish
