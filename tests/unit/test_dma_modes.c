/* SPDX-License-Identifier: MIT */
/*
 * test_dma_modes -- the dma workload's invalidation modes as whole trials on the sim: lazy
 * flushes on its timer in virtual time and when a ring fills, every flush is one CMD_SYNC,
 * every IOVA is back in the domain after the trial (the runner fails a trial that leaves
 * one), with every cmdq strategy and IOVA policy; passthrough issues nothing; strict's gather
 * and range invalidation issue the commands they say; the irq pattern's jobs move with
 * [workload.dma] migrate_ns.
 */
#include "dma_trial.h"

/* The hi1620 device defaults, one CPU per mapping, strict. */
static void dma_cfg(struct scenario_cfg *cfg, uint64_t cpus, int mode)
{
	dma_base_cfg(cfg, cpus, mode);
	cfg->wl_dma.irq_cpus = 2;
	cfg->wl_dma.depth = 8;
}

static void run(struct scenario_cfg *cfg, const char *cmdq, const char *iova,
		struct trial_result *r)
{
	dma_trial_run(cfg, cmdq, iova, r);
	cr_assert_eq(r->status, TRIAL_OK, "%s+%s: %s", cmdq, iova, r->error);
}

/* 100 us per I/O: ~250 unmaps in 25 ms, never a full ring, so only the 10 ms timer
 * flushes: armed by the first unmap (~0.1 ms), due at ~10.1 and, re-armed, ~20.2 ms. */
Test(dma_modes, lazy_flushes_on_its_timer_in_virtual_time, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	dma_cfg(&cfg, 1, DMA_MODE_LAZY);
	cfg.scenario.duration_ms = 25;
	cfg.wl_dma.trans_ns = 100000;
	cfg.wl_dma.fq_size = 256;
	cfg.wl_dma.fq_timeout_ms = 10;
	run(&cfg, "cmpxchg", "list_depot", &r);
	cr_assert_gt(counter(&r, "dma_unmaps"), 200);
	cr_assert_lt(counter(&r, "dma_unmaps"), 256);
	cr_assert_eq(counter(&r, "fq_flush_full"), 0);
	cr_assert_eq(counter(&r, "fq_flush_timeout"), 2);
	cr_assert_eq(counter(&r, "dma_syncs"), 2, "one CMD_SYNC per flush, none per unmap");
	cr_assert_eq(counter(&r, "dma_tlbis"), 2);
	cr_assert_eq(counter(&r, "dev_syncs"), 2, "the device saw other CMD_SYNCs");
}

/* Back to back: a full 256-entry ring per CPU, one flush per 256 unmaps. */
Test(dma_modes, lazy_flushes_when_a_ring_is_full, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	dma_cfg(&cfg, 2, DMA_MODE_LAZY);
	cfg.wl_dma.fq_size = 256;
	cfg.wl_dma.fq_timeout_ms = 10;
	run(&cfg, "cmpxchg", "fixed_depot", &r);
	uint64_t unmaps = counter(&r, "dma_unmaps"), full = counter(&r, "fq_flush_full");
	cr_assert_gt(unmaps, 2 * 256 * 4);
	/* Each CPU flushes on its 257th, 513th, ... queueing (warm-up ones included). */
	cr_assert_geq(full + 2, unmaps / 256, "%lu flushes for %lu unmaps", (unsigned long)full,
		      (unsigned long)unmaps);
	cr_assert_leq(full, unmaps / 256 + 2);
	cr_assert_eq(counter(&r, "fq_flush_timeout"), 0);
	cr_assert_eq(counter(&r, "dma_syncs"), full);
	cr_assert_eq(counter(&r, "fq_deferred"), unmaps);
}

/* Every strategy and policy, unchanged, under lazy: each trial gives every IOVA back. */
Test(dma_modes, lazy_runs_every_strategy_and_policy, .timeout = 120)
{
	static const char *const cmdqs[] = { "biglock", "spinlock", "cmpxchg", "mcs", "batched" };
	static const char *const iovas[] = { "fixed_depot", "scaled_depot", "depotless",
					     "list_depot" };
	struct scenario_cfg cfg;
	struct trial_result r;

	for (size_t i = 0; i < sizeof(cmdqs) / sizeof(cmdqs[0]); i++)
		for (size_t j = 0; j < sizeof(iovas) / sizeof(iovas[0]); j++) {
			dma_cfg(&cfg, 4, DMA_MODE_LAZY);
			cfg.wl_dma.pattern = DMA_PATTERN_IRQ;
			cfg.wl_dma.trans_ns = 5000;
			cfg.wl_dma.fq = (int)(j % 2); /* percpu and single */
			cfg.wl_dma.fq_size = 64;
			cfg.wl_dma.fq_timeout_ms = 1;
			run(&cfg, cmdqs[i], iovas[j], &r);
			cr_assert_gt(counter(&r, "fq_flush_full"), 0, "%s+%s", cmdqs[i], iovas[j]);
		}
}

