// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeed.bpf.c - in-kernel request-level feedback from a server's syscalls.
 *
 * What: per target (a process or a cgroup v2 subtree) three streams of
 * samples, all threads merged into one trace: the gap between successive
 * send-family calls that moved bytes (throughput: RPS_obs = N / sum), the gap
 * between successive recv-family calls (saturation: variance), and the
 * duration of each epoll/select/poll wait (slack).  Every 2^k samples
 * (default 2048) a window closes with its exact integer mean and variance
 * (window_math.h) and joins a 16-entry history that consumers read from the
 * pinned sf_streams map.  Each closed window also carries figures that need
 * no scale to be read: the squared coefficient of variation of its samples
 * (cv2_permille, every stream), and for the poll stream the share of the
 * window's span spent in waits (wait_permille) and the share spent waiting
 * for work rather than for a CPU (idle_permille).  The second needs the
 * run-queue time of each wait (runq_ns): under CPU contention a server's
 * wait includes the time it stayed runnable after its wakeup, which is not
 * slack; the growth of the thread's scheduler run delay
 * (task->sched_info.run_delay) from wait entry to exit is that time.  The
 * target's verdict (sf_verdict: OK, NEAR or FULL, and why) follows from
 * its figures and rules by the pure function in sat_rules.h that user
 * space shares, evaluated at each window close and at each tick of the
 * age timer (satfeed_age.bpf.h).  Its default rules judge queueing by two
 * figures that do not depend on the event loop's shape (docs/validation.md,
 * "Corpus"): the idle share of the threads that woke in the tick's
 * interval, and the service time (receive to response, satfeed_engine.bpf.h)
 * against its lowest mean.  Per sample they cost two additions to the
 * waiting thread's task storage at a wait's end; the rest is per tick.
 *
 * Why this way: one bpf_spin_lock per (target, stream) serialises the update
 * of the previous-event time and the running sums, so every sample lands in
 * exactly one window and a window closes atomically; the lock is held for a
 * few dozen instructions and taken only for events of watched targets.
 * bpf_spin_lock is allowed in BPF_PROG_TYPE_TRACING programs (tp_btf,
 * fentry/fexit), which is why those are the two attach modes: classic
 * tracepoint programs may not take one.
 *
 * Publication: readers under the same lock (BPF_F_LOCK from user space)
 * need no ordering of their own; for kernel code that reads a closed window
 * without the lock, window_math.h fences the two stores that frame it
 * (seq_end first, seq last) with BPF atomic exchanges, full barriers on
 * every JIT, because neither clang 19 nor kernels before 6.15 offer a BPF
 * store-release.  That costs two exchanges per closed window (every 2048
 * samples), nothing per sample; the reader's half is in satfeed.h.
 *
 * Cost, cheapest rejection first (tp_btf mode; fentry mode skips step 1
 * because only the traced syscalls run it):
 *  1. syscall number -> family index: one bounds check and one byte load
 *     from .rodata; every other syscall of the machine stops here, in a
 *     frame of a dozen instructions: the rest of the program is a
 *     subprogram (sf_sys_exit_traced()), whose registers and stack only
 *     the traced syscalls of processes that can be targets (step 2's
 *     byte, tested before the call too) save and set up.
 *  2. pid_slot: one byte load from sf_config indexed by tgid % 1024, then,
 *     for a pid target, one inlined array lookup: no helper call and no
 *     hash lookup.  Every other process stops here (only while cgroup
 *     targets exist does it pay one ancestor-cgroup-id helper and hash
 *     lookup per distinct target level).
 *  3. watched targets only: the socket check for read/write family calls
 *     (plain fault-safe loads), task storage for waits, then the clock and
 *     the locked update: bpf_ktime_get_ns and the lock pair are the bulk of
 *     the cost of a sample (docs/performance.md).  A wait also reads its
 *     thread's run delay at entry and exit: one CO-RE load each.
 *  4. once per window (2048 samples), under the stream lock: the figures,
 *     the exact cv2 among them a 128-by-128 division that BPF's 64-bit
 *     divide cannot do, so 32 rounds of shift-subtract kept in a rolled
 *     loop (about 400 instructions run, some 25 in the program, where
 *     unrolled it would be 600 in every program that inlines sf_account);
 *     then, outside it, the verdict under its own lock, in one non-inlined
 *     subprogram per program.  Each program has one sf_account() site
 *     (sf_sys_return() joins its families' paths before it), so the whole
 *     of it costs a program some 120 instructions (when it was added;
 *     today's sizes: docs/performance.md), none on the per-sample path.
 *
 * Exactness and preemption: the kernel runs a tracing program at most once
 * per CPU at a time (bpf_prog_get_recursion_context(), prog->active) and
 * skips, counting it in bpf_prog_info.recursion_misses, any run that starts
 * while another is in progress there.  Where the hooks run preemptibly
 * (from 7.x the syscall tracepoints are faultable and nothing disables
 * preemption around the BPF probe; fentry/fexit on any kernel with
 * preemption, the trampolines only disable migration), a run preempted on
 * a CPU would lose the events of every other task there that reach the
 * same program until it resumes.  Disabling preemption from inside the
 * program (bpf_preempt_disable()) cannot help: the kernel marks the
 * program active before its first instruction and clears the mark after
 * its last, and a preemption that falls due inside the body is taken at
 * bpf_preempt_enable(), still inside that window.
 *
 * Understudies prevent the loss instead.  Each program that can be
 * preempted (a primary) has an understudy: a second program on the same
 * hook, so with its own prog->active, running the same inline code, and
 * attached so that it runs after the primary for each event
 * (tools/lib/sf_engine.c).  The primary's first action leaves a receipt
 * for its task on this CPU (sf_understudy.receipt; the pt_regs pointer
 * every hook receives first).  The understudy takes its task's receipt;
 * finding none, it knows the kernel skipped the primary for this event,
 * whatever the run that held prog->active was doing, and processes the
 * event itself and counts the rescue.  A primary that finds another
 * task's receipt not taken yet (that task was preempted between its two
 * programs) keeps it in receipt_prev, and an understudy that finds no
 * receipt on its CPU looks on the others before it rescues (its task may
 * have migrated between the two programs; migration is disabled only
 * within each), so neither makes it count an event twice.  The engine's
 * data stay consistent: the locked regions cannot be preempted, and an
 * event that reaches a stream lock after a later one is a zero gap.  The
 * loader attaches understudies only where the hooks can be preempted
 * (tools/lib/sf_preempt.h), since every event of the hook pays the
 * understudy's check.
 *
 * What remains.  Lost: an event whose understudy is skipped too (another
 * run of the understudy preempted on that CPU, while it rescues or in the
 * kernel's code around it), or whose task's stale receipt from an earlier
 * event, left when its understudy was skipped, is still in place.  Each
 * such loss is a recursion miss of the primary without a rescue, so lost =
 * misses - rescued (tools/lib/sf_progstats.h) and nothing is lost unseen.
 * Counted twice: an event whose task sits between its two programs while
 * two other tasks' primaries start on that CPU (the second pushes its
 * receipt out of receipt_prev), or whose receipt another CPU's primary
 * replaces just as the understudy looks there.  A double count is a rescue
 * without a miss, so rescued > misses reveals it when nothing else was
 * lost.
 *
 * Where: this file holds every program of the engine and nothing else;
 * the maps and the code the programs run are in the *.bpf.h headers
 * (satfeed_engine.bpf.h includes the syscall side, satfeed_uring.bpf.h
 * io_uring's, satfeed_age.bpf.h the timer's), which the tests' BPF object
 * (tests/kernel/progs/) includes as well.
 */
#include "satfeed_engine.bpf.h"
#include "satfeed_uring.bpf.h"
#include "satfeed_age.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SF_NR_SYSCALL_MAX 512	/* syscall numbers the tp_btf path maps */

/* syscall number -> enum satfeed_syscall + 1; 0: not a traced syscall;
 * SATFEED_SC_INDEX_URING_ENTER (SF_SC_URING_WAIT + 1): io_uring_enter */
const volatile __u8 sc_index[SF_NR_SYSCALL_MAX] = {};

/* ---- attach mode tp_btf: every syscall of the machine passes here ---- */

/* The traced syscall id is, as enum satfeed_syscall + 1; 0: not traced. */
static __always_inline __u32 sf_traced(long id)
{
	if ((unsigned long)id >= SF_NR_SYSCALL_MAX)
		return 0;
	return sc_index[id];
}

/*
 * The traced syscalls' part of each hook is a subprogram of its own, out of
 * line: every other syscall of the machine runs only the program's test of
 * its number, and a traced one of a process that cannot be a target only
 * that and sf_maybe_target()'s byte, in a frame that saves three
 * registers and needs no stack, instead of the prologue and epilogue the
 * whole engine's code would give it.  The test's task and configuration
 * are passed down; the syscall's sc is found again, since passed down it
 * would have to outlive the helper call of the test in a register that
 * frame would save for every syscall.
 */
static __noinline int sf_sys_enter_traced(struct task_struct *task,
					  struct satfeed_config *cfg,
					  struct pt_regs *regs, long id)
{
	__u32 sc = sf_traced(id);

	if (sc <= SATFEED_SC_POLL_FIRST || sc == SATFEED_SC_INDEX_ACCEPT)
		return 0;	/* for the verifier: the caller tested it */
	/* io_uring_enter is told by its sc_index entry, not by sc - 1: clang
	 * then tests it before the decrement, which stays off the path of
	 * the waits of processes that are not targets */
	return sf_wait_enter_of(task, cfg, sc - 1, regs,
				sc == SATFEED_SC_INDEX_URING_ENTER);
}

static __noinline int sf_sys_exit_traced(struct task_struct *task,
					 struct satfeed_config *cfg,
					 struct pt_regs *regs, long ret)
{
	__u32 sc = sf_traced(sf_regs_nr(regs));

	if (!sc)
		return 0;	/* for the verifier: the caller tested it */
	if (sc == SATFEED_SC_INDEX_URING_ENTER)
		return sf_sys_return_of(task, cfg, SF_SC_URING_WAIT, regs,
					ret);
	if (sc == SATFEED_SC_INDEX_ACCEPT) {
		if (ret >= 0)
			sf_conn_accepted_fd((unsigned int)ret);
		return 0;
	}
	return sf_sys_return_of(task, cfg, sc - 1, regs, ret);
}

static __always_inline int sf_sys_enter_event(struct pt_regs *regs, long id)
{
	__u32 sc = sf_traced(id);
	struct satfeed_config *cfg;
	struct task_struct *task;

	if (sc <= SATFEED_SC_POLL_FIRST || sc == SATFEED_SC_INDEX_ACCEPT)
		return 0;	/* 0, or not a wait */
	cfg = sf_config_get();
	task = bpf_get_current_task_btf();
	if (!cfg || !sf_maybe_target(cfg, task))
		return 0;
	return sf_sys_enter_traced(task, cfg, regs, id);
}

static __always_inline int sf_sys_exit_event(struct pt_regs *regs, long ret)
{
	__u32 sc = sf_traced(sf_regs_nr(regs));
	struct satfeed_config *cfg;
	struct task_struct *task;

	if (!sc)
		return 0;
	cfg = sf_config_get();
	task = bpf_get_current_task_btf();
	if (!cfg || !sf_maybe_target(cfg, task))
		return 0;
	return sf_sys_exit_traced(task, cfg, regs, ret);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_sys_enter, struct pt_regs *regs, long id)
{
	return SF_PRIMARY(SATFEED_HOOK_SYS_ENTER, regs,
			  sf_sys_enter_event(regs, id));
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sf_sys_exit, struct pt_regs *regs, long ret)
{
	return SF_PRIMARY(SATFEED_HOOK_SYS_EXIT, regs,
			  sf_sys_exit_event(regs, ret));
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_sys_enter_u, struct pt_regs *regs, long id)
{
	return SF_UNDERSTUDY(SATFEED_HOOK_SYS_ENTER, regs,
			     sf_sys_enter_event(regs, id));
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sf_sys_exit_u, struct pt_regs *regs, long ret)
{
	return SF_UNDERSTUDY(SATFEED_HOOK_SYS_EXIT, regs,
			     sf_sys_exit_event(regs, ret));
}

/* ---- attach mode fentry: only the traced syscalls run these ----
 * One program per entry of satfeed_syscalls.h: SATFEED_FEXIT_PROG(name) on
 * every syscall, SATFEED_FENTRY_PROG(name) on the waits, and an understudy
 * for each.  The loader points each at __<arch>_sys_<name>
 * (bpf_program__set_attach_target).
 */
#define SF_FEXIT_PROG(prog, understudy, sc)				\
SEC("fexit")								\
int BPF_PROG(prog, struct pt_regs *regs, long ret)			\
{									\
	return SF_PRIMARY(SATFEED_HOOK_FEXIT + sc, regs,		\
			  sf_sys_return(sc, regs, ret));		\
}									\
SEC("fexit")								\
int BPF_PROG(understudy, struct pt_regs *regs, long ret)		\
{									\
	return SF_UNDERSTUDY(SATFEED_HOOK_FEXIT + sc, regs,		\
			     sf_sys_return(sc, regs, ret));		\
}
#define SF_FENTRY_PROG(prog, understudy, sc)				\
SEC("fentry")								\
int BPF_PROG(prog, struct pt_regs *regs)				\
{									\
	return SF_PRIMARY(SATFEED_HOOK_FENTRY + sc, regs,		\
			  sf_wait_enter(sc, regs, false));		\
}									\
SEC("fentry")								\
int BPF_PROG(understudy, struct pt_regs *regs)				\
{									\
	return SF_UNDERSTUDY(SATFEED_HOOK_FENTRY + sc, regs,		\
			     sf_wait_enter(sc, regs, false));		\
}
#define SF_FEXIT(name, NAME, family, fd, fn)				\
	SF_FEXIT_PROG(SATFEED_FEXIT_PROG(name),				\
		      SATFEED_FEXIT_UNDERSTUDY(name), SATFEED_SC_##NAME)
#define SF_FENTRY(name, NAME, family, fd, fn)			\
	SF_FENTRY_PROG(SATFEED_FENTRY_PROG(name),			\
		       SATFEED_FENTRY_UNDERSTUDY(name), SATFEED_SC_##NAME)

SATFEED_SYSCALLS(SF_FEXIT)
SATFEED_WAIT_SYSCALLS(SF_FENTRY)

/* ---- every mode: io_uring requests and waits (satfeed_uring.bpf.h) ---- */

SEC("tp_btf/io_uring_complete")
int sf_uring_complete(__u64 *ctx)
{
	if (bpf_core_type_matches(btf_trace_io_uring_complete___cqe)) {
		struct io_uring_cqe *cqe = (void *)ctx[2];

		return sf_uring_cqe(ctx[0], (void *)ctx[1], cqe->user_data,
				    cqe->res, cqe->flags);
	}
	/* before 6.15: (ctx, req, user_data, res, cflags, extra1, extra2) */
	return sf_uring_cqe(ctx[0], (void *)ctx[1], ctx[2], (__s32)ctx[3],
			    (__u32)ctx[4]);
}

/* A target's multishot RECV/RECVMSG is armed. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(sf_uring_submit, struct io_kiocb *req)
{
	return sf_uring_ms_note(req);
}

/*
 * A request's poll wake-up queues the task work that runs it again: every
 * multishot receive that is waiting for data passes here before the CQEs
 * of the data that woke it (__io_poll_execute(), also when the receive
 * asks to be requeued after MULTISHOT_MAX_RETRY), so one armed before the
 * engine saw its submission is remembered by its next wake-up.
 */
SEC("tp_btf/io_uring_task_add")
int BPF_PROG(sf_uring_task_add, struct io_kiocb *req, int mask)
{
	return sf_uring_ms_note(req);
}

/* ---- the wait: io_uring_enter(2) with IORING_ENTER_GETEVENTS ---- */

/*
 * The current thread's io_uring wait goes to sleep: its wait in progress,
 * if it is a target's, now counts (sf_wait.unslept).  Every io_uring sleep
 * of the machine passes here; a process that cannot be a target stops at
 * its pid_slot byte, before the task storage lookup.
 */
SEC("tp_btf/io_uring_cqring_wait")
int BPF_PROG(sf_uring_sleep, void *ring, int min_events)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();
	struct sf_wait *w;

	if (!cfg || !sf_maybe_target(cfg, task))
		return 0;
	w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
	if (w && w->unslept)
		w->unslept = 0;
	return 0;
}

/*
 * fentry mode: the loader points these at __<arch>_sys_io_uring_enter.  The
 * wait is the engine's, as for epoll_wait (tp_btf mode reaches the same
 * code through sc_index): io_uring_enter is sc SF_SC_URING_WAIT there.
 */
SEC("fentry")
int BPF_PROG(sf_uring_enter_e, struct pt_regs *regs)
{
	return sf_wait_enter(SF_SC_URING_WAIT, regs, true);
}

SEC("fexit")
int BPF_PROG(sf_uring_enter_x, struct pt_regs *regs, long ret)
{
	return sf_sys_return(SF_SC_URING_WAIT, regs, ret);
}

/* ---- every mode: the connections a target accepts (responses) ---- */

/* fentry mode (sf_engine_select); tp_btf mode sees accept's return */
SEC("fexit/inet_csk_accept")
int BPF_PROG(sf_accept, struct sock *sk, void *arg, struct sock *newsk)
{
	sf_conn_accepted(newsk);
	return 0;
}

/* every mode: a target's TCP connection closes (responses); not
 * loaded without the response stream (sf_engine_configure) */
SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(sf_conn_close, struct sock *sk, int oldstate, int newstate)
{
	sf_conn_state(sk, newstate);
	return 0;
}

/* ---- every mode: a watched process or cgroup that ends is marked gone ---- */

/* The target ix points to, when it is still that generation and kind. */
static __always_inline void sf_mark_gone(struct satfeed_index *ix, __u32 kind)
{
	struct satfeed_target *t = bpf_map_lookup_elem(&sf_targets, &ix->slot);

	if (t && t->gen == ix->gen && t->kind == kind) {
		t->gone_ns = bpf_ktime_get_ns();
		t->state = SATFEED_STATE_GONE;
	}
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sf_proc_exit, struct task_struct *p)
{
	struct satfeed_index *ix;
	__u32 tgid;

	sf_age_arm();	/* once: the loader ends a child to get here */
	/* signal->live reaches 0 when the last thread of the group exits */
	if (p->signal->live.counter)
		return 0;
	tgid = p->tgid;
	ix = bpf_map_lookup_elem(&sf_pid_index, &tgid);
	if (!ix)
		return 0;
	sf_mark_gone(ix, SATFEED_TARGET_PID);
	bpf_map_delete_elem(&sf_pid_index, &tgid);
	return 0;
}

/*
 * rmdir, not cgroup_release: a cgroup v2 directory can only be removed
 * empty and never comes back (its id is not reused), so from here on the
 * target cannot count anything; the release can wait indefinitely for the
 * last reference (a socket created in the cgroup holds one).  The kernel
 * formats the path for this tracepoint under a global lock, once per rmdir
 * on the machine: rare enough.
 */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(sf_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	struct satfeed_index *ix;
	__u64 cgid;

	/* v1 hierarchies number their directories on their own: only the
	 * default hierarchy (id 0, cgroup v2) has the ids the index holds */
	if (cgrp->root->hierarchy_id)
		return 0;
	cgid = cgrp->kn->id;
	ix = bpf_map_lookup_elem(&sf_cgrp_index, &cgid);
	if (!ix)
		return 0;
	sf_mark_gone(ix, SATFEED_TARGET_CGROUP);
	bpf_map_delete_elem(&sf_cgrp_index, &cgid);
	return 0;
}
