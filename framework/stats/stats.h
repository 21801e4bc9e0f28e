/* SPDX-License-Identifier: MIT */
/* stats -- aggregates across repeats: mean and 95% confidence interval (Student's t). */
#ifndef IOMMULAB_STATS_H
#define IOMMULAB_STATS_H

#include <stddef.h>

struct mean_ci {
	double mean;
	double half_width; /* the 95% CI is mean +/- half_width; 0 when n < 2 */
	size_t n;
};

/* Mean and 95% CI half-width of x[0..n) (t distribution with n-1 degrees of freedom). */
struct mean_ci stats_mean_ci(const double *x, size_t n);

/* Two-sided 95% critical value of Student's t with df degrees of freedom (df >= 1). */
double stats_t95(size_t df);

#endif /* IOMMULAB_STATS_H */
