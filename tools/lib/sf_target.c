// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_target.c - add and remove satfeed targets: slot choice, generations,
 * stream reset, sf_config rebuild, index entries.  Only the map writes and
 * their order are here; what an add checks before it writes (the selector,
 * the process) is sf_selector.c's, which the readers share.
 *
 * The order of the writes is what keeps the hot path exact and makes every
 * change survive a kill -9 at any point.  A target becomes active with its
 * last write and inactive with its first: an add resets the streams to the
 * new generation, inserts the index entry and writes sf_config before it
 * writes the target; a removal frees the slot before it deletes the index
 * entry and rewrites sf_config.  Whatever a killed change leaves is invisible
 * (an index entry or a config byte that points at a slot that is not
 * active, whose generation moves on when the slot is reused) and the next
 * change sweeps it first (sf_table.h).  The engine never counts an event
 * into another target's windows: they are in another generation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_proc.h"
#include "sf_root.h"
#include "sf_table.h"
#include "sf_target.h"
#include "sat_rules.h"


static void change_end(int lockfd)
{
	if (lockfd >= 0)
		close(lockfd);
}

/*
 * Begin a change of the target table: hold the root lock exclusively (p's
 * own, or one taken here, when p has a root), retire what a killed load or
 * unload left and repair what a killed add or remove left.  *lockfd is the
 * lock to release with change_end(), -1 if none.  Returns an enum sf_exit.
 */
static int change_begin(const struct sf_pins *p, int *lockfd, char *why,
			size_t len)
{
	int removed;

	*lockfd = -1;
	if (!p->root[0])
		return SF_EXIT_OK;	/* a private object: nobody to race with */
	if (p->lock_fd >= 0 && p->lock_how != LOCK_EX) {
		snprintf(why, len, "changing the targets needs the root lock held exclusively");
		return SF_EXIT_ERROR;
	}
	if (p->lock_fd < 0) {
		*lockfd = sf_root_lock_why(p->root, LOCK_EX, why, len);
		if (*lockfd < 0)
			return sf_lock_exit(*lockfd);
		if (!sf_pins_current(p)) {
			snprintf(why, len, "the engine at %s was replaced or unloaded while this command waited; run it again",
				 p->root);
			change_end(*lockfd);
			return SF_EXIT_ERROR;
		}
	}
	/* failures are reported by both, and do not stop this change */
	sf_root_retire_swap(p->root, sf_prog, &removed, why, len);
	sf_table_check(p, true, NULL, NULL, NULL);
	why[0] = '\0';
	return SF_EXIT_OK;
}

/*
 * Free the slot of target *t: the slot first (the hot path stops counting
 * it), then its index entry, then its verdict (to generation 0, which no
 * target has, so nothing the engine still has in flight for it lands
 * there).  Its gen is kept, to count on at reuse.
 */
static int free_slot(const struct sf_pins *p, __u32 slot,
		     struct satfeed_target *t)
{
	__u32 kind = t->kind;

	t->kind = SATFEED_TARGET_FREE;
	if (bpf_map_update_elem(p->targets_fd, &slot, t, 0))
		return -errno;
	sf_index_delete(p, kind, t->id);
	sf_verdict_reset(p, slot, 0);
	return 0;
}

static const char *kind_name(__u32 kind)
{
	return kind == SATFEED_TARGET_PID ? "pid" : "cgroup";
}

/*
 * A free slot for a new target, freeing the slot of one whose process exited
 * when there is no other: such a target keeps its final windows readable
 * only while there is room.  *t is the slot's old entry (its gen counts on).
 */
