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

#endif /* SATFEEDCTL_DISCOVER_H */
