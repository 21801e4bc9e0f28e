/* SPDX-License-Identifier: MIT */
/*
 * columns -- the trials.csv columns as a table: each column's name, how its value is taken
 * from a trial result, its text format and how summary.json types it. The writer formats rows
 * with it, the resume check compares an old header against it, and the summary finds the
 * columns it aggregates in it, so a column is described in one place only.
 *
 * A spec is one column, or a family of columns repeated for every member of the run's layout
 * (each sweep axis, metric, phase or counter). Consecutive specs of one family expand
 * member-major: metric "op" gives op_mean_ns .. op_max_ns, then the next metric its eight.
 */
#ifndef IOMMULAB_COLUMNS_H
#define IOMMULAB_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>

#include "results/results.h"

/* How a column's text is typed in summary.json. */
enum col_type {
	COL_STR,
	COL_NUM, /* an integer or a %.10g double, already valid JSON */
	COL_BOOL,
};

/* What a spec repeats over. */
enum col_family {
	FAM_ONCE,
	FAM_AXIS,    /* per sweep axis, named by the axis ("section.key") */
	FAM_METRIC,  /* per latency metric */
	FAM_PHASE,   /* per phase */
	FAM_COUNTER, /* per counter */
};

/* Every spec, in column order (see results.h). */
enum col_id {
	COL_TRIAL,
	COL_POINT,
	COL_REPEAT,
	COL_PLUGIN,
	COL_AXIS,
	COL_STATUS,
	COL_CPUS,
	COL_ENGINE,
	COL_DEVICE,
	COL_OVERSUBSCRIBED,
	COL_DURATION,
	COL_OPS,
	COL_OPS_PER_SEC,
	COL_OPS_MIN_CPU,
	COL_OPS_MAX_CPU,
	COL_STEADY_DRIFT,
	COL_WINDOW_OVERRUN,
	COL_METRIC_MEAN,
	COL_METRIC_STDDEV,
	COL_METRIC_MIN,
	COL_METRIC_P50,
	COL_METRIC_P90,
	COL_METRIC_P99,
	COL_METRIC_P999,
	COL_METRIC_MAX,
	COL_PHASE,
	COL_COUNTER,
	COL_COUNTER_PER_OP,
	COL_DESCHED_PCT, /* the host around the trial: run/noise.h */
	COL_INVOL_CSW,
	COL_LOAD_START,
	COL_LOAD_END,
	COL_STEAL_PCT,
	COL_ERROR, /* why a trial is not ok: failed, incomplete or noisy */
	COL_N_SPECS
};

struct trial_result;

struct col_spec {
	const char *name; /* FAM_ONCE: the name; else a format with one %s for the member */
	enum col_type type;
	enum col_family family;
	/*
	 * The field's text (malloc'd), or NULL for an empty field. item: the trial's element for
	 * this column's member (a const char * value, trial_metric, trial_phase or trial_counter),
	 * NULL for FAM_ONCE; value is not called when the trial has no such element.
	 */
	char *(*value)(const struct trial_result *t, const void *item);
	bool ok_only; /* a failed trial leaves it empty: its numbers are partial at best */
	bool quote;   /* always quoted (the free-text error) */
};

/* The spec table, indexed by enum col_id. */
extern const struct col_spec col_specs[COL_N_SPECS];

struct results_column {
	char *name;
	enum col_id id;
	char *member; /* the layout's member name, NULL for FAM_ONCE */
	size_t member_index;
};

struct results_columns {
	struct results_column *cols;
	size_t n;
	size_t first[COL_N_SPECS];  /* each spec's first column; members follow at a stride */
	size_t stride[COL_N_SPECS]; /* columns per member of the spec's family */
};

/* Expand the specs over a layout (names copied). 0 or -ENOMEM. */
int columns_build(struct results_columns *c, const struct results_layout *l);
void columns_free(struct results_columns *c);

/* The column of spec id for member index m (0 for FAM_ONCE). */
static inline size_t columns_at(const struct results_columns *c, enum col_id id, size_t m)
{
	return c->first[id] + m * c->stride[id];
}

/* The type of column i. */
static inline enum col_type columns_type(const struct results_columns *c, size_t i)
{
	return col_specs[c->cols[i].id].type;
}

/* One trial as the text of its fields, one per column (NULL when empty); NULL on -ENOMEM. */
char **columns_format_row(const struct results_columns *c, const struct trial_result *t);

/* Whether a header read back (e.g. from an interrupted run's trials.csv) is exactly c's. */
bool columns_match(const struct results_columns *c, char *const *header, size_t n);

#endif /* IOMMULAB_COLUMNS_H */
