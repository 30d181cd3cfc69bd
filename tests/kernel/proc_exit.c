// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc_exit.c - a watched child that exits is marked gone and unindexed.
 */
#include "test_kernel.h"

void test_proc_exit(void)
{
	static const char *const progs[] = { "sf_proc_exit", NULL };
	struct satfeed_index ix = { .slot = 3, .gen = 7 };
	struct satfeed_target t = { .kind = SATFEED_TARGET_PID, .gen = 7 };
	struct satfeed_bpf *skel;
	int pipefd[2], status;
	__u32 slot = 3, tgid;
	pid_t child;
	char c;

	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel || pipe(pipefd))
		goto out;
	child = fork();
	if (child == 0) {
		read(pipefd[0], &c, 1);
		_exit(0);
	}
	tgid = child;
	t.id = child;
	ASSERT_OK(bpf_map__update_elem(skel->maps.sf_targets, &slot, 4, &t,
				       sizeof(t), 0), "target");
	ASSERT_OK(bpf_map__update_elem(skel->maps.sf_pid_index, &tgid, 4, &ix,
				       sizeof(ix), 0), "index");
	write(pipefd[1], "x", 1);
	waitpid(child, &status, 0);
	ASSERT_OK(bpf_map__lookup_elem(skel->maps.sf_targets, &slot, 4, &t,
				       sizeof(t), 0), "read target");
	ASSERT_EQ(t.state, SATFEED_STATE_GONE, "exited process marked gone");
	ASSERT_TRUE(t.gone_ns > 0, "gone_ns set");
	ASSERT_TRUE(bpf_map__lookup_elem(skel->maps.sf_pid_index, &tgid, 4,
					 &ix, sizeof(ix), 0) != 0,
		    "exited process still indexed");
	close(pipefd[0]);
	close(pipefd[1]);
out:
	satfeed_bpf__destroy(skel);
}
