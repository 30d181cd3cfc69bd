/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_selector.h - which target: a process or a cgroup v2 directory, as a
 * selector; whether it can be watched at all (a cgroup not too deep, a pid
 * that is a live 64-bit process and not one of its threads); and finding
 * the target a selector names in the table.
 *
 * These only read (the filesystem, /proc, the target table): the writes
 * that add and remove targets are sf_target.h's, which includes this.
 * sf_select.h resolves a command line's words into selectors.
 *
 *	struct sf_selector sel = {};
 *
 *	err = sf_selector_cgroup("/sys/fs/cgroup/web", &sel, why, len);
 *	slot = sf_target_find(&pins, &sel, &t);
 */
#ifndef __SF_SELECTOR_H
#define __SF_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include "sf_pins.h"

/*
 * Cgroup depths sf_config can tell apart (it keys on satfeed_target.level
 * % this): a deeper cgroup cannot be watched.
 */
#define SF_CGROUP_LEVELS 64

/* Which target: a process or a cgroup v2 directory. */
struct sf_selector {
	__u32 kind;		/* enum satfeed_target_kind; FREE: none given */
	__u64 id;		/* tgid, or cgroup id (the directory's inode) */
	__u32 level;		/* cgroup: depth below the cgroup2 root */
	char path[96];		/* cgroup: path relative to the cgroup2 mount */
};

/*
 * Select the cgroup v2 directory at path (any spelling: it is resolved): its
 * id, its depth below the cgroup2 mount and its path relative to it.
 * Refused (SF_EXIT_USAGE) when it cannot be watched: 64 or more levels deep,
 * or a relative path longer than the 95 characters a target keeps.
 * Returns an enum sf_exit; on failure *why holds a one-line reason.
 */
int sf_selector_cgroup(const char *path, struct sf_selector *sel, char *why,
		       size_t len);

/*
 * Vet a pid selector for watching: a process, not one of its threads, that
 * runs a 64-bit program and has not begun to exit.  *pidfd is a handle on
 * it whose exit cannot slip past (sf_proc.h), to close after the add; -1
 * for a cgroup, for the caller itself, or on failure.  Returns an enum
 * sf_exit; on failure *why holds a one-line reason.
 */
int sf_selector_open_process(const struct sf_selector *sel, int *pidfd,
			     char *why, size_t len);

/* Is there a process (or thread) with this id? */
bool sf_pid_alive(__u64 pid);

/* Has the target's process exited (or been marked gone by the engine)? */
bool sf_target_gone(const struct satfeed_target *t);

/* Does target t match sel (a FREE selector matches every target)? */
bool sf_target_matches(const struct satfeed_target *t,
		       const struct sf_selector *sel);

/*
 * Slot of the target sel names, with its entry in *t (t may be NULL).
 * -ENOENT when it is not watched, else -errno of a failed read.
 */
int sf_target_find(const struct sf_pins *p, const struct sf_selector *sel,
		   struct satfeed_target *t);

#endif /* __SF_SELECTOR_H */
