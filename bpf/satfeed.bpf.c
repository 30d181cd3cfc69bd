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
 * pinned sf_streams map.
 *
 * Why this way: one bpf_spin_lock per (target, stream) serialises the update
 * of the previous-event time and the running sums, so every sample lands in
 * exactly one window and a window closes atomically; the lock is held for a
 * few dozen instructions and taken only for events of watched targets.
 * bpf_spin_lock is allowed in BPF_PROG_TYPE_TRACING programs (tp_btf,
 * fentry/fexit), which is why those are the two attach modes: classic
 * tracepoint programs may not take one.
 *
 * Cost, cheapest rejection first (tp_btf mode; fentry mode skips step 1
 * because only the traced syscalls run it):
 *  1. syscall number -> family index: one bounds check and one byte load
 *     from .rodata; every other syscall of the machine stops here.
 *  2. pid_slot: one byte load from sf_config indexed by tgid % 1024, then,
 *     for a pid target, one inlined array lookup: no helper call and no
 *     hash lookup.  Every other process stops here (only while cgroup
 *     targets exist does it pay one ancestor-cgroup-id helper and hash
 *     lookup per distinct target level).
 *  3. watched targets only: the socket check for read/write family calls
 *     (plain fault-safe loads), task storage for waits, then the clock and
 *     the locked update: bpf_ktime_get_ns and the lock pair are the bulk of
 *     the cost of a sample (docs/performance.md).
 *
 * Exactness and preemption: the kernel runs a tracing program at most once
 * per CPU at a time (bpf_prog_get_recursion_context(), prog->active) and
 * skips, counting it in bpf_prog_info.recursion_misses, any run that starts
 * while another is in progress there.  Where the hooks run preemptibly
 * (from 7.x the syscall tracepoints are faultable and nothing disables
 * preemption around the BPF probe; fentry/fexit on any kernel with
 * preemption, the trampolines only disable migration), a run preempted on
 * a CPU loses the events of every other task there that reach the same
 * program until it resumes.  Disabling preemption from inside the program
 * (bpf_preempt_disable()) cannot help: the kernel marks the program active
 * before its first instruction and clears the mark after its last, and a
 * preemption that falls due inside the body is taken at
 * bpf_preempt_enable(), still inside that window.  What the kernel skipped
 * is reported instead: recursion_misses of each pinned program
 * (tools/lib/sf_progstats.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "satfeed.h"
#include "satfeed_maps.bpf.h"
#include "window_math.h"
#include "satfeed_internal.h"
#include "satfeed_hooks.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SF_NR_SYSCALL_MAX 512	/* syscall numbers the tp_btf path maps */
#define SF_EAGAIN	11
#define SF_S_IFMT	00170000
#define SF_S_IFSOCK	0140000

/* Set by the loader between open and load. */
const volatile __u32 window_shift = SATFEED_WINDOW_SHIFT;
/* syscall number -> enum satfeed_syscall + 1; 0: not a traced syscall */
const volatile __u8 sc_index[SF_NR_SYSCALL_MAX] = {};
/* Test hook: tgid whose getppid() feeds sf_test_in (tests only). */
const volatile __u32 test_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_config);
} sf_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_index);
} sf_pid_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u64);
	__type(value, struct satfeed_index);
} sf_cgrp_index SEC(".maps");

/* A wait in progress on one thread of a watched target. */
struct sf_wait {
	__u64 start_ns;		/* 0: no wait in progress */
	__u32 slot;
	__u32 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sf_wait);
} sf_poll_start SEC(".maps");

/* Test hook input, written through the skeleton's .bss by tests only. */
struct sf_test_in sf_test_in;

/*
 * Push hook: called after every window closes, outside the lock, with a
 * copy of the window.  A no-op here; a consumer hooks it at run time (an
 * fentry program on it, in any attach mode, or an freplace of it in tp_btf
 * mode: see kmod-example/), so the engine neither needs the consumer nor is
 * rebuilt for it.  Keep the name and prototype: they are part of the contract.
 */
__noinline int satfeed_window_closed(__u32 slot, __u32 stream,
				     struct satfeed_window *w)
{
	/* keep every argument live: clang drops unused ones at call sites,
	 * and an freplace program must receive all three */
	asm volatile("" : : "r"(slot), "r"(stream), "r"(w) : "memory");
	return 0;
}

static __always_inline struct satfeed_stream *sf_stream(__u32 slot,
							__u32 stream)
{
	__u32 key = slot * SATFEED_NR_STREAMS + stream;

	return bpf_map_lookup_elem(&sf_streams, &key);
}

/*
 * Account one event of a target's stream at time now.  gap: the sample is the
 * time since the stream's previous event (send/recv); otherwise it is the
 * given wait duration.  Events that race on two CPUs can reach the lock out
 * of time order; such a gap is 0 and the previous-event time never goes back,
 * so the window sums still telescope to last - first.
 */
