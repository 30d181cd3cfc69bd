// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * show and watch: the latest windows as a table or as JSON, and the live
 * view with the trend of the last windows.
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
#include "sf_escape.h"
#include "sf_figures.h"
#include "sf_select.h"
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
	       "\"rate\":%llu.%03llu,\"clamped\":%u,\"runq_ns\":%llu,"
	       "\"wait_permille\":%u,\"idle_permille\":%u,"
	       "\"cv2_permille\":%u}",
	       (unsigned long long)w->seq, (unsigned long long)w->start_ns,
	       (unsigned long long)w->end_ns, (unsigned long long)w->sum_ns,
	       (unsigned long long)w->mean_ns, (unsigned long long)w->var_ns2,
	       (unsigned long long)(w->rate_milli / 1000),
	       (unsigned long long)(w->rate_milli % 1000), w->clamped,
	       (unsigned long long)w->runq_ns, w->wait_permille,
	       w->idle_permille, w->cv2_permille);
}

/* What one view reads besides the targets: one time, the skips. */
struct view {
	struct sf_pins *p;
	__u64 now;		/* CLOCK_MONOTONIC of the reading */
	struct skips k;
};

/* The figures a reader should look at (sf_figures.h), as JSON. */
static void json_figures(__u32 stream, const struct sf_figures *f)
{
	printf("\"figures\":{\"window\":\"%s\",\"samples\":%llu,",
	       sf_fig_source_name(f->source), (unsigned long long)f->samples);
	if (f->source == SF_FIG_NONE) {
		printf("\"closes_in_ns\":null}");
		return;
	}
	printf("\"mean_ns\":%llu,\"var_ns2\":%llu,\"cv2_permille\":%u,",
	       (unsigned long long)f->mean_ns, (unsigned long long)f->var_ns2,
	       f->cv2_permille);
	if (stream == SATFEED_STREAM_POLL)
		printf("\"wait_permille\":%u,\"idle_permille\":%u,",
		       f->wait_permille, f->idle_permille);
	else
		printf("\"rate\":%llu.%03llu,",
		       (unsigned long long)(f->rate_milli / 1000),
		       (unsigned long long)(f->rate_milli % 1000));
	printf("\"age_ns\":%llu,", (unsigned long long)f->age_ns);
	if (f->source == SF_FIG_PARTIAL && f->closes_in_ns)
		printf("\"closes_in_ns\":%llu}",
		       (unsigned long long)f->closes_in_ns);
	else
		printf("\"closes_in_ns\":null}");
}

static void json_stream(const struct view *vw, __u32 stream,
			const struct satfeed_stream *s)
{
	const struct satfeed_window *w = satfeed_newest_window(s);
	const char *name = sf_stream_names[stream];
	__u32 n = vw->p->info.window_samples;
	struct sf_figures f;
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
		else
			printf("\"wait_permille\":%u,\"idle_permille\":%u,",
			       w->wait_permille, w->idle_permille);
		printf("\"cv2_permille\":%u,", w->cv2_permille);
	} else {
		printf("\"mean_ns\":null,\"var_ns2\":null,");
		if (stream != SATFEED_STREAM_POLL)
			printf("\"%s\":null,",
			       stream == SATFEED_STREAM_SEND ? "rps" : "rate");
		else
			printf("\"wait_permille\":null,\"idle_permille\":null,");
		printf("\"cv2_permille\":null,");
	}
	if (vw->k.n >= 0)
		printf("\"kernel_skipped\":%llu,",
		       (unsigned long long)vw->k.stream[stream]);
	else
		printf("\"kernel_skipped\":null,");
	sf_stream_figures(s, stream, n, vw->now, &f);
	json_figures(stream, &f);
	printf(",\"errors\":%llu,\"eagain\":%llu,\"zero_bytes\":%llu,"
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
	printf(",\"rules\":{\"wps_near_permille\":%u,"
	       "\"wps_full_permille\":%u,\"idle_near_permille\":%u,"
	       "\"idle_full_permille\":%u,\"cv2_rise_permille\":%u}",
	       t->rules.wps_near_permille, t->rules.wps_full_permille,
	       t->rules.idle_near_permille, t->rules.idle_full_permille,
	       t->rules.cv2_rise_permille);
}

/* ---- the verdict ---- */

