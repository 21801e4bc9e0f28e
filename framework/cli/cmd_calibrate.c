/* SPDX-License-Identifier: MIT */
/*
 * iommulab calibrate -- a micro-workload run against a machine's measured ns per op: the
 * table, a line per op, RESULTS_DIR/calibration.csv, and an exit status that says whether
 * every judged point is within the tolerance.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "cli/cli.h"

#define DEFAULT_TOLERANCE_PCT 25.0

/*
 * The shipped scenario made for the measured data at data: the calibrate-SET.ini beside the
 * data's folder (configs/calibrate-SET.ini for configs/calibration/DATA) with the longest SET
 * that DATA's name starts with, followed by '-' or '.' (mctop-lpdquad-locks.txt ->
 * calibrate-mctop-lpdquad.ini; lockhammer-x86-3-c1000-p0.csv -> its own, not
 * lockhammer-x86-3's). Writes its path to buf and returns 0, or -ENOENT when none fits.
 */
static int scenario_for_data(const char *data, char *buf, size_t size)
{
	static const char prefix[] = "calibrate-", suffix[] = ".ini";
	const size_t pre = sizeof(prefix) - 1, suf = sizeof(suffix) - 1;
	const char *slash = strrchr(data, '/'), *name = slash ? slash + 1 : data;
	char folder[1024], configs[1100], best[256] = "";
	const char *up;
	struct dirent *e;
	DIR *d;

	/* The data's folder, and the folder above it (where the calibrate-*.ini are). */
	if (slash) {
		snprintf(folder, sizeof(folder), "%.*s", (int)(slash - data), data);
		snprintf(configs, sizeof(configs), "%s/..", folder);
	} else {
		snprintf(folder, sizeof(folder), ".");
		snprintf(configs, sizeof(configs), "..");
	}
	d = opendir(configs);
	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), set_len = len - pre - suf;
		const char *set = e->d_name + pre;

		if (len <= pre + suf || strncmp(e->d_name, prefix, pre) ||
		    strcmp(e->d_name + len - suf, suffix))
			continue;
		if (strncmp(name, set, set_len) || (name[set_len] != '-' && name[set_len] != '.'))
			continue;
		if (set_len > strlen(best) && set_len < sizeof(best))
			snprintf(best, sizeof(best), "%.*s", (int)set_len, set);
	}
	closedir(d);
	if (!*best)
		return -ENOENT;
	/* Named as the user named the data: configs/calibration/x -> configs/calibrate-SET.ini */
	up = strrchr(folder, '/');
	if (up && strcmp(up + 1, ".") && strcmp(up + 1, ".."))
		snprintf(buf, size, "%.*s/calibrate-%s.ini", (int)(up - folder), folder, best);
	else if (!up && strcmp(folder, ".") && strcmp(folder, ".."))
		snprintf(buf, size, "calibrate-%s.ini", best);
	else
		snprintf(buf, size, "%s/calibrate-%s.ini", configs, best);
	return 0;
}

/* What a run-side error is missing, and how to get it, for the measured data at data. */
static void print_run_hint(const char *data)
{
	char ini[1200];

	if (!scenario_for_data(data, ini, sizeof(ini)))
		fprintf(stderr, "run `iommulab run %s` and give the results dir it prints", ini);
	else
		fprintf(stderr,
			"run a micro sweep over the ops and CPU counts %s has (workload = micro, "
			"like configs/calibrate-*.ini) and give the results dir it prints",
			data);
}

static int parse_tolerance(const char *s, double *pct)
{
	char *end;

	errno = 0;
	*pct = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*pct) || *pct <= 0)
		return -EINVAL;
	return 0;
}

static void print_row(const struct calib_row *r)
{
	printf("%-12s %5u %12.2f", r->op, r->cpus, r->sim_ns);
	if (isnan(r->meas_ns)) {
		printf(" %15s %9s  no measured value\n", "-", "-");
		return;
	}
	printf(" %15.2f %+8.1f%%", r->meas_ns, r->err_pct);
	if (!r->judged)
		printf("  (not judged: %u CPU)\n", r->cpus);
	else
		printf("  %s\n", r->within ? "ok" : "MISS");
}

