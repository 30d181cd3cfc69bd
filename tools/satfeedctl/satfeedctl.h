// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl.h - what satfeedctl's files share: the parsed command line,
 * the error message, the report of what the kernel skipped, the output
 * that show and targets both print, the command line (args.c, usage.c) and
 * the commands of the command table (main.c).
 */
#ifndef SATFEEDCTL_H
#define SATFEEDCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "sf_pins.h"
#include "sf_progstats.h"
#include "sf_target.h"
#include "sf_common.h"

#define PROG "satfeedctl"
#define fail sf_fail

/* Everything the command line says, parsed before any pin is opened. */
#define MAX_SEL SATFEED_MAX_TARGETS

struct args {
	const char *root;	/* --bpffs */
	struct sf_selector sel[MAX_SEL]; /* --pid (each) / --cgroup */
	int nr_sel;		/* 0: none given (every target) */
	const char *vanished;	/* --cgroup of a directory removed since */
	long slot;		/* --slot, -1: not given */
	bool all;		/* --all */
	bool json;		/* --json */
	bool raw;		/* --raw: mean and SD per stream */
	bool force;		/* --force */
	bool repair;		/* --repair */
	__u32 sc_mask;		/* syscalls that count (add) */
	struct satfeed_sat_rules rules; /* add, rules: --idle-near etc. */
	__u32 rules_given;	/* SF_RULE_* of the rule options given */
	double interval;	/* --interval, seconds */
	long count;		/* --count, 0: until interrupted */
	const char *listen;	/* --listen */
	bool allow_remote;	/* --allow-remote */
	const char *textfile;	/* --textfile */
	const char *target_arg;	/* --pid / --cgroup as given */
	double seconds;		/* --seconds (discover, add --auto) */
	bool autoadd;		/* add --auto */
};

/* ---- the command line ---- */

/* What a command takes and how it runs: its line of the table (main.c). */
enum cmd_flags {
	CMD_TARGET = 1 << 0,	/* needs --pid or --cgroup */
	CMD_ALL = 1 << 1,	/* ... or --all */
	CMD_FAMILIES = 1 << 2,	/* takes --send, --recv, --poll */
	CMD_EXPORT = 1 << 3,	/* takes --listen, --allow-remote, --textfile;
				 * opens the pins itself, on every scrape */
	CMD_VANISHED = 1 << 4,	/* --cgroup may name a removed directory */
	CMD_WRITE = 1 << 5,	/* changes the table: the lock exclusively */
	CMD_OWN_LOCK = 1 << 6,	/* locks and opens the pins itself */
	CMD_REPAIR = 1 << 7,	/* takes --repair */
	CMD_EACH_VIEW = 1 << 8,	/* locks for each view it shows */
	CMD_SELECT = 1 << 9,	/* may take --pid, --cgroup or --slot */
	CMD_RAW = 1 << 10,	/* takes --raw */
	CMD_JSON = 1 << 11,	/* takes --json */
	CMD_INTERVAL = 1 << 12,	/* takes --interval */
	CMD_COUNT = 1 << 13,	/* takes --count */
	CMD_SECONDS = 1 << 14,	/* takes --seconds */
	CMD_AUTO = 1 << 15,	/* takes --auto */
	CMD_RULES = 1 << 16,	/* takes --wps-near and the other rules */
};

struct cmd {
	const char *cmd;
	int (*func)(struct sf_pins *p, const struct args *a);
	unsigned int flags;
};

/* args.c: -1 when the options are all good, else the exit status */
int parse_global(int argc, char **argv, struct args *a);
int parse_args(int argc, char **argv, const struct cmd *c, struct args *a);
/* usage.c: --help, --version (exit 0) or an option getopt refused (2) */
int help_or_usage(int opt);
/* usage.c: COMMAND --help: that command's usage (exit 0) */
int cmd_help(const char *cmd);
/* args.c: is -h or --help among argv[from..] (before "--")? */
bool help_asked(int argc, char **argv, int from);

/* ---- what the kernel skipped (skips.c) ---- */

/* The engine programs' recursion misses, read once per view. */
struct skips {
	struct sf_prog_stats prog[SF_PROG_STATS_MAX];
	int n;			/* programs, or -errno */
	__u64 total;
	__u64 stream[SATFEED_NR_STREAMS];
	__u64 resp;		/* of the programs that feed the response and
				 * service-time streams: send or recv ones */
	__u64 begin_ns;		/* every skip up to here is counted ... */
	__u64 end_ns;		/* ... and none after here */
};

void skips_read(const struct sf_pins *p, struct skips *k);
void skips_warn(FILE *f, const struct sf_pins *p, const struct skips *k,
		const char *prefix);
void json_skips(const struct skips *k);

/* ---- output (text_str: view.c, json_target_head: show_json.c) ---- */

const char *text_str(char *buf, size_t len, const char *s, size_t max);
void json_target_head(const struct sf_pins *p, __u32 slot,
		      const struct satfeed_target *t);

/* --slot or a removed cgroup's path into sel[0] (targets.c) */
int resolve_selection(struct sf_pins *p, const struct args *a,
		      struct sf_selector *sel);

/* ---- the commands ---- */

/* targets.c */
int cmd_add(struct sf_pins *p, const struct args *a);
void uring_ms_note(const struct sf_pins *p, __u32 sc_mask);
int cmd_remove(struct sf_pins *p, const struct args *a);
int cmd_targets(struct sf_pins *p, const struct args *a);
int cmd_rules(struct sf_pins *p, const struct args *a);
/* show.c */
int cmd_show(struct sf_pins *p, const struct args *a);
/* watch.c */
int cmd_watch(struct sf_pins *p, const struct args *a);
/* discover.c */
int cmd_discover(struct sf_pins *p, const struct args *a);
int cmd_add_auto(struct sf_pins *p, const struct args *a);
/* check.c */
int cmd_check(struct sf_pins *unused, const struct args *a);

#endif /* SATFEEDCTL_H */
