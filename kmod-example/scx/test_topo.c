// SPDX-License-Identifier: GPL-2.0
/*
 * test_topo.c - host unit test of scx_satfeed's reservation order and
 * sizes (scx_topo.c, the file the scheduler's loader links), on made-up
 * sysfs trees: no topology files, one cache without SMT, and SMT siblings
 * numbered apart over two last-level caches.
 *
 * Prints one "ok N - ..." / "not ok N - ..." line per check and closes with
 * "test_topo: P passed, F failed"; exits non-zero on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_check.h"
#include <sys/stat.h>
#include <unistd.h>

#include "scx_topo.h"

static char root[64];

/* mkdir -p of the file's directory, then the file holding text. */
static int put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	return fclose(f) ? -errno : 0;
}

/* cpuN's siblings and its caches: L1 its own core's, L3 llc's */
static int cpu_topo(int cpu, const char *siblings, const char *llc)
{
	char rel[128];
	int err;

	snprintf(rel, sizeof(rel), "cpu%d/topology/thread_siblings_list", cpu);
	err = put(rel, siblings);
	snprintf(rel, sizeof(rel), "cpu%d/cache/index0/level", cpu);
	err = err ?: put(rel, "1");
	snprintf(rel, sizeof(rel), "cpu%d/cache/index0/shared_cpu_list", cpu);
	err = err ?: put(rel, siblings);
	snprintf(rel, sizeof(rel), "cpu%d/cache/index1/level", cpu);
	err = err ?: put(rel, "3");
	snprintf(rel, sizeof(rel), "cpu%d/cache/index1/shared_cpu_list", cpu);
	return err ?: put(rel, llc);
}

static void list(char *buf, size_t len, const __u8 *v, int n)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < n && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%u", i ? "," : "", v[i]);
}

/* rank, whole and less for n CPUs against the expected lists */
static void expect(const char *what, int n, int max_reserved,
		   const char *want_rank, const char *want_whole,
		   const char *want_less)
{
	__u8 rank[64] = {}, whole[65] = {}, less[65] = {};
	char got[256];

	scx_topo_rank(root, n, max_reserved, rank, whole, less);
	list(got, sizeof(got), rank, n);
	CHECK(!strcmp(got, want_rank), "%s: rank %s (want %s)", what, got,
	      want_rank);
	list(got, sizeof(got), whole, n + 1);
	CHECK(!strcmp(got, want_whole), "%s: whole %s (want %s)", what, got,
	      want_whole);
	list(got, sizeof(got), less, n + 1);
	CHECK(!strcmp(got, want_less), "%s: less %s (want %s)", what, got,
	      want_less);
}

int main(void)
{
	static const char *const smt[8][2] = {
		{ "0,4", "0-1,4-5" }, { "1,5", "0-1,4-5" },
		{ "2,6", "2-3,6-7" }, { "3,7", "2-3,6-7" },
		{ "0,4", "0-1,4-5" }, { "1,5", "0-1,4-5" },
		{ "2,6", "2-3,6-7" }, { "3,7", "2-3,6-7" },
	};
	char cmd[96];
	int err = 0;

	snprintf(root, sizeof(root), "/tmp/test_topo.XXXXXX");
	if (!mkdtemp(root)) {
		perror("test_topo: mkdtemp");
		return 1;
	}

	/* no topology files: every CPU its own core and cache */
	expect("no sysfs", 4, 3, "3,2,1,0", "0,1,2,3,4", "0,0,1,2,3");

	/* one cache, no SMT: the highest-numbered CPUs first */
	for (int c = 0; c < 4 && !err; c++) {
		char sib[8];

		snprintf(sib, sizeof(sib), "%d", c);
		err = cpu_topo(c, sib, "0-3");
	}
	CHECK(!err, "4 CPUs, one cache, no SMT: sysfs tree made (%d)", err);
	expect("4 CPUs, no SMT", 4, 3, "3,2,1,0", "0,1,2,3,4", "0,0,1,2,3");

	/* 8 CPUs: siblings n and n+4, caches {0,1,4,5} and {2,3,6,7} */
	for (int c = 0; c < 8 && !err; c++)
		err = cpu_topo(c, smt[c][0], smt[c][1]);
	CHECK(!err, "8 CPUs, SMT, two caches: sysfs tree made (%d)", err);
	/* cache of CPU 7 first (cores 3 then 2), each core's threads
	 * together; then the other cache (cores 1, 0) */
	expect("8 CPUs, SMT", 8, 6, "7,5,3,1,6,4,2,0",
	       "0,2,2,4,4,6,6,6,8", "0,0,1,2,2,4,4,6,6");
	/* max_reserved 1: half a core rather than nothing (sizes past the
	 * limit are never asked for: rounded down) */
	expect("8 CPUs, SMT, at most 1", 8, 1, "7,5,3,1,6,4,2,0",
	       "0,1,2,2,4,4,6,6,8", "0,0,1,2,2,4,4,6,6");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "test_topo: could not remove %s\n", root);
	printf("test_topo: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
