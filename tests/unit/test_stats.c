/* SPDX-License-Identifier: MIT */
/* Unit tests of the repeat statistics: Student's t critical values and 95% CIs. */
#include <criterion/criterion.h>

#include <math.h>

#include "stats/stats.h"

Test(stats, t95_table_values, .timeout = 5)
{
	/* Reference values of t(0.975, df) from any statistics table. */
	cr_assert_float_eq(stats_t95(1), 12.706, 1e-3);
	cr_assert_float_eq(stats_t95(2), 4.303, 1e-3);
	cr_assert_float_eq(stats_t95(4), 2.776, 1e-3);
	cr_assert_float_eq(stats_t95(9), 2.262, 1e-3);
	cr_assert_float_eq(stats_t95(30), 2.042, 1e-3);
}

Test(stats, t95_interpolates_and_tends_to_normal, .timeout = 5)
{
	cr_assert_float_eq(stats_t95(40), 2.021, 1e-3);
	cr_assert_float_eq(stats_t95(50), 2.009, 1e-3);
	cr_assert_float_eq(stats_t95(60), 2.000, 1e-3);
	cr_assert_float_eq(stats_t95(100), 1.984, 1e-3);
	cr_assert_float_eq(stats_t95(120), 1.980, 1e-3);
	cr_assert_float_eq(stats_t95(1000), 1.962, 1e-3);
	cr_assert_float_eq(stats_t95(1000000), 1.960, 1e-3);
	/* Monotonically decreasing towards 1.96 everywhere. */
	for (size_t df = 1; df < 2000; df++)
		cr_assert(stats_t95(df + 1) <= stats_t95(df) && stats_t95(df) > 1.95996, "df %zu",
			  df);
}

Test(stats, mean_ci_known_values, .timeout = 5)
{
	/* mean 5, sample sd sqrt(2.5), n 5: half width 2.776445 * 1.5811388 / 2.2360680. */
	const double x[] = { 3, 4, 5, 6, 7 };
	struct mean_ci ci = stats_mean_ci(x, 5);

	cr_assert_eq(ci.n, 5);
	cr_assert_float_eq(ci.mean, 5.0, 1e-12);
	cr_assert_float_eq(ci.half_width, 1.96320, 1e-4);

	/* Two values 10 and 12: sd sqrt(2), half width 12.7062 * 1.41421 / 1.41421. */
	const double y[] = { 10, 12 };
	ci = stats_mean_ci(y, 2);
	cr_assert_float_eq(ci.mean, 11.0, 1e-12);
	cr_assert_float_eq(ci.half_width, 12.7062, 1e-3);
}

Test(stats, mean_ci_degenerate, .timeout = 5)
{
	const double one = 42.0;
	struct mean_ci ci = stats_mean_ci(&one, 1);

	cr_assert_float_eq(ci.mean, 42.0, 1e-12);
	cr_assert(isnan(ci.half_width) && isnan(ci.low) && isnan(ci.high),
		  "one repeat: the interval is unknown, not 0");
	cr_assert_eq(ci.method, STATS_CI_NONE);
	ci = stats_mean_ci(NULL, 0);
	cr_assert_eq(ci.n, 0);
	cr_assert_eq(ci.mean, 0.0);

	const double same[] = { 1e9, 1e9, 1e9 };
	ci = stats_mean_ci(same, 3);
	cr_assert_float_eq(ci.mean, 1e9, 1e-3);
	cr_assert_eq(ci.half_width, 0.0, "identical repeats have no spread");
}

