/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_root_unpin.h - remove satfeed's own pins from a bpffs directory and never
 * anything else.
 *
 * Root tools remove pins on behalf of an operator, in a filesystem that other
 * users may write to (a plain `mount -t bpf` makes its root mode 1777).  A pin
 * directory is therefore trusted only when it is a real directory, not a
 * symlink, on a bpffs, owned by root and writable by nobody else: then nobody
 * but root can have planted anything in it, or swap an entry between the
 * check and the removal.  Entries are examined and removed with fstatat() and
 * unlinkat() relative to directory fds opened with O_NOFOLLOW, so no symlink
 * is ever followed.  An entry is removed only when its name is one the caller
 * owns and it is a bpffs object (a regular file of the same bpffs instance);
 * anything else is reported and left in place, and so is every directory that
 * is not empty afterwards.
 */
#ifndef __SF_ROOT_UNPIN_H
#define __SF_ROOT_UNPIN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sf_saferoot {
	int parent_fd;		/* the directory that holds the root */
	int fd;			/* the root, opened O_NOFOLLOW */
	dev_t dev;		/* the root's bpffs instance */
	const char *prog;	/* prefix of the warnings printed */
	char path[PATH_MAX];	/* the root, for messages */
	char base[NAME_MAX + 1]; /* its last component, in parent_fd */
	int removed;		/* pins removed so far */
	int left;		/* entries reported and left in place */
};

/* One directory of a pin layout and the names a caller owns in it. */
struct sf_pin_dir {
	const char *sub;	/* below the root; NULL: the root itself */
	bool (*ours)(const char *name);
};

/*
 * Open the pin root at path and check that it can be trusted.  Returns 0,
 * -ENOENT when it does not exist (no message), or another -errno with a
 * one-line reason in why.  prog prefixes the warnings of sf_saferoot_unpin().
 */
int sf_saferoot_open(struct sf_saferoot *r, const char *prog,
		     const char *path, char *why, size_t len);
void sf_saferoot_close(struct sf_saferoot *r);

/* Does any directory of the layout hold a name its caller owns? */
bool sf_saferoot_holds(const struct sf_saferoot *r,
		       const struct sf_pin_dir *dirs, size_t nr_dirs);

/*
 * Remove the caller's pins from each directory of the layout, in the order
 * given, then every listed subdirectory and the root itself that are left
 * empty.  Everything else is reported on stderr and left in place (counted in
 * r->left).  Returns 0 when the root is gone, -ENOTEMPTY when it was left in
 * place, another -errno (reported) when a subdirectory cannot be trusted or
 * an entry cannot be removed.  r->removed counts the pins removed.
 */
int sf_saferoot_unpin(struct sf_saferoot *r, const struct sf_pin_dir *dirs,
		      size_t nr_dirs);

/*
 * The names the satfeed engine pins: its maps (directly under the root) and
 * its programs (under progs/ and links/).  The loader pins nothing else, so
 * these are exactly what unload may remove.
 */
bool sf_engine_map_name(const char *name);
bool sf_engine_prog_name(const char *name);

/* The engine's maps, each pinned as ROOT/<name> by every load. */
#define SF_ENGINE_NR_MAPS 15
extern const char *const sf_engine_maps[SF_ENGINE_NR_MAPS];

#endif /* __SF_ROOT_UNPIN_H */
