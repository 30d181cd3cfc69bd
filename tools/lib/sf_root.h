/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_root.h - a pin root's lifecycle: the lock every satfeed command takes,
 * the swap directory a load or unload passes through, and sweeping up after
 * one that was killed.
 *
 * The lock is an flock(2) of the directory that holds the root (the bpffs
 * mount, usually): it exists before the first load and after the last
 * unload, a replace never deletes it, and bpffs has no regular files to use
 * as lock files.  Nothing is created for it, so nothing is left behind and no
 * stale lock file can outlive its holder; roots that share a parent share the
 * lock, which costs nothing but a short wait.  Writers (load, unload, add,
 * remove, check --repair) hold it exclusively, readers (targets, show, check)
 * shared, each for the whole command.
 *
 * A load pins everything into PARENT/ROOTNAME~swap (bpffs refuses dots in
 * names) and renames that over ROOT in one step (an exchange when ROOT
 * exists: bpffs supports RENAME_EXCHANGE), so ROOT is always either absent
 * or a complete, attached engine.  An unload renames ROOT to the swap name
 * and unpins it there.  The swap directory only ever holds something while
 * its maker holds the lock; whoever takes the lock and finds it non-empty
 * found what a killed command left, which is not live, and retires it:
 * entries that are not satfeed's go (back) to ROOT, satfeed's pins are
 * removed.
 */
#ifndef __SF_ROOT_H
#define __SF_ROOT_H

#include <stddef.h>
#include "sf_saferoot.h"

/* The engine's layout: links first, so removing them detaches it at once. */
#define SF_ENGINE_LAYOUT_LEN 3
extern const struct sf_pin_dir sf_engine_layout[SF_ENGINE_LAYOUT_LEN];

/*
 * Lock the pin root: flock(how) (LOCK_SH or LOCK_EX) of its parent
 * directory, held until the returned fd is closed.  Returns the fd or -errno.
 */
int sf_root_lock(const char *root, int how);

/* PARENT/ROOTNAME~swap into buf.  0, or -ENAMETOOLONG. */
int sf_root_swap_path(const char *root, char *buf, size_t len);

/*
 * Retire the swap directory of root, if there is one (caller holds the lock
 * exclusively): entries that are not satfeed's are moved into root (or, when
 * there is no root, the directory is renamed back to root with them), then
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
