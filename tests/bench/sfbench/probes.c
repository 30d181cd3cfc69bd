// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probes.c - probes: where satfeed's time goes
 * (tests/bench/progs/sfbench_empty.bpf.c), each building block of the sample
 * path alone on sys_exit.
 */
#include "sfbench.h"

const char *const pb_key[NR_PB] = {
	"empty", "gate", "gate_task", "filter", "hash", "direct",
	"ktime", "lock", "atomic", "sock", "sock_cast", "task", "sample",
	"sample_direct", "floor", "lockfree",
};
const char *const pb_label[NR_PB] = {
	"empty program (the accounting floor)",
	"gate: pid_tgid helper, tgid compare",
	"gate via bpf_get_current_task_btf()",
	"prefilter: config lookup + pid bit",
	"hash lookup tgid -> target (64)",
	"direct-mapped lookup (no helper)",
	"bpf_ktime_get_ns()",
	"bpf_spin_lock + 2 stores + unlock",
	"atomic add to a shared counter",
	"socket check: fd -> file -> i_mode",
	"same, fd slot read by bpf_core_cast",
	"task storage get",
	"sample path: filter+hash+clock+lock",
	"same with the direct-mapped lookup",
	"floor: clock + exact sample, locked",
	"same, lock-free (xchg, fetch-adds)",
};
double pb_ns[NR_PB][MAX_ROUNDS];

/* mirrors struct sfb_direct of tests/bench/progs/sfbench_empty.bpf.c (size
 * checked) */
struct sfb_direct {
	__u8 slot1[SATFEED_PID_SLOTS];
	__u32 tgid[SATFEED_MAX_TARGETS];
};

static struct bpf_program *probe_prog(int pb)
{
	switch (pb) {
	case PB_EMPTY: return empty->progs.sfb_exit;
	case PB_GATE: return empty->progs.sfb_v_gate;
	case PB_GATE2: return empty->progs.sfb_v_gate2;
	case PB_SLOT: return empty->progs.sfb_v_slot;
	case PB_SAMPLE2: return empty->progs.sfb_v_sample2;
	case PB_FILTER: return empty->progs.sfb_v_filter;
	case PB_HASH: return empty->progs.sfb_v_hash;
	case PB_KTIME: return empty->progs.sfb_v_ktime;
	case PB_LOCK: return empty->progs.sfb_v_lock;
	case PB_ATOMIC: return empty->progs.sfb_v_atomic;
	case PB_SOCK: return empty->progs.sfb_v_sock;
	case PB_SOCK2: return empty->progs.sfb_v_sock2;
	case PB_TASK: return empty->progs.sfb_v_task;
	case PB_SAMPLE: return empty->progs.sfb_v_sample;
	case PB_FLOOR: return empty->progs.sfb_v_floor;
	case PB_LOCKFREE: return empty->progs.sfb_v_lockfree;
	}
	return NULL;
}

/* the probes' maps hold what satfeed's would at 64 targets */
void probes_setup(void)
{
	struct satfeed_target t[MAX_TARGETS] = {};
	struct satfeed_config cfg;
	__u32 zero = 0;

	for (int i = 0; i < nr_targets; i++) {
		struct satfeed_index ix = { .slot = i, .gen = 1,
					    .sc_mask = SATFEED_SC_ALL };
		__u32 tgid = target_pids[i];

		t[i].kind = SATFEED_TARGET_PID;
		t[i].id = tgid;
		if (bpf_map__update_elem(empty->maps.sfb_pids, &tgid,
					 sizeof(tgid), &ix, sizeof(ix), 0))
			die("cannot fill the probes' hash map: %s",
			    strerror(errno));
	}
	/* the same tgid -> slot table the engine's sf_config holds */
	if (sf_config_build(t, nr_targets, &cfg))
		die("cannot build the probes' config");
	{
		struct sfb_direct *d = calloc(1, sizeof(*d));

		if (!d)
			die("out of memory");
		if (bpf_map__value_size(empty->maps.sfb_direct) != sizeof(*d))
			die("struct sfb_direct differs from the BPF object's");
		for (int i = 0; i < nr_targets; i++) {
			d->slot1[target_pids[i] % SATFEED_PID_SLOTS] = i + 1;
			d->tgid[i] = target_pids[i];
		}
		if (bpf_map__update_elem(empty->maps.sfb_direct, &zero,
					 sizeof(zero), d, sizeof(*d), 0))
			die("cannot fill the probes' direct table: %s",
			    strerror(errno));
		free(d);
	}
	if (bpf_map__update_elem(empty->maps.sfb_config, &zero, sizeof(zero),
				 &cfg, sizeof(cfg), 0))
		die("cannot fill the probes' config: %s", strerror(errno));
}

/* Each probe alone on sys_exit, statistics on, the traced worker's getppid
 * loop: ns per run of the worker's own syscalls. */
void run_probes(int round)
{
	long n = phase_n(P_UGETPPID) / 2;

	for (int pb = 0; pb < NR_PB; pb++)
		pb_ns[pb][round] = NAN;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		die("cannot enable BPF run-time statistics: %s",
		    strerror(errno));
	/* the empty program first (the others' background is charged at its
	 * cost), then the probes in an order that rotates each round */
	for (int k = 0; k < NR_PB; k++) {
		int pb = k ? 1 + (k - 1 + round) % (NR_PB - 1) : PB_EMPTY;
		struct bpf_program *prog = probe_prog(pb);
		struct bpf_link *link = bpf_program__attach(prog);
		struct progset ps = { .n = 1, .fd = { bpf_program__fd(prog) } };
		struct pstat a, b;
		double own, bg, c_bg;
		struct res r;

		if (!link)
			die("cannot attach probe %s: %s", pb_key[pb],
			    strerror(errno));
		probe_link = link;	/* cleanup detaches it on error */
		worker_run(&W_T, OP_PING, 0, 0);
		a = prog_stat(&ps);
		r = worker_run(&W_T, OP_GETPPID, n, 1);
		b = prog_stat(&ps);
		bpf_link__destroy(link);
		probe_link = NULL;
		own = (double)r.ops;
		bg = (double)(b.cnt - a.cnt) - own;
		if (bg < 0)
			bg = 0;
		/* other processes' runs stop at the gate: charge them at the
		 * empty program's cost of this round (measured first or
		 * assumed equal when not yet measured) */
		c_bg = pb != PB_EMPTY ? pb_ns[PB_EMPTY][round] :
			(double)(b.rt - a.rt) / (double)(b.cnt - a.cnt);
		pb_ns[pb][round] = ((double)(b.rt - a.rt) - bg * c_bg) / own;
	}
	close(stats_fd);
	stats_fd = -1;
}
