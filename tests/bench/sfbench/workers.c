// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * workers.c - the worker processes: the measured loops, pinned to one CPU,
 * timed by their own CPU time; and the idle processes that make up the 64
 * targets.
 */
#include "sfbench.h"
#include <liburing.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

static struct io_uring ring;	/* the worker's, for OP_URING */
static int udp_srv = -1, udp_cli = -1;	/* OP_UDP's: unconnected, connected */
/* OP_TCP's: listening, the client's end, the end it accepted */
static int tcp_lsn = -1, tcp_cli = -1, tcp_acc = -1;

/* CPU time of the calling thread: time spent preempted by other processes
 * (a shared 2-CPU VM) does not count, time in the syscalls does. */
static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		msg("cannot pin to CPU %d: %s", cpu, strerror(errno));
}

/* The measured loops.  Returns 0 or an errno. */
static int loop(int op, long n, int sv[2], int ep)
{
	struct epoll_event ev;
	char c = 'x';

	switch (op) {
	case OP_GETPPID:
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		return 0;
	case OP_RW:
		for (long i = 0; i < n; i++)
			if (write(sv[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
				return errno ? errno : EIO;
		return 0;
	case OP_PAIR:
		for (long i = 0; i < n; i++)
			if (send(sv[0], &c, 1, 0) != 1 ||
			    recv(sv[1], &c, 1, 0) != 1)
				return errno ? errno : EIO;
		return 0;
	case OP_EPOLL:
		for (long i = 0; i < n; i++)
			if (epoll_wait(ep, &ev, 1, 0) != 1)
				return errno ? errno : EIO;
		return 0;
	case OP_UDP:
		for (long i = 0; i < n; i++)
			if (send(udp_cli, &c, 1, 0) != 1 ||
			    recv(udp_srv, &c, 1, 0) != 1)
				return errno ? errno : EIO;
		return 0;
	case OP_TCP:
		for (long i = 0; i < n; i++)
			if (send(tcp_cli, &c, 1, 0) != 1 ||
			    recv(tcp_acc, &c, 1, 0) != 1 ||
			    send(tcp_acc, &c, 1, 0) != 1 ||
			    recv(tcp_cli, &c, 1, 0) != 1)
				return errno ? errno : EIO;
		return 0;
	case OP_URING:
		for (long i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;
			int res;

			if (!sqe)
				return EBUSY;
			io_uring_prep_send(sqe, sv[0], &c, 1, 0);
			if (io_uring_submit_and_wait(&ring, 1) != 1 ||
			    io_uring_peek_cqe(&ring, &cqe))
				return EIO;
			res = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
			if (res != 1 || read(sv[1], &c, 1) != 1)
				return res < 0 ? -res : EIO;
		}
		return 0;
	}
	return EINVAL;
}

/* A child of sfbench: default signal handling (the cleanup is the parent's
 * job), and it dies with the parent. */
static void child_init(pid_t parent)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
}

/* OP_UDP's sockets: a server bound to a free loopback port, a client
 * connected to it; 0 or -1 */
static int udp_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);

	udp_srv = socket(AF_INET, SOCK_DGRAM, 0);
	udp_cli = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_srv < 0 || udp_cli < 0 ||
	    bind(udp_srv, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(udp_srv, (struct sockaddr *)&a, &l) ||
	    connect(udp_cli, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	return 0;
}

/* OP_TCP's listening socket on a free loopback port; 0 or -1 */
static int tcp_listen(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	tcp_lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (tcp_lsn < 0 || bind(tcp_lsn, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(tcp_lsn, 1))
		return -1;
	return 0;
}

/*
 * A new OP_TCP connection for each run of the phase: the engine keeps a
 * connection's record from its accept by a target, and each configuration
 * of a round loads its own engine.  Nagle off on both ends, so that each
 * byte leaves at its send.  0 or an errno.
 */
static int tcp_reconnect(void)
{
	struct sockaddr_in a;
	socklen_t l = sizeof(a);
	int one = 1;

	if (tcp_cli >= 0)
		close(tcp_cli);
	if (tcp_acc >= 0)
		close(tcp_acc);
	tcp_acc = -1;
	tcp_cli = socket(AF_INET, SOCK_STREAM, 0);
	if (tcp_cli < 0 || getsockname(tcp_lsn, (struct sockaddr *)&a, &l) ||
	    connect(tcp_cli, (struct sockaddr *)&a, sizeof(a)))
		return errno ? errno : EIO;
	tcp_acc = accept(tcp_lsn, NULL, NULL);
	if (tcp_acc < 0 ||
	    setsockopt(tcp_cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(tcp_acc, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		return errno ? errno : EIO;
	return 0;
}

static void worker_main(int cmd_fd, int res_fd, pid_t parent)
{
	int sv[2], ready[2], ep;
	struct epoll_event ev = { .events = EPOLLIN };
	struct cmd c;
	struct res r;

	child_init(parent);
	pin_cpu(o.cpu);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, ready))
		_exit(2);
	/* a byte that is never read keeps ready[1] readable: epoll_wait(0)
	 * returns one event at once */
	ep = epoll_create1(0);
	if (ep < 0 || write(ready[0], "r", 1) != 1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, ready[1], &ev) ||
	    io_uring_queue_init(8, &ring, 0) || udp_open() || tcp_listen())
		_exit(3);
	while (read(cmd_fd, &c, sizeof(c)) == sizeof(c)) {
		long warm = c.n / 16 + 1, per = c.n / (c.batches > 0 ? c.batches : 1);

		memset(&r, 0, sizeof(r));
		if (c.op == OP_QUIT)
			_exit(0);
		if (c.op == OP_TCP)
			r.err = tcp_reconnect();
		if (c.op != OP_PING && !r.err) {
			r.err = loop(c.op, warm, sv, ep);
			r.ops = warm;
			r.ns_per_op = INFINITY;
			if (per < 1)
				per = 1;
			for (int b = 0; b < c.batches && !r.err; b++) {
				__u64 t0 = now_ns(), t1;

				r.err = loop(c.op, per, sv, ep);
				t1 = now_ns();
				r.ops += per;
				if ((double)(t1 - t0) / per < r.ns_per_op)
					r.ns_per_op = (double)(t1 - t0) / per;
			}
		}
		if (write(res_fd, &r, sizeof(r)) != sizeof(r))
			_exit(4);
	}
	_exit(0);
}

void worker_start(struct worker *w)
{
	int c[2], r[2];
	pid_t parent = getpid();

	if (pipe2(c, O_CLOEXEC) || pipe2(r, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	w->pid = fork();
	if (w->pid < 0)
		die("fork: %s", strerror(errno));
	if (w->pid == 0) {
		close(c[1]);
		close(r[0]);
		worker_main(c[0], r[1], parent);
	}
	close(c[0]);
	close(r[1]);
	w->cmd = c[1];
	w->res = r[0];
}

struct res worker_run(struct worker *w, int op, long n, int batches)
{
	struct cmd c = { .op = op, .n = n, .batches = batches };
	struct res r;
	ssize_t len;

	if (write(w->cmd, &c, sizeof(c)) != sizeof(c))
		die("worker %d: cannot send a command: %s", w->pid,
		    strerror(errno));
	do
		len = read(w->res, &r, sizeof(r));
	while (len < 0 && errno == EINTR);
	if (len != sizeof(r))
		die("worker %d died", w->pid);
	if (r.err)
		die("worker %d: measured call failed: %s", w->pid,
		    strerror(r.err));
	return r;
}

void idle_start(void)
{
	pid_t parent = getpid();

	for (nr_idle = 0; nr_idle < o.targets - 1;) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			child_init(parent);
			for (;;)
				pause();
		}
		idle_pids[nr_idle++] = pid;
	}
}
