// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * show: the latest windows of the selected targets as a table, a line per
 * target (its state first) or, with --raw, a line per stream; --json is
 * show_json.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sf_common.h"
#include "sf_reading.h"
#include "sf_pins.h"
#include "sf_root.h"
#include "sf_selector.h"
#include "sf_target.h"
#include "satfeedctl.h"
#include "view.h"

/* a figure in thousandths with `decimals` shown, and its mark */
static void fmt_fig(char *buf, size_t len, const struct sf_fig_value *f,
		    int shift, int decimals)
{
	__u64 v = f->value, scale = 1;

	for (int i = 0; i < decimals; i++)
		scale *= 10;
	/* thousandths to 10^-decimals: shift = 3 - decimals */
	for (int i = 0; i < shift; i++)
		v /= 10;
	if (f->source == SF_FIG_NONE)
		snprintf(buf, len, "- ");
	else if (decimals)
		snprintf(buf, len, "%llu.%0*llu%c",
			 (unsigned long long)(v / scale), decimals,
			 (unsigned long long)(v % scale), fig_mark(f->source));
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v,
			 fig_mark(f->source));
}

/* a rate: a tenth below 10000/s, where it still says something */
static void fmt_rate(char *buf, size_t len, const struct sf_fig_value *f)
{
	fmt_fig(buf, len, f, f->value < 10000000 ? 2 : 3,
		f->value < 10000000 ? 1 : 0);
}

/*
 * A dispersion (thousandths) in its 6 columns with the mark: 9.999, 99.99,
 * 999.9, 4294 (a short aged window can hold one long gap: cv2 in the
 * hundreds).
 */
static void fmt_cv2(char *buf, size_t len, const struct sf_fig_value *f)
{
	int d = f->value < 10000 ? 3 : f->value < 100000 ? 2 :
		f->value < 1000000 ? 1 : 0;

	fmt_fig(buf, len, f, 3 - d, d);
}

/*
 * The waits per 1000 sends the wps rules compare (wps_avg_permille), in 4
 * columns and its mark: 9999, 12k, 4294M, "!" when stale.  - : not known
 * yet (no send window has closed since the target counted a wait) or no
 * verdict.
 */
static void fmt_wps(char *buf, size_t len, const struct sf_fig_value *f)
{
	__u64 w = f->value;

	char m = fig_mark(f->source);

	if (f->source == SF_FIG_NONE)
		snprintf(buf, len, "-");
	else if (w < 10000)
		snprintf(buf, len, "%llu%c", w, m);
	else if (w < 1000000)
		snprintf(buf, len, "%lluk%c", w / 1000, m);
	else
		snprintf(buf, len, "%lluM%c", w / 1000000, m);
}

/* When the target's next window closes: the soonest of its partial ones */
static void fmt_next(char *buf, size_t len, const struct sf_reading *r)
{
	__u64 soonest = 0;

	for (__u32 s = 0; s < SF_VIEW_STREAMS; s++) {
		__u64 c = sf_reading_stream(r, s)->f.closes_in_ns;

		if (c && (!soonest || c < soonest))
			soonest = c;
	}
	if (!soonest) {
		snprintf(buf, len, "-");
		return;
	}
	buf[0] = '~';
	fmt_dur(buf + 1, len - 1, soonest);
}

/*
 * 80 columns: the state, then the figure its default rules judge; RPS is
 * the response stream's rate (RPS_obs), SEND/s every send's.
 */
#define SUMMARY_FMT "%-23.23s %-7s %4s %6s %6s %6s %7s %7s %6s\n"

static void summary_header(void)
{
	printf(SUMMARY_FMT, "TARGET", "STATE", "WPS", "IDLE%", "CV2.S",
	       "CV2.R", "RPS", "SEND/s", "NEXT");
}

