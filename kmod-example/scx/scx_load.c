// SPDX-License-Identifier: GPL-2.0
/*
 * scx_load.c - scx_satfeed's checks and its load: sched_ext free to take,
 * the CPUs, each target watched by satfeed, then the BPF object with
 * satfeed's maps swapped in and the settings in its .rodata, attached as
 * the system's scheduler (or, --dry-run, its decision timer started alone).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "sfc_policy.h"
#include "sf_common.h"
#include "sf_consumer.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "scx_satfeed.h"
#include "scx_loader.h"

#define SCX_SYSFS	"/sys/kernel/sched_ext"

static const unsigned char scx_obj[] = {
#include "scx_satfeed.bpf.inc"
};

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* sched_ext is there and no scheduler runs; else a one-line refusal. */
void check_sched_ext(void)
{
	char state[64], ops[160];

	if (read_line(SCX_SYSFS "/state", state, sizeof(state)))
		die(EXIT_NO_SCX, "this kernel has no sched_ext (no %s/state; CONFIG_SCHED_CLASS_EXT is needed)",
		    SCX_SYSFS);
	if (strcmp(state, "disabled")) {
		if (read_line(SCX_SYSFS "/root/ops", ops, sizeof(ops)))
			strcpy(ops, "?");
		die(EXIT_NO_SCX, "another sched_ext scheduler is running (%s, state %s)",
		    ops, state);
	}
}

void resolve_target(const struct sf_pins *p, int i)
{
	struct scx_sf_target *out = &env.cfg.targets[i];
	const char *arg = env.targets[i];
	struct sf_selector sel = {};
	struct satfeed_target t;
	char why[512];
	int slot, err;

	switch (env.kinds[i]) {
	case 's':
		slot = parse_num("--slot", arg, 0, p->info.max_targets - 1);
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
		sel.id = parse_num("--pid", arg, 1, INT_MAX);
		goto find;
	default:
		err = sf_selector_cgroup(arg, &sel, why, sizeof(why));
		if (err)
			die(err, "%s", why);
find:
		slot = sf_target_find(p, &sel, &t);
		if (slot == -ENOENT)
			die(SF_EXIT_TARGET, "%s %s is not watched by satfeed (satfeedctl add first)",
			    env.kinds[i] == 'p' ? "pid" : "cgroup", arg);
		if (slot < 0)
			die(SF_EXIT_ERROR, "cannot read satfeed's targets: %s",
			    strerror(-slot));
	}
	if (t.state != SATFEED_STATE_ACTIVE)
		die(SF_EXIT_TARGET, "target %s has exited", arg);
	for (int j = 0; j < i; j++)
		if (env.cfg.targets[j].slot == (__u32)slot)
			die(SF_EXIT_USAGE, "target %s is given twice", arg);
	out->slot = slot;
	out->kind = t.kind;
	out->id = t.id;
	out->gen = t.gen;
	out->level = t.level;
}

void check_cpus(void)
{
	struct scx_sf_config *c = &env.cfg;
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
	if (env.nr_max_reserved < 0)
		c->max_reserved = c->nr_cpus - c->min_shared;
	else if ((__u32)env.nr_max_reserved > c->nr_cpus - c->min_shared)
		die(SF_EXIT_USAGE, "--max-reserved %d: only %u of %u CPUs can be reserved (%u stay shared)",
		    env.nr_max_reserved, c->nr_cpus - c->min_shared,
		    c->nr_cpus, c->min_shared);
	else
		c->max_reserved = env.nr_max_reserved;
}

/*
 * Set the u32 field `field` of the struct_ops map m's initial value (a
 * struct sched_ext_ops): its offset comes from the object's BTF, the same
 * vmlinux.h types the BPF side was compiled with.
 */
static void set_ops_u32(struct bpf_object *obj, struct bpf_map *m,
			const char *field, __u32 val)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_member *mb;
	const struct btf_type *t;
	size_t sz;
	void *data;
	int id;

	id = btf ? btf__find_by_name_kind(btf, "sched_ext_ops", BTF_KIND_STRUCT)
		 : -ENOENT;
	if (id < 0)
		die(SF_EXIT_ERROR, "no struct sched_ext_ops in the BPF object's BTF");
	t = btf__type_by_id(btf, id);
	data = bpf_map__initial_value(m, &sz);
	mb = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, mb++) {
		__u32 off = btf_member_bit_offset(t, i) / 8;

		if (strcmp(btf__name_by_offset(btf, mb->name_off), field))
			continue;
		if (!data || off + sizeof(val) > sz)
			die(SF_EXIT_ERROR, "cannot set sched_ext_ops.%s", field);
		memcpy((char *)data + off, &val, sizeof(val));
		return;
	}
	die(SF_EXIT_ERROR, "this kernel's sched_ext_ops has no %s", field);
}

struct bpf_object *open_object(const struct sf_pins *p)
{
	/* scx_satfeed.bpf.c reads these; sf_info and sf_verdict it does not */
	static const char *const reads[] = {
		SATFEED_PIN_TARGETS, SATFEED_PIN_STREAMS, NULL
	};
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "scx_satfeed");
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *m, *rodata = NULL;
	char why[256];
	size_t sz;
	void *val;
	int err;

	obj = bpf_object__open_mem(scx_obj, sizeof(scx_obj), &oo);
	if (!obj)
		die(SF_EXIT_ERROR, "cannot open the BPF object: %s",
		    strerror(errno));
	err = sf_consumer_reuse(obj, p, reads, why, sizeof(why));
	if (err)
		die(err, "%s", why);
	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t l = strlen(name);

		if (bpf_map__is_internal(m) && l >= 7 &&
		    !strcmp(name + l - 7, ".rodata"))
			rodata = m;
	}
	val = rodata ? bpf_map__initial_value(rodata, &sz) : NULL;
	if (!val || sz < sizeof(env.cfg))
		die(SF_EXIT_ERROR, "no settings (.rodata) in the BPF object");
	memcpy(val, &env.cfg, sizeof(env.cfg));

	/* --dry-run: the timer only; no struct_ops map, no callbacks */
	m = bpf_object__find_map_by_name(obj, "sf_ops");
	if (!m)
		die(SF_EXIT_ERROR, "no sf_ops in the BPF object");
	bpf_map__set_autocreate(m, !env.cfg.dry_run);
	if (env.watchdog_ms)
		set_ops_u32(obj, m, "timeout_ms", env.watchdog_ms);
	bpf_object__for_each_program(prog, obj) {
		bool dry = !strcmp(bpf_program__name(prog), "sf_dry_run");

		bpf_program__set_autoload(prog, dry == !!env.cfg.dry_run);
	}
	err = bpf_object__load(obj);
	if (err)
		die(SF_EXIT_ERROR, "cannot load the scheduler: %s (-v shows the verifier log)",
		    strerror(-err));
	return obj;
}

struct bpf_link *attach(struct bpf_object *obj)
{
	struct bpf_map *ops = bpf_object__find_map_by_name(obj, "sf_ops");
	struct bpf_link *link = bpf_map__attach_struct_ops(ops);

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

void start_dry_run(struct bpf_object *obj)
{
	struct bpf_program *prog;
	LIBBPF_OPTS(bpf_test_run_opts, ro);
	int err;

	prog = bpf_object__find_program_by_name(obj, "sf_dry_run");
	err = prog ? bpf_prog_test_run_opts(bpf_program__fd(prog), &ro) : -1;
	if (err || ro.retval)
		die(SF_EXIT_ERROR, "cannot start the decision timer: %s",
		    strerror(err ? errno : -(int)ro.retval));
}

