/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_selector.h - which target: a process or a cgroup v2 directory, as a
 * selector; whether it can be watched at all (a cgroup not too deep, a pid
 * that is a live 64-bit process and not one of its threads); and finding
 * the target a selector names in the table.
 *
 * These only read (the filesystem, /proc, the target table): the writes
 * that add and remove targets are sf_target.h's, which includes this.
 *
 *	struct sf_selector sel = {};
 *
 *	err = sf_selector_cgroup("/sys/fs/cgroup/web", &sel, why, len);
 *	slot = sf_target_find(&pins, &sel, &t);
 *
 * And naming targets from a command line (sf_select_*()): what its --pid,
 * --cgroup and --slot resolve to, and what a person should know before
 * watching one.
 *
 *	struct sf_selector sel[64];
 *	int n = 0;
 *
 *	err = sf_select_pids("1234 1235", sel, &n, 64, why, len); // pidof
 *	err = sf_select_check(&sel[0], false, why, len);  // kthread, root
 *	sf_select_overlaps(&pins, &sel[0], print_line, NULL);
 *
 * A cgroup that was removed is still named by the path it had, by its id,
 * or by its slot (sf_select_vanished(), sf_select_slot()).
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

/*
 * Append the pids of arg to sel[*n..max): one or more decimal pids
 * separated by spaces, tabs or commas ("$(pidof nginx)").  Returns an enum
 * sf_exit; on failure *why says which word is not a pid.
 */
int sf_select_pids(const char *arg, struct sf_selector *sel, int *n, int max,
		   char *why, size_t len);

/*
 * The gone cgroup target that the removed directory dir was: its path
 * relative to the cgroup2 mount ends dir (the longest such path wins).
 * 0 with sel filled, or -ENOENT.
 */
int sf_select_vanished(const struct sf_pins *p, const char *dir,
		       struct sf_selector *sel);

/* The target in slot, as a selector.  0, -ENOENT (free slot), -ERANGE. */
int sf_select_slot(const struct sf_pins *p, __u32 slot,
		   struct sf_selector *sel);

/*
 * Is sel worth watching?  A kernel thread makes no system calls of its own
 * that satfeed could time, and the root cgroup holds every task of the
 * machine (satfeed's own readers too).  SF_EXIT_USAGE with the reason and
 * the way around it in *why, unless force; SF_EXIT_OK otherwise.
 */
int sf_select_check(const struct sf_selector *sel, bool force, char *why,
		    size_t len);

/*
 * The cgroup v2 directory of process pid, relative to the cgroup2 mount
 * ("/system.slice/nginx.service").  0 or -errno.
 */
int sf_proc_cgroup(__u64 pid, char *buf, size_t len);

/* Where cgroup2 is mounted ("/sys/fs/cgroup"); "" when it is not. */
void sf_cgroup2_mount(char *buf, size_t len);

/*
 * The child processes of pid (of all its threads): up to max of them in
 * kids[], and how many there are in all.
 */
int sf_proc_children(__u64 pid, __u64 *kids, int max);

/*
 * Watched targets whose events the engine would give to only one of sel
 * and them: a process inside a watched cgroup (the engine looks a process
 * up first), a cgroup inside another (the deepest wins).  Calls line() with
 * one sentence per overlap saying which target gets the events; returns
 * how many there are.
 */
int sf_select_overlaps(const struct sf_pins *p, const struct sf_selector *sel,
		       void (*line)(const char *text, void *ctx), void *ctx);

#endif /* __SF_SELECTOR_H */
