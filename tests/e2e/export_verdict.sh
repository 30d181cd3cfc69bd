# tests/e2e/export_verdict.sh - sourced by test_export.sh with the engine
# loaded, the exporter at $URL and a Prometheus at $PROM scraping it every
# second with the shipped alert rules (their verdict alerts' for: made 2 s):
#
#  - one reading: the verdict, the reasons and each headline figure with
#    its window and age in the exposition equal `satfeedctl show --json`'s
#    "saturation" and "reading" read just before;
#  - a cgroup removed, made again at the same path and added again: every
#    series once per target instance (slot, gen), and Prometheus stores the
#    live cgroup's count, not the gone one's;
#  - the alert rules on the verdict fire against a server driven past its
#    capacity and resolve once the load stops (ABI 4: the engine reads
#    the server quiet); the stale alert does not fire (the engine runs);
#  - docs/prometheus.md's PromQL examples evaluate, and none gives a share
#    above 1;
#  - --listen :PORT is the default address on that port.

######################################################################
sf_log "--- one reading: show --json and the exposition ---"
# the figures settle once the server is quiet (ABI 4: within 1.5 T of its
# last event the engine publishes a quiet window of each stream and the
# quiet verdict; nothing moves after that until the next event)
QUIET=no
for _ in $(seq 1 100); do
	J=$("$CTL" show --json --pid "$SRV")
	QUIET=$(sf_json_get "$J" '"yes" if j["targets"][0]["saturation"]["why"] == 32 and all(j["targets"][0][s]["windows"][-1]["flags"] == 2 and j["targets"][0][s]["pending"] == 0 for s in ("send", "recv", "poll", "response", "service")) else "no"')
	[ "$QUIET" = yes ] && break
	sleep 0.1
done
ASSERT_EQ "the server quiet: verdict why quiet, every stream's newest window quiet" yes "$QUIET"
printf '%s\n' "$J" >"$SF_TMP/reading.json"
scrape "$URL"
printf '%s\n' "$BODY" >"$SF_TMP/reading.txt"
sf_run chk reading "$SF_TMP/reading.json" "$SF_TMP/reading.txt"
if [ "$RC" = 0 ]; then
	sf_pass "the exposition's verdict and figures are show --json's: $OUT"
else
	sf_fail "the exposition's verdict and figures are show --json's" "$OUT" "$ERR"
fi
# quiet: ok, the wps average restarted, the rates (RPS: responses, SEND/s:
# sends) the quiet windows' 0, closed (no mark: current while the engine
# runs), nothing in progress
SHOW=$("$CTL" show --pid "$SRV")
ASSERT_MATCH "show: header: RPS (responses) then SEND/s" \
	"^TARGET +STATE +WPS +IDLE% +CV2.S +CV2.R +RPS +SEND/s +NEXT$" "$SHOW"
ASSERT_EQ "show: quiet: ok, WPS 1000, RPS and SEND/s 0.0 unmarked, no NEXT" "ok 1000 0.0 0.0 -" \
	"$(awk -v p="$SRV" '$2 == p { print $4, $5, $9, $10, $11 }' <<<"$SHOW")"

######################################################################
sf_log "--- a cgroup re-created at the same path and added again ---"
CGNAME=satfeed-export-$$
if ! sf_cgroup_make "$CGNAME"; then
	sf_fail "mkdir a cgroup under $(sf_cgroup2_mount)"
