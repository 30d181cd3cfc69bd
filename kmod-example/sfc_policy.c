// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * sfc_policy.c - signals -> demand level 0..100 with hysteresis and rate
 * limit.  See sfc_policy.h.  Integer only; every product is bounded so that
 * it fits 64 bits whatever the input.
 */
#include "sfc_policy.h"

#ifdef __KERNEL__
#include <linux/math64.h>
#define sfc_div(a, b)	div64_u64((a), (b))
#else
#define sfc_div(a, b)	((a) / (b))
#endif

#define SFC_U64_MAX	(~(u64)0)

/* 100 * a / b for a, b > 0, saturating at 100 (a >= b). */
static u32 sfc_pct(u64 a, u64 b)
{
	if (a >= b)
		return 100;
	/* a < b: scale down together until 100 * a cannot overflow */
	while (a > SFC_U64_MAX / 100) {
		a >>= 1;
		b >>= 1;
	}
	return (u32)sfc_div(a * 100, b);
}

SFC_API int sfc_policy_demand(const struct sfc_policy_params *p,
		      const struct sfc_signals *s)
{
	u32 busy = 0, burst = 0, demand;

	if (!s->poll_seq && !s->recv_seq)
		return -1;
	if (!s->last_event_ns ||
	    (s->now_ns > s->last_event_ns &&
	     s->now_ns - s->last_event_ns > p->stale_ns))
		return 0;

	if (s->poll_seq && s->poll_span_ns)
		busy = 100 - sfc_pct(s->poll_sum_ns, s->poll_span_ns);

	if (s->recv_seq && s->recv_mean_ns) {
		/* mean <= 2^32 - 1 (satfeed's sample cap) keeps mean^2 in 64
		 * bits; clamp anyway in case a consumer feeds something else */
		u64 mean = s->recv_mean_ns > 0xffffffffULL ?
			   0xffffffffULL : s->recv_mean_ns;
		u64 m2 = mean * mean;
		u64 cv2_pct;

		if (s->recv_var_ns2 > m2) {
			/* cv^2 > 1: cv2_pct = 100 * var / mean^2 */
			u64 var = s->recv_var_ns2;

			if (sfc_div(var, m2) >= 1000) {
				cv2_pct = 100000;
			} else {
				while (var > SFC_U64_MAX / 100) {
					var >>= 1;
					m2 >>= 1;
				}
				cv2_pct = sfc_div(var * 100, m2);
			}
			burst = cv2_pct > 100 + 10 * SFC_BURST_MAX ?
				SFC_BURST_MAX : (u32)((cv2_pct - 100) / 10);
		}
	}

	demand = busy + burst;
	return demand > SFC_LEVEL_MAX ? SFC_LEVEL_MAX : (int)demand;
}

SFC_API int sfc_policy_step(const struct sfc_policy_params *p,
		    struct sfc_policy_state *st, const struct sfc_signals *s)
{
	int d = sfc_policy_demand(p, s);
	u32 diff, step;

	if (d < 0)
		return 0;
	st->demand = (u32)d;
	diff = st->demand > st->level ? st->demand - st->level :
					st->level - st->demand;
	if (!diff || diff < p->hysteresis)
		return 0;
	if (st->changes && s->now_ns >= st->last_change_ns &&
	    s->now_ns - st->last_change_ns < p->min_interval_ns)
		return 0;
	step = diff < p->max_step ? diff : p->max_step;
	if (!step)
		step = 1;
	if (st->demand > st->level)
		st->level += step;
	else
		st->level -= step;
	st->last_change_ns = s->now_ns;
	st->changes++;
	return 1;
}
