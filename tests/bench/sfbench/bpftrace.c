// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpftrace.c - the paper's method: bpftrace running tests/bench/listing1.bt
 * on the traced worker.
 */
#include "sfbench.h"

static const char *bt_path(void)
{
	return o.bt_out ? o.bt_out : bt_tmp;
}

/* ids of bpftrace's sys_enter/sys_exit programs once they are attached to
 * their perf events (what `bpftool perf list` shows): found through the
 * file descriptors of the bpftrace process */
static bool bt_attached(__u32 ids[NR_PR])
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	ids[0] = ids[1] = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", bt_pid);
	d = opendir(dir);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		__u32 len, prog_id = 0, fd_type = 0;
		__u64 off = 0, addr = 0;
		char name[64];
		int fd = atoi(de->d_name), pfd;
		struct bpf_prog_info pi = {};
		__u32 pl = sizeof(pi);

		if (de->d_name[0] == '.')
			continue;
		len = sizeof(name);
		if (bpf_task_fd_query(bt_pid, fd, 0, name, &len, &prog_id,
				      &fd_type, &off, &addr) || !prog_id)
			continue;
		pfd = bpf_prog_get_fd_by_id(prog_id);
		if (pfd < 0)
			continue;
		if (!bpf_prog_get_info_by_fd(pfd, &pi, &pl) &&
		    pi.type == BPF_PROG_TYPE_TRACEPOINT) {
			if (!strcmp(pi.name, "sys_enter"))
				ids[PR_ENTER] = prog_id;
			else if (!strcmp(pi.name, "sys_exit"))
				ids[PR_EXIT] = prog_id;
		}
		close(pfd);
	}
	closedir(d);
	return ids[0] && ids[1];
}

int bt_start(void)
{
	char pidarg[16];
	__u32 ids[NR_PR];
	pid_t pid;
	int fd;

	snprintf(pidarg, sizeof(pidarg), "%d", W_T.pid);
	fd = open(bt_path(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		msg("%s: %s", bt_path(), strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -1;
	}
	if (pid == 0) {
		const char *argv[] = { o.bt_bin, o.bt_script, pidarg, NULL };
		cpu_set_t set;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* off the measuring CPU, like the orchestrator */
		CPU_ZERO(&set);
		CPU_SET(o.cpu == 0 ? 1 : 0, &set);
		sched_setaffinity(0, sizeof(set), &set);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(fd);
	bt_pid = pid;
	/* bpftrace takes a second or two to compile and attach (much more
	 * under emulation: --bpftrace-wait) */
	for (int i = 0; i < o.bt_wait * 10; i++) {
		int st;

		if (waitpid(bt_pid, &st, WNOHANG) == bt_pid) {
			bt_pid = -1;
			msg("%s %s exited before attaching (see %s)", o.bt_bin,
			    o.bt_script, bt_path());
			return -1;
		}
		if (bt_attached(ids)) {
			for (int p = 0; p < NR_PR; p++) {
				struct progset *ps = &psets[CFG_BPFTRACE][p];

				ps->fd[0] = bpf_prog_get_fd_by_id(ids[p]);
				ps->n = ps->fd[0] >= 0;
			}
			usleep(100000);	/* its BEGIN printf, settled */
			return 0;
		}
		usleep(100000);
	}
	msg("%s did not attach its programs within %d s", o.bt_bin,
	    o.bt_wait);
	kill_wait(&bt_pid);
	return -1;
}

/* stop bpftrace as a user would (Ctrl-C), and check that it counted the
 * traced worker's sends: the last "@send_n: N" it printed */
int bt_stop(void)
{
	long long sends = -1;
	char line[256];
	FILE *f;
	int st = 0;

	for (int p = 0; p < NR_PR; p++)
		progset_close(&psets[CFG_BPFTRACE][p]);
	if (bt_pid < 0)
		return 0;
	kill(bt_pid, SIGINT);
	for (int i = 0; i < o.bt_wait * 10; i++) {
		if (waitpid(bt_pid, &st, WNOHANG) == bt_pid) {
			bt_pid = -1;
			break;
		}
		usleep(100000);
	}
	if (bt_pid > 0) {
		msg("%s did not stop on SIGINT within %d s; killing it",
		    o.bt_bin, o.bt_wait);
		kill_wait(&bt_pid);
		return -1;
	}
	f = fopen(bt_path(), "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "@send_n: ", 9))
			sends = atoll(line + 9);
	if (f)
		fclose(f);
	if (sends < phase_n(P_TPAIR) / 2) {
		msg("bpftrace counted %lld send intervals of the traced worker, expected at least %ld (see %s)",
		    sends, phase_n(P_TPAIR) / 2, bt_path());
		counted_ok = false;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}
