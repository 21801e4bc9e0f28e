/* SPDX-License-Identifier: MIT */
/*
 * dma_trial -- what the dma workload's whole-trial tests (test_dma_modes, test_identity)
 * share: loading a built plugin with its defaults, the sim dma scenario with the hi1620
 * device, running one trial and reading a counter. Header-only: each test is one executable.
 */
#ifndef IOMMULAB_TEST_DMA_TRIAL_H
#define IOMMULAB_TEST_DMA_TRIAL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "built_plugins.h"
#include "engine/sim/sim.h"
#include "loader/loader.h"
#include "params/params.h"
#include "run/trial_run.h"
#include "workload/dma_wl.h"

/* The dma workload on the sim's default machine and the hi1620 device, one page per map. */
static inline void dma_base_cfg(struct scenario_cfg *cfg, uint64_t cpus, int mode)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scenario.workload = WORKLOAD_DMA;
	cfg->scenario.engine = ENGINE_SIM;
	cfg->scenario.cpus = cpus;
	cfg->scenario.duration_ms = 1;
	cfg->scenario.watchdog_ms = 1000;
	cfg->smmu.queue_shift = 8;
	cfg->smmu.msi = true;
	cfg->smmu.tlbi_va_ns = 460;
	cfg->smmu.tlbi_asid_ns = 920;
	cfg->smmu.sync_ns = 400;
	cfg->smmu.fetch_ns = 20;
	cfg->smmu.inv_slots = 8;
	cfg->smmu.prod_write_ns = 400;
	cfg->smmu.cons_read_ns = 150;
	cfg->wl_iova.depth = 32;
	cfg->wl_iova.min_pages = cfg->wl_iova.max_pages = 1;
	cfg->wl_iova.dma_bits = 32;
	cfg->wl_dma.pages = 1;
	cfg->wl_dma.dma_bits = 32;
	cfg->wl_dma.pt_map_ns = cfg->wl_dma.pt_unmap_ns = 100;
	cfg->wl_dma.gather = true;
	cfg->wl_dma.mode = mode;
	cfg->wl_dma.direct_ns = 20;
	sim_machine_defaults(&cfg->machine);
}

static inline uint64_t counter(const struct trial_result *r, const char *name)
{
	for (uint32_t k = 0; k < r->n_counters; k++)
		if (!strcmp(r->counters[k].name, name))
			return r->counters[k].total;
	cr_assert_fail("no counter %s", name);
	return 0;
}

/*
 * One trial of cfg with the two plugins at their defaults. It must have measured (natively a
 * loaded host may take the cores away, noisy: the counts are still exact).
 */
static inline void dma_trial_run(struct scenario_cfg *cfg, const char *cmdq, const char *iova,
				 struct trial_result *r)
{
	static char ccfg[4096], icfg[4096];
	const struct lab_plugin *cq = load_kind("cmdq", cmdq);
	const struct lab_plugin *io = load_kind("iova", iova);

	plugin_defaults(cq, ccfg, sizeof(ccfg));
	plugin_defaults(io, icfg, sizeof(icfg));
	struct trial_request req = {
		.cfg = cfg, .cmdq = cq, .cmdq_config = ccfg, .iova = io, .iova_config = icfg
	};
	memset(r, 0, sizeof(*r));
	cr_assert_eq(trial_run(&req, r, NULL), 0, "%s+%s: %s", cmdq, iova, r->error);
	cr_assert(trial_status_measured(r->status), "%s+%s: %s", cmdq, iova, r->error);
}

#endif /* IOMMULAB_TEST_DMA_TRIAL_H */
