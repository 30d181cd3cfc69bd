// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_root_unpin.c - remove satfeed's own pins from a trusted bpffs directory,
 * never following a symlink and never removing anything else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "satfeed.h"
#include "sf_root_unpin.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *const sf_engine_maps[SF_ENGINE_NR_MAPS] = {
	SATFEED_PIN_INFO, SATFEED_PIN_CONFIG, SATFEED_PIN_TARGETS,
	SATFEED_PIN_STREAMS, SATFEED_PIN_PID_INDEX, SATFEED_PIN_CGRP_INDEX,
	SATFEED_PIN_POLL_START, SATFEED_PIN_UNDERSTUDY, SATFEED_PIN_VERDICT,
	SATFEED_PIN_DISCOVER, SATFEED_PIN_RULES, SATFEED_PIN_AGE,
	SATFEED_PIN_RESPONSES, SATFEED_PIN_SERVICE, SATFEED_PIN_SVC_HIST,
};

/*
 * The engine's programs, named from the same list bpf/satfeed.bpf.c builds
 * them from (satfeed_syscalls.h).  The loader refuses to pin a program
 * missing here, so unload can always remove whatever load pinned.
 */
#define SF_FEXIT_PROG(name, ...) SATFEED_FEXIT_PROG_NAME(name),
#define SF_FENTRY_PROG(name, ...) SATFEED_FENTRY_PROG_NAME(name),
#define SF_FEXIT_UNDERSTUDY(name, ...) SATFEED_FEXIT_UNDERSTUDY_NAME(name),
#define SF_FENTRY_UNDERSTUDY(name, ...) SATFEED_FENTRY_UNDERSTUDY_NAME(name),
static const char *const engine_progs[] = {
	SATFEED_SYSCALLS(SF_FEXIT_PROG)
	SATFEED_WAIT_SYSCALLS(SF_FENTRY_PROG)
	SATFEED_SYSCALLS(SF_FEXIT_UNDERSTUDY)
	SATFEED_WAIT_SYSCALLS(SF_FENTRY_UNDERSTUDY)
	SATFEED_OTHER_PROG_NAMES,
};

static bool name_in(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

bool sf_engine_map_name(const char *name)
{
	return name_in(name, sf_engine_maps, SF_ENGINE_NR_MAPS);
}

bool sf_engine_prog_name(const char *name)
{
	return name_in(name, engine_progs, ARRAY_LEN(engine_progs));
}

/*
 * A directory is trusted when it is on a bpffs (the root's own instance, for
 * a subdirectory: dev != 0), owned by root and writable by nobody else.
 */
static int check_dir(int fd, dev_t dev, const char *path, struct stat *st,
		     char *why, size_t len)
{
	struct statfs fs;

	if (fstat(fd, st) || fstatfs(fd, &fs)) {
		snprintf(why, len, "cannot stat %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fs.f_type != BPF_FS_MAGIC || (dev && st->st_dev != dev)) {
		snprintf(why, len, "%s is not on %s bpffs: refusing to touch it",
			 path, dev ? "its root's" : "a");
		return -EXDEV;
	}
	if (st->st_uid != 0) {
		snprintf(why, len, "%s is owned by uid %u, not root: refusing to touch it",
			 path, (unsigned int)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "%s is writable by group or others (mode %04o): refusing to touch it",
			 path, (unsigned int)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int sf_saferoot_open(struct sf_saferoot *r, const char *prog,
		     const char *path, char *why, size_t len)
{
	char parent[PATH_MAX], *slash;
	struct stat st;
	size_t n;
	int err;

	memset(r, 0, sizeof(*r));
	r->parent_fd = r->fd = -1;
	r->prog = prog;
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path[0] != '/' || n >= sizeof(r->path)) {
		snprintf(why, len, "%s: the pin directory must be an absolute path",
			 path);
		return -EINVAL;
	}
	memcpy(r->path, path, n);
	r->path[n] = '\0';
	snprintf(parent, sizeof(parent), "%s", r->path);
	slash = strrchr(parent, '/');
	if (!slash[1] || strlen(slash + 1) >= sizeof(r->base)) {
		snprintf(why, len, "%s: not a usable pin directory", r->path);
		return -EINVAL;
	}
	snprintf(r->base, sizeof(r->base), "%s", slash + 1);
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';

	r->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->parent_fd < 0) {
		err = -errno;
		if (err != -ENOENT)
			snprintf(why, len, "cannot open %s: %s", parent,
				 strerror(-err));
		goto close_root;
	}
	if (fstatat(r->parent_fd, r->base, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		if (err != -ENOENT)
			snprintf(why, len, "cannot stat %s: %s", r->path,
				 strerror(-err));
		goto close_root;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, len, "%s is a symlink: refusing to follow it",
			 r->path);
		err = -ELOOP;
		goto close_root;
	}
	r->fd = openat(r->parent_fd, r->base,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		snprintf(why, len, "cannot open %s: %s", r->path,
			 strerror(-err));
		goto close_root;
	}
	err = check_dir(r->fd, 0, r->path, &st, why, len);
	if (err)
		goto close_root;
	r->dev = st.st_dev;
	return 0;
close_root:
	sf_saferoot_close(r);
	return err;
}

void sf_saferoot_close(struct sf_saferoot *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->parent_fd >= 0)
		close(r->parent_fd);
	r->fd = r->parent_fd = -1;
}

static void leave(struct sf_saferoot *r, const char *dir, const char *name,
		  const char *reason)
{
	fprintf(stderr, "%s: left %s/%s in place: %s\n", r->prog, dir, name,
		reason);
	r->left++;
}

static bool is_layout_subdir(const char *name, const struct sf_pin_dir *dirs,
			     size_t nr_dirs)
{
	for (size_t i = 0; i < nr_dirs; i++)
		if (dirs[i].sub && !strcmp(dirs[i].sub, name))
			return true;
	return false;
}

/* Does directory fd hold a name that d->ours accepts? */
static bool dir_holds(int fd, const struct sf_pin_dir *d)
{
	struct dirent *de;
	bool found = false;
	DIR *dir;

	fd = dup(fd);
	if (fd < 0)
		return false;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return false;
	}
	rewinddir(dir);
	while (!found && (de = readdir(dir)))
		found = d->ours(de->d_name);
	closedir(dir);
	return found;
}

bool sf_saferoot_holds(const struct sf_saferoot *r,
		       const struct sf_pin_dir *dirs, size_t nr_dirs)
{
	bool found = false;
	int fd;

	for (size_t i = 0; i < nr_dirs && !found; i++) {
		if (!dirs[i].sub) {
			found = dir_holds(r->fd, &dirs[i]);
			continue;
		}
		fd = openat(r->fd, dirs[i].sub, O_RDONLY | O_DIRECTORY |
						       O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		found = dir_holds(fd, &dirs[i]);
		close(fd);
	}
	return found;
}

/* Remove the caller's pins from the open directory dfd (path dpath). */
static int unpin_entries(struct sf_saferoot *r, int dfd, const char *dpath,
			 const struct sf_pin_dir *d,
			 const struct sf_pin_dir *dirs, size_t nr_dirs)
{
	struct dirent *de;
	int err = 0, fd;
	DIR *dir;

	fd = dup(dfd);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "%s: cannot list %s: %s\n", r->prog, dpath,
			strerror(-err));
		return err;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		const char *name = de->d_name;
		struct stat st;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (!d->sub && is_layout_subdir(name, dirs, nr_dirs))
			continue;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT)
				leave(r, dpath, name, strerror(errno));
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			leave(r, dpath, name, "a symlink, not followed");
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			leave(r, dpath, name, "a directory satfeed did not make");
			continue;
		}
		if (!S_ISREG(st.st_mode) || st.st_dev != r->dev) {
			leave(r, dpath, name, "not a bpffs object");
			continue;
		}
		if (!d->ours(name)) {
			leave(r, dpath, name, "not a satfeed pin");
			continue;
		}
		if (unlinkat(dfd, name, 0)) {
			err = -errno;
			fprintf(stderr, "%s: cannot remove %s/%s: %s\n",
				r->prog, dpath, name, strerror(errno));
			r->left++;
			continue;
		}
		r->removed++;
	}
	closedir(dir);
	return err;
}

