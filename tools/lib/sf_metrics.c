// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_metrics.c - the Prometheus exposition of satfeed's windows
 * (sf_metrics.h).
 *
 * Every figure is an exact integer in the maps; it is printed as that
 * integer over a power of ten ("%llu.%09llu" for nanoseconds as seconds), a
 * decimal that a parser rounds once, to the double nearest the exact value.
 * A family's samples must be contiguous in both formats, so the targets are
 * read first into rows of the figures printed, then written family by
 * family.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_metrics.h"
#include "sf_pins.h"
#include "sf_progstats.h"
#include "sf_target.h"

#define MAX_PROGS SF_PROG_STATS_MAX
/* the longest name in a label: a program's pin name */
#define LABEL_NAME_MAX sizeof(((struct sf_prog_stats *)0)->name)

/* ---- the buffer ---- */

static bool buf_grow(struct sf_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->oom)
		return false;
	while (cap < b->len + need + 1)
		cap *= 2;
	if (cap == b->cap)
		return true;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void sf_buf_put(struct sf_buf *b, const char *s, size_t n)
{
	if (!buf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void sf_buf_printf(struct sf_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_grow(b, n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void sf_buf_reset(struct sf_buf *b)
{
	b->len = 0;
	b->oom = false;
	if (b->p)
		b->p[0] = '\0';
}

void sf_buf_free(struct sf_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- what one scrape reads ---- */

/* The figures of one stream; times already on the wall clock. */
struct stream_row {
	__u64 windows;		/* windows closed (seq of the newest) */
	__u64 pending;
	__u64 calls;
	__u64 errors;
	__u64 eagain;
	__u64 zero_bytes;
	__u64 not_socket;
	__u64 last_real_ns;	/* 0: no event yet */
	/* the newest closed window, when windows > 0 */
	__u64 mean_ns;
	__u64 var_ns2;
	__u64 rate_milli;
	__u64 clamped;
	__u64 end_real_ns;
};

struct target_row {
	__u32 slot;
	__u32 kind;
	__u64 id;
	__u32 sc_mask;
	bool gone;
	char comm[sizeof(((struct satfeed_target *)0)->comm)];
	char path[sizeof(((struct satfeed_target *)0)->path)];
	struct stream_row s[SATFEED_NR_STREAMS];
};

struct scrape {
	enum sf_metrics_format fmt;
	struct satfeed_info info;
	struct target_row *rows;
	__u32 nr_rows;
	struct sf_prog_stats progs[MAX_PROGS];
	int nr_progs;		/* or -errno */
	bool bpf_stats;		/* kernel.bpf_stats_enabled */
	__u64 now_real_ns;
	__u64 now_mono_ns;
};

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC time of the engine on the wall clock, as of now. */
static __u64 to_real(const struct scrape *sc, __u64 mono_ns)
{
	__u64 age = sc->now_mono_ns > mono_ns ? sc->now_mono_ns - mono_ns : 0;

	return sc->now_real_ns > age ? sc->now_real_ns - age : 0;
}

static void fill_row(const struct scrape *sc, const struct sf_target_view *v,
		     struct target_row *r)
{
	memset(r, 0, sizeof(*r));
	r->slot = v->slot;
	r->kind = v->t.kind;
	r->id = v->t.id;
	r->sc_mask = v->t.sc_mask;
	r->gone = sf_target_gone(&v->t);
	memcpy(r->comm, v->t.comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	memcpy(r->path, v->t.path, sizeof(r->path));
	r->path[sizeof(r->path) - 1] = '\0';
	for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
		const struct satfeed_stream *st = &v->st[s];
		const struct satfeed_window *w = satfeed_newest_window(st);
		struct stream_row *o = &r->s[s];

		o->windows = st->published;
		o->pending = st->pending;
		o->calls = st->calls;
		o->errors = st->errors;
		o->eagain = st->eagain;
		o->zero_bytes = st->zero_bytes;
		o->not_socket = st->not_socket;
		o->last_real_ns = st->last_ns ? to_real(sc, st->last_ns) : 0;
		if (!w)
			continue;
		o->mean_ns = w->mean_ns;
		o->var_ns2 = w->var_ns2;
		o->rate_milli = w->rate_milli;
		o->clamped = w->clamped;
		o->end_real_ns = to_real(sc, w->end_ns);
	}
}

static bool bpf_stats_enabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int on = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on == 1;
}

/* Read everything one exposition shows.  Returns an enum sf_exit. */
static int scrape_read(struct scrape *sc, const char *root, char *why,
		       size_t len)
{
	struct sf_target_view *v;
	struct sf_pins p;
	int err;

	err = sf_pins_open(&p, root, why, len);
	if (err)
		return err;
	sc->info = p.info;
	sc->now_real_ns = clock_ns(CLOCK_REALTIME);
	sc->now_mono_ns = clock_ns(CLOCK_MONOTONIC);
	sc->rows = calloc(p.info.max_targets, sizeof(*sc->rows));
	v = malloc(sizeof(*v));
	if (!sc->rows || !v) {
		snprintf(why, len, "out of memory");
		err = SF_EXIT_ERROR;
		goto free_view;
	}
	for (__u32 slot = 0; (err = sf_target_view_next(&p, &slot, v)) > 0;
	     slot++)
		fill_row(sc, v, &sc->rows[sc->nr_rows++]);
	if (err) {
		snprintf(why, len, "cannot read the windows under %s: %s",
			 root, strerror(-err));
		err = SF_EXIT_ERROR;
		goto free_view;
	}
	sc->nr_progs = sf_prog_stats_read(root, sc->progs, MAX_PROGS, NULL);
	if (sc->nr_progs > MAX_PROGS)
		sc->nr_progs = MAX_PROGS;
	sc->bpf_stats = bpf_stats_enabled();
free_view:
	free(v);
	sf_pins_close(&p);
	return err;
}

/* ---- writing ---- */

/*
 * A label value: the text a terminal shows for the name (sf_text_escape:
 * printable ASCII kept, '\' as "\\", any other byte as "\xHH"), with '\'
 * and '"' escaped as the exposition formats want.  Prometheus wants valid
 * UTF-8 there, and a comm or a cgroup directory name may hold any byte.
 */
static void label_value(struct sf_buf *b, const char *s, size_t max)
{
	char text[SF_TEXT_ESCAPED_LEN(LABEL_NAME_MAX)];

	sf_text_escape(text, sizeof(text), s, max);
	for (const char *p = text; *p; p++) {
		if (*p == '\\' || *p == '"')
			sf_buf_put(b, "\\", 1);
		sf_buf_put(b, p, 1);
	}
}

/* value / 10^decimals, exactly, in decimal. */
static void fixed(struct sf_buf *b, __u64 value, int decimals)
{
	__u64 scale = 1;

	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (!decimals)
		sf_buf_printf(b, "%llu", (unsigned long long)value);
	else
		sf_buf_printf(b, "%llu.%0*llu",
			      (unsigned long long)(value / scale), decimals,
			      (unsigned long long)(value % scale));
}

enum family_type { GAUGE, COUNTER, INFO };

/* What a family's sample names end in. */
static const char *const sample_suffix[] = { "", "_total", "_info" };

/*
 * HELP and TYPE of a family.  A counter's samples end in _total; the
 * family is named without it in OpenMetrics and with it in the text
 * format.  An info family's samples end in _info: a gauge of 1 in the text
 * format, type info in OpenMetrics.
 */
static void family_head(struct sf_buf *b, const struct scrape *sc,
			const char *name, enum family_type type,
			const char *help)
{
	static const char *const text_type[] = { "gauge", "counter", "gauge" };
	static const char *const om_type[] = { "gauge", "counter", "info" };
	bool om = sc->fmt == SF_METRICS_OPENMETRICS;
	const char *sfx = om ? "" : sample_suffix[type];

	sf_buf_printf(b, "# HELP %s%s %s\n", name, sfx, help);
	sf_buf_printf(b, "# TYPE %s%s %s\n", name, sfx,
		      om ? om_type[type] : text_type[type]);
}

/* The labels that name a target: kind, target (pid or path), comm. */
static void target_labels(struct sf_buf *b, const struct target_row *r)
{
	if (r->kind == SATFEED_TARGET_PID) {
		sf_buf_printf(b, "kind=\"pid\",target=\"%llu\",comm=\"",
			      (unsigned long long)r->id);
		label_value(b, r->comm, sizeof(r->comm));
	} else {
		sf_buf_printf(b, "kind=\"cgroup\",target=\"");
		label_value(b, r->path, sizeof(r->path));
		sf_buf_printf(b, "\",comm=\"");
	}
	sf_buf_put(b, "\"", 1);
}

#define STREAM_ALL	((1U << SATFEED_NR_STREAMS) - 1)
#define STREAM_SOCK	((1U << SATFEED_STREAM_SEND) | (1U << SATFEED_STREAM_RECV))

/* One family with a sample per target and stream. */
struct stream_family {
	const char *name;
	enum family_type type;
	size_t off;		/* the __u64 in struct stream_row */
	int decimals;		/* printed as value / 10^decimals */
	unsigned int streams;	/* bits of enum satfeed_stream_id */
	bool window;		/* only once a window has closed */
	bool stamp;		/* a wall-clock time: only when not 0 */
	const char *help;
};

#define ROW(f) offsetof(struct stream_row, f)

static const struct stream_family stream_families[] = {
	{ "satfeed_window_rate_per_second", GAUGE, ROW(rate_milli), 3,
	  STREAM_SOCK, true, false,
	  "Events per second in the latest closed window of N samples: N over the sum of its gaps. Stream send: RPS_obs, the requests served per second." },
	{ "satfeed_window_mean_seconds", GAUGE, ROW(mean_ns), 9, STREAM_ALL,
	  true, false,
	  "Mean sample of the latest closed window: the gap between calls (send, recv) or the duration of a wait (poll)." },
	{ "satfeed_window_variance_seconds_squared", GAUGE, ROW(var_ns2), 18,
	  STREAM_ALL, true, false,
	  "Exact population variance of the latest closed window's samples (saturation: it rises sharply past the saturation point)." },
	{ "satfeed_window_clamped_samples", GAUGE, ROW(clamped), 0,
	  STREAM_ALL, true, false,
	  "Samples of the latest closed window longer than the cap (4.29 s) and counted as the cap." },
	{ "satfeed_window_end_timestamp_seconds", GAUGE, ROW(end_real_ns), 9,
	  STREAM_ALL, true, true,
	  "When the latest closed window closed, seconds since the epoch." },
	{ "satfeed_window_pending_samples", GAUGE, ROW(pending), 0, STREAM_ALL,
	  false, false, "Samples in the window in progress." },
	{ "satfeed_windows", COUNTER, ROW(windows), 0, STREAM_ALL, false, false,
	  "Windows closed: the sequence number of the latest one." },
	{ "satfeed_calls", COUNTER, ROW(calls), 0, STREAM_ALL, false, false,
	  "Calls counted: sends or receives that moved bytes, waits that ended." },
	{ "satfeed_errors", COUNTER, ROW(errors), 0, STREAM_ALL, false, false,
	  "Calls that failed with an error other than EAGAIN." },
	{ "satfeed_eagain", COUNTER, ROW(eagain), 0, STREAM_ALL, false, false,
	  "Calls that failed with EAGAIN." },
	{ "satfeed_zero_byte_calls", COUNTER, ROW(zero_bytes), 0, STREAM_SOCK,
	  false, false, "Calls that returned 0: they moved nothing." },
	{ "satfeed_not_socket_calls", COUNTER, ROW(not_socket), 0, STREAM_SOCK,
	  false, false,
	  "read/readv/write/writev calls on a file that is not a socket: not counted as samples." },
	{ "satfeed_last_event_timestamp_seconds", GAUGE, ROW(last_real_ns), 9,
	  STREAM_ALL, false, true,
	  "When the stream's last counted event happened, seconds since the epoch." },
};

#define NR_STREAM_FAMILIES \
	(sizeof(stream_families) / sizeof(stream_families[0]))

static void write_stream_family(struct sf_buf *b, const struct scrape *sc,
				const struct stream_family *f)
{
	family_head(b, sc, f->name, f->type, f->help);
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		const struct target_row *r = &sc->rows[i];

		for (int s = 0; s < SATFEED_NR_STREAMS; s++) {
			const struct stream_row *sr = &r->s[s];
			__u64 v = *(const __u64 *)((const char *)sr + f->off);

			if (!(f->streams & (1U << s)) ||
			    (f->window && !sr->windows) || (f->stamp && !v))
				continue;
			sf_buf_printf(b, "%s%s{", f->name,
				      sample_suffix[f->type]);
			target_labels(b, r);
			sf_buf_printf(b, ",stream=\"%s\"} ",
				      sf_stream_names[s]);
			fixed(b, v, f->decimals);
			sf_buf_put(b, "\n", 1);
		}
	}
}

static void write_targets(struct sf_buf *b, const struct scrape *sc)
{
	char mask[SF_MASK_TEXT_LEN];

	family_head(b, sc, "satfeed_targets", GAUGE,
		    "Targets (processes and cgroups) watched.");
	sf_buf_printf(b, "satfeed_targets %u\n", sc->nr_rows);
	family_head(b, sc, "satfeed_target", INFO,
		    "A watched target: its slot and the syscalls that count for it.");
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		sf_format_syscalls(sc->rows[i].sc_mask, mask, sizeof(mask));
		sf_buf_printf(b, "satfeed_target_info{");
		target_labels(b, &sc->rows[i]);
		sf_buf_printf(b, ",slot=\"%u\",syscalls=\"%s\"} 1\n",
			      sc->rows[i].slot, mask);
	}
	family_head(b, sc, "satfeed_target_gone", GAUGE,
		    "1 when the watched process has exited, else 0.");
	for (__u32 i = 0; i < sc->nr_rows; i++) {
		sf_buf_printf(b, "satfeed_target_gone{");
		target_labels(b, &sc->rows[i]);
		sf_buf_printf(b, "} %d\n", sc->rows[i].gone);
	}
}

static void write_engine(struct sf_buf *b, const struct scrape *sc)
{
	family_head(b, sc, "satfeed_engine", INFO,
		    "The loaded engine: ABI version, attach mode, samples per window (N), windows kept per stream, target slots.");
	sf_buf_printf(b, "satfeed_engine_info{abi_version=\"%u\",attach_mode=\"%s\",window_samples=\"%u\",history=\"%u\",max_targets=\"%u\"} 1\n",
		      sc->info.abi_version, sf_attach_name(sc->info.attach_mode),
		      sc->info.window_samples, sc->info.history,
		      sc->info.max_targets);
	family_head(b, sc, "satfeed_engine_load_timestamp_seconds", GAUGE,
		    "When the engine was loaded, seconds since the epoch.");
	sf_buf_printf(b, "satfeed_engine_load_timestamp_seconds ");
	fixed(b, sc->info.load_realtime_ns, 9);
	sf_buf_put(b, "\n", 1);
}

/*
 * The engine programs' own cost, as the kernel counts it: runs skipped
 * always, run count and time only while kernel.bpf_stats_enabled is 1
 * (they stand still, and would read as an idle engine, otherwise).
 */
static void write_programs(struct sf_buf *b, const struct scrape *sc)
{
	family_head(b, sc, "satfeed_bpf_stats_enabled", GAUGE,
		    "1 while kernel.bpf_stats_enabled is on: the programs' run count and time are counted.");
	sf_buf_printf(b, "satfeed_bpf_stats_enabled %d\n", sc->bpf_stats);
	if (sc->nr_progs <= 0)
		return;
	family_head(b, sc, "satfeed_program_recursion_misses", COUNTER,
		    "Runs of an engine program the kernel skipped because a run of it was in progress on that CPU: events missing from the windows.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_recursion_misses_total{program=\"");
		label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} %llu\n",
			      (unsigned long long)sc->progs[i].recursion_misses);
	}
	if (!sc->bpf_stats)
		return;
	family_head(b, sc, "satfeed_program_runs", COUNTER,
		    "Runs of an engine program while kernel.bpf_stats_enabled was on.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_runs_total{program=\"");
		label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} %llu\n",
			      (unsigned long long)sc->progs[i].run_cnt);
	}
	family_head(b, sc, "satfeed_program_run_seconds", COUNTER,
		    "Time spent in an engine program while kernel.bpf_stats_enabled was on.");
	for (int i = 0; i < sc->nr_progs; i++) {
		sf_buf_printf(b, "satfeed_program_run_seconds_total{program=\"");
		label_value(b, sc->progs[i].name, sizeof(sc->progs[i].name));
		sf_buf_printf(b, "\"} ");
		fixed(b, sc->progs[i].run_time_ns, 9);
		sf_buf_put(b, "\n", 1);
	}
}

const char *sf_metrics_content_type(enum sf_metrics_format fmt)
{
	return fmt == SF_METRICS_OPENMETRICS ?
		       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
		       "text/plain; version=0.0.4; charset=utf-8";
}

int sf_metrics_write(struct sf_buf *b, const char *root,
		     enum sf_metrics_format fmt, char *why, size_t len)
{
	struct scrape *sc;
	int up, err;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->fmt = fmt;
	err = scrape_read(sc, root, why, len);
	up = !err;
	family_head(b, sc, "satfeed_up", GAUGE,
		    "1 when the engine is loaded and speaks this build's ABI, else 0 (and no other satfeed metric).");
	sf_buf_printf(b, "satfeed_up %d\n", up);
	if (up) {
		write_engine(b, sc);
		write_targets(b, sc);
		for (size_t i = 0; i < NR_STREAM_FAMILIES; i++)
			write_stream_family(b, sc, &stream_families[i]);
		write_programs(b, sc);
	}
	if (fmt == SF_METRICS_OPENMETRICS)
		sf_buf_printf(b, "# EOF\n");
	free(sc->rows);
	free(sc);
	return b->oom ? -ENOMEM : up;
}