Test(dma_modes, passthrough_issues_no_invalidation, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	for (int pattern = DMA_PATTERN_SINGLE; pattern <= DMA_PATTERN_IRQ; pattern++) {
		dma_cfg(&cfg, 4, DMA_MODE_PASSTHROUGH);
		cfg.wl_dma.pattern = pattern;
		cfg.wl_dma.batch = 8;
		cfg.wl_dma.trans_ns = 2000;
		run(&cfg, "cmpxchg", "list_depot", &r);
		cr_assert_gt(counter(&r, "dma_unmaps"), 100);
		cr_assert_eq(counter(&r, "dma_syncs"), 0);
		cr_assert_eq(counter(&r, "dma_tlbis"), 0);
		cr_assert_eq(counter(&r, "dev_syncs"), 0);
		cr_assert_eq(counter(&r, "dma_iova_ns"), 0, "pattern %d reached the policy",
			     pattern);
	}
}

/* 8 pages: gathered, 8 TLBIs and one CMD_SYNC; not, a TLBI + sync each; range, one TLBI. */
Test(dma_modes, strict_gather_and_range_invalidation, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	dma_cfg(&cfg, 2, DMA_MODE_STRICT);
	cfg.wl_dma.pages = 8;
	run(&cfg, "cmpxchg", "list_depot", &r);
	uint64_t u = counter(&r, "dma_unmaps");
	cr_assert_eq(counter(&r, "dma_syncs"), u);
	cr_assert_eq(counter(&r, "dma_tlbis"), 8 * u);

	cfg.wl_dma.gather = false;
	run(&cfg, "cmpxchg", "list_depot", &r);
	u = counter(&r, "dma_unmaps");
	cr_assert_eq(counter(&r, "dma_syncs"), 8 * u);
	cr_assert_eq(counter(&r, "dma_tlbis"), 8 * u);

	cfg.wl_dma.gather = true;
	cfg.wl_dma.range_inv = true;
	run(&cfg, "cmpxchg", "list_depot", &r);
	u = counter(&r, "dma_unmaps");
	cr_assert_eq(counter(&r, "dma_syncs"), u);
	cr_assert_eq(counter(&r, "dma_tlbis"), u);

	cfg.wl_dma.pages = 33; /* 32 + 1: two range commands */
	run(&cfg, "cmpxchg", "list_depot", &r);
	u = counter(&r, "dma_unmaps");
	cr_assert_eq(counter(&r, "dma_tlbis"), 2 * u);
}

/*
 * The irq pattern on 8 CPUs: 2 jobs, on CPUs 0 and 4, which are also the IRQ CPUs of the 2
 * queues. Pinned, the other six CPUs do nothing; moving every 10 us (seeded), the jobs visit
 * every CPU within the millisecond.
 */
Test(dma_modes, irq_jobs_move_with_migrate_ns, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result pinned, moving;

	dma_cfg(&cfg, 8, DMA_MODE_STRICT);
	cfg.wl_dma.pattern = DMA_PATTERN_IRQ;
	cfg.wl_dma.submit_cpus = 2;
	cfg.wl_dma.trans_ns = 20000;
	run(&cfg, "cmpxchg", "list_depot", &pinned);
	cr_assert_eq(pinned.ops_min_cpu, 0, "six CPUs have no job");
	cr_assert_gt(pinned.ops, 0);
	cfg.wl_dma.migrate_ns = 10000;
	run(&cfg, "cmpxchg", "list_depot", &moving);
	cr_assert_gt(moving.ops_min_cpu, 0, "every CPU ran a job for a while");
	/* [workload.iova]'s key is the iova workload's: the dma workload does not read it */
	cfg.wl_dma.migrate_ns = 0;
	cfg.wl_iova.migrate_ns = 10000;
	run(&cfg, "cmpxchg", "list_depot", &moving);
	cr_assert_eq(moving.ops_min_cpu, 0);
	cr_assert_eq(moving.ops, pinned.ops, "the same trial as pinned");
}
