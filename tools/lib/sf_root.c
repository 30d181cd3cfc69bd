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
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "satfeed.h"
#include "sf_common.h"
#include "sf_root.h"

static bool no_name(const char *name)
{
	return false;
}

const struct sf_pin_dir sf_engine_layout[SF_ENGINE_LAYOUT_LEN] = {
	{ SATFEED_PIN_LINKS, sf_engine_prog_name },
	{ SATFEED_PIN_PROGS, sf_engine_prog_name },
	{ SF_ROOT_SWAP_MARK, no_name },
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

int sf_root_name_check(const char *root, char *why, size_t len)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	int err;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err == -EINVAL) {
		snprintf(why, len, "%s: the pin root must be a directory inside a bpffs, such as " SATFEED_DEFAULT_ROOT,
			 root);
		return err;
	}
	if (err) {
		snprintf(why, len, "%s: path too long", root);
		return err;
	}
	if (strchr(base, '~')) {
		snprintf(why, len, "%s: a pin root's name must not contain '~': satfeed reserves NAME%s for the swap directory of root NAME",
			 root, SF_ROOT_SWAP_SUFFIX);
		return -EINVAL;
	}
	return 0;
}

/*
 * The lock directory: made by root, 0700, never a symlink.  Returns an fd
 * or -errno with why.
 */
static int lock_dir(char *why, size_t len)
{
	struct stat st;
	int fd;

	if (mkdir(SF_ROOT_LOCK_DIR, 0700) && errno != EEXIST) {
		int err = -errno;

		snprintf(why, len, "cannot make %s: %s", SF_ROOT_LOCK_DIR,
			 strerror(-err));
		return err;
	}
	fd = open(SF_ROOT_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		snprintf(why, len, "cannot open %s: %s%s", SF_ROOT_LOCK_DIR,
			 strerror(-err), err == -ELOOP || err == -ENOTDIR ?
			 " (not a directory: remove it)" : "");
		return err;
	}
	if (fstat(fd, &st) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len, "%s is owned by uid %u (mode %04o), not root only: satfeed keeps its locks there and trusts no other user's; remove it",
			 SF_ROOT_LOCK_DIR, (unsigned int)st.st_uid,
			 (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* pid and comm of a holder of the flock on (dev, ino), from /proc/locks */
static int lock_holder(dev_t dev, ino_t ino, char *comm, size_t len)
{
	char line[256], want[64], path[64];
	int pid = 0;
	FILE *f;

	snprintf(want, sizeof(want), "%02x:%02x:%llu", major(dev), minor(dev),
		 (unsigned long long)ino);
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		char type[16], dev_ino[64];
		int p;

		if (sscanf(line, "%*s %15s %*s %*s %d %63s", type, &p,
			   dev_ino) == 3 && !strcmp(type, "FLOCK") &&
		    !strcmp(dev_ino, want) && p > 0)
			pid = p;
	}
	fclose(f);
	comm[0] = '\0';
	if (pid) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, len, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return pid;
}

static double lock_timeout_s(void)
{
	const char *s = getenv("SATFEED_LOCK_TIMEOUT");
	char *end;
	double t;

	if (!s || !*s)
		return SF_ROOT_LOCK_TIMEOUT_S;
	t = strtod(s, &end);
	return *end || !(t >= 0 && t <= 86400) ? SF_ROOT_LOCK_TIMEOUT_S : t;
}

int sf_root_lock_why(const char *root, int how, char *why, size_t len)
{
	char parent[PATH_MAX], base[NAME_MAX + 1], name[NAME_MAX + 1];
	char comm[32];
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	struct stat pst, st;
	double waited = 0, limit;
	int dfd, fd, err, pid;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err) {
		snprintf(why, len, "%s: not a usable pin root", root);
		return err;
	}
	if (stat(parent, &pst)) {
		err = -errno;
		if (err == -EACCES || err == -EPERM)
			snprintf(why, len, "%s needs root (CAP_BPF and CAP_SYS_ADMIN): %s: %s",
				 sf_prog, parent, strerror(-err));
		else
			snprintf(why, len, "satfeed is not loaded (no %s: %s; run '%s')",
				 parent, strerror(-err),
				 sf_load_hint(root, name, sizeof(name)));
		return err;
	}
	if (geteuid() != 0) {
		snprintf(why, len, "%s needs root (CAP_BPF and CAP_SYS_ADMIN)",
			 sf_prog);
		return -EACCES;
	}
	dfd = lock_dir(why, len);
	if (dfd < 0)
		return dfd;
	/* one lock per root: the bpffs instance and directory that hold it */
	snprintf(name, sizeof(name), "%llx.%llx.%.200s.lock",
		 (unsigned long long)pst.st_dev,
		 (unsigned long long)pst.st_ino, base);
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "cannot open the lock %s/%s: %s",
			 SF_ROOT_LOCK_DIR, name, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		snprintf(why, len, "the lock %s/%s is not a regular file of root's: remove it",
			 SF_ROOT_LOCK_DIR, name);
		close(fd);
		return -EPERM;
	}
	limit = lock_timeout_s();
	while (flock(fd, how | LOCK_NB)) {
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= limit) {
			err = errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
			pid = lock_holder(st.st_dev, st.st_ino, comm,
					  sizeof(comm));
			if (err == -ETIMEDOUT && pid)
				snprintf(why, len, "%s is locked by pid %d (%s) for %.0f s: gave up (a load or unload may be slow; SATFEED_LOCK_TIMEOUT sets the wait)",
					 root, pid, comm[0] ? comm : "?", waited);
			else if (err == -ETIMEDOUT)
				snprintf(why, len, "%s is locked by another satfeed command for %.0f s: gave up (SATFEED_LOCK_TIMEOUT sets the wait)",
					 root, waited);
			else
				snprintf(why, len, "cannot lock %s: %s", root,
					 strerror(-err));
			close(fd);
			return err;
		}
		nanosleep(&nap, NULL);
		waited += nap.tv_nsec / 1e9;
	}
	return fd;
}

