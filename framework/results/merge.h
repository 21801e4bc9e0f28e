/* SPDX-License-Identifier: MIT */
/*
 * merge -- the trials.csv of several results dirs (the shards of one sweep) as one table, and
 * that table written back as a results dir, for `iommulab merge`.
 *
 * The columns are the union of the inputs' (the first input's order, a column only a later
 * input has inserted after the column it follows there, so each family of columns stays
 * together as results.h lays them out); a row leaves the columns its input lacks empty. The
 * rows are ordered by their trial column: a shard's rows carry their index in the whole sweep
 * (runner.h), so the merged rows come out as the unsharded run wrote them; so do their
 * histograms (histograms.csv, keyed by the same trial numbers: nothing to renumber). Library code:
 * never prints; errors as -errno with the reason in err.
 */
#ifndef IOMMULAB_MERGE_H
#define IOMMULAB_MERGE_H

#include <stddef.h>

#include "results/csv.h"
#include "results/histfile.h"
#include "results/results.h"

struct merge_table {
	char **header; /* the union of the inputs' columns */
	size_t n_cols;
	char ***rows;	      /* rows[i][c], "" when empty; ordered by trial */
	unsigned long *trial; /* rows' trial numbers */
	size_t *from;	      /* rows' input (index into the inputs) */
	size_t n_rows;
};

/*
 * Merge n_in tables read from trials.csv files (names[i]: what to call input i in messages,
 * e.g. its path). Every row must have a trial number below total (when total is not 0), and no
 * trial may be in two inputs (-EEXIST, naming the trial and both inputs). 0 or -errno.
 */
int merge_tables(const struct csv_table *in, const char *const *names, size_t n_in, size_t total,
		 struct merge_table *out, char *err, size_t err_len);

/*
 * The trial numbers below total that t lacks, as text ("3, 7-9, 12", cut short with "..." when
 * it does not fit in len). Returns how many are missing.
 */
size_t merge_missing(const struct merge_table *t, size_t total, char *text, size_t len);

void merge_table_free(struct merge_table *t);

/*
 * The layout of a trials.csv header (its sweep axes, metrics, phases and counters, told apart
 * by the column table), such that the header is exactly that layout's. The names are
 * malloc'd: free with merge_layout_free. 0, or -EINVAL with the first column that does not
 * fit in err, or -ENOMEM.
 */
int merge_layout_parse(char *const *header, size_t n, struct results_layout *l, char *err,
		       size_t err_len);
void merge_layout_free(struct results_layout *l);

/*
 * Write t to dir as a run writes it: trials.csv (refused with -EEXIST when dir holds one
 * already), then summary.json with meta (x_key, when NULL, the first axis). 0 or -errno with
 * err set.
 */
int merge_write(const char *dir, const struct merge_table *t, const struct results_meta *meta,
		char *err, size_t err_len);

/*
 * merge_write, and histograms.csv (histfile.h) beside trials.csv from the inputs' own: hists[i]
 * is input i's (as t->from numbers the inputs), and each row brings its trial's records from
 * its input, so the file comes out as the unsharded run wrote it. hists NULL: no
 * histograms.csv (some input has none). 0 or -errno with err set.
 */
int merge_write_hist(const char *dir, const struct merge_table *t, const struct histfile *hists,
		     const struct results_meta *meta, char *err, size_t err_len);

#endif /* IOMMULAB_MERGE_H */
