/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_table.h - the target table's derived entries (sf_config, the index),
 * its invariants, and the repair of what a killed add or remove (or one of
 * an older satfeed) left behind.
 *
 * An active target has its index entry (same slot, generation and syscall
 * mask), its streams in its generation and its byte in sf_config, and a pid
 * target's process has not exited (the engine marks an exit only for an
 * indexed pid).  A target in discovery (SATFEED_SC_DISCOVER) has its
 * satfeedctl, the owner its discovery counts name, still running: that
 * removes it on every way out but SIGKILL.  Every index entry belongs to an
 * active target, and sf_config is the one its targets make.  The protocol of sf_target.c
 * keeps a killed change invisible, but it can leave index entries and config
 * bytes that point at no active target; every change repairs those first.
 */
#ifndef __SF_TABLE_H
#define __SF_TABLE_H

#include <stdbool.h>
#include <stdio.h>
#include "sf_pins.h"

/*
 * sf_config for the targets t[0..n) (t[i] is slot i; FREE slots are
 * skipped).  -E2BIG when cgroup targets sit at more distinct depths than
 * SATFEED_MAX_CGROUP_LEVELS, else 0.
 */
int sf_config_build(const struct satfeed_target *t, __u32 n,
		    struct satfeed_config *cfg);

/* Rebuild sf_config from sf_targets (caller holds the root lock). */
int sf_config_rebuild(const struct sf_pins *p);

/* Delete the index entry of target (kind, id).  0 or -errno. */
int sf_index_delete(const struct sf_pins *p, __u32 kind, __u64 id);

/* The whole table into t, FREE where a slot cannot be read. */
void sf_table_read_targets(const struct sf_pins *p, struct satfeed_target *t);

/* Write the sf_config that table t makes.  0 or -errno (-E2BIG as above). */
int sf_config_write(const struct sf_pins *p, const struct satfeed_target *t);

/*
 * Check the table of p; with repair, put each problem right (the caller
 * holds the root lock exclusively).  Each problem is described on out (one
 * line, NULL: silent).  *found and *repaired (either may be NULL) count
 * them.  Returns 0, or -errno when the maps cannot be read or written.
 */
int sf_table_check(const struct sf_pins *p, bool repair, FILE *out,
		   int *found, int *repaired);

#endif /* __SF_TABLE_H */
