/* SPDX-License-Identifier: MIT */
/* merge -- several runs' trials.csv as one table, written back as a results dir (merge.h). */
#include "results/merge.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/columns.h"
#include "results/results_internal.h"
#include "util/array.h"
#include "util/fs.h"

static long find_col(char *const *header, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(header[i], name))
			return (long)i;
	return -1;
}

/* Insert name at position at of the union header (room for one more is there). */
static int insert_col(struct merge_table *t, size_t *cap, size_t at, const char *name)
{
	char **nh = array_grow(t->header, cap, t->n_cols + 1, sizeof(*nh));
	char *copy = strdup(name);

	if (!nh || !copy) {
		free(copy);
		return -ENOMEM;
	}
	t->header = nh;
	memmove(&nh[at + 1], &nh[at], (t->n_cols - at) * sizeof(*nh));
	nh[at] = copy;
	t->n_cols++;
	return 0;
}

/* The union of the headers: see merge.h for the order. */
static int union_header(const struct csv_table *in, size_t n_in, struct merge_table *t)
{
	size_t cap = 0;

	for (size_t i = 0; i < n_in; i++) {
		size_t after = 0; /* where the next new column goes */

		for (size_t c = 0; c < in[i].n_cols; c++) {
			long at = find_col(t->header, t->n_cols, in[i].header[c]);

			if (at >= 0) {
				after = (size_t)at + 1;
				continue;
			}
			if (insert_col(t, &cap, after, in[i].header[c]))
				return -ENOMEM;
			after++;
		}
	}
	return 0;
}

/* A row's place in the merge: its trial number and where it came from. */
struct row_ref {
	uint64_t trial;
	size_t in, row;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct row_ref *x = a, *y = b;

	if (x->trial != y->trial)
		return x->trial < y->trial ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* Every row's trial number, checked. */
static int collect_refs(const struct csv_table *in, const char *const *names, size_t n_in,
			size_t total, struct row_ref *refs, size_t *n, char *err, size_t err_len)
{
	*n = 0;
	for (size_t i = 0; i < n_in; i++) {
		long c = csv_column(&in[i], "trial");

		if (c < 0) {
			snprintf(err, err_len, "%s has no trial column: it is not a trials.csv",
				 names[i]);
			return -EINVAL;
		}
		for (size_t r = 0; r < in[i].n_rows; r++) {
			const char *f = in[i].rows[r][c];
			uint64_t v;

			if (!csv_whole_number(f, &v)) {
				snprintf(err, err_len, "%s:%zu: trial '%s' is not a trial number",
					 names[i], in[i].lines[r], f);
				return -EINVAL;
			}
			if (total && v >= total) {
				snprintf(err, err_len,
					 "%s:%zu: trial %" PRIu64
					 ", but the scenario has %zu trials (0 .. "
					 "%zu): it is not this scenario's",
					 names[i], in[i].lines[r], v, total, total - 1);
				return -EINVAL;
			}
			refs[(*n)++] = (struct row_ref){ .trial = v, .in = i, .row = r };
		}
	}
	return 0;
}

/* Row ref as a row of the union header. */
static char **map_row(const struct merge_table *t, const struct csv_table *in, size_t row)
{
	char **f = calloc(t->n_cols + 1, sizeof(*f));

	for (size_t c = 0; f && c < t->n_cols; c++) {
		long at = csv_column(in, t->header[c]);

		f[c] = strdup(at >= 0 ? in->rows[row][at] : "");
		if (!f[c]) {
			for (size_t k = 0; k < c; k++)
				free(f[k]);
			free(f);
			return NULL;
		}
	}
	return f;
}

int merge_tables(const struct csv_table *in, const char *const *names, size_t n_in, size_t total,
		 struct merge_table *t, char *err, size_t err_len)
{
	size_t n_refs = 0, cap = 1;
	struct row_ref *refs;
	int ret;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n_in; i++)
		cap += in[i].n_rows;
	refs = calloc(cap, sizeof(*refs));
	t->rows = calloc(cap, sizeof(*t->rows));
	t->trial = calloc(cap, sizeof(*t->trial));
	t->from = calloc(cap, sizeof(*t->from));
	ret = -ENOMEM;
	snprintf(err, err_len, "out of memory");
	if (!refs || !t->rows || !t->trial || !t->from || union_header(in, n_in, t))
		goto fail;
	ret = collect_refs(in, names, n_in, total, refs, &n_refs, err, err_len);
	if (ret)
		goto fail;
	qsort(refs, n_refs, sizeof(*refs), cmp_ref);
	for (size_t i = 1; i < n_refs; i++) {
		const struct row_ref *a = &refs[i - 1], *b = &refs[i];

		if (a->trial != b->trial)
			continue;
		snprintf(err, err_len,
			 "trial %" PRIu64 " is in both %s (line %zu) and %s (line %zu): the inputs "
			 "overlap (a shard given twice, or a shard and the whole run)",
			 a->trial, names[a->in], in[a->in].lines[a->row], names[b->in],
			 in[b->in].lines[b->row]);
		ret = -EEXIST;
		goto fail;
	}
	ret = -ENOMEM;
	snprintf(err, err_len, "out of memory");
	for (size_t i = 0; i < n_refs; i++) {
		t->rows[i] = map_row(t, &in[refs[i].in], refs[i].row);
		if (!t->rows[i])
			goto fail;
		t->trial[i] = refs[i].trial;
		t->from[i] = refs[i].in;
		t->n_rows++;
	}
	free(refs);
	err[0] = '\0';
	return 0;
fail:
	free(refs);
	merge_table_free(t);
	return ret;
}