/* Unpin one subdirectory of the layout and remove it when left empty. */
static int unpin_subdir(struct sf_saferoot *r, const struct sf_pin_dir *d,
			const struct sf_pin_dir *dirs, size_t nr_dirs)
{
	char path[PATH_MAX + NAME_MAX + 2], why[PATH_MAX + 128];
	struct stat st;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", r->path, d->sub);
	if (fstatat(r->fd, d->sub, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		leave(r, r->path, d->sub, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		leave(r, r->path, d->sub, "a symlink, not followed");
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		leave(r, r->path, d->sub, "not a directory");
		return 0;
	}
	fd = openat(r->fd, d->sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		leave(r, r->path, d->sub, strerror(errno));
		return err;
	}
	err = check_dir(fd, r->dev, path, &st, why, sizeof(why));
	if (err) {
		fprintf(stderr, "%s: %s\n", r->prog, why);
		r->left++;
		goto close_dir;
	}
	err = unpin_entries(r, fd, path, d, dirs, nr_dirs);
	if (unlinkat(r->fd, d->sub, AT_REMOVEDIR) && errno != ENOTEMPTY &&
	    errno != ENOENT) {
		err = -errno;
		fprintf(stderr, "%s: cannot remove %s: %s\n", r->prog, path,
			strerror(errno));
	}
close_dir:
	close(fd);
	return err;
}

int sf_saferoot_unpin(struct sf_saferoot *r, const struct sf_pin_dir *dirs,
		      size_t nr_dirs)
{
	struct stat root, now;
	int err = 0, e;

	for (size_t i = 0; i < nr_dirs; i++) {
		if (dirs[i].sub)
			e = unpin_subdir(r, &dirs[i], dirs, nr_dirs);
		else
			e = unpin_entries(r, r->fd, r->path, &dirs[i], dirs,
					  nr_dirs);
		err = err ?: e;
	}
	/* remove the root only if the name still is the directory we opened */
	if (fstat(r->fd, &root) ||
	    fstatat(r->parent_fd, r->base, &now, AT_SYMLINK_NOFOLLOW) ||
	    root.st_dev != now.st_dev || root.st_ino != now.st_ino) {
		fprintf(stderr, "%s: left %s in place: it changed while being unpinned\n",
			r->prog, r->path);
		return err ?: -ESTALE;
	}
	if (!unlinkat(r->parent_fd, r->base, AT_REMOVEDIR))
		return err;
	if (errno == ENOTEMPTY) {
		fprintf(stderr, "%s: left %s in place: it holds entries satfeed did not pin\n",
			r->prog, r->path);
		return err ?: -ENOTEMPTY;
	}
	e = -errno;
	fprintf(stderr, "%s: cannot remove %s: %s\n", r->prog, r->path,
		strerror(-e));
	return err ?: e;
}
