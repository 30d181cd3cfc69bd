// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_window_math.c - the engine's window code (bpf/window_math.h, the very
 * file the BPF object includes) against two independent references in
 * unsigned __int128: the raw-moment formula (N*S2 - S1^2) / N^2 and the
 * centred sum sum((N*x - S1)^2) / N^3, on random and adversarial inputs, for
 * small, default and largest windows.  The normalized figures too: cv2
 * against floor(1000 * (N*S2 - S1^2) / S1^2) in __int128 (and against the
 * centred sum), the wait and idle shares against the span and the clamped
 * run-queue times, as waits that follow each other, overlap (several
 * threads) or all end at once (span 0); and the 128-by-128 division alone.
 */
#include <stdlib.h>
#include <string.h>
#include "window_math.h"
#include "sf_ref.h"
#include "sf_test.h"

#define MAX_N (1U << SATFEED_WINDOW_SHIFT_MAX)

static __u64 xs[MAX_N];

static __u64 runqs[MAX_N];

struct ref {
	__u64 sum, mean, var, rate_milli, clamped, runq;
	__u32 cv2;
	u128 sumsq;
};

static __u32 sat32(u128 v)
{
	return v > 0xffffffffULL ? 0xffffffffU : (__u32)v;
}

static void reference(const __u64 *x, const __u64 *rq, __u32 n,
		      struct ref *r)
{
	u128 s1 = 0, s2 = 0, centred = 0, var2, cv2b;

	memset(r, 0, sizeof(*r));
	for (__u32 i = 0; i < n; i++) {
		__u64 v = x[i];

		if (v > SATFEED_SAMPLE_CAP_NS) {
			v = SATFEED_SAMPLE_CAP_NS;
			r->clamped++;
		}
		s1 += v;
		s2 += (u128)v * v;
		r->runq += rq[i] < v ? rq[i] : v;
	}
	for (__u32 i = 0; i < n; i++) {
		__u64 v = x[i] > SATFEED_SAMPLE_CAP_NS ? SATFEED_SAMPLE_CAP_NS :
							 x[i];
		__int128 d = (__int128)((u128)n * v) - (__int128)s1;

		centred += (u128)(d * d);
	}
	r->sum = (__u64)s1;
	r->sumsq = s2;
	r->mean = (__u64)(s1 / n);
	r->var = (__u64)(((u128)n * s2 - s1 * s1) / ((u128)n * n));
	var2 = centred / ((u128)n * n * n);
	/* the two references must agree, or the test itself is broken */
	ASSERT_EQ(var2, r->var, "reference formulas agree");
	r->rate_milli = s1 ? (__u64)((u128)n * 1000000000000ULL / s1) : 0;
	r->cv2 = s1 ? sat32(1000 * ((u128)n * s2 - s1 * s1) / (s1 * s1)) : 0;
	/* the same from the centred sum: N*S2 - S1^2 = sum((N*x - S1)^2) / N */
	cv2b = s1 ? sat32(1000 * (centred / n) / (s1 * s1)) : 0;
	ASSERT_EQ(cv2b, r->cv2, "cv2 reference formulas agree");
}

/* How far apart successive events are, relative to their samples. */
enum spacing {
	SEQUENTIAL,	/* each wait begins where the previous ended */
	OVERLAPPED,	/* eight threads' waits at once: share near 8000
			 * unnormalized, so capped at 1000 */
	SAME_END,	/* every wait ends at the same time: span is the
			 * first wait */
	ALL_AT_ONCE,	/* every event at one time with zero samples */
	NR_SPACINGS
};

/*
 * Feed x[0..n) as wait durations through sf_window_add, with run-queue times
 * rq[] and the event times `spacing` makes, as the poll stream (slack) or
 * not; check the window.
 */
