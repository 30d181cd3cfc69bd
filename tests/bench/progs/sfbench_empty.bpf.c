// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sfbench_empty.bpf.c - the floor for sfbench (tests/bench/sfbench/).
 *
 * sfb_enter / sfb_exit: empty BTF raw tracepoint programs on the same two
 * hooks satfeed's tp_btf mode uses (raw_syscalls sys_enter / sys_exit).
 * Whatever they cost an unrelated syscall is the price of the attach mode
 * itself (the tracepoint call, the trampoline into the program, and with
 * kernel.bpf_stats_enabled the kernel's own accounting); satfeed's overhead
 * is judged against it.
 *
 * sfb_x_<name> / sfb_e_<name>: the same floor for satfeed's fentry mode,
 * empty fexit programs on the syscalls satfeed hooks (19) and empty fentry
 * programs on the 7 waits, from the engine's own list (satfeed_syscalls.h).
 * sfbench points them at the same __<arch>_sys_<name> wrappers as
 * satfeed-loader and loads them only in that mode (kernels that refuse
 * fentry, such as the development hosts, never see them).
 *
 * The sfb_v_* programs are probes for finding where satfeed's time goes:
 * each one, attached alone to sys_exit while only the traced worker runs a
 * getppid() loop, does one of the building blocks of satfeed's per-sample
 * path for the worker's own syscalls (sfb_tgid) and nothing for others.  The
 * difference between a probe's time per run and sfb_v_gate's is the price of
 * that block on this kernel.  They copy the shape of satfeed.bpf.c's code;
 * they are measurements, not a second engine.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "satfeed.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(sfb_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_exit, struct pt_regs *regs, long ret)
{
	return 0;
}

/* the fentry-mode floor: attach targets set by sfbench */
#define SFB_FEXIT(name, ...)						\
SEC("fexit")								\
int BPF_PROG(sfb_x_##name, struct pt_regs *regs, long ret)		\
{									\
	return 0;							\
}
#define SFB_FENTRY(name, ...)						\
SEC("fentry")								\
int BPF_PROG(sfb_e_##name, struct pt_regs *regs)			\
{									\
	return 0;							\
}

SATFEED_SYSCALLS(SFB_FEXIT)
SATFEED_WAIT_SYSCALLS(SFB_FENTRY)

/* ---- probes: the building blocks of satfeed's sample path ---- */

const volatile __u32 sfb_tgid = 0;	/* the traced worker */
const volatile __u32 sfb_fd = 0;	/* fd the socket-check probes look at */

struct sfb_slot {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 last_ns;
	__u64 n;
	__u64 sum;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct satfeed_index);
} sfb_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct sfb_slot);
} sfb_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct satfeed_config);
} sfb_config SEC(".maps");

/*
 * One window in progress, as the two floor probes keep it: the previous
 * event's time, the samples, their sum and the 128-bit sum of their
 * squares; for the lock-free one also the ticket (samples taken) and the
 * samples finished, the N-th of which would close the window.
 */
struct sfb_win {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 last_ns;
	__u64 n;
	__u64 sum;
	__u64 sq_lo;
	__u64 sq_hi;
	__u64 done;
	__u64 closes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SATFEED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct sfb_win);
} sfb_wins SEC(".maps");

/* One clock read and one exact sample (the gap since the previous event,
 * capped as the engine caps it, and its square in 128 bits) added to w
 * under its lock, as satfeed's window takes a send or receive. */
static __always_inline void sfb_sample_locked(struct sfb_win *w)
{
	__u64 now = bpf_ktime_get_ns(), gap, sq, lo;

	bpf_spin_lock(&w->lock);
	gap = now > w->last_ns ? now - w->last_ns : 0;
	if (gap > SATFEED_SAMPLE_CAP_NS)
		gap = SATFEED_SAMPLE_CAP_NS;
	w->last_ns = now;
	w->sum += gap;
	sq = gap * gap;
	lo = w->sq_lo + sq;
	w->sq_hi += lo < sq;
	w->sq_lo = lo;
	if (++w->n == 2048) {
		w->n = 0;
		w->closes++;
	}
	bpf_spin_unlock(&w->lock);
}

