/* SPDX-License-Identifier: MIT */
/*
 * iommulab compare -- two results directories side by side: for every (plugin, sweep point)
 * both ran, the mean and 95% CI of one metric in each, the ratio B/A with its interval and a
 * two-sided Mann-Whitney U test over the ok repeats, with a verdict; what only one of them
 * ran is listed as such. The repeats are grouped and averaged by results/aggregate.c (the
 * one place that does it), the tests are stats/compare.c.
 *
 * Where both runs have histograms.csv (results/histfile.h), a second table compares the
 * latency distributions themselves, per (plugin, point, metric), pooled over the ok repeats:
 * p50 and p99 B/A and a Mann-Whitney U test of the bucketed values with its effect size (A12);
 * a run without one (older results) is said once and compared on its means only. The exit
 * status is the same either way.
 *
 * Two runs are comparable when they run the same workload over the same x axes (the sweep's
 * keys); anything else that differs (engine, machine, a key of the scenario) is allowed and
 * said in a note above the table, since it is often what is being compared.
 */
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "results/aggregate.h"
#include "results/csv.h"
#include "results/histfile.h"
#include "stats/compare.h"
#include "util/array.h"
#include "util/fs.h"

#define DEFAULT_METRIC "ops_per_sec"
#define DEFAULT_ALPHA  0.05

/* One key of a scenario.ini: "section.key" and its value. */
struct kv {
	char *key;
	char *value;
};

struct run {
	const char *dir;
	const char *label; /* "A" or "B" */
	char *trials_path;
	struct csv_table t;
	struct agg_table at;
	size_t c_plugin;
	size_t axis0, n_axes; /* the sweep axes: the columns between plugin and status */
	struct kv *scen;
	size_t n_scen, cap_scen;
	char *host; /* machine.txt's host, NULL if it has none */
	long *key;
	struct agg_groups groups;
	double *scratch;
	long metric;
	struct histfile hf; /* histograms.csv, when have_hist */
	bool have_hist;
	long c_trial;
	size_t no_hist; /* ok rows with no histogram in it, seen by compare_distributions */
};

/* Which way is better for a metric, for the verdict's words. */
enum direction { HIGHER_BETTER, LOWER_BETTER, NEUTRAL };

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static enum direction metric_direction(const char *m)
{
	if (!strcmp(m, "ops_per_sec") || !strcmp(m, "ops") || !strcmp(m, "ops_min_cpu") ||
	    !strcmp(m, "ops_max_cpu"))
		return HIGHER_BETTER;
	if (ends_with(m, "_ns") || ends_with(m, "_ns_per_op"))
		return LOWER_BETTER;
	return NEUTRAL;
}

static int on_scenario_key(void *user, const char *section, const char *name, const char *value)
{
	struct run *r = user;
	struct kv *kv = array_grow(r->scen, &r->cap_scen, r->n_scen + 1, sizeof(*r->scen));

	if (!kv)
		return 0;
	r->scen = kv;
	kv = &r->scen[r->n_scen];
	kv->key = util_asprintf("%s.%s", section, name);
	kv->value = strdup(value);
	if (!kv->key || !kv->value) {
		free(kv->key);
		free(kv->value);
		return 0;
	}
	r->n_scen++;
	return 1;
}

static const char *scen_get(const struct run *r, const char *key)
{
	for (size_t i = 0; i < r->n_scen; i++)
		if (!strcmp(r->scen[i].key, key))
			return r->scen[i].value;
	return NULL;
}

