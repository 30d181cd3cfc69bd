// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One view of the targets, as show, show --json and watch take it: one
 * time and the skips, which targets a selection names, and the labels and
 * numbers the text views share.  Each view builds a target's one reading
 * with sf_reading_build() (sf_reading.h, which the exporter calls too).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "sf_common.h"
#include "sf_escape.h"
#include "sf_pins.h"
#include "sf_target.h"
#include "satfeedctl.h"
#include "view.h"

/* a target's comm or path for the terminal */
const char *text_str(char *buf, size_t len, const char *s, size_t max)
{
	sf_text_escape(buf, len, s, max);
	return buf;
}

bool selected(const struct satfeed_target *t,
	      const struct sf_selector *sel, int nsel)
{
	if (!nsel)
		return true;
	for (int i = 0; i < nsel; i++)
		if (sf_target_matches(t, &sel[i]))
			return true;
	return false;
}

int view_begin(struct view *vw, struct sf_pins *p)
{
	vw->p = p;
	vw->why[0] = '\0';
	skips_read(p, &vw->k);
	vw->tab = malloc(sizeof(*vw->tab));
	if (!vw->tab) {
		snprintf(vw->why, sizeof(vw->why), "out of memory");
		return -ENOMEM;
	}
	vw->now = sf_now_mono_ns();
	return sf_target_table_read(p, vw->tab, vw->why, sizeof(vw->why));
}

void view_end(struct view *vw)
{
	free(vw->tab);
	vw->tab = NULL;
}

__u64 now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- text ---- */

/* mark: say "(gone)" in the label (where no STATE column says it) */
void target_label(char *buf, size_t len, const struct satfeed_target *t,
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
void fmt_dur(char *buf, size_t len, double ns)
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
void fmt_num(char *buf, size_t len, double v)
{
	if (v < 999.5)
		snprintf(buf, len, "%.3g", v);
	else if (v < 999.5e3)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.3gM", v / 1e6);
}

/* The mark after a figure: closed ' ', partial '~', stale '!' */
char fig_mark(enum sf_fig_source source)
{
	return source == SF_FIG_PARTIAL ? '~' :
	       source == SF_FIG_STALE ? '!' : ' ';
}
