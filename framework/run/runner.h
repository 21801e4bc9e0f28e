/* SPDX-License-Identifier: MIT */
/*
 * runner -- run a whole scenario: every sweep point x plugin x repeat, up to opt->jobs trials
 * at once (each in its own child), each trial appended to the results directory, in that
 * order, as soon as every trial before it is there: the rows and numbers are the same
 * whatever the number of jobs. A trial whose engine is exclusive (native) runs alone. A stop
 * request (Ctrl-C, *stop = 1) starts nothing more and lets the trials in flight end; *stop >= 2
 * stops those too. Everything finished is kept.
 *
 * Shards: trial i of the sweep (its index in point, plugin, repeat order, the trial column of
 * trials.csv) belongs to shard i mod N. Round robin rather than contiguous blocks, because
 * the cost of a trial grows along the sweep (cpus = 1 .. 96): blocks would give the last
 * shard all the expensive trials. A shard's trials keep their index in the whole sweep, so
 * the shards' rows merge back into the unsharded run's order (iommulab merge).
 */
#ifndef IOMMULAB_RUNNER_H
#define IOMMULAB_RUNNER_H

#include <stdbool.h>
#include <stddef.h>

#include "results/results.h"
#include "results/trial.h"
#include "scenario/scenario.h"

struct run_progress {
	size_t done, total; /* trials */
	double elapsed_s, eta_s;
	const struct trial_result *last; /* the trial that just ended */
};

struct run_options {
	const char *out_dir; /* results directory to create */
	/* Called after each trial (may print). */
	void (*progress)(void *arg, const struct run_progress *p);
	void *arg;
	volatile int *stop; /* set asynchronously: 1 = start no more trials, 2 = stop now */
	bool resume;	    /* out_dir holds an interrupted run of this scenario: finish it */
	/* Trials in flight at once, each in its child (0 is 1); an exclusive engine's trial
	 * (native) still runs alone. */
	unsigned jobs;
	/* Run only the trials of shard `shard` of `n_shards` (0 or 1: all of them). */
	unsigned shard, n_shards;
};

struct run_report {
	size_t trials, failed;
	size_t resumed;	   /* trials found already done in out_dir */
	size_t torn_bytes; /* resumed: the torn last row of trials.csv dropped (0: none) */
	bool interrupted;
	char dir[4096];
};

/* The union of metric/phase/counter names over the scenario's plugins (for the CSV layout). */
int runner_layout(const struct scenario *s, struct results_layout *layout);
void runner_layout_free(struct results_layout *layout);

/* Run. 0 when the run happened (see report->failed), -errno with err when it could not. */
int runner_run(const struct scenario *s, const struct run_options *opt, struct run_report *report,
	       char *err, size_t err_len);

/* Total trials the scenario will run. */
size_t runner_n_trials(const struct scenario *s);

/* Largest N of --shard K/N (a job array is far smaller; this keeps K/N in 32 bits). */
#define RUNNER_MAX_SHARDS 1000000

/* Whether trial index i belongs to shard k of n (n 0 or 1: every trial does). */
static inline bool runner_in_shard(size_t i, unsigned k, unsigned n)
{
	return n <= 1 || i % n == k;
}

/* How many of total trials shard k of n runs. */
static inline size_t runner_shard_trials(size_t total, unsigned k, unsigned n)
{
	return n <= 1 ? total : k >= total ? 0 : (total - k + n - 1) / n;
}

/* Some point of the scenario runs on the sim engine (as its base, or swept). */
bool runner_uses_sim(const struct scenario *s);

/* The seed trial (point, repeat) runs with, from the scenario's [scenario] seed. */
uint64_t runner_trial_seed(uint64_t seed, size_t point, uint64_t repeat);

#endif /* IOMMULAB_RUNNER_H */
