# shellcheck shell=bash
# tests/lib/workload.sh - the bundled server (build/sfserver) and open-loop
# generator (build/sfload) in the suites: a server on a port of its own, and
# the RPS fidelity run, RPS_obs against the generator's achieved rate.  Part
# of tests/lib.sh; needs check.sh.

# sf_wait_file FILE: wait up to 5 s for FILE to hold something (the port
# file a server writes once it listens); 1 if it never does
sf_wait_file() {
	local _
	for _ in $(seq 1 50); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# sf_sfserver LOG [sfserver options]: start the bundled server (sf_bg) on a
# port it chooses (--port 0, told through LOG.port), its output in LOG.  Its
# pid in SRV, its port in SRV_PORT.  Returns 1 when it told no port within
# 5 s or is gone.
sf_sfserver() {
	local log=$1 portf=$1.port
	shift
	rm -f "$portf"
	sf_bg "$SFSERVER" --port 0 --port-file "$portf" --quiet "$@" \
		>"$log" 2>&1
	SRV=$BG_PID
	sf_wait_file "$portf"
	SRV_PORT=$(cat "$portf" 2>/dev/null)
	[ -n "$SRV_PORT" ] && kill -0 "$SRV" 2>/dev/null
}

# sf_under_load RATE SECONDS PORT NAME CMD...: ASSERT_OK NAME CMD while
# sfload offers RATE req/s to 127.0.0.1:PORT for SECONDS (from 0.5 s into
# the load: the server is busy when CMD starts); returns when the load has
# ended, CMD's output in $OUT (and $J), its stderr in $ERR.  One request
# pending per connection (--no-pipeline): a server that falls behind on a
# busy machine would otherwise read queued requests in one receive, and
# discovery counts the requests by the receives (a run here read 2270
# requests in 1068 receives with 4 ms latencies).
sf_under_load() {
	local rate=$1 secs=$2 port=$3 loadp
	shift 3
	sf_bg "$SFLOAD" --rate "$rate" --duration "$secs" --warmup 0 \
		--no-pipeline "127.0.0.1:$port"
	loadp=$BG_PID
	sleep 0.5
	ASSERT_OK "$@"
	J=$OUT
	wait "$loadp"
}

# sf_rate_duration RATE MIN_WINDOWS: the seconds of load at RATE req/s for
# MIN_WINDOWS whole windows of 2048 sends plus the two the run's edges cut,
# and at least 6 s: a stall of the VM just before the last window closes
# shifts its end by the backlog, an error of stall/span on RPS_obs.
# max(6, ceil((MIN_WINDOWS + 2.5) * 2048 / RATE))
sf_rate_duration() {
	local dur=$((((2 * $2 + 5) * 1024 + $1 - 1) / $1))

	[ "$dur" -ge 6 ] || dur=6
	echo "$dur"
}

# sf_rate_run LABEL PID PORT RATE DURATION TOLERANCE_PCT: one open-loop run
# of sfload at RATE req/s for DURATION s against the watched sfserver PID on
# PORT, its windows collected as it runs (tests/e2e/rate_run.py), and the
# RPS fidelity checks of what it measured, each named "LABEL: ...": sfload
# ended well (exit 0, no errors, no timeouts), >= 3 whole send windows lie
# inside the run, and RPS_obs of those is within TOLERANCE_PCT % of the
# rate sfload achieved.  The run's JSON in J.  Returns 1 when the run gave
# no JSON (a failed check says why), and no check was made.
sf_rate_run() {
	local label=$1 pid=$2 port=$3 rate=$4 dur=$5 tol=$6

	J=$(python3 "$SF_REPO/tests/e2e/rate_run.py" "$CTL" "$SFLOAD" "$pid" \
		"$port" "$rate" "$dur" 2>"$SF_TMP/run.err")
	if ! printf '%s' "$J" | sf_json_fields >/dev/null 2>&1; then
		sf_fail "$label: run" "output: $J" \
			"stderr: $(head -c 2000 "$SF_TMP/run.err")"
		return 1
	fi
	ASSERT_EQ "$label: sfload exit 0, no errors, no timeouts" "0 0 0" \
		"$(sf_json_get "$J" '"%s %s %s" % (j["gen_rc"], j["report"].get("errors"), j["report"].get("timeouts"))')"
	ASSERT_EQ "$label: >= 3 whole send windows inside the run" yes \
		"$(sf_json_get "$J" '"yes" if j["send_windows"] >= 3 else "no (%d)" % j["send_windows"]')"
	ASSERT_EQ "$label: RPS_obs $(sf_json_get "$J" '"%.3f" % j.get("rps_obs", 0)') within ${tol}% of achieved $(sf_json_get "$J" '"%.3f" % j["achieved"]') (error $(sf_json_get "$J" '"%+.3f" % j.get("err_pct", 999)')%)" yes \
		"$(sf_json_get "$J" '"yes" if abs(j.get("err_pct", 999)) <= '"$tol"' else "no"')"
	return 0
}