/*
 * The saturation state of a target as shown: gone, or the engine's verdict
 * (sf_target_view_next() read it under its lock, all zero, UNKNOWN, when
 * it is of another generation: the target has not been judged yet).
 */
static const char *sat_state(const struct view *vw,
			     const struct sf_target_view *tv,
			     struct satfeed_verdict *v, bool *has_verdict)
{
	*v = tv->verdict;
	*has_verdict = !sf_target_gone(&tv->t);
	if (!*has_verdict)
		return "gone";
	return sf_sat_state_name(v->state);
}

/* The rules that hold, in words short enough for an 80-column line */
static void why_words(__u32 why, char *buf, size_t len)
{
	static const struct { __u32 bit; const char *word; } words[] = {
		{ SATFEED_SAT_WHY_WPS_FULL, "waits/send < full" },
		{ SATFEED_SAT_WHY_WPS_NEAR, "waits/send < near" },
		{ SATFEED_SAT_WHY_IDLE_FULL, "idle < full" },
		{ SATFEED_SAT_WHY_IDLE_NEAR, "idle < near" },
		{ SATFEED_SAT_WHY_CV2_RISE, "dispersion up" },
	};
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (!(why & words[i].bit) || off >= len)
			continue;
		/* full implies near: say the stronger one only */
		if ((words[i].bit == SATFEED_SAT_WHY_WPS_NEAR &&
		     (why & SATFEED_SAT_WHY_WPS_FULL)) ||
		    (words[i].bit == SATFEED_SAT_WHY_IDLE_NEAR &&
		     (why & SATFEED_SAT_WHY_IDLE_FULL)))
			continue;
		off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
				words[i].word);
	}
	if (!off)
		snprintf(buf, len, "no rule holds");
}

static void json_verdict(const struct view *vw,
			 const struct sf_target_view *tv)
{
	struct satfeed_verdict v;
	bool has;
	const char *state = sat_state(vw, tv, &v, &has);

	printf(",\"saturation\":");
	printf("{\"state\":\"%s\"", state);
	if (has)
		printf(",\"seen\":%u", v.seen);
	if (has)
		printf(",\"why\":%u,\"idle_permille\":%u,"
		       "\"send_cv2_permille\":%u,\"recv_cv2_permille\":%u,"
		       "\"base_cv2_permille\":%u,\"wps_permille\":%u,"
		       "\"wps_avg_permille\":%u,\"since_ns\":%llu,"
		       "\"updated_ns\":%llu,\"changes\":%llu",
		       v.why, v.idle_permille, v.send_cv2_permille,
		       v.recv_cv2_permille, v.base_cv2_permille,
		       v.wps_permille, v.wps_avg_permille,
		       (unsigned long long)v.since_ns,
		       (unsigned long long)v.updated_ns,
		       (unsigned long long)v.changes);
	putchar('}');
}

/* ---- text ---- */

/* mark: say "(gone)" in the label (where no STATE column says it) */
static void target_label(char *buf, size_t len, const struct satfeed_target *t,
			 bool mark)
{
	char name[SF_TEXT_ESCAPED_LEN(sizeof(t->path))];

	if (t->kind == SATFEED_TARGET_PID)
		snprintf(buf, len, "pid %llu %s%s", (unsigned long long)t->id,
			 text_str(name, sizeof(name), t->comm, sizeof(t->comm)),
			 mark && sf_target_gone(t) ? " (gone)" : "");
	else if (mark && sf_target_gone(t))
		/* the mark first: the column cuts a long path */
		snprintf(buf, len, "cgroup (gone) %s",
			 text_str(name, sizeof(name), t->path, sizeof(t->path)));
	else
		snprintf(buf, len, "cgroup %s",
			 text_str(name, sizeof(name), t->path, sizeof(t->path)));
}

/*
 * A duration, 3 significant digits: 12.3us, 1.23ms, 4.29s, 3.2m, 1.5h.
 * The unit changes where %.3g would round up to the next power of 1000.
 */
static void fmt_dur(char *buf, size_t len, double ns)
{
	if (ns < 999.5)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 999.5e3)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 999.5e6)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else if (ns < 120e9)
		snprintf(buf, len, "%.3gs", ns / 1e9);
	else if (ns < 7200e9)
		snprintf(buf, len, "%.0fm", ns / 60e9);
	else
		snprintf(buf, len, "%.0fh", ns / 3600e9);
}

