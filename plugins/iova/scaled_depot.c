/* SPDX-License-Identifier: MIT */
/*
 * scaled_depot -- the fixed-depot rcache with the depot scaled to the machine: at most
 * max(32, ncpus) full magazines per size order instead of 32, the depot kcalloc'd per bin
 * (Zhang Zekun's proposal of Aug 2023, lore 20230811130246.42719-3-zhangzekun11@huawei.com,
 * as quoted in John Garry's reply; not merged, superseded by the list depot).
 * Everything else, including emptying a full magazine to the tree when the depot is full,
 * is the old mainline behaviour (reference section 4.2).
 */
#include <stddef.h>

#include "rcache.h"

/* The proposal's floor: never smaller than the old MAX_GLOBAL_MAGS. */
#define SCALED_DEPOT_MIN 32

struct scaled_config {
	uint64_t depot_min;
};

static const struct lab_param scaled_params[] = {
	{ .key = "depot_min",
	  .type = LAB_PARAM_UINT,
	  .def = "32",
	  .min = 1,
	  .max = 65536,
	  .help = "depot slots per size order are max(depot_min, ncpus)",
	  .offset = offsetof(struct scaled_config, depot_min) },
};

static const struct rcache_depot_ops scaled_depot_ops = {
	.push = depot_slots_push,
	.pop = depot_slots_pop,
};

static int scaled_init(struct lab_iova_setup *s, void **state)
{
	const struct scaled_config *cfg = s->config;
	uint64_t max = cfg ? cfg->depot_min : SCALED_DEPOT_MIN;
	struct rcache *rc;
	int ret;

	if (max < s->ncpus)
		max = s->ncpus; /* num_possible_cpus() in the proposal */
	if (!max || max > UINT32_MAX) {
		snprintf(s->err, s->err_len, "scaled_depot: depot size %llu out of range",
			 (unsigned long long)max);
		return -EINVAL;
	}
	ret = rcache_create(s, &scaled_depot_ops, (uint32_t)max, &rc);
	if (ret)
		return ret;
	*state = rc;
	return 0;
}

static const struct lab_iova_ops scaled_ops = {
	.struct_size = sizeof(struct lab_iova_ops),
	.init = scaled_init,
	.fini = rcache_op_fini,
	.alloc = rcache_op_alloc,
	.free = rcache_op_free,
	.flush_cpu = rcache_op_flush_cpu,
	.flush_all = rcache_op_flush_all,
};

static const struct lab_plugin scaled_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = "scaled_depot",
	.summary = "per-CPU magazines + a depot of max(32, ncpus) per size (Zhang Zekun, 2023)",
	.version = "1.0",
	.params = scaled_params,
	.n_params = LAB_ARRAY_SIZE(scaled_params),
	.config_size = sizeof(struct scaled_config),
	.counters = rcache_counters,
	.n_counters = RC_NR_COUNTERS,
	.phases = rcache_phases,
	.n_phases = LAB_ARRAY_SIZE(rcache_phases),
	.ops = &scaled_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &scaled_plugin;
}
