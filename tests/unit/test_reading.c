// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_reading.c - the figures a reader shows and the one reading built
 * from them (tools/lib/sf_reading.c), exactly:
 *
 *  - a partial window's mean, variance, dispersion and rate, from the
 *    running sums, against references computed from the samples
 *    themselves (the centred sum sum((p*x - S1)^2) / p^3, and each floor
 *    checked by its defining inequality q*d <= n < (q+1)*d), for small and
 *    largest windows, samples at the cap, and sums of squares above 2^64;
 *  - its wait and idle shares against the span and the run-queue time,
 *    its age and the estimate of when it closes;
 *  - when a closed window turns stale: at exactly max(3 spans, 2 s) after
 *    it closed it is still recent, 1 ns later it is not; then the window
 *    in progress (partial) when there is one, else the old one (stale);
 *  - the reading: the verdict is stale iff no stream has a recent closed
 *    window, waits per send is as recent as the newest send window, a
 *    gone target has no verdict;
 *  - the response rate and the mean service time from their streams
 *    (closed, partial, stale, with their age), and the service time p99
 *    from the histogram: the rank ceil(0.99 * count) in exact integers
 *    (count 0, 1, 100, 101, a total past 2^64, all in the last bucket),
 *    against bucket bounds computed by hand.
 */
#include <stdlib.h>
#include <string.h>
#include "sf_reading.h"
#include "sf_test.h"

typedef unsigned __int128 u128;

#define MAX_P (1U << SATFEED_WINDOW_SHIFT_MAX)
#define SEC 1000000000ULL

static __u64 xs[MAX_P];

static __u64 rnd(void)
{
	return (__u64)random() << 33 ^ (__u64)random() << 2 ^ random();
}

/* q == floor(n / d): q * d <= n < (q + 1) * d */
static int is_floor(u128 q, u128 n, u128 d)
{
	return q * d <= n && n < (q + 1) * d;
}

/*
 * A stream whose window in progress holds p samples xs[0..p), the first
 * event at t0, one event per sample (a gap, or a wait that ended), each
 * wait's run-queue share runq_per (poll).
 */
static void partial_stream(struct satfeed_stream *st, __u32 p, __u64 t0,
			   __u64 runq_per)
{
	u128 s2 = 0;
	__u64 s1 = 0;

	memset(st, 0, sizeof(*st));
	for (__u32 i = 0; i < p; i++) {
		s1 += xs[i];
		s2 += (u128)xs[i] * xs[i];
	}
	st->pending = p;
	st->acc_start_ns = t0;
	st->acc_sum_ns = s1;
	st->acc_sumsq_lo = (__u64)s2;
	st->acc_sumsq_hi = (__u64)(s2 >> 64);
	st->acc_runq_ns = runq_per * p;
	st->last_ns = t0 + s1;
	st->calls = p;
}

