// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The target table: add and remove (the target protocol of libsatfeed's
 * sf_target), and the list of watched targets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "satfeedctl.h"

/*
 * The gone cgroup target that the removed directory dir was: its path
 * relative to the cgroup2 mount ends dir (the longest such path wins).
 */
static int find_vanished(struct sf_pins *p, const char *dir,
			 struct sf_selector *sel)
{
	size_t dl = strlen(dir), best = 0;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		size_t tl;

		if (sf_target_read(p, slot, &t) ||
		    t.kind != SATFEED_TARGET_CGROUP || !sf_target_gone(&t))
			continue;
		tl = strnlen(t.path, sizeof(t.path));
		if (tl > best && tl <= dl &&
		    !strncmp(dir + dl - tl, t.path, tl)) {
			best = tl;
			sel->id = t.id;
		}
	}
	return best ? 0 : -ENOENT;
}

/* ---- changing the target table ---- */

int cmd_add(struct sf_pins *p, const struct args *a)
{
	char why[512];
	int slot, err;

	err = sf_target_add(p, &a->sel, a->sc_mask, &slot, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	printf("watching %s %s%llu in slot %d\n",
	       a->sel.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       a->sel.kind == SATFEED_TARGET_PID ? "" : "id ",
	       (unsigned long long)a->sel.id, slot);
	return SF_EXIT_OK;
}

int cmd_remove(struct sf_pins *p, const struct args *a)
{
	const struct sf_selector every = {};
	struct sf_selector sel = a->sel;
	char why[512];
	int n, err;

	if (a->vanished && !a->all && find_vanished(p, a->vanished, &sel))
		return fail(SF_EXIT_TARGET, "%s: no such directory, and no removed cgroup was watched there",
			    a->vanished);
	err = sf_target_remove(p, a->all ? &every : &sel, &n, why,
			       sizeof(why));
	if (err)
		return fail(err, "%s", why);
	printf("removed %d target%s\n", n, n == 1 ? "" : "s");
	return SF_EXIT_OK;
}

/* ---- listing the target table ---- */

int cmd_targets(struct sf_pins *p, const struct args *a)
{
	bool json = a->json, first = true;

	if (json)
		printf("{\"targets\":[");
	else
		printf("%-5s %-7s %-20s %-16s %-7s %s\n", "SLOT", "KIND", "ID",
		       "NAME", "STATE", "SYSCALLS");
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		char mask[SF_MASK_TEXT_LEN], name[SF_TEXT_ESCAPED_LEN(sizeof(t.path))];

		if (sf_target_read(p, slot, &t))
			return fail(SF_EXIT_ERROR, "cannot read targets: %s",
				    strerror(errno));
		if (t.kind == SATFEED_TARGET_FREE)
			continue;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(slot, &t);
			putchar('}');
			continue;
		}
		sf_format_syscalls(t.sc_mask, mask, sizeof(mask));
		printf("%-5u %-7s %-20llu %-16s %-7s %s\n", slot,
		       t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
		       (unsigned long long)t.id,
		       t.kind == SATFEED_TARGET_PID ?
			       text_str(name, sizeof(name), t.comm,
					sizeof(t.comm)) :
			       text_str(name, sizeof(name), t.path,
					sizeof(t.path)),
		       sf_target_gone(&t) ? "gone" : "active", mask);
	}
	if (json)
		printf("]}\n");
	return SF_EXIT_OK;
}
