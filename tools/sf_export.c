// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_export.c - `satfeedctl export` (sf_export.h): a small HTTP/1.1 server
 * for Prometheus and a writer of node_exporter textfiles.
 *
 * One thread and one poll() loop.  Every socket is non-blocking and every
 * connection has a deadline, so a client that sends its request slowly, or
 * reads the answer slowly, holds only its own slot: the others are served
 * meanwhile.  When every slot is taken, the connection that has waited
 * longest for its request is dropped for the new one.  A scrape reads the
 * pins when its request is complete (well under a millisecond for 64
 * targets), into a buffer the connection then drains at the client's pace.
 *
 * Only GET is served and nothing is ever written to the engine: the
 * exporter has no endpoint that changes state.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_export.h"
#include "sf_metrics.h"

#define MAX_CONNS	16
#define REQUEST_MAX	8192		/* request line and headers */
#define CONN_TIMEOUT_MS	10000		/* Prometheus' default scrape timeout */
#define LINGER_MS	1000		/* reading what a client sent after */

enum conn_state {
	CONN_FREE = 0,
	CONN_READING,		/* the request is not complete yet */
	CONN_WRITING,		/* the answer is on its way */
	CONN_LINGERING,		/* answered and shut down; draining input */
};

struct conn {
	enum conn_state state;
	int fd;
	__u64 deadline_ms;
	__u64 accepted_ms;
	size_t rlen;
	char req[REQUEST_MAX];
	char head[512];
	size_t head_len;
	struct sf_buf body;
	size_t sent;		/* of head and then body */
};

struct exporter {
	const struct sf_export_opts *o;
	int lfd;
	struct conn *conns[MAX_CONNS];
	char tmpl[PATH_MAX];	/* textfile: temporary name template */
	char file[PATH_MAX];	/* textfile: its name */
	struct sf_buf scratch;	/* textfile: the exposition */
	int last_up;		/* what was logged last; -1: nothing yet */
	char last_why[512];
	int textfile_err;	/* errno of the last failed write, logged */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* one prefix for every message of satfeedctl, the exporter's too */
#define fail sf_fail

static __u64 now_ms(void)
{
	return sf_now_mono_ns() / 1000000;
}

/*
 * The exposition into b; the engine's state changes (found, lost, why) go
 * to stderr once each, not once per scrape.
 */
static int expose(struct exporter *e, struct sf_buf *b,
		  enum sf_metrics_format fmt)
{
	char why[512] = "";
	int up = sf_metrics_write(b, e->o->root, fmt, why, sizeof(why));

	if (up < 0)
		return up;
	if (up != e->last_up || (!up && strcmp(why, e->last_why))) {
		if (up)
			sf_msg("export: reading the engine at %s (satfeed_up 1)",
				e->o->root);
		else
			sf_msg("export: %s; satfeed_up is 0 until it is readable",
				why);
		e->last_up = up;
		snprintf(e->last_why, sizeof(e->last_why), "%s", why);
	}
	return up;
}

/* ---- the listening socket ---- */

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *in6 = (const void *)ss;
		const __u8 *a = in6->sin6_addr.s6_addr;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && a[12] == 127);
	}
}

/* "A.B.C.D:PORT", "[IPV6]:PORT" or "localhost:PORT".  0 or -1. */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *sl)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(s, ':');
	bool v6 = s[0] == '[';
	size_t hl;
	char *end;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (!colon || colon == s)
		return -1;
	hl = colon - s;
	if (v6) {
		if (hl < 3 || s[hl - 1] != ']')
			return -1;
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || !colon[1] || *end || port < 0 || port > 65535)
		return -1;
	if (!v6 && !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (v6) {
		struct sockaddr_in6 *in6 = (void *)ss;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -1;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*sl = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (void *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -1;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*sl = sizeof(*in);
	}
	return 0;
}

static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
	} else {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
	}
}

