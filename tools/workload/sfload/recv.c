// SPDX-License-Identifier: GPL-2.0
/*
 * recv.c - the receiver: one epoll loop over the connections that stamps
 * every reply and matches it to its request, prints progress, and ends the
 * drain.
 */
#include "sfload.h"

static void reply_matched(uint64_t idx, uint64_t t, bool is_err)
{
	if (idx >= run.n || run.rcv[idx]) {
		run.bad_replies++;
		return;
	}
	run.rcv[idx] = t;
	run.err[idx] = is_err;
	run.nmatched++;
}

static void conn_lost(int epfd, struct conn *c, const char *why)
{
	if (!atomic_load(&run.stop))
		fprintf(stderr, "sfload: connection %u: %s\n", c->index + 1,
			why);
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->closed = true;
	if (!atomic_load(&run.stop))
		run.lost_conn = true;
	run.open_conns--;
}

static void conn_readable(int epfd, struct conn *c)
{
	size_t off = 0, used;
	bool is_err, miss = false;
	uint64_t t, idx;
	ssize_t n;
	int r;

	if (c->len == c->size) {
		run.bad_replies++;
		conn_lost(epfd, c, "reply too long");
		return;
	}
	n = recv(c->fd, c->buf + c->len, c->size - c->len, MSG_DONTWAIT);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			conn_lost(epfd, c, strerror(errno));
		return;
	}
	if (n == 0) {
		conn_lost(epfd, c, "closed by the server");
		return;
	}
	t = sf_now_ns();
	if (cfg.proto == PROTO_DNS) {
		/* one datagram, one answer: nothing carries over */
		if (dns_parse(c->buf, n, &idx, &is_err) == 1)
			reply_matched(idx, t, is_err);
		else
			run.bad_replies++;
		return;
	}
	c->len += n;
	if (cfg.proto == PROTO_SF) {
		for (; c->len - off >= SF_MSG_SIZE; off += SF_MSG_SIZE) {
			reply_matched(sf_msg_id(c->buf + off), t, false);
			/* --no-pipeline: its one request is answered */
			atomic_store_explicit(&c->pending, false,
					      memory_order_release);
		}
	} else {
		while ((r = cfg.proto == PROTO_HTTP ?
			    http_parse(c->buf + off, c->len - off, &used,
				       &is_err) :
			    mc_parse(c->buf + off, c->len - off, &used,
				     &is_err, &miss)) == 1) {
			reply_matched(c->index +
				      c->nrecv++ * (uint64_t)cfg.connections,
				      t, is_err);
			run.misses += miss;
			off += used;
		}
		if (r < 0) {
			run.bad_replies++;
			conn_lost(epfd, c, cfg.proto == PROTO_HTTP ?
				  "reply is not an HTTP/1.x response with a Content-Length" :
				  "reply is not memcached text protocol");
			return;
		}
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
}

static void print_progress(uint64_t now, uint64_t *last_sent,
			   uint64_t *last_rcv, uint64_t *last_t)
{
	uint64_t sent = atomic_load_explicit(&run.nsent, memory_order_relaxed);
	double dt = (now - *last_t) / 1e9;

	if (now < run.start)
		return;
	fprintf(stderr,
		"sfload: %6.1f s  sent %llu (%.0f/s)  replies %llu (%.0f/s)  outstanding %lld\n",
		(now - run.start) / 1e9, (unsigned long long)sent,
		(sent - *last_sent) / dt, (unsigned long long)run.nmatched,
		(run.nmatched - *last_rcv) / dt,
		(long long)(sent - run.nmatched));
	*last_sent = sent;
	*last_rcv = run.nmatched;
	*last_t = now;
}

void receive_loop(int epfd, int sigfd)
{
	struct epoll_event evs[MAX_EVENTS];
	uint64_t next_progress = run.start + NSEC, drain_end = UINT64_MAX;
	uint64_t last_sent = 0, last_rcv = 0, last_t = run.start;
	uint64_t now, wake, nsent, ticks;
	struct signalfd_siginfo si;
	int i, n, timeout_ms;
	void *tag;

	for (;;) {
		now = sf_now_ns();
		if (drain_end == UINT64_MAX &&
		    atomic_load_explicit(&run.sender_done,
					 memory_order_acquire))
			drain_end = run.sender_end +
				    (uint64_t)(cfg.drain * NSEC);
		if (drain_end != UINT64_MAX) {
			nsent = atomic_load(&run.nsent);
			if (run.nmatched >= nsent || now >= drain_end ||
			    !run.open_conns)
				break;
		}
		if (atomic_load(&run.stop) > 1)
			break;

		wake = now + NSEC / 5;
		if (cfg.progress && next_progress < wake)
			wake = next_progress;
		if (drain_end < wake)
			wake = drain_end;
		timeout_ms = wake > now ? (wake - now + 999999) / 1000000 : 0;
		n = epoll_wait(epfd, evs, MAX_EVENTS, timeout_ms);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "sfload: epoll_wait: %s\n",
				strerror(errno));
			atomic_store(&run.stop, 2);
			break;
		}
		for (i = 0; i < n; i++) {
			tag = evs[i].data.ptr;
			if (tag == &run.done_fd) {
				if (read(run.done_fd, &ticks,
					 sizeof(ticks)) < 0)
					ticks = 0;
			} else if (tag == &run.stop) {
				if (read(sigfd, &si, sizeof(si)) > 0) {
					run.interrupted = true;
					atomic_fetch_add(&run.stop, 1);
				}
			} else {
				conn_readable(epfd, tag);
			}
		}
		now = sf_now_ns();
		if (cfg.progress && now >= next_progress) {
			print_progress(now, &last_sent, &last_rcv, &last_t);
			while (next_progress <= now)
				next_progress += NSEC;
		}
	}
}