static void print_op(const struct calib_op_summary *s, double tol)
{
	if (!s->n_judged) {
		printf("%s: nothing judged (no measured point with %d or more of the run's CPUs)\n",
		       s->op, CALIB_MIN_JUDGED_CPUS);
		return;
	}
	printf("%s: worst error %+.1f%% at %u CPUs over %zu points (%u-%u CPUs): ", s->op,
	       s->worst_pct, s->worst_cpus, s->n_judged, s->min_cpus, s->max_cpus);
	if (s->n_missed)
		printf("%zu miss %g%%\n", s->n_missed, tol);
	else
		printf("all within %g%%\n", tol);
}

/* "cas_add at 3, 4, 16 CPUs; ticket_lock at 16 CPUs" */
static void print_misses(const struct calib_report *r)
{
	const char *op = NULL;

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct calib_row *row = &r->rows[i];

		if (!row->judged || row->within)
			continue;
		if (!op || strcmp(op, row->op))
			printf("%s%s at %u", op ? " CPUs; " : "", row->op, row->cpus);
		else
			printf(", %u", row->cpus);
		op = row->op;
	}
	printf(" CPUs\n");
}

static void print_report(const struct calib_report *r, const char *dir, const char *data,
			 const struct calib_curve *sim, const struct calib_curve *meas)
{
	printf("calibrate: %s (%zu micro trials", dir, sim->n_used);
	if (sim->n_left_out)
		printf(", %zu not ok left out", sim->n_left_out);
	printf(") against %s (%zu rows), tolerance %g%%\n", data, meas->n_used, r->tolerance_pct);
	printf("%-12s %5s %12s %15s %9s\n", "op", "cpus", "sim ns/op", "measured ns/op", "error");
	for (size_t i = 0; i < r->n_rows; i++)
		print_row(&r->rows[i]);
	putchar('\n');
	for (size_t i = 0; i < r->n_ops; i++)
		print_op(&r->ops[i], r->tolerance_pct);
}

int cmd_calibrate(int argc, char **argv, struct cli_common *c)
{
	struct calib_curve sim = { 0 }, meas = { 0 };
	struct calib_report rep = { 0 };
	const char *dir = NULL, *data = NULL;
	double tol = DEFAULT_TOLERANCE_PCT;
	char err[1024] = "";
	struct cli_parser p;
	int o, ret, status = EXIT_USAGE;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		if (o == CALIBRATE_OPT_TOLERANCE && parse_tolerance(optarg, &tol))
			return cli_usage_error(c->cmd,
					       "--tolerance '%s': expected a percentage above 0, "
					       "e.g. 25",
					       optarg);
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (cli_operands(c->cmd, argc, argv, 2, "RESULTS_DIR and DATA.csv"))
		return EXIT_USAGE;
	dir = argv[optind];
	data = argv[optind + 1];

	ret = calib_load_run(dir, &sim, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iommulab calibrate: %s: ", err);
		print_run_hint(data);
		fputc('\n', stderr);
		goto out;
	}
	ret = calib_load_measured(data, &meas, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iommulab calibrate: %s\n", err);
		goto out;
	}
	ret = calib_compare(&sim, &meas, tol, &rep, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iommulab calibrate: %s vs %s: %s: ", dir, data, err);
		print_run_hint(data);
		fputc('\n', stderr);
		goto out;
	}
	print_report(&rep, dir, data, &sim, &meas);
	ret = calib_write_csv(&rep, dir);
	if (ret) {
		fprintf(stderr, "iommulab calibrate: cannot write %s/calibration.csv: %s\n", dir,
			strerror(-ret));
		goto out;
	}
	printf("table: %s/calibration.csv\n", dir);
	if (calib_all_within(&rep)) {
		printf("calibrated: all %zu points with %d or more CPUs within %g%%\n",
		       rep.n_judged, CALIB_MIN_JUDGED_CPUS, rep.tolerance_pct);
		status = EXIT_OK;
	} else {
		printf("NOT calibrated: %zu of %zu points miss %g%%: ", rep.n_missed, rep.n_judged,
		       rep.tolerance_pct);
		print_misses(&rep);
		status = EXIT_TRIALS_FAILED;
	}
out:
	calib_report_free(&rep);
	calib_curve_free(&meas);
	calib_curve_free(&sim);
	return status;
}
