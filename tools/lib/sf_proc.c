// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_proc.c - process liveness for the target protocol: a pidfd that a
 * reused pid cannot fool, and the threads' exit flags in /proc.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sf_proc.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* task->flags: the thread has begun do_exit() (include/linux/sched.h) */
#define PF_EXITING 0x00000004

int sf_proc_open(__u64 pid)
{
	int fd;

	if (!pid || pid > (__u64)INT32_MAX)
		return -ESRCH;
	fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);
	return fd < 0 ? -errno : fd;
}

/* A pidfd polls readable once its process has exited (a zombie included). */
static bool pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) != 0;
}

/* Is thread tid of pid running, neither exiting nor dead? */
static bool thread_running(__u64 pid, const char *tid)
{
	char path[96], buf[512], state = 0, *p;
	unsigned long flags = PF_EXITING;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%llu/task/%s/stat",
		 (unsigned long long)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* after the comm, which may hold anything: state ppid pgrp session
	 * tty_nr tpgid flags */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state,
			 &flags) != 2)
		return false;
	return state != 'Z' && state != 'X' && state != 'x' &&
	       !(flags & PF_EXITING);
}

static bool any_thread_running(__u64 pid)
{
	struct dirent *de;
	bool running = false;
	char path[64];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%llu/task",
		 (unsigned long long)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!running && (de = readdir(d)))
		if (de->d_name[0] != '.')
			running = thread_running(pid, de->d_name);
	closedir(d);
	return running;
}

bool sf_proc_exiting(int pidfd, __u64 pid)
{
	if (pidfd_exited(pidfd) || !any_thread_running(pid))
		return true;
	/*
	 * /proc showed this process, not another one with its pid, if it had
	 * not exited by the time it was read: a pid is free for reuse only
	 * after its process became a zombie, which the pidfd reports.
	 */
	return pidfd_exited(pidfd);
}
