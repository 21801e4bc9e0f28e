/* SPDX-License-Identifier: MIT */
/*
 * compare -- Mann-Whitney U (of repeats, or of two histograms' buckets) and the ratio of two
 * means with its interval (compare.h).
 */
#include "stats/compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

struct ranked {
	double v;
	bool from_a;
};

static int cmp_ranked(const void *x, const void *y)
{
	double a = ((const struct ranked *)x)->v, b = ((const struct ranked *)y)->v;

	return (a > b) - (a < b);
}

/*
 * P(U >= u) for the U of a sample of m against one of n with no ties, every arrangement of
 * the m + n values equally likely. The largest value is the first sample's with probability
 * m / (m + n), and then beats all n: P[m][n](u) = m/(m+n) P[m-1][n](u-n) + n/(m+n)
 * P[m][n-1](u). Probabilities, not counts, so that nothing overflows; rows for every m' <= m
 * are kept at the current n' and updated in place, m' ascending.
 */
static int exact_sf(size_t m, size_t n, double u, double *p)
{
	size_t w = m * n + 1;
	double *row = calloc((m + 1) * w, sizeof(*row)), s = 0;

	if (!row)
		return -ENOMEM;
	for (size_t i = 0; i <= m; i++)
		row[i * w] = 1; /* n' = 0: U is 0 */
	for (size_t j = 1; j <= n; j++) {
		for (size_t i = 1; i <= m; i++) {
			double *cur = row + i * w, *prev = row + (i - 1) * w;
			double pa = (double)i / (double)(i + j), pb = (double)j / (double)(i + j);

			/* Descending u: cur[u] reads only cur[u] (this n' - 1) and prev[u - j]. */
			for (size_t k = i * j + 1; k-- > 0;)
				cur[k] = pb * cur[k] + (k >= j ? pa * prev[k - j] : 0);
		}
	}
	for (size_t k = w; k-- > 0 && (double)k >= u;)
		s += row[m * w + k];
	free(row);
	*p = s;
	return 0;
}

const char *stats_mwu_method_name(enum stats_mwu_method m)
{
	return m == STATS_MWU_EXACT ? "exact" : "normal";
}

static int mann_whitney(const double *a, size_t na, const double *b, size_t nb, bool exact_ok,
			struct stats_mwu *out)
{
	size_t n = na + nb, small = na < nb ? na : nb, big = na < nb ? nb : na;
	struct ranked *v;
	double rank_a = 0, ties = 0, mn = (double)na * (double)nb, u_big, sf;
	int ret;

	if (na < 2 || nb < 2)
		return -EINVAL;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i].v = i < na ? a[i] : b[i - na];
		v[i].from_a = i < na;
		if (!isfinite(v[i].v)) {
			free(v);
			return -EINVAL;
		}
	}
	qsort(v, n, sizeof(*v), cmp_ranked);
	/* Ranks 1..n, a run of equal values sharing the mean of its ranks. */
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double t, mid;

		while (j < n && v[j].v == v[i].v)
			j++;
		t = (double)(j - i);
		mid = (double)(i + 1 + j) / 2;
		for (size_t k = i; k < j; k++)
			if (v[k].from_a)
				rank_a += mid;
		ties += t * t * t - t;
		i = j;
	}
	free(v);

	out->u = rank_a - (double)na * (double)(na + 1) / 2;
	out->z = 0;
	out->all_tied = false;
	u_big = fmax(out->u, mn - out->u);
	if (exact_ok && ties == 0 && small <= STATS_MWU_EXACT_MAX_N &&
	    big <= STATS_MWU_EXACT_OTHER_MAX_N) {
		out->method = STATS_MWU_EXACT;
		ret = exact_sf(small, big, u_big, &sf);
		if (ret)
			return ret;
		out->p = fmin(1, 2 * sf);
		return 0;
	}
	out->method = STATS_MWU_NORMAL;
	double var = mn / 12 * ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));

	if (var <= 0) {
		out->all_tied = true;
		out->p = 1;
		return 0;
	}
	out->z = (u_big - mn / 2 - 0.5) / sqrt(var);
	out->p = fmin(1, erfc(out->z / sqrt(2)));
	return 0;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
		       struct stats_mwu *out)
{
	return mann_whitney(a, na, b, nb, true, out);
}

int stats_mann_whitney_normal(const double *a, size_t na, const double *b, size_t nb,
			      struct stats_mwu *out)
{
	return mann_whitney(a, na, b, nb, false, out);
}

int stats_mann_whitney_hist(const struct hist *a, const struct hist *b, struct stats_mwu *out,
			    double *a12)
{
	long double na = (long double)a->count, nb = (long double)b->count, n = na + nb;
	long double mn = na * nb, u_a = 0, below_b = 0, ties = 0, u_big, var;

	if (a->count < 2 || b->count < 2)
		return -EINVAL;
	/* U_a = pairs with a's value above b's, plus half the ties: a bucket's values of a beat
	 * b's in the buckets below and tie with b's in their own. */
	for (uint32_t k = 0; k < HIST_N_BUCKETS; k++) {
		long double ak = (long double)a->buckets[k], bk = (long double)b->buckets[k];
		long double t = ak + bk;

		if (t == 0)
			continue;
		u_a += ak * (below_b + bk / 2);
		below_b += bk;
		ties += t * t * t - t;
	}
	out->u = (double)u_a;
	out->z = 0;
	out->all_tied = false;
	out->method = STATS_MWU_NORMAL;
	*a12 = (double)((mn - u_a) / mn);
	u_big = u_a > mn - u_a ? u_a : mn - u_a;
	var = mn / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (var <= 0) {
		out->all_tied = true;
		out->p = 1;
		return 0;
	}
	out->z = (double)((u_big - mn / 2 - 0.5L) / sqrtl(var));
	out->p = fmin(1, erfc(out->z / sqrt(2)));
	return 0;
}

struct stats_ratio stats_ratio_ci(struct mean_ci a, struct mean_ci b)
{
	struct stats_ratio r = { .ratio = NAN, .half_width = NAN };

	if (a.n == 0 || b.n == 0 || a.mean == 0)
		return r;
	r.ratio = b.mean / a.mean;
	if (a.n < 2 || b.n < 2)
		return r;
	if (b.mean == 0) {
		r.half_width = b.half_width / fabs(a.mean);
		return r;
	}
	r.half_width = fabs(r.ratio) * hypot(a.half_width / a.mean, b.half_width / b.mean);
	return r;
}