static void check_partial(const char *what, __u32 p, __u32 n, __u32 stream)
{
	struct satfeed_stream *st = calloc(1, sizeof(*st));
	__u64 s1 = 0, t0 = 1000 * SEC, now, runq;
	u128 centred = 0;
	struct sf_figures f;
	char w[160];

	for (__u32 i = 0; i < p; i++)
		s1 += xs[i];
	for (__u32 i = 0; i < p; i++) {
		u128 d = (u128)p * xs[i] > s1 ? (u128)p * xs[i] - s1 :
						 s1 - (u128)p * xs[i];
		centred += d * d;
	}
	runq = xs[0] / 3;
	partial_stream(st, p, t0, stream == SATFEED_STREAM_POLL ? runq : 0);
	now = st->last_ns + 12345;
	sf_stream_figures(st, stream, n, now, &f);

	snprintf(w, sizeof(w), "%s: source", what);
	ASSERT_EQ(f.source, SF_FIG_PARTIAL, w);
	snprintf(w, sizeof(w), "%s: samples", what);
	ASSERT_EQ(f.samples, p, w);
	snprintf(w, sizeof(w), "%s: mean is floor(S1 / p)", what);
	ASSERT_TRUE(is_floor(f.mean_ns, s1, p), "%s (%llu)", w,
		    (unsigned long long)f.mean_ns);
	/* var = centred / p^3 */
	snprintf(w, sizeof(w), "%s: variance is the centred sum / p^3", what);
	ASSERT_TRUE(is_floor(f.var_ns2, centred, (u128)p * p * p), "%s (%llu)",
		    w, (unsigned long long)f.var_ns2);
	/* cv2 = 1000 * centred / (p * S1^2) */
	snprintf(w, sizeof(w), "%s: cv2 is 1000 * centred / (p S1^2)", what);
	if (s1 && centred * 1000 / ((u128)p * s1 * s1) < 0xffffffffULL)
		ASSERT_TRUE(is_floor(f.cv2_permille, centred * 1000,
				     (u128)p * s1 * s1), "%s (%u)", w,
			    f.cv2_permille);
	snprintf(w, sizeof(w), "%s: age since the last event", what);
	ASSERT_EQ(f.age_ns, 12345, w);
	snprintf(w, sizeof(w), "%s: closes in (now - start) (n - p) / p", what);
	if (p < n)
		ASSERT_TRUE(is_floor(f.closes_in_ns,
				     (u128)(now - t0) * (n - p), p),
			    "%s (%llu)", w, (unsigned long long)f.closes_in_ns);
	if (stream != SATFEED_STREAM_POLL) {
		snprintf(w, sizeof(w), "%s: rate is p 10^12 / S1", what);
		ASSERT_TRUE(is_floor(f.rate_milli, (u128)p * 1000000000000ULL,
				     s1), "%s (%llu)", w,
			    (unsigned long long)f.rate_milli);
		snprintf(w, sizeof(w), "%s: no shares off poll", what);
		ASSERT_EQ(f.wait_permille | f.idle_permille, 0, w);
	} else {
		__u64 span = st->last_ns - t0;

		snprintf(w, sizeof(w), "%s: wait share 1000 S1 / span", what);
		ASSERT_TRUE(is_floor(f.wait_permille, (u128)s1 * 1000, span),
			    "%s (%u)", w, f.wait_permille);
		snprintf(w, sizeof(w), "%s: idle share 1000 (S1 - runq) / span",
			 what);
		ASSERT_TRUE(is_floor(f.idle_permille,
				     (u128)(s1 - runq * p) * 1000, span),
			    "%s (%u)", w, f.idle_permille);
		snprintf(w, sizeof(w), "%s: no rate for poll", what);
		ASSERT_EQ(f.rate_milli, 0, w);
	}
	free(st);
}

static void test_partial(void)
{
	static const __u32 sizes[] = { 1, 2, 3, 7, 1000, 2047, 65535 };

	srandom(23);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		__u32 p = sizes[k], n = p < 2048 ? 2048 : MAX_P;
		char what[64];

		/* random gaps up to the cap */
		for (__u32 i = 0; i < p; i++)
			xs[i] = rnd() % (SATFEED_SAMPLE_CAP_NS + 1);
		snprintf(what, sizeof(what), "random p=%u send", p);
		check_partial(what, p, n, SATFEED_STREAM_SEND);
		snprintf(what, sizeof(what), "random p=%u poll", p);
		check_partial(what, p, n, SATFEED_STREAM_POLL);
		/* every sample at the cap: S2 above 2^64, variance 0 */
		for (__u32 i = 0; i < p; i++)
			xs[i] = SATFEED_SAMPLE_CAP_NS;
		snprintf(what, sizeof(what), "at the cap p=%u", p);
		check_partial(what, p, n, SATFEED_STREAM_RECV);
		/* microsecond gaps with one outlier: a large dispersion */
		for (__u32 i = 0; i < p; i++)
			xs[i] = 1000 + rnd() % 50;
		xs[p / 2] = 4000000000ULL;
		snprintf(what, sizeof(what), "one outlier p=%u", p);
		check_partial(what, p, n, SATFEED_STREAM_SEND);
	}
}

