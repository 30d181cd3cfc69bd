// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * watch: a view every --interval, each under the root lock for one
 * snapshot, following the engine across reloads: per target its state and
 * why, per stream its figure and the trend of the windows it keeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include "sf_common.h"
#include "sf_pins.h"
#include "sf_progstats.h"
#include "sf_reading.h"
#include "sf_root.h"
#include "sf_target.h"
#include "satfeedctl.h"
#include "view.h"

/* The rules that hold, in words short enough for an 80-column line */
static void why_words(__u32 why, char *buf, size_t len)
{
	static const struct { __u32 bit; const char *word; } words[] = {
		{ SATFEED_SAT_WHY_WPS_FULL, "waits/send < full" },
		{ SATFEED_SAT_WHY_WPS_NEAR, "waits/send < near" },
		{ SATFEED_SAT_WHY_IDLE_FULL, "idle < full" },
		{ SATFEED_SAT_WHY_IDLE_NEAR, "idle < near" },
		{ SATFEED_SAT_WHY_CV2_RISE, "dispersion up" },
		{ SATFEED_SAT_WHY_SVC_FULL, "service > full" },
		{ SATFEED_SAT_WHY_SVC_NEAR, "service > near" },
		{ SATFEED_SAT_WHY_DROP_FULL, "drops >= full" },
		{ SATFEED_SAT_WHY_DROP_NEAR, "drops >= near" },
		{ SATFEED_SAT_WHY_CPU_FULL, "CPU >= full" },
		{ SATFEED_SAT_WHY_CPU_NEAR, "CPU >= near" },
	};
	size_t off = 0;

	buf[0] = '\0';
	/* full implies near: say the stronger one only */
	why = sf_reason_strongest(why);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!(why & words[i].bit) || off >= len)
			continue;
		off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
				words[i].word);
	}
	if (!off)
		snprintf(buf, len, "no rule holds");
}

/*
 * The trend of a stream's last SATFEED_HISTORY windows (the ones it keeps)
 * as a bar each (lowest '.', so
 * every window is drawn), the scale they span, and in marks[] what the
 * kernel skipped while each was open (see sf_skip_log_window).
 */
static void trend(const struct satfeed_stream *st, __u32 s,
		  const struct sf_skip_log *log,
		  char bars[SATFEED_HISTORY + 1],
		  char marks[SATFEED_HISTORY + 1],
		  char *scale, size_t slen)
{
	static const char spark[] = ".:-=+*#%@";
	static const char mark[] = { [SF_SKIPS_NONE] = '-',
				     [SF_SKIPS_NEAR] = '!',
				     [SF_SKIPS_UNKNOWN] = '?' };
	__u64 v[SATFEED_HISTORY], hi = 0, lo = ~0ULL;
	char a[16], b[16];
	int n = 0;

	for (__u64 q = st->published > SATFEED_HISTORY ?
			       st->published - SATFEED_HISTORY + 1 : 1;
	     q && q <= st->published; q++) {
		const struct satfeed_window *h = satfeed_window_by_seq(st, q);

		v[n] = s == SATFEED_STREAM_POLL ? h->idle_permille :
						  h->rate_milli;
		hi = v[n] > hi ? v[n] : hi;
		lo = v[n] < lo ? v[n] : lo;
		marks[n] = mark[sf_skip_log_window(log, h->start_ns,
						   h->end_ns)];
		n++;
	}
	for (int i = 0; i < n; i++)
		bars[i] = spark[hi == lo ? 3 :
				(int)((v[i] - lo) * 8 / (hi - lo))];
	bars[n] = '\0';
	marks[n] = '\0';
	if (!n) {
		scale[0] = '\0';
		return;
	}
	if (s == SATFEED_STREAM_POLL) {
		snprintf(scale, slen, "%llu.%llu..%llu.%llu%%",
			 (unsigned long long)lo / 10, (unsigned long long)lo % 10,
			 (unsigned long long)hi / 10, (unsigned long long)hi % 10);
		return;
	}
	fmt_num(a, sizeof(a), lo / 1000.0);
	fmt_num(b, sizeof(b), hi / 1000.0);
	snprintf(scale, slen, "%s..%s/s", a, b);
}

