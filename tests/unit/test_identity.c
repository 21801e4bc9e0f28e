/* SPDX-License-Identifier: MIT */
/*
 * test_identity -- the dma workload's identity-map lookup (identity = list | cached, the 2011
 * intel-iommu iommu=pt path) as whole trials: the list walk reads nodes up to the device's
 * position (all of them for a device outside the identity domain), takes the global lock once
 * per page of every map and unmap, and its time is counted apart from dma-direct's; the cached
 * answer takes no lock and reads no node; the lookup runs natively too; and the sim run of
 * configs/identity-map-2011.ini is deterministic.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim/sim.h"
#include "loader/loader.h"
#include "params/params.h"
#include "run/trial_run.h"
#include "dma_trial.h"
#include "scenario/scenario.h"
#include "workload/dma_wl.h"
#include "workload/identity_map.h"

/* One page per mapping, passthrough unless mode says otherwise, the sim's default machine. */
static void id_cfg(struct scenario_cfg *cfg, uint64_t cpus, int mode, int identity,
		   uint64_t devices, double position)
{
	dma_base_cfg(cfg, cpus, mode);
	cfg->wl_dma.trans_ns = 1000;
	cfg->wl_dma.identity = identity;
	cfg->wl_dma.devices = devices;
	cfg->wl_dma.position = position;
}

static void run(struct scenario_cfg *cfg, struct trial_result *r)
{
	dma_trial_run(cfg, "cmpxchg", "list_depot", r);
}

/* A lookup per page of every map and of every unmap (intel_map_page, intel_unmap_page). */
static void assert_lookups(const struct trial_result *r, uint64_t pages)
{
	uint64_t maps = r->metrics[0].lat.count, unmaps = counter(r, "dma_unmaps");

	cr_assert_gt(unmaps, 10);
	cr_assert_eq(counter(r, "dma_id_lookups"), pages * (maps + unmaps), "%lu lookups",
		     (unsigned long)counter(r, "dma_id_lookups"));
}

/* 100 devices, the NIC a quarter of the way down: 25 nodes per lookup, one lock each. */
Test(identity, the_list_walk_reads_nodes_up_to_the_device, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 1, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 100, 0.25);
	run(&cfg, &r);
	assert_lookups(&r, 1);
	uint64_t lookups = counter(&r, "dma_id_lookups");
	cr_assert_eq(counter(&r, "dma_id_nodes"), 25 * lookups);
	cr_assert_eq(counter(&r, "dma_id_locks"), lookups);

	/* The last of 7 (position 1), and 0.3 of 7 rounds up to the third node. */
	id_cfg(&cfg, 1, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 7, 1.0);
	run(&cfg, &r);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 7 * counter(&r, "dma_id_lookups"));
	id_cfg(&cfg, 1, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 7, 0.3);
	run(&cfg, &r);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 3 * counter(&r, "dma_id_lookups"));
}

/* Every page asks: 4 pages per mapping, 4 lookups per map and per unmap. */
Test(identity, every_page_of_a_mapping_asks, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 1, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 10, 0.5);
	cfg.wl_dma.pages = 4;
	run(&cfg, &r);
	assert_lookups(&r, 4);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 5 * counter(&r, "dma_id_lookups"));
}

/* A translated device is on no identity list: every lookup reads all of it, and answers
 * "translate" (a wrong answer would fail the trial), strict still invalidating. */
Test(identity, a_translated_device_walks_the_whole_list, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 1, DMA_MODE_STRICT, IDMAP_LIST, 50, 0.1);
	run(&cfg, &r);
	assert_lookups(&r, 1);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 50 * counter(&r, "dma_id_lookups"));
	cr_assert_eq(counter(&r, "dma_syncs"), counter(&r, "dma_unmaps"));
}

/* The cached answer: a lookup per page as before, but no lock, no node, no wait. */
Test(identity, the_cached_answer_takes_no_lock, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 4, DMA_MODE_PASSTHROUGH, IDMAP_CACHED, 11000, 1.0);
	run(&cfg, &r);
	assert_lookups(&r, 1);
	cr_assert_eq(counter(&r, "dma_id_locks"), 0);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 0);
	cr_assert_eq(counter(&r, "dma_id_lock_ns"), 0);
	/* One read of the device's field: a few ns, against the list's microseconds below. */
	cr_assert_lt(counter(&r, "dma_id_ns"), 10 * counter(&r, "dma_id_lookups"));
}

/*
 * The lookup's time is counted on its own: each of the 1000 nodes costs at least one local
 * line access (the default machine's local_ns = 1), dma-direct's counter stays exactly
 * direct_ns per map and unmap, and the map latency contains the walk. With 4 CPUs the lock
 * is contended, so part of the lookup is waiting for it.
 */
