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
		cr_assert(stats_t95(df + 1) <= stats_t95(df) && stats_t95(df) > 1.95996,
			  "df %zu", df);
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
	cr_assert_eq(ci.half_width, 0.0, "no interval from one repeat");
	ci = stats_mean_ci(NULL, 0);
	cr_assert_eq(ci.n, 0);
	cr_assert_eq(ci.mean, 0.0);

	const double same[] = { 1e9, 1e9, 1e9 };
	ci = stats_mean_ci(same, 3);
	cr_assert_float_eq(ci.mean, 1e9, 1e-3);
	cr_assert_eq(ci.half_width, 0.0, "identical repeats have no spread");
}
