/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sfload_hist.h - a log-linear latency histogram that loses no sample.
 *
 * Layout (HdrHistogram style, values in nanoseconds):
 *  - values below 2^(HIST_SUB_BITS + 1) = 256 ns have one bucket each (exact);
 *  - every later octave [2^k, 2^(k+1)) is split into 2^HIST_SUB_BITS = 128
 *    linear sub-buckets of width 2^(k - 7).
 * The index is (shift << 7) + (v >> shift) with shift = max(0, k - 7), which
 * needs one count-leading-zeros and no loop.  Every value from 1 ns to
 * 2^(HIST_MAX_SHIFT + 8) - 1 ns (about 1100 s) is counted in its bucket;
 * larger values are counted in the last bucket (and still set max exactly).
 *
 * Relative error: a bucket's width is at most 1/128 of any value in it, and a
 * percentile is reported as the highest value of its bucket (clamped to the
 * exact maximum), so a reported percentile is never below the true sample
 * and at most 0.79% (2^-7) above it.  min, max and mean are exact.
 *
 * Memory: 34 * 128 buckets of 8 bytes = 34 KiB per histogram.
 */
#ifndef SFLOAD_HIST_H
#define SFLOAD_HIST_H

#include <stdint.h>
#include <string.h>

#define HIST_SUB_BITS		7
#define HIST_SUB		(1u << HIST_SUB_BITS)
#define HIST_MAX_SHIFT		32
#define HIST_BUCKETS		((HIST_MAX_SHIFT + 2) * HIST_SUB)
#define HIST_MAX_VALUE \
	((1ull << (HIST_MAX_SHIFT + HIST_SUB_BITS + 1)) - 1)
#define HIST_REL_ERROR		(1.0 / HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum;
	uint64_t bucket[HIST_BUCKETS];
};

static inline void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static inline unsigned int hist_index(uint64_t v)
{
	unsigned int k, shift;

	if (v > HIST_MAX_VALUE)
		v = HIST_MAX_VALUE;
	k = 63 - __builtin_clzll(v | 1);
	shift = k > HIST_SUB_BITS ? k - HIST_SUB_BITS : 0;
	return (shift << HIST_SUB_BITS) + (unsigned int)(v >> shift);
}

/* Highest value that falls in bucket idx. */
static inline uint64_t hist_bucket_high(unsigned int idx)
{
	unsigned int shift, top;

	if (idx < 2 * HIST_SUB)
		return idx;
	shift = (idx >> HIST_SUB_BITS) - 1;
	top = idx - (shift << HIST_SUB_BITS);
	return (((uint64_t)top + 1) << shift) - 1;
}

static inline void hist_add(struct hist *h, uint64_t v)
{
	h->bucket[hist_index(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/*
 * The value at percentile p (0 < p <= 100): the smallest bucket whose
 * cumulative count reaches ceil(p / 100 * count), reported as that bucket's
 * highest value, clamped to [min, max].  0 for an empty histogram.
 */
static inline uint64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;
	double r;

	if (!h->count)
		return 0;
	r = p / 100.0 * (double)h->count;
	rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_BUCKETS)
		return h->max;
	v = hist_bucket_high(i);
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}

static inline double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

#endif /* SFLOAD_HIST_H */
