// SPDX-License-Identifier: GPL-2.0
/*
 * scx_satfeed.bpf.c - a sched_ext scheduler that reserves CPUs for a server
 * and raises their performance target from satfeed's windows.
 *
 * Every period a bpf_timer reads the watched targets' newest windows from
 * satfeed's pinned maps (the loader swaps them in with bpf_map__reuse_fd, so
 * nothing is copied through user space) and feeds them to the consumer
 * policy of kmod-example (sfc_policy.c, compiled in below): one demand
 * level 0..100 per target, with hysteresis and a rate limit.  A level above
 * 0 reserves CPUs, as many as the targets' measured CPU use and runnable
 * threads need (scx_decide.bpf.h); at least min_shared CPUs are never
 * reserved.  Reserved CPUs run the targets' threads and nothing else (per-
 * CPU kthreads aside), at full performance (scx_bpf_cpuperf_set); a target
 * that closes no window for release_ns (idle, gone, or its engine
 * unloaded) loses its level at once, so the reservation is released.
 *
 * Scheduling is two FIFO queues: SCX_SF_DSQ_TARGET and SCX_SF_DSQ_SHARED.
 * Reserved CPUs consume only the first.  Shared CPUs (every CPU while
 * nothing is reserved) consume both, the targets' first, but a target
 * runs at most slice_ns there while another task waits ("debt"): the
 * rest keep half of every shared CPU they wait for, so a server with more
 * busy threads than CPUs starves nothing.  A waking target takes an idle
 * CPU, reserved ones first, else preempts a CPU that runs another task
 * (a reserved one first; a shared one when the others' share allows).
 * SCX_OPS_ENQ_LAST: a task whose slice ends with nothing else queued for
 * its CPU comes back through ops.enqueue, so another task never stays on
 * a reserved CPU only because no target waits.  Per-CPU kthreads go to
 * the head of their CPU's queue and preempt (as scx_central); tasks that
 * may run on none of their pool's CPUs go to an allowed CPU's local queue:
 * a reservation never strands a task.
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
/* another task's slice on a reserved CPU while its migration is disabled:
 * below a tick, so that the next tick ends it */
#define SCX_SF_PINNED_SLICE_NS	(100 * 1000)

const volatile struct scx_sf_config cfg = {
	.nr_cpus = 1,
	.min_shared = 1,
	.period_ns = 10 * 1000 * 1000,
	.slice_ns = 5 * 1000 * 1000,
};

/* CPUs of rank < nr_reserved (cfg.rank) are reserved.  Written by the
 * timer only; the scheduling paths read it once per call. */
u32 nr_reserved;

/* The targets' measurements, read and reset by the timer. */
u64 tgt_run_ns;			/* CPU time, total */
int nr_tgt_runnable;		/* threads runnable now */
int tgt_runnable_peak;		/* the most since the last period */
u64 tgt_delay_max;		/* longest run-queue wait since the period */
u64 tgt_delays;			/* waits above delay_ns, total */

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

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

/* Per task: is it a target's (set at enable and at each wake-up), is it
 * counted in nr_tgt_runnable, since when does it wait to run. */
struct task_ctx {
	u64 queued_ns;
	u8 target;
	u8 counted;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} scx_sf_task SEC(".maps");

/* ---- the scheduling paths ---- */

/* Is p one of the targets' threads?  (The walk; tctx caches it.) */
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

static __always_inline struct task_ctx *tctx(struct task_struct *p)
{
	return bpf_task_storage_get(&scx_sf_task, p, 0, 0);
}

static __always_inline bool target_of(struct task_struct *p)
{
	struct task_ctx *t = tctx(p);

	return t ? t->target : is_target(p);
}

static __always_inline struct scx_sf_cpu *cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&scx_sf_cpus, &key);
}

/* cfg.rank[cpu]: the mask keeps the index provably in bounds for the
 * verifier (barrier_var: the compiler may not drop it as redundant) */
static __always_inline u32 rank_of(u32 cpu)
{
	barrier_var(cpu);
	return cfg.rank[cpu & (SCX_SF_MAX_CPUS - 1)];
}

static __always_inline bool reserved_cpu(s32 cpu, u32 nres)
{
	return cpu >= 0 && cpu < SCX_SF_MAX_CPUS && rank_of(cpu) < nres;
}