static __always_inline void sf_account(__u32 slot, __u32 stream, __u32 gen,
				       __u64 now, bool gap, __u64 sample)
{
	struct satfeed_window closed;
	struct satfeed_stream *s;
	int done = 0;

	s = sf_stream(slot, stream);
	if (!s)
		return;
	bpf_spin_lock(&s->lock);
	if (s->gen != gen) {
		/* the slot was reused since the event was attributed */
		bpf_spin_unlock(&s->lock);
		return;
	}
	s->calls++;
	if (gap) {
		__u64 last = s->last_ns;

		if (!last || now <= last) {
			sample = 0;
			if (last)
				now = last;
		} else {
			sample = now - last;
		}
		s->last_ns = now;
		if (!last) {
			bpf_spin_unlock(&s->lock);
			return;
		}
	} else {
		s->last_ns = now;
	}
	done = sf_window_add(s, sample, now, window_shift, &closed);
	bpf_spin_unlock(&s->lock);
	if (done)
		satfeed_window_closed(slot, stream, &closed);
}

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

static __always_inline bool sf_find_target(struct satfeed_config *cfg,
					   struct task_struct *task,
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

		/* an array lookup the verifier inlines: no helper call */
		t = bpf_map_lookup_elem(&sf_targets, &slot);
		if (t && t->id == tgid && t->kind == SATFEED_TARGET_PID &&
		    t->state == SATFEED_STATE_ACTIVE) {
			hit->slot = slot;
			hit->gen = t->gen;
			hit->sc_mask = t->sc_mask;
			return true;
		}
	} else if (v) {
		ix = bpf_map_lookup_elem(&sf_pid_index, &tgid);
	}
	for (i = 0; !ix && i < SATFEED_MAX_CGROUP_LEVELS; i++) {
		__u64 cgid;

		if (i >= cfg->nr_cgroup_levels)
			break;
		cgid = bpf_get_current_ancestor_cgroup_id(cfg->cgroup_level[i]);
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
 * Is fd of task a socket?  Only asked for read/write family samples.  The fd
 * array holds struct file pointers; reading one through a struct whose first
 * member is a struct file * (kiocb.ki_filp) makes it a plain fault-safe load
 * instead of a bpf_probe_read_kernel() call.  Where a kernel moved ki_filp,
 * the CO-RE offset is not 0 and the helper is used instead.
 */
static __always_inline bool sf_fd_is_socket(struct task_struct *task,
					    unsigned long fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file **fds, *f = NULL;
	umode_t mode;

	if (fd >= fdt->max_fds)
		return false;
	fds = fdt->fd;
	if (bpf_core_field_offset(struct kiocb, ki_filp) == 0)
		f = bpf_core_cast(&fds[fd], struct kiocb)->ki_filp;
	else if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]))
		return false;
	if (!f)
		return false;
	mode = bpf_core_cast(f, struct file)->f_inode->i_mode;
	return (mode & SF_S_IFMT) == SF_S_IFSOCK;
}

static __always_inline unsigned long sf_regs_arg0(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->di;
#elif defined(__TARGET_ARCH_arm64)
	return regs->orig_x0;
#else
#error "satfeed: add this architecture's first syscall argument register"
#endif
}

static __always_inline long sf_regs_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#endif
}

/* A wait syscall (poll family) begins on the current thread. */
static __always_inline int sf_wait_enter(__u32 sc)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();
	struct sf_hit hit;
	struct sf_wait *w;

	if (!cfg || !sf_find_target(cfg, task, &hit) ||
	    !(hit.sc_mask & (1U << sc)))
		return 0;
	w = bpf_task_storage_get(&sf_poll_start, task, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!w)
		return 0;
	w->slot = hit.slot;
	w->gen = hit.gen;
	w->start_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline void sf_count(__u32 slot, __u32 stream, long ret)
{
	struct satfeed_stream *s = sf_stream(slot, stream);

	if (!s)
		return;
	if (ret == -SF_EAGAIN)
		__sync_fetch_and_add(&s->eagain, 1);
	else if (ret < 0)
		__sync_fetch_and_add(&s->errors, 1);
	else
		__sync_fetch_and_add(&s->zero_bytes, 1);
}

