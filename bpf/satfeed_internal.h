/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_internal.h - engine-private types that the generated skeleton
 * names, so user space that includes the skeleton needs them too.  Not part
 * of the consumer contract (satfeed.h).
 */
#ifndef __SATFEED_INTERNAL_H
#define __SATFEED_INTERNAL_H

/* Test hook input (tests/kernel/test_kernel.c writes it through the skeleton). */
struct sf_test_in {
	__u32 slot;
	__u32 stream;
	__u32 gen;
	__u32 raw;		/* 1: value is a sample; 0: value is a time */
	__u64 value;
};

#endif /* __SATFEED_INTERNAL_H */
