/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * satfeed_syscalls.h - the syscalls satfeed traces, listed once.
 *
 * SATFEED_SYSCALLS(X) expands X(name, NAME, family, fd, fn) for each of
 * them, in the order of enum satfeed_syscall:
 *   name    the syscall as user space names it (SYS_<name>): its programs'
 *           names and its name in satfeedctl
 *   NAME    its enum value is SATFEED_SC_<NAME>, its bit in sc_mask
 *   family  SEND, RECV or POLL: the stream it feeds, SATFEED_STREAM_<family>.
 *           The POLL family are the waits: they are timed from entry to exit
 *   fd      FD_ANY: always counted; FD_SOCKET0 / FD_SOCKET2: counted only
 *           when its argument 0 / argument 2 is a socket fd (read/write:
 *           the fd; sendfile: out_fd; splice: fd_out, the output)
 *   fn      the kernel's function for it, SYSCALL_DEFINE(fn): the fentry
 *           attach mode hooks its wrapper __<arch>_sys_<fn>.  It differs
 *           from name for sendfile only: the 64-bit syscall tables (x86-64,
 *           arm64) map sendfile to sys_sendfile64 and have no separate
 *           sendfile64 syscall; __x64_sys_sendfile exists but only the
 *           32-bit table reaches it.
 * SATFEED_WAIT_SYSCALLS(X) expands X the same way for the waits only.
 *
 * The order is part of the contract (sc_mask bit numbers): the families are
 * contiguous, send then recv then poll (satfeed.h checks it), because the
 * engine tells them apart by comparing with SATFEED_SC_*_FIRST.
 *
 * Generated from this list: enum satfeed_syscall and SATFEED_SC_SOCKET_FD
 * (satfeed.h), the engine's fentry-mode programs and the loader's attach
 * targets for them, the floor programs of sfbench_empty.bpf.c, and the names
 * table sf_syscalls[] of the tools.  The io_uring members have a list of
 * their own below (SATFEED_URING_OPS): enum satfeed_uring_op, their sc_mask
 * bits and SATFEED_SC_URING_SOCKET_FD, the engine's opcode table and the
 * rest of sf_syscalls[] are generated from it.
 */
#ifndef __SATFEED_SYSCALLS_H
#define __SATFEED_SYSCALLS_H

#define SATFEED_SYSCALL_TABLE(EACH, X)					\
	EACH(X, sendto,		SENDTO,		SEND, FD_ANY,		sendto) \
	EACH(X, sendmsg,	SENDMSG,	SEND, FD_ANY,		sendmsg) \
	EACH(X, sendmmsg,	SENDMMSG,	SEND, FD_ANY,		sendmmsg) \
	EACH(X, write,		WRITE,		SEND, FD_SOCKET0,	write) \
	EACH(X, writev,		WRITEV,		SEND, FD_SOCKET0,	writev) \
	EACH(X, sendfile,	SENDFILE,	SEND, FD_SOCKET0,	sendfile64) \
	EACH(X, splice,		SPLICE,		SEND, FD_SOCKET2,	splice) \
	EACH(X, recvfrom,	RECVFROM,	RECV, FD_ANY,		recvfrom) \
	EACH(X, recvmsg,	RECVMSG,	RECV, FD_ANY,		recvmsg) \
	EACH(X, recvmmsg,	RECVMMSG,	RECV, FD_ANY,		recvmmsg) \
	EACH(X, read,		READ,		RECV, FD_SOCKET0,	read) \
	EACH(X, readv,		READV,		RECV, FD_SOCKET0,	readv) \
	EACH(X, epoll_wait,	EPOLL_WAIT,	POLL, FD_ANY,		epoll_wait) \
	EACH(X, epoll_pwait,	EPOLL_PWAIT,	POLL, FD_ANY,		epoll_pwait) \
	EACH(X, epoll_pwait2,	EPOLL_PWAIT2,	POLL, FD_ANY,		epoll_pwait2) \
	EACH(X, select,		SELECT,		POLL, FD_ANY,		select) \
	EACH(X, pselect6,	PSELECT6,	POLL, FD_ANY,		pselect6) \
	EACH(X, poll,		POLL,		POLL, FD_ANY,		poll) \
	EACH(X, ppoll,		PPOLL,		POLL, FD_ANY,		ppoll)

