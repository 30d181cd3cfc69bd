/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sfbench.h - what the parts of sfbench share: the configurations, phases
 * and options, the state cleanup() undoes, and each part's entry points.
 * Internal to tests/bench/sfbench/; main.c describes the benchmark.
 */
#ifndef SFBENCH_H
#define SFBENCH_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "satfeed.h"
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_target.h"
/* The engine's skeleton is included so that make rebuilds sfbench when the
 * engine changes; the engine itself is loaded by satfeed-loader, the way
 * users load it. */
#include "satfeed.skel.h"
#include "sfbench_empty.skel.h"

#define PROG "sfbench"
#define MAX_ROUNDS 64
#define MAX_TARGETS SATFEED_MAX_TARGETS
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the hooks of satfeed's fentry mode, from the engine's own list
 * (bpf/satfeed_syscalls.h), and the engine's program on each */
#define SFB_HOOK_NAME(name, ...) #name,
#define SFB_FEXIT_PROG(name, ...) SATFEED_FEXIT_PROG_NAME(name),
#define SFB_FENTRY_PROG(name, ...) SATFEED_FENTRY_PROG_NAME(name),
static const char *const fexit_hooks[] = {
	SATFEED_SYSCALLS(SFB_HOOK_NAME)
};
static const char *const fentry_hooks[] = {
	SATFEED_WAIT_SYSCALLS(SFB_HOOK_NAME)
};
/* the kernel function of each of fexit_hooks[] (the list's fn column) */
#define SFB_HOOK_FN(name, NAME, family, fd, fn) #fn,
static const char *const fexit_fns[] = {
	SATFEED_SYSCALLS(SFB_HOOK_FN)
};
static const char *const fexit_progs[] = {
	SATFEED_SYSCALLS(SFB_FEXIT_PROG)
};
static const char *const fentry_progs[] = {
	SATFEED_WAIT_SYSCALLS(SFB_FENTRY_PROG)
};
/* their understudies, pinned when satfeed runs with them */
#define SFB_FEXIT_UNDERSTUDY(name, ...) SATFEED_FEXIT_UNDERSTUDY_NAME(name),
#define SFB_FENTRY_UNDERSTUDY(name, ...) SATFEED_FENTRY_UNDERSTUDY_NAME(name),
static const char *const fexit_understudies[] = {
	SATFEED_SYSCALLS(SFB_FEXIT_UNDERSTUDY)
};
static const char *const fentry_understudies[] = {
	SATFEED_WAIT_SYSCALLS(SFB_FENTRY_UNDERSTUDY)
};
#define MAX_HOOK_PROGS ARRAY_SIZE(fexit_hooks)
_Static_assert(ARRAY_SIZE(fentry_hooks) <= ARRAY_SIZE(fexit_hooks),
	       "more fentry than fexit hooks");

enum attach { AT_TP_BTF, AT_FENTRY };

/* CFG_BPFTRACE (the paper's Listing-1 method as a bpftrace script) joins the
 * rotation only with --bpftrace SCRIPT; nr_cfg is how many rotate */
enum cfg { CFG_NONE, CFG_EMPTY, CFG_SATFEED, CFG_BPFTRACE, NR_CFG };

enum op { OP_QUIT, OP_GETPPID, OP_RW, OP_PAIR, OP_EPOLL, OP_PING, OP_URING,
	  OP_UDP, OP_TCP };

/* program classes: what runs at a syscall's entry and at its exit */
enum { PR_ENTER, PR_EXIT, NR_PR };

enum phase { P_UGETPPID, P_URW, P_UEPOLL, P_TPAIR, P_TRW, P_TEPOLL, P_UURING,
	     P_TUDP, P_TTCP, NR_PHASE };
struct phase_desc {
	const char *key;	/* results key */
	const char *label;	/* table label */
	const char *unit;	/* what one op is */
	bool traced;		/* run by the target worker T */
	int op;
	int sys_per_op;		/* syscalls per op */
	long n;			/* ops in a full run */
	int fentry_hooked;	/* fentry mode: 1 << PR_ENTER / PR_EXIT set
				 * when the phase's syscalls run that class */
};

struct opts {
	bool quick;
	bool verbose;
	int rounds;
	int batches;		/* timed batches per phase: the fastest counts */
	bool probes;		/* section 5: where the time goes */
	int attach;		/* enum attach: empty's and satfeed's mode */
	double scale;
	int cpu;		/* CPU of the measuring workers */
	int targets;		/* satfeed targets, the traced worker included */
	const char *loader;
	const char *ctl;
	const char *understudy;	/* satfeed-loader --understudy, NULL: its default */
	bool no_responses;	/* satfeed-loader --no-responses */
	char root[128];
	const char *results;
	const char *raw;
	const char *bt_script;	/* --bpftrace: Listing 1 as a bpftrace script */
	const char *bt_bin;	/* --bpftrace-bin */
	const char *bt_out;	/* --bpftrace-out: its output, last round */
	int bt_wait;		/* --bpftrace-wait: s to attach / stop */
};

struct worker {
	pid_t pid;
	int cmd;		/* we write commands here */
	int res;		/* and read results here */
};

struct cmd {
	int op;
	int batches;		/* the result is the fastest batch */
	long n;			/* ops in all batches together */
};