/* A stream with one closed window [end - span, end] and p pending. */
static void closed_stream(struct satfeed_stream *st, __u64 end, __u64 span,
			  __u32 p)
{
	struct satfeed_window *w = &st->hist[0];

	memset(st, 0, sizeof(*st));
	st->published = 1;
	w->seq = w->seq_end = 1;
	w->start_ns = end - span;
	w->end_ns = end;
	w->samples = 2048;
	w->sum_ns = span;
	w->mean_ns = span / 2048;
	w->rate_milli = 2048ULL * 1000000000000ULL / span;
	w->cv2_permille = 777;
	w->idle_permille = 500;
	st->last_ns = end;
	if (p) {
		struct satfeed_window keep = *w;

		for (__u32 i = 0; i < p; i++)
			xs[i] = 1000 + i;
		partial_stream(st, p, end + 10, 0);
		st->published = 1;
		st->hist[0] = keep;
	}
}

static void check_stale(__u64 span, __u64 limit)
{
	struct satfeed_stream *st = calloc(1, sizeof(*st));
	__u64 end = 5000 * SEC;
	struct sf_figures f;
	char w[96];

	closed_stream(st, end, span, 0);
	sf_stream_figures(st, SATFEED_STREAM_SEND, 2048, end + limit, &f);
	snprintf(w, sizeof(w), "span %llu: recent at exactly the limit",
		 (unsigned long long)span);
	ASSERT_EQ(f.source, SF_FIG_CLOSED, w);
	ASSERT_EQ(f.age_ns, limit, "closed: age since it closed");
	ASSERT_EQ(f.rate_milli, st->hist[0].rate_milli,
		  "closed: the engine's own rate");
	sf_stream_figures(st, SATFEED_STREAM_SEND, 2048, end + limit + 1, &f);
	snprintf(w, sizeof(w), "span %llu: stale 1 ns after the limit",
		 (unsigned long long)span);
	ASSERT_EQ(f.source, SF_FIG_STALE, w);
	ASSERT_EQ(f.age_ns, limit + 1, "stale: age since it closed");
	ASSERT_EQ(f.cv2_permille, 777, "stale: the old window's figures");
	/* something counted since: the window in progress instead */
	closed_stream(st, end, span, 5);
	sf_stream_figures(st, SATFEED_STREAM_SEND, 2048, end + limit + 1, &f);
	snprintf(w, sizeof(w), "span %llu: partial once stale with pending",
		 (unsigned long long)span);
	ASSERT_EQ(f.source, SF_FIG_PARTIAL, w);
	ASSERT_EQ(f.samples, 5, "partial: its pending samples");
	ASSERT_EQ(f.newest_seq, 1, "partial: the newest closed window named");
	sf_stream_figures(st, SATFEED_STREAM_SEND, 2048, end + limit, &f);
	ASSERT_EQ(f.source, SF_FIG_CLOSED, "pending, but the closed one recent");
	/* a clock read before the window closed: age 0, recent */
	sf_stream_figures(st, SATFEED_STREAM_SEND, 2048, end - 5, &f);
	ASSERT_EQ(f.source, SF_FIG_CLOSED, "now before the end: recent");
	ASSERT_EQ(f.age_ns, 0, "now before the end: age 0");
	free(st);
}

static void test_stale(void)
{
	struct satfeed_stream *st = calloc(1, sizeof(*st));
	struct sf_figures f;

	/* short windows: 2 s at least; long ones: 3 of their spans */
	check_stale(1000, SF_STALE_MIN_NS);
	check_stale(SF_STALE_MIN_NS / SF_STALE_SPANS, SF_STALE_MIN_NS);
	check_stale(SF_STALE_MIN_NS / SF_STALE_SPANS + 1,
		    SF_STALE_SPANS * (SF_STALE_MIN_NS / SF_STALE_SPANS + 1));
	check_stale(10 * SEC, 30 * SEC);
	sf_stream_figures(st, SATFEED_STREAM_POLL, 2048, 7 * SEC, &f);
	ASSERT_EQ(f.source, SF_FIG_NONE, "nothing counted: none");
	ASSERT_EQ(f.age_ns | f.samples | f.closes_in_ns, 0, "none: all 0");
	free(st);
}

