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
#include "sf_select.h"
#include "sf_target.h"
#include "satfeedctl.h"

static const char usage[] =
"Usage: satfeedctl [--bpffs DIR] COMMAND [OPTIONS]\n"
"\n"
"Watch processes or cgroups with satfeed and read their request-level\n"
"feedback: whether the server is saturated, the share of time it spends\n"
"idle in epoll/select/poll waits (its slack), how dispersed the gaps\n"
"between its sends and receives are, and its rates, each over windows of\n"
"N samples.  The engine must be loaded first (satfeed-loader load).\n"
"\n"
"COMMANDS\n"
"  add --pid PID... | --cgroup DIR [--send LIST] [--recv LIST] [--poll LIST]\n"
"      [--wps-near P] [--wps-full P] [--idle-near P] [--idle-full P]\n"
"      [--cv2-rise P] [--force]\n"
"        watch processes (all their threads) or a cgroup v2 directory (every\n"
"        task in it or below it).  --pid takes several pids, separated by\n"
"        spaces or commas, or repeated: --pid \"$(pidof nginx)\" watches each\n"
"        process apart; when a server's children do the I/O, watch its\n"
"        cgroup instead (add says so).  LIST is a comma-separated set of\n"
"        syscalls of that family that count (default: all of them):\n"
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
"        Saturation rules of the target, in permille (0: the default,\n"
"        off: the rule is off):\n"
"          --wps-near P   near below P waits per 1000 sends (smoothed)\n"
"                         (default %s)\n"
"          --wps-full P   saturated below P waits per 1000 sends (default %s)\n"
"          --idle-near P  near saturation below this idle share (default %s)\n"
"          --idle-full P  saturated below this idle share (default %s)\n"
"          --cv2-rise P   near when the dispersion of the receive gaps\n"
"                         exceeds its low-load baseline by P permille of\n"
"                         it (1000: doubled) (default %s)\n"
"        Kernel threads and the root cgroup are refused unless --force.\n"
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
"  remove --pid PID... | --cgroup DIR|ID | --slot N | --all\n"
"        stop watching; its windows are discarded.  A removed cgroup (shown\n"
"        gone) is named by the path its directory had, its id, or its slot.\n"
"  targets [--json]\n"
"        list the watched targets.\n"
"  show [--json] [--raw] [--pid PID... | --cgroup DIR|ID | --slot N]\n"
"        one line per target: its saturation state first, then its figures\n"
"        (COLUMNS below); --raw: a line per stream with the mean and SD.\n"
"  watch [--interval SECONDS] [--count N] [--json]\n"
"        refresh a view every SECONDS (default 1), 80 columns wide: per\n"
"        target its state, per stream its figure, SD, rate and the trend of\n"
"        the last 8 windows with its scale (min..max); Ctrl-C ends it (exit\n"
"        0).  Follows the engine when it is reloaded.  --json: one JSON\n"
"        object per refresh and line (show --json's, with \"time_ns\",\n"
"        CLOCK_REALTIME), for logging.\n"
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
"  -b, --bpffs DIR   pin root of the engine (default " SATFEED_DEFAULT_ROOT "),\n"
"                    before or after the command\n"
"  -V, --version     version and ABI\n"
"  -h, --help        this text\n"
"\n"
"COLUMNS (show)\n"
"  STATE    the engine's saturation verdict: ok, near (near saturation),\n"
"           full (saturated), unknown (not judged yet), gone\n"
"           (the process exited or the cgroup was removed)\n"
"  IDLE%%    share of the time the server's threads spent waiting for work\n"
"           in epoll/select/poll, summed over threads (above 100 when\n"
"           several wait at once), from the poll stream; falls with load\n"
"  CV2.S    dispersion of the gaps between sends: variance / mean^2 (1.0\n"
"           for Poisson arrivals); rises past the saturation point\n"
"  CV2.R    the same of the gaps between receives\n"
"  RPS      sends per second (RPS_obs: requests served per second)\n"
"  RECV/s   receives per second\n"
"  NEXT     when the next window of the target closes (estimated from the\n"
"           pace of the samples so far), - when not known\n"
"  A figure ending in '~' is from the window in progress (partial: the\n"
"  samples so far, no window has closed recently), in '!' from a stale\n"
"  window (closed more than 3 of its own spans ago, at least 2 s, with\n"
"  nothing in progress since); - : no sample yet.\n"
"COLUMNS (show --raw, one line per stream)\n"
"  WIN      windows closed so far (the latest one's sequence number)\n"
"  PEND     samples in the window in progress\n"
"  MEAN     mean of the latest window: gap (send/recv) or wait (poll), us\n"
"  SD       square root of its exact variance, us\n"
"  CV2      SD^2 / MEAN^2\n"
"  RATE     events per second of the latest window (send: RPS_obs)\n"
"  WAIT%%    poll: share of the span in waits; IDLE%% the same without the\n"
"           time the waiting threads spent runnable, waiting for a CPU\n"
"  LAST     time since the stream's last event\n"
"  WINDOW   closed, partial (with the time until it closes) or stale\n"
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
"  whose map type or sizes are not satfeed's); 6 unknown target; 7 target\n"
"  table full; 8 target already watched.  Every failure is one line on\n"
"  stderr, starting 'satfeedctl:'.\n"
"\n"
"EXAMPLES\n"
"  satfeedctl add --pid \"$(pidof memcached)\" --send sendmsg --recv read\n"
"  satfeedctl add --cgroup /sys/fs/cgroup/system.slice/nginx.service\n"
"  satfeedctl show --json\n"
"  satfeedctl discover --pid $(pidof nginx) --seconds 10\n";