static void check_window_as(const char *name, const __u64 *x, const __u64 *rq,
			    __u32 shift, enum spacing spacing, bool slack)
{
	struct satfeed_stream *s = calloc(1, sizeof(*s));
	const struct satfeed_window *w;
	struct satfeed_window out = {};
	__u32 n = 1U << shift;
	struct ref r;
	int closed = 0;
	__u64 now = 1ULL << 62, start = 0;

	reference(x, rq, n, &r);
	/* a window already published first, so hist indexing is exercised */
	s->published = 37;
	/* and a stale in-progress figure, which the first sample replaces */
	s->acc_start_ns = 12345;
	for (__u32 i = 0; i < n; i++) {
		switch (spacing) {
		case SEQUENTIAL:
			now += x[i];
			break;
		case OVERLAPPED:
			now += x[i] / 8;
			break;
		default:
			break;
		}
		if (i == 0)
			start = now - x[0];
		closed += sf_window_add(s, x[i], rq[i], now, shift, slack,
					&out);
		if (i + 1 < n && !ASSERT_EQ(closed, 0, "closed early"))
			goto out;
	}
	if (!ASSERT_EQ(closed, 1, name))
		goto out;
	w = satfeed_window_by_seq(s, 38);
	ASSERT_EQ(w->seq, 38, "seq");
	ASSERT_EQ(w->seq_end, 38, "seq_end");
	ASSERT_EQ(s->published, 38, "published");
	ASSERT_EQ(s->pending, 0, "pending after close");
	ASSERT_EQ(w->samples, n, "samples");
	ASSERT_EQ(w->sum_ns, r.sum, name);
	ASSERT_EQ(w->sumsq_lo, (__u64)r.sumsq, name);
	ASSERT_EQ(w->sumsq_hi, (__u64)(r.sumsq >> 64), name);
	ASSERT_EQ(w->mean_ns, r.mean, name);
	if (!ASSERT_EQ(w->var_ns2, r.var, name))
		fprintf(stderr, "  in %s, shift %u\n", name, shift);
	ASSERT_EQ(w->rate_milli, r.rate_milli, name);
	ASSERT_EQ(w->clamped, r.clamped, name);
	ASSERT_EQ(w->cv2_permille, r.cv2, name);
	ASSERT_EQ(w->start_ns, start, "start_ns");
	ASSERT_EQ(w->end_ns, now, "end_ns");
	ASSERT_EQ(w->runq_ns, r.runq, name);
	ASSERT_EQ(s->acc_runq_ns, 0, "run-queue time reset at close");
	ASSERT_TRUE(w->runq_ns <= w->sum_ns, "%s: runq above sum", name);
	ASSERT_EQ(w->wait_permille, slack ? ref_share(r.sum, start, now) : 0,
		  name);
	ASSERT_EQ(w->idle_permille,
		  slack ? ref_share(r.sum - r.runq, start, now) : 0, name);
	ASSERT_TRUE(!memcmp(&out, w, sizeof(out)), "%s: copy for the push hook differs",
		    name);
	if (sf_tests_failed)
		fprintf(stderr, "  in %s, shift %u, spacing %d, slack %d\n",
			name, shift, spacing, slack);
out:
	free(s);
}

/*
 * The first k samples of x (1 <= k < 2^shift) in a window the age timer
 * closes (sf_window_close with aged): every figure over the k samples.
 */
static void check_aged(const char *name, const __u64 *x, const __u64 *rq,
		       __u32 k, __u32 shift, bool slack)
{
	struct satfeed_stream *s = calloc(1, sizeof(*s));
	struct satfeed_window out = {};
	const struct satfeed_window *w;
	__u64 now = 1ULL << 62, start = now;
	struct ref r;

	reference(x, rq, k, &r);
	for (__u32 i = 0; i < k; i++) {
		now += x[i];
		ASSERT_EQ(sf_window_add(s, x[i], rq[i], now, shift, slack,
					&out), 0, "an aged window closed early");
	}
	sf_window_close(s, now, shift, slack, true, &out);
	w = satfeed_window_by_seq(s, 1);
	ASSERT_EQ(w->samples, k, "aged samples");
	ASSERT_EQ(w->flags, SATFEED_WIN_AGED, "aged flag");
	ASSERT_EQ(w->mean_ns, r.mean, name);
	ASSERT_EQ(w->var_ns2, r.var, name);
	ASSERT_EQ(w->rate_milli, r.rate_milli, name);
	ASSERT_EQ(w->cv2_permille, r.cv2, name);
	ASSERT_EQ(w->wait_permille, slack ? ref_share(r.sum, start, now) : 0,
		  name);
	ASSERT_EQ(s->pending, 0, "pending after an aged close");
	if (sf_tests_failed)
		fprintf(stderr, "  in %s (aged), k %u, shift %u\n", name, k,
			shift);
	free(s);
}

static __u64 rnd64(void);

