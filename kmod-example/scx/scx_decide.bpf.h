/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_decide.bpf.h - scx_satfeed's decision, taken every period by a
 * bpf_timer (#included by scx_satfeed.bpf.c, after its maps and counters).
 *
 * Whether the targets get CPUs is satfeed's: the consumer policy
 * (sfc_policy.c) turns each target's newest windows into a demand level,
 * and a level of 0 (no demand, or no window for release_ns) reserves
 * nothing.  How many is the targets' own: their CPU use, measured in
 * ops.stopping and smoothed (up fast, down slowly), plus headroom_pct,
 * rounded up, at most the most threads they had runnable at once over the
 * last shrink_ns; one CPU more when a target waited longer than delay_ns
 * to run while more of their threads were runnable than CPUs reserved;
 * one core less only after the need stayed below the reservation for
 * shrink_ns; rounded to whole cores (cfg.whole and cfg.less, from the
 * topology).
 */
#ifndef __SCX_DECIDE_BPF_H
#define __SCX_DECIDE_BPF_H

/*
 * The poll window in progress stands in for the newest closed one when it has
 * run longer than that one (or than SCX_SF_PARTIAL_MIN_NS when none closed):
 * a server that is starved of CPU, or saturated, rarely waits, so its poll
 * windows stop closing and the newest closed one, taken when it still
 * waited, would keep saying "idle".  Its running sums say how little it
 * waits now (the wait in progress is not in them: it can only make the
 * share look busier, and a target with no event at all for stale_ns has
 * demand 0 anyway).
 */
#define SCX_SF_PARTIAL_MIN_NS	(100 * 1000 * 1000ULL)

struct poll_partial {
	u64 pending;
	u64 start_ns;
	u64 sum_ns;
	u64 runq_ns;
	u64 span_ns;		/* of the newest closed window, 0: none */
};

static __always_inline void use_partial(const struct poll_partial *pp,
					struct sfc_signals *sig)
{
	u64 age, idle;

	if (!pp->pending || !pp->start_ns || sig->now_ns <= pp->start_ns)
		return;
	age = sig->now_ns - pp->start_ns;
	if (age <= pp->span_ns || age < SCX_SF_PARTIAL_MIN_NS)
		return;
	idle = pp->sum_ns > pp->runq_ns ? pp->sum_ns - pp->runq_ns : 0;
	/* sum <= pending * 2^32 ns: 1000 * sum fits 64 bits */
	idle = idle * 1000 / age;
	sig->poll_idle_permille = idle > 0xffffffffULL ? 0xffffffff : (u32)idle;
	if (!sig->poll_seq)
		sig->poll_seq = 1;	/* information, though no window closed */
}

/*
 * Copy what the policy needs from stream `stream` of target t into sig,
 * under the stream's lock; returns the stream's published count, or 0 when
 * the slot's data is of another generation.
 */
static __always_inline u64 read_stream(const volatile struct scx_sf_target *t,
				       u32 stream, struct sfc_signals *sig)
{
	u32 key = satfeed_stream_key(t->slot, stream);
	struct poll_partial pp = {};
	const struct satfeed_window *w;
	struct satfeed_stream *s;
	u64 published = 0;
	bool mine = false;

	s = bpf_map_lookup_elem(&sf_streams, &key);
	if (!s)
		return 0;
	bpf_spin_lock(&s->lock);
	if (s->gen != t->gen)
		goto unlock;
	mine = true;
	published = s->published;
	if (s->last_ns > sig->last_event_ns)
		sig->last_event_ns = s->last_ns;
	if (stream == SATFEED_STREAM_POLL) {
		pp.pending = s->pending;
		pp.start_ns = s->acc_start_ns;
		pp.sum_ns = s->acc_sum_ns;
		pp.runq_ns = s->acc_runq_ns;
	}
	w = satfeed_newest_window(s);
	if (!w)
		goto unlock;
	if (stream == SATFEED_STREAM_RECV) {
		sig->recv_seq = w->seq;
		sig->recv_cv2_permille = w->cv2_permille;
	} else if (stream == SATFEED_STREAM_POLL) {
		sig->poll_seq = w->seq;
		sig->poll_idle_permille = w->idle_permille;
		pp.span_ns = w->end_ns > w->start_ns ? w->end_ns - w->start_ns : 0;
	}
unlock:
	bpf_spin_unlock(&s->lock);
	if (mine && stream == SATFEED_STREAM_POLL)
		use_partial(&pp, sig);
	return published;
}

/* One target's level for this period (0 once released). */
static __always_inline u32 decide_target(u32 i, u64 now,
					 struct scx_sf_state *st)
{
	const volatile struct scx_sf_target *t = &cfg.targets[i];
	struct scx_sf_target_state *ts = &st->t[i];
	struct sfc_signals sig = { .now_ns = now };
	/* read through cfg's volatile: a plain pointer would let the
	 * compiler fold the fields to their initial values */
	struct sfc_policy_params params = {
		.hysteresis = cfg.policy.hysteresis,
		.max_step = cfg.policy.max_step,
		.min_interval_ns = cfg.policy.min_interval_ns,
		.stale_ns = cfg.policy.stale_ns,
	};
	struct satfeed_target *tgt;
	u32 slot = t->slot;
	u64 fresh = 0;

	tgt = bpf_map_lookup_elem(&sf_targets, &slot);
	ts->live = tgt && tgt->kind == t->kind && tgt->id == t->id &&
		   tgt->gen == t->gen && tgt->state == SATFEED_STATE_ACTIVE;
	if (ts->live) {
		for (u32 s = 0; s < SATFEED_NR_STREAMS; s++) {
			u64 pub = read_stream(t, s, &sig);

			/* windows closed before the first period do not count */
			if (pub > ts->published[s] && st->periods > 1)
				fresh += pub - ts->published[s];
			ts->published[s] = pub;
		}
	}
	if (fresh) {
		ts->windows += fresh;
		st->windows += fresh;
		ts->last_window_ns = now;
	}
	if (!ts->live || now - ts->last_window_ns > cfg.release_ns) {
		if (!ts->released && ts->pol.level)
			st->releases++;
		ts->released = 1;
		ts->pol.level = 0;
		ts->pol.demand = 0;
		return 0;
	}
	ts->released = 0;
	sfc_policy_step(&params, &ts->pol, &sig);
	return ts->pol.level;
}

/* Fold this period's measurements into st: the CPUs the targets need. */
static __always_inline u32 measure(struct scx_sf_state *st, u64 now, u64 dt)
{
	u64 run = tgt_run_ns, use, busy = st->busy_permille, need;
	u32 peak = tgt_runnable_peak;

	/* the peak restarts from the threads runnable now */
	tgt_runnable_peak = nr_tgt_runnable > 0 ? nr_tgt_runnable : 0;
	st->delay_max_ns = tgt_delay_max;
	tgt_delay_max = 0;
	st->delays = tgt_delays;

	use = run > st->run_ns && dt ? (run - st->run_ns) * 1000 / dt : 0;
	st->run_ns = run;
	/* up by half the difference a period, down by 1/32 (~0.3 s) */
	if (use > busy)
		busy += (use - busy + 1) / 2;
	else
		busy -= (busy - use) / 32;
	st->busy_permille = busy;

	st->runnable = peak;
	if (peak >= st->runnable_hold ||
	    now - st->runnable_hold_ns > cfg.shrink_ns) {
		st->runnable_hold = peak;
		st->runnable_hold_ns = now;
	}
	need = (busy * (100 + cfg.headroom_pct) + 99999) / 100000;
	if (need > st->runnable_hold)
		need = st->runnable_hold;
	if (st->delay_max_ns > cfg.delay_ns && peak > st->reserved &&
	    need <= st->reserved)
		need = st->reserved + 1;
	st->need = need;
	return need;
}

/* The reservation for this period, from the level and the need. */
static __always_inline u32 size(struct scx_sf_state *st, u32 need, u64 now)
{
	u32 want = need < cfg.max_reserved ? need : cfg.max_reserved;

	/* whole cores: a part of one would share it with a shared CPU */
	if (want > SCX_SF_MAX_CPUS)
		want = SCX_SF_MAX_CPUS;
	want = cfg.whole[want];

	if (!st->level) {
		st->shrink_since_ns = 0;
		return 0;
	}
	if (want >= st->reserved) {
		st->shrink_since_ns = 0;
		return want;
	}
	if (!st->shrink_since_ns) {
		st->shrink_since_ns = now;
		return st->reserved;
	}
	if (now - st->shrink_since_ns < cfg.shrink_ns)
		return st->reserved;
	st->shrink_since_ns = now;	/* the next core after as long again */
	return cfg.less[st->reserved < SCX_SF_MAX_CPUS ? st->reserved :
			SCX_SF_MAX_CPUS];
}

/*
 * Reserve `want` CPUs and set the perf targets: the reserved CPUs at full
 * performance, the others at perf_base while something is reserved (when
 * given), else back at full.
 */
static __always_inline void enforce(struct scx_sf_state *st, u32 want, u64 now)
{
	u32 n = cfg.nr_cpus;

	st->perf_reserved = want ? SCX_SF_PERF_ONE : 0;
	st->perf_base = want && cfg.perf_base ? cfg.perf_base : SCX_SF_PERF_ONE;
	if (want != st->reserved) {
		st->reserved = want;
		st->changes++;
		st->last_change_ns = now;
		if (!cfg.dry_run)
			nr_reserved = want;
	}
	for (u32 cpu = 0; cpu < n && cpu < SCX_SF_MAX_CPUS; cpu++) {
		u32 key = cpu;	/* the loop counter stays in a register */
		struct scx_sf_cpu *c = bpf_map_lookup_elem(&scx_sf_cpus, &key);
		u32 res = rank_of(cpu) < want;
		u32 perf = res ? SCX_SF_PERF_ONE : st->perf_base;

		if (!c)
			continue;
		if (cfg.dry_run) {
			c->reserved = res;
			c->perf = perf;
			continue;
		}
		if (perf != c->perf) {
			scx_bpf_cpuperf_set(cpu, perf);
			c->perf = perf;
		}
		/* a CPU that becomes reserved drops what it runs now (with
		 * SCX_OPS_ENQ_LAST, even when no target waits); one that
		 * becomes shared takes the shared queue */
		if (res && !c->reserved)
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		else if (!res && c->reserved)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		c->reserved = res;
	}
}

static int decide(void *map, u32 *key, struct decide_timer *dt)
{
	struct scx_sf_state *st;
	u32 zero = 0, level = 0, need;
	u64 now = bpf_ktime_get_ns(), span;

	st = bpf_map_lookup_elem(&scx_sf_state, &zero);
	if (!st)
		return 0;
	if (!st->periods) {
		st->start_ns = now;
		st->now_ns = now - cfg.period_ns;
		/* a target has release_ns from the start to show a window */
		for (u32 i = 0; i < SCX_SF_MAX_TARGETS; i++)
			st->t[i].last_window_ns = now;
	}
	span = now - st->now_ns;
	st->periods++;
	st->now_ns = now;
	for (u32 i = 0; i < SCX_SF_MAX_TARGETS && i < cfg.nr_targets; i++) {
		u32 l = decide_target(i, now, st);

		if (l > level)
			level = l;
	}
	st->level = level;
	need = measure(st, now, span);
	enforce(st, size(st, need, now), now);
	bpf_timer_start(&dt->timer, cfg.period_ns, 0);
	return 0;
}

#endif /* __SCX_DECIDE_BPF_H */
