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
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sf_proto.h"
#define SF_CLI_PROG "sfload"
#include "sf_cli.h"
#include "sfload_hist.h"

#define NSEC			1000000000ull
#define MAX_CONNECTIONS		1024
#define MAX_REQUESTS		50000000ull
#define MAX_RATE		1e8
#define MAX_VALUE_SIZE		(512 * 1024)
#define MC_MAX_LINE		512
#define CONNECT_TIMEOUT_NS	(2 * NSEC)
#define PRELOAD_BATCH		256
#define SEND_TIMEOUT_US		100000	/* sender re-checks its deadline */
#define SLEEP_CHUNK_NS		(NSEC / 10)
#define MAX_EVENTS		64

#define EXIT_RUNTIME		1
#define EXIT_BADARGS		2
#define EXIT_INTERRUPTED	130

enum proto {
	PROTO_SF,
	PROTO_MEMCACHED,
};

struct config {
	double rate;
	unsigned int connections;
	double duration;
	double warmup;
	double drain;
	enum proto proto;
	unsigned int work_us;
	unsigned int keys;
	double set_ratio;
	unsigned int value_size;
	bool poisson;
	uint64_t spin_ns;
	uint64_t seed;
	bool json;
	int progress;		/* -1: auto, 0: off, 1: on */
	bool allow_any;
	const char *allow_addr;
	const char *target;
	char host[256];
	char port[16];
};

struct conn {
	int fd;
	unsigned int index;
	bool send_dead;		/* sender only */
	bool closed;		/* receiver only, as are the fields below */
	uint64_t nrecv;		/* replies seen (memcached matching) */
	size_t len;
	size_t size;
	unsigned char *buf;
};

struct run {
	uint64_t n;		/* scheduled requests */
	uint64_t *sched;	/* due time, ns after start */
	uint64_t *sent;		/* actual send time, 0 = not sent (sender) */
	uint64_t *rcv;		/* reply time, 0 = none (receiver) */
	uint8_t *err;		/* 1 = error reply (receiver) */
	uint64_t start;
	uint64_t sched_end;	/* warmup + duration, ns */
	uint64_t hard_deadline;
	struct conn *conns;
	int done_fd;
	/* Written by the sender, read after sender_done (acquire). */
	uint64_t stopped_at;	/* first request not attempted */
	uint64_t sender_end;
	bool aborted;
	bool send_failed;
	atomic_uint_least64_t nsent;
	atomic_bool sender_done;
	atomic_int stop;	/* 1: stop sending, 2: stop everything */
	/* Receiver only. */
	uint64_t nmatched;
	uint64_t bad_replies;
	uint64_t misses;
	unsigned int open_conns;
	bool lost_conn;
	bool interrupted;
};

struct result {
	double window_s;
	uint64_t requests;
	uint64_t sent;
	uint64_t replies;
	uint64_t errors;
	uint64_t error_replies;
	uint64_t unsent;
	uint64_t timeouts;
	uint64_t window_replies;
	double scheduled_rps;
	double sent_rps;
	double achieved_rps;
	double served_rps;
	struct hist lat;	/* from scheduled send time */
	struct hist lat_send;	/* from actual send time */
};

static struct config cfg = {
	.connections = 1,
	.duration = 5.0,
	.warmup = 0.5,
	.drain = 1.0,
	.proto = PROTO_SF,
	.keys = 100,
	.set_ratio = 0.1,
	.value_size = 32,
	.seed = 1,
	.progress = -1,
};

static struct run run = { .done_fd = -1 };

