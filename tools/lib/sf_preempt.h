/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_preempt.h - can the engine's programs be preempted on this kernel,
 * and so should their understudies run (bpf/satfeed.bpf.c, "Exactness and
 * preemption")?
 *
 * Two facts decide it: the preemption model the kernel runs with (only
 * full, lazy and rt preempt kernel code at any point), and the attach
 * mode: fentry/fexit programs run preemptibly on such a kernel (the
 * trampolines only disable migration), tp_btf programs on the syscall
 * tracepoints only where those tracepoints are faultable (7.x; before,
 * every tracepoint probe ran with preemption disabled).
 */
#ifndef __SF_PREEMPT_H
#define __SF_PREEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum sf_understudy_choice {
	SF_UNDERSTUDY_AUTO = 0,
	SF_UNDERSTUDY_ON,
	SF_UNDERSTUDY_OFF,
};

struct sf_preempt {
	char model[16];		/* none, voluntary, full, lazy, rt; "" unknown */
	char source[96];	/* where the model was found */
	int tp_faultable;	/* syscall tracepoints faultable: 1, 0, -1 unknown */
};

/* Parse "auto", "on" or "off".  0, or -1 for anything else. */
int sf_understudy_parse(const char *s, enum sf_understudy_choice *c);

/*
 * Find the preemption model (the running model from
 * /sys/kernel/debug/sched/preempt, else preempt= on the command line, else
 * the build's default from uname -v and the kernel config) and whether the
 * syscall tracepoints are faultable (the kernel BTF at btf_path, NULL for
 * /sys/kernel/btf/vmlinux, has struct tracepoint_ext.faultable).
 */
void sf_preempt_probe(struct sf_preempt *p, const char *btf_path);

/*
 * Should attach mode `mode` (enum satfeed_attach) run understudies, given
 * the user's choice?  *why (len bytes) gets a one-line reason.
 */
bool sf_understudy_wanted(const struct sf_preempt *p, __u32 mode,
			  enum sf_understudy_choice choice, char *why,
			  size_t len);

#endif /* __SF_PREEMPT_H */
