// SPDX-License-Identifier: GPL-2.0
/*
 * sfconsumer - attach kmod-example's BPF side to a running satfeed engine.
 *
 *   sfconsumer attach [--push auto|fentry|freplace|none] [--no-pull] [--replace]
 *   sfconsumer detach
 *   sfconsumer status
 *
 * attach: loads consumer.bpf.c with satfeed's pinned maps swapped in
 * (bpf_map__reuse_fd) and registers it as the module's struct_ops (pull);
 * then, for every pinned engine program that contains satfeed's push hook
 * satfeed_window_closed(), loads a program from push.bpf.c against it and
 * attaches it (push).  Every link is pinned under the consumer's own bpffs
 * directory (default /sys/fs/bpf/satfeed_consumer), never under satfeed's
 * root, so satfeed-loader unload stays exact.  detach removes those pins,
 * which detaches everything.  status tells whether the links still point at
 * the running engine (an engine reload leaves them on the old one: attach
 * --replace then).
 *
 * Both BPF objects are compiled into this binary.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sf_pins.h"
#include "sf_saferoot.h"

/* our pins: the pull link, and one push link per engine program */
#define PIN_PULL	"pull"
#define PIN_PUSH	"push_"

static const unsigned char consumer_obj[] = {
#include "consumer.bpf.inc"
};

static const unsigned char push_obj[] = {
#include "push.bpf.inc"
};

enum push_mode { PUSH_AUTO, PUSH_FENTRY, PUSH_FREPLACE, PUSH_NONE };
static const char *const push_names[] = { "auto", "fentry", "freplace", "none" };

static struct {
	const char *root;	/* satfeed's pin root */
	char pins[256];		/* our pin directory */
	enum push_mode push;
	bool pull;
	bool replace;
	bool verbose;
	bool undo_on_error;	/* attach in progress: remove our pins on die() */
} env = {
	.root = SATFEED_DEFAULT_ROOT,
	.push = PUSH_AUTO,
	.pull = true,
};

static int remove_pins(int *removed);

