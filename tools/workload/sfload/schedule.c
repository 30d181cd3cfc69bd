// SPDX-License-Identifier: GPL-2.0
/*
 * schedule.c - the schedule computed before the run, and after it what the
 * arrays say about the measured window.
 */
#include "sfload.h"

int build_schedule(void)
{
	uint64_t cap, n = 0, rng = cfg.seed ^ 0x5f3759dfull, *p;
	double t = 0, period = 1e9 / cfg.rate;

	run.sched_end = (uint64_t)((cfg.warmup + cfg.duration) * 1e9);
	cap = (uint64_t)(cfg.rate * (cfg.warmup + cfg.duration) * 1.05) + 64;
	run.sched = malloc(cap * sizeof(*run.sched));
	if (!run.sched)
		return -1;
	for (;;) {
		if (cfg.poisson) {
			if (n)
				t += -log(rng_unit(&rng)) * period;
		} else {
			t = (double)n * period;
		}
		if (t >= (double)run.sched_end)
			break;
		if (n == cap) {
			cap *= 2;
			p = realloc(run.sched, cap * sizeof(*p));
			if (!p)
				return -1;
			run.sched = p;
		}
		run.sched[n++] = (uint64_t)t;
	}
	run.n = n;
	if (!n)
		return 0;
	run.sent = calloc(n, sizeof(*run.sent));
	run.rcv = calloc(n, sizeof(*run.rcv));
	run.err = calloc(n, sizeof(*run.err));
	if (!run.sent || !run.rcv || !run.err)
		return -1;
	return 0;
}

void analyse(struct result *r)
{
	uint64_t w0 = (uint64_t)(cfg.warmup * 1e9), w1 = run.sched_end;
	uint64_t i, first = 0, last = 0, a, b;

	hist_init(&r->lat);
	hist_init(&r->lat_send);
	/* An interrupted run is measured up to where sending stopped. */
	if (run.interrupted && run.stopped_at < run.n &&
	    run.sched[run.stopped_at] < w1)
		w1 = run.sched[run.stopped_at];
	if (w1 < w0)
		w1 = w0;
	r->window_s = (w1 - w0) / 1e9;
	a = run.start + w0;
	b = run.start + w1;

	for (i = 0; i < run.n; i++) {
		if (run.rcv[i] >= a && run.rcv[i] < b)
			r->window_replies++;
		if (run.sched[i] < w0 || run.sched[i] >= w1)
			continue;
		r->requests++;
		if (!run.sent[i]) {
			r->unsent++;
			continue;
		}
		if (!r->sent++)
			first = run.sent[i];
		last = run.sent[i];
		if (!run.rcv[i]) {
			r->timeouts++;
		} else if (run.err[i]) {
			r->error_replies++;
		} else {
			r->replies++;
			hist_add(&r->lat, run.rcv[i] - run.start -
				 run.sched[i]);
			hist_add(&r->lat_send, run.rcv[i] - run.sent[i]);
		}
	}
	r->errors = r->error_replies + r->unsent + run.bad_replies;
	if (r->window_s > 0) {
		r->scheduled_rps = r->requests / r->window_s;
		r->achieved_rps = r->replies / r->window_s;
		r->served_rps = r->window_replies / r->window_s;
	}
	if (r->sent > 1 && last > first)
		r->sent_rps = (r->sent - 1) / ((last - first) / 1e9);
}
