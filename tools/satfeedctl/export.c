// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * export.c - `satfeedctl export` (export.h): serve satfeed's windows
 * to Prometheus over HTTP and/or write node_exporter textfiles.
 *
 * One thread and one poll() loop, which drives the HTTP side
 * (export_http.c: sockets, connections, requests) and the textfile's
 * period.  This file is what both outputs share: the exposition, read from
 * the pins (metrics.h) when a scrape's request is complete or the
 * textfile is due (well under a millisecond for 64 targets), with the
 * engine's state changes said once each; the textfile, written whole or not
 * at all; the signals that stop the loop.
 *
 * Nothing is ever written to the engine: the exporter has no endpoint that
 * changes state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sf_common.h"
#include "export.h"
#include "export_http.h"
#include "metrics.h"

struct exporter {
	const struct sf_export_opts *o;
	struct sf_http http;	/* --listen; its lfd is -1 without */
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

/*
 * The exposition into b; the engine's state changes (found, lost, why) go
 * to stderr once each, not once per scrape.  An sf_http_render_fn.
 */
static int expose(void *ctx, struct sf_buf *b, enum sf_metrics_format fmt)
{
	struct exporter *e = ctx;
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
	__u64 period = e->o->interval * 1000;
	__u64 next_file = sf_http_now_ms() + period;
	struct pollfd pfd[SF_HTTP_MAX_CONNS + 1];

	while (!stop) {
		__u64 now = sf_http_now_ms();
		__u64 wake = e->o->textfile ? next_file : now + 60000;
		struct timespec ts;
		int n, r;

		n = sf_http_poll_set(&e->http, pfd, now, &wake);
		wake = wake > now ? wake - now : 0;	/* from now on: a wait */
		ts.tv_sec = wake / 1000;
		ts.tv_nsec = wake % 1000 * 1000000;
		r = ppoll(pfd, n, &ts, wait_mask);
		if (r < 0 && errno != EINTR)
			return fail(SF_EXIT_ERROR, "ppoll: %s", strerror(errno));
		sf_http_poll_done(&e->http, pfd, n, r);
		if (e->o->textfile && sf_http_now_ms() >= next_file) {
			textfile_tick(e);
			while (next_file <= sf_http_now_ms())
				next_file += period;
		}
	}
	return SF_EXIT_OK;
}

int sf_export_run(const struct sf_export_opts *o)
{
	struct exporter e = {
		.o = o,
		.http = { .lfd = -1, .render = expose },
		.last_up = -1,
	};
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
	e.http.ctx = &e;
	if (o->listen) {
		char addr[80];
		const char *listen = o->listen;

		/* ":PORT": the default address (loopback) on that port */
		if (listen[0] == ':' && strlen(listen) < sizeof(addr) - 16) {
			snprintf(addr, sizeof(addr), "%.*s%s",
				 (int)(strrchr(SF_EXPORT_DEFAULT_LISTEN, ':') -
				       SF_EXPORT_DEFAULT_LISTEN),
				 SF_EXPORT_DEFAULT_LISTEN, listen);
			listen = addr;
		}
		err = sf_http_listen(&e.http, listen, o->allow_remote);
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
	sf_http_close(&e.http);
	sf_buf_free(&e.scratch);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return err;
}
