/* SPDX-License-Identifier: MIT */
/* calibrate -- a micro-workload run against measured curves, point by point (calibrate.h). */
#include "calibrate/calibrate.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/csv.h"
#include "results/results.h"
#include "util/fs.h"

/*
 * What each micro op is compared with, in travisdowns/concurrency-hierarchy-bench's names:
 * the same primitive on one shared line, no work between ops. The one place that says so.
 */
static const struct {
	const char *op;
	const char *implementation;
} calib_map[] = {
	{ "atomic_add", "atomic add" },	  /* one fetch-add (LDADD, lock xadd) */
	{ "cas_add", "cas add" },	  /* load, then CAS until it succeeds */
	{ "ticket_lock", "ticket spin" }, /* ticket lock spinning on now-serving, +1 under it */
};

#define N_MAP (sizeof(calib_map) / sizeof(calib_map[0]))

/* The largest CPU count a row may give: sim and native both stop at 4096. */
#define CALIB_MAX_CPUS 4096

const char *calib_implementation(const char *op)
{
	for (size_t i = 0; i < N_MAP; i++)
		if (!strcmp(calib_map[i].op, op))
			return calib_map[i].implementation;
	return NULL;
}

static const char *op_of_implementation(const char *implementation)
{
	for (size_t i = 0; i < N_MAP; i++)
		if (!strcmp(calib_map[i].implementation, implementation))
			return calib_map[i].op;
	return NULL;
}

static int set_err(char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int set_err(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return ret;
}

static bool parse_positive(const char *s, double *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && isfinite(*v) && *v > 0;
}

static bool parse_cpus(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || x < 1 || x > CALIB_MAX_CPUS)
		return false;
	*v = (unsigned)x;
	return true;
}

/* ---- curves ---------------------------------------------------------------------------- */

static int curve_add(struct calib_curve *c, const char *op, unsigned cpus, double ns)
{
	struct calib_sample *s = NULL;

	for (size_t i = 0; i < c->n && !s; i++)
		if (c->v[i].cpus == cpus && !strcmp(c->v[i].op, op))
			s = &c->v[i];
	if (!s) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 32;
			struct calib_sample *v = realloc(c->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			c->v = v;
			c->cap = cap;
		}
		s = &c->v[c->n];
		memset(s, 0, sizeof(*s));
		s->op = strdup(op);
		if (!s->op)
			return -ENOMEM;
		s->cpus = cpus;
		c->n++;
	}
	s->sum += ns;
	s->n++;
	s->ns_per_op = s->sum / s->n;
	c->n_used++;
	return 0;
}

static const struct calib_sample *curve_find(const struct calib_curve *c, const char *op,
					     unsigned cpus)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].cpus == cpus && !strcmp(c->v[i].op, op))
			return &c->v[i];
	return NULL;
}

