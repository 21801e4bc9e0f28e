/* SPDX-License-Identifier: MIT */
/*
 * results -- the results directory of one run: trials.csv appended and synced trial by trial,
 * summary.json rebuilt from every row so far, and atomic whole-file writes for the rest.
 *
 * Each appended row is kept in memory as the text of its CSV fields, so trials.csv and
 * summary.json can never disagree, and the summary needs no second parser.
 */
#include "results/results.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/csv.h"
#include "util/fs.h"
#include "stats/stats.h"

/* How a column's text is typed in summary.json. */
enum col_type {
	COL_STR,
	COL_NUM, /* an integer or a %.10g double, already valid JSON */
	COL_BOOL,
};

struct results {
	char *dir;
	FILE *csv;

	char **cols;
	enum col_type *types;
	size_t n_cols;

	/* Where each group of columns starts (see results.h for the order). */
	size_t n_axes, n_metrics, n_phases, n_counters;
	size_t c_axes, c_status, c_cond, c_metrics, c_phases, c_counters, c_error;

	char ***rows; /* rows[i][c]: NULL when the field is empty */
	size_t n_rows, cap_rows;
};

/* Per metric, in column order. */
static const char *const metric_suffix[] = {
	"mean_ns", "stddev_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns",
};
#define N_METRIC_COLS (sizeof(metric_suffix) / sizeof(metric_suffix[0]))

/* Conditions and results, in column order after "status". */
static const struct {
	const char *name;
	enum col_type type;
} fixed_cols[] = {
	{ "cpus", COL_NUM },	    { "engine", COL_STR },	{ "device", COL_STR },
	{ "oversubscribed", COL_BOOL }, { "duration_s", COL_NUM }, { "ops", COL_NUM },
	{ "ops_per_sec", COL_NUM }, { "ops_min_cpu", COL_NUM }, { "ops_max_cpu", COL_NUM },
};
#define N_FIXED_COLS (sizeof(fixed_cols) / sizeof(fixed_cols[0]))
enum { F_CPUS, F_ENGINE, F_DEVICE, F_OVERSUB, F_DURATION, F_OPS, F_OPS_PER_SEC, F_OPS_MIN,
       F_OPS_MAX };


static int add_col(struct results *r, size_t *cap, char *name, enum col_type type)
{
	if (!name)
		return -ENOMEM;
	if (r->n_cols == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		char **cols = realloc(r->cols, nc * sizeof(*cols));
		enum col_type *types;

		if (!cols)
			goto nomem;
		r->cols = cols;
		types = realloc(r->types, nc * sizeof(*types));
		if (!types)
			goto nomem;
		r->types = types;
		*cap = nc;
	}
	r->cols[r->n_cols] = name;
	r->types[r->n_cols] = type;
	r->n_cols++;
	return 0;
nomem:
	free(name);
	return -ENOMEM;
}