static void die(const char *fmt, ...)
{
	va_list ap;

	if (env.undo_on_error) {
		int removed;

		env.undo_on_error = false;
		remove_pins(&removed);
	}

	fprintf(stderr, "sfconsumer: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* quiet by default: --push auto expects some loads to fail */
	if (!env.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfconsumer [OPTIONS] attach|detach|status\n"
"\n"
"Attach kmod-example's BPF programs to the running satfeed engine: the pull\n"
"consumer (struct_ops satfeed_consumer_ops) and the push forwarders (one per\n"
"engine program that calls satfeed_window_closed()).  Needs the module\n"
"satfeed_consumer loaded and satfeed loaded (satfeed-loader load).\n"
"\n"
"  attach    load and attach; refused if already attached (see --replace)\n"
"  detach    remove our pins, which detaches everything\n"
"  status    show what is attached and whether it still follows the\n"
"            running engine (exit 3 if stale: re-run attach --replace)\n"
"\n"
"  --bpffs DIR    satfeed's pin root (default " SATFEED_DEFAULT_ROOT ")\n"
"  --pins DIR     our pin directory (default " SFC_DEFAULT_PIN_ROOT ",\n"
"                 or DIR_consumer beside a non-default --bpffs DIR)\n"
"  --push MODE    auto (default): freplace where the kernel allows it\n"
"                 (tp_btf engine programs), fentry elsewhere (fentry/fexit\n"
"                 engine programs cannot be extended); fentry; freplace;\n"
"                 none\n"
"  --no-pull      do not attach the struct_ops consumer\n"
"  --replace      attach: detach a previous attach first\n"
"  -v, --verbose  libbpf's messages (verifier logs)\n");
}

/* ---- helpers ---- */

static int pin_get(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

static bool module_loaded(void)
{
	struct stat st;

	return !stat(SFC_SYSFS_DIR, &st) && S_ISDIR(st.st_mode);
}

/*
 * satfeed's pins, each checked against the contract (map type, sizes, ABI
 * version) before the consumer's programs are loaded against them.
 */
static void open_engine_pins(struct sf_pins *pins)
{
	char why[512];

	if (sf_pins_open(pins, env.root, why, sizeof(why)))
		die("%s", why);
}

/* Number of pins in our directory, -1 if it does not exist. */
static int count_pins(void)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir(env.pins);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static bool consumer_pin_name(const char *name)
{
	return !strcmp(name, PIN_PULL) ||
	       (!strncmp(name, PIN_PUSH, strlen(PIN_PUSH)) &&
		sf_engine_prog_name(name + strlen(PIN_PUSH)));
}

/*
 * Remove our pins, and nothing else, from our pin directory (sf_saferoot.h).
 * Returns 0 when the directory is gone, -ENOENT when there was none, another
 * -errno (reported) otherwise; *removed counts the pins removed.
 */
static int remove_pins(int *removed)
{
	static const struct sf_pin_dir layout[] = {
		{ NULL, consumer_pin_name },
	};
	char why[PATH_MAX + 128];
	struct sf_saferoot r;
	int err;

	*removed = 0;
	err = sf_saferoot_open(&r, "sfconsumer", env.pins, why, sizeof(why));
	if (err == -ENOENT)
		return err;
	if (err) {
		fprintf(stderr, "sfconsumer: %s\n", why);
		return err;
	}
	err = sf_saferoot_unpin(&r, layout, 1);
	*removed = r.removed;
	sf_saferoot_close(&r);
	return err;
}

/*
 * Does program fd contain the global function SFC_PUSH_FUNC?  Its BTF holds
 * every function of the object, so look at the program's own func_info.
 */
static bool prog_has_push_hook(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nr, i;
	struct bpf_func_info *fi;
	struct btf *btf;
	bool found = false;

	if (bpf_prog_get_info_by_fd(fd, &info, &len) || !info.btf_id ||
	    !info.nr_func_info)
		return false;
	nr = info.nr_func_info;
	fi = calloc(nr, sizeof(*fi));
	if (!fi)
		return false;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = nr;
	info.func_info_rec_size = sizeof(*fi);
	info.func_info = (__u64)(unsigned long)fi;
	len = sizeof(info);
	if (bpf_prog_get_info_by_fd(fd, &info, &len))
		goto out;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		goto out;
	for (i = 0; i < nr && !found; i++) {
		const struct btf_type *t = btf__type_by_id(btf, fi[i].type_id);

		found = t && btf_is_func(t) &&
			!strcmp(btf__name_by_offset(btf, t->name_off),
				SFC_PUSH_FUNC) &&
			btf_vlen(t) == BTF_FUNC_GLOBAL; /* linkage */
	}
	btf__free(btf);
out:
	free(fi);
	return found;
}

/* ---- attach ---- */

static void attach_pull(const struct sf_pins *pins)
{
	const struct {
		const char *name;
		int fd;
	} maps[] = {
		{ SATFEED_PIN_INFO, pins->info_fd },
		{ SATFEED_PIN_TARGETS, pins->targets_fd },
		{ SATFEED_PIN_STREAMS, pins->streams_fd },
	};
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "sfc_consumer");
	struct bpf_object *obj;
	struct bpf_link *link;
	struct bpf_map *ops;
	char path[512];
	int err;

	obj = bpf_object__open_mem(consumer_obj, sizeof(consumer_obj), &oo);
	if (!obj)
		die("cannot open the consumer object: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct bpf_map *m;

		m = bpf_object__find_map_by_name(obj, maps[i].name);
		if (!m)
			die("no map %s in the consumer object", maps[i].name);
		err = bpf_map__reuse_fd(m, maps[i].fd);
		if (err)
			die("cannot reuse %s: %s", maps[i].name,
			    strerror(-err));
	}
	err = bpf_object__load(obj);
	if (err)
		die("cannot load the pull consumer: %s (is the satfeed_consumer module loaded? -v shows the verifier log)",
		    strerror(-err));
	ops = bpf_object__find_map_by_name(obj, "sfc_pull");
	if (!ops)
		die("no sfc_pull in the consumer object");
	/*
	 * A link whose last pin was just removed (--replace) is released by
	 * a deferred kernel work; until then the module still holds the old
	 * consumer and refuses a second one with EEXIST.  Wait for it.
	 */
	for (int i = 0; i < 100; i++) {
		link = bpf_map__attach_struct_ops(ops);
		if (link || errno != EEXIST || !env.replace)
			break;
		usleep(20000);
	}
	if (!link)
		die("cannot register struct_ops satfeed_consumer_ops: %s%s",
		    strerror(errno),
		    errno == EEXIST ? " (another pull consumer is attached)" : "");
	snprintf(path, sizeof(path), "%s/" PIN_PULL, env.pins);
	err = bpf_link__pin(link, path);
	if (err)
		die("cannot pin %s: %s", path, strerror(-err));
	bpf_link__destroy(link);	/* the pin keeps it */
	bpf_object__close(obj);
}

/* Load and attach one push program against engine program tgt_fd. */
static int attach_push_one(int tgt_fd, const char *tgt_name, enum push_mode m)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "sfc_push");
	const char *want = m == PUSH_FREPLACE ? "sfc_push_freplace" :
						"sfc_push_fentry";
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	struct bpf_link *link;
	char path[512];
	int err;

	obj = bpf_object__open_mem(push_obj, sizeof(push_obj), &oo);
	if (!obj)
		return -errno;
	prog = bpf_object__find_program_by_name(obj, want);
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_program__set_attach_target(prog, tgt_fd, SFC_PUSH_FUNC);
	if (!err)
		err = bpf_object__load(obj);
	if (err)
		goto out;
	if (m == PUSH_FREPLACE)
		link = bpf_program__attach_freplace(prog, tgt_fd, SFC_PUSH_FUNC);
	else
		link = bpf_program__attach_trace(prog);
	if (!link) {
		err = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/" PIN_PUSH "%s", env.pins, tgt_name);
	err = bpf_link__pin(link, path);
	bpf_link__destroy(link);
out:
	bpf_object__close(obj);
	return err;
}

