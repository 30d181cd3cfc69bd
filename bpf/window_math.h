/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * window_math.h - exact integer window statistics.
 *
 * Shared verbatim by the BPF engine and the user-space tests, so the code the
 * tests check against a 128-bit reference is the code the kernel runs.  It
 * needs only the __u64/__u32 types and satfeed.h; no helpers and no calls,
 * because the engine runs it while holding a bpf_spin_lock (a static
 * subprogram may be called there only from 6.9 on), and one bounded loop
 * (sf_div128_u32, once per closed window).
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
 *
 * The normalized figures (sf_window_norm):
 *   cv2  = floor(1000 * (N * S2 - S1^2) / S1^2)    (var / mean^2, permille)
 * the numerator is below 1000 * 2^96 < 2^106 and the denominator below
 * 2^(2*48) = 2^96, so it is one 128-by-128 division whose quotient, saturated
 * at 2^32 - 1, has 32 bits: sf_div128_u32, restoring shift-subtract.
 *   wait = floor(1000 * S1 / span), idle = floor(1000 * (S1 - runq) / span)
 * 1000 * S1 < 2^58, so those are 64-bit divisions.
 */
#ifndef __SATFEED_WINDOW_MATH_H
#define __SATFEED_WINDOW_MATH_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif
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
 * The two 128-bit moments every figure derives from: s = S1^2 and
 * d = N * S2 - S1^2 (never negative).  shift is k, 1 <= k <= 16.
 */
static __always_inline void sf_window_moments(__u64 sum, __u64 sq_lo,
					      __u64 sq_hi, __u32 shift,
					      __u64 *s_lo, __u64 *s_hi,
					      __u64 *d_lo, __u64 *d_hi)
{
	__u64 n_lo, n_hi;
	__u32 k = shift & 31;

	/* n = S2 << k (k >= 1, so 64 - k is a valid shift) */
	n_hi = (sq_hi << k) | (sq_lo >> (64 - k));
	n_lo = sq_lo << k;
	sf_mul_64x64(sum, sum, s_lo, s_hi);
	*d_lo = n_lo - *s_lo;
	*d_hi = n_hi - *s_hi - (n_lo < *s_lo);
}

/* var = d >> 2k, 2 <= 2k <= 32; the result fits in 64 bits */
static __always_inline __u64 sf_window_var(__u64 d_lo, __u64 d_hi,
					   __u32 shift)
{
	__u32 k2 = (2 * shift) & 63;

	return (d_lo >> k2) | (d_hi << (64 - k2));
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
	__u64 s_lo, s_hi, d_lo, d_hi;

	*mean = sum >> (shift & 31);
	*rate_milli = sum ? (SF_NSEC_PER_KSEC << (shift & 31)) / sum : 0;
	sf_window_moments(sum, sq_lo, sq_hi, shift, &s_lo, &s_hi, &d_lo,
			  &d_hi);
	*var = sf_window_var(d_lo, d_hi, shift);
}

#define SF_U32_MAX	0xffffffffULL

/*
 * floor(x / y) for 128-bit x = xh:xl and y = yh:yl with 0 < y < 2^96, or
 * 2^32 - 1 when the quotient does not fit in 32 bits.  BPF has 64-bit
 * division only, so this is long division in base 2 over the 32 quotient
 * bits: 32 rounds of compare, subtract and shift on 128-bit pairs, with
 * t = y << 31 (below 2^127) shifted right each round.  It saturates by
 * itself: when x >= y * 2^32, what is left of x before the round of bit j is
 * at least y * 2^(j+1), so every round subtracts and every bit is 1.  The
 * loop is kept rolled (some 25 instructions wherever it is inlined, instead
 * of 600 unrolled) and runs about 400 instructions, once per closed window.
 */
static __always_inline __u32 sf_div128_u32(__u64 xh, __u64 xl, __u64 yh,
					   __u64 yl)
{
	__u64 th, tl;
	__u32 q = 0, i;

	th = (yh << 31) | (yl >> 33);
	tl = yl << 31;
#if defined(__clang__) && defined(__bpf__)
#pragma clang loop unroll(disable)
#endif
	for (i = 0; i < 32; i++) {
		q <<= 1;
		if (xh > th || (xh == th && xl >= tl)) {
			xh -= th + (xl < tl);
			xl -= tl;
			q |= 1;
		}
		tl = (tl >> 1) | (th << 63);
		th >>= 1;
	}
	return q;
}

/*
 * floor(x / n) for 128-bit x = xh:xl and 0 < n < 2^32: long division in
 * base 2^32, each step a 64-bit division of (remainder << 32 | limb), which
 * stays below n * 2^32 <= 2^64.
 */