/* EACH for SATFEED_SYSCALLS: every entry */
#define SATFEED_SC_EACH(X, ...)		X(__VA_ARGS__)
/* EACH for SATFEED_WAIT_SYSCALLS: the POLL family's entries */
#define SATFEED_SC_EACH_WAIT(X, name, NAME, family, fd, fn)		\
	SATFEED_SC_IF_WAIT_##family(X, name, NAME, family, fd, fn)
#define SATFEED_SC_IF_WAIT_SEND(X, ...)
#define SATFEED_SC_IF_WAIT_RECV(X, ...)
#define SATFEED_SC_IF_WAIT_POLL(X, ...)	X(__VA_ARGS__)

#define SATFEED_SYSCALLS(X)	 SATFEED_SYSCALL_TABLE(SATFEED_SC_EACH, X)
#define SATFEED_WAIT_SYSCALLS(X) SATFEED_SYSCALL_TABLE(SATFEED_SC_EACH_WAIT, X)

/*
 * SATFEED_URING_OPS(X): the io_uring members, X(name, NAME, family, fd) like
 * the syscalls.  They are sc_mask members too, counted from the top bit
 * down (SATFEED_SC_URING_FIRST in satfeed.h), so the syscall list can grow
 * without renumbering them:
 *   name    its name in satfeedctl is "io_uring_<name>"; for the send and
 *           recv families it is also the operation, IORING_OP_<NAME>
 *   family  as above; each family is one run, send then recv then poll
 *   fd      FD_SOCKET: counted only when the request's file is a socket
 * The send and recv members are counted once per completion (CQE) of such
 * a request of a target's ring, at completion time: every CQE of a
 * multishot RECV is one.  The poll member, wait, is not an operation: it is
 * a target's io_uring_enter(2) with IORING_ENTER_GETEVENTS, timed from entry
 * to exit like epoll_wait.  bpf/satfeed_uring.bpf.h has the hooks.
 * SATFEED_URING_IO_OPS(X) expands X for the send and recv members only.
 */
#define SATFEED_URING_TABLE(EACH, X)					\
	EACH(X, send,		SEND,		SEND, FD_ANY)		\
	EACH(X, send_zc,	SEND_ZC,	SEND, FD_ANY)		\
	EACH(X, sendmsg,	SENDMSG,	SEND, FD_ANY)		\
	EACH(X, sendmsg_zc,	SENDMSG_ZC,	SEND, FD_ANY)		\
	EACH(X, write,		WRITE,		SEND, FD_SOCKET)	\
	EACH(X, writev,		WRITEV,		SEND, FD_SOCKET)	\
	EACH(X, recv,		RECV,		RECV, FD_ANY)		\
	EACH(X, recvmsg,	RECVMSG,	RECV, FD_ANY)		\
	EACH(X, read,		READ,		RECV, FD_SOCKET)	\
	EACH(X, readv,		READV,		RECV, FD_SOCKET)	\
	EACH(X, wait,		WAIT,		POLL, FD_ANY)

/* EACH for SATFEED_URING_IO_OPS: the SEND and RECV families' entries */
#define SATFEED_SC_EACH_IO(X, name, NAME, family, fd)			\
	SATFEED_SC_IF_IO_##family(X, name, NAME, family, fd)
#define SATFEED_SC_IF_IO_SEND(X, ...)	X(__VA_ARGS__)
#define SATFEED_SC_IF_IO_RECV(X, ...)	X(__VA_ARGS__)
#define SATFEED_SC_IF_IO_POLL(X, ...)

