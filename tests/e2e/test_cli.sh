#!/usr/bin/env bash
# tests/e2e/test_cli.sh - satfeed-loader and satfeedctl: every bad input
# (exit status, message, /sys/fs/bpf untouched), load/unload/reload
# cycles, --replace, targets of both kinds, per-target syscall families, a
# watched process that exits, and the live view.
#
# Run as root from the repository root:  bash tests/e2e/test_cli.sh
# Needs: make all (build/satfeed-loader, build/satfeedctl), build/sfcompat32
# (gcc-multilib), bpftool, python3,
# util-linux (unshare, setpriv), a cgroup v2 mount.
. "$(dirname "$0")/../lib.sh"

sf_begin test_cli

# CHECK_ERR NAME STATUS MESSAGE_ERE CMD...: the command fails with STATUS and a
# message matching MESSAGE_ERE, and leaves /sys/fs/bpf as in $SNAP.
CHECK_ERR() {
	local name=$1 want=$2 msg=$3
	shift 3
	ASSERT_RC "$name" "$want" "$@"
	ASSERT_MSG "$name" "$msg"
	ASSERT_BPFFS "$name" "$SNAP"
}

snapshot_now() { SNAP=$SF_TMP/snap.$1; sf_snapshot "$SNAP"; }

ctl_json() { "$CTL" show --json "$@" 2>&1; }

# jget JSON PYEXPR
jget() { sf_json_get "$1" "$2"; }

