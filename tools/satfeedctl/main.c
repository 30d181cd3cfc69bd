// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl - the tiny CLI: watch targets and read satfeed's windows.
 *
 * Opens the pins only (no skeleton, no program loading), through libsatfeed
 * (tools/lib): every pin's shape is checked before it is read, streams are
 * read under the engine's spin lock so every window printed is whole, and
 * add/remove run the target protocol under the pin root's lock.  Every
 * command holds that lock while it runs, shared to read (one consistent
 * snapshot of the table) and exclusive to change it.  This file is the
 * command line: the usage, the options, the command table and main();
 * each command lives in a file of its own concern (satfeedctl.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_export.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "satfeedctl.h"

static const char usage[] =
"Usage: satfeedctl [--bpffs DIR] COMMAND [OPTIONS]\n"
"\n"
"Watch processes or cgroups with satfeed and read their request-level\n"
"feedback: RPS from the gaps between sends, saturation from the exact\n"
"variance of the gaps between sends and between receives, slack from the\n"
"mean duration of epoll/select/poll waits, each over windows of N samples.\n"
"The engine must be loaded first (satfeed-loader load).\n"
"\n"
"COMMANDS\n"
"  add --pid PID | --cgroup DIR [--send LIST] [--recv LIST] [--poll LIST]\n"
"        watch a process (all its threads) or a cgroup v2 directory (every\n"
"        task in it or below it).  LIST is a comma-separated set of syscalls\n"
"        of that family that count (default: all of them):\n"
"          send: sendto,sendmsg,sendmmsg,write,writev,sendfile,splice\n"
"          recv: recvfrom,recvmsg,recvmmsg,read,readv\n"
"          poll: epoll_wait,epoll_pwait,epoll_pwait2,select,pselect6,poll,ppoll\n"
"        read/readv/write/writev count only on sockets, sendfile and splice\n"
"        only when their output fd is a socket; 'send'/'recv' mean\n"
"        sendto/recvfrom (that is what libc's send()/recv() call).\n"
"        io_uring operations of the target's rings are members too, each\n"
"        completion one event (every CQE of a multishot receive):\n"
"          send: io_uring_send,io_uring_send_zc,io_uring_sendmsg,\n"
"                io_uring_sendmsg_zc,io_uring_write,io_uring_writev\n"
"          recv: io_uring_recv,io_uring_recvmsg,io_uring_read,io_uring_readv\n"
"          poll: io_uring_wait (io_uring_enter with IORING_ENTER_GETEVENTS)\n"
"        io_uring_write/writev/read/readv count only on sockets.\n"
"  add --auto --pid PID | --cgroup DIR [--seconds S]\n"
"        discover (below), then add the target with the recommended sets.\n"
"  discover --pid PID | --cgroup DIR [--seconds S] [--json]\n"
"        count every traced call of the target for S seconds (default 5;\n"
"        0.1 to 3600) with the engine, in a slot of its own that is removed\n"
"        on every way out (Ctrl-C too), then print the calls, bytes and\n"
"        failures per syscall, and per family the members that give one\n"
"        sample per request and per response (a server that answers with\n"
"        two calls, headers by writev and body by sendfile, keeps the one\n"
"        whose count matches the requests), with the add line to use.  The\n"
"        target must not be watched already; it should be serving.\n"
"  remove --pid PID | --cgroup DIR | --all\n"
"        stop watching; its windows are discarded.  Give one of the three.\n"
"        A removed cgroup (shown gone) is named by the path its directory\n"
"        had.\n"
"  targets [--json]\n"
"        list the watched targets.\n"
"  show [--json] [--pid PID | --cgroup DIR]\n"
"        the latest closed window of each stream of each target.\n"
"  watch [--interval SECONDS] [--count N]\n"
"        refresh a view every SECONDS (default 1): one line per target and\n"
"        stream, with the trend of the last 8 windows; Ctrl-C ends it.\n"
"  export [--listen ADDR:PORT [--allow-remote]] [--textfile DIR\n"
"         [--interval SECONDS]]\n"
"        serve the windows to Prometheus at http://ADDR:PORT/metrics\n"
"        (default " SF_EXPORT_DEFAULT_LISTEN "; text format 0.0.4, or OpenMetrics\n"
"        1.0 when the scraper's Accept header asks for it), and/or write\n"
"        DIR/" SF_EXPORT_TEXTFILE " every SECONDS (default 1) for node_exporter's\n"
"        textfile collector.  ADDR is an IPv4 address, [an IPv6 address]\n"
"        or localhost; one that is not loopback needs --allow-remote.\n"
"        Port 0 picks a free port (printed).  Runs until SIGINT/SIGTERM;\n"
"        while the engine is not loaded or not readable, satfeed_up is 0.\n"
"  check [--repair]\n"
"        check that nothing is half done: no load or unload left in\n"
"        ROOTNAME~swap by a killed satfeed-loader, a whole engine at ROOT,\n"
"        and a target table whose active targets each have their index\n"
"        entry, streams and config byte, with no entry pointing nowhere and\n"
"        no exited process listed active.  Each problem is one line; exit 0\n"
"        when there is none (or --repair put each right), 1 otherwise.\n"
"        add and remove repair the same things first, under the lock.\n"
"\n"
"LOCKING\n"
"  Every command holds an flock of ROOT's parent directory (shared to read,\n"
"  exclusive to change), as satfeed-loader does: a change is never seen\n"
"  half done, and a kill -9 at any point leaves nothing visible that the\n"
"  next change (or check --repair) does not sweep up.\n"
"\n"
"OPTIONS\n"
"  -b, --bpffs DIR   pin root of the engine (default " SATFEED_DEFAULT_ROOT ")\n"
"  -h, --help        this text\n"
"\n"
"COLUMNS (show)\n"
"  WIN      windows closed so far (the latest one's sequence number)\n"
"  PEND     samples in the window in progress\n"
"  MEAN     mean of the latest window: gap (send/recv) or wait (poll), us\n"
"  SD       square root of its exact variance, us\n"
"  RATE     events per second of the latest window (send: RPS_obs)\n"
"  LAST     time since the stream's last event\n"
"\n"
"SKIPPED RUNS\n"
"  The kernel skips a run of a tracing program on a CPU where another run\n"
"  of it has not finished (it counts them: recursion misses); on a kernel\n"
"  with preemption such a run is an event missing from the windows.  show\n"
"  and watch warn when the engine's programs have any; watch then marks\n"
"  each of the last 8 windows: '-' none skipped while it was open, '!' the\n"
"  count grew around it (it may lack events), '?' not known.\n"
"\n"
"EXIT STATUS\n"
"  0 ok; 1 runtime error; 2 bad argument; 3 satfeed not loaded;\n"
"  4 permission denied; 5 ABI mismatch (another engine version, or a pin\n"
"  whose map type or sizes are not satfeed's); 6 unknown or vanished\n"
"  target; 7 target table full; 8 target already watched.\n"
"\n"
"EXAMPLES\n"
"  satfeedctl add --pid $(pidof memcached) --send sendmsg --recv read\n"
"  satfeedctl add --cgroup /sys/fs/cgroup/system.slice/nginx.service\n"
"  satfeedctl show --json\n"
"  satfeedctl discover --pid $(pidof nginx) --seconds 10\n";

int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* ---- target selection ---- */

static int parse_pid(const char *arg, struct sf_selector *sel)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v <= 0 || v > INT_MAX)
		return fail(SF_EXIT_USAGE, "'%s' is not a process id", arg);
	sel->kind = SATFEED_TARGET_PID;
	sel->id = v;
	return 0;
}

