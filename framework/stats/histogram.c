/* SPDX-License-Identifier: MIT */
/*
 * histogram -- reset, merge, quantiles and summaries of the log-linear latency histograms
 * declared in histogram.h (recording is inline there, on the hot path).
 */
#include "stats/histogram.h"

#include <math.h>
#include <string.h>

/* Both recorders and the quantile walk rely on every bucket index fitting the array. */
_Static_assert(HIST_N_BUCKETS == (64 - HIST_SUB_BITS + 1) * HIST_SUB_COUNT, "bucket count");

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	/* So that the first recorded value becomes the minimum. */
	h->min = UINT64_MAX;
}

void hist_clear(struct hist *h)
{
	if (h->count) {
		uint32_t lo = hist_bucket(h->min), hi = hist_bucket(h->max);
		memset(&h->buckets[lo], 0, (hi - lo + 1) * sizeof(h->buckets[0]));
	}
	h->count = 0;
	h->max = 0;
	h->min = UINT64_MAX;
	h->sum = 0;
	h->sumsq = 0;
}

/*
 * Only src's buckets from its min's to its max's can be non-zero (hist_record fills no other,
 * hist_clear empties those), so only they are added: a CPU's ops span a few of the 7424, and
 * adding all of them was 59 KB read per CPU per metric per trial.
 */
void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	uint32_t lo = hist_bucket(src->min), hi = hist_bucket(src->max);

	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (uint32_t i = lo; i <= hi; i++)
		dst->buckets[i] += src->buckets[i];
}

/* The representative value of bucket b: exact below HIST_SUB_COUNT, else its midpoint. */
static uint64_t bucket_value(uint32_t b)
{
	if (b < HIST_SUB_COUNT)
		return b;
	uint32_t shift = b >> HIST_SUB_BITS;
	uint64_t sub = b & (HIST_SUB_COUNT - 1);
	uint64_t low = sub << shift;

	/* Half the bucket width; cannot overflow, the top bucket ends at UINT64_MAX. */
	return low + ((UINT64_C(1) << shift) >> 1);
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	if (!h->count)
		return 0;
	if (!(q > 0.0)) /* also catches NaN */
		return h->min;
	if (q >= 1.0)
		return h->max;

	/* Nearest rank: the smallest value with at least ceil(q * count) values at or below. */
	double r = ceil(q * (double)h->count);
	uint64_t rank = r < 1.0 ? 1 : (uint64_t)r;
	if (rank > h->count)
		rank = h->count;

	uint64_t seen = 0;
	for (uint32_t b = 0; b < HIST_N_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t v = bucket_value(b);

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max; /* buckets and count disagree: only if the caller corrupted them */
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

double hist_stddev(const struct hist *h)
{
	if (h->count < 2)
		return 0.0;
	/* (n - 1) x variance = sumsq - sum^2 / n, in integers (sum^2 fits 128 bits) but for
	 * the division's remainder, whose share is taken off in floating point. */
	hist_u128 s1 = h->sum, sq = s1 * s1, n = h->count;
	double m2 = (double)(h->sumsq - sq / n) - (double)(sq % n) / (double)n;
	double var = m2 / (double)(h->count - 1);

	return var > 0.0 ? sqrt(var) : 0.0;
}

void hist_summarize(const struct hist *h, struct lat_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->count = h->count;
	if (!h->count)
		return;
	out->mean = hist_mean(h);
	out->stddev = hist_stddev(h);
	out->min = h->min;
	out->max = h->max;
	out->p50 = hist_quantile(h, 0.50);
	out->p90 = hist_quantile(h, 0.90);
	out->p99 = hist_quantile(h, 0.99);
	out->p999 = hist_quantile(h, 0.999);
}
