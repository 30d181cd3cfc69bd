#!/usr/bin/env bash
# corpus.sh - the server corpus of issue 23: real servers of different
# architectures driven open loop at fixed shares of their measured capacity,
# with every figure and verdict satfeed publishes recorded at each level.
#
#   bash tests/validate/corpus.sh                 full run (`make validate`):
#                        every server, levels 10 30 50 70 90 100 110 130
#                        150% of capacity, 2048-sample windows; rewrites
#                        the generated part of docs/validation.md's Corpus
#                        section
#   bash tests/validate/corpus.sh --quick         smoke run: lighttpd and
#                        dnsmasq, levels 10 100 150%, 256-sample windows;
#                        checks only that every level was recorded
#   bash tests/validate/corpus.sh --servers A,B   only these servers
#   bash tests/validate/corpus.sh --holdout       the held-out servers
#                        only (below), to check a rule designed on the
#                        others; their results go to corpus-holdout.md,
#                        never into docs/validation.md
#   bash tests/validate/corpus.sh --list          the servers, one a line
#                        (held-out ones marked)
#
# Servers (docs/validation.md, "Corpus", says why each): lighttpd (one
# thread, epoll), memcached-t4 (four epoll threads), nginx (master and two
# workers, watched as its own cgroup v2), pyhttp (Python's
# ThreadingHTTPServer: a thread per connection), dnsmasq (UDP, one thread,
# poll), sfserver-iouring (io_uring), nginx-proxy (nginx in front of a
# lighttpd, watched as its cgroup).  Held out (--holdout): memcached-t1
# (one epoll thread), apache2-worker (mpm_worker: a thread per connection
# that polls its one socket between keep-alive requests; its cgroup),
# haproxy (a two-thread epoll proxy in front of a lighttpd), unbound (UDP
# DNS, two threads with a SO_REUSEPORT socket each, libevent; added in
# session 12 with the engine's drop figure, never run before the rule).
#
# Per server: a satfeed engine of its own under $CORPUS_BPFFS-<server>
# (default /sys/fs/bpf/satfeed-corpus-<server>), loaded before the server
# starts and unloaded after it stops; `satfeedctl add --auto` while sfload
# offers the server a light load picks the syscalls, as a new user would
# (the plain add with every family member if discovery fails, said in
# <server>.add.txt); then tests/validate/sweep.py measures the capacity and
# runs the levels.  Outputs in build/validate/: <server>.levels.jsonl (per
# level: sfload's report, every show --json reading without the window
# histories, every window by seq, the engine's sf_verdict), <server>.csv,
# <server>.add.txt, and from corpus_report.py corpus.md and corpus.txt
# (corpus-holdout.* for --holdout) and <server>_verdict.png.
# Exit status: 0 ok, 1 a server or a run failed or a record is malformed,
# 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh

ALL=(lighttpd memcached-t4 nginx pyhttp dnsmasq sfserver-iouring nginx-proxy)
HOLDOUT=(memcached-t1 apache2-worker haproxy unbound)
QUICK=0
HOLD=0
PICK=""
for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	--holdout) HOLD=1 ;;
	--servers=*) PICK=${arg#--servers=} ;;
	--servers) PICK=next ;;
	--list)
		printf '%s\n' "${ALL[@]}"
		printf '%s (held out)\n' "${HOLDOUT[@]}"
		exit 0
		;;
	-h | --help)
		sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		if [ "$PICK" = next ]; then
			PICK=$arg
			continue
		fi
		echo "corpus.sh: unknown argument $arg (try --help)" >&2
		exit 2
		;;
	esac
done
if [ "$PICK" = next ]; then
	echo "corpus.sh: --servers needs a list" >&2
	exit 2
fi
if [ -n "$PICK" ]; then
	IFS=, read -ra SERVERS <<<"$PICK"
	for s in "${SERVERS[@]}"; do
		case " ${ALL[*]} ${HOLDOUT[*]} " in
		*" $s "*) ;;
		*) echo "corpus.sh: unknown server '$s' (try --list)" >&2; exit 2 ;;
		esac
	done
elif [ $HOLD = 1 ]; then
	SERVERS=("${HOLDOUT[@]}")
elif [ $QUICK = 1 ]; then
	SERVERS=(lighttpd dnsmasq)
else
	SERVERS=("${ALL[@]}")
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "corpus.sh: needs root (loads BPF programs)" >&2
	exit 1
fi
sf_take_test_lock || exit 1

