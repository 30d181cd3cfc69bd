/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics.h - satfeed's windows as Prometheus metrics: the text
 * exposition format 0.0.4 (what promtool and node_exporter's textfile
 * collector read) or OpenMetrics 1.0 (what Prometheus asks for first).
 *
 *	struct sf_buf b = {};
 *	char why[512];
 *	int up = sf_metrics_write(&b, SATFEED_DEFAULT_ROOT, SF_METRICS_TEXT,
 *				  why, sizeof(why));
 *
 * The pins are opened, read through sf_target_view_next() (every stream
 * copied under its lock) and closed again on every call, so an engine that
 * was unloaded or reloaded in between is never read through stale maps.
 * Each target is printed from its one reading (sf_reading.h), as show
 * prints it.  The metric names, their units and labels are listed in
 * docs/prometheus.md.
 */
#ifndef __SF_METRICS_H
#define __SF_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/* A growable text buffer; zero-initialised is empty. */
struct sf_buf {
	char *p;
	size_t len;
	size_t cap;
	bool oom;		/* an append failed: the content is cut */
};

void sf_buf_printf(struct sf_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sf_buf_put(struct sf_buf *b, const char *s, size_t n);
void sf_buf_reset(struct sf_buf *b);
void sf_buf_free(struct sf_buf *b);

enum sf_metrics_format {
	SF_METRICS_TEXT = 0,		/* Prometheus text format 0.0.4 */
	SF_METRICS_OPENMETRICS = 1,	/* OpenMetrics 1.0.0 */
};

/* The Content-Type header value of each format. */
const char *sf_metrics_content_type(enum sf_metrics_format fmt);

/*
 * Append the exposition of the engine pinned under root to b.  Returns 1
 * when the engine was read (satfeed_up 1), 0 when it was not (satfeed_up 0
 * is all that is written; *why says why: not loaded, ABI mismatch, a read
 * that failed), or -ENOMEM when b could not grow.
 */
int sf_metrics_write(struct sf_buf *b, const char *root,
		     enum sf_metrics_format fmt, char *why, size_t len);

#endif /* __SF_METRICS_H */
