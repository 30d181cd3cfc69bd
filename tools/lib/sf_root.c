// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_root.c - the pin root's lock, its swap directory, and what a killed
 * load or unload leaves there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "satfeed.h"
#include "sf_common.h"
#include "sf_root.h"

const struct sf_pin_dir sf_engine_layout[SF_ENGINE_LAYOUT_LEN] = {
	{ SATFEED_PIN_LINKS, sf_engine_prog_name },
	{ SATFEED_PIN_PROGS, sf_engine_prog_name },
	{ NULL, sf_engine_map_name },
};

/* Split root into its parent directory and last component. */
static int split(const char *root, char *parent, size_t plen, char *base,
		 size_t blen)
{
	const char *slash = strrchr(root, '/');

	if (!slash || !slash[1])
		return -EINVAL;
	if ((size_t)(slash - root) + 2 > plen || strlen(slash + 1) >= blen)
		return -ENAMETOOLONG;
	if (slash == root) {
		snprintf(parent, plen, "/");
	} else {
		memcpy(parent, root, slash - root);
		parent[slash - root] = '\0';
	}
	snprintf(base, blen, "%s", slash + 1);
	return 0;
}

int sf_root_lock(const char *root, int how)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	int fd, err;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err)
		return err;
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, how)) {
		if (errno == EINTR)
			continue;
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int sf_root_swap_path(const char *root, char *buf, size_t len)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	int err, n;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err)
		return err;
	n = snprintf(buf, len, "%s%s%s~swap", parent,
		     strcmp(parent, "/") ? "/" : "", base);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Move each entry of directory from that ours() does not accept into to,
 * under the same name, never over an existing one.  Subdirectory sub of the
 * layout is merged entry by entry rather than moved whole.
 */
static void carry_dir(const char *prog, int from, int to, const char *from_path,
		      const struct sf_pin_dir *d)
{
	struct dirent *de;
	DIR *dir;
	int fd;

	fd = dup(from);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		const char *name = de->d_name;
		bool layout_dir = false;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		for (size_t i = 0; !d->sub && i < SF_ENGINE_LAYOUT_LEN; i++)
			if (sf_engine_layout[i].sub &&
			    !strcmp(name, sf_engine_layout[i].sub))
				layout_dir = true;
		if (layout_dir || d->ours(name))
			continue;
		if (renameat2(from, name, to, name, RENAME_NOREPLACE))
			fprintf(stderr, "%s: left %s/%s in place: cannot move it back: %s\n",
				prog, from_path, name, strerror(errno));
	}
	closedir(dir);
}

/* Move what is not satfeed's from the swap directory s into the root r. */
static void carry_foreign(const char *prog, struct sf_saferoot *s,
			  struct sf_saferoot *r)
{
	char path[PATH_MAX + NAME_MAX + 2];

