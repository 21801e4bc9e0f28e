/* SPDX-License-Identifier: MIT */
/*
 * list_depot -- the mainline (v6.7+) IOVA rcache: per-CPU loaded/prev magazines in front of
 * an unbounded per-order list of full magazines, trimmed by delayed work (Robin Murphy,
 * "iommu/iova: Make the rcache depot scale better", 911aa1245da8, and "iommu/iova: Manage
 * the depot list size"; cover letter lore cover.1692033783.git.robin.murphy@arm.com;
 * reference section 4.2). A push never fails; every IOVA_DEPOT_DELAY (100 ms) a bin whose
 * depot holds more than num_online_cpus() magazines gives one back to the tree. Robin: the
 * threshold is "not an upper nor a lower limit", the values "chosen fairly arbitrarily".
 */
#include <stddef.h>

#include "rcache.h"

/* IOVA_DEPOT_DELAY = msecs_to_jiffies(100). */
#define LIST_RECLAIM_MS 100

struct list_config {
	uint64_t reclaim_ms;
};

static const struct lab_param list_params[] = {
	{ .key = "reclaim_ms",
	  .type = LAB_PARAM_UINT,
	  .def = "100",
	  .min = 1,
	  .max = 60000,
	  .help = "period of the depot reclaim work (IOVA_DEPOT_DELAY), one magazine per bin",
	  .offset = offsetof(struct list_config, reclaim_ms) },
};

static const struct rcache_depot_ops list_depot_ops = {
	.push = depot_list_push,
	.pop = depot_list_pop,
};

static int list_init(struct lab_iova_setup *s, void **state)
{
	const struct list_config *cfg = s->config;
	uint64_t ms = cfg ? cfg->reclaim_ms : LIST_RECLAIM_MS;
	struct rcache *rc;
	int ret;

	if (!ms || ms > UINT64_MAX / 1000000) {
		snprintf(s->err, s->err_len, "list_depot: reclaim_ms %llu out of range",
			 (unsigned long long)ms);
		return -EINVAL;
	}
	ret = rcache_create(s, &list_depot_ops, 0, &rc);
	if (ret)
		return ret;
	/*
	 * The kernel arms the work on each push and it re-arms itself while above the
	 * threshold; a fixed-period tick that does nothing below it behaves the same.
	 */
	s->tick_ns = ms * 1000000;
	*state = rc;
	return 0;
}

static void list_tick(struct lab_cpu *c, void *state)
{
	struct rcache *rc = state;

	rc_count_init_mags(c, rc);
	rcache_reclaim_step(c, rc);
}

static const struct lab_iova_ops list_ops = {
	.struct_size = sizeof(struct lab_iova_ops),
	.init = list_init,
	.fini = rcache_op_fini,
	.alloc = rcache_op_alloc,
	.free = rcache_op_free,
	.flush_cpu = rcache_op_flush_cpu,
	.flush_all = rcache_op_flush_all,
	.tick = list_tick,
};

static const struct lab_plugin list_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = "list_depot",
	.summary = "per-CPU magazines + unbounded depot list trimmed to ncpus every 100 ms (v6.7)",
	.version = "1.0",
	.params = list_params,
	.n_params = LAB_ARRAY_SIZE(list_params),
	.config_size = sizeof(struct list_config),
	.counters = rcache_counters,
	.n_counters = RC_NR_COUNTERS,
	.phases = rcache_phases,
	.n_phases = LAB_ARRAY_SIZE(rcache_phases),
	.ops = &list_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &list_plugin;
}
