# shellcheck shell=bash
# tests/lib/traffic.sh - socket traffic from a controllable process.  Part
# of tests/lib.sh.
#
# sf_traffic_start runs tests/lib/traffic.py as a coprocess; it prints its pid
# ($TRAFFIC_PID) and then, for each command line, makes exactly N calls of
# one kind on a unix socketpair and answers "done CMD N":
#   sendto N    send() 1 byte (sendto(2)) + recv() it (recvfrom(2))
#   sendmsg N   sendmsg(2) 1 byte + recvmsg(2) it
#   write N     write(2) 1 byte on the socket + read(2) it
#   sendfile N  sendfile(2) 1 byte from a file to the socket + recv() it
#   sendfile_file N  sendfile(2) 1 byte from a file into another file
#   splice N    write(2) 1 byte to a pipe, splice(2) it to the socket,
#               recv() it
#   splice_pipe N  send() 1 byte, splice(2) it from the socket into the
#               pipe, read(2) it from the pipe
#   pselect N   select.select() with timeout 0 (glibc: pselect6(2))
#   poll N      select.poll().poll(0) (poll(2))
#   epoll N     select.epoll().poll(0) (epoll_wait(2))
#   sleep MS    sleep MS milliseconds
# Its own stdin/stdout are pipes, so the read/write it does on them are not
# socket calls and never count as samples.

sf_traffic_start() {
	coproc TRAFFIC { exec python3 -u "$SF_LIB/traffic.py"; }
	sf_track "$TRAFFIC_PID"
	local pid=
	read -r -t 10 pid <&"${TRAFFIC[0]}"
	[ "$pid" = "$TRAFFIC_PID" ]
}

# sf_traffic CMD N: run one command in the helper and wait for it.
sf_traffic() {
	local reply=
	echo "$1 $2" >&"${TRAFFIC[1]}" || return 1
	read -r -t 120 reply <&"${TRAFFIC[0]}"
	[ "$reply" = "done $1 $2" ]
}

sf_traffic_stop() {
	local pid=$TRAFFIC_PID
	[ -n "${TRAFFIC[1]:-}" ] && { echo exit >&"${TRAFFIC[1]}"; } 2>/dev/null
	[ -n "$pid" ] && sf_kill "$pid"
	return 0
}
