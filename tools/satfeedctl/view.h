/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * view.h - what show (show.c), show --json (show_json.c) and watch
 * (watch.c) share: one view of the targets (view.c) and its JSON.
 */
#ifndef SATFEEDCTL_VIEW_H
#define SATFEEDCTL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "sf_figures.h"
#include "sf_pins.h"
#include "satfeedctl.h"

/* What one view reads besides the targets: one time, the skips. */
struct view {
	struct sf_pins *p;
	__u64 now;		/* CLOCK_MONOTONIC of the reading */
	struct skips k;
};

/* ---- one view (view.c) ---- */

void view_begin(struct view *vw, struct sf_pins *p);
void view_end(struct view *vw);
/* t is one of the nsel targets sel names (nsel 0: every target) */
bool selected(const struct satfeed_target *t, const struct sf_selector *sel,
	      int nsel);
__u64 now_real_ns(void);
/* the figures of each stream of tv, f[SATFEED_NR_STREAMS] */
void all_figures(const struct view *vw, const struct sf_target_view *tv,
		 struct sf_figures *f);
/* "gone" or the verdict's state; *has_verdict: *v holds the verdict */
const char *sat_state(const struct view *vw, const struct sf_target_view *tv,
		      struct satfeed_verdict *v, bool *has_verdict);

/* ---- text ---- */

void target_label(char *buf, size_t len, const struct satfeed_target *t,
		  bool mark);
void fmt_dur(char *buf, size_t len, double ns);
void fmt_num(char *buf, size_t len, double v);
char fig_mark(const struct sf_figures *f);

/* ---- JSON (show_json.c) ---- */

void json_str(const char *s, size_t max);
/* the document of show --json, one line; watch --json's per refresh */
int json_view(const struct view *vw, const struct sf_selector *sel, int nsel);

#endif /* SATFEEDCTL_VIEW_H */
