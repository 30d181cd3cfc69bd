/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_progstats.h - what the kernel says about the engine's programs.
 *
 * The kernel skips a tracing program (tp_btf, fentry/fexit) on a CPU where
 * a run of the same program has not finished yet, and counts the skip in
 * bpf_prog_info.recursion_misses.  On preemptible kernels a run preempted
 * on a CPU makes every other run of that program there a miss until it
 * resumes: events the engine never saw.  These helpers read that count
 * (and the run statistics) from the programs pinned under ROOT/progs/, so
 * that satfeedctl and satfeed-loader can say what was skipped.
 */
#ifndef __SF_PROGSTATS_H
#define __SF_PROGSTATS_H

#include <linux/bpf.h>
#include "satfeed.h"

struct sf_prog_stats {
	char name[256];		/* the pin's name under ROOT/progs/ */
	__u32 id;		/* kernel program id */
	__u64 recursion_misses;	/* runs the kernel skipped since load */
	__u64 run_cnt;		/* runs, while kernel.bpf_stats_enabled */
	__u64 run_time_ns;	/* their time, while kernel.bpf_stats_enabled */
};

/* Fill st (not its name) from the program behind fd.  0 or -errno. */
int sf_prog_stats_fd(int fd, struct sf_prog_stats *st);

/*
 * Read the programs pinned under root/progs/ into st[0..max-1], sorted by
 * name.  Returns how many there are (when more than max, the first max
 * found are filled) or -errno (-ENOENT: no progs directory).  *misses, when
 * not NULL, gets the sum of recursion_misses over all of them.
 */
int sf_prog_stats_read(const char *root, struct sf_prog_stats *st, int max,
		       __u64 *misses);

/*
 * The events each hook's understudy processed for its busy primary, summed
 * over the CPUs, from the engine's sf_understudy map (fd): rescued[hook]
 * for every enum satfeed_hook.  A primary's recursion_misses minus its
 * hook's rescues are the events lost.  0 or -errno.
 */
int sf_rescued_read(int fd, __u64 rescued[SATFEED_NR_HOOKS]);

#endif /* __SF_PROGSTATS_H */
