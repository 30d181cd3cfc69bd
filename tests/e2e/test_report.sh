#!/usr/bin/env bash
# tests/e2e/test_report.sh - what the kernel skipped is never hidden: the runs
# of the engine's programs the kernel skipped (recursion misses) as
# `satfeedctl show` warns of them, `show --json` counts them (in total, per
# program, per stream), `satfeedctl watch` marks the windows that closed
# while they grew, and `satfeed-loader check` lists them.
#
# satfeed's own programs never miss on this host (no preemption), so the
# zero case is checked with them, and a count that is not zero comes from
# a test program made to miss (tests/kernel/progs/sf_recursion.bpf.c: one
# miss per `kill -0 $MAGIC`) pinned among the engine's programs.
#
# Run as root from the repository root:  bash tests/e2e/test_report.sh
# Needs: make all build/sf_recursion.bpf.o, bpftool, python3.
. "$(dirname "$0")/../lib.sh"

RECURSION_OBJ=$SF_BUILD/sf_recursion.bpf.o
MAGIC=2063527169	# SF_RECURSION_MAGIC: above any pid_max

sf_begin test_report
if [ ! -r "$RECURSION_OBJ" ]; then
	sf_fail "test_report: $RECURSION_OBJ present" "make $RECURSION_OBJ"
	sf_finish
fi

jget() { sf_json_get "$1" "$2"; }

# the names pinned under ROOT/progs, sorted, as a Python list literal (how
# jget prints a list): ['sf_a', 'sf_b']
pinned_names() {
	local n list=
	while read -r n; do
		list+="${list:+, }'$n'"
	done < <(ls "$SF_PIN_ROOT/progs" | LC_ALL=C sort)
	echo "[$list]"
}

# miss N: N calls the test program turns into N recursion misses
miss() {
	local i
	for ((i = 0; i < $1; i++)); do
		kill -0 "$MAGIC" 2>/dev/null
	done
	return 0
}

# watch_frames FILE N: wait until N whole refreshes are in FILE (each is
# written at once, after its reading)
watch_frames() {
	local i
	for i in $(seq 1 100); do
		[ "$(grep -c '^satfeed ' "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

# marks FILE FRAME STREAM: the SKIPPED marks of STREAM in refresh FRAME
marks() {
	awk -v f="$2" -v s="$3" '/^satfeed / { n++ } n == f && $0 ~ " " s " " {
		k = split($0, part, "["); m = part[k]
		sub(/\].*/, "", m); gsub(/ /, "", m); print m }' "$1"
}

######################################################################
sf_log "--- nothing skipped (satfeed's own programs on this kernel) ---"
ASSERT_TRUE "load --window 2" sf_load --window 2
ASSERT_OK "show" "$CTL" show
ASSERT_EQ "show: no warning when the kernel skipped nothing" "" "$ERR"
ASSERT_OK "show --json" "$CTL" show --json
J=$OUT
ASSERT_EQ "json: kernel_skipped.total is 0" 0 "$(jget "$J" 'j["kernel_skipped"]["total"]')"
ASSERT_EQ "json: kernel_skipped.programs names every pinned program" \
	"$(pinned_names)" "$(jget "$J" 'sorted(j["kernel_skipped"]["programs"])')"
ASSERT_EQ "json: every program at 0" "{0}" \
	"$(jget "$J" 'set(j["kernel_skipped"]["programs"].values())')"
ASSERT_EQ "json: the counts were read at a time" ok \
	"$(jget "$J" '"ok" if 0 < j["kernel_skipped"]["read_begin_ns"] <= j["kernel_skipped"]["read_end_ns"] else j["kernel_skipped"]')"
ASSERT_OK "satfeed-loader check" "$LOADER" check
ASSERT_EQ "check: nothing skipped" "skipped runs:  0 since load (recursion misses)" \
	"$(printf '%s\n' "$OUT" | grep '^skipped runs')"
ASSERT_MATCH "check: per program" "^  sf_sys_exit +0$" "$(printf '%s\n' "$OUT" | grep sf_sys_exit)"
ASSERT_EQ "check: a line per pinned program" "$(ls "$SF_PIN_ROOT/progs" | wc -l)" \
	"$(printf '%s\n' "$OUT" | grep -cE '^  sf_[a-z_]+ +[0-9]+$')"

ASSERT_TRUE "traffic helper starts" sf_traffic_start
T=$TRAFFIC_PID
ASSERT_OK "add the traffic helper" "$CTL" add --pid "$T" --send sendto --recv recvfrom
# 5 sends: 4 gaps, 2 windows of 2
ASSERT_TRUE "traffic: sendto 5" sf_traffic sendto 5
J=$("$CTL" show --json)
ASSERT_EQ "json: 2 send windows, nothing skipped in any stream" "2 0 0 0" \
	"$(jget "$J" '"%d %d %d %d" % ((j["targets"][0]["send"]["seq"],) + tuple(j["targets"][0][s]["kernel_skipped"] for s in ("send", "recv", "poll")))')"
ASSERT_OK "watch --count 1" "$CTL" watch --count 1 --interval 0.1
ASSERT_NOMATCH "watch: no warning, no SKIPPED column" "warning|SKIPPED" "$OUT"

######################################################################
sf_log "--- a program the kernel skips, pinned among the engine's ---"
ASSERT_OK "test program loads and attaches (bpftool autoattach)" \
	bpftool prog loadall "$RECURSION_OBJ" "$SF_PIN_ROOT/links" autoattach
ID=$(bpftool link show pinned "$SF_PIN_ROOT/links/sf_recursion" -j |
	sf_json_fields prog_id)
