/* SPDX-License-Identifier: MIT */
/*
 * native -- the native engine: one pinned pthread per CPU of the trial, a barrier start, an
 * unmeasured warm-up, then a fixed measured duration (or a fixed op count), all driven by a
 * workload's op function; a watchdog on the calling thread fails the trial when a CPU makes
 * no progress for watchdog_ns and unwinds every CPU (spin hook, then a signal).
 */
#ifndef IOMMULAB_NATIVE_H
#define IOMMULAB_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/host.h"
#include "results/trial.h"
#include "stats/histogram.h"

/*
 * One op of the workload on CPU c. Records its latencies into hists[0..n_metrics) when
 * measuring. Returns 0 (an op was done), 1 (nothing to do this time: not counted), or -errno
 * to stop this CPU (the trial fails with the message the workload keeps; every CPU stops).
 */
typedef int (*native_op_fn)(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);

struct native_job {
	struct host_env *env;
	uint32_t n_metrics;
	uint64_t warmup_ns;
	uint64_t duration_ns;	/* time-based when ops_per_cpu == 0 */
	uint64_t ops_per_cpu;	/* > 0: exactly this many ops per CPU, all measured */
	uint64_t watchdog_ns;
	native_op_fn op;
	void *arg;
	const struct lab_counter *counters; /* the plugin's, reset at the end of warm-up */
	uint32_t n_counters;
	/* Called once by the supervising thread when measurement starts (e.g. to snapshot
	 * device counters); may be NULL. */
	void (*on_measure)(void *measure_arg);
	void *measure_arg;
};

struct native_cpu_result {
	struct hist *hists;	/* n_metrics, merged by the caller */
	uint64_t ops;		/* measured ops */
	uint64_t window_ns;	/* this CPU's measured window */
};

struct native_result {
	struct native_cpu_result *cpus; /* ncpus */
	double measured_s;	/* the measured window (time-based), or the longest CPU's */
	bool hung;
	bool op_failed;
	char why[TRIAL_ERR_LEN]; /* the hang: which CPU, phase, how long */
};

/* Online CPUs this process may run on. */
uint32_t native_online_cpus(void);

/* 0 (see res->hung / op_failed), or -errno when threads could not be started. */
int native_run(const struct native_job *job, struct native_result *res,
	       const char *const *phase_names, uint32_t n_phase_names);
void native_result_free(struct native_result *res, uint32_t ncpus);

#endif /* IOMMULAB_NATIVE_H */
