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
 * command line and the output formats.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sf_check.h"
#include "sf_common.h"
#include "sf_export.h"
#include "sf_pins.h"
#include "sf_progstats.h"
#include "sf_root.h"
#include "sf_target.h"
#include "sf_escape.h"

#define PROG "satfeedctl"

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
"          send: sendto,sendmsg,sendmmsg,write,writev\n"
"          recv: recvfrom,recvmsg,recvmmsg,read,readv\n"
"          poll: epoll_wait,epoll_pwait,epoll_pwait2,select,pselect6,poll,ppoll\n"
"        read/readv/write/writev count only on sockets; 'send'/'recv' mean\n"
"        sendto/recvfrom (that is what libc's send()/recv() call).\n"
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
"  satfeedctl show --json\n";

/* Everything the command line says, parsed before any pin is opened. */
struct args {
	const char *root;	/* --bpffs */
	struct sf_selector sel;	/* --pid / --cgroup; FREE with --all */
	const char *vanished;	/* --cgroup of a directory removed since */
	bool all;		/* --all */
	bool json;		/* --json */
	bool repair;		/* --repair */
	__u32 sc_mask;		/* syscalls that count (add) */
	double interval;	/* --interval, seconds */
	long count;		/* --count, 0: until interrupted */
	const char *listen;	/* --listen */
	bool allow_remote;	/* --allow-remote */
	const char *textfile;	/* --textfile */
};

static int fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
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

/*
 * The gone cgroup target that the removed directory dir was: its path
 * relative to the cgroup2 mount ends dir (the longest such path wins).
 */
static int find_vanished(struct sf_pins *p, const char *dir,
			 struct sf_selector *sel)
{
	size_t dl = strlen(dir), best = 0;

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		size_t tl;

		if (sf_target_read(p, slot, &t) ||
		    t.kind != SATFEED_TARGET_CGROUP || !sf_target_gone(&t))
			continue;
		tl = strnlen(t.path, sizeof(t.path));
		if (tl > best && tl <= dl &&
		    !strncmp(dir + dl - tl, t.path, tl)) {
			best = tl;
			sel->id = t.id;
		}
	}
	return best ? 0 : -ENOENT;
}

/* ---- changing the target table ---- */