	for (size_t i = 0; i < SF_ENGINE_LAYOUT_LEN; i++) {
		const struct sf_pin_dir *d = &sf_engine_layout[i];
		int from, to;
		struct stat st;

		if (!d->sub) {
			carry_dir(prog, s->fd, r->fd, s->path, d);
			continue;
		}
		from = openat(s->fd, d->sub, O_RDONLY | O_DIRECTORY |
					     O_NOFOLLOW | O_CLOEXEC);
		if (from < 0) {
			/* not a directory: foreign, moved whole if free */
			if (!fstatat(s->fd, d->sub, &st, AT_SYMLINK_NOFOLLOW) &&
			    renameat2(s->fd, d->sub, r->fd, d->sub,
				      RENAME_NOREPLACE))
				fprintf(stderr, "%s: left %s/%s in place: cannot move it back: %s\n",
					prog, s->path, d->sub, strerror(errno));
			continue;
		}
		if (fstat(from, &st) || st.st_dev != s->dev) {
			close(from);
			continue;
		}
		to = openat(r->fd, d->sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
		if (to < 0 && errno == ENOENT && !mkdirat(r->fd, d->sub, 0700))
			to = openat(r->fd, d->sub, O_RDONLY | O_DIRECTORY |
						   O_NOFOLLOW | O_CLOEXEC);
		if (to >= 0) {
			snprintf(path, sizeof(path), "%s/%s", s->path, d->sub);
			carry_dir(prog, from, to, path, d);
			close(to);
		}
		close(from);
	}
}

int sf_root_retire_swap(const char *root, const char *prog, int *removed,
			char *why, size_t len)
{
	char swap[PATH_MAX];
	struct sf_saferoot s, r;
	bool have_root;
	int err;

	*removed = 0;
	err = sf_root_swap_path(root, swap, sizeof(swap));
	if (err) {
		snprintf(why, len, "%s: path too long", root);
		return err;
	}
	err = sf_saferoot_open(&s, prog, swap, why, len);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	err = sf_saferoot_open(&r, prog, root, why, len);
	if (err && err != -ENOENT)
		goto close_swap;
	have_root = !err;
	if (have_root) {
		carry_foreign(prog, &s, &r);
		sf_saferoot_close(&r);
	} else {
		/* what is left goes back to root: name it so in messages */
		snprintf(s.path, sizeof(s.path), "%s", root);
	}
	err = sf_saferoot_unpin(&s, sf_engine_layout, SF_ENGINE_LAYOUT_LEN);
	*removed = s.removed;
	if (err == -ENOTEMPTY && !have_root) {
		const char *base = strrchr(root, '/') + 1;

		if (renameat2(s.parent_fd, s.base, s.parent_fd, base,
			      RENAME_NOREPLACE)) {
			err = -errno;
			snprintf(why, len, "cannot move %s back to %s: %s",
				 swap, root, strerror(-err));
		}
	} else if (err) {
		snprintf(why, len, "%s holds entries that are not satfeed's and could not be moved to %s (listed above): remove them",
			 swap, root);
	}
close_swap:
	sf_saferoot_close(&s);
	return err;
}

int sf_root_complete(const char *root, char *why, size_t len)
{
	struct sf_saferoot r;
	struct dirent *de;
	int progs, links, err;
	bool any = false;
	struct stat st;
	DIR *dir;

	err = sf_saferoot_open(&r, sf_prog, root, why, len);
	if (err)
		return err;
	err = -EUCLEAN;
	for (int i = 0; i < SF_ENGINE_NR_MAPS; i++) {
		if (fstatat(r.fd, sf_engine_maps[i], &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(why, len, "%s has no %s", root,
				 sf_engine_maps[i]);
			goto close_root;
		}
	}
	progs = openat(r.fd, SATFEED_PIN_PROGS, O_RDONLY | O_DIRECTORY |
						  O_NOFOLLOW | O_CLOEXEC);
	links = openat(r.fd, SATFEED_PIN_LINKS, O_RDONLY | O_DIRECTORY |
						  O_NOFOLLOW | O_CLOEXEC);
	if (progs < 0 || links < 0 || !(dir = fdopendir(progs))) {
		snprintf(why, len, "%s has no %s directory", root,
			 progs < 0 ? SATFEED_PIN_PROGS : SATFEED_PIN_LINKS);
		goto close_dirs;
	}
	progs = -1;	/* dir owns it */
	err = 0;
	while (!err && (de = readdir(dir))) {
		if (!sf_engine_prog_name(de->d_name))
			continue;
		any = true;
		if (fstatat(links, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(why, len, "%s/%s has no link for program %s: it is not attached",
				 root, SATFEED_PIN_LINKS, de->d_name);
			err = -EUCLEAN;
		}
	}
	closedir(dir);
	if (!err && !any) {
		snprintf(why, len, "%s/%s holds no program", root,
			 SATFEED_PIN_PROGS);
		err = -EUCLEAN;
	}
close_dirs:
	if (progs >= 0)
		close(progs);
	if (links >= 0)
		close(links);
close_root:
	sf_saferoot_close(&r);
	return err;
}
