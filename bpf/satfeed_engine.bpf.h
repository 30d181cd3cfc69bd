/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_engine.bpf.h - the syscall hooks' shared paths.
 *
 * Design: this file runs the hooks' shared paths (waits, syscall returns,
 * understudy receipts); which target an event belongs to is
 * satfeed_target.bpf.h's (one lookup, sf_find_target_of(), for a syscall's
 * caller and an io_uring request's owner alike), what the event then does
 * to the target's data satfeed_account.bpf.h's.  bpf/satfeed.bpf.c builds the shipped programs
 * from it; a test-only BPF object (tests/kernel/progs/) includes it too, so
 * that the tests drive the very code the syscall hooks run (sf_account(),
 * the window update under the stream lock) with chosen values.  Programs
 * live in the .bpf.c files only.
 */
#ifndef __SATFEED_ENGINE_BPF_H
#define __SATFEED_ENGINE_BPF_H

#include "satfeed_account.bpf.h"
#include "satfeed_target.bpf.h"
#include "satfeed_resp.bpf.h"

#define SF_MAX_CPUS	8192	/* CPUs an understudy searches for a receipt */
#define SF_IORING_ENTER_GETEVENTS	(1U << 0)

/* io_uring_enter(2) as a wait, the sc the engine gives it: its sc_mask bit,
 * above every syscall's, so sf_sys_return() takes it for a wait and
 * discovery counts it under its own source */
#define SF_SC_URING_WAIT	SATFEED_SC_URING_BIT(WAIT)
_Static_assert(SF_SC_URING_WAIT >= SATFEED_SC_POLL_FIRST,
	       "io_uring_enter is a wait");

/* understudies are loaded: the primaries leave receipts (the verifier
 * drops that code when they are not) */
const volatile bool with_understudies = false;

/* sf_uring_sleep is loaded (the io_uring_cqring_wait tracepoint exists):
 * an io_uring wait counts only when its thread went to sleep; false: every
 * io_uring_enter with GETEVENTS is a wait, as before */
const volatile bool uring_sleep_seen = false;

static __always_inline struct satfeed_understudy *sf_understudy_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sf_understudy, &zero);
}

/* Leave a receipt for the task of token, then run body as the primary. */
#define SF_PRIMARY(hook, token, body)					\
	({								\
		struct satfeed_understudy *u_ = NULL;			\
									\
		if (with_understudies)					\
			u_ = sf_understudy_get();			\
		if (u_) {						\
			__u64 old_ = READ_ONCE(u_->receipt[hook]);	\
									\
			WRITE_ONCE(u_->receipt[hook], (__u64)(token));	\
			if (old_ && old_ != (__u64)(token))		\
				WRITE_ONCE(u_->receipt_prev[hook], old_); \
		}							\
		barrier();	/* the receipt first */			\
		(body);							\
	})

struct sf_receipt_search {
	__u64 token;
	__u32 hook;
	bool found;
};

/* bpf_loop callback: take the receipt on CPU cpu, if it is there. */
static long sf_take_receipt_on(__u32 cpu, void *ctx)
{
	struct sf_receipt_search *q = ctx;
	__u64 token = q->token;
	struct satfeed_understudy *u;
	__u32 zero = 0, hook = q->hook;

	u = bpf_map_lookup_percpu_elem(&sf_understudy, &zero, cpu);
	if (!u || hook >= SATFEED_NR_HOOKS)
		return 1;	/* past the last CPU */
	if (__sync_val_compare_and_swap(&u->receipt[hook], token, 0) ==
		    token ||
	    __sync_val_compare_and_swap(&u->receipt_prev[hook], token, 0) ==
		    token) {
		q->found = true;
		return 1;
	}
	return 0;
}

/*
 * No receipt of this task here: did its primary run on another CPU (the
 * task migrated between its two programs)?  Only asked when the primary
 * left nothing here, so rarely.
 */
static __always_inline bool sf_receipt_elsewhere(__u32 hook, __u64 token)
{
	struct sf_receipt_search q = { .token = token, .hook = hook };

	bpf_loop(SF_MAX_CPUS, sf_take_receipt_on, &q, 0);
	return q.found;
}

/*
 * Run body as the understudy of hook for the task of token: only when the
 * task's primary left no receipt, i.e. the kernel skipped it.  The count is
 * per CPU and this program cannot run twice at once on a CPU, so a plain
 * increment is exact.
 */
#define SF_UNDERSTUDY(hook, token, body)				\
	({								\
		struct satfeed_understudy *u_ = sf_understudy_get();	\
		int ret_ = 0;						\
									\
		if (!u_) {						\
		} else if (READ_ONCE(u_->receipt[hook]) ==		\
			   (__u64)(token)) {				\
			WRITE_ONCE(u_->receipt[hook], 0);		\
		} else if (READ_ONCE(u_->receipt_prev[hook]) ==		\
			   (__u64)(token)) {				\
			WRITE_ONCE(u_->receipt_prev[hook], 0);		\
		} else if (!sf_receipt_elsewhere(hook,			\
						 (__u64)(token))) {	\
			u_->rescued[hook]++;				\
			ret_ = (body);					\
		}							\
		ret_;							\
	})

/*
 * The thread's total time runnable but not running (the scheduler's run
 * delay, CONFIG_SCHED_INFO, y in Debian's and this project's kernels): its
 * growth over a wait is the part of the wait spent waiting for a CPU, after
 * the wakeup or before the sleep.  0 where the kernel does not keep it.
 */
