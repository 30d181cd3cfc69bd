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

/* More than an engine pins in any attach mode. */
#define SF_PROG_STATS_MAX	128

struct sf_prog_stats {
	char name[256];		/* the pin's name under ROOT/progs/ */
	__u32 id;		/* kernel program id */
	__u64 recursion_misses;	/* runs the kernel skipped since load */
	__u64 rescued;		/* of those, events an understudy processed */
	__u64 lost;		/* runs whose event may be missing: the misses
				 * no understudy rescued (0 for an understudy:
				 * its primary ran, or is counted there) */
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
		       __u64 *lost);

/*
 * The streams (bit 1 << enum satfeed_stream_id) whose events a run of the
 * pinned program `name` may account, so a run the kernel skipped may be
 * an event missing from them: the fentry mode's sf_x_<syscall> feeds its
 * syscall's family and sf_e_<wait> the poll stream; tp_btf's sf_sys_enter
 * starts waits (poll) and sf_sys_exit ends every call (all three);
 * sf_proc_exit feeds none (a skipped run leaves an exited process listed
 * as active).  A name this build does not know counts for every stream.
 */
__u32 sf_prog_streams(const char *name);

/* skipped[s] = the lost runs of the programs that feed stream s. */
void sf_prog_stats_by_stream(const struct sf_prog_stats *st, int n,
			     __u64 skipped[SATFEED_NR_STREAMS]);

/*
 * Which windows closed while the kernel skipped runs: a reader that reads a
 * stream's skip count from time to time keeps its readings in an
 * sf_skip_log, and a window [start_ns, end_ns] (CLOCK_MONOTONIC, as the
 * engine stamps them) is then told apart where the readings allow:
 *   SF_SKIPS_NONE     two readings around the window saw the same count:
 *                     no run of the stream's programs was skipped while it
 *                     was open, so the kernel lost none of its events;
 *   SF_SKIPS_NEAR     the count grew between the last reading before the
 *                     window opened and the first one after it closed: the
 *                     window may lack events (the skips may also fall just
 *                     outside it, or belong to another target: the
 *                     programs serve every target);
 *   SF_SKIPS_UNKNOWN  no such pair of readings is kept (the window closed
 *                     after the latest reading, or opened before the
 *                     oldest one kept).
 * The load itself is a reading of zero (the programs start at zero when
 * they are attached, before sf_info's load_mono_ns is taken).  Readings
 * that see the same count merge, so the log holds one span per change.
 */
#define SF_SKIP_LOG_LEN		256

struct sf_skip_span {
	__u64 since_ns;		/* the count was `skipped` from here ... */
	__u64 until_ns;		/* ... to here (empty when until < since) */
	__u64 skipped;
};

struct sf_skip_log {
	struct sf_skip_span span[SF_SKIP_LOG_LEN];	/* oldest first */
	unsigned int n;
};

enum sf_window_skips {
	SF_SKIPS_NONE,
	SF_SKIPS_NEAR,
	SF_SKIPS_UNKNOWN,
};

void sf_skip_log_init(struct sf_skip_log *log, __u64 load_mono_ns);

/*
 * A reading of `skipped` taken between begin_ns and end_ns: every skip up
 * to begin_ns is in it, none after end_ns.
 */
void sf_skip_log_add(struct sf_skip_log *log, __u64 begin_ns, __u64 end_ns,
		     __u64 skipped);

enum sf_window_skips sf_skip_log_window(const struct sf_skip_log *log,
					__u64 start_ns, __u64 end_ns);

/*
 * The events each hook's understudy processed for its busy primary, summed
 * over the CPUs, from the engine's sf_understudy map (fd): rescued[hook]
 * for every enum satfeed_hook.  A primary's recursion_misses minus its
 * hook's rescues are the events lost.  0 or -errno.
 */
int sf_rescued_read(int fd, __u64 rescued[SATFEED_NR_HOOKS]);

#endif /* __SF_PROGSTATS_H */
