/* SPDX-License-Identifier: MIT */
/*
 * results -- the results directory of one run: trials.csv appended and synced trial by trial,
 * atomic whole-file writes for the rest (summary.json is summary.c's).
 *
 * Each appended row is kept in memory as the text of its CSV fields, so trials.csv and
 * summary.json can never disagree, and the summary needs no second parser.
 */
#include "results/results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/columns.h"
#include "results/csv.h"
#include "results/histfile.h"
#include "results/results_internal.h"
#include "util/array.h"
#include "util/fs.h"

static int build_columns(struct results *r, const struct results_layout *l)
{
	r->n_axes = l->n_axes;
	r->n_metrics = l->n_metrics;
	return columns_build(&r->cols, l);
}

static char *path_join(const char *dir, const char *name)
{
	return util_asprintf("%s/%s", dir, name);
}

/* write() all of text, through EINTR and short writes. 0 or -errno. */
static int write_all(int fd, const char *text, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

int results_append_hist_text(struct results *r, const char *text, size_t len)
{
	int ret;

	if (r->hist_fd < 0)
		return 0;
	ret = write_all(r->hist_fd, text, len);
	if (!ret && fsync(r->hist_fd))
		ret = -errno;
	if (ret) {
		/* No torn line may stay for the next trial's lines to follow (at worst, a resume
		 * drops it). */
		int undone = ftruncate(r->hist_fd, r->hist_end);

		(void)undone;
		return ret;
	}
	r->hist_end += (off_t)len;
	return 0;
}

/* histograms.csv, new, with its header (O_EXCL like trials.csv). 0 or -errno with err set. */
static int create_hist(struct results *r, char *err, size_t err_len)
{
	char *path = path_join(r->dir, HISTFILE_NAME), *text = NULL;
	size_t len = 0;
	FILE *m;
	int ret;

	if (!path) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	r->hist_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (r->hist_fd < 0) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s%s", path, strerror(-ret),
			 ret == -EEXIST ? ": refusing to overwrite a previous run's histograms"
					: "");
		free(path);
		return ret;
	}
	r->hist_end = 0;
	m = open_memstream(&text, &len);
	if (!m) {
		free(path);
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	histfile_write_header(m);
	ret = fclose(m) ? -ENOMEM : results_append_hist_text(r, text, len);
	if (ret)
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
	free(text);
	free(path);
	return ret;
}

struct results *results_create(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len)
{
	return results_create_opt(dir, layout, true, err, err_len);
}

