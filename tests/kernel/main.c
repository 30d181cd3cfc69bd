// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_kernel - the engine's BPF code, run by the kernel.  One file per
 * topic, each saying what it checks; main() runs them in this order:
 *  window_feed.c   exact windows through the engine's own sf_account()
 *  concurrency.c   the real hooks under concurrent traffic and reading
 *  stale_wait.c    a failed wait that outlives its target's slot
 *  run_delay.c     the run-queue time of real waits behind a CPU hog
 *  fd_high_bits.c  read/write whose fd has bits above 31 set
 *  compat.c        a 32-bit child's syscall numbers
 *  proc_exit.c     a watched child's exit
 *  uring.c         io_uring operations and waits, counted exactly; multishot
 *                  receives armed before the engine or the add too
 *  send_members.c  sendfile and splice by output fd, in each attach mode;
 *                  the per-syscall counts of a target in discovery
 *  age.c           the age bound: old windows close, quiet targets read
 *                  quiet and idle, waits in progress count as slack
 *  responses.c     the response stream: one per answered request, however
 *                  many sends; a proxy's backend side does not count
 *  verdict_tick.c  the default rules at the tick: the idle share of the
 *                  threads that woke (a sleeper left out), service-time
 *                  growth over its baseline
 *  udp_drops.c     the drops of a target's UDP socket, as the kernel counts
 *                  them, and their share per tick
 * common.c holds the setup they share.
 *
 * Uses the skeleton directly and pins nothing; its maps are read and
 * written through libsatfeed, as the tools do with the pins.
 */
#include "test_kernel.h"

static int quiet_print(enum libbpf_print_level l, const char *f, va_list a)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, a) : 0;
}

int main(int argc, char **argv)
{
	struct sf_preempt pre;
	bool understudies;
	char why[512];

	if (geteuid()) {
		fprintf(stderr, "test_kernel: needs root\n");
		printf("test_kernel: 0 passed, 1 failed\n");
		return 1;
	}
	libbpf_set_print(quiet_print);
	srandom(0xfeed5a7);
	test_window_feed(4);
	test_window_feed(SATFEED_WINDOW_SHIFT);
	test_window_feed(SATFEED_WINDOW_SHIFT_MAX);
	if (getenv("SF_TEST_ONLY_FEED")) {	/* a developer's quick run */
		test_run_delay();
		test_udp_drops();
		test_unread();
		return sf_test_summary("test_kernel");
	}
	sf_preempt_probe(&pre, NULL);
	understudies = sf_understudy_wanted(&pre, SATFEED_ATTACH_TP_BTF,
					    SF_UNDERSTUDY_AUTO, why,
					    sizeof(why));
	printf("concurrency: the loader's choice here: understudies %s\n", why);
	test_concurrency(understudies);
	test_concurrency(!understudies);
	test_stale_wait();
	test_run_delay();
	test_fd_high_bits();
	test_compat();
	test_proc_exit();
	test_uring();
	test_uring_prearmed();
	test_send_members();
	test_age();
	test_responses();
	test_verdict_tick();
	test_udp_drops();
	test_unread();
	return sf_test_summary("test_kernel");
}
