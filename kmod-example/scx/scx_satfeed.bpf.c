// SPDX-License-Identifier: GPL-2.0
/*
 * scx_satfeed.bpf.c - a sched_ext scheduler that reserves CPUs for a server
 * and raises their performance target from satfeed's windows.
 *
 * Every period a bpf_timer reads the watched targets' newest windows from
 * satfeed's pinned maps (the loader swaps them in with bpf_map__reuse_fd, so
 * nothing is copied through user space) and feeds them to the consumer
 * policy of kmod-example (sfc_policy.c, compiled in below): one demand
 * level 0..100 per target, with hysteresis and a rate limit.  The largest
 * level sizes the reservation: the last `reserved` CPUs run the targets'
 * threads and nothing else, the others run everything else, and at least
 * min_shared CPUs are never reserved.  The reserved CPUs get a performance
 * target (scx_bpf_cpuperf_set, which schedutil follows) that rises with
 * the level; the others get a fixed base.  A target that closes no window
 * for release_ns (idle, gone, or its engine unloaded) loses its level at
 * once, so the reservation is released.
 *
 * Scheduling is two FIFO queues: SCX_SF_DSQ_TARGET, consumed only by the
 * reserved CPUs, and SCX_SF_DSQ_SHARED, consumed by the others; while
 * nothing is reserved every CPU consumes both, the targets' first.  Tasks
 * that may run on one CPU only (per-CPU kthreads), or on none of their
 * pool's CPUs, go straight to an allowed CPU's local queue: a reservation
 * never strands a task.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "satfeed.h"
#include "satfeed_maps.bpf.h"
#include "sfc_policy.c"
#include "scx_kfuncs.bpf.h"
#include "scx_satfeed.h"

char LICENSE[] SEC("license") = "GPL";

#define CLOCK_MONOTONIC	1

const volatile struct scx_sf_config cfg = {
	.nr_cpus = 1,
	.min_shared = 1,
	.period_ns = 10 * 1000 * 1000,
	.slice_ns = 5 * 1000 * 1000,
};

/*
 * CPUs at or above reserved_first are reserved (nr_cpus: none).  Written by
 * the timer only; the scheduling paths read it once per call.
 */
u32 reserved_first;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scx_sf_state);
} scx_sf_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SCX_SF_MAX_CPUS);
	__type(key, u32);
	__type(value, struct scx_sf_cpu);
} scx_sf_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scx_sf_exit);
} scx_sf_exit SEC(".maps");

struct decide_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct decide_timer);
} scx_sf_timer SEC(".maps");

/* ---- the scheduling paths ---- */

/* Is p one of the targets' threads? */
static __always_inline bool is_target(struct task_struct *p)
{
	for (u32 i = 0; i < SCX_SF_MAX_TARGETS && i < cfg.nr_targets; i++) {
		const volatile struct scx_sf_target *t = &cfg.targets[i];
		struct cgroup *cg, *anc;
		u32 lvl = t->level;

		if (t->kind == SATFEED_TARGET_PID) {
			if ((u64)p->tgid == t->id)
				return true;
			continue;
		}
		/* cgroup: the ancestor at the target's depth is the target */
		cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
		if (!cg || BPF_CORE_READ(cg, level) < (int)lvl)
			continue;
		if (bpf_core_read(&anc, sizeof(anc), &cg->ancestors[lvl]) ||
		    !anc)
			continue;
		if (BPF_CORE_READ(anc, kn, id) == t->id)
			return true;
	}
	return false;
}

/*
 * The CPUs a task may be placed on: [*lo, *hi), and its queue.  The targets'
 * threads always queue apart: while nothing is reserved every CPU takes
 * them first, so a server that waits behind CPU-bound tasks does not look
 * idle to the policy (its wait for a CPU would count as time in epoll).
 */
static __always_inline u64 pool_of(bool target, u32 first, u32 *lo, u32 *hi)
{
	u32 n = cfg.nr_cpus;

	if (target) {
		*lo = first < n ? first : 0;
		*hi = n;
		return SCX_SF_DSQ_TARGET;
	}
	*lo = 0;
	*hi = first < n ? first : n;
	return SCX_SF_DSQ_SHARED;
}

