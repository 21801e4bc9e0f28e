/* SPDX-License-Identifier: MIT */
/*
 * summary_table -- the table `iommulab run` prints at the end: one line per (sweep point,
 * plugin), its repeats folded by results/aggregate (the same means and intervals summary.json
 * and the graphs show), read back from the run's trials.csv, so a resumed run's table covers
 * every trial, including those from before the interruption.
 *
 * Each workload's own latencies (cmdq: op; iova: alloc, free; dma: map, unmap) as p50 and
 * p99, throughput and time scaled for reading, the 95% interval as +/- percent where there
 * are repeats ("n=1" where there is one), the device's syncs per op only where there is a
 * device, a column relative to the baseline plugin (the first that is not the null harness
 * plugin, or --baseline), a winner line per sweep point, and the count of noisy trials.
 * --format json writes the same figures to stdout as one JSON object.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "results/aggregate.h"
#include "results/csv.h"
#include "results/trial.h"
#include "stats/compare.h"
#include "workload/workload.h"

struct summary_cols {
	long status, point, plugin, cpus, engine, ops_s, syncs, harness, error, steady, overrun;
	long p50[WORKLOAD_MAX_METRICS], p99[WORKLOAD_MAX_METRICS];
	long *axes; /* one per sweep axis */
};

/* One (point, plugin): its figures over the measured repeats. */
struct summary_row {
	const struct agg_group *g;
	char *const *first; /* its first row */
	struct mean_ci ops;
	struct mean_ci p50[WORKLOAD_MAX_METRICS], p99[WORKLOAD_MAX_METRICS];
	double syncs;
	struct stats_ratio rel; /* ops/s against the baseline at the same point */
	bool has_rel;
};

struct summary {
	const struct scenario *s;
	const struct workload_ops *w;
	const struct cli_summary_opts *o;
	struct summary_cols k;
	struct agg_table t;
	struct agg_groups groups;
	struct summary_row *rows;
	const char *baseline; /* a plugin column value, or NULL */
	bool any_native;
	size_t n_trials, n_noisy, n_incomplete, n_failed;
	size_t n_unsteady; /* measured trials whose steady_drift is beyond TRIAL_STEADY_DRIFT */
	size_t n_overran;  /* ...whose window_overrun is beyond TRIAL_OVERRUN */
	double worst_overrun;
	double worst_drift;
	double *scratch;
	FILE *out; /* where the table or the JSON goes */
};

static struct mean_ci ci_of(struct summary *S, const struct agg_group *g, long c)
{
	return c < 0 ? stats_mean_ci(NULL, 0) : agg_mean_ci(&S->t, g, (size_t)c, S->scratch);
}

/* ---- units ---- */

/* ns as ns, us, ms or s with three significant digits. */
static void fmt_time(double ns, char *buf, size_t len)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t i = 0;

	while (i + 1 < sizeof(u) / sizeof(u[0]) && fabs(ns) >= 1000 * u[i].div)
		i++;
	double v = ns / u[i].div;

	snprintf(buf, len, "%.*f %s", v < 10 && i ? 2 : v < 100 && i ? 1 : 0, v, u[i].unit);
}

/* A rate as plain, K, M or G with three significant digits. */
static void fmt_rate(double r, char *buf, size_t len)
{
	static const char *const p[] = { "", "K", "M", "G" };
	size_t i = 0;
	double v = r;

	while (i + 1 < sizeof(p) / sizeof(p[0]) && fabs(v) >= 1000) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.*f%s", !i ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0, v, p[i]);
}

/* A figure and its interval: "1.23M +/-2%", "1.23M n=1", or "-". */
static void fmt_ci(struct mean_ci m, bool time, char *buf, size_t len)
{
	char v[32];

	if (!m.n) {
		snprintf(buf, len, "-");
		return;
	}
	(time ? fmt_time : fmt_rate)(m.mean, v, sizeof(v));
	if (m.n < 2 || isnan(m.half_width))
		snprintf(buf, len, "%s n=1", v);
	else if (m.mean > 0)
		snprintf(buf, len, "%s +/-%.*f%%", v, m.half_width < 0.01 * m.mean ? 1 : 0,
			 100 * m.half_width / m.mean);
	else
		snprintf(buf, len, "%s", v);
}

