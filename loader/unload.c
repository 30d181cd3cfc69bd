// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unload.c - `satfeed-loader unload`: under the root lock, rename the root
 * to the swap directory in one step (nobody sees it half unpinned) and
 * remove satfeed's own pins from there, which detaches the engine.  It
 * shares the swap directory with load (swap.c) and nothing else: no BPF
 * object is opened, so it works on an engine of any ABI.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_root.h"
#include "sf_saferoot.h"
#include "loader.h"

int cmd_unload(void)
{
	int err, lockfd, removed = 0;
	struct sf_saferoot root;

	if (sf_root_swap_path(env.root, swap_path, sizeof(swap_path))) {
		sf_msg("%s: path too long", env.root);
		return SF_EXIT_USAGE;
	}
	lockfd = sf_root_lock(env.root, LOCK_EX);
	if (lockfd == -ENOENT) {
		sf_msg("satfeed is not loaded (no %s)", env.root);
		return SF_EXIT_NOT_LOADED;
	}
	if (lockfd < 0) {
		sf_msg("cannot lock %s: %s", env.root, strerror(-lockfd));
		return lockfd == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
	}
	/* what a killed load or unload left: never live, retired first */
	retire_swap(&removed);
	removed = 0;
	err = open_root(&root);
	if (err == -ENOENT) {
		sf_msg("satfeed is not loaded (no %s)", env.root);
		err = SF_EXIT_NOT_LOADED;
		goto unlock;
	}
	if (err) {
		err = err == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto unlock;
	}
	/* gone from ROOT in one step: nobody sees it half unpinned */
	err = renameat2(root.parent_fd, root.base, AT_FDCWD, swap_path,
			RENAME_NOREPLACE) ? -errno : 0;
	sf_saferoot_close(&root);
	if (err) {
		sf_msg("cannot rename %s to %s: %s", env.root, swap_path,
			strerror(-err));
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	err = retire_swap(&removed);
	if (err == -ENOTEMPTY) {
		sf_msg("removed %d pins; %s is left in place with the entries listed above, which satfeed did not pin",
			removed, env.root);
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	if (err) {
		err = err == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR;
		goto unlock;
	}
	printf("satfeed unloaded: removed %d pins from %s\n", removed,
	       env.root);
unlock:
	close(lockfd);
	return err;
}
