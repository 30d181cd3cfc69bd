#!/usr/bin/env bash
# tests/e2e/test_discover.sh - sendfile and splice as send-family members,
# and `satfeedctl discover` / `add --auto`:
#
#  1. members: a process that makes exactly N sendfile calls to a socket, M
#     into a regular file, K splices from a pipe to the socket and L from the
#     socket into a pipe is counted N + K sends and M + L not_socket, for
#     the families selected with --send sendfile,splice (the JSON
#     `syscalls` field says so).
#  2. bad input: one line, the exit status of --help, /sys/fs/bpf unchanged.
#  3. discover the bundled server in each of its I/O modes under load: the
#     recommended families are the calls that mode makes (sendfile mode,
#     which answers with writev + sendfile, keeps one of the two), the
#     discovery slot is gone afterwards, also after SIGINT; after SIGKILL
#     `check` names the slot left behind, `check --repair` removes it.
#  4. add --auto on the sendfile-mode server: the send stream then gets
#     exactly one sample per response (send calls == sfload's replies).
#  5. a target that makes no traced call is told so; a cgroup target.
#
# Run as root from the repository root:  bash tests/e2e/test_discover.sh
# Needs: make all (build/sfserver, build/sfload), bpftool, python3 >= 3.10
# (os.splice).
. "$(dirname "$0")/../lib.sh"

sf_begin test_discover "$SFSERVER" "$SFLOAD"

jget() { sf_json_get "$1" "$2"; }

# CHECK_ERR NAME STATUS MESSAGE_ERE CMD...: fails with STATUS, one line on
# stderr matching the ERE, /sys/fs/bpf as in $SNAP.
CHECK_ERR() {
	local name=$1 want=$2 msg=$3
	shift 3
	ASSERT_RC "$name" "$want" "$@"
	ASSERT_MSG "$name" "$msg"
	ASSERT_EQ "$name: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
	ASSERT_BPFFS "$name" "$SNAP"
}

# targets_empty NAME: no target left in the table
targets_empty() {
	ASSERT_EQ "$1: no target left" '{"targets":[]}' "$("$CTL" targets --json)"
}

######################################################################
sf_log "--- bad input, nothing loaded ---"
SNAP=$SF_TMP/snap.unloaded
sf_snapshot "$SNAP"
CHECK_ERR "discover when nothing is loaded" 3 "not loaded" \
	"$CTL" discover --pid $$ --seconds 0.1

ASSERT_OK "load" "$LOADER" load
[ "$RC" = 0 ] || sf_finish
SNAP=$SF_TMP/snap.loaded
sf_snapshot "$SNAP"

sf_log "--- bad input, loaded ---"
CHECK_ERR "discover without a target" 2 "discover needs --pid PID or --cgroup DIR" \
	"$CTL" discover
CHECK_ERR "discover --seconds 0" 2 "--seconds must be 0.1 to 3600" \
	"$CTL" discover --pid $$ --seconds 0
CHECK_ERR "discover --seconds abc" 2 "--seconds must be 0.1 to 3600" \
	"$CTL" discover --pid $$ --seconds abc
CHECK_ERR "discover --seconds -1" 2 "--seconds must be 0.1 to 3600" \
	"$CTL" discover --pid $$ --seconds -1
CHECK_ERR "discover --seconds 3601" 2 "--seconds must be 0.1 to 3600" \
	"$CTL" discover --pid $$ --seconds 3601
CHECK_ERR "discover --seconds ''" 2 "--seconds must be 0.1 to 3600" \
	"$CTL" discover --pid $$ --seconds ''
CHECK_ERR "discover --pid 0" 2 "not a process id" "$CTL" discover --pid 0
CHECK_ERR "discover --send" 2 "--send only applies to add" \
	"$CTL" discover --pid $$ --send sendto
# a pid that does not exist: the highest possible one is never in use here
NOPID=$(($(cat /proc/sys/kernel/pid_max) - 1))
kill -0 "$NOPID" 2>/dev/null && NOPID=4194303
CHECK_ERR "discover of a nonexistent pid" 6 "no process with pid $NOPID" \
	"$CTL" discover --pid "$NOPID" --seconds 0.1
CHECK_ERR "discover --cgroup of no directory" 6 "sf-no-such-dir: No such file or directory" \
	"$CTL" discover --cgroup /sys/fs/cgroup/sf-no-such-dir --seconds 0.1
CHECK_ERR "show --seconds" 2 "--seconds only applies to discover and add --auto" \
	"$CTL" show --seconds 1
CHECK_ERR "add --seconds without --auto" 2 "--seconds only applies to discover and add --auto" \
	"$CTL" add --pid $$ --seconds 1
