/* SPDX-License-Identifier: MIT */
/* stats -- mean and 95% confidence intervals over the repeats of a trial (see stats.h). */
#include "stats/stats.h"

#include <math.h>
#include <stdbool.h>

/* Two-sided 95% critical values t(0.975, df) for df = 1..30 (standard tables, 4 decimals). */
static const double t95_table[30] = {
	12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010,	 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796,	 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

/* Beyond the table: anchors interpolated linearly in 1/df, where t is nearly linear. */
static const struct {
	double df, t;
} t95_tail[] = {
	{ 30, 2.0423 },
	{ 40, 2.0211 },
	{ 60, 2.0003 },
	{ 120, 1.9799 },
};

#define T95_INF 1.9600 /* the normal quantile, the limit as df grows */

double stats_t95(size_t df)
{
	if (df == 0)
		return INFINITY; /* one sample says nothing about the spread */
	if (df <= 30)
		return t95_table[df - 1];

	double inv = 1.0 / (double)df;
	size_t n = sizeof(t95_tail) / sizeof(t95_tail[0]);

	for (size_t i = 0; i + 1 < n; i++) {
		if ((double)df <= t95_tail[i + 1].df) {
			double a = 1.0 / t95_tail[i].df, b = 1.0 / t95_tail[i + 1].df;

			return t95_tail[i].t +
			       (a - inv) / (a - b) * (t95_tail[i + 1].t - t95_tail[i].t);
		}
	}
	/* Between the last anchor and infinity (1/df = 0). */
	double a = 1.0 / t95_tail[n - 1].df;

	return t95_tail[n - 1].t + (a - inv) / a * (T95_INF - t95_tail[n - 1].t);
}

/* Mean and sample standard deviation: two-pass, which avoids cancellation for large, close
 * values (repeats are few). */
static void mean_sd(const double *x, size_t n, double *mean, double *sd)
{
	double sum = 0.0, ss = 0.0;

	for (size_t i = 0; i < n; i++)
		sum += x[i];
	*mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

static struct mean_ci no_interval(double mean, size_t n)
{
	return (struct mean_ci){ .mean = mean,
				 .half_width = NAN,
				 .n = n,
				 .low = NAN,
				 .high = NAN,
				 .method = STATS_CI_NONE };
}

struct mean_ci stats_mean_ci(const double *x, size_t n)
{
	double mean, sd;

	if (!n)
		return no_interval(0.0, 0);
	mean_sd(x, n, &mean, &sd);
	if (n < 2)
		return no_interval(mean, n);

	double hw = stats_t95(n - 1) * sd / sqrt((double)n);

	return (struct mean_ci){ .mean = mean,
				 .half_width = hw,
				 .n = n,
				 .low = mean - hw,
				 .high = mean + hw,
				 .method = STATS_CI_T };
}

struct mean_ci stats_mean_ci_nonneg(const double *x, size_t n)
{
	struct mean_ci r = stats_mean_ci(x, n);
	bool positive = true;

	if (r.n < 2)
		return r;
	for (size_t i = 0; i < n; i++)
		positive &= x[i] > 0;
	if (!positive) {
		if (r.low < 0) {
			r.low = 0;
			r.half_width = (r.high - r.low) / 2;
			r.method = STATS_CI_T_CLAMPED;
		}
		return r;
	}

	double lmean = 0.0, lss = 0.0;

	for (size_t i = 0; i < n; i++)
		lmean += log(x[i]);
	lmean /= (double)n;
	for (size_t i = 0; i < n; i++)
		lss += (log(x[i]) - lmean) * (log(x[i]) - lmean);

	double lhw = stats_t95(n - 1) * sqrt(lss / (double)(n - 1)) / sqrt((double)n);

	r.low = exp(lmean - lhw);
	r.high = exp(lmean + lhw);
	r.half_width = (r.high - r.low) / 2;
	r.method = STATS_CI_LOG_T;
	return r;
}

const char *stats_ci_method_name(enum stats_ci_method m)
{
	switch (m) {
	case STATS_CI_T:
		return "student-t";
	case STATS_CI_LOG_T:
		return "log-student-t";
	case STATS_CI_T_CLAMPED:
		return "student-t-clamped-at-0";
	default:
		return "none";
	}
}