Test(identity, the_lookup_time_is_counted_apart, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 1, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 1000, 1.0);
	run(&cfg, &r);
	uint64_t lookups = counter(&r, "dma_id_lookups"), id_ns = counter(&r, "dma_id_ns");
	uint64_t maps = r.metrics[0].lat.count, unmaps = counter(&r, "dma_unmaps");
	cr_assert_geq(id_ns, 1000 * lookups, "%lu ns for %lu lookups", (unsigned long)id_ns,
		      (unsigned long)lookups);
	cr_assert_eq(counter(&r, "dma_pt_ns"), 20 * (maps + unmaps));
	cr_assert_gt(r.metrics[0].lat.mean, 1000.0, "map %.0f ns", r.metrics[0].lat.mean);
	cr_assert_lt(counter(&r, "dma_id_lock_ns"), id_ns / 10, "one CPU never waits");

	id_cfg(&cfg, 4, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 1000, 1.0);
	run(&cfg, &r);
	cr_assert_gt(counter(&r, "dma_id_lock_ns"), counter(&r, "dma_id_ns") / 2,
		     "4 CPUs on one lock held for the whole walk wait most of the lookup");
}

/* The native build of the lookup: the same counts on real threads. */
Test(identity, the_lookup_runs_natively, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result r;

	id_cfg(&cfg, 2, DMA_MODE_PASSTHROUGH, IDMAP_LIST, 64, 0.5);
	cfg.scenario.engine = ENGINE_NATIVE;
	cfg.scenario.oversubscribe = true;
	run(&cfg, &r);
	uint64_t lookups = counter(&r, "dma_id_lookups");
	cr_assert_gt(lookups, 0);
	cr_assert_eq(counter(&r, "dma_id_nodes"), 32 * lookups);
	cr_assert_eq(counter(&r, "dma_id_locks"), lookups);
}

/* ---- configs/identity-map-2011.ini ------------------------------------------------------ */

/* The config's points at 4 and 16 CPUs (shortened), each run twice: the same numbers. */
Test(identity, the_config_is_deterministic_on_the_sim, .timeout = 120)
{
	const char *sets[] = { "duration_ms=10", "warmup_ms=2" };
	struct plugin_lookup lookup = { .find = find_built };
	struct diag_list diags = { 0 };
	struct scenario *s = scenario_load(TEST_SOURCE_ROOT "/configs/identity-map-2011.ini", sets,
					   2, &lookup, &diags);
	uint32_t checked = 0;

	cr_assert_not_null(s, "%s", diags.n ? diags.msgs[0] : "?");
	cr_assert_eq(s->base.scenario.engine, ENGINE_SIM);
	cr_assert_eq(s->base.wl_dma.devices, 11000);
	cr_assert_eq(scenario_n_points(s), 8);
	for (size_t i = 0; i < scenario_n_points(s); i++) {
		struct scenario_point pt;
		struct trial_result a, b;

		cr_assert_eq(scenario_point(s, i, &pt), 0);
		if (pt.cfg.scenario.cpus != 4 && pt.cfg.scenario.cpus != 16) {
			scenario_point_free(s, &pt);
			continue;
		}
		struct trial_request req = {
			.cfg = &pt.cfg,
			.cmdq = s->cmdq[0].desc,
			.cmdq_config = pt.plugin_cfgs[0],
			.iova = s->iova[0].desc,
			.iova_config = pt.plugin_cfgs[1],
		};
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		cr_assert_eq(trial_run(&req, &a, NULL), 0, "%s", a.error);
		cr_assert_eq(trial_run(&req, &b, NULL), 0, "%s", b.error);
		cr_assert_eq(a.status, TRIAL_OK, "%s", a.error);
		cr_assert_eq(a.ops, b.ops);
		cr_assert_eq(a.n_counters, b.n_counters);
		for (uint32_t k = 0; k < a.n_counters; k++)
			cr_assert_eq(a.counters[k].total, b.counters[k].total, "%s: %lu vs %lu",
				     a.counters[k].name, (unsigned long)a.counters[k].total,
				     (unsigned long)b.counters[k].total);
		if (pt.cfg.wl_dma.identity == IDMAP_LIST)
			cr_assert_eq(counter(&a, "dma_id_nodes"),
				     11000 * counter(&a, "dma_id_lookups"));
		checked++;
		scenario_point_free(s, &pt);
	}
	cr_assert_eq(checked, 4);
	scenario_free(s);
}
