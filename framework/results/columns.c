/* SPDX-License-Identifier: MIT */
/*
 * columns -- the trials.csv column table (see columns.h): the specs, their expansion over a
 * run's layout, and the formatting of one trial into the text of its fields.
 */
#include "results/columns.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/trial.h"
#include "util/fs.h"

/* ---- text formats ---- */

static char *fmt_u64(uint64_t v)
{
	return util_asprintf("%" PRIu64, v);
}

static char *fmt_dbl(double v)
{
	/* 10 significant digits: ops/s in the millions keep their units; NaN/inf stay empty. */
	return isfinite(v) ? util_asprintf("%.10g", v) : NULL;
}

static char *fmt_str(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* ---- values: one function per column, item as col_spec.value documents ---- */

#define VALUE(fn) static char *fn(const struct trial_result *t, const void *item)

VALUE(v_trial)
{
	(void)item;
	return fmt_u64(t->index);
}

VALUE(v_point)
{
	(void)item;
	return fmt_u64(t->point);
}

VALUE(v_repeat)
{
	(void)item;
	return fmt_u64(t->repeat);
}

VALUE(v_plugin)
{
	(void)item;
	return fmt_str(t->plugin);
}

/* Swept values stay text: a scenario may sweep "4k" or "true" as well as numbers. */
VALUE(v_axis)
{
	(void)t;
	return fmt_str(*(const char *const *)item);
}

VALUE(v_status)
{
	(void)item;
	return fmt_str(trial_status_name(t->status));
}

VALUE(v_cpus)
{
	(void)item;
	return fmt_u64(t->cpus);
}

VALUE(v_engine)
{
	(void)item;
	return fmt_str(t->engine);
}

VALUE(v_device)
{
	(void)item;
	return fmt_str(t->device_mode);
}

VALUE(v_oversubscribed)
{
	(void)item;
	return fmt_str(t->oversubscribed ? "1" : "0");
}

VALUE(v_duration)
{
	(void)item;
	return fmt_dbl(t->duration_s);
}

VALUE(v_ops)
{
	(void)item;
	return fmt_u64(t->ops);
}

VALUE(v_ops_per_sec)
{
	(void)item;
	return fmt_dbl(t->ops_per_sec);
}

VALUE(v_ops_min_cpu)
{
	(void)item;
	return fmt_u64(t->ops_min_cpu);
}

VALUE(v_ops_max_cpu)
{
	(void)item;
	return fmt_u64(t->ops_max_cpu);
}

/* Empty when not judged (an op-count run, or too few ops in a half: NAN). */
VALUE(v_steady_drift)
{
	(void)item;
	return t->steady_drift == t->steady_drift ? util_asprintf("%.4f", t->steady_drift) : NULL;
}

/* Empty for an op-count run (NAN). */
VALUE(v_window_overrun)
{
	(void)item;
	return t->window_overrun == t->window_overrun ? util_asprintf("%.4f", t->window_overrun)
						      : NULL;
}

#define LAT(item) (&((const struct trial_metric *)(item))->lat)
#define METRIC_DBL(fn, field)                                                                      \
	VALUE(fn)                                                                                  \
	{                                                                                          \
		(void)t;                                                                           \
		return fmt_dbl(LAT(item)->field);                                                  \
	}
#define METRIC_U64(fn, field)                                                                      \
	VALUE(fn)                                                                                  \
	{                                                                                          \
		(void)t;                                                                           \
		return fmt_u64(LAT(item)->field);                                                  \
	}
METRIC_DBL(v_lat_mean, mean)
METRIC_DBL(v_lat_stddev, stddev)
METRIC_U64(v_lat_min, min)
METRIC_U64(v_lat_p50, p50)
METRIC_U64(v_lat_p90, p90)
METRIC_U64(v_lat_p99, p99)
METRIC_U64(v_lat_p999, p999)
METRIC_U64(v_lat_max, max)

VALUE(v_phase)
{
	(void)t;
	return fmt_dbl(((const struct trial_phase *)item)->ns_per_op);
}

VALUE(v_counter)
{
	(void)t;
	return fmt_u64(((const struct trial_counter *)item)->total);
}

/* A level has no per-op value; leaving it empty tells readers the kind. */
VALUE(v_counter_per_op)
{
	const struct trial_counter *tc = item;

	(void)t;
	return tc->kind != LAB_COUNTER_LEVEL ? fmt_dbl(tc->per_op) : NULL;
}

/* The host around the trial (run/noise.h): native trials only, empty elsewhere. */
VALUE(v_desched_pct)
{
	(void)item;
	return t->noise.measured ? util_asprintf("%.2f", t->noise.desched_frac * 100) : NULL;
}

VALUE(v_invol_csw)
{
	(void)item;
	return t->noise.measured ? fmt_u64(t->noise.invol_switches) : NULL;
}

VALUE(v_load_start)
{
	(void)item;
	return t->noise.have_load ? util_asprintf("%.2f", t->noise.load_start) : NULL;
}

VALUE(v_load_end)
{
	(void)item;
	return t->noise.have_load ? util_asprintf("%.2f", t->noise.load_end) : NULL;
}

VALUE(v_steal_pct)
{
	(void)item;
	return t->noise.measured ? util_asprintf("%.2f", t->noise.steal_frac * 100) : NULL;
}

/* One line, whatever the engine caught: a newline would split the row for line-oriented tools
 * even though it is legal inside quotes. */
VALUE(v_error)
{
	(void)item;
	if (t->status == TRIAL_OK)
		return NULL;
	char *e = strndup(t->error, TRIAL_ERR_LEN);

	if (e)
		for (char *p = e; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	return e;
}

const struct col_spec col_specs[COL_N_SPECS] = {
	[COL_TRIAL] = { "trial", COL_NUM, FAM_ONCE, v_trial, false, false },
	[COL_POINT] = { "point", COL_NUM, FAM_ONCE, v_point, false, false },
	[COL_REPEAT] = { "repeat", COL_NUM, FAM_ONCE, v_repeat, false, false },
	[COL_PLUGIN] = { "plugin", COL_STR, FAM_ONCE, v_plugin, false, false },
	[COL_AXIS] = { "%s", COL_STR, FAM_AXIS, v_axis, false, false },
	[COL_STATUS] = { "status", COL_STR, FAM_ONCE, v_status, false, false },
	[COL_CPUS] = { "cpus", COL_NUM, FAM_ONCE, v_cpus, false, false },
	[COL_ENGINE] = { "engine", COL_STR, FAM_ONCE, v_engine, false, false },
	[COL_DEVICE] = { "device", COL_STR, FAM_ONCE, v_device, false, false },
	[COL_OVERSUBSCRIBED] = { "oversubscribed", COL_BOOL, FAM_ONCE, v_oversubscribed, false,
				 false },
	[COL_DURATION] = { "duration_s", COL_NUM, FAM_ONCE, v_duration, false, false },
	[COL_OPS] = { "ops", COL_NUM, FAM_ONCE, v_ops, true, false },
	[COL_OPS_PER_SEC] = { "ops_per_sec", COL_NUM, FAM_ONCE, v_ops_per_sec, true, false },
	[COL_OPS_MIN_CPU] = { "ops_min_cpu", COL_NUM, FAM_ONCE, v_ops_min_cpu, true, false },
	[COL_OPS_MAX_CPU] = { "ops_max_cpu", COL_NUM, FAM_ONCE, v_ops_max_cpu, true, false },
	[COL_STEADY_DRIFT] = { "steady_drift", COL_NUM, FAM_ONCE, v_steady_drift, true, false },
	[COL_WINDOW_OVERRUN] = { "window_overrun", COL_NUM, FAM_ONCE, v_window_overrun, true,
				 false },
	[COL_METRIC_MEAN] = { "%s_mean_ns", COL_NUM, FAM_METRIC, v_lat_mean, true, false },
	[COL_METRIC_STDDEV] = { "%s_stddev_ns", COL_NUM, FAM_METRIC, v_lat_stddev, true, false },
	[COL_METRIC_MIN] = { "%s_min_ns", COL_NUM, FAM_METRIC, v_lat_min, true, false },
	[COL_METRIC_P50] = { "%s_p50_ns", COL_NUM, FAM_METRIC, v_lat_p50, true, false },
	[COL_METRIC_P90] = { "%s_p90_ns", COL_NUM, FAM_METRIC, v_lat_p90, true, false },
	[COL_METRIC_P99] = { "%s_p99_ns", COL_NUM, FAM_METRIC, v_lat_p99, true, false },
	[COL_METRIC_P999] = { "%s_p999_ns", COL_NUM, FAM_METRIC, v_lat_p999, true, false },
	[COL_METRIC_MAX] = { "%s_max_ns", COL_NUM, FAM_METRIC, v_lat_max, true, false },
	[COL_PHASE] = { "phase_%s_ns", COL_NUM, FAM_PHASE, v_phase, true, false },
	[COL_COUNTER] = { "%s", COL_NUM, FAM_COUNTER, v_counter, true, false },
	[COL_COUNTER_PER_OP] = { "%s_per_op", COL_NUM, FAM_COUNTER, v_counter_per_op, true, false },
	[COL_DESCHED_PCT] = { "desched_pct", COL_NUM, FAM_ONCE, v_desched_pct, false, false },
	[COL_INVOL_CSW] = { "invol_csw", COL_NUM, FAM_ONCE, v_invol_csw, false, false },
	[COL_LOAD_START] = { "load_start", COL_NUM, FAM_ONCE, v_load_start, false, false },
	[COL_LOAD_END] = { "load_end", COL_NUM, FAM_ONCE, v_load_end, false, false },
	[COL_STEAL_PCT] = { "steal_pct", COL_NUM, FAM_ONCE, v_steal_pct, false, false },
	[COL_ERROR] = { "error", COL_STR, FAM_ONCE, v_error, false, true },
};

/* ---- the table over a layout ---- */

static size_t n_members(const struct results_layout *l, enum col_family fam,
			const char *const **names)
{
	switch (fam) {
	case FAM_AXIS:
		*names = l->axes;
		return l->n_axes;
	case FAM_METRIC:
		*names = l->metrics;
		return l->n_metrics;
	case FAM_PHASE:
		*names = l->phases;
		return l->n_phases;
	case FAM_COUNTER:
		*names = l->counters;
		return l->n_counters;
	default:
		*names = NULL;
		return 1;
	}
}

int columns_build(struct results_columns *c, const struct results_layout *l)
{
	size_t total = 0;

	memset(c, 0, sizeof(*c));
	for (size_t s = 0; s < COL_N_SPECS; s++) {
		const char *const *names;

		total += n_members(l, col_specs[s].family, &names);
	}
	c->cols = calloc(total + 1, sizeof(*c->cols));
	if (!c->cols)
		return -ENOMEM;

	/* Each run of consecutive specs of one family is expanded member by member. */
	for (size_t s = 0; s < COL_N_SPECS;) {
		enum col_family fam = col_specs[s].family;
		size_t end = s + 1;
		const char *const *names;
		size_t n = n_members(l, fam, &names);

		while (fam != FAM_ONCE && end < COL_N_SPECS && col_specs[end].family == fam)
			end++;
		for (size_t k = s; k < end; k++) {
			c->first[k] = c->n + (k - s);
			c->stride[k] = end - s;
		}
		for (size_t m = 0; m < n; m++) {
			for (size_t k = s; k < end; k++) {
				struct results_column *col = &c->cols[c->n];

				col->id = (enum col_id)k;
				col->member = names ? strdup(names[m]) : NULL;
				col->member_index = m;
				col->name = names ? util_asprintf(col_specs[k].name, names[m])
						  : strdup(col_specs[k].name);
				c->n++;
				if (!col->name || (names && !col->member)) {
					columns_free(c);
					return -ENOMEM;
				}
			}
		}
		s = end;
	}
	return 0;
}

void columns_free(struct results_columns *c)
{
	for (size_t i = 0; c->cols && i < c->n; i++) {
		free(c->cols[i].name);
		free(c->cols[i].member);
	}
	free(c->cols);
	memset(c, 0, sizeof(*c));
}

bool columns_match(const struct results_columns *c, char *const *header, size_t n)
{
	if (n != c->n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(header[i], c->cols[i].name))
			return false;
	return true;
}

static bool same_name(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/*
 * The trial's element for a column's member, or NULL when it has none. Matched by name, and
 * the trial's last element of a name wins (as a later value of a repeated name overwrites).
 */
static const void *member_of(const struct trial_result *t, const struct results_column *col)
{
	const void *found = NULL;

	switch (col_specs[col->id].family) {
	case FAM_AXIS:
		if (t->swept_values && col->member_index < t->n_swept)
			found = &t->swept_values[col->member_index];
		break;
	case FAM_METRIC:
		/* A metric that recorded nothing has no latencies to report. */
		for (uint32_t i = 0; i < t->n_metrics && i < TRIAL_MAX_METRICS; i++)
			if (same_name(t->metrics[i].name, col->member) && t->metrics[i].lat.count)
				found = &t->metrics[i];
		break;
	case FAM_PHASE:
		for (uint32_t i = 0; i < t->n_phases && i < LAB_MAX_PHASES; i++)
			if (same_name(t->phases[i].name, col->member))
				found = &t->phases[i];
		break;
	case FAM_COUNTER:
		/* Every counter the trial holds: a smaller cap left the last ones (the sim's
		 * own figures) empty once the workloads' counters grew. */
		for (uint32_t i = 0;
		     i < t->n_counters && i < sizeof(t->counters) / sizeof(t->counters[0]); i++)
			if (same_name(t->counters[i].name, col->member))
				found = &t->counters[i];
		break;
	default:
		break;
	}
	return found;
}

char **columns_format_row(const struct results_columns *c, const struct trial_result *t)
{
	char **f = calloc(c->n + 1, sizeof(*f));

	if (!f)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct results_column *col = &c->cols[i];
		const struct col_spec *spec = &col_specs[col->id];
		const void *item = NULL;

		/* noisy and incomplete trials keep their figures: they show what happened. */
		if (spec->ok_only && t->status == TRIAL_FAILED)
			continue;
		if (spec->family != FAM_ONCE) {
			item = member_of(t, col);
			if (!item)
				continue;
		}
		f[i] = spec->value(t, item);
	}
	return f;
}