/* ---- the reading ---- */

static void test_reading(void)
{
	struct sf_target_view *tv = calloc(1, sizeof(*tv));
	struct sf_reading *r = calloc(1, sizeof(*r));
	__u64 end = 9000 * SEC, now;

	tv->slot = 3;
	/* a cgroup: gone only when marked (a pid would be looked up) */
	tv->t.kind = SATFEED_TARGET_CGROUP;
	tv->t.id = 4242;
	tv->t.gen = 7;
	/* send closed at end, poll 1 s before it; a verdict of full */
	closed_stream(&tv->st[SATFEED_STREAM_SEND], end, 1000000, 0);
	closed_stream(&tv->st[SATFEED_STREAM_POLL], end - SEC, 1000000, 0);
	tv->verdict.gen = 7;
	tv->verdict.state = SATFEED_SAT_FULL;
	tv->verdict.why = SATFEED_SAT_WHY_WPS_FULL | SATFEED_SAT_WHY_WPS_NEAR;
	tv->verdict.seen = SATFEED_SAT_SEEN_SEND | SATFEED_SAT_SEEN_POLL |
			   SATFEED_SAT_SEEN_WPS | SATFEED_SAT_SEEN_WAITS;
	tv->verdict.wps_avg_permille = 12;
	tv->verdict.updated_ns = end;

	now = end + SF_STALE_MIN_NS - SEC;
	sf_reading_build(r, tv, 2048, SEC, now);
	ASSERT_EQ(r->slot, 3, "reading: slot");
	ASSERT_EQ(r->t.gen, 7, "reading: gen");
	ASSERT_TRUE(!strcmp(sf_reading_state_name(r), "full"),
		    "reading: state %s", sf_reading_state_name(r));
	ASSERT_EQ(r->verdict_stale, 0, "send recent: verdict not stale");
	ASSERT_EQ(r->verdict_age_ns, now - end, "verdict age");
	ASSERT_EQ(r->fig[SF_FIG_WPS].source, SF_FIG_CLOSED, "wps: recent");
	ASSERT_EQ(r->fig[SF_FIG_WPS].value, 12, "wps: the verdict's wps_avg");
	ASSERT_EQ(r->fig[SF_FIG_WPS].age_ns, now - end, "wps: send's age");
	ASSERT_EQ(r->fig[SF_FIG_IDLE].value, 500, "idle: poll's closed one");
	ASSERT_EQ(r->fig[SF_FIG_IDLE].age_ns, now - end + SEC, "idle: age");
	ASSERT_EQ(r->fig[SF_FIG_SEND_CV2].value, 777, "send cv2");
	ASSERT_EQ(r->fig[SF_FIG_RECV_RATE].source, SF_FIG_NONE,
		  "recv: nothing counted");
	ASSERT_EQ(sf_reason_strongest(tv->verdict.why),
		  SATFEED_SAT_WHY_WPS_FULL, "reasons: full only");

	/* ABI 4: stale is the engine stopping: not evaluated for 2 T (T =
	 * max_age_ns = SEC here); poll's own window is stale, send's not */
	now = end + SF_STALE_MIN_NS;
	sf_reading_build(r, tv, 2048, SEC, now);
	ASSERT_EQ(r->fig[SF_FIG_IDLE].source, SF_FIG_STALE, "idle: stale");
	ASSERT_EQ(r->verdict_stale, 0, "one stream recent: not stale");
	/* 1 ns past 2 T since updated_ns (no tick yet): the engine stopped */
	sf_reading_build(r, tv, 2048, SEC, now + 1);
	ASSERT_EQ(r->verdict_stale, 1, "2 T without evaluation: stale");
	/* a tick since: the engine runs, the verdict is current */
	tv->verdict.tick_ns = now;
	sf_reading_build(r, tv, 2048, SEC, now + 1);
	ASSERT_EQ(r->verdict_stale, 0, "ticked: not stale");
	sf_reading_build(r, tv, 2048, SEC, now + 2 * SEC);
	ASSERT_EQ(r->verdict_stale, 0, "ticked 2 T ago: not stale");
	sf_reading_build(r, tv, 2048, SEC, now + 2 * SEC + 1);
	ASSERT_EQ(r->verdict_stale, 1, "ticked 2 T + 1 ns ago: stale");
	ASSERT_EQ(r->fig[SF_FIG_SEND_RATE].source, SF_FIG_STALE,
		  "engine stopped: no closed figure");
	tv->verdict.tick_ns = 0;
	sf_reading_build(r, tv, 2048, SEC, now + 1);
	ASSERT_EQ(r->fig[SF_FIG_WPS].source, SF_FIG_STALE, "wps: stale");
	/* the send window in progress shows, the wps stays the old one's */
	closed_stream(&tv->st[SATFEED_STREAM_SEND], end, 1000000, 9);
	sf_reading_build(r, tv, 2048, SEC, now + 1);
	ASSERT_EQ(r->fig[SF_FIG_SEND_RATE].source, SF_FIG_PARTIAL,
		  "send rate: partial");
	ASSERT_EQ(r->fig[SF_FIG_WPS].source, SF_FIG_STALE,
		  "wps with a partial send: stale");
	ASSERT_EQ(r->verdict_stale, 1, "partial only: verdict stale");

	/* not judged yet: neither stale nor aged; no wps */
	tv->verdict.state = SATFEED_SAT_UNKNOWN;
	tv->verdict.seen = 0;
	sf_reading_build(r, tv, 2048, SEC, now + 1);
	ASSERT_EQ(r->verdict_stale | r->verdict_age_ns, 0, "unknown: no age");
	ASSERT_EQ(r->fig[SF_FIG_WPS].source, SF_FIG_NONE, "unknown: no wps");

	/* quiet (ABI 4): an empty window from the last event to the tick,
	 * the stream's last_ns zeroed; ok with reason quiet, not stale */
	{
		struct satfeed_stream *st = &tv->st[SATFEED_STREAM_SEND];
		struct satfeed_window *q;

		closed_stream(st, end, 1000000, 0);
		st->published = 2;
		q = &st->hist[1];
		memset(q, 0, sizeof(*q));
		q->seq = q->seq_end = 2;
		q->start_ns = end;
		q->end_ns = end + SEC;
		q->flags = SATFEED_WIN_QUIET;
		st->last_ns = 0;
		tv->verdict.state = SATFEED_SAT_OK;
		tv->verdict.why = SATFEED_SAT_WHY_QUIET;
		tv->verdict.quiet_ns = end + SEC;
		tv->verdict.updated_ns = end + SEC;
		tv->verdict.tick_ns = end + 10 * SEC;
		sf_reading_build(r, tv, 2048, SEC, end + 10 * SEC + 1);
		ASSERT_EQ(r->verdict_stale, 0, "quiet: not stale");
		ASSERT_EQ(r->s[SATFEED_STREAM_SEND].last_ns, end,
			  "quiet: last event is the quiet window's start");
		ASSERT_EQ(r->fig[SF_FIG_SEND_RATE].source, SF_FIG_CLOSED,
			  "quiet window: current however old");
		ASSERT_EQ(r->fig[SF_FIG_SEND_RATE].value, 0,
			  "quiet window: rate 0");
		ASSERT_EQ(sf_reason_strongest(tv->verdict.why) &
			  sf_reason_bits[SF_NR_REASONS - 1],
			  SATFEED_SAT_WHY_QUIET, "quiet: a reason");
		ASSERT_TRUE(!strcmp(sf_reason_names[SF_NR_REASONS - 1],
				    "quiet"), "quiet: its name");
		/* the next events: a window in progress, partial */
		st->pending = 5;
		sf_reading_build(r, tv, 2048, SEC, end + 10 * SEC + 1);
		ASSERT_EQ(r->fig[SF_FIG_SEND_RATE].source, SF_FIG_PARTIAL,
			  "after quiet, events again: partial");
		st->pending = 0;
		tv->verdict.tick_ns = 0;
	}

	/* gone: state gone, no verdict figures */
	tv->verdict.state = SATFEED_SAT_FULL;
	tv->verdict.seen = SATFEED_SAT_SEEN_WPS;
	tv->t.state = SATFEED_STATE_GONE;
	sf_reading_build(r, tv, 2048, SEC, end);
	ASSERT_TRUE(!strcmp(sf_reading_state_name(r), "gone"),
		    "gone: state %s", sf_reading_state_name(r));
	ASSERT_EQ(r->verdict_stale | r->verdict_age_ns, 0, "gone: no age");
	ASSERT_EQ(r->fig[SF_FIG_WPS].source, SF_FIG_NONE, "gone: no wps");
	free(r);
	free(tv);
}

