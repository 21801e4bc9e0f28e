/* SPDX-License-Identifier: MIT */
/*
 * plot_table -- the rows of trials.csv as a plot sees them: the distinct x values (numeric
 * order when all are numbers) and lines over the ok rows, and each (line, x)'s repeats as one
 * group of results/aggregate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot_internal.h"
#include "util/fs.h"

/* ---- the table: x values, lines and which rows count ---- */

static long find_index(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return (long)i;
	return -1;
}

static int push_str(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static char *line_label(struct plot_ctx *c, char **row)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	len = (size_t)snprintf(s, cap, "%s", row[c->c_plugin]);
	for (size_t i = 0; i < c->n_other; i++) {
		const char *name = c->t.header[c->other_axes[i]];
		const char *dot = strrchr(name, '.');
		char *part = util_asprintf(" %s=%s", dot ? dot + 1 : name, row[c->other_axes[i]]);

		if (!part) {
			free(s);
			return NULL;
		}
		if (len + strlen(part) + 1 > cap) {
			cap = len + strlen(part) + 256;
			char *ns = realloc(s, cap);

			if (!ns) {
				free(part);
				free(s);
				return NULL;
			}
			s = ns;
		}
		strcpy(s + len, part);
		len += strlen(part);
		free(part);
	}
	plot_sanitize_label(s);
	return s;
}

static int cmp_x(const void *a, const void *b, void *arg)
{
	const double *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	return (x[i] > x[j]) - (x[i] < x[j]);
}

/* The repeats of each (line, x) as one group of the shared aggregation. */
static int group_rows(struct plot_ctx *c)
{
	long *key = malloc((c->t.n_rows + 1) * sizeof(*key));
	int ret = -ENOMEM;

	c->table = (struct agg_table){ .rows = (char *const *const *)c->t.rows,
				       .n_rows = c->t.n_rows,
				       .c_status = (size_t)c->c_status };
	c->cell = calloc(c->n_lines * c->n_x + 1, sizeof(*c->cell));
	if (!key || !c->cell)
		goto out;
	for (size_t r = 0; r < c->t.n_rows; r++)
		key[r] = c->row_x[r] < 0 ? -1 : c->row_line[r] * (long)c->n_x + c->row_x[r];
	ret = agg_group_by(&c->table, key, &c->groups);
	for (size_t i = 0; !ret && i < c->groups.n; i++)
		c->cell[c->groups.g[i].key] = &c->groups.g[i];
out:
	free(key);
	return ret;
}

int plot_index_rows(struct plot_ctx *c)
{
	struct csv_table *t = &c->t;
	size_t n_ok = 0;

	c->row_x = malloc((t->n_rows + 1) * sizeof(long));
	c->row_line = malloc((t->n_rows + 1) * sizeof(long));
	if (!c->row_x || !c->row_line)
		return -ENOMEM;

	/* Every row, failed ones too: a plugin's colour must not depend on which trials passed. */
	for (size_t r = 0; r < t->n_rows; r++)
		if (find_index(c->plugins, c->n_plugins, t->rows[r][c->c_plugin]) < 0 &&
		    push_str(&c->plugins, &c->n_plugins, t->rows[r][c->c_plugin]))
			return -ENOMEM;

	for (size_t r = 0; r < t->n_rows; r++) {
		char **row = t->rows[r];

		c->row_x[r] = c->row_line[r] = -1;
		if (!agg_row_ok(&(struct agg_table){ .rows = (char *const *const *)t->rows,
						     .n_rows = t->n_rows,
						     .c_status = (size_t)c->c_status },
				r)) /* ok or noisy: measured, as the aggregation counts */
			continue;
		n_ok++;
		long xi = find_index(c->xs, c->n_x, row[c->c_x]);

		if (xi < 0) {
			if (push_str(&c->xs, &c->n_x, row[c->c_x]))
				return -ENOMEM;
			xi = (long)c->n_x - 1;
		}
		char *label = line_label(c, row);

		if (!label)
			return -ENOMEM;
		long li = find_index(c->lines, c->n_lines, label);

		if (li < 0) {
			if (push_str(&c->lines, &c->n_lines, label)) {
				free(label);
				return -ENOMEM;
			}
			li = (long)c->n_lines - 1;
			size_t *lp = realloc(c->line_plugin, c->n_lines * sizeof(*lp));

			if (lp)
				c->line_plugin = lp;
			size_t *lv = lp ? realloc(c->line_variant, c->n_lines * sizeof(*lv)) : NULL;

			if (!lv) {
				free(label);
				return -ENOMEM;
			}
			c->line_variant = lv;
			lp[li] = (size_t)find_index(c->plugins, c->n_plugins, row[c->c_plugin]);
			lv[li] = 0;
			for (long k = 0; k < li; k++)
				lv[li] += lp[k] == lp[li];
		}
		free(label);
		c->row_x[r] = xi;
		c->row_line[r] = li;
	}

	/* Numeric x (CPUs, cmds_per_sync): sort by value; otherwise keep first-seen order. */
	c->x_num = calloc(c->n_x + 1, sizeof(double));
	if (!c->x_num)
		return -ENOMEM;
	c->x_numeric = true;
	for (size_t i = 0; i < c->n_x; i++)
		if (!agg_value(c->xs[i], &c->x_num[i]))
			c->x_numeric = false;
	if (c->x_numeric && c->n_x > 1) {
		size_t *order = malloc(c->n_x * sizeof(*order));
		long *rank = malloc(c->n_x * sizeof(*rank));
		char **xs = malloc(c->n_x * sizeof(*xs));
		double *xn = malloc(c->n_x * sizeof(*xn));

		if (!order || !rank || !xs || !xn) {
			free(order);
			free(rank);
			free(xs);
			free(xn);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->n_x; i++)
			order[i] = i;
		qsort_r(order, c->n_x, sizeof(*order), cmp_x, c->x_num);
		for (size_t i = 0; i < c->n_x; i++) {
			rank[order[i]] = (long)i;
			xs[i] = c->xs[order[i]];
			xn[i] = c->x_num[order[i]];
		}
		for (size_t r = 0; r < t->n_rows; r++)
			if (c->row_x[r] >= 0)
				c->row_x[r] = rank[c->row_x[r]];
		free(c->xs);
		free(c->x_num);
		c->xs = xs;
		c->x_num = xn;
		free(order);
		free(rank);
	}
	return n_ok ? group_rows(c) : -ENODATA;
}

/* Mean and CI of column col over the ok rows of (line, x). Returns the number of values. */
size_t plot_aggregate(struct plot_ctx *c, long col, size_t line, size_t xi, double *vals,
		      struct mean_ci *out)
{
	const struct agg_group *g = c->cell[line * c->n_x + xi];

	*out = g ? agg_mean_ci(&c->table, g, (size_t)col, vals) : stats_mean_ci(vals, 0);
	return out->n;
}

bool plot_column_has_value(struct plot_ctx *c, long col)
{
	for (size_t r = 0; r < c->t.n_rows; r++)
		if (c->row_x[r] >= 0 && c->t.rows[r][col][0])
			return true;
	return false;
}

bool plot_column_all_zero(struct plot_ctx *c, long col)
{
	for (size_t r = 0; r < c->t.n_rows; r++) {
		double v;

		if (c->row_x[r] >= 0 && agg_value(c->t.rows[r][col], &v) && v != 0)
			return false;
	}
	return true;
}
