/* SPDX-License-Identifier: MIT */
/*
 * summary -- summary.json, rebuilt from every row of trials.csv so far: the run's metadata,
 * every trial typed by the column table, and per (point, plugin) the mean and 95% CI over
 * repeats (aggregate.h) of the throughput and each metric's p50 and p99. An interval is null
 * where there is none (one repeat), and each names its method.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/aggregate.h"
#include "results/columns.h"
#include "results/results.h"
#include "results/results_internal.h"

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f); /* JSON has no NaN or infinity */
}

static void json_field(FILE *f, const struct results *r, size_t c, const char *v)
{
	if (!v) {
		fputs("null", f);
		return;
	}
	switch (columns_type(&r->cols, c)) {
	case COL_NUM: {
		char *end;
		double d = strtod(v, &end);

		if (*end || end == v)
			json_str(f, v);
		else
			json_num(f, d);
		break;
	}
	case COL_BOOL:
		fputs(strcmp(v, "0") ? "true" : "false", f);
		break;
	default:
		json_str(f, v);
	}
}

static void json_mean_ci(FILE *f, struct mean_ci ci)
{
	if (!ci.n) {
		fputs("null", f);
		return;
	}
	/* NaN bounds (one repeat) are written null by json_num: unknown, not zero. */
	fputs("{\"mean\": ", f);
	json_num(f, ci.mean);
	fputs(", \"ci95\": ", f);
	json_num(f, ci.half_width);
	fputs(", \"ci_low\": ", f);
	json_num(f, ci.low);
	fputs(", \"ci_high\": ", f);
	json_num(f, ci.high);
	fputs(", \"ci_method\": ", f);
	json_str(f, stats_ci_method_name(ci.method));
	fprintf(f, ", \"n\": %zu}", ci.n);
}

/* One aggregate: a (point, plugin) and its repeats. */
static void write_group(FILE *f, const struct results *r, const struct agg_table *t,
			const struct agg_group *g, double *vals)
{
	const struct results_columns *cols = &r->cols;
	size_t c_point = columns_at(cols, COL_POINT, 0), c_cpus = columns_at(cols, COL_CPUS, 0);
	char **row = r->rows[g->rows[0]];

	fputs("\"point\": ", f);
	json_field(f, r, c_point, row[c_point]);
	fputs(", \"plugin\": ", f);
	json_str(f, row[columns_at(cols, COL_PLUGIN, 0)]);
	fputs(", \"swept\": {", f);
	for (size_t a = 0; a < r->n_axes; a++) {
		size_t c = columns_at(cols, COL_AXIS, a);

		fputs(a ? ", " : "", f);
		json_str(f, cols->cols[c].name);
		fputs(": ", f);
		json_str(f, row[c]);
	}
	fputs("}, \"cpus\": ", f);
	json_field(f, r, c_cpus, row[c_cpus]);
	fprintf(f, ", \"repeats\": %zu, \"ok\": %zu, \"noisy\": %zu, \"failed\": %zu", g->n_rows,
		g->n_ok - g->n_noisy, g->n_noisy, g->n_rows - g->n_ok);
	fputs(",\n     \"ops_per_sec\": ", f);
	json_mean_ci(f, agg_mean_ci(t, g, columns_at(cols, COL_OPS_PER_SEC, 0), vals));
	fputs(",\n     \"metrics\": {", f);
	for (size_t m = 0; m < r->n_metrics; m++) {
		size_t c = columns_at(cols, COL_METRIC_P50, m);

		fprintf(f, "%s", m ? ", " : "");
		json_str(f, cols->cols[c].member);
		fputs(": {\"p50_ns\": ", f);
		json_mean_ci(f, agg_mean_ci(t, g, c, vals));
		fputs(", \"p99_ns\": ", f);
		json_mean_ci(f, agg_mean_ci(t, g, columns_at(cols, COL_METRIC_P99, m), vals));
		fputs("}", f);
	}
	fputs("}}", f);
}