static __always_inline void sf_div128_by32(__u64 xh, __u64 xl, __u64 n,
					   __u64 *qh, __u64 *ql)
{
	__u64 cur, q3, q2, q1, q0, r;

	cur = xh >> 32;
	q3 = cur / n;
	r = cur - q3 * n;
	cur = (r << 32) | (xh & 0xffffffffULL);
	q2 = cur / n;
	r = cur - q2 * n;
	cur = (r << 32) | (xl >> 32);
	q1 = cur / n;
	r = cur - q1 * n;
	cur = (r << 32) | (xl & 0xffffffffULL);
	q0 = cur / n;
	*qh = (q3 << 32) | q2;
	*ql = (q1 << 32) | q0;
}

/*
 * The normalized figures of w from its moments s = S1^2 and d = n * S2 -
 * S1^2: cv2_permille, and for the poll stream (slack) wait_permille and
 * idle_permille over the window's span and its threads (w->threads; 0
 * counts as 1), each at most 1000.
 */
static __always_inline void sf_window_norm(struct satfeed_window *w,
					   __u64 s_lo, __u64 s_hi, __u64 d_lo,
					   __u64 d_hi, bool slack)
{
	__u64 m_lo, m_hi, span, idle, den;

	w->cv2_permille = 0;
	w->wait_permille = 0;
	w->idle_permille = 0;
	if (w->sum_ns) {
		/* m = 1000 * d: d < 2^97, so the high half is d_hi * 1000
		 * plus the carry out of d_lo * 1000 */
		m_lo = d_lo * 1000;
		m_hi = d_hi * 1000 + (((d_lo >> 32) * 1000 +
				       ((d_lo & 0xffffffffULL) * 1000 >> 32)) >>
				      32);
		w->cv2_permille = sf_div128_u32(m_hi, m_lo, s_hi, s_lo);
	}
	if (!slack)
		return;
	span = w->end_ns - w->start_ns;
	if (!span || w->end_ns < w->start_ns)
		return;
	/* span < 2^63 ns and threads < 2^16 in any real window; a product
	 * that would overflow reads as no share rather than a wrong one */
	den = span * (w->threads ? w->threads : 1);
	if (w->threads && den / w->threads != span)
		return;
	idle = w->runq_ns <= w->sum_ns ? w->sum_ns - w->runq_ns : 0;
	m_lo = w->sum_ns * 1000 / den;
	w->wait_permille = m_lo > 1000 ? 1000 : m_lo;
	m_lo = idle * 1000 / den;
	w->idle_permille = m_lo > 1000 ? 1000 : m_lo;
}

/*
 * Every figure of a closed window w of 2^shift samples from its sums,
 * end_ns, start_ns, runq_ns and threads: mean_ns, var_ns2 and rate_milli
 * (sf_window_stats), cv2_permille, and for the poll stream (slack)
 * wait_permille and idle_permille; see satfeed.h.  runq_ns above sum_ns
 * cannot happen (each wait's run delay is clamped to the wait), and would
 * read as no idle time.
 */
static __always_inline void sf_window_figures(struct satfeed_window *w,
					      __u32 shift, bool slack)
{
	__u64 s_lo, s_hi, d_lo, d_hi, sum = w->sum_ns;

	w->mean_ns = sum >> (shift & 31);
	w->rate_milli = sum ? (SF_NSEC_PER_KSEC << (shift & 31)) / sum : 0;
	sf_window_moments(sum, w->sumsq_lo, w->sumsq_hi, shift, &s_lo, &s_hi,
			  &d_lo, &d_hi);
	w->var_ns2 = sf_window_var(d_lo, d_hi, shift);
	sf_window_norm(w, s_lo, s_hi, d_lo, d_hi, slack);
}

/*
 * The same for a window of any n samples, 1 <= n <= 2^16 (closed by age):
 * mean floor(S1 / n), rate floor(n * 10^12 / S1), variance floor((n * S2 -
 * S1^2) / n^2) = floor(floor(d / n) / n), exact like the power-of-two case.
 * n * S2 < 2^16 * 2^80: three 64-bit products.
 */
