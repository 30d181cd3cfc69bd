/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * window_math.h - exact integer window statistics.
 *
 * Shared verbatim by the BPF engine and the user-space tests, so the code the
 * tests check against a 128-bit reference is the code the kernel runs.  It
 * needs only the __u64/__u32 types and satfeed.h; no helpers, no calls, no
 * loops, because the engine runs it while holding a bpf_spin_lock.
 *
 * With N = 2^k samples x_i, each at most 2^32 - 1:
 *   S1 = sum x_i     < 2^(32+k)  fits in 64 bits for k <= 16
 *   S2 = sum x_i^2   < 2^(64+k)  kept as a 128-bit (hi, lo) pair
 *   mean = floor(S1 / N)                 = S1 >> k
 *   var  = floor((N * S2 - S1^2) / N^2)  = ((S2 << k) - S1 * S1) >> 2k
 * N * S2 - S1^2 >= 0 by Cauchy-Schwarz and < 2^(64+2k) <= 2^96, so the whole
 * computation is exact in 128 bits and the result, at most cap^2 / 4, fits in
 * 64.  Dividing by N^2 is a shift because N is a power of two: that is why the
 * window size must be one.
 */
#ifndef __SATFEED_WINDOW_MATH_H
#define __SATFEED_WINDOW_MATH_H

#include "satfeed.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define SF_NSEC_PER_KSEC 1000000000000ULL /* rate_milli numerator per sample */

/* *hi:*lo = a * b, from four 32x32 -> 64 products (BPF has no 128-bit mul). */
static __always_inline void sf_mul_64x64(__u64 a, __u64 b, __u64 *lo,
					 __u64 *hi)
{
	__u64 a0 = a & 0xffffffffULL, a1 = a >> 32;
	__u64 b0 = b & 0xffffffffULL, b1 = b >> 32;
	__u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	__u64 mid = (p00 >> 32) + (p01 & 0xffffffffULL) +
		    (p10 & 0xffffffffULL);

	*lo = (mid << 32) | (p00 & 0xffffffffULL);
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/*
 * Statistics of a full window from its sums.  shift is k, 1 <= k <= 16.
 * rate_milli = floor(N * 10^12 / S1), 0 when S1 == 0 (an infinite rate).
 */
static __always_inline void sf_window_stats(__u64 sum, __u64 sq_lo,
					    __u64 sq_hi, __u32 shift,
					    __u64 *mean, __u64 *var,
					    __u64 *rate_milli)
{
	__u64 n_lo, n_hi, s_lo, s_hi, d_lo, d_hi;
	__u32 k = shift & 31, k2 = (2 * shift) & 63;

	*mean = sum >> k;
	*rate_milli = sum ? (SF_NSEC_PER_KSEC << k) / sum : 0;

	/* n = S2 << k (k >= 1, so 64 - k is a valid shift) */
	n_hi = (sq_hi << k) | (sq_lo >> (64 - k));
	n_lo = sq_lo << k;
	/* s = S1 * S1 */
	sf_mul_64x64(sum, sum, &s_lo, &s_hi);
	/* d = n - s, never negative */
	d_lo = n_lo - s_lo;
	d_hi = n_hi - s_hi - (n_lo < s_lo);
	/* var = d >> 2k, 2 <= 2k <= 32; the result fits in 64 bits */
	*var = (d_lo >> k2) | (d_hi << (64 - k2));
}

/*
 * Store v to *p as a full memory barrier: nothing before it becomes visible
 * after it, nothing after it before.  A BPF atomic exchange (BPF_XCHG) is
 * fully ordered in every JIT (x86-64: xchg; arm64: swpal, or an
 * ldaxr/stlxr loop and dmb ish), where clang 19 has no store-release for
 * BPF and kernels before 6.15 no BPF_STORE_REL.  User space (the tests
 * compile this file natively) gets the same ordering from the compiler.
 */
static __always_inline void sf_store_fenced(__u64 *p, __u64 v)
{
	__atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

/*
 * Close the in-progress window of s: publish it as hist entry number
 * published + 1 and start an empty one.  Caller holds s->lock, which is all
 * a reader under the lock needs.  For lockless readers the entry is written
 * seq_end first and seq last (see struct satfeed_window), each store fenced,
 * so on weakly ordered CPUs too no store of the window's fields becomes
 * visible before seq_end or after seq.  Two exchanges per window (every
 * 2^shift samples) are the whole cost.
 */
static __always_inline void sf_window_close(struct satfeed_stream *s,
					    __u64 now, __u32 shift,
					    struct satfeed_window *out)
{
	__u64 seq = s->published + 1;
	struct satfeed_window *w = &s->hist[satfeed_hist_index(seq)];

	out->seq = seq;
	out->seq_end = seq;
	out->start_ns = s->acc_start_ns;
	out->end_ns = now;
	out->sum_ns = s->acc_sum_ns;
	out->sumsq_lo = s->acc_sumsq_lo;
	out->sumsq_hi = s->acc_sumsq_hi;
	out->samples = 1U << shift;
	out->clamped = (__u32)s->acc_clamped;
	sf_window_stats(out->sum_ns, out->sumsq_lo, out->sumsq_hi, shift,
			&out->mean_ns, &out->var_ns2, &out->rate_milli);

	sf_store_fenced(&w->seq_end, seq);
	w->start_ns = out->start_ns;
	w->end_ns = out->end_ns;
	w->sum_ns = out->sum_ns;
	w->sumsq_lo = out->sumsq_lo;
	w->sumsq_hi = out->sumsq_hi;
	w->mean_ns = out->mean_ns;
	w->var_ns2 = out->var_ns2;
	w->rate_milli = out->rate_milli;
	w->samples = out->samples;
	w->clamped = out->clamped;
	sf_store_fenced(&w->seq, seq);

	s->published = seq;
	s->pending = 0;
	s->acc_sum_ns = 0;
	s->acc_sumsq_lo = 0;
	s->acc_sumsq_hi = 0;
	s->acc_clamped = 0;
}

/*
 * Add one sample that ended at time now to the in-progress window; close the
 * window when it holds 2^shift samples.  Returns 1 and fills *out when a
 * window closed.  Caller holds s->lock.
 */
static __always_inline int sf_window_add(struct satfeed_stream *s,
					 __u64 sample, __u64 now, __u32 shift,
					 struct satfeed_window *out)
{
	__u64 sq, lo;

	if (!s->pending)
		s->acc_start_ns = now - sample;
	if (sample > SATFEED_SAMPLE_CAP_NS) {
		sample = SATFEED_SAMPLE_CAP_NS;
		s->acc_clamped++;
	}
	s->acc_sum_ns += sample;
	sq = sample * sample;
	lo = s->acc_sumsq_lo + sq;
	s->acc_sumsq_hi += lo < sq;
	s->acc_sumsq_lo = lo;
	if (++s->pending < (1ULL << shift))
		return 0;
	sf_window_close(s, now, shift, out);
	return 1;
}

#endif /* __SATFEED_WINDOW_MATH_H */