#define SATFEED_URING_OPS(X)	SATFEED_URING_TABLE(SATFEED_SC_EACH, X)
#define SATFEED_URING_IO_OPS(X)	SATFEED_URING_TABLE(SATFEED_SC_EACH_IO, X)

/*
 * The fentry attach mode's programs: SATFEED_FEXIT_PROG(name), sf_x_<name>,
 * on the exit of every syscall, and SATFEED_FENTRY_PROG(name), sf_e_<name>,
 * on the entry of every wait; sf_xu_<name> and sf_eu_<name> are their
 * understudies.  They are pinned under these names, so the
 * names are part of the pin layout; SATFEED_*_PROG_NAME(name) is the string.
 */
#define SATFEED_FEXIT_PROG(name)	sf_x_##name
#define SATFEED_FENTRY_PROG(name)	sf_e_##name
/* their understudies (satfeed.bpf.c, "Exactness and preemption") */
#define SATFEED_FEXIT_UNDERSTUDY(name)	sf_xu_##name
#define SATFEED_FENTRY_UNDERSTUDY(name)	sf_eu_##name
#define SATFEED_STR_(x)			#x
#define SATFEED_STR(x)			SATFEED_STR_(x)
#define SATFEED_FEXIT_PROG_NAME(name)	SATFEED_STR(SATFEED_FEXIT_PROG(name))
#define SATFEED_FENTRY_PROG_NAME(name)	SATFEED_STR(SATFEED_FENTRY_PROG(name))
#define SATFEED_FEXIT_UNDERSTUDY_NAME(name)				\
	SATFEED_STR(SATFEED_FEXIT_UNDERSTUDY(name))
#define SATFEED_FENTRY_UNDERSTUDY_NAME(name)				\
	SATFEED_STR(SATFEED_FENTRY_UNDERSTUDY(name))

/*
 * The io_uring programs (bpf/satfeed_uring.bpf.h): the completion,
 * submission and poll wake-up (task_add) tracepoints in every attach mode,
 * and in fentry mode the entry and exit of io_uring_enter for the wait
 * member.
 */
#define SATFEED_URING_PROG_NAMES \
	"sf_uring_complete", "sf_uring_submit", "sf_uring_task_add", \
	"sf_uring_enter_e", "sf_uring_enter_x", "sf_uring_sleep"
/* tp_btf mode: the sc_index value of io_uring_enter (not a table entry):
 * like a syscall's, its sc_mask bit + 1 */
#define SATFEED_SC_INDEX_URING_ENTER	(SATFEED_SC_URING_BIT(WAIT) + 1)
/* tp_btf mode: the sc_index value of accept and accept4, above every
 * other (the connections a target accepts: bpf/satfeed_engine.bpf.h); fentry
 * mode sees them at inet_csk_accept (sf_accept) instead */
#define SATFEED_SC_INDEX_ACCEPT		(SATFEED_SC_INDEX_URING_ENTER + 1)

/*
 * The engine's other programs, pinned under their names too: the tp_btf
 * mode's two (every syscall of the machine), the process-exit and
 * cgroup-removal hooks that every mode loads, the connections' accept
 * (fentry mode) and close, and the tp_btf mode's understudies.  Together
 * with the per-syscall ones above, this is every name the loader may pin
 * and unload may remove.
 */
#define SATFEED_OTHER_PROG_NAMES \
	"sf_sys_enter", "sf_sys_exit", "sf_proc_exit", "sf_cgroup_rmdir", \
	"sf_accept", "sf_conn_close", \
	"sf_sys_enter_u", "sf_sys_exit_u", SATFEED_URING_PROG_NAMES

#if !defined(__bpf__) && !defined(__KERNEL__)
/* user space: the fentry mode attaches to SATFEED_SYSCALL_PREFIX "<fn>" */
#if defined(__x86_64__)
#define SATFEED_SYSCALL_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SATFEED_SYSCALL_PREFIX "__arm64_sys_"
#else
#error "satfeed: add this architecture's syscall wrapper prefix"
#endif
#endif

#endif /* __SATFEED_SYSCALLS_H */
