#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The network-robustness sweep (the paper's Table II), run as /test.sh by the
# guest's /init when tests/vm/netem.sh boots the Debian 6.12 guest.  Busybox
# sh and awk only: there is no python in the guest.
#
#   1. loads veth and sch_netem (shipped uncompressed in /lib/satfeed/)
#   2. network namespace "srv" holding memcached (-t 1) on 10.77.0.1; the
#      root namespace is the client (sfload) on 10.77.0.2; one veth pair
#      joins them (sfc in the root ns, sfs in srv)
#   3. satfeed loaded under the default root (this is a throwaway guest),
#      memcached watched with --send sendmsg --recv read --poll epoll_wait
#   4. capacity search (rising rates until served < 95% of offered or a
#      timeout), without netem
#   5. the same offered rates (SF_LEVELS levels from 10% to 100% of that
#      capacity) twice: condition "plain", then condition "netem" with
#      `tc qdisc add dev <veth> root netem delay 10ms loss 1%` on the
#      client's veth (client->server) and, with SF_NETEM_DIRS=both (the
#      default), on the server's veth too (server->client)
#
# Per level, one console line (the host's tests/vm/netem.sh parses them):
#   NETEM-LEVEL cond=C level=I offered=R served=S rps_obs=O windows=N
#               p99_us=P timeouts=T
# RPS_obs of a level = W * (number of send windows) * 1e9 / sum(sum_ns) over
# the send windows that started after the load was seen running and closed
# while it was still running (satfeedctl show --json is polled during the
# level; windows are deduplicated by sequence number).  At the end, per
# condition, the least-squares fit of rps_obs against served:
#   NETEM-R2 cond=C n=N slope=A intercept=B r2=R
# Exit status 0 when every level produced windows and both fits exist; the
# R² value itself is reported, not judged.
#
# Settings (kernel command line words): SF_WINDOW=256, SF_LEVELS=6,
# SF_CONNS=8, SF_NETEM="delay 10ms loss 1%", SF_NETEM_DIRS=both|c2s,
# SF_CAPACITY=<rps> (skip the search), SF_CAP_START=400, SF_MIN_DUR=4,
# SF_MAX_DUR=10, SF_WINDOWS=6 (windows wanted per level), SF_ATTACH=auto.
set -u
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

WINDOW=${SF_WINDOW:-256}
LEVELS=${SF_LEVELS:-6}
CONNS=${SF_CONNS:-8}
NETEM=${SF_NETEM:-delay 10ms loss 1%}
DIRS=${SF_NETEM_DIRS:-both}
CAP_START=${SF_CAP_START:-400}
MIN_DUR=${SF_MIN_DUR:-4}
MAX_DUR=${SF_MAX_DUR:-10}
WANT_WIN=${SF_WINDOWS:-6}
ATTACH=${SF_ATTACH:-auto}
WARMUP=0.5
SRV=10.77.0.1
CLI=10.77.0.2
PORT=11211
# busybox sh runs its own applets first (ip, tc): use iproute2 by path
IP=/bin/ip
TC=/bin/tc

say() { echo "NETEM: $*"; }
die() { echo "NETEM-ERROR: $*"; exit 1; }

# --- network: namespace srv + veth pair ---
for m in veth sch_netem; do
	grep -q "^$m " /proc/modules || insmod /lib/satfeed/$m.ko ||
		die "insmod $m failed"
done
$IP netns add srv || die "ip netns add srv"
$IP link add sfc type veth peer name sfs || die "veth pair"
$IP link set sfs netns srv || die "move sfs to srv"
$IP addr add $CLI/24 dev sfc && $IP link set sfc up || die "sfc address"
$IP netns exec srv $IP link set lo up
$IP netns exec srv $IP addr add $SRV/24 dev sfs &&
	$IP netns exec srv $IP link set sfs up || die "sfs address"
ping -c 1 -W 2 $SRV >/dev/null 2>&1 || die "no ping from $CLI to $SRV"
say "veth sfc ($CLI, root ns) <-> sfs ($SRV, ns srv) up"

# --- memcached in srv, watched by satfeed ---
# memcached as root needs -u root, and -u needs a passwd entry
grep -q '^root:' /etc/passwd 2>/dev/null ||
	echo 'root:x:0:0:root:/root:/bin/sh' >> /etc/passwd
satfeed-loader --attach "$ATTACH" --window "$WINDOW" load || die "satfeed-loader load"
$IP netns exec srv memcached -u root -t 1 -p $PORT -l $SRV -U 0 -c 4096 &
MPID=$!
ok=0
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	if printf 'version\r\n' | nc -w 1 $SRV $PORT 2>/dev/null | grep -q VERSION; then
		ok=1
		break
	fi
	sleep 0.25
