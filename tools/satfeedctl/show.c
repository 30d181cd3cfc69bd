// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * show and watch: the latest windows as a table or as JSON, and the live
 * view with the trend of the last windows.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_progstats.h"
#include "sf_root.h"
#include "sf_target.h"
#include "satfeedctl.h"

/* s: a target's comm or path, up to max bytes (it may lack a NUL) */
static void json_str(const char *s, size_t max)
{
	char buf[SF_JSON_ESCAPED_LEN(sizeof(((struct satfeed_target *)0)->path))];

	sf_json_escape(buf, sizeof(buf), s, max);
	fputs(buf, stdout);
}

/* a target's comm or path for the terminal */
const char *text_str(char *buf, size_t len, const char *s, size_t max)
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

void json_target_head(__u32 slot, const struct satfeed_target *t)
{
	char mask[SF_MASK_TEXT_LEN];

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

int cmd_show(struct sf_pins *p, const struct args *a)
{
	return show(p, &a->sel, a->json, NULL);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int cmd_watch(struct sf_pins *p, const struct args *a)
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