/* Per (point, plugin), in the order of their first trial: the mean and CI over repeats. */
static int write_aggregates(FILE *f, const struct results *r, double *vals)
{
	const struct agg_table t = { .rows = (char *const *const *)r->rows,
				     .n_rows = r->n_rows,
				     .c_status = columns_at(&r->cols, COL_STATUS, 0) };
	const size_t keys[] = { columns_at(&r->cols, COL_POINT, 0),
				columns_at(&r->cols, COL_PLUGIN, 0) };
	long *key = malloc((r->n_rows + 1) * sizeof(*key));
	struct agg_groups groups;

	if (!key)
		return -ENOMEM;
	agg_key_columns(&t, keys, 2, key);
	if (agg_group_by(&t, key, &groups)) {
		free(key);
		return -ENOMEM;
	}
	fputs("  \"aggregates\": [", f);
	for (size_t i = 0; i < groups.n; i++) {
		fputs(i ? ",\n    {" : "\n    {", f);
		write_group(f, r, &t, &groups.g[i], vals);
	}
	fputs("\n  ]\n", f);
	agg_groups_free(&groups);
	free(key);
	return 0;
}

int results_write_summary(struct results *r, const struct results_meta *meta)
{
	static const struct results_meta no_meta;
	char *text = NULL;
	size_t len = 0;
	double *vals = NULL;
	FILE *f;
	int ret;

	if (!r)
		return -EINVAL;
	if (!meta)
		meta = &no_meta;
	vals = malloc((r->n_rows + 1) * sizeof(*vals));
	f = open_memstream(&text, &len);
	if (!vals || !f) {
		ret = -ENOMEM;
		goto out;
	}

	fputs("{\n  \"schema_version\": 1,\n  \"generator\": ", f);
	json_str(f, "iommulab " LAB_VERSION);
	fputs(",\n  \"meta\": {\"name\": ", f);
	json_str(f, meta->name);
	fputs(", \"scenario\": ", f);
	json_str(f, meta->scenario_path);
	fputs(", \"started\": ", f);
	json_str(f, meta->started);
	fputs(", \"finished\": ", f);
	json_str(f, meta->finished);
	fprintf(f, ", \"interrupted\": %s, \"x_key\": ", meta->interrupted ? "true" : "false");
	json_str(f, meta->x_key);
	fputs(", \"dir\": ", f);
	json_str(f, r->dir);
	fprintf(f, ", \"n_trials\": %zu},\n", r->n_rows);
	fputs("  \"ci\": {\"level\": 0.95, \"method\": \"log-student-t: Student's t on ln(x) over "
	      "the measured repeats, exp back (never below 0); student-t-clamped-at-0 where a "
	      "value is 0; none (ci95 null) with one repeat\", \"ci95\": \"(ci_high - "
	      "ci_low) / 2\"},\n  \"columns\": [",
	      f);
	for (size_t c = 0; c < r->cols.n; c++) {
		fputs(c ? ", " : "", f);
		json_str(f, r->cols.cols[c].name);
	}
	fputs("],\n  \"trials\": [", f);
	for (size_t i = 0; i < r->n_rows; i++) {
		fputs(i ? ",\n    {" : "\n    {", f);
		for (size_t c = 0; c < r->cols.n; c++) {
			fputs(c ? ", " : "", f);
			json_str(f, r->cols.cols[c].name);
			fputs(": ", f);
			json_field(f, r, c, r->rows[i][c]);
		}
		fputs("}", f);
	}
	fputs("\n  ],\n", f);
	ret = write_aggregates(f, r, vals);
	fputs("}\n", f);
	if (fclose(f) || ret) {
		f = NULL;
		ret = -ENOMEM;
		goto out;
	}
	f = NULL;
	ret = results_write_file(r->dir, "summary.json", text);
out:
	if (f)
		fclose(f);
	free(text);
	free(vals);
	return ret;
}