CHECK_ERR "add --auto --send" 2 "add --auto chooses the families itself" \
	"$CTL" add --auto --pid $$ --send sendto
CHECK_ERR "remove --auto" 2 "--auto only applies to add" \
	"$CTL" remove --pid $$ --auto
CHECK_ERR "add --send sendfile,recvfrom" 2 "'recvfrom' is a recv-family syscall, not send" \
	"$CTL" add --pid $$ --send sendfile,recvfrom
CHECK_ERR "add --recv splice" 2 "'splice' is a send-family syscall, not recv" \
	"$CTL" add --pid $$ --recv splice
CHECK_ERR "add --send sendfile64" 2 "unknown syscall 'sendfile64'" \
	"$CTL" add --pid $$ --send sendfile64
ASSERT_MATCH "--help lists sendfile and splice" \
	"send: sendto,sendmsg,sendmmsg,write,writev,sendfile,splice" \
	"$("$CTL" --help)"
ASSERT_MATCH "--help describes discover" "discover --pid PID" "$("$CTL" --help)"

######################################################################
sf_log "--- sendfile and splice: counted by output fd, exactly ---"
if ! sf_traffic_start; then
	sf_fail "traffic helper started"
	sf_finish
fi
T=$TRAFFIC_PID
ASSERT_OK "add --send sendfile,splice" "$CTL" add --pid "$T" --send sendfile,splice
ASSERT_EQ "targets --json: syscalls" \
	"sendfile,splice,recvfrom,recvmsg,recvmmsg,read,readv,epoll_wait,epoll_pwait,epoll_pwait2,select,pselect6,poll,ppoll,io_uring_recv,io_uring_recvmsg,io_uring_read,io_uring_readv,io_uring_wait" \
	"$(jget "$("$CTL" targets --json)" 'j["targets"][0]["syscalls"]')"
ASSERT_TRUE "traffic: sendfile 300" sf_traffic sendfile 300
ASSERT_TRUE "traffic: sendfile_file 200" sf_traffic sendfile_file 200
ASSERT_TRUE "traffic: splice 400" sf_traffic splice 400
ASSERT_TRUE "traffic: splice_pipe 50" sf_traffic splice_pipe 50
ASSERT_TRUE "traffic: sendto 100 (not selected)" sf_traffic sendto 100
J=$("$CTL" show --json --pid "$T")
ASSERT_EQ "send calls: 300 sendfile + 400 splice to the socket" 700 \
	"$(jget "$J" 'j["targets"][0]["send"]["calls"]')"
ASSERT_EQ "not_socket: 200 sendfile into a file + 50 splice into a pipe" 250 \
	"$(jget "$J" 'j["targets"][0]["send"]["not_socket"]')"
ASSERT_EQ "send errors, eagain, zero_bytes" "0 0 0" \
	"$(jget "$J" '" ".join(str(j["targets"][0]["send"][k]) for k in ("errors", "eagain", "zero_bytes"))')"
ASSERT_OK "remove" "$CTL" remove --pid "$T"

sf_log "--- discover a process making known calls ---"
# the helper idles between commands: a discovery of it alone sees nothing
ASSERT_OK "discover an idle process" "$CTL" discover --pid "$T" --seconds 0.3
ASSERT_MATCH "idle: told no traced call" "no traced call in" "$OUT"
ASSERT_MATCH "idle: says what satfeed cannot see" "It cannot see: 32-bit" "$OUT"
targets_empty "after an idle discovery"
ASSERT_OK "discover --json an idle process" "$CTL" discover --pid "$T" --seconds 0.2 --json
ASSERT_EQ "idle --json: seen false, no add line" "False None" \
	"$(jget "$OUT" 'str(j["seen"]) + " " + str(j["add"])')"
CHECK_ERR "add --auto of an idle process" 6 "made no traced call" \
	"$CTL" add --auto --pid "$T" --seconds 0.2
sf_traffic_stop

######################################################################
sf_log "--- discover the bundled server in each I/O mode ---"

# start_server MODE: sfserver --io MODE, pid in $SRV, port in $PORT
start_server() {
	sf_sfserver "$SF_TMP/server.$1.log" --io "$1" || return 1
	PORT=$SRV_PORT
}

# discover_running: a 30 s discover of $SRV in the background (pid in $DP),
# its slot seen in the table
discover_running() {
	sf_bg "$CTL" discover --pid "$SRV" --seconds 30
	DP=$BG_PID
	for _ in $(seq 1 50); do
		[ "$("$CTL" targets --json)" != '{"targets":[]}' ] && break
		sleep 0.1
	done
	ASSERT_MATCH "discovery slot while it runs" "\"pid\":$SRV" \
		"$("$CTL" targets --json)"
}

