/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * discover.h - what discover (discover.c: the run, its report) and the
 * recommendation (recommend.c: which members to watch) share.
 *
 * A source is a syscall of the list or, from SATFEED_SRC_URING_FIRST on, an
 * io_uring op: everything goes through src_name() and src_family(), so
 * another kind of source is one more case there.
 */
#ifndef SATFEEDCTL_DISCOVER_H
#define SATFEEDCTL_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "sf_pins.h"
#include "satfeedctl.h"

/* The sets recommended per family, and why */
struct recommend {
	__u32 mask[SATFEED_NR_STREAMS];	/* chosen members per family */
	__u64 count[SATFEED_NR_STREAMS]; /* their samples in the period */
	char why[SATFEED_NR_STREAMS][512];
	bool seen;			/* any traced call at all */
};

/* the name of a source, NULL when it has none */
const char *src_name(__u32 src);
/* its family, -1 for none */
int src_family(__u32 src);
/* it was called at all */
bool src_seen(const struct satfeed_discover_count *c);

void recommend(const struct satfeed_discover *d, struct recommend *r);
/* "satfeedctl [--bpffs ROOT] add --pid N --send ... " */
void add_line(char *buf, size_t len, const struct args *a,
	      const struct recommend *r);
/* The recommended sc_mask: a family with no choice keeps every member. */
__u32 recommended_mask(const struct recommend *r);

/* ---- a master and its workers (master.c) ---- */

#define MAX_WORKERS 16

/* What to watch after a discovery */
enum watch_what {
	WATCH_ASKED,	/* the target asked for */
	WATCH_CGROUP,	/* the master's own cgroup: its workers do the I/O */
	WATCH_WORKERS,	/* the workers (and the master if it did I/O) */
};

/*
 * One discovery: the target asked for in sel[0] and, for a process with
 * children, its workers (up to MAX_WORKERS) in sel[1..n), each a target
 * in discovery at once; their counts, summed in sum; what to watch.
 */
struct discovery {
	int n;
	int nr_children;		/* children in all (may be > n - 1) */
	struct sf_selector sel[1 + MAX_WORKERS];
	int slot[1 + MAX_WORKERS];	/* -1: not discovered */
	struct satfeed_target t[1 + MAX_WORKERS];
	struct satfeed_discover d[1 + MAX_WORKERS];
	struct satfeed_discover sum;
	enum watch_what watch;
	char cgroup[512];		/* the master's own cgroup, or "" */
	struct args add;		/* the command line that watches it */
};

/*
 * Does pid's cgroup hold pid and its descendants only (not the root)?
 * Then its full path is in path.
 */
bool master_own_cgroup(__u64 pid, char *path, size_t len);
/* sel[0]'s child processes into sel[1..], when it has any */
void master_add_workers(struct discovery *dv);
/* what to watch, and dv->add for it; an enum sf_exit */
int master_choose(const struct args *a, struct discovery *dv);
/* the workers and the choice, in lines of text (nothing without workers) */
void master_say(const struct discovery *dv, FILE *f);
/* "workers":[...],"watch":"..." */
void master_json(const struct discovery *dv);
/* a source counted at all */
bool master_seen(const struct satfeed_discover *d);

#endif /* SATFEEDCTL_DISCOVER_H */