static __always_inline bool may_run_on(struct task_struct *p, u32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/*
 * A CPU of [lo, hi) that p may run on and that was idle (now claimed), or
 * -1.  prev is tried first.
 */
static __always_inline s32 claim_idle(struct task_struct *p, s32 prev, u32 lo,
				      u32 hi)
{
	if (prev >= (s32)lo && prev < (s32)hi && may_run_on(p, prev) &&
	    scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	for (u32 cpu = lo; cpu < hi && cpu < SCX_SF_MAX_CPUS; cpu++)
		if (may_run_on(p, cpu) && scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	return -1;
}

/* A CPU p may run on: its own if allowed, else the first allowed one. */
static __always_inline s32 allowed_cpu(struct task_struct *p, u32 lo, u32 hi)
{
	s32 cur = scx_bpf_task_cpu(p);

	if (cur >= (s32)lo && cur < (s32)hi && may_run_on(p, cur))
		return cur;
	for (u32 cpu = lo; cpu < hi && cpu < SCX_SF_MAX_CPUS; cpu++)
		if (may_run_on(p, cpu))
			return cpu;
	return -1;
}

s32 SCX_OPS(sf_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool target;
	u32 lo, hi;
	s32 cpu;

	if (p->nr_cpus_allowed == 1)
		return prev_cpu;
	target = is_target(p);
	/* --test-stall: the targets always go through their queue */
	if (target && cfg.test_stall)
		return prev_cpu;
	pool_of(target, reserved_first, &lo, &hi);
	cpu = claim_idle(p, prev_cpu, lo, hi);
	if (cpu >= 0) {
		/* idle and claimed: run there without a queue */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, 0);
		return cpu;
	}
	return prev_cpu;
}

void SCX_OPS(sf_enqueue, struct task_struct *p, u64 enq_flags)
{
	u32 lo, hi, first = reserved_first;
	u64 dsq;
	s32 cpu;

	dsq = pool_of(is_target(p), first, &lo, &hi);
	if (p->nr_cpus_allowed < cfg.nr_cpus) {
		/* pinned, or kept off its pool by its affinity */
		cpu = allowed_cpu(p, lo, hi);
		if (cpu < 0)
			cpu = allowed_cpu(p, 0, cfg.nr_cpus);
		if (cpu >= 0 && (p->nr_cpus_allowed == 1 ||
				 cpu < (s32)lo || cpu >= (s32)hi)) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu,
					   cfg.slice_ns, enq_flags);
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			return;
		}
	}
	scx_bpf_dsq_insert(p, dsq, cfg.slice_ns, enq_flags);
	cpu = claim_idle(p, -1, lo, hi);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

void SCX_OPS(sf_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 first = reserved_first;

	/* reserved CPUs, and every CPU while nothing is reserved; never
	 * under --test-stall, whose point is a target left waiting */
	if ((u32)cpu >= first || first >= cfg.nr_cpus) {
		if (!cfg.test_stall &&
		    scx_bpf_dsq_move_to_local(SCX_SF_DSQ_TARGET))
			return;
		if ((u32)cpu >= first && first < cfg.nr_cpus)
			return;
	}
	scx_bpf_dsq_move_to_local(SCX_SF_DSQ_SHARED);
}

/* Is p running outside its pool?  (Not for tasks bound to other CPUs.) */
static __always_inline bool misplaced(struct task_struct *p, bool target,
				      u32 cpu)
{
	u32 lo, hi;

	if (p->nr_cpus_allowed < cfg.nr_cpus)
		return false;
	pool_of(target, reserved_first, &lo, &hi);
	return cpu < lo || cpu >= hi;
}

void SCX_OPS(sf_running, struct task_struct *p)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct scx_sf_state *st;
	struct scx_sf_cpu *c;
	bool target;
	u32 zero = 0;

	c = bpf_map_lookup_elem(&scx_sf_cpus, &cpu);
	if (!c)
		return;
	if (p->nr_cpus_allowed < cfg.nr_cpus) {
		/* placed by its affinity, not by the pools */
		c->bound_runs++;
		return;
	}
	target = is_target(p);
	if (target)
		c->target_runs++;
	else
		c->other_runs++;
	if (!misplaced(p, target, cpu))
		return;
	st = bpf_map_lookup_elem(&scx_sf_state, &zero);
	if (st && bpf_ktime_get_ns() - st->last_change_ns <= cfg.grace_ns)
		c->moved++;
	else
		c->misplaced++;
}

/* A task left on the wrong side of a reservation change yields at once. */
void SCX_OPS(sf_tick, struct task_struct *p)
{
	if (misplaced(p, is_target(p), bpf_get_smp_processor_id()))
		p->scx.slice = 0;
}

/* ---- the decision, every period ---- */

/*
 * The poll window in progress stands in for the newest closed one when it has
 * run longer than that one (or than SCX_SF_PARTIAL_MIN_NS when none closed):
 * a server that is starved of CPU, or saturated, rarely waits, so its poll
 * windows stop closing and the newest closed one, taken when it still
 * waited, would keep saying "idle".  Its running sums say how little it
 * waits now (the wait in progress is not in them: it can only make the
 * share look busier, and a target with no event at all for stale_ns has
 * demand 0 anyway).
 */
