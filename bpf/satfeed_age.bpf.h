/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_age.bpf.h - the age bound: a timer that closes old windows, says
 * when a target went quiet, and measures its slack with the waits in
 * progress (satfeed.h, SATFEED_MAX_AGE_NS_DEFAULT).
 *
 * Why a timer: windows close on events, so a server that stops sending
 * closes none and its last figures would stay forever.  One BPF timer
 * (sf_age) ticks every max_age_ns / 2 for the whole engine and visits every
 * target: nothing is added to the per-event path but, for a wait's end,
 * one store of its time and the thread count of the window (under the
 * stream lock the wait takes anyway).
 *
 * What a tick does, per target (slot of a target of any state):
 *  1. its waits in progress: one pass over the machine's threads
 *     (bpf_iter_task, all threads; only those with a wait record in
 *     sf_poll_start are looked at) sums, per slot, the time of the waits
 *     still in progress and their run-queue time, and counts the threads
 *     that waited since the previous tick;
 *  2. the slack over (previous tick, now]: the waited time is the growth of
 *     (the poll stream's wait_total_ns + the waits in progress), the same
 *     for run-queue time, divided by the interval times the threads
 *     (satfeed_verdict.slack_permille, wait_permille, threads);
 *  3. each stream: a window in progress whose first sample began at least
 *     max_age_ns / 2 ago closes with its pending samples (SATFEED_WIN_AGED,
 *     exact: window_math.h, sf_window_figures_n); a stream without an
 *     event for max_age_ns and nothing pending publishes one empty window
 *     (SATFEED_WIN_QUIET) and ends its chain of gaps;
 *  4. the verdict: a target without a send or a receive for max_age_ns is
 *     quiet (satfeed_sat_quiet(): it leaves near/full).
 * Cost: a tick runs a few hundred instructions per target plus a dozen per
 * thread of the machine, twice per max_age_ns, in softirq context.
 *
 * Arming: a timer must be started by a program; the engine's only program
 * that user space can make run at will without touching the hot path is
 * sf_proc_exit (every process exit), so that arms it the first time
 * (satfeed_age.armed) and the loader ends a child right after attaching
 * (tools/lib/sf_engine.c, sf_engine_start_age()).  The timer lives while
 * sf_age is pinned: unloading or replacing the engine cancels it.
 */
#ifndef __SATFEED_AGE_BPF_H
#define __SATFEED_AGE_BPF_H

#include "satfeed_engine.bpf.h"

#define SF_CLOCK_MONOTONIC	1

/* T: set by the loader between open and load (--max-age) */
const volatile __u64 max_age_ns = SATFEED_MAX_AGE_NS_DEFAULT;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_age);
} sf_age SEC(".maps");

struct sf_age_ctx {
	struct satfeed_age *a;
	__u64 now;
};

/* The poll stream's shares and threads for a quiet window, in one word
 * (a BPF function takes five arguments): each share is at most 1000 */
#define SF_AGE_FIGS(wperm, iperm, threads)				\
	((__u64)(wperm) | ((__u64)(iperm) << 16) | ((__u64)(threads) << 32))

/*
 * Age one stream of (slot, gen) at now: close an old window or publish a
 * quiet one (with figs, SF_AGE_FIGS(): the poll stream's shares and
 * threads).  Returns 1 when the stream had an event in the last
 * max_age_ns or has samples pending, else 0.
 *
 * A global function, so the verifier checks it once, on its own, with
 * every argument unknown.  A static one is checked again at each of its
 * five call sites in sf_age_slot() and again for each state the bpf_loop
 * callback and the task iterator before it reach it with, and it holds the
 * window close with its 32-round division loop: sf_proc_exit took 344915
 * verified instructions on 6.18 (256767 of them in here) and went over the
 * 1M limit on 7.3 (E2BIG); this way it takes 18733 on 6.18.
 */
__noinline int sf_age_stream(__u32 slot, __u32 stream, __u32 gen, __u64 now,
			     __u64 figs)
{
	struct satfeed_window closed;
	struct satfeed_stream *s;
	__u64 age = max_age_ns;
	int done = 0;
	bool active;

	s = sf_stream(slot, stream);
	if (!s)
		return 0;
	bpf_spin_lock(&s->lock);
	if (s->gen != gen) {
		bpf_spin_unlock(&s->lock);
		return 0;
	}
	active = s->pending ||
		 (s->last_ns && (now < s->last_ns || now - s->last_ns < age));
	if (s->pending && s->pending <= (1U << SATFEED_WINDOW_SHIFT_MAX) &&
	    now > s->acc_start_ns && now - s->acc_start_ns >= age / 2) {
		/* the window ends at its last event, which is in it */
		sf_window_close(s, s->last_ns, window_shift,
				stream == SATFEED_STREAM_POLL, true, &closed);
		done = 1;
	} else if (!s->pending && s->last_ns && now > s->last_ns &&
		   now - s->last_ns >= age) {
		sf_window_quiet(s, now, figs & 0xffff, (figs >> 16) & 0xffff,
				figs >> 32, &closed);
		done = 2;
	}
	bpf_spin_unlock(&s->lock);
	if (done == 1)
		sf_verdict_update(slot, stream, gen, &closed);
	if (done)
		satfeed_window_closed(slot, stream, &closed);
	return active;
}

/* floor(1000 * x / den), at most 1000; 0 when den is 0 */
static __always_inline __u32 sf_age_share(__u64 x, __u64 den)
{
	__u64 q;

	if (!den)
		return 0;
	q = x > 0x3fffffffffffffULL ? 1000 : x * 1000 / den;
	return q > 1000 ? 1000 : q;
}

