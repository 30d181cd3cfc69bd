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
#include "sf_table.h"
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "satfeedctl.h"

struct swap_check {
	const struct args *a;
	int *found, *debris;
};

/*
 * One swap directory of the root: what a killed load or unload left (and
 * --repair retires), another user's directory, or a whole engine of its own.
 */
static void check_one_swap(const char *swap, void *ctx)
{
	struct swap_check *c = ctx;
	char why[PATH_MAX + 256];
	int kind;

	kind = sf_root_swap_kind(swap, why, sizeof(why));
	if (kind == SF_SWAP_NONE || kind < 0)
		return;
	if (kind != SF_SWAP_DEBRIS) {
		/* not satfeed's, nor in its way: said, not a problem */
		printf("note: %s\n", why);
		return;
	}
	(*c->found)++;
	printf("%s: left by a killed load or unload (nothing in it is live)\n",
	       swap);
	(*c->debris)++;
}

/* The swap directories of the root; --repair retires the debris. */
static void check_swap(const struct args *a, int *found, int *repaired)
{
	int debris = 0, removed, err;
	struct swap_check c = { a, found, &debris };
	char why[PATH_MAX + 256];

	sf_root_for_each_swap(a->root, check_one_swap, &c);
	if (!a->repair || !debris)
		return;
	err = sf_root_retire_swap(a->root, PROG, &removed, why, sizeof(why));
	if (!err || err == -ENOTEMPTY) {
		printf("repaired: removed %d pins of what killed loads or unloads left\n",
		       removed);
		*repaired += debris;
	} else {
		printf("not repaired: %s\n", why);
	}
}

int cmd_check(struct sf_pins *unused, const struct args *a)
{
	char why[PATH_MAX + 256];
	int lockfd, found = 0, repaired = 0, f = 0, r = 0, err;
	struct sf_pins p;

	lockfd = sf_root_lock_why(a->root, a->repair ? LOCK_EX : LOCK_SH, why,
				  sizeof(why));
	if (lockfd < 0)
		return fail(sf_lock_exit(lockfd), "%s", why);
	check_swap(a, &found, &repaired);
	err = sf_root_complete(a->root, why, sizeof(why));
	if (err == -ENOENT && !found) {
		char hint[300];

		close(lockfd);
		return fail(SF_EXIT_NOT_LOADED, "satfeed is not loaded (no %s; run '%s')",
			    a->root, sf_load_hint(a->root, hint, sizeof(hint)));
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
