// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeed-loader - load the satfeed engine, attach it, pin its maps,
 * programs and links under a bpffs root, and exit; or undo exactly that.
 *
 * Every pin this tool makes has a fixed name (satfeed.h) under the root, so
 * unload removes exactly those, and a failed load removes whatever it had
 * pinned before it returns: /sys/fs/bpf is left as it was found.  Both touch
 * only a root that nobody but root can write to, never follow a symlink, and
 * report anything else they find there (sf_saferoot.h).
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_preempt.h"
#include "sf_saferoot.h"
#include "sf_progstats.h"
#include "satfeed.skel.h"

#define PROG "satfeed-loader"
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static struct env {
	bool verbose;
	bool replace;
	const char *root;
	const char *btf;
	__u32 attach;		/* SATFEED_ATTACH_NONE: auto */
	enum sf_understudy_choice understudy;
	__u32 window_shift;
	const char *command;
} env = {
	.root = SATFEED_DEFAULT_ROOT,
	.window_shift = SATFEED_WINDOW_SHIFT,
};

const char *argp_program_version = "satfeed-loader (ABI 1)";
static const char doc[] =
"Load satfeed's in-kernel saturation/slack engine and pin it in bpffs.\n"
"\n"
"COMMANDS\n"
"  load     load the engine, attach it to the syscall hooks and pin its maps,\n"
"           programs and links under ROOT, then exit: the engine keeps\n"
"           running.  Refused if ROOT already holds a load, unless --replace.\n"
"  unload   remove every pin load made under ROOT; this detaches the engine.\n"
"  check    report what the running kernel supports and which attach mode\n"
"           load would use, and for an engine pinned under ROOT the runs of\n"
"           each of its programs the kernel skipped since load (recursion\n"
"           misses: events missing from the windows).  Pins nothing.\n"
"\n"
"ATTACH MODES (cheapest first; auto picks the first that loads and attaches)\n"
"  fentry   fentry/fexit on the traced syscalls' entry points: only those\n"
"           syscalls pay.  Needs CONFIG_FUNCTION_TRACER and a kernel that\n"
"           permits fentry.\n"
"  tp_btf   BTF raw tracepoints raw_syscalls:sys_enter/sys_exit: every\n"
"           syscall of the machine runs a short filter.\n"
"\n"
"UNDERSTUDIES (--understudy)\n"
"  Where the kernel can preempt an engine program mid-run, it skips every\n"
"  other run of that program on the CPU until it resumes (the program's\n"
"  recursion_misses), and those events would be lost.  An understudy is a\n"
"  second program on the same hook that processes exactly those events;\n"
"  each rescue is counted in the pinned sf_understudy map.  It costs every\n"
"  event of the hook a short check, so auto attaches understudies only where\n"
"  the hooks can be preempted: a preempt=full, lazy or rt kernel, and in\n"
"  tp_btf mode only where the syscall tracepoints are faultable (7.x).\n"
"  `check` says which applies and why.\n"
"\n"
"EXIT STATUS\n"
"  0 ok, 1 runtime error, 2 bad argument, 3 not loaded (unload),\n"
"  4 permission denied, 8 already loaded (load without --replace).\n"
"\n"
"EXAMPLES\n"
"  satfeed-loader load\n"
"  satfeed-loader --attach tp_btf --window 4096 load\n"
"  satfeed-loader check\n"
"  satfeed-loader unload\n"
"\n"
"OPTIONS";

