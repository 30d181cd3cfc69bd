/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_figures.h - what a reader shows of one stream: the newest closed
 * window while it is recent, else the window in progress (from the running
 * sums acc_*), marked partial, with an estimate of when it closes; and the
 * names of a verdict's states.
 *
 *	struct sf_figures f;
 *
 *	sf_stream_figures(&st, SATFEED_STREAM_POLL, info.window_samples,
 *			  sf_now_mono_ns(), &f);
 *	if (f.source == SF_FIG_PARTIAL)
 *		printf("idle %u permille so far, closes in ~%llu s\n",
 *		       f.idle_permille, f.closes_in_ns / 1000000000);
 *
 * A closed window's figures are the engine's own fields.  A partial
 * window's are computed here from the running sums with the same formulas
 * (satfeed.h), over the samples so far: integer, floor, the same units.
 * The verdict itself is read with the target (sf_target_view_next()).
 */
#ifndef __SF_FIGURES_H
#define __SF_FIGURES_H

#include <stdbool.h>
#include "satfeed.h"

/*
 * A closed window is stale once more than this many of its own spans have
 * passed since it closed (at least SF_STALE_MIN_NS): the server's load may
 * have changed since, and a window in progress says more.
 */
#define SF_STALE_SPANS		3
#define SF_STALE_MIN_NS		2000000000ULL	/* 2 s */

enum sf_fig_source {
	SF_FIG_NONE = 0,	/* no window closed and none in progress */
	SF_FIG_CLOSED = 1,	/* the newest closed window, recent */
	SF_FIG_PARTIAL = 2,	/* the window in progress, pending samples */
	SF_FIG_STALE = 3,	/* the newest closed window, old: nothing newer */
};

struct sf_figures {
	enum sf_fig_source source;
	__u64 samples;		/* samples the figures are over */
	__u64 mean_ns;
	__u64 var_ns2;
	__u64 rate_milli;	/* events per 1000 s (send: 1000 * RPS) */
	__u32 wait_permille;	/* poll only */
	__u32 idle_permille;	/* poll only */
	__u32 cv2_permille;	/* var / mean^2, permille */
	__u64 age_ns;		/* since the window closed (closed, stale) or
				 * since the last event (partial) */
	__u64 closes_in_ns;	/* partial: estimated time until it closes,
				 * from its pending samples and their rate;
				 * 0 when unknown */
	__u64 newest_seq;	/* newest closed window, 0: none */
};

/* "closed", "partial", "stale" or "none" */
const char *sf_fig_source_name(enum sf_fig_source s);

/*
 * The figures of stream s (enum satfeed_stream_id) of a target, n samples
 * per window, as of now (CLOCK_MONOTONIC ns).
 */
void sf_stream_figures(const struct satfeed_stream *st, __u32 stream,
		       __u32 n, __u64 now, struct sf_figures *f);

/*
 * floor(1000 * (n * S2 - S1^2) / S1^2): the squared coefficient of
 * variation of n samples of sum s1 and sum of squares s2 (128 bits), in
 * permille, capped at 0xffffffff; 0 when s1 is 0.  The engine's formula.
 */
__u32 sf_cv2_permille(__u64 n, __u64 s1, __u64 s2_lo, __u64 s2_hi);

/* "unknown", "ok", "near", "full" (enum satfeed_sat_state) */
const char *sf_sat_state_name(__u32 state);

#endif /* __SF_FIGURES_H */
