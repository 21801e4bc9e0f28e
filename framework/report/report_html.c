/* SPDX-License-Identifier: MIT */
/*
 * report_html -- DIR/report.html (see report.h). Every text that comes from a file (plugin
 * names, errors, machine.txt, the scenario) goes through report_html_escape; the SVGs are
 * gnuplot's own output, copied in with their ids made unique per graph (gnuplot names its
 * markers gpPt0.. in every file, and ids must be unique in one page).
 */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/aggregate.h"
#include "results/csv.h"
#include "util/fs.h"

void report_html_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (*p >= 0x20 || *p == '\n' || *p == '\t')
				fputc(*p, f);
		}
	}
}

static const char style[] =
	"body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;"
	"color:#222}\n"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\n"
	"table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;"
	"padding:.2em .5em;text-align:right}th{background:#f2f2f2}td.l,th.l{text-align:left}\n"
	"pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.85em}\n"
	"figure{margin:1em 0}figure svg{width:100%;height:auto;border:1px solid #eee}\n"
	".warn{color:#a00}.note{color:#555}\n";

/* A file of the run as preformatted text, or a note that it is not there. */
static void section_file(FILE *f, const char *dir, const char *file, const char *heading,
			 bool folded)
{
	char *path = util_asprintf("%s/%s", dir, file);
	char *text = path ? util_read_file(path, NULL) : NULL;

	fprintf(f, "<h2>%s</h2>\n", heading);
	if (!text) {
		fputs("<p class=\"note\">", f);
		report_html_escape(f, file);
		fputs(" is not in this results directory.</p>\n", f);
	} else {
		if (folded) {
			fputs("<details><summary>", f);
			report_html_escape(f, file);
			fputs("</summary>", f);
		}
		fputs("<pre>", f);
		report_html_escape(f, text);
		fputs("</pre>\n", f);
		if (folded)
			fputs("</details>\n", f);
	}
	free(text);
	free(path);
}

static void put_rate(FILE *f, double v)
{
	if (v >= 1e6)
		fprintf(f, "%.3g M", v / 1e6);
	else if (v >= 1e3)
		fprintf(f, "%.3g K", v / 1e3);
	else
		fprintf(f, "%.3g ", v);
}

static void put_ns(FILE *f, double v)
{
	if (v >= 1e6)
		fprintf(f, "%.3g ms", v / 1e6);
	else if (v >= 1e3)
		fprintf(f, "%.3g us", v / 1e3);
	else
		fprintf(f, "%.3g ns", v);
}

/* The sweep point of row r: the axes (between plugin and status) as "cpus=16 ...". */
static void put_point(FILE *f, const struct csv_table *t, long c_plugin, long c_status, size_t r)
{
	for (long a = c_plugin + 1; a < c_status; a++) {
		const char *h = t->header[a], *dot = strrchr(h, '.');

		fputs(a > c_plugin + 1 ? " " : "", f);
		report_html_escape(f, dot ? dot + 1 : h);
		fputc('=', f);
		report_html_escape(f, t->rows[r][a]);
	}
	if (c_status == c_plugin + 1)
		fputs("(one point)", f);
}

/* The mean and CI of column col over group g, as a cell: "1.2 M +/- 3 K (n=2)". */
static void put_cell(FILE *f, const struct agg_table *at, const struct agg_group *g, long col,
		     bool rate, double *scratch)
{
	fputs("<td>", f);
	if (col >= 0) {
		struct mean_ci m = agg_mean_ci(at, g, (size_t)col, scratch);

		if (m.n) {
			(rate ? put_rate : put_ns)(f, m.mean);
			if (m.n > 1 && isfinite(m.half_width)) {
				fputs(" &plusmn; ", f);
				(rate ? put_rate : put_ns)(f, m.half_width);
			}
		}
	}
	fputs("</td>", f);
}

/*
 * The summary: per (sweep point, plugin) the mean and 95% CI over the ok repeats of ops/s and
 * each metric's p50 and p99, grouped and aggregated by results/aggregate (as summary.json).
 */
