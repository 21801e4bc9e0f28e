/* SPDX-License-Identifier: MIT */
/* calibrate -- a micro-workload run against measured curves, point by point (calibrate.h). */
#include "calibrate/calibrate.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/csv.h"
#include "results/results.h"
#include "util/array.h"
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

/*
 * The values a measurement holds (ns per op, ops or acquisitions per second) lie far inside
 * this range; one outside it (1e308, 1e-300) is a damaged or mistyped file, not a figure.
 */
#define CALIB_MIN_VALUE	 1e-9
#define CALIB_MAX_VALUE	 1e18
#define CALIB_RANGE_TEXT "1e-9 to 1e18"

static bool parse_positive(const char *s, double *v)
{
	char *end;

	if (!*s)
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && isfinite(*v) && *v >= CALIB_MIN_VALUE && *v <= CALIB_MAX_VALUE;
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
		struct calib_sample *v = array_grow(c->v, &c->cap, c->n + 1, sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
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
				      "%s:%zu: ops_per_sec '%s' is not a positive number "
				      "(" CALIB_RANGE_TEXT ")",
				      path, t.lines[r], row[col[2]]);
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

/*
 * The other formats' names for the micro ops, each the same primitive on one shared line:
 * lockhammer's workloads (ARM-software/synchronization-benchmarks, benchmarks/lockhammer),
 * folly's SmallLocksBenchmark rows (folly/synchronization/test).
 */
static const struct {
	const char *name;
	const char *op;
	unsigned per_row; /* ops of the micro op in one of the row's (ops per acquire) */
} lockhammer_map[] = {
	/* lh_ticket_spinlock: fetch-add a ticket, spin until the owner field shows it */
	{ "ticket_spinlock", "ticket_lock", 1 },
	/* lh_swap_mutex: xchg until it returns 0 (test-and-set, no pause), release: a store */
	{ "swap_mutex", "tas_lock", 1 },
	/* lh_incdec_refcount: a fetch-add to acquire, a fetch-sub to release: two atomic_adds */
	{ "incdec_refcount", "atomic_add", 2 },
	/* lh_queued_spinlock: the kernel's qspinlock (pending bit, MCS queue of per-CPU nodes) */
	{ "queued_spinlock", "qspin_lock", 1 },
};

static const struct {
	const char *name;
	const char *op;
} folly_map[] = {
	{ "atomic_cas", "cas_add" }, /* load, then compare_exchange_strong until it succeeds */
	{ "atomic_fetch_xor", "atomic_add" }, /* one locked RMW per op (lock xor ~ lock xadd) */
};

#define N_LH	(sizeof(lockhammer_map) / sizeof(lockhammer_map[0]))
#define N_FOLLY (sizeof(folly_map) / sizeof(folly_map[0]))

/* The next line of text at *p (cut in place at its '\n'), or NULL at the end. */
static char *next_line(char **p)
{
	char *l = *p, *nl;

	if (!*l)
		return NULL;
	nl = strchr(l, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = l + strlen(l);
	}
	if (nl > l && nl[-1] == '\r')
		nl[-1] = '\0';
	return l;
}

static bool blank_or_comment(const char *l)
{
	while (*l == ' ' || *l == '\t')
		l++;
	return !*l || *l == '#';
}

/*
 * lockhammer's raw rows (its scripts' lockhammer-all.csv): ", "-separated, no header --
 * num_threads, avg_exectx, scheduled_time_per_access, real_time_per_access, access_rate (wall
 * ns per acquire, all threads together), avg_lock_depth, date, host, ../build/lh_WORKLOAD,
 * then the command line (-t N -a N -c CRIT -p PAR [-o PINS]). One host and one -c/-p setting
 * per file: the per-thread ns per op is access_rate x num_threads (over the micro ops one
 * acquire makes: two for incdec_refcount), averaged over repeats.
 */
#define LH_FIELDS 20

static int load_lockhammer(const char *path, char *text, struct calib_curve *c, char *err,
			   size_t len)
{
	char host[128] = "", setting[128] = "";
	char *p = text, *l;
	unsigned lineno = 0;
	int ret;

	while ((l = next_line(&p))) {
		char *f[LH_FIELDS], *save = NULL, *tok, cur[128] = "";
		unsigned n = 0, cpus;
		const char *op = NULL, *wl;
		unsigned per_row = 1;
		double rate;

		lineno++;
		if (blank_or_comment(l))
			continue;
		for (tok = strtok_r(l, ",", &save); tok && n < LH_FIELDS;
		     tok = strtok_r(NULL, ",", &save)) {
			while (*tok == ' ')
				tok++;
			f[n++] = tok;
		}
		if (n < 9 || strncmp(f[8], "../build/lh_", 12))
			return set_err(
				err, len, -EINVAL,
				"%s:%u: not a lockhammer row (num_threads, avg_exectx, ..., "
				"access_rate, avg_lock_depth, date, host, ../build/lh_WORKLOAD, "
				"-t ...)",
				path, lineno);
		if (!parse_cpus(f[0], &cpus))
			return set_err(err, len, -EINVAL,
				       "%s:%u: num_threads '%s' is not a CPU count (1 to %d)", path,
				       lineno, f[0], CALIB_MAX_CPUS);
		if (!parse_positive(f[4], &rate))
			return set_err(err, len, -EINVAL,
				       "%s:%u: access_rate '%s' is not a positive number "
				       "(" CALIB_RANGE_TEXT ")",
				       path, lineno, f[4]);
		for (unsigned i = 9; i + 1 < n; i++)
			if (!strcmp(f[i], "-c") || !strcmp(f[i], "-p"))
				snprintf(cur + strlen(cur), sizeof(cur) - strlen(cur), "%s%s %s",
					 cur[0] ? " " : "", f[i], f[i + 1]);
		if (!host[0]) {
			snprintf(host, sizeof(host), "%s", f[7]);
			snprintf(setting, sizeof(setting), "%s", cur);
		} else if (strcmp(host, f[7])) {
			return set_err(err, len, -EINVAL,
				       "%s:%u: host '%s' after '%s': keep one machine per file",
				       path, lineno, f[7], host);
		} else if (strcmp(setting, cur)) {
			return set_err(err, len, -EINVAL,
				       "%s:%u: '%s' after '%s': keep one critical/parallel "
				       "setting per file",
				       path, lineno, cur, setting);
		}
		wl = f[8] + 12;
		for (size_t i = 0; i < N_LH && !op; i++)
			if (!strcmp(lockhammer_map[i].name, wl)) {
				op = lockhammer_map[i].op;
				per_row = lockhammer_map[i].per_row;
			}
		if (!op)
			continue;
		ret = curve_add(c, op, cpus, rate * cpus / per_row);
		if (ret)
			return set_err(err, len, ret, "out of memory");
	}
	if (!c->n_used)
		return set_err(err, len, -ENODATA,
			       "%s: no lockhammer row of workload 'ticket_spinlock', 'swap_mutex', "
			       "'incdec_refcount' or 'queued_spinlock' (what the micro ops are "
			       "compared with)",
			       path);
	return 0;
}

/* "12.3ns" / "1.27us": ns, or a negative number when it is not a time. */
static double folly_time_ns(const char *s)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v <= 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			double ns = v * units[i].ns;
			return ns >= CALIB_MIN_VALUE && ns <= CALIB_MAX_VALUE ? ns : -1;
		}
	return -1;
}

