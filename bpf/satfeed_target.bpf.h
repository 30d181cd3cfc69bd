/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_target.bpf.h - which watched target an event belongs to, and the
 * task's facts the hooks ask on the way: its file of an fd (a socket or
 * not), a syscall's arguments from pt_regs, a compat call.
 *
 * Design: one lookup, sf_find_target_of(), for a syscall's caller and an
 * io_uring request's owner alike, and sf_maybe_target() before it, the
 * one byte every other process of the machine stops at.  Nothing here
 * writes: the syscall paths and the response stream
 * (satfeed_engine.bpf.h) and io_uring (satfeed_uring.bpf.h) all start here.
 */
#ifndef __SATFEED_TARGET_BPF_H
#define __SATFEED_TARGET_BPF_H

#include "satfeed_account.bpf.h"

#define SF_S_IFMT	00170000
#define SF_S_IFSOCK	0140000

/* The watched target an event belongs to. */
struct sf_hit {
	__u32 slot;
	__u32 gen;
	__u32 sc_mask;
};

/* The key of one-entry arrays, in .rodata: a lookup with it needs no
 * stack, so the hooks' first frame (bpf/satfeed.bpf.c) has none. */
const volatile __u32 sf_key_zero = 0;

static __always_inline struct satfeed_config *sf_config_get(void)
{
	return bpf_map_lookup_elem(&sf_config, (const void *)&sf_key_zero);
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

/*
 * The struct sock of fd of task (an untrusted pointer), NULL when fd is
 * not a socket, or a socket whose sock is gone (released under a close
 * racing the call): the socket check of the read/write family and the
 * response stream's connection in one walk.
 */
static __always_inline struct sock *sf_fd_sock(struct task_struct *task,
					       unsigned int fd)
{
	struct file *f = sf_fd_file(task, fd);
	struct socket *so;

	if (!f || (bpf_core_cast(f, struct file)->f_inode->i_mode &
		   SF_S_IFMT) != SF_S_IFSOCK)
		return NULL;
	so = bpf_core_cast(f, struct file)->private_data;
	if (!so)
		return NULL;
	return bpf_core_cast(so, struct socket)->sk;
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

#endif /* __SATFEED_TARGET_BPF_H */
