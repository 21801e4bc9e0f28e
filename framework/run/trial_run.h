/* SPDX-License-Identifier: MIT */
/*
 * trial_run -- execute one trial natively: set up the host, the device and the plugin(s),
 * start one pinned thread per CPU behind a barrier, warm up, measure for a fixed time (or a
 * fixed number of ops), watch for hangs, tear down, and merge the per-CPU samples.
 *
 * The oracle (conformance / `iommulab verify`): with req->oracle set, every command carries a
 * tag and the device keeps the consumption trace; after the trial, framework/verify/cmdq_check
 * fills the oracle_report with its checks' verdicts.
 */
#ifndef IOMMULAB_TRIAL_RUN_H
#define IOMMULAB_TRIAL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "engine/engine.h"
#include "results/trial.h"
#include "scenario/scenario.h"
#include "verify/cmdq_check.h" /* struct oracle_report */

struct trial_request {
	const struct scenario_cfg *cfg; /* the resolved sweep point */
	const struct lab_plugin *cmdq;	/* cmdq and dma workloads */
	const void *cmdq_config;
	const struct lab_plugin *iova; /* iova and dma workloads */
	const void *iova_config;
	uint64_t ops_per_cpu; /* 0: time-based (warm-up + duration); N: exactly N ops per CPU */
	bool oracle;	      /* record the trace and run the checks (cmdq) */
	struct engine_progress *progress; /* where the engine publishes progress; may be NULL */
};

/*
 * Run it. Returns 0 when the trial ran (res->status says whether the plugin passed: a protocol
 * violation or a hang is TRIAL_FAILED with res->error), -errno when it could not be set up
 * (res->error says why). oracle may be NULL unless req->oracle.
 */
int trial_run(const struct trial_request *req, struct trial_result *res,
	      struct oracle_report *oracle);

#endif /* IOMMULAB_TRIAL_RUN_H */