# mode: send recv (the expected recommendation; poll is epoll_wait)
declare -A WANT=(
	[sendto]="sendto recvfrom"
	[rw]="write read"
	[msg]="sendmsg recvmsg"
	[splice]="splice recvfrom"
	[sendfile]="writev|sendfile recvfrom"
)
for mode in sendto rw msg splice sendfile; do
	if ! start_server "$mode"; then
		sf_fail "sfserver --io $mode started"
		continue
	fi
	sf_under_load 1500 3 "$PORT" "discover --io $mode" \
		"$CTL" discover --pid "$SRV" --seconds 1.5 --json
	read -r send recv <<<"${WANT[$mode]}"
	ASSERT_MATCH "--io $mode: send recommendation" "^($send)\$" \
		"$(jget "$J" '",".join(j["recommended"]["send"]["syscalls"])')"
	ASSERT_EQ "--io $mode: recv recommendation" "$recv" \
		"$(jget "$J" '",".join(j["recommended"]["recv"]["syscalls"])')"
	ASSERT_EQ "--io $mode: poll recommendation" epoll_wait \
		"$(jget "$J" '",".join(j["recommended"]["poll"]["syscalls"])')"
	ASSERT_MATCH "--io $mode: the add line" \
		"^satfeedctl add --pid $SRV --send ($send) --recv $recv --poll epoll_wait\$" \
		"$(jget "$J" 'j["add"]')"
	if [ "$mode" = sendfile ]; then
		# two calls per response: both seen, each as often as the
		# other but for the response in flight when the period began
		# or ended (one connection: at most one each way)
		ASSERT_EQ "--io sendfile: writev and sendfile calls equal (+-1)" True \
			"$(jget "$J" '(lambda s: abs(s["writev"] - s["sendfile"]) <= 1 and min(s.values()) > 1000)({x["name"]: x["moved"] for x in j["sources"] if x["name"] in ("writev", "sendfile")})')"
		ASSERT_MATCH "--io sendfile: says why one is kept" \
			"2\\.[0-9] per response.*one sample per response" \
			"$(jget "$J" 'j["recommended"]["send"]["why"]')"
	fi
	if [ "$mode" = splice ]; then
		ASSERT_EQ "--io splice: the pipe writes seen as not a socket" True \
			"$(jget "$J" '(lambda s: s["write"]["not_socket"] > 1000 and s["write"]["calls"] == 0)({x["name"]: x for x in j["sources"]})')"
	fi
	targets_empty "after discover --io $mode"
	sf_kill "$SRV"
done
ASSERT_BPFFS "after the discoveries" "$SNAP"

######################################################################
sf_log "--- discover ends on SIGINT and removes its slot ---"
if start_server sendto; then
	discover_running
	kill -INT "$DP"
	wait "$DP"
	ASSERT_EQ "discover interrupted: exit 1" 1 "$?"
	targets_empty "after SIGINT"
	sf_kill "$SRV"
else
	sf_fail "sfserver for the SIGINT case started"
fi

sf_log "--- discover killed with SIGKILL: check names its slot, --repair removes it ---"
if start_server sendto; then
	discover_running
	ASSERT_OK "check while discover runs: a live discovery is no problem" \
		"$CTL" check
	kill -KILL "$DP"
	wait "$DP" 2>/dev/null	# not bash's "Killed" line in the log
	ASSERT_EQ "discover killed by SIGKILL" 137 "$?"
	ASSERT_MATCH "its slot outlives it" "\"pid\":$SRV" \
		"$("$CTL" targets --json)"
	ASSERT_RC "check after the kill" 1 "$CTL" check
	ASSERT_MATCH "check: names the slot and the killed discover" \
		"^slot [0-9]+: pid $SRV is in discovery, but the satfeedctl that ran it \\(pid $DP\\) is gone" \
		"$OUT"
	ASSERT_MATCH "check: one problem, none repaired" \
		"1 problem found, 0 repaired$" "$OUT"
	ASSERT_MATCH "check: the slot is still there" "\"pid\":$SRV" \
		"$("$CTL" targets --json)"
	ASSERT_OK "check --repair" "$CTL" check --repair
	ASSERT_MATCH "check --repair: repaired" \
		"^slot [0-9]+: pid $SRV is in discovery, .*; repaired$" "$OUT"
	ASSERT_MATCH "check --repair: one problem, one repaired" \
		"1 problem found, 1 repaired$" "$OUT"
	targets_empty "after check --repair"
	ASSERT_OK "check after the repair" "$CTL" check
	ASSERT_MATCH "check after the repair: consistent" "consistent$" "$OUT"
	ASSERT_BPFFS "after the repair" "$SNAP"
	ASSERT_OK "a new discover of the same pid" \
		"$CTL" discover --pid "$SRV" --seconds 0.3 --json
	ASSERT_EQ "the new discover reports" "$SRV" \
		"$(jget "$OUT" 'j["target"]["id"]')"
	targets_empty "after the new discover"
	sf_kill "$SRV"