struct results *results_create_opt(const char *dir, const struct results_layout *layout,
				   bool histograms, char *err, size_t err_len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *path = NULL;
	int fd = -1, ret;

	if (!r) {
		ret = -ENOMEM;
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	r->hist_fd = -1;
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
				 "%s already holds a trials.csv: refusing to overwrite a previous "
				 "run",
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
	for (size_t c = 0; c < r->cols.n; c++) {
		if (c)
			fputc(',', r->csv);
		csv_write_field(r->csv, r->cols.cols[c].name, false);
	}
	fputc('\n', r->csv);
	if (fflush(r->csv) || fsync(fileno(r->csv))) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	if (histograms && (ret = create_hist(r, err, err_len)) != 0) {
		unlink(path); /* this call's own, empty trials.csv */
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
/*
 * trials.csv's rows are written whole and synced, so a file that does not end in a newline
 * was cut while one was written: keep what is before it (results_torn_bytes).
 */
static int cut_torn_row(struct results *r, const char *path, char *err, size_t err_len)
{
	size_t len = 0, keep;
	char *text = util_read_file(path, &len);

	if (!text) {
		int ret = errno ? -errno : -EIO;

		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (keep = len; keep && text[keep - 1] != '\n'; keep--)
		;
	free(text);
	if (keep == len || !keep) /* whole, or not even a header: csv_read says what is wrong */
		return 0;
	if (truncate(path, (off_t)keep)) {
		int ret = -errno;

		snprintf(err, err_len, "%s: cannot cut its torn last row: %s", path,
			 strerror(-ret));
		return ret;
	}
	r->torn_bytes = len - keep;
	return 0;
}

static int adopt_rows(struct results *r, const char *path, char *err, size_t err_len)
{
	struct csv_table t;
	char why[512];
	int ret = cut_torn_row(r, path, err, err_len);

	if (ret)
		return ret;
	ret = csv_read(path, &t, why, sizeof(why));

	if (ret) {
		snprintf(err, err_len, "%s", why);
		return ret;
	}
	if (!columns_match(&r->cols, t.header, t.n_cols)) {
		snprintf(err, err_len,
			 "%s: its columns are not this scenario's (the scenario or the plugins "
			 "changed since the run started): start a new run instead",
			 path);
		csv_free(&t);
		return -EINVAL;
	}
	for (size_t i = 0; i < t.n_rows; i++) {
		char **f = calloc(r->cols.n + 1, sizeof(*f));
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
		for (size_t c = 0; c < r->cols.n; c++)
			f[c] = t.rows[i][c][0] ? strdup(t.rows[i][c]) : NULL;
		r->rows[r->n_rows++] = f;
	}
	csv_free(&t);
	return 0;
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x > y) - (x < y);
}

/* r's rows' trial numbers, sorted (n_rows of them; a row without one counts as none). */
static unsigned long *row_trials(const struct results *r)
{
	unsigned long *v = malloc((r->n_rows + 1) * sizeof(*v));

	for (size_t i = 0; v && i < r->n_rows; i++) {
		const char *f = results_field(r, i, "trial");
		char *end;

		v[i] = f && *f ? strtoul(f, &end, 10) : ULONG_MAX;
	}
	if (v)
		qsort(v, r->n_rows, sizeof(*v), cmp_ulong);
	return v;
}

/*
 * Reopen histograms.csv to append, keeping the records of the trials trials.csv holds: a line
 * cut short by a crash, and the lines of a trial whose trials.csv row never made it (written
 * first, histfile.h), are dropped (the file rewritten atomically), since that trial runs again.
 * A run from before histograms.csv existed gets none (its first trials would lack theirs).
 */
static int resume_hist(struct results *r, char *err, size_t err_len)
{
	char *path = path_join(r->dir, HISTFILE_NAME), *text, *out = NULL;
	struct histfile hf;
	size_t len = 0, out_len = 0, keep = 0;
	bool torn;
	FILE *m;
	int ret;

	if (!path) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	text = util_read_file(path, &len);
	if (!text) {
		ret = errno == ENOENT ? 0 : errno ? -errno : -EIO;
		if (ret)
			snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		else if (!r->n_rows)
			ret = create_hist(r, err, err_len);
		free(path);
		return ret;
	}
	torn = len && text[len - 1] != '\n';
	while (len && text[len - 1] != '\n')
		len--;
	ret = histfile_parse(text, len, path, &hf, err, err_len);
	free(text);
	if (ret) {
		if (ret == -EINVAL) {
			size_t at = strlen(err);

			snprintf(err + at, err_len - at,
				 " (to resume without it, move %s out of the directory)", path);
		}
		free(path);
		return ret;
	}
	unsigned long *trials = row_trials(r);

	m = trials ? open_memstream(&out, &out_len) : NULL;
	ret = m ? 0 : -ENOMEM;
	if (m) {
		histfile_write_header(m);
		for (size_t i = 0; i < hf.n; i++) {
			if (!bsearch(&hf.recs[i].trial, trials, r->n_rows, sizeof(*trials),
				     cmp_ulong))
				continue;
			histfile_write_rec(m, &hf.recs[i]);
			keep++;
		}
		if (fclose(m))
			ret = -ENOMEM;
	}
	if (!ret && (torn || keep != hf.n))
		ret = results_write_file(r->dir, HISTFILE_NAME, out);
	if (!ret) {
		r->hist_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		r->hist_end = r->hist_fd < 0 ? -1 : lseek(r->hist_fd, 0, SEEK_END);
		if (r->hist_end < 0)
			ret = -errno;
	}
	if (ret)
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
	free(trials);
	histfile_free(&hf);
	free(out);
	free(path);
	return ret;
}

struct results *results_resume(const char *dir, const struct results_layout *layout, char *err,
			       size_t err_len)
{
	struct results *r = calloc(1, sizeof(*r));
	char *path = NULL;
	int ret = -ENOMEM;

	snprintf(err, err_len, "out of memory");
	if (r)
		r->hist_fd = -1;
	if (!r || !(r->dir = strdup(dir)) || build_columns(r, layout) ||
	    !(path = path_join(dir, "trials.csv")))
		goto fail;
	ret = adopt_rows(r, path, err, err_len);
	if (ret)
		goto fail;
	ret = resume_hist(r, err, err_len);
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

size_t results_torn_bytes(const struct results *r)
{
	return r->torn_bytes;
}

size_t results_n_rows(const struct results *r)
{
	return r->n_rows;
}

const char *results_field(const struct results *r, size_t row, const char *column)
{
	if (row >= r->n_rows)
		return NULL;
	for (size_t c = 0; c < r->cols.n; c++)
		if (!strcmp(r->cols.cols[c].name, column))
			return r->rows[row][c] ? r->rows[row][c] : "";
	return NULL;
}

static void free_row(char **f, size_t n)
{
	if (!f)
		return;
	for (size_t i = 0; i < n; i++)
		free(f[i]);
	free(f);
}

/*
 * t's histograms as histograms.csv lines, written before its trials.csv row (histfile.h); all
 * of them or none.
 */
static int append_hist(struct results *r, const struct trial_result *t)
{
	struct histfile hf = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int ret = 0;

	if (r->hist_fd < 0)
		return 0;
	for (uint32_t i = 0; i < t->n_metrics && !ret; i++)
		ret = histfile_add_hist(&hf, t->index, t->metrics[i].name, &t->metrics[i].hist);
	m = ret ? NULL : open_memstream(&text, &len);
	if (!ret && !m)
		ret = -ENOMEM;
	if (m) {
		for (size_t i = 0; i < hf.n; i++)
			histfile_write_rec(m, &hf.recs[i]);
		if (fclose(m))
			ret = -ENOMEM;
	}
	if (!ret)
		ret = results_append_hist_text(r, text, len);
	free(text);
	histfile_free(&hf);
	return ret;
}

int results_append(struct results *r, const struct trial_result *t)
{
	char **f;

	if (!r || !t || !r->csv)
		return -EINVAL;
	char ***rows = array_grow(r->rows, &r->cap_rows, r->n_rows + 1, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	r->rows = rows;
	f = columns_format_row(&r->cols, t);
	if (!f)
		return -ENOMEM;

	/* Build the whole row first so it reaches the file in one write. */
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);

	if (!m) {
		free_row(f, r->cols.n);
		return -ENOMEM;
	}
	for (size_t c = 0; c < r->cols.n; c++) {
		if (c)
			fputc(',', m);
		csv_write_field(m, f[c], col_specs[r->cols.cols[c].id].quote);
	}
	fputc('\n', m);
	if (fclose(m)) {
		free(line);
		free_row(f, r->cols.n);
		return -ENOMEM;
	}

	off_t hist_before = r->hist_end;
	int ret = 0;

	/*
	 * The histograms first, so that a trial in trials.csv has them. Should they fail (a
	 * full disk), the row is written all the same: the trial is measured, and compare says
	 * which trials lack a histogram.
	 */
	(void)append_hist(r, t);
	/* fsync, not just fflush: a crash or power cut must not lose a finished trial. */
	if (fwrite(line, 1, len, r->csv) != len || fflush(r->csv) || fsync(fileno(r->csv))) {
		ret = errno ? -errno : -EIO;
		/* The trial is not in trials.csv: neither are its histograms. */
		if (r->hist_fd >= 0 && !ftruncate(r->hist_fd, hist_before))
			r->hist_end = hist_before;
	}
	free(line);
	if (ret) {
		free_row(f, r->cols.n);
		return ret;
	}
	r->rows[r->n_rows++] = f;
	return 0;
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
	if (r->hist_fd >= 0)
		close(r->hist_fd);
	for (size_t i = 0; i < r->n_rows; i++)
		free_row(r->rows[i], r->cols.n);
	free(r->rows);
	columns_free(&r->cols);
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
