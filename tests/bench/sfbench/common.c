// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * common.c - the configuration tables and options, the state that cleanup()
 * undoes on every exit path, messages, and running the loader and satfeedctl.
 */
#include "sfbench.h"

const char *const attach_name[] = { "tp_btf", "fentry" };

/* CFG_BPFTRACE joins the rotation only with --bpftrace SCRIPT */
const char *const cfg_name[NR_CFG] = { "none", "empty", "satfeed",
					      "bpftrace" };
int nr_cfg = CFG_BPFTRACE;

const struct phase_desc phases[NR_PHASE] = {
	[P_UGETPPID] = { "u_getppid", "unrelated getppid()", "call", false,
			 OP_GETPPID, 1, 600000, 0 },	/* no hook at all */
	[P_URW] = { "u_rw", "unrelated write+read, socketpair", "pair", false,
		    OP_RW, 2, 100000, 1 << PR_EXIT },
	[P_UEPOLL] = { "u_epoll", "unrelated epoll_wait(0)", "call", false,
		       OP_EPOLL, 1, 250000, 1 << PR_ENTER | 1 << PR_EXIT },
	[P_TPAIR] = { "t_pair", "traced send+recv, socketpair", "pair", true,
		      OP_PAIR, 2, 100000, 1 << PR_EXIT },
	[P_TRW] = { "t_rw", "traced write+read, socketpair", "pair", true,
		    OP_RW, 2, 100000, 1 << PR_EXIT },
	[P_TEPOLL] = { "t_epoll", "traced epoll_wait(0)", "call", true,
		       OP_EPOLL, 1, 250000, 1 << PR_ENTER | 1 << PR_EXIT },
	/* one io_uring SEND completed on a ring that is not a target's (its
	 * submission and CQE pass satfeed's io_uring tracepoint programs),
	 * io_uring_enter with GETEVENTS, and read(2) of the byte */
	[P_UURING] = { "u_uring", "unrelated io_uring SEND+read", "op", false,
		       OP_URING, 2, 100000, 1 << PR_EXIT },
	/* a datagram from a connected socket to an unconnected one on
	 * loopback: the receive is where the engine reads the socket's drop
	 * count (ABI 7), a path no socketpair takes */
	[P_TUDP] = { "t_udp", "traced send+recv, UDP loopback", "pair", true,
		     OP_UDP, 2, 100000, 1 << PR_EXIT },
	/* a request and its response over a TCP connection the worker
	 * accepted while it was a target (so the engine holds a record of
	 * it): the client's send, the server's receive (marks the request),
	 * the server's send (a response: the response and service-time
	 * windows and the histogram), the client's receive; the client side
	 * is the worker's too, a socket it did not accept (no record) */
	[P_TTCP] = { "t_tcp", "traced request+response, TCP", "req", true,
		     OP_TCP, 4, 50000, 1 << PR_EXIT },
};

struct opts o = {
	.rounds = 7,
	.batches = 32,
	.probes = true,
	.attach = AT_TP_BTF,
	.scale = 1.0,
	.cpu = -1,
	.targets = MAX_TARGETS,
	.loader = "build/satfeed-loader",
	.ctl = "build/satfeedctl",
	.bt_bin = "bpftrace",
	.bt_wait = 30,
};

/* ------------------------------------------------------------------ */
/* state that cleanup must undo                                        */

struct worker W_U = { .pid = -1 }, W_T = { .pid = -1 };
pid_t idle_pids[MAX_TARGETS];
int nr_idle;
struct sfbench_empty_bpf *empty;
/* the floor's links: 2 in tp_btf mode, one per hook in fentry mode */
struct bpf_program *empty_progs[2 * MAX_HOOK_PROGS];
struct bpf_link *empty_links[2 * MAX_HOOK_PROGS];
int nr_empty_progs;
struct bpf_link *probe_link;
bool satfeed_loaded;
pid_t bt_pid = -1;	/* the running bpftrace, CFG_BPFTRACE */
char bt_tmp[64];		/* its output when --bpftrace-out is not given */
int stats_fd = -1;
static volatile sig_atomic_t cleaning;

void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sf_vmsg(fmt, ap);	/* sf_prog is PROG: main() sets it */
	va_end(ap);
}

/* Run argv; stdout and stderr go to a pipe and are shown on failure (or with
 * -v).  Returns the exit status, or -1. */
int run_cmd(const char *const argv[])
{
	char out[4096];
	size_t len = 0;
	int p[2], st;
	pid_t pid;
	ssize_t r;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while ((r = read(p[0], out + len, sizeof(out) - 1 - len)) > 0 ||
	       (r < 0 && errno == EINTR))
		if (r > 0)
			len += r;
	out[len] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (st || o.verbose) {
		fprintf(stderr, "%s $", st ? PROG ": failed:" : PROG ":");
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, " (exit %d)\n%s", st, out);
	}
	return st;
}

int satfeed_unload(void)
{
	const char *argv[] = { o.loader, "--bpffs", o.root, "unload", NULL };
	int err;

	if (!satfeed_loaded)
		return 0;
	err = run_cmd(argv);
	satfeed_loaded = false;
	return err;
}

void kill_wait(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*pid = -1;
}

void cleanup(void)
{
	if (cleaning++)
		return;
	satfeed_unload();
	kill_wait(&bt_pid);
	if (bt_tmp[0])
		unlink(bt_tmp);
	for (size_t i = 0; i < ARRAY_SIZE(empty_links); i++) {
		bpf_link__destroy(empty_links[i]);
		empty_links[i] = NULL;
	}
	bpf_link__destroy(probe_link);
	probe_link = NULL;
	if (empty) {
		sfbench_empty_bpf__destroy(empty);
		empty = NULL;
	}
	if (stats_fd >= 0) {
		close(stats_fd);
		stats_fd = -1;
	}
	kill_wait(&W_U.pid);
	kill_wait(&W_T.pid);
	for (int i = 0; i < nr_idle; i++)
		kill_wait(&idle_pids[i]);
	nr_idle = 0;
}

void on_signal(int sig)
{
	msg("signal %d: cleaning up", sig);
	cleanup();
	_exit(128 + sig);
}

__attribute__((noreturn)) void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(1);
}
