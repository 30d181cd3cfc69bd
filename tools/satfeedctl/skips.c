// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the kernel skipped: the engine programs' recursion misses, read
 * once per view, as a warning line and as JSON.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_progstats.h"
#include "satfeedctl.h"

void skips_read(const struct sf_pins *p, struct skips *k)
{
	k->begin_ns = sf_now_mono_ns();
	k->n = sf_prog_stats_read(p->root, k->prog, SF_PROG_STATS_MAX,
				  &k->total);
	k->end_ns = sf_now_mono_ns();
	if (k->n > SF_PROG_STATS_MAX)
		k->n = SF_PROG_STATS_MAX;
	if (k->n < 0)
		return;
	sf_prog_stats_by_stream(k->prog, k->n, k->stream);
	k->resp = 0;
	for (int i = 0; i < k->n; i++)
		if (sf_prog_streams(k->prog[i].name) &
		    (1U << SATFEED_STREAM_SEND | 1U << SATFEED_STREAM_RECV))
			k->resp += k->prog[i].lost;
}

/*
 * One line saying what the kernel skipped, or nothing when it skipped
 * nothing.  Never quiet about a count it could not read.
 */
void skips_warn(FILE *f, const struct sf_pins *p,
		       const struct skips *k, const char *prefix)
{
	__u64 rescued = 0;
	int shown = 0;

	if (k->n < 0) {
		fprintf(f, "%swarning: cannot read the engine's programs under %s/%s: %s; runs the kernel skipped are not known\n",
			prefix, p->root, SATFEED_PIN_PROGS, strerror(-k->n));
		return;
	}
	if (!k->total)
		return;
	for (int i = 0; i < k->n; i++)
		rescued += k->prog[i].rescued;
	fprintf(f, "%swarning: the kernel skipped %llu runs of the engine's programs since load (",
		prefix, (unsigned long long)k->total);
	for (int i = 0; i < k->n; i++) {
		if (!k->prog[i].lost)
			continue;
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", k->prog[i].name,
			(unsigned long long)k->prog[i].lost);
	}
	if (rescued)
		fprintf(f, "; understudies rescued %llu more",
			(unsigned long long)rescued);
	fprintf(f, "): events may be missing from the windows (recursion misses: satfeed-loader check, or bpftool prog show pinned %s/%s/NAME)\n",
		p->root, SATFEED_PIN_PROGS);
}

void json_skips(const struct skips *k)
{
	if (k->n < 0) {
		printf("\"kernel_skipped\":null,");
		return;
	}
	printf("\"kernel_skipped\":{\"total\":%llu,\"read_begin_ns\":%llu,"
	       "\"read_end_ns\":%llu,\"programs\":{",
	       (unsigned long long)k->total, (unsigned long long)k->begin_ns,
	       (unsigned long long)k->end_ns);
	for (int i = 0; i < k->n; i++)
		printf("%s\"%s\":%llu", i ? "," : "", k->prog[i].name,
		       (unsigned long long)k->prog[i].recursion_misses);
	printf("},\"rescued\":{");
	for (int i = 0, shown = 0; i < k->n; i++)
		if (k->prog[i].rescued)
			printf("%s\"%s\":%llu", shown++ ? "," : "",
			       k->prog[i].name,
			       (unsigned long long)k->prog[i].rescued);
	printf("}},");
}