/* machine.txt's "host: NAME" line, if there is one (older runs and hand-made dirs may lack it). */
static void read_host(struct run *r)
{
	char *path = util_asprintf("%s/machine.txt", r->dir);
	char *text = path ? util_read_file(path, NULL) : NULL;
	char *line = text;

	while (line && *line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (!strncmp(line, "host: ", 6)) {
			r->host = strdup(line + 6);
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	free(path);
}

static long need_column(const struct run *r, const char *name)
{
	long c = csv_column(&r->t, name);

	if (c < 0)
		fprintf(stderr,
			"iommulab compare: %s:1: no '%s' column: not a trials.csv iommulab wrote\n",
			r->trials_path, name);
	return c;
}

/* Read a results directory: trials.csv, scenario.ini, machine.txt. 0 or EXIT_USAGE (printed). */
static int load_run(struct run *r)
{
	char err[1024] = "";
	struct stat st;
	long c_status, c_plugin;
	char *path;
	int rc;

	if (stat(r->dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "iommulab compare: %s (%s): %s\n", r->dir, r->label,
			stat(r->dir, &st) ? "no such directory" : "not a directory");
		return EXIT_USAGE;
	}
	r->trials_path = util_asprintf("%s/trials.csv", r->dir);
	if (!r->trials_path)
		return EXIT_USAGE;
	rc = csv_read(r->trials_path, &r->t, err, sizeof(err));
	if (!rc)
		rc = agg_check_numbers(&r->t, r->trials_path, err, sizeof(err));
	if (rc) {
		if (rc == -EINVAL)
			fprintf(stderr, "iommulab compare: %s\n", err);
		else
			fprintf(stderr,
				"iommulab compare: %s: cannot read it (%s): not a results "
				"directory of `iommulab run`\n",
				r->trials_path, strerror(-rc));
		return EXIT_USAGE;
	}
	c_status = need_column(r, "status");
	c_plugin = need_column(r, "plugin");
	if (c_status < 0 || c_plugin < 0 || need_column(r, "point") < 0)
		return EXIT_USAGE;
	if (c_status <= c_plugin) {
		fprintf(stderr,
			"iommulab compare: %s:1: 'status' comes before 'plugin': not a trials.csv "
			"iommulab wrote\n",
			r->trials_path);
		return EXIT_USAGE;
	}
	/* results.h's column order: trial, point, repeat, plugin, the axes, status, ... */
	r->c_plugin = (size_t)c_plugin;
	r->axis0 = (size_t)c_plugin + 1;
	r->n_axes = (size_t)c_status - r->axis0;
	r->at = (struct agg_table){ .rows = (char *const *const *)r->t.rows,
				    .n_rows = r->t.n_rows,
				    .c_status = (size_t)c_status };

	path = util_asprintf("%s/scenario.ini", r->dir);
	if (!path)
		return EXIT_USAGE;
	errno = 0;
	rc = ini_parse(path, on_scenario_key, r);
	if (rc) {
		if (rc < 0)
			fprintf(stderr, "iommulab compare: %s: cannot read it: %s\n", path,
				strerror(errno ? errno : EIO));
		else
			fprintf(stderr,
				"iommulab compare: %s:%d: not a scenario.ini iommulab wrote\n",
				path, rc);
		free(path);
		return EXIT_USAGE;
	}
	if (!scen_get(r, "scenario.workload")) {
		fprintf(stderr,
			"iommulab compare: %s: no [scenario] workload: not a scenario.ini "
			"iommulab wrote\n",
			path);
		free(path);
		return EXIT_USAGE;
	}
	free(path);
	read_host(r);
	return 0;
}

/* r's histograms.csv, if it has one (runs from before iommulab kept them have none). */
static int load_hist(struct run *r)
{
	char err[1024];
	char *path = util_asprintf("%s/%s", r->dir, HISTFILE_NAME);
	int rc;

	if (!path)
		return EXIT_USAGE;
	r->c_trial = csv_column(&r->t, "trial");
	rc = histfile_read(path, &r->hf, err, sizeof(err));
	free(path);
	if (rc == -ENOENT || (!rc && r->c_trial < 0)) {
		histfile_free(&r->hf);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "iommulab compare: %s\n", err);
		return EXIT_USAGE;
	}
	r->have_hist = true;
	return 0;
}

/*
 * The metric's column in r, and every ok row's field there a number or empty (empty: the
 * trial has no such value, e.g. a phase the null plugin never marks). 0 or EXIT_USAGE.
 */
static int check_metric(struct run *r, const char *metric)
{
	r->metric = csv_column(&r->t, metric);
	if (r->metric < 0)
		return EXIT_USAGE;
	for (size_t i = 0; i < r->t.n_rows; i++) {
		const char *s = r->t.rows[i][r->metric];
		double v;

		if (agg_row_ok(&r->at, i) && *s && !agg_value(s, &v)) {
			fprintf(stderr, "iommulab compare: %s:%zu: %s '%s' is not a number\n",
				r->trials_path, r->t.lines[i], metric, s);
			return -1;
		}
	}
	return 0;
}

/* Whether column c of r holds a number in some ok row: a metric one can compare. */
static bool numeric_column(const struct run *r, size_t c)
{
	double v;

	for (size_t i = 0; i < r->t.n_rows; i++)
		if (agg_row_ok(&r->at, i) && agg_value(r->t.rows[i][c], &v))
			return true;
	return false;
}

static void print_metrics(const struct run *a, const struct run *b)
{
	const char *sep = "";

	fputs("available metrics (numeric in both runs):", stderr);
	for (size_t c = a->at.c_status + 1; c < a->t.n_cols; c++) {
		long cb = csv_column(&b->t, a->t.header[c]);

		if (cb < 0 || !numeric_column(a, c) || !numeric_column(b, (size_t)cb))
			continue;
		fprintf(stderr, "%s %s", sep, a->t.header[c]);
		sep = ",";
	}
	fputc('\n', stderr);
}

/* The axes of a and b must be the same keys: otherwise the points mean different things. */
static int check_comparable(const struct run *a, const struct run *b)
{
	const char *wa = scen_get(a, "scenario.workload"), *wb = scen_get(b, "scenario.workload");
	bool same_axes = a->n_axes == b->n_axes;

	if (strcmp(wa, wb)) {
		fprintf(stderr,
			"iommulab compare: refusing to compare %s (workload %s) with %s (workload "
			"%s): different workloads measure different operations\n",
			a->dir, wa, b->dir, wb);
		return EXIT_USAGE;
	}
	for (size_t i = 0; same_axes && i < a->n_axes; i++)
		same_axes = !strcmp(a->t.header[a->axis0 + i], b->t.header[b->axis0 + i]);
	if (!same_axes) {
		fprintf(stderr, "iommulab compare: refusing to compare: %s sweeps", a->dir);
		for (size_t i = 0; i < a->n_axes; i++)
			fprintf(stderr, "%s %s", i ? "," : "", a->t.header[a->axis0 + i]);
		fprintf(stderr, "%s, %s sweeps", a->n_axes ? "" : " nothing", b->dir);
		for (size_t i = 0; i < b->n_axes; i++)
			fprintf(stderr, "%s %s", i ? "," : "", b->t.header[b->axis0 + i]);
		fprintf(stderr,
			"%s: their points are on different x axes (run both with the same "
			"[sweep] keys)\n",
			b->n_axes ? "" : " nothing");
		return EXIT_USAGE;
	}
	return 0;
}

/* Keys not worth a note: the name, and what the table itself shows (points, plugins). */
static bool noted_elsewhere(const char *key)
{
	return !strcmp(key, "scenario.name") || !strncmp(key, "sweep.", 6) ||
	       !strncmp(key, "plugins.", 8);
}

/* Whether key belongs in the note of pass machine (machine.* keys) and is not noted elsewhere. */
static bool in_note(const char *key, bool machine)
{
	return !strncmp(key, "machine.", 8) == machine && !noted_elsewhere(key) &&
	       strcmp(key, "scenario.engine");
}

/* The notes above the table: engine, machine and any other scenario key that differs. */
static void print_differences(const struct run *a, const struct run *b)
{
	const char *ea = scen_get(a, "scenario.engine"), *eb = scen_get(b, "scenario.engine");

	if (ea && eb && strcmp(ea, eb))
		printf("note: engines differ: A %s, B %s\n", ea, eb);
	if (a->host && b->host && strcmp(a->host, b->host))
		printf("note: machines differ: A host %s, B host %s\n", a->host, b->host);
	for (int pass = 0; pass < 2; pass++) {
		bool machine = pass == 0;
		size_t n = 0;

		/* A's keys that B lacks or sets otherwise, then B's that A lacks. */
		for (size_t i = 0; i < a->n_scen + b->n_scen; i++) {
			bool from_a = i < a->n_scen;
			const struct kv *k = from_a ? &a->scen[i] : &b->scen[i - a->n_scen];
			const char *other = scen_get(from_a ? b : a, k->key);

			if (!in_note(k->key, machine) || (other && !strcmp(other, k->value)) ||
			    (!from_a && other))
				continue;
			if (!n)
				printf("note: %s differ:",
				       machine ? "simulated machines" : "scenarios");
			printf("%s %s = %s in A, %s in B", n ? "," : "", k->key,
			       from_a ? k->value : "(absent)",
			       from_a ? (other ? other : "(absent)") : k->value);
			n++;
		}
		if (n)
			putchar('\n');
	}
}

static int group_run(struct run *r)
{
	size_t cols[1 + 64];

	if (r->n_axes > 64)
		return -EINVAL;
	cols[0] = r->c_plugin;
	for (size_t i = 0; i < r->n_axes; i++)
		cols[1 + i] = r->axis0 + i;
	r->key = malloc((r->t.n_rows + 1) * sizeof(*r->key));
	r->scratch = malloc((r->t.n_rows + 1) * sizeof(*r->scratch));
	if (!r->key || !r->scratch)
		return -ENOMEM;
	agg_key_columns(&r->at, cols, 1 + r->n_axes, r->key);
	return agg_group_by(&r->at, r->key, &r->groups);
}

/* The first row of group g of r. */
static char *const *group_row(const struct run *r, const struct agg_group *g)
{
	return r->t.rows[g->rows[0]];
}

/* b's group with a's group's plugin and axis values, or NULL. */
static const struct agg_group *find_group(const struct run *a, const struct agg_group *ga,
					  const struct run *b)
{
	char *const *ra = group_row(a, ga);

	for (size_t i = 0; i < b->groups.n; i++) {
		char *const *rb = group_row(b, &b->groups.g[i]);
		bool same = !strcmp(ra[a->c_plugin], rb[b->c_plugin]);

		for (size_t k = 0; same && k < a->n_axes; k++)
			same = !strcmp(ra[a->axis0 + k], rb[b->axis0 + k]);
		if (same)
			return &b->groups.g[i];
	}
	return NULL;
}

/* "scenario.cpus=2, smmu.msi=false", or "-" without axes. */
static void format_point(const struct run *r, const struct agg_group *g, char *buf, size_t len)
{
	char *const *row = group_row(r, g);
	size_t at = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < r->n_axes && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", k ? ", " : "",
				       r->t.header[r->axis0 + k], row[r->axis0 + k]);
	if (!r->n_axes)
		snprintf(buf, len, "-");
}

