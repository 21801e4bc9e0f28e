/* SPDX-License-Identifier: MIT */
/*
 * plot -- read a results directory's trials.csv back, aggregate the repeats of each (x value,
 * line) into a mean and 95% CI (results/aggregate.h, as summary.json does), and write gnuplot data,
 * wrapper scripts and PNG/SVG graphs under DIR/plots/ (see plot.h). trials.csv is read by column
 * name, so the same code plots any run: cmdq, iova or dma, with any sweep axes, metrics, phases and
 * counters.
 */
#include "plot/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot/plot_internal.h"
#include "util/fs.h"

int plot_set_err(struct plot_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->err_len, fmt, ap);
	va_end(ap);
	return ret;
}

int plot_report_add(struct plot_report *rep, const char *path)
{
	char **w = realloc(rep->written, (rep->n_written + 1) * sizeof(*w));

	if (!w)
		return -ENOMEM;
	rep->written = w;
	w[rep->n_written] = strdup(path);
	if (!w[rep->n_written])
		return -ENOMEM;
	rep->n_written++;
	return 0;
}

/* File names come from column names in the CSV: keep them to a safe alphabet. */
static void sanitize_name(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			*s = '_';
}

/* Text that goes into a gnuplot argument list or data file: one line, no '"' or '|'. */
void plot_sanitize_label(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '|')
			*s = *s == '"' ? '\'' : (*s == '|' ? '/' : ' ');
}

/* ---- line graphs ---- */

struct series {
	long col;	    /* the CSV column aggregated */
	const char *suffix; /* appended to the line label in the key ("p50"), or NULL */
};

/*
 * One graph: for each line and each series, a data block of x mean ci_low ci_high xtic.
 * With several series per line (p50 and p99), blocks are paired by line.
 */
