// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * sfc_policy.c - signals -> demand level 0..100 with hysteresis and rate
 * limit.  See sfc_policy.h.  Integer only, no division by a variable and
 * no product: satfeed's windows carry the normalized figures (permille).
 */
#include "sfc_policy.h"

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

	if (s->poll_seq)
		busy = s->poll_idle_permille >= 1000 ? 0 :
		       100 - s->poll_idle_permille / 10;
	/* cv^2 above 1: 1 point of burst per 0.1 of cv^2 */
	if (s->recv_seq && s->recv_cv2_permille > 1000) {
		u32 over = (s->recv_cv2_permille - 1000) / 100;

		burst = over > SFC_BURST_MAX ? SFC_BURST_MAX : over;
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
