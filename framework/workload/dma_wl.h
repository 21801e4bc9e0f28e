/* SPDX-License-Identifier: MIT */
/*
 * dma_wl -- the path of a dma_map_single()/dma_unmap_single() pair in strict mode, as
 * dma_map_benchmark drives it: map = IOVA alloc + page-table write time; then the DMA
 * transfer time; unmap = page-table clear time + one TLBI_NH_VA per page + CMD_SYNC through
 * a cmdq plugin + IOVA free. Metrics "map" and "unmap" (ns, with percentiles).
 *
 * Two patterns: single (dma_map_benchmark: one op = one map, the transfer, one unmap) and
 * ways (Barry Song's ways harness: one op = one loop of `batch` maps, each followed by
 * think_ns of work on the buffer (its memcpy), then the `batch` unmaps in map order; map +
 * unmap per CPU per second = ops/s x batch / cpus), and irq (a block driver on blk-mq, as
 * NVMe: submitting CPUs map, each mapping's I/O completes trans_ns later and the IRQ CPU of
 * the submitter's hardware queue unmaps it, after irq_ns of completion work; the queues and
 * jobs are the iova workload's irq pattern, iova_wl.h; an op is one map or one unmap).
 */
#ifndef IOMMULAB_DMA_WL_H
#define IOMMULAB_DMA_WL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/cmdq.h>

#include "stats/histogram.h"
#include "workload/iova_wl.h"

struct dma_wl_params {
	uint32_t pages;	      /* granule: pages per mapping */
	uint64_t pt_map_ns;   /* writing the PTEs */
	uint64_t pt_unmap_ns; /* clearing them */
	uint64_t trans_ns;    /* the device's transfer between map and unmap (dma_trans_ns) */
	int pattern;	      /* enum dma_pattern */
	uint32_t batch;	      /* ways: maps (then unmaps) per loop */
	uint64_t think_ns;    /* ways: work after each map (the harness's memcpy); irq: the
			       * submission's work after its map */
	uint64_t irq_ns;      /* irq: the completion's work besides the unmap */
};

enum dma_pattern { DMA_PATTERN_SINGLE = 0, DMA_PATTERN_WAYS, DMA_PATTERN_IRQ };

struct dma_wl;

struct dma_wl *dma_wl_new(const struct lab_cmdq_ops *cmdq, void *cmdq_state, struct iova_wl *iova,
			  uint32_t ncpus, const struct dma_wl_params *p);
void dma_wl_free(struct dma_wl *wl);

/* The engine's op function: hists[0] map, hists[1] unmap. */
int dma_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);

const char *dma_wl_error(const struct dma_wl *wl);

#endif /* IOMMULAB_DMA_WL_H */
