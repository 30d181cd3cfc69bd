/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * scx_satfeed.h - what scx_satfeed's BPF side and its loader share: the
 * settings (the BPF object's .rodata), the decision state and the per-CPU
 * counters (both read by the loader for --stats), and the exit record.
 *
 * Include after satfeed.h and sfc_policy.h.  Fixed-width fields only.
 */
#ifndef __SCX_SATFEED_H
#define __SCX_SATFEED_H

#define SCX_SF_NAME		"satfeed"	/* sched_ext ops name */
#define SCX_SF_MAX_TARGETS	8
#define SCX_SF_MAX_CPUS		64
#define SCX_SF_PERF_ONE		1024		/* SCX_CPUPERF_ONE */
#define SCX_SF_MSG_LEN		256

/* The dispatch queues: one for the targets' threads, one for the rest. */
#define SCX_SF_DSQ_SHARED	0
#define SCX_SF_DSQ_TARGET	1

/* One target, resolved by the loader from pid, cgroup or slot. */
struct scx_sf_target {
	__u32 slot;		/* satfeed slot: sf_targets[slot] */
	__u32 kind;		/* enum satfeed_target_kind */
	__u64 id;		/* tgid or cgroup id */
	__u32 gen;		/* satfeed_target.gen when the scheduler started */
	__u32 level;		/* cgroup: depth below the cgroup2 root */
};

/* Settings, fixed at load (.rodata). */
struct scx_sf_config {
	__u32 nr_cpus;		/* CPUs 0..nr_cpus-1 are scheduled */
	__u32 nr_targets;
	__u32 min_shared;	/* CPUs never reserved (>= 1) */
	__u32 max_reserved;	/* at most nr_cpus - min_shared */
	__u32 perf_base;	/* perf target of the shared CPUs while some
				 * CPU is reserved, 1..1024; 0: never set
				 * (the kernel's default, full performance) */
	__u32 dry_run;		/* decide and report only */
	__u32 test_stall;	/* test only: never dispatch the targets'
				 * queue, so the kernel's watchdog stops the
				 * scheduler (the error exit path) */
	__u32 headroom_pct;	/* reservation: CPU use x (100 + this) / 100 */
	__u64 period_ns;	/* decision period (bpf_timer) */
	__u64 release_ns;	/* no window for this long: release */
	__u64 grace_ns;		/* after a change, a misplaced run is a move */
	__u64 slice_ns;		/* time slice of every task; also the most a
				 * target runs on a shared CPU while another
				 * task waits there (the others' share) */
	__u64 shrink_ns;	/* need below the reservation this long:
				 * one CPU less */
	__u64 delay_ns;		/* a target waited longer than this to run
				 * with more runnable threads than reserved
				 * CPUs: one CPU more */
	struct sfc_policy_params policy;
	struct scx_sf_target targets[SCX_SF_MAX_TARGETS];
	/* reservation order: CPU c is reserved while rank[c] < reserved
	 * (whole cores of one LLC first, from the topology) */
	__u8 rank[SCX_SF_MAX_CPUS];
	/* a reservation of n CPUs takes whole[n]: n rounded to whole cores
	 * (scx_topo.c) */
	__u8 whole[SCX_SF_MAX_CPUS + 1];
	/* and n CPUs one core smaller take less[n] */
	__u8 less[SCX_SF_MAX_CPUS + 1];
};

/* One target's view, written by each decision. */
struct scx_sf_target_state {
	__u32 live;		/* the slot still holds this target */
	__u32 released;		/* no window for release_ns: level forced 0 */
	__u64 windows;		/* windows closed since the scheduler started */
	__u64 last_window_ns;	/* when a new window was last seen */
	__u64 published[SATFEED_NR_STREAMS]; /* newest seq seen per stream */
	struct sfc_policy_state pol;
};

/* The decision state, written by the BPF timer only. */
struct scx_sf_state {
	__u64 periods;		/* decisions taken */
	__u64 now_ns;		/* time of the last decision */
	__u64 start_ns;		/* time of the first decision */
	__u32 level;		/* the largest target level, 0..100 */
	__u32 reserved;		/* CPUs reserved: those of rank < reserved */
	__u32 perf_reserved;	/* perf target of the reserved CPUs */
	__u32 perf_base;	/* perf target of the others */
	__u32 need;		/* CPUs the targets need (before the limits) */
	__u32 busy_permille;	/* targets' CPU use, 1/1000 CPU, smoothed */
	__u32 runnable;		/* targets' runnable threads, most in the
				 * period */
	__u32 runnable_hold;	/* the most over the last shrink_ns */
	__u64 runnable_hold_ns;	/* when runnable_hold was last raised */
	__u64 shrink_since_ns;	/* need below the reservation since, 0: not */
	__u64 run_ns;		/* targets' CPU time, total */
	__u64 delay_max_ns;	/* longest target run-queue wait, last period */
	__u64 delays;		/* target waits above delay_ns, total */
	__u64 changes;		/* times the reservation changed */
	__u64 last_change_ns;
	__u64 releases;		/* reservations dropped for lack of windows */
	__u64 windows;		/* new windows over every target */
	struct scx_sf_target_state t[SCX_SF_MAX_TARGETS];
};

/* What a CPU runs (scx_sf_cpu.cur). */
enum scx_sf_run {
	SCX_SF_RUN_NONE,
	SCX_SF_RUN_TARGET,
	SCX_SF_RUN_OTHER,
	SCX_SF_RUN_BOUND,	/* placed by its affinity (bound_runs) */
};

/*
 * Per-CPU counters and state, each written under its CPU's run-queue lock
 * (ops.running, ops.stopping, ops.tick) except perf and reserved, written
 * by the timer, and preempts, by the CPU that kicks.  A run is one
 * ops.running() call.
 */
struct scx_sf_cpu {
	__u64 target_runs;	/* runs of a target's threads */
	__u64 other_runs;	/* runs of every other task */
	__u64 bound_runs;	/* runs placed by affinity, not the pools:
				 * pinned tasks (per-CPU kthreads, ...) and
				 * other tasks on a reserved CPU because they
				 * may run on no shared one; counted in
				 * neither of the above */
	__u64 moved;		/* other tasks' runs on this reserved CPU
				 * within grace_ns of a reservation change */
	__u64 misplaced;	/* other tasks' runs on it otherwise */
	__u64 unbound;		/* other tasks' runs on this reserved CPU
				 * that ops.running did not see as such
				 * (pinned then: migration disabled), ended
				 * by the tick */
	__u64 pinned;		/* other tasks queued on this reserved CPU
				 * with migration disabled, for less than a
				 * tick (SCX_OPS_ENQ_MIGRATION_DISABLED) */
	__u64 tick_ended;	/* ticks here that ended another task's
				 * slice (this CPU reserved) */
	__u64 tick_kept;	/* ticks here that left another task
				 * running: pinned, or no shared CPU allowed */
	__u64 run_ends_max;	/* the most ticks that ended one run here:
				 * above 1, the task held the CPU past a tick
				 * that ended its slice (not preemptible:
				 * under a lock, or waiting for an IPI) */
	__u64 spilled;		/* target runs here while it was shared and
				 * some CPU was reserved */
	__u64 preempts;		/* kicked to run a waking target */
	__u64 debt_ns;		/* shared CPU: targets' run time not yet
				 * matched by the others', 0..slice_ns */
	__u64 run_start_ns;	/* when the current run started */
	__u64 protect_until_ns;	/* another task runs here unpreempted until */
	__u32 cur;		/* enum scx_sf_run: what runs now */
	__u32 run_ends;		/* ticks that ended the current run */
	__u32 reserved;		/* 1 while this CPU is reserved */
	__u32 perf;		/* perf target last set */
};

/* The kernel's exit info (struct scx_exit_info), copied by ops.exit. */
struct scx_sf_exit {
	__s64 kind;		/* enum scx_exit_kind; 0 while running */
	__s64 exit_code;
	char reason[SCX_SF_MSG_LEN];
	char msg[SCX_SF_MSG_LEN];
};

#endif /* __SCX_SATFEED_H */
