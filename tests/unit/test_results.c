/* SPDX-License-Identifier: MIT */
/* Unit tests of the results directory: trials.csv rows, summary.json, atomic writes. */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/aggregate.h"
#include "results/columns.h"
#include "results/csv.h"
#include "results/results.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/iommulab-test-results-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tree(void)
{
	char cmd[128];

	/* Only our own mkdtemp() directory, whose name has no shell metacharacters. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(results, .init = make_tmpdir, .fini = remove_tree);

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* ---- a minimal strict JSON validator, so the test needs nothing but C ---- */

static const char *json_value(const char *p);

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
	       *p == '-')
		p++;
	char *end;
	strtod(s, &end);
	return end == p ? p : NULL;
}

static const char *json_value(const char *p)
{
	p = ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool object = *p == '{';

		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (object) {
				p = json_string(ws(p));
				if (!p)
					return NULL;
				p = ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p);
			if (!p)
				return NULL;
			p = ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

static bool json_valid(const char *text)
{
	const char *end = json_value(text);

	return end && *ws(end) == '\0';
}

/* ---- fixtures ---- */

static const char *const axes[] = { "workload.cmdq.cmds_per_sync" };
static const char *const metrics[] = { "op" };
static const char *const phases[] = { "other", "reserve" };
static const char *const counters[] = { "cas_attempts", "magazines_held" };
static const struct results_layout layout = {
	.axes = axes,
	.n_axes = 1,
	.metrics = metrics,
	.n_metrics = 1,
	.phases = phases,
	.n_phases = 2,
	.counters = counters,
	.n_counters = 2,
};

static const char *const sweep_4[] = { "4" };
#define BAD_ERROR "device: slot 3, \"bad\" opcode 0x7f"

static void fill_trial(struct trial_result *t, uint32_t index, uint32_t repeat, const char *plugin,
		       double ops_per_sec, uint64_t p50)
{
	memset(t, 0, sizeof(*t));
	t->index = index;
	t->point = 0;
	t->repeat = repeat;
	t->plugin = plugin;
	t->swept_values = sweep_4;
	t->n_swept = 1;
	t->status = TRIAL_OK;
	t->cpus = 2;
	t->engine = "native";
	t->device_mode = "inline";
	t->duration_s = 0.5;
	t->ops = (uint64_t)(ops_per_sec / 2);
	t->ops_per_sec = ops_per_sec;
	t->ops_min_cpu = t->ops / 2 - 10;
	t->ops_max_cpu = t->ops / 2 + 10;
	t->n_metrics = 1;
	t->metrics[0].name = "op";
	t->metrics[0].lat = (struct lat_summary){ .count = t->ops,
						  .mean = 950.25,
						  .stddev = 80.5,
						  .min = 700,
						  .p50 = p50,
						  .p90 = 1100,
						  .p99 = 2000,
						  .p999 = 5000,
						  .max = 90000 };
	t->n_phases = 2;
	t->phases[0] = (struct trial_phase){ "other", 100.5 };
	t->phases[1] = (struct trial_phase){ "reserve", 42.0 };
	t->n_counters = 2;
	t->counters[0] = (struct trial_counter){ "cas_attempts", LAB_COUNTER_EVENTS, 3000, 1.5 };
	t->counters[1] = (struct trial_counter){ "magazines_held", LAB_COUNTER_LEVEL, 7, 7 };
}

static struct results *write_three(void)
{
	char err[256] = "";
	struct results *r = results_create(tmpdir, &layout, err, sizeof(err));
	struct trial_result t;

	cr_assert_not_null(r, "results_create: %s", err);
	fill_trial(&t, 0, 0, "cmpxchg", 2000000.0, 900);
	cr_assert_eq(results_append(r, &t), 0);
	fill_trial(&t, 1, 1, "cmpxchg", 2200000.0, 920);
	cr_assert_eq(results_append(r, &t), 0);
	fill_trial(&t, 2, 0, "spinlock", 0, 0);
	t.status = TRIAL_FAILED;
	snprintf(t.error, sizeof(t.error), "%s", BAD_ERROR);
	cr_assert_eq(results_append(r, &t), 0);
	return r;
}

static const char *cell(const struct csv_table *t, size_t row, const char *col)
{
	long c = csv_column(t, col);

	cr_assert(c >= 0, "column %s missing", col);
	return t->rows[row][c];
}

Test(results, csv_parses_back_with_columns_and_values, .timeout = 10)
{
	struct results *r = write_three();
	struct csv_table t;
	char path[256], err[256];

	/* Read before closing: every appended row must already be in the file. */
	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	cr_assert_eq(csv_read(path, &t, err, sizeof(err)), 0, "%s", err);
	results_close(r);

	const char *want[] = { "trial",
			       "point",
			       "repeat",
			       "plugin",
			       "workload.cmdq.cmds_per_sync",
			       "status",
			       "cpus",
			       "engine",
			       "device",
			       "oversubscribed",
			       "duration_s",
			       "ops",
			       "ops_per_sec",
			       "ops_min_cpu",
			       "ops_max_cpu",
			       "steady_drift",
			       "window_overrun",
			       "op_mean_ns",
			       "op_stddev_ns",
			       "op_min_ns",
			       "op_p50_ns",
			       "op_p90_ns",
			       "op_p99_ns",
			       "op_p999_ns",
			       "op_max_ns",
			       "phase_other_ns",
			       "phase_reserve_ns",
			       "cas_attempts",
			       "cas_attempts_per_op",
			       "magazines_held",
			       "magazines_held_per_op",
			       "desched_pct",
			       "invol_csw",
			       "load_start",
			       "load_end",
			       "steal_pct",
			       "error" };
	cr_assert_eq(t.n_cols, sizeof(want) / sizeof(want[0]));
	for (size_t c = 0; c < t.n_cols; c++)
		cr_assert_str_eq(t.header[c], want[c]);
	cr_assert_eq(t.n_rows, 3);

	cr_assert_str_eq(cell(&t, 0, "plugin"), "cmpxchg");
	cr_assert_str_eq(cell(&t, 0, "workload.cmdq.cmds_per_sync"), "4");
	cr_assert_str_eq(cell(&t, 0, "status"), "ok");
	cr_assert_str_eq(cell(&t, 1, "ops_per_sec"), "2200000");
	cr_assert_str_eq(cell(&t, 1, "op_p50_ns"), "920");
	cr_assert_str_eq(cell(&t, 0, "op_mean_ns"), "950.25");
	cr_assert_str_eq(cell(&t, 0, "phase_other_ns"), "100.5");
	cr_assert_str_eq(cell(&t, 0, "cas_attempts"), "3000");
	cr_assert_str_eq(cell(&t, 0, "cas_attempts_per_op"), "1.5");
	cr_assert_str_eq(cell(&t, 0, "magazines_held"), "7");
	cr_assert_str_eq(cell(&t, 0, "magazines_held_per_op"), "", "a level has no per-op value");
	cr_assert_str_eq(cell(&t, 0, "error"), "");

	cr_assert_str_eq(cell(&t, 2, "status"), "failed");
	cr_assert_str_eq(cell(&t, 2, "plugin"), "spinlock");
	cr_assert_str_eq(cell(&t, 2, "error"), BAD_ERROR, "quoted error survives the round trip");
	cr_assert_str_eq(cell(&t, 2, "ops_per_sec"), "", "no throughput for a failed trial");
	cr_assert_str_eq(cell(&t, 2, "cpus"), "2");
	csv_free(&t);
}

Test(results, failed_row_quotes_the_error_field, .timeout = 10)
{
	results_close(write_three());
	char path[256];

	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	char *text = slurp(path);
	cr_assert_not_null(text);
	cr_assert_not_null(strstr(text, ",\"device: slot 3, \"\"bad\"\" opcode 0x7f\"\n"),
			   "error column quoted with doubled quotes:\n%s", text);
	size_t lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	cr_assert_eq(lines, 4, "header + 3 rows, one line each");
	free(text);
}

Test(results, summary_json_is_valid_and_complete, .timeout = 10)
{
	struct results *r = write_three();
	struct results_meta meta = { .name = "cmdq \"ways\"",
				     .scenario_path = "configs/x.ini",
				     .started = "2024-01-01T00:00:00Z",
				     .x_key = axes[0] };
	char path[256];

	cr_assert_eq(results_write_summary(r, &meta), 0);
	snprintf(path, sizeof(path), "%s/summary.json", tmpdir);
	char *text = slurp(path);
	cr_assert_not_null(text, "summary.json exists");
	cr_assert(json_valid(text), "summary.json is valid JSON:\n%s", text);
	cr_assert_not_null(strstr(text, "\"schema_version\": 1"));
	cr_assert_not_null(strstr(text, "\"name\": \"cmdq \\\"ways\\\"\""), "name escaped");
	cr_assert_not_null(strstr(text, "\"finished\": null"));
	cr_assert_not_null(strstr(text, "\"interrupted\": false"));
	cr_assert_not_null(strstr(text, "\"trials\": ["));
	cr_assert_not_null(strstr(text, "\"aggregates\": ["));
	cr_assert_not_null(strstr(text, "\"error\": \"device: slot 3, \\\"bad\\\" opcode 0x7f\""));
	cr_assert_not_null(strstr(text, "\"oversubscribed\": false"));
	cr_assert_not_null(strstr(text, "\"magazines_held_per_op\": null"));
	cr_assert_not_null(strstr(text, "\"swept\": {\"workload.cmdq.cmds_per_sync\": \"4\"}"));
	/* cmpxchg: 2.0e6 and 2.2e6 -> mean 2.1e6; on ln(x): sd ln(1.1) / sqrt(2), half width
	 * 12.7062 * that / sqrt(2) = 0.605546, so the interval is 2.0976e6 * exp(-/+0.605546). */
	cr_assert_not_null(strstr(text, "\"ops_per_sec\": {\"mean\": 2100000, \"ci95\": "), "%s",
			   text);
	cr_assert_not_null(strstr(text, "\"ci_low\": 1144"), "%s", text);
	cr_assert_not_null(strstr(text, "\"ci_high\": 3843"), "%s", text);
	cr_assert_not_null(strstr(text, "\"ci_method\": \"log-student-t\""));
	cr_assert_not_null(strstr(text, "\"p50_ns\": {\"mean\": 910,"));
	cr_assert_not_null(strstr(text, "\"repeats\": 1, \"ok\": 0, \"noisy\": 0, \"failed\": 1"),
			   "the failed spinlock trial is counted, not averaged");
	free(text);

	/* Rewritten atomically: no temporary left behind, the new content in place. */
	meta.finished = "2024-01-01T00:01:00Z";
	meta.interrupted = 1;
	cr_assert_eq(results_write_summary(r, &meta), 0);
	text = slurp(path);
	cr_assert(json_valid(text));
	cr_assert_not_null(strstr(text, "\"interrupted\": true"));
	free(text);
	snprintf(path, sizeof(path), "%s/summary.json.tmp", tmpdir);
	cr_assert_neq(access(path, F_OK), 0);
	results_close(r);
}

Test(results, non_finite_values_are_empty_and_null, .timeout = 10)
{
	char err[256], path[256];
	struct results *r = results_create(tmpdir, &layout, err, sizeof(err));
	struct trial_result t;

	cr_assert_not_null(r, "%s", err);
	fill_trial(&t, 0, 0, "cmpxchg", NAN, 900);
	t.phases[1].ns_per_op = INFINITY;
	cr_assert_eq(results_append(r, &t), 0);
	cr_assert_eq(results_write_summary(r, NULL), 0);
	snprintf(path, sizeof(path), "%s/summary.json", tmpdir);
	char *text = slurp(path);
	cr_assert(json_valid(text), "%s", text);
	cr_assert_not_null(strstr(text, "\"ops_per_sec\": null"));
	cr_assert_not_null(strstr(text, "\"phase_reserve_ns\": null"));
	free(text);
	results_close(r);
}

Test(results, refuses_a_directory_with_trials_csv, .timeout = 10)
{
	char err[256] = "";
	struct results *r = results_create(tmpdir, &layout, err, sizeof(err));

	cr_assert_not_null(r, "%s", err);
	results_close(r);
	r = results_create(tmpdir, &layout, err, sizeof(err));
	cr_assert_null(r);
	cr_assert_eq(errno, EEXIST);
	cr_assert_not_null(strstr(err, "trials.csv"), "message says why: %s", err);
}

Test(results, creates_missing_parents, .timeout = 10)
{
	char err[256] = "", dir[256];

	snprintf(dir, sizeof(dir), "%s/a/b/run-1", tmpdir);
	struct results *r = results_create(dir, &layout, err, sizeof(err));

	cr_assert_not_null(r, "%s", err);
	cr_assert_str_eq(results_dir(r), dir);
	results_close(r);
	results_close(NULL);
}

Test(results, write_file_is_atomic, .timeout = 10)
{
	char path[256];

	cr_assert_eq(results_write_file(tmpdir, "machine.txt", "cpus: 2\n"), 0);
	cr_assert_eq(results_write_file(tmpdir, "machine.txt", "cpus: 4\n"), 0);
	snprintf(path, sizeof(path), "%s/machine.txt", tmpdir);
	char *text = slurp(path);
	cr_assert_str_eq(text, "cpus: 4\n");
	free(text);
	snprintf(path, sizeof(path), "%s/machine.txt.tmp", tmpdir);
	cr_assert_neq(access(path, F_OK), 0);
	cr_assert_eq(results_write_file("/nonexistent-dir-iommulab", "x", "y"), -ENOENT);
}

Test(results, csv_reader_reports_malformed_lines, .timeout = 10)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "a,b\n1,2\n3\n", "trials.csv:3: 1 fields, but the header has 2 columns" },
		{ "a,b\n1,2\n3,x\"y\n", "trials.csv:3: quote inside unquoted field 2" },
		{ "a,b\n1,\"2\n", "trials.csv:2: unterminated quoted field 2" },
		{ "a,b\n\"1\"x,2\n", "trials.csv:2: unexpected 'x' after the closing quote" },
		{ "", "trials.csv:1: empty file" },
		{ "a,,b\n", "trials.csv:1: header: column 2 has no name" },
	};
	char path[256], err[256];

	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct csv_table t;
		FILE *f = fopen(path, "w");

		fputs(cases[i].text, f);
		fclose(f);
		cr_assert_eq(csv_read(path, &t, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
	}

	/* And a well-formed file with CRLF, quoted newline, blank line and empty fields. */
	struct csv_table t;
	FILE *f = fopen(path, "w");
	fputs("a,b,c\r\n\"x\ny\",,\"\"\"q\"\"\"\r\n\n1,2,3", f);
	fclose(f);
	cr_assert_eq(csv_read(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_rows, 2);
	cr_assert_str_eq(t.rows[0][0], "x\ny");
	cr_assert_str_eq(t.rows[0][1], "");
	cr_assert_str_eq(t.rows[0][2], "\"q\"");
	cr_assert_str_eq(t.rows[1][2], "3");
	cr_assert_eq(t.lines[1], 5, "a quoted newline counts as a line");
	csv_free(&t);
}

Test(results, csv_reader_skips_comment_lines_only_when_asked, .timeout = 10)
{
	char path[256], err[256];
	struct csv_table t;
	FILE *f;

	snprintf(path, sizeof(path), "%s/data.csv", tmpdir);
	f = fopen(path, "w");
	fputs("# source, with a comma\n#\na,b\n1,2\n# between rows\r\n\"#q\",3\n#last", f);
	fclose(f);
	cr_assert_eq(csv_read_flags(path, CSV_COMMENTS, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_cols, 2);
	cr_assert_str_eq(t.header[0], "a");
	cr_assert_eq(t.n_rows, 2);
	cr_assert_str_eq(t.rows[1][0], "#q", "a quoted '#' is data, not a comment");
	cr_assert_eq(t.lines[0], 4);
	cr_assert_eq(t.lines[1], 6, "comment lines still count for messages");
	csv_free(&t);

	/* Without the flag a comment is a record like any other. */
	cr_assert_eq(csv_read(path, &t, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "data.csv:2: 1 fields, but the header has 2 columns"), "%s",
			   err);
}

/* ---- the column table and the aggregation ---- */

Test(results, column_table_matches_the_header_and_the_rows, .timeout = 10)
{
	struct results_columns cols;
	struct csv_table t;
	char path[256], err[256];

	results_close(write_three());
	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	cr_assert_eq(csv_read(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(columns_build(&cols, &layout), 0);

	/* 4 + axes + status + 9 conditions + steady_drift + window_overrun + 8 per metric +
	 * phases + 2 per counter + 5 of the host's noise + error. */
	size_t want = 4 + layout.n_axes + 1 + 9 + 2 + 8 * layout.n_metrics + layout.n_phases +
		      2 * layout.n_counters + 5 + 1;
	cr_assert_eq(cols.n, want, "%zu columns, expected %zu", cols.n, want);
	cr_assert(columns_match(&cols, t.header, t.n_cols), "the header is the table's");
	for (size_t i = 0; i < cols.n; i++)
		for (size_t j = i + 1; j < cols.n; j++)
			cr_assert_str_neq(cols.cols[i].name, cols.cols[j].name,
					  "column %s named twice", cols.cols[i].name);
	/* The reader already refuses a row of another width; check every spec found its place. */
	for (size_t s = 0; s < COL_N_SPECS; s++)
		if (col_specs[s].family == FAM_ONCE)
			cr_assert_str_eq(cols.cols[columns_at(&cols, s, 0)].name,
					 col_specs[s].name);
	cr_assert_str_eq(cols.cols[columns_at(&cols, COL_METRIC_P99, 0)].name, "op_p99_ns");
	cr_assert_str_eq(cols.cols[columns_at(&cols, COL_COUNTER_PER_OP, 1)].name,
			 "magazines_held_per_op");

	/* A row formatted from the table has one field per column, as the file's rows do. */
	struct trial_result tr;

	fill_trial(&tr, 0, 0, "cmpxchg", 2000000.0, 900);
	char **row = columns_format_row(&cols, &tr);

	cr_assert_not_null(row);
	for (size_t c = 0; c < cols.n; c++) {
		const char *v = row[c] ? row[c] : "";

		cr_assert_str_eq(v, t.rows[0][c], "column %s", cols.cols[c].name);
		free(row[c]);
	}
	free(row);
	cr_assert_not(columns_match(&cols, t.header, t.n_cols - 1), "a shorter header differs");
	columns_free(&cols);
	csv_free(&t);
}

Test(results, aggregation_gives_the_known_mean_and_ci, .timeout = 10)
{
	/* x = 10, 12, 14 (ok) plus a failed row and an empty field, which must not count. */
	char *r0[] = { "a", "ok", "10" }, *r1[] = { "b", "ok", "99" }, *r2[] = { "a", "ok", "12" };
	char *r3[] = { "a", "failed", "1000" }, *r4[] = { "a", "ok", "" },
	     *r5[] = { "a", "ok", "14" };
	char **rows[] = { r0, r1, r2, r3, r4, r5 };
	const struct agg_table t = { .rows = (char *const *const *)rows,
				     .n_rows = 6,
				     .c_status = 1 };
	const size_t key_cols[] = { 0 };
	long key[6];
	struct agg_groups g;
	double scratch[6];

	agg_key_columns(&t, key_cols, 1, key);
	cr_assert_eq(agg_group_by(&t, key, &g), 0);
	cr_assert_eq(g.n, 2, "groups a and b");
	cr_assert_eq(g.g[0].n_rows, 5);
	cr_assert_eq(g.g[0].n_ok, 4);
	cr_assert_eq(g.g[1].n_rows, 1);

	struct mean_ci ci = agg_mean_ci(&t, &g.g[0], 2, scratch);

	/* mean 12; the interval is Student's t (4.3027 for 2 df) on ln(10), ln(12), ln(14),
	 * taken back with exp: every trials.csv quantity is positive. */
	double l[] = { log(10.0), log(12.0), log(14.0) }, lm = (l[0] + l[1] + l[2]) / 3;
	double lsd = sqrt(((l[0] - lm) * (l[0] - lm) + (l[1] - lm) * (l[1] - lm) +
			   (l[2] - lm) * (l[2] - lm)) /
			  2);
	double lhw = 4.3027 * lsd / sqrt(3.0);
	cr_assert_eq(ci.n, 3);
	cr_assert_float_eq(ci.mean, 12.0, 1e-12);
	cr_assert_eq(ci.method, STATS_CI_LOG_T);
	cr_assert_float_eq(ci.low, exp(lm - lhw), 1e-9, "got %.7f", ci.low);
	cr_assert_float_eq(ci.high, exp(lm + lhw), 1e-9, "got %.7f", ci.high);

	ci = agg_mean_ci(&t, &g.g[1], 2, scratch);
	cr_assert_eq(ci.n, 1);
	cr_assert_float_eq(ci.mean, 99.0, 1e-12);
	cr_assert(isnan(ci.half_width) && isnan(ci.low), "one repeat gives no interval");
	agg_groups_free(&g);
}