# ids of the programs pinned under our root (other sf_ programs may exist:
# another engine under another root is none of this test's business here)
pinned_ids() {
	local f
	for f in "$SF_PIN_ROOT"/progs/*; do
		bpftool prog show pinned "$f" -j | sf_json_fields id
	done | sort -n | tr '\n' ' '
}

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

######################################################################
sf_log "--- nothing loaded ---"
snapshot_now unloaded

CHECK_ERR "unload when nothing is loaded" 3 "not loaded" "$LOADER" unload
CHECK_ERR "satfeedctl show when nothing is loaded" 3 "not loaded" "$CTL" show
CHECK_ERR "satfeedctl add when nothing is loaded" 3 "not loaded" "$CTL" add --pid $$

# bad arguments to the loader
CHECK_ERR "loader: unknown command" 2 "unknown command 'frobnicate'" "$LOADER" frobnicate
CHECK_ERR "loader: no command" 2 "command is required" "$LOADER"
CHECK_ERR "loader: --window 1000" 2 "power of two" "$LOADER" --window 1000 load
CHECK_ERR "loader: --window 1" 2 "power of two" "$LOADER" --window 1 load
CHECK_ERR "loader: --window 131072" 2 "power of two" "$LOADER" --window 131072 load
CHECK_ERR "loader: --attach bogus" 2 "unknown attach mode 'bogus'" "$LOADER" --attach bogus load
CHECK_ERR "loader: --understudy sometimes" 2 "auto, on or off, not 'sometimes'" \
	"$LOADER" --understudy sometimes load
CHECK_ERR "loader: relative --bpffs" 2 "absolute path" "$LOADER" --bpffs relative/dir load
CHECK_ERR "loader: two commands" 2 "one command only" "$LOADER" load unload

# BTF
CHECK_ERR "loader --btf /nonexistent" 1 "BTF.*/nonexistent|/nonexistent.*BTF" \
	"$LOADER" --btf /nonexistent load
ASSERT_NO_PROGS "loader --btf /nonexistent"
echo "this is not BTF" >"$SF_TMP/bogus.btf"
CHECK_ERR "loader --btf with a file that is not BTF" 1 "not valid BTF" \
	"$LOADER" --btf "$SF_TMP/bogus.btf" load
CHECK_ERR "kernel without BTF (tmpfs over /sys/kernel/btf)" 1 "BTF" \
	unshare -m bash -c 'mount -t tmpfs none /sys/kernel/btf && exec "$1" load' _ "$LOADER"
ASSERT_MATCH "kernel without BTF: names the missing file" "/sys/kernel/btf/vmlinux" "$ERR"
ASSERT_NO_PROGS "kernel without BTF"

# pin root whose parent is not a bpffs / does not exist
NOFS=/tmp/satfeed-nobpffs-$$
CHECK_ERR "loader --bpffs $NOFS/satfeed (no such parent)" 1 "$NOFS" \
	"$LOADER" --bpffs "$NOFS/satfeed" load
ASSERT_EQ "loader --bpffs $NOFS/satfeed: nothing created" "absent" \
	"$([ -e "$NOFS" ] && echo present || echo absent)"
mkdir -p "$SF_TMP/plaindir"
CHECK_ERR "loader --bpffs on a directory that is not a bpffs" 1 "not a bpffs" \
	"$LOADER" --bpffs "$SF_TMP/plaindir/satfeed" load
ASSERT_EQ "loader --bpffs not a bpffs: nothing created" "" "$(ls -A "$SF_TMP/plaindir")"
ASSERT_NO_PROGS "loader with a bad --bpffs"

# non-root callers
CHECK_ERR "non-root satfeed-loader load" 4 "root" "${NOBODY[@]}" "$LOADER" load
CHECK_ERR "non-root satfeed-loader unload" 4 "root" "${NOBODY[@]}" "$LOADER" unload

# bpffs absent, in a private mount namespace (the host's mount is untouched)
UMOUNT_ALL='while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 99; done'
CHECK_ERR "bpffs absent: satfeedctl show" 3 "bpffs" \
	unshare -m bash -c "$UMOUNT_ALL; exec \"\$1\" show" _ "$CTL"
CHECK_ERR "bpffs absent: satfeed-loader unload" 3 "not loaded" \
	unshare -m bash -c "$UMOUNT_ALL; exec \"\$1\" unload" _ "$LOADER"
# ... and the loader mounts it when it is missing (the issue: "Mount bpffs if
# it is missing"); the namespace's bpffs goes away with the namespace.
ASSERT_OK "bpffs absent: loader mounts it, loads, unloads" \
	unshare -m bash -c "$UMOUNT_ALL; \"\$1\" load && \"\$2\" show && \"\$1\" unload" _ "$LOADER" "$CTL"
ASSERT_MATCH "bpffs absent: load succeeded inside the namespace" "satfeed loaded" "$OUT"
ASSERT_BPFFS "bpffs absent: host bpffs" "$SNAP"
ASSERT_NO_PROGS "bpffs absent: namespace load freed"

######################################################################
sf_log "--- understudies ---"
# check names the preemption model and decides per attach mode
ASSERT_OK "check" "$LOADER" check
ASSERT_MATCH "check: preemption model" "^preemption: +[a-z]+ \(" "$OUT"
ASSERT_MATCH "check: understudy decision for tp_btf" "^  understudies (on|off): " \
	"$(printf '%s\n' "$OUT" | grep -A1 '^tp_btf ' | tail -1)"
# forced on, a load pins the understudies and unload removes them
ASSERT_OK "load --attach tp_btf --understudy on" \
	"$LOADER" --attach tp_btf --understudy on load
ASSERT_MATCH "load says understudies on" "understudies on" "$OUT"
for p in sf_sys_enter_u sf_sys_exit_u; do
	ASSERT_OK "understudy $p pinned" test -e "$SF_PIN_ROOT/progs/$p"
	ASSERT_OK "understudy $p linked" test -e "$SF_PIN_ROOT/links/$p"
done
ASSERT_OK "sf_understudy map pinned" test -e "$SF_PIN_ROOT/sf_understudy"
ASSERT_OK "sf_verdict map pinned" test -e "$SF_PIN_ROOT/sf_verdict"
ASSERT_OK "unload with understudies" "$LOADER" unload
ASSERT_OK "unload removed everything" test ! -e "$SF_PIN_ROOT"
ASSERT_OK "load --attach tp_btf --understudy off" \
	"$LOADER" --attach tp_btf --understudy off load
ASSERT_OK "no understudy pinned when off" \
	test ! -e "$SF_PIN_ROOT/progs/sf_sys_exit_u"
ASSERT_OK "unload" "$LOADER" unload

######################################################################
sf_log "--- load / unload / reload cycles ---"
for i in 1 2 3 4 5; do
	ASSERT_OK "cycle $i: load" "$LOADER" load
	ASSERT_MATCH "cycle $i: load message" "satfeed loaded: attach [a-z_]+, window 2048 samples, understudies (on|off), pinned at $SF_PIN_ROOT" "$OUT"
	ASSERT_OK "cycle $i: satfeedctl show" "$CTL" show
	ASSERT_OK "cycle $i: unload" "$LOADER" unload
	ASSERT_MATCH "cycle $i: unload message" "satfeed unloaded: removed [0-9]+ pins" "$OUT"
	ASSERT_BPFFS "cycle $i: after unload" "$SF_TMP/snap.unloaded"
	ASSERT_NO_PROGS "cycle $i: after unload"
done
ASSERT_OK "load with --window 4096 --attach tp_btf" "$LOADER" --window 4096 --attach tp_btf load
ASSERT_EQ "--window 4096 reaches sf_info" 4096 "$(jget "$(ctl_json)" 'j["window_samples"]')"
ASSERT_OK "unload after --window 4096" "$LOADER" unload
ASSERT_BPFFS "after --window 4096 cycle" "$SF_TMP/snap.unloaded"
ASSERT_NO_PROGS "after --window 4096 cycle"

######################################################################
sf_log "--- loaded ---"
# the longest age bound (T = 4294 ms): the traffic below and the reads of
# its window in progress happen well within T/2, before the age timer
# closes it (the WPS check waits for that on purpose)
ASSERT_OK "load --max-age 4294" "$LOADER" --max-age 4294 load
snapshot_now loaded
ASSERT_NE "load pinned something" "$(cat "$SF_TMP/snap.unloaded")" "$(cat "$SNAP")"
for pin in sf_info sf_config sf_targets sf_streams sf_pid_index sf_cgrp_index progs links; do
	ASSERT_EQ "pinned $pin" yes "$([ -e "$SF_PIN_ROOT/$pin" ] && echo yes || echo no)"
done
PROGS1=$(pinned_ids)
INFO1=$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 -j 2>&1)

# loading twice
CHECK_ERR "loading twice" 8 "already loaded" "$LOADER" load
ASSERT_EQ "loading twice: the first load's programs are intact" "$PROGS1" "$(pinned_ids)"
ASSERT_EQ "loading twice: sf_info unchanged" "$INFO1" \
	"$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 -j 2>&1)"
ASSERT_OK "loading twice: satfeedctl still works" "$CTL" show

# bpffs absent while loaded (namespace only)
CHECK_ERR "bpffs absent while loaded: satfeedctl show" 3 "no bpffs mounted at /sys/fs/bpf" \
	unshare -m bash -c "$UMOUNT_ALL; exec \"\$1\" show" _ "$CTL"
CHECK_ERR "satfeedctl --bpffs on a non-bpffs" 3 "not loaded" "$CTL" --bpffs "$NOFS/satfeed" show

# non-root satfeedctl
CHECK_ERR "non-root satfeedctl show" 4 "needs root \(CAP_BPF and CAP_SYS_ADMIN\)" "${NOBODY[@]}" "$CTL" show
CHECK_ERR "non-root satfeedctl add" 4 "needs root \(CAP_BPF and CAP_SYS_ADMIN\)" "${NOBODY[@]}" "$CTL" add --pid $$
CHECK_ERR "non-root satfeedctl targets" 4 "needs root \(CAP_BPF and CAP_SYS_ADMIN\)" "${NOBODY[@]}" "$CTL" targets

