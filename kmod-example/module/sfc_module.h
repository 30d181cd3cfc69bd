/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfc_module.h - the module's state, shared by its parts: the pull work and
 * the module's lifetime (sfc_main.c), its BPF interface (sfc_bpf.c: kfuncs,
 * struct_ops) and its sysfs files (sfc_sysfs.c).
 */
#ifndef __SFC_MODULE_H
#define __SFC_MODULE_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "satfeed.h"
#include "satfeed_consumer.h"
#include "sfc_policy.h"

struct sfc_target {
	/* push side, written by the kfunc from any CPU */
	raw_spinlock_t push_lock;		/* raw: pushes may come from any
					 * non-NMI context, also on RT */
	u64 pushed[SATFEED_NR_STREAMS];		/* windows received */
	u64 first_seq[SATFEED_NR_STREAMS];	/* seq of the first one */
	u64 gaps[SATFEED_NR_STREAMS];		/* seq jumps seen */
	struct satfeed_window push_win[SATFEED_NR_STREAMS];

	/* pull side, owned by the work under sfc_mutex */
	bool valid;				/* an active target answered */
	struct sfc_answer pull;
	struct sfc_policy_state pol;
};

extern struct sfc_target sfc_targets[SFC_MAX_SLOTS];

/* sfc_mutex guards sfc_ops and every pull-side field above. */
extern struct mutex sfc_mutex;
extern struct satfeed_consumer_ops *sfc_ops;
extern char sfc_ops_name[16];
/* the quiet bound the policy used at the last pull (stale_ms, or 2 x the
 * engine's max_age_ns), ns; 0 before any */
extern u64 sfc_stale_ns;

/* What the sysfs files of the same names count. */
struct sfc_counters {
	atomic64_t windows_pushed;
	atomic64_t push_rejected;
	atomic64_t pulls;
	atomic64_t pull_errors;
	atomic64_t level_changes;
	atomic64_t attaches;
};

extern struct sfc_counters sfc_count;

/* sfc_bpf.c */
/* The kfuncs and the struct_ops type, from module init.  0 or -errno. */
int sfc_bpf_register(void);
/*
 * Ask ops about slot (under sfc_mutex): 0 with its answer in *out, -ENOENT
 * when the slot holds no active target, -ENODATA when the consumer did not
 * answer, or the consumer's error.
 */
int sfc_query(struct satfeed_consumer_ops *ops, u32 slot,
	      struct sfc_answer *out);

/* sfc_sysfs.c: /sys/kernel/satfeed_consumer/ */
int sfc_sysfs_init(void);
void sfc_sysfs_exit(void);

#endif /* __SFC_MODULE_H */