static void attach_push(int *n_freplace, int *n_fentry)
{
	char dir[512];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", env.root, SATFEED_PIN_PROGS);
	d = opendir(dir);
	if (!d)
		die("cannot list satfeed's programs in %s: %s", dir,
		    strerror(errno));
	while ((de = readdir(d))) {
		enum push_mode m = env.push;
		int fd, err;

		/* detach removes only the push pins of engine programs */
		if (!sf_engine_prog_name(de->d_name))
			continue;
		fd = pin_get(dir, de->d_name);
		if (fd < 0)
			die("cannot open %s/%s: %s", dir, de->d_name,
			    strerror(errno));
		if (!prog_has_push_hook(fd)) {
			close(fd);
			continue;
		}
		if (m == PUSH_AUTO) {
			err = attach_push_one(fd, de->d_name, PUSH_FREPLACE);
			if (!err) {
				(*n_freplace)++;
				close(fd);
				continue;
			}
			m = PUSH_FENTRY;
		}
		err = attach_push_one(fd, de->d_name, m);
		if (err)
			die("cannot attach the %s push program to %s: %s (-v shows why)",
			    push_names[m], de->d_name, strerror(-err));
		if (m == PUSH_FREPLACE)
			(*n_freplace)++;
		else
			(*n_fentry)++;
		close(fd);
	}
	closedir(d);
}

static int cmd_attach(void)
{
	char why[PATH_MAX + 128];
	int n_freplace = 0, n_fentry = 0, n, err;
	struct sf_saferoot own;
	struct sf_pins pins;

	if (!module_loaded())
		die("the satfeed_consumer module is not loaded (no %s)",
		    SFC_SYSFS_DIR);
	open_engine_pins(&pins);
	n = count_pins();
	if (n > 0 && !env.replace)
		die("already attached (%d pins in %s); use --replace, or detach first",
		    n, env.pins);
	if (n >= 0) {
		err = remove_pins(&n);
		if (err && err != -ENOENT && err != -ENOTEMPTY)
			die("cannot remove the previous attach from %s",
			    env.pins);
	}
	if (mkdir(env.pins, 0700) && errno != EEXIST)
		die("cannot create %s: %s", env.pins, strerror(errno));
	/* pin only where nobody else can have planted anything */
	err = sf_saferoot_open(&own, "sfconsumer", env.pins, why,
			       sizeof(why));
	if (err)
		die("%s", err == -ENOENT ? strerror(-err) : why);
	sf_saferoot_close(&own);
	env.undo_on_error = true;	/* all or nothing */

	if (env.pull)
		attach_pull(&pins);
	if (env.push != PUSH_NONE)
		attach_push(&n_freplace, &n_fentry);
	if (env.push != PUSH_NONE && !n_freplace && !n_fentry)
		die("no program under %s/%s calls %s(): is this satfeed too old?",
		    env.root, SATFEED_PIN_PROGS, SFC_PUSH_FUNC);
	env.undo_on_error = false;
	sf_pins_close(&pins);
	printf("sfconsumer attached: pull %s, push on %d engine programs (freplace %d, fentry %d), pins in %s\n",
	       env.pull ? "struct_ops satfeed_consumer_ops" : "off",
	       n_freplace + n_fentry, n_freplace, n_fentry, env.pins);
	return 0;
}

