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
	unsigned flags;	   /* PLOT_ALL */

	/* Every graph's calls, drawn by one gnuplot process at the end (plot_render_all). */
	FILE *batch;
	char *batch_text;
	size_t batch_len;
	char **pending; /* the graphs in the batch, by name */
	size_t n_pending;

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
	/* Plugins in the order they first appear in trials.csv, any status (the scenario's
	 * order: every plugin runs at the first point): a plugin's place gives its colour. */
	char **plugins;
	size_t n_plugins;
	size_t *line_plugin;	/* per line: its plugin's place in plugins */
	size_t *line_variant;	/* per line: how many lines of the same plugin come before it */
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
/* Add a graph (name, title) to the report. 0 or -ENOMEM. */
int plot_report_add_graph(struct plot_report *rep, const char *name, const char *title);
/* Add a path written to the report. 0 or -ENOMEM. */
int plot_report_add(struct plot_report *rep, const char *path);
/* Text that goes into a gnuplot argument list or data file: one line, no '"' or '|'. */
void plot_sanitize_label(char *s);

/* How a line is drawn: gnuplot linetype (the colour), pointtype and dashtype. */
struct plot_style {
	int lt, pt, dt;
};

/*
 * The style of a line of plugin number `plugin` (0-based, the run's plugin order), the
 * variant-th line of that plugin (other sweep axes), second = the second series of a pair
 * (p99 after p50): the same colour and marker shape for a plugin in every graph of a run,
 * open markers and a dash for the second series, other dashes for the variants. Past 8
 * plugins the colours repeat with another marker.
 */
void plot_style_of(size_t plugin, size_t variant, bool second, struct plot_style *s);

/* ---- plot_table.c ---- */

/* Distinct x values and lines over the ok rows, each row's place among them, the groups of
 * repeats. 0, -ENODATA when no trial succeeded, or -ENOMEM. */
int plot_index_rows(struct plot_ctx *c);
/* Mean and CI of column col over the ok rows of (line, x). Returns the number of values. */
size_t plot_aggregate(struct plot_ctx *c, long col, size_t line, size_t xi, double *vals,
		      struct mean_ci *out);
/* Whether any plotted row has a value in column col. */
bool plot_column_has_value(struct plot_ctx *c, long col);
/* Whether every value of column col in the plotted rows is zero (or empty). */
bool plot_column_all_zero(struct plot_ctx *c, long col);

/* ---- plot_gnuplot.c ---- */

/* The program to run: a path as given, or a bare name looked up in PATH; NULL if none. */
char *plot_find_program(const char *prog);
/*
 * Write DIR/plots/<name>.gp and, with gnuplot, queue <name>.png and <name>.svg for
 * plot_render_all. args: TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS STYLES (the template's
 * arguments after DATA and OUT; the terminal is added to FLAGS).
 */
int plot_render(struct plot_ctx *c, const char *name, const char *template,
		const char *const args[7]);
/* Write DIR/plots/render-all.gp and draw every queued graph with one gnuplot process. */
int plot_render_all(struct plot_ctx *c);
/* Copy the templates next to the data so DIR/plots/ renders on any machine with gnuplot. */
int plot_copy_templates(struct plot_ctx *c);

#endif /* IOMMULAB_PLOT_INTERNAL_H */
