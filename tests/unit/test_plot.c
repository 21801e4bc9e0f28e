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
#include "plot/plot_internal.h"
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
static const char *const counters[] = { "cas_attempts", "magazines_held", "always_zero",
					"zero_for_one" };

/* write_run: both plugins get the first one's numbers (identical series). */
static bool same_numbers;
/* write_run: the first plugin's p50 is 0 ns (as the null plugin's is). */
static bool zero_p50;

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
				    .n_counters = 4 };
	static const char *const plugins[] = { "cmpxchg", "spin_lock" };
	char err[256];
	struct results *r = results_create(tmpdir, &l, err, sizeof(err));
	uint32_t index = 0;

	cr_assert_not_null(r, "%s", err);
	for (size_t x = 0; x < n_x; x++)
		for (size_t pi = 0; pi < 2; pi++)
			for (uint32_t rep = 0; rep < repeats; rep++) {
				size_t p = same_numbers ? 0 : pi;
				const char *swept[2] = { xs[x], "4" };
				double cpus = atof(xs[x]);
				struct trial_result t = {
					.index = index++,
					.point = (uint32_t)x,
					.repeat = rep,
					.plugin = plugins[pi],
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
					.n_counters = 4,
				};
				t.metrics[0].name = "op";
				t.metrics[0].lat = (struct lat_summary){
					.count = 1000000,
					.mean = 950,
					.stddev = 80,
					.min = 700,
					.p50 = zero_p50 && !p ? 0
							      : (uint64_t)((p ? 900 * cpus : 880) +
									   10 * rep),
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
				t.counters[2] = (struct trial_counter){ "always_zero",
									LAB_COUNTER_EVENTS, 0, 0 };
				/* 0 for one plugin, 1 and 100 for the other: a log axis would
				 * drop the zeros. */
				t.counters[3] =
					(struct trial_counter){ "zero_for_one", LAB_COUNTER_EVENTS,
								p ? 100 : 0,
								p ? 1 + 99 * (cpus - 1) : 0 };
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
	int ret = plot_results(tmpdir, template_dir(), NULL, PLOT_ALL, &rep, err, sizeof(err));

	cr_assert_eq(ret, 0, "plot_results: %s", err);
	cr_assert_eq(rep.rendered, 1, "note: %s", rep.note);
	assert_png_svg("throughput");
	assert_png_svg("latency-op");
	assert_png_svg("phases");
	assert_png_svg("counter-cas_attempts");
	assert_png_svg("counter-magazines_held");
	cr_assert(exists("throughput.dat") && exists("throughput.gp") && exists("lines.gp") &&
		  exists("style.gp") && exists("stacked.gp") && exists("render-all.gp"));
	assert_png_svg("counter-zero_for_one");
	cr_assert(!exists("counter-always_zero.dat"), "an all-zero counter has no graph");
	/* 6 graphs, png + svg each, drawn by one gnuplot process. */
	cr_assert_eq(rep.n_written, 12);
	cr_assert_eq(rep.n_graphs, 6);
	for (size_t i = 0; i < rep.n_written; i++)
		cr_assert_eq(access(rep.written[i], F_OK), 0, "%s", rep.written[i]);
	plot_report_free(&rep);
}

Test(plot, dat_blocks_hold_mean_and_ci_per_plugin, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "", path[512];

	write_run(axis_cpus, 1, x12, 2, 2);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep,
				  err, sizeof(err)),
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
	int ret = plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep, err,
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
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep,
				  err, sizeof(err)),
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
	cr_assert_eq(plot_results(tmpdir, template_dir(), NULL, PLOT_ALL, &rep, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(rep.rendered, 1);
	assert_png_svg("throughput");
	snprintf(path, sizeof(path), "%s/plots/throughput.dat", tmpdir);
	char *dat = slurp(path, NULL);
	cr_assert_not_null(strstr(dat, "# throughput: cmpxchg cmds_per_sync=4\n"),
			   "the other axes label the line:\n%s", dat);
	free(dat);
	snprintf(path, sizeof(path), "%s/plots/throughput.gp", tmpdir);
	char *gp = slurp(path, NULL);
	cr_assert_not_null(strstr(gp, "points catx"), "one x value: points:\n%s", gp);
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
	int ret = plot_results(tmpdir, template_dir(), NULL, PLOT_ALL, &rep, err, sizeof(err));

	cr_assert_eq(ret, -EINVAL);
	/* Header + 4 rows: the broken row is line 6. */
	snprintf(want, sizeof(want), "%s/trials.csv:6: unterminated quoted field", tmpdir);
	cr_assert_not_null(strstr(err, want), "got: %s", err);
	plot_report_free(&rep);

	f = fopen(path, "w");
	fputs("trial,plugin,status\n0,x,ok,extra\n", f);
	fclose(f);
	ret = plot_results(tmpdir, template_dir(), NULL, PLOT_ALL, &rep, err, sizeof(err));
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
	fputs("9,0,0,broken,failed,1,sim,inline,0,0.5,5,99999999,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"
	      "\"boom\"\n",
	      f);
	fclose(f);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep,
				  err, sizeof(err)),
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
	cr_assert_eq(plot_results(tmpdir, "/nonexistent/plots", NULL, 0, &rep, err, sizeof(err)),
		     -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent/plots/style.gp"), "%s", err);
}

/* The text of DIR/plots/NAME. */
static char *plots_file(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/plots/%s", tmpdir, name);
	char *text = slurp(path, NULL);

	cr_assert_not_null(text, "%s", path);
	return text;
}

Test(plot, style_is_the_plugins_own, .timeout = 10)
{
	struct plot_style a, b, a2, a8, av;

	plot_style_of(0, 0, false, &a);
	plot_style_of(1, 0, false, &b);
	plot_style_of(0, 0, true, &a2);
	plot_style_of(8, 0, false, &a8);
	plot_style_of(0, 1, false, &av);
	cr_assert(a.lt != b.lt && a.pt != b.pt, "two plugins: two colours, two markers");
	cr_assert(a2.lt == a.lt && a2.pt != a.pt && a2.dt != a.dt,
		  "p99: the plugin's colour, an open marker, dashed");
	cr_assert(a8.lt == a.lt && a8.pt != a.pt, "plugin 9 shares a colour, not the marker");
	cr_assert(av.lt == a.lt && av.pt == a.pt && av.dt != a.dt, "another axis value: a dash");
}

Test(plot, colour_follows_the_plugin_not_the_series_order, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "", path[512];

	write_run(axis_cpus, 1, x12, 2, 1);
	/* Every cmpxchg trial failed: spin_lock is the first series, and keeps its colour. */
	snprintf(path, sizeof(path), "%s/trials.csv", tmpdir);
	char *csv = slurp(path, NULL);

	for (char *p = csv; (p = strstr(p, ",cmpxchg,"));) {
		char *ok = strstr(p, ",ok,");

		memcpy(ok, ",no,", 4);
		p = ok;
	}
	FILE *f = fopen(path, "w");

	fputs(csv, f);
	fclose(f);
	free(csv);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep,
				  err, sizeof(err)),
		     0, "%s", err);
	struct plot_style sp;

	plot_style_of(1, 0, false, &sp);
	char want[32];

	snprintf(want, sizeof(want), "' '%d %d %d ", sp.lt, sp.pt, sp.dt);
	char *gp = plots_file("throughput.gp");

	cr_assert_not_null(strstr(gp, want), "spin_lock drawn as plugin 2 (%s):\n%s", want, gp);
	free(gp);
	gp = plots_file("latency-op.gp");
	cr_assert_not_null(strstr(gp, want), "the same in every graph:\n%s", gp);
	free(gp);
	plot_report_free(&rep);
}