else
	sf_fail "sfserver for the SIGKILL case started"
fi

sf_log "--- discover a cgroup ---"
if sf_cgroup_make sf-discover-$$ && start_server rw; then
	echo "$SRV" >"$CG_DIR/cgroup.procs"
	sf_under_load 1000 2.5 "$PORT" "discover --cgroup" \
		"$CTL" discover --cgroup "$CG_DIR" --seconds 1 --json
	ASSERT_EQ "--cgroup: target kind and recommendation" "cgroup write read epoll_wait" \
		"$(jget "$J" '" ".join([j["target"]["kind"]] + [",".join(j["recommended"][f]["syscalls"]) for f in ("send", "recv", "poll")])')"
	ASSERT_MATCH "--cgroup: the add line names the directory" \
		"add --cgroup $CG_DIR --send write" "$(jget "$J" 'j["add"]')"
	targets_empty "after discover --cgroup"
	sf_kill "$SRV"
else
	sf_fail "cgroup and server for discover --cgroup"
fi

sf_log "--- a target already watched cannot be discovered ---"
if start_server sendto; then
	ASSERT_OK "add" "$CTL" add --pid "$SRV"
	CHECK_ERR "discover of a watched pid" 8 "already watched" \
		"$CTL" discover --pid "$SRV" --seconds 0.2
	ASSERT_OK "remove" "$CTL" remove --pid "$SRV"
	sf_kill "$SRV"
else
	sf_fail "sfserver for the already-watched case started"
fi

######################################################################
sf_log "--- add --auto: one send sample per response (writev + sendfile) ---"
if start_server sendfile; then
	sf_under_load 1500 3 "$PORT" "add --auto" \
		"$CTL" add --auto --pid "$SRV" --seconds 1.5
	ASSERT_MATCH "add --auto: ran the add line" \
		"running: satfeedctl add --pid $SRV --send (writev|sendfile) --recv recvfrom --poll epoll_wait" "$OUT"
	ASSERT_MATCH "add --auto: watching" "watching pid $SRV in slot" "$OUT"
	sleep 0.3
	J=$("$CTL" show --json --pid "$SRV")
	ASSERT_MATCH "add --auto: one send member" \
		'^(writev|sendfile),recvfrom,epoll_wait$' \
		"$(jget "$J" 'j["targets"][0]["syscalls"]')"
	C0=$(jget "$J" 'j["targets"][0]["send"]["calls"]')
	# a run whose every response is counted: send calls grow by the replies
	ASSERT_OK "sfload, 2 s" "$SFLOAD" --rate 1000 --duration 2 --warmup 0 "127.0.0.1:$PORT"
	REPLIES=$(printf '%s\n' "$OUT" | sed -n 's/.*replies \([0-9]*\).*/\1/p')
	sleep 0.3
	C1=$(jget "$("$CTL" show --json --pid "$SRV")" 'j["targets"][0]["send"]["calls"]')
	ASSERT_EQ "send samples == responses (sfload replies $REPLIES)" "$REPLIES" \
		"$((C1 - C0))"
	ASSERT_TRUE "replies > 1500" test "${REPLIES:-0}" -gt 1500
	ASSERT_OK "remove" "$CTL" remove --pid "$SRV"
	sf_kill "$SRV"
else
	sf_fail "sfserver for the add --auto case started"
fi