/* May a task of this kind be placed on cpu?  Targets anywhere (reserved
 * CPUs first, see claim_idle), the others on shared CPUs only. */
static __always_inline bool in_pool(bool target, s32 cpu, u32 nres)
{
	return target || !reserved_cpu(cpu, nres);
}

static __always_inline bool may_run_on(struct task_struct *p, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/*
 * Is p's migration disabled?  SCX_OPS_ENQ_MIGRATION_DISABLED hands such a
 * task to ops.enqueue, and it may go to its own CPU only.  Where the
 * kernel has preemptible RCU (task_struct then has rcu_read_lock_nesting)
 * the trampoline of this program disabled the current task's migration
 * once itself, so one count of the current task is ours.  Elsewhere every
 * count is taken as the task's own (older kernels took one there too):
 * a free task judged pinned stays on its CPU a tick, while a pinned task
 * judged free would wait in a queue no other CPU may take it from.
 */
static __always_inline bool migration_disabled(struct task_struct *p)
{
	u16 n = p->migration_disabled;

	if (n == 1 &&
	    bpf_core_field_exists(struct task_struct, rcu_read_lock_nesting) &&
	    p == bpf_get_current_task_btf())
		return false;
	return n;
}

/*
 * An idle CPU p may run on, reserved (res) or shared, now claimed, or -1.
 * prev is tried first.
 */
static __always_inline s32 claim_idle(struct task_struct *p, s32 prev,
				      bool res, u32 nres)
{
	if (prev >= 0 && reserved_cpu(prev, nres) == res &&
	    may_run_on(p, prev) && scx_bpf_test_and_clear_cpu_idle(prev))
		return prev;
	for (s32 cpu = 0; cpu < cfg.nr_cpus && cpu < SCX_SF_MAX_CPUS; cpu++)
		if (reserved_cpu(cpu, nres) == res && may_run_on(p, cpu) &&
		    scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	return -1;
}

/* An idle CPU for p: a target's reserved ones first, then shared ones. */
static __always_inline s32 find_idle(struct task_struct *p, bool target,
				     s32 prev, u32 nres)
{
	s32 cpu = -1;

	if (target && nres)
		cpu = claim_idle(p, prev, true, nres);
	if (cpu < 0)
		cpu = claim_idle(p, prev, false, nres);
	return cpu;
}

/* A CPU p may run on: in its pool if one allows it (its own first), else
 * any (pool false); -1: none. */
static __always_inline s32 allowed_cpu(struct task_struct *p, bool target,
				       bool pool, u32 nres)
{
	s32 cur = scx_bpf_task_cpu(p);

	if (may_run_on(p, cur) && (!pool || in_pool(target, cur, nres)))
		return cur;
	for (s32 cpu = 0; cpu < cfg.nr_cpus && cpu < SCX_SF_MAX_CPUS; cpu++)
		if (may_run_on(p, cpu) && (!pool || in_pool(target, cpu, nres)))
			return cpu;
	return -1;
}

/*
 * A waking target found no idle CPU: preempt a reserved CPU that runs
 * another task, else a shared one whose other task's share is served.
 */
static __always_inline void preempt_for(struct task_struct *p, u32 nres)
{
	u64 now = bpf_ktime_get_ns();
	struct scx_sf_cpu *c;
	s32 victim = -1;

	for (s32 cpu = 0; cpu < cfg.nr_cpus && cpu < SCX_SF_MAX_CPUS; cpu++) {
		c = cpu_ctx(cpu);
		if (!c || c->cur != SCX_SF_RUN_OTHER || !may_run_on(p, cpu))
			continue;
		if (reserved_cpu(cpu, nres)) {
			victim = cpu;
			break;
		}
		if (victim < 0 && now >= c->protect_until_ns)
			victim = cpu;
	}
	if (victim < 0)
		return;
	c = cpu_ctx(victim);
	if (c)
		__sync_fetch_and_add(&c->preempts, 1);
	scx_bpf_kick_cpu(victim, SCX_KICK_PREEMPT);
}

s32 SCX_OPS(sf_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool target;
	s32 cpu;

	if (p->nr_cpus_allowed == 1)
		return prev_cpu;
	target = target_of(p);
	/* --test-stall: the targets always go through their queue */
	if (target && cfg.test_stall)
		return prev_cpu;
	cpu = find_idle(p, target, prev_cpu, nr_reserved);
	if (cpu >= 0) {
		/* idle and claimed: run there without a queue */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, 0);
		return cpu;
	}
	return prev_cpu;
}

void SCX_OPS(sf_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *t = tctx(p);
	bool target = t ? t->target : is_target(p);
	bool stall = target && cfg.test_stall;
	u32 nres = nr_reserved;
	struct scx_sf_cpu *c;
	s32 cpu;

	if (t && target && !t->queued_ns)
		t->queued_ns = bpf_ktime_get_ns();
	/* per-CPU kthreads (ksoftirqd, the timer's): head, preempting */
	if ((p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns,
				   enq_flags | SCX_ENQ_HEAD | SCX_ENQ_PREEMPT);
		return;
	}
	/* migration disabled (preempted or woken inside a BPF program, say):
	 * its own CPU, without the 20 ms slice the kernel would give it; on
	 * a reserved CPU another task gets a slice that the next tick ends,
	 * and comes back here until it may move */
	if (migration_disabled(p)) {
		cpu = scx_bpf_task_cpu(p);
		if (in_pool(target, cpu, nres)) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns,
					   enq_flags);
			return;
		}
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SCX_SF_PINNED_SLICE_NS,
				   enq_flags);
		c = cpu_ctx(cpu);
		if (c)
			__sync_fetch_and_add(&c->pinned, 1);
		return;
	}
	if (p->nr_cpus_allowed < cfg.nr_cpus) {
		/* pinned, or kept off its pool by its affinity */
		cpu = allowed_cpu(p, target, true, nres);
		if (p->nr_cpus_allowed == 1 || cpu < 0) {
			cpu = allowed_cpu(p, target, false, nres);
			if (cpu >= 0) {
				scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu,
						   cfg.slice_ns, enq_flags);
				scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
				return;
			}
		}
	}
	/* nothing else queued for its CPU (sf_dispatch did not keep it):
	 * keep it there if it may stay.  The CPU is on its way to idle, and
	 * a local task does not wake it (the kernel asks for "an explicit
	 * follow-up scheduling event"): kick it, or the task sits there
	 * until the CPU next wakes (32 ms in a guest) */
	if ((enq_flags & SCX_ENQ_LAST) && !stall &&
	    in_pool(target, scx_bpf_task_cpu(p), nres)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
		scx_bpf_kick_cpu(scx_bpf_task_cpu(p), 0);
		return;
	}
	scx_bpf_dsq_insert(p, target ? SCX_SF_DSQ_TARGET : SCX_SF_DSQ_SHARED,
			   cfg.slice_ns, enq_flags);
	if (stall)
		return;
	cpu = find_idle(p, target, -1, nres);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	else if (target)
		preempt_for(p, nres);
}

