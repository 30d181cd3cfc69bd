/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sf_loop.h - the event-loop set-up shared by sfserver and sfload: the stop
 * signals, blocked so that only a signalfd sees them, and an fd added to an
 * epoll set with the tag that tells its events apart.
 */
#ifndef __SF_LOOP_H
#define __SF_LOOP_H

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>

/*
 * Fill mask with SIGINT and SIGTERM and block them in this thread and the
 * threads it starts from now on, for a signalfd on mask to read.  Returns
 * what pthread_sigmask() returns.
 */
static inline int sf_block_stop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	return pthread_sigmask(SIG_BLOCK, mask, NULL);
}

/* Watch fd for EPOLLIN in epfd; its events carry tag in data.ptr. */
static inline int sf_epoll_add(int epfd, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

#endif /* __SF_LOOP_H */
