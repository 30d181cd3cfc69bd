/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * view.h - what show (show.c), show --json (show_json.c) and watch
 * (watch.c) share: one view of the targets (view.c) and its JSON.
 */
#ifndef SATFEEDCTL_VIEW_H
#define SATFEEDCTL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "sf_pins.h"
#include "sf_reading.h"
#include "satfeedctl.h"

/* What one view reads besides the targets: one time, the skips. */
struct view {
	struct sf_pins *p;
	__u64 now;		/* CLOCK_MONOTONIC of the reading */
	struct skips k;
	struct sf_target_table *tab;	/* the targets as of now */
	char why[256];		/* why view_begin() failed */
};

/* ---- one view (view.c) ---- */

/* 0, or -errno with vw->why set; view_end() in either case */
int view_begin(struct view *vw, struct sf_pins *p);
void view_end(struct view *vw);
/* t is one of the nsel targets sel names (nsel 0: every target) */
bool selected(const struct satfeed_target *t, const struct sf_selector *sel,
	      int nsel);
__u64 now_real_ns(void);

/* ---- text ---- */

void target_label(char *buf, size_t len, const struct satfeed_target *t,
		  bool mark);
void fmt_dur(char *buf, size_t len, double ns);
void fmt_num(char *buf, size_t len, double v);
char fig_mark(enum sf_fig_source source);

/* ---- JSON (show_json.c) ---- */

void json_str(const char *s, size_t max);
/* the document of show --json, one line; watch --json's per refresh */
int json_view(const struct view *vw, const struct sf_selector *sel, int nsel);

#endif /* SATFEEDCTL_VIEW_H */
