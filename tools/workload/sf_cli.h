/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_cli.h - argument parsing and the clock shared by sfserver and sfload.
 * Define SF_CLI_PROG (the program's name) before including.  Bad arguments
 * print one line and exit 2, as both tools document.
 */
#ifndef __SF_CLI_H
#define __SF_CLI_H

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SF_CLI_EXIT_BADARGS 2

static inline void sf_die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, SF_CLI_PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see " SF_CLI_PROG " --help)\n");
	exit(SF_CLI_EXIT_BADARGS);
}

/* A decimal integer in [min, max]; no sign, no suffix. */
static inline unsigned long long sf_parse_ull(const char *opt, const char *s,
					      unsigned long long min,
					      unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	return v;
bad:
	fprintf(stderr,
		SF_CLI_PROG ": invalid %s '%s': expected an integer in [%llu, %llu]\n",
		opt, s, min, max);
	exit(SF_CLI_EXIT_BADARGS);
}

/* A finite number in [min, max]; min itself is excluded when open_min. */
static inline double sf_parse_double(const char *opt, const char *s,
				     double min, bool open_min, double max)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min ||
	    (open_min && v == min) || v > max) {
		fprintf(stderr,
			SF_CLI_PROG ": invalid %s '%s': expected a number in %c%g, %g]\n",
			opt, s, open_min ? '(' : '[', min, max);
		exit(SF_CLI_EXIT_BADARGS);
	}
	return v;
}

static inline unsigned long long sf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#endif /* __SF_CLI_H */