/*
 * A lookup that needs no helper call: tgid % 1024 -> slot + 1 (0: none),
 * confirmed against the slot's tgid.  What sfb_v_slot and sfb_v_sample2
 * measure as an alternative to the hash map.
 */
struct sfb_direct {
	__u8 slot1[SATFEED_PID_SLOTS];
	__u32 tgid[SATFEED_MAX_TARGETS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfb_direct);
} sfb_direct SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} sfb_task SEC(".maps");

__u64 sfb_sink;			/* results land here: nothing is optimised out */

static __always_inline bool sfb_gate(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == sfb_tgid;
}

/* the gate alone: the baseline of every other probe */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_gate, struct pt_regs *regs, long ret)
{
	if (!sfb_gate())
		return 0;
	sfb_sink++;
	return 0;
}

/* the gate with the tgid read from the task instead of a helper */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_gate2, struct pt_regs *regs, long ret)
{
	if (bpf_get_current_task_btf()->tgid != sfb_tgid)
		return 0;
	sfb_sink++;
	return 0;
}

/* satfeed's prefilter: config array lookup and one byte of pid_slot */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_filter, struct pt_regs *regs, long ret)
{
	struct satfeed_config *cfg;
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid != sfb_tgid)
		return 0;
	cfg = bpf_map_lookup_elem(&sfb_config, &zero);
	if (!cfg)
		return 0;
	sfb_sink += cfg->pid_slot[tgid % SATFEED_PID_SLOTS];
	return 0;
}

/* the tgid -> target hash lookup (64 entries) */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_hash, struct pt_regs *regs, long ret)
{
	struct satfeed_index *ix;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid != sfb_tgid)
		return 0;
	ix = bpf_map_lookup_elem(&sfb_pids, &tgid);
	if (ix)
		sfb_sink += ix->slot;
	return 0;
}

static __always_inline int sfb_direct_slot(__u32 tgid)
{
	struct sfb_direct *d;
	__u32 zero = 0, slot;

	d = bpf_map_lookup_elem(&sfb_direct, &zero);
	if (!d)
		return -1;
	slot = d->slot1[tgid % SATFEED_PID_SLOTS];
	if (!slot || slot > SATFEED_MAX_TARGETS)
		return -1;
	slot--;
	return d->tgid[slot] == tgid ? (int)slot : -1;
}

/* the same lookup without a helper: direct-mapped table, one compare */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_slot, struct pt_regs *regs, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	int slot;

	if (tgid != sfb_tgid)
		return 0;
	slot = sfb_direct_slot(tgid);
	if (slot >= 0)
		sfb_sink += slot;
	return 0;
}

/* one clock read */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_ktime, struct pt_regs *regs, long ret)
{
	if (!sfb_gate())
		return 0;
	sfb_sink += bpf_ktime_get_ns();
	return 0;
}

/* one uncontended bpf_spin_lock / bpf_spin_unlock around a few stores */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_lock, struct pt_regs *regs, long ret)
{
	struct sfb_slot *s;
	__u32 key = 0;

	if (!sfb_gate())
		return 0;
	s = bpf_map_lookup_elem(&sfb_slots, &key);
	if (!s)
		return 0;
	bpf_spin_lock(&s->lock);
	s->n++;
	s->sum += s->n;
	bpf_spin_unlock(&s->lock);
	return 0;
}

/* an atomic add on a shared counter (satfeed's per-stream counters) */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_atomic, struct pt_regs *regs, long ret)
{
	struct sfb_slot *s;
	__u32 key = 1;

	if (!sfb_gate())
		return 0;
	s = bpf_map_lookup_elem(&sfb_slots, &key);
	if (s)
		__sync_fetch_and_add(&s->n, 1);
	return 0;
}

/* satfeed's socket check: task->files->fdt->fd[fd]->f_inode->i_mode */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_sock, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct fdtable *fdt;
	struct file *f = NULL;
	unsigned long fd = sfb_fd;

	if (!sfb_gate())
		return 0;
	task = bpf_get_current_task_btf();
	fdt = task->files->fdt;
	if (fd >= fdt->max_fds)
		return 0;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]) || !f)
		return 0;
	sfb_sink += bpf_core_cast(f, struct file)->f_inode->i_mode;
	return 0;
}

