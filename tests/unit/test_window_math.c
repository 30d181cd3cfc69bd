// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_window_math.c - the engine's window code (bpf/window_math.h, the very
 * file the BPF object includes) against two independent references in
 * unsigned __int128: the raw-moment formula (N*S2 - S1^2) / N^2 and the
 * centred sum sum((N*x - S1)^2) / N^3, on random and adversarial inputs, for
 * small, default and largest windows.
 */
#include <stdlib.h>
#include <string.h>
#include "window_math.h"
#include "sf_test.h"

typedef unsigned __int128 u128;

#define MAX_N (1U << SATFEED_WINDOW_SHIFT_MAX)

static __u64 xs[MAX_N];

struct ref {
	__u64 sum, mean, var, rate_milli, clamped;
	u128 sumsq;
};

static void reference(const __u64 *x, __u32 n, struct ref *r)
{
	u128 s1 = 0, s2 = 0, centred = 0, var2;

	memset(r, 0, sizeof(*r));
	for (__u32 i = 0; i < n; i++) {
		__u64 v = x[i];

		if (v > SATFEED_SAMPLE_CAP_NS) {
			v = SATFEED_SAMPLE_CAP_NS;
			r->clamped++;
		}
		s1 += v;
		s2 += (u128)v * v;
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
}

/* Feed x[0..n) as wait durations through sf_window_add; check the window. */
static void check_window(const char *name, const __u64 *x, __u32 shift)
{
	struct satfeed_stream *s = calloc(1, sizeof(*s));
	const struct satfeed_window *w;
	struct satfeed_window out = {};
	__u32 n = 1U << shift;
	struct ref r;
	int closed = 0;
	__u64 now = 1000;

	reference(x, n, &r);
	/* a window already published first, so hist indexing is exercised */
	s->published = 37;
	for (__u32 i = 0; i < n; i++) {
		now += x[i];
		closed += sf_window_add(s, x[i], now, shift, &out);
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
	ASSERT_TRUE(!memcmp(&out, w, sizeof(out)), "%s: copy for the push hook differs",
		    name);
	ASSERT_EQ(w->end_ns, now, "end_ns");
out:
	free(s);
}

static __u64 rnd64(void)
{
	return ((__u64)random() << 42) ^ ((__u64)random() << 21) ^ random();
}

int main(void)
{
	static const __u32 shifts[] = { 1, 2, 5, 11, 16 };
	const __u64 cap = SATFEED_SAMPLE_CAP_NS;

	srandom(0x5a7feed);
	for (size_t si = 0; si < sizeof(shifts) / sizeof(shifts[0]); si++) {
		__u32 shift = shifts[si], n = 1U << shift;

		for (__u32 i = 0; i < n; i++)
			xs[i] = 0;
		check_window("all zeros", xs, shift);
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
			if (sf_fail)
				break;
		}
	}
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