/* Line of a target in the watch view: its state, and why. */
static void watch_target_line(const struct sf_reading *r)
{
	char label[160], words[96], since[24], head[96], age[24];
	const char *state = sf_reading_state_name(r);
	int n;

	target_label(label, sizeof(label), &r->t, true);
	if (r->gone || r->v.state == SATFEED_SAT_UNKNOWN) {
		printf("%.50s  state %s%s\n", label, state,
		       r->gone ? "" : " (not judged yet)");
		return;
	}
	if (r->verdict_stale) {
		/* it judged a load that has changed since: say how old */
		fmt_dur(age, sizeof(age), r->verdict_age_ns);
		snprintf(words, sizeof(words), "stale: judged %s ago", age);
	} else {
		why_words(r->v.why, words, sizeof(words));
	}
	fmt_dur(since, sizeof(since), r->now > r->v.since_ns ?
		r->now - r->v.since_ns : 0);
	/* the reasons get what is left of 80 columns */
	n = snprintf(head, sizeof(head), "%.30s  state %s for %s", label,
		     state, since);
	printf("%s (%.*s)\n", head, n < 76 ? 76 - n : 0, words);
}

#define WATCH_FMT "  %-4s %5s %-11s %7s %8s [%-8s] %-13s"

static void watch_rows(const struct sf_target_view *tv,
		       const struct sf_reading *r, struct sf_skip_log *logs,
		       bool marked)
{
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		const struct sf_figures *f = &r->s[s].f;
		char win[16], fig[32], sd[24], rate[24];
		char bars[SATFEED_HISTORY + 1], marks[SATFEED_HISTORY + 1];
		char scale[40], num[24];

		trend(&tv->st[s], s, &logs[s], bars, marks, scale,
		      sizeof(scale));
		snprintf(win, sizeof(win), "%llu",
			 (unsigned long long)tv->st[s].published);
		if (f->source == SF_FIG_NONE) {
			snprintf(fig, sizeof(fig), "-");
			snprintf(sd, sizeof(sd), "-");
			snprintf(rate, sizeof(rate), "-");
		} else {
			if (s == SATFEED_STREAM_POLL)
				snprintf(fig, sizeof(fig), "idle %u.%u%%%c",
					 f->idle_permille / 10,
					 f->idle_permille % 10,
					 fig_mark(f->source));
			else
				snprintf(fig, sizeof(fig), "cv2 %u.%03u%c",
					 f->cv2_permille / 1000,
					 f->cv2_permille % 1000,
					 fig_mark(f->source));
			fmt_dur(sd, sizeof(sd),
				__builtin_sqrt((double)f->var_ns2));
			if (s == SATFEED_STREAM_POLL) {
				snprintf(rate, sizeof(rate), "-");
			} else {
				fmt_num(num, sizeof(num),
					f->rate_milli / 1000.0);
				snprintf(rate, sizeof(rate), "%s/s", num);
			}
		}
		printf(WATCH_FMT, sf_stream_names[s], win, fig, sd, rate, bars,
		       scale);
		if (marked)
			printf(" [%-8s]", marks);
		putchar('\n');
	}
}

static void watch_header(bool marked)
{
	printf("  %-4s %5s %-11s %7s %8s %-10s %-13s%s\n", "STRM", "WIN",
	       "FIGURE", "SD", "RATE", "TREND", "SCALE", marked ? " SKIPPED" : "");
}

