/* SPDX-License-Identifier: MIT */
/* Unit tests of plotting: trials.csv back to .dat/.gp and real gnuplot PNG/SVG renders. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot/plot.h"
#include "results/results.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/iommulab-test-plot-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tree(void)
{
	char cmd[128];

	/* Only our own mkdtemp() directory, whose name has no shell metacharacters. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(plot, .init = make_tmpdir, .fini = remove_tree);

static const char *template_dir(void)
{
	const char *d = getenv("IOMMULAB_PLOT_DIR");

	return d ? d : TEST_SOURCE_ROOT "/plots";
}

static char *slurp(const char *path, size_t *len)
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
	if (len)
		*len = (size_t)n;
	return buf;
}

static bool exists(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/plots/%s", tmpdir, name);
	return !stat(path, &st) && st.st_size > 0;
}

static const char *const metrics[] = { "op" };
static const char *const phases[] = { "other", "reserve", "wait_sync" };
static const char *const counters[] = { "cas_attempts", "magazines_held" };

/* Two plugins over x = xs[0..n_x), `repeats` repeats each, plausible and distinct numbers. */
static void write_run(const char *const *axes, size_t n_axes, const char *const *xs, size_t n_x,
		      uint32_t repeats)
{
	struct results_layout l = { .axes = axes,
				    .n_axes = n_axes,
				    .metrics = metrics,
				    .n_metrics = 1,
				    .phases = phases,
				    .n_phases = 3,
				    .counters = counters,
				    .n_counters = 2 };
	static const char *const plugins[] = { "cmpxchg", "spin_lock" };
	char err[256];
	struct results *r = results_create(tmpdir, &l, err, sizeof(err));
	uint32_t index = 0;

	cr_assert_not_null(r, "%s", err);
	for (size_t x = 0; x < n_x; x++)
		for (size_t p = 0; p < 2; p++)
			for (uint32_t rep = 0; rep < repeats; rep++) {
				const char *swept[2] = { xs[x], "4" };
				double cpus = atof(xs[x]);
				struct trial_result t = {
					.index = index++,
					.point = (uint32_t)x,
					.repeat = rep,
					.plugin = plugins[p],
					.swept_values = swept,
					.n_swept = (uint32_t)n_axes,
					.status = TRIAL_OK,
					.cpus = (uint32_t)cpus,
					.engine = "sim",
					.device_mode = "inline",
					.duration_s = 0.5,
					.ops = 1000000,
					.ops_per_sec = (p ? 1.1e6 : 1e6 * cpus) * (1 + 0.02 * rep),
					.ops_min_cpu = 400000,
					.ops_max_cpu = 600000,
					.n_metrics = 1,
					.n_phases = 3,
					.n_counters = 2,
				};
				t.metrics[0].name = "op";
				t.metrics[0].lat = (struct lat_summary){
					.count = 1000000,
					.mean = 950,
					.stddev = 80,
					.min = 700,
					.p50 = (uint64_t)((p ? 900 * cpus : 880) + 10 * rep),
					.p90 = 1200,
					.p99 = (uint64_t)(p ? 3000 * cpus : 2000),
					.p999 = 9000,
					.max = 90000,
				};
				t.phases[0] = (struct trial_phase){ "other", 100 };
				t.phases[1] = (struct trial_phase){ "reserve", p ? 300.0 : 50.0 };
				t.phases[2] = (struct trial_phase){ "wait_sync", 500 };
				t.counters[0] =
					(struct trial_counter){ "cas_attempts", LAB_COUNTER_EVENTS,
								100, p ? 1.0 : 1.0 + cpus / 4 };
				t.counters[1] =
					(struct trial_counter){ "magazines_held", LAB_COUNTER_LEVEL,
								7 + p, 7 + p };
				cr_assert_eq(results_append(r, &t), 0);
			}
	results_close(r);
}

static void assert_png_svg(const char *graph)
{
	char path[512];
	size_t len;

	snprintf(path, sizeof(path), "%s/plots/%s.png", tmpdir, graph);
	char *png = slurp(path, &len);
	cr_assert_not_null(png, "%s exists", path);
	cr_assert(len > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "%s is a PNG", path);
	free(png);

	snprintf(path, sizeof(path), "%s/plots/%s.svg", tmpdir, graph);
	char *svg = slurp(path, NULL);
	cr_assert_not_null(svg, "%s exists", path);
	cr_assert_not_null(strstr(svg, "<svg"), "%s is an SVG", path);
	free(svg);
}

