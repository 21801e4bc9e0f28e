/* SPDX-License-Identifier: MIT */
/* dma_wl -- dma_map_single + dma_unmap_single, strict mode (see dma_wl.h). */
#include "workload/dma_wl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/host.h"

/* CMDQ_BATCH_ENTRIES: a batch holds 64 commands; longer invalidations go in several issues,
 * only the last with the CMD_SYNC (arm_smmu_cmdq_batch_add/submit). */
#define DMA_BATCH 64

struct dma_wl_cpu {
	uint64_t seq;
	uint64_t *pfns; /* ways: the loop's mappings, batch of them */
} LAB_CACHE_ALIGNED;

struct dma_wl {
	const struct lab_cmdq_ops *cmdq;
	void *cmdq_state;
	struct iova_wl *iova;
	struct dma_wl_params p;
	struct dma_wl_cpu *cpus;
	uint32_t ncpus;
	uint32_t failed; /* atomic */
	char error[256];
};

struct dma_wl *dma_wl_new(const struct lab_cmdq_ops *cmdq, void *cmdq_state, struct iova_wl *iova,
			  uint32_t ncpus, const struct dma_wl_params *p)
{
	struct dma_wl *wl = calloc(1, sizeof(*wl));

	if (!wl)
		return NULL;
	wl->cpus = aligned_alloc(LAB_CACHE_LINE, sizeof(*wl->cpus) * ncpus);
	if (!wl->cpus) {
		free(wl);
		return NULL;
	}
	memset(wl->cpus, 0, sizeof(*wl->cpus) * ncpus);
	wl->ncpus = ncpus;
	if (p->pattern == DMA_PATTERN_WAYS) {
		for (uint32_t i = 0; i < ncpus; i++) {
			wl->cpus[i].pfns = calloc(p->batch ? p->batch : 1, sizeof(uint64_t));
			if (!wl->cpus[i].pfns) {
				dma_wl_free(wl);
				return NULL;
			}
		}
	}
	wl->cmdq = cmdq;
	wl->cmdq_state = cmdq_state;
	wl->iova = iova;
	wl->p = *p;
	return wl;
}

void dma_wl_free(struct dma_wl *wl)
{
	if (!wl)
		return;
	for (uint32_t i = 0; wl->cpus && i < wl->ncpus; i++)
		free(wl->cpus[i].pfns);
	free(wl->cpus);
	free(wl);
}

/* One TLBI per page, tagged like the cmdq workload's, in batches of 64 with one final sync. */
static int invalidate(struct dma_wl *wl, struct lab_cpu *c, uint64_t seq)
{
	struct lab_cmd cmds[DMA_BATCH];
	uint32_t left = wl->p.pages;

	do {
		uint32_t n = left < DMA_BATCH ? left : DMA_BATCH;
		for (uint32_t i = 0; i < n; i++)
			cmds[i] = smmu_tag_cmd(c->id, seq, i, n);
		left -= n;
		int rc = wl->cmdq->issue(c, wl->cmdq_state, cmds, n, left == 0);
		if (rc)
			return rc;
	} while (left);
	return 0;
}

/* dma_map_single(): IOVA alloc + PTE write. 0 when the IOVA space is exhausted. */
static uint64_t map_one(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t t0 = lab_now(c);
	uint64_t pfn = iova_wl_alloc(wl->iova, c, wl->p.pages);

	lab_delay_ns(c, wl->p.pt_map_ns);
	if (measuring)
		hist_record(&hists[0], lab_now(c) - t0);
	return pfn;
}

/* dma_unmap_single(), strict: PTE clear, TLBI + CMD_SYNC, IOVA free. 0 or -errno. */
static int unmap_one(struct dma_wl *wl, struct lab_cpu *c, uint64_t pfn, struct hist *hists,
		     bool measuring)
{
	uint64_t seq = ++wl->cpus[c->id].seq;
	uint64_t t2 = lab_now(c);

	lab_delay_ns(c, wl->p.pt_unmap_ns);
	host_cpu_enter_plugin(c, lab_now(c));
	int rc = invalidate(wl, c, seq);
	host_cpu_leave_plugin(c, lab_now(c));
	if (rc) {
		if (!__atomic_exchange_n(&wl->failed, 1, __ATOMIC_ACQ_REL))
			snprintf(wl->error, sizeof(wl->error),
				 "issue() returned %d on cpu %u during unmap %" PRIu64, rc, c->id,
				 seq);
		return rc;
	}
	iova_wl_free_range(wl->iova, c, pfn, wl->p.pages);
	if (measuring)
		hist_record(&hists[1], lab_now(c) - t2);
	return 0;
}

/* The ways loop: batch maps (each with its memcpy), then the batch unmaps. */
static int ways_op(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t *pfns = wl->cpus[c->id].pfns;
	uint32_t n = 0;
	int rc = 0;

	iova_wl_tick(wl->iova, c);
	while (n < wl->p.batch) {
		uint64_t pfn = map_one(wl, c, hists, measuring);
		if (!pfn)
			break; /* counted by the iova workload; unmap what was mapped */
		pfns[n++] = pfn;
		lab_delay_ns(c, wl->p.think_ns);
	}
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = unmap_one(wl, c, pfns[i], hists, measuring);
	return rc;
}

/* irq: unmap a completed I/O's mapping if one is due for this CPU, else submit one. */
static int irq_op(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t pfn, size;

	iova_wl_tick(wl->iova, c);
	if (iova_wl_irq_pop(wl->iova, c, &pfn, &size)) {
		lab_delay_ns(c, wl->p.irq_ns);
		return unmap_one(wl, c, pfn, hists, measuring);
	}
	int job = iova_wl_job_here(wl->iova, c);
	if (job < 0) {
		lab_cpu_relax();
		return 1;
	}
	pfn = map_one(wl, c, hists, measuring);
	if (!pfn)
		return 0; /* counted by the iova workload */
	iova_wl_irq_push(wl->iova, c, job, pfn, wl->p.pages);
	lab_delay_ns(c, wl->p.think_ns);
	return 0;
}

int dma_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct dma_wl *wl = arg;

	if (wl->p.pattern == DMA_PATTERN_WAYS)
		return ways_op(wl, c, hists, measuring);
	if (wl->p.pattern == DMA_PATTERN_IRQ)
		return irq_op(wl, c, hists, measuring);
	iova_wl_tick(wl->iova, c);
	uint64_t pfn = map_one(wl, c, hists, measuring);
	if (!pfn)
		return 0; /* a failed map is counted by the iova workload, and not unmapped */
	lab_delay_ns(c, wl->p.trans_ns);
	return unmap_one(wl, c, pfn, hists, measuring);
}

const char *dma_wl_error(const struct dma_wl *wl)
{
	return __atomic_load_n(&wl->failed, __ATOMIC_ACQUIRE) ? wl->error : NULL;
}