Test(stats, nonneg_ci_is_log_t_and_never_below_zero, .timeout = 5)
{
	/* The two repeats: 81,848 and 498,309 ops/s. Student's t gave a low bound far
	 * below 0; on ln(x): mean 12.2131, sd 1.27752, half width 12.7062 * sd / sqrt(2). */
	const double x[] = { 81848, 498309 };
	struct mean_ci t = stats_mean_ci(x, 2), ci = stats_mean_ci_nonneg(x, 2);

	cr_assert(t.low < 0, "Student's t reaches below zero here");
	cr_assert_eq(ci.method, STATS_CI_LOG_T);
	cr_assert_float_eq(ci.mean, 290078.5, 1e-6, "the mean is still the arithmetic one");
	double lm = (log(81848.0) + log(498309.0)) / 2,
	       lsd = fabs(log(498309.0 / 81848.0)) / sqrt(2.0);
	double lhw = 12.7062 * lsd / sqrt(2.0);
	cr_assert_float_eq(ci.low, exp(lm - lhw), 1e-9 * exp(lm - lhw));
	cr_assert_float_eq(ci.high, exp(lm + lhw), 1e-9 * exp(lm + lhw));
	cr_assert(ci.low > 0 && ci.low < ci.mean && ci.high > ci.mean);
	cr_assert_float_eq(ci.half_width, (ci.high - ci.low) / 2, 1e-6);
	cr_assert_str_eq(stats_ci_method_name(ci.method), "log-student-t");

	/* Close repeats: the log interval is Student's to the first order. */
	const double y[] = { 1000, 1010, 990, 1005, 995 };
	struct mean_ci ty = stats_mean_ci(y, 5), ly = stats_mean_ci_nonneg(y, 5);
	cr_assert_float_eq(ly.low, ty.low, 0.05, "%f vs %f", ly.low, ty.low);
	cr_assert_float_eq(ly.high, ty.high, 0.05, "%f vs %f", ly.high, ty.high);

	/* A zero among the values: no logarithm; Student's, clamped at 0. */
	const double z[] = { 0, 100 };
	struct mean_ci cz = stats_mean_ci_nonneg(z, 2);
	cr_assert_eq(cz.method, STATS_CI_T_CLAMPED);
	cr_assert_eq(cz.low, 0.0);
	cr_assert_float_eq(cz.high, 50 + 12.7062 * 50, 1e-2);

	/* One value: none, whichever method. */
	cz = stats_mean_ci_nonneg(z + 1, 1);
	cr_assert_eq(cz.method, STATS_CI_NONE);
	cr_assert(isnan(cz.low));
	cr_assert_str_eq(stats_ci_method_name(cz.method), "none");
}

/* ---- compare: Mann-Whitney U and the ratio of means ----------------------------------- */

#include <errno.h>

#include "stats/compare.h"

/*
 * The example of the scipy.stats.mannwhitneyu documentation (ages of male and female
 * authors): scipy prints U1 = 17.0, exact p = 0.1111111111111111 and, with
 * method="asymptotic", p = 0.11134688653314041. Rechecked here by enumerating all
 * C(9, 4) = 126 splits (7 have U >= 17: p = 2 * 7 / 126).
 */
static const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };

Test(stats, mwu_exact_scipy_example, .timeout = 5)
{
	struct stats_mwu r;

	cr_assert_eq(stats_mann_whitney(males, 5, females, 4, &r), 0);
	cr_assert_eq(r.method, STATS_MWU_EXACT);
	cr_assert_float_eq(r.u, 17.0, 1e-12);
	cr_assert_float_eq(r.p, 0.1111111111111111, 1e-12);
	/* Swapping the samples gives the other U and the same two-sided p. */
	cr_assert_eq(stats_mann_whitney(females, 4, males, 5, &r), 0);
	cr_assert_float_eq(r.u, 3.0, 1e-12);
	cr_assert_float_eq(r.p, 0.1111111111111111, 1e-12);
}

Test(stats, mwu_normal_scipy_example, .timeout = 5)
{
	struct stats_mwu r;

	cr_assert_eq(stats_mann_whitney_normal(males, 5, females, 4, &r), 0);
	cr_assert_eq(r.method, STATS_MWU_NORMAL);
	cr_assert_float_eq(r.p, 0.11134688653314041, 1e-12);
	cr_assert_float_eq(r.z, 1.5921683328090657, 1e-12);
}

Test(stats, mwu_exact_enumerated, .timeout = 5)
{
	/* Reference p values from enumerating every split of the pooled values (Python
	 * itertools.combinations, p = 2 * #(U >= max(U, mn - U)) / C(m + n, m)). */
	const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	const double c[] = { 1.0, 2.5, 3.1, 4.2 }, d[] = { 1.5, 2.7, 3.3, 4.4, 5.0, 0.5 };
	struct stats_mwu r;

	/* Complete separation of 3 against 3: 2 of the 20 splits are as extreme. */
	cr_assert_eq(stats_mann_whitney(a, 3, b, 3, &r), 0);
	cr_assert_float_eq(r.u, 0.0, 1e-12);
	cr_assert_float_eq(r.p, 0.1, 1e-12);
	cr_assert_eq(stats_mann_whitney(c, 4, d, 6, &r), 0);
	cr_assert_eq(r.method, STATS_MWU_EXACT);
	cr_assert_float_eq(r.u, 10.0, 1e-12);
	cr_assert_float_eq(r.p, 0.7619047619047619, 1e-12);
}