static void summary_row(const struct view *vw, const struct sf_target_view *tv)
{
	char label[160], idle[32], cs[32], cr[32], rps[32], sr[32], next[32];
	char wps[16], state[16];
	struct sf_reading rd, *r = &rd;

	sf_reading_build(r, tv, vw->p->info.window_samples,
			 vw->p->info.max_age_ns, vw->now);
	/* a verdict that judges a past load says so: '!' */
	snprintf(state, sizeof(state), "%s%s", sf_reading_state_name(r),
		 r->verdict_stale ? "!" : "");
	fmt_wps(wps, sizeof(wps), &r->fig[SF_FIG_WPS]);
	target_label(label, sizeof(label), &tv->t, false);
	/* idle in permille as a percentage with one decimal */
	fmt_fig(idle, sizeof(idle), &r->fig[SF_FIG_IDLE], 0, 1);
	fmt_cv2(cs, sizeof(cs), &r->fig[SF_FIG_SEND_CV2]);
	fmt_cv2(cr, sizeof(cr), &r->fig[SF_FIG_RECV_CV2]);
	fmt_rate(rps, sizeof(rps), &r->fig[SF_FIG_RESP_RATE]);
	fmt_rate(sr, sizeof(sr), &r->fig[SF_FIG_SEND_RATE]);
	fmt_next(next, sizeof(next), r);
	printf(SUMMARY_FMT, label, state, wps, idle, cs, cr, rps, sr, next);
}

#define RAW_FMT "%-28.28s %-8s %6s %6s %10s %10s %7s %11s %6s %6s %7s %s\n"

static void raw_header(void)
{
	printf(RAW_FMT, "TARGET", "STREAM", "WIN", "PEND", "MEAN(us)",
	       "SD(us)", "CV2", "RATE/s", "WAIT%", "IDLE%", "LAST", "WINDOW");
}

static void raw_rows(const struct view *vw, const struct sf_target_view *tv)
{
	struct sf_reading rd, *r = &rd;
	char label[160];

	sf_reading_build(r, tv, vw->p->info.window_samples,
			 vw->p->info.max_age_ns, vw->now);
	target_label(label, sizeof(label), &tv->t, true);
	for (__u32 s = 0; s < SF_VIEW_STREAMS; s++) {
		const struct sf_reading_stream *st = sf_reading_stream(r, s);
		const struct sf_figures *f = &st->f;
		char win[16], pend[16], mean[32], sd[32], cv2[32], rate[32];
		char wait[16], idle[16], last[32], src[48], d[24];
		bool none = f->source == SF_FIG_NONE;

		snprintf(win, sizeof(win), "%llu",
			 (unsigned long long)st->published);
		snprintf(pend, sizeof(pend), "%llu",
			 (unsigned long long)st->pending);
		/* display only: the exact integers are in --json */
		snprintf(mean, sizeof(mean), none ? "-" : "%.1f",
			 f->mean_ns / 1000.0);
		snprintf(sd, sizeof(sd), none ? "-" : "%.1f",
			 __builtin_sqrt((double)f->var_ns2) / 1000.0);
		snprintf(cv2, sizeof(cv2), none ? "-" : "%.3f",
			 f->cv2_permille / 1000.0);
		/* a rate of waits or of service times means nothing */
		if (none || s == SATFEED_STREAM_POLL ||
		    s == SATFEED_STREAM_SVC)
			snprintf(rate, sizeof(rate), "-");
		else
			snprintf(rate, sizeof(rate), "%.1f",
				 f->rate_milli / 1000.0);
		if (none || s != SATFEED_STREAM_POLL) {
			snprintf(wait, sizeof(wait), "-");
			snprintf(idle, sizeof(idle), "-");
		} else {
			snprintf(wait, sizeof(wait), "%.1f",
				 f->wait_permille / 10.0);
			snprintf(idle, sizeof(idle), "%.1f",
				 f->idle_permille / 10.0);
		}
		if (!st->last_ns)
			snprintf(last, sizeof(last), "never");
		else
			fmt_dur(last, sizeof(last), vw->now > st->last_ns ?
				vw->now - st->last_ns : 0);
		if (f->source == SF_FIG_PARTIAL && f->closes_in_ns) {
			fmt_dur(d, sizeof(d), f->closes_in_ns);
			snprintf(src, sizeof(src), "partial, closes in ~%s", d);
		} else if (f->source == SF_FIG_STALE) {
			fmt_dur(d, sizeof(d), f->age_ns);
			snprintf(src, sizeof(src), "stale, closed %s ago", d);
		} else {
			snprintf(src, sizeof(src), "%s",
				 sf_fig_source_name(f->source));
		}
		printf(RAW_FMT, s ? "" : label, sf_stream_name(s), win, pend,
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
	err = view_begin(&vw, p);
	if (err) {
		view_end(&vw);
		return fail(sf_lock_exit(err), "%s", vw.why);
	}
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
	for (__u32 slot = 0; (err = sf_target_view_next(p, vw.tab, &slot, tv)) > 0;
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
