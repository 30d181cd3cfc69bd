// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * swap.c - the pin root and its swap directory, as load and unload use them.
 *
 * Every pin this tool makes has a fixed name (satfeed.h) under the root, so
 * unload removes exactly those, and a failed load removes whatever it had
 * pinned before it returns: /sys/fs/bpf is left as it was found.  Both touch
 * only a root that nobody but root can write to, never follow a symlink, and
 * report anything else they find there (sf_root_unpin.h).
 *
 * Both hold the root lock for their whole run and go through the swap
 * directory (sf_root.h): a load pins into it and renames it over the root as
 * its last step, carrying a replaced engine's targets over first; an unload
 * renames the root away first.  So the root is always either absent or a
 * whole, attached engine, whenever either is killed, and two loads never
 * meet: the second finds the first's engine and says so.  What is here is
 * the filesystem side of that, apart from the commands that order it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "sf_root_unpin.h"
#include "loader.h"
#include "satfeed.skel.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

char swap_path[PATH_MAX];

static void pin_path(char *buf, size_t len, const char *sub, const char *name)
{
	if (sub)
		snprintf(buf, len, "%s/%s/%s", swap_path, sub, name);
	else
		snprintf(buf, len, "%s/%s", swap_path, name);
}

/*
 * Open ROOT if it exists and can be trusted (sf_root_unpin.h).  Returns 0,
 * -ENOENT when there is none, or another -errno after saying why.
 */
int open_root(struct sf_saferoot *r)
{
	char why[PATH_MAX + 128];
	int err;

	err = sf_saferoot_open(r, PROG, env.root, why, sizeof(why));
	if (err && err != -ENOENT)
		sf_msg("%s", why);
	return err;
}

/*
 * Remove what is in the swap directory: this load's pins after a failure, a
 * replaced or unloaded engine, or what a killed run left.  Returns 0 when
 * nothing is left there, -ENOTEMPTY when foreign entries went back to ROOT
 * (reported), another -errno after saying why.
 */
int retire_swap(int *removed)
{
	char why[PATH_MAX + 256] = "";
	int err;

	err = sf_root_retire_swap(env.root, PROG, removed, why, sizeof(why));
	if (err && err != -ENOTEMPTY && why[0])
		sf_msg("%s", why);
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
	sf_msg("%s/%s is not a directory satfeed made", env.root, sub);
	return -ENOTDIR;
}

/*
 * Can a load be swapped in for what ROOT holds?  Its progs/ and links/ must
 * be directories, where whatever else is there can be carried over.
 */
int check_pin_dirs(int root_fd)
{
	static const char *const subs[] = { SATFEED_PIN_PROGS,
					    SATFEED_PIN_LINKS };
	struct stat st;

	for (size_t i = 0; i < ARRAY_LEN(subs); i++) {
		if (fstatat(root_fd, subs[i], &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISDIR(st.st_mode)) {
			sf_msg("%s/%s is not a directory satfeed made",
				env.root, subs[i]);
			return -ENOTDIR;
		}
	}
	return 0;
}

/* Pin the engine's maps, programs and links into a new swap directory. */
int pin_everything(struct satfeed_bpf *skel)
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
		sf_msg("%s", why);
		return err;
	}
	/* a swap until swap_in(): if killed before, it is debris */
	err = make_pin_dir(swap.fd, SF_ROOT_SWAP_MARK);
	if (!err)
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
			sf_msg("program %s is missing from the engine's pin names (sf_root_unpin.c)",
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
static void mark(const char *dir, bool on)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s", dir, SF_ROOT_SWAP_MARK);
	if (on ? mkdir(path, 0700) && errno != EEXIST :
		 rmdir(path) && errno != ENOENT)
		sf_warn("cannot %s %s: %s", on ? "make" : "remove", path,
			strerror(errno));
}

int swap_in(bool root_exists)
{
	int err;

	/* the engine that leaves ROOT is a swap from the exchange on */
	if (root_exists)
		mark(env.root, true);
	if (!renameat2(AT_FDCWD, swap_path, AT_FDCWD, env.root,
		       root_exists ? RENAME_EXCHANGE : RENAME_NOREPLACE)) {
		mark(env.root, false);
		return 0;
	}
	err = -errno;
	sf_msg("cannot rename %s to %s: %s", swap_path, env.root,
		strerror(-err));
	if (root_exists)
		mark(env.root, false);
	return err;
}
