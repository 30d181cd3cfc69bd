#!/usr/bin/env bash
# validate.sh - satfeed fidelity validation against real servers.
#
#   bash tests/validate.sh            full run: 12 levels per server, 2048-sample
#                                     windows, R^2 reported; rewrites the
#                                     results part of docs/validation.md
#   bash tests/validate.sh --quick    short run for `make test` (< 3 min):
#                                     4 levels, 256-sample windows; checks only
#                                     that the output is well formed
#
# Servers: memcached from Debian (one worker thread) and the bundled sfserver
# (--work-us 50).  Each runs under its own satfeed engine root
# ($VALIDATE_BPFFS, default /sys/fs/bpf/satfeed-validate), never the default
# one, and the engine is unloaded on every exit path.  Outputs go to
# build/validate/: <server>.csv, <server>.csv.capacity, PNG plots, summary.md.
# Exit status: 0 ok, 1 a run failed or the output is malformed, 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
# one satfeed test at a time on this machine (tests/lib.sh takes the same lock)
exec 9>"${SF_LOCK:-/run/lock/satfeed-tests.lock}"
flock -w 900 9 || { echo "${0##*/}: another satfeed test held the lock for 15 minutes" >&2; exit 1; }

QUICK=0
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	-h | --help)
		sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "validate.sh: unknown argument $arg (try --help)" >&2
		exit 2
		;;
	esac
done

B=${OUTPUT:-build}
OUT=$B/validate
ROOT=${VALIDATE_BPFFS:-/sys/fs/bpf/satfeed-validate}
LOADER=$B/satfeed-loader
CTL=$B/satfeedctl
T_START=$(date +%s)

if [ "$(id -u)" -ne 0 ]; then
	echo "validate.sh: needs root (loads BPF programs)" >&2
	exit 1
fi
if [ "$ROOT" = /sys/fs/bpf/satfeed ]; then
	echo "validate.sh: refusing the default pin root; set VALIDATE_BPFFS" >&2
	exit 2
fi

# --- dependencies (idempotent) ---
need=()
command -v memcached >/dev/null || need+=(memcached)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	echo "validate.sh: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "${need[@]}" >/dev/null ||
		{ apt-get update -q >/dev/null && apt-get install -y -q "${need[@]}" >/dev/null; }
fi
make -s all >/dev/null
mountpoint -q /sys/fs/bpf || mount -t bpf -o mode=0700 bpf /sys/fs/bpf

# --- cleanup on every path ---
PIDS=()
TMP=$(mktemp -d)
cleanup() {
	local rc=$?
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [ -e "$ROOT/sf_info" ]; then
		"$LOADER" --bpffs "$ROOT" unload >/dev/null 2>&1 || true
	fi
	rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ $QUICK = 1 ]; then
	WINDOW=256
	SWEEP=(--levels 4 --windows 4 --min-duration 1 --max-duration 2
		--cap-duration 0.7 --step 1.6 --warmup 0.3)
	CMD="bash tests/validate.sh --quick"
else
	WINDOW=2048
	SWEEP=(--levels 12 --windows 6 --min-duration 3 --max-duration 12
		--cap-duration 1.5 --step 1.25)
	CMD="bash tests/validate.sh"
fi

mkdir -p "$OUT"
rm -f "$OUT"/*.csv "$OUT"/*.capacity "$OUT"/*.png "$OUT"/*.dat "$OUT"/summary.md

if [ -e "$ROOT/sf_info" ]; then
	echo "validate.sh: $ROOT holds a stale load; unloading it" >&2
	"$LOADER" --bpffs "$ROOT" unload >/dev/null
fi
"$LOADER" --bpffs "$ROOT" --window "$WINDOW" load >&2

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_port() { # PORT: wait up to 5 s for a listener
	for _ in $(seq 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "validate.sh: nothing listens on port $1" >&2
	return 1
}

sweep() { # NAME PROTO PORT PID
	python3 tests/validate_report.py sweep --server "$1" --proto "$2" \
		--port "$3" --pid "$4" --csv "$OUT/$1.csv" --bpffs "$ROOT" \
		--ctl "$CTL" --sfload "$B/sfload" --window "$WINDOW" "${SWEEP[@]}"
}

# --- memcached: one worker thread, TCP only ---
# strace -f -c shows memcached's worker answering with sendmsg, reading with
# read and waiting in epoll_wait (see docs/validation.md), so only those
# members of each family count.
MPORT=$(free_port)
memcached -u root -t 1 -p "$MPORT" -l 127.0.0.1 -U 0 -c 4096 &
MPID=$!
PIDS+=("$MPID")
wait_port "$MPORT"
"$CTL" --bpffs "$ROOT" add --pid "$MPID" --send sendmsg --recv read --poll epoll_wait >&2
sweep memcached memcached "$MPORT" "$MPID"
"$CTL" --bpffs "$ROOT" remove --pid "$MPID" >&2 || true
kill "$MPID"

# --- sfserver: one thread, 50 us of work per request ---
"$B/sfserver" --port 0 --port-file "$TMP/sfport" --work-us 50 --threads 1 -q &
SPID=$!
PIDS+=("$SPID")
for _ in $(seq 50); do [ -s "$TMP/sfport" ] && break; sleep 0.1; done
SPORT=$(cat "$TMP/sfport")
wait_port "$SPORT"
"$CTL" --bpffs "$ROOT" add --pid "$SPID" --send sendto --recv recvfrom --poll epoll_wait >&2
sweep sfserver sf "$SPORT" "$SPID"
"$CTL" --bpffs "$ROOT" remove --pid "$SPID" >&2 || true
kill "$SPID"

# --- report ---
DOC=()
[ $QUICK = 1 ] || DOC=(--doc docs/validation.md)
python3 tests/validate_report.py report --outdir "$OUT" \
	--servers memcached sfserver --command "$CMD" "${DOC[@]}" >"$OUT/report.txt"
cat "$OUT/report.txt"
for f in memcached sfserver; do
	for p in rps variance poll; do
		[ -s "$OUT/${f}_$p.png" ] || { echo "validate.sh: missing $OUT/${f}_$p.png" >&2; exit 1; }
	done
done
echo "validate.sh: done in $(($(date +%s) - T_START)) s; outputs in $OUT" >&2
