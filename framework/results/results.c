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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/columns.h"
#include "results/csv.h"
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

	int ret = 0;

	/* fsync, not just fflush: a crash or power cut must not lose a finished trial. */
	if (fwrite(line, 1, len, r->csv) != len || fflush(r->csv) || fsync(fileno(r->csv)))
		ret = errno ? -errno : -EIO;
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
