// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * check.c - `satfeed-loader check`: what the running kernel supports (BTF,
 * bpffs, the preemption model), which attach mode a load would use, and for
 * an engine pinned under ROOT the runs of its programs the kernel skipped.
 * It pins nothing and takes no lock; it starts each mode's engine as load
 * would (engine.c) and destroys it, which is all it shares with load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_engine.h"
#include "sf_preempt.h"
#include "sf_progstats.h"
#include "loader.h"
#include "satfeed.skel.h"

/*
 * The runs of each pinned program the kernel skipped since load; the total
 * counts those no understudy rescued (their events may be missing).
 */
static void check_skips(void)
{
	struct sf_prog_stats st[SF_PROG_STATS_MAX];
	__u64 total;
	int n;

	n = sf_prog_stats_read(env.root, st, SF_PROG_STATS_MAX, &total);
	if (n < 0) {
		printf("skipped runs:  unknown (%s/%s: %s)\n", env.root,
		       SATFEED_PIN_PROGS, strerror(-n));
		return;
	}
	printf("skipped runs:  %llu since load (recursion misses)%s\n",
	       (unsigned long long)total,
	       total ? ": events may be missing from the windows" : "");
	for (int i = 0; i < n && i < SF_PROG_STATS_MAX; i++) {
		printf("  %-20s %llu", st[i].name,
		       (unsigned long long)st[i].recursion_misses);
		if (st[i].rescued)
			printf(" (%llu rescued)",
			       (unsigned long long)st[i].rescued);
		putchar('\n');
	}
}

int cmd_check(void)
{
	char why[512], uwhy[512];
	struct sf_preempt pre;
	struct utsname u;
	struct stat st;
	__u32 chosen = 0;
	bool pinned;
	int fs;

	uname(&u);
	printf("kernel:        %s %s\n", u.release, u.machine);
	printf("btf:           %s\n",
	       have_btf(why, sizeof(why)) ? "yes" : why);
	fs = sf_is_bpffs("/sys/fs/bpf");
	printf("bpffs:         %s\n", fs == 1 ? "mounted at /sys/fs/bpf" :
			       "not mounted (load mounts it)");
	pinned = !lstat(env.root, &st);
	if (!pinned && errno != ENOENT)
		printf("pinned at %s: unknown (%s%s)\n", env.root,
		       strerror(errno), errno == EACCES || errno == EPERM ?
		       "; reading it needs root (CAP_BPF and CAP_SYS_ADMIN)" : "");
	else
		printf("pinned at %s: %s\n", env.root, pinned ? "yes" : "no");
	if (geteuid()) {
		printf("attach modes:  unknown (probing them needs root: CAP_BPF and CAP_SYS_ADMIN)\n");
		return SF_EXIT_PERM;
	}
	sf_preempt_probe(&pre, env.btf);
	printf("preemption:    %s (%s); syscall tracepoints %s\n",
	       pre.model[0] ? pre.model : "unknown", pre.source,
	       pre.tp_faultable > 0 ? "faultable" :
	       pre.tp_faultable ? "of unknown kind" : "not faultable");
	if (pinned)
		check_skips();
	for (size_t i = 0; i < NR_ATTACH_ORDER; i++) {
		__u32 mode = attach_order[i];
		struct satfeed_bpf *skel = NULL;
		bool understudies;
		int err;

		understudies = sf_understudy_wanted(&pre, mode, env.understudy,
						    uwhy, sizeof(uwhy));
		err = engine_start(mode, understudies, &skel, why, sizeof(why));
		printf("%-14s %s\n", sf_attach_name(mode), err ? why : "available");
		printf("  understudies %s\n", uwhy);
		if (!err) {
			satfeed_bpf__destroy(skel);
			if (!chosen && (!env.attach || env.attach == mode))
				chosen = mode;
		}
	}
	printf("load would use: %s\n",
	       chosen ? sf_attach_name(chosen) : "nothing (no mode works)");
	return chosen ? SF_EXIT_OK : SF_EXIT_ERROR;
}
