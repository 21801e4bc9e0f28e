/* SPDX-License-Identifier: MIT */
/* stats -- mean and Student's t 95% confidence interval over the repeats of a trial. */
#include "stats/stats.h"

#include <math.h>

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

struct mean_ci stats_mean_ci(const double *x, size_t n)
{
	struct mean_ci r = { 0.0, 0.0, n };

	if (!n)
		return r;
	/* Two-pass: repeats are few, and this avoids cancellation for large, close values. */
	double sum = 0.0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	r.mean = sum / (double)n;
	if (n < 2)
		return r;

	double ss = 0.0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - r.mean) * (x[i] - r.mean);
	double sd = sqrt(ss / (double)(n - 1));

	r.half_width = stats_t95(n - 1) * sd / sqrt((double)n);
	return r;
}
