// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_selector.c - a target's selector (sf_selector.h): resolving a cgroup
 * directory, vetting a pid, finding the target a selector names, and
 * resolving and vetting the targets a command line names.  This is
 * everything an add asks before it takes the root lock, and everything a
 * reader (satfeedctl, kmod-example's scheduler) needs to name a target,
 * none of which writes a map; the kill-safe order of the writes is
 * sf_target.c's alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_proc.h"
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

/* task->flags: a kernel thread (include/linux/sched.h) */
#define PF_KTHREAD 0x00200000

int sf_select_pids(const char *arg, struct sf_selector *sel, int *n, int max,
		   char *why, size_t len)
{
	const char *p = arg;
	bool any = false;

	while (*p) {
		char word[32], *end;
		size_t wl = strcspn(p, " \t\n,");
		long v;

		if (!wl) {
			p++;
			continue;
		}
		snprintf(word, sizeof(word), "%.*s", (int)wl, p);
		errno = 0;
		v = strtol(word, &end, 10);
		if (wl >= sizeof(word) || errno || *end || v <= 0 ||
		    v > INT_MAX) {
			snprintf(why, len, "'%.*s' is not a process id", (int)wl,
				 p);
			return SF_EXIT_USAGE;
		}
		if (*n >= max) {
			snprintf(why, len, "at most %d targets at once", max);
			return SF_EXIT_USAGE;
		}
		memset(&sel[*n], 0, sizeof(sel[*n]));
		sel[*n].kind = SATFEED_TARGET_PID;
		sel[*n].id = v;
		(*n)++;
		any = true;
		p += wl;
	}
	if (!any) {
		snprintf(why, len, "'%s' is not a process id (is the process running? pidof printed nothing)",
			 arg);
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

int sf_select_vanished(const struct sf_pins *p, const char *dir,
		       struct sf_selector *sel)
{
	size_t dl = strlen(dir), best = 0;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		size_t tl;

		if (sf_target_read(p, slot, &t) ||
		    t.kind != SATFEED_TARGET_CGROUP || !sf_target_gone(&t))
			continue;
		tl = strnlen(t.path, sizeof(t.path));
		if (tl > best && tl <= dl &&
		    !strncmp(dir + dl - tl, t.path, tl)) {
			best = tl;
			sel->kind = SATFEED_TARGET_CGROUP;
			sel->id = t.id;
		}
	}
	return best ? 0 : -ENOENT;
}

int sf_select_slot(const struct sf_pins *p, __u32 slot,
		   struct sf_selector *sel)
{
	struct satfeed_target t;
	int err;

	if (slot >= p->info.max_targets)
		return -ERANGE;
	err = sf_target_read(p, slot, &t);
	if (err)
		return err;
	if (t.kind == SATFEED_TARGET_FREE)
		return -ENOENT;
	memset(sel, 0, sizeof(*sel));
	sel->kind = t.kind;
	sel->id = t.id;
	sel->level = t.level;
	memcpy(sel->path, t.path, sizeof(sel->path));
	sel->path[sizeof(sel->path) - 1] = '\0';
	return 0;
}

/* flags and comm of process pid from /proc/PID/stat; 0 or -errno */
static int proc_stat(__u64 pid, unsigned long *flags, char *comm, size_t clen)
{
	char path[64], buf[1024], *open, *close;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -EPROTO;
	snprintf(comm, clen, "%.*s", (int)(close - open - 1), open + 1);
	/* state ppid pgrp session tty_nr tpgid flags */
	if (sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %lu", flags) != 1)
		return -EPROTO;
	return 0;
}

int sf_select_check(const struct sf_selector *sel, bool force, char *why,
		    size_t len)
{
	unsigned long flags = 0;
	char comm[64], text[SF_TEXT_ESCAPED_LEN(64)];

	if (force)
		return SF_EXIT_OK;
	if (sel->kind == SATFEED_TARGET_PID &&
	    !proc_stat(sel->id, &flags, comm, sizeof(comm)) &&
	    (flags & PF_KTHREAD)) {
		sf_text_escape(text, sizeof(text), comm, sizeof(comm));
		snprintf(why, len, "pid %llu is a kernel thread (%s): it makes no system calls of a server's to time; --force watches it anyway",
			 (unsigned long long)sel->id, text);
		return SF_EXIT_USAGE;
	}
	if (sel->kind == SATFEED_TARGET_CGROUP && sel->level == 0) {
		snprintf(why, len, "refusing the root cgroup: every task of the machine would count in one target (satfeed's readers too); watch the server's own cgroup, or --force");
		return SF_EXIT_USAGE;
	}
	return SF_EXIT_OK;
}

int sf_proc_cgroup(__u64 pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 16];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/cgroup",
		 (unsigned long long)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* the cgroup v2 line is "0::/path" */
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

void sf_cgroup2_mount(char *buf, size_t len)
{
	char dev[256], dir[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			break;
		}
	}
	fclose(f);
}

int sf_proc_children(__u64 pid, __u64 *kids, int max)
{
	char path[96];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%llu/task",
		 (unsigned long long)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned long long kid;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%llu/task/%.20s/children",
			 (unsigned long long)pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%llu", &kid) == 1) {
			if (n < max)
				kids[n] = kid;
			n++;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Is cgroup path `in` (relative to the mount) at or below `top`? */
static bool path_within(const char *in, const char *top)
{
	size_t tl = strlen(top);

	if (!strcmp(top, "/"))
		return true;
	return !strncmp(in, top, tl) && (in[tl] == '\0' || in[tl] == '/');
}

static void say(void (*line)(const char *, void *), void *ctx,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(void (*line)(const char *, void *), void *ctx,
		const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	line(text, ctx);
}

int sf_select_overlaps(const struct sf_pins *p, const struct sf_selector *sel,
		       void (*line)(const char *text, void *ctx), void *ctx)
{
	char mine[PATH_MAX] = "", theirs[PATH_MAX], esc[SF_TEXT_ESCAPED_LEN(PATH_MAX)];
	char tesc[SF_TEXT_ESCAPED_LEN(96)];
	int n = 0;

	if (sel->kind == SATFEED_TARGET_PID &&
	    sf_proc_cgroup(sel->id, mine, sizeof(mine)))
		return 0;
	if (sel->kind == SATFEED_TARGET_CGROUP)
		snprintf(mine, sizeof(mine), "%s", sel->path);
	sf_text_escape(esc, sizeof(esc), mine, sizeof(mine));
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;

		if (sf_target_read(p, slot, &t) ||
		    t.kind == SATFEED_TARGET_FREE || sf_target_gone(&t) ||
		    (t.kind == sel->kind && t.id == sel->id))
			continue;
		if (t.kind == SATFEED_TARGET_CGROUP) {
			snprintf(theirs, sizeof(theirs), "%.*s",
				 (int)sizeof(t.path), t.path);
			sf_text_escape(tesc, sizeof(tesc), t.path,
				       sizeof(t.path));
		}
		if (sel->kind == SATFEED_TARGET_PID &&
		    t.kind == SATFEED_TARGET_CGROUP &&
		    path_within(mine, theirs)) {
			say(line, ctx, "pid %llu is inside cgroup %s, watched in slot %u: its events will count for pid %llu only, no longer for the cgroup (the engine looks a process up before its cgroups)",
			    (unsigned long long)sel->id, tesc, slot,
			    (unsigned long long)sel->id);
			n++;
		} else if (sel->kind == SATFEED_TARGET_CGROUP &&
			   t.kind == SATFEED_TARGET_PID &&
			   !sf_proc_cgroup(t.id, theirs, sizeof(theirs)) &&
			   path_within(theirs, mine)) {
			say(line, ctx, "pid %llu, watched in slot %u, is inside cgroup %s: its events count for pid %llu only, not for the cgroup (the engine looks a process up before its cgroups)",
			    (unsigned long long)t.id, slot, esc,
			    (unsigned long long)t.id);
			n++;
		} else if (sel->kind == SATFEED_TARGET_CGROUP &&
			   t.kind == SATFEED_TARGET_CGROUP &&
			   path_within(mine, theirs)) {
			say(line, ctx, "cgroup %s is inside cgroup %s, watched in slot %u: events of its tasks will count for %s only, no longer for %s (the deepest watched cgroup wins)",
			    esc, tesc, slot, esc, tesc);
			n++;
		} else if (sel->kind == SATFEED_TARGET_CGROUP &&
			   t.kind == SATFEED_TARGET_CGROUP &&
			   path_within(theirs, mine)) {
			say(line, ctx, "cgroup %s, watched in slot %u, is inside cgroup %s: events of its tasks count for %s only, not for %s (the deepest watched cgroup wins)",
			    tesc, slot, esc, tesc, esc);
			n++;
		}
	}
	return n;
}
