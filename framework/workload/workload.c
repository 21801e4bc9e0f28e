/* SPDX-License-Identifier: MIT */
/* workload -- the table of workloads (see workload.h). */
#include "workload/workload.h"

#include <stddef.h>

#include "workload/cmdq_wl.h"
#include "workload/dma_wl.h"
#include "workload/flush_queue.h"
#include "workload/micro_wl.h"

/* ---- cmdq ---------------------------------------------------------------------------------- */

static void *cmdq_make(const struct workload_env *e)
{
	const struct scenario_wl_cmdq *w = &e->cfg->wl_cmdq;

	return cmdq_wl_new(e->cmdq, e->cmdq_state, e->dev, e->ncpus, (uint32_t)w->cmds_per_sync,
			   w->mixed, w->think_ns, w->think_jitter, e->cfg->scenario.seed, e->oracle,
			   (uint32_t)e->cfg->scenario.sample_every);
}

static void cmdq_destroy(void *wl)
{
	cmdq_wl_free(wl);
}

static const char *cmdq_error(void *wl, bool hung)
{
	(void)hung;
	return cmdq_wl_error(wl);
}

static uint64_t cmdq_think_ns(const struct scenario_cfg *cfg)
{
	return cfg->wl_cmdq.think_ns;
}

static bool cmdq_uses_seed(const struct scenario_cfg *cfg)
{
	return cfg->wl_cmdq.think_jitter > 0 && cfg->wl_cmdq.think_ns > 0;
}

/* ---- iova: the runner's IOVA half is the whole workload ------------------------------------ */

static void *iova_make(const struct workload_env *e)
{
	return e->iova;
}

/* ---- dma ----------------------------------------------------------------------------------- */

static void *dma_make(const struct workload_env *e)
{
	const struct scenario_wl_dma *w = &e->cfg->wl_dma;
	struct dma_wl_params p = {
		.pages = (uint32_t)w->pages,
		.pt_map_ns = w->pt_map_ns,
		.pt_unmap_ns = w->pt_unmap_ns,
		.trans_ns = w->trans_ns,
		.pattern = w->pattern,
		.batch = (uint32_t)w->batch,
		.think_ns = w->think_ns,
		.think_jitter = w->think_jitter,
		.seed = e->cfg->scenario.seed,
		.irq_ns = w->irq_ns,
		.mode = w->mode,
		.gather = w->gather,
		.range_inv = w->range_inv,
		.fq_single = w->fq == 1,
		.fq_size = (uint32_t)w->fq_size,
		.fq_timeout_ns = w->fq_timeout_ms * 1000000u,
		.direct_ns = w->direct_ns,
		.identity = w->identity,
		.devices = (uint32_t)w->devices,
		.host = e->host,
	};

	/* The device's node: ceil(position x devices), at least the first. */
	double node = w->position * (double)w->devices;
	p.position = (uint32_t)node + ((double)(uint32_t)node < node);
	if (!p.position)
		p.position = 1;
	/* dma-iommu.c's two variants: per CPU 256 entries and 10 ms, single 32768 and 1 s. */
	if (!p.fq_size)
		p.fq_size = p.fq_single ? FQ_SINGLE_SIZE : FQ_PERCPU_SIZE;
	if (!p.fq_timeout_ns)
		p.fq_timeout_ns =
			(p.fq_single ? FQ_SINGLE_TIMEOUT_MS : FQ_PERCPU_TIMEOUT_MS) * 1000000ull;
	return dma_wl_new(e->cmdq, e->cmdq_state, e->iova, e->ncpus, &p);
}

static uint64_t dma_idle_until(void *wl, struct lab_cpu *c, uint64_t now)
{
	return dma_wl_idle_until(wl, c, now);
}

/* ways' think times' jitter, and irq's device times (trans_jitter, drawn by the iova half). */
static bool dma_uses_seed(const struct scenario_cfg *cfg)
{
	const struct scenario_wl_dma *w = &cfg->wl_dma;

	return (w->think_jitter > 0 && w->think_ns > 0 && w->pattern == DMA_PATTERN_WAYS) ||
	       (w->pattern == DMA_PATTERN_IRQ && w->trans_jitter > 0 && w->trans_ns > 0);
}

static void dma_destroy(void *wl)
{
	dma_wl_free(wl);
}

static void dma_drain(void *wl, struct lab_cpu *c)
{
	dma_wl_drain(wl, c);
}

static uint32_t dma_counters(void *wl, struct workload_counter *out)
{
	struct dma_wl_counter k[WORKLOAD_MAX_COUNTERS];
	uint32_t n = dma_wl_counters(wl, k, WORKLOAD_MAX_COUNTERS);

	for (uint32_t i = 0; i < n; i++)
		out[i] = (struct workload_counter){ k[i].name, k[i].total };
	return n;
}

static const char *dma_error(void *wl, bool hung)
{
	(void)hung;
	return dma_wl_error(wl);
}

/*
 * One mapping at a time per CPU, within the device's DMA mask; irq: the iova workload's irq
 * queues carry the mappings from the submitting CPUs to the IRQ CPUs.
 */
