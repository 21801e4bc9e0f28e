/* SPDX-License-Identifier: MIT */
/*
 * histfile -- histograms.csv's writer and its strict reader (histfile.h). The reader checks
 * everything a histogram must satisfy (buckets on histogram.h's boundaries, ascending, summing
 * to the count; min and max in the first and last bucket; sums consistent with them), so that
 * nothing built from a damaged file can make a quantile or a standard deviation lie.
 */
#include "results/histfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/fs.h"

/* The lowest value of bucket b (histogram.h: exact below HIST_SUB_COUNT, log-linear above). */
static uint64_t bucket_low(uint32_t b)
{
	if (b < HIST_SUB_COUNT)
		return b;
	return (uint64_t)(b & (HIST_SUB_COUNT - 1)) << (b >> HIST_SUB_BITS);
}

/* ---- writing ----------------------------------------------------------------------------- */

static void put_u128(FILE *f, hist_u128 v)
{
	char buf[40];
	size_t i = sizeof(buf);

	buf[--i] = '\0';
	do {
		buf[--i] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	fputs(buf + i, f);
}

void histfile_write_header(FILE *f)
{
	fprintf(f, "%s%d\n%s\n", HISTFILE_MAGIC, HISTFILE_VERSION, HISTFILE_COLUMNS);
}

void histfile_write_rec(FILE *f, const struct histfile_rec *r)
{
	fprintf(f, "%lu,%s,%llu,%llu,%llu,%llu,", r->trial, r->metric, (unsigned long long)r->count,
		(unsigned long long)r->min, (unsigned long long)r->max, (unsigned long long)r->sum);
	put_u128(f, r->sumsq);
	fputc(',', f);
	for (uint32_t i = 0; i < r->n_buckets; i++)
		fprintf(f, "%s%llu:%llu", i ? " " : "", (unsigned long long)bucket_low(r->index[i]),
			(unsigned long long)r->counts[i]);
	fputc('\n', f);
}

/* ---- records ------------------------------------------------------------------------------ */

static void rec_free(struct histfile_rec *r)
{
	free(r->index);
	free(r->counts);
}

void histfile_free(struct histfile *hf)
{
	for (size_t i = 0; hf->recs && i < hf->n; i++)
		rec_free(&hf->recs[i]);
	free(hf->recs);
	free(hf->order);
	memset(hf, 0, sizeof(*hf));
}

static bool metric_ok(const char *m, size_t len)
{
	if (!len || len > HISTFILE_METRIC_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((m[i] >= 'a' && m[i] <= 'z') || (m[i] >= 'A' && m[i] <= 'Z') ||
		      (m[i] >= '0' && m[i] <= '9') || m[i] == '_'))
			return false;
	return true;
}

/* A new record at the end of hf, zeroed. */
static struct histfile_rec *push(struct histfile *hf)
{
	struct histfile_rec *v = array_grow(hf->recs, &hf->cap, hf->n + 1, sizeof(*v));

	if (!v)
		return NULL;
	hf->recs = v;
	memset(&v[hf->n], 0, sizeof(v[0]));
	return &v[hf->n++];
}

static int alloc_buckets(struct histfile_rec *r, size_t n)
{
	r->index = malloc((n ? n : 1) * sizeof(*r->index));
	r->counts = malloc((n ? n : 1) * sizeof(*r->counts));
	return r->index && r->counts ? 0 : -ENOMEM;
}

int histfile_add_hist(struct histfile *hf, unsigned long trial, const char *metric,
		      const struct hist *h)
{
	struct histfile_rec *r;
	uint32_t lo = 0, hi = 0, n = 0;

	if (!metric_ok(metric, strlen(metric)))
		return -EINVAL;
	if (h->count) {
		lo = hist_bucket(h->min);
		hi = hist_bucket(h->max);
		for (uint32_t b = lo; b <= hi; b++)
			n += h->buckets[b] != 0;
	}
	r = push(hf);
	if (!r)
		return -ENOMEM;
	if (alloc_buckets(r, n)) {
		rec_free(r);
		hf->n--;
		return -ENOMEM;
	}
	r->trial = trial;
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	if (h->count) {
		r->count = h->count;
		r->min = h->min;
		r->max = h->max;
		r->sum = h->sum;
		r->sumsq = h->sumsq;
		for (uint32_t b = lo; b <= hi; b++) {
			if (!h->buckets[b])
				continue;
			r->index[r->n_buckets] = b;
			r->counts[r->n_buckets++] = h->buckets[b];
		}
	}
	return 0;
}

int histfile_add_rec(struct histfile *hf, const struct histfile_rec *src)
{
	struct histfile_rec *r = push(hf);

	if (!r)
		return -ENOMEM;
	*r = *src;
	r->index = NULL;
	r->counts = NULL;
	if (alloc_buckets(r, src->n_buckets)) {
		rec_free(r);
		hf->n--;
		return -ENOMEM;
	}
	memcpy(r->index, src->index, src->n_buckets * sizeof(*r->index));
	memcpy(r->counts, src->counts, src->n_buckets * sizeof(*r->counts));
	return 0;
}

void histfile_rec_merge(struct hist *h, const struct histfile_rec *r)
{
	if (!r->count)
		return;
	if (!h->count || r->min < h->min)
		h->min = r->min;
	if (!h->count || r->max > h->max)
		h->max = r->max;
	h->count += r->count;
	h->sum += r->sum;
	h->sumsq += r->sumsq;
	for (uint32_t i = 0; i < r->n_buckets; i++)
		h->buckets[r->index[i]] += r->counts[i];
}

/* ---- the index ----------------------------------------------------------------------------- */

static const struct histfile *sort_hf; /* qsort has no context argument in C11 */

static int cmp_order(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	unsigned long ta = sort_hf->recs[a].trial, tb = sort_hf->recs[b].trial;

	if (ta != tb)
		return ta < tb ? -1 : 1;
	return (a > b) - (a < b);
}

int histfile_index(struct histfile *hf)
{
	size_t *o = realloc(hf->order, (hf->n ? hf->n : 1) * sizeof(*o));

	if (!o)
		return -ENOMEM;
	hf->order = o;
	for (size_t i = 0; i < hf->n; i++)
		o[i] = i;
	sort_hf = hf;
	qsort(o, hf->n, sizeof(*o), cmp_order);
	sort_hf = NULL;
	return 0;
}

const size_t *histfile_find(const struct histfile *hf, unsigned long trial, size_t *n)
{
	size_t lo = 0, hi = hf->n, end;

	*n = 0;
	if (!hf->order)
		return NULL;
	while (lo < hi) { /* the first record whose trial is >= trial */
		size_t mid = lo + (hi - lo) / 2;

		if (hf->recs[hf->order[mid]].trial < trial)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < hf->n && hf->recs[hf->order[end]].trial == trial; end++)
		;
	*n = end - lo;
	return *n ? &hf->order[lo] : NULL;
}

/* ---- reading --------------------------------------------------------------------------------- */

struct parser {
	const char *name;
	size_t line;
	char *err;
	size_t err_len;
};

__attribute__((format(printf, 2, 3))) static int bad(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int at = snprintf(p->err, p->err_len, "%s:%zu: ", p->name, p->line);

	va_start(ap, fmt);
	if (at >= 0 && (size_t)at < p->err_len)
		vsnprintf(p->err + at, p->err_len - (size_t)at, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal number without sign, spaces or leading zeros, from s[0..len). */
static bool parse_u128(const char *s, size_t len, hist_u128 max, hist_u128 *out)
{
	hist_u128 v = 0;

	if (!len || (len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	hist_u128 v;

	if (!parse_u128(s, len, UINT64_MAX, &v))
		return false;
	*out = (uint64_t)v;
	return true;
}

static const char *const field_names[] = { "trial",  "metric", "count",	    "min_ns",
					   "max_ns", "sum_ns", "sumsq_ns2", "buckets" };
#define N_FIELDS (sizeof(field_names) / sizeof(field_names[0]))

/* The buckets field of r: "LOWER:COUNT" pairs, one space apart. */
static int parse_buckets(struct parser *p, const char *s, size_t len, struct histfile_rec *r)
{
	size_t n = 0, i = 0;
	uint64_t total = 0;

	for (size_t k = 0; k < len; k++)
		n += s[k] == ':';
	if (n > HIST_N_BUCKETS)
		return bad(p,
			   "%zu buckets, more than a histogram has (%u): the line is damaged; "
			   "rerun the trial",
			   n, HIST_N_BUCKETS);
	if (alloc_buckets(r, n))
		return -ENOMEM;
	while (i < len) {
		size_t end = i, colon;
		uint64_t low, count;

		while (end < len && s[end] != ' ')
			end++;
		for (colon = i; colon < end && s[colon] != ':'; colon++)
			;
		if (colon == end || !parse_u64(s + i, colon - i, &low) ||
		    !parse_u64(s + colon + 1, end - colon - 1, &count))
			return bad(p,
				   "bucket %u, '%.*s', is not LOWER:COUNT (two whole numbers): "
				   "the line is damaged; rerun the trial",
				   r->n_buckets + 1, (int)(end - i > 40 ? 40 : end - i), s + i);
		uint32_t b = hist_bucket(low);

		if (bucket_low(b) != low)
			return bad(
				p,
				"bucket %u starts at %llu ns, not a bucket boundary of "
				"histogram.h (a file of another bucket layout?): rerun the trial",
				r->n_buckets + 1, (unsigned long long)low);
		if (r->n_buckets && b <= r->index[r->n_buckets - 1])
			return bad(p,
				   "bucket %u (%llu ns) is not above the one before it: buckets "
				   "must be listed ascending, each once",
				   r->n_buckets + 1, (unsigned long long)low);
		if (!count || total + count < total)
			return bad(p,
				   "bucket %u (%llu ns) has count %s: each listed bucket holds "
				   "at least one value",
				   r->n_buckets + 1, (unsigned long long)low,
				   count ? "overflow" : "0");
		total += count;
		r->index[r->n_buckets] = b;
		r->counts[r->n_buckets++] = count;
		if (end < len && end + 1 == len)
			return bad(p, "the buckets field ends with a space");
		i = end + 1;
	}
	if (total != r->count)
		return bad(p,
			   "the buckets hold %llu values, count says %llu: the line is damaged; "
			   "rerun the trial",
			   (unsigned long long)total, (unsigned long long)r->count);
	return 0;
}

/* What min, max and the sums must be, given the buckets. */
static int check_stats(struct parser *p, const struct histfile_rec *r)
{
	hist_u128 n = r->count, lo, hi, sq, nsq;

	if (!r->count) {
		if (r->min || r->max || r->sum || r->sumsq)
			return bad(p, "count is 0 but min, max or a sum is not: the line is "
				      "damaged; rerun the trial");
		return 0;
	}
	if (r->min > r->max)
		return bad(p, "min_ns %llu is above max_ns %llu", (unsigned long long)r->min,
			   (unsigned long long)r->max);
	if (hist_bucket(r->min) != r->index[0] || hist_bucket(r->max) != r->index[r->n_buckets - 1])
		return bad(p,
			   "min_ns %llu or max_ns %llu is not in the first or the last bucket: "
			   "the line is damaged; rerun the trial",
			   (unsigned long long)r->min, (unsigned long long)r->max);
	lo = n * r->min;
	hi = n * r->max;
	if (r->sum < lo || r->sum > hi)
		return bad(p,
			   "sum_ns %llu is outside count x min .. count x max: the line is "
			   "damaged; rerun the trial",
			   (unsigned long long)r->sum);
	/* Cauchy-Schwarz: n x sumsq >= sum^2, so the variance is never negative; and no square
	 * is above max^2. */
	sq = (hist_u128)r->sum * r->sum;
	if (!__builtin_mul_overflow(n, r->sumsq, &nsq) && nsq < sq)
		return bad(p, "sumsq_ns2 is below sum_ns^2 / count: the line is damaged; rerun "
			      "the trial");
	if (!__builtin_mul_overflow(n * r->max, (hist_u128)r->max, &hi) && r->sumsq > hi)
		return bad(p, "sumsq_ns2 is above count x max_ns^2: the line is damaged; rerun "
			      "the trial");
	return 0;
}

/* One record line, s[0..len) without its newline. */
static int parse_line(struct parser *p, const char *s, size_t len, struct histfile_rec *r)
{
	const char *f[N_FIELDS];
	size_t fl[N_FIELDS], n = 0, start = 0;
	hist_u128 trial;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ',')
			continue;
		if (n == N_FIELDS)
			return bad(p, "more than the %zu fields of " HISTFILE_COLUMNS, N_FIELDS);
		f[n] = s + start;
		fl[n++] = i - start;
		start = i + 1;
	}
	if (n < N_FIELDS)
		return bad(p,
			   "%zu fields where " HISTFILE_COLUMNS " are %zu: the line is cut "
			   "short or damaged; rerun the trial",
			   n, N_FIELDS);
	if (!parse_u128(f[0], fl[0], (hist_u128)(unsigned long)-1, &trial))
		return bad(p, "trial '%.*s' is not a trial number", (int)(fl[0] > 40 ? 40 : fl[0]),
			   f[0]);
	r->trial = (unsigned long)trial;
	if (!metric_ok(f[1], fl[1]))
		return bad(p, "metric '%.*s' is not a metric name (letters, digits, '_', up to %d)",
			   (int)(fl[1] > 40 ? 40 : fl[1]), f[1], HISTFILE_METRIC_MAX);
	memcpy(r->metric, f[1], fl[1]);
	r->metric[fl[1]] = '\0';
	uint64_t *u[] = { &r->count, &r->min, &r->max, &r->sum };
	for (size_t k = 0; k < 4; k++)
		if (!parse_u64(f[2 + k], fl[2 + k], u[k]))
			return bad(p, "%s '%.*s' is not a whole number below 2^64",
				   field_names[2 + k], (int)(fl[2 + k] > 40 ? 40 : fl[2 + k]),
				   f[2 + k]);
	if (!parse_u128(f[6], fl[6], ~(hist_u128)0, &r->sumsq))
		return bad(p, "sumsq_ns2 '%.*s' is not a whole number below 2^128",
			   (int)(fl[6] > 40 ? 40 : fl[6]), f[6]);
	int ret = parse_buckets(p, f[7], fl[7], r);

	return ret ? ret : check_stats(p, r);
}

int histfile_parse(const char *text, size_t len, const char *name, struct histfile *hf, char *err,
		   size_t err_len)
{
	struct parser p = { .name = name, .line = 1, .err = err, .err_len = err_len };
	size_t at = 0, magic_len = strlen(HISTFILE_MAGIC);
	int ret = 0;

	memset(hf, 0, sizeof(*hf));
	if (len && memchr(text, 0, len))
		return bad(&p, "a NUL byte: not a text file; not a histograms.csv");
	while (at < len && !ret) {
		const char *s = text + at, *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;

		if (!nl) {
			ret = bad(&p, "the last line has no newline: the run stopped while writing "
				      "it (`iommulab run --resume DIR` drops it and reruns its "
				      "trial)");
			break;
		}
		if (p.line == 1) {
			uint64_t v;

			if (n < magic_len || memcmp(s, HISTFILE_MAGIC, magic_len))
				ret = bad(&p,
					  "the first line is not '%s%d': not a histograms.csv "
					  "iommulab wrote",
					  HISTFILE_MAGIC, HISTFILE_VERSION);
			else if (!parse_u64(s + magic_len, n - magic_len, &v) ||
				 v != HISTFILE_VERSION)
				ret = bad(&p,
					  "'%.*s': this iommulab reads version %d of the format "
					  "only: read it with the iommulab that wrote it",
					  (int)(n > 60 ? 60 : n), s, HISTFILE_VERSION);
		} else if (p.line == 2) {
			if (n != strlen(HISTFILE_COLUMNS) || memcmp(s, HISTFILE_COLUMNS, n))
				ret = bad(&p,
					  "the columns are not '" HISTFILE_COLUMNS
					  "': not a histograms.csv v%d",
					  HISTFILE_VERSION);
		} else {
			struct histfile_rec *r = push(hf);

			if (!r) {
				snprintf(err, err_len, "out of memory");
				ret = -ENOMEM;
				break;
			}
			r->line = p.line;
			ret = parse_line(&p, s, n, r);
			if (ret == -ENOMEM)
				snprintf(err, err_len, "out of memory");
		}
		at += n + 1;
		p.line++;
	}
	if (!ret && p.line < 3)
		ret = bad(&p, "%s: not a histograms.csv iommulab wrote",
			  p.line == 1 ? "empty" : "no column line");
	if (!ret && (ret = histfile_index(hf)) != 0)
		snprintf(err, err_len, "out of memory");
	/* Each (trial, metric) once: the index puts a trial's records side by side. */
	for (size_t i = 1; !ret && i < hf->n; i++) {
		const struct histfile_rec *a = &hf->recs[hf->order[i - 1]];

		for (size_t j = i; j < hf->n && hf->recs[hf->order[j]].trial == a->trial; j++) {
			const struct histfile_rec *b = &hf->recs[hf->order[j]];

			if (strcmp(a->metric, b->metric))
				continue;
			p.line = b->line;
			ret = bad(&p,
				  "trial %lu's %s histogram is also on line %zu: a trial's "
				  "lines were written twice (two runs in one directory?)",
				  a->trial, a->metric, a->line);
		}
	}
	if (ret)
		histfile_free(hf);
	return ret;
}

int histfile_read(const char *path, struct histfile *hf, char *err, size_t err_len)
{
	size_t len = 0;
	char *text = util_read_file(path, &len);
	int ret;

	memset(hf, 0, sizeof(*hf));
	if (!text) {
		ret = errno ? -errno : -EIO;
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = histfile_parse(text, len, path, hf, err, err_len);
	free(text);
	return ret;
}
