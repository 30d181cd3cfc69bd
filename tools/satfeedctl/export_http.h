/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * export_http.h - the exporter's HTTP/1.1 side (export_http.c): a
 * listening socket and up to SF_HTTP_MAX_CONNS non-blocking connections,
 * driven by the exporter's one poll loop (export.c), which also renders
 * what /metrics answers.
 *
 *	struct sf_http h = { .lfd = -1, .render = expose, .ctx = e };
 *
 *	err = sf_http_listen(&h, "127.0.0.1:9437", false);
 *	for (;;) {
 *		n = sf_http_poll_set(&h, pfd, now_ms, &wake);
 *		r = ppoll(pfd, n, &timeout, NULL);
 *		sf_http_poll_done(&h, pfd, n, r);
 *	}
 *	sf_http_close(&h);
 */
#ifndef __SF_EXPORT_HTTP_H
#define __SF_EXPORT_HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <linux/types.h>
#include "sf_common.h"
#include "metrics.h"

#define SF_HTTP_MAX_CONNS	16

/* The body of a /metrics answer in fmt, into b: < 0 when out of memory. */
typedef int (*sf_http_render_fn)(void *ctx, struct sf_buf *b,
				 enum sf_metrics_format fmt);

struct sf_http_conn;

struct sf_http {
	int lfd;		/* the listening socket; -1: none */
	struct sf_http_conn *conns[SF_HTTP_MAX_CONNS];
	int map[SF_HTTP_MAX_CONNS + 1];	/* pollfd -> conns[], -1: lfd */
	sf_http_render_fn render;
	void *ctx;		/* render's */
};

/* The exporter's clock: deadlines and the textfile's period. */
static inline __u64 sf_http_now_ms(void)
{
	return sf_now_mono_ns() / 1000000;
}

/*
 * Listen on addr ("A.B.C.D:PORT", "[IPV6]:PORT" or "localhost:PORT"),
 * which must be loopback unless allow_remote, and say where on stdout.
 * Returns an enum sf_exit, with a line on stderr on failure.
 */
int sf_http_listen(struct sf_http *h, const char *addr, bool allow_remote);

/*
 * Close the connections whose deadline passed, then fill pfd (room for
 * SF_HTTP_MAX_CONNS + 1) with the listening socket and what the others
 * wait for; *wake comes down to the earliest deadline.  Returns how many.
 */
int sf_http_poll_set(struct sf_http *h, struct pollfd *pfd, __u64 now,
		     __u64 *wake);

/*
 * Serve what ppoll(), which returned r, found ready in pfd[0..n) as
 * sf_http_poll_set() filled it: accept, read, answer, write.
 */
void sf_http_poll_done(struct sf_http *h, const struct pollfd *pfd, int n,
		       int r);

/* Close every connection and the listening socket. */
void sf_http_close(struct sf_http *h);

#endif /* __SF_EXPORT_HTTP_H */