static const char *const axis_cpus[] = { "scenario.cpus" };
static const char *const x12[] = { "1", "2" };

Test(plot, renders_png_and_svg_with_gnuplot, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	write_run(axis_cpus, 1, x12, 2, 2);
	int ret = plot_results(tmpdir, template_dir(), NULL, &rep, err, sizeof(err));

	cr_assert_eq(ret, 0, "plot_results: %s", err);
	cr_assert_eq(rep.rendered, 1, "note: %s", rep.note);
	assert_png_svg("throughput");
	assert_png_svg("latency-op");
	assert_png_svg("phases");
	assert_png_svg("counter-cas_attempts");
	assert_png_svg("counter-magazines_held");
	cr_assert(exists("throughput.dat") && exists("throughput.gp") && exists("lines.gp") &&
		  exists("style.gp") && exists("phases.gp"));
	/* 5 graphs, png + svg each. */
	cr_assert_eq(rep.n_written, 10);
	for (size_t i = 0; i < rep.n_written; i++)
		cr_assert_eq(access(rep.written[i], F_OK), 0, "%s", rep.written[i]);
	plot_report_free(&rep);
}

Test(plot, dat_blocks_hold_mean_and_ci_per_plugin, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "", path[512];

	write_run(axis_cpus, 1, x12, 2, 2);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	snprintf(path, sizeof(path), "%s/plots/throughput.dat", tmpdir);
	char *dat = slurp(path, NULL);
	cr_assert_not_null(dat);
	/* cmpxchg at x=2: 2e6 and 2.04e6 -> mean 2.02e6; the interval is Student's t on ln(x)
	 * (aggregate.h): sqrt(2e6 * 2.04e6) * exp(-12.7062 * ln(1.02) / 2) = 1781116. */
	cr_assert_not_null(strstr(dat, "# throughput: cmpxchg\n"), "%s", dat);
	cr_assert_not_null(strstr(dat, "\n2 2020000 1781116"), "%s", dat);
	cr_assert_not_null(strstr(dat, "\n\n\n# throughput: spin_lock\n"),
			   "blocks separated by two blank lines:\n%s", dat);
	free(dat);

	snprintf(path, sizeof(path), "%s/plots/latency-op.dat", tmpdir);
	dat = slurp(path, NULL);
	cr_assert_not_null(strstr(dat, "# latency-op: cmpxchg p50\n"), "%s", dat);
	cr_assert_not_null(strstr(dat, "# latency-op: spin_lock p99\n"), "%s", dat);
	free(dat);

	snprintf(path, sizeof(path), "%s/plots/phases.dat", tmpdir);
	dat = slurp(path, NULL);
	cr_assert_not_null(strstr(dat, "\"spin_lock\" 100 300 500\n"), "%s", dat);
	free(dat);
	plot_report_free(&rep);
}

Test(plot, missing_gnuplot_keeps_data_and_scripts, .timeout = 30)
{
	struct plot_report rep;
	char err[512] = "", want[600];

	write_run(axis_cpus, 1, x12, 2, 2);
	int ret = plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", &rep, err,
			       sizeof(err));

	cr_assert_eq(ret, 0, "%s", err);
	cr_assert_eq(rep.rendered, 0);
	cr_assert(exists("throughput.dat") && exists("throughput.gp"));
	cr_assert(exists("latency-op.dat") && exists("latency-op.gp"));
	cr_assert(!exists("throughput.png"));
	snprintf(want, sizeof(want),
		 "gnuplot not found; the data and scripts are in %s/plots: "
		 "render with: gnuplot %s/plots/",
		 tmpdir, tmpdir);
	cr_assert_not_null(strstr(rep.note, want), "note: %s", rep.note);
	cr_assert(rep.n_written > 0 && strstr(rep.written[0], ".gp"));
	plot_report_free(&rep);
}