# bad arguments to satfeedctl
CHECK_ERR "satfeedctl: unknown command" 2 "unknown command 'frobnicate'" "$CTL" frobnicate
CHECK_ERR "satfeedctl: no command" 2 "command is required" "$CTL"
CHECK_ERR "satfeedctl: add without --pid" 2 "needs --pid" "$CTL" add
CHECK_ERR "satfeedctl: remove without target" 2 "needs --pid" "$CTL" remove
CHECK_ERR "satfeedctl: --pid abc" 2 "not a process id" "$CTL" add --pid abc
CHECK_ERR "satfeedctl: --pid 0" 2 "not a process id" "$CTL" add --pid 0
CHECK_ERR "satfeedctl: --pid and --cgroup" 2 "give --pid, --cgroup or --slot, not more than one kind" \
	"$CTL" add --pid $$ --cgroup /nonexistent
CHECK_ERR "satfeedctl: --send with a recv syscall" 2 "recvfrom.*recv-family" \
	"$CTL" add --pid $$ --send recvfrom
CHECK_ERR "satfeedctl: --poll with a send syscall" 2 "sendto.*send-family" \
	"$CTL" add --pid $$ --poll sendto
CHECK_ERR "satfeedctl: --send with an unknown syscall" 2 "unknown syscall 'bogus'; the send family is: sendto,sendmsg,sendmmsg,write,writev,sendfile,splice,io_uring_send,io_uring_send_zc,io_uring_sendmsg,io_uring_sendmsg_zc,io_uring_write,io_uring_writev$" \
	"$CTL" add --pid $$ --send bogus
CHECK_ERR "satfeedctl: --send on show" 2 "only applies to add" "$CTL" show --send sendto
CHECK_ERR "satfeedctl: --interval 0" 2 "interval" "$CTL" watch --interval 0
CHECK_ERR "satfeedctl: --count x" 2 "count" "$CTL" watch --count x
CHECK_ERR "satfeedctl: extra argument" 2 "unexpected argument" "$CTL" show extra
ASSERT_EQ "bad arguments added nothing" '{"targets":[]}' "$("$CTL" targets --json)"

# unknown targets
CHECK_ERR "add a nonexistent pid" 6 "no process with pid 999999" "$CTL" add --pid 999999
CHECK_ERR "show a pid that is not watched" 6 "not watched" "$CTL" show --pid $$
CHECK_ERR "remove a pid that is not watched" 6 "not watched" "$CTL" remove --pid $$
CHECK_ERR "add --cgroup /tmp (not cgroup v2)" 2 "not a cgroup v2 directory" "$CTL" add --cgroup /tmp
CHECK_ERR "add --cgroup on a regular file" 2 "not a directory" "$CTL" add --cgroup /etc/hostname
CHECK_ERR "add --cgroup on a missing path" 6 "No such file" "$CTL" add --cgroup /nonexistent/cg
V1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/self/mounts)
if [ -n "$V1" ]; then
	CHECK_ERR "add --cgroup on a cgroup v1 hierarchy ($V1)" 2 "not a cgroup v2 directory" \
		"$CTL" add --cgroup "$V1"
fi

# a thread id that is not a tgid
sf_bg python3 "$SF_REPO/tests/e2e/two_threads.py"
MT=$BG_PID
TID=
for i in $(seq 1 50); do
	for t in /proc/"$MT"/task/*; do
		[ "${t##*/}" != "$MT" ] && [ -e "$t" ] && TID=${t##*/} && break
	done
	[ -n "$TID" ] && break
	sleep 0.1
done
if [ -n "$TID" ]; then
	CHECK_ERR "add a thread id ($TID of $MT)" 2 "$TID is a thread of process $MT" "$CTL" add --pid "$TID"
else
	sf_fail "add a thread id" "no second thread appeared in python3 $MT"
fi
sf_kill "$MT"
ASSERT_EQ "errors added nothing" '{"targets":[]}' "$("$CTL" targets --json)"

# ABI mismatch: rewrite sf_info's abi_version to 99 with bpftool
if sf_abi_break; then
	ASSERT_EQ "sf_info now says ABI 99" 99 \
		"$(bpftool map lookup pinned "$SF_PIN_ROOT/sf_info" key 0 0 0 0 -j | sf_json_fields formatted.value.abi_version)"
	CHECK_ERR "ABI mismatch: show" 5 "ABI mismatch.*ABI 99.*ABI $(sf_abi_version)\b" "$CTL" show
	CHECK_ERR "ABI mismatch: add" 5 "ABI mismatch" "$CTL" add --pid $$
	CHECK_ERR "ABI mismatch: targets --json" 5 "ABI mismatch" "$CTL" targets --json
	ASSERT_EQ "ABI mismatch: nothing on stdout" "" "$OUT"
	ASSERT_TRUE "restore sf_info" sf_abi_restore
	ASSERT_OK "ABI restored: show" "$CTL" show
else
	sf_fail "ABI mismatch: bpftool map update of sf_info"
fi

######################################################################
sf_log "--- a pin of the wrong shape ---"
# Pins are found by name: a map planted under a satfeed pin name must be
# refused before it is read (a lookup copies the map's whole value into the
# tool's struct), with exit 5 and the pin and what differed named.

# plant NAME TYPE KEY VALUE ENTRIES: move satfeed's pin NAME aside to
# NAME_real (a rename within the bpffs, which allows no '.' in names) and pin
# a map of that shape under its name; unplant NAME puts the real one back
plant() {
	mv "$SF_PIN_ROOT/$1" "$SF_PIN_ROOT/$1_real" &&
		bpftool map create "$SF_PIN_ROOT/$1" type "$2" key "$3" \
			value "$4" entries "$5" name "$1"
}
unplant() {
	[ -e "$SF_PIN_ROOT/$1_real" ] &&
		rm -f "$SF_PIN_ROOT/$1" &&
		mv "$SF_PIN_ROOT/$1_real" "$SF_PIN_ROOT/$1"
}
# pin_field NAME FIELD: bytes_key, bytes_value or max_entries of a pin
pin_field() {
	bpftool map show pinned "$SF_PIN_ROOT/$1" -j | sf_json_fields "$2"
}