static int build_columns(struct results *r, const struct results_layout *l)
{
	size_t cap = 0;
	int ret = 0;

	r->n_axes = l->n_axes;
	r->n_metrics = l->n_metrics;
	r->n_phases = l->n_phases;
	r->n_counters = l->n_counters;

	ret |= add_col(r, &cap, strdup("trial"), COL_NUM);
	ret |= add_col(r, &cap, strdup("point"), COL_NUM);
	ret |= add_col(r, &cap, strdup("repeat"), COL_NUM);
	ret |= add_col(r, &cap, strdup("plugin"), COL_STR);
	r->c_axes = r->n_cols;
	/* Swept values stay text: a scenario may sweep "4k" or "true" as well as numbers. */
	for (size_t i = 0; i < l->n_axes; i++)
		ret |= add_col(r, &cap, strdup(l->axes[i]), COL_STR);
	r->c_status = r->n_cols;
	ret |= add_col(r, &cap, strdup("status"), COL_STR);
	r->c_cond = r->n_cols;
	for (size_t i = 0; i < N_FIXED_COLS; i++)
		ret |= add_col(r, &cap, strdup(fixed_cols[i].name), fixed_cols[i].type);
	r->c_metrics = r->n_cols;
	for (size_t m = 0; m < l->n_metrics; m++)
		for (size_t s = 0; s < N_METRIC_COLS; s++)
			ret |= add_col(r, &cap, util_asprintf("%s_%s", l->metrics[m], metric_suffix[s]),
				       COL_NUM);
	r->c_phases = r->n_cols;
	for (size_t p = 0; p < l->n_phases; p++)
		ret |= add_col(r, &cap, util_asprintf("phase_%s_ns", l->phases[p]), COL_NUM);
	r->c_counters = r->n_cols;
	for (size_t c = 0; c < l->n_counters; c++) {
		ret |= add_col(r, &cap, strdup(l->counters[c]), COL_NUM);
		ret |= add_col(r, &cap, util_asprintf("%s_per_op", l->counters[c]), COL_NUM);
	}
	r->c_error = r->n_cols;
	ret |= add_col(r, &cap, strdup("error"), COL_STR);
	return ret ? -ENOMEM : 0;
}

static char *path_join(const char *dir, const char *name)
{
	return util_asprintf("%s/%s", dir, name);
}