/*
 * Nothing was queued for this CPU: prev, still runnable after its slice,
 * goes on with a new one when it may stay here (the kernel keeps a prev
 * with slice left).  Without this, SCX_OPS_ENQ_LAST sends it through
 * ops.enqueue while the CPU heads for idle.
 */
static __always_inline void keep_prev(struct task_struct *prev, s32 cpu,
				      u32 nres)
{
	bool target;

	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return;
	target = target_of(prev);
	if ((target && cfg.test_stall) || !in_pool(target, cpu, nres))
		return;
	prev->scx.slice = cfg.slice_ns;
}

void SCX_OPS(sf_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 nres = nr_reserved;
	struct scx_sf_cpu *c;
	bool prev_waits, owed;

	/* reserved: the targets only; never under --test-stall, whose
	 * point is a target left waiting */
	if (reserved_cpu(cpu, nres)) {
		if (cfg.test_stall ||
		    !scx_bpf_dsq_move_to_local(SCX_SF_DSQ_TARGET))
			keep_prev(prev, cpu, nres);
		return;
	}
	/* shared: the targets first, unless they ran slice_ns here while
	 * another task waited (prev included: it queues after this) */
	c = cpu_ctx(cpu);
	prev_waits = prev && (prev->scx.flags & SCX_TASK_QUEUED) &&
		     !target_of(prev);
	owed = c && c->debt_ns >= cfg.slice_ns &&
	       (prev_waits || scx_bpf_dsq_nr_queued(SCX_SF_DSQ_SHARED) > 0);
	if (!owed && !cfg.test_stall &&
	    scx_bpf_dsq_move_to_local(SCX_SF_DSQ_TARGET))
		return;
	if (scx_bpf_dsq_move_to_local(SCX_SF_DSQ_SHARED))
		return;
	/* owed to prev: it goes on; else the targets */
	if (owed && !prev_waits && !cfg.test_stall &&
	    scx_bpf_dsq_move_to_local(SCX_SF_DSQ_TARGET))
		return;
	keep_prev(prev, cpu, nres);
}

