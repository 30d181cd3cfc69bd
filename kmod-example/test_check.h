/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * test_check.h - the CHECK() of kmod-example's host unit tests
 * (policy/test_policy.c, scx/test_topo.c): one "ok N - ..." or
 * "not ok N - ..." line per check, counted in n_pass / n_fail.
 */
#ifndef __TEST_CHECK_H
#define __TEST_CHECK_H

#include <stdio.h>

static int n_pass, n_fail, n_check;

#define CHECK(cond, ...)						\
	do {								\
		n_check++;						\
		if (cond) {						\
			n_pass++;					\
			printf("ok %d - ", n_check);			\
		} else {						\
			n_fail++;					\
			printf("not ok %d - ", n_check);		\
		}							\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	} while (0)

#endif /* __TEST_CHECK_H */
