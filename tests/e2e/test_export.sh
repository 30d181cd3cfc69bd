#!/usr/bin/env bash
# tests/e2e/test_export.sh - `satfeedctl export` against a real Prometheus
# and node_exporter (Debian's prometheus and prometheus-node-exporter):
#
#  - bad input: an address that does not parse, a port out of range, a
#    non-loopback address without --allow-remote, a port in use, a textfile
#    directory that is missing, not a directory or read-only: a clear line
#    and a non-zero exit, nothing left listening or written;
#  - the engine absent at start: satfeed_up 0, then 1 once it is loaded;
#  - 64 targets (the bundled server under load and 63 idle ones): a
#    Prometheus on loopback scrapes the exporter every second; the values
#    it stored, scrape by scrape, equal `satfeedctl show --json` at the
#    same window sequence (mean, variance, rate of each stream), and the
#    counters equal it once the load is over; promtool accepts the
#    exposition; OpenMetrics when asked for;
#  - GET only, no state changes; slow and idle clients do not stall a
#    scrape; the programs' run time while kernel.bpf_stats_enabled is on;
#  - --textfile for node_exporter's textfile collector, written atomically;
#  - the engine unloaded and reloaded mid-run, and an ABI mismatch:
#    satfeed_up 0 meanwhile, the figures back after;
#  - the verdict and figures equal show --json's, a cgroup re-created at
#    the same path, the alert rules fired and resolved, the PromQL
#    examples of docs/prometheus.md (export_verdict.sh);
#  - the systemd units as make install writes them, and the exporter with
#    the one capability its unit leaves it;
#  - the exporter's CPU and memory under a 1 s scrape of 64 targets
#    (printed, not asserted).
#
# Run as root from the repository root:  bash tests/e2e/test_export.sh
# Needs: make all (satfeedctl, sfserver, sfload), prometheus, promtool,
# prometheus-node-exporter (tools/install-deps.sh test), python3.
. "$(dirname "$0")/../lib.sh"

sf_begin test_export "$SFSERVER" "$SFLOAD"

CHECK_PY=$SF_REPO/tests/e2e/export_check.py
NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter || true)
missing=
for b in prometheus promtool "$NODE_EXPORTER"; do
	command -v "$b" >/dev/null 2>&1 || missing="$missing ${b:-prometheus-node-exporter}"
done
if [ -n "$missing" ]; then
	sf_fail "prometheus tools present" "missing:$missing (bash tools/install-deps.sh test)"
	sf_finish
fi
sf_bpf_stats_save
# kernel.bpf_stats_enabled goes back as it was on every path
eval "$(declare -f sf_cleanup | sed '1s/^sf_cleanup/_export_cleanup_base/')"
sf_cleanup() {
	sf_bpf_stats_restore
	_export_cleanup_base
}

chk() { python3 "$CHECK_PY" "$@"; }

# start_exporter NAME ARGS...: satfeedctl export in the background; waits
# for its "serving" (or "writing") line.  $EXP_PID, $EXP_URL, $EXP_ERR.
start_exporter() {
	local name=$1 line=
	shift
	EXP_OUT=$SF_TMP/$name.out
	EXP_ERR=$SF_TMP/$name.err
	sf_bg "$CTL" export "$@" >"$EXP_OUT" 2>"$EXP_ERR"
	EXP_PID=$BG_PID
	for _ in $(seq 1 50); do
		line=$(head -1 "$EXP_OUT" 2>/dev/null)
		[ -n "$line" ] && break
		kill -0 "$EXP_PID" 2>/dev/null || break
		sleep 0.1
	done
	EXP_URL=$(sed -n 's#^serving \(http://[^ ]*\)/metrics$#\1#p' "$EXP_OUT" | head -1)
	[ -n "$line" ]
}

# scrape URL [ACCEPT]: the exposition in $BODY, its Content-Type in $CTYPE.
scrape() {
	local r
	r=$(chk fetch "$1/metrics" GET "${2:-}" 2>&1)
	STATUS=$(sed -n 1p <<<"$r")
	CTYPE=$(sed -n 2p <<<"$r")
	BODY=$(sed '1,3d' <<<"$r")
}

# value NAME_AND_LABELS_ERE: the value of the one matching sample in $BODY.
value() { grep -E "^$1 " <<<"$BODY" | awk '{ print $NF }' | head -1; }

stop_pid() { sf_kill "$1"; }

