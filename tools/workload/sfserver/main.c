// SPDX-License-Identifier: GPL-2.0
/*
 * sfserver - the epoll request/response server bundled with satfeed.
 *
 * satfeed infers a server's request rate from the gaps between its send
 * system calls, so this server is built to make one send-family system call
 * per request, never more and never fewer: requests are parsed out of every
 * receive buffer (they may arrive coalesced or split), and each complete
 * request gets exactly one sendto(2) (or write(2), or sendmsg(2), see --io).
 * Responses are never batched and writev(2) is never used.
 *
 * Design:
 *  - N worker threads (--threads), each with its own epoll instance and its
 *    own connections.  The main thread is worker 0.  Worker 0 also owns the
 *    listening socket, a signalfd (SIGINT, SIGTERM) and a timerfd
 *    (--duration) in its epoll set: it accepts connections and hands them out
 *    round-robin by adding them to the chosen worker's epoll set
 *    (epoll_ctl(2) is thread safe).  With --threads 1 the server is a single
 *    thread running one plain epoll loop, like the TailBench servers.
 *  - A shared eventfd is in every worker's epoll set; writing it stops all
 *    workers.  epoll_wait(2) is always called with an infinite timeout, so
 *    an idle server makes no system calls at all (no periodic wake-ups that
 *    would pollute satfeed's poll stream).
 *  - Level-triggered epoll; a readable connection is read until EAGAIN, or
 *    for at most MAX_READS_PER_EVENT reads (512 requests) so that a client
 *    sending faster than the server can serve cannot starve the worker's
 *    other connections (memcached's reqs_per_event does the same); the
 *    level-triggered epoll_wait(2) reports the connection again.
 *  - If a send would block (the client stopped reading), the unsent part of
 *    that one response is kept, the connection switches from EPOLLIN to
 *    EPOLLOUT, and processing of its remaining buffered requests resumes once
 *    the response is out.  Only then can one response take two send calls.
 *
 *  - --proxy: each request is forwarded to a backend over a connection
 *    sfserver opened itself, the backend's answer returned (proxy.c).
 *  - On exit it reports its own service time per response, measured as
 *    satfeed's engine defines it (conn.c), for tests to compare.
 *
 * Protocol "sf" (little endian, 32 bytes each way):
 *	__le64 id; __le64 send_time_ns; __le32 work_us; __le32 flags;
 *	__le64 reserved;
 * The response echoes id and send_time_ns; work_us holds the service time
 * actually spun, flags and reserved are zero (tools/workload/sf_proto.h).
 */
#include "sfserver.h"