void calib_curve_free(struct calib_curve *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].op);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* "atomic_add at 1-16 CPUs, cas_add at 2 CPUs": what a curve covers, for messages. */
static void describe_curve(const struct calib_curve *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->n && used < len; i++) {
		unsigned lo = c->v[i].cpus, hi = lo;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(c->v[j].op, c->v[i].op);
		if (seen)
			continue;
		for (size_t j = i + 1; j < c->n; j++) {
			if (strcmp(c->v[j].op, c->v[i].op))
				continue;
			lo = c->v[j].cpus < lo ? c->v[j].cpus : lo;
			hi = c->v[j].cpus > hi ? c->v[j].cpus : hi;
		}
		int n = lo == hi ? snprintf(buf + used, len - used, "%s%s at %u CPU%s",
					    used ? ", " : "", c->v[i].op, lo, lo == 1 ? "" : "s")
				 : snprintf(buf + used, len - used, "%s%s at %u-%u CPUs",
					    used ? ", " : "", c->v[i].op, lo, hi);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* ---- the run: RESULTS_DIR/trials.csv (and scenario.ini for keys that were not swept) --- */

struct run_keys {
	char workload[32];
	char op[64];
};

static int on_scenario_key(void *user, const char *section, const char *name, const char *value)
{
	struct run_keys *k = user;

	if (!strcmp(section, "scenario") && !strcmp(name, "workload"))
		snprintf(k->workload, sizeof(k->workload), "%s", value);
	else if (!strcmp(section, "workload.micro") && !strcmp(name, "op"))
		snprintf(k->op, sizeof(k->op), "%s", value);
	return 1;
}

/* The resolved [scenario] workload and [workload.micro] op a run recorded. */
static int read_run_keys(const char *dir, struct run_keys *k, char *err, size_t len)
{
	char *path = util_asprintf("%s/scenario.ini", dir);
	int rc, ret = 0;

	if (!path)
		return set_err(err, len, -ENOMEM, "out of memory");
	memset(k, 0, sizeof(*k));
	errno = 0;
	rc = ini_parse(path, on_scenario_key, k);
	if (rc < 0)
		ret = set_err(err, len, errno ? -errno : -EIO,
			      "%s: cannot read it (trials.csv does not sweep the micro op, so it "
			      "comes from there): %s",
			      path, strerror(errno ? errno : EIO));
	else if (rc > 0)
		ret = set_err(err, len, -EINVAL, "%s:%d: not a scenario.ini iommulab wrote", path,
			      rc);
	else if (!k->workload[0] || !k->op[0])
		ret = set_err(err, len, -EINVAL, "%s: no %s (not a scenario.ini iommulab wrote)",
			      path,
			      !k->workload[0] ? "[scenario] workload" : "[workload.micro] op");
	free(path);
	return ret;
}

int calib_load_run(const char *dir, struct calib_curve *c, char *err, size_t err_len)
{
	static const char *const need[] = { "status", "cpus", "ops_per_sec" };
	struct csv_table t;
	struct run_keys keys = { "", "" };
	long col[3], c_op, c_wl;
	size_t n_micro = 0;
	char *path;
	int ret;

	memset(c, 0, sizeof(*c));
	path = util_asprintf("%s/trials.csv", dir);
	if (!path)
		return set_err(err, err_len, -ENOMEM, "out of memory");
	ret = csv_read(path, &t, err, err_len);
	if (ret)
		goto out_path;
	for (size_t i = 0; i < 3; i++) {
		col[i] = csv_column(&t, need[i]);
		if (col[i] < 0) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s:1: no '%s' column: not an iommulab trials.csv", path,
				      need[i]);
			goto out;
		}
	}
	c_op = csv_column(&t, "workload.micro.op");
	c_wl = csv_column(&t, "scenario.workload");
	if (c_op < 0 || c_wl < 0) {
		ret = read_run_keys(dir, &keys, err, err_len);
		if (ret)
			goto out;
	}

	for (size_t r = 0; r < t.n_rows; r++) {
		char *const *row = t.rows[r];
		const char *op = c_op >= 0 ? row[c_op] : keys.op;
		unsigned cpus;
		double ops;

		if (strcmp(c_wl >= 0 ? row[c_wl] : keys.workload, "micro"))
			continue;
		n_micro++;
		if (strcmp(row[col[0]], "ok")) {
			c->n_left_out++;
			continue;
		}
		if (!parse_cpus(row[col[1]], &cpus)) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s:%zu: cpus '%s' is not a CPU count (1 to %d)", path,
				      t.lines[r], row[col[1]], CALIB_MAX_CPUS);
			goto out;
		}
		if (!parse_positive(row[col[2]], &ops)) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s:%zu: ops_per_sec '%s' is not a positive number", path,
				      t.lines[r], row[col[2]]);
			goto out;
		}
		if (!*op) {
			ret = set_err(err, err_len, -EINVAL, "%s:%zu: no workload.micro.op", path,
				      t.lines[r]);
			goto out;
		}
		/* Per thread, as the measured data defines it: wall time x threads / total ops. */
		ret = curve_add(c, op, cpus, cpus / ops * 1e9);
		if (ret) {
			set_err(err, err_len, ret, "out of memory");
			goto out;
		}
	}
	if (!n_micro)
		ret = set_err(err, err_len, -ENODATA,
			      "%s: no trial of the micro workload (%zu trials of others)", path,
			      t.n_rows);
	else if (!c->n_used)
		ret = set_err(err, err_len, -ENODATA,
			      "%s: none of the %zu micro trials finished ok (see their 'error')",
			      path, n_micro);
out:
	csv_free(&t);
	if (ret)
		calib_curve_free(c);
out_path:
	free(path);
	return ret;
}

/* ---- the measured data ----------------------------------------------------------------- */

int calib_load_measured(const char *path, struct calib_curve *c, char *err, size_t err_len)
{
	static const char *const need[] = { "Cores", "Implementation", "Nanos/Op" };
	struct csv_table t;
	long col[3];
	int ret;

	memset(c, 0, sizeof(*c));
	ret = csv_read_flags(path, CSV_COMMENTS, &t, err, err_len);
	if (ret)
		return ret;
	for (size_t i = 0; i < 3; i++) {
		col[i] = csv_column(&t, need[i]);
		if (col[i] < 0) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s: no '%s' column (expected the header "
				      "Trial,Cores,Implementation,Nanos/Op,Total,Rlen)",
				      path, need[i]);
			goto out;
		}
	}
	for (size_t r = 0; r < t.n_rows; r++) {
		char *const *row = t.rows[r];
		const char *op = op_of_implementation(row[col[1]]);
		unsigned cpus;
		double ns;

		if (!op)
			continue;
		if (!parse_cpus(row[col[0]], &cpus)) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s:%zu: Cores '%s' is not a CPU count (1 to %d)", path,
				      t.lines[r], row[col[0]], CALIB_MAX_CPUS);
			goto out;
		}
		if (!parse_positive(row[col[2]], &ns)) {
			ret = set_err(err, err_len, -EINVAL,
				      "%s:%zu: Nanos/Op '%s' is not a positive number", path,
				      t.lines[r], row[col[2]]);
			goto out;
		}
		ret = curve_add(c, op, cpus, ns);
		if (ret) {
			set_err(err, err_len, ret, "out of memory");
			goto out;
		}
	}
	if (!c->n_used) {
		char names[256] = "";

		for (size_t i = 0; i < N_MAP; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%s'",
				 i ? (i + 1 == N_MAP ? " or " : ", ") : "",
				 calib_map[i].implementation);
		ret = set_err(err, err_len, -ENODATA,
			      "%s: no row of implementation %s (what the micro ops are compared "
			      "with)",
			      path, names);
	}
