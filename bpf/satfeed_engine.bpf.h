/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_engine.bpf.h - the engine's maps and inline code.
 *
 * Design: this file finds which target an event belongs to (one lookup,
 * sf_find_target_of(), for a syscall's caller and an io_uring request's
 * owner alike) and runs the hooks' shared paths (waits, syscall returns,
 * understudy receipts); what the event then does to the target's data is
 * satfeed_account.bpf.h's.  bpf/satfeed.bpf.c builds the shipped programs
 * from it; a test-only BPF object (tests/kernel/progs/) includes it too, so
 * that the tests drive the very code the syscall hooks run (sf_account(),
 * the window update under the stream lock) with chosen values.  Programs
 * live in the .bpf.c files only.
 */
#ifndef __SATFEED_ENGINE_BPF_H
#define __SATFEED_ENGINE_BPF_H

#include "satfeed_account.bpf.h"

#define SF_MAX_CPUS	8192	/* CPUs an understudy searches for a receipt */
#define SF_S_IFMT	00170000
#define SF_S_IFSOCK	0140000
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

/* The watched target an event belongs to. */
struct sf_hit {
	__u32 slot;
	__u32 gen;
	__u32 sc_mask;
};

static __always_inline struct satfeed_config *sf_config_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sf_config, &zero);
}

/* Can task be a target at all?  One byte load, no helper call. */
static __always_inline bool sf_maybe_target(struct satfeed_config *cfg,
					    struct task_struct *task)
{
	return cfg->pid_slot[(__u32)task->tgid % SATFEED_PID_SLOTS] ||
	       cfg->nr_cgroup_targets;
}

/*
 * Id of task's cgroup v2 ancestor at level, 0 when it is shallower: what
 * bpf_get_current_ancestor_cgroup_id() gives for the current task.  Plain
 * reads (no helper takes another task); asked only while cgroup targets
 * exist.
 */
static __always_inline __u64 sf_task_ancestor_cgid(struct task_struct *task,
						    __u32 level)
{
	unsigned long cg, anc = 0;
	int depth;

	cg = (unsigned long)BPF_CORE_READ(task, cgroups, dfl_cgrp);
	if (!cg)
		return 0;
	depth = BPF_CORE_READ((struct cgroup *)cg, level);
	if (depth < 0 || level > (__u32)depth)
		return 0;
	if (bpf_probe_read_kernel(&anc, sizeof(anc),
				  (void *)(cg + bpf_core_field_offset(
					struct cgroup, ancestors) +
					   level * sizeof(anc))) || !anc)
		return 0;
	return BPF_CORE_READ((struct cgroup *)anc, kn, id);
}

/*
 * The watched target of task's events, by its tgid (pid_slot) or its
 * cgroup.  is_current (a constant at every call site): task is the current
 * task, whose cgroup ancestors one helper call gives (the syscall hooks);
 * otherwise they are read from task (io_uring: a request's owner).
 */
static __always_inline bool sf_find_target_of(struct satfeed_config *cfg,
					      struct task_struct *task,
					      bool is_current,
					      struct sf_hit *hit)
{
	struct satfeed_index *ix = NULL;
	__u32 tgid = task->tgid, i;
	__u8 v;

	v = cfg->pid_slot[tgid % SATFEED_PID_SLOTS];
	if (!v && !cfg->nr_cgroup_levels)
		return false;	/* the common miss, without the cgroup loop */
	if (v && v != SATFEED_PID_SLOT_SHARED) {
		__u32 slot = v - 1;
		struct satfeed_target *t;

		/* an array lookup the verifier inlines: no helper call.  The
		 * process must have started before its target was added: a
		 * later one only reuses the pid (issue 20), whatever state
		 * says */
		t = bpf_map_lookup_elem(&sf_targets, &slot);
		if (t && t->id == tgid && t->kind == SATFEED_TARGET_PID &&
		    t->state == SATFEED_STATE_ACTIVE &&
		    task->group_leader->start_time <= t->added_ns) {
			hit->slot = slot;
			hit->gen = t->gen;
			hit->sc_mask = t->sc_mask;
			return true;
		}
	} else if (v) {
		ix = bpf_map_lookup_elem(&sf_pid_index, &tgid);
	}
	for (i = 0; !ix && i < SATFEED_MAX_CGROUP_LEVELS; i++) {
		__u32 level;
		__u64 cgid;

		if (i >= cfg->nr_cgroup_levels)
			break;
		level = cfg->cgroup_level[i];
		if (is_current) {
			cgid = bpf_get_current_ancestor_cgroup_id(level);
		} else {
			cgid = sf_task_ancestor_cgid(task, level);
			if (!cgid)
				continue;	/* no cgroup has id 0 */
		}
		ix = bpf_map_lookup_elem(&sf_cgrp_index, &cgid);
	}
	if (!ix)
		return false;
	hit->slot = ix->slot;
	hit->gen = ix->gen;
	hit->sc_mask = ix->sc_mask;
	return true;
}

