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
 * one store of its time, two additions to its thread's totals (its own
 * task storage) and the thread count of the window (under the stream lock
 * the wait takes anyway).
 *
 * What a tick does, per target (slot of a target of any state):
 *  1. one pass over the machine's threads (bpf_iter_task, all threads;
 *     only those with a record in sf_poll_start are looked at, and the
 *     tick makes one for a target's thread that has none, or takes over
 *     a removed target's, so that a thread that never waits in a traced
 *     call, one per connection blocked in its receive or a worker fed by
 *     a queue, counts in the CPU share; the records of waits are the hot
 *     path's): each thread's waited time
 *     over the interval since the previous tick (its own total of counted
 *     waits, kept by the wait's end, plus the wait in progress) and the
 *     run-queue time of it; a thread that waited at
 *     least 95% of the interval is a sleeper, the others that waited in it
 *     add to their slot's sums and count among its threads;
 *     and of every thread of the target seen at the previous tick too,
 *     its CPU time since (the growth of se.sum_exec_runtime), its
 *     affinity (the first 64 CPUs of its mask, and nr_cpus_allowed);
 *  2. the verdict: the slack is the threads' waited time less its
 *     run-queue time over the interval times the threads
 *     (satfeed_verdict.slack_permille, wait_permille, threads, sleepers),
 *     the drops of its datagram sockets over the interval per datagram
 *     that arrived (drop_permille; the hot path adds to drops), the CPU
 *     time over the interval times the CPUs its threads may use, at most
 *     one a thread that did not sleep (cpu_permille, cpus), the
 *     newest service window moves the service-time average, and the
 *     rules are evaluated (sat_rules.h, satfeed_sat_tick());
 *  3. each stream: a window in progress whose first sample began at least
 *     max_age_ns / 2 ago closes with its pending samples (SATFEED_WIN_AGED,
 *     exact: window_math.h, sf_window_figures_n); a stream without an
 *     event for max_age_ns and nothing pending publishes one empty window
 *     (SATFEED_WIN_QUIET) and ends its chain of gaps;
 *  4. a target without a send or a receive for max_age_ns is quiet
 *     (satfeed_sat_quiet(): it leaves near/full).
 * Cost: a tick runs a few hundred instructions per target plus a dozen per
 * thread of the machine, twice per max_age_ns, in softirq context.  A
 * thread without a record adds a call and one byte load
 * (sf_maybe_target()), and while cgroup targets exist or its tgid's pid
 * slot is taken, the target lookup of an io_uring owner (up to one hash
 * lookup per watched cgroup level); a target's thread without one, once,
 * the record's allocation.
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

struct sf_age_ctx {
	struct satfeed_age *a;
	__u64 now;
};

/* A thread that waited at least this share of a tick's interval is a
 * sleeper (satfeed_verdict.sleepers), permille. */
#define SF_AGE_SLEEPER_PERMILLE	950

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

/* The CPUs set in a 64-bit word of a mask. */
static __always_inline __u32 sf_popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/*
 * The CPUs a target's threads may use: the union of their masks' first 64
 * CPUs, or the largest nr_cpus_allowed of one when that is more (CPUs past
 * the 64th), at most one a thread that did not sleep through the interval
 * (one when all did or only threads that ran little were seen, none when
 * no thread was seen: cpu_ns is the interval's CPU time).
 */
static __always_inline __u32 sf_age_cpus(__u64 mask, __u32 allowed,
					 __u32 threads, __u32 sleepers,
					 __u64 cpu_ns)
{
	__u32 n = sf_popcount64(mask);
	__u32 most = threads ? threads : !!(sleepers || cpu_ns);

	if (allowed > n)
		n = allowed;
	return n < most ? n : most;
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

/*
 * The mean of the newest service window of target (slot, gen), when it has
 * at least SATFEED_SAT_SVC_MIN_SAMPLES samples, and its seq in *seq (0:
 * none); 0 otherwise.
 */
static __always_inline __u64 sf_age_svc(__u32 slot, __u32 gen, __u64 *seq)
{
	const struct satfeed_window *w;
	struct satfeed_stream *s;
	__u64 mean = 0;

	s = sf_stream(slot, SATFEED_STREAM_SVC);
	if (!s)
		return 0;
	bpf_spin_lock(&s->lock);
	if (s->gen == gen && s->published) {
		*seq = s->published;
		w = satfeed_window_by_seq(s, s->published);
		if (w->samples >= SATFEED_SAT_SVC_MIN_SAMPLES)
			mean = w->mean_ns;
	}
	bpf_spin_unlock(&s->lock);
	return mean;
}

/*
 * The tick's part of target (slot, gen)'s verdict, under its lock: the
 * slack of its threads that woke over the interval since the previous tick
 * (the sums the task pass left in c->a), the newest service window, and
 * the rules (satfeed_sat_tick()).  Not inlined: its frame (the rules,
 * twice) stays off the deeper call chain through sf_age_stream() (512
 * bytes in all).  Returns the poll stream's figures for a quiet window,
 * SF_AGE_FIGS().
 */
static __noinline __u64 sf_age_verdict(struct sf_age_ctx *c, __u32 slot,
				       __u32 gen)
{
	__u32 idx = slot & (SATFEED_MAX_TARGETS - 1), wperm = 0, iperm = 0;
	struct satfeed_sat_rules rules = {};
	struct satfeed_sat_tick tk = {};
	struct satfeed_age *a = c->a;
	__u64 now = c->now, waited, runq, den, svc_seq = 0, rcalls = 0, drops;
	struct satfeed_stream *rs;
	__u32 threads, sleepers;
	struct satfeed_verdict *v;

	if (slot >= SATFEED_MAX_TARGETS)
		return 0;
	threads = a->threads[idx];
	sleepers = a->sleepers[idx];
	waited = a->waited_ns[idx];
	runq = a->runq_ns[idx];
	tk.svc_mean_ns = sf_age_svc(slot, gen, &svc_seq);
	rs = sf_stream(slot, SATFEED_STREAM_RECV);
	/* a counter: a plain load, no lock needed */
	if (rs && rs->gen == gen)
		rcalls = *(volatile __u64 *)&rs->calls;
	sf_rules_get(slot, gen, &rules);
	v = bpf_map_lookup_elem(&sf_verdict, &slot);
	if (!v)
		return 0;
	/* the hot path raises it without the lock: an exchange, so that a
	 * receive's figure lands in this interval or the next, never lost */
	tk.unread = __sync_lock_test_and_set(&v->unread_peak, 0);
	bpf_spin_lock(&v->lock);
	if (v->gen != gen) {
		bpf_spin_unlock(&v->lock);
		return 0;
	}
	if (v->tick_ns && now > v->tick_ns) {
		if (runq > waited)
			runq = waited;
		den = (now - v->tick_ns) * threads;
		wperm = sf_age_share(waited, den);
		iperm = sf_age_share(waited - runq, den);
		if (!threads && sleepers)
			wperm = iperm = 1000;
		tk.idle_known = threads || sleepers;
		satfeed_sat_cpu(v, a->cpu_ns[idx], now - v->tick_ns,
				sf_age_cpus(a->cpu_mask[idx],
					    a->cpu_allowed[idx],
					    a->cpu_threads[idx], sleepers,
					    a->cpu_ns[idx]));
	}
	v->prev_tick_ns = v->tick_ns;
	v->tick_ns = now;
	/* the interval's drops and receives (the recv stream's calls) for
	 * the drop share satfeed_sat_tick() computes */
	drops = v->drops;
	tk.drops = drops >= v->drop_mark ? drops - v->drop_mark : drops;
	tk.recvs = rcalls >= v->recv_mark ? rcalls - v->recv_mark : rcalls;
	v->drop_mark = drops;
	v->recv_mark = rcalls;
	v->wait_permille = wperm;
	v->slack_permille = iperm;
	v->threads = threads;
	v->sleepers = sleepers;
	/* a service window moves the average once */
	if (svc_seq <= v->svc_seq)
		tk.svc_mean_ns = 0;
	else
		v->svc_seq = svc_seq;
	tk.idle_permille = iperm;
	tk.now = now;
	satfeed_sat_tick(v, &rules, &tk);
	bpf_spin_unlock(&v->lock);
	return SF_AGE_FIGS(wperm, iperm, threads);
}

/* bpf_loop callback: one tick for target slot. */
static long sf_age_slot(__u32 slot, void *ctx)
{
	struct sf_age_ctx *c = ctx;
	struct satfeed_verdict *v;
	struct satfeed_target *t;
	__u64 now = c->now, figs;
	bool active;
	__u32 gen;

	if (slot >= SATFEED_MAX_TARGETS)
		return 1;
	t = bpf_map_lookup_elem(&sf_targets, &slot);
	if (!t || t->kind == SATFEED_TARGET_FREE)
		return 0;
	gen = t->gen;
	figs = sf_age_verdict(c, slot, gen);

	active = sf_age_stream(slot, SATFEED_STREAM_SEND, gen, now, 0);
	active |= sf_age_stream(slot, SATFEED_STREAM_RECV, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_RESP, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_SVC, gen, now, 0);
	sf_age_stream(slot, SATFEED_STREAM_POLL, gen, now, figs);

	v = bpf_map_lookup_elem(&sf_verdict, &slot);
	if (!v)
		return 0;
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
	a->waited_ns[i] = 0;
	a->runq_ns[i] = 0;
	a->threads[i] = 0;
	a->sleepers[i] = 0;
	a->cpu_ns[i] = 0;
	a->cpu_mask[i] = 0;
	a->cpu_threads[i] = 0;
	a->cpu_allowed[i] = 0;
	return 0;
}

/*
 * A thread of target slot at the tick at now (a->tick_ns: the previous
 * one): its CPU time since then, when that tick saw it too, goes to the
 * slot's sums, and it counts among the threads that may use CPUs, with its
 * affinity (the caller takes a sleeper out again); not a thread that has
 * never waited in a traced call and ran less than 5% of the interval: a
 * helper asleep in an untraced call would make a one-thread server's one
 * CPU look like two.  Not inlined: its locals stay off the tick's frame,
 * which the deepest call chain shares (512 bytes).
 */
static __noinline void sf_age_cpu(struct satfeed_age *a, __u32 slot,
				  struct task_struct *task, struct sf_wait *w,
				  __u64 now)
{
	__u64 exec = task->se.sum_exec_runtime, prev = a->tick_ns, ran;
	__u32 nr = task->nr_cpus_allowed;
	bool seen = prev && w->tick_ns == prev && exec >= w->tick_exec;

	slot &= SATFEED_MAX_TARGETS - 1;
	ran = exec - w->tick_exec;
	w->tick_exec = exec;
	if (!seen)
		return;
	a->cpu_ns[slot] += ran;
	if (!w->start_ns && !w->end_ns && now > prev &&
	    ran * 1000 < (1000 - SF_AGE_SLEEPER_PERMILLE) * (now - prev))
		return;
	a->cpu_mask[slot] |= task->cpus_ptr->bits[0];
	if (nr > a->cpu_allowed[slot])
		a->cpu_allowed[slot] = nr;
	a->cpu_threads[slot]++;
}

/*
 * task, a thread of the machine, has no record of a current target (w: a
 * record left by a removed one, or NULL): when it is a watched target's
 * thread (not one in discovery), make the record that target's, so that
 * the tick sees its CPU time from the next one on.  A thread that waits
 * has a record from its first wait; this gives one to those that never
 * wait in a traced call, and takes over a removed target's record when no
 * wait is in progress (one begun under the old target ends as its own).
 * The fields written are the ones a wait's start writes, with the same
 * values, so a wait the thread begins meanwhile on another CPU loses
 * nothing; a new record is zeroed.  Should both create it at once, the
 * loser gets NULL (BPF_NOEXIST): the tick tries again at the next one, the
 * wait looks it up (sf_wait_enter()).  Not inlined: the target lookup's
 * locals stay off the tick's frame (the deepest call chain, through the
 * verdict, has 512 bytes in all).
 */
static __noinline struct sf_wait *sf_age_adopt(struct task_struct *task,
					       struct sf_wait *w)
{
	struct satfeed_config *cfg = sf_config_get();
	struct sf_hit hit;

	/* the common miss: one byte */
	if (!cfg || !sf_maybe_target(cfg, task) ||
	    !sf_find_target_of(cfg, task, false, &hit) ||
	    (hit.sc_mask & SATFEED_SC_DISCOVER))
		return NULL;
	if (!w)
		w = bpf_task_storage_get(&sf_poll_start, task, NULL,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	else if (READ_ONCE(w->start_ns))
		return NULL;
	if (!w)
		return NULL;
	w->slot = hit.slot;
	w->gen = hit.gen;
	w->discover = 0;
	return w;
}

/* The tick: the timer's callback, in softirq context. */
static int sf_age_tick(void *map, __u32 *key, struct satfeed_age *a)
{
	struct sf_age_ctx c = { .a = a };
	__u64 prev = a->tick_ns, in, rq, cw, cr, dw, dr;
	struct task_struct *task;

	c.now = bpf_ktime_get_ns();
	bpf_loop(SATFEED_MAX_TARGETS, sf_age_clear, &c, 0);
	bpf_for_each(task, task, NULL, BPF_TASK_ITER_ALL_THREADS) {
		struct satfeed_target *t = NULL;
		struct sf_wait *w;
		__u32 slot;

		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
		if (w) {
			slot = w->slot;
			t = bpf_map_lookup_elem(&sf_targets, &slot);
		}
		if (!t || t->gen != w->gen) {
			w = sf_age_adopt(task, w);
			if (!w)
				continue;
		}
		slot = w->slot;
		if (w->discover || slot >= SATFEED_MAX_TARGETS)
			continue;
		slot &= SATFEED_MAX_TARGETS - 1;	/* for the verifier */
		sf_age_cpu(a, slot, task, w, c.now);
		/* a 32-bit fill after the call loses the bound: again */
		barrier_var(slot);
		slot &= SATFEED_MAX_TARGETS - 1;
		in = rq = 0;
		/* an io_uring wait that has not slept is busy, not slack */
		if (w->start_ns && !w->unslept) {
			in = c.now > w->start_ns ? c.now - w->start_ns : 0;
			rq = sf_run_delay(task) - w->run_delay;
			if (rq > in)
				rq = in;
		}
		cw = w->waited_ns + in;
		cr = w->runq_ns + rq;
		/* a thread that waited in the interval, seen at its start */
		if (prev && w->tick_ns == prev &&
		    (w->start_ns || w->end_ns > prev) &&
		    cw >= w->tick_waited) {
			dw = cw - w->tick_waited;
			dr = cr >= w->tick_runq ? cr - w->tick_runq : 0;
			if (dr > dw)
				dr = dw;
			if (dw * 1000 >= SF_AGE_SLEEPER_PERMILLE * (c.now - prev)) {
				a->sleepers[slot]++;
				/* sf_age_cpu() counted it among the CPU's */
				if (a->cpu_threads[slot])
					a->cpu_threads[slot]--;
			} else {
				a->threads[slot]++;
				a->waited_ns[slot] += dw;
				a->runq_ns[slot] += dr;
			}
		}
		w->tick_waited = cw;
		w->tick_runq = cr;
		w->tick_ns = c.now;
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
