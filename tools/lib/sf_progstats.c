// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_progstats.c - recursion misses and run statistics of the pinned engine
 * programs (sf_progstats.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "satfeed.h"
#include "sf_progstats.h"

int sf_prog_stats_fd(int fd, struct sf_prog_stats *st)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_prog_get_info_by_fd(fd, &info, &len))
		return -errno;
	st->id = info.id;
	st->recursion_misses = info.recursion_misses;
	st->run_cnt = info.run_cnt;
	st->run_time_ns = info.run_time_ns;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sf_prog_stats *)a)->name,
		      ((const struct sf_prog_stats *)b)->name);
}

int sf_prog_stats_read(const char *root, struct sf_prog_stats *st, int max,
		       __u64 *misses)
{
	struct sf_prog_stats one;
	char dir[512], path[1024];
	struct dirent *de;
	__u64 sum = 0;
	int n = 0, fd, err = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", root, SATFEED_PIN_PROGS);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			err = -errno;
			break;
		}
		memset(&one, 0, sizeof(one));
		snprintf(one.name, sizeof(one.name), "%s", de->d_name);
		err = sf_prog_stats_fd(fd, &one);
		close(fd);
		if (err)
			break;
		sum += one.recursion_misses;
		if (n < max)
			st[n] = one;
		n++;
	}
	closedir(d);
	if (err)
		return err;
	qsort(st, n < max ? n : max, sizeof(*st), by_name);
	if (misses)
		*misses = sum;
	return n;
}

int sf_rescued_read(int fd, __u64 rescued[SATFEED_NR_HOOKS])
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct satfeed_understudy *v;
	__u32 zero = 0;

	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		err = -errno;
		goto out;
	}
	memset(rescued, 0, SATFEED_NR_HOOKS * sizeof(*rescued));
	for (int cpu = 0; cpu < ncpu; cpu++)
		for (int h = 0; h < SATFEED_NR_HOOKS; h++)
			rescued[h] += v[cpu].rescued[h];
out:
	free(v);
	return err;
}
