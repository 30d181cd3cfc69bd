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
 * programs' here; the text they are written with: metrics_text.c).
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

/* ---- what one scrape reads ---- */

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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
