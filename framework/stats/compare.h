/* SPDX-License-Identifier: MIT */
/*
 * compare -- the statistics behind `iommulab compare`: the two-sided Mann-Whitney U test of
 * two sets of repeats (or of two latency histograms), and the ratio of two means with its 95%
 * interval.
 *
 * Mann-Whitney follows scipy.stats.mannwhitneyu (method "auto", use_continuity=True): U is
 * the first sample's statistic (the number of pairs (a, b) with a > b, ties counting one
 * half); the p value is exact, from the distribution of U under the null hypothesis, when
 * there are no ties and one sample has at most STATS_MWU_EXACT_MAX_N values, and otherwise
 * the normal approximation with the tie correction of the variance and a continuity
 * correction of 0.5. Neither makes sense with fewer than 2 values a side: those are refused
 * (-EINVAL), never given a p value.
 */
#ifndef IOMMULAB_STATS_COMPARE_H
#define IOMMULAB_STATS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/histogram.h"
#include "stats/stats.h"

/* scipy's "auto" rule: exact when either sample has at most 8 values (and there are no ties). */
#define STATS_MWU_EXACT_MAX_N 8
/* The exact distribution costs O(m^2 n^2) for the other sample's n: beyond this, normal. */
#define STATS_MWU_EXACT_OTHER_MAX_N 400

enum stats_mwu_method {
	STATS_MWU_EXACT,
	STATS_MWU_NORMAL,
};

struct stats_mwu {
	double u;      /* U of the first sample */
	double p;      /* two-sided p value */
	double z;      /* STATS_MWU_NORMAL: the continuity-corrected z (0 when all values tie) */
	bool all_tied; /* every value of both samples equal: no evidence either way, p = 1 */
	enum stats_mwu_method method;
};

/*
 * The two-sided Mann-Whitney U test of a[0..na) against b[0..nb). 0, -EINVAL when na or nb
 * is below 2 (or a value is not finite), -ENOMEM.
 */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out);

/* The same, always with the normal approximation (to test it, and for callers that want it). */
int stats_mann_whitney_normal(const double *a, size_t na, const double *b, size_t nb,
			      struct stats_mwu *out);

/*
 * The two-sided Mann-Whitney U test of the values of two latency histograms (histogram.h),
 * from their bucket counts: the values are known to their bucket only, so each bucket's values
 * tie (their rank is the bucket's mid-rank), and the p value is the normal approximation with
 * the tie correction and the continuity correction, exactly what stats_mann_whitney_normal
 * gives for the values listed one by one, each replaced by its bucket. The values of a trial
 * are not independent draws (an op's latency depends on the ones before it), so with
 * thousands of them p is small for any real difference however slight: read it with a12.
 * *a12 = P(b's value > a's) + P(equal) / 2 = U_b / (na nb), Vargha and Delaney's A (0.5: no
 * shift; STATS_A12_SMALL and above, or 1 - that and below: at least a small effect).
 * -EINVAL when either has fewer than 2 values.
 */
int stats_mann_whitney_hist(const struct hist *a, const struct hist *b, struct stats_mwu *out,
			    double *a12);

/* Vargha and Delaney (2000): A of 0.56, 0.64 and 0.71 are a small, medium and large effect. */
#define STATS_A12_SMALL 0.56

/* "exact" or "normal". */
const char *stats_mwu_method_name(enum stats_mwu_method m);

/*
 * The ratio b/a of two means and the half-width of its 95% interval by first-order error
 * propagation (the delta method, as hyperfine's "+/-"): the relative half-widths add in
 * quadrature, hw = r * sqrt((hw_a / mean_a)^2 + (hw_b / mean_b)^2). NaN ratio when a's mean
 * is 0; half-width NaN when either side has n < 2 (its interval is unknown, not zero).
 */
struct stats_ratio {
	double ratio;
	double half_width;
};

struct stats_ratio stats_ratio_ci(struct mean_ci a, struct mean_ci b);

#endif /* IOMMULAB_STATS_COMPARE_H */
