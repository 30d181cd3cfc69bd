/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_reading.h - one reading of a target: what every output says of it.
 *
 * show, show --json, watch (and its --json) and the exporter all build
 * this one struct from a target read under its locks
 * (sf_target_view_next()), and print from it only:
 *
 *	struct sf_reading r;
 *
 *	sf_reading_build(&r, &tv, info.window_samples, info.max_age_ns,
 *			 sf_now_mono_ns());
 *	printf("%s%s\n", sf_reading_state_name(&r),
 *	       r.verdict_stale ? " (stale)" : "");
 *	for (int i = 0; i < SF_NR_FIGS; i++)
 *		if (r.fig[i].source != SF_FIG_NONE)
 *			printf("%s %llu / 10^%d (%s, %llu ns old)\n",
 *			       sf_figs[i].name, r.fig[i].value,
 *			       sf_figs[i].decimals,
 *			       sf_fig_source_name(r.fig[i].source),
 *			       r.fig[i].age_ns);
 *
 * The verdict is the engine's (satfeed_verdict), with its age and whether
 * it is stale: the engine stopped evaluating it (ABI 4: the verdict's
 * tick_ns and updated_ns both older than 2 * satfeed_info.max_age_ns).  A
 * target without traffic is not stale but quiet: the engine says so
 * itself (reason quiet, state ok).  The headline figures (enum sf_fig)
 * are each an exact integer over a power of ten, with the window it comes
 * from (closed, partial, stale) and its age.  A figure is added in one
 * place, sf_figs[] and its fill in sf_reading.c, and every output that
 * walks sf_figs[] (the JSON's "reading", the exporter) shows it.
 *
 * The response rate is RPS_obs (the response stream, satfeed.h
 * SATFEED_STREAM_RESP); the mean service time is the service-time
 * stream's (SATFEED_STREAM_SVC), with its window and age; the service
 * time p99 is the histogram's (sf_svc_hist), counted since the target was
 * added, and takes the window and age of the service-time stream.
 *
 * And what a reader shows of one stream (sf_stream_figures()): the newest
 * closed window while it is recent, else the window in progress (from the
 * running sums acc_*), marked partial, with an estimate of when it closes; and the
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
#ifndef __SF_READING_H
#define __SF_READING_H

#include <stdbool.h>
#include "satfeed.h"
#include "sf_pins.h"

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

/* The headline figures of a target. */
enum sf_fig {
	SF_FIG_IDLE = 0,	/* poll: idle share of the span */
	SF_FIG_SEND_RATE,	/* send: sends per second */
	SF_FIG_RECV_RATE,	/* recv: receives per second */
	SF_FIG_SEND_CV2,	/* send: dispersion of the gaps, var/mean^2 */
	SF_FIG_RECV_CV2,	/* recv: the same */
	SF_FIG_WPS,		/* waits per send, smoothed (the verdict's) */
	SF_FIG_RESP_RATE,	/* resp: responses per second (RPS_obs) */
	SF_FIG_SVC_MEAN,	/* svc: mean service time, ns */
	SF_FIG_SVC_P99,		/* hist: service p99 since added, ns */
	SF_FIG_DROPS,		/* verdict: datagrams dropped per arrival */
	SF_FIG_CPU,		/* verdict: CPU used of the CPUs it may use */
	SF_FIG_UNREAD,		/* verdict: most bytes a receive left unread */
	SF_NR_FIGS,
};

struct sf_fig_desc {
	const char *name;	/* the key in JSON: "idle", "send_rate" */
	const char *metric;	/* the exporter's gauge */
	int decimals;		/* value / 10^decimals is the figure */
	const char *help;	/* the metric's HELP: unit and meaning */
};

extern const struct sf_fig_desc sf_figs[SF_NR_FIGS];

/* One figure: value / 10^sf_figs[i].decimals, when source is not NONE. */
struct sf_fig_value {
	enum sf_fig_source source;
	__u64 value;
	__u64 age_ns;		/* since its window closed (closed, stale) or
				 * its last event (partial) */
};

/* The counters and the newest closed window of one stream. */
struct sf_reading_stream {
	__u64 published;	/* windows closed */
	__u64 pending;
	__u64 calls;
	__u64 errors;
	__u64 eagain;
	__u64 zero_bytes;
	__u64 not_socket;
	__u64 last_ns;		/* CLOCK_MONOTONIC, 0: no event yet; after
				 * a quiet window (which zeroes the
				 * stream's), that window's start_ns */
	struct satfeed_window newest;	/* valid when published */
	struct sf_figures f;	/* what a reader shows (sf_stream_figures()) */
};

struct sf_reading {
	__u32 slot;
	struct satfeed_target t;	/* as read (gen, kind, id, names) */
	bool gone;
	/* the verdict: the engine's as read; not shown for a gone target */
	struct satfeed_verdict v;
	bool verdict_stale;	/* judged, but the engine stopped: not
				 * evaluated for 2 * max_age_ns */
	__u64 verdict_age_ns;	/* since it was last evaluated, 0: never */
	struct sf_fig_value fig[SF_NR_FIGS];
	struct sf_reading_stream s[SATFEED_NR_STREAMS];
	struct sf_reading_stream resp;	/* responses (STREAM_RESP) */
	struct sf_reading_stream svc;	/* service time (STREAM_SVC) */
	__u64 svc_count;	/* service times since added (sf_svc_hist) */
	__u64 now;		/* CLOCK_MONOTONIC of the reading */
};

/* Stream `stream` (enum satfeed_stream_id, RESP or SVC) of a reading. */
static inline const struct sf_reading_stream *
sf_reading_stream(const struct sf_reading *r, __u32 stream)
{
	return SF_STREAM_MEMBER(r, s, stream);
}

/*
 * Build r from tv (read with sf_target_view_next()), n samples per window,
 * the engine's age bound max_age_ns (satfeed_info), as of now
 * (CLOCK_MONOTONIC ns).
 */
void sf_reading_build(struct sf_reading *r, const struct sf_target_view *tv,
		      __u32 n, __u64 max_age_ns, __u64 now);

/*
 * The p99 of the service times counted in h: the lower bound
 * (satfeed_svc_bucket_lo()) of the bucket where the cumulative count
 * reaches ceil(0.99 * count), count the sum of h's buckets, exact integer
 * arithmetic.  Returns false (and *p99_ns 0) when h counts none.  *count,
 * when not NULL, gets that sum.
 */
bool sf_svc_p99_ns(const struct satfeed_svc_hist *h, __u64 *p99_ns,
		   __u64 *count);

/* "gone", or the verdict's state ("unknown", "ok", "near", "full") */
const char *sf_reading_state_name(const struct sf_reading *r);

/*
 * The rules that hold (satfeed_verdict.why), each named once, the stronger
 * of near and full only: "wps_full", "wps_near", "idle_full", "idle_near",
 * "cv2_rise".  sf_reason_names[i] is the name of bit sf_reason_bits[i].
 */
#define SF_NR_REASONS 14
extern const char *const sf_reason_names[SF_NR_REASONS];
extern const __u32 sf_reason_bits[SF_NR_REASONS];

/* The reasons of why, the weaker one of a near/full pair dropped. */
__u32 sf_reason_strongest(__u32 why);

#endif /* __SF_READING_H */