Test(plot, wrapper_script_rerenders_from_anywhere, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "", cmd[512], path[512];

	write_run(axis_cpus, 1, x12, 2, 2);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	plot_report_free(&rep);
	/* As a user would, from another directory, with only DIR/plots to go on. */
	snprintf(cmd, sizeof(cmd), "cd / && gnuplot '%s/plots/throughput.gp' 2>/dev/null", tmpdir);
	cr_assert_eq(system(cmd), 0);
	assert_png_svg("throughput");
	snprintf(path, sizeof(path), "%s/plots/phases.gp", tmpdir);
	cr_assert_eq(access(path, F_OK), 0);
}

Test(plot, single_x_value_and_several_axes_render, .timeout = 60)
{
	static const char *const axes2[] = { "scenario.cpus", "workload.cmdq.cmds_per_sync" };
	static const char *const x1[] = { "8" };
	struct plot_report rep;
	char err[512] = "", path[512];

	write_run(axes2, 2, x1, 1, 3);
	cr_assert_eq(plot_results(tmpdir, template_dir(), NULL, &rep, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(rep.rendered, 1);
	assert_png_svg("throughput");
	snprintf(path, sizeof(path), "%s/plots/throughput.dat", tmpdir);
	char *dat = slurp(path, NULL);
	cr_assert_not_null(strstr(dat, "# throughput: cmpxchg cmds_per_sync=4\n"),
			   "the other axes label the line:\n%s", dat);
	free(dat);
	snprintf(path, sizeof(path), "%s/plots/throughput.gp", tmpdir);
	char *gp = slurp(path, NULL);
	cr_assert_not_null(strstr(gp, "'points catx"), "one x value: points:\n%s", gp);
	cr_assert_not_null(strstr(gp, "'scenario.cpus = 8'"), "%s", gp);
	free(gp);
	plot_report_free(&rep);
}

Test(plot, malformed_csv_reports_the_line, .timeout = 10)
{
	struct plot_report rep;
	char err[512] = "", path[512], want[600];

	write_run(axis_cpus, 1, x12, 2, 1);
	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	FILE *f = fopen(path, "a");
	fputs("9,9,0,\"broken,1\n", f);
	fclose(f);
	int ret = plot_results(tmpdir, template_dir(), NULL, &rep, err, sizeof(err));

	cr_assert_eq(ret, -EINVAL);
	/* Header + 4 rows: the broken row is line 6. */
	snprintf(want, sizeof(want), "%s/trials.csv:6: unterminated quoted field", tmpdir);
	cr_assert_not_null(strstr(err, want), "got: %s", err);
	plot_report_free(&rep);

	f = fopen(path, "w");
	fputs("trial,plugin,status\n0,x,ok,extra\n", f);
	fclose(f);
	ret = plot_results(tmpdir, template_dir(), NULL, &rep, err, sizeof(err));
	cr_assert_eq(ret, -EINVAL);
	snprintf(want, sizeof(want), "%s/trials.csv:2: 4 fields, but the header has 3", tmpdir);
	cr_assert_not_null(strstr(err, want), "got: %s", err);
}

Test(plot, no_axis_uses_cpus_and_failed_rows_are_ignored, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "", path[512];

	write_run(NULL, 0, x12, 2, 1);
	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	FILE *f = fopen(path, "a");
	/* A failed trial with junk numbers must not reach the graphs. */
	fputs("9,0,0,broken,failed,1,sim,inline,0,0.5,5,99999999,,,,,,,,,,,,,,,,,,,,,,,\"boom\"\n",
	      f);
	fclose(f);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	snprintf(path, sizeof(path), "%s/plots/throughput.gp", tmpdir);
	char *gp = slurp(path, NULL);
	cr_assert_not_null(strstr(gp, "'cpus'"), "x falls back to cpus:\n%s", gp);
	free(gp);
	snprintf(path, sizeof(path), "%s/plots/throughput.dat", tmpdir);
	char *dat = slurp(path, NULL);
	cr_assert_null(strstr(dat, "broken"), "%s", dat);
	free(dat);
	plot_report_free(&rep);
}

Test(plot, missing_template_dir_is_an_error, .timeout = 10)
{
	struct plot_report rep;
	char err[512] = "";

	write_run(axis_cpus, 1, x12, 2, 1);
	cr_assert_eq(plot_results(tmpdir, "/nonexistent/plots", NULL, &rep, err, sizeof(err)),
		     -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent/plots/style.gp"), "%s", err);
}
