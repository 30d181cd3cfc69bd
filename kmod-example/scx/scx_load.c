// SPDX-License-Identifier: GPL-2.0
/*
 * scx_load.c - scx_satfeed's checks and its load: sched_ext free to take,
 * the CPUs, each target watched by satfeed, then the BPF skeleton with
 * satfeed's maps swapped in and the settings in its .rodata, attached as
 * the system's scheduler (or, --dry-run, its decision timer started alone).
 * Every setting comes in through the struct scx_env the caller passes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "sfc_policy.h"
#include "sf_common.h"
#include "sf_consumer.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "scx_satfeed.h"
#include "scx_loader.h"
#include "scx_topo.h"
#include "scx_satfeed.skel.h"

#define SCX_SYSFS	"/sys/kernel/sched_ext"

/* sched_ext is there and no scheduler runs; else a one-line refusal. */
void check_sched_ext(void)
{
	char state[64], ops[160];

	if (scx_read_line(SCX_SYSFS "/state", state, sizeof(state)))
		die(EXIT_NO_SCX, "this kernel has no sched_ext (no %s/state; CONFIG_SCHED_CLASS_EXT is needed)",
		    SCX_SYSFS);
	if (strcmp(state, "disabled")) {
		if (scx_read_line(SCX_SYSFS "/root/ops", ops, sizeof(ops)))
			strcpy(ops, "?");
		die(EXIT_NO_SCX, "another sched_ext scheduler is running (%s, state %s)",
		    ops, state);
	}
}

void resolve_target(struct scx_env *env, const struct sf_pins *p, int i)
{
	struct scx_sf_target *out = &env->cfg.targets[i];
	const char *arg = env->targets[i];
	struct sf_selector sel = {};
	struct satfeed_target t;
	char why[512];
	int slot, err;

	switch (env->kinds[i]) {
	case 's':
		if (env->ids[i] >= p->info.max_targets)
			die(SF_EXIT_USAGE, "--slot: '%s' is not a slot of satfeed's (0..%u)",
			    arg, p->info.max_targets - 1);
		slot = env->ids[i];
		err = sf_target_read(p, slot, &t);
		if (err)
			die(SF_EXIT_ERROR, "cannot read slot %d: %s", slot,
			    strerror(-err));
		if (t.kind == SATFEED_TARGET_FREE)
			die(SF_EXIT_TARGET, "slot %d is not watched by satfeed",
			    slot);
		break;
	case 'p':
		sel.kind = SATFEED_TARGET_PID;
		sel.id = env->ids[i];
		goto find;
	default:
		err = sf_selector_cgroup(arg, &sel, why, sizeof(why));
		if (err)
			die(err, "%s", why);
find:
		slot = sf_target_find(p, &sel, &t);
		if (slot == -ENOENT)
			die(SF_EXIT_TARGET, "%s %s is not watched by satfeed (satfeedctl add first)",
			    env->kinds[i] == 'p' ? "pid" : "cgroup", arg);
		if (slot < 0)
			die(SF_EXIT_ERROR, "cannot read satfeed's targets: %s",
			    strerror(-slot));
	}
	if (t.state != SATFEED_STATE_ACTIVE)
		die(SF_EXIT_TARGET, "target %s has exited", arg);
	for (int j = 0; j < i; j++)
		if (env->cfg.targets[j].slot == (__u32)slot)
			die(SF_EXIT_USAGE, "target %s is given twice", arg);
	out->slot = slot;
	out->kind = t.kind;
	out->id = t.id;
	out->gen = t.gen;
	out->level = t.level;
}

void check_cpus(struct scx_env *env)
{
	struct scx_sf_config *c = &env->cfg;
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		die(SF_EXIT_ERROR, "cannot count the CPUs: %s", strerror(-n));
	if (n > SCX_SF_MAX_CPUS)
		die(SF_EXIT_USAGE, "%d CPUs: scx_satfeed handles at most %d",
		    n, SCX_SF_MAX_CPUS);
	c->nr_cpus = n;
	if (c->min_shared < 1 || c->min_shared >= c->nr_cpus)
		die(SF_EXIT_USAGE, "--min-shared %u: must be 1..%u on %u CPUs",
		    c->min_shared, c->nr_cpus - 1, c->nr_cpus);
	if (env->nr_max_reserved < 0)
		c->max_reserved = c->nr_cpus - c->min_shared;
	else if ((__u32)env->nr_max_reserved > c->nr_cpus - c->min_shared)
		die(SF_EXIT_USAGE, "--max-reserved %d: only %u of %u CPUs can be reserved (%u stay shared)",
		    env->nr_max_reserved, c->nr_cpus - c->min_shared,
		    c->nr_cpus, c->min_shared);
	else
		c->max_reserved = env->nr_max_reserved;
	scx_topo_rank(SCX_TOPO_SYSFS, c->nr_cpus, c->max_reserved, c->rank,
		      c->whole, c->less);
}

struct scx_satfeed *open_scheduler(const struct scx_env *env,
				   const struct sf_pins *p)
{
	/* scx_satfeed.bpf.c reads these; sf_info and sf_verdict it does not */
	static const char *const reads[] = {
		SATFEED_PIN_TARGETS, SATFEED_PIN_STREAMS, NULL
	};
	struct scx_satfeed *skel;
	struct bpf_program *prog;
	char why[256];
	int err;

	skel = scx_satfeed__open();
	if (!skel)
		die(SF_EXIT_ERROR, "cannot open the BPF object: %s",
		    strerror(errno));
	err = sf_consumer_reuse(skel->obj, p, reads, why, sizeof(why));
	if (err)
		die(err, "%s", why);
	skel->rodata->cfg = env->cfg;

	/* --dry-run: the timer only; no struct_ops map, no callbacks */
	bpf_map__set_autocreate(skel->maps.sf_ops, !env->cfg.dry_run);
	if (env->watchdog_ms)
		skel->struct_ops.sf_ops->timeout_ms = env->watchdog_ms;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog,
			(prog == skel->progs.sf_dry_run) == !!env->cfg.dry_run);
	err = scx_satfeed__load(skel);
	if (err)
		die(SF_EXIT_ERROR, "cannot load the scheduler: %s (-v shows the verifier log)",
		    strerror(-err));
	return skel;
}

struct bpf_link *attach(struct scx_satfeed *skel)
{
	struct bpf_link *link = bpf_map__attach_struct_ops(skel->maps.sf_ops);

	if (!link) {
		int err = errno;

		if (err == EBUSY || err == EEXIST || err == EALREADY)
			die(EXIT_NO_SCX, "another sched_ext scheduler is running (attach: %s)",
			    strerror(err));
		die(SF_EXIT_ERROR, "cannot attach the scheduler: %s",
		    strerror(err));
	}
	return link;
}

void start_dry_run(struct scx_satfeed *skel)
{
	LIBBPF_OPTS(bpf_test_run_opts, ro);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sf_dry_run),
				     &ro);
	if (err || ro.retval)
		die(SF_EXIT_ERROR, "cannot start the decision timer: %s",
		    strerror(err ? errno : -(int)ro.retval));
}