/* A count, 3 significant digits: 981, 9.81k, 10.0k, 1.23M */
static void fmt_num(char *buf, size_t len, double v)
{
	if (v < 999.5)
		snprintf(buf, len, "%.3g", v);
	else if (v < 999.5e3)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.3gM", v / 1e6);
}

/* The mark after a figure: closed ' ', partial '~', stale '!' */
static char fig_mark(const struct sf_figures *f)
{
	return f->source == SF_FIG_PARTIAL ? '~' :
	       f->source == SF_FIG_STALE ? '!' : ' ';
}

/* permille as a percentage with one decimal, and its mark */
static void fmt_pct(char *buf, size_t len, const struct sf_figures *f,
		    __u32 v)
{
	if (f->source == SF_FIG_NONE)
		snprintf(buf, len, "- ");
	else
		snprintf(buf, len, "%u.%u%c", v / 10, v % 10, fig_mark(f));
}

static void fmt_cv2(char *buf, size_t len, const struct sf_figures *f)
{
	if (f->source == SF_FIG_NONE)
		snprintf(buf, len, "- ");
	else
		snprintf(buf, len, "%u.%03u%c", f->cv2_permille / 1000,
			 f->cv2_permille % 1000, fig_mark(f));
}

static void fmt_rate(char *buf, size_t len, const struct sf_figures *f)
{
	double r = f->rate_milli / 1000.0;

	if (f->source == SF_FIG_NONE)
		snprintf(buf, len, "- ");
	else if (r < 1e5)
		snprintf(buf, len, "%.1f%c", r, fig_mark(f));
	else
		snprintf(buf, len, "%.0f%c", r, fig_mark(f));
}

/* When the target's next window closes: the soonest of its partial ones */
static void fmt_next(char *buf, size_t len, const struct sf_figures *f)
{
	__u64 soonest = 0;

	for (int s = 0; s < SATFEED_NR_STREAMS; s++)
		if (f[s].closes_in_ns &&
		    (!soonest || f[s].closes_in_ns < soonest))
			soonest = f[s].closes_in_ns;
	if (!soonest) {
		snprintf(buf, len, "-");
		return;
	}
	buf[0] = '~';
	fmt_dur(buf + 1, len - 1, soonest);
}

static void all_figures(const struct view *vw, const struct sf_target_view *tv,
			struct sf_figures *f)
{
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		sf_stream_figures(&tv->st[s], s, vw->p->info.window_samples,
				  vw->now, &f[s]);
}

#define SUMMARY_FMT "%-23.23s %-7s %6s %6s %6s %9s %9s %6s\n"

static void summary_header(void)
{
	printf(SUMMARY_FMT, "TARGET", "STATE", "IDLE%", "CV2.S", "CV2.R",
	       "RPS", "RECV/s", "NEXT");
}

static void summary_row(const struct view *vw, const struct sf_target_view *tv)
{
	char label[160], idle[32], cs[32], cr[32], rps[32], rr[32], next[32];
	struct sf_figures f[SATFEED_NR_STREAMS];
	struct satfeed_verdict v;
	bool has;

	all_figures(vw, tv, f);
	target_label(label, sizeof(label), &tv->t, false);
	fmt_pct(idle, sizeof(idle), &f[SATFEED_STREAM_POLL],
		f[SATFEED_STREAM_POLL].idle_permille);
	fmt_cv2(cs, sizeof(cs), &f[SATFEED_STREAM_SEND]);
	fmt_cv2(cr, sizeof(cr), &f[SATFEED_STREAM_RECV]);
	fmt_rate(rps, sizeof(rps), &f[SATFEED_STREAM_SEND]);
	fmt_rate(rr, sizeof(rr), &f[SATFEED_STREAM_RECV]);
	fmt_next(next, sizeof(next), f);
	printf(SUMMARY_FMT, label, sat_state(vw, tv, &v, &has), idle, cs, cr,
	       rps, rr, next);
}

#define RAW_FMT "%-28.28s %-6s %6s %6s %10s %10s %7s %11s %6s %6s %7s %s\n"

static void raw_header(void)
{
	printf(RAW_FMT, "TARGET", "STREAM", "WIN", "PEND", "MEAN(us)",
	       "SD(us)", "CV2", "RATE/s", "WAIT%", "IDLE%", "LAST", "WINDOW");
}

