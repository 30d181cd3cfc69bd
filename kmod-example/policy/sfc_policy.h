/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * sfc_policy.h - the governor-style policy of the satfeed consumer: turns a
 * target's signals into a performance-demand level 0..100.
 *
 * Plain C with no kernel dependency, so the module, the host unit test
 * (test_policy.c) and the sched_ext scheduler (scx/scx_satfeed.bpf.c, which
 * includes sfc_policy.c) compile the same file.
 *
 * demand = busy + burst, clamped to 0..100, where
 *   busy  = 100 - idle%, idle% = idle_permille / 10 of the newest poll
 *           window (satfeed.h): the share of the window's span its waits
 *           spent waiting for work, without the time a woken waiter sat
 *           runnable behind other tasks (runq_ns).  That run delay is not
 *           slack: counted as idle, a server starved of CPU looks idle and
 *           gets no more (the paper's "mean epoll duration falls as load
 *           rises", minus the scheduler's part).  Several threads waiting
 *           at once sum above 1000: idle% saturates at 100, so a
 *           multi-threaded server reads busy only once its threads
 *           together wait less than the span;
 *   burst = up to SFC_BURST_MAX when the recv gaps are more bursty than a
 *           Poisson arrival stream (cv2_permille, var / mean^2, above
 *           1000): variance rises past saturation.
 * A target without events for stale_ns has demand 0 (stale_ns: see
 * sfc_policy_stale_ns() below); one without any closed window yet gives no
 * demand (the level stays).
 *
 * The level follows the demand with hysteresis (moves only when the demand
 * is at least `hysteresis` away), a rate limit (at most one move per
 * min_interval_ns) and a step limit (at most max_step per move), so jitter
 * in the windows does not flap it.
 */
#ifndef __SFC_POLICY_H
#define __SFC_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#define SFC_API
#elif defined(__bpf__)
/*
 * A BPF program includes sfc_policy.c itself: static functions are verified
 * in their caller's context, so the pointers need no NULL checks.  The
 * typedefs are vmlinux.h's, which a BPF program may include too.
 */
typedef unsigned int u32;
typedef unsigned long long u64;
#define SFC_API static
#else
#include <stddef.h>	/* satfeed.h: NULL */
#include <stdint.h>
typedef uint32_t u32;
typedef uint64_t u64;
#define SFC_API
#endif

#include "satfeed.h"	/* the engine's age bound */

#define SFC_LEVEL_MAX		100
#define SFC_BURST_MAX		30

struct sfc_policy_params {
	u32 hysteresis;		/* minimal |demand - level| to move, 0..50 */
	u32 max_step;		/* largest move, 1..100 */
	u64 min_interval_ns;	/* least time between two moves */
	u64 stale_ns;		/* no event for this long: demand 0 */
};

/* What the policy looks at; all from satfeed's windows. */
struct sfc_signals {
	u64 now_ns;		/* CLOCK_MONOTONIC now */
	u64 last_event_ns;	/* newest event of any stream, 0: none */
	u64 recv_seq;		/* recv windows closed, 0: none yet */
	u64 poll_seq;		/* poll windows closed, 0: none yet */
	u32 recv_cv2_permille;	/* newest recv window's cv2_permille */
	u32 poll_idle_permille;	/* newest poll window's idle_permille */
};

struct sfc_policy_state {
	u32 level;		/* current level, 0..100 */
	u32 demand;		/* last demand computed, 0..100 */
	u64 last_change_ns;	/* when the level last moved, 0: never */
	u64 changes;		/* how many times it moved */
};

/*
 * The quiet bound stale_ns for a stale_ms parameter (0: derive it) and the
 * engine's age bound T (satfeed_info.max_age_ns, 0: unknown).  satfeed.h
 * states that while the engine runs a target's newest windows say quiet at
 * most 1.5 T after its last event and its figures are at most 2 T old, so
 * 2 T is the engine's own bound: a target with no event for longer is
 * quiet by the engine's word, not by a guess.  An explicit stale_ms
 * overrides it; with T unknown, 2 x the engine's default T.
 */
#define SFC_NS_PER_MS		1000000ULL

static inline u64 sfc_policy_stale_ns(u32 stale_ms, u64 max_age_ns)
{
	if (stale_ms)
		return (u64)stale_ms * SFC_NS_PER_MS;
	return satfeed_stale_ns(max_age_ns);
}

/* Demand 0..100 for the signals, or -1 when they carry no information. */
SFC_API int sfc_policy_demand(const struct sfc_policy_params *p,
		      const struct sfc_signals *s);

/* Feed one observation; returns 1 if state->level moved, else 0. */
SFC_API int sfc_policy_step(const struct sfc_policy_params *p,
		    struct sfc_policy_state *st, const struct sfc_signals *s);

#endif /* __SFC_POLICY_H */
