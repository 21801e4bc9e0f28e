/* SPDX-License-Identifier: MIT */
/*
 * stats -- aggregates across repeats: the mean and a 95% confidence interval, either Student's
 * t on the values (symmetric; it can reach below zero for a spread-out positive quantity) or
 * Student's t on their logarithms, taken back with exp (the interval of a positive quantity:
 * it never reaches zero, and it is as wide in ratio as the repeats' spread). With one repeat
 * there is no interval: its bounds are NaN ("unknown"), never 0.
 */
#ifndef IOMMULAB_STATS_H
#define IOMMULAB_STATS_H

#include <stddef.h>

enum stats_ci_method {
	STATS_CI_NONE = 0,  /* n < 2: no interval */
	STATS_CI_T,	    /* Student's t on the values */
	STATS_CI_LOG_T,	    /* Student's t on ln(x), exp back: x all > 0 */
	STATS_CI_T_CLAMPED, /* Student's t, the low bound raised to 0 (x >= 0 with a zero) */
};

struct mean_ci {
	double mean;	   /* the arithmetic mean */
	double half_width; /* (high - low) / 2; NaN when n < 2 */
	size_t n;
	double low, high; /* the 95% interval; NaN when n < 2 */
	enum stats_ci_method method;
};

/* Mean and 95% CI of x[0..n) (t distribution with n-1 degrees of freedom): STATS_CI_T. */
struct mean_ci stats_mean_ci(const double *x, size_t n);

/*
 * The same for a quantity that cannot be negative (a rate, a latency, a count): the interval
 * of ln(x) when every value is above 0 (STATS_CI_LOG_T; it holds the geometric mean, and for
 * repeats within a few percent of each other it is Student's interval to the first order),
 * else Student's with its low bound raised to 0 (STATS_CI_T_CLAMPED, or STATS_CI_T when
 * that bound was not below 0). x must hold no negative value.
 */
struct mean_ci stats_mean_ci_nonneg(const double *x, size_t n);

/* The method's name as summary.json states it: "none", "student-t", "log-student-t", ... */
const char *stats_ci_method_name(enum stats_ci_method m);

/* Two-sided 95% critical value of Student's t with df degrees of freedom (df >= 1). */
double stats_t95(size_t df);

#endif /* IOMMULAB_STATS_H */
