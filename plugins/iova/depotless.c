/* SPDX-License-Identifier: MIT */
/*
 * depotless -- the kernel's per-CPU IOVA magazines (loaded + prev per size order, 127 pfns
 * each, the get/insert swap rules of drivers/iommu/iova.c; reference section 4.2) with no
 * depot at all. A CPU whose pair is full spills its loaded magazine to the tree in one batch
 * and reuses it; a CPU whose pair is empty allocates from the tree. CPUs share freed ranges
 * only through the tree. Not an upstream design: the baseline that shows what the depot buys
 * (and the lower bound of the depots' memory: 2 magazines per CPU per order).
 */
#include "rcache.h"

/* No depot: rcache.h spills in place when push is NULL and never pops. */
static const struct rcache_depot_ops depotless_depot_ops = {
	.push = NULL,
	.pop = NULL,
};

static int depotless_init(struct lab_iova_setup *s, void **state)
{
	struct rcache *rc;
	int ret = rcache_create(s, &depotless_depot_ops, 0, &rc);

	if (ret)
		return ret;
	*state = rc;
	return 0;
}

static const struct lab_iova_ops depotless_ops = {
	.struct_size = sizeof(struct lab_iova_ops),
	.init = depotless_init,
	.fini = rcache_op_fini,
	.alloc = rcache_op_alloc,
	.free = rcache_op_free,
	.flush_cpu = rcache_op_flush_cpu,
	.flush_all = rcache_op_flush_all,
};

static const struct lab_plugin depotless_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = "depotless",
	.summary = "per-CPU magazines only: a full pair spills to the tree, an empty one allocates",
	.version = "1.0",
	.counters = rcache_counters,
	.n_counters = RC_NR_COUNTERS,
	.phases = rcache_phases,
	.n_phases = LAB_ARRAY_SIZE(rcache_phases),
	.ops = &depotless_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &depotless_plugin;
}