SNAP_LOADED=$SNAP
INFO_SIZE=$(pin_field sf_info bytes_value)
CONFIG_SIZE=$(pin_field sf_config bytes_value)
TARGET_SIZE=$(pin_field sf_targets bytes_value)
INDEX_SIZE=$(pin_field sf_pid_index bytes_value)
# NAME TYPE KEY VALUE ENTRIES MESSAGE_ERE
while read -r name type key value entries msg; do
	what="planted $name ($type, key $key, value $value, $entries entries)"
	if ! ASSERT_TRUE "$what: planted" plant "$name" "$type" "$key" "$value" "$entries"; then
		unplant "$name"
		continue
	fi
	snapshot_now planted
	CHECK_ERR "$what: show" 5 "$SF_PIN_ROOT/$name.*$msg" "$CTL" show
	ASSERT_EQ "$what: show printed nothing" "" "$OUT"
	CHECK_ERR "$what: add" 5 "$SF_PIN_ROOT/$name.*$msg" "$CTL" add --pid $$
	CHECK_ERR "$what: targets" 5 "$name" "$CTL" targets
	ASSERT_TRUE "$what: restored" unplant "$name"
	ASSERT_EQ "$what: nothing was added" '{"targets":[]}' "$("$CTL" targets --json)"
done <<EOF
sf_info array 4 4096 1 value size 4096, expected $INFO_SIZE
sf_info hash 4 $INFO_SIZE 1 map type hash, expected array
sf_targets array 4 $TARGET_SIZE 8 max_entries 8, expected 64
sf_streams hash 4 64 192 map type hash, expected array
sf_config array 4 $((CONFIG_SIZE * 2)) 1 value size $((CONFIG_SIZE * 2)), expected $CONFIG_SIZE
sf_cgrp_index hash 4 $INDEX_SIZE 64 key size 4, expected 8
sf_pid_index hash 4 $((INDEX_SIZE + 8)) 64 value size $((INDEX_SIZE + 8)), expected $INDEX_SIZE
EOF
ASSERT_OK "every pin restored: show" "$CTL" show
SNAP=$SNAP_LOADED
ASSERT_BPFFS "every pin restored: /sys/fs/bpf as before" "$SNAP"

######################################################################
sf_log "--- a pid target ---"
sf_traffic_start || sf_fail "traffic helper started"
T=$TRAFFIC_PID
ASSERT_OK "add --pid $T" "$CTL" add --pid "$T"
ASSERT_MATCH "add --pid: message" "watching pid $T in slot [0-9]+" "$OUT"
CHECK_ERR "add the same pid again" 8 "already watched" "$CTL" add --pid "$T"
snapshot_now loaded   # adding targets writes maps, never pins
ASSERT_OK "targets" "$CTL" targets
ASSERT_MATCH "targets lists the pid" "pid +$T +python3 +active" "$OUT"
ASSERT_OK "targets --json" "$CTL" targets --json
ASSERT_EQ "targets --json: one target" "1 $T python3 active" \
	"$(jget "$OUT" '"%d %s %s %s" % (len(j["targets"]), j["targets"][0]["pid"], j["targets"][0]["comm"], j["targets"][0]["state"])')"
ASSERT_TRUE "traffic: sendto 2500" sf_traffic sendto 2500
ASSERT_TRUE "traffic: write 100 (on the socket)" sf_traffic write 100
ASSERT_TRUE "traffic: sendmsg 100" sf_traffic sendmsg 100
ASSERT_TRUE "traffic: epoll 300" sf_traffic epoll 300
ASSERT_OK "show --pid --json" "$CTL" show --json --pid "$T"
J=$OUT
# default families: every send/recv member counts on sockets, every wait
ASSERT_EQ "default families: send calls = 2500+100+100" 2700 "$(jget "$J" 'j["targets"][0]["send"]["calls"]')"
ASSERT_EQ "default families: recv calls = 2700" 2700 "$(jget "$J" 'j["targets"][0]["recv"]["calls"]')"
ASSERT_EQ "default families: poll calls >= 300" yes "$(jget "$J" '"yes" if j["targets"][0]["poll"]["calls"] >= 300 else j["targets"][0]["poll"]["calls"]')"
# 2700 events = 2699 gaps = 1 window of 2048 + 651 in progress
ASSERT_EQ "send: 1 window + 651 pending" "1 651 2048" \
	"$(jget "$J" '"%d %d %d" % (j["targets"][0]["send"]["seq"], j["targets"][0]["send"]["pending"], j["targets"][0]["send"]["samples"])')"
ASSERT_EQ "recv: 1 window + 651 pending" "1 651" \
	"$(jget "$J" '"%d %d" % (j["targets"][0]["recv"]["seq"], j["targets"][0]["recv"]["pending"])')"
ASSERT_EQ "send: window fields present and sane" ok \
	"$(jget "$J" '"ok" if (lambda s: s["mean_ns"] > 0 and s["var_ns2"] >= 0 and s["rps"] > 0 and len(s["windows"]) == 1 and s["windows"][0]["seq"] == 1 and s["windows"][0]["sum_ns"] // 2048 == s["mean_ns"])(j["targets"][0]["send"]) else j["targets"][0]["send"]')"
ASSERT_EQ "send: no errors, no zero-byte calls" "0 0" \
	"$(jget "$J" '"%d %d" % (j["targets"][0]["send"]["errors"], j["targets"][0]["send"]["zero_bytes"])')"