static void dma_iova_params(const struct scenario_cfg *cfg, struct iova_wl_params *p)
{
	const struct scenario_wl_dma *w = &cfg->wl_dma;

	p->dma_bits = (uint32_t)w->dma_bits;
	p->depth = 1;
	if (w->pattern == DMA_PATTERN_IRQ) {
		p->pattern = IOVA_IRQ;
		p->depth = (uint32_t)w->depth;
		p->irq_cpus = (uint32_t)w->irq_cpus;
		p->submit_cpus = (uint32_t)w->submit_cpus;
		p->io_ns = w->trans_ns;
		p->io_jitter = w->trans_jitter;
	}
	p->migrate_ns = w->pattern == DMA_PATTERN_IRQ ? w->migrate_ns : 0;
}

/* ---- micro --------------------------------------------------------------------------------- */

static void *micro_make(const struct workload_env *e)
{
	struct micro_wl *w = micro_wl_new(
		(enum micro_op)e->cfg->wl_micro.op, e->cfg->wl_micro.think_ns, e->ncpus,
		(uint32_t)e->cfg->scenario.sample_every, e->cfg->wl_micro.mode == MICRO_THROUGHPUT);

	if (w) {
		micro_wl_set_critical(w, e->cfg->wl_micro.critical_ns);
		if (e->cfg->wl_micro.mode == MICRO_THROUGHPUT && !e->ops_per_cpu)
			micro_wl_set_batch(w, MICRO_BATCH);
	}
	return w;
}

static bool never(const struct scenario_cfg *cfg)
{
	(void)cfg;
	return false;
}

static void micro_destroy(void *wl)
{
	micro_wl_free(wl);
}

/* Its check of the counter is only meaningful when every CPU finished its ops. */
static const char *micro_error(void *wl, bool hung)
{
	return hung ? NULL : micro_wl_error(wl);
}

static uint64_t iova_idle_until(void *wl, struct lab_cpu *c, uint64_t now)
{
	return iova_wl_idle_until(wl, c, now);
}

static const struct workload_ops workloads[] = {
	{
		.kind = WORKLOAD_CMDQ,
		.name = "cmdq",
		.needs = WORKLOAD_NEEDS_CMDQ,
		.n_metrics = 1,
		.metrics = { "op" },
		.make = cmdq_make,
		.destroy = cmdq_destroy,
		.op = cmdq_wl_op,
		.error = cmdq_error,
		.harness_think_ns = cmdq_think_ns,
		.uses_seed = cmdq_uses_seed,
	},
	{
		.kind = WORKLOAD_IOVA,
		.name = "iova",
		.needs = WORKLOAD_NEEDS_IOVA,
		.n_metrics = 2,
		.metrics = { "alloc", "free" },
		.make = iova_make,
		.op = iova_wl_op,
		.idle_until = iova_idle_until,
	},
	{
		.kind = WORKLOAD_DMA,
		.name = "dma",
		.needs = WORKLOAD_NEEDS_CMDQ | WORKLOAD_NEEDS_IOVA,
		.n_metrics = 2,
		.metrics = { "map", "unmap" },
		.make = dma_make,
		.destroy = dma_destroy,
		.op = dma_wl_op,
		.idle_until = dma_idle_until,
		.error = dma_error,
		.iova_params = dma_iova_params,
		.drain = dma_drain,
		.counters = dma_counters,
		.counter_names = { DMA_WL_COUNTER_NAMES },
		.uses_seed = dma_uses_seed,
	},
	{
		.kind = WORKLOAD_MICRO,
		.name = "micro",
		.plugin_label = "micro",
		.n_metrics = 1,
		.metrics = { "op" },
		.make = micro_make,
		.destroy = micro_destroy,
		.op = micro_wl_op,
		.op_sim = micro_wl_op_sim,
		.ops_per_call = micro_wl_batch,
		.uses_seed = never,
		.error = micro_error,
	},
};

const struct workload_ops *workload_find(enum workload_kind kind)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (workloads[i].kind == kind)
			return &workloads[i];
	return NULL;
}

engine_op_fn workload_op(const struct workload_ops *w, enum engine_binding binding)
{
	return binding == ENGINE_BINDING_SIM && w->op_sim ? w->op_sim : w->op;
}

void workload_iova_params(const struct workload_ops *w, const struct scenario_cfg *cfg,
			  struct iova_wl_params *p)
{
	const struct scenario_wl_iova *i = &cfg->wl_iova;

	*p = (struct iova_wl_params){
		.pattern = i->pattern,
		.free_every = (uint32_t)i->free_every,
		.depth = (uint32_t)i->depth,
		.min_pages = i->min_pages,
		.max_pages = i->max_pages,
		.dma_bits = (uint32_t)i->dma_bits,
		.think_ns = i->think_ns,
		.irq_cpus = (uint32_t)i->irq_cpus,
		.submit_cpus = (uint32_t)i->submit_cpus,
		.io_ns = i->io_ns,
		.io_jitter = i->io_jitter,
		.migrate_ns = i->migrate_ns,
		.seed = cfg->scenario.seed,
	};
	if (w->iova_params)
		w->iova_params(cfg, p);
}
