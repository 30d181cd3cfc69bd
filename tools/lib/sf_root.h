/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_root.h - a pin root's lifecycle: the lock every satfeed command that
 * changes it takes, the swap directory a load or unload passes through, and
 * sweeping up after one that was killed.
 *
 * The lock is an flock(2) of a file only root can make: SF_ROOT_LOCK_DIR
 * (made 0700 by root, never a symlink) holds one empty file per root, named
 * by the bpffs instance and directory that hold the root and its name.  A
 * bpffs has no regular files, and its root directory is often writable by
 * every user (a plain `mount -t bpf` makes it 1777), so the lock is kept
 * out of it: nobody but root can hold it.  Writers (load, unload, add,
 * remove, rules, check --repair) hold it exclusively for the whole command;
 * readers (show, targets, watch, export, check) take no lock at all (the
 * root is always absent or a whole engine, and a reader checks that every
 * pin it opened is of one engine, sf_pins.h).  Nobody waits forever: after
 * SF_ROOT_LOCK_TIMEOUT_S seconds (SATFEED_LOCK_TIMEOUT in the environment
 * overrides it) the command gives up and names the holder's pid.
 *
 * A load pins everything into PARENT/ROOTNAME~swap (bpffs refuses dots in
 * names), marked as a swap by an empty SF_ROOT_SWAP_MARK directory in it,
 * and renames that over ROOT in one step (an exchange when ROOT exists:
 * bpffs supports RENAME_EXCHANGE), then removes the mark: ROOT is always
 * either absent or a complete, attached engine.  An unload marks ROOT and
 * renames it to the swap name, and unpins it there.  When ROOTNAME~swap is
 * taken by something satfeed did not make (another user's directory), the
 * swap goes through ROOTNAME~swap~XXXXXXXX instead, a name nobody can guess.
 * A swap directory only ever holds something while its maker holds the
 * lock; whoever takes the lock and finds one that is marked, or holds no
 * whole engine, found what a killed command left, which is not live, and
 * retires it: entries that are not satfeed's go (back) to ROOT, satfeed's
 * pins are removed.  One that holds a whole engine and no mark is somebody's
 * live root (an older loader took root names with '~'), and is left alone;
 * root names with '~' are refused.
 */
#ifndef __SF_ROOT_H
#define __SF_ROOT_H

#include <stddef.h>
#include "sf_root_unpin.h"

/* The engine's layout: links first, so removing them detaches it at once. */
#define SF_ENGINE_LAYOUT_LEN 4
extern const struct sf_pin_dir sf_engine_layout[SF_ENGINE_LAYOUT_LEN];

#define SF_ROOT_SWAP_SUFFIX	"~swap"
#define SF_ROOT_SWAP_MARK	"~retire"	/* a directory in a swap */
#define SF_ROOT_LOCK_DIR	"/run/satfeed"
#define SF_ROOT_LOCK_TIMEOUT_S	30

/*
 * Is root a usable pin root name?  Refuses a name with '~' (the swap
 * directories' names).  0, or -errno with a one-line reason in why.
 */
int sf_root_name_check(const char *root, char *why, size_t len);

/*
 * Lock the pin root: flock(how) (LOCK_SH or LOCK_EX) of its lock file,
 * held until the returned fd is closed.  Returns the fd, or -errno with a
 * one-line reason in why: -ENOENT the root's directory does not exist (not
 * loaded), -EACCES not root, -ETIMEDOUT held by another command for longer
 * than the timeout (its pid named), another -errno.
 */
int sf_root_lock_why(const char *root, int how, char *why, size_t len);
int sf_root_lock(const char *root, int how);
/* The exit status (enum sf_exit) of a lock failure err. */
int sf_lock_exit(int err);

/* PARENT/ROOTNAME~swap into buf.  0, or -ENAMETOOLONG. */
int sf_root_swap_path(const char *root, char *buf, size_t len);

/*
 * The swap directory a load or unload should use now (caller holds the lock
 * and retired what was left): PARENT/ROOTNAME~swap, or when something
 * satfeed must leave alone holds that name, ROOTNAME~swap~XXXXXXXX.
 */
int sf_root_swap_pick(const char *root, char *buf, size_t len);

/* What a swap directory of root is (sf_root_swap_kind()). */
enum sf_swap_kind {
	SF_SWAP_NONE = 0,	/* there is none */
	SF_SWAP_DEBRIS = 1,	/* left by a killed load or unload */
	SF_SWAP_FOREIGN = 2,	/* another user's, or not a directory */
	SF_SWAP_LIVE = 3,	/* a whole engine, unmarked: a root */
};
/* why says what it is for FOREIGN and LIVE.  Or -errno. */
int sf_root_swap_kind(const char *swap, char *why, size_t len);

/* fn for each swap directory name of root; the number, or -errno. */
int sf_root_for_each_swap(const char *root,
			  void (*fn)(const char *swap, void *ctx), void *ctx);

/*
 * Retire every swap directory of root that a killed command left (caller
 * holds the lock exclusively; SF_SWAP_DEBRIS only): entries that are not
 * satfeed's are moved into root (or, when there is no root, the directory
 * is renamed back to root with them), then
 * satfeed's pins are removed and the directory with them.  *removed counts
 * the pins removed.  Returns 0 when nothing is left, -ENOTEMPTY when the
 * directory went back to root with foreign entries (each reported on stderr
 * as left in root), another -errno with a reason in why.
 */
int sf_root_retire_swap(const char *root, const char *prog, int *removed,
			char *why, size_t len);

/*
 * Does root hold every pin of a load: each map, and a link for each program?
 * 0 if so, -ENOENT when there is no root, else -EUCLEAN (or another -errno)
 * with what is missing in why.
 */
int sf_root_complete(const char *root, char *why, size_t len);

#endif /* __SF_ROOT_H */
