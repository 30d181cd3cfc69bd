// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sf_reading.c - one reading of a target (sf_reading.h): its verdict, its
 * headline figures with their window and age, its counters; and the
 * figures a reader shows of one stream (closed, partial or stale window).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sf_common.h"
#include "sf_reading.h"
#include "sf_selector.h"

typedef unsigned __int128 u128;


const char *sf_fig_source_name(enum sf_fig_source s)
{
	static const char *const names[] = {
		[SF_FIG_NONE] = "none",
		[SF_FIG_CLOSED] = "closed",
		[SF_FIG_PARTIAL] = "partial",
		[SF_FIG_STALE] = "stale",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

const char *sf_sat_state_name(__u32 state)
{
	static const char *const names[] = {
		[SATFEED_SAT_UNKNOWN] = "unknown",
		[SATFEED_SAT_OK] = "ok",
		[SATFEED_SAT_NEAR] = "near",
		[SATFEED_SAT_FULL] = "full",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] :
							  "unknown";
}

__u32 sf_cv2_permille(__u64 n, __u64 s1, __u64 s2_lo, __u64 s2_hi)
{
	u128 s2 = ((u128)s2_hi << 64) | s2_lo, sq = (u128)s1 * s1, num, q;

	if (!s1)
		return 0;
	/* n * S2 >= S1^2 (Cauchy-Schwarz); n < 2^17 and S2 < 2^81 */
	num = (u128)n * s2 - sq;
	q = num * 1000 / sq;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

/* floor(num * 1000 / den) capped to 32 bits; 0 when den is 0 */
static __u32 permille(__u64 num, __u64 den)
{
	u128 q;

	if (!den)
		return 0;
	q = (u128)num * 1000 / den;
	return q > 0xffffffffULL ? 0xffffffffU : (__u32)q;
}

static void from_window(const struct satfeed_window *w, __u64 now,
			struct sf_figures *f)
{
	f->samples = w->samples;
	f->mean_ns = w->mean_ns;
	f->var_ns2 = w->var_ns2;
	f->rate_milli = w->rate_milli;
	f->wait_permille = w->wait_permille;
	f->idle_permille = w->idle_permille;
	f->cv2_permille = w->cv2_permille;
	f->age_ns = now > w->end_ns ? now - w->end_ns : 0;
}

/* The window in progress, over its pending samples so far. */
static void from_sums(const struct satfeed_stream *st, __u32 stream,
		      __u32 n, __u64 now, struct sf_figures *f)
{
	__u64 p = st->pending, s1 = st->acc_sum_ns, span, elapsed;
	u128 s2 = ((u128)st->acc_sumsq_hi << 64) | st->acc_sumsq_lo;

	f->samples = p;
	f->mean_ns = s1 / p;
	/* floor((p * S2 - S1^2) / p^2): p is not a power of two here */
	f->var_ns2 = (__u64)(((u128)p * s2 - (u128)s1 * s1) / ((u128)p * p));
	f->cv2_permille = sf_cv2_permille(p, s1, st->acc_sumsq_lo,
					  st->acc_sumsq_hi);
	if (stream != SATFEED_STREAM_POLL) {
		f->rate_milli = s1 ? (__u64)((u128)p * 1000000000000ULL / s1) :
				     0;
	} else {
		span = st->last_ns > st->acc_start_ns ?
			       st->last_ns - st->acc_start_ns : 0;
		f->wait_permille = permille(s1, span);
		f->idle_permille = permille(s1 > st->acc_runq_ns ?
						    s1 - st->acc_runq_ns : 0,
					    span);
	}
	f->age_ns = now > st->last_ns ? now - st->last_ns : 0;
	/* the samples still missing, at the pace they came so far */
	elapsed = now > st->acc_start_ns ? now - st->acc_start_ns : 0;
	if (st->acc_start_ns && elapsed && p < n)
		f->closes_in_ns = (__u64)((u128)elapsed * (n - p) / p);
}

void sf_stream_figures(const struct satfeed_stream *st, __u32 stream,
		       __u32 n, __u64 now, struct sf_figures *f)
{
	const struct satfeed_window *w = satfeed_newest_window(st);
	bool stale = false;

	memset(f, 0, sizeof(*f));
	f->newest_seq = st->published;
	if (w) {
		__u64 span = w->end_ns - w->start_ns;
		__u64 limit = span * SF_STALE_SPANS;

		if (limit < SF_STALE_MIN_NS)
			limit = SF_STALE_MIN_NS;
		stale = now > w->end_ns && now - w->end_ns > limit;
		/* ABI 4: a quiet window (rate 0) is published once and stays
		 * true until the next event starts a window in progress */
		if (w->flags & SATFEED_WIN_QUIET)
			stale = st->pending != 0;
		if (!stale) {
			f->source = SF_FIG_CLOSED;
			from_window(w, now, f);
			return;
		}
	}
	if (st->pending) {
		f->source = SF_FIG_PARTIAL;
		from_sums(st, stream, n, now, f);
		return;
	}
	if (w) {
		f->source = SF_FIG_STALE;
		from_window(w, now, f);
	}
}


const struct sf_fig_desc sf_figs[SF_NR_FIGS] = {
	[SF_FIG_IDLE] = { "idle", "satfeed_idle_ratio", 3,
		"Idle share the verdict judges: time the target's threads spent in waits for work (wait time less run-queue time, waits in progress included) over the engine's last tick interval times the threads that woke in it (0 to 1; 1 when every waiting thread slept through it)." },
	[SF_FIG_SEND_RATE] = { "send_rate", "satfeed_send_rate_per_second", 3,
		"Sends per second: samples over the sum of the gaps between send-family calls (a response of several sends counts each)." },
	[SF_FIG_RECV_RATE] = { "recv_rate", "satfeed_recv_rate_per_second", 3,
		"Receives per second: samples over the sum of the gaps between receives." },
	[SF_FIG_SEND_CV2] = { "send_cv2", "satfeed_send_dispersion_ratio", 3,
		"Dispersion of the gaps between sends: variance over squared mean (squared coefficient of variation)." },
	[SF_FIG_RECV_CV2] = { "recv_cv2", "satfeed_recv_dispersion_ratio", 3,
		"Dispersion of the gaps between receives: variance over squared mean (squared coefficient of variation)." },
	[SF_FIG_WPS] = { "wps", "satfeed_waits_per_send", 3,
		"Waits that ended per send, smoothed over send windows: what the verdict's wps rules compare." },
	[SF_FIG_RESP_RATE] = { "resp_rate",
		"satfeed_response_rate_per_second", 3,
		"Responses per second (RPS_obs): samples over the sum of the gaps between responses, a response being the first send on a client connection after a receive on it." },
	[SF_FIG_SVC_MEAN] = { "service_mean",
		"satfeed_service_time_mean_seconds", 9,
		"Mean service time: from a request's first receive to its response's first send on that connection, over the service-time window, seconds (exact: ns)." },
	[SF_FIG_SVC_P99] = { "service_p99",
		"satfeed_service_time_p99_seconds", 9,
		"Service time p99 since the target was added: the lower bound of the histogram bucket (log-linear, each at most 25% wide) where the cumulative count reaches 99%, seconds (exact: ns)." },
	[SF_FIG_DROPS] = { "drop_share", "satfeed_receive_drop_ratio", 3,
		"Datagrams the target's datagram (UDP) sockets dropped, mostly for a full receive buffer, per datagram that arrived (dropped plus received) over the engine's last tick interval (0 to 1; 0 for a server without datagram sockets)." },
	[SF_FIG_CPU] = { "cpu_share", "satfeed_cpu_ratio", 3,
		"CPU time of the target's threads over the engine's last tick interval times the CPUs they may use (the union of their affinity masks, at most one per thread that did not sleep through the interval): 0 to 1. The cpu_full rule (0.97 by default) reads it." },
	[SF_FIG_UNREAD] = { "unread_max", "satfeed_receive_unread_bytes", 0,
		"The most bytes a receive on one of the target's accepted TCP connections left unread on it (requests queued behind the one read) over the engine's last tick interval; 0 when every receive read its connection empty." },
};

const char *const sf_reason_names[SF_NR_REASONS] = {
	"wps_full", "wps_near", "idle_full", "idle_near", "cv2_rise",
	"svc_full", "svc_near", "drop_full", "drop_near", "cpu_full",
	"cpu_near", "unread_full", "unread_near", "quiet",
};

const __u32 sf_reason_bits[SF_NR_REASONS] = {
	SATFEED_SAT_WHY_WPS_FULL, SATFEED_SAT_WHY_WPS_NEAR,
	SATFEED_SAT_WHY_IDLE_FULL, SATFEED_SAT_WHY_IDLE_NEAR,
	SATFEED_SAT_WHY_CV2_RISE, SATFEED_SAT_WHY_SVC_FULL,
	SATFEED_SAT_WHY_SVC_NEAR, SATFEED_SAT_WHY_DROP_FULL,
	SATFEED_SAT_WHY_DROP_NEAR, SATFEED_SAT_WHY_CPU_FULL,
	SATFEED_SAT_WHY_CPU_NEAR, SATFEED_SAT_WHY_UNREAD_FULL,
	SATFEED_SAT_WHY_UNREAD_NEAR, SATFEED_SAT_WHY_QUIET,
};

__u32 sf_reason_strongest(__u32 why)
{
	if (why & SATFEED_SAT_WHY_WPS_FULL)
		why &= ~SATFEED_SAT_WHY_WPS_NEAR;
	if (why & SATFEED_SAT_WHY_IDLE_FULL)
		why &= ~SATFEED_SAT_WHY_IDLE_NEAR;
	if (why & SATFEED_SAT_WHY_SVC_FULL)
		why &= ~SATFEED_SAT_WHY_SVC_NEAR;
	if (why & SATFEED_SAT_WHY_DROP_FULL)
		why &= ~SATFEED_SAT_WHY_DROP_NEAR;
	if (why & SATFEED_SAT_WHY_CPU_FULL)
		why &= ~SATFEED_SAT_WHY_CPU_NEAR;
	if (why & SATFEED_SAT_WHY_UNREAD_FULL)
		why &= ~SATFEED_SAT_WHY_UNREAD_NEAR;
	return why;
}

const char *sf_reading_state_name(const struct sf_reading *r)
{
	return r->gone ? "gone" : sf_sat_state_name(r->v.state);
}

/* A figure taken from a stream's figures (sf_reading.h). */
static void from_stream(struct sf_fig_value *o, const struct sf_figures *f,
			__u64 value)
{
	o->source = f->source;
	o->value = f->source == SF_FIG_NONE ? 0 : value;
	o->age_ns = f->source == SF_FIG_NONE ? 0 : f->age_ns;
}

/*
 * Waits per send: the verdict's smoothed figure, updated when a send
 * window closes: as recent as the newest send window, stale when that is
 * (or the engine stopped).
 */
static void wps_figure(struct sf_reading *r)
{
	const struct sf_reading_stream *send = &r->s[SATFEED_STREAM_SEND];
	struct sf_fig_value *o = &r->fig[SF_FIG_WPS];

	if (r->gone || !(r->v.seen & SATFEED_SAT_SEEN_WPS) ||
	    !send->published)
		return;
	o->value = r->v.wps_avg_permille;
	o->age_ns = r->now > send->newest.end_ns ?
			    r->now - send->newest.end_ns : 0;
	o->source = send->f.source == SF_FIG_CLOSED ? SF_FIG_CLOSED :
						      SF_FIG_STALE;
}

/*
 * A figure of the verdict's that each tick writes for its interval: as old
 * as that tick, stale when the engine stopped.
 */
static void from_tick(struct sf_fig_value *o, const struct sf_reading *r,
		      __u32 value, bool stopped)
{
	o->value = value;
	o->age_ns = r->now > r->v.tick_ns ? r->now - r->v.tick_ns : 0;
	o->source = stopped ? SF_FIG_STALE : SF_FIG_CLOSED;
}

/*
 * The idle share: the one the rules judge (ABI 5: the verdict's, written at
 * each tick of the engine's timer for the threads that woke in the tick's
 * interval), as old as that tick, stale when the engine stopped; before a
 * tick measured it, the poll stream's.
 */
static void idle_figure(struct sf_reading *r, bool stopped)
{
	const struct sf_figures *f = &r->s[SATFEED_STREAM_POLL].f;
	struct sf_fig_value *o = &r->fig[SF_FIG_IDLE];

	if (r->gone || !(r->v.seen & SATFEED_SAT_SEEN_IDLE) ||
	    !r->v.tick_ns) {
		from_stream(o, f, f->idle_permille);
		return;
	}
	from_tick(o, r, r->v.idle_permille, stopped);
}

/*
 * The drop share (ABI 7): the verdict's, written at each tick for the
 * tick's interval, as old as that tick, stale when the engine stopped;
 * none before the first tick.
 */
static void drop_figure(struct sf_reading *r, bool stopped)
{
	if (!r->gone && r->v.tick_ns)
		from_tick(&r->fig[SF_FIG_DROPS], r, r->v.drop_permille,
			  stopped);
}

/*
 * The CPU share (ABI 8): the verdict's, as the drop share; none until a
 * tick saw a thread at both ends of its interval.
 */
static void cpu_figure(struct sf_reading *r, bool stopped)
{
	if (!r->gone && r->v.tick_ns && (r->v.seen & SATFEED_SAT_SEEN_CPU))
		from_tick(&r->fig[SF_FIG_CPU], r, r->v.cpu_permille, stopped);
}

/*
 * The receive queue (ABI 10): the verdict's, as the drop share; none until
 * a receive on an accepted TCP connection left bytes unread (a server that
 * reads its connections empty has said nothing by it).
 */
static void unread_figure(struct sf_reading *r, bool stopped)
{
	if (!r->gone && r->v.tick_ns && (r->v.seen & SATFEED_SAT_SEEN_UNREAD))
		from_tick(&r->fig[SF_FIG_UNREAD], r, r->v.unread_max, stopped);
}

/*
 * ABI 4: the engine's timer evaluates every target each max_age_ns / 2
 * (verdict.tick_ns) and closes every window at most max_age_ns after its
 * events: a verdict last touched more than 2 * max_age_ns ago means the
 * engine itself stopped (unloaded, replaced), not that the target is idle
 * (that is the reason quiet).  The newest of tick_ns and updated_ns: a
 * window can be judged before the first tick.
 */
static bool engine_stopped(const struct satfeed_verdict *v, __u64 max_age_ns,
			   __u64 now)
{
	__u64 last = v->tick_ns > v->updated_ns ? v->tick_ns : v->updated_ns;

	return last && now > last && now - last > satfeed_stale_ns(max_age_ns);
}

bool sf_svc_p99_ns(const struct satfeed_svc_hist *h, __u64 *p99_ns,
		   __u64 *count)
{
	u128 total = 0, rank, cum = 0;
	__u32 b;

	for (b = 0; b < SATFEED_SVC_BUCKETS; b++)
		total += h->count[b];
	if (count)
		*count = total > ~0ULL ? ~0ULL : (__u64)total;
	*p99_ns = 0;
	if (!total)
		return false;
	/* ceil(99 * total / 100): the rank of the 99th percentile sample */
	rank = (total * 99 + 99) / 100;
	for (b = 0; b < SATFEED_SVC_BUCKETS - 1; b++) {
		cum += h->count[b];
		if (cum >= rank)
			break;
	}
	*p99_ns = satfeed_svc_bucket_lo(b);
	return true;
}

/* Stream st (stream id s) into o, as of now. */
static void read_stream(struct sf_reading_stream *o,
			const struct satfeed_stream *st, __u32 s, __u32 n,
			__u64 now, bool stopped)
{
	const struct satfeed_window *w = satfeed_newest_window(st);

	o->published = st->published;
	o->pending = st->pending;
	o->calls = st->calls;
	o->errors = st->errors;
	o->eagain = st->eagain;
	o->zero_bytes = st->zero_bytes;
	o->not_socket = st->not_socket;
	o->last_ns = st->last_ns;
	/* a quiet window ends the chain (last_ns 0) and starts at the last
	 * event */
	if (!o->last_ns && w && (w->flags & SATFEED_WIN_QUIET))
		o->last_ns = w->start_ns;
	if (w)
		o->newest = *w;
	sf_stream_figures(st, s, n, now, &o->f);
	/* no closed figure is current from a stopped engine */
	if (stopped && o->f.source == SF_FIG_CLOSED)
		o->f.source = SF_FIG_STALE;
}

/*
 * The service-time figures: the svc stream's mean with its window and
 * age, and the histogram's p99 (since added) with the same window and age
 * (none while the stream has no figure or the histogram counts none).
 */
static void service_figures(struct sf_reading *r,
			    const struct satfeed_svc_hist *h)
{
	const struct sf_figures *f = &r->svc.f;
	__u64 p99;

	from_stream(&r->fig[SF_FIG_SVC_MEAN], f, f->mean_ns);
	if (sf_svc_p99_ns(h, &p99, &r->svc_count) && f->source != SF_FIG_NONE)
		from_stream(&r->fig[SF_FIG_SVC_P99], f, p99);
}

void sf_reading_build(struct sf_reading *r, const struct sf_target_view *tv,
		      __u32 n, __u64 max_age_ns, __u64 now)
{
	const struct sf_figures *f;
	bool stopped = engine_stopped(&tv->verdict, max_age_ns, now);

	memset(r, 0, sizeof(*r));
	r->slot = tv->slot;
	r->t = tv->t;
	r->gone = sf_target_gone(&tv->t);
	r->v = tv->verdict;
	memset(&r->v.lock, 0, sizeof(r->v.lock));
	r->now = now;
	for (__u32 s = 0; s < SATFEED_NR_STREAMS; s++)
		read_stream(&r->s[s], &tv->st[s], s, n, now, stopped);
	read_stream(&r->resp, &tv->resp, SATFEED_STREAM_RESP, n, now,
		    stopped);
	read_stream(&r->svc, &tv->svc, SATFEED_STREAM_SVC, n, now, stopped);
	if (!r->gone && r->v.state != SATFEED_SAT_UNKNOWN) {
		r->verdict_stale = stopped;
		r->verdict_age_ns = now > r->v.updated_ns ?
					    now - r->v.updated_ns : 0;
	}
	idle_figure(r, stopped);
	drop_figure(r, stopped);
	unread_figure(r, stopped);
	cpu_figure(r, stopped);
	f = &r->s[SATFEED_STREAM_SEND].f;
	from_stream(&r->fig[SF_FIG_SEND_RATE], f, f->rate_milli);
	from_stream(&r->fig[SF_FIG_SEND_CV2], f, f->cv2_permille);
	f = &r->s[SATFEED_STREAM_RECV].f;
	from_stream(&r->fig[SF_FIG_RECV_RATE], f, f->rate_milli);
	from_stream(&r->fig[SF_FIG_RECV_CV2], f, f->cv2_permille);
	wps_figure(r);
	f = &r->resp.f;
	from_stream(&r->fig[SF_FIG_RESP_RATE], f, f->rate_milli);
	service_figures(r, &tv->hist);
}
