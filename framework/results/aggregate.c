/* SPDX-License-Identifier: MIT */
/* aggregate -- grouping trials.csv rows into repeats and their mean and 95% CI (aggregate.h). */
#include "results/aggregate.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/csv.h"

bool agg_value(const char *s, double *out)
{
	char *end;

	if (!s || !*s)
		return false;
	*out = strtod(s, &end);
	return !*end && isfinite(*out);
}

bool agg_row_ok(const struct agg_table *t, size_t i)
{
	const char *s = t->rows[i][t->c_status];

	/* A noisy trial measured what it was asked to; the host disturbed it, which the
	 * group's n_noisy and the trial's error field say. */
	return s && (!strcmp(s, "ok") || !strcmp(s, "noisy"));
}

struct trial_id {
	uint64_t trial;
	size_t line;
};

static int by_trial_then_line(const void *a, const void *b)
{
	const struct trial_id *x = a, *y = b;

	if (x->trial != y->trial)
		return x->trial < y->trial ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Every row's trial, point and repeat are whole numbers, and no trial number comes twice: a
 * run writes each trial once ("--resume" and "merge" keep it so), so a repeated one is two runs
 * pasted together or an edit, whose rows the aggregates would count twice.
 */
static int check_trial_ids(const struct csv_table *t, const char *path, char *err, size_t err_len)
{
	static const char *const names[] = { "trial", "point", "repeat" };
	struct trial_id *ids = t->n_rows ? calloc(t->n_rows, sizeof(*ids)) : NULL;
	long c_trial = csv_column(t, "trial");

	if (t->n_rows && !ids) {
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		long c = csv_column(t, names[k]);

		for (size_t i = 0; c >= 0 && i < t->n_rows; i++) {
			const char *s = t->rows[i][c];
			uint64_t v;

			if (!csv_whole_number(s, &v)) {
				snprintf(err, err_len,
					 "%s:%zu: %s '%.40s' is not a whole number (the file is "
					 "damaged)",
					 path, t->lines[i], names[k], s ? s : "");
				free(ids);
				return -EINVAL;
			}
			if (c == c_trial)
				ids[i] = (struct trial_id){ v, t->lines[i] };
		}
	}
	if (c_trial >= 0 && t->n_rows)
		qsort(ids, t->n_rows, sizeof(*ids), by_trial_then_line);
	for (size_t i = 1; c_trial >= 0 && i < t->n_rows; i++)
		if (ids[i].trial == ids[i - 1].trial) {
			snprintf(
				err, err_len,
				"%s:%zu: trial %" PRIu64 " again (first on line %zu): a run writes "
				"each trial once, so two runs' rows were put in one file or it was "
				"edited; keep one of them",
				path, ids[i].line, ids[i].trial, ids[i - 1].line);
			free(ids);
			return -EINVAL;
		}
	free(ids);
	return 0;
}

int agg_check_numbers(const struct csv_table *t, const char *path, char *err, size_t err_len)
{
	long c_status = csv_column(t, "status");
	double v;

	if (c_status < 0)
		return 0; /* not a trials table: its reader says what is missing */
	if (check_trial_ids(t, path, err, err_len))
		return -EINVAL;
	struct agg_table at = { (char *const *const *)t->rows, t->n_rows, (size_t)c_status };
	for (size_t c = 0; c < t->n_cols; c++) {
		bool numeric = false;

		for (size_t i = 0; i < t->n_rows && !numeric; i++)
			numeric = agg_row_ok(&at, i) && agg_value(t->rows[i][c], &v);
		for (size_t i = 0; numeric && i < t->n_rows; i++) {
			const char *s = t->rows[i][c];

			if (agg_row_ok(&at, i) && s && *s && !agg_value(s, &v)) {
				snprintf(err, err_len,
					 "%s:%zu: %s '%.40s' is not a number (a measured trial's "
					 "field, where the others hold numbers: the file is "
					 "damaged)",
					 path, t->lines[i], t->header[c], s);
				return -EINVAL;
			}
		}
	}
	return 0;
}

bool agg_row_noisy(const struct agg_table *t, size_t i)
{
	const char *s = t->rows[i][t->c_status];

	return s && !strcmp(s, "noisy");
}

static bool same_fields(const struct agg_table *t, size_t a, size_t b, const size_t *cols,
			size_t n_cols)
{
	for (size_t k = 0; k < n_cols; k++) {
		const char *x = t->rows[a][cols[k]], *y = t->rows[b][cols[k]];

		if (!x || !y || !*x || !*y || strcmp(x, y))
			return false;
	}
	return true;
}

void agg_key_columns(const struct agg_table *t, const size_t *cols, size_t n_cols, long *key)
{
	for (size_t i = 0; i < t->n_rows; i++) {
		key[i] = -1;
		for (size_t j = 0; j <= i; j++) {
			if (same_fields(t, j, i, cols, n_cols)) {
				key[i] = (long)j;
				break;
			}
		}
	}
}

int agg_group_by(const struct agg_table *t, const long *key, struct agg_groups *out)
{
	/* One index array for every group: a row is in at most one. */
	size_t *idx = malloc((t->n_rows + 1) * sizeof(*idx));
	bool *done = calloc(t->n_rows + 1, sizeof(*done));
	size_t used = 0;

	memset(out, 0, sizeof(*out));
	out->g = calloc(t->n_rows + 1, sizeof(*out->g));
	if (!idx || !done || !out->g) {
		free(idx);
		free(done);
		free(out->g);
		out->g = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_rows; i++) {
		if (done[i] || key[i] < 0)
			continue;
		struct agg_group *g = &out->g[out->n++];

		g->key = key[i];
		g->rows = idx + used;
		for (size_t j = i; j < t->n_rows; j++) {
			if (done[j] || key[j] != key[i])
				continue;
			done[j] = true;
			g->rows[g->n_rows++] = j;
			if (agg_row_ok(t, j))
				g->n_ok++;
			if (agg_row_noisy(t, j))
				g->n_noisy++;
		}
		used += g->n_rows;
	}
	free(done);
	if (!out->n)
		free(idx);
	return 0;
}

void agg_groups_free(struct agg_groups *g)
{
	if (!g)
		return;
	if (g->g && g->n)
		free(g->g[0].rows); /* the start of the shared index array */
	free(g->g);
	memset(g, 0, sizeof(*g));
}

struct mean_ci agg_mean_ci(const struct agg_table *t, const struct agg_group *g, size_t col,
			   double *scratch)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_rows; i++) {
		size_t r = g->rows[i];

		if (agg_row_ok(t, r) && agg_value(t->rows[r][col], &scratch[n]))
			n++;
	}
	return stats_mean_ci_nonneg(scratch, n);
}
