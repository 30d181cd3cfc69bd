// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics.c - the Prometheus exposition of satfeed's windows
 * (metrics.h).
 *
 * Every figure is an exact integer in the maps; it is printed as that
 * integer over a power of ten ("%llu.%09llu" for nanoseconds as seconds), a
 * decimal that a parser rounds once, to the double nearest the exact value.
 * A family's samples must be contiguous in both formats, so the targets are
 * read first, a reading each (sf_reading.h), then written family by family
 * (the targets' families: metrics_targets.c; the engine's and the
 * programs' here).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "metrics.h"
#include "metrics_int.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "sf_progstats.h"
#include "sf_reading.h"
#include "sf_target.h"

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

/* ---- what one scrape reads ---- */

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time of the engine on the wall clock, as of now. */
__u64 sf_mx_to_real(const struct scrape *sc, __u64 mono_ns)
{
	__u64 age = sc->now_mono_ns > mono_ns ? sc->now_mono_ns - mono_ns : 0;

	return sc->now_real_ns > age ? sc->now_real_ns - age : 0;
}

static bool bpf_stats_enabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int on = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on == 1;
}

/* Read everything one exposition shows.  Returns an enum sf_exit. */
static int scrape_read(struct scrape *sc, const char *root, char *why,
		       size_t len)
{
	struct sf_target_table *tab = NULL;
	struct sf_target_view *v;
	struct sf_pins p;
	int err;

	err = sf_pins_open(&p, root, why, len);
	if (err)
		return err;
	sc->info = p.info;
	sc->now_real_ns = clock_ns(CLOCK_REALTIME);
	sc->now_mono_ns = clock_ns(CLOCK_MONOTONIC);
	sc->rows = calloc(p.info.max_targets, sizeof(*sc->rows));
	v = malloc(sizeof(*v));
	if (!sc->rows || !v) {
		snprintf(why, len, "out of memory");
		err = SF_EXIT_ERROR;
		goto free_view;
	}
	tab = malloc(sizeof(*tab));
	if (!tab) {
		snprintf(why, len, "out of memory");
		err = SF_EXIT_ERROR;
		goto free_view;
	}
	err = sf_target_table_read(&p, tab, why, len);
	if (err) {
		err = sf_lock_exit(err);
		goto free_view;
	}
	for (__u32 slot = 0; (err = sf_target_view_next(&p, tab, &slot, v)) > 0;
	     slot++)
		sf_reading_build(&sc->rows[sc->nr_rows++], v,
				 p.info.window_samples, p.info.max_age_ns,
				 sc->now_mono_ns);
	if (err) {
		snprintf(why, len, "cannot read the windows under %s: %s",
			 root, strerror(-err));
		err = SF_EXIT_ERROR;
		goto free_view;
	}
	sc->nr_progs = sf_prog_stats_read(root, sc->progs, MAX_PROGS, NULL);
	if (sc->nr_progs > MAX_PROGS)
		sc->nr_progs = MAX_PROGS;
	sc->bpf_stats = bpf_stats_enabled();
free_view:
	free(tab);
	free(v);
	sf_pins_close(&p);
	return err;
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

static void write_engine(struct sf_buf *b, const struct scrape *sc)
{
	sf_mx_family_head(b, sc, "satfeed_engine", INFO,
		    "The loaded engine: ABI version, attach mode, samples per window (N), windows kept per stream, target slots.");
	sf_buf_printf(b, "satfeed_engine_info{abi_version=\"%u\",attach_mode=\"%s\",window_samples=\"%u\",history=\"%u\",max_targets=\"%u\"} 1\n",
		      sc->info.abi_version, sf_attach_name(sc->info.attach_mode),
		      sc->info.window_samples, sc->info.history,
		      sc->info.max_targets);
	sf_mx_family_head(b, sc, "satfeed_engine_load_timestamp_seconds", GAUGE,
		    "When the engine was loaded, seconds since the epoch.");
	sf_buf_printf(b, "satfeed_engine_load_timestamp_seconds ");
	sf_mx_fixed(b, sc->info.load_realtime_ns, 9);
	sf_buf_put(b, "\n", 1);
}

/*
 * The engine programs' own cost, as the kernel counts it: runs skipped
 * always, run count and time only while kernel.bpf_stats_enabled is 1
 * (they stand still, and would read as an idle engine, otherwise).
 */
static void write_programs(struct sf_buf *b, const struct scrape *sc)
{
	sf_mx_family_head(b, sc, "satfeed_bpf_stats_enabled", GAUGE,
		    "1 while kernel.bpf_stats_enabled is on: the programs' run count and time are counted.");
	sf_buf_printf(b, "satfeed_bpf_stats_enabled %d\n", sc->bpf_stats);
	if (sc->nr_progs <= 0)
		return;
	sf_mx_family_head(b, sc, "satfeed_program_recursion_misses", COUNTER,
		    "Runs of an engine program the kernel skipped because a run of it was in progress on that CPU: events missing from the windows.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_recursion_misses_total{program=\"");
		sf_mx_label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} %llu\n",
			      (unsigned long long)sc->progs[i].recursion_misses);
	}
	if (!sc->bpf_stats)
		return;
	sf_mx_family_head(b, sc, "satfeed_program_runs", COUNTER,
		    "Runs of an engine program while kernel.bpf_stats_enabled was on.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_runs_total{program=\"");
		sf_mx_label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} %llu\n",
			      (unsigned long long)sc->progs[i].run_cnt);
	}
	sf_mx_family_head(b, sc, "satfeed_program_run_seconds", COUNTER,
		    "Time spent in an engine program while kernel.bpf_stats_enabled was on.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_run_seconds_total{program=\"");
		sf_mx_label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} ");
		sf_mx_fixed(b, sc->progs[i].run_time_ns, 9);
		sf_buf_put(b, "\n", 1);
	}
}

const char *sf_metrics_content_type(enum sf_metrics_format fmt)
{
	return fmt == SF_METRICS_OPENMETRICS ?
		       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
		       "text/plain; version=0.0.4; charset=utf-8";
}

int sf_metrics_write(struct sf_buf *b, const char *root,
		     enum sf_metrics_format fmt, char *why, size_t len)
{
	struct scrape *sc;
	int up, err;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->fmt = fmt;
	err = scrape_read(sc, root, why, len);
	up = !err;
	sf_mx_family_head(b, sc, "satfeed_up", GAUGE,
		    "1 when the engine is loaded and speaks this build's ABI, else 0 (and no other satfeed metric).");
	sf_buf_printf(b, "satfeed_up %d\n", up);
	if (up) {
		write_engine(b, sc);
		sf_mx_write_targets(b, sc);
		write_programs(b, sc);
	}
	if (fmt == SF_METRICS_OPENMETRICS)
		sf_buf_printf(b, "# EOF\n");
	free(sc->rows);
	free(sc);
	return b->oom ? -ENOMEM : up;
}