/* A ratio: "2.31 +/- 0.04 x", "1.00 x" (the baseline), "2.31 x" (no interval). */
static void fmt_ratio(struct stats_ratio r, char *buf, size_t len)
{
	if (isnan(r.ratio))
		snprintf(buf, len, "-");
	else if (isnan(r.half_width))
		snprintf(buf, len, "%.2f x", r.ratio);
	else
		snprintf(buf, len, "%.2f +/- %.2f x", r.ratio, r.half_width);
}

/* ---- reading ---- */

/* "cmpxchg" matches the plugin column "cmpxchg" and either half of "cmpxchg+fixed_depot". */
static bool plugin_is(const char *col, const char *name)
{
	size_t n = strlen(name);
	const char *plus = strchr(col, '+');

	return !strcmp(col, name) ||
	       (plus && (size_t)(plus - col) == n && !strncmp(col, name, n)) ||
	       (plus && !strcmp(plus + 1, name));
}

/*
 * How well row label b serves as row label r's baseline NAME: 3 exactly NAME, 2 NAME as one
 * half and r's other half (dma: "batched+fixed_depot" is "cmpxchg+fixed_depot"'s baseline
 * for --baseline batched), 1 NAME as one half, 0 not at all.
 */
static int baseline_score(const char *b, const char *r, const char *name)
{
	const char *bp = strchr(b, '+'), *rp = strchr(r, '+');

	if (!strcmp(b, name))
		return 3;
	if (!plugin_is(b, name))
		return 0;
	if (bp && rp &&
	    ((!strcmp(bp + 1, name) && bp - b == rp - r && !strncmp(b, r, (size_t)(bp - b))) ||
	     !strcmp(bp + 1, rp + 1)))
		return 2;
	return 1;
}

/* The baseline row at r's sweep point, or NULL. */
static const struct summary_row *baseline_of(const struct summary *S, const struct summary_row *r)
{
	const struct summary_row *b = NULL;
	int best = 0;

	for (size_t j = 0; S->baseline && j < S->groups.n; j++) {
		const struct summary_row *c = &S->rows[j];
		int sc = baseline_score(c->first[S->k.plugin], r->first[S->k.plugin], S->baseline);

		if (!strcmp(c->first[S->k.point], r->first[S->k.point]) && sc > best) {
			b = c;
			best = sc;
		}
	}
	return b;
}

static int find_columns(struct summary *S, const struct csv_table *csv, const char *path)
{
	struct summary_cols *k = &S->k;
	char name[160];

	k->status = csv_column(csv, "status");
	k->point = csv_column(csv, "point");
	k->plugin = csv_column(csv, "plugin");
	k->cpus = csv_column(csv, "cpus");
	if (k->status < 0 || k->point < 0 || k->plugin < 0 || k->cpus < 0) {
		fprintf(stderr, "iommulab: no summary table: %s lacks the columns it needs\n",
			path);
		return -1;
	}
	k->engine = csv_column(csv, "engine");
	k->ops_s = csv_column(csv, "ops_per_sec");
	for (uint32_t m = 0; S->w && m < S->w->n_metrics; m++) {
		snprintf(name, sizeof(name), "%s_p50_ns", S->w->metrics[m]);
		k->p50[m] = csv_column(csv, name);
		snprintf(name, sizeof(name), "%s_p99_ns", S->w->metrics[m]);
		k->p99[m] = csv_column(csv, name);
	}
	/* Only workloads with a device have the column: iova's table has no syncs/op. */
	k->syncs = csv_column(csv, "dev_syncs_per_op");
	k->harness = csv_column(csv, "harness_ns_per_op");
	k->error = csv_column(csv, "error");
	k->steady = csv_column(csv, "steady_drift");	/* absent in results written before it */
	k->overrun = csv_column(csv, "window_overrun"); /* likewise */
	for (size_t a = 0; a < S->s->n_axes; a++) {
		snprintf(name, sizeof(name), "%s.%s", S->s->axes[a].section, S->s->axes[a].key);
		k->axes[a] = csv_column(csv, name);
	}
	return 0;
}

/* Row i's number in column col: false when the run has no such column or left it empty. */
static bool cell_num(const struct summary *S, size_t i, long col, double *v)
{
	if (col < 0 || !S->t.rows[i][col][0])
		return false;
	*v = atof(S->t.rows[i][col]);
	return true;
}