#define SCX_SF_PARTIAL_MIN_NS	(100 * 1000 * 1000ULL)

struct poll_partial {
	u64 pending;
	u64 start_ns;
	u64 sum_ns;
	u64 runq_ns;
	u64 span_ns;		/* of the newest closed window, 0: none */
};

static __always_inline void use_partial(const struct poll_partial *pp,
					struct sfc_signals *sig)
{
	u64 age, idle;

	if (!pp->pending || !pp->start_ns || sig->now_ns <= pp->start_ns)
		return;
	age = sig->now_ns - pp->start_ns;
	if (age <= pp->span_ns || age < SCX_SF_PARTIAL_MIN_NS)
		return;
	idle = pp->sum_ns > pp->runq_ns ? pp->sum_ns - pp->runq_ns : 0;
	/* sum <= pending * 2^32 ns: 1000 * sum fits 64 bits */
	idle = idle * 1000 / age;
	sig->poll_idle_permille = idle > 0xffffffffULL ? 0xffffffff : (u32)idle;
	if (!sig->poll_seq)
		sig->poll_seq = 1;	/* information, though no window closed */
}

/*
 * Copy what the policy needs from stream `stream` of target t into sig,
 * under the stream's lock; returns the stream's published count, or 0 when
 * the slot's data is of another generation.
 */
static __always_inline u64 read_stream(const volatile struct scx_sf_target *t,
				       u32 stream, struct sfc_signals *sig)
{
	u32 key = satfeed_stream_key(t->slot, stream);
	struct poll_partial pp = {};
	const struct satfeed_window *w;
	struct satfeed_stream *s;
	u64 published = 0;
	bool mine = false;

	s = bpf_map_lookup_elem(&sf_streams, &key);
	if (!s)
		return 0;
	bpf_spin_lock(&s->lock);
	if (s->gen != t->gen)
		goto unlock;
	mine = true;
	published = s->published;
	if (s->last_ns > sig->last_event_ns)
		sig->last_event_ns = s->last_ns;
	if (stream == SATFEED_STREAM_POLL) {
		pp.pending = s->pending;
		pp.start_ns = s->acc_start_ns;
		pp.sum_ns = s->acc_sum_ns;
		pp.runq_ns = s->acc_runq_ns;
	}
	w = satfeed_newest_window(s);
	if (!w)
		goto unlock;
	if (stream == SATFEED_STREAM_RECV) {
		sig->recv_seq = w->seq;
		sig->recv_cv2_permille = w->cv2_permille;
	} else if (stream == SATFEED_STREAM_POLL) {
		sig->poll_seq = w->seq;
		sig->poll_idle_permille = w->idle_permille;
		pp.span_ns = w->end_ns > w->start_ns ? w->end_ns - w->start_ns : 0;
	}
unlock:
	bpf_spin_unlock(&s->lock);
	if (mine && stream == SATFEED_STREAM_POLL)
		use_partial(&pp, sig);
	return published;
}

/* One target's level for this period (0 once released). */
static __always_inline u32 decide_target(u32 i, u64 now,
					 struct scx_sf_state *st)
{
	const volatile struct scx_sf_target *t = &cfg.targets[i];
	struct scx_sf_target_state *ts = &st->t[i];
	struct sfc_signals sig = { .now_ns = now };
	/* read through cfg's volatile: a plain pointer would let the
	 * compiler fold the fields to their initial values */
	struct sfc_policy_params params = {
		.hysteresis = cfg.policy.hysteresis,
		.max_step = cfg.policy.max_step,
		.min_interval_ns = cfg.policy.min_interval_ns,
		.stale_ns = cfg.policy.stale_ns,
	};
	struct satfeed_target *tgt;
	u32 slot = t->slot;
	u64 fresh = 0;

	tgt = bpf_map_lookup_elem(&sf_targets, &slot);
	ts->live = tgt && tgt->kind == t->kind && tgt->id == t->id &&
		   tgt->gen == t->gen && tgt->state == SATFEED_STATE_ACTIVE;
	if (ts->live) {
		for (u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			u64 pub = read_stream(t, s, &sig);

			/* windows closed before the first period do not count */
			if (pub > ts->published[s] && st->periods > 1)
				fresh += pub - ts->published[s];
			ts->published[s] = pub;
		}
	}
	if (fresh) {
		ts->windows += fresh;
		st->windows += fresh;
		ts->last_window_ns = now;
	}
	if (!ts->live || now - ts->last_window_ns > cfg.release_ns) {
		if (!ts->released && ts->pol.level)
			st->releases++;
		ts->released = 1;
		ts->pol.level = 0;
		ts->pol.demand = 0;
		return 0;
	}
	ts->released = 0;
	sfc_policy_step(&params, &ts->pol, &sig);
	return ts->pol.level;
}

