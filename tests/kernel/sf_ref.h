/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_ref.h - reference formulas that the tests hold the engine's window
 * math against, computed the plain way in 128 bits: the unit test
 * (tests/unit/test_window_math.c) and the kernel test that feeds the
 * engine's own programs (tests/kernel/window_feed.c) share them.
 */
#ifndef __SF_REF_H
#define __SF_REF_H

#include <linux/types.h>

typedef unsigned __int128 u128;

/*
 * The share of span that sum is, as the contract defines it (no thread
 * counted: one), at most 1000.
 */
static inline __u32 ref_share(__u64 sum, __u64 start, __u64 end)
{
	u128 q;

	if (end <= start)
		return 0;
	q = (u128)sum * 1000 / (end - start);
	return q > 1000 ? 1000 : (__u32)q;
}

#endif /* __SF_REF_H */
