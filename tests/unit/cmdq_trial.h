/* SPDX-License-Identifier: MIT */
/*
 * cmdq_trial -- the cmdq workload's whole-trial scenario that the sim and harness tests
 * (test_sim, test_harness) share: the ways loop (one TLBI + CMD_SYNC per op, 1 us of work
 * between ops) on the sim's default machine and a fast device. Header-only: each test is one
 * executable.
 */
#ifndef IOMMULAB_TEST_CMDQ_TRIAL_H
#define IOMMULAB_TEST_CMDQ_TRIAL_H

#include <string.h>

#include "engine/sim/sim.h"
#include "scenario/scenario.h"

/* 2 ms measured, no warm-up, a 256-entry queue with MSI. */
static inline void cmdq_sim_cfg(struct scenario_cfg *cfg, uint64_t cpus)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scenario.workload = WORKLOAD_CMDQ;
	cfg->scenario.engine = ENGINE_SIM;
	cfg->scenario.cpus = cpus;
	cfg->scenario.duration_ms = 2;
	cfg->scenario.warmup_ms = 0;
	cfg->scenario.watchdog_ms = 1000;
	cfg->smmu.queue_shift = 8;
	cfg->smmu.msi = true;
	cfg->smmu.device = DEVICE_THREAD; /* the sim must ignore it (test_sim checks) */
	cfg->smmu.tlbi_va_ns = 40;
	cfg->smmu.sync_ns = 500;
	cfg->smmu.prod_write_ns = 50;
	cfg->smmu.cons_read_ns = 100;
	cfg->wl_cmdq.cmds_per_sync = 1;
	cfg->wl_cmdq.think_ns = 1000;
	sim_machine_defaults(&cfg->machine);
}

#endif /* IOMMULAB_TEST_CMDQ_TRIAL_H */