######################################################################
sf_log "--- bad input ---"
SNAP=$SF_TMP/snap.start
sf_snapshot "$SNAP"
bad() {
	local name=$1 want=$2 msg=$3
	shift 3
	ASSERT_RC "$name" "$want" timeout 10 "$CTL" "$@"
	ASSERT_MSG "$name" "$msg"
	ASSERT_EQ "$name: one line on stderr" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
}
bad "--listen nonsense" 2 "'nonsense' is not ADDR:PORT" export --listen nonsense
bad "--listen 127.0.0.1:99999" 2 "is not ADDR:PORT" export --listen 127.0.0.1:99999
bad "--listen 127.0.0.1:" 2 "is not ADDR:PORT" export --listen 127.0.0.1:
bad "--listen 300.1.1.1:9437" 2 "is not ADDR:PORT" export --listen 300.1.1.1:9437
bad "--listen ::1:9437 (IPv6 without brackets)" 2 "is not ADDR:PORT" export --listen ::1:9437
bad "--listen 0.0.0.0:0 without --allow-remote" 2 "not a loopback address.*--allow-remote" \
	export --listen 0.0.0.0:0
bad "--listen [::]:0 without --allow-remote" 2 "not a loopback address" export --listen '[::]:0'
bad "--listen on show" 2 "--listen only applies to export" show --listen 127.0.0.1:0
bad "--allow-remote on add" 2 "--allow-remote only applies to export" add --pid $$ --allow-remote
bad "--textfile: no such directory" 1 "$SF_TMP/nonexistent: No such file or directory" \
	export --textfile "$SF_TMP/nonexistent"
bad "--textfile: a file" 1 "is not a directory" export --textfile /etc/hostname
mkdir -p "$SF_TMP/ro"
ASSERT_RC "--textfile: a read-only directory" 1 timeout 10 unshare -m sh -c \
	'mount -t tmpfs -o ro tmpfs "$1" && exec "$2" export --textfile "$1"' _ "$SF_TMP/ro" "$CTL"
ASSERT_MSG "--textfile: a read-only directory" "cannot write satfeed.prom there: Read-only file system"
ASSERT_EQ "--textfile: nothing written in the directories" "" "$(ls -A "$SF_TMP/ro")"

# the explicit flag lets another address through; [::1] is loopback
if start_exporter remote --listen 0.0.0.0:0 --allow-remote; then
	ASSERT_MATCH "--allow-remote: serves on 0.0.0.0" "^serving http://0\.0\.0\.0:[0-9]+/metrics" "$(cat "$EXP_OUT")"
else
	sf_fail "--allow-remote: serves on 0.0.0.0" "$(cat "$EXP_ERR")"
fi
stop_pid "$EXP_PID"
if start_exporter v6 --listen '[::1]:0'; then
	ASSERT_MATCH "--listen [::1]:0 is loopback" '^serving http://\[::1\]:[0-9]+/metrics' "$(cat "$EXP_OUT")"
else
	sf_fail "--listen [::1]:0 is loopback" "$(cat "$EXP_ERR")"
fi
stop_pid "$EXP_PID"

######################################################################
sf_log "--- the engine absent at start ---"
if ! start_exporter first --listen 127.0.0.1:0; then
	sf_fail "export starts without an engine" "$(cat "$EXP_ERR")"
	sf_finish