/* vanished_ok: a removed directory may name its gone target (remove) */
static int parse_cgroup(const char *arg, struct args *a, bool vanished_ok)
{
	char why[512];
	int err = sf_selector_cgroup(arg, &a->sel, why, sizeof(why));

	if (err && vanished_ok && access(arg, F_OK) && errno == ENOENT) {
		a->sel.kind = SATFEED_TARGET_CGROUP;
		a->vanished = arg;
		return 0;
	}
	return err ? fail(err, "%s", why) : 0;
}

/* ---- export: the server is sf_export.c ---- */

static int cmd_export(struct sf_pins *p, const struct args *a)
{
	struct sf_export_opts o = {
		.root = a->root,
		.listen = a->listen,
		.allow_remote = a->allow_remote,
		.textfile = a->textfile,
		.interval = a->interval,
	};

	if (!o.listen && !o.textfile)
		o.listen = SF_EXPORT_DEFAULT_LISTEN;
	return sf_export_run(&o);
}

/* ---- the command table ---- */

enum cmd_flags {
	CMD_TARGET = 1 << 0,	/* needs --pid or --cgroup */
	CMD_ALL = 1 << 1,	/* ... or --all */
	CMD_FAMILIES = 1 << 2,	/* takes --send, --recv, --poll */
	CMD_EXPORT = 1 << 3,	/* takes --listen, --allow-remote, --textfile;
				 * opens the pins itself, on every scrape */
	CMD_VANISHED = 1 << 4,	/* --cgroup may name a removed directory */
	CMD_WRITE = 1 << 5,	/* changes the table: the lock exclusively */
	CMD_OWN_LOCK = 1 << 6,	/* locks and opens the pins itself */
	CMD_REPAIR = 1 << 7,	/* takes --repair */
	CMD_EACH_VIEW = 1 << 8,	/* locks for each view it shows */
	CMD_SECONDS = 1 << 9,	/* takes --seconds */
	CMD_AUTO = 1 << 10,	/* takes --auto */
};

