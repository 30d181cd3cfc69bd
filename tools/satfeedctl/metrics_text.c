// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics_text.c - the text of the exposition (metrics_int.h): the growing
 * buffer it is written into, a family's HELP and TYPE, a value as an exact
 * decimal, a name as a label value, an engine time on the wall clock.
 * metrics.c (the engine's and the programs' families) and
 * metrics_targets.c (the targets') both write with these.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sf_escape.h"
#include "metrics.h"
#include "metrics_int.h"

/* the longest name in a label: a program's pin name */
#define LABEL_NAME_MAX sizeof(((struct sf_prog_stats *)0)->name)

/* ---- the buffer ---- */

static bool buf_grow(struct sf_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->oom)
		return false;
	while (cap < b->len + need + 1)
		cap *= 2;
	if (cap == b->cap)
		return true;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sf_buf_put(struct sf_buf *b, const char *s, size_t n)
{
	if (!buf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sf_buf_printf(struct sf_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_grow(b, n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void sf_buf_reset(struct sf_buf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->p)
		b->p[0] = '\0';
}

void sf_buf_free(struct sf_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* A CLOCK_MONOTONIC time of the engine on the wall clock, as of now. */
__u64 sf_mx_to_real(const struct scrape *sc, __u64 mono_ns)
{
	__u64 age = sc->now_mono_ns > mono_ns ? sc->now_mono_ns - mono_ns : 0;

	return sc->now_real_ns > age ? sc->now_real_ns - age : 0;
}

/* ---- writing ---- */

/*
 * A label value: the text a terminal shows for the name (sf_text_escape:
 * printable ASCII kept, '\' as "\\", any other byte as "\xHH"), with '\'
 * and '"' escaped as the exposition formats want.  Prometheus wants valid
 * UTF-8 there, and a comm or a cgroup directory name may hold any byte.
 */
void sf_mx_label_value(struct sf_buf *b, const char *s, size_t max)
{
	char text[SF_TEXT_ESCAPED_LEN(LABEL_NAME_MAX)];

	sf_text_escape(text, sizeof(text), s, max);
	for (const char *p = text; *p; p++) {
		if (*p == '\\' || *p == '"')
			sf_buf_put(b, "\\", 1);
		sf_buf_put(b, p, 1);
	}
}

/* value / 10^decimals, exactly, in decimal. */
void sf_mx_fixed(struct sf_buf *b, __u64 value, int decimals)
{
	__u64 scale = 1;

	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (!decimals)
		sf_buf_printf(b, "%llu", (unsigned long long)value);
	else
		sf_buf_printf(b, "%llu.%0*llu",
			      (unsigned long long)(value / scale), decimals,
			      (unsigned long long)(value % scale));
}

/* What a family's sample names end in. */
const char *const sf_mx_sample_suffix[] = { "", "_total", "_info" };

/*
 * HELP and TYPE of a family.  A counter's samples end in _total; the
 * family is named without it in OpenMetrics and with it in the text
 * format.  An info family's samples end in _info: a gauge of 1 in the text
 * format, type info in OpenMetrics.
 */
void sf_mx_family_head(struct sf_buf *b, const struct scrape *sc,
		       const char *name, enum family_type type,
		       const char *help)
{
	static const char *const text_type[] = { "gauge", "counter", "gauge" };
	static const char *const om_type[] = { "gauge", "counter", "info" };
	bool om = sc->fmt == SF_METRICS_OPENMETRICS;
	const char *sfx = om ? "" : sf_mx_sample_suffix[type];

	sf_buf_printf(b, "# HELP %s%s %s\n", name, sfx, help);
	sf_buf_printf(b, "# TYPE %s%s %s\n", name, sfx,
		      om ? om_type[type] : text_type[type]);
}
