/* SPDX-License-Identifier: MIT */
/* Unit tests of the log-linear histograms: quantiles against a sorted array, merge, exactness. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats/histogram.h"

#define N_VALUES 200000

/* xorshift64*: deterministic, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double rng_unit(void) /* (0, 1] */
{
	return ((double)(rng_next() >> 11) + 1.0) / 9007199254740992.0;
}

enum dist { D_UNIFORM, D_EXP, D_PARETO, D_LOGUNIFORM, D_BIMODAL, D_N };

static uint64_t draw(enum dist d)
{
	double v;

	switch (d) {
	case D_UNIFORM:
		v = rng_unit() * 1e6;
		break;
	case D_EXP:
		v = -log(rng_unit()) * 900.0;
		break;
	case D_PARETO: /* heavy tail, alpha = 1.1, capped at 1e12 */
		v = 100.0 / pow(rng_unit(), 1.0 / 1.1);
		break;
	case D_LOGUNIFORM: /* 1 ns .. 1e12 ns, every decade equally */
		v = pow(10.0, rng_unit() * 12.0);
		break;
	default: /* fast path around 900 ns, slow path around 50 us */
		v = (rng_next() & 15) ? 900.0 + rng_unit() * 50.0 : 5e4 + rng_unit() * 1e4;
		break;
	}
	if (v > 1e12)
		v = 1e12;
	return (uint64_t)v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
	if (q <= 0.0)
		return sorted[0];
	size_t rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static const double qs[] = { 0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0 };

Test(histogram, quantiles_match_sorted_array, .timeout = 30)
{
	uint64_t *vals = malloc(N_VALUES * sizeof(*vals));
	struct hist *h = malloc(sizeof(*h));

	cr_assert(vals && h);
	for (int d = 0; d < D_N; d++) {
		hist_reset(h);
		for (size_t i = 0; i < N_VALUES; i++) {
			vals[i] = draw((enum dist)d);
			hist_record(h, vals[i]);
		}
		qsort(vals, N_VALUES, sizeof(*vals), cmp_u64);
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			double want = (double)exact_quantile(vals, N_VALUES, qs[i]);
			double got = (double)hist_quantile(h, qs[i]);
			double err = want ? fabs(got - want) / want : fabs(got);

			cr_assert(err <= 0.01, "dist %d q=%g: histogram %g, exact %g (%.3f%%)", d,
				  qs[i], got, want, err * 100.0);
		}
		cr_assert_eq(hist_quantile(h, 0.0), vals[0], "q=0 is the minimum");
		cr_assert_eq(hist_quantile(h, 1.0), vals[N_VALUES - 1], "q=1 is the maximum");
		cr_assert_eq(h->count, N_VALUES);
	}
	free(vals);
	free(h);
}

Test(histogram, mean_and_stddev_match_direct_computation, .timeout = 10)
{
	static struct hist h;
	static uint64_t vals[10000];
	double sum = 0.0, ss = 0.0;

	hist_reset(&h);
	for (size_t i = 0; i < 10000; i++) {
		vals[i] = draw(D_EXP);
		sum += (double)vals[i];
		hist_record(&h, vals[i]);
	}
	double mean = sum / 10000.0;
	for (size_t i = 0; i < 10000; i++)
		ss += ((double)vals[i] - mean) * ((double)vals[i] - mean);
	double sd = sqrt(ss / 9999.0);

	cr_assert(fabs(hist_mean(&h) - mean) <= 1e-9 * mean, "mean %g vs %g", hist_mean(&h), mean);
	cr_assert(fabs(hist_stddev(&h) - sd) <= 1e-9 * sd, "sd %g vs %g", hist_stddev(&h), sd);
}

Test(histogram, merge_equals_recording_everything_in_one, .timeout = 20)
{
	static struct hist parts[4], merged, all;

	hist_reset(&merged);
	hist_reset(&all);
	for (int p = 0; p < 4; p++)
		hist_reset(&parts[p]);
	for (size_t i = 0; i < 40000; i++) {
		/* Unequal parts with different shapes, as per-CPU histograms are. */
		int p = (int)(rng_next() % 7) % 4;
		uint64_t v = draw((enum dist)(p + 1));

		hist_record(&parts[p], v);
		hist_record(&all, v);
	}
	for (int p = 0; p < 4; p++)
		hist_merge(&merged, &parts[p]);

	cr_assert_eq(merged.count, all.count);
	cr_assert_eq(merged.min, all.min);
	cr_assert_eq(merged.max, all.max);
	cr_assert(memcmp(merged.buckets, all.buckets, sizeof(all.buckets)) == 0, "buckets differ");
	cr_assert(fabs(hist_mean(&merged) - hist_mean(&all)) <= 1e-9 * hist_mean(&all),
		  "mean %g vs %g", hist_mean(&merged), hist_mean(&all));
	cr_assert(fabs(hist_stddev(&merged) - hist_stddev(&all)) <= 1e-7 * hist_stddev(&all),
		  "stddev %g vs %g", hist_stddev(&merged), hist_stddev(&all));
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		cr_assert_eq(hist_quantile(&merged, qs[i]), hist_quantile(&all, qs[i]));
}

