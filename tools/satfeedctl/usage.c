// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * satfeedctl --help and --version: the usage text, with the saturation
 * rules' defaults filled in.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sf_common.h"
#include "export.h"
#include "sf_pins.h"
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
"      [--idle-near P] [--idle-full P] [--svc-near P] [--svc-full P]\n"
"      [--drop-near P] [--drop-full P] [--cpu-near P] [--cpu-full P]\n"
"      [--unread-near B] [--unread-full B]\n"
"      [--wps-near P] [--wps-full P] [--cv2-rise P] [--force]\n"
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
"        Saturation rules of the target, in permille but the unread ones\n"
"        in bytes (0: the default, off: the rule is off); one that holds\n"
"        is enough:\n"
"          --idle-near P  near saturation below this idle share of the\n"
"                         threads that served (default %s)\n"
"          --idle-full P  saturated below this idle share (default %s)\n"
"          --svc-near P   near when the service time (smoothed) exceeds\n"
"                         P permille of its low-load baseline (4000:\n"
"                         four times) (default %s)\n"
"          --svc-full P   saturated above P permille of it (default %s)\n"
"          --drop-near P  near when at least P of every 1000 datagrams\n"
"                         that reached the target's UDP sockets over a\n"
"                         tick were dropped, its receive buffer full\n"
"                         (default %s)\n"
"          --drop-full P  saturated at P of 1000 or more (default %s)\n"
"          --cpu-near P   near when the target's threads used at least P\n"
"                         of every 1000 ns of the CPUs they may use over\n"
"                         a tick (default %s)\n"
"          --cpu-full P   saturated at P or more (default %s)\n"
"          --unread-near B  near when a receive on one of the target's\n"
"                         accepted TCP connections left at least B bytes\n"
"                         unread on it over a tick: requests queued\n"
"                         behind the one read (default %s)\n"
"          --unread-full B  saturated at B bytes or more (default %s).\n"
"                         A server that takes large uploads reads them in\n"
"                         parts and leaves the rest queued at any load:\n"
"                         raise both for it, or turn them off\n"
"          --wps-near P   near below P waits per 1000 sends (smoothed)\n"
"                         (default %s)\n"
"          --wps-full P   saturated below P waits per 1000 sends (default %s)\n"
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
"        target must not be watched already; it should be serving.  A\n"
"        process with child processes (a master and its workers) is\n"
"        discovered with them (16 at most): when the workers do the I/O,\n"
"        the add line watches its cgroup if that holds the master and its\n"
"        descendants only, else the workers.\n"
"  remove --pid PID... | --cgroup DIR|ID | --slot N | --all\n"
"        stop watching; its windows are discarded.  A removed cgroup (shown\n"
"        gone) is named by the path its directory had, its id, or its slot.\n"
"  targets [--json]\n"
"        list the watched targets.\n"
"  rules --pid PID... | --cgroup DIR|ID | --slot N | --all\n"
"      [--idle-near P] [--idle-full P] [--svc-near P] [--svc-full P]\n"
"      [--drop-near P] [--drop-full P] [--cpu-near P] [--cpu-full P]\n"
"      [--unread-near B] [--unread-full B]\n"
"      [--wps-near P] [--wps-full P] [--cv2-rise P]\n"
"        print a target's saturation rules (one line each: the value, or\n"
"        the default it takes), or change the ones given, as add takes\n"
"        them, while the others keep theirs.  The target is not removed:\n"
"        its windows and its verdict stay, and the engine judges by the new\n"
"        rules from its next tick (max-age / 2) or window that closes.  A\n"
"        gone target's rules are shown, not changed.\n"
"  show [--json] [--raw] [--pid PID... | --cgroup DIR|ID | --slot N]\n"
"        one line per target: its saturation state first, then its figures\n"
"        (COLUMNS below); --raw: a line per stream with the mean and SD.\n"
"  watch [--interval SECONDS] [--count N] [--json]\n"
"        refresh a view every SECONDS (default 1), 80 columns wide: per\n"
"        target its state, per stream its figure, SD, rate and the trend of\n"
"        the last 4 windows (all a stream keeps) with its scale (min..max);\n"
"        Ctrl-C ends it (exit 0).  Follows the engine when it is reloaded;\n"
"        while none is loaded it says so each refresh and waits for one.\n"
"        --json: one JSON object per refresh and line (show --json's, with\n"
"        \"time_ns\", CLOCK_REALTIME), for logging.\n"
"  export [--listen ADDR:PORT [--allow-remote]] [--textfile DIR\n"
"         [--interval SECONDS]]\n"
"        serve the windows to Prometheus at http://ADDR:PORT/metrics\n"
"        (default " SF_EXPORT_DEFAULT_LISTEN "; text format 0.0.4, or OpenMetrics\n"
"        1.0 when the scraper's Accept header asks for it), and/or write\n"
"        DIR/" SF_EXPORT_TEXTFILE " every SECONDS (default 1) for node_exporter's\n"
"        textfile collector.  ADDR is an IPv4 address, [an IPv6 address]\n"
"        or localhost; one that is not loopback needs --allow-remote;\n"
"        :PORT alone is the default address on that port.\n"
"        Port 0 picks a free port (printed).  Runs until SIGINT/SIGTERM;\n"
"        while the engine is not loaded or not readable, satfeed_up is 0.\n"
"  check [--repair]\n"
"        check that nothing is half done: no load or unload left in\n"
"        ROOTNAME~swap by a killed satfeed-loader, a whole engine at ROOT,\n"
"        and a target table whose active targets each have their index\n"
"        entry, streams and config byte, with no entry pointing nowhere, no\n"
"        exited process listed active and no discovery left by a killed\n"
"        discover.  Each problem is one line; exit 0 when there is none\n"
"        (or --repair put each right), 1 otherwise.\n"
"        add and remove repair the same things first, under the lock.\n"
"\n"
"LOCKING\n"
"  Every change (add, remove, rules, check --repair) holds the root's lock,\n"
"  a file in /run/satfeed that only root can make, as satfeed-loader does:\n"
"  one change at a time, and a kill -9 at any point leaves nothing visible\n"
"  that the next change (or check --repair) does not sweep up.  Readers\n"
"  (show, targets, watch, export) take no lock: they never wait for a\n"
"  change, nor see one half done; check takes it shared.  Nobody waits for\n"
"  it more than 30 s (SATFEED_LOCK_TIMEOUT=SECONDS sets it): the command\n"
"  gives up naming the pid that holds it.  Every command needs root\n"
"  (CAP_BPF and CAP_SYS_ADMIN).\n"
"\n"
"OPTIONS\n"
"  -b, --bpffs DIR   pin root of the engine (default " SATFEED_DEFAULT_ROOT "),\n"
"                    before or after the command\n"
"  -V, --version     version and ABI\n"
"  -h, --help        this text; after a command, its usage (nothing else\n"
"                    is done)\n"
"\n"
"COLUMNS (show)\n"
"  STATE    the engine's saturation verdict: ok, near (near saturation),\n"
"           full (saturated), unknown (not judged yet), gone\n"
"           (the process exited or the cgroup was removed)\n"
"  WPS      waits per 1000 sends, smoothed over the send windows (rules\n"
"           --wps-near, --wps-full, off by default: it depends on the\n"
"           server's event loop as much as on its load); - : not known\n"
"  IDLE%%    share of the time the server's threads spent waiting for work\n"
"           in epoll/select/poll, per thread that woke (0 to 100), over\n"
"           the engine's last tick (max-age / 2); what the idle rules\n"
"           judge; falls with load\n"
"  CV2.S    dispersion of the gaps between sends: variance / mean^2 (1.0\n"
"           for Poisson arrivals); rises past the saturation point\n"
"  CV2.R    the same of the gaps between receives\n"
"  RPS      responses per second (RPS_obs: requests served per second),\n"
"           from the response stream: a response is the first send on a\n"
"           client connection after a receive on it\n"
"  SEND/s   sends per second: every send-family call (a response of\n"
"           headers and body counts twice)\n"
"  NEXT     when the next window of the target closes (estimated from the\n"
"           pace of the samples so far), - when not known\n"
"  A figure ending in '~' is from the window in progress (partial: the\n"
"  samples so far, no window has closed recently), in '!' from a stale\n"
"  window (closed more than 3 of its own spans ago, at least 2 s, with\n"
"  nothing in progress since; or the engine stopped); - : no sample yet.\n"
"  A STATE ending in '!' is a stale verdict: the engine stopped\n"
"  evaluating it (nothing for 2 x its age bound, satfeed-loader\n"
"  --max-age).  A target without traffic for the age bound is not stale:\n"
"  the engine marks it ok with the reason quiet (show --json).\n"
"  The mean service time is show --raw's service line; it and its p99\n"
"  since the target was added are in show --json (\"reading\") and the\n"
"  exporter.\n"
"COLUMNS (show --raw, one line per stream: send, recv, poll, response,\n"
"  service)\n"
"  WIN      windows closed so far (the latest one's sequence number)\n"
"  PEND     samples in the window in progress\n"
"  MEAN     mean of the latest window: gap (send, recv, response), wait\n"
"           (poll) or service time (service: a request's first receive to\n"
"           its response's first send), us\n"
"  SD       square root of its exact variance, us\n"
"  CV2      SD^2 / MEAN^2\n"
"  RATE     events per second of the latest window (response: RPS_obs)\n"
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
"  each of the last 4 windows: '-' none skipped while it was open, '!' the\n"
"  count grew around it (it may lack events), '?' not known.\n"
"\n"
"EXIT STATUS\n"
"  0 ok (and --help); 1 runtime error; 2 bad argument; 3 satfeed not\n"
"  loaded (watch waits instead); 4 permission denied (not root); 5 ABI\n"
"  mismatch (another engine version, or a pin whose map type or sizes are\n"
"  not satfeed's); 6 unknown target; 7 target table full; 8 target\n"
"  already watched.  Every failure is one line on\n"
"  stderr, starting 'satfeedctl:'.\n"
"\n"
"EXAMPLES\n"
"  satfeedctl add --pid \"$(pidof memcached)\" --send sendmsg --recv read\n"
"  satfeedctl add --cgroup /sys/fs/cgroup/system.slice/nginx.service\n"
"  satfeedctl show --json\n"
"  satfeedctl discover --pid $(pidof nginx) --seconds 10\n";

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

