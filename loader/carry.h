/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * carry.h - carry the targets of a pinned engine over to a new one:
 * what `satfeed-loader --replace` does between loading the new engine and
 * swapping it in for the old.
 *
 * Each active target of the old engine is added to the new one through the
 * target protocol (sf_target.h), with its syscalls and saturation rules; its
 * windows start afresh.  Targets whose process exited, and discoveries
 * (which belong to the satfeedctl that runs them), are not carried.  When
 * the old engine's pins cannot be opened under this contract (another ABI),
 * its active targets are still counted, so that the ones dropped are said.
 *
 *	int carried, dropped;
 *
 *	sf_carry_targets("/sys/fs/bpf/satfeed", skel->obj, &carried, &dropped);
 */
#ifndef __SF_CARRY_H
#define __SF_CARRY_H

struct bpf_object;

/*
 * Re-add each active target of the engine pinned at root to the engine of
 * obj (loaded, not pinned yet), with its syscalls.  *carried and *dropped
 * count them; each one dropped is said (sf_msg()).  The caller holds the
 * root lock.
 */
void sf_carry_targets(const char *root, struct bpf_object *obj, int *carried,
		      int *dropped);

#endif /* __SF_CARRY_H */
