/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loader.h - what the user-space parts of scx_satfeed share: the
 * settings from the command line (scx_satfeed.c, which owns them and
 * passes them down), the checks and the load (scx_load.c), the stats and
 * the exit report (scx_stats.c).  The calls go one way, from scx_satfeed.c
 * to the other two.
 *
 * Include after satfeed.h, sfc_policy.h and scx_satfeed.h.
 */
#ifndef __SCX_LOADER_H
#define __SCX_LOADER_H

#include <stdbool.h>
#include <stdlib.h>
#include <linux/types.h>
#include "sf_common.h"

#define MS		1000000ULL
/* exit code: no sched_ext, or another scheduler runs */
#define EXIT_NO_SCX	9

struct bpf_link;
struct sf_pins;
struct scx_satfeed;	/* the BPF skeleton (scx_satfeed.skel.h) */

struct scx_env {
	const char *root;
	struct scx_sf_config cfg;
	const char *targets[SCX_SF_MAX_TARGETS]; /* as given, for messages */
	char kinds[SCX_SF_MAX_TARGETS];		 /* 'p', 'c' or 's' */
	unsigned long ids[SCX_SF_MAX_TARGETS];	 /* 'p': the pid, 's': slot */
	int nr_max_reserved;	/* -1: nr_cpus - min_shared */
	bool stats;
	bool json;
	bool verbose;
	bool release_set;	/* --release-ms given, else from the engine */
	unsigned int watchdog_ms; /* sched_ext_ops.timeout_ms; 0: kernel's */
	unsigned int interval_ms;
	double duration;	/* seconds, 0: until a signal */
};

/* A one-line reason on stderr, then exit with code (an exit code of --help). */
#define die(code, ...)	exit(sf_fail(code, __VA_ARGS__))

/* scx_load.c: each dies with its exit code on a refusal */
void check_sched_ext(void);
void check_cpus(struct scx_env *env);
void resolve_target(struct scx_env *env, const struct sf_pins *p, int i);
/* the skeleton opened, satfeed's maps swapped in, env->cfg set, loaded */
struct scx_satfeed *open_scheduler(const struct scx_env *env,
				   const struct sf_pins *p);
struct bpf_link *attach(struct scx_satfeed *skel);
void start_dry_run(struct scx_satfeed *skel);

/* scx_stats.c */
struct snapshot {
	struct scx_sf_state st;
	struct scx_sf_cpu cpu[SCX_SF_MAX_CPUS];
	struct scx_sf_exit exit;
};

int take(const struct scx_env *env, struct scx_satfeed *skel,
	 struct snapshot *s);
/* "ok", "reloaded" or "gone": the engine of sf_streams streams_id */
const char *engine_state(const struct scx_env *env, __u32 streams_id);
void print_stats(const struct scx_env *env, const struct snapshot *s,
		 const char *engine);
/* Print the kernel's exit info; 1 if it was an error, else 0. */
int report_exit(const struct scx_sf_exit *e);

#endif /* __SCX_LOADER_H */
