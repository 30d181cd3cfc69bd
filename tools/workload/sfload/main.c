// SPDX-License-Identifier: GPL-2.0
/*
 * sfload - an open-loop load generator for sfserver and memcached.
 *
 * It gives satfeed its ground truth: the real request rate a server served
 * and the latency it gave, measured without coordinated omission.
 *
 * Design:
 *  - The whole schedule is computed before the run: request i is due at
 *    start + sched[i] (CLOCK_MONOTONIC), at a fixed interval 1/rate or with
 *    exponential gaps (--poisson).  Requests go to connections round-robin
 *    (request i on connection i % C).
 *  - A sender thread sleeps with clock_nanosleep(TIMER_ABSTIME) until each
 *    deadline (timer slack set to 1 ns) and sends one request per send(2).
 *    When it is behind it sends at once, never skipping a request and never
 *    waiting for a reply (open loop).  It stamps the actual send time.
 *    With --no-pipeline (sf only) it keeps at most one request pending per
 *    connection, as a client without pipelining does: request i goes to the
 *    first connection from i % C on whose reply came back, and when none
 *    has, it waits.  A server that falls behind then never finds two
 *    requests in one receive, so it answers each with its own response in
 *    satfeed's sense (satfeed.h, SATFEED_STREAM_RESP).
 *  - The main thread is the receiver: one epoll set over all connections
 *    (plus a signalfd and the sender's "done" eventfd), one recv(2) per
 *    readable event, one CLOCK_MONOTONIC stamp per recv.  sf replies carry
 *    the request id; memcached answers in order per connection, so the k-th
 *    reply on connection c answers request c + k * C (this fixed mapping is
 *    the per-connection FIFO, with no shared queue).
 *  - The sender only writes sent[], the receiver only writes rcv[] and
 *    err[]; both are read after the sender is joined, so nothing is shared
 *    during the run except two atomic counters and flags.
 *  - After the run everything is computed from those arrays:
 *	measured requests = those scheduled in [warmup, warmup + duration);
 *	latency           = reply time - scheduled send time (and, separately,
 *			    - actual send time) of each measured request;
 *	achieved_rps      = successful replies to measured requests (received
 *			    before the drain ends) / window length.  Latency
 *			    jitter cannot move it, so it is exact while the
 *			    server keeps up;
 *	served_rps        = replies to any request received inside the
 *			    measured window (in receive time) / its length:
 *			    the rate the server really answered at, also past
 *			    saturation, where achieved_rps only shows the
 *			    backlog drained in time.  Its error is about
 *			    rate x (latency at the window's end - latency at
 *			    its start) / window length;
 *	sent_rps          = (measured requests sent - 1) / (last - first
 *			    actual send time);
 *	timeouts          = measured requests sent but unanswered when the
 *			    drain (--drain, 1 s) after the last send ends.
 *  - Latencies go into the log-linear histograms of sfload_hist.h (every
 *    sample counted, percentiles at most 0.79% above the true value).
 *  - The run is bounded: a sender that falls more than --drain behind
 *    the end of the schedule gives up (the rest count as unsent), and the
 *    receiver stops --drain after the sender.
 */
#include "sfload.h"

struct run run = { .done_fd = -1 };

int main(int argc, char **argv)
{
	unsigned char *value = NULL;
	struct result *res = NULL;
	pthread_t sender;
	unsigned int i;
	sigset_t mask;
	int epfd = -1, sigfd = -1, err, ret = EXIT_RUNTIME;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);

	run.conns = calloc(cfg.connections, sizeof(*run.conns));
	if (!run.conns)
		goto out_oom;
	for (i = 0; i < cfg.connections; i++) {
		run.conns[i].fd = -1;
		run.conns[i].index = i;
		run.conns[i].size = 65536;
		if (cfg.proto == PROTO_MEMCACHED)
			run.conns[i].size += 2 * (size_t)cfg.value_size;
		run.conns[i].buf = malloc(run.conns[i].size);
		if (!run.conns[i].buf)
			goto out_oom;
	}
	value = malloc(cfg.value_size);
	res = calloc(1, sizeof(*res));
	if (!value || !res || build_schedule())
		goto out_oom;
	for (i = 0; i < cfg.value_size; i++)
		value[i] = 'a' + i % 26;

	ret = open_connections();
	if (ret)
		goto out_free;
	ret = EXIT_RUNTIME;
	run.open_conns = cfg.connections;
	if (cfg.proto == PROTO_MEMCACHED && mc_preload(value))
		goto out_free;

	sf_block_stop_signals(&mask);
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	run.done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sigfd < 0 || run.done_fd < 0 || epfd < 0 ||
	    sf_epoll_add(epfd, sigfd, &run.stop) ||
	    sf_epoll_add(epfd, run.done_fd, &run.done_fd))
		goto out_syserr;
	for (i = 0; i < cfg.connections; i++)
		if (sf_epoll_add(epfd, run.conns[i].fd, &run.conns[i]))
			goto out_syserr;

	/* Give the sender thread time to start before the first deadline. */
	run.start = sf_now_ns() + NSEC / 50;
	run.hard_deadline = run.start + run.sched_end +
			    (uint64_t)(cfg.drain * NSEC);
	err = pthread_create(&sender, NULL, sender_run, value);
	if (err) {
		errno = err;
		goto out_syserr;
	}
	receive_loop(epfd, sigfd);
	atomic_store(&run.stop, 2);	/* the sender may still be blocked */
	pthread_join(sender, NULL);

	if (run.aborted)
		fprintf(stderr,
			"sfload: sending fell more than %.1f s behind the schedule and stopped: the rate is above what the server (or sfload itself, on this machine) can sustain\n",
			cfg.drain);
	analyse(res);
	if (cfg.json)
		report_json(res);
	else
		report_text(res);
	fflush(stdout);
	if (run.interrupted)
		ret = EXIT_INTERRUPTED;
	else
		ret = run.lost_conn || run.send_failed ? EXIT_RUNTIME : 0;
	goto out_free;

out_syserr:
	fprintf(stderr, "sfload: %s\n", strerror(errno));
	goto out_free;
out_oom:
	fprintf(stderr, "sfload: out of memory\n");
out_free:
	if (epfd >= 0)
		close(epfd);
	if (sigfd >= 0)
		close(sigfd);
	if (run.done_fd >= 0)
		close(run.done_fd);
	for (i = 0; run.conns && i < cfg.connections; i++) {
		if (run.conns[i].fd >= 0)
			close(run.conns[i].fd);
		free(run.conns[i].buf);
	}
	free(run.conns);
	free(run.sched);
	free(run.sent);
	free(run.rcv);
	free(run.err);
	free(value);
	free(res);
	return ret;
}
