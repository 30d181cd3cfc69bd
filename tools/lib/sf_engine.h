/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_engine.h - which of the engine's programs run, and in which order they
 * are attached, for one attach mode with or without understudies.
 *
 * satfeed-loader and the kernel tests start the engine through these calls,
 * so a test runs exactly the programs, with the settings, a load would:
 *
 *	skel = satfeed_bpf__open_opts(...);
 *	err = sf_engine_configure(skel, shift, max_age_ns, understudies,
 *				  responses, why, len);
 *	err = err ?: sf_engine_select(skel->obj, mode, understudies, why, len);
 *	err = err ?: satfeed_bpf__load(skel);
 *	err = err ?: sf_engine_attach(skel->skeleton, mode, why, len);
 *
 * An understudy must run after its primary for the same event (see
 * sf_engine_attach), which is why the skeleton's own attach is not used.
 */
#ifndef __SF_ENGINE_H
#define __SF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct bpf_object;
struct bpf_object_skeleton;
struct satfeed_bpf;

/* A program that can be preempted, and its understudy. */
struct sf_hook {
	const char *primary;	/* program (and pin) name */
	const char *understudy;	/* its understudy's name */
	const char *syscall;	/* fentry mode: the kernel function (fn column
				 * of satfeed_syscalls.h) it attaches to */
	__u32 hook;		/* enum satfeed_hook */
	__u32 mode;		/* enum satfeed_attach */
};

extern const struct sf_hook sf_hooks[];
extern const int sf_nr_hooks;

/*
 * The engine's startup settings, the one place they are made: the window
 * (1 << window_shift samples), the age bound (max_age_ns; 0 keeps the
 * engine's default), whether understudies run, the tp_btf mode's syscall
 * dispatch table (sc_index: io_uring_enter as the io_uring wait, accept
 * and accept4 as accepted connections) and this kernel's io_uring
 * multishot flag (sf_uring_probe); responses false leaves out the response
 * stream, service time and per-connection state (their streams stay
 * empty, sf_conn and sf_conn_other take one entry each, sf_conn_close
 * does not load).  Call between open and load.  0 or
 * -errno with *why.
 */
int sf_engine_configure(struct satfeed_bpf *skel, __u32 window_shift,
			__u64 max_age_ns, bool understudies, bool responses,
			char *why, size_t len);

/*
 * Set which programs of the engine object load: those of attach mode
 * `mode` (enum satfeed_attach), their understudies when `understudies`,
 * and the programs every mode runs; and point the fentry mode's programs
 * at their syscalls.  Call between open and load.  0 or -errno with *why.
 */
int sf_engine_select(struct bpf_object *obj, __u32 mode, bool understudies,
		     char *why, size_t len);

/*
 * Attach every loaded program of the skeleton, each understudy so that it
 * runs after its primary on their common hook, and store the links in the
 * skeleton (its destroy releases them).  0 or -errno with *why.
 */
int sf_engine_attach(struct bpf_object_skeleton *s, __u32 mode, char *why,
		     size_t len);

/*
 * What this kernel offers for the io_uring members (bpf/satfeed_uring.bpf.h),
 * read from its BTF.  sf_engine_select() loads the io_uring programs only
 * where their hooks exist; sf_engine_configure() sets the engine's
 * uring_ms_flag to ms_flag.
 */
struct sf_uring_support {
	bool tracepoints;	/* io_uring_complete and io_uring_submit_req:
				 * CONFIG_IO_URING */
	bool task_add;		/* io_uring_task_add: a multishot receive
				 * armed before it was watched is found at
				 * its next poll wake-up */
	bool enter_fn;		/* __<arch>_sys_io_uring_enter (fentry mode) */
	bool cqring_wait;	/* io_uring_cqring_wait: an io_uring wait
				 * counts only when it sleeps */
	__u64 ms_flag;		/* REQ_F_APOLL_MULTISHOT, 0: not found */
};

/* Fill *u from the running kernel's BTF.  0 or -errno with *why. */
int sf_uring_probe(struct sf_uring_support *u, char *why, size_t len);

/*
 * What such a kernel cannot count of a multishot io_uring receive, as one
 * line without a newline for `add` and `discover` to print; NULL where
 * every CQE with data is counted (or io_uring is not there at all).
 */
const char *sf_uring_ms_gap(const struct sf_uring_support *u);

/*
 * The same for io_uring waits: a kernel without the io_uring_cqring_wait
 * tracepoint counts every io_uring_enter with GETEVENTS as a wait, also
 * one that found its completions without sleeping; NULL where it has it
 * (or io_uring is not there at all).
 */
const char *sf_uring_sleep_gap(const struct sf_uring_support *u);

/*
 * Start the engine's age timer (bpf/satfeed_age.bpf.h), after the attach:
 * its sf_proc_exit arms it at a process exit, so end a child and wait (at
 * most a second) until sf_age (map, the object's) says it is armed.  0 or
 * -errno with *why.
 */
struct bpf_map;
int sf_engine_start_age(struct bpf_map *age, char *why, size_t len);

/* Is name an understudy's? */
bool sf_engine_is_understudy(const char *name);

#endif /* __SF_ENGINE_H */
