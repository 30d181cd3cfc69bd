// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * compat.c - a 32-bit child's ia32 syscall numbers are not read as x86-64
 * ones (brk as recvfrom).
 */
#include "test_kernel.h"

#define COMPAT_ROUNDS "3000"

/*
 * Watch pid as satfeedctl would, minus its refusal of 32-bit programs: the
 * engine itself must not misread the calls of such a process.
 */
static int watch_raw(const struct sf_pins *p, __u32 slot, pid_t pid)
{
	struct satfeed_target t = { .kind = SATFEED_TARGET_PID, .id = pid,
				    .gen = 1, .sc_mask = SATFEED_SC_ALL,
				    .added_ns = sf_now_mono_ns() };
	struct satfeed_index ix = { .slot = slot, .gen = 1,
				    .sc_mask = SATFEED_SC_ALL };
	__u32 key = pid;
	int err = 0;

	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		err = err ?: sf_stream_reset(p, slot, s, 1);
	if (err || bpf_map_update_elem(p->targets_fd, &slot, &t, 0) ||
	    sf_config_rebuild(p) ||
	    bpf_map_update_elem(p->pid_index_fd, &key, &ix, 0))
		return err ?: -errno;
	return 0;
}

/*
 * A 32-bit process's syscall numbers are ia32 ones (brk 45 is x86-64's
 * recvfrom, getgid 47 its recvmsg): none may be counted as an x86-64 call.
 */
void test_compat(void)
{
	static const char *const progs[] = { "sf_sys_enter", "sf_sys_exit",
					     NULL };
	char exe[PATH_MAX], line[64] = "";
	int in[2], out[2], status;
	struct satfeed_stream st;
	struct satfeed_bpf *skel;
	const __u32 slot = 7;
	struct sf_pins p;
	ssize_t n = -1;
	pid_t child;
	char *slash;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	if (!ASSERT_TRUE(n > 0, "readlink /proc/self/exe"))
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	strcpy(slash + 1, "sfcompat32");
	if (!ASSERT_OK(access(exe, X_OK), "the 32-bit helper is built") ||
	    !ASSERT_OK(pipe(in), "pipe") || !ASSERT_OK(pipe(out), "pipe"))
		return;
	skel = open_engine(SATFEED_WINDOW_SHIFT, progs);
	if (!skel)
		return;
	child = fork();
	if (child == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(exe, "sfcompat32", COMPAT_ROUNDS, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (!engine_maps(skel, &p) ||
	    !ASSERT_OK(watch_raw(&p, slot, child), "watch the 32-bit child"))
		goto kill_child;
	write(in[1], "x", 1);
	n = read(out[0], line, sizeof(line) - 1);
	ASSERT_TRUE(n > 0 && !strncmp(line, "done", 4),
		    "the 32-bit child made its calls (read %zd)", n);
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		char what[96];

		ASSERT_OK(read_stream(&p, slot, s, &st, true), "read");
		snprintf(what, sizeof(what),
			 "32-bit calls read as x86-64 %s calls",
			 sf_stream_names[s]);
		ASSERT_EQ(st.calls + st.errors + st.eagain + st.zero_bytes +
				  st.not_socket, 0, what);
	}
kill_child:
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	close(in[1]);
	close(out[0]);
	satfeed_bpf__destroy(skel);
}
