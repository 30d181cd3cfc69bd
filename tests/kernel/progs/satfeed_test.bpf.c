// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeed_test.bpf.c - test-only programs around the engine's inline code.
 *
 * sf_test_feed feeds chosen values into sf_account(), the locked window
 * update every syscall hook of bpf/satfeed.bpf.c ends in: a syscall number
 * test_nr made by test_tgid accounts sf_test_in.value to the given stream,
 * as the time of an event (raw == 0) or as a sample (raw == 1: a wait that
 * ended at time now, or at time value when now is 0, of which runq was run
 * delay), or counts it as a failed or empty call's return value
 * (count == 1).  The test swaps the engine's sf_streams, sf_targets and
 * sf_verdict in for this object's before load, so the windows and verdicts
 * land where the engine's own programs put theirs.
 */
#include "satfeed_engine.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the test between open and load. */
const volatile __u32 test_tgid = 0;
const volatile long test_nr = -1;	/* getppid on the test's machine */

/* Written by the test through the skeleton's .bss before each syscall. */
struct {
	__u32 slot;
	__u32 stream;
	__u32 gen;
	__u32 raw;		/* 1: value is a sample; 0: value is a time */
	__u32 count;		/* 1: value is a call's return for sf_count() */
	__u64 value;
	__u64 now;		/* raw: the wait's end; 0: value */
	__u64 runq;		/* raw: its run delay */
} sf_test_in;

SEC("tp_btf/sys_enter")
int BPF_PROG(sf_test_feed, struct pt_regs *regs, long id)
{
	if ((bpf_get_current_pid_tgid() >> 32) != test_tgid)
		return 0;
	if (id != test_nr)
		return 0;
	if (sf_test_in.stream >= SATFEED_NR_STREAMS ||
	    sf_test_in.slot >= SATFEED_MAX_TARGETS)
		return 0;
	if (sf_test_in.count)
		sf_count(sf_test_in.slot, sf_test_in.stream, sf_test_in.gen,
			 (long)sf_test_in.value);
	else if (sf_test_in.raw)
		sf_account(sf_test_in.slot, sf_test_in.stream, sf_test_in.gen,
			   sf_test_in.now ?: sf_test_in.value, false,
			   sf_test_in.value, sf_test_in.runq, NULL,
			   sf_test_in.stream < SATFEED_NR_STREAMS);
	else
		sf_account(sf_test_in.slot, sf_test_in.stream, sf_test_in.gen,
			   sf_test_in.value, true, 0, 0, NULL,
			   sf_test_in.stream < SATFEED_NR_STREAMS);
	return 0;
}