/* ---- target selection ---- */

/* vanished_ok: a removed directory may name its gone target (remove) */
static int parse_cgroup(const char *arg, struct args *a, bool vanished_ok)
{
	struct sf_selector *sel = &a->sel[0];
	char why[512], *end;
	unsigned long long id;
	int err;

	err = sf_selector_cgroup(arg, sel, why, sizeof(why));
	if (!err)
		return 0;
	if (vanished_ok && access(arg, F_OK) && errno == ENOENT) {
		/* a cgroup id (the directory's inode), for one removed since */
		errno = 0;
		id = strtoull(arg, &end, 10);
		if (arg[0] >= '0' && arg[0] <= '9' && !*end && !errno) {
			memset(sel, 0, sizeof(*sel));
			sel->kind = SATFEED_TARGET_CGROUP;
			sel->id = id;
			return 0;
		}
		memset(sel, 0, sizeof(*sel));
		sel->kind = SATFEED_TARGET_CGROUP;
		a->vanished = arg;
		return 0;
	}
	return fail(err, "%s", why);
}

#ifdef SATFEED_SAT_RULE_OFF
#define RULE_OFF_WORD " or off"
#else
#define RULE_OFF_WORD ""
#endif

static int parse_permille(const char *opt, const char *arg, __u32 *v)
{
	char *end;
	unsigned long n;

#ifdef SATFEED_SAT_RULE_OFF
	if (!strcmp(arg, "off")) {
		*v = SATFEED_SAT_RULE_OFF;
		return 0;
	}
#endif
	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || arg[0] < '0' || arg[0] > '9' || n > 100000)
		return fail(SF_EXIT_USAGE, "--%s takes a share in permille, 0 to 100000 (e.g. 150 for 15%%)%s, not '%s'",
			    opt, RULE_OFF_WORD, arg);
	*v = n;
	return 0;
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
	CMD_SELECT = 1 << 9,	/* may take --pid, --cgroup or --slot */
	CMD_RAW = 1 << 10,	/* takes --raw */
	CMD_JSON = 1 << 11,	/* takes --json */
	CMD_INTERVAL = 1 << 12,	/* takes --interval */
	CMD_COUNT = 1 << 13,	/* takes --count */
	CMD_SECONDS = 1 << 14,	/* takes --seconds */
	CMD_AUTO = 1 << 15,	/* takes --auto */
};

struct cmd {
	const char *cmd;
	int (*func)(struct sf_pins *p, const struct args *a);
	unsigned int flags;
};

