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
#include <sys/stat.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_root.h"
#include "sf_root_unpin.h"
#include "loader.h"

int cmd_unload(void)
{
	int err, lockfd, removed = 0;
	struct sf_saferoot root;
	char why[PATH_MAX + 256];

	lockfd = sf_root_lock_why(env.root, LOCK_EX, why, sizeof(why));
	if (lockfd < 0) {
		sf_msg("%s", why);
		return sf_lock_exit(lockfd);
	}
	/* what a killed load or unload left: never live, retired first */
	retire_swap(&removed);
	removed = 0;
	if (sf_root_swap_pick(env.root, swap_path, sizeof(swap_path))) {
		sf_msg("%s: path too long", env.root);
		err = SF_EXIT_USAGE;
		goto unlock;
	}
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
	/* marked as a swap first: if killed after the rename, it is debris */
	if (mkdirat(root.fd, SF_ROOT_SWAP_MARK, 0700) && errno != EEXIST) {
		sf_msg("cannot mark %s for removal: %s", env.root,
			strerror(errno));
		sf_saferoot_close(&root);
		err = SF_EXIT_ERROR;
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
