// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export_http.c - the exporter's HTTP/1.1 side (export_http.h): the
 * listening socket, the connections and the requests.
 *
 * Every socket is non-blocking and every connection has a deadline in each
 * of its states (reading its request: CONN_TIMEOUT_MS from accept; writing
 * the answer: the same; lingering after it: LINGER_MS), so a client that
 * sends its request slowly, reads the answer slowly or not at all, or never
 * closes, holds only its own slot, and only for so long: the others are
 * served meanwhile.  When every slot is taken, a new connection always gets
 * one: the connection dropped for it is one that was answered and only
 * lingers, else the one that made no progress (a byte read or written) for
 * the longest, whatever its state; a scrape in progress moves on every
 * ppoll() and is the last to go.  A scrape renders the exposition when its
 * request is complete, into a buffer the connection then drains at the
 * client's pace.  Only GET is served.  None of this knows what the
 * metrics are, and the exposition and the textfile know nothing of
 * sockets: each is the other's one callback or one call, so this is a file
 * of its own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "sf_common.h"
#include "export_http.h"
#include "metrics.h"

#define REQUEST_MAX	8192		/* request line and headers */
#define CONN_TIMEOUT_MS	10000		/* Prometheus' default scrape timeout */
#define LINGER_MS	1000		/* reading what a client sent after */

enum conn_state {
	CONN_FREE = 0,
	CONN_READING,		/* the request is not complete yet */
	CONN_WRITING,		/* the answer is on its way */
	CONN_LINGERING,		/* answered and shut down; draining input */
};

struct sf_http_conn {
	enum conn_state state;
	int fd;
	__u64 deadline_ms;
	__u64 accepted_ms;
	__u64 progress_ms;	/* accepted, or a byte read or written */
	size_t rlen;
	char req[REQUEST_MAX];
	char head[512];
	size_t head_len;
	struct sf_buf body;
	size_t sent;		/* of head and then body */
};

/* one prefix for every message of satfeedctl, the exporter's too */
#define fail sf_fail

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

int sf_http_listen(struct sf_http *h, const char *addr, bool allow_remote)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char where[INET6_ADDRSTRLEN + 16];
	int one = 1, fd;

	if (parse_listen(addr, &ss, &sl))
		return fail(SF_EXIT_USAGE, "--listen '%s' is not ADDR:PORT (an IPv4 address, [an IPv6 address] or localhost, and a port 0 to 65535)",
			    addr);
	if (!is_loopback(&ss) && !allow_remote)
		return fail(SF_EXIT_USAGE, "--listen %s is not a loopback address: anyone who can reach it reads what your servers do; add --allow-remote to serve it anyway",
			    addr);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return fail(SF_EXIT_ERROR, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 64)) {
		int err = errno;

		close(fd);
		return fail(SF_EXIT_ERROR, "cannot listen on %s: %s",
			    addr, strerror(err));
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	addr_str(&ss, where, sizeof(where));
	printf("serving http://%s/metrics\n", where);
	fflush(stdout);
	h->lfd = fd;
	return SF_EXIT_OK;
}

/* ---- connections ---- */

static void conn_close(struct sf_http *h, int i)
{
	struct sf_http_conn *c = h->conns[i];

	close(c->fd);
	sf_buf_free(&c->body);
	free(c);
	h->conns[i] = NULL;
}

/*
 * A free slot, or one freed for a new connection: the lingering connection
 * that progressed least recently, else any that did.  Never -1.
 */
static int conn_slot(struct sf_http *h)
{
	int victim = -1;

	for (int i = 0; i < SF_HTTP_MAX_CONNS; i++) {
		struct sf_http_conn *c = h->conns[i], *v;

		if (!c)
			return i;
		if (victim < 0) {
			victim = i;
			continue;
		}
		v = h->conns[victim];
		/* answered and lingering goes first, then the stalest */
		bool cl = c->state == CONN_LINGERING;

		if (cl != (v->state == CONN_LINGERING)) {
			if (cl)
				victim = i;
		} else if (c->progress_ms < v->progress_ms) {
			victim = i;
		}
	}
	conn_close(h, victim);
	return victim;
}

