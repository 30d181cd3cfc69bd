/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * metrics_int.h - what the two halves of the exposition share: the
 * scrape (metrics.c reads it, the engine and program families) and the
 * families of the targets (metrics_targets.c).  Private to the exporter.
 */
#ifndef __SF_METRICS_INT_H
#define __SF_METRICS_INT_H

#include "metrics.h"
#include "sf_progstats.h"
#include "sf_reading.h"

#define MAX_PROGS SF_PROG_STATS_MAX

/* What one exposition shows, read at once. */
struct scrape {
	enum sf_metrics_format fmt;
	struct satfeed_info info;
	struct sf_reading *rows;	/* one reading per target */
	__u32 nr_rows;
	struct sf_prog_stats progs[MAX_PROGS];
	int nr_progs;		/* or -errno */
	bool bpf_stats;		/* kernel.bpf_stats_enabled */
	__u64 now_real_ns;
	__u64 now_mono_ns;	/* the readings' now */
};

enum family_type { GAUGE, COUNTER, INFO };

/* What a family's sample names end in: "", "_total", "_info". */
extern const char *const sf_mx_sample_suffix[];

/* HELP and TYPE of a family, named as the format wants. */
void sf_mx_family_head(struct sf_buf *b, const struct scrape *sc,
		       const char *name, enum family_type type,
		       const char *help);
/* a name as a label value, escaped for the terminal and the format */
void sf_mx_label_value(struct sf_buf *b, const char *s, size_t max);
/* value / 10^decimals, exactly, in decimal */
void sf_mx_fixed(struct sf_buf *b, __u64 value, int decimals);
/* a CLOCK_MONOTONIC time of the engine on the wall clock */
__u64 sf_mx_to_real(const struct scrape *sc, __u64 mono_ns);

/* Every family of the targets: labels, windows, counters, verdict. */
void sf_mx_write_targets(struct sf_buf *b, const struct scrape *sc);

#endif /* __SF_METRICS_INT_H */