static int pick_slot(const struct sf_pins *p, struct satfeed_target *t,
		     char *why, size_t len)
{
	int gone_slot = -1, err;

	for (__u32 i = 0; i < p->info.max_targets; i++) {
		err = sf_target_read(p, i, t);
		if (err) {
			snprintf(why, len, "cannot read targets: %s",
				 strerror(-err));
			return -SF_EXIT_ERROR;
		}
		if (t->kind == SATFEED_TARGET_FREE)
			return i;
		if (gone_slot < 0 && sf_target_gone(t))
			gone_slot = i;
	}
	if (gone_slot < 0) {
		snprintf(why, len, "the target table is full (%u targets); remove one first",
			 p->info.max_targets);
		return -SF_EXIT_FULL;
	}
	err = sf_target_read(p, gone_slot, t);
	if (!err)
		err = free_slot(p, gone_slot, t);
	if (err) {
		snprintf(why, len, "cannot free slot %d: %s", gone_slot,
			 strerror(-err));
		return -SF_EXIT_ERROR;
	}
	return gone_slot;
}

static void target_fill(struct satfeed_target *t,
			const struct sf_selector *sel, __u32 gen,
			__u32 sc_mask)
{
	*t = (struct satfeed_target){
		.kind = sel->kind,
		.id = sel->id,
		.gen = gen,
		.sc_mask = sc_mask,
		.added_ns = sf_now_mono_ns(),
	};
	if (sel->kind == SATFEED_TARGET_PID) {
		sf_read_comm(sel->id, t->comm);
	} else {
		snprintf(t->path, sizeof(t->path), "%s", sel->path);
		t->level = sel->level;
	}
}

static int index_insert(const struct sf_pins *p, const struct sf_selector *sel,
			const struct satfeed_index *ix)
{
	__u64 key64 = sel->id;
	__u32 key32 = sel->id;

	if (sel->kind == SATFEED_TARGET_PID)
		return bpf_map_update_elem(p->pid_index_fd, &key32, ix,
					   BPF_NOEXIST) ? -errno : 0;
	return bpf_map_update_elem(p->cgrp_index_fd, &key64, ix,
				   BPF_NOEXIST) ? -errno : 0;
}

/*
 * Fresh rules (rules, NULL: the defaults), streams, verdict and, for a
 * target in discovery, discovery counts in generation gen for slot (any
 * other target's slot holds none: the map is sized by use), the rules and
 * the verdict first: the engine reads them only after a window of the new
 * streams closed.  0, or -errno with *what naming what was not reset.
 */
static int slot_reset(const struct sf_pins *p, __u32 slot, __u32 gen,
		      const struct satfeed_sat_rules *rules, bool discover,
		      const char **what)
{
	int err;

	*what = "the rules";
	err = sf_rules_write(p, slot, gen, rules);
	if (err)
		return err;
	*what = "the verdict";
	err = sf_verdict_reset(p, slot, gen);
	if (err)
		return err;
	*what = "streams";
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		err = sf_stream_reset(p, slot, s, gen);
		if (err)
			return err;
	}
	err = sf_stream_reset(p, slot, SATFEED_STREAM_RESP, gen);
	if (!err)
		err = sf_stream_reset(p, slot, SATFEED_STREAM_SVC, gen);
	if (!err)
		err = sf_svc_hist_reset(p, slot, gen);
	if (err)
		return err;
	*what = "the discovery counts";
	return discover ? sf_discover_reset(p, slot, gen) :
			  sf_discover_drop(p, slot);
}

/*
 * Make slot hold target *t, active only with the last write: its rules, a
 * fresh verdict and fresh streams in its generation (slot_reset()), its index
 * entry, sf_config as the table will be, the target.  On failure what
 * was written is undone.  Returns an enum sf_exit.
 */