static void conn_accept(struct sf_http *h)
{
	for (;;) {
		struct sf_http_conn *c;
		int fd, i;

		fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;	/* EAGAIN, or a connection already reset */
		i = conn_slot(h);
		c = i >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CONN_READING;
		c->accepted_ms = sf_http_now_ms();
		c->progress_ms = c->accepted_ms;
		c->deadline_ms = c->accepted_ms + CONN_TIMEOUT_MS;
		h->conns[i] = c;
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

static void respond(struct sf_http_conn *c, int status, const char *reason,
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

static void plain(struct sf_http_conn *c, int status, const char *reason,
		  const char *extra, const char *text)
{
	sf_buf_reset(&c->body);
	sf_buf_printf(&c->body, "%s\n", text);
	respond(c, status, reason, "text/plain; charset=utf-8", extra);
}

/* The request is complete in c->req: make the answer. */
static void conn_request(struct sf_http *h, struct sf_http_conn *c)
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
	if (h->render(h->ctx, &c->body, fmt) < 0) {
		plain(c, 500, "Internal Server Error", "", "out of memory");
		return;
	}
	respond(c, 200, "OK", sf_metrics_content_type(fmt), "");
}

static void conn_read(struct sf_http *h, struct sf_http_conn *c, int i)
{
	char *end;
	ssize_t n;

	if (c->state == CONN_LINGERING) {
		char sink[4096];

		while ((n = recv(c->fd, sink, sizeof(sink), 0)) > 0)
			c->progress_ms = sf_http_now_ms();
		if (n == 0 || errno != EAGAIN)
			conn_close(h, i);
		return;
	}
	n = recv(c->fd, c->req + c->rlen, sizeof(c->req) - 1 - c->rlen, 0);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_close(h, i);
		return;
	}
	c->rlen += n;
	c->req[c->rlen] = '\0';
	c->progress_ms = sf_http_now_ms();
	if (strlen(c->req) != c->rlen) {
		plain(c, 400, "Bad Request", "", "bad request");
		return;
	}
	end = strstr(c->req, "\r\n\r\n");
	if (!end)
		end = strstr(c->req, "\n\n");
	if (end)
		conn_request(h, c);
	else if (c->rlen == sizeof(c->req) - 1)
		plain(c, 431, "Request Header Fields Too Large", "",
		      "request header too large");
}

static void conn_write(struct sf_http *h, struct sf_http_conn *c, int i)
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
			conn_close(h, i);
			return;
		}
		c->sent += n;
		c->progress_ms = sf_http_now_ms();
	}
	/*
	 * All sent.  A close() with unread input would reset the connection
	 * and could cut the answer short at the client: shut down our side
	 * and read until the client closes (or LINGER_MS pass).
	 */
	shutdown(c->fd, SHUT_WR);
	sf_buf_free(&c->body);
	c->state = CONN_LINGERING;
	c->deadline_ms = sf_http_now_ms() + LINGER_MS;
}

int sf_http_poll_set(struct sf_http *h, struct pollfd *pfd, __u64 now,
		     __u64 *wake)
{
	int n = 0;

	if (h->lfd >= 0) {
		pfd[n] = (struct pollfd){ .fd = h->lfd, .events = POLLIN };
		h->map[n++] = -1;
	}
	for (int i = 0; i < SF_HTTP_MAX_CONNS; i++) {
		struct sf_http_conn *c = h->conns[i];

		if (!c)
			continue;
		if (c->deadline_ms <= now) {
			conn_close(h, i);
			continue;
		}
		*wake = c->deadline_ms < *wake ? c->deadline_ms : *wake;
		pfd[n] = (struct pollfd){
			.fd = c->fd,
			.events = c->state == CONN_WRITING ? POLLOUT : POLLIN,
		};
		h->map[n++] = i;
	}
	return n;
}

void sf_http_poll_done(struct sf_http *h, const struct pollfd *pfd, int n,
		       int r)
{
	for (int k = 0; r > 0 && k < n; k++) {
		struct sf_http_conn *c;
		int i = h->map[k];

		if (!pfd[k].revents)
			continue;
		if (i < 0) {
			conn_accept(h);
			continue;
		}
		c = h->conns[i];
		if (!c)
			continue;	/* evicted by an accept above */
		if (c->state == CONN_WRITING)
			conn_write(h, c, i);
		else
			conn_read(h, c, i);
		/* a complete request is answered at once */
		c = h->conns[i];
		if (c && c->state == CONN_WRITING)
			conn_write(h, c, i);
	}
}

void sf_http_close(struct sf_http *h)
{
	for (int i = 0; i < SF_HTTP_MAX_CONNS; i++)
		if (h->conns[i])
			conn_close(h, i);
	if (h->lfd >= 0)
		close(h->lfd);
	h->lfd = -1;
}