/*
 * The file of fd of task, NULL when none; an untrusted pointer (read it
 * through bpf_core_cast).  The fd array holds struct file pointers; reading
 * one through a struct whose first member is a struct file *
 * (kiocb.ki_filp) makes it a plain fault-safe load instead of a
 * bpf_probe_read_kernel() call.  Where a kernel moved ki_filp, the CO-RE
 * offset is not 0 and the helper is used instead.
 */
static __always_inline struct file *sf_fd_file(struct task_struct *task,
					       unsigned int fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file **fds, *f = NULL;

	if (fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (bpf_core_field_offset(struct kiocb, ki_filp) == 0)
		f = bpf_core_cast(&fds[fd], struct kiocb)->ki_filp;
	else if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return NULL;
	return f;
}

/* Is fd of task a socket?  Only asked for read/write family samples. */
static __always_inline bool sf_fd_is_socket(struct task_struct *task,
					    unsigned int fd)
{
	struct file *f = sf_fd_file(task, fd);
	umode_t mode;

	if (!f)
		return false;
	mode = bpf_core_cast(f, struct file)->f_inode->i_mode;
	return (mode & SF_S_IFMT) == SF_S_IFSOCK;
}

/* Argument n (0, 2 or 3: the ones the engine reads) of the syscall of regs. */
static __always_inline unsigned long sf_regs_arg(struct pt_regs *regs, int n)
{
#if defined(__TARGET_ARCH_x86)
	return n == 0 ? regs->di : n == 2 ? regs->dx : regs->r10;
#elif defined(__TARGET_ARCH_arm64)
	return n == 0 ? regs->orig_x0 : regs->regs[n];
#else
#error "satfeed: add this architecture's syscall argument registers"
#endif
}

/*
 * The fd that must be a socket for syscall sc to count (SATFEED_SC_SOCKET_FD
 * members), as the kernel takes it: the low 32 bits (unsigned int fd of
 * read/write, fdget() of the long of readv/writev, int of sendfile/splice).
 * Argument 0, or argument 2 for splice (fd_out): the list says which.
 */
static __always_inline unsigned int sf_socket_fd(__u32 sc,
						 struct pt_regs *regs)
{
	if (SATFEED_SC_FD_ARG2 & (1U << sc))
		return (unsigned int)sf_regs_arg(regs, 2);
	return (unsigned int)sf_regs_arg(regs, 0);
}

static __always_inline long sf_regs_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#endif
}

/*
 * Is the current syscall a 32-bit (compat) one?  Its number and arguments
 * follow the ia32 table (brk is 45, recvfrom's number on x86-64; socket
 * calls may come through socketcall), so the tp_btf hooks, which see every
 * entry, must not read it as a native call.  fentry mode never sees one:
 * compat calls enter through the __ia32_sys_* wrappers, not the
 * __x64_sys_* it hooks.  Asked only once a watched target matched.
 * TS_COMPAT is 0x0002 in thread_info.status from 6.12 to 7.x (a #define,
 * not in BTF); x32 calls carry bit 30 in their number and fall outside the
 * table already.
 */
#define SF_TS_COMPAT 0x0002
static __always_inline bool sf_compat_syscall(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	return task->thread_info.status & SF_TS_COMPAT;
#else
	return false;	/* arm64 AArch32 tasks: not handled yet */
#endif
}

#include "satfeed_resp.bpf.h"

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
