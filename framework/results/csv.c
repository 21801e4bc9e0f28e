/* SPDX-License-Identifier: MIT */
/* csv -- RFC 4180 quoting for the trials.csv writer and a strict, header-driven reader. */
#include "results/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/fs.h"

void csv_write_field(FILE *f, const char *s, bool force_quote)
{
	if (!s)
		s = "";
	size_t len = strlen(s);
	bool quote =
		force_quote || strpbrk(s, ",\"\r\n") ||
		(len && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t'));

	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f); /* a quote inside a quoted field is doubled */
		fputc(*p, f);
	}
	fputc('"', f);
}

/* A growable byte buffer for one field. */
struct field_buf {
	char *s;
	size_t len, cap;
};

static int buf_put(struct field_buf *b, char c)
{
	if (b->len + 1 >= b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *s = realloc(b->s, cap);

		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
	return 0;
}

static char *buf_take(struct field_buf *b)
{
	char *s = b->s ? b->s : strdup("");

	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

static void free_fields(char **fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(fields[i]);
	free(fields);
}

static int push_field(char ***fields, size_t *n, size_t *cap, char *s)
{
	if (!s)
		return -ENOMEM;
	char **nf = array_grow(*fields, cap, *n + 1, sizeof(*nf));

	if (!nf) {
		free(s);
		return -ENOMEM;
	}
	*fields = nf;
	(*fields)[(*n)++] = s;
	return 0;
}

static int push_row(struct csv_table *t, size_t *cap, char **fields, size_t line)
{
	if (t->n_rows == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		char ***nr = realloc(t->rows, nc * sizeof(*nr));
		size_t *nl;

		if (!nr)
			return -ENOMEM;
		t->rows = nr;
		nl = realloc(t->lines, nc * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		t->lines = nl;
		*cap = nc;
	}
	t->rows[t->n_rows] = fields;
	t->lines[t->n_rows] = line;
	t->n_rows++;
	return 0;
}

#define FAIL(line, ...)                                                                            \
	do {                                                                                       \
		int n_ = snprintf(err, err_len, "%s:%zu: ", path, (size_t)(line));                 \
		if (n_ >= 0 && (size_t)n_ < err_len)                                               \
			snprintf(err + n_, err_len - (size_t)n_, __VA_ARGS__);                     \
		ret = -EINVAL;                                                                     \
		goto out;                                                                          \
	} while (0)

int csv_read(const char *path, struct csv_table *t, char *err, size_t err_len)
{
	return csv_read_flags(path, 0, t, err, err_len);
}

int csv_read_flags(const char *path, unsigned flags, struct csv_table *t, char *err, size_t err_len)
{
	char *data = NULL;
	size_t len = 0, pos = 0, line = 1, row_cap = 0;
	char **fields = NULL;
	size_t n_fields = 0, fields_cap = 0;
	struct field_buf fb = { 0 };
	int ret;

	memset(t, 0, sizeof(*t));
	data = util_read_file(path, &len);
	ret = data ? 0 : -errno;
	if (ret) {
		snprintf(err, err_len, "%s: %s", path, strerror(-ret));
		return ret;
	}

	while (pos < len) {
		size_t rec_line = line;

		/* A blank line carries no record (a trailing newline, or an editor's). */
		if (data[pos] == '\n' ||
		    (data[pos] == '\r' && pos + 1 < len && data[pos + 1] == '\n')) {
			pos += data[pos] == '\r' ? 2 : 1;
			line++;
			continue;
		}
		if ((flags & CSV_COMMENTS) && data[pos] == '#') {
			while (pos < len && data[pos] != '\n')
				pos++;
			pos += pos < len;
			line++;
			continue;
		}
		for (;;) {
			/* One field. */
			if (data[pos] == '"') {
				size_t open_line = line;

				pos++;
				for (;;) {
					if (pos >= len)
						FAIL(open_line, "unterminated quoted field %zu",
						     n_fields + 1);
					if (data[pos] == '"') {
						if (pos + 1 < len && data[pos + 1] == '"') {
							pos += 2;
							if (buf_put(&fb, '"'))
								goto nomem;
							continue;
						}
						pos++;
						break;
					}
					if (data[pos] == '\n')
						line++;
					if (buf_put(&fb, data[pos++]))
						goto nomem;
				}
				if (pos < len && data[pos] != ',' && data[pos] != '\n' &&
				    !(data[pos] == '\r' && pos + 1 < len && data[pos + 1] == '\n'))
					FAIL(line,
					     "unexpected '%c' after the closing quote of field %zu",
					     data[pos], n_fields + 1);
			} else {
				while (pos < len && data[pos] != ',' && data[pos] != '\n' &&
				       !(data[pos] == '\r' && pos + 1 < len &&
					 data[pos + 1] == '\n')) {
					if (data[pos] == '"')
						FAIL(line, "quote inside unquoted field %zu",
						     n_fields + 1);
					if (buf_put(&fb, data[pos++]))
						goto nomem;
				}
			}
			if (push_field(&fields, &n_fields, &fields_cap, buf_take(&fb)))
				goto nomem;
			if (pos < len && data[pos] == ',') {
				pos++;
				continue;
			}
			/* End of record: newline or end of file. */
			if (pos < len)
				pos += data[pos] == '\r' ? 2 : 1;
			line++;
			break;
		}

		if (!t->header) {
			for (size_t c = 0; c < n_fields; c++) {
				if (!fields[c][0])
					FAIL(rec_line, "header: column %zu has no name", c + 1);
				/* A reader finds a column by its name: a second is ambiguous. */
				for (size_t d = 0; (flags & CSV_UNIQUE_COLUMNS) && d < c; d++)
					if (!strcmp(fields[c], fields[d]))
						FAIL(rec_line,
						     "header: columns %zu and %zu are both named "
						     "'%.40s'",
						     d + 1, c + 1, fields[c]);
			}
			t->header = fields;
			t->n_cols = n_fields;
		} else {
			if (n_fields != t->n_cols)
				FAIL(rec_line, "%zu fields, but the header has %zu columns",
				     n_fields, t->n_cols);
			if (push_row(t, &row_cap, fields, rec_line))
				goto nomem;
		}
		fields = NULL;
		n_fields = fields_cap = 0;
	}
	if (!t->header && line > 1)
		FAIL(line - 1,
		     "no header line: only comments or blank lines to the end (cut short?)");
	if (!t->header)
		FAIL(1, "empty file: no header line");
	ret = 0;
	goto out;

nomem:
	snprintf(err, err_len, "%s: out of memory", path);
	ret = -ENOMEM;
out:
	free_fields(fields, n_fields);
	free(fb.s);
	free(data);
	if (ret)
		csv_free(t);
	return ret;
}

long csv_column(const struct csv_table *t, const char *name)
{
	for (size_t c = 0; c < t->n_cols; c++)
		if (!strcmp(t->header[c], name))
			return (long)c;
	return -1;
}

bool csv_whole_number(const char *s, uint64_t *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	*out = v;
	return !*end && !errno && v <= (1ull << 53);
}

void csv_free(struct csv_table *t)
{
	if (!t)
		return;
	for (size_t r = 0; r < t->n_rows; r++)
		free_fields(t->rows[r], t->n_cols);
	free(t->rows);
	free(t->lines);
	free_fields(t->header, t->n_cols);
	memset(t, 0, sizeof(*t));
}