void SCX_OPS(sf_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *t = tctx(p);
	s32 n;

	if (!t)
		return;
	t->target = is_target(p);
	if (!t->target || t->counted)
		return;
	t->counted = 1;
	t->queued_ns = bpf_ktime_get_ns();
	/* the compiled CPU (v1) has no fetching atomics: add, then read */
	__sync_fetch_and_add(&nr_tgt_runnable, 1);
	n = nr_tgt_runnable;
	if (n > tgt_runnable_peak)
		tgt_runnable_peak = n;
}

void SCX_OPS(sf_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *t = tctx(p);

	if (t && t->counted) {
		t->counted = 0;
		__sync_fetch_and_add(&nr_tgt_runnable, -1);
	}
}

/*
 * ops.running and ops.stopping act on the CPU of p, not the calling one:
 * the kernel calls them from another CPU when it changes a running task
 * (its cgroup, affinity or priority: put_prev, then set_next), and the
 * caller's state would then describe a task that is not running there.
 */
void SCX_OPS(sf_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	u64 now = bpf_ktime_get_ns();
	u32 nres = nr_reserved;
	struct scx_sf_state *st;
	struct scx_sf_cpu *c;
	struct task_ctx *t;
	u32 zero = 0;
	bool target;

	c = cpu_ctx(cpu);
	if (!c)
		return;
	c->run_start_ns = now;
	c->run_ends = 0;
	t = tctx(p);
	target = t ? t->target : is_target(p);
	/* placed by its affinity, not by the pools: pinned, or another
	 * task on a reserved CPU because it may run on no shared one */
	if (p->nr_cpus_allowed == 1 ||
	    (!target && p->nr_cpus_allowed < cfg.nr_cpus &&
	     reserved_cpu(cpu, nres))) {
		c->cur = SCX_SF_RUN_BOUND;
		c->bound_runs++;
		return;
	}
	if (target) {
		c->cur = SCX_SF_RUN_TARGET;
		c->target_runs++;
		if (nres && !reserved_cpu(cpu, nres))
			c->spilled++;
		if (t && t->queued_ns) {
			u64 d = now - t->queued_ns;

			t->queued_ns = 0;
			if (d > tgt_delay_max)
				tgt_delay_max = d;
			if (d > cfg.delay_ns)
				__sync_fetch_and_add(&tgt_delays, 1);
		}
		return;
	}
	c->cur = SCX_SF_RUN_OTHER;
	c->other_runs++;
	/* it runs unpreempted until it has repaid the targets' debt */
	c->protect_until_ns = now + c->debt_ns;
	if (!reserved_cpu(cpu, nres))
		return;
	/* queued here before the CPU became reserved: it leaves at once
	 * (sf_enqueue then sends it to the shared queue) */
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	st = bpf_map_lookup_elem(&scx_sf_state, &zero);
	if (st && now - st->last_change_ns <= cfg.grace_ns)
		c->moved++;
	else
		c->misplaced++;
}

void SCX_OPS(sf_stopping, struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct scx_sf_cpu *c = cpu_ctx(cpu);
	u64 d;

	if (!c)
		return;
	d = bpf_ktime_get_ns() - c->run_start_ns;
	if (c->cur == SCX_SF_RUN_TARGET) {
		__sync_fetch_and_add(&tgt_run_ns, d);
		if (!reserved_cpu(cpu, nr_reserved)) {
			d += c->debt_ns;
			c->debt_ns = d < cfg.slice_ns ? d : cfg.slice_ns;
		}
	} else if (c->cur == SCX_SF_RUN_OTHER) {
		c->debt_ns = c->debt_ns > d ? c->debt_ns - d : 0;
	}
	c->cur = SCX_SF_RUN_NONE;
}