static const struct argp_option opts[] = {
	{ "bpffs", 'b', "DIR", 0,
	  "pin root (default " SATFEED_DEFAULT_ROOT "); its parent must be a "
	  "bpffs, and /sys/fs/bpf is mounted if it is not", 0 },
	{ "attach", 'a', "MODE", 0, "auto (default), fentry or tp_btf", 0 },
	{ "understudy", 'u', "WHEN", 0,
	  "auto (default: where the hooks can be preempted), on or off", 0 },
	{ "window", 'w', "N", 0,
	  "samples per window, a power of two from 2 to 65536 (default 2048)",
	  0 },
	{ "replace", 'r', NULL, 0,
	  "load: replace an existing load (its targets are dropped)", 0 },
	{ "btf", 'B', "FILE", 0,
	  "kernel BTF to use instead of /sys/kernel/btf/vmlinux", 0 },
	{ "verbose", 'v', NULL, 0, "print libbpf's debug output", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long n;
	char *end;

	switch (key) {
	case 'b':
		if (arg[0] != '/' || strlen(arg) > 200) {
			argp_error(state, "--bpffs needs an absolute path of at most 200 characters");
		}
		for (size_t n = strlen(arg); n > 1 && arg[n - 1] == '/';)
			arg[--n] = '\0';
		env.root = arg;
		break;
	case 'a':
		if (sf_attach_parse(arg, &env.attach))
			argp_error(state, "unknown attach mode '%s' (auto, fentry, tp_btf)",
				   arg);
		break;
	case 'u':
		if (sf_understudy_parse(arg, &env.understudy))
			argp_error(state, "--understudy must be auto, on or off, not '%s'",
				   arg);
		break;
	case 'w':
		errno = 0;
		n = strtoul(arg, &end, 0);
		if (errno || *end || n < 2 || n > 65536 || (n & (n - 1)))
			argp_error(state, "--window must be a power of two from 2 to 65536, not '%s'",
				   arg);
		env.window_shift = __builtin_ctzl(n);
		break;
	case 'r':
		env.replace = true;
		break;
	case 'B':
		env.btf = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (env.command)
			argp_error(state, "one command only (got '%s' after '%s')",
				   arg, env.command);
		if (strcmp(arg, "load") && strcmp(arg, "unload") &&
		    strcmp(arg, "check"))
			argp_error(state, "unknown command '%s' (load, unload, check)",
				   arg);
		env.command = arg;
		break;
	case ARGP_KEY_END:
		if (!env.command)
			argp_error(state, "a command is required (load, unload, check)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt,
			   va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void die_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- pins ---- */

/* links first: removing them detaches the engine before anything else goes */
static const struct sf_pin_dir engine_layout[] = {
	{ SATFEED_PIN_LINKS, sf_engine_prog_name },
	{ SATFEED_PIN_PROGS, sf_engine_prog_name },
	{ NULL, sf_engine_map_name },
};

static void pin_path(char *buf, size_t len, const char *sub, const char *name)
{
	if (sub)
		snprintf(buf, len, "%s/%s/%s", env.root, sub, name);
	else
		snprintf(buf, len, "%s/%s", env.root, name);
}

/*
 * Open ROOT if it exists and can be trusted (sf_saferoot.h).  Returns 0,
 * -ENOENT when there is none, or another -errno after saying why.
 */
static int open_root(struct sf_saferoot *r)
{
	char why[PATH_MAX + 128];
	int err;

	err = sf_saferoot_open(r, PROG, env.root, why, sizeof(why));
	if (err && err != -ENOENT)
		die_msg("%s", why);
	return err;
}

/*
 * Remove every pin a load makes under ROOT, and nothing else.  Returns 0
 * when ROOT is gone, -ENOENT when there was none, -ENOTEMPTY when it was
 * left in place for entries that are not satfeed's (each reported), another
 * -errno when ROOT cannot be trusted or a pin of satfeed's was not removed.
 */
static int unpin_all(int *removed)
{
	struct sf_saferoot r;
	int err;

	*removed = 0;
	err = open_root(&r);
	if (err)
		return err;
	err = sf_saferoot_unpin(&r, engine_layout, ARRAY_LEN(engine_layout));
	*removed = r.removed;
	sf_saferoot_close(&r);
	return err;
}

/* Make ROOT/sub, or accept the one a previous load left in the trusted root. */
static int make_pin_dir(int root_fd, const char *sub)
{
	struct stat st;

	if (!mkdirat(root_fd, sub, 0700))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (fstatat(root_fd, sub, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return 0;
	die_msg("%s/%s is not a directory satfeed made", env.root, sub);
	return -ENOTDIR;
}

static int pin_everything(struct satfeed_bpf *skel)
{
	char path[PATH_MAX];
	struct bpf_program *prog;
	struct sf_saferoot root;
	struct bpf_map *map;
	int err;

	if (mkdir(env.root, 0700) && errno != EEXIST)
		return -errno;
	/* pin only into a root nobody else can have planted anything in */
	err = open_root(&root);
	if (err)
		return err;
	err = make_pin_dir(root.fd, SATFEED_PIN_PROGS);
	if (!err)
		err = make_pin_dir(root.fd, SATFEED_PIN_LINKS);
	sf_saferoot_close(&root);
	if (err)
		return err;
	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);

		if (!sf_engine_map_name(name))	/* .rodata, .bss: internal */
			continue;
		pin_path(path, sizeof(path), NULL, name);
		err = bpf_map__pin(map, path);
		if (err)
			return err;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		struct bpf_link *link = NULL;

		if (!bpf_program__autoload(prog))
			continue;
		/* what unload would not recognise, load must not pin */
		if (!sf_engine_prog_name(name)) {
			die_msg("program %s is missing from the engine's pin names (sf_saferoot.c)",
				name);
			return -EINVAL;
		}
		pin_path(path, sizeof(path), SATFEED_PIN_PROGS, name);
		err = bpf_program__pin(prog, path);
		if (err)
			return err;
		/* skeleton links are laid out in program order */
		for (int i = 0; i < skel->skeleton->prog_cnt; i++)
			if (*skel->skeleton->progs[i].prog == prog)
				link = *skel->skeleton->progs[i].link;
		if (!link)
			continue;
		pin_path(path, sizeof(path), SATFEED_PIN_LINKS, name);
		err = bpf_link__pin(link, path);
		if (err)
			return err;
	}
	return 0;
}

/* ---- engine ---- */

/*
 * Open, configure and load the engine for one attach mode, then attach it.
 * Returns 0 with *out set, or a negative errno with a reason in why.
 */
static int engine_start(__u32 mode, bool understudies,
			struct satfeed_bpf **out, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, oopts, .kernel_log_level = 0);
	struct satfeed_bpf *skel;
	int err;

	oopts.btf_custom_path = env.btf;
	skel = satfeed_bpf__open_opts(&oopts);
	if (!skel) {
		err = -errno;
		snprintf(why, len, "cannot open the BPF object: %s",
			 strerror(-err));
		return err;
	}
	skel->rodata->window_shift = env.window_shift;
	skel->rodata->with_understudies = understudies;
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++) {
		long nr = sf_syscalls[i].nr;

		if (nr >= 0 && nr < (long)sizeof(skel->rodata->sc_index))
			skel->rodata->sc_index[nr] = i + 1;
	}
	err = sf_engine_select(skel->obj, mode, understudies, why, len);
	if (err)
		goto destroy;
	err = satfeed_bpf__load(skel);
	if (err) {
		snprintf(why, len, "the kernel refused to load the %s programs: %s%s",
			 sf_attach_name(mode), strerror(-err),
			 env.verbose ? "" : " (-v shows the verifier log)");
		goto destroy;
	}
	err = sf_engine_attach(skel->skeleton, mode, why, len);
	if (err)
		goto destroy;
	*out = skel;
	return 0;
destroy:
	satfeed_bpf__destroy(skel);
	return err;
}

static int write_info(struct satfeed_bpf *skel, __u32 mode)
{
	struct satfeed_info info = {
		.abi_version = SATFEED_ABI_VERSION,
		.attach_mode = mode,
		.window_shift = env.window_shift,
		.window_samples = 1U << env.window_shift,
		.history = SATFEED_HISTORY,
		.max_targets = SATFEED_MAX_TARGETS,
		.sample_cap_ns = SATFEED_SAMPLE_CAP_NS,
		.loader_pid = getpid(),
	};
	struct timespec ts;
	__u32 zero = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	info.load_realtime_ns = (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	info.load_mono_ns = sf_now_mono_ns();
	return bpf_map__update_elem(skel->maps.sf_info, &zero, sizeof(zero),
				    &info, sizeof(info), 0);
}

static bool have_btf(char *why, size_t len)
{
	const char *path = env.btf ? env.btf : "/sys/kernel/btf/vmlinux";
	struct btf *btf;

	if (access(path, R_OK)) {
		if (env.btf)
			snprintf(why, len, "cannot read BTF file %s: %s", path,
				 strerror(errno));
		else
			snprintf(why, len, "this kernel exposes no BTF (%s: %s); satfeed needs CONFIG_DEBUG_INFO_BTF=y, or --btf FILE",
				 path, strerror(errno));
		return false;
	}
	btf = btf__parse(path, NULL);
	if (!btf) {
		snprintf(why, len, "%s is not valid BTF: %s", path,
			 strerror(errno));
		return false;
	}
	btf__free(btf);
	return true;
}

/* The root's parent must be a bpffs; mount the standard one if missing. */
static int ensure_bpffs(char *why, size_t len)
{
	char parent[PATH_MAX], *slash;
	int fs;

	snprintf(parent, sizeof(parent), "%s", env.root);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent) {
		snprintf(why, len, "%s: the pin root must be a directory inside a bpffs",
			 env.root);
		return -EINVAL;
	}
	*slash = '\0';
	fs = sf_is_bpffs(parent);
	if (fs == 1)
		return 0;
	if (!strcmp(parent, "/sys/fs/bpf")) {
		if (!mount("bpf", parent, "bpf", 0, "mode=0700"))
			return 0;
		snprintf(why, len, "cannot mount bpffs at %s: %s", parent,
			 strerror(errno));
		return -errno;
	}
	if (fs < 0)
		snprintf(why, len, "%s: %s", parent, strerror(-fs));
	else
		snprintf(why, len, "%s is not a bpffs (mount -t bpf -o mode=0700 bpf %s)",
			 parent, parent);
	return fs < 0 ? fs : -ENOTDIR;
}

static int cmd_load(void)
{
	static const __u32 order[] = { SATFEED_ATTACH_FENTRY,
				       SATFEED_ATTACH_TP_BTF };
	struct satfeed_bpf *skel = NULL;
	char why[512] = "", first[512] = "", uwhy[512];
	bool existing, understudies = false;
	struct sf_saferoot root;
	struct sf_preempt pre;
	int err, removed;
	__u32 mode = 0;

	if (!have_btf(why, sizeof(why))) {
		die_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	if (ensure_bpffs(why, sizeof(why))) {
		die_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	err = open_root(&root);
	if (err && err != -ENOENT)
		return SF_EXIT_ERROR;
	existing = !err && sf_saferoot_holds(&root, engine_layout,
					     ARRAY_LEN(engine_layout));
	if (!err)
		sf_saferoot_close(&root);
	if (existing && !env.replace) {
		die_msg("satfeed is already loaded at %s (use --replace, or 'unload' first)",
			env.root);
		return SF_EXIT_EXISTS;
	}

	err = -ENOENT;
	sf_preempt_probe(&pre, env.btf);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (env.attach && env.attach != order[i])
			continue;
		understudies = sf_understudy_wanted(&pre, order[i],
						    env.understudy, uwhy,
						    sizeof(uwhy));
		err = engine_start(order[i], understudies, &skel, why,
				   sizeof(why));
		if (!err) {
			mode = order[i];
			break;
		}
		if (!first[0])
			snprintf(first, sizeof(first), "%s", why);
	}
	if (err) {
		die_msg("%s", env.attach ? why : first);
		if (!env.attach && strcmp(first, why))
			die_msg("%s", why);
		/* as root, EPERM is the kernel's policy, not the caller's */
		return SF_EXIT_ERROR;
	}
	err = write_info(skel, mode);
	if (err) {
		die_msg("cannot write %s: %s", SATFEED_PIN_INFO,
			strerror(-err));
		goto destroy;
	}
	/* the new engine runs; only now take the old one down */
	if (existing) {
		err = unpin_all(&removed);
		if (err && err != -ENOTEMPTY) {
			die_msg("cannot replace the load at %s", env.root);
			goto destroy;
		}
	}
	err = pin_everything(skel);
	if (err) {
		die_msg("cannot pin under %s: %s", env.root, strerror(-err));
		unpin_all(&removed);
		goto destroy;
	}
	printf("satfeed loaded: attach %s, window %u samples, understudies %s, pinned at %s\n",
	       sf_attach_name(mode), 1U << env.window_shift,
	       understudies ? "on" : "off", env.root);
destroy:
	satfeed_bpf__destroy(skel);
	return err ? SF_EXIT_ERROR : SF_EXIT_OK;
}

static int cmd_unload(void)
{
	int err, removed;

	err = unpin_all(&removed);
	if (err == -ENOENT) {
		die_msg("satfeed is not loaded (no %s)", env.root);
		return SF_EXIT_NOT_LOADED;
	}
	if (err == -ENOTEMPTY) {
		die_msg("removed %d pins; %s is left in place with the entries listed above, which satfeed did not pin",
			removed, env.root);
		return SF_EXIT_ERROR;
	}
	if (err)
		return err == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
	printf("satfeed unloaded: removed %d pins from %s\n", removed,
	       env.root);
	return SF_EXIT_OK;
}

/*
 * The runs of each pinned program the kernel skipped since load; the total
 * counts those no understudy rescued (their events may be missing).
 */
static void check_skips(void)
{
	struct sf_prog_stats st[SF_PROG_STATS_MAX];
	__u64 total;
	int n;

	n = sf_prog_stats_read(env.root, st, SF_PROG_STATS_MAX, &total);
	if (n < 0) {
		printf("skipped runs:  unknown (%s/%s: %s)\n", env.root,
		       SATFEED_PIN_PROGS, strerror(-n));
		return;
	}
	printf("skipped runs:  %llu since load (recursion misses)%s\n",
	       (unsigned long long)total,
	       total ? ": events may be missing from the windows" : "");
	for (int i = 0; i < n && i < SF_PROG_STATS_MAX; i++) {
		printf("  %-20s %llu", st[i].name,
		       (unsigned long long)st[i].recursion_misses);
		if (st[i].rescued)
			printf(" (%llu rescued)",
			       (unsigned long long)st[i].rescued);
		putchar('\n');
	}
}

static int cmd_check(void)
{
	static const __u32 order[] = { SATFEED_ATTACH_FENTRY,
				       SATFEED_ATTACH_TP_BTF };
	char why[512], uwhy[512];
	struct sf_preempt pre;
	struct utsname u;
	__u32 chosen = 0;
	bool pinned;
	int fs;

	uname(&u);
	printf("kernel:        %s %s\n", u.release, u.machine);
	printf("btf:           %s\n",
	       have_btf(why, sizeof(why)) ? "yes" : why);
	fs = sf_is_bpffs("/sys/fs/bpf");
	printf("bpffs:         %s\n", fs == 1 ? "mounted at /sys/fs/bpf" :
			       "not mounted (load mounts it)");
	pinned = !access(env.root, F_OK);
	printf("pinned at %s: %s\n", env.root, pinned ? "yes" : "no");
	if (geteuid()) {
		printf("attach modes:  unknown (probing needs root)\n");
		return SF_EXIT_PERM;
	}
	sf_preempt_probe(&pre, env.btf);
	printf("preemption:    %s (%s); syscall tracepoints %s\n",
	       pre.model[0] ? pre.model : "unknown", pre.source,
	       pre.tp_faultable > 0 ? "faultable" :
	       pre.tp_faultable ? "of unknown kind" : "not faultable");
	if (pinned)
		check_skips();
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct satfeed_bpf *skel = NULL;
		bool understudies;
		int err;

		understudies = sf_understudy_wanted(&pre, order[i],
						    env.understudy, uwhy,
						    sizeof(uwhy));
		err = engine_start(order[i], understudies, &skel, why,
				   sizeof(why));
		printf("%-14s %s\n", sf_attach_name(order[i]),
		       err ? why : "available");
		printf("  understudies %s\n", uwhy);
		if (!err) {
			satfeed_bpf__destroy(skel);
			if (!chosen && (!env.attach || env.attach == order[i]))
				chosen = order[i];
		}
	}
	printf("load would use: %s\n",
	       chosen ? sf_attach_name(chosen) : "nothing (no mode works)");
	return chosen ? SF_EXIT_OK : SF_EXIT_ERROR;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "COMMAND",
		.doc = doc,
	};
	int err;

	argp_err_exit_status = SF_EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return SF_EXIT_USAGE;
	libbpf_set_print(libbpf_print_fn);

	if (strcmp(env.command, "check") && geteuid() != 0) {
		die_msg("%s needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)",
			env.command);
		return SF_EXIT_PERM;
	}
	if (!strcmp(env.command, "load"))
		return cmd_load();
	if (!strcmp(env.command, "unload"))
		return cmd_unload();
	return cmd_check();
}
