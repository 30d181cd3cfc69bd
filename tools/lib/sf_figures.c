// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_figures.c - the figures a reader shows of a stream (closed, partial or
 * stale window) (sf_figures.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sf_figures.h"

typedef unsigned __int128 u128;

const char *sf_fig_source_name(enum sf_fig_source s)
{
	static const char *const names[] = {
		[SF_FIG_NONE] = "none",
		[SF_FIG_CLOSED] = "closed",
		[SF_FIG_PARTIAL] = "partial",
		[SF_FIG_STALE] = "stale",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

const char *sf_sat_state_name(__u32 state)
{
	static const char *const names[] = {
		[SATFEED_SAT_UNKNOWN] = "unknown",
		[SATFEED_SAT_OK] = "ok",
		[SATFEED_SAT_NEAR] = "near",
		[SATFEED_SAT_FULL] = "full",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] :
							  "unknown";
}

__u32 sf_cv2_permille(__u64 n, __u64 s1, __u64 s2_lo, __u64 s2_hi)
{
	u128 s2 = ((u128)s2_hi << 64) | s2_lo, sq = (u128)s1 * s1, num, q;

	if (!s1)
		return 0;
	/* n * S2 >= S1^2 (Cauchy-Schwarz); n < 2^17 and S2 < 2^81 */
	num = (u128)n * s2 - sq;
	q = num * 1000 / sq;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

/* floor(num * 1000 / den) capped to 32 bits; 0 when den is 0 */
static __u32 permille(__u64 num, __u64 den)
{
	u128 q;

	if (!den)
		return 0;
	q = (u128)num * 1000 / den;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

static void from_window(const struct satfeed_window *w, __u64 now,
			struct sf_figures *f)
{
	f->samples = w->samples;
	f->mean_ns = w->mean_ns;
	f->var_ns2 = w->var_ns2;
	f->rate_milli = w->rate_milli;
	f->wait_permille = w->wait_permille;
	f->idle_permille = w->idle_permille;
	f->cv2_permille = w->cv2_permille;
	f->age_ns = now > w->end_ns ? now - w->end_ns : 0;
}

/* The window in progress, over its pending samples so far. */
static void from_sums(const struct satfeed_stream *st, __u32 stream,
		      __u32 n, __u64 now, struct sf_figures *f)
{
	__u64 p = st->pending, s1 = st->acc_sum_ns, span, elapsed;
	u128 s2 = ((u128)st->acc_sumsq_hi << 64) | st->acc_sumsq_lo;

	f->samples = p;
	f->mean_ns = s1 / p;
	/* floor((p * S2 - S1^2) / p^2): p is not a power of two here */
	f->var_ns2 = (__u64)(((u128)p * s2 - (u128)s1 * s1) / ((u128)p * p));
	f->cv2_permille = sf_cv2_permille(p, s1, st->acc_sumsq_lo,
					  st->acc_sumsq_hi);
	if (stream != SATFEED_STREAM_POLL) {
		f->rate_milli = s1 ? (__u64)((u128)p * 1000000000000ULL / s1) :
				     0;
	} else {
		span = st->last_ns > st->acc_start_ns ?
			       st->last_ns - st->acc_start_ns : 0;
		f->wait_permille = permille(s1, span);
		f->idle_permille = permille(s1 > st->acc_runq_ns ?
						    s1 - st->acc_runq_ns : 0,
					    span);
	}
	f->age_ns = now > st->last_ns ? now - st->last_ns : 0;
	/* the samples still missing, at the pace they came so far */
	elapsed = now > st->acc_start_ns ? now - st->acc_start_ns : 0;
	if (st->acc_start_ns && elapsed && p < n)
		f->closes_in_ns = (__u64)((u128)elapsed * (n - p) / p);
}

void sf_stream_figures(const struct satfeed_stream *st, __u32 stream,
		       __u32 n, __u64 now, struct sf_figures *f)
{
	const struct satfeed_window *w = satfeed_newest_window(st);
	bool stale = false;

	memset(f, 0, sizeof(*f));
	f->newest_seq = st->published;
	if (w) {
		__u64 span = w->end_ns - w->start_ns;
		__u64 limit = span * SF_STALE_SPANS;

		if (limit < SF_STALE_MIN_NS)
			limit = SF_STALE_MIN_NS;
		stale = now > w->end_ns && now - w->end_ns > limit;
		/* ABI 4: a quiet window (rate 0) is published once and stays
		 * true until the next event starts a window in progress */
		if (w->flags & SATFEED_WIN_QUIET)
			stale = st->pending != 0;
		if (!stale) {
			f->source = SF_FIG_CLOSED;
			from_window(w, now, f);
			return;
		}
	}
	if (st->pending) {
		f->source = SF_FIG_PARTIAL;
		from_sums(st, stream, n, now, f);
		return;
	}
	if (w) {
		f->source = SF_FIG_STALE;
		from_window(w, now, f);
	}
}