ASSERT_OK "show --raw (a line per stream)" "$CTL" show --raw --pid "$T"
ASSERT_MATCH "show --raw: send row" "pid $T python3 +send +1 +651 " "$OUT"
ASSERT_MATCH "show --raw: header" "TARGET +STREAM +WIN +PEND +MEAN\(us\) +SD\(us\) +CV2 +RATE/s +WAIT% +IDLE% +LAST +WINDOW" "$OUT"
ASSERT_MATCH "show --raw: the send window is closed and recent" " send .* closed$" \
	"$(printf '%s\n' "$OUT" | grep ' send ')"
# a unix socketpair is no client connection (not accepted, not a datagram
# socket): 2700 sends, no response, no service time
ASSERT_EQ "show --raw: five stream rows, response and service last" \
	"send recv poll response service" \
	"$(printf '%s\n' "$OUT" | sed 1d | cut -c30-37 | xargs)"
ASSERT_MATCH "show --raw: no response on a socketpair" \
	"^ +response +0 +0 +- +- +- +- +- +- +never +none$" "$OUT"
ASSERT_MATCH "show --raw: no service time either" \
	"^ +service +0 +0 +- +- +- +- +- +- +never +none$" "$OUT"
ASSERT_EQ "show --json: response and service streams empty, no figures" \
	"0 0 None None None" \
	"$(jget "$J" '"%d %d %s %s %s" % (j["targets"][0]["response"]["calls"], j["targets"][0]["service"]["calls"], j["targets"][0]["reading"]["resp_rate"], j["targets"][0]["reading"]["service_mean"], j["targets"][0]["reading"]["service_p99"])')"
ASSERT_OK "show (a line per target)" "$CTL" show --pid "$T"
ASSERT_MATCH "show: header, the state first, then the waits per send; RPS responses, SEND/s sends" "^TARGET +STATE +WPS +IDLE% +CV2.S +CV2.R +RPS +SEND/s +NEXT$" "$OUT"
ASSERT_EQ "show: one line per target" 2 "$(printf '%s\n' "$OUT" | wc -l)"
# the only send window closed before the first wait: nothing to judge yet
ASSERT_MATCH "show: no waits per send before a window closes after a wait" \
	"^pid $T python3 +unknown +- " "$OUT"
ASSERT_EQ "show: every line fits 80 columns" "" \
	"$(printf '%s\n' "$OUT" | awk 'length($0) > 80')"

# watch
ASSERT_OK "watch --count 2 --interval 0.1" "$CTL" watch --count 2 --interval 0.1
ASSERT_EQ "watch: two refreshes" 2 "$(printf '%s\n' "$OUT" | grep -c '^satfeed [a-z_]*, window 2048 samples')"
ASSERT_EQ "watch: three stream lines per refresh" 6 "$(printf '%s\n' "$OUT" | grep -cE ' (send|recv|poll) +[0-9]+ ')"
ASSERT_MATCH "watch: the target's line" "^pid $T python3  state " "$OUT"
ASSERT_MATCH "watch: send: dispersion, SD, rate, trend and its scale" \
	"^  send +1 cv2 [0-9]+\.[0-9]{3} +[0-9.]+(ns|us|ms|s) +[0-9.]+k?/s \[[.:=+*#%@-]+ *\] +[0-9.]+k?\.\.[0-9.]+k?/s" "$OUT"
ASSERT_MATCH "watch: poll: the idle share" "^  poll +[0-9]+ idle [0-9]+\.[0-9]%" "$OUT"
ASSERT_EQ "watch: every line fits 80 columns" "" \
	"$(printf '%s\n' "$OUT" | awk 'length($0) > 80')"

# WPS: the verdict's waits per 1000 sends, once a send window closed after
# waits (the 300 epoll above, which ended while the 651 were pending: the
# check above).  ABI 4: the age timer closes those 651 as an aged window
# (T/2 after its first sample, samples 651) and T after the last send the
# target is quiet: wps_permille stays 1000 * waits / 651 (its own samples),
# the average restarts at 1000 and the verdict is ok with why quiet.  Wait
# for quiet (at most 1.5 T) so that nothing moves while it is read.
MAX_AGE_MS=$(( $(jget "$(ctl_json)" 'j["max_age_ns"]') / 1000000 ))
quiet_json() {
	local i
	for i in $(seq 1 $((MAX_AGE_MS * 3 / 50 + 20))); do
		J=$("$CTL" show --json --pid "$T") || return 1
		[ "$(jget "$J" 'j["targets"][0]["saturation"]["why"]')" = 32 ] &&
			return 0
		sleep 0.05
	done
	return 1
}
ASSERT_TRUE "quiet within 1.5 T (T = $MAX_AGE_MS ms) after the last send" quiet_json
ASSERT_EQ "send: the 651 closed as an aged window (flags 1), then a quiet one (flags 2, 0 samples)" \
	"2 651 1 3 0 2" \
	"$(jget "$J" '" ".join("%d %d %d" % (w["seq"], w["samples"], w["flags"]) for w in j["targets"][0]["send"]["windows"] if w["seq"] >= 2)')"
ASSERT_EQ "show --json: wps is 1000 * waits / 651 (the aged window's own samples)" \
	"$(jget "$J" '1000 * j["targets"][0]["poll"]["calls"] // 651')" \
	"$(jget "$J" 'j["targets"][0]["saturation"]["wps_permille"]')"
ASSERT_EQ "show --json: quiet: wps_avg restarts at 1000, state ok" "1000 ok" \
	"$(jget "$J" '"%d %s" % (j["targets"][0]["saturation"]["wps_avg_permille"], j["targets"][0]["saturation"]["state"])')"
ASSERT_OK "show when quiet" "$CTL" show --pid "$T"
ROW=$(printf '%s\n' "$OUT" | grep "^pid $T ")
ASSERT_MATCH "show: WPS is the verdict's wps_avg, after its state" \
	"^pid $T python3 +$(jget "$J" '"%s +%d" % (j["targets"][0]["saturation"]["state"], j["targets"][0]["saturation"]["wps_avg_permille"])') " \
	"$ROW"