static void fold(struct summary *S)
{
	const struct summary_cols *k = &S->k;
	uint32_t n_metrics = S->w ? S->w->n_metrics : 0;

	for (size_t i = 0; i < S->t.n_rows; i++) {
		const char *e = k->engine >= 0 ? S->t.rows[i][k->engine] : "";
		double v;

		S->any_native |= !strcmp(e, "native");
		S->n_trials++;
		S->n_noisy += agg_row_noisy(&S->t, i);
		S->n_incomplete += !strcmp(S->t.rows[i][k->status], "incomplete");
		S->n_failed += !strcmp(S->t.rows[i][k->status], "failed");
		/* Only a measured trial's window says anything of its duration: an incomplete
		 * or failed one was cut short, and lengthening it is not the remedy. */
		bool measured = agg_row_ok(&S->t, i);
		if (measured && cell_num(S, i, k->overrun, &v) && v > TRIAL_OVERRUN) {
			S->n_overran++;
			if (v > S->worst_overrun)
				S->worst_overrun = v;
		}
		if (measured && cell_num(S, i, k->steady, &v) && fabs(v) > TRIAL_STEADY_DRIFT) {
			S->n_unsteady++;
			if (fabs(v) > fabs(S->worst_drift))
				S->worst_drift = v;
		}
	}
	for (size_t i = 0; i < S->groups.n; i++) {
		struct summary_row *r = &S->rows[i];
		const struct agg_group *g = &S->groups.g[i];

		r->g = g;
		r->first = S->t.rows[g->rows[0]];
		r->ops = ci_of(S, g, k->ops_s);
		for (uint32_t m = 0; m < n_metrics; m++) {
			r->p50[m] = ci_of(S, g, k->p50[m]);
			r->p99[m] = ci_of(S, g, k->p99[m]);
		}
		r->syncs = k->syncs >= 0 ? ci_of(S, g, k->syncs).mean : NAN;
		/* Without a baseline: the first plugin of the run that is not the null plugin. */
		if (!S->baseline && strcmp(r->first[k->plugin], "null"))
			S->baseline = r->first[k->plugin];
	}
	for (size_t i = 0; S->baseline && i < S->groups.n; i++) {
		struct summary_row *r = &S->rows[i];
		const struct summary_row *b = baseline_of(S, r);

		if (!b)
			continue;
		r->rel = stats_ratio_ci(b->ops, r->ops);
		/* The null plugin measures the harness, not a strategy to rank. */
		r->has_rel = r->ops.n && b->ops.n && strcmp(r->first[k->plugin], "null");
	}
}

/* ---- labels ---- */

static void label_of(const struct summary *S, char *const *row, char *label, size_t len)
{
	int off = snprintf(label, len, "%s", row[S->k.plugin]);

	for (size_t a = 0; a < S->s->n_axes && off < (int)len; a++)
		off += snprintf(label + off, len - (size_t)off, " %s=%s", S->s->axes[a].key,
				S->k.axes[a] >= 0 ? row[S->k.axes[a]] : "?");
}

/* "64 CPUs", "cpus=64, cmds_per_sync=4": the sweep point of a row, in words. */
static void point_of(const struct summary *S, char *const *row, char *buf, size_t len)
{
	int off = 0;

	buf[0] = '\0';
	for (size_t a = 0; a < S->s->n_axes && off < (int)len; a++) {
		const char *v = S->k.axes[a] >= 0 ? row[S->k.axes[a]] : "?";

		if (!strcmp(S->s->axes[a].key, "cpus"))
			off += snprintf(buf + off, len - (size_t)off, "%s%s CPU%s", a ? ", " : "",
					v, strcmp(v, "1") ? "s" : "");
		else
			off += snprintf(buf + off, len - (size_t)off, "%s%s=%s", a ? ", " : "",
					S->s->axes[a].key, v);
	}
	if (!buf[0])
		snprintf(buf, len, "%s CPU%s", row[S->k.cpus],
			 strcmp(row[S->k.cpus], "1") ? "s" : "");
}

static void status_of(const struct summary_row *r, char *buf, size_t len)
{
	const struct agg_group *g = r->g;

	if (!g->n_ok)
		snprintf(buf, len, "no result");
	else if (g->n_noisy)
		snprintf(buf, len, "%zu of %zu noisy", g->n_noisy, g->n_rows);
	else if (g->n_ok < g->n_rows)
		snprintf(buf, len, "%zu of %zu left out", g->n_rows - g->n_ok, g->n_rows);
	else
		snprintf(buf, len, "ok");
}