######################################################################
sf_log "--- a master whose workers do the I/O (prefork.py, as nginx) ---"
PREFORK=$SF_REPO/tests/e2e/prefork.py
# start_prefork NAME [CGROUP_DIR]: a master and 2 workers ($MASTER, $PPORT),
# in CGROUP_DIR from the start when given
start_prefork() {
	rm -f "$SF_TMP/$1.port"
	if [ -n "${2:-}" ]; then
		sf_bg sh -c 'echo $$ >"$1/cgroup.procs" && exec python3 "$2" serve "$3" 2' \
			_ "$2" "$PREFORK" "$SF_TMP/$1.port"
	else
		sf_bg python3 "$PREFORK" serve "$SF_TMP/$1.port" 2
	fi
	MASTER=$BG_PID
	sf_wait_file "$SF_TMP/$1.port"
	PPORT=$(cat "$SF_TMP/$1.port" 2>/dev/null)
	WORKERS=$(cat /proc/$MASTER/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ' | sed 's/ $//')
	[ -n "$PPORT" ] && [ "$(wc -w <<<"$WORKERS")" = 2 ]
}
# the test's cgroup holds the test too: not the master's own
if start_prefork shared; then
	sf_bg python3 "$PREFORK" load "$PPORT" 4000 4
	LOADP=$BG_PID
	ASSERT_OK "discover --pid MASTER, its cgroup shared" "$CTL" discover --pid "$MASTER" --seconds 1.5 --json
	J=$OUT
	wait "$LOADP"
	ASSERT_EQ "shared cgroup: the workers named" "$WORKERS" \
		"$(jget "$J" '" ".join(str(w["pid"]) for w in sorted(j["workers"], key=lambda w: w["pid"]))')"
	ASSERT_EQ "shared cgroup: watch the workers" workers "$(jget "$J" 'j["watch"]')"
	ASSERT_EQ "shared cgroup: recommended from their calls" "sendto recvfrom epoll_wait" \
		"$(jget "$J" '" ".join(",".join(j["recommended"][f]["syscalls"]) for f in ("send", "recv", "poll"))')"
	ASSERT_MATCH "shared cgroup: the add line names each worker, not the master" \
		"add $(sed 's/[0-9]*/--pid &/g' <<<"$WORKERS") --send sendto" "$(jget "$J" 'j["add"]')"
	targets_empty "after discover of a master"
	ASSERT_OK "discover --pid MASTER (text)" "$CTL" discover --pid "$MASTER" --seconds 0.5
	ASSERT_MATCH "text: the master and its workers listed" \
		"pid $MASTER has 2 child processes.*pid [0-9]+ python3 \(worker\)" "$(tr '\n' ' ' <<<"$OUT")"
	sf_bg python3 "$PREFORK" load "$PPORT" 4000 4
	LOADP=$BG_PID
	ASSERT_OK "add --auto --pid MASTER, its cgroup shared" "$CTL" add --auto --pid "$MASTER" --seconds 1.5
	wait "$LOADP"
	ASSERT_MATCH "add --auto: says the workers do the I/O" "the workers do the I/O" "$OUT"
	ASSERT_EQ "add --auto: the workers watched, the master not" "$WORKERS" \
		"$(jget "$("$CTL" targets --json)" '" ".join(str(t["pid"]) for t in sorted(j["targets"], key=lambda t: t["pid"]))')"
	ASSERT_OK "remove the workers" "$CTL" remove --all
	sf_kill "$MASTER"
else
	sf_fail "prefork.py with 2 workers started"
fi
if ! sf_cgroup_make "satfeed-prefork-$$"; then
	sf_fail "mkdir a cgroup for the master"
elif start_prefork own "$CG_DIR"; then
	sf_bg python3 "$PREFORK" load "$PPORT" 4000 4
	LOADP=$BG_PID
	ASSERT_OK "add --auto --pid MASTER, in a cgroup of its own" "$CTL" add --auto --pid "$MASTER" --seconds 1.5
	wait "$LOADP"
	ASSERT_MATCH "own cgroup: says so" "cgroup $CG_DIR holds pid $MASTER and its descendants only" "$OUT"
	ASSERT_MATCH "own cgroup: ran add --cgroup" "running: satfeedctl add --cgroup $CG_DIR --send sendto --recv recvfrom --poll epoll_wait" "$OUT"
	J=$("$CTL" show --json)
	ASSERT_EQ "own cgroup: one target, the cgroup" "1 $(stat -c %i "$CG_DIR")" \
		"$(jget "$J" '"%d %s" % (len(j["targets"]), j["targets"][0].get("cgroup"))')"
	C0=$(jget "$J" 'j["targets"][0]["send"]["calls"]')
	ASSERT_OK "1000 requests to the workers" python3 "$PREFORK" load "$PPORT" 1000 2
	sleep 0.3
	ASSERT_EQ "own cgroup: every response counted, whichever worker sent it" 1000 \
		"$(($(jget "$("$CTL" show --json)" 'j["targets"][0]["send"]["calls"]') - C0))"
	ASSERT_OK "remove the cgroup" "$CTL" remove --cgroup "$CG_DIR"
	sf_kill "$MASTER"
else
	sf_fail "prefork.py in its own cgroup started"
fi

ASSERT_OK "unload" "$LOADER" unload
sf_finish