/* Returns an enum sf_exit; on success e->lfd listens. */
static int listen_open(struct exporter *e)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char where[INET6_ADDRSTRLEN + 16];
	int one = 1, fd;

	if (parse_listen(e->o->listen, &ss, &sl))
		return fail(SF_EXIT_USAGE, "--listen '%s' is not ADDR:PORT (an IPv4 address, [an IPv6 address] or localhost, and a port 0 to 65535)",
			    e->o->listen);
	if (!is_loopback(&ss) && !e->o->allow_remote)
		return fail(SF_EXIT_USAGE, "--listen %s is not a loopback address: anyone who can reach it reads what your servers do; add --allow-remote to serve it anyway",
			    e->o->listen);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return fail(SF_EXIT_ERROR, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 64)) {
		int err = errno;

		close(fd);
		return fail(SF_EXIT_ERROR, "cannot listen on %s: %s",
			    e->o->listen, strerror(err));
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	addr_str(&ss, where, sizeof(where));
	printf("serving http://%s/metrics\n", where);
	fflush(stdout);
	e->lfd = fd;
	return SF_EXIT_OK;
}

/* ---- connections ---- */

static void conn_close(struct exporter *e, int i)
{
	struct conn *c = e->conns[i];

	close(c->fd);
	sf_buf_free(&c->body);
	free(c);
	e->conns[i] = NULL;
}

/* A free slot, or the slot of the oldest connection still reading. */
static int conn_slot(struct exporter *e)
{
	int oldest = -1;

	for (int i = 0; i < MAX_CONNS; i++) {
		if (!e->conns[i])
			return i;
		if (e->conns[i]->state == CONN_READING &&
		    (oldest < 0 || e->conns[i]->accepted_ms <
					   e->conns[oldest]->accepted_ms))
			oldest = i;
	}
	if (oldest >= 0)
		conn_close(e, oldest);
	return oldest;
}

