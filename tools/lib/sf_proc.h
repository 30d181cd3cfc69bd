/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_proc.h - is a process still there, in the sense the engine needs?
 *
 * The engine marks a pid target gone when the last thread of its process
 * passes sched_process_exit, and only if the target's index entry exists by
 * then.  So an add indexes the target first and checks afterwards that the
 * process had not begun to exit: through a pidfd, which a reused pid cannot
 * fool, and through the PF_EXITING flag of its threads, which each thread sets
 * before that tracepoint fires (a pidfd reports the exit only later, once
 * the process is a zombie).
 *
 *	int pidfd = sf_proc_open(pid);
 *	... insert the index entry ...
 *	if (pidfd < 0 || sf_proc_exiting(pidfd, pid))
 *		... undo: the engine may have missed the exit ...
 */
#ifndef __SF_PROC_H
#define __SF_PROC_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * A pidfd of process pid.  -ESRCH when there is none, -EINVAL when pid is a
 * thread but not a process, another -errno on failure.
 */
int sf_proc_open(__u64 pid);

/*
 * Has the process of pidfd (whose pid is pid) exited, or has every one of
 * its threads begun to exit?  Either way its exit may already be past the
 * point where the engine would see it.  A zombie has exited.
 */
bool sf_proc_exiting(int pidfd, __u64 pid);

#endif /* __SF_PROC_H */
