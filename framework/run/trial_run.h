/* SPDX-License-Identifier: MIT */
/*
 * trial_run -- execute one trial natively: set up the host, the device and the plugin(s),
 * start one pinned thread per CPU behind a barrier, warm up, measure for a fixed time (or a
 * fixed number of ops), watch for hangs, tear down, and merge the per-CPU samples.
 *
 * The oracle (conformance / `iommulab verify`): with req->oracle set, every command carries a
 * tag (issuing CPU, op sequence, position), the device keeps the consumption trace, and after
 * the trial the checks below are evaluated:
 *   protocol      the device saw no protocol violation (its message is the counterexample)
 *   exactly_once  every issued command was consumed exactly once
 *   in_order      each op's commands consumed contiguously, in order; each CPU's ops in order
 *   sync_complete every sync issue returned only after all of its commands were consumed
 *   no_deadlock   every CPU finished within watchdog_ms of its last progress
 */
#ifndef IOMMULAB_TRIAL_RUN_H
#define IOMMULAB_TRIAL_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "results/trial.h"
#include "scenario/scenario.h"

struct trial_request {
	const struct scenario_cfg *cfg;	 /* the resolved sweep point */
	const struct lab_plugin *cmdq;	 /* cmdq and dma workloads */
	const void *cmdq_config;
	const struct lab_plugin *iova;	 /* iova and dma workloads */
	const void *iova_config;
	uint64_t ops_per_cpu;	/* 0: time-based (warm-up + duration); N: exactly N ops per CPU */
	bool oracle;		/* record the trace and run the checks (cmdq) */
};

#define ORACLE_MAX_CHECKS 8
#define ORACLE_DETAIL_LEN 512

struct oracle_check {
	const char *name;
	bool pass;
	char detail[ORACLE_DETAIL_LEN]; /* the first counterexample when !pass */
};

struct oracle_report {
	struct oracle_check checks[ORACLE_MAX_CHECKS];
	uint32_t n_checks;
};

/*
 * Run it. Returns 0 when the trial ran (res->status says whether the plugin passed: a protocol
 * violation or a hang is TRIAL_FAILED with res->error), -errno when it could not be set up
 * (res->error says why). oracle may be NULL unless req->oracle.
 */
int trial_run(const struct trial_request *req, struct trial_result *res,
	      struct oracle_report *oracle);

#endif /* IOMMULAB_TRIAL_RUN_H */