static void conn_accept(struct exporter *e)
{
	for (;;) {
		struct conn *c;
		int fd, i;

		fd = accept4(e->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;	/* EAGAIN, or a connection already reset */
		i = conn_slot(e);
		c = i >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CONN_READING;
		c->accepted_ms = now_ms();
		c->deadline_ms = c->accepted_ms + CONN_TIMEOUT_MS;
		e->conns[i] = c;
	}
}

/*
 * Does the Accept header value ask for OpenMetrics?  Any media range
 * application/openmetrics-text with a q above 0 does: the exporter serves
 * one version of each format, so q only tells "acceptable" from "not".
 */
static bool wants_openmetrics(const char *accept, size_t len)
{
	const char *p = accept, *end = accept + len;

	while (p < end) {
		const char *next = memchr(p, ',', end - p), *q;
		size_t n;

		if (!next)
			next = end;
		while (p < next && (*p == ' ' || *p == '\t'))
			p++;
		n = strlen("application/openmetrics-text");
		if ((size_t)(next - p) >= n &&
		    !strncasecmp(p, "application/openmetrics-text", n)) {
			q = memmem(p, next - p, "q=", 2);
			if (!q || strtod(q + 2, NULL) > 0)
				return true;
		}
		p = next + 1;
	}
	return false;
}

/* The value of header name in the request's header lines, or NULL. */
static const char *header(const char *req, const char *name, size_t *len)
{
	size_t n = strlen(name);
	const char *line = strchr(req, '\n');

	while (line && line[1] && line[1] != '\r' && line[1] != '\n') {
		const char *eol;

		line++;
		eol = strchr(line, '\n');
		if (!eol)
			return NULL;
		if (!strncasecmp(line, name, n) && line[n] == ':') {
			const char *v = line + n + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			*len = eol - v;
			if (*len && v[*len - 1] == '\r')
				(*len)--;
			return v;
		}
		line = eol;
	}
	return NULL;
}

static void respond(struct conn *c, int status, const char *reason,
		    const char *type, const char *extra)
{
	c->head_len = snprintf(c->head, sizeof(c->head),
			       "HTTP/1.1 %d %s\r\n"
			       "Content-Type: %s\r\n"
			       "Content-Length: %zu\r\n"
			       "%s"
			       "Connection: close\r\n\r\n",
			       status, reason, type, c->body.len, extra);
	c->sent = 0;
	c->state = CONN_WRITING;
}

static void plain(struct conn *c, int status, const char *reason,
		  const char *extra, const char *text)
{
	sf_buf_reset(&c->body);
	sf_buf_printf(&c->body, "%s\n", text);
	respond(c, status, reason, "text/plain; charset=utf-8", extra);
}

/* The request is complete in c->req: make the answer. */
static void conn_request(struct exporter *e, struct conn *c)
{
	enum sf_metrics_format fmt = SF_METRICS_TEXT;
	char method[16], target[1024], version[16];
	const char *accept;
	size_t alen;

	if (sscanf(c->req, "%15s %1023s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7)) {
		plain(c, 400, "Bad Request", "", "bad request");
		return;
	}
	if (strcmp(method, "GET")) {
		plain(c, 405, "Method Not Allowed", "Allow: GET\r\n",
		      "only GET is served");
		return;
	}
	target[strcspn(target, "?")] = '\0';
	if (!strcmp(target, "/")) {
		plain(c, 200, "OK", "",
		      "satfeed exporter: the metrics are at /metrics");
		return;
	}
	if (strcmp(target, "/metrics")) {
		plain(c, 404, "Not Found", "", "not found; the metrics are at /metrics");
		return;
	}
	accept = header(c->req, "Accept", &alen);
	if (accept && wants_openmetrics(accept, alen))
		fmt = SF_METRICS_OPENMETRICS;
	sf_buf_reset(&c->body);
	if (expose(e, &c->body, fmt) < 0) {
		plain(c, 500, "Internal Server Error", "", "out of memory");
		return;
	}
	respond(c, 200, "OK", sf_metrics_content_type(fmt), "");
}

static void conn_read(struct exporter *e, struct conn *c, int i)
{
	char *end;
	ssize_t n;

	if (c->state == CONN_LINGERING) {
		char sink[4096];

		while ((n = recv(c->fd, sink, sizeof(sink), 0)) > 0)
			;
		if (n == 0 || errno != EAGAIN)
			conn_close(e, i);
		return;
	}
	n = recv(c->fd, c->req + c->rlen, sizeof(c->req) - 1 - c->rlen, 0);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_close(e, i);
		return;
	}
	c->rlen += n;
	c->req[c->rlen] = '\0';
	if (strlen(c->req) != c->rlen) {
		plain(c, 400, "Bad Request", "", "bad request");
		return;
	}
	end = strstr(c->req, "\r\n\r\n");
	if (!end)
		end = strstr(c->req, "\n\n");
	if (end)
		conn_request(e, c);
	else if (c->rlen == sizeof(c->req) - 1)
		plain(c, 431, "Request Header Fields Too Large", "",
		      "request header too large");
}

static void conn_write(struct exporter *e, struct conn *c, int i)
{
	for (;;) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		ssize_t n;

		if (c->sent < c->head_len) {
			iov[0].iov_base = c->head + c->sent;
			iov[0].iov_len = c->head_len - c->sent;
			iov[1].iov_base = c->body.p;
			iov[1].iov_len = c->body.len;
			mh.msg_iovlen = 2;
		} else if (c->sent < c->head_len + c->body.len) {
			iov[0].iov_base = c->body.p + (c->sent - c->head_len);
			iov[0].iov_len = c->body.len - (c->sent - c->head_len);
			mh.msg_iovlen = 1;
		} else {
			break;
		}
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_close(e, i);
			return;
		}
		c->sent += n;
	}
	/*
	 * All sent.  A close() with unread input would reset the connection
	 * and could cut the answer short at the client: shut down our side
	 * and read until the client closes (or LINGER_MS pass).
	 */
	shutdown(c->fd, SHUT_WR);
	sf_buf_free(&c->body);
	c->state = CONN_LINGERING;
	c->deadline_ms = now_ms() + LINGER_MS;
}

/* ---- the textfile ---- */

/*
 * satfeed.prom, whole or not at all: written under a temporary name that
 * node_exporter ignores (it reads *.prom only), then renamed over the old
 * one.  0 or -errno.
 */
static int textfile_write(struct exporter *e)
{
	char tmp[PATH_MAX];
	ssize_t n;
	size_t off = 0;
	int fd, err = 0;

	sf_buf_reset(&e->scratch);
	if (expose(e, &e->scratch, SF_METRICS_TEXT) < 0)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s", e->tmpl);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < e->scratch.len) {
		n = write(fd, e->scratch.p + off, e->scratch.len - off);
		if (n < 0) {
			err = -errno;
			break;
		}
		off += n;
	}
	/* mkstemp makes it 0600; node_exporter may run as another user */
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, e->file))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static void textfile_tick(struct exporter *e)
{
	int err = textfile_write(e);

	if (err && -err != e->textfile_err)
		sf_msg("export: cannot write %s: %s", e->file,
			strerror(-err));
	else if (!err && e->textfile_err)
		sf_msg("export: writing %s again", e->file);
	e->textfile_err = -err;
}