ASSERT_OK "pin it as ROOT/progs/sf_recursion" \
	bpftool prog pin id "$ID" "$SF_PIN_ROOT/progs/sf_recursion"
ASSERT_OK "show before any miss" "$CTL" show
ASSERT_EQ "show: still no warning" "" "$ERR"

# watch: a refresh, then 3 misses and 4 sends (windows 3 and 4), a
# refresh, then 4 sends (windows 5 and 6) and nothing skipped, a refresh
W=$SF_TMP/watch.out
"$CTL" watch --interval 1 --count 3 >"$W" 2>&1 &
WP=$!
sf_track "$WP"
ASSERT_TRUE "watch: refresh 1" watch_frames "$W" 1
miss 3
ASSERT_TRUE "traffic: sendto 4 while runs are skipped" sf_traffic sendto 4
ASSERT_TRUE "watch: refresh 2" watch_frames "$W" 2
ASSERT_TRUE "traffic: sendto 4, nothing skipped" sf_traffic sendto 4
ASSERT_TRUE "watch: refresh 3" watch_frames "$W" 3
wait "$WP"
ASSERT_EQ "watch exits 0" 0 "$?"
WOUT=$(cat "$W")
ASSERT_EQ "watch refresh 1: no warning yet" 0 \
	"$(awk '/^satfeed / { n++ } n == 1' "$W" | grep -c warning)"
ASSERT_MATCH "watch refresh 2: the warning line" \
	"^warning: the kernel skipped 3 runs of the engine's programs since load \(sf_recursion 3\): events may be missing from the windows" \
	"$(awk '/^satfeed / { n++ } n == 2' "$W" | grep warning)"
ASSERT_MATCH "watch: SKIPPED column once runs were skipped" \
	"TREND +SCALE +SKIPPED" "$WOUT"
# windows 1-2 closed before refresh 1 and nothing was skipped by then: '-';
# 3-4 closed while the count grew: '!'; 5 opened with the gap from
# window 4's last send, before refresh 2: '!'; 6 opened and closed between
# refreshes 2 and 3 that saw the same count: '-'
ASSERT_EQ "watch refresh 2: send windows 1-4 marked --!!" "--!!" "$(marks "$W" 2 send)"
# (refresh 3 draws windows 3-6: a stream keeps its last 4)
ASSERT_EQ "watch refresh 3: send windows 3-6 marked !!!-" "!!!-" "$(marks "$W" 3 send)"
ASSERT_EQ "watch refresh 3: recv windows 3-6 marked !!!-" "!!!-" "$(marks "$W" 3 recv)"

ASSERT_OK "show after 3 misses" "$CTL" show
ASSERT_EQ "show: the warning is one line on stderr" 1 "$(printf '%s\n' "$ERR" | wc -l)"
ASSERT_MATCH "show: the warning says what was skipped and how to check" \
	"^satfeedctl: warning: the kernel skipped 3 runs of the engine's programs since load \(sf_recursion 3\): events may be missing from the windows \(recursion misses: satfeed-loader check, or bpftool prog show pinned $SF_PIN_ROOT/progs/NAME\)$" \
	"$ERR"
ASSERT_MATCH "show: the table is unchanged on stdout" "pid $T python3 " "$OUT"
miss 2
ASSERT_OK "show --json after 5 misses" "$CTL" show --json
J=$OUT
ASSERT_EQ "json: total 5, sf_recursion 5, the engine's own 0" "5 5 {0}" \
	"$(jget "$J" '"%d %d %s" % (j["kernel_skipped"]["total"], j["kernel_skipped"]["programs"]["sf_recursion"], set(v for k, v in j["kernel_skipped"]["programs"].items() if k != "sf_recursion"))')"
ASSERT_EQ "json: names every pinned program" \
	"$(pinned_names)" "$(jget "$J" 'sorted(j["kernel_skipped"]["programs"])')"
# a program of no known stream counts for every stream
ASSERT_EQ "json: per stream, 5 each" "5 5 5" \
	"$(jget "$J" '"%d %d %d" % tuple(j["targets"][0][s]["kernel_skipped"] for s in ("send", "recv", "poll"))')"
ASSERT_EQ "json: the kernel's own count (bpftool) agrees" 5 \
	"$(bpftool prog show pinned "$SF_PIN_ROOT/progs/sf_recursion" -j | sf_json_fields recursion_misses=0)"
ASSERT_OK "satfeed-loader check" "$LOADER" check
ASSERT_EQ "check: the total and what it means" \
	"skipped runs:  5 since load (recursion misses): events may be missing from the windows" \
	"$(printf '%s\n' "$OUT" | grep '^skipped runs')"
ASSERT_MATCH "check: the program that missed" "^  sf_recursion +5$" \
	"$(printf '%s\n' "$OUT" | grep sf_recursion)"
ASSERT_MATCH "check: the engine's programs still 0" "^  sf_sys_enter +0$" \
	"$(printf '%s\n' "$OUT" | grep sf_sys_enter)"
ASSERT_RC "check as nobody: no counts (they need root)" 4 \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LOADER" check
ASSERT_NOMATCH "check as nobody: no skipped-runs line" "skipped runs" "$OUT"

sf_traffic_stop
# unload removes satfeed's own pins only (sf_root_unpin.c): the test takes its
# planted program away itself
ASSERT_OK "unpin the test program" \
	rm "$SF_PIN_ROOT/progs/sf_recursion" "$SF_PIN_ROOT/links/sf_recursion" \
	"$SF_PIN_ROOT/links/sf_recursion_trigger"
ASSERT_OK "unload" "$LOADER" unload
ASSERT_NO_PROGS "after unload"
sf_finish