static int section_summary(FILE *f, const struct csv_table *t, long c_plugin, long c_status)
{
	struct agg_table at = { .rows = (char *const *const *)t->rows,
				.n_rows = t->n_rows,
				.c_status = (size_t)c_status };
	long c_point = csv_column(t, "point"), c_ops = csv_column(t, "ops_per_sec");
	size_t cols[2] = { (size_t)c_point, (size_t)c_plugin };
	long *key = malloc((t->n_rows + 1) * sizeof(*key));
	double *scratch = malloc((t->n_rows + 1) * sizeof(*scratch));
	long *p50 = malloc((t->n_cols + 1) * sizeof(*p50));
	struct agg_groups groups = { 0 };
	size_t n_metrics = 0;
	int ret = -ENOMEM;

	if (!key || !scratch || !p50)
		goto out;
	for (size_t i = 0; i < t->n_cols; i++) {
		size_t len = strlen(t->header[i]);

		if (len > 7 && !strcmp(t->header[i] + len - 7, "_p50_ns"))
			p50[n_metrics++] = (long)i;
	}
	fputs("<h2>Summary</h2>\n<p class=\"note\">Mean of the successful repeats with its 95% "
	      "confidence interval (Student's t; none with one repeat), per sweep point and "
	      "plugin.</p>\n<table>\n<tr><th class=\"l\">point</th><th class=\"l\">plugin</th>"
	      "<th>ok / trials</th><th>ops/s</th>",
	      f);
	for (size_t m = 0; m < n_metrics; m++) {
		const char *h = t->header[p50[m]];

		for (int q = 0; q < 2; q++) {
			fputs("<th>", f);
			fprintf(f, "%.*s ", (int)(strlen(h) - 7), h);
			fputs(q ? "p99</th>" : "p50</th>", f);
		}
	}
	fputs("</tr>\n", f);
	if (c_point < 0) {
		ret = 0;
		goto end;
	}
	agg_key_columns(&at, cols, 2, key);
	ret = agg_group_by(&at, key, &groups);
	if (ret)
		goto out;
	for (size_t i = 0; i < groups.n; i++) {
		const struct agg_group *g = &groups.g[i];
		size_t r0 = g->rows[0];

		fputs("<tr><td class=\"l\">", f);
		put_point(f, t, c_plugin, c_status, r0);
		fputs("</td><td class=\"l\">", f);
		report_html_escape(f, t->rows[r0][c_plugin]);
		fprintf(f, "</td><td%s>%zu / %zu</td>",
			g->n_ok < g->n_rows ? " class=\"warn\"" : "", g->n_ok, g->n_rows);
		put_cell(f, &at, g, c_ops, true, scratch);
		for (size_t m = 0; m < n_metrics; m++) {
			const char *h = t->header[p50[m]];
			char *name99 = util_asprintf("%.*s_p99_ns", (int)(strlen(h) - 7), h);

			put_cell(f, &at, g, p50[m], false, scratch);
			put_cell(f, &at, g, name99 ? csv_column(t, name99) : -1, false, scratch);
			free(name99);
		}
		fputs("</tr>\n", f);
	}
end:
	fputs("</table>\n", f);
	ret = 0;
out:
	agg_groups_free(&groups);
	free(key);
	free(scratch);
	free(p50);
	return ret;
}

/* Every trial whose status is not "ok" (failed, noisy, ...), with its reason. */
static void section_noise(FILE *f, const struct csv_table *t, long c_plugin, long c_status)
{
	long c_trial = csv_column(t, "trial"), c_error = csv_column(t, "error");
	size_t n = 0;

	fputs("<h2>Noise and failures</h2>\n", f);
	for (size_t r = 0; r < t->n_rows; r++) {
		if (!strcmp(t->rows[r][c_status], "ok"))
			continue;
		if (!n++)
			fputs("<p class=\"warn\">These trials are not in the summary or the graphs "
			      "(only status ok is):</p>\n<table>\n<tr><th>trial</th><th "
			      "class=\"l\">point</th><th class=\"l\">plugin</th><th "
			      "class=\"l\">status</th><th class=\"l\">reason</th></tr>\n",
			      f);
		fputs("<tr><td>", f);
		report_html_escape(f, c_trial >= 0 ? t->rows[r][c_trial] : "");
		fputs("</td><td class=\"l\">", f);
		put_point(f, t, c_plugin, c_status, r);
		fputs("</td><td class=\"l\">", f);
		report_html_escape(f, t->rows[r][c_plugin]);
		fputs("</td><td class=\"l\">", f);
		report_html_escape(f, t->rows[r][c_status]);
		fputs("</td><td class=\"l\">", f);
		report_html_escape(f, c_error >= 0 ? t->rows[r][c_error] : "");
		fputs("</td></tr>\n", f);
	}
	if (n)
		fputs("</table>\n", f);
	else
		fprintf(f, "<p>All %zu trials have status ok.</p>\n", t->n_rows);
}