fi
sf_pass "export starts without an engine: $EXP_URL"
URL=$EXP_URL
EXP=$EXP_PID
EXP_STDERR=$EXP_ERR
PORT=${URL##*:}
ASSERT_MATCH "no engine: one clear line" "satfeed is not loaded.*satfeed_up is 0 until it is readable" "$(cat "$EXP_STDERR")"
scrape "$URL"
ASSERT_EQ "no engine: 200" 200 "$STATUS"
ASSERT_EQ "no engine: satfeed_up 0" 0 "$(value satfeed_up)"
ASSERT_EQ "no engine: satfeed_up is the only sample" "satfeed_up 0" "$(grep -v '^#' <<<"$BODY")"

# a second exporter on the same port
ASSERT_RC "port in use" 1 timeout 10 "$CTL" export --listen "127.0.0.1:$PORT"
ASSERT_MSG "port in use" "cannot listen on 127.0.0.1:$PORT: Address already in use"

ASSERT_OK "load" "$LOADER" load
scrape "$URL"
ASSERT_EQ "engine loaded: satfeed_up 1 at the next scrape" 1 "$(value satfeed_up)"
ASSERT_MATCH "engine loaded: logged once" "reading the engine at $SF_PIN_ROOT \(satfeed_up 1\)" "$(cat "$EXP_STDERR")"
ABI=$(sf_abi_version)
ASSERT_EQ "engine info" 1 "$(value 'satfeed_engine_info\{abi_version="'"$ABI"'",attach_mode="[a-z_]+",window_samples="2048",history="'"$(sf_history)"'",max_targets="64"\}')"
ASSERT_EQ "no targets yet" 0 "$(value satfeed_targets)"

######################################################################
sf_log "--- 64 targets, a Prometheus scraping every second ---"
sf_sfserver "$SF_TMP/server.log" || { sf_fail "sfserver started" "no port file"; sf_finish; }
SPORT=$SRV_PORT
ASSERT_OK "add sfserver ($SRV)" "$CTL" add --pid "$SRV"
# 62 idle targets, and one whose comm holds '"', '\', a newline and a
# byte that is not UTF-8 (a process names itself as it likes):
# q " b \ c \n d \xff
IDLE=()
python3 "$SF_REPO/tests/e2e/set_comm.py" 7122625c630a64ff prctl \
	"$SF_TMP/oddcomm.ready" &
ODD=$!
IDLE+=($ODD)
sf_track $ODD
for i in $(seq 1 62); do
	sleep 600 &
	IDLE+=($!)
	sf_track $!
done
for _ in $(seq 1 50); do
	[ -e "$SF_TMP/oddcomm.ready" ] && break
	sleep 0.1
done
added=0
for p in "${IDLE[@]}"; do
	"$CTL" add --pid "$p" >/dev/null && added=$((added + 1))
done
ASSERT_EQ "63 idle targets added" 63 "$added"
scrape "$URL"
ASSERT_EQ "64 targets exported" 64 "$(value satfeed_targets)"
ASSERT_EQ "320 streams exported (send, recv, poll, response, service)" 320 "$(grep -c '^satfeed_calls_total{' <<<"$BODY")"
ASSERT_EQ "the target labels: who, and which instance (slot, gen)" 1 \
	"$(value "satfeed_target_info\{kind=\"pid\",target=\"$SRV\",comm=\"sfserver\",slot=\"[0-9]+\",gen=\"[0-9]+\",syscalls=\"[a-z0-9_,]+\"\}")"

ODD_LABEL='comm="q\"b\\\\c\\x0ad\\xff"'
ASSERT_EQ "odd comm: escaped as the terminal shows it, then for the format" 1 \
	"$(grep -cE "^satfeed_target_gone\{kind=\"pid\",target=\"$ODD\",$(sed 's/[\\]/\\&/g' <<<"$ODD_LABEL"),slot=\"[0-9]+\",gen=\"[0-9]+\"\} 0$" <<<"$BODY")"

# Prometheus: its own config and storage, loopback, a free port
PPORT=$(sf_free_port)
PROM=http://127.0.0.1:$PPORT
mkdir -p "$SF_TMP/prom-data"
cat >"$SF_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $SF_TMP/satfeed-alerts-fast.yml
scrape_configs:
  - job_name: satfeed
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
ALERTS_YML=$SF_REPO/tools/prometheus/satfeed-alerts.yml
ASSERT_TRUE "promtool check rules: the shipped alert rules" promtool check rules "$ALERTS_YML"
# the same rules with the verdict alerts' for: (1m, 5m, 10m) made 2 s
sed -E 's/^( +for: )(1m|5m|10m)$/\12s/' "$ALERTS_YML" >"$SF_TMP/satfeed-alerts-fast.yml"
ASSERT_EQ "the test's rules differ from the shipped ones in 3 for: lines only" \
	"< for: 1m|< for: 5m|< for: 10m|> for: 2s|> for: 2s|> for: 2s|" \
	"$(diff "$ALERTS_YML" "$SF_TMP/satfeed-alerts-fast.yml" | grep '^[<>]' | sort -s -k1,1 | tr -s ' ' | tr '\n' '|')"
NRULES=$(grep -c '^ *- alert:' "$ALERTS_YML")
ASSERT_TRUE "promtool check config" promtool check config "$SF_TMP/prometheus.yml"
sf_bg prometheus --config.file="$SF_TMP/prometheus.yml" \
	--storage.tsdb.path="$SF_TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn \
	>"$SF_TMP/prometheus.log" 2>&1
PROM_PID=$BG_PID
ready=no
for _ in $(seq 1 300); do
	if [ "$(chk fetch "$PROM/-/ready" 2>/dev/null | head -1)" = 200 ]; then
		ready=yes
		break
	fi
	kill -0 "$PROM_PID" 2>/dev/null || break
	sleep 0.1
done
if [ $ready != yes ]; then
	sf_fail "prometheus ready" "$(tail -20 "$SF_TMP/prometheus.log")"
	sf_finish
fi
sf_pass "prometheus ready on $PROM"
# its scrape loop starts when target discovery first reports (up to ~5 s)
scraped=no
for _ in $(seq 1 150); do
	if [ -n "$(chk query "$PROM" 'up{job="satfeed"}' 2>/dev/null)" ]; then
		scraped=yes
		break
	fi
	sleep 0.1
done
ASSERT_EQ "prometheus scraped the exporter" yes "$scraped"

# the exporter's CPU time (ns on a CPU, /proc/PID/schedstat) and memory
proc_cpu() { awk '{ print $1 }' "/proc/$1/schedstat"; }
proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
CPU0=$(proc_cpu "$EXP")
T0=$(date +%s.%N)

sf_log "sfload 2000 req/s for 10 s while Prometheus scrapes"
# show --json every 0.5 s meanwhile: a stream keeps its last 4 windows
# only, and the scrapes' windows are compared with the ones shown
SHOWS=$SF_TMP/show-windows.jsonl
: >"$SHOWS"
( while :; do "$CTL" show --json --pid "$SRV" >>"$SHOWS"; sleep 0.5; done ) \
	>/dev/null 2>&1 &
SHOWP=$!
ASSERT_OK "sfload 2000 req/s for 10 s" "$SFLOAD" --rate 2000 --duration 10 --json --no-progress "127.0.0.1:$SPORT"
kill "$SHOWP"
wait "$SHOWP" 2>/dev/null
ASSERT_OK "show --json right after the load" "$CTL" show --json --pid "$SRV"
echo "$OUT" >>"$SHOWS"
CPU1=$(proc_cpu "$EXP")
T1=$(date +%s.%N)
RSS=$(proc_kb "$EXP" VmRSS)
HWM=$(proc_kb "$EXP" VmHWM)
sleep 2.5	# the last scrapes of the run are stored

ASSERT_EQ "prometheus: the exporter's target is up" 1 \
	"$(chk query "$PROM" 'up{job="satfeed"}' | awk '{ print $NF }')"
NSCRAPES=$(chk query "$PROM" 'count_over_time(satfeed_up[15s])' | awk '{ print $NF }')
ASSERT_EQ "prometheus: >= 10 scrapes in 15 s" yes "$([ "${NSCRAPES:-0}" -ge 10 ] && echo yes || echo "no ($NSCRAPES)")"
ASSERT_EQ "prometheus: the odd comm stored as the terminal shows it" 'q"b\\c\x0ad\xff' \
	"$(chk label "$PROM" "satfeed_target_info{target=\"$ODD\"}" comm)"
ASSERT_EQ "prometheus: 64 targets stored" 64 \
	"$(chk query "$PROM" 'satfeed_targets' | awk '{ print $NF }')"
sf_run chk windows "$PROM" "$SRV" "$SHOWS" 20
if [ "$RC" = 0 ]; then
	sf_pass "scraped windows equal show --json at the same sequence: $(tr '\n' ' ' <<<"$OUT")"
else
	sf_fail "scraped windows equal show --json at the same sequence" "$OUT" "$ERR"
fi
for s in send recv poll response service; do
	n=$(sed -n "s/^$s scrapes [0-9]* windows \([0-9]*\)$/\1/p" <<<"$OUT")
	ASSERT_EQ "$s: >= 4 different windows compared" yes "$([ "${n:-0}" -ge 4 ] && echo yes || echo "no (${n:-0})")"
done

# counters once the load is over (sfserver then sits in epoll_wait)
sleep 1.5
ASSERT_OK "show --json after the load" "$CTL" show --json --pid "$SRV"
echo "$OUT" >"$SF_TMP/show-counters.json"
sleep 2.5
sf_run chk counters "$PROM" "$SRV" "$SF_TMP/show-counters.json"
if [ "$RC" = 0 ]; then
	sf_pass "scraped counters equal show --json: $OUT"
else
	sf_fail "scraped counters equal show --json" "$OUT" "$ERR"
fi
LAST=$(chk query "$PROM" "satfeed_last_event_timestamp_seconds{target=\"$SRV\",stream=\"send\"}" | awk '{ print $NF }')
ASSERT_EQ "last event: within 10 s before now" yes \
	"$(chk age "$LAST" 10)"

# the exposition itself
scrape "$URL"
ASSERT_EQ "text format: Content-Type" "text/plain; version=0.0.4; charset=utf-8" "$CTYPE"
printf '%s\n' "$BODY" >"$SF_TMP/metrics.txt"
ASSERT_TRUE "promtool check metrics accepts the exposition" sh -c "promtool check metrics <'$SF_TMP/metrics.txt'"
ASSERT_EQ "promtool: no lint remarks" "" "$(promtool check metrics <"$SF_TMP/metrics.txt" 2>&1)"
sf_run chk unique "$SF_TMP/metrics.txt"
ASSERT_EQ "every series once: $OUT" 0 "$RC"
ASSERT_EQ "every family has HELP and TYPE" \
	"$(grep -c '^# HELP ' "$SF_TMP/metrics.txt")" "$(grep -c '^# TYPE ' "$SF_TMP/metrics.txt")"
ASSERT_NOMATCH "every metric is satfeed_" '^[a-z_]+' "$(grep -v '^#' "$SF_TMP/metrics.txt" | grep -v '^satfeed_')"
PROM_ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
scrape "$URL" "$PROM_ACCEPT"
ASSERT_EQ "OpenMetrics for Prometheus' Accept" "application/openmetrics-text; version=1.0.0; charset=utf-8" "$CTYPE"
ASSERT_EQ "OpenMetrics: ends with # EOF" "# EOF" "$(tail -1 <<<"$BODY")"
ASSERT_MATCH "OpenMetrics: counter families without _total" '# TYPE satfeed_calls counter' "$BODY"
ASSERT_MATCH "OpenMetrics: info type" '# TYPE satfeed_engine info' "$BODY"
scrape "$URL" 'application/openmetrics-text;q=0,text/plain;q=1'
ASSERT_EQ "OpenMetrics at q=0 is not chosen" "text/plain; version=0.0.4; charset=utf-8" "$CTYPE"
# Prometheus asks with that Accept header; its target health says it parsed
ASSERT_EQ "prometheus: the $NRULES alert rules evaluate without an error" \
	"$(printf 'ok%.0s ' $(seq "$NRULES") | sed 's/ $//')" "$(chk rules "$PROM")"
ASSERT_EQ "prometheus scraped (OpenMetrics) without an error" '"up" ""' \
	"$(chk scrape "$PROM")"

######################################################################
sf_log "--- GET only; slow clients ---"
for m in POST PUT DELETE HEAD PATCH; do
	r=$(chk fetch "$URL/metrics" "$m" 2>&1 | head -1)
	ASSERT_EQ "$m /metrics: 405" 405 "$r"
done
ASSERT_EQ "GET /nothing: 404" 404 "$(chk fetch "$URL/nothing" | head -1)"
ASSERT_EQ "GET /: 200" 200 "$(chk fetch "$URL/" | head -1)"
ASSERT_EQ "the refused requests changed nothing: 64 targets" 64 "$(sf_json_get "$("$CTL" targets --json)" 'len(j["targets"])')"
sf_run chk slow "$URL" 12 6 4
ASSERT_MATCH "22 idle, half-sent and unread connections: a scrape still answers at once" '^status 200 ms ([0-9]|[0-9][0-9]|[0-4][0-9][0-9])\.' "$OUT"
sf_log "with 22 slow clients: $OUT"
ASSERT_EQ "the exporter is still running" yes "$(kill -0 "$EXP" 2>/dev/null && echo yes || echo no)"

######################################################################
sf_log "--- kernel.bpf_stats_enabled ---"
scrape "$URL"
if [ "$(sf_bpf_stats)" = 0 ]; then
	ASSERT_EQ "stats off: no run time" "" "$(grep '^satfeed_program_run' <<<"$BODY")"
fi
# one series per program the engine pinned, whatever the attach mode
ASSERT_EQ "recursion misses per program" "$(ls "$SF_PIN_ROOT/progs" | wc -l)" \
	"$(grep -c '^satfeed_program_recursion_misses_total{program="sf_' <<<"$BODY")"
ASSERT_TRUE "sysctl kernel.bpf_stats_enabled=1" sysctl -q -w kernel.bpf_stats_enabled=1
ASSERT_OK "sfload 2000 req/s for 1 s" "$SFLOAD" --rate 2000 --duration 1 --json --no-progress "127.0.0.1:$SPORT"
scrape "$URL"
ASSERT_EQ "stats on: satfeed_bpf_stats_enabled 1" 1 "$(value satfeed_bpf_stats_enabled)"
RUNS=$(value 'satfeed_program_runs_total\{program="sf_sys_enter"\}')
ASSERT_EQ "stats on: sf_sys_enter ran (runs > 0)" yes "$([ "${RUNS:-0}" -gt 0 ] && echo yes || echo "no ($RUNS)")"
ASSERT_MATCH "stats on: run time in seconds" '^satfeed_program_run_seconds_total\{program="sf_sys_enter"\} 0\.[0-9]{9}$' "$BODY"
sf_bpf_stats_restore

######################################################################
sf_log "--- textfile for node_exporter ---"
TF=$SF_TMP/textfile
mkdir -p "$TF"
if start_exporter textfile --textfile "$TF" --interval 0.5; then
	sf_pass "export --textfile: $(head -1 "$EXP_OUT")"
else
	sf_fail "export --textfile" "$(cat "$EXP_ERR")"
fi
TFP=$EXP_PID
ASSERT_EQ "satfeed.prom written at start" yes "$([ -s "$TF/satfeed.prom" ] && echo yes || echo no)"
ASSERT_TRUE "promtool accepts satfeed.prom" sh -c "promtool check metrics <'$TF/satfeed.prom'"
M1=$(stat -c %y "$TF/satfeed.prom")
# read it over and over while it is rewritten: every read is a whole file,
# and no series goes away (ABI 4: the age timer closes windows of the idle
# targets, so a figure can appear between two rewrites: textfile_reads.py)
sf_run python3 "$SF_REPO/tests/e2e/textfile_reads.py" "$TF/satfeed.prom"
ASSERT_MATCH "read while rewritten: never torn, no series dropped" '^[0-9]+ reads, [0-9]+ line count\(s\), no series dropped$' "$OUT$ERR"
ASSERT_NE "rewritten every --interval" "$M1" "$(stat -c %y "$TF/satfeed.prom")"
ASSERT_EQ "no temporary file left beside it" "satfeed.prom" "$(ls -A "$TF")"
ASSERT_EQ "world-readable" 644 "$(stat -c %a "$TF/satfeed.prom")"
NPORT=$(sf_free_port)
sf_bg "$NODE_EXPORTER" --web.listen-address="127.0.0.1:$NPORT" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TF" >"$SF_TMP/node_exporter.log" 2>&1
NE=$BG_PID
if sf_wait_port "$NPORT"; then
	scrape "http://127.0.0.1:$NPORT"
	ASSERT_EQ "node_exporter: satfeed_up 1 from the textfile" 1 "$(value satfeed_up)"
	ASSERT_EQ "node_exporter: the server's send calls" \
		"$(sf_json_get "$("$CTL" show --json --pid "$SRV")" 'j["targets"][0]["send"]["calls"]')" \
		"$(value "satfeed_calls_total\{comm=\"sfserver\",gen=\"[0-9]+\",kind=\"pid\",slot=\"[0-9]+\",stream=\"send\",target=\"$SRV\"\}")"
	ASSERT_EQ "node_exporter: no textfile error" 0 "$(value node_textfile_scrape_error)"
	ASSERT_MATCH "node_exporter: the file's mtime" "node_textfile_mtime_seconds\{file=\"[^\"]*satfeed.prom\"\}" "$BODY"
else
	sf_fail "node_exporter listening" "$(tail -5 "$SF_TMP/node_exporter.log")"
fi

######################################################################
sf_log "--- the engine unloaded and reloaded mid-run; an ABI mismatch ---"
ASSERT_OK "unload mid-run" "$LOADER" unload
scrape "$URL"
ASSERT_EQ "unloaded: satfeed_up 0 at the next scrape" 0 "$(value satfeed_up)"
ASSERT_EQ "unloaded: no window figures served" "" "$(grep -E '^satfeed_(window|calls|targets)' <<<"$BODY")"
sleep 1.2
ASSERT_MATCH "unloaded: the textfile says satfeed_up 0" '^satfeed_up 0$' "$(cat "$TF/satfeed.prom")"
sleep 1.5
ASSERT_EQ "unloaded: prometheus stored satfeed_up 0" 0 "$(chk query "$PROM" 'satfeed_up' | awk '{ print $NF }')"
ASSERT_EQ "unloaded: prometheus has no current windows" "" "$(chk query "$PROM" 'satfeed_windows_total')"
ASSERT_EQ "unloaded: the SatfeedEngineDown alert is pending" pending \
	"$(chk query "$PROM" 'ALERTS{alertname="SatfeedEngineDown"}' | sed -n 's/.*"alertstate": "\([a-z]*\)".*/\1/p')"
ASSERT_MATCH "unloaded: one clear line in the log" "satfeed is not loaded" "$(cat "$EXP_STDERR")"
ASSERT_EQ "unloaded: both exporters still run" "yes yes" \
	"$(kill -0 "$EXP" 2>/dev/null && echo yes || echo no) $(kill -0 "$TFP" 2>/dev/null && echo yes || echo no)"
ASSERT_OK "load again" "$LOADER" load
ASSERT_OK "watch the server again" "$CTL" add --pid "$SRV"
ASSERT_OK "sfload 2000 req/s for 1.5 s" "$SFLOAD" --rate 2000 --duration 1.5 --json --no-progress "127.0.0.1:$SPORT"
# the age tick closes the load's last, partial window up to one max-age
# (1 s) and one tick (0.5 s) after it: wait that out, so that the scrape
# and show --json below read the same windows (a run under load scraped
# seq 3, then showed 4)
sleep 2
scrape "$URL"
ASSERT_EQ "reloaded: satfeed_up 1" 1 "$(value satfeed_up)"
ASSERT_EQ "reloaded: the new engine's one target" 1 "$(value satfeed_targets)"
ASSERT_EQ "reloaded: the new engine's windows" \
	"$(sf_json_get "$("$CTL" show --json --pid "$SRV")" 'j["targets"][0]["send"]["seq"]')" \
	"$(value "satfeed_windows_total\{kind=\"pid\",target=\"$SRV\",comm=\"sfserver\",slot=\"[0-9]+\",gen=\"[0-9]+\",stream=\"send\"\}")"

if sf_abi_break; then
	scrape "$URL"
	ASSERT_EQ "ABI mismatch: satfeed_up 0" 0 "$(value satfeed_up)"
	ASSERT_MATCH "ABI mismatch: said so" "ABI mismatch.*ABI 99" "$(cat "$EXP_STDERR")"
	ASSERT_TRUE "restore sf_info" sf_abi_restore
	scrape "$URL"
	ASSERT_EQ "ABI restored: satfeed_up 1" 1 "$(value satfeed_up)"
else
	sf_fail "ABI mismatch: bpftool map update of sf_info"
fi

# SIGTERM: the textfile goes with its exporter (no stale figures)
kill "$TFP"
for _ in $(seq 1 30); do kill -0 "$TFP" 2>/dev/null || break; sleep 0.1; done
ASSERT_EQ "SIGTERM: the textfile exporter exits" no "$(kill -0 "$TFP" 2>/dev/null && echo yes || echo no)"
wait "$TFP"
ASSERT_EQ "SIGTERM: exit status 0" 0 "$?"
ASSERT_EQ "SIGTERM: satfeed.prom removed" "" "$(ls -A "$TF")"

# the verdict, the same-path cgroup, the alerts, the PromQL examples
. "$SF_REPO/tests/e2e/export_verdict.sh"

######################################################################
sf_log "--- the systemd units, the exporter with CAP_BPF only ---"
INST=$SF_TMP/inst
ASSERT_OK "make install PREFIX=$INST/usr/local" make --no-print-directory install PREFIX="$INST/usr/local"
ASSERT_OK "make install DESTDIR=$INST/d PREFIX=/usr" make --no-print-directory install DESTDIR="$INST/d" PREFIX=/usr
ASSERT_EQ "DESTDIR: binaries and units" \
	"$INST/d/usr/lib/systemd/system/satfeed-exporter.service $INST/d/usr/lib/systemd/system/satfeed-loader.service $INST/d/usr/sbin/satfeed-loader $INST/d/usr/sbin/satfeedctl" \
	"$(find "$INST/d" -type f | sort | tr '\n' ' ' | sed 's/ $//')"
ASSERT_MATCH "DESTDIR: units run the binaries from PREFIX" '^ExecStart=/usr/sbin/satfeedctl \$SATFEED_CTL_ARGS export' \
	"$(cat "$INST/d/usr/lib/systemd/system/satfeed-exporter.service")"
ASSERT_MATCH "DESTDIR: loader unit loads and unloads" 'ExecStart=/usr/sbin/satfeed-loader \$SATFEED_LOADER_ARGS load.*ExecStop=/usr/sbin/satfeed-loader \$SATFEED_LOADER_ARGS unload' \
	"$(tr '\n' ' ' <"$INST/d/usr/lib/systemd/system/satfeed-loader.service")"
if command -v systemd-analyze >/dev/null; then
	ASSERT_OK "systemd-analyze verify the installed units" \
		systemd-analyze verify "$INST"/usr/local/lib/systemd/system/satfeed-{loader,exporter}.service
else
	sf_skip "systemd-analyze verify" "no systemd-analyze"
fi
ASSERT_EQ "the exporter unit keeps CAP_BPF only" "CapabilityBoundingSet=CAP_BPF" \
	"$(grep '^CapabilityBoundingSet' "$INST/d/usr/lib/systemd/system/satfeed-exporter.service")"
# what that unit gives it: CAP_BPF alone and a read-only /sys
ASSERT_OK "CAP_BPF only, read-only bpffs: satfeed_up 1" timeout 20 unshare -m sh -c '
	mount -o remount,bind,ro /sys/fs/bpf || exit 90
	setpriv --bounding-set=-all,+bpf --inh-caps=-all -- "$1" export --listen 127.0.0.1:0 >"$2" 2>&1 &
	pid=$!
	for i in $(seq 50); do grep -q serving "$2" && break; sleep 0.1; done
	url=$(sed -n "s#^serving \(http://[^ ]*\)/metrics\$#\1#p" "$2")
	python3 "$3" fetch "$url/metrics" | grep -x "satfeed_up 1"
	rc=$?
	kill $pid; wait $pid
	exit $rc' _ "$CTL" "$SF_TMP/capbpf.out" "$CHECK_PY"

######################################################################
sf_log "--- cost: 64 targets, a scrape every second ---"
CPU_MS=$(awk -v a="$CPU0" -v b="$CPU1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
WALL=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }')
sf_log "$(printf 'exporter over %s s of 1 s scrapes by Prometheus (%s stored over the last 15 s; 64 targets, OpenMetrics, the server at 2000 req/s): CPU %s ms (%s%% of a CPU), RSS %s KiB, peak RSS %s KiB' \
	"$WALL" "$NSCRAPES" "$CPU_MS" "$(awk -v c="$CPU_MS" -v w="$WALL" 'BEGIN { printf "%.3f", c / 10 / w }')" "$RSS" "$HWM")"
sf_log "exposition: $(wc -c <"$SF_TMP/metrics.txt") bytes, $(grep -vc '^#' "$SF_TMP/metrics.txt") samples (text format)"
sf_run chk latency "$URL" 50
sf_log "scrape latency over 50 scrapes, 64 targets: $OUT"
C0=$(proc_cpu "$EXP")
chk latency "$URL" 200 >/dev/null
C1=$(proc_cpu "$EXP")
sf_log "exporter CPU per scrape: $(awk -v a="$C0" -v b="$C1" 'BEGIN { printf "%.3f ms", (b - a) / 1e6 / 200 }') (200 scrapes back to back)"
ASSERT_EQ "the exporter is still running after it all" yes "$(kill -0 "$EXP" 2>/dev/null && echo yes || echo no)"

stop_pid "$NE"
stop_pid "$PROM_PID"
kill "$EXP"
wait "$EXP"
ASSERT_EQ "SIGTERM: the HTTP exporter exits 0" 0 "$?"
ASSERT_EQ "nothing listens on the exporter's port" no \
	"$( (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && echo yes || echo no)"
stop_pid "$SRV"
for p in "${IDLE[@]}"; do kill "$p" 2>/dev/null; done
ASSERT_OK "unload" "$LOADER" unload
######################################################################
# Issue 20, item 4 (helper "safety"): clients that send a whole request and
# never read nor close take no scraper's place: every state of a connection
# is bounded, and a new connection evicts the one that progressed least.
sf_log "--- 20 non-reading clients per second while scraping ---"
if start_exporter hogs --listen 127.0.0.1:0; then
	sf_run python3 "$SF_REPO/tests/e2e/http_hogs.py" "$EXP_URL" 20 6
	sf_log "non-reading clients: $OUT"
	read -r _ HOK HFAIL _ HOGS <<<"$(head -1 <<<"$OUT")"
	ASSERT_EQ "non-reading clients: no scrape failed" 0 "${HFAIL:-missing}"
	ASSERT_TRUE "non-reading clients: the scraper got through (>= 15 of 6 s at 4/s)" \
		test "${HOK:-0}" -ge 15
	ASSERT_TRUE "non-reading clients: more than 16 were connected" test "${HOGS:-0}" -gt 16
	ASSERT_EQ "the exporter survived them" yes \
		"$(kill -0 "$EXP_PID" 2>/dev/null && echo yes || echo no)"
	stop_pid "$EXP_PID"
else
	sf_fail "export for the non-reading clients started" "$(cat "$EXP_ERR")"
fi

sf_finish