/*
 * The same socket check without bpf_probe_read_kernel: the fd array slot is
 * read through bpf_core_cast as a struct kiocb, whose first member is a
 * struct file pointer, so the load is an inlined, fault-safe BTF load.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_sock2, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct fdtable *fdt;
	struct file *f;
	unsigned long fd = sfb_fd;

	if (!sfb_gate())
		return 0;
	task = bpf_get_current_task_btf();
	fdt = task->files->fdt;
	if (fd >= fdt->max_fds)
		return 0;
	f = bpf_core_cast(&fdt->fd[fd], struct kiocb)->ki_filp;
	if (!f)
		return 0;
	sfb_sink += f->f_inode->i_mode;
	return 0;
}

/* a task storage lookup (satfeed's wait start, looked up at every wait) */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_task, struct pt_regs *regs, long ret)
{
	__u64 *v;

	if (!sfb_gate())
		return 0;
	v = bpf_task_storage_get(&sfb_task, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (v)
		sfb_sink += ++*v;
	return 0;
}

/* the whole sample path in one, as satfeed does it: prefilter, hash, clock,
 * one exact sample under the lock (not the window's close) */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_sample, struct pt_regs *regs, long ret)
{
	struct satfeed_config *cfg;
	struct satfeed_index *ix;
	struct sfb_win *w;
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid != sfb_tgid)
		return 0;
	cfg = bpf_map_lookup_elem(&sfb_config, &zero);
	if (!cfg)
		return 0;
	if (!cfg->pid_slot[tgid % SATFEED_PID_SLOTS])
		return 0;
	ix = bpf_map_lookup_elem(&sfb_pids, &tgid);
	if (!ix)
		return 0;
	w = bpf_map_lookup_elem(&sfb_wins, &ix->slot);
	if (w)
		sfb_sample_locked(w);
	return 0;
}

/* the sample path with the direct-mapped lookup instead of the hash */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_sample2, struct pt_regs *regs, long ret)
{
	struct sfb_win *w;
	__u32 tgid;
	int slot;

	tgid = bpf_get_current_pid_tgid() >> 32;
	if (tgid != sfb_tgid)
		return 0;
	slot = sfb_direct_slot(tgid);
	if (slot < 0)
		return 0;
	w = bpf_map_lookup_elem(&sfb_wins, &slot);
	if (w)
		sfb_sample_locked(w);
	return 0;
}

/*
 * The physical floor of issue 24: the cheapest program that reads one
 * clock and adds one exact sample (a gap, its square in 128 bits) to a
 * window, with the lock satfeed takes today.  No target lookup: the gate
 * stands for it.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_floor, struct pt_regs *regs, long ret)
{
	struct sfb_win *w;
	__u32 key = 0;

	if (!sfb_gate())
		return 0;
	w = bpf_map_lookup_elem(&sfb_wins, &key);
	if (w)
		sfb_sample_locked(w);
	return 0;
}

/*
 * The same sample without the lock, as issue 24's lock-free window would
 * take it: the previous event's time by exchange, a ticket (the sample's
 * place in the window) by fetch-add, the sums by atomic adds, the carry of
 * the square's low word from the fetch-add's old value, and a fetch-add
 * of the finished samples (the N-th finisher closes).  Five or six locked
 * instructions and no helper call but the clock.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(sfb_v_lockfree, struct pt_regs *regs, long ret)
{
	struct sfb_win *w;
	__u32 key = 1;
	__u64 now, prev, gap, sq, old, idx;

	if (!sfb_gate())
		return 0;
	w = bpf_map_lookup_elem(&sfb_wins, &key);
	if (!w)
		return 0;
	now = bpf_ktime_get_ns();
	prev = __sync_lock_test_and_set(&w->last_ns, now);
	gap = now > prev ? now - prev : 0;
	if (gap > SATFEED_SAMPLE_CAP_NS)
		gap = SATFEED_SAMPLE_CAP_NS;
	idx = __sync_fetch_and_add(&w->n, 1);
	__sync_fetch_and_add(&w->sum, gap);
	sq = gap * gap;
	old = __sync_fetch_and_add(&w->sq_lo, sq);
	if (old + sq < old)
		__sync_fetch_and_add(&w->sq_hi, 1);
	if (__sync_fetch_and_add(&w->done, 1) % 2048 == 2047)
		__sync_fetch_and_add(&w->closes, 1);
	sfb_sink += idx;
	return 0;
}