/*
 * folly's benchmark output (the results comment of SmallLocksBenchmark.cpp): a CPU line
 * ("Intel(R) Xeon(R) CPU ... @ 2.40GHz"), then rows "NAME(Nthread) [relative%] TIME
 * ITERS/s", TIME per op as each thread sees it. One CPU per file.
 */
static int load_folly(const char *path, char *text, struct calib_curve *c, char *err, size_t len)
{
	char cpu[160] = "";
	char *p = text, *l;
	unsigned lineno = 0;
	int ret;

	while ((l = next_line(&p))) {
		char name[64], *paren, *tok, *save = NULL, *last_time = NULL;
		const char *op = NULL;
		unsigned long threads;
		size_t nlen;
		double ns;

		lineno++;
		if (blank_or_comment(l))
			continue;
		if (strstr(l, "CPU") && strchr(l, '@')) {
			if (cpu[0] && strcmp(cpu, l))
				return set_err(err, len, -EINVAL,
					       "%s:%u: results of a second CPU ('%.60s' after "
					       "'%.60s'): keep one machine per file",
					       path, lineno, l, cpu);
			snprintf(cpu, sizeof(cpu), "%s", l);
			continue;
		}
		paren = strchr(l, '(');
		nlen = paren ? (size_t)(paren - l) : 0;
		if (!paren || nlen >= sizeof(name) || !isdigit((unsigned char)paren[1]))
			continue;
		memcpy(name, l, nlen);
		name[nlen] = '\0';
		for (size_t i = 0; i < N_FOLLY && !op; i++)
			if (!strcmp(folly_map[i].name, name))
				op = folly_map[i].op;
		if (!op)
			continue;
		errno = 0;
		threads = strtoul(paren + 1, &tok, 10);
		if (errno || strncmp(tok, "thread)", 7) || threads < 1 || threads > CALIB_MAX_CPUS)
			return set_err(err, len, -EINVAL,
				       "%s:%u: %s: expected '(Nthread)' with N from 1 to %d", path,
				       lineno, name, CALIB_MAX_CPUS);
		/* The columns after the name: [relative%] time/iter iters/s. */
		char *rest = tok + 7, *fields[4];
		unsigned n = 0;

		for (tok = strtok_r(rest, " \t", &save); tok && n < 4;
		     tok = strtok_r(NULL, " \t", &save))
			fields[n++] = tok;
		if (n >= 2)
			last_time = fields[n - 2];
		if (!cpu[0])
			return set_err(err, len, -EINVAL,
				       "%s:%u: %s row before any CPU line ('Intel(R) Xeon(R) "
				       "CPU ... @ 2.40GHz')",
				       path, lineno, name);
		ns = last_time ? folly_time_ns(last_time) : -1;
		if (ns <= 0)
			return set_err(
				err, len, -EINVAL,
				"%s:%u: %s(%luthread): time '%s' is not a number with a unit "
				"(ns, us, ms, s; 1e-9 to 1e18 ns)",
				path, lineno, name, threads, last_time ? last_time : "");
		ret = curve_add(c, op, (unsigned)threads, ns);
		if (ret)
			return set_err(err, len, ret, "out of memory");
	}
	if (!c->n_used)
		return set_err(err, len, -ENODATA,
			       "%s: no folly row 'atomic_cas(Nthread)' or "
			       "'atomic_fetch_xor(Nthread)' (what the micro ops are compared with)",
			       path);
	return 0;
}

