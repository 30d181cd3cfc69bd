/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_test.h - ASSERT_* checks in the spirit of the BPF selftests: each check
 * says what differed, counts, and the run ends with "N passed, M failed".
 */
#ifndef __SF_TEST_H
#define __SF_TEST_H

#include <stdio.h>

/*
 * One pair of counters per program, however many of its files check: each
 * file's definition is weak and the linker keeps one.
 */
__attribute__((weak)) int sf_tests_passed, sf_tests_failed;

#define ASSERT_TRUE(cond, fmt, ...)					\
	({								\
		int __ok = !!(cond);					\
		if (__ok)						\
			sf_tests_passed++;					\
		else {							\
			sf_tests_failed++;					\
			fprintf(stderr, "FAIL %s:%d: " fmt "\n",	\
				__func__, __LINE__, ##__VA_ARGS__);	\
		}							\
		__ok;							\
	})

#define ASSERT_EQ(got, want, what)					\
	({								\
		unsigned long long __g = (got), __w = (want);		\
		ASSERT_TRUE(__g == __w, "%s: got %llu, want %llu",	\
			    what, __g, __w);				\
	})

#define ASSERT_OK(err, what)						\
	ASSERT_TRUE(!(err), "%s: error %d", what, (int)(err))

static inline int sf_test_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, sf_tests_passed, sf_tests_failed);
	return sf_tests_failed ? 1 : 0;
}

#endif /* __SF_TEST_H */
