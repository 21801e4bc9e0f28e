/* SPDX-License-Identifier: MIT */
/*
 * results_internal -- the state of an open results directory, shared by results.c (trials.csv)
 * and summary.c (summary.json); not for use outside framework/results/.
 */
#ifndef IOMMULAB_RESULTS_INTERNAL_H
#define IOMMULAB_RESULTS_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "results/columns.h"

struct results {
	char *dir;
	FILE *csv;
	struct results_columns cols;
	size_t n_axes, n_metrics;

	char ***rows; /* rows[i][c]: NULL when the field is empty */
	size_t n_rows, cap_rows;

	int hist_fd;	/* histograms.csv (histfile.h), appended; -1 when the run has none */
	off_t hist_end; /* its length after the last whole trial */

	size_t torn_bytes; /* resumed: the torn last row dropped from trials.csv (0: none) */
};

/* results_create, with (or, for a merge of runs that lack them, without) histograms.csv. */
struct results *results_create_opt(const char *dir, const struct results_layout *layout,
				   bool histograms, char *err, size_t err_len);

/* Append text (whole lines) to histograms.csv and sync it; undone on failure. 0 or -errno. */
int results_append_hist_text(struct results *r, const char *text, size_t len);

#endif /* IOMMULAB_RESULTS_INTERNAL_H */