static int cmd_add(struct sf_pins *p, const struct args *a)
{
	char why[512];
	int slot, err;

	err = sf_target_add(p, &a->sel, a->sc_mask, &slot, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	printf("watching %s %s%llu in slot %d\n",
	       a->sel.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
	       a->sel.kind == SATFEED_TARGET_PID ? "" : "id ",
	       (unsigned long long)a->sel.id, slot);
	return SF_EXIT_OK;
}

static int cmd_remove(struct sf_pins *p, const struct args *a)
{
	const struct sf_selector every = {};
	struct sf_selector sel = a->sel;
	char why[512];
	int n, err;

	if (a->vanished && !a->all && find_vanished(p, a->vanished, &sel))
		return fail(SF_EXIT_TARGET, "%s: no such directory, and no removed cgroup was watched there",
			    a->vanished);
	err = sf_target_remove(p, a->all ? &every : &sel, &n, why,
			       sizeof(why));
	if (err)
		return fail(err, "%s", why);
	printf("removed %d target%s\n", n, n == 1 ? "" : "s");
	return SF_EXIT_OK;
}

/* ---- what the kernel skipped ---- */

/* The engine programs' recursion misses, read once per view. */
struct skips {
	struct sf_prog_stats prog[SF_PROG_STATS_MAX];
	int n;			/* programs, or -errno */
	__u64 total;
	__u64 stream[SATFEED_NR_STREAMS];
	__u64 begin_ns;		/* every skip up to here is counted ... */
	__u64 end_ns;		/* ... and none after here */
};

static void skips_read(const struct sf_pins *p, struct skips *k)
{
	k->begin_ns = sf_now_mono_ns();
	k->n = sf_prog_stats_read(p->root, k->prog, SF_PROG_STATS_MAX,
				  &k->total);
	k->end_ns = sf_now_mono_ns();
	if (k->n > SF_PROG_STATS_MAX)
		k->n = SF_PROG_STATS_MAX;
	if (k->n >= 0)
		sf_prog_stats_by_stream(k->prog, k->n, k->stream);
}

/*
 * One line saying what the kernel skipped, or nothing when it skipped
 * nothing.  Never quiet about a count it could not read.
 */
static void skips_warn(FILE *f, const struct sf_pins *p,
		       const struct skips *k, const char *prefix)
{
	__u64 rescued = 0;
	int shown = 0;

	if (k->n < 0) {
		fprintf(f, "%swarning: cannot read the engine's programs under %s/%s: %s; runs the kernel skipped are not known\n",
			prefix, p->root, SATFEED_PIN_PROGS, strerror(-k->n));
		return;
	}
	if (!k->total)
		return;
	for (int i = 0; i < k->n; i++)
		rescued += k->prog[i].rescued;
	fprintf(f, "%swarning: the kernel skipped %llu runs of the engine's programs since load (",
		prefix, (unsigned long long)k->total);
	for (int i = 0; i < k->n; i++) {
		if (!k->prog[i].lost)
			continue;
		fprintf(f, "%s%s %llu", shown++ ? ", " : "", k->prog[i].name,
			(unsigned long long)k->prog[i].lost);
	}
	if (rescued)
		fprintf(f, "; understudies rescued %llu more",
			(unsigned long long)rescued);
	fprintf(f, "): events may be missing from the windows (recursion misses: satfeed-loader check, or bpftool prog show pinned %s/%s/NAME)\n",
		p->root, SATFEED_PIN_PROGS);
}

static void json_skips(const struct skips *k)
{
	if (k->n < 0) {
		printf("\"kernel_skipped\":null,");
		return;
	}
	printf("\"kernel_skipped\":{\"total\":%llu,\"read_begin_ns\":%llu,"
	       "\"read_end_ns\":%llu,\"programs\":{",
	       (unsigned long long)k->total, (unsigned long long)k->begin_ns,
	       (unsigned long long)k->end_ns);
	for (int i = 0; i < k->n; i++)
		printf("%s\"%s\":%llu", i ? "," : "", k->prog[i].name,
		       (unsigned long long)k->prog[i].recursion_misses);
	printf("},\"rescued\":{");
	for (int i = 0, shown = 0; i < k->n; i++)
		if (k->prog[i].rescued)
			printf("%s\"%s\":%llu", shown++ ? "," : "",
			       k->prog[i].name,
			       (unsigned long long)k->prog[i].rescued);
	printf("}},");
}

/* ---- output ---- */

/* s: a target's comm or path, up to max bytes (it may lack a NUL) */
static void json_str(const char *s, size_t max)
{
	char buf[SF_JSON_ESCAPED_LEN(sizeof(((struct satfeed_target *)0)->path))];

	sf_json_escape(buf, sizeof(buf), s, max);
	fputs(buf, stdout);
}

/* a target's comm or path for the terminal */
static const char *text_str(char *buf, size_t len, const char *s, size_t max)
{
	sf_text_escape(buf, len, s, max);
	return buf;
}

static void json_window(const struct satfeed_window *w)
{
	printf("{\"seq\":%llu,\"start_ns\":%llu,\"end_ns\":%llu,"
	       "\"sum_ns\":%llu,\"mean_ns\":%llu,\"var_ns2\":%llu,"
	       "\"rate\":%llu.%03llu,\"clamped\":%u}",
	       (unsigned long long)w->seq, (unsigned long long)w->start_ns,
	       (unsigned long long)w->end_ns, (unsigned long long)w->sum_ns,
	       (unsigned long long)w->mean_ns, (unsigned long long)w->var_ns2,
	       (unsigned long long)(w->rate_milli / 1000),
	       (unsigned long long)(w->rate_milli % 1000), w->clamped);
}

static void json_stream(const char *name, __u32 stream,
			const struct satfeed_stream *s, __u32 n,
			const struct skips *k)
{
	const struct satfeed_window *w = satfeed_newest_window(s);
	__u64 first;

	printf("\"%s\":{\"seq\":%llu,\"samples\":%u,\"pending\":%llu,"
	       "\"calls\":%llu,\"last_ns\":%llu,",
	       name, (unsigned long long)s->published, n,
	       (unsigned long long)s->pending, (unsigned long long)s->calls,
	       (unsigned long long)s->last_ns);
	if (w) {
		printf("\"mean_ns\":%llu,\"var_ns2\":%llu,",
		       (unsigned long long)w->mean_ns,
		       (unsigned long long)w->var_ns2);
		if (stream != SATFEED_STREAM_POLL)
			printf("\"%s\":%llu.%03llu,",
			       stream == SATFEED_STREAM_SEND ? "rps" : "rate",
			       (unsigned long long)(w->rate_milli / 1000),
			       (unsigned long long)(w->rate_milli % 1000));
	} else {
		printf("\"mean_ns\":null,\"var_ns2\":null,");
		if (stream != SATFEED_STREAM_POLL)
			printf("\"%s\":null,",
			       stream == SATFEED_STREAM_SEND ? "rps" : "rate");
	}
	if (k->n >= 0)
		printf("\"kernel_skipped\":%llu,",
		       (unsigned long long)k->stream[stream]);
	else
		printf("\"kernel_skipped\":null,");
	printf("\"errors\":%llu,\"eagain\":%llu,\"zero_bytes\":%llu,"
	       "\"not_socket\":%llu,\"windows\":[",
	       (unsigned long long)s->errors, (unsigned long long)s->eagain,
	       (unsigned long long)s->zero_bytes,
	       (unsigned long long)s->not_socket);
	first = s->published > SATFEED_HISTORY ?
			s->published - SATFEED_HISTORY + 1 : 1;
	for (__u64 seq = first; seq <= s->published; seq++) {
		if (seq != first)
			putchar(',');
		json_window(satfeed_window_by_seq(s, seq));
	}
	printf("]}");
}

static void json_target_head(__u32 slot, const struct satfeed_target *t)
{
	char mask[256];

	printf("{\"slot\":%u,", slot);
	if (t->kind == SATFEED_TARGET_PID) {
		printf("\"pid\":%llu,\"comm\":", (unsigned long long)t->id);
		json_str(t->comm, sizeof(t->comm));
	} else {
		printf("\"cgroup\":%llu,\"path\":", (unsigned long long)t->id);
		json_str(t->path, sizeof(t->path));
	}
	sf_format_syscalls(t->sc_mask, mask, sizeof(mask));
	printf(",\"state\":\"%s\",\"syscalls\":\"%s\"",
	       sf_target_gone(t) ? "gone" : "active", mask);
}

static void fmt_us(char *buf, size_t len, const struct satfeed_window *w,
		   bool sd)
{
	double v;

	if (!w) {
		snprintf(buf, len, "-");
		return;
	}
	/* display only: the exact integers are in --json */
	v = sd ? __builtin_sqrt((double)w->var_ns2) : (double)w->mean_ns;
	snprintf(buf, len, "%.1f", v / 1000.0);
}

static void target_label(char *buf, size_t len, const struct satfeed_target *t)
{
	char name[SF_TEXT_ESCAPED_LEN(sizeof(t->path))];

	if (t->kind == SATFEED_TARGET_PID)
		snprintf(buf, len, "pid %llu %s%s", (unsigned long long)t->id,
			 text_str(name, sizeof(name), t->comm, sizeof(t->comm)),
			 sf_target_gone(t) ? " (gone)" : "");
	else if (sf_target_gone(t))
		/* the mark first: the column cuts a long path */
		snprintf(buf, len, "cgroup (gone) %s",
			 text_str(name, sizeof(name), t->path, sizeof(t->path)));
	else
		snprintf(buf, len, "cgroup %s",
			 text_str(name, sizeof(name), t->path, sizeof(t->path)));
}

static void ago(char *buf, size_t len, __u64 last)
{
	__u64 now = sf_now_mono_ns();

	if (!last)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.1fs", now > last ? (now - last) / 1e9 : 0);
}

/*
 * The trend of a stream's last 8 windows as a bar each, and in marks[]
 * what the kernel skipped while each was open (see sf_skip_log_window).
 */
static void trend(const struct satfeed_stream *st, __u32 s,
		  const struct sf_skip_log *log, char bars[9], char marks[9])
{
	static const char spark[] = " .:-=+*#%@";
	static const char mark[] = { [SF_SKIPS_NONE] = '-',
				     [SF_SKIPS_NEAR] = '!',
				     [SF_SKIPS_UNKNOWN] = '?' };
	__u64 v[8], hi = 0, lo = ~0ULL;
	int n = 0;

	for (__u64 q = st->published > 8 ? st->published - 7 : 1;
	     q && q <= st->published; q++) {
		const struct satfeed_window *h = satfeed_window_by_seq(st, q);

		v[n] = s == SATFEED_STREAM_POLL ? h->mean_ns : h->rate_milli;
		hi = v[n] > hi ? v[n] : hi;
		lo = v[n] < lo ? v[n] : lo;
		marks[n] = mark[sf_skip_log_window(log, h->start_ns,
						   h->end_ns)];
		n++;
	}
	for (int i = 0; i < n; i++)
		bars[i] = spark[hi == lo ? 5 :
				(int)((v[i] - lo) * 9 / (hi - lo))];
	bars[n] = '\0';
	marks[n] = '\0';
}

/*
 * show: the latest window of each stream, as a table or (json) as JSON;
 * watch passes logs[] (one per stream, kept across its refreshes) for the
 * trend view, which marks each window by what the kernel skipped.
 */
static int show(struct sf_pins *p, const struct sf_selector *sel, bool json,
		struct sf_skip_log *logs)
{
	bool any = false, first = true, marked;
	struct sf_target_view v;
	struct skips k;
	int err;

	skips_read(p, &k);
	for (__u32 s = 0; logs && k.n >= 0 && s < SATFEED_NR_STREAMS; s++)
		sf_skip_log_add(&logs[s], k.begin_ns, k.end_ns, k.stream[s]);
	/* marks only where the kernel skipped something, or may have */
	marked = logs && (k.n < 0 || k.total);
	if (json) {
		printf("{\"abi_version\":%u,\"attach_mode\":\"%s\","
		       "\"window_samples\":%u,\"history\":%u,",
		       p->info.abi_version,
		       sf_attach_name(p->info.attach_mode),
		       p->info.window_samples, p->info.history);
		json_skips(&k);
		printf("\"targets\":[");
	} else if (!logs) {
		printf("%-28s %-6s %6s %6s %10s %10s %11s %7s\n", "TARGET",
		       "STREAM", "WIN", "PEND", "MEAN(us)", "SD(us)", "RATE/s",
		       "LAST");
	} else {
		skips_warn(stdout, p, &k, "");
		printf("%-28s %-6s %6s %10s %11s  %-22s%s\n", "TARGET",
		       "STREAM", "WIN", "MEAN(us)", "RATE/s",
		       "TREND (last 8 windows)", marked ? "  SKIPPED" : "");
	}
	for (__u32 slot = 0; (err = sf_target_view_next(p, &slot, &v)) > 0;
	     slot++) {
		const struct satfeed_stream *st = v.st;
		const struct satfeed_target t = v.t;
		char label[160];

		if (!sf_target_matches(&t, sel))
			continue;
		any = true;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(slot, &t);
			for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
				putchar(',');
				json_stream(sf_stream_names[s], s, &st[s],
					    p->info.window_samples, &k);
			}
			putchar('}');
			continue;
		}
		target_label(label, sizeof(label), &t);
		for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			const struct satfeed_window *w = satfeed_newest_window(&st[s]);
			char mean[32], sd[32], rate[32], last[32];

			fmt_us(mean, sizeof(mean), w, false);
			fmt_us(sd, sizeof(sd), w, true);
			ago(last, sizeof(last), st[s].last_ns);
			if (w && s != SATFEED_STREAM_POLL)
				snprintf(rate, sizeof(rate), "%.1f",
					 w->rate_milli / 1000.0);
			else
				snprintf(rate, sizeof(rate), "-");
			if (!logs) {
				printf("%-28.28s %-6s %6llu %6llu %10s %10s %11s %7s\n",
				       s ? "" : label, sf_stream_names[s],
				       (unsigned long long)st[s].published,
				       (unsigned long long)st[s].pending, mean,
				       sd, rate, last);
				continue;
			}
			/* trend: the metric each stream is read for */
			char bars[9], marks[9];

			trend(&st[s], s, &logs[s], bars, marks);
			printf("%-28.28s %-6s %6llu %10s %11s  [%-8s] %-9s",
			       s ? "" : label, sf_stream_names[s],
			       (unsigned long long)st[s].published, mean, rate,
			       bars, s == SATFEED_STREAM_POLL ? "mean wait" :
							       "rate");
			if (marked)
				printf("    [%-8s]", marks);
			putchar('\n');
		}
	}
	if (err)
		return fail(SF_EXIT_ERROR, "cannot read the windows: %s",
			    strerror(-err));
	if (json)
		printf("]}\n");
	else if (!logs)
		skips_warn(stderr, p, &k, PROG ": ");
	if (sel->kind && !any)
		return fail(SF_EXIT_TARGET, "%s %llu is not watched",
			    sel->kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
			    (unsigned long long)sel->id);
	if (sel->kind == SATFEED_TARGET_PID && !sf_pid_alive(sel->id))
		return fail(SF_EXIT_TARGET, "pid %llu has exited",
			    (unsigned long long)sel->id);
	return SF_EXIT_OK;
}

