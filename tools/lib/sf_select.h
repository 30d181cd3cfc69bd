/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_select.h - naming targets: what a command line's --pid, --cgroup and
 * --slot resolve to, and what a person should know before watching one.
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
#ifndef __SF_SELECT_H
#define __SF_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include "sf_pins.h"
#include "sf_target.h"

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

#endif /* __SF_SELECT_H */