static int graph_lines(struct plot_ctx *c, const char *name, const char *title,
		       const char *subtitle, const char *ylabel, const struct series *s,
		       size_t n_series)
{
	size_t n_blocks = c->n_lines * n_series;
	struct mean_ci *ci = calloc(n_blocks * c->n_x + 1, sizeof(*ci));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	bool *have_line = calloc(c->n_lines + 1, sizeof(bool));
	char *dat = util_asprintf("%s/%s.dat", c->plots_dir, name);
	char *labels = NULL, *xlabel = NULL, flags[64] = "";
	size_t labels_len = 0;
	FILE *f = NULL, *lf = NULL;
	int ret = -ENOMEM;
	double ymin = INFINITY, ymax = -INFINITY;
	bool any = false, points = c->n_x == 1;

	if (!ci || !vals || !have_line || !dat)
		goto out;

	for (size_t l = 0; l < c->n_lines; l++)
		for (size_t k = 0; k < n_series; k++)
			for (size_t x = 0; x < c->n_x; x++) {
				struct mean_ci *m = &ci[(l * n_series + k) * c->n_x + x];

				if (!plot_aggregate(c, s[k].col, l, x, vals, m))
					continue;
				have_line[l] = any = true;
				if (m->mean > 0 && m->mean < ymin)
					ymin = m->mean;
				if (m->mean > ymax)
					ymax = m->mean;
			}
	if (!any) {
		ret = 0; /* nothing measured: no graph rather than an empty one */
		goto out;
	}

	bool logy = ymin > 0 && isfinite(ymin) && ymax / ymin > 20;
	bool logx = !points && c->x_numeric && c->x_num[0] > 0 &&
		    c->x_num[c->n_x - 1] / c->x_num[0] > 16;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	if (!f || !lf) {
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	size_t written = 0, line_no = 0;

	for (size_t l = 0; l < c->n_lines; l++) {
		if (!have_line[l])
			continue;
		line_no++;
		for (size_t k = 0; k < n_series; k++) {
			if (written++) {
				fputs("\n\n", f);
				fputc('|', lf);
			}
			fprintf(f, "# %s: %s%s%s\n", name, c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			fprintf(f, "# x mean ci_low ci_high xtic\n");
			fprintf(lf, "%s%s%s", c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			bool rows = false;

			for (size_t x = 0; x < c->n_x; x++) {
				struct mean_ci *m = &ci[(l * n_series + k) * c->n_x + x];

				if (!m->n)
					continue;
				double lo = m->n > 1 ? m->low : m->mean,
				       hi = m->n > 1 ? m->high : m->mean;

				/* A log axis cannot show a bar below zero: stop it at the mean. */
				if (logy && lo <= 0)
					lo = m->mean;
				if (points)
					fprintf(f, "%zu", line_no);
				else if (c->x_numeric)
					fprintf(f, "%.10g", c->x_num[x]);
				else
					fprintf(f, "%zu", x + 1);
				fprintf(f, " %.10g %.10g %.10g \"%s\"\n", m->mean, lo, hi,
					points ? c->lines[l] : c->xs[x]);
				rows = true;
			}
			/* gnuplot needs at least one point per index it is asked for. */
			if (!rows)
				fputs("? ? ? ? \"\"\n", f);
		}
	}
	if (fclose(lf)) {
		lf = NULL;
		goto out;
	}
	lf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;

	snprintf(flags, sizeof(flags), "%s%s%s%s%s%s", logx ? "logx " : "", logy ? "logy " : "",
		 points ? "points catx " : "", !points && !c->x_numeric ? "catx " : "",
		 !points && c->n_x <= 12 ? "datatics " : "", n_series == 2 ? "paired" : "");
	if (points)
		xlabel = util_asprintf("%s = %s", c->x_name, c->xs[0]);
	else
		xlabel = strdup(c->x_name);
	if (!xlabel)
		goto out;
	plot_sanitize_label(xlabel);

	const char *args[6] = { title, subtitle, xlabel, ylabel, labels, flags };

	ret = plot_render(c, name, "lines.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	free(labels);
	free(xlabel);
	free(ci);
	free(vals);
	free(have_line);
	free(dat);
	return ret;
}

static const char *subtitle_of(bool higher_better)
{
	return higher_better ? "higher is better" : "lower is better";
}

static int plot_latency(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		size_t len = strlen(h);

		if (len <= 7 || strcmp(h + len - 7, "_p50_ns"))
			continue;
		char *metric = strndup(h, len - 7);
		char *p99 = metric ? util_asprintf("%s_p99_ns", metric) : NULL;
		char *name = metric ? util_asprintf("latency-%s", metric) : NULL;
		char *title =
			metric ? util_asprintf("%s latency: p50 (filled) and p99 (open, dashed), "
					       "mean of repeats with 95%% CI",
					       metric)
			       : NULL;
		int ret = -ENOMEM;

		if (p99 && name && title) {
			sanitize_name(name);
			plot_sanitize_label(title);
			long c99 = csv_column(&c->t, p99);
			struct series s[2] = { { (long)i, "p50" }, { c99, "p99" } };

			ret = graph_lines(c, name, title, subtitle_of(false), "latency (ns)", s,
					  c99 >= 0 ? 2 : 1);
		}
		free(metric);
		free(p99);
		free(name);
		free(title);
		if (ret)
			return ret;
	}
	return 0;
}

static int plot_throughput(struct plot_ctx *c)
{
	long col = csv_column(&c->t, "ops_per_sec");
	struct series s = { col, NULL };

	if (col < 0)
		return 0;
	return graph_lines(c, "throughput",
			   "Throughput: ops/s over all CPUs (mean of repeats, 95% CI)",
			   subtitle_of(true), "ops/s", &s, 1);
}

/* Counters: a column C with a C_per_op column next to it (see results.h). */
static int plot_counters(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		char *per = util_asprintf("%s_per_op", h);
		long cp = per ? csv_column(&c->t, per) : -1;
		int ret = 0;

		free(per);
		if (cp < 0)
			continue;
		bool events = plot_column_has_value(c, cp);

		/* A level (things held) leaves _per_op empty: plot the level itself. */
		if (!events && !plot_column_has_value(c, (long)i))
			continue;
		char *name = util_asprintf("counter-%s", h);
		char *title =
			events ? util_asprintf("%s per op", h) : util_asprintf("%s at the end", h);
		struct series s = { events ? cp : (long)i, NULL };

		if (name && title) {
			sanitize_name(name);
			plot_sanitize_label(title);
			ret = graph_lines(c, name, title,
					  events ? "per op (events counted / ops completed)"
						 : "level (held at the end of the trial)",
					  events ? "per op" : "level", &s, 1);
		} else {
			ret = -ENOMEM;
		}
		free(name);
		free(title);
		if (ret)
			return ret;
	}
	return 0;
}

/* Phases: stacked bars of mean ns per op in each phase, one bar per line, at the largest x. */
static int plot_phases(struct plot_ctx *c)
{
	size_t n_ph = 0;
	long *cols = malloc((c->t.n_cols + 1) * sizeof(*cols));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	char *dat = util_asprintf("%s/phases.dat", c->plots_dir);
	char *labels = NULL, *title = NULL;
	size_t labels_len = 0, xi = c->n_x - 1, bars = 0;
	FILE *f = NULL, *lf = NULL;
	int ret = -ENOMEM;

	if (!cols || !vals || !dat)
		goto out;
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		size_t len = strlen(h);

		if (len > 9 && !strncmp(h, "phase_", 6) && !strcmp(h + len - 3, "_ns") &&
		    plot_column_has_value(c, (long)i))
			cols[n_ph++] = (long)i;
	}
	ret = 0;
	if (!n_ph)
		goto out;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	if (!f || !lf) {
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	fprintf(f, "# phases: mean ns per op in each phase at %s = %s\n# line", c->x_name,
		c->xs[xi]);
	for (size_t p = 0; p < n_ph; p++) {
		const char *h = c->t.header[cols[p]];

		fprintf(f, " %.*s", (int)(strlen(h) - 9), h + 6);
		fprintf(lf, "%s%.*s", p ? "|" : "", (int)(strlen(h) - 9), h + 6);
	}
	fputc('\n', f);
	for (size_t l = 0; l < c->n_lines; l++) {
		struct mean_ci m[64];
		bool any = false;

		for (size_t p = 0; p < n_ph && p < 64; p++)
			if (plot_aggregate(c, cols[p], l, xi, vals, &m[p]))
				any = true;
		if (!any)
			continue;
		fprintf(f, "\"%s\"", c->lines[l]);
		for (size_t p = 0; p < n_ph && p < 64; p++)
			fprintf(f, " %.10g", m[p].n ? m[p].mean : 0.0);
		fputc('\n', f);
		bars++;
	}
	if (fclose(lf)) {
		lf = NULL;
		ret = -ENOMEM;
		goto out;
	}
	lf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!bars)
		goto out;
	for (char *p = labels; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"')
			*p = '_';
	title = util_asprintf("Time per op in each phase at %s = %s (mean of repeats)", c->x_name,
			      c->xs[xi]);
	if (!title) {
		ret = -ENOMEM;
		goto out;
	}
	plot_sanitize_label(title);

	const char *args[6] = { title, subtitle_of(false), "", "ns per op", labels, "" };

	ret = plot_render(c, "phases", "phases.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	free(labels);
	free(title);
	free(cols);
	free(vals);
	free(dat);
	return ret;
}

/* ---- setup ---- */

static int load_table(struct plot_ctx *c)
{
	char *path = util_asprintf("%s/trials.csv", c->dir);
	int ret;

	if (!path)
		return -ENOMEM;
	ret = csv_read(path, &c->t, c->err, c->err_len);
	if (ret)
		goto out;

	c->c_plugin = csv_column(&c->t, "plugin");
	c->c_status = csv_column(&c->t, "status");
	if (c->c_plugin < 0 || c->c_status < 0) {
		ret = plot_set_err(c, -EINVAL, "%s:1: no '%s' column: not an iommulab trials.csv",
				   path, c->c_plugin < 0 ? "plugin" : "status");
		goto out;
	}
	/* The sweep axes sit between plugin and status; x is the first, or the CPU count. */
	if (c->c_status > c->c_plugin + 1) {
		c->c_x = c->c_plugin + 1;
		c->n_other = (size_t)(c->c_status - c->c_plugin - 2);
		c->other_axes = malloc((c->n_other + 1) * sizeof(long));
		if (!c->other_axes) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < c->n_other; i++)
			c->other_axes[i] = c->c_x + 1 + (long)i;
	} else {
		c->c_x = csv_column(&c->t, "cpus");
		if (c->c_x < 0) {
			ret = plot_set_err(c, -EINVAL, "%s:1: no sweep axis and no 'cpus' column",
					   path);
			goto out;
		}
	}
	c->x_name = c->t.header[c->c_x];
	ret = 0;
out:
	free(path);
	return ret;
}

static void ctx_free(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->n_x; i++)
		free(c->xs[i]);
	for (size_t i = 0; i < c->n_lines; i++)
		free(c->lines[i]);
	free(c->xs);
	free(c->x_num);
	free(c->lines);
	free(c->row_x);
	free(c->row_line);
	free((void *)c->cell);
	agg_groups_free(&c->groups);
	free(c->other_axes);
	csv_free(&c->t);
	free(c->plots_dir);
	free(c->gnuplot);
	free(c->log_path);
	free(c->first_graph);
	if (c->log_fd >= 0)
		close(c->log_fd);
}

int plot_results(const char *results_dir, const char *template_dir, const char *gnuplot,
		 struct plot_report *report, char *err, size_t err_len)
{
	struct plot_ctx c = { .dir = results_dir,
			      .template_dir = template_dir,
			      .rep = report,
			      .err = err,
			      .err_len = err_len,
			      .log_fd = -1 };
	int ret;

	memset(report, 0, sizeof(*report));
	if (err_len)
		err[0] = '\0';

	ret = load_table(&c);
	if (ret)
		goto out;
	ret = plot_index_rows(&c);
	if (ret == -ENODATA) {
		snprintf(report->note, sizeof(report->note),
			 "%s/trials.csv has no successful trial: nothing to plot", results_dir);
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;

	c.plots_dir = util_asprintf("%s/plots", results_dir);
	if (!c.plots_dir) {
		ret = -ENOMEM;
		goto out;
	}
	if (mkdir(c.plots_dir, 0755) && errno != EEXIST) {
		ret = plot_set_err(&c, -errno, "%s: %s", c.plots_dir, strerror(errno));
		goto out;
	}
	ret = plot_copy_templates(&c);
	if (ret)
		goto out;

	c.gnuplot = plot_find_program(gnuplot ? gnuplot : "gnuplot");
	if (c.gnuplot) {
		c.log_path = util_asprintf("%s/gnuplot.log", c.plots_dir);
		if (!c.log_path) {
			ret = -ENOMEM;
			goto out;
		}
		c.log_fd = open(c.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (c.log_fd < 0) {
			ret = plot_set_err(&c, -errno, "%s: %s", c.log_path, strerror(errno));
			goto out;
		}
	}

	ret = plot_latency(&c);
	if (!ret)
		ret = plot_throughput(&c);
	if (!ret)
		ret = plot_phases(&c);
	if (!ret)
		ret = plot_counters(&c);
	if (ret) {
		if (err_len && !err[0])
			snprintf(err, err_len, "%s: %s", c.plots_dir, strerror(-ret));
		goto out;
	}

	if (!c.gnuplot) {
		report->rendered = 0;
		snprintf(report->note, sizeof(report->note),
			 "gnuplot not found; the data and scripts are in %s: render with: gnuplot "
			 "%s",
			 c.plots_dir, c.first_graph ? c.first_graph : "<name>.gp");
	} else if (c.n_render_failed) {
		ret = plot_set_err(&c, -EIO, "gnuplot failed on %d plot_render(s); see %s",
				   c.n_render_failed, c.log_path);
	} else {
		report->rendered = 1;
	}
out:
	ctx_free(&c);
	return ret;
}

void plot_report_free(struct plot_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_written; i++)
		free(r->written[i]);
	free(r->written);
	r->written = NULL;
	r->n_written = 0;
}
