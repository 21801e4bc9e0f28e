/* SPDX-License-Identifier: MIT */
/*
 * iommulab calibrate -- a micro-workload run against a machine's measured ns per op: the
 * table, a line per op, RESULTS_DIR/calibration.csv, and an exit status that says whether
 * every judged point is within the tolerance.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "cli/cli.h"

#define DEFAULT_TOLERANCE_PCT 25.0

static const char calibrate_usage[] =
	"usage: iommulab calibrate RESULTS_DIR DATA.csv [--tolerance PCT]\n";

static const char calibrate_help[] =
	"\n"
	"Compare a run of the micro workload with the same primitives measured on a machine:\n"
	"per op and CPU count, the run's per-thread ns per op (cpus / ops_per_sec), the measured\n"
	"Nanos/Op and the relative error (run - measured) / measured. The table also goes to\n"
	"RESULTS_DIR/calibration.csv. Points with 2 or more CPUs are judged against PCT percent\n"
	"(default 25); 1 CPU is shown only (atomic_ns is set from it). DATA is a\n"
	"concurrency-hierarchy-bench CSV, lockhammer rows (one host and -c/-p per file) or\n"
	"folly SmallLocksBenchmark output (one CPU per file), told apart by content. For example:\n"
	"  iommulab run configs/calibrate-graviton2.ini --out results/cal\n"
	"  iommulab calibrate results/cal configs/calibration/graviton2-atomics.csv\n"
	"Exit status: 0 every judged point within, 1 some miss, 2 bad input.\n";

/* What a run-side error is missing, and how to get it. */
static const char run_hint[] =
	"run `iommulab run configs/calibrate-graviton2.ini` and give the results dir it prints";

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
	printf(") against %s (%zu rows), tolerance %g%%\n", data, meas->n_used,
	       r->tolerance_pct);
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
	int ret, status = EXIT_USAGE;

	(void)c;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf("%s%s", calibrate_usage, calibrate_help);
			return EXIT_OK;
		} else if (!strcmp(a, "--tolerance") && i + 1 == argc) {
			fprintf(stderr,
				"iommulab calibrate: --tolerance needs a percentage, e.g. 25\n");
			return EXIT_USAGE;
		} else if (!strcmp(a, "--tolerance")) {
			if (parse_tolerance(argv[++i], &tol)) {
				fprintf(stderr,
					"iommulab calibrate: --tolerance '%s': expected a "
					"percentage above 0, e.g. 25\n",
					argv[i]);
				return EXIT_USAGE;
			}
		} else if (a[0] != '-' && !dir) {
			dir = a;
		} else if (a[0] != '-' && !data) {
			data = a;
		} else {
			fprintf(stderr, "iommulab calibrate: unexpected argument '%s'\n%s", a,
				calibrate_usage);
			return EXIT_USAGE;
		}
	}
	if (!data) {
		fprintf(stderr, "iommulab calibrate: expected RESULTS_DIR and DATA.csv\n%s",
			calibrate_usage);
		return EXIT_USAGE;
	}

	ret = calib_load_run(dir, &sim, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iommulab calibrate: %s: %s\n", err, run_hint);
		goto out;
	}
	ret = calib_load_measured(data, &meas, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "iommulab calibrate: %s\n", err);
		goto out;
	}
	ret = calib_compare(&sim, &meas, tol, &rep, err, sizeof(err));
	if (ret) {
		fprintf(stderr,
			"iommulab calibrate: %s vs %s: %s: run a sweep over CPU counts the data "
			"has, e.g. `iommulab run configs/calibrate-graviton2.ini`\n",
			dir, data, err);
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