static void usage(FILE *f)
{
	fprintf(f,
"Usage: sfload --rate R [OPTIONS] HOST:PORT\n"
"\n"
"Open-loop load generator: sends requests to HOST:PORT on a precomputed\n"
"schedule, whether or not earlier requests were answered, and measures the\n"
"rate the server really answered at and the latency of every request from\n"
"the time it was scheduled to be sent (so a stalled server cannot hide its\n"
"latency by slowing the client down: no coordinated omission).\n"
"\n"
"HOST:PORT is a numeric address or a name, e.g. 127.0.0.1:9700,\n"
"[::1]:11211, localhost:9700.  Only loopback targets (127.0.0.0/8, ::1) are\n"
"accepted unless --allow-addr is given.\n"
"\n"
"Options:\n"
"  -r, --rate R          offered load, requests per second over all\n"
"                        connections (required; decimals allowed)\n"
"  -c, --connections C   TCP connections; request i goes to connection\n"
"                        i mod C (default 1, at most %d)\n"
"  -d, --duration S      measured interval in seconds (default 5)\n"
"  -W, --warmup S        seconds of load sent before the measured interval\n"
"                        and not counted (default 0.5)\n"
"  -D, --drain S         after the last send, wait at most S seconds for\n"
"                        replies; still unanswered requests are timeouts\n"
"                        (default 1)\n"
"  -p, --proto P         sf (sfserver protocol, default) or memcached (text\n"
"                        protocol: get, and set with --set-ratio)\n"
"  -w, --work-us N       sf: service time the server should spin per\n"
"                        request, sent in each request (default 0: the\n"
"                        server's --work-us; at most %u)\n"
"  -k, --keys K          memcached: size of the fixed key set\n"
"                        sfload:0 .. sfload:K-1, all set before the run and\n"
"                        then chosen uniformly at random (default 100)\n"
"  -s, --set-ratio F     memcached: fraction of requests that are sets,\n"
"                        0..1 (default 0.1)\n"
"  -V, --value-size N    memcached: bytes per value (default 32, at most\n"
"                        %d)\n"
"  -x, --poisson         exponential inter-arrival times with mean 1/R\n"
"                        instead of a fixed interval\n"
"  -S, --seed N          seed for key choice and --poisson (default 1)\n"
"  -b, --spin-us N       sleep until N microseconds before each send time,\n"
"                        then busy-wait to it: sharper send times at the\n"
"                        cost of a busier sender CPU (default 0: sleep\n"
"                        only; timer wake-ups in a VM are often 50-200 us\n"
"                        late, which shows as latency from scheduled send)\n"
"  -j, --json            print the report as one JSON object on stdout\n"
"  -g, --progress        print a progress line on stderr every second (on by\n"
"                        default when stderr is a terminal and S >= 5)\n"
"  -G, --no-progress     never print progress lines\n"
"  -A, --allow-addr[=ADDR]\n"
"                        also accept a non-loopback target: ADDR only, or\n"
"                        any address when ADDR is omitted (for test hosts in\n"
"                        a network namespace)\n"
"  -h, --help            show this help and exit\n"
"\n"
"Report (text, or with --json these keys): offered_rps (R), scheduled_rps\n"
"(measured requests / duration; differs from R with --poisson), sent_rps\n"
"(measured requests sent, over the span of their actual send times),\n"
"achieved_rps (successful replies to measured requests / interval length;\n"
"exact while the server keeps up), served_rps (replies to any request\n"
"received within the measured interval / its length: the rate the server\n"
"really answered at, the figure to use past saturation), requests\n"
"(scheduled in the measured interval), sent, replies (successful), errors\n"
"(error replies + unsent requests + unmatched replies), unsent, timeouts\n"
"(sent, unanswered at the end of the drain), misses (memcached get misses),\n"
"min_us p50_us p90_us p99_us p999_us max_us mean_us (latency from the\n"
"scheduled send time), send_p50_us .. send_max_us (from the actual send\n"
"time), duration_s, warmup_s, connections, proto, poisson, interrupted.\n"
"Percentiles come from a log-linear histogram: never below the true value\n"
"and at most 0.79%% above it; min, max and mean are exact.\n"
"\n"
"Exit status:\n"
"  0    the run completed and the report was printed (even with timeouts)\n"
"  1    runtime error: target unreachable within 2 s, memcached preload\n"
"       failed, or a connection lost during the run (the report is still\n"
"       printed then)\n"
"  2    bad command line, or a target that is not allowed\n"
"  130  interrupted by SIGINT/SIGTERM (a report of the part run is printed)\n"
"\n"
"Examples:\n"
"  sfload --rate 10000 127.0.0.1:9700\n"
"  sfload --rate 50000 --connections 4 --duration 10 --json 127.0.0.1:9700\n"
"  sfload --proto memcached --rate 20000 --keys 1000 --poisson\n"
"         localhost:11211\n",
		MAX_CONNECTIONS, SF_MAX_WORK_US, MAX_VALUE_SIZE);
}

