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
 * Protocol "sf" (little endian, 32 bytes each way):
 *	__le64 id; __le64 send_time_ns; __le32 work_us; __le32 flags;
 *	__le64 reserved;
 * The response echoes id and send_time_ns; work_us holds the service time
 * actually spun, flags and reserved are zero (tools/workload/sf_proto.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sf_proto.h"
#define SF_CLI_PROG "sfserver"
#include "sf_cli.h"

#define SF_MAX_THREADS		256
#define SF_DEFAULT_PORT		9700
#define CONN_BUF_SIZE		4096		/* 128 requests */
#define MAX_EVENTS		64
#define MAX_READS_PER_EVENT	16
/* out of file descriptors: stop accepting this long, then try again */
#define ACCEPT_BACKOFF_MS	100

#define EXIT_BADARGS		2

enum io_mode {
	IO_SENDTO,	/* recvfrom(2) / sendto(2) */
	IO_RW,		/* read(2) / write(2) */
	IO_MSG,		/* recvmsg(2) / sendmsg(2) */
};

/* Tags for epoll_event.data.ptr that are not connections. */
enum ev_kind {
	EV_LISTEN,
	EV_SIGNAL,
	EV_TIMER,
	EV_BACKOFF,
	EV_STOP,
	EV_CONN,
};

struct conn {
	enum ev_kind kind;	/* EV_CONN; must be first */
	int fd;
	struct worker *w;
	struct conn *prev, *next;
	size_t in_len;		/* bytes buffered in in[] */
	size_t in_off;		/* next unparsed byte in in[] */
	size_t out_len;		/* unsent bytes of one response in out[] */
	size_t out_off;
	unsigned char out[SF_MSG_SIZE];
	unsigned char in[CONN_BUF_SIZE];
};

struct worker {
	int id;
	int epfd;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;	/* protects conns (acceptor inserts) */
	struct conn *conns;
	unsigned long long served;
	unsigned long long accepted;
};

struct config {
	const char *addr;
	unsigned int port;
	const char *port_file;
	unsigned int work_us;
	unsigned int threads;
	double duration;
	enum io_mode io;
	bool quiet;
	struct sockaddr_storage ss;	/* --addr and --port, parsed */
	socklen_t sslen;
};

static struct config cfg = {
	.addr = "127.0.0.1",
	.port = SF_DEFAULT_PORT,
	.threads = 1,
	.io = IO_SENDTO,
};

static enum ev_kind tag_listen = EV_LISTEN;
static enum ev_kind tag_signal = EV_SIGNAL;
static enum ev_kind tag_timer = EV_TIMER;
static enum ev_kind tag_backoff = EV_BACKOFF;
static enum ev_kind tag_stop = EV_STOP;

static int stop_fd = -1;
static int listen_fd = -1;
static int signal_fd = -1;
static int timer_fd = -1;
static int backoff_fd = -1;	/* accepts resume when it fires */
static struct worker *workers;
static unsigned int next_worker;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: sfserver [OPTIONS]\n"
"\n"
"The epoll request/response server bundled with satfeed.  It answers every\n"
"complete request with exactly one send-family system call, so that the\n"
"number of sends equals the number of requests served.\n"
"\n"
"Protocol \"sf\": 32-byte requests {le64 id, le64 send_time_ns, le32 work_us,\n"
"le32 flags, le64 reserved}; each is answered by a 32-byte response echoing\n"
"id and send_time_ns.  Requests may arrive coalesced or split over reads.\n"
"\n"
"Options:\n"
"  -a, --addr ADDR       numeric IPv4 or IPv6 address to listen on\n"
"                        (default 127.0.0.1)\n"
"  -p, --port PORT       TCP port; 0 picks an ephemeral port (default %d)\n"
"  -P, --port-file PATH  after listen(2), write the bound port number and a\n"
"                        newline to PATH (a new file beside it, renamed)\n"
"  -w, --work-us N       busy-spin N microseconds per request to simulate\n"
"                        service time (default 0, at most %u).  A request\n"
"                        whose own work_us field is non-zero spins that long\n"
"                        instead, at most %u us too\n"
"  -t, --threads N       worker threads, each with its own epoll instance;\n"
"                        thread 0 accepts and hands connections out\n"
"                        round-robin (default 1, at most %d)\n"
"  -i, --io MODE         system calls used on connections (default sendto):\n"
"                          sendto  recvfrom(2) and sendto(2)\n"
"                          rw      read(2) and write(2)\n"
"                          msg     recvmsg(2) and sendmsg(2)\n"
"  -d, --duration SECS   exit after SECS seconds (decimals allowed; default\n"
"                        0: run until SIGINT or SIGTERM)\n"
"  -q, --quiet           do not print the \"listening on\" line\n"
"  -h, --help            show this help and exit\n"
"\n"
"Output (stdout): \"listening on ADDR:PORT\" once listening, and on exit one\n"
"summary line: \"sfserver: served N requests on C connections in T s\".\n"
"\n"
"Exit status:\n"
"  0  normal exit (SIGINT, SIGTERM or --duration elapsed)\n"
"  1  runtime error (cannot listen, out of memory, ...)\n"
"  2  bad command line\n"
"\n"
"Examples:\n"
"  sfserver --port 0 --port-file /tmp/sf.port\n"
"  sfserver --port 9700 --threads 2 --work-us 20 --io rw\n"
"  sfserver --duration 30 & sfload --rate 10000 127.0.0.1:9700\n",
		SF_DEFAULT_PORT, SF_MAX_WORK_US, SF_MAX_WORK_US,
		SF_MAX_THREADS);
}

