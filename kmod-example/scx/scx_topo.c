// SPDX-License-Identifier: GPL-2.0
/*
 * scx_topo.c - scx_satfeed's reservation order and sizes from the CPU
 * topology in sysfs: a reservation takes whole cores of one last-level
 * cache, so that it shares no core (no SMT sibling) with the CPUs left to
 * everything else, and crosses caches only when it must.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scx_topo.h"

#define MAX_CPUS	64

int scx_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* The first CPU number in a sysfs CPU list file ("0-3", "2,6"), or -1. */
static int first_cpu(const char *path)
{
	char buf[64];

	if (scx_read_line(path, buf, sizeof(buf)) || buf[0] < '0' ||
	    buf[0] > '9')
		return -1;
	return atoi(buf);
}

/* The first CPU sharing cpu's last-level cache, or -1: unknown. */
static int llc_of(const char *dir, int cpu)
{
	char path[256], buf[16];
	int best = -1, best_level = 0;

	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d/cache/index%d/level",
			 dir, cpu, i);
		if (scx_read_line(path, buf, sizeof(buf)))
			break;
		if (atoi(buf) < best_level)
			continue;
		snprintf(path, sizeof(path),
			 "%s/cpu%d/cache/index%d/shared_cpu_list", dir, cpu, i);
		best = first_cpu(path);
		best_level = atoi(buf);
	}
	return best;
}

/* Does rank r start a core of its own (not rank r-1's)? */
static bool core_starts(const int *core_at, __u32 r)
{
	return r == 0 || core_at[r] != core_at[r - 1];
}

void scx_topo_rank(const char *dir, __u32 nr_cpus, __u32 max_reserved,
		   __u8 *rank, __u8 *whole, __u8 *less)
{
	int core[MAX_CPUS], llc[MAX_CPUS], core_at[MAX_CPUS + 1];
	bool done[MAX_CPUS] = {};
	char path[256];

	if (nr_cpus > MAX_CPUS)
		nr_cpus = MAX_CPUS;
	for (__u32 i = 0; i < nr_cpus; i++) {
		snprintf(path, sizeof(path),
			 "%s/cpu%u/topology/thread_siblings_list", dir, i);
		core[i] = first_cpu(path);
		if (core[i] < 0)
			core[i] = i;
		llc[i] = llc_of(dir, i);
		if (llc[i] < 0)
			llc[i] = i;
	}
	/* take the highest CPU left, then its cache's cores, each core's
	 * threads one after the other */
	for (__u32 r = 0; r < nr_cpus;) {
		int top = -1;

		for (int i = nr_cpus - 1; i >= 0 && top < 0; i--)
			if (!done[i])
				top = i;
		for (int i = nr_cpus - 1; i >= 0; i--) {
			if (done[i] || llc[i] != llc[top])
				continue;
			for (int j = nr_cpus - 1; j >= 0; j--) {
				if (done[j] || core[j] != core[i])
					continue;
				done[j] = true;
				core_at[r] = core[j];
				rank[j] = r++;
			}
		}
	}
	core_at[nr_cpus] = -1;	/* past the last rank: a new core */
	whole[0] = less[0] = 0;
	for (__u32 n = 1; n <= nr_cpus; n++) {
		__u32 m = n - 1;

		while (m && !core_starts(core_at, m))
			m--;
		less[n] = m ? m : n - 1;
		m = n;

		while (!core_starts(core_at, m))
			m++;
		if (m > max_reserved) {
			m = n;
			while (m && !core_starts(core_at, m))
				m--;
			if (!m)
				m = n;
		}
		whole[n] = m;
	}
}