/*
 * The winner at the sweep point of rows[first]: the highest mean ops/s among the plugins
 * measured there (the null plugin, the harness's own cost, is no contender). Compared with
 * the baseline, or with the runner-up when it is the baseline; *runner_up is the second
 * best. NULL when under two.
 */
static const struct summary_row *winner(const struct summary *S, size_t first,
					const struct summary_row **vs, struct stats_ratio *ratio,
					const struct summary_row **runner_up)
{
	const struct summary_row *best = NULL, *second = NULL, *base;
	const char *point = S->rows[first].first[S->k.point];

	for (size_t j = first; j < S->groups.n; j++) {
		const struct summary_row *r = &S->rows[j];

		if (strcmp(r->first[S->k.point], point) || !r->ops.n ||
		    !strcmp(r->first[S->k.plugin], "null"))
			continue;
		if (!best || r->ops.mean > best->ops.mean) {
			second = best;
			best = r;
		} else if (!second || r->ops.mean > second->ops.mean) {
			second = r;
		}
	}
	if (!best || !second)
		return NULL;
	base = baseline_of(S, best);
	*vs = base && base != best ? base : second;
	*ratio = stats_ratio_ci((*vs)->ops, best->ops);
	*runner_up = second;
	return best;
}

/* Whether a ratio above 1 is more than the noise: its 95% interval lies above 1. */
static bool clear(struct stats_ratio r)
{
	return !isnan(r.half_width) && r.ratio - r.half_width > 1;
}

/* Whether rows[i] is the first row of its sweep point. */
static bool first_of_point(const struct summary *S, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(S->rows[j].first[S->k.point], S->rows[i].first[S->k.point]))
			return false;
	return true;
}

/* ---- text ---- */

