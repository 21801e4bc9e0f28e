/* SPDX-License-Identifier: MIT */
/*
 * histfile -- histograms.csv, the per-trial latency histograms of a run, beside trials.csv, so
 * that `compare` and `merge` work on distributions and not only on the percentiles trials.csv
 * keeps. Text, one line per (trial, metric), appended and synced as each trial ends:
 *
 *   # iommulab histograms v1
 *   trial,metric,count,min_ns,max_ns,sum_ns,sumsq_ns2,buckets
 *   0,op,52110,310,88211,23011822,12380129911,310:4 311:9 ... 86016:1
 *
 * trial is trials.csv's trial number (the index in the whole sweep, as a shard numbers it too);
 * metric the latency (op for cmdq and micro, alloc and free for iova, map and unmap for dma);
 * count, min, max, sum and the sum of squares of the values (ns, ns^2) are those of the
 * histogram (stats/histogram.h), so its mean and standard deviation come back exactly; buckets
 * is the non-empty buckets, ascending, as "LOWER:COUNT" separated by one space, LOWER the
 * bucket's lowest value in ns (histogram.h's log-linear buckets: exact below 128 ns, 64 per
 * power of two above). A histogram with no value has count 0, zeros and no bucket. Together
 * they rebuild the histogram bucket for bucket, so every percentile is the trial's own.
 *
 * The first line names the format and its version: a reader refuses any other. A trial's lines
 * are written before its trials.csv row (results.c), so a trial in trials.csv has its
 * histograms (unless writing them failed, a full disk: the row is kept all the same); lines of
 * a trial trials.csv lacks (a crash between the two writes) mean nothing and are dropped by a
 * resume. Library code: never prints; errors as -errno with the reason in err.
 */
#ifndef IOMMULAB_HISTFILE_H
#define IOMMULAB_HISTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stats/histogram.h"

#define HISTFILE_NAME	 "histograms.csv"
#define HISTFILE_VERSION 1
#define HISTFILE_MAGIC	 "# iommulab histograms v"
#define HISTFILE_COLUMNS "trial,metric,count,min_ns,max_ns,sum_ns,sumsq_ns2,buckets"
/* Metric names are workload.h's short identifiers. */
#define HISTFILE_METRIC_MAX 63

/* One line: one trial's histogram of one metric, its non-empty buckets only. */
struct histfile_rec {
	unsigned long trial;
	char metric[HISTFILE_METRIC_MAX + 1];
	uint64_t count, min, max, sum;
	hist_u128 sumsq;
	uint32_t n_buckets;
	uint32_t *index;  /* histogram.h bucket indices, ascending */
	uint64_t *counts; /* each > 0, summing to count */
	size_t line;	  /* in the file it was read from; 0 when built from a histogram */
};

struct histfile {
	struct histfile_rec *recs; /* in file order */
	size_t n, cap;
	size_t *order; /* recs by (trial, file order): histfile_find's index */
};

/*
 * Parse the text of a histograms.csv (len bytes, not NUL-terminated necessarily; name is
 * what messages call it, e.g. its path). 0, -ENOMEM, or -EINVAL with "NAME:LINE: what is
 * wrong: what to do" in err. hf is empty on failure.
 */
int histfile_parse(const char *text, size_t len, const char *name, struct histfile *hf, char *err,
		   size_t err_len);

/* Read and parse a file: -ENOENT (said in err) when there is none, else as histfile_parse. */
int histfile_read(const char *path, struct histfile *hf, char *err, size_t err_len);

void histfile_free(struct histfile *hf);

/* Append a record built from h (its non-empty buckets). 0 or -ENOMEM (-EINVAL: bad metric). */
int histfile_add_hist(struct histfile *hf, unsigned long trial, const char *metric,
		      const struct hist *h);

/* Append a copy of r. 0 or -ENOMEM. */
int histfile_add_rec(struct histfile *hf, const struct histfile_rec *r);

/* h += r, as hist_merge would add r's histogram (h set up by hist_reset). */
void histfile_rec_merge(struct hist *h, const struct histfile_rec *r);

/* The first line and the column line. */
void histfile_write_header(FILE *f);

/* One record as its line, newline included. */
void histfile_write_rec(FILE *f, const struct histfile_rec *r);

/*
 * The records of trial (after histfile_parse, or histfile_index once records were added):
 * *n of them, in file order, through the returned index array into hf->recs; NULL when none.
 */
const size_t *histfile_find(const struct histfile *hf, unsigned long trial, size_t *n);

/* Build the index histfile_find uses. 0 or -ENOMEM. */
int histfile_index(struct histfile *hf);

#endif /* IOMMULAB_HISTFILE_H */