else
	CGPATH=$CG_DIR
	# cg_server LOG: an sfserver in the cgroup, its pid $SRV_CG, port $CG_PORT
	cg_server() {
		sf_sfserver "$SF_TMP/$1" || return 1
		SRV_CG=$SRV
		CG_PORT=$SRV_PORT
		SRV=$SERVER_PID
		echo "$SRV_CG" >"$CGPATH/cgroup.procs"
	}
	SERVER_PID=$SRV
	ASSERT_TRUE "first sfserver in $CGPATH" cg_server cg1.log
	ASSERT_OK "add --cgroup $CGPATH (first)" "$CTL" add --cgroup "$CGPATH"
	ASSERT_OK "sfload 1000 req/s for 1 s (first)" "$SFLOAD" --rate 1000 --duration 1 --json --no-progress "127.0.0.1:$CG_PORT"
	sf_kill "$SRV_CG"
	ASSERT_TRUE "rmdir $CGPATH" rmdir "$CGPATH"
	for _ in $(seq 1 50); do
		[ "$("$CTL" targets --json | python3 -c 'import json,sys; print(sum(1 for t in json.load(sys.stdin)["targets"] if t.get("state") == "gone"))')" -ge 1 ] && break
		sleep 0.1
	done
	ASSERT_TRUE "mkdir $CGPATH again" mkdir "$CGPATH"
	ASSERT_TRUE "second sfserver in $CGPATH" cg_server cg2.log
	ASSERT_OK "add --cgroup $CGPATH (second)" "$CTL" add --cgroup "$CGPATH"
	ASSERT_OK "sfload 3000 req/s for 1 s (second)" "$SFLOAD" --rate 3000 --duration 1 --json --no-progress "127.0.0.1:$CG_PORT"
	sleep 0.5
	J=$("$CTL" show --json)
	CG_REL=$(sf_json_get "$J" '[t["path"] for t in j["targets"] if "path" in t][0]')
	LIVE=$(sf_json_get "$J" '" ".join("%s %s %s" % (t["slot"], t["gen"], t["send"]["calls"]) for t in j["targets"] if t.get("path") and t["state"] == "active")')
	read -r LSLOT LGEN LCALLS <<<"$LIVE"
	ASSERT_EQ "two targets at $CG_REL: one gone, one live" "gone active" \
		"$(sf_json_get "$J" '" ".join(t["state"] for t in sorted((t for t in j["targets"] if t.get("path")), key=lambda t: t["state"] != "gone"))')"
	scrape "$URL"
	printf '%s\n' "$BODY" >"$SF_TMP/cgroup.txt"
	sf_run chk unique "$SF_TMP/cgroup.txt"
	ASSERT_EQ "same path twice: every series once ($OUT)" 0 "$RC"
	ASSERT_EQ "same path twice: two send series of $CG_REL, told apart by slot and gen" 2 \
		"$(grep -c "^satfeed_calls_total{kind=\"cgroup\",target=\"$CG_REL\",comm=\"\",slot=\"[0-9]*\",gen=\"[0-9]*\",stream=\"send\"}" "$SF_TMP/cgroup.txt")"
	sleep 2.5	# stored by Prometheus
	ASSERT_EQ "prometheus: two series stored for $CG_REL" 2 \
		"$(chk query "$PROM" "count(satfeed_calls_total{target=\"$CG_REL\",stream=\"send\"})" | awk '{ print $NF }')"
	ASSERT_EQ "prometheus: the live cgroup's send count is show --json's ($LCALLS)" "$LCALLS" \
		"$(chk query "$PROM" "satfeed_calls_total{target=\"$CG_REL\",stream=\"send\",slot=\"$LSLOT\",gen=\"$LGEN\"}" | awk '{ print $NF }')"
	ASSERT_EQ "prometheus: the live one is the one not gone" "$LCALLS" \
		"$(chk query "$PROM" "satfeed_calls_total{target=\"$CG_REL\",stream=\"send\"} and on (slot, gen) (satfeed_target_gone == 0)" | awk '{ print $NF }')"
	sf_kill "$SRV_CG"
	"$CTL" remove --cgroup "$CGPATH" >/dev/null 2>&1
	sf_cgroup_remove "$CGPATH"
fi

######################################################################
sf_log "--- the alert rules on the verdict: fired past capacity, resolved after ---"
# 300 us of work per request: about 3000 req/s at most on one thread
sf_sfserver "$SF_TMP/hot.log" --work-us 300 || sf_fail "sfserver --work-us 300 started"
HOT=$SRV
HOT_PORT=$SRV_PORT
SRV=$SERVER_PID
ASSERT_OK "add the server to drive past capacity" "$CTL" add --pid "$HOT"
sf_bg "$SFLOAD" --rate 6000 --connections 4 --duration 20 --no-progress --json "127.0.0.1:$HOT_PORT" >"$SF_TMP/hot-load.json" 2>&1
LOAD=$BG_PID
# alert_state NAME WANT SECONDS: waits until alert NAME of HOT is WANT
alert_state() {
	local s=none
	for _ in $(seq 1 $((10 * $3))); do
		s=$(chk alert "$PROM" "$1" "$HOT")
		[ "$s" = "$2" ] && break
		sleep 0.1
	done
	echo "$s"
}
ASSERT_EQ "past capacity: SatfeedTargetSaturated fires" firing \
	"$(alert_state SatfeedTargetSaturated firing 18)"
ASSERT_EQ "past capacity: SatfeedTargetNearSaturation fires (full is past near)" firing \
	"$(alert_state SatfeedTargetNearSaturation firing 5)"
ASSERT_EQ "past capacity: show says full" full \
	"$(sf_json_get "$("$CTL" show --json --pid "$HOT")" 'j["targets"][0]["saturation"]["state"]')"
ASSERT_EQ "past capacity: the server's verdict stored as full (level 3)" 3 \
	"$(chk query "$PROM" "satfeed_saturation_level{target=\"$HOT\"}" | awk '{ print $NF }')"
ASSERT_EQ "past capacity: the other targets fire nothing" "" \
	"$(chk query "$PROM" "ALERTS{alertname=~\"SatfeedTarget(Saturated|NearSaturation)\",target!=\"$HOT\"}")"
# alert_never NAME SECONDS: "none" when alert NAME of HOT stays absent (not
# even pending) for SECONDS, else the state it took
alert_never() {
	local s
	for _ in $(seq 1 $((10 * $2))); do
		s=$(chk alert "$PROM" "$1" "$HOT")
		[ "$s" = none ] || break
		sleep 0.1
	done
	echo "$s"
}
wait "$LOAD"
# ABI 4: the engine's timer says so itself within 1.5 T (T = max_age_ns,
# 1 s here) of the last request: the verdict turns ok with the reason
# quiet, the saturation alerts resolve, and the verdict is not stale (the
# engine runs: stale is for an engine that stopped evaluating, which the
# unit test test_reading checks; an exporter of an unloaded engine exports
# satfeed_up 0 and no verdict, SatfeedEngineDown above)
sf_log "load over; the engine reads the server quiet: ok, reason quiet"
ASSERT_EQ "load over: SatfeedTargetSaturated resolves" none \
	"$(alert_state SatfeedTargetSaturated none 20)"
ASSERT_EQ "load over: SatfeedTargetNearSaturation resolves" none \
	"$(alert_state SatfeedTargetNearSaturation none 5)"
# The alerts resolve when the verdict leaves near and full, which can be
# before the quiet tick: the idle share and a falling service time read ok
# as the last requests drain (a CI run: ok with no reason yet).  Quiet
# comes within 1.5 T of the last event; wait up to 5 s (1 s T) for it.
quiet_reading() {
	sf_json_get "$("$CTL" show --json --pid "$HOT")" '"%s %s %s" % (j["targets"][0]["saturation"]["state"], json.dumps(j["targets"][0]["saturation"]["reasons"]), j["targets"][0]["saturation"]["stale"])'
}
for _ in $(seq 1 50); do
	Q=$(quiet_reading)
	[ "$Q" = 'ok ["quiet"] False' ] && break
	sleep 0.1
done
ASSERT_EQ "load over: show --json: ok, reason quiet, not stale, within 5 s" \
	'ok ["quiet"] False' "$Q"
ASSERT_EQ "load over: show: the verdict ok, no stale mark" ok \
	"$("$CTL" show --pid "$HOT" | awk -v p="$HOT" '$2 == p { print $4 }')"
# Prometheus stores it at its next scrape (every 1 s)
stored_verdict() {
	for q in "satfeed_saturation_level{target=\"$HOT\"}" \
		"satfeed_saturation_reason{target=\"$HOT\",rule=\"quiet\"}" \
		"satfeed_saturation_stale{target=\"$HOT\"}"; do
		chk query "$PROM" "$q" | awk '{ print $NF }'
	done | paste -sd' '
}
for _ in $(seq 1 30); do
	Q=$(stored_verdict)
	[ "$Q" = "1 1 0" ] && break
	sleep 0.1
done
ASSERT_EQ "load over: stored: level 1 (ok), rule quiet 1, stale 0" "1 1 0" "$Q"
ASSERT_EQ "load over: SatfeedTargetStale never pending nor firing (4 s, its for: is 2 s)" none \
	"$(alert_never SatfeedTargetStale 4)"

######################################################################
sf_log "--- docs/prometheus.md: the PromQL examples ---"
sf_run chk promql "$PROM" "$SF_REPO/docs/prometheus.md"
if [ "$RC" = 0 ]; then
	sf_pass "every PromQL example evaluates, no share above 1: $OUT"
else
	sf_fail "every PromQL example evaluates, no share above 1" "$OUT" "$ERR"
fi
sf_kill "$HOT"

######################################################################
sf_log "--- --listen :PORT ---"
if start_exporter colon --listen :0; then
	ASSERT_MATCH "--listen :0 is the default address, a free port" "^serving http://127\.0\.0\.1:[0-9]+/metrics" "$(cat "$EXP_OUT")"
	scrape "$EXP_URL"
	ASSERT_EQ "--listen :0: satfeed_up 1" 1 "$(value satfeed_up)"
else
	sf_fail "--listen :0 serves" "$(cat "$EXP_ERR")"
fi
stop_pid "$EXP_PID"
