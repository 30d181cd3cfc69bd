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
 *
 * Both hold the root lock for their whole run and go through the swap
 * directory (sf_root.h): a load pins into it and renames it over the root as
 * its last step, carrying a replaced engine's targets over first; an unload
 * renames the root away first.  So the root is always either absent or a
 * whole, attached engine, whenever either is killed, and two loads never
 * meet: the second finds the first's engine and says so.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_pins.h"
#include "sf_preempt.h"
#include "sf_progstats.h"
#include "sf_root.h"
#include "sf_saferoot.h"
#include "sf_target.h"
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

static void print_version(FILE *f, struct argp_state *state)
{
	sf_print_version();
}

void (*argp_program_version_hook)(FILE *, struct argp_state *) =
	print_version;
static const char doc[] =
"Load satfeed's in-kernel saturation/slack engine and pin it in bpffs.\n"
"\n"
"COMMANDS\n"
"  load     load the engine, attach it to the syscall hooks and pin its maps,\n"
"           programs and links under ROOT, then exit: the engine keeps\n"
"           running.  Refused if ROOT already holds a load, unless --replace.\n"
"           Everything is pinned into ROOTNAME~swap next to ROOT and renamed\n"
"           into place in one step, so ROOT is never half loaded.  --replace\n"
"           loads the new engine, re-adds each active target of the old one\n"
"           with its syscalls, and only then swaps it in (RENAME_EXCHANGE):\n"
"           a replace that fails leaves the old engine running.\n"
"  unload   remove every pin load made under ROOT; this detaches the engine.\n"
"  check    report what the running kernel supports and which attach mode\n"
"           load would use, and for an engine pinned under ROOT the runs of\n"
"           each of its programs the kernel skipped since load (recursion\n"
"           misses: events missing from the windows).  Pins nothing.\n"
"\n"
"LOCKING AND CRASHES\n"
"  load and unload hold an flock of ROOT's parent directory, which\n"
"  satfeedctl takes too: one change at a time, and a load that waited finds\n"
"  the winner's engine (exit 8).  What a killed load or unload leaves in\n"
"  ROOTNAME~swap is never live; the next load, unload, satfeedctl add or\n"
"  remove, or 'satfeedctl check --repair' removes it.\n"
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
	  "load: replace an existing load, carrying its active targets over "
	  "(their windows start afresh)", 0 },
	{ "btf", 'B', "FILE", 0,
	  "kernel BTF to use instead of /sys/kernel/btf/vmlinux", 0 },
	{ "verbose", 'v', NULL, 0, "print libbpf's debug output", 0 },
	{},
};

/* a bad argument was reported (one line): main() adds nothing */
static bool said_usage;