/* Returns an enum sf_exit: the directory must take the first file. */
static int textfile_open(struct exporter *e)
{
	struct stat st;
	int err;

	if (stat(e->o->textfile, &st))
		return fail(SF_EXIT_ERROR, "--textfile %s: %s", e->o->textfile,
			    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(SF_EXIT_ERROR, "--textfile %s is not a directory",
			    e->o->textfile);
	snprintf(e->file, sizeof(e->file), "%s/" SF_EXPORT_TEXTFILE,
		 e->o->textfile);
	snprintf(e->tmpl, sizeof(e->tmpl), "%s/." SF_EXPORT_TEXTFILE ".XXXXXX",
		 e->o->textfile);
	err = textfile_write(e);
	if (err)
		return fail(SF_EXIT_ERROR, "--textfile %s: cannot write %s there: %s",
			    e->o->textfile, SF_EXPORT_TEXTFILE, strerror(-err));
	printf("writing %s every %g s\n", e->file, e->o->interval);
	fflush(stdout);
	return SF_EXIT_OK;
}

/* ---- the loop ---- */

/* Serve until a signal; SIGINT and SIGTERM are blocked but in ppoll(). */
static int serve(struct exporter *e, const sigset_t *wait_mask)
{
	__u64 period = e->o->interval * 1000, next_file = now_ms() + period;
	struct pollfd pfd[MAX_CONNS + 1];
	int map[MAX_CONNS + 1];

	while (!stop) {
		__u64 now = now_ms(), wake = e->o->textfile ? next_file : now + 60000;
		struct timespec ts;
		int n = 0, r;

		if (e->lfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = e->lfd, .events = POLLIN };
			map[n++] = -1;
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			struct conn *c = e->conns[i];

			if (!c)
				continue;
			if (c->deadline_ms <= now) {
				conn_close(e, i);
				continue;
			}
			wake = c->deadline_ms < wake ? c->deadline_ms : wake;
			pfd[n] = (struct pollfd){
				.fd = c->fd,
				.events = c->state == CONN_WRITING ? POLLOUT : POLLIN,
			};
			map[n++] = i;
		}
		wake = wake > now ? wake - now : 0;	/* from now on: a wait */
		ts.tv_sec = wake / 1000;
		ts.tv_nsec = wake % 1000 * 1000000;
		r = ppoll(pfd, n, &ts, wait_mask);
		if (r < 0 && errno != EINTR)
			return fail(SF_EXIT_ERROR, "ppoll: %s", strerror(errno));
		for (int k = 0; r > 0 && k < n; k++) {
			struct conn *c;

			if (!pfd[k].revents)
				continue;
			if (map[k] < 0) {
				conn_accept(e);
				continue;
			}
			c = e->conns[map[k]];
			if (!c)
				continue;	/* evicted by an accept above */
			if (c->state == CONN_WRITING)
				conn_write(e, c, map[k]);
			else
				conn_read(e, c, map[k]);
			/* a complete request is answered at once */
			c = e->conns[map[k]];
			if (c && c->state == CONN_WRITING)
				conn_write(e, c, map[k]);
		}
		if (e->o->textfile && now_ms() >= next_file) {
			textfile_tick(e);
			while (next_file <= now_ms())
				next_file += period;
		}
	}
	return SF_EXIT_OK;
}

int sf_export_run(const struct sf_export_opts *o)
{
	struct exporter e = { .o = o, .lfd = -1, .last_up = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, orig;
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o->listen) {
		err = listen_open(&e);
		if (err)
			goto cleanup;
	}
	if (o->textfile) {
		err = textfile_open(&e);
		if (err)
			goto cleanup;
	} else {
		/* say at once whether the engine is there */
		err = expose(&e, &e.scratch, SF_METRICS_TEXT) < 0 ?
			      SF_EXIT_ERROR : SF_EXIT_OK;
		if (err)
			goto cleanup;
	}
	err = serve(&e, &orig);
	/*
	 * A file left behind would show the last figures as current for as
	 * long as node_exporter runs: it goes with the exporter.
	 */
	if (o->textfile)
		unlink(e.file);
cleanup:
	for (int i = 0; i < MAX_CONNS; i++)
		if (e.conns[i])
			conn_close(&e, i);
	if (e.lfd >= 0)
		close(e.lfd);
	sf_buf_free(&e.scratch);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return err;
}