/*
 * mctop's lock benchmark results (LPD-EPFL/mctop results/locks/lock_backoff_1_1000_HOST.txt):
 * a header (num_locks: 1, duration: MS, critical: CYCLES), then a "====== LOCK ======" line
 * per algorithm and rows "VARIANT - THREADS:  v1 ... vN", the N repeats' total acquisitions
 * per second over all threads. Only no_backoff is read: backoff_socket and backoff_max are
 * mctop-derived backoff policies, which the micro locks do not implement. The per-thread ns
 * per op is threads x 1e9 / the repeats' median (the median: one disturbed repeat of 11, as
 * MCS's at 40 threads on lpdxeon2680, moves a mean by 5%).
 */
static const struct {
	const char *name;
	const char *op;
} mctop_map[] = {
	{ "TAS", "tas_lock" },	     /* xchg until it returns 0 */
	{ "TTAS", "ttas_lock" },     /* spin on a read, then xchg */
	{ "TICKET", "ticket_lock" }, /* fetch-add a ticket, spin on now-serving */
	{ "MCS", "mcs_lock" },	     /* queue of nodes, each CPU spinning on its own */
	{ "CLH", "clh_lock" },	     /* each CPU spinning on its predecessor's node */
};

#define N_MCTOP	       (sizeof(mctop_map) / sizeof(mctop_map[0]))
#define MCTOP_MAX_REPS 64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int load_mctop(const char *path, char *text, struct calib_curve *c, char *err, size_t len)
{
	const char *op = NULL;
	char *p = text, *l;
	unsigned lineno = 0, locks = 0;
	bool in_lock = false;
	int ret;

	while ((l = next_line(&p))) {
		char name[32], *rest, *tok, *save = NULL, *end;
		double v[MCTOP_MAX_REPS], med;
		unsigned n = 0, cpus;
		unsigned long x;

		lineno++;
		if (blank_or_comment(l))
			continue;
		if (!strncmp(l, "num_locks:", 10)) {
			errno = 0;
			x = strtoul(l + 10, &end, 10);
			locks = (unsigned)x;
			if (errno || x != 1 || *end)
				return set_err(err, len, -EINVAL,
					       "%s:%u: num_locks '%s': only one lock that every "
					       "thread contends on (1) is a micro op",
					       path, lineno, l + 10);
			continue;
		}
		if (!strncmp(l, "duration:", 9) || !strncmp(l, "critical:", 9))
			continue;
		if (sscanf(l, "====== %31s ======", name) == 1) {
			op = NULL;
			for (size_t i = 0; i < N_MCTOP && !op; i++)
				if (!strcmp(mctop_map[i].name, name))
					op = mctop_map[i].op;
			in_lock = true;
			continue;
		}
		rest = strstr(l, " - ");
		if (!in_lock || !rest)
			return set_err(err, len, -EINVAL,
				       "%s:%u: not an mctop lock row ('====== LOCK ======', then "
				       "'VARIANT - THREADS:  v1 ... vN')",
				       path, lineno);
		if (!locks)
			return set_err(err, len, -EINVAL,
				       "%s:%u: a row before the 'num_locks: 1' header", path,
				       lineno);
		*rest = '\0';
		rest += 3;
		if (strcmp(l, "no_backoff") || !op)
			continue;
		tok = strchr(rest, ':');
		if (!tok)
			return set_err(err, len, -EINVAL, "%s:%u: no ':' after the thread count",
				       path, lineno);
		*tok = '\0';
		if (!parse_cpus(rest, &cpus))
			return set_err(err, len, -EINVAL,
				       "%s:%u: threads '%s' is not a CPU count (1 to %d)", path,
				       lineno, rest, CALIB_MAX_CPUS);
		for (tok = strtok_r(tok + 1, " \t", &save); tok;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (n == MCTOP_MAX_REPS)
				return set_err(err, len, -EINVAL, "%s:%u: more than %d repeats",
					       path, lineno, MCTOP_MAX_REPS);
			if (!parse_positive(tok, &v[n]))
				return set_err(err, len, -EINVAL,
					       "%s:%u: repeat '%s' is not a positive number of "
					       "acquisitions per second (" CALIB_RANGE_TEXT ")",
					       path, lineno, tok);
			n++;
		}
		if (!n)
			return set_err(err, len, -EINVAL, "%s:%u: no repeat after '%u:'", path,
				       lineno, cpus);
		if (curve_find(c, op, cpus))
			return set_err(err, len, -EINVAL,
				       "%s:%u: a second no_backoff row of %s at %u threads", path,
				       lineno, name, cpus);
		qsort(v, n, sizeof(v[0]), cmp_double);
		med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		ret = curve_add(c, op, cpus, cpus * 1e9 / med);
		if (ret)
			return set_err(err, len, ret, "out of memory");
	}
	if (!c->n_used)
		return set_err(err, len, -ENODATA,
			       "%s: no no_backoff row of TAS, TTAS, TICKET, MCS or CLH (what the "
			       "micro lock ops are compared with)",
			       path);
	return 0;
}