done
[ $ok = 1 ] || die "memcached does not answer on $SRV:$PORT"
satfeedctl add --pid $MPID --send sendmsg --recv read --poll epoll_wait ||
	die "satfeedctl add"
say "memcached pid $MPID watched; $(satfeedctl show --json | grep -o '"attach_mode":"[a-z_]*"')"

# run_level RATE DUR: runs sfload, polls satfeed; sets SERVED TIMEOUTS P99
# OBS NWIN
run_level() {
	rate=$1 dur=$2
	rm -f /tmp/snaps
	sfload --proto memcached --keys 100 --set-ratio 0.1 -c "$CONNS" \
		--rate "$rate" -d "$dur" -W $WARMUP -D 2 --json -G \
		--allow-addr=$SRV $SRV:$PORT > /tmp/lvl.json 2> /tmp/lvl.err &
	lp=$!
	while kill -0 $lp 2>/dev/null; do
		satfeedctl show --json --pid $MPID >> /tmp/snaps 2>/dev/null
		echo >> /tmp/snaps
		sleep 0.4
	done
	wait $lp
	lrc=$?
	if [ $lrc != 0 ]; then
		say "sfload rc=$lrc: $(tail -c 300 /tmp/lvl.err)"
		SERVED=0 TIMEOUTS=-1 P99=0 OBS=nan NWIN=0
		return 1
	fi
	set -- $(awk '
		function num(s, key,   i, t) {
			i = index(s, key); if (!i) return ""
			t = substr(s, i + length(key)); match(t, /^[-0-9.]+/)
			return substr(t, 1, RLENGTH)
		}
		{ print num($0, "\"served_rps\":"), num($0, "\"timeouts\":"),
			num($0, "\"p99_us\":") }' /tmp/lvl.json)
	SERVED=${1:-0} TIMEOUTS=${2:--1} P99=${3:-0}
	set -- $(awk -v R="$rate" -v W="$WINDOW" '
		function num(s, key,   i, t) {
			i = index(s, key); if (!i) return ""
			t = substr(s, i + length(key)); match(t, /^[-0-9.]+/)
			return substr(t, 1, RLENGTH)
		}
		/"send":\{/ {
			s = $0; s = substr(s, index(s, "\"send\":{"))
			j = index(s, "\"recv\":{"); if (j) s = substr(s, 1, j - 1)
			k = ++ns
			calls[k] = num(s, "\"calls\":") + 0
			last[k] = num(s, "\"last_ns\":") + 0
			n = split(s, parts, "\\{\"seq\":")
			for (i = 2; i <= n; i++) {
				p = parts[i]; st = num(p, "\"start_ns\":")
				if (st == "") continue
				q = p + 0; WS[q] = st + 0
				WE[q] = num(p, "\"end_ns\":") + 0
				WSUM[q] = num(p, "\"sum_ns\":") + 0
			}
		}
		END {
			# a snapshot shows the load running when the sends since the
			# previous one come at >= half the offered rate (and >= 20)
			t0 = -1; t1 = -1
			for (k = 2; k <= ns; k++) {
				dc = calls[k] - calls[k - 1]; dt = (last[k] - last[k - 1]) / 1e9
				if (dc >= 20 && dt > 0 && dc >= 0.5 * R * dt) {
					if (t0 < 0) t0 = last[k]
					t1 = last[k]
				}
			}
			nw = 0; sum = 0
			if (t0 >= 0)
				for (q in WS)
					if (WS[q] >= t0 && WE[q] <= t1) { nw++; sum += WSUM[q] }
			if (nw > 0) printf "%.3f %d\n", W * nw * 1e9 / sum, nw
			else print "nan 0"
		}' /tmp/snaps)
	OBS=${1:-nan} NWIN=${2:-0}
	return 0
}

# --- capacity (no netem) ---
rate=$CAP_START
CAP=${SF_CAPACITY:-}
if [ -z "$CAP" ]; then
	CAP=0
	i=0
	while [ $i -lt 12 ]; do
		i=$((i + 1))
		run_level "$rate" 1.5 || break
		good=$(awk -v s="$SERVED" -v r="$rate" -v t="$TIMEOUTS" \
			'BEGIN { print (s >= 0.95 * r && t == 0) ? 1 : 0 }')
		say "capacity probe offered $rate served $SERVED timeouts $TIMEOUTS p99 ${P99}us $([ $good = 1 ] && echo ok || echo SATURATED)"
		[ $good = 1 ] || break
		CAP=$rate
		rate=$(awk -v r="$rate" 'BEGIN { printf "%.0f", r * 1.4 }')
	done
fi
[ "$(awk -v c="$CAP" 'BEGIN { print (c > 0) }')" = 1 ] ||
	die "no capacity: memcached saturated at $CAP_START rps"
echo "NETEM-CAPACITY rps=$CAP"

# --- the two sweeps ---
set_netem() { # add|del
	if [ "$1" = add ]; then
		$TC qdisc add dev sfc root netem $NETEM || return 1
		if [ "$DIRS" = both ]; then
			$IP netns exec srv $TC qdisc add dev sfs root netem $NETEM || return 1
		fi
	else
		$TC qdisc del dev sfc root 2>/dev/null
		$IP netns exec srv $TC qdisc del dev sfs root 2>/dev/null
	fi
	return 0
}

bad=0
for cond in plain netem; do
	if [ $cond = netem ]; then
		set_netem add || die "tc qdisc add netem $NETEM failed"
		say "netem on sfc$([ "$DIRS" = both ] && echo ' and sfs'): $($TC qdisc show dev sfc)"
		ping -c 3 -W 2 $SRV | tail -1 | sed 's/^/NETEM: ping /'
	fi
	l=0
	while [ $l -lt "$LEVELS" ]; do
		l=$((l + 1))
		r=$(awk -v c="$CAP" -v l=$l -v n="$LEVELS" \
			'BEGIN { printf "%.0f", c * (0.1 + 0.9 * (l - 1) / (n - 1)) }')
		d=$(awk -v r="$r" -v w="$WINDOW" -v k="$WANT_WIN" -v lo="$MIN_DUR" -v hi="$MAX_DUR" \
			'BEGIN { d = (k + 2) * w / r; if (d < lo) d = lo; if (d > hi) d = hi; printf "%.2f", d }')
		# one retry: under 1% loss a lost SYN costs sfload's connect
		# its 1 s retransmission, and a starved emulator can close no window
		if ! run_level "$r" "$d" || [ "$NWIN" -lt 2 ]; then
			say "level $l: sfload failed or < 2 windows; retrying once"
			run_level "$r" "$d" || bad=1
		fi
		[ "$NWIN" -gt 0 ] || bad=1
		echo "NETEM-LEVEL cond=$cond level=$l offered=$r served=$SERVED rps_obs=$OBS windows=$NWIN p99_us=$P99 timeouts=$TIMEOUTS duration=$d" |
			tee -a /tmp/netem-levels
	done
	[ $cond = netem ] && set_netem del
done

satfeedctl remove --pid $MPID >/dev/null 2>&1
kill $MPID
satfeed-loader unload >/dev/null || bad=1

# --- R² per condition (least squares rps_obs = a * served + b) ---
awk '
	/^NETEM-LEVEL / {
		c = ""; x = ""; y = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "cond") c = kv[2]
			if (kv[1] == "served") x = kv[2]
			if (kv[1] == "rps_obs") y = kv[2]
		}
		if (y == "nan" || y == "") next
		n[c]++; X[c, n[c]] = x; Y[c, n[c]] = y; sx[c] += x; sy[c] += y
	}
	END {
		for (c in n) {
			m = n[c]; mx = sx[c] / m; my = sy[c] / m
			vxx = 0; vxy = 0; vyy = 0
			for (i = 1; i <= m; i++) {
				dx = X[c, i] - mx; dy = Y[c, i] - my
				vxx += dx * dx; vxy += dx * dy; vyy += dy * dy
			}
			if (m < 3 || vxx <= 0 || vyy <= 0) {
				print "NETEM-R2 cond=" c " n=" m " slope=nan intercept=nan r2=nan"
				continue
			}
			a = vxy / vxx; b = my - a * mx; res = 0
			for (i = 1; i <= m; i++) { e = Y[c, i] - (a * X[c, i] + b); res += e * e }
			printf "NETEM-R2 cond=%s n=%d slope=%.6f intercept=%.3f r2=%.6f\n", c, m, a, b, 1 - res / vyy
		}
	}' /tmp/netem-levels > /tmp/netem-r2
cat /tmp/netem-r2
[ "$(grep -c 'r2=[0-9.-]*$' /tmp/netem-r2)" = 2 ] || bad=1
grep -q 'r2=nan' /tmp/netem-r2 && bad=1
echo "NETEM-DONE bad=$bad"
exit $bad
