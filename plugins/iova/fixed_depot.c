/* SPDX-License-Identifier: MIT */
/*
 * fixed_depot -- the per-CPU IOVA rcache with a fixed-size depot, as in mainline up to v6.6
 * (drivers/iommu/iova.c; reference section 4.2, "Old" row): per CPU and per size order a
 * loaded and a prev magazine of 127 pfns, behind them a depot of at most MAX_GLOBAL_MAGS = 32
 * full magazines per order. When a CPU's pair is full and the depot too, the full loaded
 * magazine is emptied back into the tree in one batch under the tree lock and an empty one
 * takes its place -- the "IOVA ageing" case John Garry measured (v3 of "Flush CPU rcache for
 * when a depot fills", Nov 2020). Source: the old code quoted in those mails.
 */
#include <stddef.h>

#include "rcache.h"

/* MAX_GLOBAL_MAGS, the kernel's constant (include/linux/iova.h, later moved to iova.c). */
#define FIXED_DEPOT_MAX 32

struct fixed_config {
	uint64_t depot_max;
};

static const struct lab_param fixed_params[] = {
	{ .key = "depot_max",
	  .type = LAB_PARAM_UINT,
	  .def = "32",
	  .min = 1,
	  .max = 65536,
	  .help = "full magazines the depot holds per size order (MAX_GLOBAL_MAGS)",
	  .offset = offsetof(struct fixed_config, depot_max) },
};

static const struct rcache_depot_ops fixed_depot_ops = {
	.push = depot_slots_push,
	.pop = depot_slots_pop,
};

static int fixed_init(struct lab_iova_setup *s, void **state)
{
	const struct fixed_config *cfg = s->config;
	uint64_t max = cfg ? cfg->depot_max : FIXED_DEPOT_MAX;
	struct rcache *rc;
	int ret;

	if (!max || max > UINT32_MAX) {
		snprintf(s->err, s->err_len, "fixed_depot: depot_max %llu out of range",
			 (unsigned long long)max);
		return -EINVAL;
	}
	ret = rcache_create(s, &fixed_depot_ops, (uint32_t)max, &rc);
	if (ret)
		return ret;
	*state = rc;
	return 0;
}

static const struct lab_iova_ops fixed_ops = {
	.struct_size = sizeof(struct lab_iova_ops),
	.init = fixed_init,
	.fini = rcache_op_fini,
	.alloc = rcache_op_alloc,
	.free = rcache_op_free,
	.flush_cpu = rcache_op_flush_cpu,
	.flush_all = rcache_op_flush_all,
};

static const struct lab_plugin fixed_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = "fixed_depot",
	.summary = "per-CPU magazines + a depot of 32 full magazines per size (Linux <= v6.6)",
	.version = "1.0",
	.params = fixed_params,
	.n_params = LAB_ARRAY_SIZE(fixed_params),
	.config_size = sizeof(struct fixed_config),
	.counters = rcache_counters,
	.n_counters = RC_NR_COUNTERS,
	.phases = rcache_phases,
	.n_phases = LAB_ARRAY_SIZE(rcache_phases),
	.ops = &fixed_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &fixed_plugin;
}