static void print_text(const struct summary *S, const struct lab_clock *clk)
{
	uint32_t n_metrics = S->w ? S->w->n_metrics : 0;
	bool syncs = S->k.syncs >= 0;
	char head[64], cell[64], label[160];

	fprintf(S->out, "\n%-34s %4s %15s", "plugin / point", "cpus", "ops/s");
	for (uint32_t m = 0; m < n_metrics; m++) {
		snprintf(head, sizeof(head), "%s p50", S->w->metrics[m]);
		fprintf(S->out, " %15s", head);
		snprintf(head, sizeof(head), "%s p99", S->w->metrics[m]);
		fprintf(S->out, " %15s", head);
	}
	if (syncs)
		fprintf(S->out, " %8s", "syncs/op");
	if (S->baseline) {
		snprintf(head, sizeof(head), "vs %s", S->baseline);
		fprintf(S->out, " %15s", head);
	}
	fprintf(S->out, "  status\n");
	for (size_t i = 0; i < S->groups.n; i++) {
		const struct summary_row *r = &S->rows[i];

		label_of(S, r->first, label, sizeof(label));
		fprintf(S->out, "%-34s %4s", label, r->first[S->k.cpus]);
		fmt_ci(r->ops, false, cell, sizeof(cell));
		fprintf(S->out, " %15s", cell);
		for (uint32_t m = 0; m < n_metrics; m++) {
			fmt_ci(r->p50[m], true, cell, sizeof(cell));
			fprintf(S->out, " %15s", cell);
			fmt_ci(r->p99[m], true, cell, sizeof(cell));
			fprintf(S->out, " %15s", cell);
		}
		if (syncs) {
			if (isnan(r->syncs) || !r->g->n_ok)
				fprintf(S->out, " %8s", "-");
			else
				fprintf(S->out, " %8.2f", r->syncs);
		}
		if (S->baseline) {
			if (r->has_rel)
				fmt_ratio(r->rel, cell, sizeof(cell));
			else
				snprintf(cell, sizeof(cell), "-");
			fprintf(S->out, " %15s", cell);
		}
		status_of(r, cell, sizeof(cell));
		if (!r->g->n_ok && S->k.error >= 0)
			fprintf(S->out, "  %s: %s\n",
				strcmp(r->first[S->k.status], "failed") ? "NO RESULT" : "FAILED",
				r->first[S->k.error]);
		else
			fprintf(S->out, "  %s\n", cell);
	}

	bool title = false;

	for (size_t i = 0; i < S->groups.n; i++) {
		const struct summary_row *vs, *w, *second;
		struct stats_ratio ratio;

		if (!first_of_point(S, i) || !(w = winner(S, i, &vs, &ratio, &second)))
			continue;
		if (!title)
			fprintf(S->out, "\n");
		title = true;
		point_of(S, w->first, label, sizeof(label));
		fmt_ratio(ratio, cell, sizeof(cell));
		fprintf(S->out, "at %s: %s %s %s", label, w->first[S->k.plugin], cell,
			vs->first[S->k.plugin]);
		if (isnan(ratio.half_width))
			fprintf(S->out, " (one repeat: no interval, so no verdict)");
		else if (!clear(ratio))
			fprintf(S->out, " (within the 95%% interval: no clear winner)");
		/*
		 * A winner by less than the noise over the second best is a tie: say so. Without
		 * an interval (one repeat) there is no noise to be within: name the second best.
		 */
		struct stats_ratio r2 = stats_ratio_ci(second->ops, w->ops);
		if (second != vs && isnan(r2.half_width)) {
			fmt_ratio(r2, cell, sizeof(cell));
			fprintf(S->out, "; second: %s (%s)", second->first[S->k.plugin], cell);
		} else if (second != vs && !clear(r2)) {
			fmt_ratio(r2, cell, sizeof(cell));
			fprintf(S->out, "; tied with %s (%s)", second->first[S->k.plugin], cell);
		}
		fprintf(S->out, "\n");
	}
	if (S->n_noisy)
		fprintf(S->out,
			"\n%zu of %zu trials were noisy: the host took their CPUs away (see the "
			"error "
			"column of trials.csv); rerun on a quiet machine to trust them\n",
			S->n_noisy, S->n_trials);
	if (S->n_incomplete)
		fprintf(S->out,
			"%s%zu of %zu trials were incomplete: they measured under half their "
			"duration or no op (natively, their CPUs were off their cores; on the sim, "
			"their ops outlast warmup_ms) and are left out of the means\n",
			S->n_noisy ? "" : "\n", S->n_incomplete, S->n_trials);

	if (S->n_unsteady)
		fprintf(S->out,
			"%s%zu of %zu trials were not in steady state: their ops/s moved more than "
			"%.0f%% between the halves of the measured window (worst %+.0f%%, column "
			"steady_drift): lengthen warmup_ms, or duration_ms, until it settles\n",
			S->n_noisy || S->n_incomplete ? "" : "\n", S->n_unsteady, S->n_trials,
			TRIAL_STEADY_DRIFT * 100, S->worst_drift * 100);
	if (S->n_overran)
		fprintf(S->out,
			"%s%zu of %zu trials were too short for their ops: the ops begun in the "
			"window ran more than %.0f%% past the duration (worst %+.0f%%, column "
			"window_overrun), so their ops/s is biased low: lengthen duration_ms and "
			"warmup_ms to many times the op's p99\n",
			S->n_noisy || S->n_incomplete || S->n_unsteady ? "" : "\n", S->n_overran,
			S->n_trials, TRIAL_OVERRUN * 100, S->worst_overrun * 100);

	/* The null plugin's figures: what the harness itself costs per op, natively. */
	for (size_t i = 0; S->any_native && S->k.harness >= 0 && i < S->groups.n; i++) {
		const struct summary_row *r = &S->rows[i];
		char a[32], b[32];

		if (strcmp(r->first[S->k.plugin], "null") || !r->g->n_ok ||
		    (S->k.engine >= 0 && strcmp(r->first[S->k.engine], "native")))
			continue;
		label_of(S, r->first, label, sizeof(label));
		fmt_time(r->p50[0].mean, a, sizeof(a));
		fmt_time(ci_of((struct summary *)S, r->g, S->k.harness).mean, b, sizeof(b));
		/* One chained timestamp per op: the null op's latency is the whole loop. */
		fprintf(S->out,
			"\nharness overhead (null plugin, %s): %s per op (p50: one chained "
			"timestamp, the loop, tags, histogram), %s per op outside it (the think's "
			"overshoot)\n",
			label, a, b);
		break;
	}
	if (S->any_native && clk)
		fprintf(S->out, "timer: %s, %.1f ns per read\n", clock_source_name(clk),
			clock_cost_ns(clk, 100000));
}

