// SPDX-License-Identifier: GPL-2.0
/*
 * scx_satfeed - load and run the sched_ext scheduler of scx_satfeed.bpf.c
 * for targets that satfeed watches.
 *
 *   scx_satfeed [OPTIONS] -p PID | -c CGROUP | -s SLOT ...
 *
 * The BPF object (compiled into this binary) reads satfeed's pinned maps in
 * place: sf_info, sf_targets and sf_streams are swapped in before load
 * (bpf_map__reuse_fd), and every decision is taken by the object's own
 * bpf_timer.  This program checks the input, loads, attaches, prints stats
 * and detaches on SIGINT/SIGTERM or after --duration.  Everything is checked
 * before the scheduler is attached, so a refusal leaves nothing behind; the
 * scheduler lives exactly as long as this process (its link is not pinned).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "sfc_policy.h"
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "scx_satfeed.h"

#define SCX_SYSFS	"/sys/kernel/sched_ext"
#define MS		1000000ULL

static const unsigned char scx_obj[] = {
#include "scx_satfeed.bpf.inc"
};

static struct {
	const char *root;
	struct scx_sf_config cfg;
	const char *targets[SCX_SF_MAX_TARGETS]; /* as given, for messages */
	char kinds[SCX_SF_MAX_TARGETS];		 /* 'p', 'c' or 's' */
	int nr_max_reserved;	/* -1: nr_cpus - min_shared */
	bool stats;
	bool json;
	bool verbose;
	unsigned int watchdog_ms;	/* sched_ext_ops.timeout_ms, 0: kernel's */
	unsigned int interval_ms;
	double duration;	/* seconds, 0: until a signal */
} env = {
	.root = SATFEED_DEFAULT_ROOT,
	.cfg = {
		.min_shared = 1,
		.perf_base = SCX_SF_PERF_ONE / 2,
		.period_ns = 10 * MS,
		.release_ns = 2000 * MS,
		.grace_ns = 100 * MS,
		.slice_ns = 5 * MS,
		.policy = {
			.hysteresis = 5,
			.max_step = 25,
			.min_interval_ns = 50 * MS,
			.stale_ns = 1000 * MS,
		},
	},
	.nr_max_reserved = -1,
	.interval_ms = 1000,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "scx_satfeed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: scx_satfeed [OPTIONS] TARGET...\n"
"\n"
"A sched_ext scheduler driven by satfeed's windows: the targets' threads get\n"
"a reserved set of CPUs whose size and performance target follow their\n"
"demand (kmod-example's policy: slack falls, variance rises -> demand up);\n"
"every other task runs on the remaining CPUs.  Needs a kernel with\n"
"CONFIG_SCHED_CLASS_EXT, satfeed loaded, and each target watched.\n"
"\n"
"Targets (up to %d; each must be watched by satfeed):\n"
"  -p, --pid PID          a watched process\n"
"  -c, --cgroup PATH      a watched cgroup v2 directory\n"
"  -s, --slot N           satfeed's target slot N\n"
"\n"
"  --bpffs DIR            satfeed's pin root (default " SATFEED_DEFAULT_ROOT ")\n"
"  --period-ms N          decision period of the BPF timer (default 10)\n"
"  --min-shared N         CPUs never reserved (default 1)\n"
"  --max-reserved N       most CPUs reserved (default: all but --min-shared)\n"
"  --perf-base N          perf target of unreserved CPUs, 0..1024 (default 512)\n"
"  --release-ms N         no window for N ms: release (default 2000)\n"
"  --slice-us N           time slice (default 5000)\n"
"  --hysteresis N --max-step N --rate-limit-ms N --stale-ms N\n"
"                         the policy's settings (defaults 5, 25, 50, 1000)\n"
"  --watchdog-ms N        the kernel stops the scheduler when a task waits\n"
"                         N ms to run (sched_ext_ops.timeout_ms; default 0:\n"
"                         the kernel's, 30 s)\n"
"  --dry-run              decide and report, attach no scheduler\n"
"  --stats                print a line per interval (decision state, runs)\n"
"  --json                 --stats as JSON lines, with per-CPU counters\n"
"  --interval-ms N        --stats interval (default 1000)\n"
"  --duration SECONDS     run that long, then detach (default: until a signal)\n"
"  -v, --verbose          libbpf's messages (verifier logs)\n"
"\n"
"Testing only (never for production):\n"
"  --test-stall           never run the targets' threads once they queue, so\n"
"                         the kernel's watchdog stops the scheduler after\n"
"                         --watchdog-ms: exercises the error exit (exit 1\n"
"                         with the kernel's reason); needs --watchdog-ms\n"
"\n"
"Exit: 0 clean detach; 1 scheduler error (the kernel's reason is printed) or\n"
"runtime failure; 2 usage; 3 satfeed not loaded; 5 satfeed's ABI differs;\n"
"6 a target is not watched; 9 no sched_ext or another scheduler running.\n",
		SCX_SF_MAX_TARGETS);
}