B=${OUTPUT:-build}
OUT=$B/validate
ROOT_BASE=${CORPUS_BPFFS:-/sys/fs/bpf/satfeed-corpus}
case $ROOT_BASE in
/sys/fs/bpf/satfeed | /sys/fs/bpf/satfeed/*)
	echo "corpus.sh: refusing the default pin root; set CORPUS_BPFFS" >&2
	exit 2
	;;
esac
T_START=$(date +%s)

bash tools/install-deps.sh validate
make -s all >/dev/null
sf_bpffs_mount || { echo "corpus.sh: cannot mount bpffs" >&2; exit 1; }

PIDS=()
CGS=()
ROOT=""
TMP=$(mktemp -d)
chmod 755 "$TMP"
cleanup() {
	local rc=$? c
	sf_stop_children "${PIDS[@]}"
	for c in "${CGS[@]}"; do
		sf_cgroup_remove "$c" || echo "corpus.sh: cannot remove $c" >&2
	done
	if [ -n "$ROOT" ] && [ -e "$ROOT/sf_info" ]; then
		sf_root_unload "$ROOT" || true
	fi
	rm -rf "$TMP"
	sf_bpffs_unmount
	exit $rc
}
sf_trap_cleanup cleanup

if [ $QUICK = 1 ]; then
	WINDOW=256
	DISCOVER=1
	SWEEP=(--fracs 0.1,1.0,1.5 --windows 4 --min-duration 1
		--max-duration 2 --cap-duration 0.7 --step 1.6 --warmup 0.3)
else
	WINDOW=2048
	DISCOVER=3
	SWEEP=(--fracs 0.1,0.3,0.5,0.7,0.9,1.0,1.1,1.3,1.5 --windows 4
		--min-duration 4 --max-duration 15 --cap-duration 1.5 --step 1.25)
fi
mkdir -p "$OUT"

# the static file the HTTP servers serve: 256 bytes
WWW=$TMP/www
mkdir -p "$WWW"
head -c 256 /dev/zero | tr '\0' x >"$WWW/index.html"
chmod -R a+rX "$WWW"

# --- the servers: each sets S_PID (the process to stop), S_PORT, S_SEL
# (how satfeed names the target), S_PROTO, S_CONNS, S_START (a rate it
# serves easily: the discovery load and the capacity search's first) ---

# The server and the load generator on CPUs of their own (CORPUS_PIN=0: no
# pinning): on a small machine sfload and the server otherwise take each
# other's CPU, and the knee is the machine's, not the server's (a draft run
# here put memcached's threads 2.3 runnable-but-waiting on average at 90%
# while each was 45% idle).  Server: the first half of the CPUs, sfload the
# rest; a server's every process (workers, a proxy's backend) inherits it.
NCPU=$(nproc)
SRV_CPUS="" LOAD_CPUS=""
if [ "${CORPUS_PIN:-1}" != 0 ] && [ "$NCPU" -ge 2 ]; then
	half=$((NCPU / 2))
	SRV_CPUS=0-$((half - 1))
	LOAD_CPUS=$half-$((NCPU - 1))
fi
pin_exec() { # CMD...: become CMD, on the server's CPUs (in a background
	# subshell, `pin_exec CMD &`, so that $! is the server's pid)
	if [ -n "$SRV_CPUS" ]; then
		exec taskset -c "$SRV_CPUS" "$@"
	fi
	exec "$@"
}

# sfload on the load generator's CPUs, through a wrapper that sweep.py runs
SFLOAD=$B/sfload
if [ -n "$LOAD_CPUS" ]; then
	SFLOAD=$TMP/sfload
	printf '#!/bin/sh\nexec taskset -c %s %q "$@"\n' "$LOAD_CPUS" \
		"$(realpath "$B/sfload")" >"$SFLOAD"
	chmod 755 "$SFLOAD"
	echo "corpus.sh: servers on CPUs $SRV_CPUS, sfload on $LOAD_CPUS" >&2
fi

start_bg() { # CMD...: start in the background, S_PID
	pin_exec "$@" &
	S_PID=$!
	PIDS+=("$S_PID")
}

# keep-alive requests per connection: 65535 is lighttpd's most (a 16-bit
# setting; a larger value wraps), 36k per connection at the top level of a
# 100k-rps lighttpd
lighttpd_conf() { # PORT FILE
	cat >"$2" <<EOF
server.document-root = "$WWW"
server.port = $1
server.bind = "127.0.0.1"
server.errorlog = "$TMP/lighttpd-$1.err"
server.max-keep-alive-requests = 65535
server.max-keep-alive-idle = 60
server.max-fds = 4096
EOF
}

nginx_conf() { # NAME PORT LOCATION-BODY UPSTREAM
	mkdir -p "$TMP/$1"
	cat >"$TMP/$1/nginx.conf" <<EOF
user root;
worker_processes 2;
pid $TMP/$1/nginx.pid;
error_log $TMP/$1/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	keepalive_requests 100000000;
	keepalive_timeout 60s;
	client_body_temp_path $TMP/$1/body;
	proxy_temp_path $TMP/$1/proxy;
	fastcgi_temp_path $TMP/$1/fastcgi;
	uwsgi_temp_path $TMP/$1/uwsgi;
	scgi_temp_path $TMP/$1/scgi;
	$4
	server {
		listen 127.0.0.1:$2;
		root $WWW;
		location / { $3 }
	}
}
EOF
}

start_nginx_cg() { # NAME: nginx's master moved to a cgroup of its own
	sf_cgroup_make "satfeed-corpus-$1" || {
		echo "corpus.sh: cannot create a cgroup v2 for $1" >&2
		return 1
	}
	CGS+=("$CG_DIR")
	start_bg bash -c 'echo $$ >"$1/cgroup.procs" && exec nginx -e "$2" -c "$3" -g "daemon off;"' \
		_ "$CG_DIR" "$TMP/$1/error.log" "$TMP/$1/nginx.conf"
	S_SEL=(--cgroup "$CG_DIR")
}

cpu_quota() { # NAME PID PERCENT: PID's CPU time capped at PERCENT of a CPU
	local d
	if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then	# cgroup v1
		d=/sys/fs/cgroup/cpu/satfeed-corpus-$1
		mkdir -p "$d" && echo 100000 >"$d/cpu.cfs_period_us" &&
			echo $(($3 * 1000)) >"$d/cpu.cfs_quota_us" &&
			echo "$2" >"$d/cgroup.procs" || return 1
	elif sf_cgroup_make "satfeed-corpus-$1-cpu" 2>/dev/null &&
		grep -qw cpu "$CG_DIR/cgroup.controllers"; then	# v2
		d=$CG_DIR
		echo "$(($3 * 1000)) 100000" >"$d/cpu.max" &&
			echo "$2" >"$d/cgroup.procs" || return 1
	else
		echo "corpus.sh: no cpu controller for a quota on $1" >&2
		return 1
	fi
	CGS+=("$d")	# stop_all moves the process out and removes it
}

# lighttpd runs under a CPU quota of 25% of a CPU, as in a container
# with a CPU limit: unlimited, one lighttpd thread keeps up with one
# sfload thread on this 2-CPU host (330,872 rps offered, 97% served), so
# its knee is the load generator's, not its own, and its p99 rises with
# the generator's load from 10% on.  32 connections: its keep-alive
# limit is 65535 requests a connection (a 16-bit setting), which 16
# connections reach within a level above 230,000 rps.
start_lighttpd() {
	S_PORT=$(sf_free_port)
	lighttpd_conf "$S_PORT" "$TMP/lighttpd.conf"
	start_bg lighttpd -D -f "$TMP/lighttpd.conf"
	cpu_quota lighttpd "$S_PID" 25 || return 1
	S_SEL=(--pid "$S_PID") S_PROTO=http S_CONNS=32 S_START=1000
}

start_memcached-t4() {
	S_PORT=$(sf_free_port)
	start_bg memcached -u root -t 4 -p "$S_PORT" -l 127.0.0.1 -U 0 -c 4096
	S_SEL=(--pid "$S_PID") S_PROTO=memcached S_CONNS=8 S_START=4000
}

start_nginx() {
	S_PORT=$(sf_free_port)
	nginx_conf nginx "$S_PORT" "" ""
	start_nginx_cg nginx
	S_PROTO=http S_CONNS=16 S_START=1000
}

start_pyhttp() {
	S_PORT=$(sf_free_port)
	start_bg python3 tests/validate/corpus_httpd.py "$S_PORT" "$WWW"
	S_SEL=(--pid "$S_PID") S_PROTO=http S_CONNS=16 S_START=200
}

start_dnsmasq() {
	S_PORT=$(sf_free_port)
	start_bg dnsmasq -k --conf-file=/dev/null -p "$S_PORT" \
		--listen-address=127.0.0.1 --bind-interfaces --no-resolv \
		--no-hosts --address=/corpus.test/127.0.0.1 -u root \
		--pid-file= --log-facility=- --cache-size=0
	S_SEL=(--pid "$S_PID") S_PROTO=dns S_CONNS=4 S_START=1000
}

start_sfserver-iouring() {
	start_bg "$B/sfserver" --io uring --port 0 --port-file "$TMP/uport" \
		--work-us 50 -q
	for _ in $(seq 50); do [ -s "$TMP/uport" ] && break; sleep 0.1; done
	S_PORT=$(cat "$TMP/uport")
	S_SEL=(--pid "$S_PID") S_PROTO=sf S_CONNS=4 S_START=1000
}

# --- held out ---

start_memcached-t1() {
	S_PORT=$(sf_free_port)
	start_bg memcached -u root -t 1 -p "$S_PORT" -l 127.0.0.1 -U 0 -c 4096
	S_SEL=(--pid "$S_PID") S_PROTO=memcached S_CONNS=8 S_START=4000
}

start_unbound() { # two threads, each its own UDP socket (SO_REUSEPORT)
	S_PORT=$(sf_free_port)
	mkdir -p "$TMP/unbound"
	cat >"$TMP/unbound/unbound.conf" <<EOF
server:
	interface: 127.0.0.1
	port: $S_PORT
	do-daemonize: no
	username: ""
	chroot: ""
	directory: "$TMP/unbound"
	pidfile: ""
	use-syslog: no
	logfile: ""
	verbosity: 0
	num-threads: 2
	do-ip6: no
	access-control: 127.0.0.0/8 allow
	local-zone: "corpus.test." redirect
	local-data: "corpus.test. 60 IN A 127.0.0.1"
remote-control:
	control-enable: no
EOF
	start_bg unbound -d -c "$TMP/unbound/unbound.conf"
	S_SEL=(--pid "$S_PID") S_PROTO=dns S_CONNS=4 S_START=1000
}

start_apache2-worker() { # its master and one child of 64 threads
	S_PORT=$(sf_free_port)
	mkdir -p "$TMP/apache2"
	cat >"$TMP/apache2/apache2.conf" <<EOF
ServerRoot "$TMP/apache2"
ServerName localhost
PidFile $TMP/apache2/apache2.pid
ErrorLog $TMP/apache2/error.log
LoadModule mpm_worker_module /usr/lib/apache2/modules/mod_mpm_worker.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
User nobody
Group nogroup
Listen 127.0.0.1:$S_PORT
DocumentRoot "$WWW"
<Directory "$WWW">
	Require all granted
</Directory>
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 60
StartServers 1
ServerLimit 1
ThreadsPerChild 64
MaxRequestWorkers 64
EnableSendfile Off
EOF
	sf_cgroup_make satfeed-corpus-apache2-worker || {
		echo "corpus.sh: cannot create a cgroup v2 for apache2" >&2
		return 1
	}
	CGS+=("$CG_DIR")
	start_bg bash -c 'echo $$ >"$1/cgroup.procs" && exec apache2 -DFOREGROUND -f "$2"' \
		_ "$CG_DIR" "$TMP/apache2/apache2.conf"
	S_SEL=(--cgroup "$CG_DIR") S_PROTO=http S_CONNS=16 S_START=1000
}

start_haproxy() { # two threads (nbthread: one per CPU), HTTP keep-alive
	local bport
	bport=$(sf_free_port)
	lighttpd_conf "$bport" "$TMP/hbackend.conf"
	pin_exec lighttpd -D -f "$TMP/hbackend.conf" &
	PIDS+=($!)
	sf_wait_port "$bport" || return 1
	S_PORT=$(sf_free_port)
	cat >"$TMP/haproxy.cfg" <<EOF
global
	maxconn 4096
defaults
	mode http
	timeout connect 5s
	timeout client 60s
	timeout server 60s
	timeout http-keep-alive 60s
frontend fe
	bind 127.0.0.1:$S_PORT
	default_backend be
backend be
	http-reuse always
	server s1 127.0.0.1:$bport
EOF
	start_bg haproxy -db -f "$TMP/haproxy.cfg"
	S_SEL=(--pid "$S_PID") S_PROTO=http S_CONNS=16 S_START=1000
}

start_nginx-proxy() {
	local bport
	bport=$(sf_free_port)
	lighttpd_conf "$bport" "$TMP/backend.conf"
	pin_exec lighttpd -D -f "$TMP/backend.conf" &
	PIDS+=($!)
	sf_wait_port "$bport" || return 1
	S_PORT=$(sf_free_port)
	nginx_conf nginx-proxy "$S_PORT" \
		'proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection "";' \
		"upstream backend { server 127.0.0.1:$bport; keepalive 32; }"
	start_nginx_cg nginx-proxy
	S_PROTO=http S_CONNS=16 S_START=1000
}

stop_all() { # stop the server(s) started for one entry, remove the cgroup
	local c
	sf_stop_children "${PIDS[@]}"
	PIDS=()
	for c in "${CGS[@]}"; do
		sf_cgroup_remove "$c" || echo "corpus.sh: cannot remove $c" >&2
	done
	CGS=()
}

run_server() { # NAME
	local name=$1 load
	ROOT=$ROOT_BASE-$name
	rm -f "$OUT/$name".{csv,csv.capacity,levels.jsonl,add.txt} \
		"$OUT/${name}_verdict.png"
	if [ -e "$ROOT/sf_info" ]; then
		echo "corpus.sh: $ROOT holds a stale load; unloading it" >&2
		sf_root_unload "$ROOT"
	fi
	"$B/satfeed-loader" --bpffs "$ROOT" --window "$WINDOW" load >&2
	S_SWEEP=()	# sweep.py options of this server's own
	"start_$name" || return 1
	sf_wait_port "$S_PORT" || {
		echo "corpus.sh: $name: nothing listens on port $S_PORT" >&2
		return 1
	}
	# discovery under a light load, as a new user would
	local extra=()
	[ "$S_PROTO" = http ] && extra=(--path /index.html)
	[ "$S_PROTO" = memcached ] && extra=(--keys 1000)
	"$SFLOAD" --proto "$S_PROTO" "${extra[@]}" --rate "$S_START" \
		--connections "$S_CONNS" --duration $((DISCOVER + 2)) \
		--warmup 0.3 -G --json "127.0.0.1:$S_PORT" >/dev/null &
	load=$!
	PIDS+=("$load")
	sleep 0.8
	if ! "$B/satfeedctl" --bpffs "$ROOT" add --auto "${S_SEL[@]}" \
			--seconds "$DISCOVER" >"$OUT/$name.add.txt" 2>&1; then
		echo "discovery failed: watching with every family member" \
			>>"$OUT/$name.add.txt"
		"$B/satfeedctl" --bpffs "$ROOT" add "${S_SEL[@]}" \
			>>"$OUT/$name.add.txt" 2>&1
	fi
	wait "$load" || echo "corpus.sh: $name: the discovery load failed" >&2
	sed 's/^/corpus.sh: '"$name"': /' "$OUT/$name.add.txt" >&2
	local who=("${S_SEL[@]}")
	python3 tests/validate/sweep.py --server "$name" --proto "$S_PROTO" \
		--port "$S_PORT" "${who[@]}" --path /index.html \
		--probe-port "$S_PORT" \
		--connections "$S_CONNS" --start-rate "$S_START" \
		--csv "$OUT/$name.csv" --bpffs "$ROOT" --ctl "$B/satfeedctl" \
		--sfload "$SFLOAD" --window "$WINDOW" \
		--raw "$OUT/$name.levels.jsonl" "${SWEEP[@]}" \
		${S_SWEEP[@]+"${S_SWEEP[@]}"} || return 1
	stop_all
	sf_root_unload "$ROOT"
	ROOT=""
}

failed=()
for s in "${SERVERS[@]}"; do
	echo "corpus.sh: === $s ===" >&2
	if ! run_server "$s"; then
		failed+=("$s")
		stop_all
		[ -n "$ROOT" ] && { sf_root_unload "$ROOT" || true; }
		ROOT=""
	fi
done

ok=()
for s in "${SERVERS[@]}"; do
	case " ${failed[*]} " in *" $s "*) ;; *) ok+=("$s") ;; esac
done
rc=0
if [ ${#ok[@]} -gt 0 ]; then
	name=corpus
	[ $HOLD = 1 ] && name=corpus-holdout
	args=(--outdir "$OUT" --servers "${ok[@]}" --window "$WINDOW"
		--md "$name.md")
	if [ $QUICK = 1 ]; then
		args+=(--quick)
	elif [ $HOLD = 0 ] && [ -z "$PICK" ]; then
		args+=(--doc docs/validation.md)
	fi
	python3 tests/validate/corpus_report.py "${args[@]}" \
		>"$OUT/$name.txt" || rc=1
	cat "$OUT/$name.txt"
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "corpus.sh: failed: ${failed[*]}" >&2
	rc=1
fi
echo "corpus.sh: done in $(($(date +%s) - T_START)) s; outputs in $OUT" >&2
exit $rc
