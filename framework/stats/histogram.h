/* SPDX-License-Identifier: MIT */
/*
 * histogram -- per-CPU, mergeable log-linear latency histograms (HdrHistogram-style).
 *
 * Values (ns) below 2^HIST_SUB_BITS are counted exactly; above, each power-of-two range is cut
 * into 2^HIST_SUB_BITS equal buckets, so a value's bucket is within 1/2^(HIST_SUB_BITS-1) of
 * it. HIST_SUB_BITS = 7 gives <= 0.79% relative error over the full 64-bit range. Recording is
 * a few instructions (clz, shift, increments, the value and its square added to integer sums:
 * no division, no floating point, so mean and variance are exact and merge by addition); no
 * allocation, no locks: each CPU owns its own and they are merged after the trial.
 */
#ifndef IOMMULAB_HISTOGRAM_H
#define IOMMULAB_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS  7
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
#define HIST_N_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB_COUNT)

/* Squares of 64-bit values need 128 bits (GCC and Clang have them; __extension__ for -pedantic). */
__extension__ typedef unsigned __int128 hist_u128;

struct hist {
	uint64_t count;
	uint64_t min, max;
	uint64_t sum;	 /* of the values (wraps past 2^64 ns: 584 years) */
	hist_u128 sumsq; /* of their squares */
	uint64_t buckets[HIST_N_BUCKETS];
};

void hist_reset(struct hist *h);

/*
 * Empty h, which hist_reset() has set up and only hist_record() has filled since: only the
 * buckets from min's to max's can be non-zero, so only those are cleared (a CPU's warm-up
 * touches a few of the 7424; clearing all of them was 59 KB per CPU per trial). Memory that
 * is all zero (fresh anonymous pages) is an empty histogram too: hist_clear() sets it up
 * without writing a bucket.
 */
void hist_clear(struct hist *h);

/* Bucket of a value, and the representative value (midpoint) of a bucket. */
static inline uint32_t hist_bucket(uint64_t v)
{
	if (v < HIST_SUB_COUNT)
		return (uint32_t)v;
	uint32_t msb = 63u - (uint32_t)__builtin_clzll(v); /* >= HIST_SUB_BITS */
	uint32_t shift = msb - (HIST_SUB_BITS - 1);	   /* keep HIST_SUB_BITS top bits */
	return ((shift) << HIST_SUB_BITS) + (uint32_t)(v >> shift);
}

static inline void hist_record(struct hist *h, uint64_t v)
{
	h->buckets[hist_bucket(v)]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += v;
	h->sumsq += (hist_u128)v * v;
}

/* dst += src (dst set up by hist_reset, as every histogram is). */
void hist_merge(struct hist *dst, const struct hist *src);

/* The value at quantile q in [0, 1] (nearest rank, reported as its bucket's midpoint,
 * clamped to [min, max]). 0 when empty. */
uint64_t hist_quantile(const struct hist *h, double q);

double hist_mean(const struct hist *h);	  /* 0 if empty */
double hist_stddev(const struct hist *h); /* sample standard deviation; 0 if count < 2 */

/* The summary every metric carries into the results. */
struct lat_summary {
	uint64_t count;
	double mean, stddev;
	uint64_t min, p50, p90, p99, p999, max;
};

void hist_summarize(const struct hist *h, struct lat_summary *out);

#endif /* IOMMULAB_HISTOGRAM_H */
