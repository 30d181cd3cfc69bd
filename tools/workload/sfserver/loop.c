// SPDX-License-Identifier: GPL-2.0
/*
 * loop.c - a worker's epoll loop: connections' events, and on worker 0 the
 * listening socket (accept, back off when out of fds), the stop signals and
 * the --duration timer; the shared eventfd that stops every worker.
 */
#include "sfserver.h"

enum ev_kind tag_listen = EV_LISTEN;
enum ev_kind tag_signal = EV_SIGNAL;
enum ev_kind tag_timer = EV_TIMER;
enum ev_kind tag_backoff = EV_BACKOFF;
enum ev_kind tag_stop = EV_STOP;

int stop_fd = -1;
int listen_fd = -1;
int signal_fd = -1;
int timer_fd = -1;
int backoff_fd = -1;	/* accepts resume when it fires */
struct worker *workers;

/*
 * Listen (EPOLLIN) or not (0).  The listening socket is level-triggered: a
 * pending connection that cannot be accepted would wake worker 0 again at
 * once, forever.
 */
static void listen_events(uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = &tag_listen };

	if (epoll_ctl(workers[0].epfd, EPOLL_CTL_MOD, listen_fd, &ev))
		fprintf(stderr, "sfserver: epoll_ctl: %s\n", strerror(errno));
}

/* Out of file descriptors or memory: pause accepting for a while. */
static void accept_back_off(int err)
{
	static bool told;
	struct itimerspec its = {
		.it_value.tv_nsec = ACCEPT_BACKOFF_MS * 1000000L,
	};

	if (!told)
		fprintf(stderr, "sfserver: accept: %s; retrying every %d ms\n",
			strerror(err), ACCEPT_BACKOFF_MS);
	told = true;
	listen_events(0);
	if (timerfd_settime(backoff_fd, 0, &its, NULL)) {
		fprintf(stderr, "sfserver: timerfd: %s\n", strerror(errno));
		listen_events(EPOLLIN);
	}
}

static void accept_all(void)
{
	int fd;

	for (;;) {
		fd = accept4(listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				accept_back_off(errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				fprintf(stderr, "sfserver: accept: %s\n",
					strerror(errno));
			return;
		}
		conn_add(fd);	/* on failure, fd is closed and told */
	}
}

void request_stop(void)
{
	uint64_t one = 1;

	if (write(stop_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "sfserver: eventfd write: %s\n",
			strerror(errno));
}

void *worker_run(void *arg)
{
	struct epoll_event evs[MAX_EVENTS];
	struct worker *w = arg;
	struct signalfd_siginfo si;
	uint64_t ticks;
	enum ev_kind *kind;
	int i, n;

	for (;;) {
		n = epoll_wait(w->epfd, evs, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "sfserver: epoll_wait: %s\n",
				strerror(errno));
			request_stop();
			return NULL;
		}
		for (i = 0; i < n; i++) {
			kind = evs[i].data.ptr;
			switch (*kind) {
			case EV_CONN:
				conn_event((struct conn *)kind,
					   evs[i].events);
				break;
			case EV_LISTEN:
				accept_all();
				break;
			case EV_SIGNAL:
				if (read(signal_fd, &si, sizeof(si)) < 0)
					si.ssi_signo = 0;
				request_stop();
				break;
			case EV_TIMER:
				if (read(timer_fd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				request_stop();
				break;
			case EV_BACKOFF:
				if (read(backoff_fd, &ticks, sizeof(ticks)) < 0)
					ticks = 0;
				listen_events(EPOLLIN);
				break;
			case EV_STOP:
				return NULL;
			}
		}
	}
}
