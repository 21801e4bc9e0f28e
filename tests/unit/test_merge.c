/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of results/merge: trials.csv of two runs with different plugins (so different
 * counter and phase columns) merged into one table with the union of the columns, ordered by
 * trial number; overlap, out-of-range and missing trials; a header's layout read back; the
 * merged table written as a results dir and read again.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/columns.h"
#include "results/csv.h"
#include "results/merge.h"
#include "results/results.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/iommulab-test-merge-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tree(void)
{
	char cmd[128];

	/* Only our own mkdtemp() directory, whose name has no shell metacharacters. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(merge, .init = make_tmpdir, .fini = remove_tree);

static const char *const axes[] = { "scenario.cpus" };
static const char *const metrics[] = { "op" };
/* Run A: a CAS strategy; run B: a lock, with a phase and counters A does not have. */
static const char *const phases_a[] = { "other", "reserve" };
static const char *const counters_a[] = { "cas_attempts", "dev_syncs" };
static const char *const phases_b[] = { "other", "reserve", "sync_wait" };
static const char *const counters_b[] = { "lock_wait_ns", "dev_syncs" };
static const struct results_layout layout_a = { .axes = axes,
						.n_axes = 1,
						.metrics = metrics,
						.n_metrics = 1,
						.phases = phases_a,
						.n_phases = 2,
						.counters = counters_a,
						.n_counters = 2 };
static const struct results_layout layout_b = { .axes = axes,
						.n_axes = 1,
						.metrics = metrics,
						.n_metrics = 1,
						.phases = phases_b,
						.n_phases = 3,
						.counters = counters_b,
						.n_counters = 2 };

static const char *const cpus_2[] = { "2" };

static void fill(struct trial_result *t, uint32_t index, const char *plugin, bool b)
{
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->point = index / 2;
	t->repeat = index % 2;
	t->plugin = plugin;
	t->swept_values = cpus_2;
	t->n_swept = 1;
	t->status = TRIAL_OK;
	t->cpus = 2;
	t->engine = "sim";
	t->device_mode = "inline";
	t->duration_s = 0.005;
	t->ops = 1000 + index;
	t->ops_per_sec = (double)t->ops / t->duration_s;
	t->ops_min_cpu = t->ops / 2;
	t->ops_max_cpu = t->ops - t->ops / 2;
	t->n_metrics = 1;
	t->metrics[0].name = "op";
	t->metrics[0].lat =
		(struct lat_summary){ .count = t->ops, .mean = 900 + index, .p50 = 850 };
	t->n_phases = 2;
	t->phases[0] = (struct trial_phase){ "other", 10 };
	t->phases[1] = (struct trial_phase){ "reserve", 20 };
	t->n_counters = 2;
	t->counters[0] = (struct trial_counter){ b ? "lock_wait_ns" : "cas_attempts",
						 LAB_COUNTER_EVENTS, 3000, 3 };
	t->counters[1] = (struct trial_counter){ "dev_syncs", LAB_COUNTER_EVENTS, 1000, 1 };
	if (b)
		t->phases[t->n_phases++] = (struct trial_phase){ "sync_wait", 30 };
}

/* A run's dir tmpdir/name with the given trial numbers; returns its trials.csv read back. */
static void write_run(const char *name, const struct results_layout *l, bool b,
		      const uint32_t *trials, size_t n, struct csv_table *out)
{
	char dir[128], path[160], err[512] = "";
	struct trial_result t;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	struct results *r = results_create(dir, l, err, sizeof(err));
	cr_assert_not_null(r, "results_create: %s", err);
	for (size_t i = 0; i < n; i++) {
		fill(&t, trials[i], b ? "biglock" : "cmpxchg", b);
		if (trials[i] == 3) {
			t.status = TRIAL_FAILED;
			snprintf(t.error, sizeof(t.error), "slot 3, \"bad\" opcode, see below");
		}
		cr_assert_eq(results_append(r, &t), 0);
	}
	results_close(r);
	snprintf(path, sizeof(path), "%s/trials.csv", dir);
	cr_assert_eq(csv_read(path, out, err, sizeof(err)), 0, "%s", err);
}

static const char *cell(const struct merge_table *t, size_t row, const char *col)
{
	for (size_t c = 0; c < t->n_cols; c++)
		if (!strcmp(t->header[c], col))
			return t->rows[row][c];
	cr_assert_fail("no column %s", col);
	return NULL;
}

Test(merge, union_of_columns_in_trial_order, .timeout = 10)
{
	static const uint32_t ta[] = { 1, 3 }, tb[] = { 0, 2 };
	struct csv_table in[2];
	const char *names[] = { "a/trials.csv", "b/trials.csv" };
	struct merge_table m;
	char err[512];

	write_run("a", &layout_a, false, ta, 2, &in[0]);
	write_run("b", &layout_b, true, tb, 2, &in[1]);
	cr_assert_eq(merge_tables(in, names, 2, 4, &m, err, sizeof(err)), 0, "%s", err);
	/* A's columns plus B's sync_wait phase and lock_wait_ns counter pair. */
	cr_assert_eq(m.n_cols, in[0].n_cols + 3);
	cr_assert_eq(m.n_rows, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(m.trial[i], i);
		char want[8];
		snprintf(want, sizeof(want), "%zu", i);
		cr_assert_str_eq(cell(&m, i, "trial"), want);
		cr_assert_str_eq(cell(&m, i, "plugin"), i % 2 ? "cmpxchg" : "biglock");
		cr_assert_eq(m.from[i], i % 2 ? 0u : 1u);
		/* Each run's own columns are filled, the other's left empty (and a failed
		 * trial's counters, as the writer leaves them). */
		cr_assert_str_eq(cell(&m, i, "cas_attempts"), i == 1 ? "3000" : "");
		cr_assert_str_eq(cell(&m, i, "lock_wait_ns_per_op"), i % 2 ? "" : "3");
		cr_assert_str_eq(cell(&m, i, "phase_sync_wait_ns"), i % 2 ? "" : "30");
		cr_assert_str_eq(cell(&m, i, "dev_syncs"), i == 3 ? "" : "1000");
	}
	cr_assert_str_eq(m.header[m.n_cols - 1], "error");
	cr_assert_str_eq(cell(&m, 3, "error"), "slot 3, \"bad\" opcode, see below");

	/* The union is a layout, and written back it reads as one table. */
	struct results_layout l;
	cr_assert_eq(merge_layout_parse(m.header, m.n_cols, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n_axes, 1);
	cr_assert_str_eq(l.axes[0], "scenario.cpus");
	cr_assert_eq(l.n_metrics, 1);
	cr_assert_eq(l.n_phases, 3);
	cr_assert_eq(l.n_counters, 3);
	merge_layout_free(&l);

	char out[128], path[160];
	snprintf(out, sizeof(out), "%s/merged", tmpdir);
	struct results_meta meta = { .name = "t" };
	cr_assert_eq(merge_write(out, &m, &meta, err, sizeof(err)), 0, "%s", err);
	struct csv_table back;
	snprintf(path, sizeof(path), "%s/trials.csv", out);
	cr_assert_eq(csv_read(path, &back, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(back.n_rows, 4);
	cr_assert_eq(back.n_cols, m.n_cols);
	for (size_t i = 0; i < 4; i++)
		for (size_t c = 0; c < m.n_cols; c++)
			cr_assert_str_eq(back.rows[i][c], m.rows[i][c]);
	snprintf(path, sizeof(path), "%s/summary.json", out);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no summary.json");
	fclose(f);
	/* A second merge into the same dir is refused, as a run is. */
	cr_assert_eq(merge_write(out, &m, &meta, err, sizeof(err)), -EEXIST);

	csv_free(&back);
	merge_table_free(&m);
	csv_free(&in[0]);
	csv_free(&in[1]);
}

Test(merge, identical_layouts_merge_byte_for_byte, .timeout = 10)
{
	static const uint32_t all[] = { 0, 1, 2, 3 }, even[] = { 0, 2 }, odd[] = { 1, 3 };
	struct csv_table in[3];
	const char *names[] = { "even", "odd" };
	struct merge_table m;
	char err[512], out[128], path[2][160];

	write_run("whole", &layout_a, false, all, 4, &in[2]);
	write_run("even", &layout_a, false, even, 2, &in[0]);
	write_run("odd", &layout_a, false, odd, 2, &in[1]);
	cr_assert_eq(merge_tables(in, names, 2, 4, &m, err, sizeof(err)), 0, "%s", err);
	snprintf(out, sizeof(out), "%s/merged", tmpdir);
	struct results_meta meta = { .name = "t" };
	cr_assert_eq(merge_write(out, &m, &meta, err, sizeof(err)), 0, "%s", err);
	snprintf(path[0], sizeof(path[0]), "%s/trials.csv", out);
	snprintf(path[1], sizeof(path[1]), "%s/whole/trials.csv", tmpdir);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", path[0], path[1]);
	cr_assert_eq(system(cmd), 0, "the merged trials.csv is not the whole run's");
	merge_table_free(&m);
	for (int i = 0; i < 3; i++)
		csv_free(&in[i]);
}

Test(merge, overlap_is_refused_naming_the_trial, .timeout = 10)
{
	static const uint32_t ta[] = { 0, 1 }, tb[] = { 1, 2 };
	struct csv_table in[2];
	const char *names[] = { "a/trials.csv", "b/trials.csv" };
	struct merge_table m;
	char err[512];

	write_run("a", &layout_a, false, ta, 2, &in[0]);
	write_run("b", &layout_a, false, tb, 2, &in[1]);
	cr_assert_eq(merge_tables(in, names, 2, 4, &m, err, sizeof(err)), -EEXIST);
	cr_assert(strstr(err, "trial 1 is in both a/trials.csv (line 3) and b/trials.csv (line 2)"),
		  "%s", err);
	csv_free(&in[0]);
	csv_free(&in[1]);
}

Test(merge, trial_past_the_scenario_is_refused, .timeout = 10)
{
	static const uint32_t ta[] = { 0, 7 };
	struct csv_table in[1];
	const char *names[] = { "a/trials.csv" };
	struct merge_table m;
	char err[512];

	write_run("a", &layout_a, false, ta, 2, &in[0]);
	cr_assert_eq(merge_tables(in, names, 1, 4, &m, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "a/trials.csv:3: trial 7, but the scenario has 4 trials"), "%s", err);
	csv_free(&in[0]);
}

/* A trial number is digits only, as the run writes it: a sign or a blank means an edited file. */
Test(merge, a_trial_number_with_a_sign_or_blank_is_refused, .timeout = 10)
{
	static const uint32_t ta[] = { 0, 1 };
	static const char *const bad[] = { "+1", " 1", "-1", "1e0", "" };
	struct csv_table in[1];
	const char *names[] = { "a/trials.csv" };
	struct merge_table m;
	char err[512], want[80];

	write_run("a", &layout_a, false, ta, 2, &in[0]);
	long c = csv_column(&in[0], "trial");
	cr_assert_geq(c, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		free(in[0].rows[1][c]);
		in[0].rows[1][c] = strdup(bad[i]);
		cr_assert_eq(merge_tables(in, names, 1, 4, &m, err, sizeof(err)), -EINVAL,
			     "'%s' was taken", bad[i]);
		snprintf(want, sizeof(want), "a/trials.csv:3: trial '%s' is not a trial number",
			 bad[i]);
		cr_assert(strstr(err, want), "%s", err);
	}
	csv_free(&in[0]);
}

Test(merge, missing_trials_are_listed_as_ranges, .timeout = 10)
{
	static const uint32_t ta[] = { 0, 3, 7 };
	struct csv_table in[1];
	const char *names[] = { "a/trials.csv" };
	struct merge_table m;
	char err[512], text[64];

	write_run("a", &layout_a, false, ta, 3, &in[0]);
	cr_assert_eq(merge_tables(in, names, 1, 10, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(merge_missing(&m, 10, text, sizeof(text)), 7);
	cr_assert_str_eq(text, "1-2, 4-6, 8-9");
	cr_assert_eq(merge_missing(&m, 8, text, sizeof(text)), 5);
	cr_assert_str_eq(text, "1-2, 4-6");
	cr_assert_eq(merge_missing(&m, 10, text, 12), 7);
	cr_assert_str_eq(text, "1-2, ...");
	merge_table_free(&m);
	csv_free(&in[0]);
}

Test(merge, layout_parse_refuses_a_foreign_header, .timeout = 10)
{
	struct results_columns cols;
	struct results_layout l;
	char err[256];

	cr_assert_eq(columns_build(&cols, &layout_b), 0);
	char **h = calloc(cols.n + 1, sizeof(*h));
	for (size_t i = 0; i < cols.n; i++)
		h[i] = cols.cols[i].name;
	cr_assert_eq(merge_layout_parse(h, cols.n, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n_phases, 3);
	cr_assert_str_eq(l.phases[2], "sync_wait");
	cr_assert_str_eq(l.counters[0], "lock_wait_ns");
	merge_layout_free(&l);
	/* A column out of place (the counter pair split) is named. */
	size_t pair = 0;
	for (size_t i = 0; i + 1 < cols.n; i++)
		if (!strcmp(h[i], "dev_syncs") && !strcmp(h[i + 1], "dev_syncs_per_op"))
			pair = i;
	cr_assert_gt(pair, 0, "no dev_syncs pair in the header");
	char *tmp = h[pair];
	h[pair] = h[pair + 1];
	h[pair + 1] = tmp;
	cr_assert_eq(merge_layout_parse(h, cols.n, &l, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "dev_syncs_per_op"), "%s", err);
	free(h);
	columns_free(&cols);
}