/* ---- json ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

static void json_ci(FILE *f, struct mean_ci m)
{
	if (!m.n) {
		fputs("null", f);
		return;
	}
	fputs("{\"mean\": ", f);
	json_num(f, m.mean);
	fputs(", \"ci_low\": ", f);
	json_num(f, m.low);
	fputs(", \"ci_high\": ", f);
	json_num(f, m.high);
	fprintf(f, ", \"n\": %zu}", m.n);
}

static void json_ratio(FILE *f, struct stats_ratio r)
{
	fputs("{\"ratio\": ", f);
	json_num(f, r.ratio);
	fputs(", \"ci95\": ", f);
	json_num(f, r.half_width);
	fputs("}", f);
}

static void print_json(const struct summary *S, const char *dir)
{
	uint32_t n_metrics = S->w ? S->w->n_metrics : 0;
	char cell[64], label[160];

	fputs("{\"dir\": ", S->out);
	json_str(S->out, dir);
	fputs(", \"workload\": ", S->out);
	json_str(S->out, S->w ? S->w->name : "?");
	fputs(", \"baseline\": ", S->out);
	if (S->baseline)
		json_str(S->out, S->baseline);
	else
		fputs("null", S->out);
	fprintf(S->out,
		", \"trials\": %zu, \"noisy\": %zu, \"incomplete\": %zu, \"failed\": %zu, "
		"\"unsteady\": %zu, \"overran\": %zu",
		S->n_trials, S->n_noisy, S->n_incomplete, S->n_failed, S->n_unsteady, S->n_overran);
	fputs(", \"ci_method\": \"log-student-t (summary.json's ci block); ratios: delta method\""
	      ",\n \"rows\": [",
	      S->out);
	for (size_t i = 0; i < S->groups.n; i++) {
		const struct summary_row *r = &S->rows[i];

		fputs(i ? ",\n  {" : "\n  {", S->out);
		fprintf(S->out, "\"point\": %s, \"plugin\": ", r->first[S->k.point]);
		json_str(S->out, r->first[S->k.plugin]);
		fputs(", \"swept\": {", S->out);
		for (size_t a = 0; a < S->s->n_axes; a++) {
			fputs(a ? ", " : "", S->out);
			json_str(S->out, S->s->axes[a].key);
			fputs(": ", S->out);
			json_str(S->out, S->k.axes[a] >= 0 ? r->first[S->k.axes[a]] : "?");
		}
		fprintf(S->out,
			"}, \"cpus\": %s, \"repeats\": %zu, \"measured\": %zu, \"noisy\": %zu",
			r->first[S->k.cpus], r->g->n_rows, r->g->n_ok, r->g->n_noisy);
		status_of(r, cell, sizeof(cell));
		fputs(", \"status\": ", S->out);
		json_str(S->out, cell);
		fputs(", \"ops_per_sec\": ", S->out);
		json_ci(S->out, r->ops);
		fputs(", \"metrics\": {", S->out);
		for (uint32_t m = 0; m < n_metrics; m++) {
			fputs(m ? ", " : "", S->out);
			json_str(S->out, S->w->metrics[m]);
			fputs(": {\"p50_ns\": ", S->out);
			json_ci(S->out, r->p50[m]);
			fputs(", \"p99_ns\": ", S->out);
			json_ci(S->out, r->p99[m]);
			fputs("}", S->out);
		}
		fputs("}", S->out);
		if (S->k.syncs >= 0) {
			fputs(", \"dev_syncs_per_op\": ", S->out);
			json_num(S->out, r->g->n_ok ? r->syncs : NAN);
		}
		fputs(", \"vs_baseline\": ", S->out);
		if (r->has_rel)
			json_ratio(S->out, r->rel);
		else
			fputs("null", S->out);
		fputs("}", S->out);
	}
	fputs("\n ],\n \"winners\": [", S->out);
	bool any = false;

	for (size_t i = 0; i < S->groups.n; i++) {
		const struct summary_row *vs, *w, *second;
		struct stats_ratio ratio;

		if (!first_of_point(S, i) || !(w = winner(S, i, &vs, &ratio, &second)))
			continue;
		fputs(any ? ",\n  {" : "\n  {", S->out);
		any = true;
		point_of(S, w->first, label, sizeof(label));
		fprintf(S->out, "\"point\": %s, \"at\": ", w->first[S->k.point]);
		json_str(S->out, label);
		fputs(", \"winner\": ", S->out);
		json_str(S->out, w->first[S->k.plugin]);
		fputs(", \"vs\": ", S->out);
		json_str(S->out, vs->first[S->k.plugin]);
		fputs(", \"ops_per_sec_ratio\": ", S->out);
		json_ratio(S->out, ratio);
		fprintf(S->out,
			", \"clear\": %s, \"runner_up\": ", clear(ratio) ? "true" : "false");
		json_str(S->out, second->first[S->k.plugin]);
		fputs(", \"vs_runner_up\": ", S->out);
		json_ratio(S->out, stats_ratio_ci(second->ops, w->ops));
		fputs("}", S->out);
	}
	fputs(any ? "\n ]}\n" : "]}\n", S->out);
}

static int summary_to(FILE *out, const char *dir, const struct scenario *s,
		      const struct lab_clock *clk, const struct cli_summary_opts *o)
{
	static const struct cli_summary_opts defaults;
	struct summary S = { .s = s, .o = o ? o : &defaults, .out = out };
	char path[4200], err[512];
	struct csv_table csv;
	long *key = NULL;
	int rc = -1;

	S.w = workload_find(s->base.scenario.workload);
	snprintf(path, sizeof(path), "%s/trials.csv", dir);
	if (csv_read(path, &csv, err, sizeof(err))) {
		fprintf(stderr, "iommulab: no summary table: %s\n", err);
		return -1;
	}
	S.k.axes = calloc(s->n_axes + 1, sizeof(*S.k.axes));
	key = malloc((csv.n_rows + 1) * sizeof(*key));
	S.scratch = malloc((csv.n_rows + 1) * sizeof(*S.scratch));
	S.rows = calloc(csv.n_rows + 1, sizeof(*S.rows));
	if (!S.k.axes || !key || !S.scratch || !S.rows) {
		fprintf(stderr, "iommulab: no summary table: out of memory\n");
		goto out;
	}
	if (find_columns(&S, &csv, path))
		goto out;
	S.t = (struct agg_table){ .rows = (char *const *const *)csv.rows,
				  .n_rows = csv.n_rows,
				  .c_status = (size_t)S.k.status };
	const size_t by[] = { (size_t)S.k.point, (size_t)S.k.plugin };
	agg_key_columns(&S.t, by, 2, key);
	if (agg_group_by(&S.t, key, &S.groups)) {
		fprintf(stderr, "iommulab: no summary table: out of memory\n");
		goto out;
	}
	S.baseline = S.o->baseline;
	fold(&S);
	if (S.o->format == CLI_SUMMARY_JSON)
		print_json(&S, dir);
	else
		print_text(&S, clk);
	rc = 0;
out:
	agg_groups_free(&S.groups);
	free(S.rows);
	free(S.scratch);
	free(key);
	free(S.k.axes);
	csv_free(&csv);
	return rc;
}

int cli_print_summary_as(const char *dir, const struct scenario *s, const struct lab_clock *clk,
			 const struct cli_summary_opts *o)
{
	return summary_to(stdout, dir, s, clk, o);
}

int cli_print_summary(const char *dir, const struct scenario *s, const struct lab_clock *clk)
{
	return summary_to(stdout, dir, s, clk, NULL);
}

int cli_write_summary_file(const char *dir, const struct scenario *s,
			   const struct cli_summary_opts *o)
{
	struct cli_summary_opts text = o ? *o : (struct cli_summary_opts){ 0 };
	char path[4200], tmp[4200];
	FILE *f;
	int rc;

	text.format = CLI_SUMMARY_TEXT;
	snprintf(path, sizeof(path), "%s/summary.txt", dir);
	snprintf(tmp, sizeof(tmp), "%s/.summary.txt.tmp", dir);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	rc = summary_to(f, dir, s, NULL, &text);
	if ((ferror(f) | fclose(f)) && !rc)
		rc = -EIO;
	if (rc || rename(tmp, path)) {
		rc = rc ? rc : -errno;
		unlink(tmp);
	}
	return rc;
}