static const struct cmd cmds[] = {
	{ "add", cmd_add, CMD_TARGET | CMD_SELECT | CMD_FAMILIES | CMD_WRITE |
			  CMD_AUTO | CMD_SECONDS },
	{ "discover", cmd_discover,
	  CMD_TARGET | CMD_SELECT | CMD_SECONDS | CMD_JSON | CMD_EACH_VIEW },
	{ "remove", cmd_remove,
	  CMD_TARGET | CMD_SELECT | CMD_ALL | CMD_VANISHED | CMD_WRITE },
	{ "targets", cmd_targets, CMD_JSON },
	{ "show", cmd_show, CMD_SELECT | CMD_RAW | CMD_JSON | CMD_VANISHED },
	{ "watch", cmd_watch,
	  CMD_EACH_VIEW | CMD_JSON | CMD_INTERVAL | CMD_COUNT },
	{ "export", cmd_export, CMD_EXPORT | CMD_INTERVAL },
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
	{ "slot", required_argument, NULL, 's' },
	{ "raw", no_argument, NULL, 'L' },
	{ "force", no_argument, NULL, 'F' },
	{ "idle-near", required_argument, NULL, 1001 },
	{ "idle-full", required_argument, NULL, 1002 },
	{ "cv2-rise", required_argument, NULL, 1003 },
	{ "wps-near", required_argument, NULL, 1004 },
	{ "wps-full", required_argument, NULL, 1005 },
	{ "version", no_argument, NULL, 'V' },
	{ "seconds", required_argument, NULL, 1006 },
	{ "auto", no_argument, NULL, 1007 },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* a rule's value for --help: permille, or off */
static const char *rule_str(char buf[16], __u32 v)
{
#ifdef SATFEED_SAT_RULE_OFF
	if (v == SATFEED_SAT_RULE_OFF)
		return "off";
#endif
	snprintf(buf, 16, "%u", v);
	return buf;
}

/* --help, --version (exit 0) or an option getopt refused (exit 2). */
static int help_or_usage(int opt)
{
	if (opt == 'h') {
		char wnear[16], wfull[16], near[16], full[16], rise[16];

		printf(usage, rule_str(wnear, SATFEED_SAT_WPS_NEAR_DEFAULT),
		       rule_str(wfull, SATFEED_SAT_WPS_FULL_DEFAULT),
		       rule_str(near, SATFEED_SAT_IDLE_NEAR_DEFAULT),
		       rule_str(full, SATFEED_SAT_IDLE_FULL_DEFAULT),
		       rule_str(rise, SATFEED_SAT_CV2_RISE_DEFAULT));
		return SF_EXIT_OK;
	}
	if (opt == 'V') {
		sf_print_version();
		return SF_EXIT_OK;
	}
	/* getopt said what it refused, with our prefix (argv[0] is PROG) */
	fputs(PROG ": see 'satfeedctl --help'\n", stderr);
	return SF_EXIT_USAGE;
}

/* --bpffs DIR, before or after the command */
static void set_root(struct args *a, char *dir)
{
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/';)
		dir[--n] = '\0';
	a->root = dir;
}

/* --pid, --cgroup and --slot name targets three ways: one at a time */
static int one_kind(void)
{
	return fail(SF_EXIT_USAGE, "give --pid, --cgroup or --slot, not more than one kind (one --cgroup, one --slot, or any number of pids)");
}

/* an option this command does not take */
static int not_for(const struct cmd *c, const char *opt, const char *which)
{
	return fail(SF_EXIT_USAGE, "%s does not take --%s (%s)", c->cmd, opt,
		    which);
}

/* What getopt refused (opterr is 0: the message is ours, one line). */
static int bad_option(int opt, char **argv)
{
	const char *word = argv[optind - 1];

	if (opt == ':')
		return fail(SF_EXIT_USAGE, "%s needs a value; see --help", word);
	if (optopt)
		return fail(SF_EXIT_USAGE, "unknown option '-%c'; see --help",
			    optopt);
	return fail(SF_EXIT_USAGE, "unknown option '%s'; see --help", word);
}

/*
 * The options after the command.  Returns -1 when they are all good, else
 * the exit status (0 for --help).
 */
static int parse_args(int argc, char **argv, const struct cmd *c,
		      struct args *a)
{
	__u32 fam_mask[SATFEED_NR_STREAMS];
	bool fam_set[SATFEED_NR_STREAMS] = {}, rules = false;
	bool pid = false, cgroup = false;
	char *end, why[512];
	int opt, err;

	while ((opt = getopt_long(argc, argv, ":b:hV", long_opts, NULL)) != -1) {
		int fam = -1;

		switch (opt) {
		case 'b':
			set_root(a, optarg);
			break;
		case 'p':
			if (!(c->flags & CMD_SELECT))
				return not_for(c, "pid", "it covers every target");
			if (cgroup || a->slot >= 0)
				return one_kind();
			pid = true;
			err = sf_select_pids(optarg, a->sel, &a->nr_sel,
					     MAX_SEL, why, sizeof(why));
			if (err)
				return fail(err, "%s", why);
			a->target_arg = optarg;
			break;
		case 'c':
			if (!(c->flags & CMD_SELECT))
				return not_for(c, "cgroup", "it covers every target");
			if (pid || cgroup || a->slot >= 0)
				return one_kind();
			cgroup = true;
			err = parse_cgroup(optarg, a, c->flags & CMD_VANISHED);
			if (err)
				return err;
			a->nr_sel = 1;
			a->target_arg = optarg;
			break;
		case 1006:
			if (!(c->flags & CMD_SECONDS))
				return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
			a->seconds = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(a->seconds >= 0.1 && a->seconds <= 3600))
				return fail(SF_EXIT_USAGE, "--seconds must be 0.1 to 3600 (got '%s')",
					    optarg);
			break;
		case 1007:
			if (!(c->flags & CMD_AUTO))
				return fail(SF_EXIT_USAGE, "--auto only applies to add");
			a->autoadd = true;
			break;
		case 's':
			if (!(c->flags & CMD_SELECT) || !(c->flags & CMD_VANISHED))
				return not_for(c, "slot", "remove and show take it");
			if (pid || cgroup || a->slot >= 0)
				return one_kind();
			errno = 0;
			a->slot = strtol(optarg, &end, 10);
			if (errno || *end || optarg[0] < '0' || optarg[0] > '9' ||
			    a->slot >= SATFEED_MAX_TARGETS)
				return fail(SF_EXIT_USAGE, "--slot takes a slot number, 0 to %d (satfeedctl targets lists them), not '%s'",
					    SATFEED_MAX_TARGETS - 1, optarg);
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
			if (!(c->flags & CMD_JSON))
				return not_for(c, "json", "show, watch and targets take it");
			a->json = true;
			break;
		case 'L':
			if (!(c->flags & CMD_RAW))
				return not_for(c, "raw", "show takes it");
			a->raw = true;
			break;
		case 'F':
			if (!(c->flags & CMD_FAMILIES))
				return not_for(c, "force", "add takes it");
			a->force = true;
			break;
		case 1001:
		case 1002:
		case 1003:
		case 1004:
		case 1005: {
			static const char *const names[] = {
				"idle-near", "idle-full", "cv2-rise",
				"wps-near", "wps-full",
			};
			__u32 *field[] = {
				&a->rules.idle_near_permille,
				&a->rules.idle_full_permille,
				&a->rules.cv2_rise_permille,
				&a->rules.wps_near_permille,
				&a->rules.wps_full_permille,
			};

			if (!(c->flags & CMD_FAMILIES))
				return not_for(c, names[opt - 1001], "add takes it");
			err = parse_permille(names[opt - 1001], optarg,
					     field[opt - 1001]);
			if (err)
				return err;
			rules = true;
			break;
		}
		case 'a':
			a->all = true;
			break;
		case 'r':
			if (!(c->flags & CMD_REPAIR))
				return fail(SF_EXIT_USAGE, "--repair only applies to check");
			a->repair = true;
			break;
		case 'i':
			if (!(c->flags & CMD_INTERVAL))
				return not_for(c, "interval", "watch and export take it");
			a->interval = strtod(optarg, &end);
			if (*end ||
			    !(a->interval >= 0.05 && a->interval <= 3600))
				return fail(SF_EXIT_USAGE, "--interval must be 0.05 to 3600 seconds");
			break;
		case 'n':
			if (!(c->flags & CMD_COUNT))
				return not_for(c, "count", "watch takes it");
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
		case 'h':
		case 'V':
			return help_or_usage(opt);
		default:
			return bad_option(opt, argv);
		}
		if (fam >= 0) {
			if (sf_parse_syscalls(PROG, optarg, fam,
					      &fam_mask[fam]))
				return SF_EXIT_USAGE;
			fam_set[fam] = true;
		}
	}
	if (optind < argc)
		return fail(SF_EXIT_USAGE, "unexpected argument '%s'%s",
			    argv[optind],
			    pid ? " (several pids go in one quoted --pid, or one --pid each)" : "");
	if (a->all && !(c->flags & CMD_ALL))
		return fail(SF_EXIT_USAGE, "--all only applies to remove");
	if (a->all && (a->nr_sel || a->slot >= 0))
		return fail(SF_EXIT_USAGE, "give --pid, --cgroup, --slot or --all, not more than one");
	if ((!strcmp(c->cmd, "add") || !strcmp(c->cmd, "discover")) &&
	    !a->nr_sel)
		return fail(SF_EXIT_USAGE, "%s needs --pid PID or --cgroup DIR",
			    c->cmd);
	if ((c->flags & CMD_TARGET) && !a->nr_sel && a->slot < 0 && !a->all)
		return fail(SF_EXIT_USAGE, "%s needs --pid PID, --cgroup DIR, --slot N or --all (every target)",
			    c->cmd);
	if (rules && a->rules.idle_full_permille &&
	    a->rules.idle_near_permille &&
	    a->rules.idle_full_permille <= 100000 &&
	    a->rules.idle_near_permille <= 100000 &&
	    a->rules.idle_full_permille > a->rules.idle_near_permille)
		return fail(SF_EXIT_USAGE, "--idle-full (%u) must not be above --idle-near (%u): saturated is the lower idle share",
			    a->rules.idle_full_permille,
			    a->rules.idle_near_permille);
	if ((c->flags & CMD_AUTO) && !a->autoadd && a->seconds)
		return fail(SF_EXIT_USAGE, "--seconds only applies to discover and add --auto");
	if (a->autoadd && (fam_set[SATFEED_STREAM_SEND] ||
			   fam_set[SATFEED_STREAM_RECV] ||
			   fam_set[SATFEED_STREAM_POLL]))
		return fail(SF_EXIT_USAGE, "add --auto chooses the families itself: give no --send, --recv or --poll");
	if ((a->autoadd || (c->flags & CMD_SECONDS && !(c->flags & CMD_AUTO))) &&
	    (a->nr_sel != 1 || a->slot >= 0))
		return fail(SF_EXIT_USAGE, "%s%s takes one --pid PID or --cgroup DIR",
			    c->cmd, a->autoadd ? " --auto" : "");
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
	struct args a = { .interval = 1.0, .slot = -1,
			  .root = SATFEED_DEFAULT_ROOT };
	const struct cmd *c;
	int (*func)(struct sf_pins *p, const struct args *a);
	struct sf_pins pins;
	unsigned int flags;
	char why[512];
	int opt, err, li = 0;

	sf_prog = PROG;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:b:hV", long_opts, &li)) != -1) {
		switch (opt) {
		case 'b':
			set_root(&a, optarg);
			break;
		case 'h':
		case 'V':
			return help_or_usage(opt);
		default:
			if (opt == ':' || opt == '?')
				return bad_option(opt, argv);
			return fail(SF_EXIT_USAGE, "--%s comes after the command; see --help",
				    long_opts[li].name);
		}
	}
	if (optind >= argc)
		return no_command();
	c = cmd_select(argv[optind]);
	if (!c)
		return fail(SF_EXIT_USAGE, "unknown command '%s'; see --help",
			    argv[optind]);
	optind++;
	err = parse_args(argc, argv, c, &a);
	if (err >= 0)
		return err;
	if (c->flags & CMD_EXPORT)
		return c->func(NULL, &a);

	if (c->flags & CMD_OWN_LOCK)
		return c->func(NULL, &a);
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
	if (flags & CMD_EACH_VIEW)
		err = sf_pins_open(&pins, a.root, why, sizeof(why));
	else
		err = sf_pins_open_locked(&pins, a.root, flags & CMD_WRITE ?
					  LOCK_EX : LOCK_SH, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	err = func(&pins, &a);
	sf_pins_close(&pins);
	return err;
}