struct cmd {
	const char *cmd;
	int (*func)(struct sf_pins *p, const struct args *a);
	unsigned int flags;
};

static const struct cmd cmds[] = {
	{ "add", cmd_add, CMD_TARGET | CMD_FAMILIES | CMD_WRITE | CMD_AUTO |
			  CMD_SECONDS },
	{ "discover", cmd_discover, CMD_TARGET | CMD_SECONDS | CMD_EACH_VIEW },
	{ "remove", cmd_remove, CMD_TARGET | CMD_ALL | CMD_VANISHED | CMD_WRITE },
	{ "targets", cmd_targets, 0 },
	{ "show", cmd_show, 0 },
	{ "watch", cmd_watch, CMD_EACH_VIEW },
	{ "export", cmd_export, CMD_EXPORT },
	{ "check", cmd_check, CMD_OWN_LOCK | CMD_REPAIR },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct cmd *cmd_select(const char *name)
{
	for (size_t i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].cmd, name))
			return &cmds[i];
	return NULL;
}

static int no_command(void)
{
	char list[128] = "";
	size_t off = 0;

	for (size_t i = 0; i < NR_CMDS && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%s",
				i ? ", " : "", cmds[i].cmd);
	return fail(SF_EXIT_USAGE, "a command is required (%s); see --help",
		    list);
}