static int publish(const struct sf_pins *p, __u32 slot,
		   const struct satfeed_target *t,
		   const struct satfeed_sat_rules *rules,
		   const struct sf_selector *sel, char *why, size_t len)
{
	struct satfeed_target table[SATFEED_MAX_TARGETS] = {};
	struct satfeed_index ix = { .slot = slot, .gen = t->gen,
				    .sc_mask = t->sc_mask };
	const char *what;
	int err;

	err = slot_reset(p, slot, t->gen, rules,
			 t->sc_mask & SATFEED_SC_DISCOVER, &what);
	if (err) {
		snprintf(why, len, "cannot reset %s: %s", what, strerror(-err));
		return SF_EXIT_ERROR;
	}
	err = index_insert(p, sel, &ix);
	if (err) {
		snprintf(why, len, "cannot index the target: %s",
			 strerror(-err));
		return SF_EXIT_ERROR;
	}
	sf_table_read_targets(p, table);
	table[slot] = *t;
	err = sf_config_write(p, table);
	if (err == -E2BIG) {
		snprintf(why, len, "cgroup targets may sit at %d distinct depths at most",
			 SATFEED_MAX_CGROUP_LEVELS);
		err = SF_EXIT_USAGE;
		goto unindex;
	} else if (err) {
		snprintf(why, len, "cannot write the config: %s",
			 strerror(-err));
		err = SF_EXIT_ERROR;
		goto unindex;
	}
	if (bpf_map_update_elem(p->targets_fd, &slot, t, 0)) {
		snprintf(why, len, "cannot write target: %s", strerror(errno));
		err = SF_EXIT_ERROR;
		goto unconfig;
	}
	return SF_EXIT_OK;
unconfig:
	sf_config_rebuild(p);
unindex:
	sf_index_delete(p, sel->kind, sel->id);
	return err;
}

/*
 * Has the target's process begun to exit since it was checked, perhaps
 * before its index entry existed for the engine to see the exit?
 */
static bool exited_meanwhile(const struct sf_selector *sel, int pidfd)
{
	return pidfd >= 0 && sf_proc_exiting(pidfd, sel->id);
}


/* Is the saturated level of a rule above its near one, neither off? */
static bool rule_inverted(__u32 full, __u32 near)
{
	return full != SATFEED_SAT_RULE_OFF && near != SATFEED_SAT_RULE_OFF &&
	       full > near;
}

/* Rules a target can have: an idle_full above idle_near is a mistake. */
static int check_rules(const struct satfeed_sat_rules *rules, char *why,
		       size_t len)
{
	struct satfeed_sat_rules eff;

	const struct {
		const char *name;
		__u32 v, max;
	} range[] = {
		{ "idle-near", rules ? rules->idle_near_permille : 0, SF_RULE_IDLE_MAX },
		{ "idle-full", rules ? rules->idle_full_permille : 0, SF_RULE_IDLE_MAX },
		{ "cv2-rise", rules ? rules->cv2_rise_permille : 0, SF_RULE_CV2_RISE_MAX },
		{ "wps-near", rules ? rules->wps_near_permille : 0, SF_RULE_WPS_MAX },
		{ "wps-full", rules ? rules->wps_full_permille : 0, SF_RULE_WPS_MAX },
		{ "svc-near", rules ? rules->svc_near_permille : 0, SF_RULE_SVC_MAX },
		{ "svc-full", rules ? rules->svc_full_permille : 0, SF_RULE_SVC_MAX },
		{ "drop-near", rules ? rules->drop_near_permille : 0, SF_RULE_DROP_MAX },
		{ "drop-full", rules ? rules->drop_full_permille : 0, SF_RULE_DROP_MAX },
		{ "cpu-near", rules ? rules->cpu_near_permille : 0, SF_RULE_CPU_MAX },
		{ "cpu-full", rules ? rules->cpu_full_permille : 0, SF_RULE_CPU_MAX },
		{ "unread-near", rules ? rules->unread_near_bytes : 0, SF_RULE_UNREAD_MAX },
		{ "unread-full", rules ? rules->unread_full_bytes : 0, SF_RULE_UNREAD_MAX },
	};

	if (!rules)
		return SF_EXIT_OK;
	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		if (range[i].v != SATFEED_SAT_RULE_OFF &&
		    range[i].v > range[i].max) {
			snprintf(why, len, "the %s rule (%u %s) is out of range: 0 (the default) to %u, or off",
				 range[i].name, range[i].v,
				 range[i].max == SF_RULE_UNREAD_MAX ?
					 "bytes" : "permille",
				 range[i].max);
			return SF_EXIT_USAGE;
		}
	}
	satfeed_sat_rules_effective(rules, &eff);
	{
		/* each pair's full must lie beyond its near: below it for
		 * the rules that hold below their value, above for the
		 * others */
		const struct {
			const char *what, *unit;
			__u32 near, full;
			bool below;
		} pair[] = {
			{ "idle share", " permille", eff.idle_near_permille,
			  eff.idle_full_permille, true },
			{ "waits per send", " permille", eff.wps_near_permille,
			  eff.wps_full_permille, true },
			{ "service time", " permille of its baseline",
			  eff.svc_near_permille, eff.svc_full_permille, false },
			{ "drop share", " permille", eff.drop_near_permille,
			  eff.drop_full_permille, false },
			{ "CPU share", " permille", eff.cpu_near_permille,
			  eff.cpu_full_permille, false },
			{ "unread bytes", " bytes", eff.unread_near_bytes,
			  eff.unread_full_bytes, false },
		};

		for (size_t i = 0; i < sizeof(pair) / sizeof(pair[0]); i++) {
			__u32 n = pair[i].near, f = pair[i].full;

			if (pair[i].below ? !rule_inverted(f, n) :
					    !rule_inverted(n, f))
				continue;
			snprintf(why, len, "the saturated %s (%u%s) is %s the near one (%u%s); it must not be",
				 pair[i].what, f, pair[i].unit,
				 pair[i].below ? "above" : "below", n,
				 pair[i].unit);
			return SF_EXIT_USAGE;
		}
	}
	return SF_EXIT_OK;
}