size_t merge_missing(const struct merge_table *t, size_t total, char *text, size_t len)
{
	size_t missing = 0, r = 0, off = 0;

	if (len)
		text[0] = '\0';
	for (size_t i = 0; i < total;) {
		while (r < t->n_rows && t->trial[r] < i)
			r++;
		if (r < t->n_rows && t->trial[r] == i) {
			i++;
			continue;
		}
		/* A gap: from i up to the next trial present (or the end). */
		size_t end = r < t->n_rows && t->trial[r] < total ? t->trial[r] : total;
		char one[64];

		if (end - i == 1)
			snprintf(one, sizeof(one), "%s%zu", missing ? ", " : "", i);
		else
			snprintf(one, sizeof(one), "%s%zu-%zu", missing ? ", " : "", i, end - 1);
		if (off + strlen(one) + 4 < len) {
			off += (size_t)snprintf(text + off, len - off, "%s", one);
		} else if (off + 4 < len && !strstr(text, "...")) {
			off += (size_t)snprintf(text + off, len - off, ", ...");
		}
		missing += end - i;
		i = end;
	}
	return missing;
}

void merge_table_free(struct merge_table *t)
{
	for (size_t i = 0; t->rows && i < t->n_rows; i++) {
		for (size_t c = 0; c < t->n_cols; c++)
			free(t->rows[i][c]);
		free(t->rows[i]);
	}
	for (size_t c = 0; t->header && c < t->n_cols; c++)
		free(t->header[c]);
	free(t->header);
	free(t->rows);
	free(t->trial);
	free(t->from);
	memset(t, 0, sizeof(*t));
}

/* ---- the layout of a header ------------------------------------------------------------ */

/* name against a spec's format ("%s_p50_ns"): the member (malloc'd), or NULL. */
static char *match_member(const char *fmt, const char *name)
{
	const char *pct = strstr(fmt, "%s");
	size_t pre = (size_t)(pct - fmt), suf = strlen(pct + 2), n = strlen(name);

	if (n <= pre + suf || strncmp(name, fmt, pre) || strcmp(name + n - suf, pct + 2))
		return NULL;
	return strndup(name + pre, n - pre - suf);
}

/* The layout's member list of a family. */
static char ***family_list(struct results_layout *l, enum col_family fam, size_t **n)
{
	switch (fam) {
	case FAM_AXIS:
		*n = &l->n_axes;
		return (char ***)&l->axes;
	case FAM_METRIC:
		*n = &l->n_metrics;
		return (char ***)&l->metrics;
	case FAM_PHASE:
		*n = &l->n_phases;
		return (char ***)&l->phases;
	default:
		*n = &l->n_counters;
		return (char ***)&l->counters;
	}
}

static int push_member(struct results_layout *l, enum col_family fam, char *m)
{
	size_t *n;
	char ***v = family_list(l, fam, &n);
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv) {
		free(m);
		return -ENOMEM;
	}
	nv[(*n)++] = m;
	*v = nv;
	return 0;
}

/*
 * Whether header[i..] starts a member of the family group specs [s, end): the first column
 * names the member, the others must be the group's other columns for it.
 */
static char *member_at(char *const *header, size_t n, size_t i, size_t s, size_t end)
{
	char *m = match_member(col_specs[s].name, header[i]);
	bool ok = m && i + (end - s) <= n;

	for (size_t k = s + 1; ok && k < end; k++) {
		char *want = util_asprintf(col_specs[k].name, m);

		ok = want && !strcmp(want, header[i + k - s]);
		free(want);
	}
	if (!ok) {
		free(m);
		return NULL;
	}
	return m;
}