/* Split HOST:PORT or [HOST]:PORT into cfg.host and cfg.port. */
static void parse_target(const char *t)
{
	const char *colon, *host = t, *end;
	size_t hlen;

	if (*t == '[') {
		host = t + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			sf_die_usage("invalid target '%s': expected [HOST]:PORT", t);
		colon = end + 1;
	} else {
		colon = strrchr(t, ':');
		if (!colon)
			sf_die_usage("invalid target '%s': expected HOST:PORT", t);
		end = colon;
		if (memchr(t, ':', colon - t))
			sf_die_usage("invalid target '%s': write IPv6 as [ADDR]:PORT",
				     t);
	}
	hlen = end - host;
	if (!hlen || hlen >= sizeof(cfg.host))
		sf_die_usage("invalid target '%s': bad host", t);
	memcpy(cfg.host, host, hlen);
	cfg.host[hlen] = '\0';
	sf_parse_ull("port", colon + 1, 1, 65535);
	snprintf(cfg.port, sizeof(cfg.port), "%s", colon + 1);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rate",	 required_argument, NULL, 'r' },
		{ "connections", required_argument, NULL, 'c' },
		{ "duration",	 required_argument, NULL, 'd' },
		{ "warmup",	 required_argument, NULL, 'W' },
		{ "drain",	 required_argument, NULL, 'D' },
		{ "proto",	 required_argument, NULL, 'p' },
		{ "work-us",	 required_argument, NULL, 'w' },
		{ "keys",	 required_argument, NULL, 'k' },
		{ "set-ratio",	 required_argument, NULL, 's' },
		{ "value-size",	 required_argument, NULL, 'V' },
		{ "poisson",	 no_argument,	    NULL, 'x' },
		{ "seed",	 required_argument, NULL, 'S' },
		{ "spin-us",	 required_argument, NULL, 'b' },
		{ "json",	 no_argument,	    NULL, 'j' },
		{ "progress",	 no_argument,	    NULL, 'g' },
		{ "no-progress", no_argument,	    NULL, 'G' },
		{ "allow-addr",	 optional_argument, NULL, 'A' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	double total;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv,
				":r:c:d:W:D:p:w:k:s:V:xS:b:jgGA::h",
				opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cfg.rate = sf_parse_double("--rate", optarg, 0, true,
						   MAX_RATE);
			break;
		case 'c':
			cfg.connections = sf_parse_ull("--connections", optarg,
						       1, MAX_CONNECTIONS);
			break;
		case 'd':
			cfg.duration = sf_parse_double("--duration", optarg, 0,
						       true, 1e6);
			break;
		case 'W':
			cfg.warmup = sf_parse_double("--warmup", optarg, 0,
						     false, 1e6);
			break;
		case 'D':
			cfg.drain = sf_parse_double("--drain", optarg, 0, false,
						    3600);
			break;
		case 'p':
			if (!strcmp(optarg, "sf"))
				cfg.proto = PROTO_SF;
			else if (!strcmp(optarg, "memcached"))
				cfg.proto = PROTO_MEMCACHED;
			else
				sf_die_usage("invalid --proto '%s': expected sf or memcached",
					     optarg);
			break;
		case 'w':
			cfg.work_us = sf_parse_ull("--work-us", optarg, 0,
						   SF_MAX_WORK_US);
			break;
		case 'k':
			cfg.keys = sf_parse_ull("--keys", optarg, 1, 100000000);
			break;
		case 's':
			cfg.set_ratio = sf_parse_double("--set-ratio", optarg, 0,
							false, 1);
			break;
		case 'V':
			cfg.value_size = sf_parse_ull("--value-size", optarg, 1,
						      MAX_VALUE_SIZE);
			break;
		case 'x':
			cfg.poisson = true;
			break;
		case 'S':
			cfg.seed = sf_parse_ull("--seed", optarg, 0, UINT64_MAX);
			break;
		case 'b':
			cfg.spin_ns = sf_parse_ull("--spin-us", optarg, 0,
						   100000) * 1000;
			break;
		case 'j':
			cfg.json = true;
			break;
		case 'g':
			cfg.progress = 1;
			break;
		case 'G':
			cfg.progress = 0;
			break;
		case 'A':
			cfg.allow_any = !optarg;
			cfg.allow_addr = optarg;
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
	if (optind >= argc)
		sf_die_usage("%s", "missing HOST:PORT");
	if (optind + 1 < argc)
		sf_die_usage("unexpected argument '%s'", argv[optind + 1]);
	if (cfg.rate <= 0)
		sf_die_usage("%s", "--rate is required");
	cfg.target = argv[optind];
	parse_target(cfg.target);

	total = cfg.rate * (cfg.warmup + cfg.duration);
	if (total > (double)MAX_REQUESTS) {
		fprintf(stderr,
			"sfload: rate x (warmup + duration) = %.0f requests, more than the %llu a run can hold; shorten the run\n",
			total, MAX_REQUESTS);
		exit(EXIT_BADARGS);
	}
	if (cfg.progress < 0)
		cfg.progress = isatty(STDERR_FILENO) && cfg.duration >= 5;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / NSEC, .tv_nsec = t % NSEC };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* splitmix64 */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double rng_unit(uint64_t *s)
{
	return (double)((rng_next(s) >> 11) + 1) * 0x1p-53;
}

/* ---- target policy and connections ---- */

static bool addr_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

	if (sa->sa_family == AF_INET)
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) &&
	       s6->sin6_addr.s6_addr[12] == 127;
}