struct results *results_create(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *path = NULL;
	int fd = -1, ret;

	if (!r) {
		ret = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	r->dir = strdup(dir);
	if (!r->dir || build_columns(r, layout)) {
		ret = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	ret = util_mkdir_p(dir);
	if (ret) {
		snprintf(err, err_len, "%s: cannot create the results directory: %s", dir,
			 strerror(-ret));
		goto fail;
	}
	path = path_join(dir, "trials.csv");
	if (!path) {
		ret = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	/* O_EXCL: never append one run's rows to another's. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		if (ret == -EEXIST)
			snprintf(err, err_len,
				 "%s already holds a trials.csv: refusing to overwrite a previous run",
				 dir);
		else
			snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	r->csv = fdopen(fd, "w");
	if (!r->csv) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		close(fd);
		goto fail;
	}
	for (size_t c = 0; c < r->n_cols; c++) {
		if (c)
			fputc(',', r->csv);
		csv_write_field(r->csv, r->cols[c], false);
	}
	fputc('\n', r->csv);
	if (fflush(r->csv) || fsync(fileno(r->csv))) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	free(path);
	return r;

fail:
	free(path);
	results_close(r);
	errno = -ret;
	return NULL;
}

/* Take the rows of an existing trials.csv whose header must be exactly this layout's. */
static int adopt_rows(struct results *r, const char *path, char *err, size_t err_len)
{
	struct csv_table t;
	char why[512];
	int ret = csv_read(path, &t, why, sizeof(why));

	if (ret) {
		snprintf(err, err_len, "%s", why);
		return ret;
	}
	bool same = t.n_cols == r->n_cols;
	for (size_t c = 0; same && c < r->n_cols; c++)
		same = !strcmp(t.header[c], r->cols[c]);
	if (!same) {
		snprintf(err, err_len,
			 "%s: its columns are not this scenario's (the scenario or the plugins "
			 "changed since the run started): start a new run instead",
			 path);
		csv_free(&t);
		return -EINVAL;
	}
	for (size_t i = 0; i < t.n_rows; i++) {
		char **f = calloc(r->n_cols, sizeof(*f));
		char ***rows = realloc(r->rows, (r->n_rows + 1) * sizeof(*rows));
		if (!f || !rows) {
			free(f);
			if (rows)
				r->rows = rows;
			csv_free(&t);
			snprintf(err, err_len, "out of memory");
			return -ENOMEM;
		}
		r->rows = rows;
		r->cap_rows = r->n_rows + 1;
		for (size_t c = 0; c < r->n_cols; c++)
			f[c] = t.rows[i][c][0] ? strdup(t.rows[i][c]) : NULL;
		r->rows[r->n_rows++] = f;
	}
	csv_free(&t);
	return 0;
}

struct results *results_resume(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *path = NULL;
	int ret = -ENOMEM;

	snprintf(err, err_len, "out of memory");
	if (!r || !(r->dir = strdup(dir)) || build_columns(r, layout) ||
	    !(path = path_join(dir, "trials.csv")))
		goto fail;
	ret = adopt_rows(r, path, err, err_len);
	if (ret)
		goto fail;
	r->csv = fopen(path, "a");
	if (!r->csv) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	free(path);
	return r;
fail:
	free(path);
	results_close(r);
	errno = -ret;
	return NULL;
}

size_t results_n_rows(const struct results *r)
{
	return r->n_rows;
}

const char *results_field(const struct results *r, size_t row, const char *column)
{
	if (row >= r->n_rows)
		return NULL;
	for (size_t c = 0; c < r->n_cols; c++)
		if (!strcmp(r->cols[c], column))
			return r->rows[row][c] ? r->rows[row][c] : "";
	return NULL;
}

/* Field setters: each stores its own text; NULL means an empty field. */
static void set_str(char **f, size_t c, const char *s)
{
	f[c] = s ? strdup(s) : NULL;
}

static void set_u64(char **f, size_t c, uint64_t v)
{
	f[c] = util_asprintf("%" PRIu64, v);
}

static void set_dbl(char **f, size_t c, double v)
{
	/* 10 significant digits: ops/s in the millions keep their units; NaN/inf stay empty. */
	f[c] = isfinite(v) ? util_asprintf("%.10g", v) : NULL;
}

static void free_row(char **f, size_t n)
{
	if (!f)
		return;
	for (size_t i = 0; i < n; i++)
		free(f[i]);
	free(f);
}

static long find_name(char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (name && !strcmp(names[i], name))
			return (long)i;
	return -1;
}

/* One trial as the text of its fields, matched to the layout's columns by name. */
static char **format_row(const struct results *r, const struct trial_result *t)
{
	char **f = calloc(r->n_cols, sizeof(*f));

	if (!f)
		return NULL;
	set_u64(f, 0, t->index);
	set_u64(f, 1, t->point);
	set_u64(f, 2, t->repeat);
	set_str(f, 3, t->plugin);
	for (size_t a = 0; a < r->n_axes && a < t->n_swept; a++)
		set_str(f, r->c_axes + a, t->swept_values ? t->swept_values[a] : NULL);
	set_str(f, r->c_status, t->status == TRIAL_OK ? "ok" : "failed");
	set_u64(f, r->c_cond + F_CPUS, t->cpus);
	set_str(f, r->c_cond + F_ENGINE, t->engine);
	set_str(f, r->c_cond + F_DEVICE, t->device_mode);
	set_str(f, r->c_cond + F_OVERSUB, t->oversubscribed ? "1" : "0");
	set_dbl(f, r->c_cond + F_DURATION, t->duration_s);

	if (t->status == TRIAL_OK) {
		/* A failed trial's numbers are partial at best: leave them empty, not zero. */
		set_u64(f, r->c_cond + F_OPS, t->ops);
		set_dbl(f, r->c_cond + F_OPS_PER_SEC, t->ops_per_sec);
		set_u64(f, r->c_cond + F_OPS_MIN, t->ops_min_cpu);
		set_u64(f, r->c_cond + F_OPS_MAX, t->ops_max_cpu);

		for (uint32_t i = 0; i < t->n_metrics && i < TRIAL_MAX_METRICS; i++) {
			const struct trial_metric *m = &t->metrics[i];
			long k = -1;

			for (size_t j = 0; j < r->n_metrics; j++) {
				size_t c = r->c_metrics + j * N_METRIC_COLS;
				size_t nl = m->name ? strlen(m->name) : 0;

				/* Column "<name>_mean_ns": match the prefix exactly. */
				if (m->name && !strncmp(r->cols[c], m->name, nl) &&
				    !strcmp(r->cols[c] + nl, "_mean_ns"))
					k = (long)c;
			}
			if (k < 0 || !m->lat.count)
				continue;
			size_t c = (size_t)k;
			set_dbl(f, c + 0, m->lat.mean);
			set_dbl(f, c + 1, m->lat.stddev);
			set_u64(f, c + 2, m->lat.min);
			set_u64(f, c + 3, m->lat.p50);
			set_u64(f, c + 4, m->lat.p90);
			set_u64(f, c + 5, m->lat.p99);
			set_u64(f, c + 6, m->lat.p999);
			set_u64(f, c + 7, m->lat.max);
		}
		for (uint32_t i = 0; i < t->n_phases && i < LAB_MAX_PHASES; i++) {
			char *name = t->phases[i].name ? util_asprintf("phase_%s_ns", t->phases[i].name)
						       : NULL;
			long k = name ? find_name(r->cols + r->c_phases, r->n_phases, name) : -1;

			free(name);
			if (k >= 0)
				set_dbl(f, r->c_phases + (size_t)k, t->phases[i].ns_per_op);
		}
		for (uint32_t i = 0; i < t->n_counters && i < LAB_MAX_COUNTERS + 8; i++) {
			const struct trial_counter *tc = &t->counters[i];
			long k = -1;

			for (size_t j = 0; j < r->n_counters; j++)
				if (tc->name && !strcmp(r->cols[r->c_counters + 2 * j], tc->name))
					k = (long)(r->c_counters + 2 * j);
			if (k < 0)
				continue;
			set_u64(f, (size_t)k, tc->total);
			/* A level has no per-op value; leaving it empty tells readers the kind. */
			if (tc->kind != LAB_COUNTER_LEVEL)
				set_dbl(f, (size_t)k + 1, tc->per_op);
		}
	}

	if (t->status != TRIAL_OK) {
		/* One line, whatever the engine caught: a newline would split the row for
		 * line-oriented tools even though it is legal inside quotes. */
		char *e = strndup(t->error, TRIAL_ERR_LEN);

		if (e)
			for (char *p = e; *p; p++)
				if (*p == '\n' || *p == '\r')
					*p = ' ';
		f[r->c_error] = e;
	}
	return f;
}

int results_append(struct results *r, const struct trial_result *t)
{
	char **f;

	if (!r || !t || !r->csv)
		return -EINVAL;
	if (r->n_rows == r->cap_rows) {
		size_t nc = r->cap_rows ? r->cap_rows * 2 : 64;
		char ***rows = realloc(r->rows, nc * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		r->rows = rows;
		r->cap_rows = nc;
	}
	f = format_row(r, t);
	if (!f)
		return -ENOMEM;

	/* Build the whole row first so it reaches the file in one write. */
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);

	if (!m) {
		free_row(f, r->n_cols);
		return -ENOMEM;
	}
	for (size_t c = 0; c < r->n_cols; c++) {
		if (c)
			fputc(',', m);
		csv_write_field(m, f[c], c == r->c_error);
	}
	fputc('\n', m);
	if (fclose(m)) {
		free(line);
		free_row(f, r->n_cols);
		return -ENOMEM;
	}

	int ret = 0;

	/* fsync, not just fflush: a crash or power cut must not lose a finished trial. */
	if (fwrite(line, 1, len, r->csv) != len || fflush(r->csv) || fsync(fileno(r->csv)))
		ret = errno ? -errno : -EIO;
	free(line);
	if (ret) {
		free_row(f, r->n_cols);
		return ret;
	}
	r->rows[r->n_rows++] = f;
	return 0;
}

/* ---- summary.json ---- */

static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f); /* JSON has no NaN or infinity */
}

static void json_field(FILE *f, const struct results *r, size_t c, const char *v)
{
	if (!v) {
		fputs("null", f);
		return;
	}
	switch (r->types[c]) {
	case COL_NUM: {
		char *end;
		double d = strtod(v, &end);

		if (*end || end == v)
			json_str(f, v);
		else
			json_num(f, d);
		break;
	}
	case COL_BOOL:
		fputs(strcmp(v, "0") ? "true" : "false", f);
		break;
	default:
		json_str(f, v);
	}
}

static int row_value(const char *s, double *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	*out = strtod(s, &end);
	return (*end || !isfinite(*out)) ? -1 : 0;
}

static void json_mean_ci(FILE *f, const double *x, size_t n)
{
	if (!n) {
		fputs("null", f);
		return;
	}
	struct mean_ci ci = stats_mean_ci(x, n);

	fputs("{\"mean\": ", f);
	json_num(f, ci.mean);
	fputs(", \"ci95\": ", f);
	json_num(f, ci.half_width);
	fputs(", \"ci_low\": ", f);
	json_num(f, ci.mean - ci.half_width);
	fputs(", \"ci_high\": ", f);
	json_num(f, ci.mean + ci.half_width);
	fprintf(f, ", \"n\": %zu}", ci.n);
}

/* The values of column c over the ok rows of one group. */
static size_t collect(const struct results *r, const size_t *idx, size_t n, size_t c, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		char **row = r->rows[idx[i]];

		if (row[r->c_status] && !strcmp(row[r->c_status], "ok") &&
		    !row_value(row[c], &out[k]))
			k++;
	}
	return k;
}

static bool same_group(char **a, char **b)
{
	return a[1] && b[1] && !strcmp(a[1], b[1]) && a[3] && b[3] && !strcmp(a[3], b[3]);
}

static void write_aggregates(FILE *f, const struct results *r, size_t *idx, double *vals)
{
	bool *done = calloc(r->n_rows, sizeof(*done));
	bool first = true;

	fputs("  \"aggregates\": [", f);
	for (size_t i = 0; done && i < r->n_rows; i++) {
		size_t n = 0, n_ok = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < r->n_rows; j++) {
			if (!done[j] && same_group(r->rows[i], r->rows[j])) {
				done[j] = true;
				idx[n++] = j;
				if (r->rows[j][r->c_status] && !strcmp(r->rows[j][r->c_status], "ok"))
					n_ok++;
			}
		}
		char **row = r->rows[i];

		fputs(first ? "\n    {" : ",\n    {", f);
		first = false;
		fputs("\"point\": ", f);
		json_field(f, r, 1, row[1]);
		fputs(", \"plugin\": ", f);
		json_str(f, row[3]);
		fputs(", \"swept\": {", f);
		for (size_t a = 0; a < r->n_axes; a++) {
			fputs(a ? ", " : "", f);
			json_str(f, r->cols[r->c_axes + a]);
			fputs(": ", f);
			json_str(f, row[r->c_axes + a]);
		}
		fputs("}, \"cpus\": ", f);
		json_field(f, r, r->c_cond + F_CPUS, row[r->c_cond + F_CPUS]);
		fprintf(f, ", \"repeats\": %zu, \"ok\": %zu, \"failed\": %zu", n, n_ok, n - n_ok);
		fputs(",\n     \"ops_per_sec\": ", f);
		json_mean_ci(f, vals, collect(r, idx, n, r->c_cond + F_OPS_PER_SEC, vals));
		fputs(",\n     \"metrics\": {", f);
		for (size_t m = 0; m < r->n_metrics; m++) {
			size_t c = r->c_metrics + m * N_METRIC_COLS;
			const char *name = r->cols[c];
			size_t nl = strlen(name) - strlen("_mean_ns");

			fprintf(f, "%s\"%.*s\": {\"p50_ns\": ", m ? ", " : "", (int)nl, name);
			json_mean_ci(f, vals, collect(r, idx, n, c + 3, vals));
			fputs(", \"p99_ns\": ", f);
			json_mean_ci(f, vals, collect(r, idx, n, c + 5, vals));
			fputs("}", f);
		}
		fputs("}}", f);
	}
	fputs("\n  ]\n", f);
	free(done);
}