static void raw_rows(const struct view *vw, const struct sf_target_view *tv)
{
	struct sf_figures f[SATFEED_NR_STREAMS];
	char label[160];

	all_figures(vw, tv, f);
	target_label(label, sizeof(label), &tv->t, true);
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		const struct satfeed_stream *st = &tv->st[s];
		char win[16], pend[16], mean[32], sd[32], cv2[32], rate[32];
		char wait[16], idle[16], last[32], src[48], d[24];
		bool none = f[s].source == SF_FIG_NONE;

		snprintf(win, sizeof(win), "%llu",
			 (unsigned long long)st->published);
		snprintf(pend, sizeof(pend), "%llu",
			 (unsigned long long)st->pending);
		/* display only: the exact integers are in --json */
		snprintf(mean, sizeof(mean), none ? "-" : "%.1f",
			 f[s].mean_ns / 1000.0);
		snprintf(sd, sizeof(sd), none ? "-" : "%.1f",
			 __builtin_sqrt((double)f[s].var_ns2) / 1000.0);
		snprintf(cv2, sizeof(cv2), none ? "-" : "%.3f",
			 f[s].cv2_permille / 1000.0);
		if (none || s == SATFEED_STREAM_POLL)
			snprintf(rate, sizeof(rate), "-");
		else
			snprintf(rate, sizeof(rate), "%.1f",
				 f[s].rate_milli / 1000.0);
		if (none || s != SATFEED_STREAM_POLL) {
			snprintf(wait, sizeof(wait), "-");
			snprintf(idle, sizeof(idle), "-");
		} else {
			snprintf(wait, sizeof(wait), "%.1f",
				 f[s].wait_permille / 10.0);
			snprintf(idle, sizeof(idle), "%.1f",
				 f[s].idle_permille / 10.0);
		}
		if (!st->last_ns)
			snprintf(last, sizeof(last), "never");
		else
			fmt_dur(last, sizeof(last), vw->now > st->last_ns ?
				vw->now - st->last_ns : 0);
		if (f[s].source == SF_FIG_PARTIAL && f[s].closes_in_ns) {
			fmt_dur(d, sizeof(d), f[s].closes_in_ns);
			snprintf(src, sizeof(src), "partial, closes in ~%s", d);
		} else if (f[s].source == SF_FIG_STALE) {
			fmt_dur(d, sizeof(d), f[s].age_ns);
			snprintf(src, sizeof(src), "stale, closed %s ago", d);
		} else {
			snprintf(src, sizeof(src), "%s",
				 sf_fig_source_name(f[s].source));
		}
		printf(RAW_FMT, s ? "" : label, sf_stream_names[s], win, pend,
		       mean, sd, cv2, rate, wait, idle, last, src);
	}
}

/*
 * A watched process that has made no traced call but has children: they
 * may be the ones doing the I/O.
 */
static void quiet_parent_hint(const struct sf_target_view *tv)
{
	char cg[512], mnt[256];
	__u64 kids[1];
	int n;

	if (tv->t.kind != SATFEED_TARGET_PID || sf_target_gone(&tv->t))
		return;
	for (int s = 0; s < SATFEED_NR_STREAMS; s++)
		if (tv->st[s].calls || tv->st[s].errors || tv->st[s].eagain)
			return;
	n = sf_proc_children(tv->t.id, kids, 1);
	if (!n)
		return;
	sf_cgroup2_mount(mnt, sizeof(mnt));
	if (sf_proc_cgroup(tv->t.id, cg, sizeof(cg)) || !mnt[0] ||
	    !strcmp(cg, "/"))
		sf_msg("note: pid %llu has made no traced call yet, but has %d child process%s: if they do the I/O, watch them (add --pid, or a cgroup holding them all with --cgroup)",
		       (unsigned long long)tv->t.id, n, n == 1 ? "" : "es");
	else
		sf_msg("note: pid %llu has made no traced call yet, but has %d child process%s: if they do the I/O, watch them all with 'satfeedctl add --cgroup %s%s'",
		       (unsigned long long)tv->t.id, n, n == 1 ? "" : "es",
		       mnt, cg);
}

/* ---- one view ---- */

static bool selected(const struct satfeed_target *t,
		     const struct sf_selector *sel, int nsel)
{
	if (!nsel)
		return true;
	for (int i = 0; i < nsel; i++)
		if (sf_target_matches(t, &sel[i]))
			return true;
	return false;
}

static void view_begin(struct view *vw, struct sf_pins *p)
{
	vw->p = p;
	skips_read(p, &vw->k);
	vw->now = sf_now_mono_ns();
}