/* The ok repeats' values of the metric in g (n of them), into r->scratch. */
static size_t group_values(const struct run *r, const struct agg_group *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n_rows; i++) {
		size_t row = g->rows[i];

		if (agg_row_ok(&r->at, row) && agg_value(r->t.rows[row][r->metric], &r->scratch[n]))
			n++;
	}
	return n;
}

/* A value for reading: whole numbers from 1000 up (ops/s, ns), 4 significant digits below. */
static int format_num(char *buf, size_t len, double v)
{
	return snprintf(buf, len, fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
}

static void format_mean(struct mean_ci m, char *buf, size_t len)
{
	int at;

	if (!m.n) {
		snprintf(buf, len, "no ok repeat");
		return;
	}
	at = format_num(buf, len, m.mean);
	if (at < 0 || (size_t)at >= len)
		return;
	if (m.n < 2) {
		snprintf(buf + at, len - (size_t)at, " (n=1)");
		return;
	}
	at += snprintf(buf + at, len - (size_t)at, " +/- ");
	if (at < 0 || (size_t)at >= len)
		return;
	at += format_num(buf + at, len - (size_t)at, m.half_width);
	if (at >= 0 && (size_t)at < len)
		snprintf(buf + at, len - (size_t)at, " (n=%zu)", m.n);
}

/* Decimals enough to show a ratio's half-width with one significant digit (2 to 4). */
static int ratio_decimals(double hw)
{
	int d = hw > 0 ? (int)ceil(-log10(hw)) : 4;

	return d < 2 ? 2 : d > 4 ? 4 : d;
}

struct tally {
	size_t better, worse, same, few, only_a, only_b;
};

/* One (plugin, point) both ran: a table line, and the sentence when it is significant. */
static int compare_group(const struct run *a, const struct agg_group *ga, const struct run *b,
			 const struct agg_group *gb, const char *metric, double alpha,
			 struct tally *t)
{
	struct mean_ci ma = agg_mean_ci(&a->at, ga, (size_t)a->metric, a->scratch);
	struct mean_ci mb = agg_mean_ci(&b->at, gb, (size_t)b->metric, b->scratch);
	enum direction dir = metric_direction(metric);
	char point[256], sa[64], sb[64], ratio[64] = "-", test[64] = "-";
	const char *plugin = group_row(a, ga)[a->c_plugin], *verdict;
	struct stats_ratio r = stats_ratio_ci(ma, mb);
	struct stats_mwu u;
	size_t na, nb;
	int ret;

	format_point(a, ga, point, sizeof(point));
	format_mean(ma, sa, sizeof(sa));
	format_mean(mb, sb, sizeof(sb));
	if (!isnan(r.ratio) && !isnan(r.half_width))
		snprintf(ratio, sizeof(ratio), "%.*f +/- %.*f", ratio_decimals(r.half_width),
			 r.ratio, ratio_decimals(r.half_width), r.half_width);
	else if (!isnan(r.ratio))
		snprintf(ratio, sizeof(ratio), "%.3f", r.ratio);

	if (ma.n < 2 || mb.n < 2) {
		verdict = "too few repeats";
		t->few++;
		goto print;
	}
	/* agg_mean_ci filled scratch from the same rows: take the values again, side by side. */
	na = group_values(a, ga);
	nb = group_values(b, gb);
	ret = stats_mann_whitney(a->scratch, na, b->scratch, nb, &u);
	if (ret)
		return ret;
	snprintf(test, sizeof(test), "p=%.3g (%s%s)", u.p, stats_mwu_method_name(u.method),
		 u.all_tied ? ", all equal" : "");
	if (u.p >= alpha) {
		verdict = "no significant difference";
		t->same++;
	} else {
		bool up = mb.mean > ma.mean;
		bool better = dir == LOWER_BETTER ? !up : up;

		if (dir == NEUTRAL)
			verdict = up ? "higher" : "lower";
		else
			verdict = better ? "faster" : "slower";
		if (better)
			t->better++;
		else
			t->worse++;
	}
print:
	printf("%-12s %-28s %-30s %-30s %-18s %-22s %s\n", plugin, point, sa, sb, ratio, test,
	       verdict);
	return 0;
}

/* The hyperfine-style sentences, after the table, for the significant differences. */
static void print_sentences(const struct run *a, const struct run *b, const char *metric,
			    double alpha)
{
	enum direction dir = metric_direction(metric);

	for (size_t i = 0; i < a->groups.n; i++) {
		const struct agg_group *ga = &a->groups.g[i], *gb = find_group(a, ga, b);
		struct mean_ci ma, mb;
		struct stats_ratio r;
		struct stats_mwu u;
		char point[256];
		size_t na, nb;
		double f, hw;
		bool up;

		if (!gb)
			continue;
		ma = agg_mean_ci(&a->at, ga, (size_t)a->metric, a->scratch);
		mb = agg_mean_ci(&b->at, gb, (size_t)b->metric, b->scratch);
		if (ma.n < 2 || mb.n < 2)
			continue;
		na = group_values(a, ga);
		nb = group_values(b, gb);
		if (stats_mann_whitney(a->scratch, na, b->scratch, nb, &u) || u.p >= alpha)
			continue;
		r = stats_ratio_ci(ma, mb);
		if (isnan(r.ratio) || r.ratio <= 0)
			continue;
		/* The factor is told as >= 1 ("1.52 times slower", not "0.66 times faster"):
		 * 1/r carries the same relative error, so its half-width is hw / r^2. */
		up = r.ratio >= 1;
		f = up ? r.ratio : 1 / r.ratio;
		hw = up ? r.half_width : r.half_width / (r.ratio * r.ratio);
		format_point(a, ga, point, sizeof(point));
		printf("  %s at %s: ", group_row(a, ga)[a->c_plugin], point);
		if (dir == NEUTRAL)
			printf("%s was %.*f +/- %.*f times %s in B", metric, ratio_decimals(hw), f,
			       ratio_decimals(hw), hw, up ? "higher" : "lower");
		else
			printf("ran %.*f +/- %.*f times %s in B", ratio_decimals(hw), f,
			       ratio_decimals(hw), hw,
			       (dir == HIGHER_BETTER) == up ? "faster" : "slower");
		printf(" (p = %.3g)\n", u.p);
	}
}

static int compare_runs(const struct run *a, const struct run *b, const char *metric, double alpha)
{
	struct tally t = { 0 };
	char point[256];
	int ret;

	printf("%-12s %-28s %-30s %-30s %-18s %-22s %s\n", "plugin", "point", "A", "B", "B/A",
	       "Mann-Whitney", "verdict");
	for (size_t i = 0; i < a->groups.n; i++) {
		const struct agg_group *gb = find_group(a, &a->groups.g[i], b);

		if (!gb)
			continue;
		ret = compare_group(a, &a->groups.g[i], b, gb, metric, alpha, &t);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < a->groups.n; i++) {
		if (find_group(a, &a->groups.g[i], b))
			continue;
		format_point(a, &a->groups.g[i], point, sizeof(point));
		printf("only in A: %s at %s\n", group_row(a, &a->groups.g[i])[a->c_plugin], point);
		t.only_a++;
	}
	for (size_t i = 0; i < b->groups.n; i++) {
		if (find_group(b, &b->groups.g[i], a))
			continue;
		format_point(b, &b->groups.g[i], point, sizeof(point));
		printf("only in B: %s at %s\n", group_row(b, &b->groups.g[i])[b->c_plugin], point);
		t.only_b++;
	}
	if (t.better + t.worse) {
		printf("\nsignificant at alpha %g:\n", alpha);
		print_sentences(a, b, metric, alpha);
	}
	printf("\n%zu compared: %zu %s, %zu %s, %zu no significant difference, %zu too few "
	       "repeats; %zu only in A, %zu only in B\n",
	       t.better + t.worse + t.same + t.few, t.better,
	       metric_direction(metric) == NEUTRAL ? "higher" : "faster in B", t.worse,
	       metric_direction(metric) == NEUTRAL ? "lower" : "slower in B", t.same, t.few,
	       t.only_a, t.only_b);
	return 0;
}

/* ---- latency distributions (histograms.csv) ------------------------------------------- */

/*
 * h = metric's histograms pooled over g's ok rows; each ok row without one counted in
 * r->no_hist. Whether any row had one.
 */
static bool pool(struct run *r, const struct agg_group *g, const char *metric, struct hist *h)
{
	bool any = false;

	hist_reset(h);
	for (size_t i = 0; i < g->n_rows; i++) {
		size_t row = g->rows[i], n;
		const char *f = r->t.rows[row][r->c_trial];
		char *end;
		bool found = false;

		if (!agg_row_ok(&r->at, row))
			continue;
		unsigned long trial = strtoul(f, &end, 10);
		const size_t *at = *f && !*end ? histfile_find(&r->hf, trial, &n) : NULL;

		for (size_t k = 0; at && k < n; k++) {
			if (strcmp(r->hf.recs[at[k]].metric, metric))
				continue;
			histfile_rec_merge(h, &r->hf.recs[at[k]]);
			found = true;
		}
		r->no_hist += !found;
		any |= found;
	}
	return any;
}

/* The metrics the histograms of g's rows hold, in file order (up to max, into names). */
static size_t group_metrics(const struct run *r, const struct agg_group *g, const char **names,
			    size_t max)
{
	size_t n_names = 0;

	for (size_t i = 0; i < g->n_rows; i++) {
		const char *f = r->t.rows[g->rows[i]][r->c_trial];
		char *end;
		size_t n;
		unsigned long trial = strtoul(f, &end, 10);
		const size_t *at = *f && !*end ? histfile_find(&r->hf, trial, &n) : NULL;

		for (size_t k = 0; at && k < n; k++) {
			const char *m = r->hf.recs[at[k]].metric;
			size_t j = 0;

			while (j < n_names && strcmp(names[j], m))
				j++;
			if (j == n_names && n_names < max)
				names[n_names++] = m;
		}
	}
	return n_names;
}

static void format_ratio(char *buf, size_t len, uint64_t a, uint64_t b)
{
	if (a)
		snprintf(buf, len, "%.3f", (double)b / (double)a);
	else
		snprintf(buf, len, "%s", b ? "-" : "1.000");
}

struct dist_tally {
	size_t slower, faster, negligible, same, few;
};

/* One metric of one (plugin, point): a table line. */
static void compare_metric(struct run *a, const struct agg_group *ga, struct run *b,
			   const struct agg_group *gb, const char *metric, double alpha,
			   struct hist *ha, struct hist *hb, struct dist_tally *t)
{
	char point[256], r50[32], r99[32], a12s[16] = "-", test[32] = "-";
	const char *verdict;
	struct stats_mwu u;
	double a12;

	if (!pool(a, ga, metric, ha) || !pool(b, gb, metric, hb))
		return; /* a metric only one of them has */
	format_point(a, ga, point, sizeof(point));
	uint64_t a50 = hist_quantile(ha, 0.5), b50 = hist_quantile(hb, 0.5);
	uint64_t a99 = hist_quantile(ha, 0.99), b99 = hist_quantile(hb, 0.99);

	format_ratio(r50, sizeof(r50), a50, b50);
	format_ratio(r99, sizeof(r99), a99, b99);
	if (stats_mann_whitney_hist(ha, hb, &u, &a12)) {
		verdict = "too few values";
		t->few++;
	} else {
		snprintf(a12s, sizeof(a12s), "%.3f", a12);
		snprintf(test, sizeof(test), "p=%.3g%s", u.p, u.all_tied ? " (all equal)" : "");
		if (u.p >= alpha) {
			verdict = "no significant difference";
			t->same++;
		} else if (a12 >= STATS_A12_SMALL) {
			verdict = "slower";
			t->slower++;
		} else if (a12 <= 1 - STATS_A12_SMALL) {
			verdict = "faster";
			t->faster++;
		} else {
			verdict = "negligible shift";
			t->negligible++;
		}
	}
	printf("%-12s %-28s %-7s %10llu %10llu %-8s %10llu %10llu %-8s %-6s %-14s %s\n",
	       group_row(a, ga)[a->c_plugin], point, metric, (unsigned long long)a50,
	       (unsigned long long)b50, r50, (unsigned long long)a99, (unsigned long long)b99, r99,
	       a12s, test, verdict);
}

/*
 * Per (plugin, point) both ran and per latency metric, the histograms of the ok repeats pooled
 * in each run, compared: p50 and p99 B/A, and the Mann-Whitney U test of the two distributions
 * from their buckets with its effect size (stats_mann_whitney_hist). A difference is named
 * only when it is significant and at least a small effect: with thousands of correlated ops a
 * trial, p alone flags shifts nobody would call a change.
 */
static int compare_distributions(struct run *a, struct run *b, double alpha)
{
	struct hist *ha = malloc(sizeof(*ha)), *hb = malloc(sizeof(*hb));
	struct dist_tally t = { 0 };

	if (!ha || !hb) {
		free(ha);
		free(hb);
		return -ENOMEM;
	}
	printf("\nlatency distributions (%s), pooled over the ok repeats: p50 and p99 in ns, B/A "
	       "of each; A12 = P(B's latency > A's); two-sided Mann-Whitney U of the bucketed "
	       "values (ties within a bucket, normal approximation); slower/faster when p < %g "
	       "and A12 is at least a small effect (>= %.2f or <= %.2f, Vargha-Delaney)\n",
	       HISTFILE_NAME, alpha, STATS_A12_SMALL, 1 - STATS_A12_SMALL);
	printf("%-12s %-28s %-7s %10s %10s %-8s %10s %10s %-8s %-6s %-14s %s\n", "plugin", "point",
	       "metric", "A p50", "B p50", "B/A", "A p99", "B p99", "B/A", "A12", "Mann-Whitney",
	       "verdict");
	for (size_t i = 0; i < a->groups.n; i++) {
		const struct agg_group *ga = &a->groups.g[i], *gb = find_group(a, ga, b);
		const char *metrics[8]; /* a workload has up to 4 (trial.h) */
		size_t n;

		if (!gb)
			continue;
		n = group_metrics(a, ga, metrics, sizeof(metrics) / sizeof(metrics[0]));
		for (size_t m = 0; m < n; m++)
			compare_metric(a, ga, b, gb, metrics[m], alpha, ha, hb, &t);
	}
	free(ha);
	free(hb);
	printf("\ndistributions: %zu compared: %zu slower in B, %zu faster in B, %zu negligible "
	       "shift, %zu no significant difference, %zu too few values\n",
	       t.slower + t.faster + t.negligible + t.same + t.few, t.slower, t.faster,
	       t.negligible, t.same, t.few);
	for (const struct run *r = a; r; r = r == a ? b : NULL)
		if (r->no_hist)
			printf("note: %zu ok trial-metric(s) of %s (%s) have no histogram in its "
			       "%s: "
			       "left out of the distributions\n",
			       r->no_hist, r->label, r->dir, HISTFILE_NAME);
	return 0;
}

static void run_free(struct run *r)
{
	histfile_free(&r->hf);
	for (size_t i = 0; i < r->n_scen; i++) {
		free(r->scen[i].key);
		free(r->scen[i].value);
	}
	free(r->scen);
	free(r->host);
	free(r->key);
	free(r->scratch);
	agg_groups_free(&r->groups);
	if (r->trials_path)
		csv_free(&r->t);
	free(r->trials_path);
}

static int parse_alpha(const char *s, double *alpha)
{
	char *end;

	errno = 0;
	*alpha = strtod(s, &end);
	if (errno || end == s || *end || !(*alpha > 0 && *alpha < 1))
		return -EINVAL;
	return 0;
}

int cmd_compare(int argc, char **argv, struct cli_common *c)
{
	struct run a = { .label = "A" }, b = { .label = "B" };
	const char *metric = DEFAULT_METRIC;
	double alpha = DEFAULT_ALPHA;
	struct cli_parser p;
	int o, ra, rb, status = EXIT_USAGE;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0) {
		if (o == COMPARE_OPT_METRIC)
			metric = optarg;
		else if (o == COMPARE_OPT_ALPHA && parse_alpha(optarg, &alpha))
			return cli_usage_error(c->cmd,
					       "--alpha '%s': expected a probability between 0 "
					       "and 1, e.g. 0.05",
					       optarg);
	}
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (cli_operands(c->cmd, argc, argv, 2, "two results directories, A and B"))
		return EXIT_USAGE;
	a.dir = argv[optind];
	b.dir = argv[optind + 1];

	if (load_run(&a) || load_run(&b) || check_comparable(&a, &b) || load_hist(&a) ||
	    load_hist(&b))
		goto out;
	ra = check_metric(&a, metric);
	rb = check_metric(&b, metric);
	if (ra < 0 || rb < 0)
		goto out; /* a damaged field, said with its file:line */
	if (ra || rb || !numeric_column(&a, (size_t)a.metric) ||
	    !numeric_column(&b, (size_t)b.metric)) {
		fprintf(stderr, "iommulab compare: unknown metric '%s'\n", metric);
		print_metrics(&a, &b);
		goto out;
	}
	ra = group_run(&a);
	rb = ra ? 0 : group_run(&b);
	if (ra || rb) {
		fprintf(stderr, "iommulab compare: cannot group the trials of %s: %s\n",
			ra ? a.dir : b.dir,
			(ra ? ra : rb) == -EINVAL ? "more than 64 sweep axes" : strerror(ENOMEM));
		goto out;
	}
	printf("compare: A %s (%zu trials) -> B %s (%zu trials), workload %s\n", a.dir, a.t.n_rows,
	       b.dir, b.t.n_rows, scen_get(&a, "scenario.workload"));
	printf("metric %s (%s), mean +/- 95%% CI over ok repeats; B/A +/- its 95%% interval "
	       "(delta method); two-sided Mann-Whitney U at alpha %g\n",
	       metric,
	       metric_direction(metric) == HIGHER_BETTER  ? "higher is better"
	       : metric_direction(metric) == LOWER_BETTER ? "lower is better"
							  : "neither better",
	       alpha);
	print_differences(&a, &b);
	for (const struct run *r = &a; r; r = r == &a ? &b : NULL)
		if (!r->have_hist)
			printf("note: %s (%s) has no %s (a run from before iommulab kept the "
			       "latency histograms): only the means are compared\n",
			       r->label, r->dir, HISTFILE_NAME);
	if (compare_runs(&a, &b, metric, alpha) ||
	    (a.have_hist && b.have_hist && compare_distributions(&a, &b, alpha))) {
		fprintf(stderr, "iommulab compare: out of memory\n");
		goto out;
	}
	status = EXIT_OK;
out:
	run_free(&a);
	run_free(&b);
	return status;
}
