/* SPDX-License-Identifier: MIT */
/*
 * isolate -- run one trial in a child process, so that a plugin that crashes (SIGSEGV,
 * abort, a failed assertion) or hangs beyond every watchdog fails that trial only: the sweep
 * goes on and what was measured before is kept. Several children may run at once (run -j):
 * each has its own job.
 *
 * The child runs trial_run() and hands its result back through a shared mapping; every
 * string the result points to is copied into that mapping first (the child may have loaded
 * libraries the parent has not, e.g. a plugin's sim build), and from there into the job when
 * the child ends.
 */
#ifndef IOMMULAB_ISOLATE_H
#define IOMMULAB_ISOLATE_H

#include <stdint.h>

#include "results/trial.h"
#include "run/trial_run.h"

/* Children in flight at once, at most (the -j limit). */
#define ISOLATE_MAX_JOBS 1024

/*
 * When the child is killed: after limit_ms of wall time (0: never), or when the engine's
 * published progress (engine_job.progress) has not moved for stall_ms (0: not watched).
 */
struct isolate_limits {
	uint64_t limit_ms;
	uint64_t stall_ms;
};

/* One trial in its child. */
struct isolate_job;

/*
 * Start req in a child, to be killed by lim. res comes in with its identity filled (index,
 * point, repeat, plugin, swept values): the result keeps those. 0 with *job set, -EAGAIN when
 * ISOLATE_MAX_JOBS are in flight, or -errno when no child could be started.
 */
int isolate_start(const struct trial_request *req, const struct trial_result *res,
		  const struct isolate_limits *lim, struct isolate_job **job);

/*
 * Check on the child without blocking, killing it when a limit fired. 0: it still runs. 1: it
 * ended and *res is its result (ok, or failed with the reason: crashed, killed by a limit,
 * stopped), whose strings stay valid until isolate_job_free(job).
 */
int isolate_poll(struct isolate_job *job, struct trial_result **res);

/* Kill the child if it still runs, reap it, free the job. NULL is fine. */
void isolate_job_free(struct isolate_job *job);

/* SIGKILL every child in flight (async-signal-safe: for a handler that must stop them). */
void isolate_kill_all(void);

/*
 * Run req in a child and wait for it (isolate_start + isolate_poll). The result's strings stay
 * valid until the next call. Returns 0 when a result (ok or failed) was produced, -errno when
 * no child could be started.
 */
int isolate_trial(const struct trial_request *req, struct trial_result *res,
		  const struct isolate_limits *lim);

#endif /* IOMMULAB_ISOLATE_H */
