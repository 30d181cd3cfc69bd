// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check [--repair]: nothing half done, neither a load or unload killed in
 * its swap directory nor a change of the target table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sf_check.h"
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "satfeedctl.h"

/* A load or unload that was killed left its swap directory. */
static void check_swap(const struct args *a, int *found, int *repaired)
{
	char swap[PATH_MAX], why[PATH_MAX + 256];
	struct stat st;
	int removed, err;

	if (sf_root_swap_path(a->root, swap, sizeof(swap)) ||
	    lstat(swap, &st))
		return;
	(*found)++;
	printf("%s: left by a killed load or unload (nothing in it is live)",
	       swap);
	if (!a->repair) {
		putchar('\n');
		return;
	}
	fflush(stdout);
	err = sf_root_retire_swap(a->root, PROG, &removed, why, sizeof(why));
	if (!err || err == -ENOTEMPTY) {
		(*repaired)++;
		printf("; repaired: removed %d pins\n", removed);
	} else {
		printf("; not repaired: %s\n", why);
	}
}

int cmd_check(struct sf_pins *unused, const struct args *a)
{
	char why[PATH_MAX + 256];
	int lockfd, found = 0, repaired = 0, f = 0, r = 0, err;
	struct sf_pins p;

	lockfd = sf_root_lock(a->root, a->repair ? LOCK_EX : LOCK_SH);
	if (lockfd == -ENOENT)
		return fail(SF_EXIT_NOT_LOADED, "satfeed is not loaded (no %s)",
			    a->root);
	if (lockfd < 0)
		return fail(lockfd == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR,
			    "cannot lock %s: %s", a->root, strerror(-lockfd));
	check_swap(a, &found, &repaired);
	err = sf_root_complete(a->root, why, sizeof(why));
	if (err == -ENOENT && !found) {
		close(lockfd);
		return fail(SF_EXIT_NOT_LOADED, "satfeed is not loaded (no %s)",
			    a->root);
	} else if (err == -ENOENT) {
		/* nothing more to check */
	} else if (err) {
		found++;
		printf("%s; 'satfeed-loader --replace load' puts a whole engine there\n",
		       why);
	} else {
		/* the lock is held already: the pins are opened plainly */
		err = sf_pins_open(&p, a->root, why, sizeof(why));
		if (err) {
			close(lockfd);
			return fail(err, "%s", why);
		}
		err = sf_table_check(&p, a->repair, stdout, &f, &r);
		sf_pins_close(&p);
		if (err)
			printf("cannot check the target table: %s\n",
			       strerror(-err));
		found += f + !!err;
		repaired += r;
	}
	close(lockfd);
	if (!found)
		printf("%s: consistent\n", a->root);
	else
		printf("%s: %d problem%s found, %d repaired\n", a->root, found,
		       found == 1 ? "" : "s", repaired);
	return found == repaired ? SF_EXIT_OK : SF_EXIT_ERROR;
}