int main(int argc, char **argv)
{
	unsigned long long start, served = 0, conns = 0, svc_n = 0, svc_ns = 0;
	struct itimerspec its = { 0 };
	unsigned int i, nstarted = 0;
	sigset_t mask;
	int port, err, ret = 1;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);

	/* Block the stop signals in every thread; worker 0 reads signal_fd. */
	if (sf_block_stop_signals(&mask)) {
		fprintf(stderr, "sfserver: cannot block signals\n");
		return 1;
	}

	workers = calloc(cfg.threads, sizeof(*workers));
	if (!workers) {
		fprintf(stderr, "sfserver: out of memory\n");
		return 1;
	}
	for (i = 0; i < cfg.threads; i++) {
		workers[i].id = i;
		workers[i].epfd = -1;
		pthread_mutex_init(&workers[i].lock, NULL);
	}

	port = open_listener();
	if (port < 0)
		goto out_close_fds;
	signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	backoff_fd = timerfd_create(CLOCK_MONOTONIC,
				    TFD_NONBLOCK | TFD_CLOEXEC);
	if (signal_fd < 0 || stop_fd < 0 || timer_fd < 0 || backoff_fd < 0) {
		fprintf(stderr, "sfserver: cannot create event fds: %s\n",
			strerror(errno));
		goto out_close_fds;
	}
	for (i = 0; i < cfg.threads; i++) {
		workers[i].epfd = epoll_create1(EPOLL_CLOEXEC);
		if (workers[i].epfd < 0 ||
		    sf_epoll_add(workers[i].epfd, stop_fd, &tag_stop)) {
			fprintf(stderr, "sfserver: epoll: %s\n",
				strerror(errno));
			goto out_close_fds;
		}
	}
	if (sf_epoll_add(workers[0].epfd, listen_fd, &tag_listen) ||
	    sf_epoll_add(workers[0].epfd, signal_fd, &tag_signal) ||
	    sf_epoll_add(workers[0].epfd, timer_fd, &tag_timer) ||
	    sf_epoll_add(workers[0].epfd, backoff_fd, &tag_backoff)) {
		fprintf(stderr, "sfserver: epoll: %s\n", strerror(errno));
		goto out_close_fds;
	}
	if (cfg.duration > 0) {
		its.it_value.tv_sec = (time_t)cfg.duration;
		its.it_value.tv_nsec = (long)((cfg.duration -
			(double)its.it_value.tv_sec) * 1e9);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
		if (timerfd_settime(timer_fd, 0, &its, NULL)) {
			fprintf(stderr, "sfserver: timerfd: %s\n",
				strerror(errno));
			goto out_close_fds;
		}
	}

	if (cfg.port_file && write_port_file(cfg.port_file, port)) {
		fprintf(stderr, "sfserver: cannot write port file %s: %s\n",
			cfg.port_file, strerror(errno));
		goto out_close_fds;
	}
	if (!cfg.quiet) {
		printf(strchr(cfg.addr, ':') ? "listening on [%s]:%d\n" :
		       "listening on %s:%d\n", cfg.addr, port);
		fflush(stdout);
	}

	start = sf_now_ns();
	if (io_is_uring(cfg.io)) {
		if (!uring_run(&served, &conns))
			ret = 0;
		goto summary;
	}
	for (i = 1; i < cfg.threads; i++) {
		err = pthread_create(&workers[i].thread, NULL, worker_run,
				     &workers[i]);
		if (err) {
			fprintf(stderr, "sfserver: pthread_create: %s\n",
				strerror(err));
			request_stop();
			break;
		}
		workers[i].started = true;
		nstarted++;
	}
	if (nstarted == cfg.threads - 1) {
		worker_run(&workers[0]);
		ret = 0;
	}
	for (i = 1; i < cfg.threads; i++)
		if (workers[i].started)
			pthread_join(workers[i].thread, NULL);

	for (i = 0; i < cfg.threads; i++) {
		served += workers[i].served;
		conns += workers[i].accepted;
		svc_n += workers[i].svc_n;
		svc_ns += workers[i].svc_ns;
	}
summary:
	if (!ret) {
		printf("sfserver: served %llu requests on %llu connection%s in %.3f s\n",
		       served, conns, conns == 1 ? "" : "s",
		       (sf_now_ns() - start) / 1e9);
		if (!io_is_uring(cfg.io))
			printf("sfserver: service time: %llu responses, mean %llu ns, sum %llu ns\n",
			       svc_n, svc_n ? svc_ns / svc_n : 0, svc_ns);
		fflush(stdout);
	}

out_close_fds:
	for (i = 0; i < cfg.threads; i++) {
		while (workers[i].conns)
			conn_close(workers[i].conns);
		if (workers[i].epfd >= 0)
			close(workers[i].epfd);
		pthread_mutex_destroy(&workers[i].lock);
	}
	free(workers);
	if (timer_fd >= 0)
		close(timer_fd);
	if (backoff_fd >= 0)
		close(backoff_fd);
	if (stop_fd >= 0)
		close(stop_fd);
	if (signal_fd >= 0)
		close(signal_fd);
	if (listen_fd >= 0)
		close(listen_fd);
	return ret;
}
