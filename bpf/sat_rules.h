/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sat_rules.h - the saturation rules: how a target's verdict
 * (struct satfeed_verdict) follows its closed windows.
 *
 * One pure function, shared verbatim by the BPF engine (which runs it under
 * the verdict's lock each time one of the target's windows closes), the unit
 * tests, and user space that wants to replay or explain a verdict
 * (satfeedctl, the validation sweeps).  No helpers, no calls, no loops.
 *
 * The rules, with r the target's satfeed_sat_rules (a zero field takes its
 * SATFEED_SAT_*_DEFAULT, satfeed_sat_rule()):
 *
 *   idle  the newest poll window's idle_permille: the share of the window
 *         the server's threads spent waiting for work (not for a CPU)
 *   base  the low-load baseline of the dispersion: the lowest recv
 *         cv2_permille of the windows that closed while idle was at or
 *         above idle_near (the server was not near saturation)
 *   cv2   the newest recv window's cv2_permille
 *
 *   UNKNOWN  until the first poll window closed (idle is not known)
 *   FULL     idle < idle_full                           (WHY_IDLE_FULL)
 *   NEAR     idle < idle_near                           (WHY_IDLE_NEAR)
 *            or, when cv2_rise is on, a baseline exists and
 *            cv2 > base + base * cv2_rise / 1000        (WHY_CV2_RISE)
 *   OK       otherwise
 *
 * why holds every rule that held at the last evaluation.  cv2_rise is
 * relative to the baseline: 1000 fires when the dispersion more than
 * doubled.  SATFEED_SAT_RULE_OFF in a field turns that rule off.
 */
#ifndef __SATFEED_SAT_RULES_H
#define __SATFEED_SAT_RULES_H

#include "satfeed.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The value of a rule field as the engine uses it: 0 takes the default. */
static __always_inline __u32 satfeed_sat_rule(__u32 v, __u32 def)
{
	return v ? v : def;
}

/* The rules r stands for, every field filled in. */
static __always_inline void
satfeed_sat_rules_effective(const struct satfeed_sat_rules *r,
			    struct satfeed_sat_rules *out)
{
	out->idle_near_permille = satfeed_sat_rule(r->idle_near_permille,
						   SATFEED_SAT_IDLE_NEAR_DEFAULT);
	out->idle_full_permille = satfeed_sat_rule(r->idle_full_permille,
						   SATFEED_SAT_IDLE_FULL_DEFAULT);
	out->cv2_rise_permille = satfeed_sat_rule(r->cv2_rise_permille,
						  SATFEED_SAT_CV2_RISE_DEFAULT);
	out->reserved = 0;
}

/* The state the rules give for v's figures; *why gets the rules that hold. */
static __always_inline __u32
satfeed_sat_state_of(const struct satfeed_verdict *v,
		     const struct satfeed_sat_rules *eff, __u32 *why)
{
	__u32 rise = eff->cv2_rise_permille;
	__u64 limit;

	*why = 0;
	if (!(v->seen & SATFEED_SAT_SEEN_POLL))
		return SATFEED_SAT_UNKNOWN;
	if (eff->idle_full_permille != SATFEED_SAT_RULE_OFF &&
	    v->idle_permille < eff->idle_full_permille)
		*why |= SATFEED_SAT_WHY_IDLE_FULL;
	if (eff->idle_near_permille != SATFEED_SAT_RULE_OFF &&
	    v->idle_permille < eff->idle_near_permille)
		*why |= SATFEED_SAT_WHY_IDLE_NEAR;
	if (rise && rise != SATFEED_SAT_RULE_OFF &&
	    (v->seen & SATFEED_SAT_SEEN_BASE) &&
	    (v->seen & SATFEED_SAT_SEEN_RECV)) {
		limit = v->base_cv2_permille +
			(__u64)v->base_cv2_permille * rise / 1000;
		if (v->recv_cv2_permille > limit)
			*why |= SATFEED_SAT_WHY_CV2_RISE;
	}
	if (*why & SATFEED_SAT_WHY_IDLE_FULL)
		return SATFEED_SAT_FULL;
	if (*why & (SATFEED_SAT_WHY_IDLE_NEAR | SATFEED_SAT_WHY_CV2_RISE))
		return SATFEED_SAT_NEAR;
	return SATFEED_SAT_OK;
}

/*
 * A window of stream `stream` closed at time now with the given idle share
 * (poll) and dispersion (every stream): record its figure in v, move the
 * baseline, and evaluate the rules r (as stored: zero fields take the
 * defaults).  Returns 1 when the state changed, else 0.
 */
static __always_inline int
satfeed_sat_update(struct satfeed_verdict *v,
		   const struct satfeed_sat_rules *r, __u32 stream,
		   __u32 idle_permille, __u32 cv2_permille, __u64 now)
{
	struct satfeed_sat_rules eff;
	__u32 state, why;

	satfeed_sat_rules_effective(r, &eff);
	if (stream == SATFEED_STREAM_POLL) {
		v->idle_permille = idle_permille;
		v->seen |= SATFEED_SAT_SEEN_POLL;
	} else if (stream == SATFEED_STREAM_SEND) {
		v->send_cv2_permille = cv2_permille;
		v->seen |= SATFEED_SAT_SEEN_SEND;
	} else if (stream == SATFEED_STREAM_RECV) {
		v->recv_cv2_permille = cv2_permille;
		v->seen |= SATFEED_SAT_SEEN_RECV;
		/* low load: the server was waiting for work at least
		 * idle_near of the time when this window closed */
		if ((v->seen & SATFEED_SAT_SEEN_POLL) &&
		    (eff.idle_near_permille == SATFEED_SAT_RULE_OFF ||
		     v->idle_permille >= eff.idle_near_permille) &&
		    (!(v->seen & SATFEED_SAT_SEEN_BASE) ||
		     cv2_permille < v->base_cv2_permille)) {
			v->base_cv2_permille = cv2_permille;
			v->seen |= SATFEED_SAT_SEEN_BASE;
		}
	}
	state = satfeed_sat_state_of(v, &eff, &why);
	v->why = why;
	v->updated_ns = now;
	if (state == v->state)
		return 0;
	v->state = state;
	v->since_ns = now;
	v->changes++;
	return 1;
}

#endif /* __SATFEED_SAT_RULES_H */