#define EXIT_NO_SCX	9

/* ---- input ---- */

static unsigned long parse_num(const char *opt, const char *s,
			       unsigned long lo, unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die(SF_EXIT_USAGE, "%s: '%s' is not a number in %lu..%lu", opt,
		    s, lo, hi);
	return v;
}

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
static void check_sched_ext(void)
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

static void resolve_target(const struct sf_pins *p, int i)
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

static void check_cpus(void)
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

/* ---- load and attach ---- */

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

static struct bpf_object *open_object(const struct sf_pins *p)
{
	const struct {
		const char *name;
		int fd;
	} maps[] = {
		{ SATFEED_PIN_INFO, p->info_fd },
		{ SATFEED_PIN_TARGETS, p->targets_fd },
		{ SATFEED_PIN_STREAMS, p->streams_fd },
	};
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "scx_satfeed");
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *m, *rodata = NULL;
	size_t sz;
	void *val;
	int err;

	obj = bpf_object__open_mem(scx_obj, sizeof(scx_obj), &oo);
	if (!obj)
		die(SF_EXIT_ERROR, "cannot open the BPF object: %s",
		    strerror(errno));
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		m = bpf_object__find_map_by_name(obj, maps[i].name);
		if (!m)
			die(SF_EXIT_ERROR, "no map %s in the BPF object",
			    maps[i].name);
		err = bpf_map__reuse_fd(m, maps[i].fd);
		if (err)
			die(SF_EXIT_ERROR, "cannot reuse %s: %s", maps[i].name,
			    strerror(-err));
	}
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

static struct bpf_link *attach(struct bpf_object *obj)
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

static void start_dry_run(struct bpf_object *obj)
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

/* ---- stats ---- */

struct snapshot {
	struct scx_sf_state st;
	struct scx_sf_cpu cpu[SCX_SF_MAX_CPUS];
	struct scx_sf_exit exit;
};

static int take(struct bpf_object *obj, struct snapshot *s)
{
	int st = bpf_map__fd(bpf_object__find_map_by_name(obj, "scx_sf_state"));
	int cpus = bpf_map__fd(bpf_object__find_map_by_name(obj, "scx_sf_cpus"));
	int ex = bpf_map__fd(bpf_object__find_map_by_name(obj, "scx_sf_exit"));
	__u32 zero = 0;

	memset(s, 0, sizeof(*s));
	if (bpf_map_lookup_elem(st, &zero, &s->st) ||
	    bpf_map_lookup_elem(ex, &zero, &s->exit))
		return -errno;
	for (__u32 i = 0; i < env.cfg.nr_cpus; i++)
		if (bpf_map_lookup_elem(cpus, &i, &s->cpu[i]))
			return -errno;
	return 0;
}