int merge_layout_parse(char *const *header, size_t n, struct results_layout *l, char *err,
		       size_t err_len)
{
	size_t i = 0;

	memset(l, 0, sizeof(*l));
	for (size_t s = 0; s < COL_N_SPECS;) {
		enum col_family fam = col_specs[s].family;
		size_t end = s + 1;

		if (fam == FAM_ONCE) {
			if (i >= n || strcmp(header[i], col_specs[s].name)) {
				snprintf(err, err_len, "column %zu is '%s' where '%s' belongs",
					 i + 1, i < n ? header[i] : "(none)", col_specs[s].name);
				goto invalid;
			}
			i++;
			s++;
			continue;
		}
		while (end < COL_N_SPECS && col_specs[end].family == fam)
			end++;
		/* A bare "%s" family (axes, counters) ends at the next fixed column. */
		const char *stop = end < COL_N_SPECS && col_specs[end].family == FAM_ONCE
					   ? col_specs[end].name
					   : NULL;
		while (i < n && !(stop && !strcmp(header[i], stop))) {
			char *m = member_at(header, n, i, s, end);

			if (!m)
				break;
			if (push_member(l, fam, m))
				goto nomem;
			i += end - s;
		}
		s = end;
	}
	if (i != n) {
		snprintf(err, err_len, "column %zu, '%s', is not one a trials.csv has there", i + 1,
			 header[i]);
		goto invalid;
	}
	return 0;
invalid:
	merge_layout_free(l);
	return -EINVAL;
nomem:
	snprintf(err, err_len, "out of memory");
	merge_layout_free(l);
	return -ENOMEM;
}

void merge_layout_free(struct results_layout *l)
{
	for (int f = FAM_AXIS; f <= FAM_COUNTER; f++) {
		size_t *n;
		char ***v = family_list(l, (enum col_family)f, &n);

		for (size_t i = 0; *v && i < *n; i++)
			free((*v)[i]);
		free(*v);
	}
	memset(l, 0, sizeof(*l));
}

/* ---- writing ---------------------------------------------------------------------------- */

/* Append one row given as text (its fields in r's column order) to trials.csv and r. */
static int append_text_row(struct results *r, char *const *fields)
{
	char ***rows = array_grow(r->rows, &r->cap_rows, r->n_rows + 1, sizeof(*rows));
	char **f;

	if (!rows)
		return -ENOMEM;
	r->rows = rows;
	f = calloc(r->cols.n + 1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (size_t c = 0; c < r->cols.n; c++) {
		if (c)
			fputc(',', r->csv);
		csv_write_field(r->csv, fields[c], col_specs[r->cols.cols[c].id].quote);
		if (fields[c][0] && !(f[c] = strdup(fields[c]))) {
			for (size_t k = 0; k < c; k++)
				free(f[k]);
			free(f);
			return -ENOMEM;
		}
	}
	fputc('\n', r->csv);
	r->rows[r->n_rows++] = f;
	return 0;
}

/* Each row's trial's records from its input, in row order, appended to histograms.csv. */
static int write_hists(struct results *r, const struct merge_table *t, const struct histfile *hists)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int ret;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_rows; i++) {
		size_t n;
		const size_t *at = histfile_find(&hists[t->from[i]], t->trial[i], &n);

		for (size_t k = 0; k < n; k++)
			histfile_write_rec(m, &hists[t->from[i]].recs[at[k]]);
	}
	if (fclose(m)) {
		free(text);
		return -ENOMEM;
	}
	ret = results_append_hist_text(r, text, len);
	free(text);
	return ret;
}

int merge_write(const char *dir, const struct merge_table *t, const struct results_meta *meta,
		char *err, size_t err_len)
{
	return merge_write_hist(dir, t, NULL, meta, err, err_len);
}

int merge_write_hist(const char *dir, const struct merge_table *t, const struct histfile *hists,
		     const struct results_meta *meta, char *err, size_t err_len)
{
	struct results_layout l;
	struct results_meta m = *meta;
	struct results *r;
	char why[512];
	int ret = merge_layout_parse(t->header, t->n_cols, &l, why, sizeof(why));

	if (ret) {
		snprintf(err, err_len, "the merged columns are not a trials.csv layout: %s", why);
		return ret;
	}
	r = results_create_opt(dir, &l, hists != NULL, err, err_len);
	if (!r) {
		ret = errno ? -errno : -EIO;
		goto out;
	}
	if (!columns_match(&r->cols, t->header, t->n_cols)) {
		snprintf(err, err_len, "the merged columns do not come back as the same header");
		ret = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < t->n_rows && !ret; i++)
		ret = append_text_row(r, t->rows[i]);
	/* One sync for the whole file: a merge that dies is simply run again. */
	if (!ret && (fflush(r->csv) || fsync(fileno(r->csv))))
		ret = -errno;
	if (ret) {
		snprintf(err, err_len, "%s/trials.csv: %s", dir, strerror(-ret));
		goto out;
	}
	if (hists && (ret = write_hists(r, t, hists)) != 0) {
		snprintf(err, err_len, "%s/" HISTFILE_NAME ": %s", dir, strerror(-ret));
		goto out;
	}
	if (!m.x_key && l.n_axes)
		m.x_key = l.axes[0];
	ret = results_write_summary(r, &m);
	if (ret)
		snprintf(err, err_len, "%s/summary.json: %s", dir, strerror(-ret));
out:
	results_close(r);
	merge_layout_free(&l);
	return ret;
}
