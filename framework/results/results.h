/* SPDX-License-Identifier: MIT */
/*
 * results -- the results directory of one run:
 *   scenario.ini   the resolved scenario (written by the caller via scenario_write_resolved)
 *   machine.txt    the host machine and the conditions (clock source, CPUs, kernel)
 *   plugins.txt    every plugin used: kind, name, version, file
 *   trials.csv     one row per trial, appended and flushed as each trial ends
 *   summary.json   every trial plus aggregates over repeats; rewritten atomically (rename)
 *   plots/         .dat, .gp and rendered .png/.svg (see plot.h)
 *
 * trials.csv columns, fixed first: trial, point, repeat, plugin, <one per sweep axis, named
 * "section.key">, status, cpus, engine, device, oversubscribed, duration_s, ops, ops_per_sec,
 * ops_min_cpu, ops_max_cpu, steady_drift, window_overrun (trial_result's; empty when not
 * judged), then per
 * metric M: M_mean_ns, M_stddev_ns, M_min_ns, M_p50_ns,
 * M_p90_ns, M_p99_ns, M_p999_ns, M_max_ns; then per phase P: phase_P_ns; then per counter C:
 * C (total) and C_per_op; last, error (quoted). Metric, phase and counter columns are the union
 * over all plugins of the run, known when the file is opened; a trial without one leaves it
 * empty. The columns are described once, by the table in columns.h; the mean and CI over
 * repeats come from aggregate.h (shared with the plots). Library code: never prints; errors
 * as -errno with a message in err.
 */
#ifndef IOMMULAB_RESULTS_H
#define IOMMULAB_RESULTS_H

#include <stddef.h>
#include <stdio.h>

#include "results/trial.h"

/* The column layout of a run, fixed before the first trial. */
struct results_layout {
	const char *const *axes; /* "section.key" per sweep axis */
	size_t n_axes;
	const char *const *metrics; /* metric names, e.g. "op" or "map", "unmap" */
	size_t n_metrics;
	const char *const *phases; /* phase names (union, "other" first) */
	size_t n_phases;
	const char *const *counters; /* counter names (union) */
	size_t n_counters;
};

struct results;

/*
 * Create dir (and parents) and open trials.csv with the header. If dir exists and already
 * holds a trials.csv, refuse with -EEXIST. Returns NULL with err set on failure.
 */
struct results *results_create(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len);

/*
 * Reopen dir's trials.csv to finish an interrupted run: its header must be exactly this
 * layout's (else the scenario or plugins changed: refused with the reason); its rows are
 * kept for the summary and new rows are appended. NULL with err set on failure.
 */
struct results *results_resume(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len);

/*
 * A resumed trials.csv that ended inside a row (the run was killed or the disk filled while
 * it wrote it) loses that row: the file is cut after its last whole line and the row's trial
 * runs again. The bytes dropped, 0 when the file ended in a whole row.
 */
size_t results_torn_bytes(const struct results *r);

/* Rows so far, and one field of one ("" when empty, NULL for no such row or column). */
size_t results_n_rows(const struct results *r);
const char *results_field(const struct results *r, size_t row, const char *column);

/* Append one row and flush it to disk (fflush + fsync). 0 or -errno. */
int results_append(struct results *r, const struct trial_result *t);

/*
 * Write summary.json (schema_version 1) from all rows appended so far: the run's metadata
 * (name, scenario path, started/finished times, interrupted flag), each trial, and per
 * (point, plugin) the mean and 95% CI over repeats of throughput and each metric's p50/p99.
 * Written to a temporary file and renamed over the old one. 0 or -errno.
 */
struct results_meta {
	const char *name;
	const char *scenario_path;
	const char *started;  /* ISO 8601 */
	const char *finished; /* ISO 8601, or NULL while running */
	int interrupted;
	const char *x_key; /* the first swept key, or NULL */
};
int results_write_summary(struct results *r, const struct results_meta *meta);

const char *results_dir(const struct results *r);
void results_close(struct results *r);

/* Helper for the caller: write text to DIR/NAME atomically. 0 or -errno. */
int results_write_file(const char *dir, const char *name, const char *text);

#endif /* IOMMULAB_RESULTS_H */