static void parse_addr(void)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg.ss;

	if (inet_pton(AF_INET, cfg.addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(cfg.port);
		cfg.sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, cfg.addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(cfg.port);
		cfg.sslen = sizeof(*sin6);
	} else {
		sf_die_usage("invalid --addr '%s': expected a numeric IPv4 or IPv6 address",
			     cfg.addr);
	}
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr",	required_argument, NULL, 'a' },
		{ "port",	required_argument, NULL, 'p' },
		{ "port-file",	required_argument, NULL, 'P' },
		{ "work-us",	required_argument, NULL, 'w' },
		{ "threads",	required_argument, NULL, 't' },
		{ "io",		required_argument, NULL, 'i' },
		{ "duration",	required_argument, NULL, 'd' },
		{ "quiet",	no_argument,	   NULL, 'q' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:P:w:t:i:d:qh", opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			cfg.addr = optarg;
			break;
		case 'p':
			cfg.port = sf_parse_ull("--port", optarg, 0, 65535);
			break;
		case 'P':
			cfg.port_file = optarg;
			break;
		case 'w':
			cfg.work_us = sf_parse_ull("--work-us", optarg, 0,
						   SF_MAX_WORK_US);
			break;
		case 't':
			cfg.threads = sf_parse_ull("--threads", optarg, 1,
						   SF_MAX_THREADS);
			break;
		case 'i':
			if (!strcmp(optarg, "sendto"))
				cfg.io = IO_SENDTO;
			else if (!strcmp(optarg, "rw"))
				cfg.io = IO_RW;
			else if (!strcmp(optarg, "msg"))
				cfg.io = IO_MSG;
			else
				sf_die_usage("invalid --io '%s': expected sendto, rw or msg",
					     optarg);
			break;
		case 'd':
			cfg.duration = sf_parse_double("--duration", optarg, 0,
						       false, 1e7);
			break;
		case 'q':
			cfg.quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			sf_die_usage("option '%s' needs an argument",
				     argv[optind - 1]);
			break;
		default:
			sf_die_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		sf_die_usage("unexpected argument '%s'", argv[optind]);
	parse_addr();
}

/* Busy-spin: clock_gettime() is a vDSO call, so this makes no system call. */
static void spin_us(unsigned int us)
{
	unsigned long long end = sf_now_ns() + us * 1000ull;

	while (sf_now_ns() < end)
			 ;
}

static ssize_t conn_recv(int fd, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	switch (cfg.io) {
	case IO_RW:
		return read(fd, buf, len);
	case IO_MSG:
		return recvmsg(fd, &msg, 0);
	default:
		return recvfrom(fd, buf, len, 0, NULL, NULL);
	}
}

static ssize_t conn_send(int fd, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	switch (cfg.io) {
	case IO_RW:
		return write(fd, buf, len);	/* SIGPIPE is ignored */
	case IO_MSG:
		return sendmsg(fd, &msg, MSG_NOSIGNAL);
	default:
		return sendto(fd, buf, len, MSG_NOSIGNAL, NULL, 0);
	}
}

static int conn_set_events(struct conn *c, unsigned int events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(c->w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_close(struct conn *c)
{
	struct worker *w = c->w;

	pthread_mutex_lock(&w->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&w->lock);
	close(c->fd);
	free(c);
}

/*
 * Send what is left of the current response.  Returns 1 when it is all out,
 * 0 when the socket is full (the rest stays in c->out), -1 on error.
 */
static int conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = conn_send(c->fd, c->out + c->out_off,
			      c->out_len - c->out_off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		c->out_off += n;
	}
	c->out_len = 0;
	c->out_off = 0;
	return 1;
}

/*
 * Serve every complete request buffered in c->in, one send per request.
 * Returns 1 when all were answered, 0 when a send would block, -1 on error.
 */
static int conn_serve(struct conn *c)
{
	const unsigned char *req;
	unsigned int work;
	int ret;

	while (c->in_len - c->in_off >= SF_MSG_SIZE) {
		req = c->in + c->in_off;
		work = sf_msg_work_us(req);
		if (!work)
			work = cfg.work_us;
		if (work > SF_MAX_WORK_US)
			work = SF_MAX_WORK_US;
		if (work)
			spin_us(work);

		sf_msg_put(c->out, sf_msg_id(req), sf_msg_send_time(req), work);
		c->out_len = SF_MSG_SIZE;
		c->out_off = 0;
		c->in_off += SF_MSG_SIZE;
		c->w->served++;

		ret = conn_flush(c);
		if (ret <= 0)
			return ret;
	}
	/* Keep the partial request, if any, at the start of the buffer. */
	if (c->in_off) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	return 1;
}

/* Returns -1 when the connection must be closed. */
static int conn_readable(struct conn *c)
{
	unsigned int reads;
	ssize_t n;
	int ret;

	for (reads = 0; reads < MAX_READS_PER_EVENT; reads++) {
		n = conn_recv(c->fd, c->in + c->in_len,
			      sizeof(c->in) - c->in_len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		if (n == 0)
			return -1;	/* peer closed */
		c->in_len += n;
		ret = conn_serve(c);
		if (ret < 0)
			return -1;
		if (ret == 0)
			/* Blocked on send: stop reading until it drains. */
			return conn_set_events(c, EPOLLOUT);
	}
	return 0;
}

static int conn_writable(struct conn *c)
{
	int ret;

	ret = conn_flush(c);
	if (ret <= 0)
		return ret;
	ret = conn_serve(c);
	if (ret <= 0)
		return ret;
	return conn_set_events(c, EPOLLIN);
}

static void conn_event(struct conn *c, unsigned int events)
{
	int ret;

	if (c->out_len)
		ret = (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) ?
		      conn_writable(c) : 0;
	else
		ret = conn_readable(c);
	if (ret < 0)
		conn_close(c);
}

/* Hand a new connection to the next worker, round-robin. */
static int conn_add(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct worker *w = &workers[next_worker];
	struct conn *c;
	int one = 1;

	next_worker = (next_worker + 1) % cfg.threads;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c = calloc(1, sizeof(*c));
	if (!c)
		return -1;
	c->kind = EV_CONN;
	c->fd = fd;
	c->w = w;

	pthread_mutex_lock(&w->lock);
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->accepted++;
	pthread_mutex_unlock(&w->lock);

	ev.data.ptr = c;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		fprintf(stderr, "sfserver: epoll_ctl: %s\n", strerror(errno));
		conn_close(c);
	}
	return 0;
}

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
		if (conn_add(fd)) {
			fprintf(stderr, "sfserver: out of memory\n");
			close(fd);
		}
	}
}