Test(plot, zero_counters_linear_and_all_zero_skipped, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	write_run(axis_cpus, 1, x12, 2, 1);
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", PLOT_ALL, &rep,
				  err, sizeof(err)),
		     0, "%s", err);
	cr_assert(!exists("counter-always_zero.gp"));
	char *gp = plots_file("counter-zero_for_one.gp");

	cr_assert_null(strstr(gp, "logy"), "zeros keep the axis linear:\n%s", gp);
	cr_assert_null(strstr(gp, " si "), "per-op values get no k/m prefixes:\n%s", gp);
	free(gp);
	char *dat = plots_file("counter-zero_for_one.dat");

	cr_assert_not_null(strstr(dat, "\n1 0 0 0 \"1\"\n"), "the zero is a point:\n%s", dat);
	free(dat);
	gp = plots_file("counter-cas_attempts.gp");
	cr_assert_null(strstr(gp, "logy"), "%s", gp);
	free(gp);
	plot_report_free(&rep);

	/* By default, no counter graphs: they are counted as left out. */
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", 0, &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(rep.n_left_out, 3, "cas_attempts, magazines_held, zero_for_one");
	cr_assert_eq(rep.n_graphs, 3, "latency, throughput, phases");
	plot_report_free(&rep);
}

Test(plot, identical_series_say_so, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	same_numbers = true;
	write_run(axis_cpus, 1, x12, 2, 1);
	same_numbers = false;
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", 0, &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	char *gp = plots_file("throughput.gp");

	cr_assert_not_null(strstr(gp, "|spin_lock (same as cmpxchg)'"), "%s", gp);
	free(gp);
	plot_report_free(&rep);
}