enum calib_format { CALIB_FMT_CHB, CALIB_FMT_LOCKHAMMER, CALIB_FMT_FOLLY, CALIB_FMT_MCTOP };

/* Which format: lockhammer's rows name their binary, mctop's start with "num_locks:", folly's
 * output has "(Nthread)" rows. */
static enum calib_format sniff(const char *text)
{
	const char *l = text;

	while (*l) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);

		if (*l != '#' && n > 1) {
			if (memmem(l, n, "../build/lh_", 12))
				return CALIB_FMT_LOCKHAMMER;
			if (!strncmp(l, "num_locks:", 10))
				return CALIB_FMT_MCTOP;
			break;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return strstr(text, "thread)") && strstr(text, "CPU") ? CALIB_FMT_FOLLY : CALIB_FMT_CHB;
}

static int load_chb(const char *path, struct calib_curve *c, char *err, size_t err_len);

int calib_load_measured(const char *path, struct calib_curve *c, char *err, size_t err_len)
{
	enum calib_format fmt;
	char *text;
	int ret;

	memset(c, 0, sizeof(*c));
	text = util_read_file(path, NULL);
	if (!text)
		return set_err(err, err_len, -errno, "%s: %s", path, strerror(errno));
	fmt = sniff(text);
	if (fmt == CALIB_FMT_CHB) {
		free(text);
		return load_chb(path, c, err, err_len);
	}
	ret = fmt == CALIB_FMT_LOCKHAMMER ? load_lockhammer(path, text, c, err, err_len)
	      : fmt == CALIB_FMT_MCTOP	  ? load_mctop(path, text, c, err, err_len)
					  : load_folly(path, text, c, err, err_len);
	free(text);
	if (ret)
		calib_curve_free(c);
	return ret;
}

/* travisdowns/concurrency-hierarchy-bench's CSV. */
static int load_chb(const char *path, struct calib_curve *c, char *err, size_t err_len)
{
	static const char *const need[] = { "Cores", "Implementation", "Nanos/Op" };
	struct csv_table t;
	long col[3];
	int ret;

	memset(c, 0, sizeof(*c));
	ret = csv_read_flags(path, CSV_COMMENTS | CSV_UNIQUE_COLUMNS, &t, err, err_len);
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
			ret = set_err(
				err, err_len, -EINVAL,
				"%s:%zu: Nanos/Op '%s' is not a positive number (" CALIB_RANGE_TEXT
				")",
				path, t.lines[r], row[col[2]]);
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