ASSERT_EQ "show: quiet, the state is ok with the reason quiet" "ok quiet" \
	"$(jget "$J" '"%s %s" % (j["targets"][0]["saturation"]["state"], ",".join(j["targets"][0]["saturation"]["reasons"]))')"

ASSERT_OK "remove --pid" "$CTL" remove --pid "$T"
ASSERT_MATCH "remove: message" "removed 1 target" "$OUT"
CHECK_ERR "remove it again" 6 "not watched" "$CTL" remove --pid "$T"
CHECK_ERR "show it after remove" 6 "not watched" "$CTL" show --pid "$T"
ASSERT_EQ "targets empty after remove" '{"targets":[]}' "$("$CTL" targets --json)"

sf_log "--- per-target syscall families ---"
ASSERT_OK "add --send sendto --recv recvfrom --poll pselect6" \
	"$CTL" add --pid "$T" --send sendto --recv recvfrom --poll pselect6
ASSERT_EQ "targets --json: syscalls" "sendto,recvfrom,pselect6" \
	"$(jget "$("$CTL" targets --json)" 'j["targets"][0]["syscalls"]')"
ASSERT_TRUE "traffic: sendmsg 3000" sf_traffic sendmsg 3000
ASSERT_TRUE "traffic: write 200" sf_traffic write 200
ASSERT_TRUE "traffic: poll 300" sf_traffic poll 300
ASSERT_TRUE "traffic: epoll 300" sf_traffic epoll 300
J=$(ctl_json --pid "$T")
ASSERT_EQ "sendmsg/write/recvmsg/read/poll/epoll not counted" "0 0 0" \
	"$(jget "$J" '"%d %d %d" % tuple(j["targets"][0][s]["calls"] for s in ("send", "recv", "poll"))')"
ASSERT_TRUE "traffic: sendto 3000" sf_traffic sendto 3000
ASSERT_TRUE "traffic: pselect 500" sf_traffic pselect 500
J=$(ctl_json --pid "$T")
ASSERT_EQ "sendto/recvfrom/pselect6 counted exactly" "3000 3000 500" \
	"$(jget "$J" '"%d %d %d" % tuple(j["targets"][0][s]["calls"] for s in ("send", "recv", "poll"))')"
# gaps: 3000 calls -> 2999 samples = 1 window + 951; waits: 500 samples
ASSERT_EQ "windows x N + in progress = samples" "1 951 1 951 0 500" \
	"$(jget "$J" '" ".join("%d %d" % (j["targets"][0][s]["seq"], j["targets"][0][s]["pending"]) for s in ("send", "recv", "poll"))')"
ASSERT_OK "remove --all" "$CTL" remove --all
ASSERT_MATCH "remove --all: message" "removed 1 target" "$OUT"
sf_traffic_stop

######################################################################
sf_log "--- a cgroup target ---"
if sf_cgroup_section "cgroup target" "satfeed-test-$$"; then
	CG=$CG_DIR
	sf_traffic_start || sf_fail "traffic helper started"
	T=$TRAFFIC_PID
	ASSERT_TRUE "move the helper into $CG" sh -c "echo $T > '$CG/cgroup.procs'"
	ASSERT_EQ "helper is in the cgroup" "$T" "$(cat "$CG/cgroup.procs")"
	ASSERT_OK "add --cgroup $CG" "$CTL" add --cgroup "$CG"
	ASSERT_MATCH "add --cgroup: message" "watching cgroup id [0-9]+ in slot [0-9]+" "$OUT"
	CGID=$(printf '%s' "$OUT" | sed -n 's/.*cgroup id \([0-9]*\).*/\1/p')
	ASSERT_EQ "cgroup id is the directory's inode" "$(stat -c %i "$CG")" "$CGID"
	CHECK_ERR "add the same cgroup again" 8 "already watched" "$CTL" add --cgroup "$CG"
	ASSERT_EQ "targets --json: the cgroup" "$CGID /satfeed-test-$$ active" \
		"$(jget "$("$CTL" targets --json)" '"%s %s %s" % (j["targets"][0]["cgroup"], j["targets"][0]["path"], j["targets"][0]["state"])')"
	ASSERT_TRUE "traffic in the cgroup: sendto 5000" sf_traffic sendto 5000
	# the same traffic from outside the cgroup must not count
	ASSERT_TRUE "traffic outside the cgroup" \
		sh -c 'echo "sendto 1000" | python3 "$1"' _ "$SF_LIB/traffic.py"
	ASSERT_OK "show --cgroup --json" "$CTL" show --json --cgroup "$CG"
	J=$OUT
	ASSERT_EQ "cgroup: send/recv calls = 5000 (nothing from outside)" "5000 5000" \
		"$(jget "$J" '"%d %d" % (j["targets"][0]["send"]["calls"], j["targets"][0]["recv"]["calls"])')"
	ASSERT_EQ "cgroup: 2 send windows + 903 pending, 2 in history" "2 903 2" \
		"$(jget "$J" '"%d %d %d" % (j["targets"][0]["send"]["seq"], j["targets"][0]["send"]["pending"], len(j["targets"][0]["send"]["windows"]))')"
	ASSERT_EQ "cgroup: windows under the cgroup target" "$CGID ok" \
		"$(jget "$J" '"%s %s" % (j["targets"][0]["cgroup"], "ok" if all(w["mean_ns"] > 0 and w["sum_ns"] > 0 for w in j["targets"][0]["send"]["windows"]) else j)')"
	ASSERT_OK "show --raw for the cgroup" "$CTL" show --raw --cgroup "$CG"
	ASSERT_MATCH "show --raw: cgroup row" "cgroup /satfeed-test-$$ +send +2 +903 " "$OUT"
	ASSERT_OK "remove --cgroup" "$CTL" remove --cgroup "$CG"
	CHECK_ERR "show the removed cgroup" 6 "not watched" "$CTL" show --cgroup "$CG"
	sf_traffic_stop
	ASSERT_TRUE "rmdir the cgroup" sf_cgroup_remove "$CG"
	# shellcheck disable=SC2034 # read by sf_cleanup in lib.sh
	SF_CGROUPS=()   # removed already: nothing left for the cleanup