/* ---- responses and service time ---- */

/* h with count c[i] in bucket b[i], i < k */
static void hist_set(struct satfeed_svc_hist *h, int k, const __u32 *b,
		     const __u64 *c)
{
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < k; i++)
		h->count[b[i]] += c[i];
}

static void check_p99(const char *what, int k, const __u32 *b,
		      const __u64 *c, bool want_ok, __u64 want_ns,
		      __u64 want_count)
{
	struct satfeed_svc_hist h;
	__u64 p99 = 12345, count = 12345;
	bool ok;

	hist_set(&h, k, b, c);
	ok = sf_svc_p99_ns(&h, &p99, &count);
	ASSERT_EQ(ok, want_ok, what);
	ASSERT_TRUE(p99 == want_ns, "%s: p99 %llu ns, want %llu", what,
		    (unsigned long long)p99, (unsigned long long)want_ns);
	ASSERT_TRUE(count == want_count, "%s: count %llu, want %llu", what,
		    (unsigned long long)count, (unsigned long long)want_count);
}

static void test_p99(void)
{
	/* by hand: bucket 10 holds 12..13 ns (e = 3, bits 10), its lower
	 * bound (4 + 2) << 1 = 12; bucket 50 holds 12288..14335 ns (e = 13,
	 * bits 10), (4 + 2) << 11 = 12288; bucket 37: (4 + 1) << 8 = 1280;
	 * bucket 127, the last: (4 + 3) << 30 = 7516192768 and up */
	const __u32 b10_50[] = { 10, 50 }, b37[] = { 37 }, b127[] = { 127 };
	const __u32 b3[] = { 3 }, b01[] = { 0, 1 };

	ASSERT_EQ(satfeed_svc_bucket(12), 10, "bucket of 12 ns");
	ASSERT_EQ(satfeed_svc_bucket(13), 10, "bucket of 13 ns");
	ASSERT_EQ(satfeed_svc_bucket(14), 11, "bucket of 14 ns");
	ASSERT_EQ(satfeed_svc_bucket(12288), 50, "bucket of 12288 ns");
	ASSERT_EQ(satfeed_svc_bucket(14335), 50, "bucket of 14335 ns");
	ASSERT_EQ(satfeed_svc_bucket(1300), 37, "bucket of 1300 ns");
	ASSERT_EQ(satfeed_svc_bucket(~0ULL), 127, "bucket of 2^64 - 1 ns");
	check_p99("count 0: none", 0, NULL, NULL, false, 0, 0);
	check_p99("count 1: its bucket", 1, b37, (const __u64[]){ 1 }, true,
		  1280, 1);
	check_p99("count 1 in bucket 3: 3 ns", 1, b3, (const __u64[]){ 1 },
		  true, 3, 1);
	/* 100: rank 99 */
	check_p99("100 = 99 + 1: rank 99 in the first", 2, b10_50,
		  (const __u64[]){ 99, 1 }, true, 12, 100);
	check_p99("100 = 98 + 2: rank 99 in the second", 2, b10_50,
		  (const __u64[]){ 98, 2 }, true, 12288, 100);
	/* 101: rank ceil(99.99) = 100 (a floor would say 99) */
	check_p99("101 = 100 + 1: rank 100 in the first", 2, b10_50,
		  (const __u64[]){ 100, 1 }, true, 12, 101);
	check_p99("101 = 99 + 2: rank 100 in the second", 2, b10_50,
		  (const __u64[]){ 99, 2 }, true, 12288, 101);
	check_p99("all in the last bucket", 1, b127, (const __u64[]){ 5 },
		  true, 7516192768ULL, 5);
	/* 2^63 + 2^63: the total (2^64) and 99 * total in 128 bits; rank
	 * ceil(0.99 * 2^64) lies in the second; the count reads capped */
	check_p99("a total of 2^64: exact rank", 2, b01,
		  (const __u64[]){ 1ULL << 63, 1ULL << 63 }, true, 1, ~0ULL);
}

