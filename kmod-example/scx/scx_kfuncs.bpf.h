/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_kfuncs.bpf.h - the part of sched_ext's BPF interface scx_satfeed uses.
 *
 * sched_ext has no Debian package (no scx, no include/scx/), so this names
 * the kfuncs directly, as the kernel (7.x) exports them; a vmlinux.h dumped
 * from that kernel's BTF declares the same prototypes and the types
 * (struct sched_ext_ops, enum scx_dsq_id_flags, ...).  Only the calls made
 * here are declared: a scheduler that uses more adds them.
 */
#ifndef __SCX_KFUNCS_BPF_H
#define __SCX_KFUNCS_BPF_H

/* queues */
s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice,
			u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;
s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym;

/* CPUs */
bool scx_bpf_test_and_clear_cpu_idle(s32 cpu) __ksym;
void scx_bpf_kick_cpu(s32 cpu, u64 flags) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
void scx_bpf_cpuperf_set(s32 cpu, u32 perf) __ksym;

/* errors: the message reaches the scheduler's exit info */
void scx_bpf_error_bstr(char *fmt, unsigned long long *data,
			u32 data__sz) __ksym;

/* cpumask access for p->cpus_ptr */
bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;

/*
 * scx_sf_error(fmt, a, b): stop the scheduler with a formatted reason (two
 * arguments, the format in .rodata as the kfunc requires).
 */
#define scx_sf_error(fmt, a, b)						\
	({								\
		static char ___fmt[] = fmt;				\
		unsigned long long ___args[2] = { (a), (b) };		\
		scx_bpf_error_bstr(___fmt, ___args, sizeof(___args));	\
	})

/* One sched_ext_ops callback; BPF_PROG gives it typed arguments. */
#define SCX_OPS(name, args...)						\
	SEC("struct_ops/" #name) BPF_PROG(name, ##args)
#define SCX_OPS_SLEEPABLE(name, args...)				\
	SEC("struct_ops.s/" #name) BPF_PROG(name, ##args)

#endif /* __SCX_KFUNCS_BPF_H */