/* Reserve `want` CPUs and set every CPU's performance target. */
static __always_inline void enforce(struct scx_sf_state *st, u32 want, u64 now)
{
	u32 n = cfg.nr_cpus, first = n - want;

	st->perf_base = cfg.perf_base;
	st->perf_reserved = want ? cfg.perf_base +
			    (SCX_SF_PERF_ONE - cfg.perf_base) * st->level / 100 :
			    cfg.perf_base;
	if (want != st->reserved) {
		st->reserved = want;
		st->changes++;
		st->last_change_ns = now;
		if (!cfg.dry_run)
			reserved_first = first;
	}
	for (u32 cpu = 0; cpu < n && cpu < SCX_SF_MAX_CPUS; cpu++) {
		u32 key = cpu;	/* the loop counter stays in a register */
		struct scx_sf_cpu *c = bpf_map_lookup_elem(&scx_sf_cpus, &key);
		u32 res = cpu >= first;
		u32 perf = res ? st->perf_reserved : st->perf_base;

		if (!c)
			continue;
		if (cfg.dry_run) {
			c->reserved = res;
			c->perf = perf;
			continue;
		}
		if (perf != c->perf) {
			scx_bpf_cpuperf_set(cpu, perf);
			c->perf = perf;
		}
		/* a CPU that changes side drops what it runs now */
		if (res != c->reserved)
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		c->reserved = res;
	}
}

static int decide(void *map, u32 *key, struct decide_timer *dt)
{
	struct scx_sf_state *st;
	u32 zero = 0, level = 0, want;
	u64 now = bpf_ktime_get_ns();

	st = bpf_map_lookup_elem(&scx_sf_state, &zero);
	if (!st)
		return 0;
	if (!st->periods) {
		st->start_ns = now;
		/* a target has release_ns from the start to show a window */
		for (u32 i = 0; i < SCX_SF_MAX_TARGETS; i++)
			st->t[i].last_window_ns = now;
	}
	st->periods++;
	st->now_ns = now;
	for (u32 i = 0; i < SCX_SF_MAX_TARGETS && i < cfg.nr_targets; i++) {
		u32 l = decide_target(i, now, st);

		if (l > level)
			level = l;
	}
	st->level = level;
	/* round to the nearest CPU: a low level reserves none */
	want = (level * cfg.max_reserved + 50) / 100;
	if (want > cfg.max_reserved)
		want = cfg.max_reserved;
	enforce(st, want, now);
	bpf_timer_start(&dt->timer, cfg.period_ns, 0);
	return 0;
}

static int start_decisions(void)
{
	struct decide_timer *dt;
	u32 zero = 0;
	int err;

	dt = bpf_map_lookup_elem(&scx_sf_timer, &zero);
	if (!dt)
		return -2;	/* ENOENT */
	err = bpf_timer_init(&dt->timer, &scx_sf_timer, CLOCK_MONOTONIC);
	if (err)
		return err;
	err = bpf_timer_set_callback(&dt->timer, decide);
	if (err)
		return err;
	return bpf_timer_start(&dt->timer, cfg.period_ns, 0);
}

s32 SCX_OPS_SLEEPABLE(sf_init)
{
	int err;

	reserved_first = cfg.nr_cpus;
	err = scx_bpf_create_dsq(SCX_SF_DSQ_SHARED, -1);
	if (!err)
		err = scx_bpf_create_dsq(SCX_SF_DSQ_TARGET, -1);
	if (!err)
		err = start_decisions();
	return err;
}

void SCX_OPS(sf_exit, struct scx_exit_info *ei)
{
	struct scx_sf_exit *e;
	u32 zero = 0;

	e = bpf_map_lookup_elem(&scx_sf_exit, &zero);
	if (!e)
		return;
	bpf_probe_read_kernel_str(e->reason, sizeof(e->reason), ei->reason);
	bpf_probe_read_kernel_str(e->msg, sizeof(e->msg), ei->msg);
	e->exit_code = ei->exit_code;
	e->kind = ei->kind;
}

/* --dry-run: the same decisions without a scheduler attached. */
SEC("syscall")
int sf_dry_run(void *ctx)
{
	reserved_first = cfg.nr_cpus;
	return start_decisions();
}

SEC(".struct_ops.link")
struct sched_ext_ops sf_ops = {
	.select_cpu = (void *)sf_select_cpu,
	.enqueue = (void *)sf_enqueue,
	.dispatch = (void *)sf_dispatch,
	.running = (void *)sf_running,
	.tick = (void *)sf_tick,
	.init = (void *)sf_init,
	.exit = (void *)sf_exit,
	.name = SCX_SF_NAME,
};
