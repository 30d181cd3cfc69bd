// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_progstats.c - recursion misses and run statistics of the pinned engine
 * programs (sf_progstats.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "satfeed.h"
#include "sf_common.h"
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

/* Is name an understudy (satfeed_syscalls.h): sf_sys_*_u, sf_xu_*, sf_eu_*? */
static bool understudy_name(const char *name)
{
	static const char xu[] = SATFEED_FEXIT_UNDERSTUDY_NAME();
	static const char eu[] = SATFEED_FENTRY_UNDERSTUDY_NAME();

	return !strcmp(name, "sf_sys_enter_u") ||
	       !strcmp(name, "sf_sys_exit_u") ||
	       !strncmp(name, xu, sizeof(xu) - 1) ||
	       !strncmp(name, eu, sizeof(eu) - 1);
}

/* The hook (enum satfeed_hook) of a primary program, or -1. */
static int prog_hook(const char *name)
{
	static const char fexit[] = SATFEED_FEXIT_PROG_NAME();
	static const char fentry[] = SATFEED_FENTRY_PROG_NAME();

	if (!strcmp(name, "sf_sys_enter"))
		return SATFEED_HOOK_SYS_ENTER;
	if (!strcmp(name, "sf_sys_exit"))
		return SATFEED_HOOK_SYS_EXIT;
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++) {
		const char *sc = sf_syscalls[i].name;

		if (!strncmp(name, fexit, sizeof(fexit) - 1) &&
		    !strcmp(name + sizeof(fexit) - 1, sc))
			return SATFEED_HOOK_FEXIT + i;
		if (!strncmp(name, fentry, sizeof(fentry) - 1) &&
		    !strcmp(name + sizeof(fentry) - 1, sc))
			return SATFEED_HOOK_FENTRY + i;
	}
	return -1;
}

/* rescued[] of the engine under root; all 0 where it has no understudies */
static int rescued_of_root(const char *root, __u64 rescued[SATFEED_NR_HOOKS])
{
	char path[1024];
	int fd, err;

	memset(rescued, 0, SATFEED_NR_HOOKS * sizeof(*rescued));
	snprintf(path, sizeof(path), "%s/%s", root, SATFEED_PIN_UNDERSTUDY);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = sf_rescued_read(fd, rescued);
	close(fd);
	return err;
}

int sf_prog_stats_read(const char *root, struct sf_prog_stats *st, int max,
		       __u64 *lost)
{
	__u64 rescued[SATFEED_NR_HOOKS];
	struct sf_prog_stats one;
	char dir[512], path[1024];
	struct dirent *de;
	__u64 sum = 0;
	int n = 0, fd, hook, err = 0;
	DIR *d;

	err = rescued_of_root(root, rescued);
	if (err)
		return err;
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
		hook = prog_hook(one.name);
		if (hook >= 0)
			one.rescued = rescued[hook];
		if (understudy_name(one.name))
			one.lost = 0;
		else if (one.recursion_misses > one.rescued)
			one.lost = one.recursion_misses - one.rescued;
		sum += one.lost;
		if (n < max)
			st[n] = one;
		n++;
	}
	closedir(d);
	if (err)
		return err;
	qsort(st, n < max ? n : max, sizeof(*st), by_name);
	if (lost)
		*lost = sum;
	return n;
}

__u32 sf_prog_streams(const char *name)
{
	static const char fexit[] = SATFEED_FEXIT_PROG_NAME();
	static const char fentry[] = SATFEED_FENTRY_PROG_NAME();
	const __u32 all = (1U << SATFEED_NR_STREAMS) - 1;
	const __u32 poll = 1U << SATFEED_STREAM_POLL;

	if (!strcmp(name, "sf_sys_enter"))
		return poll;
	/* the io_uring programs (bpf/satfeed.bpf.c) */
	if (!strcmp(name, "sf_uring_complete"))
		return 1U << SATFEED_STREAM_SEND | 1U << SATFEED_STREAM_RECV;
	if (!strcmp(name, "sf_uring_submit") ||
	    !strcmp(name, "sf_uring_task_add"))
		return 1U << SATFEED_STREAM_RECV;	/* multishot receives */
	if (!strcmp(name, "sf_uring_enter_e") ||
	    !strcmp(name, "sf_uring_enter_x"))
		return poll;
	if (!strcmp(name, "sf_proc_exit") || !strcmp(name, "sf_cgroup_rmdir") ||
	    !strcmp(name, "sf_conn_close") || understudy_name(name))
		return 0;
	for (int i = 0; i < SATFEED_NR_SYSCALLS; i++) {
		const char *sc = sf_syscalls[i].name;
		size_t n = sizeof(fexit) - 1;

		if (!strncmp(name, fexit, n) && !strcmp(name + n, sc))
			return 1U << sf_syscalls[i].family;
		n = sizeof(fentry) - 1;
		if (!strncmp(name, fentry, n) && !strcmp(name + n, sc) &&
		    sf_syscalls[i].family == SATFEED_STREAM_POLL)
			return poll;
	}
	return all;
}

void sf_prog_stats_by_stream(const struct sf_prog_stats *st, int n,
			     __u64 skipped[SATFEED_NR_STREAMS])
{
	memset(skipped, 0, SATFEED_NR_STREAMS * sizeof(*skipped));
	for (int i = 0; i < n; i++) {
		__u32 streams = sf_prog_streams(st[i].name);

		for (int s = 0; s < SATFEED_NR_STREAMS; s++)
			if (streams & (1U << s))
				skipped[s] += st[i].lost;
	}
}

void sf_skip_log_init(struct sf_skip_log *log, __u64 load_mono_ns)
{
	log->span[0] = (struct sf_skip_span){
		.since_ns = load_mono_ns,
		.until_ns = load_mono_ns,
	};
	log->n = 1;
}

void sf_skip_log_add(struct sf_skip_log *log, __u64 begin_ns, __u64 end_ns,
		     __u64 skipped)
{
	struct sf_skip_span *last = &log->span[log->n - 1];

	/* counts only grow: the same count means none between the two */
	if (last->skipped == skipped) {
		if (begin_ns > last->until_ns)
			last->until_ns = begin_ns;
		return;
	}
	if (log->n == SF_SKIP_LOG_LEN) {
		memmove(log->span, log->span + 1,
			(SF_SKIP_LOG_LEN - 1) * sizeof(log->span[0]));
		log->n--;
	}
	log->span[log->n++] = (struct sf_skip_span){
		.since_ns = end_ns,
		.until_ns = begin_ns,
		.skipped = skipped,
	};
}

enum sf_window_skips sf_skip_log_window(const struct sf_skip_log *log,
					__u64 start_ns, __u64 end_ns)
{
	bool before = false;

	for (unsigned int i = 0; i < log->n; i++) {
		const struct sf_skip_span *sp = &log->span[i];

		if (sp->since_ns <= start_ns && sp->until_ns >= end_ns)
			return SF_SKIPS_NONE;
		before |= sp->since_ns <= start_ns;
		if (before && sp->until_ns >= end_ns)
			return SF_SKIPS_NEAR;
	}
	return SF_SKIPS_UNKNOWN;
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