Test(stats, mwu_ties_use_normal_with_tie_correction, .timeout = 5)
{
	/* Ties (2, 2; 5, 5; 6, 6) rule out the exact distribution. Reference: U = 2, tie term
	 * sum(t^3 - t) = 18, var = 36/12 * (13 - 18/132), z = (34 - 18 - 0.5) / sqrt(var) =
	 * 2.4951071082707506, p = erfc(z / sqrt(2)) = 0.012591911490379715 (Python math). */
	const double a[] = { 3, 4, 2, 6, 2, 5 }, b[] = { 9, 7, 5, 10, 6, 8 };
	struct stats_mwu r;

	cr_assert_eq(stats_mann_whitney(a, 6, b, 6, &r), 0);
	cr_assert_eq(r.method, STATS_MWU_NORMAL);
	cr_assert_float_eq(r.u, 2.0, 1e-12);
	cr_assert_float_eq(r.z, 2.4951071082707506, 1e-12);
	cr_assert_float_eq(r.p, 0.012591911490379715, 1e-12);
}

Test(stats, mwu_large_samples_use_normal, .timeout = 5)
{
	/* 12 against 10, both above the exact limit; reference computed as above: U = 18. */
	const double a[] = { 11.288, 11.449, 10.066, 9.235,  8.908,  10.031,
			     8.978,  8.563,  10.199, 10.133, 10.546, 9.086 };
	const double b[] = { 11.005, 10.935, 9.494,  11.538, 11.321,
			     13.389, 11.203, 10.855, 12.233, 11.199 };
	struct stats_mwu r;

	cr_assert_eq(stats_mann_whitney(a, 12, b, 10, &r), 0);
	cr_assert_eq(r.method, STATS_MWU_NORMAL);
	cr_assert_float_eq(r.u, 18.0, 1e-12);
	cr_assert_float_eq(r.p, 0.006211000298815921, 1e-12);
}

Test(stats, mwu_refuses_too_few_and_all_tied_is_p1, .timeout = 5)
{
	const double one[] = { 5 }, two[] = { 5, 5 }, three[] = { 5, 5, 5 };
	const double bad[] = { 1, NAN };
	struct stats_mwu r;

	cr_assert_eq(stats_mann_whitney(one, 1, three, 3, &r), -EINVAL);
	cr_assert_eq(stats_mann_whitney(three, 3, one, 1, &r), -EINVAL);
	cr_assert_eq(stats_mann_whitney(bad, 2, three, 3, &r), -EINVAL);
	cr_assert_eq(stats_mann_whitney(two, 2, three, 3, &r), 0);
	cr_assert(r.all_tied);
	cr_assert_float_eq(r.p, 1.0, 1e-12);
}

Test(stats, mwu_exact_matches_normal_for_many_values, .timeout = 5)
{
	/* 8 against 400 with no ties: exact; the normal approximation must be close there. */
	static double a[8], b[400];
	struct stats_mwu e, n;

	for (size_t i = 0; i < 8; i++)
		a[i] = 3.5 + 50.0 * (double)i;
	for (size_t i = 0; i < 400; i++)
		b[i] = (double)i;
	cr_assert_eq(stats_mann_whitney(a, 8, b, 400, &e), 0);
	cr_assert_eq(e.method, STATS_MWU_EXACT);
	cr_assert_eq(stats_mann_whitney_normal(a, 8, b, 400, &n), 0);
	cr_assert(fabs(e.p - n.p) < 0.02, "exact %g normal %g", e.p, n.p);
	cr_assert(e.p > 0 && e.p <= 1);
}

Test(stats, ratio_ci_propagates_relative_errors, .timeout = 5)
{
	struct mean_ci a = { .mean = 100, .half_width = 3, .n = 5 };
	struct mean_ci b = { .mean = 150, .half_width = 6, .n = 5 };
	struct stats_ratio r = stats_ratio_ci(a, b);

	/* 1.5 * sqrt(0.03^2 + 0.04^2) = 1.5 * 0.05 */
	cr_assert_float_eq(r.ratio, 1.5, 1e-12);
	cr_assert_float_eq(r.half_width, 0.075, 1e-12);

	b.n = 1;
	r = stats_ratio_ci(a, b);
	cr_assert_float_eq(r.ratio, 1.5, 1e-12);
	cr_assert(isnan(r.half_width), "one repeat: the interval is unknown, not 0");
	a.mean = 0;
	cr_assert(isnan(stats_ratio_ci(a, b).ratio));
}
