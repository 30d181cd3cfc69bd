// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_selector.c - a target's selector (sf_selector.h): resolving a cgroup
 * directory, vetting a pid, finding the target a selector names.  This is
 * everything an add asks before it takes the root lock, and everything a
 * reader (satfeedctl, kmod-example's scheduler) needs to name a target,
 * none of which writes a map; the kill-safe order of the writes is
 * sf_target.c's alone.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "sf_common.h"
#include "sf_proc.h"
#include "sf_select.h"
#include "sf_selector.h"

/* Room for a cgroup's path in its target entry, with the terminating NUL. */
#define PATH_ROOM sizeof(((struct satfeed_target *)0)->path)

static int cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 cgid;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.cgid;
	return 0;
}

/*
 * Can the engine watch the cgroup at this depth, and the target keep its
 * path (relative to the cgroup2 mount) whole?  The config tells
 * SF_CGROUP_LEVELS depths apart and satfeed_target.path holds 95 characters.
 */
static int cgroup_watchable(const char *arg, int level, const char *rel,
			    char *why, size_t len)
{
	size_t n = strlen(rel);

	if (level >= SF_CGROUP_LEVELS) {
		snprintf(why, len, "%s is %d levels below the cgroup2 root; satfeed watches cgroups up to depth %d",
			 arg, level, SF_CGROUP_LEVELS - 1);
		return SF_EXIT_USAGE;
	}
	if (n >= PATH_ROOM) {
		snprintf(why, len, "%s: its path below the cgroup2 mount is %zu characters; satfeed keeps at most %zu",
			 arg, n, PATH_ROOM - 1);
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

int sf_selector_cgroup(const char *arg, struct sf_selector *sel, char *why,
		       size_t len)
{
	char real[PATH_MAX], up[PATH_MAX], *slash;
	struct statfs sfs;
	struct stat st;
	int level = 0, err;

	char mnt[PATH_MAX / 2], where[PATH_MAX];

	/* a hybrid host mounts cgroup v2 elsewhere (/sys/fs/cgroup/unified) */
	sf_cgroup2_mount(mnt, sizeof(mnt));
	if (mnt[0])
		snprintf(where, sizeof(where), "cgroup v2 is mounted at %s: the directory must be under it",
			 mnt);
	else
		snprintf(where, sizeof(where), "no cgroup v2 is mounted (mount -t cgroup2 none DIR)");
	if (!realpath(arg, real)) {
		snprintf(why, len, "%s: %s; %s", arg, strerror(errno), where);
		return SF_EXIT_TARGET;
	}
	if (stat(real, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, len, "%s is not a directory; %s", arg, where);
		return SF_EXIT_USAGE;
	}
	if (statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(why, len, "%s is not a cgroup v2 directory; %s", arg,
			 where);
		return SF_EXIT_USAGE;
	}
	/* depth: walk up while the parent is still the same cgroup2 mount */
	snprintf(up, sizeof(up), "%s", real);
	while ((slash = strrchr(up, '/')) && slash != up) {
		struct stat pst;

		*slash = '\0';
		if (statfs(up, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
		    stat(up, &pst) || pst.st_dev != st.st_dev)
			break;
		level++;
	}
	/* the part below the mount point: the last `level` components */
	slash = real + strlen(real);
	for (int i = 0; i < level && slash > real; i++)
		while (--slash > real && *slash != '/')
			;
	err = cgroup_watchable(arg, level, level ? slash : "/", why, len);
	if (err)
		return err;
	err = cgroup_id(real, &sel->id);
	if (err) {
		snprintf(why, len, "cannot get the cgroup id of %s: %s", arg,
			 strerror(-err));
		return SF_EXIT_ERROR;
	}
	sel->kind = SATFEED_TARGET_CGROUP;
	sel->level = level;
	snprintf(sel->path, sizeof(sel->path), "%s", level ? slash : "/");
	return SF_EXIT_OK;
}

bool sf_pid_alive(__u64 pid)
{
	return !kill((pid_t)pid, 0) || errno == EPERM;
}

bool sf_target_gone(const struct satfeed_target *t)
{
	if (t->state == SATFEED_STATE_GONE)
		return true;
	return t->kind == SATFEED_TARGET_PID && !sf_pid_alive(t->id);
}

bool sf_target_matches(const struct satfeed_target *t,
		       const struct sf_selector *sel)
{
	return sel->kind == SATFEED_TARGET_FREE ||
	       (t->kind == sel->kind && t->id == sel->id);
}

int sf_target_find(const struct sf_pins *p, const struct sf_selector *sel,
		   struct satfeed_target *out)
{
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		int err = sf_target_read(p, slot, &t);

		if (err)
			return err;
		if (t.kind != SATFEED_TARGET_FREE && sel->kind &&
		    sf_target_matches(&t, sel)) {
			if (out)
				*out = t;
			return slot;
		}
	}
	return -ENOENT;
}

/* A pid target must be a process, not one of its threads. */
static int check_tgid(__u64 pid, char *why, size_t len)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/status",
		 (unsigned long long)pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(why, len, "no process with pid %llu",
			 (unsigned long long)pid);
		return SF_EXIT_TARGET;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	if (tgid != (long)pid) {
		snprintf(why, len, "%llu is a thread of process %ld; watch %ld",
			 (unsigned long long)pid, tgid, tgid);
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

/*
 * The engine counts 64-bit system calls only: a 32-bit program's calls are
 * numbered from the ia32 table and skipped (satfeed_engine.bpf.h).  A
 * process whose program cannot be read (a kernel thread) passes.
 */
static int check_native(__u64 pid, char *why, size_t len)
{
	unsigned char ident[EI_NIDENT];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%llu/exe", (unsigned long long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return SF_EXIT_OK;
	n = read(fd, ident, sizeof(ident));
	close(fd);
	if (n == EI_NIDENT && !memcmp(ident, ELFMAG, SELFMAG) &&
	    ident[EI_CLASS] != ELFCLASS64) {
		snprintf(why, len, "process %llu runs a 32-bit program; satfeed counts 64-bit system calls only",
			 (unsigned long long)pid);
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

int sf_selector_open_process(const struct sf_selector *sel, int *pidfd,
			     char *why, size_t len)
{
	int err;

	*pidfd = -1;
	if (sel->kind != SATFEED_TARGET_PID)
		return SF_EXIT_OK;
	err = check_tgid(sel->id, why, len) ?:
	      check_native(sel->id, why, len);
	if (err)
		return err;
	/* one that adds itself is alive, and its poll() on a pidfd would count */
	if (sel->id == (__u64)getpid())
		return SF_EXIT_OK;
	*pidfd = sf_proc_open(sel->id);
	if (*pidfd == -ESRCH || *pidfd == -EINVAL ||
	    (*pidfd >= 0 && sf_proc_exiting(*pidfd, sel->id))) {
		snprintf(why, len, "process %llu has exited",
			 (unsigned long long)sel->id);
		err = SF_EXIT_TARGET;
	} else if (*pidfd < 0) {
		snprintf(why, len, "cannot open process %llu: %s",
			 (unsigned long long)sel->id, strerror(-*pidfd));
		err = SF_EXIT_ERROR;
	}
	if (err && *pidfd >= 0)
		close(*pidfd);
	if (err)
		*pidfd = -1;
	return err;
}