/* x as waits every way they can be spaced, with run-queue times. */
static void check_window(const char *name, const __u64 *x, __u32 shift)
{
	__u32 n = 1U << shift;

	for (int sp = 0; sp < NR_SPACINGS; sp++) {
		if (sp == ALL_AT_ONCE)
			continue;	/* only for zero samples, below */
		for (__u32 i = 0; i < n; i++)	/* none, some, over */
			runqs[i] = sp == 0 ? 0 : rnd64() % (x[i] / 2 * 3 + 1);
		check_window_as(name, x, runqs, shift, sp, true);
		if (sf_tests_failed)
			return;
	}
	/* as send or recv gaps: no shares */
	check_window_as(name, x, runqs, shift, SEQUENTIAL, false);
	/* closed by age with fewer samples: n - 1 and some */
	if (n > 1) {
		check_aged(name, x, runqs, n - 1, shift, true);
		check_aged(name, x, runqs, 1 + random() % (n - 1), shift,
			   false);
	}
}

static __u64 rnd64(void)
{
	return ((__u64)random() << 42) ^ ((__u64)random() << 21) ^ random();
}

/* One division against __int128, saturated at 2^32 - 1. */
static bool div_ok(u128 x, u128 y)
{
	__u32 q = sf_div128_u32((__u64)(x >> 64), (__u64)x, (__u64)(y >> 64),
				(__u64)y);

	return ASSERT_TRUE(q == sat32(x / y), "div %llx:%016llx / %llx:%016llx: got %u, want %u",
			   (unsigned long long)(x >> 64),
			   (unsigned long long)x,
			   (unsigned long long)(y >> 64),
			   (unsigned long long)y, q, sat32(x / y));
}

/* sf_div128_u32 on its own: every quotient size, and around 2^32. */
static void check_division(void)
{
	const u128 one = 1;

	for (int i = 0; i < 200000; i++) {
		/* y below 2^96 (its precondition), of any size */
		u128 y = ((u128)rnd64() << 64 | rnd64()) >>
			 (32 + random() % 96);
		u128 x, q;

		if (!y)
			y = 1;
		/* x = q * y + r with q of 0 to 34 bits */
		q = rnd64() >> (30 + random() % 34);
		x = q * y + (((u128)rnd64() << 64 | rnd64()) % y);
		if (!div_ok(x, y))
			return;
	}
	for (int i = 0; i < 10000; i++) {
		u128 y = ((((u128)rnd64() << 64) | rnd64()) >> 32) | 1;
		u128 edge = y * 0xffffffffULL;

		if (!div_ok(edge, y) || !div_ok(edge + y - 1, y) ||
		    !div_ok(edge + y, y) || !div_ok(edge - 1, y) ||
		    !div_ok(0, y))
			return;
	}
	div_ok((one << 106) - 1, 1);
	div_ok((one << 96) - 1, (one << 96) - 1);
	div_ok((one << 96) - 2, (one << 96) - 1);
	div_ok(0xffffffffULL, 1);
	div_ok(0x100000000ULL, 1);
}

/* sf_window_figures given sums no sample sequence makes. */
static void check_guards(void)
{
	struct satfeed_window w = {
		.start_ns = 1000, .end_ns = 3000, .sum_ns = 1000,
		.sumsq_lo = 1000000, .runq_ns = 1001,
	};

	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.wait_permille, 500, "wait share of half the span");
	ASSERT_EQ(w.idle_permille, 0, "run-queue time above the sum: no idle");
	w.runq_ns = 1000;
	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.idle_permille, 0, "run-queue time equal to the sum");
	w.runq_ns = 0;
	w.end_ns = 999;
	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.wait_permille, 0, "end before start: no share");
	w.end_ns = 1001;
	w.sum_ns = 1ULL << 48;
	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.wait_permille, 1000, "share saturates at 1000");
	ASSERT_EQ(w.idle_permille, 1000, "idle share saturates at 1000");
	w.threads = 4;
	w.sum_ns = 1000;
	w.end_ns = 2000;
	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.wait_permille, 250, "share normalized to 4 threads");
	w.sum_ns = 0;
	sf_window_figures(&w, 1, true);
	ASSERT_EQ(w.cv2_permille, 0, "cv2 of S1 == 0");
}

