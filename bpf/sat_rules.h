/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sat_rules.h - the saturation rules: how a target's verdict
 * (struct satfeed_verdict) follows its closed windows.
 *
 * One pure function, shared verbatim by the BPF engine (which runs it under
 * the verdict's lock each time one of the target's windows closes), the unit
 * tests, and user space that wants to replay or explain a verdict
 * (satfeedctl, the validation sweeps: tests/validate).  No helpers, no
 * calls, no loops.
 *
 * The figures, with r the target's satfeed_sat_rules (a zero field takes its
 * SATFEED_SAT_*_DEFAULT, satfeed_sat_rule(); SATFEED_SAT_RULE_OFF turns a
 * rule off).  Saturation is queueing; the defaults judge it by two figures
 * that do not depend on the event loop's shape (docs/validation.md,
 * "Corpus"):
 *
 *   idle     at each tick of the age timer (satfeed_sat_tick()): the slack
 *            of the target's threads that woke in the tick's interval, the
 *            waits in progress included, the run-queue time left out,
 *            0..1000 per thread (satfeed_verdict.idle_permille).  Low:
 *            the threads are busy, or wait for a CPU: work queues.
 *   svc_avg  at each tick with a new service window of at least
 *            SATFEED_SAT_SVC_MIN_SAMPLES samples: the first one's mean,
 *            then a lower mean at once, a higher one (svc_avg + mean)
 *            >> 1 (a rise must hold a few ticks; a fall is a queue that
 *            drained, and a load that drops after a burst must not carry
 *            the burst's figure); svc_base the lowest such mean.
 *            High against the base: requests wait inside the server
 *            between their receive and their answer (threads behind a lock
 *            or a CPU), which the idle share cannot see when the serving
 *            threads never wait in the poll family (a thread per
 *            connection blocks in its receive).
 *   svc      floor(1000 * svc_avg / svc_base), permille of the base
 *   wps      at each send window close: floor(1000 * waits / n), waits the
 *            poll-family waits that ended since the previous send window
 *            closed (the poll stream's calls less poll_mark); wps_avg its
 *            (7 * wps_avg + wps) >> 3, from the first window with waits
 *            (off by default: it measures the loop's shape)
 *   cv2      the newest recv window's cv2_permille; base the lowest recv
 *            cv2 of the windows that closed while the target was at low
 *            load (off by default)
 *   drops    at each tick: of the datagrams that arrived at the target's
 *            datagram sockets in the tick's interval, the share dropped,
 *            floor(1000 * drops / (drops + receives))
 *            (satfeed_verdict.drop_permille).  A UDP server past its
 *            capacity does not queue: its socket's buffer overflows.
 *   cpu      at each tick: the CPU time of the target's threads over the
 *            interval times the CPUs they may use, floor(1000 * c /
 *            (interval * cpus)) (satfeed_verdict.cpu_permille, ABI 8).
 *            Near 1000: the CPUs are full, so work queues, whatever
 *            idle share each of more threads than CPUs reads.
 *
 *   unread   at each tick: the most bytes a receive on one of the target's
 *            accepted TCP connections left unread on it in the tick's
 *            interval (satfeed_verdict.unread_max, ABI 10).  High:
 *            requests queue in the server's sockets, which the idle share
 *            cannot see when the threads sleep in a wait that is not for
 *            requests (a worker blocked on EPOLLOUT towards a slow
 *            reader).  Known from the first bytes left unread on.
 *
 *   UNKNOWN  until a tick measured the idle share, a service window moved
 *            the average, or (wps rules on) a send window closed with waits;
 *            with every rule off, OK once any window closed
 *   FULL     idle < idle_full                          (WHY_IDLE_FULL)
 *            or svc > svc_full                         (WHY_SVC_FULL)
 *            or wps_avg < wps_full                     (WHY_WPS_FULL)
 *            or drops >= drop_full                     (WHY_DROP_FULL)
 *            or cpu >= cpu_full                        (WHY_CPU_FULL)
 *            or unread >= unread_full                  (WHY_UNREAD_FULL)
 *   NEAR     idle < idle_near                          (WHY_IDLE_NEAR)
 *            or svc > svc_near                         (WHY_SVC_NEAR)
 *            or wps_avg < wps_near                     (WHY_WPS_NEAR)
 *            or drops >= drop_near                     (WHY_DROP_NEAR)
 *            or cpu >= cpu_near (off by default)       (WHY_CPU_NEAR)
 *            or unread >= unread_near                  (WHY_UNREAD_NEAR)
 *            or cv2 > base + base * cv2_rise / 1000    (WHY_CV2_RISE)
 *   OK       otherwise
 *
 * why holds every rule that held at the last evaluation.  Each rule counts
 * once its figure is known (satfeed_verdict.seen).
 */
#ifndef __SATFEED_SAT_RULES_H
#define __SATFEED_SAT_RULES_H

#if !defined(__VMLINUX_H__) && !defined(__KERNEL__)
#include <stdbool.h>
#endif
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
	out->idle_near_permille =
		satfeed_sat_rule(r->idle_near_permille,
				 SATFEED_SAT_IDLE_NEAR_DEFAULT);
	out->idle_full_permille =
		satfeed_sat_rule(r->idle_full_permille,
				 SATFEED_SAT_IDLE_FULL_DEFAULT);
	out->cv2_rise_permille = satfeed_sat_rule(r->cv2_rise_permille,
						  SATFEED_SAT_CV2_RISE_DEFAULT);
	out->wps_near_permille = satfeed_sat_rule(r->wps_near_permille,
						  SATFEED_SAT_WPS_NEAR_DEFAULT);
	out->wps_full_permille = satfeed_sat_rule(r->wps_full_permille,
						  SATFEED_SAT_WPS_FULL_DEFAULT);
	out->svc_near_permille = satfeed_sat_rule(r->svc_near_permille,
						  SATFEED_SAT_SVC_NEAR_DEFAULT);
	out->svc_full_permille = satfeed_sat_rule(r->svc_full_permille,
						  SATFEED_SAT_SVC_FULL_DEFAULT);
	out->drop_near_permille =
		satfeed_sat_rule(r->drop_near_permille,
				 SATFEED_SAT_DROP_NEAR_DEFAULT);
	out->drop_full_permille =
		satfeed_sat_rule(r->drop_full_permille,
				 SATFEED_SAT_DROP_FULL_DEFAULT);
	out->cpu_near_permille =
		satfeed_sat_rule(r->cpu_near_permille,
				 SATFEED_SAT_CPU_NEAR_DEFAULT);
	out->cpu_full_permille =
		satfeed_sat_rule(r->cpu_full_permille,
				 SATFEED_SAT_CPU_FULL_DEFAULT);
	out->unread_near_bytes =
		satfeed_sat_rule(r->unread_near_bytes,
				 SATFEED_SAT_UNREAD_NEAR_DEFAULT);
	out->unread_full_bytes =
		satfeed_sat_rule(r->unread_full_bytes,
				 SATFEED_SAT_UNREAD_FULL_DEFAULT);
}

/* Does rule value `limit` (on) hold for figure v: v at least it? */
static __always_inline bool satfeed_sat_at_least(__u32 v, __u32 limit)
{
	return limit != SATFEED_SAT_RULE_OFF && v >= limit;
}

/* Does rule value `limit` (on) hold for figure v: v below it? */
static __always_inline bool satfeed_sat_below(__u32 v, __u32 limit)
{
	return limit != SATFEED_SAT_RULE_OFF && v < limit;
}

/* Does rule value `limit` (on) hold for figure v: v above it? */
static __always_inline bool satfeed_sat_above(__u64 v, __u32 limit)
{
	return limit != SATFEED_SAT_RULE_OFF && v > limit;
}

/* floor(1000 * svc_avg / svc_base) of v, the service time against its
 * baseline (permille); 0 without a baseline.  svc_avg below 2^53 ns (104
 * days), so the product fits. */
static __always_inline __u64
satfeed_sat_svc_permille(const struct satfeed_verdict *v)
{
	__u64 avg = v->svc_avg_ns;

	if (!(v->seen & SATFEED_SAT_SEEN_SVC) || !v->svc_base_ns)
		return 0;
	if (avg > (1ULL << 53))
		avg = 1ULL << 53;
	return avg * 1000 / v->svc_base_ns;
}

/*
 * The state the rules give for v's figures; *why gets the rules that hold.
 * Each rule sets its bit in *why in memory, not in a local: in the engine
 * why is the verdict's own field (a map value, whose contents the verifier
 * does not track), so the paths of one rule's test join again before the
 * next test instead of multiplying through all of them (the drop rules
 * took the verified instructions of the programs that close windows from
 * 144k to 224k when the bits were gathered in a register).
 */
#define SATFEED_SAT_WHY_SET(why, bit) (*(volatile __u32 *)(why) |= (bit))
static __always_inline __u32
satfeed_sat_state_of(const struct satfeed_verdict *v,
		     const struct satfeed_sat_rules *eff, __u32 *why)
{
	__u32 rise = eff->cv2_rise_permille, w;
	__u64 limit, svc;
	bool wps;

	*(volatile __u32 *)why = 0;
	wps = (v->seen & SATFEED_SAT_SEEN_WPS) &&
	      (v->seen & SATFEED_SAT_SEEN_WAITS) &&
	      (eff->wps_near_permille != SATFEED_SAT_RULE_OFF ||
	       eff->wps_full_permille != SATFEED_SAT_RULE_OFF);
	if (!wps && !(v->seen & (SATFEED_SAT_SEEN_IDLE | SATFEED_SAT_SEEN_SVC |
				 SATFEED_SAT_SEEN_DROPS | SATFEED_SAT_SEEN_CPU |
				 SATFEED_SAT_SEEN_UNREAD))) {
		/* with every rule off nothing is missing: ok once a window
		 * closed */
		if (eff->idle_near_permille == SATFEED_SAT_RULE_OFF &&
		    eff->idle_full_permille == SATFEED_SAT_RULE_OFF &&
		    eff->svc_near_permille == SATFEED_SAT_RULE_OFF &&
		    eff->svc_full_permille == SATFEED_SAT_RULE_OFF &&
		    eff->wps_near_permille == SATFEED_SAT_RULE_OFF &&
		    eff->wps_full_permille == SATFEED_SAT_RULE_OFF &&
		    eff->drop_near_permille == SATFEED_SAT_RULE_OFF &&
		    eff->drop_full_permille == SATFEED_SAT_RULE_OFF &&
		    eff->cpu_near_permille == SATFEED_SAT_RULE_OFF &&
		    eff->cpu_full_permille == SATFEED_SAT_RULE_OFF &&
		    eff->unread_near_bytes == SATFEED_SAT_RULE_OFF &&
		    eff->unread_full_bytes == SATFEED_SAT_RULE_OFF &&
		    rise == SATFEED_SAT_RULE_OFF &&
		    (v->seen & (SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_RECV |
				SATFEED_SAT_SEEN_POLL)))
			return SATFEED_SAT_OK;
		return SATFEED_SAT_UNKNOWN;
	}
	if (wps) {
		if (satfeed_sat_below(v->wps_avg_permille,
				      eff->wps_full_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_WPS_FULL);
		if (satfeed_sat_below(v->wps_avg_permille,
				      eff->wps_near_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_WPS_NEAR);
	}
	if (v->seen & SATFEED_SAT_SEEN_IDLE) {
		if (satfeed_sat_below(v->idle_permille,
				      eff->idle_full_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_IDLE_FULL);
		if (satfeed_sat_below(v->idle_permille,
				      eff->idle_near_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_IDLE_NEAR);
	}
	svc = satfeed_sat_svc_permille(v);
	if (svc) {
		if (satfeed_sat_above(svc, eff->svc_full_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_SVC_FULL);
		if (satfeed_sat_above(svc, eff->svc_near_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_SVC_NEAR);
	}
	if (v->seen & SATFEED_SAT_SEEN_DROPS) {
		if (satfeed_sat_at_least(v->drop_permille,
					 eff->drop_full_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_DROP_FULL);
		if (satfeed_sat_at_least(v->drop_permille,
					 eff->drop_near_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_DROP_NEAR);
	}
	if (v->seen & SATFEED_SAT_SEEN_CPU) {
		if (satfeed_sat_at_least(v->cpu_permille,
					 eff->cpu_full_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_CPU_FULL);
		if (satfeed_sat_at_least(v->cpu_permille,
					 eff->cpu_near_permille))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_CPU_NEAR);
	}
	if (v->seen & SATFEED_SAT_SEEN_UNREAD) {
		if (satfeed_sat_at_least(v->unread_max,
					 eff->unread_full_bytes))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_UNREAD_FULL);
		if (satfeed_sat_at_least(v->unread_max,
					 eff->unread_near_bytes))
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_UNREAD_NEAR);
	}
	if (rise != SATFEED_SAT_RULE_OFF &&
	    (v->seen & SATFEED_SAT_SEEN_BASE) &&
	    (v->seen & SATFEED_SAT_SEEN_RECV)) {
		limit = v->base_cv2_permille +
			(__u64)v->base_cv2_permille * rise / 1000;
		if (v->recv_cv2_permille > limit)
			SATFEED_SAT_WHY_SET(why, SATFEED_SAT_WHY_CV2_RISE);
	}
	w = *(volatile __u32 *)why;
	if (w & (SATFEED_SAT_WHY_WPS_FULL | SATFEED_SAT_WHY_IDLE_FULL |
		 SATFEED_SAT_WHY_SVC_FULL | SATFEED_SAT_WHY_DROP_FULL |
		 SATFEED_SAT_WHY_CPU_FULL | SATFEED_SAT_WHY_UNREAD_FULL))
		return SATFEED_SAT_FULL;
	if (w)
		return SATFEED_SAT_NEAR;
	return SATFEED_SAT_OK;
}

/* Evaluate the rules (eff: every field filled) for v's figures at now.
 * Returns 1 when the state changed, else 0. */
static __always_inline int satfeed_sat_eval(struct satfeed_verdict *v,
					    const struct satfeed_sat_rules *eff,
					    __u64 now)
{
	__u32 state;

	state = satfeed_sat_state_of(v, eff, &v->why);
	v->updated_ns = now;
	if (state == v->state)
		return 0;
	v->state = state;
	v->since_ns = now;
	v->changes++;
	return 1;
}

/* What closed: one window of one stream, and the target's counters then. */
struct satfeed_sat_event {
	__u32 stream;		/* enum satfeed_stream_id */
	__u32 shift;		/* log2 of N, the samples of a full window */
	__u32 samples;		/* the window's samples when fewer than N
				 * (closed by age), 0: N */
	__u32 reserved;
	__u32 idle_permille;	/* its idle share (poll) */
	__u32 cv2_permille;	/* its dispersion */
	__u64 poll_calls;	/* the target's poll stream calls now; 0 when
				 * it counts no wait syscall */
	__u64 now;		/* when it closed (its end_ns) */
};

/*
 * A window closed (e): record its figure in v, the waits per send at a
 * send window, move the baseline, and evaluate the rules r (as stored: zero
 * fields take the defaults).  Returns 1 when the state changed, else 0.
 */
static __always_inline int
satfeed_sat_update(struct satfeed_verdict *v,
		   const struct satfeed_sat_rules *r,
		   const struct satfeed_sat_event *e)
{
	struct satfeed_sat_rules eff;
	__u64 waits, wps;

	satfeed_sat_rules_effective(r, &eff);
	if (e->poll_calls)
		v->seen |= SATFEED_SAT_SEEN_WAITS;
	if (e->stream == SATFEED_STREAM_POLL) {
		/* the idle share is the tick's (satfeed_sat_tick()) */
		v->seen |= SATFEED_SAT_SEEN_POLL;
	} else if (e->stream == SATFEED_STREAM_SEND) {
		v->send_cv2_permille = e->cv2_permille;
		v->seen |= SATFEED_SAT_SEEN_SEND;
		/* the poll calls only grow while the generation lasts */
		waits = e->poll_calls >= v->poll_mark ?
				e->poll_calls - v->poll_mark : e->poll_calls;
		v->poll_mark = e->poll_calls;
		/* 1000 * waits fits 64 bits below 2^53, the result 32 bits
		 * well before */
		if (waits > (1ULL << 53))
			waits = 1ULL << 53;
		wps = e->samples ? waits * 1000 / e->samples :
				   (waits * 1000) >> (e->shift & 31);
		v->wps_permille = wps > 0xffffffffULL ? 0xffffffffU : wps;
		/* the average starts with the first window that had waits
		 * to count: before them wps means nothing */
		if (v->seen & SATFEED_SAT_SEEN_WPS)
			v->wps_avg_permille =
				(7ULL * v->wps_avg_permille +
				 v->wps_permille) >> 3;
		else if (e->poll_calls)
			v->wps_avg_permille = v->wps_permille;
		if (e->poll_calls)
			v->seen |= SATFEED_SAT_SEEN_WPS;
	} else if (e->stream == SATFEED_STREAM_RECV) {
		v->recv_cv2_permille = e->cv2_permille;
		v->seen |= SATFEED_SAT_SEEN_RECV;
		/* low load, by the rules that are on and known */
		if ((!(v->seen & SATFEED_SAT_SEEN_WPS) ||
		     !satfeed_sat_below(v->wps_avg_permille,
					eff.wps_near_permille)) &&
		    (!(v->seen & SATFEED_SAT_SEEN_IDLE) ||
		     !satfeed_sat_below(v->idle_permille,
					eff.idle_near_permille)) &&
		    (!(v->seen & SATFEED_SAT_SEEN_BASE) ||
		     e->cv2_permille < v->base_cv2_permille)) {
			v->base_cv2_permille = e->cv2_permille;
			v->seen |= SATFEED_SAT_SEEN_BASE;
		}
	}
	return satfeed_sat_eval(v, &eff, e->now);
}

/*
 * The CPU share (ABI 8): floor(1000 * c / (interval * cpus)), at most
 * 1000; 0 when interval or cpus is 0.  Exact for c below 2^53 ns (104
 * days; above, c is capped there so that 1000 * c fits): the quotient is
 * taken in two divisions, floor(floor(x / a) / b) == floor(x / (a * b))
 * for positive integers, so interval * cpus never has to fit.
 */
static __always_inline __u32 satfeed_sat_cpu_permille(__u64 c, __u64 interval,
						      __u32 cpus)
{
	__u64 q;

	if (!interval || !cpus)
		return 0;
	if (c > (1ULL << 53))
		c = 1ULL << 53;
	q = c * 1000 / interval / cpus;
	return q > 1000 ? 1000 : q;
}

/*
 * A tick's CPU (ABI 8): c ns of CPU time of the threads seen at both ends
 * of an interval of interval ns, who may use cpus CPUs.  The rules read it
 * (ABI 9: cpu_near, cpu_full) when satfeed_sat_tick() evaluates them right
 * after, under the same lock.  Kept apart from satfeed_sat_tick() (its
 * argument stays small: the engine's tick is at the BPF stack's limit).
 */
static __always_inline void satfeed_sat_cpu(struct satfeed_verdict *v,
					    __u64 c, __u64 interval,
					    __u32 cpus)
{
	v->cpu_ns += c;
	v->cpus = cpus;
	v->cpu_permille = satfeed_sat_cpu_permille(c, interval, cpus);
	if (cpus && interval)
		v->seen |= SATFEED_SAT_SEEN_CPU;
}

/* What one tick of the age timer measured for a target. */
struct satfeed_sat_tick {
	__u32 idle_permille;	/* slack of the threads that woke, or 1000
				 * when all of them slept */
	__u32 idle_known;	/* 1: a thread waited in the interval */
	__u64 svc_mean_ns;	/* the newest service window that closed
				 * since the previous tick: its mean_ns,
				 * 0: none with SATFEED_SAT_SVC_MIN_SAMPLES */
	__u64 now;		/* the tick */
	__u64 drops;		/* datagrams dropped at the target's datagram
				 * sockets in the interval (ABI 7) */
	__u64 recvs;		/* receives the recv stream counted in it */
	__u32 unread;		/* the most bytes a receive on an accepted
				 * TCP connection left unread in it (ABI 10) */
	__u32 reserved;
};

/*
 * A tick (t): record the idle share, the drop share, the receive queue and
 * the service time,
 * and evaluate the rules r (as stored), unless the target is quiet
 * (satfeed_sat_quiet()).
 * Returns 1 when the state changed, else 0.
 */
static __always_inline int
satfeed_sat_tick(struct satfeed_verdict *v, const struct satfeed_sat_rules *r,
		 const struct satfeed_sat_tick *t)
{
	struct satfeed_sat_rules eff;
	__u64 m = t->svc_mean_ns, d, rc;

	satfeed_sat_rules_effective(r, &eff);
	if (t->idle_known) {
		v->idle_permille = t->idle_permille;
		v->seen |= SATFEED_SAT_SEEN_IDLE;
	}
	/* the drop share, 0 in an interval with neither.  Exact below 2^53
	 * of each (a tick's interval holds far fewer); above, each is capped
	 * there, so that 1000 * d and d + r fit.  Known from the first drop
	 * on: a TCP server's 0 says nothing of its load, and must not judge
	 * it ok where no other figure is known */
	d = t->drops > (1ULL << 53) ? 1ULL << 53 : t->drops;
	rc = t->recvs > (1ULL << 53) ? 1ULL << 53 : t->recvs;
	v->drop_permille = d + rc ? d * 1000 / (d + rc) : 0;
	if (d)
		v->seen |= SATFEED_SAT_SEEN_DROPS;
	/* the receive queue: known from the first bytes left unread on, as
	 * the drops (a server that reads its connections empty has said
	 * nothing of its load by it) */
	v->unread_max = t->unread;
	if (t->unread)
		v->seen |= SATFEED_SAT_SEEN_UNREAD;
	if (m) {
		if (m > (1ULL << 53))
			m = 1ULL << 53;
		if (!(v->seen & SATFEED_SAT_SEEN_SVC)) {
			v->svc_avg_ns = m;
			v->svc_base_ns = m;
		} else if (m < v->svc_avg_ns) {
			/* a falling mean at once: the queue has drained */
			v->svc_avg_ns = m;
			if (m < v->svc_base_ns)
				v->svc_base_ns = m;
		} else {
			v->svc_avg_ns = (v->svc_avg_ns + m) >> 1;
		}
		v->seen |= SATFEED_SAT_SEEN_SVC;
	}
	/* quiet holds until the target is active again (the engine clears
	 * quiet_ns) or a window's evaluation ends it */
	if ((v->why & SATFEED_SAT_WHY_QUIET) && v->quiet_ns) {
		v->updated_ns = t->now;
		return 0;
	}
	return satfeed_sat_eval(v, &eff, t->now);
}

/*
 * The target had no send or receive for the age bound (satfeed.h,
 * SATFEED_MAX_AGE_NS_DEFAULT) at time now: it serves nothing, so it is not
 * saturated.  why becomes SATFEED_SAT_WHY_QUIET, a NEAR or FULL state OK,
 * and so does UNKNOWN once a send or receive window closed (ABI 5: a
 * target that served and stopped before a tick could judge it is not
 * saturated either), and the smoothed waits per send start over from 1000
 * (one wait per send: a server at low load) and the service time from its
 * baseline, so that a poll window closing
 * during the pause does not bring the old state back and a burst after it
 * must last to read FULL again.  The engine's timer calls it when the
 * target becomes quiet, and again while it stays quiet whenever a window's
 * evaluation dropped SATFEED_SAT_WHY_QUIET.  Returns 1 when the state
 * changed, else 0.
 */
static __always_inline int satfeed_sat_quiet(struct satfeed_verdict *v,
					     __u64 now)
{
	v->why = SATFEED_SAT_WHY_QUIET;
	if (v->seen & SATFEED_SAT_SEEN_WPS)
		v->wps_avg_permille = 1000;
	if (v->seen & SATFEED_SAT_SEEN_SVC)
		v->svc_avg_ns = v->svc_base_ns;
	v->updated_ns = now;
	if (v->state == SATFEED_SAT_OK ||
	    (v->state == SATFEED_SAT_UNKNOWN &&
	     !(v->seen & (SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_RECV))))
		return 0;
	v->state = SATFEED_SAT_OK;
	v->since_ns = now;
	v->changes++;
	return 1;
}

#endif /* __SATFEED_SAT_RULES_H */