/* A stream of id `stream` with one closed window (and p pending). */
static void resp_view(struct sf_target_view *tv, __u64 end, __u32 p)
{
	closed_stream(&tv->resp, end, 2000000, p);
	closed_stream(&tv->svc, end, 2000000, p);
	/* a service-time window: mean 40 us */
	tv->svc.hist[0].mean_ns = 40000;
	tv->svc.hist[0].rate_milli = 1;	/* means nothing for svc */
}

static void test_service(void)
{
	struct sf_target_view *tv = calloc(1, sizeof(*tv));
	struct sf_reading *r = calloc(1, sizeof(*r));
	const struct sf_fig_value *rr, *sm, *sp;
	__u64 end = 7000 * SEC, now = end + SEC;

	tv->t.kind = SATFEED_TARGET_CGROUP;
	tv->t.id = 77;
	tv->t.gen = 2;
	rr = &r->fig[SF_FIG_RESP_RATE];
	sm = &r->fig[SF_FIG_SVC_MEAN];
	sp = &r->fig[SF_FIG_SVC_P99];

	/* nothing counted: no figure */
	sf_reading_build(r, tv, 2048, SEC, now);
	ASSERT_EQ(rr->source | sm->source | sp->source, SF_FIG_NONE,
		  "no responses: no response or service figure");
	/* a histogram but no service-time window: no p99 either */
	tv->hist.count[37] = 1;
	sf_reading_build(r, tv, 2048, SEC, now);
	ASSERT_EQ(sp->source, SF_FIG_NONE, "p99 without a svc window: none");
	ASSERT_EQ(r->svc_count, 1, "svc_count: the histogram's");

	/* closed windows: 2048 responses over 2 ms, mean service 40 us; the
	 * histogram: 99 at 12..13 ns, 2 at 12288.. ns: rank 100 of 101 */
	resp_view(tv, end, 0);
	memset(&tv->hist, 0, sizeof(tv->hist));
	tv->hist.count[10] = 99;
	tv->hist.count[50] = 2;
	sf_reading_build(r, tv, 2048, SEC, now);
	ASSERT_EQ(rr->source, SF_FIG_CLOSED, "resp_rate: closed");
	ASSERT_EQ(rr->value, 1024000000ULL,
		  "resp_rate: 2048 * 10^12 / 2 ms = 1024000/s, milli");
	ASSERT_EQ(rr->age_ns, SEC, "resp_rate: age since it closed");
	ASSERT_EQ(sm->source, SF_FIG_CLOSED, "service_mean: closed");
	ASSERT_EQ(sm->value, 40000, "service_mean: the window's mean, ns");
	ASSERT_EQ(sm->age_ns, SEC, "service_mean: age");
	ASSERT_EQ(sp->source, SF_FIG_CLOSED, "service_p99: the svc window's");
	ASSERT_EQ(sp->value, 12288, "service_p99: bucket 50's lower bound");
	ASSERT_EQ(sp->age_ns, SEC, "service_p99: the svc window's age");
	ASSERT_EQ(r->svc_count, 101, "svc_count: 101");
	ASSERT_EQ(r->resp.published, 1, "resp stream: one window");
	ASSERT_EQ(r->svc.newest.mean_ns, 40000, "svc stream: newest window");
	ASSERT_TRUE(sf_reading_stream(r, SATFEED_STREAM_RESP) == &r->resp &&
		    sf_reading_stream(r, SATFEED_STREAM_SVC) == &r->svc &&
		    sf_reading_stream(r, SATFEED_STREAM_POLL) ==
			    &r->s[SATFEED_STREAM_POLL],
		    "sf_reading_stream: the reading's streams");
	ASSERT_TRUE(sf_view_stream(tv, SATFEED_STREAM_SVC) == &tv->svc,
		    "sf_view_stream: the view's svc");

	/* stale: no tick and no update for 2 T: the engine stopped */
	tv->verdict.gen = 2;
	tv->verdict.state = SATFEED_SAT_OK;
	tv->verdict.updated_ns = end;
	sf_reading_build(r, tv, 2048, SEC, end + 2 * SEC + 1);
	ASSERT_EQ(rr->source, SF_FIG_STALE, "engine stopped: resp_rate stale");
	ASSERT_EQ(sm->source, SF_FIG_STALE, "engine stopped: mean stale");
	ASSERT_EQ(sp->source, SF_FIG_STALE, "engine stopped: p99 stale");
	ASSERT_EQ(sp->value, 12288, "stale p99: the same bucket");
	/* its own staleness: max(3 spans, 2 s) after it closed */
	memset(&tv->verdict, 0, sizeof(tv->verdict));
	sf_reading_build(r, tv, 2048, SEC, end + SF_STALE_MIN_NS + 1);
	ASSERT_EQ(sm->source, SF_FIG_STALE, "old svc window: stale");
	ASSERT_EQ(sm->age_ns, SF_STALE_MIN_NS + 1, "stale: its age");

	/* partial: 5 pending, xs[i] = 1000 + i, their last at end + 10 +
	 * 5010: mean floor(5010 / 5) = 1002 ns; rate 5 * 10^12 / 5010 */
	resp_view(tv, end, 5);
	sf_reading_build(r, tv, 2048, SEC, end + SF_STALE_MIN_NS + 1);
	ASSERT_EQ(rr->source, SF_FIG_PARTIAL, "resp_rate: partial");
	ASSERT_EQ(rr->value, 5000000000000ULL / 5010,
		  "resp_rate: partial p 10^12 / S1");
	ASSERT_EQ(sm->source, SF_FIG_PARTIAL, "service_mean: partial");
	ASSERT_EQ(sm->value, 1002, "service_mean: floor(S1 / p)");
	ASSERT_EQ(sm->age_ns, SF_STALE_MIN_NS + 1 - 10 - 5010,
		  "service_mean: age since the last sample");
	ASSERT_EQ(sp->source, SF_FIG_PARTIAL, "service_p99: partial");
	ASSERT_EQ(sp->age_ns, sm->age_ns, "service_p99: the same age");

	/* a quiet service-time window: mean 0, current */
	{
		struct satfeed_window *q = &tv->svc.hist[1];

		resp_view(tv, end, 0);
		tv->svc.published = 2;
		memset(q, 0, sizeof(*q));
		q->seq = q->seq_end = 2;
		q->start_ns = end;
		q->end_ns = end + SEC;
		q->flags = SATFEED_WIN_QUIET;
		tv->svc.last_ns = 0;
		sf_reading_build(r, tv, 2048, SEC, end + 100 * SEC);
		ASSERT_EQ(sm->source, SF_FIG_CLOSED, "quiet svc: closed");
		ASSERT_EQ(sm->value, 0, "quiet svc: mean 0");
		ASSERT_EQ(sp->value, 12288, "quiet svc: p99 since added");
		ASSERT_EQ(r->svc.last_ns, end, "quiet svc: last event");
	}
	free(r);
	free(tv);
}

int main(void)
{
	test_partial();
	test_stale();
	test_reading();
	test_p99();
	test_service();
	return sf_test_summary("test_reading");
}
