// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * carry.c - carry a pinned engine's targets over to a new engine
 * (carry.h): the loader's --replace, through two sets of pins and the
 * target protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "carry.h"
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_target.h"

/*
 * How many targets the engine at root watches, read without its contract:
 * kind and state lead struct satfeed_target in every ABI so far, so this
 * counts an engine of another ABI, whose targets cannot be carried over.
 * -errno when they cannot be counted.
 */
static int count_old_targets(const char *root)
{
	struct bpf_map_info mi = {};
	__u32 ml = sizeof(mi), v[64];
	char path[PATH_MAX];
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/%s", root, SATFEED_PIN_TARGETS);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_map_get_info_by_fd(fd, &mi, &ml) ||
	    mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != sizeof(__u32) ||
	    mi.value_size > sizeof(v) || mi.value_size < 2 * sizeof(__u32)) {
		close(fd);
		return -EPROTO;
	}
	for (__u32 slot = 0; slot < mi.max_entries; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, v) &&
		    v[0] != SATFEED_TARGET_FREE && v[1] == SATFEED_STATE_ACTIVE)
			n++;
	close(fd);
	return n;
}

void sf_carry_targets(const char *root, struct bpf_object *obj, int *carried,
		      int *dropped)
{
	struct sf_pins old, new;
	char why[512];
	int err;

	*carried = *dropped = 0;
	err = sf_pins_open(&old, root, why, sizeof(why));
	if (err) {
		int n = count_old_targets(root);

		if (n > 0)
			*dropped = n;
		if (n >= 0)
			sf_msg("the targets of the engine being replaced cannot be read (%s): %d target%s dropped; add %s again with satfeedctl add",
				why, n, n == 1 ? "" : "s",
				n == 1 ? "it" : "them");
		else
			sf_msg("the targets of the engine being replaced cannot be read (%s): none are carried over; add them again with satfeedctl add",
				why);
		return;
	}
	err = sf_pins_from_object(&new, obj, why, sizeof(why));
	if (err) {
		sf_msg("%s: no targets are carried over", why);
		goto close_old;
	}
	for (__u32 slot = 0; slot < old.info.max_targets; slot++) {
		struct sf_selector sel = {};
		struct satfeed_sat_rules rules;
		struct satfeed_target t;

		if (sf_target_read(&old, slot, &t) ||
		    t.kind == SATFEED_TARGET_FREE)
			continue;
		if (sf_target_gone(&t)) {
			(*dropped)++;	/* its process exited */
			continue;
		}
		/* a discovery belongs to the satfeedctl that runs it, which
		 * removes it from the engine it added it to */
		if (t.sc_mask & SATFEED_SC_DISCOVER)
			continue;
		sel.kind = t.kind;
		sel.id = t.id;
		sel.level = t.level;
		memcpy(sel.path, t.path, sizeof(sel.path));
		/* its rules as the old engine holds them (0: defaults) */
		sf_rules_read(&old, slot, t.gen, &rules);
		err = sf_target_add_rules(&new, &sel, t.sc_mask, &rules,
					  NULL, why, sizeof(why));
		if (err) {
			sf_msg("dropped target %s %llu: %s",
				t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
				(unsigned long long)t.id, why);
			(*dropped)++;
			continue;
		}
		(*carried)++;
	}
	sf_pins_close(&new);
close_old:
	sf_pins_close(&old);
}
