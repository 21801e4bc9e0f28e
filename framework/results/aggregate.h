/* SPDX-License-Identifier: MIT */
/*
 * aggregate -- repeats of a trial folded into one value: the rows of trials.csv grouped (by
 * sweep point and plugin for summary.json, by x value and line for a graph) and each group's
 * mean and 95% CI of a column over its measured rows. Every column of trials.csv is a
 * quantity that cannot be negative (a rate, a latency, a count), so the interval is
 * stats_mean_ci_nonneg's: Student's t on the logarithms (it never reaches below zero), no
 * interval from one repeat. The one place where repeats are aggregated: summary.json, the
 * plots, the summary table and `compare` read it.
 *
 * Rows are text, as trials.csv holds them: rows[i][c], NULL or "" for an empty field; a row
 * counts when its status field is "ok" or "noisy" (measured, though the host disturbed it),
 * a value when it parses whole as a finite number. "failed" and "incomplete" rows do not.
 */
#ifndef IOMMULAB_AGGREGATE_H
#define IOMMULAB_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>

#include "stats/stats.h"

struct agg_table {
	char *const *const *rows;
	size_t n_rows;
	size_t c_status;
};

/* One group of repeats: row indices in row order. */
struct agg_group {
	long key;
	size_t *rows;
	size_t n_rows;
	size_t n_ok;	/* of them, measured: status "ok" or "noisy" */
	size_t n_noisy; /* of those, "noisy" */
};

struct agg_groups {
	struct agg_group *g;
	size_t n;
};

/* Whether a field holds a number (whole, finite); its value in *out. */
bool agg_value(const char *s, double *out);

/*
 * A trials.csv as read (csv.h) holds what a run writes: in every column where some measured
 * row has a number, every measured row's field is a number or empty ("nan", "1e999" or
 * "fast" there is damage, which the aggregates would otherwise read as "no value"); every
 * row's trial, point and repeat is a whole number, and no trial number comes twice. 0, or
 * -EINVAL with "PATH:LINE: COLUMN 'TEXT' is not a number" (or the like) in err.
 */
struct csv_table;
int agg_check_numbers(const struct csv_table *t, const char *path, char *err, size_t err_len);

/* Whether row i was measured: its status is "ok" or "noisy". */
bool agg_row_ok(const struct agg_table *t, size_t i);

/* Whether row i's status is "noisy". */
bool agg_row_noisy(const struct agg_table *t, size_t i);

/*
 * Group the rows by key[i] (a row with key -1 is in no group): one group per distinct key, in
 * the order of each key's first row. 0 or -ENOMEM. Free with agg_groups_free.
 */
int agg_group_by(const struct agg_table *t, const long *key, struct agg_groups *out);

/*
 * key[i] for agg_group_by from columns: rows whose fields in cols[0..n_cols) all hold the same
 * non-empty text share a key (the index of the first of them); a row with an empty key field
 * gets -1. O(rows^2) comparisons, which for a run's few thousand rows is nothing.
 */
void agg_key_columns(const struct agg_table *t, const size_t *cols, size_t n_cols, long *key);

void agg_groups_free(struct agg_groups *g);

/*
 * Mean and 95% CI (stats_mean_ci_nonneg) of column col over the measured rows of g that hold a
 * value there (ci.n of them). scratch: room for g->n_rows doubles.
 */
struct mean_ci agg_mean_ci(const struct agg_table *t, const struct agg_group *g, size_t col,
			   double *scratch);

#endif /* IOMMULAB_AGGREGATE_H */
