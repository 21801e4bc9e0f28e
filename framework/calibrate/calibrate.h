/* SPDX-License-Identifier: MIT */
/*
 * calibrate -- how far the model is from a real machine: the micro workload's per-thread
 * ns per op from a run (RESULTS_DIR/trials.csv) against the same primitive measured on the
 * machine (a travisdowns/concurrency-hierarchy-bench results file, as in configs/calibration/),
 * point by point over (op, CPUs), with the relative error and a verdict against a tolerance.
 */
#ifndef IOMMULAB_CALIBRATE_H
#define IOMMULAB_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

/* Points with fewer CPUs are shown but not judged: one CPU alone measures the uncontended
 * atomic, which [machine] atomic_ns is set from, so it agrees by construction. */
#define CALIB_MIN_JUDGED_CPUS 2

/* The measured implementation a micro op is compared with ("atomic add" for atomic_add), or
 * NULL for an op the table does not know. */
const char *calib_implementation(const char *op);

/* One (op, CPUs) point of a curve: the mean over its trials. */
struct calib_sample {
	char *op; /* micro op name: atomic_add, cas_add, ticket_lock */
	unsigned cpus;
	double ns_per_op; /* per thread: wall time x threads / total ops */
	double sum;	  /* while reading: the sum that ns_per_op is the mean of */
	unsigned n;	  /* trials averaged */
};

struct calib_curve {
	struct calib_sample *v;
	size_t n, cap;
	size_t n_used;	   /* trials (rows) averaged into the points */
	size_t n_left_out; /* trials of the run that did not finish ok */
};

/*
 * The run's curve: every ok trial of the micro workload in DIR/trials.csv, as cpus /
 * ops_per_sec * 1e9 ns, averaged over repeats per (op, cpus). The op and workload come from
 * the workload.micro.op and scenario.workload columns when they were swept, from
 * DIR/scenario.ini otherwise. 0, or -errno with "PATH[:LINE]: what is wrong" in err:
 * -ENODATA when the run has no ok micro trial.
 */
int calib_load_run(const char *dir, struct calib_curve *c, char *err, size_t err_len);

/*
 * The measured curve: the rows of a data file ('#' comments, then the header
 * Trial,Cores,Implementation,Nanos/Op,...) whose Implementation a micro op maps to, Nanos/Op
 * averaged over trials per (op, Cores). Other implementations are ignored. Lockhammer's raw
 * rows, folly's SmallLocksBenchmark output and mctop's lock results (num_locks: 1, then
 * "====== LOCK ======" sections of "no_backoff - THREADS: v1 ... vN" total acquisitions per
 * second; the median, per thread) are read too, told apart by their content. 0, or -errno
 * with "PATH[:LINE]: ..." in err: -ENODATA when no row is of a mapped implementation.
 */
int calib_load_measured(const char *path, struct calib_curve *c, char *err, size_t err_len);

void calib_curve_free(struct calib_curve *c);

/* One row of the comparison: a point of the run, with its measured value if there is one. */
struct calib_row {
	char *op;
	unsigned cpus;
	double sim_ns;
	double meas_ns; /* NAN when the data has no such point */
	double err_pct; /* (sim - meas) / meas x 100; NAN without meas_ns */
	bool judged;	/* cpus >= CALIB_MIN_JUDGED_CPUS and both values */
	bool within;	/* judged and |err_pct| <= the tolerance */
};

/* Per op, over its judged rows. */
struct calib_op_summary {
	char *op;
	size_t n_judged, n_missed;
	double worst_pct; /* the signed error of the largest |error|; NAN if none judged */
	unsigned worst_cpus;
	unsigned min_cpus, max_cpus; /* the judged CPU counts' range */
};

struct calib_report {
	double tolerance_pct;
	struct calib_row *rows; /* by op name, then cpus */
	size_t n_rows;
	struct calib_op_summary *ops;
	size_t n_ops;
	size_t n_judged, n_missed;
};

/*
 * Compare the run's curve with the measured one, judging each point against tolerance_pct.
 * 0, or -errno with the reason in err: -ENODATA when no point with CALIB_MIN_JUDGED_CPUS or
 * more CPUs is in both curves (err then says what each curve has).
 */
int calib_compare(const struct calib_curve *sim, const struct calib_curve *meas,
		  double tolerance_pct, struct calib_report *r, char *err, size_t err_len);

/* True when every judged point is within the tolerance. */
bool calib_all_within(const struct calib_report *r);

/* Write the table to DIR/calibration.csv (op,cpus,sim_ns_per_op,measured_ns_per_op,error_pct;
 * empty fields where there is no value), atomically. 0 or -errno. */
int calib_write_csv(const struct calib_report *r, const char *dir);

void calib_report_free(struct calib_report *r);

#endif /* IOMMULAB_CALIBRATE_H */