/* Any traced syscall returns on the current thread. */
static __always_inline int sf_sys_return(__u32 sc, struct pt_regs *regs,
					 long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct satfeed_config *cfg = sf_config_get();
	struct sf_hit hit;
	__u32 stream;
	__u64 now;

	if (!cfg)
		return 0;
	if (sc >= SATFEED_SC_POLL_FIRST) {
		struct sf_wait *w;
		__u64 start;

		/* most waits on a machine are not a target's: skip the
		 * task storage lookup for them */
		if (!sf_maybe_target(cfg, task))
			return 0;
		w = bpf_task_storage_get(&sf_poll_start, task, NULL, 0);
		if (!w || !w->start_ns)
			return 0;
		start = w->start_ns;
		w->start_ns = 0;
		if (ret < 0) {
			sf_count(w->slot, SATFEED_STREAM_POLL, ret);
			return 0;
		}
		now = bpf_ktime_get_ns();
		sf_account(w->slot, SATFEED_STREAM_POLL, w->gen, now, false,
			   now - start);
		return 0;
	}

	if (!sf_find_target(cfg, task, &hit) || !(hit.sc_mask & (1U << sc)))
		return 0;
	stream = sc >= SATFEED_SC_RECV_FIRST ? SATFEED_STREAM_RECV :
					       SATFEED_STREAM_SEND;
	if (sc == SATFEED_SC_READ || sc == SATFEED_SC_READV ||
	    sc == SATFEED_SC_WRITE || sc == SATFEED_SC_WRITEV) {
		if (!sf_fd_is_socket(task, sf_regs_arg0(regs))) {
			struct satfeed_stream *s = sf_stream(hit.slot, stream);

			if (s)
				__sync_fetch_and_add(&s->not_socket, 1);
			return 0;
		}
	}
	if (ret <= 0) {
		sf_count(hit.slot, stream, ret);
		return 0;
	}
	sf_account(hit.slot, stream, hit.gen, bpf_ktime_get_ns(), true, 0);
	return 0;
}

/* ---- attach mode tp_btf: every syscall of the machine passes here ---- */

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_sys_enter, struct pt_regs *regs, long id)
{
	__u32 sc;

	if ((unsigned long)id >= SF_NR_SYSCALL_MAX)
		return 0;
	sc = sc_index[id];
	if (sc <= SATFEED_SC_POLL_FIRST)	/* 0, or not a wait */
		return 0;
	return sf_wait_enter(sc - 1);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sf_sys_exit, struct pt_regs *regs, long ret)
{
	long id = sf_regs_nr(regs);
	__u32 sc;

	if ((unsigned long)id >= SF_NR_SYSCALL_MAX)
		return 0;
	sc = sc_index[id];
	if (!sc)
		return 0;
	return sf_sys_return(sc - 1, regs, ret);
}

/* ---- attach mode fentry: only the traced syscalls run these ----
 * The loader points each at __<arch>_sys_<name> (bpf_program__set_attach_target).
 * The hooked syscalls are listed in satfeed_hooks.h (sfbench's floor uses the
 * same list): sf_x_<name> on every one, sf_e_<name> on the waits.
 */
#define SF_FEXIT(name, SC)						\
SEC("fexit")								\
int BPF_PROG(sf_x_##name, struct pt_regs *regs, long ret)		\
{									\
	return sf_sys_return(SC, regs, ret);				\
}
#define SF_FENTRY(name, SC)						\
SEC("fentry")								\
int BPF_PROG(sf_e_##name, struct pt_regs *regs)				\
{									\
	return sf_wait_enter(SC);					\
}

SATFEED_FEXIT_HOOKS(SF_FEXIT)
SATFEED_FENTRY_HOOKS(SF_FENTRY)

/* ---- every mode: a watched process that exits is marked gone ---- */

SEC("tp_btf/sched_process_exit")
int BPF_PROG(sf_proc_exit, struct task_struct *p)
{
	struct satfeed_target *t;
	struct satfeed_index *ix;
	__u32 tgid;

	/* signal->live reaches 0 when the last thread of the group exits */
	if (p->signal->live.counter)
		return 0;
	tgid = p->tgid;
	ix = bpf_map_lookup_elem(&sf_pid_index, &tgid);
	if (!ix)
		return 0;
	t = bpf_map_lookup_elem(&sf_targets, &ix->slot);
	if (t && t->gen == ix->gen && t->kind == SATFEED_TARGET_PID) {
		t->gone_ns = bpf_ktime_get_ns();
		t->state = SATFEED_STATE_GONE;
	}
	bpf_map_delete_elem(&sf_pid_index, &tgid);
	return 0;
}

/*
 * ---- tests only (autoload off): feed chosen values into sf_account ----
 * A getppid() by test_tgid accounts sf_test_in.value to the given stream, as
 * the time of an event (raw == 0) or as a sample (raw == 1), through the same
 * locked code the syscall hooks use.
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(sf_test_feed, struct pt_regs *regs, long id)
{
	if ((bpf_get_current_pid_tgid() >> 32) != test_tgid)
		return 0;
	if (id != 110 /* x86-64 __NR_getppid */)
		return 0;
	if (sf_test_in.stream >= SATFEED_NR_STREAMS ||
	    sf_test_in.slot >= SATFEED_MAX_TARGETS)
		return 0;
	if (sf_test_in.raw)
		sf_account(sf_test_in.slot, sf_test_in.stream, sf_test_in.gen,
			   sf_test_in.value, false, sf_test_in.value);
	else
		sf_account(sf_test_in.slot, sf_test_in.stream, sf_test_in.gen,
			   sf_test_in.value, true, 0);
	return 0;
}
