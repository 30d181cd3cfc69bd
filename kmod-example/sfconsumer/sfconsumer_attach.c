// SPDX-License-Identifier: GPL-2.0
/*
 * sfconsumer_attach.c - sfconsumer attach: the pull consumer registered as
 * the module's struct_ops, and a push forwarder on every engine program
 * that calls SFC_PUSH_FUNC, each link pinned in our own pin directory.
 *
 * Both BPF objects are compiled into this binary, as skeletons
 * (sfc_consumer.skel.h, sfc_push.skel.h).
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
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
#include "sf_consumer.h"
#include "sf_pins.h"
#include "sf_root_unpin.h"
#include "sfconsumer.h"

#include "sfc_consumer.skel.h"
#include "sfc_push.skel.h"

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
	/* consumer.bpf.c reads these; sf_verdict it does not */
	static const char *const reads[] = {
		SATFEED_PIN_INFO, SATFEED_PIN_TARGETS, SATFEED_PIN_STREAMS, NULL
	};
	struct sfc_consumer *skel;
	struct bpf_link *link;
	struct bpf_map *ops;
	char path[512], why[256];
	int err;

	skel = sfc_consumer__open();
	if (!skel)
		die("cannot open the consumer object: %s", strerror(errno));
	if (sf_consumer_reuse(skel->obj, pins, reads, why, sizeof(why)))
		die("%s", why);
	err = sfc_consumer__load(skel);
	if (err)
		die("cannot load the pull consumer: %s (is the satfeed_consumer module loaded? -v shows the verifier log)",
		    strerror(-err));
	ops = skel->maps.sfc_pull;
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
	sfc_consumer__destroy(skel);
}

/* Load and attach one push program against engine program tgt_fd. */
static int attach_push_one(int tgt_fd, const char *tgt_name, enum push_mode m)
{
	struct bpf_program *prog, *p;
	struct sfc_push *skel;
	struct bpf_link *link;
	char path[512];
	int err;

	skel = sfc_push__open();
	if (!skel)
		return -errno;
	prog = m == PUSH_FREPLACE ? skel->progs.sfc_push_freplace :
				    skel->progs.sfc_push_fentry;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == prog);
	err = bpf_program__set_attach_target(prog, tgt_fd, SFC_PUSH_FUNC);
	if (!err)
		err = sfc_push__load(skel);
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
	sfc_push__destroy(skel);
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

int cmd_attach(void)
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