Test(plot, phases_at_every_sweep_point, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	write_run(axis_cpus, 1, x12, 2, 1);
	cr_assert_eq(plot_results(tmpdir, template_dir(), NULL, 0, &rep, err, sizeof(err)), 0, "%s",
		     err);
	assert_png_svg("phases");
	char *dat = plots_file("phases.dat");

	cr_assert_not_null(strstr(dat, "at scenario.cpus = 1\n"), "%s", dat);
	cr_assert_not_null(strstr(dat, "\n\n\n# phases: mean ns per op in each phase at "
				       "scenario.cpus = 2\n"),
			   "%s", dat);
	free(dat);
	plot_report_free(&rep);
}

static void write_scenario(const char *extra)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/scenario.ini", tmpdir);
	FILE *f = fopen(path, "w");

	fprintf(f,
		"[scenario]\nworkload = cmdq\n[smmu]\ntlbi_va_ns = 460\nsync_ns = 400\n"
		"fetch_ns = 20\ninv_slots = 8\n[workload.cmdq]\ncmds_per_sync = %s\n",
		extra);
	fclose(f);
}

Test(plot, device_ceiling_from_the_model, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	write_run(axis_cpus, 1, x12, 2, 1);
	write_scenario("1");
	cr_assert_eq(plot_results(tmpdir, template_dir(), NULL, 0, &rep, err, sizeof(err)), 0, "%s",
		     err);
	assert_png_svg("throughput");
	char *dat = plots_file("throughput.dat");

	/* One CMD_SYNC per op: 1 / 400 ns; any strategy: 8 slots / 460 ns per TLBI. */
	cr_assert_not_null(strstr(dat, "# throughput: device max, 1 CMD_SYNC per op: 2.5 Mops/s\n"
				       "# x y y y xtic\n1 2500000 "),
			   "%s", dat);
	cr_assert_not_null(strstr(dat, "# throughput: device max, any strategy: 17.4 Mops/s\n"
				       "# x y y y xtic\n1 17391304.35 "),
			   "%s", dat);
	free(dat);
	plot_report_free(&rep);

	/* Four TLBIs per op: the command ceiling is a quarter, the sync one unchanged. */
	write_scenario("4");
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", 0, &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	dat = plots_file("throughput.dat");
	cr_assert_not_null(strstr(dat, "any strategy: 4.35 Mops/s"), "%s", dat);
	free(dat);
	plot_report_free(&rep);
}

/* Plot the run written before: the throughput graph says why it has no ceiling and draws none. */
static void expect_no_device_ceiling(const char *why)
{
	struct plot_report rep;
	char err[512] = "";

	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", 0, &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	char *gp = plots_file("throughput.gp");

	cr_assert_not_null(strstr(gp, why), "%s", gp);
	free(gp);
	char *dat = plots_file("throughput.dat");

	cr_assert_null(strstr(dat, "device max"), "%s", dat);
	free(dat);
	plot_report_free(&rep);
}

/* Mixed shapes: an op is not cmds_per_sync TLBIs and a CMD_SYNC, so no ceiling is drawn. */
Test(plot, no_device_ceiling_for_mixed_shapes, .timeout = 60)
{
	write_run(axis_cpus, 1, x12, 2, 1);
	write_scenario("5\nmixed = true");
	expect_no_device_ceiling("no device ceiling: workload.cmdq.mixed is on");
}

Test(plot, no_device_ceiling_when_a_device_key_is_swept, .timeout = 60)
{
	static const char *const axes2[] = { "scenario.cpus", "smmu.sync_ns" };

	write_run(axes2, 2, x12, 2, 1);
	write_scenario("1");
	expect_no_device_ceiling("no device ceiling: smmu.sync_ns is swept");
}

Test(plot, latency_with_a_zero_stays_log_and_says_so, .timeout = 60)
{
	struct plot_report rep;
	char err[512] = "";

	static const char *const x164[] = { "1", "64" };

	zero_p50 = true;
	write_run(axis_cpus, 1, x164, 2, 1);
	zero_p50 = false;
	cr_assert_eq(plot_results(tmpdir, template_dir(), "/nonexistent/gnuplot", 0, &rep, err,
				  sizeof(err)),
		     0, "%s", err);
	char *gp = plots_file("latency-op.gp");

	cr_assert_not_null(strstr(gp, "logy"), "900 to 192000 ns, and a zero:\n%s", gp);
	cr_assert_not_null(strstr(gp, "'cmpxchg p50 (zero: off the log axis)|"), "%s", gp);
	free(gp);
	plot_report_free(&rep);
}