static __always_inline void sf_window_figures_n(struct satfeed_window *w,
						__u64 n, bool slack)
{
	__u64 s_lo, s_hi, d_lo, d_hi, n_lo, n_hi, q_hi, q_lo, sum = w->sum_ns;

	w->mean_ns = sum / n;
	w->rate_milli = sum ? SF_NSEC_PER_KSEC * n / sum : 0;
	sf_mul_64x64(w->sumsq_lo, n, &n_lo, &n_hi);
	n_hi += w->sumsq_hi * n;
	sf_mul_64x64(sum, sum, &s_lo, &s_hi);
	d_lo = n_lo - s_lo;
	d_hi = n_hi - s_hi - (n_lo < s_lo);
	sf_div128_by32(d_hi, d_lo, n, &q_hi, &q_lo);
	sf_div128_by32(q_hi, q_lo, n, &q_hi, &q_lo);
	w->var_ns2 = q_lo;
	sf_window_norm(w, s_lo, s_hi, d_lo, d_hi, slack);
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
 * Publish out, whose figures are set, as hist entry number published + 1
 * and start an empty window.  Caller holds s->lock, which is all a reader
 * under the lock needs.  For lockless readers the entry is written seq_end
 * first and seq last (see struct satfeed_window), each store fenced, so on
 * weakly ordered CPUs too no store of the window's fields becomes visible
 * before seq_end or after seq.  Two exchanges per window are the whole
 * cost.
 */
static __always_inline void sf_window_publish(struct satfeed_stream *s,
					      const struct satfeed_window *out)
{
	__u64 seq = out->seq;
	struct satfeed_window *w = &s->hist[satfeed_hist_index(seq)];

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
	w->runq_ns = out->runq_ns;
	w->wait_permille = out->wait_permille;
	w->idle_permille = out->idle_permille;
	w->cv2_permille = out->cv2_permille;
	w->flags = out->flags;
	w->threads = out->threads;
	w->reserved = 0;
	sf_store_fenced(&w->seq, seq);

	s->published = seq;
	s->pending = 0;
	s->acc_sum_ns = 0;
	s->acc_sumsq_lo = 0;
	s->acc_sumsq_hi = 0;
	s->acc_clamped = 0;
	s->acc_runq_ns = 0;
	s->acc_threads = 0;
}

/*
 * Close the in-progress window of s at now into *out and publish it: with
 * aged false it holds 2^shift samples (shifts only); with aged true the
 * pending ones, 1 <= pending <= 2^16 (the age timer's close,
 * SATFEED_WIN_AGED).  Caller holds s->lock.
 */
static __always_inline void sf_window_close(struct satfeed_stream *s,
					    __u64 now, __u32 shift, bool slack,
					    bool aged,
					    struct satfeed_window *out)
{
	__u64 seq = s->published + 1;

	out->seq = seq;
	out->seq_end = seq;
	out->start_ns = s->acc_start_ns;
	out->end_ns = now;
	out->sum_ns = s->acc_sum_ns;
	out->sumsq_lo = s->acc_sumsq_lo;
	out->sumsq_hi = s->acc_sumsq_hi;
	out->clamped = (__u32)s->acc_clamped;
	out->runq_ns = s->acc_runq_ns;
	out->threads = slack ? (__u32)s->acc_threads : 0;
	out->reserved = 0;
	if (aged) {
		out->samples = (__u32)s->pending;
		out->flags = SATFEED_WIN_AGED;
		sf_window_figures_n(out, s->pending & 0x1ffff, slack);
	} else {
		out->samples = 1U << shift;
		out->flags = 0;
		sf_window_figures(out, shift, slack);
	}
	sf_window_publish(s, out);
}

/*
 * Publish an empty window (SATFEED_WIN_QUIET) from the stream's last event
 * to now, and end its chain of gaps: the next event is no sample.  Its
 * wait and idle shares, threads: the caller's (the poll stream's, from the
 * waits in progress).  Caller holds s->lock and saw no sample pending.
 */
static __always_inline void sf_window_quiet(struct satfeed_stream *s,
					    __u64 now, __u32 wait_permille,
					    __u32 idle_permille,
					    __u32 threads,
					    struct satfeed_window *out)
{
	__u64 seq = s->published + 1;

	__builtin_memset(out, 0, sizeof(*out));
	out->seq = seq;
	out->seq_end = seq;
	out->start_ns = s->last_ns;
	out->end_ns = now;
	out->flags = SATFEED_WIN_QUIET;
	out->wait_permille = wait_permille;
	out->idle_permille = idle_permille;
	out->threads = threads;
	sf_window_publish(s, out);
	s->last_ns = 0;
}

/*
 * Add one sample that ended at time now to the in-progress window; close the
 * window when it holds 2^shift samples.  runq: of the sample, the time the
 * thread was runnable but not running (a wait's run delay; 0 for gaps),
 * clamped to the sample as counted.  slack: the stream is the poll stream.
 * Returns 1 and fills *out when a window closed.  Caller holds s->lock.
 */
static __always_inline int sf_window_add(struct satfeed_stream *s,
					 __u64 sample, __u64 runq, __u64 now,
					 __u32 shift, bool slack,
					 struct satfeed_window *out)
{
	__u64 sq, lo;

	if (!s->pending)
		s->acc_start_ns = now - sample;
	if (sample > SATFEED_SAMPLE_CAP_NS) {
		sample = SATFEED_SAMPLE_CAP_NS;
		s->acc_clamped++;
	}
	runq = runq < sample ? runq : sample;
	s->acc_runq_ns += runq;
	s->acc_sum_ns += sample;
	if (slack) {
		s->wait_total_ns += sample;
		s->runq_total_ns += runq;
	}
	sq = sample * sample;
	lo = s->acc_sumsq_lo + sq;
	s->acc_sumsq_hi += lo < sq;
	s->acc_sumsq_lo = lo;
	if (++s->pending < (1ULL << shift))
		return 0;
	sf_window_close(s, now, shift, slack, false, out);
	return 1;
}

#endif /* __SATFEED_WINDOW_MATH_H */