struct res {
	double ns_per_op;	/* timed part only */
	long ops;		/* ops done in all, warm-up included */
	int err;		/* errno of a failed call, 0: ok */
};

struct pstat {
	__u64 rt, cnt;
};

/* the programs of one class (enter or exit) of a configuration: one in
 * tp_btf mode and for bpftrace, one per hook in fentry mode; satfeed's
 * understudies, when it runs with them, join their primaries' class */
struct progset {
	int n;
	int fd[2 * MAX_HOOK_PROGS];
};

#define MAX_MAPS 32
struct mapmem {
	__u32 id;
	char name[BPF_OBJ_NAME_LEN];
	__u32 type, max_entries, value_size;
	long long memlock;
};

enum {
	PB_EMPTY, PB_GATE, PB_GATE2, PB_FILTER, PB_HASH, PB_SLOT,
	PB_KTIME, PB_LOCK, PB_ATOMIC, PB_SOCK, PB_SOCK2, PB_TASK, PB_SAMPLE,
	PB_SAMPLE2, PB_FLOOR, PB_LOCKFREE,
	NR_PB
};

/*
 * The smallest difference the tables resolve (they print 0.1 ns).  Where
 * the timings do not vary at all (QEMU -icount: guest time is instruction
 * count, the same every round), the spread is 0 and this is the bound.
 */
#define SFB_RESOLUTION_NS 0.1

/* ---- the state and entry points of each part ---- */

/* common.c: tables, options, the state cleanup() undoes, messages */
extern struct worker W_U, W_T;
extern const char *const attach_name[];
extern pid_t bt_pid;
extern char bt_tmp[64];
extern const char *const cfg_name[NR_CFG];
extern const struct phase_desc phases[NR_PHASE];
extern struct opts o;
void cleanup(void);
__attribute__((noreturn)) void die(const char *fmt, ...);
extern struct sfbench_empty_bpf *empty;
extern struct bpf_link *empty_links[2 * MAX_HOOK_PROGS];
extern struct bpf_program *empty_progs[2 * MAX_HOOK_PROGS];
extern pid_t idle_pids[MAX_TARGETS];
void kill_wait(pid_t *pid);
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int nr_cfg;
extern int nr_empty_progs;
extern int nr_idle;
void on_signal(int sig);
extern struct bpf_link *probe_link;
int run_cmd(const char *const argv[]);
extern bool satfeed_loaded;
int satfeed_unload(void);
extern int stats_fd;

/* workers.c */
void idle_start(void);
void pin_cpu(int cpu);
struct res worker_run(struct worker *w, int op, long n, int batches);
void worker_start(struct worker *w);

/* progs.c */
void empty_load(void);
const char *const *fentry_hook_names(int p, int *n);
int foreign_hooks(char *buf, size_t len);
bool hooked(int cfg, int ph, int p);
extern const char *const pr_name[NR_PR];
__u32 prog_id(int fd);
struct pstat prog_stat(const struct progset *ps);
void progset_close(struct progset *ps);
extern struct progset psets[NR_CFG][NR_PR];
int setup(int cfg);
int teardown(int cfg);

/* satfeed.c */
extern struct mapmem maps[MAX_MAPS];
extern int nr_maps;
extern int nr_targets;
long long satfeed_calls(int st);
void satfeed_close_fds(void);
int satfeed_load(void);
long long satfeed_memory(void);
int satfeed_nr_indexed(void);
extern pid_t target_pids[MAX_TARGETS];

/* measure.c: the figures of every round */
extern double b_all[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
extern double b_bg[NR_CFG][NR_PHASE][MAX_ROUNDS];
extern double b_own[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
extern double b_runs[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
extern bool counted_ok;
extern bool dirty[NR_CFG][MAX_ROUNDS];
extern char foreign_seen[1024];
extern double mem_bytes[MAX_ROUNDS];
extern int nr_indexed;
extern int nr_mem;
long phase_n(int ph);
void run_config(int cfg, int round);
extern double t_ns[NR_CFG][NR_PHASE][MAX_ROUNDS];

/* bpftrace.c */
int bt_start(void);
int bt_stop(void);

/* probes.c */
extern const char *const pb_key[NR_PB];
extern const char *const pb_label[NR_PB];
extern double pb_ns[NR_PB][MAX_ROUNDS];
void probes_setup(void);
void run_probes(int round);

/* stats.c */
double bpf_med(double (*src)[NR_PHASE][NR_PR][MAX_ROUNDS], int cfg,
	       int ph, int p);
void fastest2(const double *v, int cfg, double *f1, double *f2);
double max2(double a, double b);
double median_of(const double *v, int n, int cfg);
const char *mem_str(long long mem);
extern int nr_bad;
int nr_clean(int cfg);
void overhead_ratios(int ph, double *timed, double *acct);
double ovh_noise(int cfg, int ph, double *noise);
const char *ratio_str(double q);
const char *ratio_strp(double q, int prec);
extern FILE *res_file;
double result(double v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void result_opt(double v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
double spread_of(const double *v, int cfg);
const char *verdict(bool ok);

/* report.c */
void report(const char *foreign0, int nforeign0, const char *foreign1,
	    int nforeign1, bool stats_was_on);
void write_raw(void);

/* the median over the clean rounds of a configuration (stats.c) */
#define MED(arr, cfg) median_of((arr), o.rounds, (cfg))

#endif /* SFBENCH_H */