static bool addr_is_allowed(const struct sockaddr *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
	unsigned char a[sizeof(struct in6_addr)];

	if (addr_is_loopback(sa) || cfg.allow_any)
		return true;
	if (!cfg.allow_addr)
		return false;
	if (sa->sa_family == AF_INET &&
	    inet_pton(AF_INET, cfg.allow_addr, a) == 1)
		return !memcmp(a, &s4->sin_addr, sizeof(s4->sin_addr));
	if (sa->sa_family == AF_INET6 &&
	    inet_pton(AF_INET6, cfg.allow_addr, a) == 1)
		return !memcmp(a, &s6->sin6_addr, sizeof(s6->sin6_addr));
	return false;
}

static void addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	if (getnameinfo(sa, sa->sa_family == AF_INET ?
			sizeof(struct sockaddr_in) :
			sizeof(struct sockaddr_in6),
			buf, len, NULL, 0, NI_NUMERICHOST))
		snprintf(buf, len, "?");
}

/* Non-blocking connect bounded by deadline; returns a blocking socket. */
static int connect_one(const struct addrinfo *ai, uint64_t deadline)
{
	struct timeval tv = { .tv_usec = SEND_TIMEOUT_US };
	struct pollfd pfd;
	socklen_t elen = sizeof(int);
	int fd, err = 0, one = 1;
	uint64_t now;

	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINPROGRESS)
			goto err_close;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		for (;;) {
			now = sf_now_ns();
			if (now >= deadline) {
				errno = ETIMEDOUT;
				goto err_close;
			}
			err = poll(&pfd, 1, (deadline - now) / 1000000 + 1);
			if (err > 0)
				break;
			if (err < 0 && errno != EINTR)
				goto err_close;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			goto err_close;
		if (err) {
			errno = err;
			goto err_close;
		}
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		goto err_close;
	return fd;

err_close:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/*
 * Resolve the target, apply the loopback policy, and open every connection
 * to the first allowed address that accepts one.  Returns 0, or the exit
 * status after printing why: EXIT_BADARGS for a name that does not resolve
 * or a target that is not allowed, EXIT_RUNTIME when it cannot connect.
 */
static int open_connections(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai, *good = NULL;
	uint64_t deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
	char refused[INET6_ADDRSTRLEN] = "";
	unsigned int i, allowed = 0;
	int fd = -1, err, ret = EXIT_RUNTIME;

	err = getaddrinfo(cfg.host, cfg.port, &hints, &res);
	if (err) {
		fprintf(stderr, "sfload: cannot resolve '%s': %s\n", cfg.host,
			gai_strerror(err));
		return EXIT_BADARGS;
	}
	err = ETIMEDOUT;
	for (ai = res; ai && !good; ai = ai->ai_next) {
		if (!addr_is_allowed(ai->ai_addr)) {
			addr_str(ai->ai_addr, refused, sizeof(refused));
			continue;
		}
		allowed++;
		fd = connect_one(ai, deadline);
		if (fd >= 0)
			good = ai;
		else
			err = errno;
	}
	if (!allowed) {
		fprintf(stderr,
			"sfload: refusing non-loopback target %s: sfload only loads 127.0.0.0/8 and ::1 unless --allow-addr is given\n",
			refused);
		ret = EXIT_BADARGS;
		goto out_free_res;
	}
	if (!good) {
		fprintf(stderr, "sfload: cannot connect to %s: %s\n",
			cfg.target, strerror(err));
		goto out_free_res;
	}
	run.conns[0].fd = fd;
	for (i = 1; i < cfg.connections; i++) {
		run.conns[i].fd = connect_one(good, deadline);
		if (run.conns[i].fd < 0) {
			fprintf(stderr,
				"sfload: cannot open connection %u to %s: %s\n",
				i + 1, cfg.target, strerror(errno));
			goto out_free_res;
		}
	}
	ret = 0;
out_free_res:
	freeaddrinfo(res);
	return ret;
}

/* ---- protocols ---- */

/*
 * Parse one memcached reply at p.  Returns 1 with *used set when complete
 * (*is_err for ERROR/CLIENT_ERROR/SERVER_ERROR, *miss for a get miss), 0 when
 * more bytes are needed, -1 on a protocol error.
 */
static int mc_parse(const unsigned char *p, size_t len, size_t *used,
		    bool *is_err, bool *miss)
{
	const unsigned char *eol;
	unsigned long long bytes;
	char line[MC_MAX_LINE];
	size_t ll, need;

	eol = memmem(p, len, "\r\n", 2);
	if (!eol)
		return len >= MC_MAX_LINE ? -1 : 0;
	ll = eol - p;
	if (ll >= MC_MAX_LINE)
		return -1;
	memcpy(line, p, ll);
	line[ll] = '\0';
	*is_err = false;
	*miss = false;
	if (!strncmp(line, "VALUE ", 6)) {
		if (sscanf(line, "VALUE %*s %*u %llu", &bytes) != 1 ||
		    bytes > MAX_VALUE_SIZE * 4ull)
			return -1;
		need = ll + 2 + bytes + 2;
		if (len < need + 5)
			return 0;
		if (memcmp(p + need - 2, "\r\n", 2) ||
		    memcmp(p + need, "END\r\n", 5))
			return -1;
		*used = need + 5;
		return 1;
	}
	*used = ll + 2;
	if (!strcmp(line, "END")) {
		*miss = true;
		return 1;
	}
	if (!strcmp(line, "STORED") || !strcmp(line, "NOT_STORED") ||
	    !strcmp(line, "EXISTS") || !strcmp(line, "NOT_FOUND"))
		return 1;
	if (!strcmp(line, "ERROR") || !strncmp(line, "CLIENT_ERROR", 12) ||
	    !strncmp(line, "SERVER_ERROR", 12)) {
		*is_err = true;
		return 1;
	}
	return -1;
}

static size_t build_request(unsigned char *buf, uint64_t i, uint64_t t,
			    uint64_t *rng, const unsigned char *value)
{
	uint32_t key;
	size_t len;

	if (cfg.proto == PROTO_SF) {
		sf_msg_put(buf, i, t, cfg.work_us);
		return SF_MSG_SIZE;
	}
	key = (uint32_t)(((rng_next(rng) >> 32) * cfg.keys) >> 32);
	if (cfg.set_ratio > 0 && rng_unit(rng) <= cfg.set_ratio) {
		len = sprintf((char *)buf, "set sfload:%u 0 0 %u\r\n", key,
			      cfg.value_size);
		memcpy(buf + len, value, cfg.value_size);
		len += cfg.value_size;
		memcpy(buf + len, "\r\n", 2);
		return len + 2;
	}
	return sprintf((char *)buf, "get sfload:%u\r\n", key);
}

/*
 * Blocking send of all len bytes.  Fails with errno EAGAIN when blocked past
 * the hard deadline or asked to stop, or with the error of send(2).
 */
static int send_all(int fd, const unsigned char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (atomic_load(&run.stop) ||
				    sf_now_ns() > run.hard_deadline) {
					errno = EAGAIN;
					return -1;
				}
				continue;
			}
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Set keys 0..K-1 on connection 0, in batches, before the run. */
static int mc_preload(unsigned char *value)
{
	struct conn *c = &run.conns[0];
	size_t len, used, cap, off;
	unsigned int k, i, batch, got;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	uint64_t deadline;
	unsigned char *buf;
	bool is_err, miss;
	ssize_t n;
	int ret = -1, r;

	cap = PRELOAD_BATCH * (cfg.value_size + 64);
	buf = malloc(cap);
	if (!buf) {
		fprintf(stderr, "sfload: out of memory\n");
		return -1;
	}
	for (k = 0; k < cfg.keys; k += batch) {
		batch = cfg.keys - k < PRELOAD_BATCH ? cfg.keys - k :
			PRELOAD_BATCH;
		len = 0;
		for (i = 0; i < batch; i++) {
			len += sprintf((char *)buf + len,
				       "set sfload:%u 0 0 %u\r\n", k + i,
				       cfg.value_size);
			memcpy(buf + len, value, cfg.value_size);
			len += cfg.value_size;
			memcpy(buf + len, "\r\n", 2);
			len += 2;
		}
		run.hard_deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
		if (send_all(c->fd, buf, len)) {
			fprintf(stderr, "sfload: memcached preload: send: %s\n",
				strerror(errno));
			goto out_free_buf;
		}
		deadline = sf_now_ns() + CONNECT_TIMEOUT_NS;
		got = 0;
		c->len = 0;
		while (got < batch) {
			/* signed: a deadline already passed must not wrap */
			int64_t left = (int64_t)(deadline - sf_now_ns());

			r = left > 0 ? poll(&pfd, 1, left / 1000000 + 1) : 0;
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				fprintf(stderr,
					"sfload: memcached preload: no reply from %s within 2 s\n",
					cfg.target);
				goto out_free_buf;
			}
			n = recv(c->fd, c->buf + c->len, c->size - c->len,
				 MSG_DONTWAIT);
			if (n <= 0) {
				if (n < 0 && (errno == EAGAIN ||
					      errno == EINTR))
					continue;
				fprintf(stderr,
					"sfload: memcached preload: connection closed by %s\n",
					cfg.target);
				goto out_free_buf;
			}
			c->len += n;
			off = 0;
			while (got < batch &&
			       (r = mc_parse(c->buf + off, c->len - off, &used,
					     &is_err, &miss)) == 1) {
				if (memcmp(c->buf + off, "STORED\r\n", 8)) {
					fprintf(stderr,
						"sfload: memcached preload: server replied '%.*s'\n",
						(int)(used > 2 ? used - 2 : 0),
						(char *)c->buf + off);
					goto out_free_buf;
				}
				off += used;
				got++;
			}
			if (r < 0) {
				fprintf(stderr,
					"sfload: memcached preload: %s does not speak the memcached text protocol\n",
					cfg.target);
				goto out_free_buf;
			}
			memmove(c->buf, c->buf + off, c->len - off);
			c->len -= off;
		}
	}
	c->len = 0;
	ret = 0;
out_free_buf:
	free(buf);
	return ret;
}

