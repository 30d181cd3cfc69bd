/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_hooks.h - the syscalls satfeed's fentry attach mode hooks, in one
 * place.
 *
 * X-macros: SATFEED_FEXIT_HOOKS(X) calls X(name, SC) for each of the 17
 * traced syscalls (an fexit program on its wrapper, every family), and
 * SATFEED_FENTRY_HOOKS(X) for each of the 7 waits (an fentry program too:
 * the wait's start).  name is the syscall's name, SC its enum
 * satfeed_syscall value (satfeed.h).  The attach target is the syscall's
 * wrapper, "__x64_sys_<name>" on x86-64 and "__arm64_sys_<name>" on arm64
 * (SATFEED_SYSCALL_PREFIX below).
 *
 * Users: bpf/satfeed.bpf.c (the engine's sf_x_<name> and sf_e_<name>
 * programs; their names are pinned, so they are part of the layout),
 * tests/bench/progs/sfbench_empty.bpf.c (the empty floor on exactly the same hooks) and
 * tests/bench/sfbench.c (which programs to open and where to attach them).
 */
#ifndef SATFEED_HOOKS_H
#define SATFEED_HOOKS_H

#ifndef __bpf__
/* user space: the hooks attach to SATFEED_SYSCALL_PREFIX "<name>" */
#if defined(__x86_64__)
#define SATFEED_SYSCALL_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SATFEED_SYSCALL_PREFIX "__arm64_sys_"
#else
#error "satfeed: add this architecture's syscall wrapper prefix"
#endif
#endif

/* the waits: an fentry (their start) and an fexit program each */
#define SATFEED_FENTRY_HOOKS(X)					\
	X(epoll_wait, SATFEED_SC_EPOLL_WAIT)			\
	X(epoll_pwait, SATFEED_SC_EPOLL_PWAIT)			\
	X(epoll_pwait2, SATFEED_SC_EPOLL_PWAIT2)		\
	X(select, SATFEED_SC_SELECT)				\
	X(pselect6, SATFEED_SC_PSELECT6)			\
	X(poll, SATFEED_SC_POLL)				\
	X(ppoll, SATFEED_SC_PPOLL)

#define SATFEED_FEXIT_HOOKS(X)					\
	X(sendto, SATFEED_SC_SENDTO)				\
	X(sendmsg, SATFEED_SC_SENDMSG)				\
	X(sendmmsg, SATFEED_SC_SENDMMSG)			\
	X(write, SATFEED_SC_WRITE)				\
	X(writev, SATFEED_SC_WRITEV)				\
	X(recvfrom, SATFEED_SC_RECVFROM)			\
	X(recvmsg, SATFEED_SC_RECVMSG)				\
	X(recvmmsg, SATFEED_SC_RECVMMSG)			\
	X(read, SATFEED_SC_READ)				\
	X(readv, SATFEED_SC_READV)				\
	SATFEED_FENTRY_HOOKS(X)

#endif /* SATFEED_HOOKS_H */
