// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * measure.c - one configuration's round: every phase timed with statistics
 * off, then priced per program run with them on.
 */
#include "sfbench.h"

double t_ns[NR_CFG][NR_PHASE][MAX_ROUNDS];	/* ns per op, stats off */
/* per program run, ns, all runs in the stats phase */
double b_all[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
/* per run caused by the phase's own syscalls (background removed) */
double b_own[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
double b_bg[NR_CFG][NR_PHASE][MAX_ROUNDS];	/* background share */
/* program runs per op of the phase, all runs (background included) */
double b_runs[NR_CFG][NR_PHASE][NR_PR][MAX_ROUNDS];
/* foreign programs seen on the hooks during a configuration's round */
bool dirty[NR_CFG][MAX_ROUNDS];
char foreign_seen[1024];

static void check_foreign(int cfg, int round)
{
	char buf[1024];

	if (foreign_hooks(buf, sizeof(buf))) {
		dirty[cfg][round] = true;
		snprintf(foreign_seen, sizeof(foreign_seen), "%s", buf);
	}
}

double mem_bytes[MAX_ROUNDS];
int nr_mem;
int nr_indexed = -1;
bool counted_ok = true;

/*
 * The phase whose runs price the background of a traced phase: runs of
 * other processes that stop at the first check.  The getppid phase, except
 * for empty and satfeed in fentry mode, where getppid runs nothing and the
 * background runs are other processes' traced syscalls (exit: the unrelated
 * write+read phase) and waits (enter: the unrelated epoll_wait phase).
 * The phases run in order, so it is always measured before the traced ones.
 */
static int bg_phase(int cfg, int p)
{
	if (hooked(cfg, P_UGETPPID, p))
		return P_UGETPPID;
	return p == PR_ENTER ? P_UEPOLL : P_URW;
}

long phase_n(int ph)
{
	long n = (long)(phases[ph].n * o.scale);

	return n < 100 ? 100 : n;
}

void run_config(int cfg, int round)
{
	struct pstat before[NR_PR], after[NR_PR];
	long long calls0 = 0;

	/* timed, statistics off */
	for (int ph = 0; ph < NR_PHASE; ph++) {
		struct worker *w = phases[ph].traced ? &W_T : &W_U;

		/* the stream whose count shows that satfeed saw the
		 * phase's events: every send of the pair moved a byte; every
		 * request over TCP was answered (the response stream counts
		 * answers, not sends; none under --no-responses), warm-up
		 * included */
		int st = ph == P_TPAIR ? SATFEED_STREAM_SEND :
			 ph == P_TTCP && !o.no_responses ?
				SATFEED_STREAM_RESP : -1;

		check_foreign(cfg, round);
		if (cfg == CFG_SATFEED && st >= 0)
			calls0 = satfeed_calls(st);
		t_ns[cfg][ph][round] = worker_run(w, phases[ph].op,
						  phase_n(ph), o.batches)
					       .ns_per_op;
		if (cfg == CFG_SATFEED && st >= 0) {
			long long calls1 = satfeed_calls(st);

			if (calls0 < 0 || calls1 - calls0 < phase_n(ph) / 2) {
				msg("satfeed counted %lld %s of the traced worker, expected at least %ld",
				    calls1 - calls0,
				    st == SATFEED_STREAM_SEND ? "sends" :
								"responses",
				    phase_n(ph));
				counted_ok = false;
			}
		}
	}
	check_foreign(cfg, round);
	if (cfg == CFG_NONE ||
	    (cfg == CFG_BPFTRACE &&
	     (!psets[cfg][PR_ENTER].n || !psets[cfg][PR_EXIT].n)))
		return;

	/* statistics on: the kernel's accounting per program */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0)
		die("cannot enable BPF run-time statistics: %s",
		    strerror(errno));
	for (int ph = 0; ph < NR_PHASE; ph++) {
		struct worker *w = phases[ph].traced ? &W_T : &W_U;
		double own_events, bg_events = 0;
		struct res r;

		check_foreign(cfg, round);
		worker_run(w, OP_PING, 0, 0);
		for (int p = 0; p < NR_PR; p++)
			before[p] = prog_stat(&psets[cfg][p]);
		r = worker_run(w, phases[ph].op, phase_n(ph) / 2, 1);
		for (int p = 0; p < NR_PR; p++)
			after[p] = prog_stat(&psets[cfg][p]);
		own_events = (double)r.ops * phases[ph].sys_per_op;
		for (int p = 0; p < NR_PR; p++) {
			double drt = after[p].rt - before[p].rt;
			double dcnt = after[p].cnt - before[p].cnt;
			double bg = dcnt - own_events, c_bg;

			b_runs[cfg][ph][p][round] = dcnt / r.ops;
			if (!hooked(cfg, ph, p)) {
				/* fentry mode: no program of this class runs
				 * for the phase's syscalls */
				b_all[cfg][ph][p][round] = NAN;
				b_own[cfg][ph][p][round] = NAN;
				continue;
			}
			b_all[cfg][ph][p][round] = dcnt > 0 ? drt / dcnt : NAN;
			if (bg < 0)
				bg = 0;
			/* the background (other processes, the pipes that
			 * drive the worker) is charged at the cost of this
			 * round's unrelated phase of the same kind: a run that
			 * stopped at the first check (bg_phase()) */
			c_bg = b_all[cfg][bg_phase(cfg, p)][p][round];
			b_own[cfg][ph][p][round] =
				(drt - bg * c_bg) / own_events;
			if (p == PR_EXIT)
				bg_events = bg;
		}
		b_bg[cfg][ph][round] = bg_events / (bg_events + own_events);
	}
	close(stats_fd);
	stats_fd = -1;
	check_foreign(cfg, round);
}
