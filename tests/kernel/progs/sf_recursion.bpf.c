// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_recursion.bpf.c - a program the kernel skips on purpose, so that the
 * report of skipped runs (recursion misses) is tested with a count that is
 * not zero on a kernel where satfeed's own programs never miss.
 *
 * sf_recursion runs on the bpf_trace_printk tracepoint and itself prints,
 * which fires that tracepoint again on the same CPU while it runs: the
 * kernel skips that nested run and counts one recursion miss.  It only
 * prints for the trigger's message, so other programs' bpf_printk() calls
 * cost it nothing and count nothing.  sf_recursion_trigger prints that
 * message once per syscall whose first argument is SF_RECURSION_MAGIC
 * (`kill -0 2063527169` in a shell: a pid above any pid_max, so the call
 * fails and signals nothing): N such calls, exactly N misses.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SF_RECURSION_MAGIC	0x7afeed01UL

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_recursion_trigger, struct pt_regs *regs, long id)
{
	if (PT_REGS_PARM1_CORE(regs) == SF_RECURSION_MAGIC)
		bpf_printk("satfeed-recursion");
	return 0;
}

SEC("tp_btf/bpf_trace_printk")
int BPF_PROG(sf_recursion, const char *msg)
{
	char head[10] = {};

	bpf_probe_read_kernel_str(head, sizeof(head), msg);
	if (__builtin_memcmp(head, "satfeed-r", 9))
		return 0;
	bpf_printk("satfeed-recursion nested");
	return 0;
}