/*
 * Another task on a reserved CPU yields at the tick, judged from p itself
 * rather than from what ops.running saw: a task can be pinned then and
 * free now.  That is a task preempted with migration disabled (in a BPF
 * program on its syscall, satfeed's own included): the kernel pins it to
 * its CPU until migrate_enable(), and ops.enqueue queues it there with a
 * slice shorter than a tick (SCX_OPS_ENQ_MIGRATION_DISABLED).  Pinned
 * tasks, and tasks whose affinity allows no shared CPU, stay.  Costs a
 * task-storage lookup per tick of a reserved CPU.
 */
void SCX_OPS(sf_tick, struct task_struct *p)
{
	s32 cpu = bpf_get_smp_processor_id();
	u32 nres = nr_reserved;
	struct scx_sf_cpu *c;

	if (!reserved_cpu(cpu, nres) || target_of(p))
		return;
	c = cpu_ctx(cpu);
	if (p->nr_cpus_allowed == 1 ||
	    (p->nr_cpus_allowed < cfg.nr_cpus &&
	     allowed_cpu(p, false, true, nres) < 0)) {
		if (c)
			c->tick_kept++;
		return;
	}
	p->scx.slice = 0;
	if (!c)
		return;
	c->tick_ended++;
	/* a second end of the same run: the kernel could not preempt it */
	if (++c->run_ends > c->run_ends_max)
		c->run_ends_max = c->run_ends;
	if (c->cur != SCX_SF_RUN_OTHER) {
		c->cur = SCX_SF_RUN_OTHER;
		c->unbound++;
	}
}

s32 SCX_OPS(sf_init_task, struct task_struct *p,
	    struct scx_init_task_args *args)
{
	if (!bpf_task_storage_get(&scx_sf_task, p, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -12;	/* ENOMEM */
	return 0;
}

/* Entering sched_ext (after fork, in its final cgroup): which kind. */
void SCX_OPS(sf_enable, struct task_struct *p)
{
	struct task_ctx *t = tctx(p);

	if (t)
		t->target = is_target(p);
}

#include "scx_decide.bpf.h"

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

	nr_reserved = 0;
	err = scx_bpf_create_dsq(SCX_SF_DSQ_SHARED, -1);
	if (!err)
		err = scx_bpf_create_dsq(SCX_SF_DSQ_TARGET, -1);
	if (!err)
		err = start_decisions();
	return err;
}

void SCX_OPS(sf_exit, struct scx_exit_info *ei)
{
	struct decide_timer *dt;
	struct scx_sf_exit *e;
	u32 zero = 0;

	/* no decision after the scheduler is gone */
	dt = bpf_map_lookup_elem(&scx_sf_timer, &zero);
	if (dt)
		bpf_timer_cancel(&dt->timer);
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
	nr_reserved = 0;
	return start_decisions();
}

SEC(".struct_ops.link")
struct sched_ext_ops sf_ops = {
	.select_cpu = (void *)sf_select_cpu,
	.enqueue = (void *)sf_enqueue,
	.dispatch = (void *)sf_dispatch,
	.runnable = (void *)sf_runnable,
	.running = (void *)sf_running,
	.stopping = (void *)sf_stopping,
	.quiescent = (void *)sf_quiescent,
	.tick = (void *)sf_tick,
	.init_task = (void *)sf_init_task,
	.enable = (void *)sf_enable,
	.init = (void *)sf_init,
	.exit = (void *)sf_exit,
	/* a task with nothing queued behind it comes back to ops.enqueue
	 * instead of keeping its CPU (scx_central does the same); so does a
	 * task whose migration is disabled, which the kernel would otherwise
	 * queue on its CPU itself, with a 20 ms slice (SCX_SLICE_DFL) */
	.flags = SCX_OPS_ENQ_LAST | SCX_OPS_ENQ_MIGRATION_DISABLED,
	.name = SCX_SF_NAME,
};