static int cmd_detach(void)
{
	int n, err = remove_pins(&n);

	if (err == -ENOENT) {
		fprintf(stderr, "sfconsumer: nothing attached (no %s)\n",
			env.pins);
		return 1;
	}
	if (err == -ENOTEMPTY)
		fprintf(stderr, "sfconsumer: removed %d pins; %s is left in place with the entries listed above, which sfconsumer did not pin\n",
			n, env.pins);
	if (err)
		return 1;
	printf("sfconsumer detached: removed %d pins from %s\n", n, env.pins);
	return 0;
}

/* ---- status ---- */

/* Is program id one of satfeed's pinned programs? */
static bool engine_has_prog(__u32 id)
{
	struct bpf_prog_info info;
	char dir[512];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", env.root, SATFEED_PIN_PROGS);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		__u32 len = sizeof(info);
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = pin_get(dir, de->d_name);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_prog_get_info_by_fd(fd, &info, &len))
			found = info.id == id;
		close(fd);
	}
	closedir(d);
	return found;
}

static __u32 pinned_map_id(const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = pin_get(env.root, name);

	if (fd < 0)
		return 0;
	if (bpf_map_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

/*
 * Does the pull consumer read the engine's current sf_streams?  The
 * struct_ops program (sfc_query) lists the maps it uses.
 */
static bool pull_is_current(void)
{
	__u32 streams = pinned_map_id(SATFEED_PIN_STREAMS), id = 0, ids[16];
	bool cur = false;

	if (!streams)
		return false;
	while (!cur && !bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(pi), nr = sizeof(ids) / sizeof(ids[0]);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		pi.nr_map_ids = nr;
		pi.map_ids = (__u64)(unsigned long)ids;
		if (!bpf_prog_get_info_by_fd(fd, &pi, &len) &&
		    pi.type == BPF_PROG_TYPE_STRUCT_OPS &&
		    !strcmp(pi.name, "sfc_query"))
			for (__u32 i = 0; i < pi.nr_map_ids && i < nr; i++)
				cur |= ids[i] == streams;
		close(fd);
	}
	return cur;
}

static int cmd_status(void)
{
	char path[512];
	struct dirent *de;
	int stale = 0, n = 0;
	DIR *d;

	printf("module:  %s\n", module_loaded() ? "loaded" : "not loaded");
	printf("engine:  %s\n", pinned_map_id(SATFEED_PIN_INFO) ?
	       "loaded" : "not loaded");
	d = opendir(env.pins);
	if (!d) {
		printf("consumer: not attached\n");
		return 0;
	}
	while ((de = readdir(d))) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		bool cur;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", env.pins, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0 || bpf_link_get_info_by_fd(fd, &li, &len)) {
			printf("  %-28s unreadable\n", de->d_name);
			stale++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (li.type == BPF_LINK_TYPE_STRUCT_OPS)
			cur = pull_is_current();
		else
			cur = engine_has_prog(li.tracing.target_obj_id);
		printf("  %-28s link %u %s\n", de->d_name, li.id,
		       cur ? "current" : "STALE (engine reloaded or gone)");
		stale += !cur;
		close(fd);
	}
	closedir(d);
	printf("consumer: %d links, %d stale\n", n, stale);
	return stale ? 3 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bpffs", required_argument, NULL, 'b' },
		{ "pins", required_argument, NULL, 'p' },
		{ "push", required_argument, NULL, 'P' },
		{ "no-pull", no_argument, NULL, 'n' },
		{ "replace", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *pins = NULL, *cmd;
	int c;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (optarg[0] != '/')
				die("--bpffs needs an absolute path");
			env.root = optarg;
			break;
		case 'p':
			pins = optarg;
			break;
		case 'P':
			for (c = 0; c < 4 && strcmp(optarg, push_names[c]); c++)
				;
			if (c == 4)
				die("unknown --push mode '%s' (auto, fentry, freplace, none)",
				    optarg);
			env.push = c;
			break;
		case 'n':
			env.pull = false;
			break;
		case 'r':
			env.replace = true;
			break;
		case 'v':
			env.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (pins)
		snprintf(env.pins, sizeof(env.pins), "%s", pins);
	else if (!strcmp(env.root, SATFEED_DEFAULT_ROOT))
		snprintf(env.pins, sizeof(env.pins), "%s", SFC_DEFAULT_PIN_ROOT);
	else
		snprintf(env.pins, sizeof(env.pins), "%s_consumer", env.root);
	libbpf_set_print(libbpf_print);

	if (!strcmp(cmd, "attach"))
		return cmd_attach();
	if (!strcmp(cmd, "detach"))
		return cmd_detach();
	if (!strcmp(cmd, "status"))
		return cmd_status();
	usage(stderr);
	return 2;
}