static void view_end(struct view *vw)
{
}

static __u64 now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The JSON document of show --json, one line; watch --json adds time_ns. */
static int json_view(const struct view *vw, const struct sf_selector *sel,
		     int nsel)
{
	struct sf_pins *p = vw->p;
	struct sf_target_view *tv;
	bool first = true;
	int err;

	tv = malloc(sizeof(*tv));
	if (!tv)
		return -ENOMEM;
	printf("{\"abi_version\":%u,\"attach_mode\":\"%s\","
	       "\"window_samples\":%u,\"history\":%u,\"time_ns\":%llu,"
	       "\"now_ns\":%llu,\"load_mono_ns\":%llu,",
	       p->info.abi_version, sf_attach_name(p->info.attach_mode),
	       p->info.window_samples, p->info.history,
	       (unsigned long long)now_real_ns(),
	       (unsigned long long)vw->now,
	       (unsigned long long)p->info.load_mono_ns);
	json_skips(&vw->k);
	printf("\"targets\":[");
	for (__u32 slot = 0; (err = sf_target_view_next(p, &slot, tv)) > 0;
	     slot++) {
		if (!selected(&tv->t, sel, nsel))
			continue;
		printf("%s", first ? "" : ",");
		first = false;
		json_target_head(slot, &tv->t);
		json_verdict(vw, tv);
		for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			putchar(',');
			json_stream(vw, s, &tv->st[s]);
		}
		putchar('}');
	}
	printf("]}\n");
	free(tv);
	return err;
}

/*
 * Every target sel names is watched (a gone one too)?  Else fail before a
 * header is printed.  Returns an enum sf_exit.
 */
static int check_selected(struct sf_pins *p, const struct sf_selector *sel,
			  int nsel)
{
	for (int i = 0; i < nsel; i++) {
		int slot = sf_target_find(p, &sel[i], NULL);

		if (slot == -ENOENT)
			return fail(SF_EXIT_TARGET, "%s %llu is not watched (satfeedctl targets lists what is; add it with 'satfeedctl add --%s ...')",
				    sel[i].kind == SATFEED_TARGET_PID ? "pid" : "cgroup",
				    (unsigned long long)sel[i].id,
				    sel[i].kind == SATFEED_TARGET_PID ? "pid" : "cgroup");
		if (slot < 0)
			return fail(SF_EXIT_ERROR, "cannot read the targets: %s",
				    strerror(-slot));
	}
	return SF_EXIT_OK;
}

int cmd_show(struct sf_pins *p, const struct args *a)
{
	struct sf_selector sel[MAX_SEL];
	int nsel = a->slot >= 0 ? 1 : a->nr_sel;
	struct sf_target_view *tv;
	struct view vw;
	int err;

	memcpy(sel, a->sel, sizeof(sel));
	err = resolve_selection(p, a, sel) ?: check_selected(p, sel, nsel);
	if (err)
		return err;
	view_begin(&vw, p);
	if (a->json) {
		err = json_view(&vw, sel, nsel);
		view_end(&vw);
		return err ? fail(SF_EXIT_ERROR, "cannot read the windows: %s",
				  strerror(-err)) : SF_EXIT_OK;
	}
	tv = malloc(sizeof(*tv));
	if (!tv) {
		view_end(&vw);
		return fail(SF_EXIT_ERROR, "out of memory");
	}
	if (a->raw)
		raw_header();
	else
		summary_header();
	for (__u32 slot = 0; (err = sf_target_view_next(p, &slot, tv)) > 0;
	     slot++) {
		if (!selected(&tv->t, sel, nsel))
			continue;
		if (a->raw)
			raw_rows(&vw, tv);
		else
			summary_row(&vw, tv);
		fflush(stdout);
		quiet_parent_hint(tv);
	}
	free(tv);
	if (err) {
		view_end(&vw);
		return fail(SF_EXIT_ERROR, "cannot read the windows: %s",
			    strerror(-err));
	}
	skips_warn(stderr, p, &vw.k, PROG ": ");
	view_end(&vw);
	return SF_EXIT_OK;
}

/* ---- watch ---- */

/*
 * The trend of a stream's last 8 windows as a bar each (lowest '.', so
 * every window is drawn), the scale they span, and in marks[] what the
 * kernel skipped while each was open (see sf_skip_log_window).
 */