static void request_stop(void)
{
	uint64_t one = 1;

	if (write(stop_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "sfserver: eventfd write: %s\n",
			strerror(errno));
}

static void *worker_run(void *arg)
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

static int epoll_add(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * Write the port to path atomically: a new file that mkstemp() makes beside
 * it (unpredictable name, O_EXCL: no symlink is followed), renamed over
 * path (which replaces a symlink there rather than following it).
 */
static int write_port_file(const char *path, unsigned int port)
{
	char tmp[PATH_MAX], text[16], *slash;
	const char *base = path;
	int fd, len, saved;
	ssize_t written;

	slash = strrchr(path, '/');
	if (slash)
		base = slash + 1;
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX",
		     (int)(base - path), path, base) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	len = snprintf(text, sizeof(text), "%u\n", port);
	if (fchmod(fd, 0644))
		goto remove_tmp;
	written = write(fd, text, len);
	if (written != len) {
		if (written >= 0)
			errno = EIO;
		goto remove_tmp;
	}
	if (close(fd)) {
		fd = -1;
		goto remove_tmp;
	}
	fd = -1;
	if (rename(tmp, path))
		goto remove_tmp;
	return 0;
remove_tmp:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = saved;
	return -1;
}

/* Returns the bound port, or -1 with a message printed. */
static int open_listener(void)
{
	struct sockaddr_storage ss = cfg.ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = cfg.sslen;
	int one = 1;

	listen_fd = socket(ss.ss_family,
			   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		goto err;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(listen_fd, (struct sockaddr *)&ss, len))
		goto err;
	if (listen(listen_fd, SOMAXCONN))
		goto err;
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &len))
		goto err;
	return ntohs(ss.ss_family == AF_INET ? sin->sin_port :
		     sin6->sin6_port);
err:
	fprintf(stderr, "sfserver: cannot listen on %s port %u: %s\n",
		cfg.addr, cfg.port, strerror(errno));
	return -1;
}

int main(int argc, char **argv)
{
	unsigned long long start, served = 0, conns = 0;
	struct itimerspec its = { 0 };
	unsigned int i, nstarted = 0;
	sigset_t mask;
	int port, err, ret = 1;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);

	/* Block the stop signals in every thread; worker 0 reads signal_fd. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL)) {
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
		    epoll_add(workers[i].epfd, stop_fd, &tag_stop)) {
			fprintf(stderr, "sfserver: epoll: %s\n",
				strerror(errno));
			goto out_close_fds;
		}
	}
	if (epoll_add(workers[0].epfd, listen_fd, &tag_listen) ||
	    epoll_add(workers[0].epfd, signal_fd, &tag_signal) ||
	    epoll_add(workers[0].epfd, timer_fd, &tag_timer) ||
	    epoll_add(workers[0].epfd, backoff_fd, &tag_backoff)) {
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
	}
	if (!ret) {
		printf("sfserver: served %llu requests on %llu connection%s in %.3f s\n",
		       served, conns, conns == 1 ? "" : "s",
		       (sf_now_ns() - start) / 1e9);
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