Test(histogram, merge_with_empty_is_identity, .timeout = 5)
{
	static struct hist a, empty;

	hist_reset(&a);
	hist_reset(&empty);
	hist_record(&a, 5);
	hist_record(&a, 7);
	hist_merge(&a, &empty);
	cr_assert_eq(a.count, 2);
	cr_assert_eq(a.min, 5);
	hist_merge(&empty, &a);
	cr_assert_eq(empty.count, 2);
	cr_assert_eq(empty.min, 5);
	cr_assert_eq(empty.max, 7);
	cr_assert_float_eq(hist_mean(&empty), 6.0, 1e-12);
}

Test(histogram, small_values_are_exact, .timeout = 5)
{
	static struct hist h;

	hist_reset(&h);
	/* 0..127 once each, then the value 100 another 1000 times. */
	for (uint64_t v = 0; v < HIST_SUB_COUNT; v++)
		hist_record(&h, v);
	for (int i = 0; i < 1000; i++)
		hist_record(&h, 100);
	cr_assert_eq(hist_quantile(&h, 0.0), 0);
	cr_assert_eq(hist_quantile(&h, 1.0), 127);
	/* 1128 values: rank ceil(0.05 * 1128) = 57 is the value 56. */
	cr_assert_eq(hist_quantile(&h, 0.05), 56);
	cr_assert_eq(hist_quantile(&h, 0.5), 100);
	for (uint64_t v = 0; v < HIST_SUB_COUNT; v++)
		cr_assert_eq(hist_bucket(v), v, "value %lu has its own bucket", (unsigned long)v);
}

Test(histogram, extremes_and_empty, .timeout = 5)
{
	static struct hist h;
	struct lat_summary s;

	hist_reset(&h);
	cr_assert_eq(h.min, UINT64_MAX);
	cr_assert_eq(hist_quantile(&h, 0.5), 0, "empty histogram reports 0");
	cr_assert_eq(hist_stddev(&h), 0.0);
	hist_summarize(&h, &s);
	cr_assert_eq(s.count, 0);
	cr_assert_eq(s.p99, 0);

	hist_record(&h, UINT64_MAX);
	hist_record(&h, 1ull << 63);
	cr_assert(hist_bucket(UINT64_MAX) < HIST_N_BUCKETS);
	cr_assert_eq(hist_quantile(&h, 1.0), UINT64_MAX);
	cr_assert_eq(hist_quantile(&h, 0.0), 1ull << 63);
	uint64_t mid = hist_quantile(&h, 0.5);
	cr_assert(mid >= 1ull << 63 && (double)mid <= (double)(1ull << 63) * 1.01);
}

Test(histogram, summarize_fills_every_field, .timeout = 5)
{
	static struct hist h;
	struct lat_summary s;

	hist_reset(&h);
	for (uint64_t v = 1; v <= 1000; v++)
		hist_record(&h, v * 1000);
	hist_summarize(&h, &s);
	cr_assert_eq(s.count, 1000);
	cr_assert_eq(s.min, 1000);
	cr_assert_eq(s.max, 1000000);
	cr_assert_float_eq(s.mean, 500500.0, 1e-6);
	cr_assert(fabs((double)s.p50 - 500000.0) <= 5000.0, "p50 %lu", (unsigned long)s.p50);
	cr_assert(fabs((double)s.p90 - 900000.0) <= 9000.0, "p90 %lu", (unsigned long)s.p90);
	cr_assert(fabs((double)s.p99 - 990000.0) <= 9900.0, "p99 %lu", (unsigned long)s.p99);
	cr_assert(fabs((double)s.p999 - 999000.0) <= 9990.0, "p999 %lu", (unsigned long)s.p999);
	cr_assert(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
	cr_assert(fabs(s.stddev - 288819.436) < 1.0, "stddev %g", s.stddev);
}

/* hist_clear() clears only min's to max's buckets: it must leave what hist_reset() does. */
Test(histogram, clear_equals_reset, .timeout = 5)
{
	static struct hist a, b;
	uint64_t x = 7;

	hist_reset(&a);
	hist_reset(&b);
	for (int i = 0; i < 10000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		hist_record(&a, x >> (x & 63));
	}
	hist_record(&a, 0);
	hist_record(&a, UINT64_MAX);
	hist_clear(&a);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
	hist_record(&a, 1000);
	hist_clear(&a);
	hist_clear(&a);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
}

/* Mean and variance come from integer sums: exact, whatever the order of the values. */
Test(histogram, mean_and_stddev_are_exact, .timeout = 5)
{
	static struct hist h;

	hist_reset(&h);
	for (int i = 0; i < 1039; i++) {
		hist_record(&h, 1405);
		hist_record(&h, 1406);
	}
	cr_assert_eq(hist_mean(&h), 1405.5);
	cr_assert_float_eq(hist_stddev(&h), sqrt(0.25 * 2078.0 / 2077.0), 1e-15);
	hist_reset(&h);
	for (int i = 0; i < 1000; i++)
		hist_record(&h, 1000000007ull);
	cr_assert_eq(hist_stddev(&h), 0.0);
	cr_assert_eq(hist_mean(&h), 1000000007.0);
}
