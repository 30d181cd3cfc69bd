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
	__u32 perf_base;	/* perf target of the shared CPUs, 0..1024 */
	__u32 dry_run;		/* decide and report only */
	__u32 test_stall;	/* test only: never dispatch the targets'
				 * queue, so the kernel's watchdog stops the
				 * scheduler (the error exit path) */
	__u32 pad;
	__u64 period_ns;	/* decision period (bpf_timer) */
	__u64 release_ns;	/* no window for this long: release */
	__u64 grace_ns;		/* after a change, a misplaced run is a move */
	__u64 slice_ns;		/* time slice of every task */
	struct sfc_policy_params policy;
	struct scx_sf_target targets[SCX_SF_MAX_TARGETS];
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
	__u32 reserved;		/* CPUs reserved: the last `reserved` CPUs */
	__u32 perf_reserved;	/* perf target of the reserved CPUs */
	__u32 perf_base;	/* perf target of the others */
	__u64 changes;		/* times the reservation changed */
	__u64 last_change_ns;
	__u64 releases;		/* reservations dropped for lack of windows */
	__u64 windows;		/* new windows over every target */
	struct scx_sf_target_state t[SCX_SF_MAX_TARGETS];
};

/*
 * Per-CPU counters, each written on its own CPU (ops.running) except perf
 * and reserved, written by the timer.  A run is one ops.running() call.
 */
struct scx_sf_cpu {
	__u64 target_runs;	/* runs of a target's threads */
	__u64 other_runs;	/* runs of every other task */
	__u64 bound_runs;	/* runs of tasks kept off some CPUs by their
				 * affinity (per-CPU kthreads, ...): placed
				 * by it, and counted in neither of the above */
	__u64 moved;		/* runs outside the task's pool within grace_ns
				 * of a reservation change */
	__u64 misplaced;	/* runs outside the task's pool otherwise */
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