/* the whole usage, with the rules' defaults filled in */
static char *usage_text(void)
{
	char wnear[16], wfull[16], near[16], full[16], rise[16], snear[16];
	char sfull[16], dnear[16], dfull[16], cnear[16], cfull[16], *text;
	char unear[16], ufull[16];

	if (asprintf(&text, usage,
		     rule_str(near, SATFEED_SAT_IDLE_NEAR_DEFAULT),
		     rule_str(full, SATFEED_SAT_IDLE_FULL_DEFAULT),
		     rule_str(snear, SATFEED_SAT_SVC_NEAR_DEFAULT),
		     rule_str(sfull, SATFEED_SAT_SVC_FULL_DEFAULT),
		     rule_str(dnear, SATFEED_SAT_DROP_NEAR_DEFAULT),
		     rule_str(dfull, SATFEED_SAT_DROP_FULL_DEFAULT),
		     rule_str(cnear, SATFEED_SAT_CPU_NEAR_DEFAULT),
		     rule_str(cfull, SATFEED_SAT_CPU_FULL_DEFAULT),
		     rule_str(unear, SATFEED_SAT_UNREAD_NEAR_DEFAULT),
		     rule_str(ufull, SATFEED_SAT_UNREAD_FULL_DEFAULT),
		     rule_str(wnear, SATFEED_SAT_WPS_NEAR_DEFAULT),
		     rule_str(wfull, SATFEED_SAT_WPS_FULL_DEFAULT),
		     rule_str(rise, SATFEED_SAT_CV2_RISE_DEFAULT)) < 0)
		return NULL;
	return text;
}