/* Does the engine that the scheduler reads still own the pins? */
static const char *engine_state(__u32 streams_id)
{
	char path[PATH_MAX];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", env.root, SATFEED_PIN_STREAMS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return "gone";
	if (bpf_map_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id == streams_id ? "ok" : "reloaded";
}

static void print_stats(const struct snapshot *s, const char *engine)
{
	const struct scx_sf_state *st = &s->st;
	__u64 tr = 0, tres = 0, or = 0, ores = 0, bound = 0, mov = 0, mis = 0;
	__u32 n = env.cfg.nr_cpus;

	for (__u32 i = 0; i < n; i++) {
		const struct scx_sf_cpu *c = &s->cpu[i];

		tr += c->target_runs;
		or += c->other_runs;
		bound += c->bound_runs;
		mov += c->moved;
		mis += c->misplaced;
		if (c->reserved) {
			tres += c->target_runs;
			ores += c->other_runs;
		}
	}
	if (!env.json) {
		static int lines;

		if (lines++ % 20 == 0)
			printf("%8s %5s %8s %8s %9s %8s %10s %10s %8s %8s %6s\n",
			       "periods", "level", "reserved", "perf_res",
			       "perf_base", "windows", "tgt_runs", "oth_runs",
			       "moved", "misplcd", "engine");
		printf("%8llu %5u %8u %8u %9u %8llu %10llu %10llu %8llu %8llu %6s\n",
		       (unsigned long long)st->periods, st->level, st->reserved,
		       st->perf_reserved, st->perf_base,
		       (unsigned long long)st->windows,
		       (unsigned long long)tr, (unsigned long long)or,
		       (unsigned long long)mov, (unsigned long long)mis,
		       engine);
		fflush(stdout);
		return;
	}
	printf("{\"periods\":%llu,\"now_ns\":%llu,\"level\":%u,\"reserved\":%u,"
	       "\"perf_reserved\":%u,\"perf_base\":%u,\"changes\":%llu,"
	       "\"last_change_ns\":%llu,"
	       "\"releases\":%llu,\"windows\":%llu,\"dry_run\":%s,"
	       "\"engine\":\"%s\",\"target_runs\":%llu,"
	       "\"target_runs_reserved\":%llu,\"other_runs\":%llu,"
	       "\"other_runs_reserved\":%llu,\"bound_runs\":%llu,"
	       "\"moved\":%llu,\"misplaced\":%llu,\"targets\":[",
	       (unsigned long long)st->periods, (unsigned long long)st->now_ns,
	       st->level, st->reserved, st->perf_reserved, st->perf_base,
	       (unsigned long long)st->changes,
	       (unsigned long long)st->last_change_ns,
	       (unsigned long long)st->releases,
	       (unsigned long long)st->windows,
	       env.cfg.dry_run ? "true" : "false", engine,
	       (unsigned long long)tr, (unsigned long long)tres,
	       (unsigned long long)or, (unsigned long long)ores,
	       (unsigned long long)bound, (unsigned long long)mov,
	       (unsigned long long)mis);
	for (__u32 i = 0; i < env.cfg.nr_targets; i++) {
		const struct scx_sf_target_state *t = &st->t[i];

		printf("%s{\"slot\":%u,\"live\":%s,\"released\":%s,\"level\":%u,"
		       "\"demand\":%u,\"windows\":%llu}",
		       i ? "," : "", env.cfg.targets[i].slot,
		       t->live ? "true" : "false",
		       t->released ? "true" : "false", t->pol.level,
		       t->pol.demand, (unsigned long long)t->windows);
	}
	printf("],\"cpus\":[");
	for (__u32 i = 0; i < n; i++) {
		const struct scx_sf_cpu *c = &s->cpu[i];

		printf("%s{\"cpu\":%u,\"reserved\":%u,\"perf\":%u,"
		       "\"target_runs\":%llu,\"other_runs\":%llu,"
		       "\"bound_runs\":%llu,\"moved\":%llu,\"misplaced\":%llu}",
		       i ? "," : "", i, c->reserved, c->perf,
		       (unsigned long long)c->target_runs,
		       (unsigned long long)c->other_runs,
		       (unsigned long long)c->bound_runs,
		       (unsigned long long)c->moved,
		       (unsigned long long)c->misplaced);
	}
	printf("]}\n");
	fflush(stdout);
}

static const char *exit_kind_name(__s64 kind)
{
	switch (kind) {
	case 1: return "done";
	case 64: return "unregistered";
	case 65: return "unregistered by the BPF scheduler";
	case 66: return "unregistered by the kernel";
	case 67: return "sysrq";
	case 1024: return "error";
	case 1025: return "BPF scheduler error";
	case 1026: return "stall (watchdog)";
	default: return kind >= 1024 ? "error" : "exit";
	}
}

/* Print the kernel's exit info; 1 if it was an error, else 0. */
static int report_exit(const struct scx_sf_exit *e)
{
	bool err = e->kind >= 1024;	/* SCX_EXIT_ERROR */

	fprintf(err ? stderr : stdout,
		"scx_satfeed: scheduler exited: %s (kind %lld, code %lld): %s%s%s\n",
		exit_kind_name(e->kind), (long long)e->kind,
		(long long)e->exit_code, e->reason, e->msg[0] ? ": " : "",
		e->msg);
	return err;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * MS };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	enum { O_BPFFS = 256, O_PERIOD, O_MIN_SHARED, O_MAX_RES, O_PERF_BASE,
	       O_RELEASE, O_SLICE, O_HYST, O_STEP, O_RATE, O_STALE, O_DRY,
	       O_STATS, O_JSON, O_INTERVAL, O_DURATION, O_WATCHDOG,
	       O_TEST_STALL };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "slot", required_argument, NULL, 's' },
		{ "bpffs", required_argument, NULL, O_BPFFS },
		{ "period-ms", required_argument, NULL, O_PERIOD },
		{ "min-shared", required_argument, NULL, O_MIN_SHARED },
		{ "max-reserved", required_argument, NULL, O_MAX_RES },
		{ "perf-base", required_argument, NULL, O_PERF_BASE },
		{ "release-ms", required_argument, NULL, O_RELEASE },
		{ "slice-us", required_argument, NULL, O_SLICE },
		{ "hysteresis", required_argument, NULL, O_HYST },
		{ "max-step", required_argument, NULL, O_STEP },
		{ "rate-limit-ms", required_argument, NULL, O_RATE },
		{ "stale-ms", required_argument, NULL, O_STALE },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "watchdog-ms", required_argument, NULL, O_WATCHDOG },
		{ "test-stall", no_argument, NULL, O_TEST_STALL },
		{ "stats", no_argument, NULL, O_STATS },
		{ "json", no_argument, NULL, O_JSON },
		{ "interval-ms", required_argument, NULL, O_INTERVAL },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct scx_sf_config *c = &env.cfg;
	struct bpf_map_info mi = {};
	__u32 mlen = sizeof(mi);
	struct bpf_link *link = NULL;
	struct bpf_object *obj;
	struct snapshot snap;
	struct sf_pins pins;
	double elapsed = 0;
	char why[512], *end;
	int ch, err, rc = 0;

	while ((ch = getopt_long(argc, argv, "p:c:s:vh", opts, NULL)) != -1) {
		switch (ch) {
		case 'p': case 'c': case 's':
			if (c->nr_targets == SCX_SF_MAX_TARGETS)
				die(SF_EXIT_USAGE, "at most %d targets",
				    SCX_SF_MAX_TARGETS);
			env.kinds[c->nr_targets] = ch;
			env.targets[c->nr_targets++] = optarg;
			break;
		case O_BPFFS:
			if (optarg[0] != '/')
				die(SF_EXIT_USAGE, "--bpffs needs an absolute path");
			env.root = optarg;
			break;
		case O_PERIOD:
			c->period_ns = parse_num("--period-ms", optarg, 1, 10000) * MS;
			break;
		case O_MIN_SHARED:
			c->min_shared = parse_num("--min-shared", optarg, 1,
						  SCX_SF_MAX_CPUS);
			break;
		case O_MAX_RES:
			env.nr_max_reserved = parse_num("--max-reserved", optarg,
							0, SCX_SF_MAX_CPUS);
			break;
		case O_PERF_BASE:
			c->perf_base = parse_num("--perf-base", optarg, 0,
						 SCX_SF_PERF_ONE);
			break;
		case O_RELEASE:
			c->release_ns = parse_num("--release-ms", optarg, 1,
						  600000) * MS;
			break;
		case O_SLICE:
			c->slice_ns = parse_num("--slice-us", optarg, 100,
						1000000) * 1000;
			break;
		case O_HYST:
			c->policy.hysteresis = parse_num("--hysteresis", optarg,
							 0, 50);
			break;
		case O_STEP:
			c->policy.max_step = parse_num("--max-step", optarg,
						       1, 100);
			break;
		case O_RATE:
			c->policy.min_interval_ns =
				parse_num("--rate-limit-ms", optarg, 0, 60000) * MS;
			break;
		case O_STALE:
			c->policy.stale_ns =
				parse_num("--stale-ms", optarg, 1, 600000) * MS;
			break;
		case O_DRY:
			c->dry_run = 1;
			break;
		case O_WATCHDOG:
			/* the kernel refuses more than 30 s (SCX_WATCHDOG_MAX_TIMEOUT) */
			env.watchdog_ms = parse_num("--watchdog-ms", optarg, 100,
						    30000);
			break;
		case O_TEST_STALL:
			c->test_stall = 1;
			break;
		case O_STATS:
			env.stats = true;
			break;
		case O_JSON:
			env.stats = env.json = true;
			break;
		case O_INTERVAL:
			env.interval_ms = parse_num("--interval-ms", optarg, 10,
						    3600000);
			break;
		case O_DURATION:
			env.duration = strtod(optarg, &end);
			if (*end || end == optarg || env.duration <= 0)
				die(SF_EXIT_USAGE, "--duration: '%s' is not a positive number of seconds",
				    optarg);
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return SF_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return SF_EXIT_USAGE;
	}
	if (!c->nr_targets)
		die(SF_EXIT_USAGE, "no target: give -p PID, -c CGROUP or -s SLOT (see --help)");
	/* a stall the kernel's default watchdog (30 s) takes long to see */
	if (c->test_stall && (!env.watchdog_ms || c->dry_run))
		die(SF_EXIT_USAGE, "--test-stall needs --watchdog-ms and no --dry-run");
	/* the grace for moves after a change: a few slices and a period */
	c->grace_ns = 4 * c->slice_ns + c->period_ns;
	if (c->grace_ns < 100 * MS)
		c->grace_ns = 100 * MS;
	libbpf_set_print(libbpf_print);

	check_cpus();
	if (!c->dry_run)
		check_sched_ext();
	err = sf_pins_open(&pins, env.root, why, sizeof(why));
	if (err)
		die(err, "%s", why);
	for (__u32 i = 0; i < c->nr_targets; i++)
		resolve_target(&pins, i);
	if (bpf_map_get_info_by_fd(pins.streams_fd, &mi, &mlen))
		die(SF_EXIT_ERROR, "cannot read sf_streams: %s", strerror(errno));

	obj = open_object(&pins);
	if (c->dry_run)
		start_dry_run(obj);
	else
		link = attach(obj);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("scx_satfeed: %s on %u CPUs: %u targets, up to %u reserved (%u shared), period %llu ms, perf base %u\n",
	       c->dry_run ? "dry run (nothing enforced)" : "attached",
	       c->nr_cpus, c->nr_targets, c->max_reserved, c->min_shared,
	       (unsigned long long)(c->period_ns / MS), c->perf_base);
	fflush(stdout);
	while (!stop) {
		unsigned int step = env.interval_ms;

		if (env.duration) {
			double left = env.duration - elapsed;

			if (left <= 0)
				break;
			if (left * 1000 < step)
				step = left * 1000 + 1;
		}
		sleep_ms(step);
		elapsed += step / 1000.0;
		err = take(obj, &snap);
		if (err) {
			fprintf(stderr, "scx_satfeed: cannot read the stats: %s\n",
				strerror(-err));
			rc = SF_EXIT_ERROR;
			break;
		}
		if (snap.exit.kind) {
			rc = report_exit(&snap.exit);
			break;
		}
		if (env.stats)
			print_stats(&snap, engine_state(mi.id));
	}
	bpf_link__destroy(link);
	if (!rc && !take(obj, &snap) && snap.exit.kind)
		rc = report_exit(&snap.exit);
	bpf_object__close(obj);
	sf_pins_close(&pins);
	return rc;
}
