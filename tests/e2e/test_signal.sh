#!/usr/bin/env bash
# tests/e2e/test_signal.sh - the signal a governor reads (issue 22):
#
#  1. responses, not sends: the bundled server answering with one send
#     (--io sendto) and with two (--io sendfile: writev + sendfile, as a web
#     server sends headers and a file); for each, the response stream's
#     windows closed inside an open-loop run give
#         RPS_obs = sum(samples) * 1e9 / sum(sum_ns)
#     within 1% of the rate sfload achieved (the send stream reads 2x for
#     the second);
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
#     out the network and the client), service_p99 is there.
#
# Run as root from the repository root:  bash tests/e2e/test_signal.sh
# Needs: make all build/sfserver build/sfload, bpftool, python3.
. "$(dirname "$0")/../lib.sh"

sf_begin test_signal "$SFSERVER" "$SFLOAD"

RATE=${RATE:-3000}
DURATION=${DURATION:-6}
TOLERANCE_PCT=1

# reading_checks IO JSON: part 3 on signal_run.py's "readings"
reading_checks() {
	local io=$1 j=$2 lat
	ASSERT_EQ "--io $io: >= 2 readings during the run" yes \
		"$(sf_json_get "$j" '"yes" if len(j["readings"]) >= 2 else "no (%d)" % len(j["readings"])')"
	sf_log "--io $io: resp_rate read during the run: $(sf_json_get "$j" '" ".join(str(r["resp_rate"] and r["resp_rate"]["value"]) for r in j["readings"])') (RPS_obs of the run's windows $(sf_json_get "$j" '"%.3f" % j.get("rps_obs", 0)'))"
	ASSERT_EQ "--io $io: show --json resp_rate: closed in most reads" yes \
		"$(sf_json_get "$j" '"yes" if 2 * sum(1 for r in j["readings"] if r["resp_rate"] and r["resp_rate"]["window"] == "closed") > len(j["readings"]) else "no"')"
	ASSERT_EQ "--io $io: show --json resp_rate (closed) is floor(samples 10^12 / sum_ns) of the newest response window" "" \
		"$(sf_json_get "$j" '" ".join("%s!=%s" % (r["resp_rate"] and r["resp_rate"]["value"], r["newest_window_rate"]) for r in j["readings"] if r["resp_rate"] is None or (r["resp_rate"]["window"] == "closed" and r["resp_rate"]["value"] != r["newest_window_rate"]))')"
	ASSERT_EQ "--io $io: exporter: satfeed_response_rate_per_second and satfeed_service_time_mean_seconds > 0 during the run" "" \
		"$(sf_json_get "$j" '" ".join("%s/%s" % (r["exp_satfeed_response_rate_per_second"], r["exp_satfeed_service_time_mean_seconds"]) for r in j["readings"] if not (r["exp_satfeed_response_rate_per_second"] and float(r["exp_satfeed_response_rate_per_second"]) > 0 and r["exp_satfeed_service_time_mean_seconds"] and float(r["exp_satfeed_service_time_mean_seconds"]) > 0))')"
	lat=$(sf_json_get "$j" '"%.6f" % (float(j["report"].get("send_mean_us", 0)) / 1e6)')
	ASSERT_EQ "--io $io: service_mean > 0 and below sfload's mean latency from the send ($(sf_json_get "$j" '" ".join(str(r["service_mean"] and r["service_mean"]["value"]) for r in j["readings"])') s < $lat s)" "" \
		"$(sf_json_get "$j" '" ".join(str(r["service_mean"]) for r in j["readings"] if r["service_mean"] is None or not 0 < float(r["service_mean"]["value"]) < float(j["report"]["send_mean_us"]) / 1e6)')"
	ASSERT_EQ "--io $io: service_p99 > 0 with the service stream's window" "" \
		"$(sf_json_get "$j" '" ".join(str(r["service_p99"]) for r in j["readings"] if r["service_p99"] is None or not float(r["service_p99"]["value"]) > 0 or r["service_p99"]["window"] != r["service_mean"]["window"])')"
}

ASSERT_OK "load" "$LOADER" load
[ "$RC" = 0 ] || sf_finish

for IO in sendto sendfile; do
	sf_log "--- --io $IO ---"
	if ! sf_sfserver "$SF_TMP/server-$IO.log" --io "$IO"; then
		sf_fail "sfserver --io $IO started" "no port file after 5 s"
		continue
	fi
	ASSERT_OK "add sfserver --io $IO" "$CTL" add --pid "$SRV"
	SLOT=$("$CTL" show --json --pid "$SRV" | python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["slot"])')
	mkdir -p "$SF_TMP/textfile-$IO"
	J=$(python3 "$SF_REPO/tests/e2e/signal_run.py" "$SF_PIN_ROOT" \
		"$SFLOAD" "$SLOT" "$SRV_PORT" "$RATE" "$DURATION" "$CTL" \
		"$SF_TMP/textfile-$IO" 2>"$SF_TMP/run.err")
	if ! printf '%s' "$J" | sf_json_fields >/dev/null 2>&1; then
		sf_fail "--io $IO: run" "output: $J" \
			"stderr: $(head -c 2000 "$SF_TMP/run.err")"
	else
		ASSERT_EQ "--io $IO: sfload exit 0, no errors" "0 0" \
			"$(sf_json_get "$J" '"%s %s" % (j["gen_rc"], j["report"].get("errors"))')"
		ASSERT_EQ "--io $IO: >= 3 response windows inside the run" yes \
			"$(sf_json_get "$J" '"yes" if j["windows"] >= 3 else "no (%d)" % j["windows"]')"
		ASSERT_EQ "--io $IO: RPS_obs from responses within ${TOLERANCE_PCT}% of achieved ($(sf_json_get "$J" '"%.1f vs %.1f" % (j.get("rps_obs", 0), j["achieved"])'))" yes \
			"$(sf_json_get "$J" '"yes" if abs(j.get("err_pct", 999)) <= '"$TOLERANCE_PCT"' else "no"')"
		reading_checks "$IO" "$J"
		ASSERT_EQ "--io $IO: quiet within 2 T of the last request ($(sf_json_get "$J" 'j["quiet_after_ns"]') ns, T $(sf_json_get "$J" 'j["max_age_ns"]'))" yes \
			"$(sf_json_get "$J" '"yes" if j["quiet_after_ns"] is not None and j["quiet_after_ns"] <= 2 * j["max_age_ns"] else "no"')"
	fi
	ASSERT_OK "remove sfserver --io $IO" "$CTL" remove --pid "$SRV"
	kill "$SRV" 2>/dev/null
	wait "$SRV" 2>/dev/null
done

ASSERT_OK "unload" "$LOADER" unload
sf_finish