static int cmd_show(struct sf_pins *p, const struct args *a)
{
	return show(p, &a->sel, a->json, NULL);
}

static int cmd_targets(struct sf_pins *p, const struct args *a)
{
	bool json = a->json, first = true;

	if (json)
		printf("{\"targets\":[");
	else
		printf("%-5s %-7s %-20s %-16s %-7s %s\n", "SLOT", "KIND", "ID",
		       "NAME", "STATE", "SYSCALLS");
	for (__u32 slot = 0; slot < p->info.max_targets; slot++) {
		struct satfeed_target t;
		char mask[256], name[SF_TEXT_ESCAPED_LEN(sizeof(t.path))];

		if (sf_target_read(p, slot, &t))
			return fail(SF_EXIT_ERROR, "cannot read targets: %s",
				    strerror(errno));
		if (t.kind == SATFEED_TARGET_FREE)
			continue;
		if (json) {
			printf("%s", first ? "" : ",");
			first = false;
			json_target_head(slot, &t);
			putchar('}');
			continue;
		}
		sf_format_syscalls(t.sc_mask, mask, sizeof(mask));
		printf("%-5u %-7s %-20llu %-16s %-7s %s\n", slot,
		       t.kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
		       (unsigned long long)t.id,
		       t.kind == SATFEED_TARGET_PID ?
			       text_str(name, sizeof(name), t.comm,
					sizeof(t.comm)) :
			       text_str(name, sizeof(name), t.path,
					sizeof(t.path)),
		       sf_target_gone(&t) ? "gone" : "active", mask);
	}
	if (json)
		printf("]}\n");
	return SF_EXIT_OK;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int cmd_watch(struct sf_pins *p, const struct args *a)
{
	struct sf_skip_log *logs;
	struct sf_selector all = {};
	double interval = a->interval;
	long count = a->count;
	struct timespec ts = {
		.tv_sec = (time_t)interval,
		.tv_nsec = (long)((interval - (time_t)interval) * 1e9),
	};
	int err = 0;

	logs = calloc(SATFEED_NR_STREAMS, sizeof(*logs));
	if (!logs)
		return fail(SF_EXIT_ERROR, "out of memory");
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		sf_skip_log_init(&logs[s], p->info.load_mono_ns);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (count <= 0 || i < count); i++) {
		char why[512];
		int lockfd;

		/* each view one snapshot, of the engine pinned now */
		lockfd = sf_root_lock(a->root, LOCK_SH);
		if (lockfd >= 0 && !sf_pins_current(p)) {
			sf_pins_close(p);
			err = sf_pins_open(p, a->root, why, sizeof(why));
			if (err) {
				close(lockfd);
				return fail(err, "%s", why);
			}
		}
		if (isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		printf("satfeed %s, window %u samples — %s\n",
		       sf_attach_name(p->info.attach_mode),
		       p->info.window_samples, p->root);
		err = show(p, &all, false, logs);
		fflush(stdout);
		if (lockfd >= 0)
			close(lockfd);
		if (err)
			break;
		if (count <= 0 || i + 1 < count)
			nanosleep(&ts, NULL);
	}
	free(logs);
	return err;
}

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

/* ---- consistency ---- */

/* A load or unload that was killed left its swap directory. */
static void check_swap(const struct args *a, int *found, int *repaired)
{
	char swap[PATH_MAX], why[PATH_MAX + 256];
	struct stat st;
	int removed, err;

	if (sf_root_swap_path(a->root, swap, sizeof(swap)) ||
	    lstat(swap, &st))
		return;
	(*found)++;
	printf("%s: left by a killed load or unload (nothing in it is live)",
	       swap);
	if (!a->repair) {
		putchar('\n');
		return;
	}
	fflush(stdout);
	err = sf_root_retire_swap(a->root, PROG, &removed, why, sizeof(why));
	if (!err || err == -ENOTEMPTY) {
		(*repaired)++;
		printf("; repaired: removed %d pins\n", removed);
	} else {
		printf("; not repaired: %s\n", why);
	}
}

static int cmd_check(struct sf_pins *unused, const struct args *a)
{
	char why[PATH_MAX + 256];
	int lockfd, found = 0, repaired = 0, f = 0, r = 0, err;
	struct sf_pins p;

	lockfd = sf_root_lock(a->root, a->repair ? LOCK_EX : LOCK_SH);
	if (lockfd == -ENOENT)
		return fail(SF_EXIT_NOT_LOADED, "satfeed is not loaded (no %s)",
			    a->root);
	if (lockfd < 0)
		return fail(lockfd == -EACCES ? SF_EXIT_PERM : SF_EXIT_ERROR,
			    "cannot lock %s: %s", a->root, strerror(-lockfd));
	check_swap(a, &found, &repaired);
	err = sf_root_complete(a->root, why, sizeof(why));
	if (err == -ENOENT && !found) {
		close(lockfd);
		return fail(SF_EXIT_NOT_LOADED, "satfeed is not loaded (no %s)",
			    a->root);
	} else if (err == -ENOENT) {
		/* nothing more to check */
	} else if (err) {
		found++;
		printf("%s; 'satfeed-loader --replace load' puts a whole engine there\n",
		       why);
	} else {
		/* the lock is held already: the pins are opened plainly */
		err = sf_pins_open(&p, a->root, why, sizeof(why));
		if (err) {
			close(lockfd);
			return fail(err, "%s", why);
		}
		err = sf_table_check(&p, a->repair, stdout, &f, &r);
		sf_pins_close(&p);
		if (err)
			printf("cannot check the target table: %s\n",
			       strerror(-err));
		found += f + !!err;
		repaired += r;
	}
	close(lockfd);
	if (!found)
		printf("%s: consistent\n", a->root);
	else
		printf("%s: %d problem%s found, %d repaired\n", a->root, found,
		       found == 1 ? "" : "s", repaired);
	return found == repaired ? SF_EXIT_OK : SF_EXIT_ERROR;
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
};

struct cmd {
	const char *cmd;
	int (*func)(struct sf_pins *p, const struct args *a);
	unsigned int flags;
};

static const struct cmd cmds[] = {
	{ "add", cmd_add, CMD_TARGET | CMD_FAMILIES | CMD_WRITE },
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
	if ((c->flags & CMD_TARGET) && !a->sel.kind &&
	    !(a->all && (c->flags & CMD_ALL)))
		return fail(SF_EXIT_USAGE, "%s needs --pid PID or --cgroup DIR",
			    c->cmd);
	for (int f = 0; f < SATFEED_NR_STREAMS; f++) {
		if (fam_set[f] && !(c->flags & CMD_FAMILIES))
			return fail(SF_EXIT_USAGE, "--%s only applies to add",
				    sf_stream_names[f]);
		for (int i = 0; i < SATFEED_NR_SYSCALLS; i++)
			if (sf_syscalls[i].family == f &&
			    sf_syscalls[i].nr >= 0 &&
			    (!fam_set[f] || (fam_mask[f] & (1U << i))))
				a->sc_mask |= 1U << i;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct args a = { .interval = 1.0 };
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
	if (c->flags & CMD_EXPORT)
		return c->func(NULL, &a);

	if (c->flags & CMD_OWN_LOCK)
		return c->func(NULL, &a);
	if (c->flags & CMD_EACH_VIEW)
		err = sf_pins_open(&pins, root, why, sizeof(why));
	else
		err = sf_pins_open_locked(&pins, root, c->flags & CMD_WRITE ?
					  LOCK_EX : LOCK_SH, why, sizeof(why));
	if (err)
		return fail(err, "%s", why);
	err = c->func(&pins, &a);
	sf_pins_close(&pins);
	return err;
}