int sf_target_add(const struct sf_pins *p, const struct sf_selector *sel,
		  __u32 sc_mask, int *slot_out, char *why, size_t len)
{
	return sf_target_add_rules(p, sel, sc_mask, NULL, slot_out, why, len);
}

int sf_target_add_rules(const struct sf_pins *p, const struct sf_selector *sel,
			__u32 sc_mask, const struct satfeed_sat_rules *rules,
			int *slot_out, char *why, size_t len)
{
	struct satfeed_target t;
	int lockfd, pidfd, slot, err;

	err = check_rules(rules, why, len);
	if (err)
		return err;
	err = sf_selector_open_process(sel, &pidfd, why, len);
	if (err)
		return err;
	err = change_begin(p, &lockfd, why, len);
	if (err)
		goto close_process;
	slot = sf_target_find(p, sel, &t);
	if (slot >= 0 && sf_target_gone(&t)) {
		/* a pid that exited and came back: a new process, a new slot */
		err = free_slot(p, slot, &t);
		if (err) {
			snprintf(why, len, "cannot free the slot of exited pid %llu: %s",
				 (unsigned long long)sel->id, strerror(-err));
			err = SF_EXIT_ERROR;
			goto unlock;
		}
	} else if (slot >= 0) {
		snprintf(why, len, "%s %llu is already watched",
			 kind_name(sel->kind), (unsigned long long)sel->id);
		err = SF_EXIT_EXISTS;
		goto unlock;
	}
	slot = pick_slot(p, &t, why, len);
	if (slot < 0) {
		err = -slot;
		goto unlock;
	}
	target_fill(&t, sel, t.gen + 1, sc_mask);
	err = publish(p, slot, &t, rules, sel, why, len);
	if (err)
		goto unlock;
	/* the engine marks an exit gone only if the index entry existed */
	if (exited_meanwhile(sel, pidfd)) {
		free_slot(p, slot, &t);
		sf_config_rebuild(p);
		snprintf(why, len, "process %llu exited while being added",
			 (unsigned long long)sel->id);
		err = SF_EXIT_TARGET;
		goto unlock;
	}
	if (slot_out)
		*slot_out = slot;
unlock:
	change_end(lockfd);
close_process:
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

int sf_target_remove(const struct sf_pins *p, const struct sf_selector *sel,
		     int *removed, char *why, size_t len)
{
	struct satfeed_target t;
	int lockfd, slot, err = 0, n = 0;

	*removed = 0;
	err = change_begin(p, &lockfd, why, len);
	if (err)
		return err;
	if (sel->kind == SATFEED_TARGET_FREE) {
		for (__u32 i = 0; i < p->info.max_targets; i++) {
			if (sf_target_read(p, i, &t) ||
			    t.kind == SATFEED_TARGET_FREE)
				continue;
			err = free_slot(p, i, &t) ?: err;
			n++;
		}
	} else {
		slot = sf_target_find(p, sel, &t);
		if (slot < 0) {
			snprintf(why, len, "%s %llu is not watched",
				 kind_name(sel->kind),
				 (unsigned long long)sel->id);
			change_end(lockfd);
			return SF_EXIT_TARGET;
		}
		err = free_slot(p, slot, &t);
		n = 1;
	}
	err = sf_config_rebuild(p) ?: err;
	change_end(lockfd);
	*removed = n;
	if (!err)
		return SF_EXIT_OK;
	snprintf(why, len, "cannot remove: %s", strerror(-err));
	return SF_EXIT_ERROR;
}

/*
 * The rules live in sf_rules, which only user space writes: a change is one
 * map update of the slot's entry, under the root lock that keeps every
 * other writer out, and never a write of sf_targets, whose state the engine
 * owns once the target is active (a target rewritten from an earlier read
 * would undo the engine's gone mark).  The engine reads the rules field by
 * field (READ_ONCE) when a window closes: an evaluation racing with the
 * change judges by the old rules or the new, field by field, the next one
 * by the new.
 */
static const size_t rule_off[SF_RULE_FIELDS] = {
	offsetof(struct satfeed_sat_rules, idle_near_permille),
	offsetof(struct satfeed_sat_rules, idle_full_permille),
	offsetof(struct satfeed_sat_rules, cv2_rise_permille),
	offsetof(struct satfeed_sat_rules, wps_near_permille),
	offsetof(struct satfeed_sat_rules, wps_full_permille),
	offsetof(struct satfeed_sat_rules, svc_near_permille),
	offsetof(struct satfeed_sat_rules, svc_full_permille),
	offsetof(struct satfeed_sat_rules, drop_near_permille),
	offsetof(struct satfeed_sat_rules, drop_full_permille),
	offsetof(struct satfeed_sat_rules, cpu_near_permille),
	offsetof(struct satfeed_sat_rules, cpu_full_permille),
	offsetof(struct satfeed_sat_rules, unread_near_bytes),
	offsetof(struct satfeed_sat_rules, unread_full_bytes),
};

int sf_target_set_rules(const struct sf_pins *p, const struct sf_selector *sel,
			const struct satfeed_sat_rules *rules, __u32 given,
			struct satfeed_sat_rules *now, int *slot_out,
			char *why, size_t len)
{
	struct satfeed_sat_rules cur;
	struct satfeed_target t;
	int lockfd, slot, err;

	err = change_begin(p, &lockfd, why, len);
	if (err)
		return err;
	slot = sf_target_find(p, sel, &t);
	if (slot < 0) {
		snprintf(why, len, "%s %llu is not watched",
			 kind_name(sel->kind), (unsigned long long)sel->id);
		err = SF_EXIT_TARGET;
		goto unlock;
	}
	if (given && sf_target_gone(&t)) {
		snprintf(why, len, "%s %llu is gone (slot %d): its rules judge nothing any more",
			 kind_name(sel->kind), (unsigned long long)sel->id,
			 slot);
		err = SF_EXIT_TARGET;
		goto unlock;
	}
	err = sf_rules_read(p, slot, t.gen, &cur);
	if (err) {
		snprintf(why, len, "cannot read the rules of slot %d: %s",
			 slot, strerror(-err));
		err = SF_EXIT_ERROR;
		goto unlock;
	}
	for (int i = 0; i < SF_RULE_FIELDS; i++)
		if (given & (1U << i))
			memcpy((char *)&cur + rule_off[i],
			       (const char *)rules + rule_off[i], sizeof(__u32));
	if (given) {
		err = check_rules(&cur, why, len);
		if (err)
			goto unlock;
		err = sf_rules_write(p, slot, t.gen, &cur);
		if (err) {
			snprintf(why, len, "cannot write the rules of slot %d: %s",
				 slot, strerror(-err));
			err = SF_EXIT_ERROR;
			goto unlock;
		}
	}
	if (now)
		*now = cur;
	if (slot_out)
		*slot_out = slot;
unlock:
	change_end(lockfd);
	return err;
}
