/* SPDX-License-Identifier: MIT */
/*
 * plot_internal -- what the plot files share: the context of one plot_results() call and the
 * functions each file gives the others (plot.c: the graphs and the entry point;
 * plot_table.c: the rows read back, indexed and aggregated; plot_gnuplot.c: the templates and
 * running gnuplot). Not for use outside framework/plot/.
 */
#ifndef IOMMULAB_PLOT_INTERNAL_H
#define IOMMULAB_PLOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "plot/plot.h"
#include "results/aggregate.h"
#include "results/csv.h"
#include "stats/stats.h"

struct plot_ctx {
	const char *dir;
	char *plots_dir;
	const char *template_dir;
	char *gnuplot; /* resolved program, NULL when not found */
	char *log_path;
	int log_fd;
	struct plot_report *rep;
	char *err;
	size_t err_len;
	int n_render_failed;
	char *first_graph; /* for the "render with" note */

	struct csv_table t;
	long c_plugin, c_status, c_x;
	long *other_axes;
	size_t n_other;
	const char *x_name;

	/* Distinct x values (numeric order when all are numbers) and lines, over ok rows. */
	char **xs;
	double *x_num;
	size_t n_x;
	bool x_numeric;
	char **lines; /* "plugin axis=value ..." */
	size_t n_lines;
	long *row_x, *row_line; /* per row; -1 for rows not plotted */

	/* The repeats of each (line, x): cell[line * n_x + x], NULL where none succeeded. */
	struct agg_table table;
	struct agg_groups groups;
	const struct agg_group **cell;
};

/* ---- plot.c ---- */

/* Put a message in c->err; returns ret. */
int plot_set_err(struct plot_ctx *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Add a path written to the report. 0 or -ENOMEM. */
int plot_report_add(struct plot_report *rep, const char *path);
/* Text that goes into a gnuplot argument list or data file: one line, no '"' or '|'. */
void plot_sanitize_label(char *s);

/* ---- plot_table.c ---- */

/* Distinct x values and lines over the ok rows, each row's place among them, the groups of
 * repeats. 0, -ENODATA when no trial succeeded, or -ENOMEM. */
int plot_index_rows(struct plot_ctx *c);
/* Mean and CI of column col over the ok rows of (line, x). Returns the number of values. */
size_t plot_aggregate(struct plot_ctx *c, long col, size_t line, size_t xi, double *vals,
		      struct mean_ci *out);
/* Whether any plotted row has a value in column col. */
bool plot_column_has_value(struct plot_ctx *c, long col);

/* ---- plot_gnuplot.c ---- */

/* The program to run: a path as given, or a bare name looked up in PATH; NULL if none. */
char *plot_find_program(const char *prog);
/* Write DIR/plots/<name>.gp and, with gnuplot, render <name>.png and <name>.svg. */
int plot_render(struct plot_ctx *c, const char *name, const char *template,
		const char *const args[6]);
/* Copy the templates next to the data so DIR/plots/ renders on any machine with gnuplot. */
int plot_copy_templates(struct plot_ctx *c);

#endif /* IOMMULAB_PLOT_INTERNAL_H */