static __always_inline __u64 sf_run_delay(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->sched_info.run_delay))
		return 0;
	return task->sched_info.run_delay;
}

/*
 * A wait begins on the current thread: a wait syscall (poll family), or
 * with uring (then sc is SF_SC_URING_WAIT) a target's io_uring_enter(2)
 * with GETEVENTS (satfeed_uring.bpf.h), which discovery counts whatever
 * its bit says, as it does every io_uring operation.  regs: the syscall's.
 */
static __always_inline int sf_wait_enter(__u32 sc, struct pt_regs *regs,
					 bool uring)
{
	struct task_struct *task;
	struct satfeed_config *cfg;
	struct sf_hit hit;
	struct sf_wait *w;

	if (uring && !(sf_regs_arg(regs, 3) & SF_IORING_ENTER_GETEVENTS))
		return 0;
	task = bpf_get_current_task_btf();
	cfg = sf_config_get();
	if (!cfg || !sf_find_target_of(cfg, task, true, &hit) ||
	    (!(hit.sc_mask & (1U << sc)) &&
	     !(uring && (hit.sc_mask & SATFEED_SC_DISCOVER))) ||
	    sf_compat_syscall(task))
		return 0;
	w = bpf_task_storage_get(&sf_poll_start, task, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w)
		return 0;
	w->slot = hit.slot;
	w->gen = hit.gen;
	w->run_delay = sf_run_delay(task);
	w->discover = !!(hit.sc_mask & SATFEED_SC_DISCOVER);
	w->unslept = uring && uring_sleep_seen;
	w->start_ns = bpf_ktime_get_ns();
	return 0;
}

/* Any traced syscall returns on the current thread (SF_SC_URING_WAIT:
 * io_uring_enter, which only a wait begun by sf_wait_enter() counts). */
static __always_inline int sf_sys_return(__u32 sc, struct pt_regs *regs,
					 long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();
	__u64 now, sample = 0, runq = 0, *mark = NULL;
	struct sf_hit hit;
	bool gap = true;
	__u32 stream;

	if (!cfg)
		return 0;
	if (sc >= SATFEED_SC_POLL_FIRST) {
		struct sf_wait *w;
		__u64 start;

		/* most waits on a machine are not a target's: skip the
		 * task storage lookup for them */
		if (!sf_maybe_target(cfg, task) || sf_compat_syscall(task))
			return 0;
		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
		if (!w || !w->start_ns)
			return 0;
		start = w->start_ns;
		w->start_ns = 0;
		mark = &w->mark;
		if (w->discover) {
			sf_discover_count(w->slot, w->gen, sc, ret, false,
					  bpf_ktime_get_ns() - start);
			return 0;
		}
		if (ret < 0) {
			sf_count(w->slot, SATFEED_STREAM_POLL, w->gen, ret);
			return 0;
		}
		/* an io_uring wait that found its completions there without
		 * going to sleep is not slack, and not a wait: past capacity
		 * every call finds some (sc is a constant at each call site:
		 * the other waits do not test it); the thread was busy, so
		 * the age tick still counts it, with no slack: its start
		 * stands in for the end (no clock read) */
		if (sc == SF_SC_URING_WAIT && w->unslept) {
			w->end_ns = start;
			return 0;
		}
		now = bpf_ktime_get_ns();
		w->end_ns = now;
		hit.slot = w->slot;
		hit.gen = w->gen;
		stream = SATFEED_STREAM_POLL;
		gap = false;
		sample = now - start;
		runq = sf_run_delay(task) - w->run_delay;
		/* the thread's own totals, which the age tick reads */
		w->waited_ns += sample;
		w->runq_ns += runq < sample ? runq : sample;
	} else {
		if (!sf_find_target_of(cfg, task, true, &hit) ||
		    !(hit.sc_mask & (1U << sc)) || sf_compat_syscall(task))
			return 0;
		stream = sc >= SATFEED_SC_RECV_FIRST ? SATFEED_STREAM_RECV :
						       SATFEED_STREAM_SEND;
		if (SATFEED_SC_SOCKET_FD & (1U << sc)) {
			if (!sf_fd_is_socket(task, sf_socket_fd(sc, regs))) {
				struct satfeed_stream *s;

				if (hit.sc_mask & SATFEED_SC_DISCOVER) {
					sf_discover_count(hit.slot, hit.gen,
							  sc, ret, true, 0);
					return 0;
				}
				s = sf_stream_of_gen(hit.slot, stream,
						     hit.gen);
				if (s)
					__sync_fetch_and_add(&s->not_socket,
							     1);
				return 0;
			}
		}
		if (hit.sc_mask & SATFEED_SC_DISCOVER) {
			sf_discover_count(hit.slot, hit.gen, sc, ret, false,
					  0);
			return 0;
		}
		if (ret <= 0) {
			sf_count(hit.slot, stream, hit.gen, ret);
			return 0;
		}
		now = bpf_ktime_get_ns();
		if (with_responses)
			sf_response(task, sf_socket_fd(sc, regs), stream,
				    &hit, now);
	}
	/* one call site, so that tp_btf's sf_sys_exit, which serves every
	 * family, holds one copy of the window code, not two */
	sf_account(hit.slot, stream, hit.gen, now, gap, sample, runq, mark,
		   true);
	return 0;
}

#endif /* __SATFEED_ENGINE_BPF_H */
