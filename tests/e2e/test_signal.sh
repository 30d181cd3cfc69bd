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
#     about 100%.
#
# Run as root from the repository root:  bash tests/e2e/test_signal.sh
# Needs: make all build/sfserver build/sfload, bpftool, python3.
. "$(dirname "$0")/../lib.sh"

sf_begin test_signal "$SFSERVER" "$SFLOAD"

RATE=${RATE:-3000}
DURATION=${DURATION:-6}
TOLERANCE_PCT=1

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
	J=$(python3 "$SF_REPO/tests/e2e/signal_run.py" "$SF_PIN_ROOT" \
		"$SFLOAD" "$SLOT" "$SRV_PORT" "$RATE" "$DURATION" \
		2>"$SF_TMP/run.err")
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
		ASSERT_EQ "--io $IO: quiet within 2 T of the last request ($(sf_json_get "$J" 'j["quiet_after_ns"]') ns, T $(sf_json_get "$J" 'j["max_age_ns"]'))" yes \
			"$(sf_json_get "$J" '"yes" if j["quiet_after_ns"] is not None and j["quiet_after_ns"] <= 2 * j["max_age_ns"] else "no"')"
	fi
	ASSERT_OK "remove sfserver --io $IO" "$CTL" remove --pid "$SRV"
	kill "$SRV" 2>/dev/null
	wait "$SRV" 2>/dev/null
done

ASSERT_OK "unload" "$LOADER" unload
sf_finish