/* ---- sender ---- */

static void *sender_run(void *arg)
{
	const unsigned char *value = arg;
	unsigned char *buf;
	uint64_t i = 0, t, d, count = 0, rng = cfg.seed;
	uint64_t one = 1;
	struct conn *c;
	size_t len;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	buf = malloc(cfg.value_size + 128);
	if (!buf) {
		fprintf(stderr, "sfload: out of memory\n");
		goto out_done;
	}
	for (i = 0; i < run.n; i++) {
		d = run.start + run.sched[i];
		t = sf_now_ns();
		while (t + cfg.spin_ns < d &&
		       !atomic_load_explicit(&run.stop, memory_order_relaxed)) {
			sleep_until(d - cfg.spin_ns - t > SLEEP_CHUNK_NS ?
				    t + SLEEP_CHUNK_NS : d - cfg.spin_ns);
			t = sf_now_ns();
		}
		while (t < d)
			t = sf_now_ns();
		if (atomic_load_explicit(&run.stop, memory_order_relaxed))
			break;
		if (t > run.hard_deadline) {
			run.aborted = true;
			break;
		}
		c = &run.conns[i % cfg.connections];
		if (c->send_dead)
			continue;
		len = build_request(buf, i, t, &rng, value);
		run.sent[i] = t;
		if (send_all(c->fd, buf, len)) {
			run.sent[i] = 0;
			if (atomic_load(&run.stop))
				break;
			if (errno == EAGAIN) {
				/* Blocked past the hard deadline. */
				run.aborted = true;
				break;
			}
			run.send_failed = true;
			fprintf(stderr, "sfload: connection %u: send failed: %s\n",
				c->index + 1, strerror(errno));
			c->send_dead = true;
			continue;
		}
		atomic_store_explicit(&run.nsent, ++count,
				      memory_order_relaxed);
	}
	free(buf);
out_done:
	run.stopped_at = i;
	run.sender_end = sf_now_ns();
	atomic_store_explicit(&run.sender_done, true, memory_order_release);
	if (write(run.done_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "sfload: eventfd: %s\n", strerror(errno));
	return NULL;
}

/* ---- receiver ---- */

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
	bool is_err, miss;
	uint64_t t;
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
	c->len += n;
	if (cfg.proto == PROTO_SF) {
		for (; c->len - off >= SF_MSG_SIZE; off += SF_MSG_SIZE) {
			reply_matched(sf_msg_id(c->buf + off), t, false);
		}
	} else {
		while ((r = mc_parse(c->buf + off, c->len - off, &used,
				     &is_err, &miss)) == 1) {
			reply_matched(c->index +
				      c->nrecv++ * (uint64_t)cfg.connections,
				      t, is_err);
			run.misses += miss;
			off += used;
		}
		if (r < 0) {
			run.bad_replies++;
			conn_lost(epfd, c, "reply is not memcached text protocol");
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

static void receive_loop(int epfd, int sigfd)
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

/* ---- schedule and analysis ---- */

static int build_schedule(void)
{
	uint64_t cap, n = 0, rng = cfg.seed ^ 0x5f3759dfull, *p;
	double t = 0, period = 1e9 / cfg.rate;

	run.sched_end = (uint64_t)((cfg.warmup + cfg.duration) * 1e9);
	cap = (uint64_t)(cfg.rate * (cfg.warmup + cfg.duration) * 1.05) + 64;
	run.sched = malloc(cap * sizeof(*run.sched));
	if (!run.sched)
		return -1;
	for (;;) {
		if (cfg.poisson) {
			if (n)
				t += -log(rng_unit(&rng)) * period;
		} else {
			t = (double)n * period;
		}
		if (t >= (double)run.sched_end)
			break;
		if (n == cap) {
			cap *= 2;
			p = realloc(run.sched, cap * sizeof(*p));
			if (!p)
				return -1;
			run.sched = p;
		}
		run.sched[n++] = (uint64_t)t;
	}
	run.n = n;
	if (!n)
		return 0;
	run.sent = calloc(n, sizeof(*run.sent));
	run.rcv = calloc(n, sizeof(*run.rcv));
	run.err = calloc(n, sizeof(*run.err));
	if (!run.sent || !run.rcv || !run.err)
		return -1;
	return 0;
}

static void analyse(struct result *r)
{
	uint64_t w0 = (uint64_t)(cfg.warmup * 1e9), w1 = run.sched_end;
	uint64_t i, first = 0, last = 0, a, b;

	hist_init(&r->lat);
	hist_init(&r->lat_send);
	/* An interrupted run is measured up to where sending stopped. */
	if (run.interrupted && run.stopped_at < run.n &&
	    run.sched[run.stopped_at] < w1)
		w1 = run.sched[run.stopped_at];
	if (w1 < w0)
		w1 = w0;
	r->window_s = (w1 - w0) / 1e9;
	a = run.start + w0;
	b = run.start + w1;

	for (i = 0; i < run.n; i++) {
		if (run.rcv[i] >= a && run.rcv[i] < b)
			r->window_replies++;
		if (run.sched[i] < w0 || run.sched[i] >= w1)
			continue;
		r->requests++;
		if (!run.sent[i]) {
			r->unsent++;
			continue;
		}
		if (!r->sent++)
			first = run.sent[i];
		last = run.sent[i];
		if (!run.rcv[i]) {
			r->timeouts++;
		} else if (run.err[i]) {
			r->error_replies++;
		} else {
			r->replies++;
			hist_add(&r->lat, run.rcv[i] - run.start -
				 run.sched[i]);
			hist_add(&r->lat_send, run.rcv[i] - run.sent[i]);
		}
	}
	r->errors = r->error_replies + r->unsent + run.bad_replies;
	if (r->window_s > 0) {
		r->scheduled_rps = r->requests / r->window_s;
		r->achieved_rps = r->replies / r->window_s;
		r->served_rps = r->window_replies / r->window_s;
	}
	if (r->sent > 1 && last > first)
		r->sent_rps = (r->sent - 1) / ((last - first) / 1e9);
}

static void json_lat(const char *prefix, const struct hist *h)
{
	printf("\"%smin_us\":%.3f,\"%sp50_us\":%.3f,\"%sp90_us\":%.3f,"
	       "\"%sp99_us\":%.3f,\"%sp999_us\":%.3f,\"%smax_us\":%.3f,"
	       "\"%smean_us\":%.3f",
	       prefix, h->count ? h->min / 1e3 : 0.0,
	       prefix, hist_percentile(h, 50) / 1e3,
	       prefix, hist_percentile(h, 90) / 1e3,
	       prefix, hist_percentile(h, 99) / 1e3,
	       prefix, hist_percentile(h, 99.9) / 1e3,
	       prefix, h->max / 1e3, prefix, hist_mean(h) / 1e3);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void report_json(const struct result *r)
{
	printf("{\"target\":");
	json_string(cfg.target);
	printf(",\"proto\":\"%s\",\"connections\":%u,\"poisson\":%s,"
	       "\"offered_rps\":%.3f,\"scheduled_rps\":%.3f,"
	       "\"sent_rps\":%.3f,\"achieved_rps\":%.3f,\"served_rps\":%.3f,"
	       "\"requests\":%llu,\"sent\":%llu,\"replies\":%llu,"
	       "\"errors\":%llu,\"unsent\":%llu,\"timeouts\":%llu,"
	       "\"misses\":%llu,",
	       cfg.proto == PROTO_SF ? "sf" : "memcached", cfg.connections,
	       cfg.poisson ? "true" : "false", cfg.rate, r->scheduled_rps,
	       r->sent_rps, r->achieved_rps, r->served_rps,
	       (unsigned long long)r->requests, (unsigned long long)r->sent,
	       (unsigned long long)r->replies, (unsigned long long)r->errors,
	       (unsigned long long)r->unsent, (unsigned long long)r->timeouts,
	       (unsigned long long)run.misses);
	json_lat("", &r->lat);
	putchar(',');
	json_lat("send_", &r->lat_send);
	printf(",\"duration_s\":%.6f,\"warmup_s\":%.6f,\"interrupted\":%s,"
	       "\"hist_rel_error\":%.5f}\n",
	       r->window_s, cfg.warmup, run.interrupted ? "true" : "false",
	       HIST_REL_ERROR);
}

static void text_lat(const char *what, const struct hist *h)
{
	printf("  latency from %s send (us): p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f\n",
	       what, hist_percentile(h, 50) / 1e3,
	       hist_percentile(h, 90) / 1e3, hist_percentile(h, 99) / 1e3,
	       hist_percentile(h, 99.9) / 1e3, h->max / 1e3,
	       hist_mean(h) / 1e3);
}

static void report_text(const struct result *r)
{
	printf("sfload: %s %s, %u connection%s, %s, %.3f s measured after %.3f s warm-up%s\n",
	       cfg.proto == PROTO_SF ? "sf" : "memcached", cfg.target,
	       cfg.connections, cfg.connections > 1 ? "s" : "",
	       cfg.poisson ? "poisson arrivals" : "fixed interval",
	       r->window_s, cfg.warmup,
	       run.interrupted ? " (interrupted)" : "");
	printf("  offered %.1f req/s  sent %.1f  achieved %.1f  served %.1f\n",
	       cfg.rate, r->sent_rps, r->achieved_rps, r->served_rps);
	printf("  requests %llu  replies %llu  errors %llu  unsent %llu  timeouts %llu",
	       (unsigned long long)r->requests,
	       (unsigned long long)r->replies, (unsigned long long)r->errors,
	       (unsigned long long)r->unsent,
	       (unsigned long long)r->timeouts);
	if (cfg.proto == PROTO_MEMCACHED)
		printf("  misses %llu", (unsigned long long)run.misses);
	putchar('\n');
	text_lat("scheduled", &r->lat);
	text_lat("actual", &r->lat_send);
}

/* ---- main ---- */

static int epoll_add(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

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

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	run.done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sigfd < 0 || run.done_fd < 0 || epfd < 0 ||
	    epoll_add(epfd, sigfd, &run.stop) ||
	    epoll_add(epfd, run.done_fd, &run.done_fd))
		goto out_syserr;
	for (i = 0; i < cfg.connections; i++)
		if (epoll_add(epfd, run.conns[i].fd, &run.conns[i]))
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