/* the lines of text from the one starting with start to the next "\n\n" */
static const char *section(const char *text, const char *start, int *len)
{
	const char *b = strstr(text, start), *e;

	if (!b)
		return NULL;
	e = strstr(b, "\n\n");
	*len = e ? (int)(e - b) : (int)strlen(b);
	return b;
}

/*
 * COMMAND --help: the command's entries of COMMANDS (an entry starts with
 * "  COMMAND " at column 2, and runs to the next line that does), then the
 * options and exit status every command shares.
 */
int cmd_help(const char *cmd)
{
	char *text = usage_text(), head[32];
	const char *cmds, *line, *sec;
	bool in = false;
	int n, len;

	if (!text)
		return fail(SF_EXIT_ERROR, "out of memory");
	snprintf(head, sizeof(head), "  %s ", cmd);
	printf("Usage: satfeedctl [--bpffs DIR] %s [OPTIONS]\n\n", cmd);
	cmds = section(text, "COMMANDS\n", &len);
	for (line = cmds; line && line < cmds + len;) {
		const char *nl = strchr(line, '\n');

		n = nl ? (int)(nl - line) : (int)strlen(line);
		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
			in = !strncmp(line, head, strlen(head)) ||
			     (!strncmp(line, head, strlen(head) - 1) &&
			      n == (int)strlen(head) - 1);
		if (in)
			printf("%.*s\n", n, line);
		line += n + 1;
	}
	/* what show and watch print is described apart from COMMANDS */
	if (!strcmp(cmd, "show") || !strcmp(cmd, "watch")) {
		sec = section(text, "COLUMNS (show)\n", &len);
		if (sec)
			printf("\n%.*s\n", len, sec);
		sec = section(text, "SKIPPED RUNS\n", &len);
		if (sec)
			printf("\n%.*s\n", len, sec);
	}
	if (!strcmp(cmd, "check") || !strcmp(cmd, "add") ||
	    !strcmp(cmd, "remove") || !strcmp(cmd, "rules")) {
		sec = section(text, "LOCKING\n", &len);
		if (sec)
			printf("\n%.*s\n", len, sec);
	}
	sec = section(text, "OPTIONS\n", &len);
	if (sec)
		printf("\n%.*s\n", len, sec);
	sec = section(text, "EXIT STATUS\n", &len);
	if (sec)
		printf("\n%.*s\n", len, sec);
	printf("\n'satfeedctl --help' describes every command, the root's lock and\nthe columns of show.\n");
	free(text);
	return SF_EXIT_OK;
}

/* --help, --version (exit 0) or an option getopt refused (exit 2). */
int help_or_usage(int opt)
{
	if (opt == 'h') {
		char *text = usage_text();

		if (!text)
			return fail(SF_EXIT_ERROR, "out of memory");
		fputs(text, stdout);
		free(text);
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