static void trend(const struct satfeed_stream *st, __u32 s,
		  const struct sf_skip_log *log, char bars[9], char marks[9],
		  char *scale, size_t slen)
{
	static const char spark[] = ".:-=+*#%@";
	static const char mark[] = { [SF_SKIPS_NONE] = '-',
				     [SF_SKIPS_NEAR] = '!',
				     [SF_SKIPS_UNKNOWN] = '?' };
	__u64 v[8], hi = 0, lo = ~0ULL;
	char a[16], b[16];
	int n = 0;

	for (__u64 q = st->published > 8 ? st->published - 7 : 1;
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
static void watch_target_line(const struct view *vw,
			      const struct sf_target_view *tv)
{
	char label[160], words[96], since[24], head[96];
	struct satfeed_verdict v;
	bool has;
	const char *state = sat_state(vw, tv, &v, &has);
	int n;

	target_label(label, sizeof(label), &tv->t, true);
	if (!has || v.state == SATFEED_SAT_UNKNOWN) {
		printf("%.50s  state %s%s\n", label, state,
		       has ? " (not judged yet)" : "");
		return;
	}
	why_words(v.why, words, sizeof(words));
	fmt_dur(since, sizeof(since), vw->now > v.since_ns ?
		vw->now - v.since_ns : 0);
	/* the reasons get what is left of 80 columns */
	n = snprintf(head, sizeof(head), "%.30s  state %s for %s", label,
		     state, since);
	printf("%s (%.*s)\n", head, n < 76 ? 76 - n : 0, words);
}

#define WATCH_FMT "  %-4s %5s %-11s %7s %8s [%-8s] %-13s"

static void watch_rows(const struct view *vw, const struct sf_target_view *tv,
		       struct sf_skip_log *logs, bool marked)
{
	struct sf_figures f[SATFEED_NR_STREAMS];

	all_figures(vw, tv, f);
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
		char win[16], fig[32], sd[24], rate[24], bars[9], marks[9];
		char scale[40], num[24];

		trend(&tv->st[s], s, &logs[s], bars, marks, scale,
		      sizeof(scale));
		snprintf(win, sizeof(win), "%llu",
			 (unsigned long long)tv->st[s].published);
		if (f[s].source == SF_FIG_NONE) {
			snprintf(fig, sizeof(fig), "-");
			snprintf(sd, sizeof(sd), "-");
			snprintf(rate, sizeof(rate), "-");
		} else {
			if (s == SATFEED_STREAM_POLL)
				snprintf(fig, sizeof(fig), "idle %u.%u%%%c",
					 f[s].idle_permille / 10,
					 f[s].idle_permille % 10,
					 fig_mark(&f[s]));
			else
				snprintf(fig, sizeof(fig), "cv2 %u.%03u%c",
					 f[s].cv2_permille / 1000,
					 f[s].cv2_permille % 1000,
					 fig_mark(&f[s]));
			fmt_dur(sd, sizeof(sd),
				__builtin_sqrt((double)f[s].var_ns2));
			if (s == SATFEED_STREAM_POLL) {
				snprintf(rate, sizeof(rate), "-");
			} else {
				fmt_num(num, sizeof(num),
					f[s].rate_milli / 1000.0);
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
	for (__u32 slot = 0; (err = sf_target_view_next(p, &slot, tv)) > 0;
	     slot++) {
		watch_target_line(vw, tv);
		watch_rows(vw, tv, logs, marked);
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
	bool open = true, tty = isatty(STDOUT_FILENO) && !a->json;
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
		int lockfd;

		/* each view one snapshot, of the engine pinned now */
		lockfd = sf_root_lock(a->root, LOCK_SH);
		if (!open || !sf_pins_current(p)) {
			if (open)
				sf_pins_close(p);
			err = sf_pins_open(p, a->root, why, sizeof(why));
			open = !err;
			if (err && err != SF_EXIT_NOT_LOADED) {
				if (lockfd >= 0)
					close(lockfd);
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
			char d[24];

			fmt_dur(d, sizeof(d), sf_now_mono_ns() - gone_at);
			printf("satfeed is not loaded at %s (for %s); waiting for satfeed-loader load%s\n",
			       a->root, d, count <= 0 ? "; Ctrl-C ends" : "");
		} else {
			view_begin(&vw, p);
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
		if (lockfd >= 0)
			close(lockfd);
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
