/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_target.h - the write side of satfeed's consumer contract: watch and
 * unwatch targets.
 *
 * Adding a target is a protocol, not one map update: pick a free slot (or
 * the slot of a target whose process exited), bump its generation, reset its
 * three streams under their locks, insert the index entry, write sf_config's
 * tgid -> slot table and cgroup levels, and only then the target, which
 * makes it active; then check that the process did not begin to exit before
 * the engine could see it, and undo the add if it did.  Every writer holds
 * the root lock (sf_root.h) so that two of them never pick the same slot,
 * and first repairs what a killed one left (sf_table.h).
 *
 *	struct sf_selector sel = { .kind = SATFEED_TARGET_PID, .id = pid };
 *	int slot, err;
 *
 *	err = sf_target_add(&pins, &sel, SATFEED_SC_ALL, &slot, why, len);
 *
 * A program that writes another object's copy of the tables (a benchmark's
 * probe programs) builds the config the same way with sf_config_build().
 * The selector, and the checks an add makes before it writes, are
 * sf_selector.h's.
 */
#ifndef __SF_TARGET_H
#define __SF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include "sf_pins.h"
#include "sf_selector.h"
#include "sf_table.h"

/*
 * Watch sel, counting the syscalls of sc_mask (bits of enum satfeed_syscall).
 * A process must be alive, not a zombie, and stay so until it is indexed.
 * Takes the root lock when p has a root and does not hold it already (then
 * fails if the engine was replaced meanwhile).  Returns an enum sf_exit; on
 * success *slot is the target's slot, on failure nothing is left half done
 * and *why holds a one-line reason.
 */
int sf_target_add(const struct sf_pins *p, const struct sf_selector *sel,
		  __u32 sc_mask, int *slot, char *why, size_t len);

/*
 * The same with saturation rules (sf_rules of its slot, stored as given:
 * a zero field takes its SATFEED_SAT_*_DEFAULT in the engine; NULL: all
 * defaults).  Refused (SF_EXIT_USAGE) when idle_full is above idle_near
 * or wps_full above wps_near (neither off), which would make saturated the
 * milder state.
 */
int sf_target_add_rules(const struct sf_pins *p, const struct sf_selector *sel,
			__u32 sc_mask, const struct satfeed_sat_rules *rules,
			int *slot, char *why, size_t len);

/*
 * Change the saturation rules of the watched target sel in place.  given
 * says which fields of rules to take: bit i is the i-th __u32 of struct
 * satfeed_sat_rules (SF_RULE_* below); the others keep their value.  With
 * given 0 nothing is written: *now is what is stored.  The engine judges by
 * them from the next window that closes; the verdict's state, its smoothed
 * figures and its count of changes stay.  Refused as sf_target_add_rules()
 * refuses, and for a gone target.  Locks as sf_target_add() does.  Returns
 * an enum sf_exit; on success *now holds the stored rules (0: default) and
 * *slot the target's slot (either may be NULL).
 */
enum {
	SF_RULE_IDLE_NEAR = 1U << 0,
	SF_RULE_IDLE_FULL = 1U << 1,
	SF_RULE_CV2_RISE = 1U << 2,
	SF_RULE_WPS_NEAR = 1U << 3,
	SF_RULE_WPS_FULL = 1U << 4,
	SF_RULE_SVC_NEAR = 1U << 5,
	SF_RULE_SVC_FULL = 1U << 6,
	SF_RULE_DROP_NEAR = 1U << 7,
	SF_RULE_DROP_FULL = 1U << 8,
	SF_RULE_CPU_NEAR = 1U << 9,
	SF_RULE_CPU_FULL = 1U << 10,
	SF_RULE_UNREAD_NEAR = 1U << 11,
	SF_RULE_UNREAD_FULL = 1U << 12,
};
#define SF_RULE_FIELDS 13
/* the largest value of each rule, permille (satfeedctl refuses more) */
#define SF_RULE_WPS_MAX		1000
#define SF_RULE_IDLE_MAX	100000
#define SF_RULE_CV2_RISE_MAX	100000
#define SF_RULE_SVC_MAX		1000000
#define SF_RULE_DROP_MAX	1000
#define SF_RULE_CPU_MAX		1000
#define SF_RULE_UNREAD_MAX	(1U << 30)	/* bytes, not permille */
int sf_target_set_rules(const struct sf_pins *p, const struct sf_selector *sel,
			const struct satfeed_sat_rules *rules, __u32 given,
			struct satfeed_sat_rules *now, int *slot,
			char *why, size_t len);

/*
 * Stop watching sel, or every target when sel->kind is FREE.  Locks as
 * sf_target_add() does.  Returns an enum sf_exit; *removed counts the
 * targets removed.
 */
int sf_target_remove(const struct sf_pins *p, const struct sf_selector *sel,
		     int *removed, char *why, size_t len);

#endif /* __SF_TARGET_H */