/* One refresh of the text view. */
static int watch_view(struct view *vw, struct sf_skip_log *logs)
{
	struct sf_pins *p = vw->p;
	struct sf_target_view *tv;
	struct sf_reading r;
	bool marked;
	int err, n = 0;

	for (__u32 s = 0; vw->k.n >= 0 && s < SATFEED_NR_STREAMS; s++)
		sf_skip_log_add(&logs[s], vw->k.begin_ns, vw->k.end_ns,
				vw->k.stream[s]);
	/* marks only where the kernel skipped something, or may have */
	marked = vw->k.n < 0 || vw->k.total;
	skips_warn(stdout, p, &vw->k, "");
	tv = malloc(sizeof(*tv));
	if (!tv)
		return -ENOMEM;
	watch_header(marked);
	for (__u32 slot = 0; (err = sf_target_view_next(p, vw->tab, &slot, tv)) > 0;
	     slot++) {
		sf_reading_build(&r, tv, vw->p->info.window_samples,
				 vw->p->info.max_age_ns, vw->now);
		watch_target_line(&r);
		watch_rows(tv, &r, logs, marked);
		n++;
	}
	if (!err && !n)
		printf("no targets: satfeedctl add --pid PID or --cgroup DIR\n");
	free(tv);
	return err;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* sleep for ts, or until a signal says stop */
static void doze(const struct timespec *ts)
{
	struct timespec left = *ts;

	while (!stop && nanosleep(&left, &left) && errno == EINTR)
		;
}

int cmd_watch(struct sf_pins *p, const struct args *a)
{
	struct sf_skip_log *logs;
	double interval = a->interval;
	long count = a->count;
	struct timespec ts = {
		.tv_sec = (time_t)interval,
		.tv_nsec = (long)((interval - (time_t)interval) * 1e9),
	};
	bool open = p->info_fd >= 0, tty = isatty(STDOUT_FILENO) && !a->json;
	__u64 load = p->info.load_mono_ns, gone_at = 0;
	int err = 0;

	logs = calloc(SATFEED_NR_STREAMS, sizeof(*logs));
	if (!logs)
		return fail(SF_EXIT_ERROR, "out of memory");
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		sf_skip_log_init(&logs[s], load);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (count <= 0 || i < count); i++) {
		char why[512], note[160] = "";
		struct view vw;
		/* each view of the engine pinned now, which it waits for */
		if (!open || !sf_pins_current(p)) {
			if (open)
				sf_pins_close(p);
			err = sf_pins_open_snapshot(p, a->root, why,
						    sizeof(why));
			open = !err;
			if (err && err != SF_EXIT_NOT_LOADED) {
				fail(err, "%s", why);
				break;
			}
			err = 0;	/* not loaded: wait for a load */
		}
		if (open && p->info.load_mono_ns != load) {
			/* a new load: its windows and counts start afresh */
			load = p->info.load_mono_ns;
			for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
				sf_skip_log_init(&logs[s], load);
			snprintf(note, sizeof(note), "(the engine was reloaded: following the new load)");
		}
		if (!open && !gone_at)
			gone_at = sf_now_mono_ns();
		if (open)
			gone_at = 0;
		if (tty)
			printf("\033[H\033[2J");
		if (!open && a->json) {
			printf("{\"time_ns\":%llu,\"loaded\":false,\"why\":",
			       (unsigned long long)now_real_ns());
			json_str(why, sizeof(why));
			printf("}\n");
		} else if (!open) {
			char d[24], hint[300];

			fmt_dur(d, sizeof(d), sf_now_mono_ns() - gone_at);
			printf("satfeed is not loaded at %s (for %s); waiting for '%s'%s\n",
			       a->root, d, sf_load_hint(a->root, hint,
							sizeof(hint)),
			       count <= 0 ? "; Ctrl-C ends" : "");
		} else {
			err = view_begin(&vw, p);
			if (err) {
				view_end(&vw);
				err = fail(sf_lock_exit(err), "%s", vw.why);
				break;
			}
			if (a->json) {
				err = json_view(&vw, NULL, 0);
			} else {
				printf("satfeed %s, window %u samples, %s%s\n",
				       sf_attach_name(p->info.attach_mode),
				       p->info.window_samples, p->root,
				       count <= 0 ? "; Ctrl-C ends" : "");
				if (note[0])
					printf("%s\n", note);
				err = watch_view(&vw, logs);
			}
			view_end(&vw);
		}
		fflush(stdout);
		if (err)
			break;
		if (count <= 0 || i + 1 < count)
			doze(&ts);
	}
	free(logs);
	if (err > 0)
		return err;
	if (err < 0)
		return fail(SF_EXIT_ERROR, "cannot read the windows: %s",
			    strerror(-err));
	return SF_EXIT_OK;
}
