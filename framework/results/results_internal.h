/* SPDX-License-Identifier: MIT */
/*
 * results_internal -- the state of an open results directory, shared by results.c (trials.csv)
 * and summary.c (summary.json); not for use outside framework/results/.
 */
#ifndef IOMMULAB_RESULTS_INTERNAL_H
#define IOMMULAB_RESULTS_INTERNAL_H

#include <stdio.h>

#include "results/columns.h"

struct results {
	char *dir;
	FILE *csv;
	struct results_columns cols;
	size_t n_axes, n_metrics;

	char ***rows; /* rows[i][c]: NULL when the field is empty */
	size_t n_rows, cap_rows;
};

#endif /* IOMMULAB_RESULTS_INTERNAL_H */