int results_write_summary(struct results *r, const struct results_meta *meta)
{
	static const struct results_meta no_meta;
	char *text = NULL;
	size_t len = 0;
	size_t *idx = NULL;
	double *vals = NULL;
	FILE *f;
	int ret;

	if (!r)
		return -EINVAL;
	if (!meta)
		meta = &no_meta;
	idx = malloc((r->n_rows + 1) * sizeof(*idx));
	vals = malloc((r->n_rows + 1) * sizeof(*vals));
	f = open_memstream(&text, &len);
	if (!idx || !vals || !f) {
		ret = -ENOMEM;
		goto out;
	}

	fputs("{\n  \"schema_version\": 1,\n  \"generator\": ", f);
	json_str(f, "iommulab " LAB_VERSION);
	fputs(",\n  \"meta\": {\"name\": ", f);
	json_str(f, meta->name);
	fputs(", \"scenario\": ", f);
	json_str(f, meta->scenario_path);
	fputs(", \"started\": ", f);
	json_str(f, meta->started);
	fputs(", \"finished\": ", f);
	json_str(f, meta->finished);
	fprintf(f, ", \"interrupted\": %s, \"x_key\": ", meta->interrupted ? "true" : "false");
	json_str(f, meta->x_key);
	fputs(", \"dir\": ", f);
	json_str(f, r->dir);
	fprintf(f, ", \"n_trials\": %zu},\n  \"columns\": [", r->n_rows);
	for (size_t c = 0; c < r->n_cols; c++) {
		fputs(c ? ", " : "", f);
		json_str(f, r->cols[c]);
	}
	fputs("],\n  \"trials\": [", f);
	for (size_t i = 0; i < r->n_rows; i++) {
		fputs(i ? ",\n    {" : "\n    {", f);
		for (size_t c = 0; c < r->n_cols; c++) {
			fputs(c ? ", " : "", f);
			json_str(f, r->cols[c]);
			fputs(": ", f);
			json_field(f, r, c, r->rows[i][c]);
		}
		fputs("}", f);
	}
	fputs("\n  ],\n", f);
	write_aggregates(f, r, idx, vals);
	fputs("}\n", f);
	if (fclose(f)) {
		f = NULL;
		ret = -ENOMEM;
		goto out;
	}
	f = NULL;
	ret = results_write_file(r->dir, "summary.json", text);
out:
	if (f)
		fclose(f);
	free(text);
	free(idx);
	free(vals);
	return ret;
}