/* The service-time buckets: lo(bucket(v)) <= v < lo(bucket(v) + 1). */
static void check_svc_buckets(void)
{
	__u64 v;

	for (int i = 0; i < 200000; i++) {
		__u32 b;

		v = i < 1000 ? (__u64)i : rnd64() >> (random() % 64);
		b = satfeed_svc_bucket(v);
		if (!ASSERT_TRUE(b < SATFEED_SVC_BUCKETS, "bucket %u", b))
			return;
		if (!ASSERT_TRUE(satfeed_svc_bucket_lo(b) <= v &&
				 (b == SATFEED_SVC_BUCKETS - 1 ||
				  v < satfeed_svc_bucket_lo(b + 1)),
				 "v %llu in bucket %u [%llu, %llu)",
				 (unsigned long long)v, b,
				 (unsigned long long)satfeed_svc_bucket_lo(b),
				 (unsigned long long)satfeed_svc_bucket_lo(b + 1)))
			return;
	}
	ASSERT_EQ(satfeed_svc_bucket(~0ULL), SATFEED_SVC_BUCKETS - 1,
		  "the last bucket holds the rest");
}

int main(void)
{
	static const __u32 shifts[] = { 1, 2, 5, 11, 16 };
	const __u64 cap = SATFEED_SAMPLE_CAP_NS;

	srandom(0x5a7feed);
	check_svc_buckets();
	for (size_t si = 0; si < sizeof(shifts) / sizeof(shifts[0]); si++) {
		__u32 shift = shifts[si], n = 1U << shift;

		for (__u32 i = 0; i < n; i++)
			xs[i] = 0;
		check_window("all zeros", xs, shift);
		for (__u32 i = 0; i < n; i++)
			runqs[i] = i;
		check_window_as("all zeros at one time (span 0)", xs, runqs,
				shift, ALL_AT_ONCE, true);
		for (__u32 i = 0; i < n; i++)
			xs[i] = 777;
		check_window("all equal (cv2 0)", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i == 0 ? cap : 1;
		check_window("one huge, the rest tiny", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i == 0 ? 1 : cap;
		check_window("one tiny, the rest huge (S1 near 2^48)", xs,
			     shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i == 0 ? 1 : 0;
		check_window("a single 1 (cv2 = 1000 * (N - 1))",
			     xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = cap;
		check_window("all at the cap", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i & 1 ? cap : 0;
		check_window("alternating 0 and cap", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i & 1 ? cap : 1;
		check_window("alternating 1 and cap", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = 1000;
		xs[n / 2] = cap;
		check_window("one outlier among equal values", xs, shift);
		xs[n / 2] = 0;
		check_window("one zero among equal values", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = i;
		check_window("strictly increasing", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = cap - i;
		check_window("strictly decreasing from the cap", xs, shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = cap - (i & 1);
		check_window("cap and cap-1 (variance 1/4 floors to 0)", xs,
			     shift);
		for (__u32 i = 0; i < n; i++)
			xs[i] = ~0ULL - i;
		check_window("above the cap: clamped", xs, shift);
		for (int round = 0; round < 200; round++) {
			for (__u32 i = 0; i < n; i++) {
				switch (round % 4) {
				case 0: /* anything, including over the cap */
					xs[i] = rnd64() >> (random() % 64);
					break;
				case 1: /* server-like gaps: 1 us .. 1 ms */
					xs[i] = 1000 + rnd64() % 1000000;
					break;
				case 2: /* bimodal */
					xs[i] = random() % 8 ? 5000 + (__u64)(random() % 50) :
							       cap - (__u64)(random() % 7);
					break;
				default: /* near the cap */
					xs[i] = cap - rnd64() % 1024;
				}
			}
			check_window("random", xs, shift);
			if (sf_tests_failed)
				break;
		}
	}
	check_division();
	check_guards();
	/* 64x64 -> 128 multiply on its own, with carries in every limb */
	for (int i = 0; i < 100000; i++) {
		__u64 a = rnd64() | (i & 1 ? 1ULL << 63 : 0), b = rnd64(), lo,
		      hi;
		u128 p = (u128)a * b;

		if (i == 0)
			a = b = ~0ULL, p = (u128)a * b;
		sf_mul_64x64(a, b, &lo, &hi);
		if (!ASSERT_TRUE(lo == (__u64)p && hi == (__u64)(p >> 64),
				 "mul %llx * %llx", (unsigned long long)a,
				 (unsigned long long)b))
			break;
	}
	return sf_test_summary("test_window_math");
}