/* bpf_loop callback: one tick for target slot. */
static long sf_age_slot(__u32 slot, void *ctx)
{
	struct sf_age_ctx *c = ctx;
	struct satfeed_age *a = c->a;
	__u64 now = c->now, cum_wait = 0, cum_runq = 0, waited, runq, den;
	__u32 gen, threads, wperm = 0, iperm = 0, idx;
	struct satfeed_stream *poll;
	struct satfeed_verdict *v;
	struct satfeed_target *t;
	bool active;

	if (slot >= SATFEED_MAX_TARGETS)
		return 1;
	t = bpf_map_lookup_elem(&sf_targets, &slot);
	if (!t || t->kind == SATFEED_TARGET_FREE)
		return 0;
	gen = t->gen;
	idx = slot & (SATFEED_MAX_TARGETS - 1);	/* slot, for the verifier */
	threads = a->threads[idx];
	poll = sf_stream(slot, SATFEED_STREAM_POLL);
	if (!poll)
		return 0;
	bpf_spin_lock(&poll->lock);
	if (poll->gen == gen) {
		cum_wait = poll->wait_total_ns;
		cum_runq = poll->runq_total_ns;
	}
	bpf_spin_unlock(&poll->lock);
	cum_wait += a->inprog_ns[idx];
	cum_runq += a->inprog_runq_ns[idx];

	v = bpf_map_lookup_elem(&sf_verdict, &slot);
	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	if (v->gen == gen) {
		if (v->tick_ns && now > v->tick_ns &&
		    cum_wait >= v->waited_mark) {
			waited = cum_wait - v->waited_mark;
			runq = cum_runq >= v->runq_mark ?
				       cum_runq - v->runq_mark : 0;
			if (runq > waited)
				runq = waited;
			den = (now - v->tick_ns) * threads;
			wperm = sf_age_share(waited, den);
			iperm = sf_age_share(waited - runq, den);
		}
		v->prev_tick_ns = v->tick_ns;
		v->tick_ns = now;
		v->waited_mark = cum_wait;
		v->runq_mark = cum_runq;
		v->wait_permille = wperm;
		v->slack_permille = iperm;
		v->threads = threads;
	}
	bpf_spin_unlock(&v->lock);

	active = sf_age_stream(slot, SATFEED_STREAM_SEND, gen, now, 0);
	active |= sf_age_stream(slot, SATFEED_STREAM_RECV, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_RESP, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_SVC, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_POLL, gen, now,
		      SF_AGE_FIGS(wperm, iperm, threads));

	bpf_spin_lock(&v->lock);
	if (v->gen == gen) {
		if (active) {
			v->quiet_ns = 0;
		} else if (!v->quiet_ns || !(v->why & SATFEED_SAT_WHY_QUIET)) {
			/* once, and again after a window's evaluation
			 * (a poll window can close during the pause) */
			if (!v->quiet_ns)
				v->quiet_ns = now;
			satfeed_sat_quiet(v, now);
		}
	}
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* Zero the per-slot scratch of a tick. */
static long sf_age_clear(__u32 i, void *ctx)
{
	struct satfeed_age *a = ((struct sf_age_ctx *)ctx)->a;

	if (i >= SATFEED_MAX_TARGETS)
		return 1;
	i &= SATFEED_MAX_TARGETS - 1;
	a->inprog_ns[i] = 0;
	a->inprog_runq_ns[i] = 0;
	a->threads[i] = 0;
	return 0;
}

/* The tick: the timer's callback, in softirq context. */
static int sf_age_tick(void *map, __u32 *key, struct satfeed_age *a)
{
	struct sf_age_ctx c = { .a = a };
	__u64 prev = a->tick_ns, in, rq;
	struct task_struct *task;

	c.now = bpf_ktime_get_ns();
	bpf_loop(SATFEED_MAX_TARGETS, sf_age_clear, &c, 0);
	bpf_for_each(task, task, NULL, BPF_TASK_ITER_ALL_THREADS) {
		struct satfeed_target *t;
		struct sf_wait *w;
		__u32 slot;

		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
		if (!w || w->discover)
			continue;
		slot = w->slot;
		t = bpf_map_lookup_elem(&sf_targets, &slot);
		if (!t || t->gen != w->gen || slot >= SATFEED_MAX_TARGETS)
			continue;
		slot &= SATFEED_MAX_TARGETS - 1;	/* for the verifier */
		/* an io_uring wait that has not slept is busy, not slack */
		if (w->start_ns && !w->unslept) {
			in = c.now > w->start_ns ? c.now - w->start_ns : 0;
			rq = sf_run_delay(task) - w->run_delay;
			a->inprog_ns[slot] += in;
			a->inprog_runq_ns[slot] += rq < in ? rq : in;
			a->threads[slot]++;
		} else if (w->end_ns > prev) {
			a->threads[slot]++;
		}
	}
	bpf_loop(SATFEED_MAX_TARGETS, sf_age_slot, &c, 0);
	a->ticks++;
	a->tick_ns = c.now;
	bpf_timer_start(&a->timer, max_age_ns / 2, 0);
	return 0;
}

/* Start the timer once (sf_proc_exit: any process exit). */
static __always_inline void sf_age_arm(void)
{
	struct satfeed_age *a;
	__u32 zero = 0;

	a = bpf_map_lookup_elem(&sf_age, &zero);
	if (!a || READ_ONCE(a->armed))
		return;
	a->armed = 1;
	bpf_timer_init(&a->timer, &sf_age, SF_CLOCK_MONOTONIC);
	bpf_timer_set_callback(&a->timer, sf_age_tick);
	bpf_timer_start(&a->timer, max_age_ns / 2, 0);
}

#endif /* __SATFEED_AGE_BPF_H */
