/* SPDX-License-Identifier: MIT */
/*
 * csv -- RFC 4180 CSV as trials.csv uses it: quoting for the writer, and a small reader that
 * is driven by the header's column names (so it reads any run's columns) and reports a
 * malformed file as "PATH:LINE: what is wrong" instead of guessing.
 */
#ifndef IOMMULAB_CSV_H
#define IOMMULAB_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write one field, quoted when it holds a comma, quote, CR/LF or edge blanks (or if forced). */
void csv_write_field(FILE *f, const char *s, bool force_quote);

struct csv_table {
	char **header; /* column names */
	size_t n_cols;
	char ***rows;  /* rows[i][c]: never NULL, "" for an empty field */
	size_t *lines; /* the line each row starts on, for messages */
	size_t n_rows;
};

/* Read a whole file. Blank lines are skipped; every row must have the header's field count.
 * 0, or -errno (-EINVAL for a malformed file) with "PATH:LINE: ..." in err. */
int csv_read(const char *path, struct csv_table *t, char *err, size_t err_len);

enum csv_flags {
	/* A line that starts with '#' is a comment, skipped like a blank line (data files
	 * copied from elsewhere, e.g. configs/calibration/, say where they come from). */
	CSV_COMMENTS = 1 << 0,
	/* A column name that comes twice is an error (a reader finding columns by name could
	 * take either). */
	CSV_UNIQUE_COLUMNS = 1 << 1,
};

/* csv_read() with flags (enum csv_flags). */
int csv_read_flags(const char *path, unsigned flags, struct csv_table *t, char *err,
		   size_t err_len);

/* The index of the column named name, or -1. */
long csv_column(const struct csv_table *t, const char *name);

/* Whether field s is a whole number 0 .. 2^53 in decimal digits (trial, point and repeat
 * numbers; no sign, blank or exponent); its value in *out. */
bool csv_whole_number(const char *s, uint64_t *out);

void csv_free(struct csv_table *t);

#endif /* IOMMULAB_CSV_H */
