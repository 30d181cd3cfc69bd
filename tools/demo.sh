#!/usr/bin/env bash
# demo.sh - `make run`: load satfeed, drive the bundled epoll server with the
# bundled open-loop load generator at rising rates and show what satfeed
# sees after each; or, with --pid PID, watch that process live.  Everything
# it loads or starts is removed when it ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${OUTPUT:-build}
root=/sys/fs/bpf/satfeed
pid=
[ "${1:-}" = --pid ] && pid=${2:?--pid needs a process id}

if [ "$(id -u)" -ne 0 ]; then
	echo "make run: satfeed loads BPF programs; run it as root" >&2
	exit 1
fi
if [ -e "$root" ]; then
	echo "make run: satfeed is already loaded at $root; run '$B/satfeed-loader unload' first" >&2
	exit 1
fi

server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	"$B/satfeed-loader" unload >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$B/satfeed-loader" load
if [ -n "$pid" ]; then
	"$B/satfeedctl" add --pid "$pid"
	# Job control puts the watch in a process group of its own, which
	# gets the terminal: Ctrl-C then reaches the watch alone (it ends
	# with exit 0), not make, which would report it as an error.  The
	# watch's own header line says "Ctrl-C ends", so the hint stays on
	# screen while it redraws.
	set -m
	rc=0
	"$B/satfeedctl" watch || rc=$?
	set +m
	echo "make run: stopped watching pid $pid; satfeed is unloaded"
	exit "$rc"
fi

portfile=$(mktemp)
"$B/sfserver" --port 0 --port-file "$portfile" --work-us 20 >/dev/null &
server=$!
for _ in $(seq 50); do [ -s "$portfile" ] && break; sleep 0.1; done
port=$(cat "$portfile"); rm -f "$portfile"
"$B/satfeedctl" add --pid "$server"
echo
echo "Demo: the bundled epoll server (20 us of work per request) under an"
echo "open-loop load at rising rates; satfeed's view after each step."
for rate in 2000 8000 16000; do
	echo
	echo "--- offered $rate req/s for 3 s"
	"$B/sfload" --rate "$rate" --duration 3 --connections 4 "127.0.0.1:$port" |
		sed -e 's/^sfload: //' -e 's/^/  | /'
	"$B/satfeedctl" show
done
echo
echo "The same, as JSON (satfeedctl show --json), abridged:"
"$B/satfeedctl" show --json | python3 tools/demo_excerpt.py
