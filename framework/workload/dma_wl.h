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
 *
 * Three invalidation modes (mode):
 *  - strict: each unmap invalidates before it returns. gather (the iommu_iotlb_gather of Will
 *    Deacon's 2019 batching series, default) issues the unmap's invalidations and one
 *    CMD_SYNC: one TLBI_NH_VA per page, or with range_inv (SMMUv3.2 range invalidation) one
 *    range TLBI per 5-bit run of the page count, as __arm_smmu_tlb_inv_range splits it; no
 *    gather is a TLBI + CMD_SYNC per page, as if each page were unmapped on its own;
 *  - lazy: the unmap clears its PTEs and queues its IOVA in the flush queue
 *    (flush_queue.h), which issues one TLBI_NH_ASID + CMD_SYNC per flush and only then frees
 *    the queued IOVAs through the IOVA policy;
 *  - passthrough: no translation (the "no SMMU" column): map and unmap are dma-direct's
 *    bookkeeping, direct_ns each; no IOVA, no command.
 * The cmdq and IOVA plugins are called the same way in every mode.
 *
 * The identity-map lookup (identity, identity_map.h): intel-iommu under iommu=pt asked, for
 * every page of every map and unmap (iommu_no_mapping() in intel_map_page/intel_unmap_page),
 * whether the device was identity mapped: list walks the identity domain's device list under
 * one global lock (2011), cached reads the device's own field (Mike Travis's fix). It runs
 * before the mode's work in every mode: in passthrough the device is on the list (the
 * identity-mapped device bypasses translation); in strict and lazy it is on no list, so the
 * walk reads every node and answers "translate", as the 2011 kernel did for a device outside
 * the identity domain.
 *
 * Counters (measured time only): unmaps, the CMD_SYNCs and invalidation commands the
 * workload issued, flushes by trigger, IOVAs deferred, where the CPU time went (in issue(),
 * in the IOVA policy, in page-table or dma-direct work), and the identity lookups: how many,
 * how many took the lock, the nodes they read, their time and the part of it spent waiting
 * for the lock.
 */
#ifndef IOMMULAB_DMA_WL_H
#define IOMMULAB_DMA_WL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/cmdq.h>

#include "stats/histogram.h"
#include "workload/iova_wl.h"

struct dma_wl_params {
	uint32_t pages;		/* granule: pages per mapping */
	uint64_t pt_map_ns;	/* writing the PTEs */
	uint64_t pt_unmap_ns;	/* clearing them */
	uint64_t trans_ns;	/* the device's transfer between map and unmap (dma_trans_ns) */
	int pattern;		/* enum dma_pattern */
	uint32_t batch;		/* ways: maps (then unmaps) per loop */
	uint64_t think_ns;	/* ways: work after each map (the harness's memcpy); irq: the
				 * submission's work after its map */
	double think_jitter;	/* ways: each think time uniform in think_ns x [1 - j, 1 + j] */
	uint64_t seed;		/* the jitter's streams, one per CPU */
	uint64_t irq_ns;	/* irq: the completion's work besides the unmap */
	int mode;		/* enum dma_mode */
	bool gather;		/* strict: one CMD_SYNC per unmap (else one per page) */
	bool range_inv;		/* strict: range TLBIs (SMMUv3.2) instead of one per page */
	bool fq_single;		/* lazy: one flush queue for the domain, not one per CPU */
	uint32_t fq_size;	/* lazy: entries per ring */
	uint64_t fq_timeout_ns; /* lazy: the timer */
	uint64_t direct_ns;	/* passthrough: dma-direct's map or unmap */
	int identity;		/* enum idmap_kind: the lookup per page of a map or unmap */
	uint32_t devices;	/* list: nodes on the identity domain's list */
	uint32_t position;	/* list, passthrough: the device's node, 1-based (0: last) */
	const struct lab_host *host; /* identity: where the list's lines come from */
};

enum dma_pattern { DMA_PATTERN_SINGLE = 0, DMA_PATTERN_WAYS, DMA_PATTERN_IRQ };
enum dma_mode { DMA_MODE_STRICT = 0, DMA_MODE_LAZY, DMA_MODE_PASSTHROUGH };

struct dma_wl;

struct dma_wl *dma_wl_new(const struct lab_cmdq_ops *cmdq, void *cmdq_state, struct iova_wl *iova,
			  uint32_t ncpus, const struct dma_wl_params *p);
void dma_wl_free(struct dma_wl *wl);

/* The engine's op function: hists[0] map, hists[1] unmap. */
int dma_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);
/*
 * engine_job.idle_until for the irq pattern, whose op returns 1 on a CPU with nothing to do:
 * the iova half's (a completion due here, a job moving here, the policy's tick) or, lazy,
 * the flush queue's timer this CPU armed, whichever is sooner. 0: do not sleep.
 */
uint64_t dma_wl_idle_until(const struct dma_wl *wl, struct lab_cpu *c, uint64_t now);

const char *dma_wl_error(const struct dma_wl *wl);

/* Teardown, on c once no CPU runs: the flush queue's IOVAs back to the policy, and in
 * passthrough the irq queues' mappings (which hold no IOVA) dropped. */
void dma_wl_drain(struct dma_wl *wl, struct lab_cpu *c);

/* The workload's counters over the measured time, in this order (dma_wl.c's enum). */
#define DMA_WL_COUNTER_NAMES                                                                       \
	"dma_unmaps", "dma_syncs", "dma_tlbis", "fq_flush_full", "fq_flush_timeout",               \
		"fq_deferred", "dma_inv_ns", "dma_iova_ns", "dma_pt_ns", "dma_id_lookups",         \
		"dma_id_locks", "dma_id_nodes", "dma_id_ns", "dma_id_lock_ns"

/* ... at most max of them; returns how many. */
struct dma_wl_counter {
	const char *name;
	uint64_t total;
};
uint32_t dma_wl_counters(const struct dma_wl *wl, struct dma_wl_counter *out, uint32_t max);

/* The flush queue (lazy mode), or NULL. */
struct flush_queue *dma_wl_fq(const struct dma_wl *wl);

#endif /* IOMMULAB_DMA_WL_H */