static error_t bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static error_t bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sf_vmsg(fmt, ap);
	va_end(ap);
	said_usage = true;
	return EINVAL;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long n;
	char *end;

	switch (key) {
	case 'b':
		if (arg[0] != '/' || strlen(arg) > 200) {
			return bad("--bpffs needs an absolute path of at most 200 characters");
		}
		for (size_t n = strlen(arg); n > 1 && arg[n - 1] == '/';)
			arg[--n] = '\0';
		env.root = arg;
		break;
	case 'a':
		if (sf_attach_parse(arg, &env.attach))
			return bad("unknown attach mode '%s' (auto, fentry, tp_btf)",
				   arg);
		break;
	case 'u':
		if (sf_understudy_parse(arg, &env.understudy))
			return bad("--understudy must be auto, on or off, not '%s'",
				   arg);
		break;
	case 'w':
		errno = 0;
		n = strtoul(arg, &end, 0);
		if (errno || *end || n < 2 || n > 65536 || (n & (n - 1)))
			return bad("--window must be a power of two from 2 to 65536, not '%s'",
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
			return bad("one command only (got '%s' after '%s')",
				   arg, env.command);
		if (strcmp(arg, "load") && strcmp(arg, "unload") &&
		    strcmp(arg, "check"))
			return bad("unknown command '%s' (load, unload, check)",
				   arg);
		env.command = arg;
		break;
	case ARGP_KEY_END:
		if (!env.command)
			return bad("a command is required (load, unload, check)");
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

#define die_msg sf_msg

/* ---- pins ---- */

/* where a load pins, before it is renamed into place (sf_root.h) */
static char swap_path[PATH_MAX];

static void pin_path(char *buf, size_t len, const char *sub, const char *name)
{
	if (sub)
		snprintf(buf, len, "%s/%s/%s", swap_path, sub, name);
	else
		snprintf(buf, len, "%s/%s", swap_path, name);
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
 * Remove what is in the swap directory: this load's pins after a failure, a
 * replaced or unloaded engine, or what a killed run left.  Returns 0 when
 * nothing is left there, -ENOTEMPTY when foreign entries went back to ROOT
 * (reported), another -errno after saying why.
 */
static int retire_swap(int *removed)
{
	char why[PATH_MAX + 256] = "";
	int err;

	err = sf_root_retire_swap(env.root, PROG, removed, why, sizeof(why));
	if (err && err != -ENOTEMPTY && why[0])
		die_msg("%s", why);
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

/*
 * Can a load be swapped in for what ROOT holds?  Its progs/ and links/ must
 * be directories, where whatever else is there can be carried over.
 */
static int check_pin_dirs(int root_fd)
{
	static const char *const subs[] = { SATFEED_PIN_PROGS,
					    SATFEED_PIN_LINKS };
	struct stat st;

	for (size_t i = 0; i < ARRAY_LEN(subs); i++) {
		if (fstatat(root_fd, subs[i], &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			die_msg("%s/%s is not a directory satfeed made",
				env.root, subs[i]);
			return -ENOTDIR;
		}
	}
	return 0;
}

/* Pin the engine's maps, programs and links into a new swap directory. */
static int pin_everything(struct satfeed_bpf *skel)
{
	char path[PATH_MAX];
	struct bpf_program *prog;
	struct sf_saferoot swap;
	char why[PATH_MAX + 128];
	struct bpf_map *map;
	int err;

	if (mkdir(swap_path, 0700))
		return -errno;
	err = sf_saferoot_open(&swap, PROG, swap_path, why, sizeof(why));
	if (err) {
		die_msg("%s", why);
		return err;
	}
	err = make_pin_dir(swap.fd, SATFEED_PIN_PROGS);
	if (!err)
		err = make_pin_dir(swap.fd, SATFEED_PIN_LINKS);
	sf_saferoot_close(&swap);
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

/*
 * The last step of a load: the swap directory becomes ROOT in one rename.
 * When ROOT exists they trade places, and the old one is then retired.
 */
static int swap_in(bool root_exists)
{
	if (!renameat2(AT_FDCWD, swap_path, AT_FDCWD, env.root,
		       root_exists ? RENAME_EXCHANGE : RENAME_NOREPLACE))
		return 0;
	die_msg("cannot rename %s to %s: %s", swap_path, env.root,
		strerror(errno));
	return -errno;
}

/*
 * How many targets the engine at ROOT watches, read without its contract:
 * kind and state lead struct satfeed_target in every ABI so far, so this
 * counts an engine of another ABI, whose targets cannot be carried over.
 * -errno when they cannot be counted.
 */
static int count_old_targets(void)
{
	struct bpf_map_info mi = {};
	__u32 ml = sizeof(mi), v[64];
	char path[PATH_MAX];
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/%s", env.root, SATFEED_PIN_TARGETS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_get_info_by_fd(fd, &mi, &ml) ||
	    mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != sizeof(__u32) ||
	    mi.value_size > sizeof(v) || mi.value_size < 2 * sizeof(__u32)) {
		close(fd);
		return -EPROTO;
	}
	for (__u32 slot = 0; slot < mi.max_entries; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, v) &&
		    v[0] != SATFEED_TARGET_FREE && v[1] == SATFEED_STATE_ACTIVE)
			n++;
	close(fd);
	return n;
}

/*
 * Re-add each active target of the engine at ROOT to the new one, with its
 * syscalls.  *carried and *dropped count them; each one dropped is said.
 */
static void carry_targets(struct satfeed_bpf *skel, int *carried,
			  int *dropped)
{
	struct sf_pins old, new;
	char why[512];
	int err;

	*carried = *dropped = 0;
	err = sf_pins_open(&old, env.root, why, sizeof(why));
	if (err) {
		int n = count_old_targets();

		if (n > 0)
			*dropped = n;
		if (n >= 0)
			die_msg("the targets of the engine being replaced cannot be read (%s): %d target%s dropped; add %s again with satfeedctl add",
				why, n, n == 1 ? "" : "s",
				n == 1 ? "it" : "them");
		else
			die_msg("the targets of the engine being replaced cannot be read (%s): none are carried over; add them again with satfeedctl add",
				why);
		return;
	}
	err = sf_pins_from_object(&new, skel->obj, why, sizeof(why));
	if (err) {
		die_msg("%s: no targets are carried over", why);
		goto close_old;
	}
	for (__u32 slot = 0; slot < old.info.max_targets; slot++) {
		struct sf_selector sel = {};
		struct satfeed_target t;

		if (sf_target_read(&old, slot, &t) ||
		    t.kind == SATFEED_TARGET_FREE)
			continue;
		if (sf_target_gone(&t)) {
			(*dropped)++;	/* its process exited */
			continue;
		}
		/* a discovery belongs to the satfeedctl that runs it, which
		 * removes it from the engine it added it to */
		if (t.sc_mask & SATFEED_SC_DISCOVER)
			continue;
		sel.kind = t.kind;
		sel.id = t.id;
		sel.level = t.level;
		memcpy(sel.path, t.path, sizeof(sel.path));
		err = sf_target_add_rules(&new, &sel, t.sc_mask, &t.rules,
					  NULL, why, sizeof(why));
		if (err) {
			die_msg("dropped target %s %llu: %s",
				t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
				(unsigned long long)t.id, why);
			(*dropped)++;
			continue;
		}
		(*carried)++;
	}
	sf_pins_close(&new);
close_old:
	sf_pins_close(&old);
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
	struct sf_uring_support uring;
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
#ifdef SYS_io_uring_enter
	/* the io_uring wait, through the tp_btf mode's dispatch */
	skel->rodata->sc_index[SYS_io_uring_enter] =
		SATFEED_SC_INDEX_URING_ENTER;
#endif
	err = sf_uring_probe(&uring, why, len);
	if (err)
		goto destroy;
	skel->rodata->uring_ms_flag = uring.ms_flag;
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
	/*
	 * Never advise mounting a bpffs over an arbitrary directory (/tmp):
	 * the root belongs in the bpffs that is there for it.
	 */
	if (fs == -ENOENT)
		snprintf(why, len, "%s does not exist: the pin root must be a directory in a bpffs, such as /sys/fs/bpf/satfeed (--bpffs /sys/fs/bpf/NAME)",
			 parent);
	else if (fs < 0)
		snprintf(why, len, "%s: %s", parent, strerror(-fs));
	else
		snprintf(why, len, "%s is not a bpffs: the pin root must be a directory in a bpffs, such as /sys/fs/bpf/satfeed (--bpffs /sys/fs/bpf/NAME)",
			 parent);
	return fs < 0 ? fs : -ENOTDIR;
}

static int cmd_load(void)
{
	static const __u32 order[] = { SATFEED_ATTACH_FENTRY,
				       SATFEED_ATTACH_TP_BTF };
	struct satfeed_bpf *skel = NULL;
	char why[512] = "", first[512] = "", uwhy[512];
	int err, lockfd, removed, carried = 0, dropped = 0;
	bool existing, root_exists, understudies = false;
	struct sf_saferoot root;
	struct sf_preempt pre;
	__u32 mode = 0;

	if (!have_btf(why, sizeof(why))) {
		die_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	if (ensure_bpffs(why, sizeof(why))) {
		die_msg("%s", why);
		return SF_EXIT_ERROR;
	}
	if (sf_root_swap_path(env.root, swap_path, sizeof(swap_path))) {
		die_msg("%s: path too long", env.root);
		return SF_EXIT_USAGE;
	}
	lockfd = sf_root_lock(env.root, LOCK_EX);
	if (lockfd < 0) {
		die_msg("cannot lock %s: %s", env.root, strerror(-lockfd));
		return SF_EXIT_ERROR;
	}
	/* what a killed load or unload left: never live, retired first */
	retire_swap(&removed);
	err = SF_EXIT_ERROR;
	if (!access(swap_path, F_OK)) {
		die_msg("%s is left from an earlier load and cannot be removed",
			swap_path);
		goto unlock;
	}
	if (open_root(&root) == -ENOENT) {
		root_exists = existing = false;
	} else if (root.fd >= 0) {
		root_exists = true;
		existing = sf_saferoot_holds(&root, sf_engine_layout,
					     SF_ENGINE_LAYOUT_LEN);
		err = check_pin_dirs(root.fd) ? SF_EXIT_ERROR : SF_EXIT_OK;
		sf_saferoot_close(&root);
		if (err)
			goto unlock;
	} else {
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (existing && !env.replace) {
		die_msg("satfeed is already loaded at %s (use --replace, or 'unload' first)",
			env.root);
		err = SF_EXIT_EXISTS;
		goto unlock;
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
	if (err && env.attach == SATFEED_ATTACH_FENTRY) {
		/* the kernel's policy (EPERM) or no fentry support */
		die_msg("%s; --attach tp_btf (or auto, the default) works where fentry is refused ('satfeed-loader check' says which modes this kernel allows)",
			why);
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (err) {
		die_msg("%s", env.attach ? why : first);
		if (!env.attach && strcmp(first, why))
			die_msg("%s", why);
		/* as root, EPERM is the kernel's policy, not the caller's */
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	err = write_info(skel, mode);
	if (err) {
		die_msg("cannot write %s: %s", SATFEED_PIN_INFO,
			strerror(-err));
		goto destroy;
	}
	/* the new engine runs; the old one keeps running until the swap */
	if (existing)
		carry_targets(skel, &carried, &dropped);
	err = pin_everything(skel);
	if (!err)
		err = swap_in(root_exists);
	if (err) {
		die_msg("cannot pin under %s: %s", env.root, strerror(-err));
		retire_swap(&removed);
		goto destroy;
	}
	printf("satfeed loaded: attach %s, window %u samples, understudies %s, pinned at %s\n",
	       sf_attach_name(mode), 1U << env.window_shift,
	       understudies ? "on" : "off", env.root);
	if (existing)
		printf("replaced the engine that was there: carried %d target%s over, dropped %d\n",
		       carried, carried == 1 ? "" : "s", dropped);
	/* the swap directory now holds what ROOT held: the old engine */
	if (root_exists && retire_swap(&removed))
		die_msg("what %s held is left in %s; the next satfeed command retires it",
			env.root, swap_path);
destroy:
	satfeed_bpf__destroy(skel);
unlock:
	close(lockfd);
	return err ? (err > 0 ? err : SF_EXIT_ERROR) : SF_EXIT_OK;
}

static int cmd_unload(void)
{
	int err, lockfd, removed = 0;
	struct sf_saferoot root;

	if (sf_root_swap_path(env.root, swap_path, sizeof(swap_path))) {
		die_msg("%s: path too long", env.root);
		return SF_EXIT_USAGE;
	}
	lockfd = sf_root_lock(env.root, LOCK_EX);
	if (lockfd == -ENOENT) {
		die_msg("satfeed is not loaded (no %s)", env.root);
		return SF_EXIT_NOT_LOADED;
	}
	if (lockfd < 0) {
		die_msg("cannot lock %s: %s", env.root, strerror(-lockfd));
		return lockfd == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
	}
	/* what a killed load or unload left: never live, retired first */
	retire_swap(&removed);
	removed = 0;
	err = open_root(&root);
	if (err == -ENOENT) {
		die_msg("satfeed is not loaded (no %s)", env.root);
		err = SF_EXIT_NOT_LOADED;
		goto unlock;
	}
	if (err) {
		err = err == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto unlock;
	}
	/* gone from ROOT in one step: nobody sees it half unpinned */
	err = renameat2(root.parent_fd, root.base, AT_FDCWD, swap_path,
			RENAME_NOREPLACE) ? -errno : 0;
	sf_saferoot_close(&root);
	if (err) {
		die_msg("cannot rename %s to %s: %s", env.root, swap_path,
			strerror(-err));
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	err = retire_swap(&removed);
	if (err == -ENOTEMPTY) {
		die_msg("removed %d pins; %s is left in place with the entries listed above, which satfeed did not pin",
			removed, env.root);
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (err) {
		err = err == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto unlock;
	}
	printf("satfeed unloaded: removed %d pins from %s\n", removed,
	       env.root);
unlock:
	close(lockfd);
	return err;
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

/* The option argp refused (ARGP_NO_ERRS: it says nothing itself). */
static void unknown_option(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t n = strcspn(a + 2, "=");
		bool known = false;

		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] != '-') {
			for (const struct argp_option *o = opts; o->name; o++)
				known |= o->key == a[1];
			known |= a[1] == '?' || a[1] == 'V';
			if (!known) {
				sf_msg("unknown option '-%c'; see --help", a[1]);
				return;
			}
			continue;
		}
		for (const struct argp_option *o = opts; o->name; o++)
			known |= strlen(o->name) == n && !strncmp(o->name, a + 2, n);
		known |= !strcmp(a, "--help") || !strcmp(a, "--usage") ||
			 !strcmp(a, "--version");
		if (!known) {
			sf_msg("unknown option '%.*s'; see --help", (int)n + 2, a);
			return;
		}
	}
	sf_msg("an option lacks its value; see --help");
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

	sf_prog = PROG;
	argp_err_exit_status = SF_EXIT_USAGE;
	/* our own one-line messages: argp's add a second "Try" line */
	err = argp_parse(&argp, argc, argv, ARGP_NO_ERRS, NULL, NULL);
	if (err) {
		if (!said_usage)
			unknown_option(argc, argv);
		return SF_EXIT_USAGE;
	}
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