int sf_root_lock(const char *root, int how)
{
	char why[PATH_MAX + 256];

	return sf_root_lock_why(root, how, why, sizeof(why));
}

int sf_lock_exit(int err)
{
	switch (err) {
	case -ENOENT:
		return SF_EXIT_NOT_LOADED;
	case -EACCES:
	case -EPERM:
		return SF_EXIT_PERM;
	default:
		return SF_EXIT_ERROR;
	}
}

int sf_root_swap_path(const char *root, char *buf, size_t len)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	int err, n;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err)
		return err;
	n = snprintf(buf, len, "%s%s%s" SF_ROOT_SWAP_SUFFIX, parent,
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
		if (!strcmp(d->sub, SF_ROOT_SWAP_MARK))
			continue;	/* the swap's own: never carried */
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

/* Retire the swap directory swap of root (sf_root_swap_kind(): debris). */
static int retire_one(const char *root, const char *swap, const char *prog,
		      int *removed, char *why, size_t len)
{
	struct sf_saferoot s, r;
	bool have_root;
	int err;

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
	*removed += s.removed;
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

/* Is base a swap directory's name of the root named rbase? */
static bool swap_name(const char *base, const char *rbase)
{
	size_t n = strlen(rbase), k = strlen(SF_ROOT_SWAP_SUFFIX);

	if (strncmp(base, rbase, n) ||
	    strncmp(base + n, SF_ROOT_SWAP_SUFFIX, k))
		return false;
	return !base[n + k] || base[n + k] == '~';
}

int sf_root_for_each_swap(const char *root,
			  void (*fn)(const char *swap, void *ctx), void *ctx)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	char path[PATH_MAX + NAME_MAX + 2];
	struct dirent *de;
	DIR *dir;
	int err, n = 0;

	err = split(root, parent, sizeof(parent), base, sizeof(base));
	if (err)
		return err;
	dir = opendir(parent);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (!swap_name(de->d_name, base))
			continue;
		snprintf(path, sizeof(path), "%s%s%s", parent,
			 strcmp(parent, "/") ? "/" : "", de->d_name);
		fn(path, ctx);
		n++;
	}
	closedir(dir);
	return n;
}

int sf_root_swap_kind(const char *swap, char *why, size_t len)
{
	struct stat st;
	char mark[PATH_MAX + 16];
	int err;

	if (lstat(swap, &st))
		return errno == ENOENT ? SF_SWAP_NONE : -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len, "%s is %s%s owned by uid %u%s, not made by satfeed: left alone (satfeed swaps through another name while it is there)",
			 swap, S_ISDIR(st.st_mode) ? "a directory" : "not a directory",
			 "", (unsigned int)st.st_uid,
			 st.st_mode & (S_IWGRP | S_IWOTH) ? " writable by others" : "");
		return SF_SWAP_FOREIGN;
	}
	snprintf(mark, sizeof(mark), "%s/%s", swap, SF_ROOT_SWAP_MARK);
	if (!lstat(mark, &st) && S_ISDIR(st.st_mode))
		return SF_SWAP_DEBRIS;
	err = sf_root_complete(swap, why, len);
	if (err)
		return SF_SWAP_DEBRIS;	/* a killed load's, part pinned */
	snprintf(why, len, "%s holds a whole engine that no load or unload left there (a pin root of its own, made by an older satfeed-loader): left alone; unload it with an older satfeed-loader, or remove its pins",
		 swap);
	return SF_SWAP_LIVE;
}

struct retire_ctx {
	const char *root, *prog;
	int *removed;
	char *why;
	size_t len;
	int err;
};

static void retire_cb(const char *swap, void *data)
{
	struct retire_ctx *c = data;
	char why[PATH_MAX + 256];
	int err;

	if (sf_root_swap_kind(swap, why, sizeof(why)) != SF_SWAP_DEBRIS)
		return;
	err = retire_one(c->root, swap, c->prog, c->removed, why, sizeof(why));
	if (err && (!c->err || c->err == -ENOTEMPTY)) {
		c->err = err;
		snprintf(c->why, c->len, "%s", why);
	}
}

int sf_root_retire_swap(const char *root, const char *prog, int *removed,
			char *why, size_t len)
{
	struct retire_ctx c = { root, prog, removed, why, len, 0 };
	int n;

	*removed = 0;
	n = sf_root_for_each_swap(root, retire_cb, &c);
	if (n < 0 && n != -ENOENT) {
		snprintf(why, len, "cannot list the directory of %s: %s", root,
			 strerror(-n));
		return n;
	}
	return c.err;
}

int sf_root_swap_pick(const char *root, char *buf, size_t len)
{
	unsigned int r;
	struct stat st;
	size_t n;
	int err;

	err = sf_root_swap_path(root, buf, len);
	if (err)
		return err;
	if (lstat(buf, &st) && errno == ENOENT)
		return 0;
	/* taken by what satfeed must leave alone: a name nobody can guess */
	n = strlen(buf);
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned int)getpid() ^ (unsigned int)sf_now_mono_ns();
	if (n + 10 > len)
		return -ENAMETOOLONG;
	snprintf(buf + n, len - n, "~%08x", r);
	return 0;
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