fi

######################################################################
sf_log "--- a watched cgroup that is removed ---"
if sf_cgroup_section "removed cgroup" "satfeed-gone-$$"; then
	CG=$CG_DIR
	ASSERT_OK "add --cgroup $CG" "$CTL" add --cgroup "$CG"
	ASSERT_EQ "active before rmdir" active "$(jget "$(ctl_json)" 'j["targets"][0]["state"]')"
	ASSERT_TRUE "rmdir the watched cgroup" rmdir "$CG"
	# shellcheck disable=SC2034 # read by sf_cleanup in lib.sh
	SF_CGROUPS=()
	ASSERT_EQ "gone after rmdir (show --json state)" gone "$(jget "$(ctl_json)" 'j["targets"][0]["state"]')"
	ASSERT_OK "targets after rmdir" "$CTL" targets
	ASSERT_MATCH "targets: gone" "cgroup +[0-9]+ +/satfeed-gone-$$ +gone" "$OUT"
	ASSERT_OK "show (table) after rmdir" "$CTL" show
	ASSERT_MATCH "show table: state gone" "cgroup /satfeed-gone-.* gone " "$OUT"
	ASSERT_OK "show --raw after rmdir" "$CTL" show --raw
	ASSERT_MATCH "show --raw: (gone)" "cgroup \(gone\) /satfeed-gone-" "$OUT"
	ASSERT_EQ "the engine marked it gone (state 1, gone_ns set) and unindexed it" "1 yes 0" \
		"$(bpftool map dump -j pinned "$SF_PIN_ROOT/sf_targets" |
			python3 "$SF_REPO/tests/e2e/target_gone.py" cgroup "$SF_PIN_ROOT/sf_cgrp_index")"
	ASSERT_OK "remove the gone cgroup by its old path" "$CTL" remove --cgroup "$CG"
	ASSERT_MATCH "remove: message" "removed 1 target" "$OUT"
	ASSERT_EQ "no target left" 0 "$(jget "$("$CTL" targets --json)" 'len(j["targets"])')"
	CHECK_ERR "remove a removed directory that was not watched" 6 \
		"no removed cgroup was watched there" "$CTL" remove --cgroup "$CG"
fi