out:
	csv_free(&t);
	if (ret)
		calib_curve_free(c);
	return ret;
}

/* ---- the comparison -------------------------------------------------------------------- */

static int row_cmp(const void *a, const void *b)
{
	const struct calib_row *x = a, *y = b;
	int c = strcmp(x->op, y->op);

	if (c)
		return c;
	return x->cpus < y->cpus ? -1 : x->cpus > y->cpus;
}

static int summarise(struct calib_report *r)
{
	r->ops = calloc(r->n_rows ? r->n_rows : 1, sizeof(*r->ops));
	if (!r->ops)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct calib_row *row = &r->rows[i];
		struct calib_op_summary *s = &r->ops[r->n_ops ? r->n_ops - 1 : 0];

		if (!r->n_ops || strcmp(s->op, row->op)) {
			s = &r->ops[r->n_ops++];
			s->op = strdup(row->op);
			if (!s->op)
				return -ENOMEM;
			s->worst_pct = NAN;
		}
		if (!row->judged)
			continue;
		if (!s->n_judged || row->cpus < s->min_cpus)
			s->min_cpus = row->cpus;
		if (!s->n_judged || row->cpus > s->max_cpus)
			s->max_cpus = row->cpus;
		if (!s->n_judged || fabs(row->err_pct) > fabs(s->worst_pct)) {
			s->worst_pct = row->err_pct;
			s->worst_cpus = row->cpus;
		}
		s->n_judged++;
		s->n_missed += !row->within;
	}
	return 0;
}

int calib_compare(const struct calib_curve *sim, const struct calib_curve *meas,
		  double tolerance_pct, struct calib_report *r, char *err, size_t err_len)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (!isfinite(tolerance_pct) || tolerance_pct <= 0)
		return set_err(err, err_len, -EINVAL, "tolerance %g%% is not a positive percentage",
			       tolerance_pct);
	r->tolerance_pct = tolerance_pct;
	r->rows = calloc(sim->n ? sim->n : 1, sizeof(*r->rows));
	if (!r->rows)
		return set_err(err, err_len, -ENOMEM, "out of memory");
	for (size_t i = 0; i < sim->n; i++) {
		const struct calib_sample *s = &sim->v[i];
		const struct calib_sample *m = curve_find(meas, s->op, s->cpus);
		struct calib_row *row = &r->rows[r->n_rows];

		row->op = strdup(s->op);
		if (!row->op) {
			ret = set_err(err, err_len, -ENOMEM, "out of memory");
			goto fail;
		}
		r->n_rows++;
		row->cpus = s->cpus;
		row->sim_ns = s->ns_per_op;
		row->meas_ns = m ? m->ns_per_op : NAN;
		row->err_pct = m ? (s->ns_per_op - m->ns_per_op) / m->ns_per_op * 100 : NAN;
		row->judged = m && s->cpus >= CALIB_MIN_JUDGED_CPUS;
		row->within = row->judged && fabs(row->err_pct) <= tolerance_pct;
		r->n_judged += row->judged;
		r->n_missed += row->judged && !row->within;
	}
	qsort(r->rows, r->n_rows, sizeof(*r->rows), row_cmp);
	ret = summarise(r);
	if (ret) {
		set_err(err, err_len, ret, "out of memory");
		goto fail;
	}
	if (!r->n_judged) {
		char have_sim[512], have_meas[512];

		describe_curve(sim, have_sim, sizeof(have_sim));
		describe_curve(meas, have_meas, sizeof(have_meas));
		ret = set_err(err, err_len, -ENODATA,
			      "no point with %d or more CPUs is both in the run (%s) and in the "
			      "measured data (%s)",
			      CALIB_MIN_JUDGED_CPUS, have_sim, have_meas);
		goto fail;
	}
	return 0;

fail:
	calib_report_free(r);
	return ret;
}

bool calib_all_within(const struct calib_report *r)
{
	return r->n_judged && !r->n_missed;
}

static void put_value(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
}

int calib_write_csv(const struct calib_report *r, const char *dir)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return -ENOMEM;
	fputs("op,cpus,sim_ns_per_op,measured_ns_per_op,error_pct\n", f);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct calib_row *row = &r->rows[i];

		csv_write_field(f, row->op, false);
		fprintf(f, ",%u,", row->cpus);
		put_value(f, row->sim_ns);
		fputc(',', f);
		put_value(f, row->meas_ns);
		fputc(',', f);
		put_value(f, row->err_pct);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	ret = results_write_file(dir, "calibration.csv", text);
	free(text);
	return ret;
}

void calib_report_free(struct calib_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_rows; i++)
		free(r->rows[i].op);
	for (size_t i = 0; i < r->n_ops; i++)
		free(r->ops[i].op);
	free(r->rows);
	free(r->ops);
	memset(r, 0, sizeof(*r));
}
