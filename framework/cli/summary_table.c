/* SPDX-License-Identifier: MIT */
/*
 * summary_table -- the table `iommulab run` prints at the end: one line per (sweep point,
 * plugin), its repeats folded by results/aggregate (the same means summary.json and the
 * graphs show), read back from the run's trials.csv, so a resumed run's table covers every
 * trial, including those from before the interruption.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "results/aggregate.h"
#include "results/csv.h"
#include "workload/workload.h"

struct summary_cols {
	long point, plugin, cpus, ops_s, p50, p99, syncs, harness, error;
	long *axes; /* one per sweep axis */
};

/* The mean over ok repeats of column c (NAN-free: 0 when the column is absent). */
static double mean_of(const struct agg_table *t, const struct agg_group *g, long c, double *scratch)
{
	return c < 0 ? 0 : agg_mean_ci(t, g, (size_t)c, scratch).mean;
}

static void label_of(const struct scenario *s, const struct summary_cols *k, char *const *row,
		     char *label, size_t len)
{
	int off = snprintf(label, len, "%s", row[k->plugin]);

	for (size_t a = 0; a < s->n_axes && off < (int)len; a++)
		off += snprintf(label + off, len - (size_t)off, " %s=%s", s->axes[a].key,
				k->axes[a] >= 0 ? row[k->axes[a]] : "?");
}

static void print_group(const struct scenario *s, const struct summary_cols *k,
			const struct agg_table *t, const struct agg_group *g, double *scratch)
{
	char *const *first = t->rows[g->rows[0]];
	char label[160];

	label_of(s, k, first, label, sizeof(label));
	if (!g->n_ok) {
		const char *err = k->error >= 0 ? first[k->error] : "";
		printf("%-40s %5s %12s %10s %10s %9s  FAILED: %s\n", label, first[k->cpus], "-",
		       "-", "-", "-", err);
		return;
	}
	printf("%-40s %5s %12.0f %10.0f %10.0f %9.2f  %s\n", label, first[k->cpus],
	       mean_of(t, g, k->ops_s, scratch), mean_of(t, g, k->p50, scratch),
	       mean_of(t, g, k->p99, scratch), mean_of(t, g, k->syncs, scratch),
	       g->n_ok < g->n_rows ? "some repeats failed" : "ok");
}

/* The null plugin's figures: what the harness itself costs per op. */
static void print_harness(const struct scenario *s, const struct summary_cols *k,
			  const struct agg_table *t, const struct agg_groups *gs, double *scratch)
{
	for (size_t i = 0; i < gs->n; i++) {
		const struct agg_group *g = &gs->g[i];
		char *const *first = t->rows[g->rows[0]];
		char label[160];

		if (strcmp(first[k->plugin], "null") || !g->n_ok)
			continue;
		label_of(s, k, first, label, sizeof(label));
		printf("\nharness overhead (null plugin, %s): %.1f ns per op in issue() "
		       "(timestamp pair), %.1f ns per op around it (loop, tags, histogram)\n",
		       label, mean_of(t, g, k->p50, scratch), mean_of(t, g, k->harness, scratch));
		return;
	}
}

int cli_print_summary(const char *dir, const struct scenario *s, const struct lab_clock *clk)
{
	const struct workload_ops *w = workload_find(s->base.scenario.workload);
	char path[4200], err[512], name[160];
	struct csv_table csv;
	struct agg_groups groups = { 0 };
	struct summary_cols k;
	long *key = NULL, status;
	double *scratch = NULL;
	int rc = -1;

	snprintf(path, sizeof(path), "%s/trials.csv", dir);
	if (csv_read(path, &csv, err, sizeof(err))) {
		fprintf(stderr, "iommulab: no summary table: %s\n", err);
		return -1;
	}
	k.axes = calloc(s->n_axes + 1, sizeof(*k.axes));
	key = malloc((csv.n_rows + 1) * sizeof(*key));
	scratch = malloc((csv.n_rows + 1) * sizeof(*scratch));
	status = csv_column(&csv, "status");
	k.point = csv_column(&csv, "point");
	k.plugin = csv_column(&csv, "plugin");
	k.cpus = csv_column(&csv, "cpus");
	if (!k.axes || !key || !scratch || status < 0 || k.point < 0 || k.plugin < 0 ||
	    k.cpus < 0) {
		fprintf(stderr, "iommulab: no summary table: %s lacks the columns it needs\n",
			path);
		goto out;
	}
	k.ops_s = csv_column(&csv, "ops_per_sec");
	snprintf(name, sizeof(name), "%s_p50_ns", w ? w->metrics[0] : "op");
	k.p50 = csv_column(&csv, name);
	snprintf(name, sizeof(name), "%s_p99_ns", w ? w->metrics[0] : "op");
	k.p99 = csv_column(&csv, name);
	k.syncs = csv_column(&csv, "dev_syncs_per_op");
	k.harness = csv_column(&csv, "harness_ns_per_op");
	k.error = csv_column(&csv, "error");
	for (size_t a = 0; a < s->n_axes; a++) {
		snprintf(name, sizeof(name), "%s.%s", s->axes[a].section, s->axes[a].key);
		k.axes[a] = csv_column(&csv, name);
	}
	const struct agg_table t = { .rows = (char *const *const *)csv.rows,
				     .n_rows = csv.n_rows,
				     .c_status = (size_t)status };
	const size_t by[] = { (size_t)k.point, (size_t)k.plugin };
	agg_key_columns(&t, by, 2, key);
	if (agg_group_by(&t, key, &groups)) {
		fprintf(stderr, "iommulab: no summary table: out of memory\n");
		goto out;
	}
	printf("\n%-40s %5s %12s %10s %10s %9s  %s\n", "plugin / point", "cpus", "ops/s", "p50 ns",
	       "p99 ns", "syncs/op", "status");
	for (size_t i = 0; i < groups.n; i++)
		print_group(s, &k, &t, &groups.g[i], scratch);
	print_harness(s, &k, &t, &groups, scratch);
	if (clk)
		printf("timer: %s, %.1f ns per read\n", clock_source_name(clk),
		       clock_cost_ns(clk, 100000));
	rc = 0;
out:
	agg_groups_free(&groups);
	free(scratch);
	free(key);
	free(k.axes);
	csv_free(&csv);
	return rc;
}