######################################################################
sf_log "--- cgroups that cannot be watched are refused ---"
if sf_cgroup_section "unwatchable cgroups" "sfdeep-$$"; then
	TOP=$CG_DIR
	DEEP=$TOP
	for _ in $(seq 2 64); do DEEP=$DEEP/d; done
	ASSERT_TRUE "mkdir a cgroup 64 levels deep" mkdir -p "$DEEP"
	CHECK_ERR "add --cgroup at depth 64" 2 "64 levels below the cgroup2 root; .* up to depth 63" \
		"$CTL" add --cgroup "$DEEP"
	ASSERT_TRUE "rmdir the deep cgroups" sh -c "find '$TOP' -mindepth 1 -depth -type d -exec rmdir {} +"
	# /NAME below the mount: 95 characters fit a target, 96 do not
	LONG=sflong-$$-
	while [ ${#LONG} -lt 94 ]; do LONG+=l; done
	sf_cgroup_make "$LONG" || sf_fail "mkdir a cgroup with a 95-character path"
	FITS=$CG_DIR
	sf_cgroup_make "${LONG}x" || sf_fail "mkdir a cgroup with a 96-character path"
	CHECK_ERR "add --cgroup with a 96-character path" 2 "is 96 characters; satfeed keeps at most 95" \
		"$CTL" add --cgroup "$CG_DIR"
	ASSERT_EQ "nothing added" 0 "$(jget "$("$CTL" targets --json)" 'len(j["targets"])')"
	ASSERT_OK "add --cgroup with a 95-character path" "$CTL" add --cgroup "$FITS"
	ASSERT_EQ "its path is whole" "/$LONG" "$(jget "$("$CTL" targets --json)" 'j["targets"][0]["path"]')"
	ASSERT_OK "remove it" "$CTL" remove --cgroup "$FITS"
fi

######################################################################
sf_log "--- a 32-bit process is refused ---"
sf_bg "$SF_BUILD/sfcompat32" 0
for _ in $(seq 1 100); do
	[ "$(readlink "/proc/$BG_PID/exe")" = "$SF_BUILD/sfcompat32" ] && break
	sleep 0.05
done
ASSERT_EQ "the 32-bit helper runs" "$SF_BUILD/sfcompat32" "$(readlink "/proc/$BG_PID/exe")"
CHECK_ERR "add --pid of a 32-bit process" 2 "runs a 32-bit program; satfeed counts 64-bit system calls only" \
	"$CTL" add --pid "$BG_PID"
ASSERT_EQ "nothing added" 0 "$(jget "$("$CTL" targets --json)" 'len(j["targets"])')"
sf_kill "$BG_PID"

######################################################################
sf_log "--- a watched process that exits ---"
sf_bg sleep 300
G=$BG_PID
ASSERT_OK "add --pid (sleep $G)" "$CTL" add --pid "$G"
ASSERT_EQ "active before it exits" active "$(jget "$(ctl_json)" 'j["targets"][0]["state"]')"
sf_kill "$G"
ASSERT_EQ "gone after it exits (show --json state)" "gone" "$(jget "$(ctl_json)" 'j["targets"][0]["state"]')"
ASSERT_OK "targets after exit" "$CTL" targets
ASSERT_MATCH "targets: gone" "pid +$G +sleep +gone" "$OUT"
ASSERT_OK "show (table) after exit" "$CTL" show
ASSERT_MATCH "show table: state gone" "^pid $G sleep +gone " "$OUT"
ASSERT_OK "show --pid of the exited process: shown, exit 0" "$CTL" show --pid "$G"
ASSERT_MATCH "show --pid of the exited process: state gone" "^pid $G sleep +gone " "$OUT"
ASSERT_OK "show --raw after exit" "$CTL" show --raw
ASSERT_MATCH "show --raw: (gone)" "pid $G sleep \(gone\)" "$OUT"
ASSERT_EQ "the engine marked it gone (sf_targets state 1, gone_ns set)" "1 yes" \
	"$(bpftool map dump -j pinned "$SF_PIN_ROOT/sf_targets" |
		python3 "$SF_REPO/tests/e2e/target_gone.py" pid "$G")"
ASSERT_OK "remove the gone pid" "$CTL" remove --pid "$G"

######################################################################
sf_log "--- 64 targets, then a 65th ---"
SLEEPERS=()
for i in $(seq 1 65); do
	sleep 300 9>&- &
	SLEEPERS+=($!)
	sf_track $!
done
added=0
for i in $(seq 0 63); do
	"$CTL" add --pid "${SLEEPERS[$i]}" >/dev/null 2>"$SF_TMP/add.err" && added=$((added + 1))
done
ASSERT_EQ "64 targets added" 64 "$added"
ASSERT_EQ "targets --json lists 64" 64 "$(jget "$("$CTL" targets --json)" 'len(j["targets"])')"
CHECK_ERR "a 65th target" 7 "target table is full \(64 targets\)" "$CTL" add --pid "${SLEEPERS[64]}"
ASSERT_EQ "still 64 after the refusal" 64 "$(jget "$("$CTL" targets --json)" 'len(j["targets"])')"
ASSERT_OK "remove one, then the 65th fits" "$CTL" remove --pid "${SLEEPERS[0]}"
ASSERT_OK "add the 65th after a removal" "$CTL" add --pid "${SLEEPERS[64]}"
# a full table whose target exited: the dead target's slot is reused
sleep 300 9>&- &
EXTRA=$!
sf_track $EXTRA
CHECK_ERR "full again" 7 "target table is full" "$CTL" add --pid "$EXTRA"
kill "${SLEEPERS[1]}"; wait "${SLEEPERS[1]}" 2>/dev/null
ASSERT_OK "a full table reuses the slot of an exited target" "$CTL" add --pid "$EXTRA"
ASSERT_EQ "the exited target made room" 0 \
	"$(jget "$("$CTL" targets --json)" 'sum(1 for t in j["targets"] if t.get("pid") == '"${SLEEPERS[1]}"')')"
kill "$EXTRA"; wait "$EXTRA" 2>/dev/null
ASSERT_OK "remove --all" "$CTL" remove --all
ASSERT_MATCH "remove --all: 64" "removed 64 targets" "$OUT"
for p in "${SLEEPERS[@]}"; do kill "$p" 2>/dev/null; done
for p in "${SLEEPERS[@]}"; do wait "$p" 2>/dev/null; done

######################################################################
sf_log "--- --replace ---"
sf_bg sleep 300
ASSERT_OK "add a target before --replace" "$CTL" add --pid "$BG_PID"
PROGS1=$(pinned_ids)
# as many programs as the engine attaches in this mode (the io_uring hooks
# came with their own): each pinned program has its link
NPROGS=$(find "$SF_PIN_ROOT/links" -mindepth 1 -maxdepth 1 | wc -l)
ASSERT_EQ "every pinned program is attached before --replace ($NPROGS links)" \
	"$NPROGS" "$(echo $PROGS1 | wc -w)"
ASSERT_OK "load --replace" "$LOADER" --replace load
ASSERT_MATCH "load --replace: message" "satfeed loaded" "$OUT"
ASSERT_BPFFS "load --replace: same pins" "$SF_TMP/snap.loaded"
PROGS2=$(pinned_ids)
ASSERT_EQ "load --replace: as many new programs pinned, none of the old" "$NPROGS " \
	"$(echo $PROGS2 | wc -w) $(comm -12 <(tr ' ' '\n' <<<"$PROGS1" | grep . | sort) <(tr ' ' '\n' <<<"$PROGS2" | grep . | sort) | tr '\n' ' ')"
# the old programs are freed asynchronously once their pins and links go
left=
for i in $(seq 1 25); do
	left=$(comm -12 <(tr ' ' '\n' <<<"$PROGS1" | grep . | sort) <(sf_prog_ids | tr ' ' '\n' | grep . | sort) | tr '\n' ' ')
	[ -z "$left" ] && break
	sleep 0.1
done
ASSERT_EQ "load --replace: the old programs ($PROGS1) are freed" "" "$left"
ASSERT_MATCH "load --replace: says it carried the target over" \
	"carried 1 target over, dropped 0" "$OUT"
ASSERT_MATCH "load --replace: the target is carried over" \
	"\"pid\":$BG_PID,.*\"state\":\"active\"" "$("$CTL" targets --json)"
ASSERT_OK "works after --replace: remove" "$CTL" remove --pid "$BG_PID"
ASSERT_OK "works after --replace: add" "$CTL" add --pid "$BG_PID"
sf_kill "$BG_PID"

ASSERT_OK "unload" "$LOADER" unload
ASSERT_BPFFS "after the final unload" "$SF_TMP/snap.unloaded"
ASSERT_NO_PROGS "after the final unload"
SNAP=$SF_TMP/snap.unloaded
CHECK_ERR "unload twice" 3 "not loaded" "$LOADER" unload

sf_finish
