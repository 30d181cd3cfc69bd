/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loader.h - what the user-space parts of scx_satfeed share: the
 * settings from the command line (scx_satfeed.c), the checks and the load
 * (scx_load.c), the stats and the exit report (scx_stats.c).
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

struct bpf_object;
struct bpf_link;
struct sf_pins;

struct scx_env {
	const char *root;
	struct scx_sf_config cfg;
	const char *targets[SCX_SF_MAX_TARGETS]; /* as given, for messages */
	char kinds[SCX_SF_MAX_TARGETS];		 /* 'p', 'c' or 's' */
	int nr_max_reserved;	/* -1: nr_cpus - min_shared */
	bool stats;
	bool json;
	bool verbose;
	bool release_set;	/* --release-ms given, else from the engine */
	unsigned int watchdog_ms; /* sched_ext_ops.timeout_ms; 0: kernel's */
	unsigned int interval_ms;
	double duration;	/* seconds, 0: until a signal */
};
extern struct scx_env env;

/* A one-line reason on stderr, then exit with code (an exit code of --help). */
#define die(code, ...)	exit(sf_fail(code, __VA_ARGS__))

/* The number s in lo..hi, else die (SF_EXIT_USAGE) naming option opt. */
unsigned long parse_num(const char *opt, const char *s, unsigned long lo,
			unsigned long hi);

/* scx_load.c: each dies with its exit code on a refusal */
void check_sched_ext(void);
void check_cpus(void);
void resolve_target(const struct sf_pins *p, int i);
struct bpf_object *open_object(const struct sf_pins *p);
struct bpf_link *attach(struct bpf_object *obj);
void start_dry_run(struct bpf_object *obj);

/* scx_stats.c */
struct snapshot {
	struct scx_sf_state st;
	struct scx_sf_cpu cpu[SCX_SF_MAX_CPUS];
	struct scx_sf_exit exit;
};

int take(struct bpf_object *obj, struct snapshot *s);
/* "ok", "reloaded" or "gone": the engine of sf_streams streams_id */
const char *engine_state(__u32 streams_id);
void print_stats(const struct snapshot *s, const char *engine);
/* Print the kernel's exit info; 1 if it was an error, else 0. */
int report_exit(const struct scx_sf_exit *e);

#endif /* __SCX_LOADER_H */