/* Copy an SVG from its <svg> element on, every id and #reference prefixed with "gN-". */
static void put_svg(FILE *f, const char *svg, size_t graph)
{
	static const char *const marks[] = { "id='", "id=\"", "href='#", "href=\"#", "url(#" };
	const char *p = strstr(svg, "<svg");

	while (p && *p) {
		size_t k, len = 0;

		for (k = 0; k < sizeof(marks) / sizeof(marks[0]); k++) {
			len = strlen(marks[k]);
			if (!strncmp(p, marks[k], len))
				break;
		}
		if (k < sizeof(marks) / sizeof(marks[0])) {
			fprintf(f, "%sg%zu-", marks[k], graph);
			p += len;
		} else {
			fputc(*p++, f);
		}
	}
}

static void section_graphs(FILE *f, const char *dir, const struct plot_report *plots)
{
	fputs("<h2>Graphs</h2>\n", f);
	if (!plots || !plots->n_graphs) {
		fputs("<p class=\"note\">No graphs: no trial succeeded, or plotting was not "
		      "run.</p>\n",
		      f);
		return;
	}
	if (plots->n_left_out)
		fprintf(f,
			"<p class=\"note\">%zu counter graph%s left out: <code>iommulab plot "
			"--plots all DIR</code> draws every counter (they are in "
			"trials.csv).</p>\n",
			plots->n_left_out, plots->n_left_out == 1 ? "" : "s");
	for (size_t i = 0; i < plots->n_graphs; i++) {
		const struct plot_graph *g = &plots->graphs[i];
		char *path = util_asprintf("%s/plots/%s.svg", dir, g->name);
		char *svg = path ? util_read_file(path, NULL) : NULL;

		fputs("<figure>\n<figcaption>", f);
		report_html_escape(f, g->title);
		fputs(" (<a href=\"plots/", f);
		report_html_escape(f, g->name);
		fputs(".png\">PNG</a>)</figcaption>\n", f);
		if (svg && strstr(svg, "<svg")) {
			put_svg(f, svg, i);
		} else {
			fputs("<p class=\"warn\">Not rendered (no gnuplot?): render with "
			      "<code>gnuplot plots/",
			      f);
			report_html_escape(f, g->name);
			fputs(".gp</code>.</p>", f);
		}
		fputs("\n</figure>\n", f);
		free(svg);
		free(path);
	}
}

int report_html_write(const char *results_dir, const struct plot_report *plots, char *err,
		      size_t err_len)
{
	char *csv = util_asprintf("%s/trials.csv", results_dir);
	char *out = util_asprintf("%s/report.html", results_dir);
	char *tmp = util_asprintf("%s/.report.html.tmp", results_dir);
	struct csv_table t = { 0 };
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (!csv || !out || !tmp)
		goto out;
	ret = csv_read(csv, &t, err, err_len);
	if (ret)
		goto out;
	long c_plugin = csv_column(&t, "plugin"), c_status = csv_column(&t, "status");

	if (c_plugin < 0 || c_status < 0 || c_status < c_plugin) {
		snprintf(err, err_len,
			 "%s:1: no plugin and status columns: not an iommulab "
			 "trials.csv",
			 csv);
		ret = -EINVAL;
		goto out;
	}
	/* Written aside and renamed: a reader never sees half a page. */
	f = fopen(tmp, "w");
	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	const char *base = strrchr(results_dir, '/');

	base = base && base[1] ? base + 1 : results_dir;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
	      "iommulab: ",
	      f);
	report_html_escape(f, base);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>iommulab run ", style);
	report_html_escape(f, base);
	fputs("</h1>\n", f);
	fprintf(f,
		"<p>%zu trials in trials.csv. Files: <a href=\"trials.csv\">trials.csv</a>, "
		"<a href=\"summary.json\">summary.json</a>, <a href=\"plots/\">plots/</a>.</p>\n",
		t.n_rows);
	ret = section_summary(f, &t, c_plugin, c_status);
	if (ret)
		goto out;
	section_file(f, results_dir, "summary.txt",
		     "Summary table (as the run printed it: the winner at each point, the "
		     "ratio to the baseline, the noisy trials)",
		     false);
	section_noise(f, &t, c_plugin, c_status);
	section_graphs(f, results_dir, plots);
	section_file(f, results_dir, "scenario.ini", "Plan (the scenario as run)", true);
	section_file(f, results_dir, "machine.txt", "Machine", false);
	section_file(f, results_dir, "plugins.txt", "Plugins", false);
	fputs("</body>\n</html>\n", f);
	if (ferror(f) | fclose(f)) {
		f = NULL;
		ret = -EIO;
		snprintf(err, err_len, "%s: write failed", tmp);
		goto out;
	}
	f = NULL;
	if (rename(tmp, out)) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", out, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f) {
		fclose(f);
		unlink(tmp);
	}
	csv_free(&t);
	free(csv);
	free(out);
	free(tmp);
	return ret;
}
