/* SPDX-License-Identifier: MIT */
/*
 * isolate -- run one trial in a child process, so that a plugin that crashes (SIGSEGV,
 * abort, a failed assertion) or hangs beyond every watchdog fails that trial only: the sweep
 * goes on and what was measured before is kept.
 *
 * The child runs trial_run() and hands its result back through a shared mapping; every
 * string the result points to is copied into that mapping first (the child may have loaded
 * libraries the parent has not, e.g. a plugin's sim build).
 */
#ifndef IOMMULAB_ISOLATE_H
#define IOMMULAB_ISOLATE_H

#include <stdint.h>

#include "results/trial.h"
#include "run/trial_run.h"

/*
 * When the child is killed: after limit_ms of wall time (0: never), or when the engine's
 * published progress (engine_job.progress) has not moved for stall_ms (0: not watched).
 */
struct isolate_limits {
	uint64_t limit_ms;
	uint64_t stall_ms;
};

/*
 * Run req in a child, killed by lim; the error says which limit fired. The result's strings stay
 * valid until the next call. res must come in with its identity filled (index, point, repeat,
 * plugin, swept values): those are kept. Returns 0 when a result (ok or failed) was produced,
 * -errno when no child could be started.
 */
int isolate_trial(const struct trial_request *req, struct trial_result *res,
		  const struct isolate_limits *lim);

/* The child of the trial in progress, or 0 (for a signal handler that must stop it). */
int isolate_child_pid(void);

#endif /* IOMMULAB_ISOLATE_H */