const char *results_dir(const struct results *r)
{
	return r ? r->dir : NULL;
}

void results_close(struct results *r)
{
	if (!r)
		return;
	if (r->csv)
		fclose(r->csv);
	for (size_t i = 0; i < r->n_rows; i++)
		free_row(r->rows[i], r->n_cols);
	free(r->rows);
	for (size_t c = 0; c < r->n_cols; c++)
		free(r->cols[c]);
	free(r->cols);
	free(r->types);
	free(r->dir);
	free(r);
}

int results_write_file(const char *dir, const char *name, const char *text)
{
	char *path = path_join(dir, name);
	char *tmp = util_asprintf("%s/%s.tmp", dir, name);
	size_t len = text ? strlen(text) : 0;
	int fd = -1, ret = 0;

	if (!path || !tmp) {
		ret = -ENOMEM;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out_unlink;
		}
		done += (size_t)n;
	}
	/* Data on disk before the rename, or a crash could leave an empty file in its place. */
	if (fsync(fd)) {
		ret = -errno;
		goto out_unlink;
	}
	if (close(fd)) {
		fd = -1;
		ret = -errno;
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path)) {
		ret = -errno;
		goto out_unlink;
	}
	goto out;

out_unlink:
	unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	free(path);
	free(tmp);
	return ret;
}