static const struct option long_opts[] = {
	{ "bpffs", required_argument, NULL, 'b' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "send", required_argument, NULL, 'S' },
	{ "recv", required_argument, NULL, 'R' },
	{ "poll", required_argument, NULL, 'P' },
	{ "json", no_argument, NULL, 'j' },
	{ "all", no_argument, NULL, 'a' },
	{ "repair", no_argument, NULL, 'r' },
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'n' },
	{ "listen", required_argument, NULL, 'l' },
	{ "allow-remote", no_argument, NULL, 'A' },
	{ "textfile", required_argument, NULL, 't' },
	{ "seconds", required_argument, NULL, 's' },
	{ "auto", no_argument, NULL, 'u' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* --help (exit 0) or an option getopt refused (exit 2). */
static int help_or_usage(int opt)
{
	if (opt == 'h') {
		fputs(usage, stdout);
		return SF_EXIT_OK;
	}
	fputs("Try 'satfeedctl --help'.\n", stderr);
	return SF_EXIT_USAGE;
}

/*
 * The options after the command.  Returns -1 when they are all good, else
 * the exit status (0 for --help).
 */
static int parse_args(int argc, char **argv, const struct cmd *c,
		      struct args *a)
{
	__u32 fam_mask[SATFEED_NR_STREAMS];
	bool fam_set[SATFEED_NR_STREAMS] = {};
	char *end;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		int fam = -1;

		switch (opt) {
		case 'p':
		case 'c':
			if (a->sel.kind)
				return fail(SF_EXIT_USAGE, "give one --pid or --cgroup");
			err = opt == 'p' ? parse_pid(optarg, &a->sel) :
					   parse_cgroup(optarg, a,
							c->flags & CMD_VANISHED);
			if (err)
				return err;
			a->target_arg = optarg;
			break;
		case 's':
			if (!(c->flags & CMD_SECONDS))
				return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
			a->seconds = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(a->seconds >= 0.1 && a->seconds <= 3600))
				return fail(SF_EXIT_USAGE, "--seconds must be 0.1 to 3600 (got '%s')",
					    optarg);
			break;
		case 'u':
			if (!(c->flags & CMD_AUTO))
				return fail(SF_EXIT_USAGE, "--auto only applies to add");
			a->autoadd = true;
			break;
		case 'S':
			fam = SATFEED_STREAM_SEND;
			break;
		case 'R':
			fam = SATFEED_STREAM_RECV;
			break;
		case 'P':
			fam = SATFEED_STREAM_POLL;
			break;
		case 'j':
			a->json = true;
			break;
		case 'a':
			a->all = true;
			break;
		case 'r':
			if (!(c->flags & CMD_REPAIR))
				return fail(SF_EXIT_USAGE, "--repair only applies to check");
			a->repair = true;
			break;
		case 'i':
			a->interval = strtod(optarg, &end);
			if (*end ||
			    !(a->interval >= 0.05 && a->interval <= 3600))
				return fail(SF_EXIT_USAGE, "--interval must be 0.05 to 3600 seconds");
			break;
		case 'n':
			a->count = strtol(optarg, &end, 10);
			if (*end || a->count < 1)
				return fail(SF_EXIT_USAGE, "--count must be a positive integer");
			break;
		case 'l':
		case 'A':
		case 't':
			if (!(c->flags & CMD_EXPORT))
				return fail(SF_EXIT_USAGE, "--%s only applies to export",
					    opt == 'l' ? "listen" :
					    opt == 'A' ? "allow-remote" : "textfile");
			if (opt == 'l')
				a->listen = optarg;
			else if (opt == 'A')
				a->allow_remote = true;
			else
				a->textfile = optarg;
			break;
		default:
			return help_or_usage(opt);
		}
		if (fam >= 0) {
			if (sf_parse_syscalls(PROG, optarg, fam,
					      &fam_mask[fam]))
				return SF_EXIT_USAGE;
			fam_set[fam] = true;
		}
	}
	if (optind < argc)
		return fail(SF_EXIT_USAGE, "unexpected argument '%s'",
			    argv[optind]);
	if (a->all && !(c->flags & CMD_ALL))
		return fail(SF_EXIT_USAGE, "--all only applies to remove");
	if (a->all && a->sel.kind)
		return fail(SF_EXIT_USAGE, "give --pid, --cgroup or --all, not more than one");
	if ((c->flags & CMD_AUTO) && !a->autoadd && a->seconds)
		return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
	if (a->autoadd && (fam_set[SATFEED_STREAM_SEND] ||
			   fam_set[SATFEED_STREAM_RECV] ||
			   fam_set[SATFEED_STREAM_POLL]))
		return fail(SF_EXIT_USAGE, "add --auto chooses the families itself: give no --send, --recv or --poll");
	if ((c->flags & CMD_TARGET) && !a->sel.kind &&
	    !(a->all && (c->flags & CMD_ALL)))
		return fail(SF_EXIT_USAGE, "%s needs --pid PID or --cgroup DIR",
			    c->cmd);
	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		if (fam_set[f] && !(c->flags & CMD_FAMILIES))
			return fail(SF_EXIT_USAGE, "--%s only applies to add",
				    sf_stream_names[f]);
		for (int i = 0; i < SATFEED_SC_NR_BITS; i++)
			if (sf_syscalls[i].name &&
			    sf_syscalls[i].family == f &&
			    sf_syscalls[i].nr != -1 &&
			    (!fam_set[f] || (fam_mask[f] & (1U << i))))
				a->sc_mask |= 1U << i;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct args a = { .interval = 1.0 };
	int (*func)(struct sf_pins *p, const struct args *a);
	unsigned int flags;
	const char *root = SATFEED_DEFAULT_ROOT;
	const struct cmd *c;
	struct sf_pins pins;
	char why[512];
	int opt, err;

	while ((opt = getopt_long(argc, argv, "+b:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			for (size_t n = strlen(optarg);
			     n > 1 && optarg[n - 1] == '/';)
				optarg[--n] = '\0';
			root = optarg;
			break;
		default:
			return help_or_usage(opt);
		}
	}
	if (optind >= argc)
		return no_command();
	c = cmd_select(argv[optind]);
	if (!c)
		return fail(SF_EXIT_USAGE, "unknown command '%s'; see --help",
			    argv[optind]);
	optind++;
	a.root = root;
	err = parse_args(argc, argv, c, &a);
	if (err >= 0)
		return err;
	if (!a.seconds)
		a.seconds = 5.0;
	func = c->func;
	flags = c->flags;
	if (a.autoadd) {
		/* discovery takes the lock for its own add and remove only:
		 * the table stays readable and writable while it counts */
		func = cmd_add_auto;
		flags = (flags & ~CMD_WRITE) | CMD_EACH_VIEW;
	}
	if (c->flags & CMD_EXPORT)
		return c->func(NULL, &a);

	if (c->flags & CMD_OWN_LOCK)
		return c->func(NULL, &a);
	if (flags & CMD_EACH_VIEW)
		err = sf_pins_open(&pins, root, why, sizeof(why));
	else
		err = sf_pins_open_locked(&pins, root, flags & CMD_WRITE ?
					  LOCK_EX : LOCK_SH, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	err = func(&pins, &a);
	sf_pins_close(&pins);
	return err;
}
