/* SPDX-License-Identifier: MIT */
/* dma_wl -- dma_map_single + dma_unmap_single in strict, lazy or passthrough mode (dma_wl.h). */
#include "workload/dma_wl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/host.h"
#include "workload/flush_queue.h"
#include "workload/identity_map.h"
#include "workload/rand.h"

/* CMDQ_BATCH_ENTRIES: a batch holds 64 commands; longer invalidations go in several issues,
 * only the last with the CMD_SYNC (arm_smmu_cmdq_batch_add/submit). */
#define DMA_BATCH 64

/* What a passthrough map returns: a nonzero handle that is no IOVA (never freed). */
#define DMA_DIRECT_HANDLE 1

/* Range TLBI fields (SMMUv3.2 RIL): NUM dw0[16:12], SCALE dw0[24:20], TG dw1[11:10]. */
#define TLBI_RANGE_NUM_SHIFT   12
#define TLBI_RANGE_SCALE_SHIFT 20
#define TLBI_RANGE_TG_4K       (1ull << 10)
#define TLBI_RANGE_NUM_MAX     32 /* NUM is 5 bits: 1..32 units of 2^SCALE pages */

enum dma_ctr {
	CTR_UNMAPS,
	CTR_SYNCS,
	CTR_TLBIS,
	CTR_FLUSH_FULL,
	CTR_FLUSH_TIMEOUT,
	CTR_DEFERRED,
	CTR_INV_NS,
	CTR_IOVA_NS,
	CTR_PT_NS,
	CTR_ID_LOOKUPS,
	CTR_ID_LOCKS,
	CTR_ID_NODES,
	CTR_ID_NS,
	CTR_ID_LOCK_NS,
	N_CTRS
};

static const char *const ctr_names[N_CTRS] = { DMA_WL_COUNTER_NAMES };

struct dma_wl_cpu {
	uint64_t seq;
	uint64_t rng;	      /* the think time's jitter (seeded) */
	uint64_t *pfns;	      /* ways: the loop's mappings, batch of them */
	bool measuring;	      /* the op now running is measured (for the flush queue's calls) */
	uint64_t ctr[N_CTRS]; /* measured time only */
} LAB_CACHE_ALIGNED;

struct dma_wl {
	const struct lab_cmdq_ops *cmdq;
	void *cmdq_state;
	struct iova_wl *iova;
	struct dma_wl_params p;
	struct dma_wl_cpu *cpus;
	struct flush_queue *fq; /* lazy */
	struct idmap *idmap;	/* identity != none */
	uint32_t ncpus;
	uint32_t failed; /* atomic */
	char error[256];
};

static void count(struct dma_wl *wl, struct lab_cpu *c, enum dma_ctr k, uint64_t n)
{
	struct dma_wl_cpu *me = &wl->cpus[c->id];

	if (me->measuring)
		me->ctr[k] += n;
}

static void fail_op(struct dma_wl *wl, struct lab_cpu *c, int rc, const char *what, uint64_t seq)
{
	if (!__atomic_exchange_n(&wl->failed, 1, __ATOMIC_ACQ_REL))
		snprintf(wl->error, sizeof(wl->error),
			 "issue() returned %d on cpu %u during %s %" PRIu64, rc, c->id, what, seq);
}

/* One issue() with the phase bracket and the time and command counts. */
static int issue(struct dma_wl *wl, struct lab_cpu *c, const struct lab_cmd *cmds, uint32_t n,
		 bool sync)
{
	uint64_t t0 = lab_now(c);

	host_cpu_enter_plugin(c, t0);
	int rc = wl->cmdq->issue(c, wl->cmdq_state, cmds, n, sync);
	uint64_t t1 = lab_now(c);
	host_cpu_leave_plugin(c, t1);
	count(wl, c, CTR_INV_NS, t1 - t0);
	count(wl, c, CTR_TLBIS, n);
	count(wl, c, CTR_SYNCS, sync);
	return rc;
}

/* flush_iotlb_all() of arm-smmu-v3 (arm_smmu_tlb_inv_context): TLBI_NH_ASID + CMD_SYNC. */
static int fq_flush_cb(void *arg, struct lab_cpu *c, enum fq_flush_why why)
{
	struct dma_wl *wl = arg;
	struct lab_cmd cmd = { { LAB_CMD_TLBI_NH_ASID, 0 } };

	count(wl, c, why == FQ_FLUSH_FULL ? CTR_FLUSH_FULL : CTR_FLUSH_TIMEOUT, 1);
	return issue(wl, c, &cmd, 1, true);
}

static void fq_free_cb(void *arg, struct lab_cpu *c, uint64_t pfn, uint64_t pages)
{
	struct dma_wl *wl = arg;
	uint64_t t0 = lab_now(c);

	iova_wl_free_range(wl->iova, c, pfn, pages);
	count(wl, c, CTR_IOVA_NS, lab_now(c) - t0);
}

static const struct fq_ops dma_fq_ops = { .flush = fq_flush_cb, .free = fq_free_cb };

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
	for (uint32_t i = 0; i < ncpus; i++) /* a stream of its own, never 0 */
		wl->cpus[i].rng = (p->seed + 1) * 0xd6e8feb86659fd93ull + i + 1;
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
	if (p->identity != IDMAP_NONE) {
		wl->idmap = idmap_new(p->host, p->identity, p->devices, p->position,
				      p->mode == DMA_MODE_PASSTHROUGH);
		if (!wl->idmap) {
			dma_wl_free(wl);
			return NULL;
		}
	}
	if (p->mode == DMA_MODE_LAZY) {
		wl->fq = fq_new(ncpus, p->fq_single, p->fq_size, p->fq_timeout_ns, &dma_fq_ops, wl);
		if (!wl->fq) {
			dma_wl_free(wl);
			return NULL;
		}
	}
	return wl;
}

void dma_wl_free(struct dma_wl *wl)
{
	if (!wl)
		return;
	for (uint32_t i = 0; wl->cpus && i < wl->ncpus; i++)
		free(wl->cpus[i].pfns);
	fq_free(wl->fq);
	idmap_free(wl->idmap);
	free(wl->cpus);
	free(wl);
}

/* One TLBI per page, tagged like the cmdq workload's, in batches of 64 with one final sync. */
static int invalidate_pages(struct dma_wl *wl, struct lab_cpu *c, uint64_t seq, uint32_t pages)
{
	struct lab_cmd cmds[DMA_BATCH];
	uint32_t left = pages;

	do {
		uint32_t n = left < DMA_BATCH ? left : DMA_BATCH;
		for (uint32_t i = 0; i < n; i++)
			cmds[i] = smmu_tag_cmd(c->id, seq, i, n);
		left -= n;
		int rc = issue(wl, c, cmds, n, left == 0);
		if (rc)
			return rc;
	} while (left);
	return 0;
}

/*
 * Range TLBIs: as __arm_smmu_tlb_inv_range with RIL, each command covers NUM x 2^SCALE
 * pages, SCALE the lowest set bit of what is left and NUM the 5 bits above it, so 1..32
 * pages are one command and up to 1024 at most two. One CMD_SYNC after them.
 */
static int invalidate_range(struct dma_wl *wl, struct lab_cpu *c, uint64_t seq, uint32_t pages)
{
	struct lab_cmd cmds[8];
	uint32_t n = 0, left = pages;

	while (left) {
		uint32_t scale = (uint32_t)__builtin_ctz(left);
		uint32_t num = (left >> scale) % TLBI_RANGE_NUM_MAX;
		if (!num)
			num = TLBI_RANGE_NUM_MAX;
		left -= num << scale;
		cmds[n++].dw[0] = (uint64_t)(num - 1) << TLBI_RANGE_NUM_SHIFT |
				  (uint64_t)scale << TLBI_RANGE_SCALE_SHIFT;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t range = cmds[i].dw[0];
		cmds[i] = smmu_tag_cmd(c->id, seq, i, n);
		cmds[i].dw[0] |= range;
		cmds[i].dw[1] |= TLBI_RANGE_TG_4K;
	}
	return issue(wl, c, cmds, n, true);
}

/* Strict: gathered (the 2019 series: one CMD_SYNC per unmap) or one TLBI + sync per page. */
static int invalidate(struct dma_wl *wl, struct lab_cpu *c, uint64_t seq)
{
	if (!wl->p.gather) {
		for (uint32_t i = 0; i < wl->p.pages; i++) {
			int rc = wl->p.range_inv ? invalidate_range(wl, c, seq, 1)
						 : invalidate_pages(wl, c, seq, 1);
			if (rc)
				return rc;
		}
		return 0;
	}
	return wl->p.range_inv ? invalidate_range(wl, c, seq, wl->p.pages)
			       : invalidate_pages(wl, c, seq, wl->p.pages);
}

/*
 * iommu_no_mapping() for each page of a map or unmap: is the device identity mapped? On the
 * sim the lookup's sim build runs, so its lock and every node it reads are priced. Returns
 * the time it took; an answer that contradicts the mode (the device is on the list exactly in
 * passthrough) fails the op. 0 when no lookup is configured.
 */
static uint64_t identity_lookup(struct dma_wl *wl, struct lab_cpu *c, const char *what)
{
	bool sim = c->clock->source == LAB_CLOCK_SIM;
	bool want = wl->p.mode == DMA_MODE_PASSTHROUGH;
	uint64_t t0;

	if (!wl->idmap)
		return 0;
	t0 = lab_now(c);
	for (uint32_t i = 0; i < wl->p.pages; i++) {
		struct idmap_walk w;
		bool found =
			sim ? idmap_lookup_sim(c, wl->idmap, &w) : idmap_lookup(c, wl->idmap, &w);
		count(wl, c, CTR_ID_LOOKUPS, 1);
		count(wl, c, CTR_ID_LOCKS, w.locked);
		count(wl, c, CTR_ID_NODES, w.nodes);
		count(wl, c, CTR_ID_LOCK_NS, w.lock_wait_ns);
		if (found != want && !__atomic_exchange_n(&wl->failed, 1, __ATOMIC_ACQ_REL))
			snprintf(wl->error, sizeof(wl->error),
				 "the identity lookup on cpu %u during %s answered %s in %s mode",
				 c->id, what, found ? "identity" : "translated",
				 want ? "passthrough" : "a translating");
	}
	uint64_t t = lab_now(c) - t0;
	count(wl, c, CTR_ID_NS, t);
	return t;
}

/* dma_map_single(): IOVA alloc + PTE write (passthrough: dma-direct). 0 when the IOVA space
 * is exhausted. */
static uint64_t map_one(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t t0 = lab_now(c), pfn = DMA_DIRECT_HANDLE, pt_ns = wl->p.direct_ns;

	wl->cpus[c->id].measuring = measuring;
	uint64_t id_ns = identity_lookup(wl, c, "map");
	if (wl->p.mode != DMA_MODE_PASSTHROUGH) {
		pfn = iova_wl_alloc(wl->iova, c, wl->p.pages);
		pt_ns = wl->p.pt_map_ns;
	}
	lab_delay_ns(c, pt_ns);
	if (measuring) {
		uint64_t t = lab_now(c) - t0;
		hist_record(&hists[0], t);
		/* The lookup is counted on its own (dma_id_ns). */
		t = t > id_ns ? t - id_ns : 0;
		/* Natively a delay overshoots: passthrough's map past the lookup is dma-direct's.
		 */
		if (wl->p.mode == DMA_MODE_PASSTHROUGH)
			pt_ns = t;
		count(wl, c, CTR_PT_NS, pt_ns);
		count(wl, c, CTR_IOVA_NS, t > pt_ns ? t - pt_ns : 0);
	}
	return pfn;
}

/* dma_unmap_single(): strict: PTE clear, TLBI + CMD_SYNC, IOVA free; lazy: PTE clear, into
 * the flush queue; passthrough: dma-direct. 0 or -errno. */
static int unmap_one(struct dma_wl *wl, struct lab_cpu *c, uint64_t pfn, struct hist *hists,
		     bool measuring)
{
	uint64_t seq = ++wl->cpus[c->id].seq;
	uint64_t t2 = lab_now(c);
	int rc = 0;

	wl->cpus[c->id].measuring = measuring;
	count(wl, c, CTR_UNMAPS, 1);
	identity_lookup(wl, c, "unmap");
	if (wl->p.mode == DMA_MODE_PASSTHROUGH) {
		lab_delay_ns(c, wl->p.direct_ns);
		count(wl, c, CTR_PT_NS, wl->p.direct_ns);
	} else {
		lab_delay_ns(c, wl->p.pt_unmap_ns);
		count(wl, c, CTR_PT_NS, wl->p.pt_unmap_ns);
		if (wl->p.mode == DMA_MODE_LAZY) {
			count(wl, c, CTR_DEFERRED, 1);
			rc = fq_queue(wl->fq, c, pfn, wl->p.pages, lab_now(c));
		} else {
			rc = invalidate(wl, c, seq);
			if (!rc) {
				uint64_t t3 = lab_now(c);
				iova_wl_free_range(wl->iova, c, pfn, wl->p.pages);
				if (measuring)
					count(wl, c, CTR_IOVA_NS, lab_now(c) - t3);
			}
		}
	}
	if (rc) {
		fail_op(wl, c, rc, "unmap", seq);
		return rc;
	}
	if (measuring)
		hist_record(&hists[1], lab_now(c) - t2);
	return 0;
}

/* The flush queue's timer, checked between ops (lazy). 0 or -errno. */
static int fq_timer(struct dma_wl *wl, struct lab_cpu *c, bool measuring)
{
	if (!wl->fq)
		return 0;
	wl->cpus[c->id].measuring = measuring;
	int rc = fq_tick(wl->fq, c, lab_now(c));
	if (rc)
		fail_op(wl, c, rc, "the flush queue's timeout flush after unmap",
			wl->cpus[c->id].seq);
	return rc;
}

/* ways: think_ns, or uniform in think_ns x [1 - think_jitter, 1 + think_jitter]. (irq's
 * completions are jittered already: trans_jitter.) */
static uint64_t think_time(struct dma_wl *wl, struct lab_cpu *c)
{
	return wl_jittered_ns(wl->p.think_ns, wl->p.think_jitter, &wl->cpus[c->id].rng);
}

/* The ways loop: batch maps (each with its memcpy), then the batch unmaps. */
static int ways_op(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t *pfns = wl->cpus[c->id].pfns;
	uint32_t n = 0;
	int rc;

	iova_wl_tick(wl->iova, c);
	if ((rc = fq_timer(wl, c, measuring)))
		return rc;
	while (n < wl->p.batch) {
		uint64_t pfn = map_one(wl, c, hists, measuring);
		if (!pfn)
			break; /* counted by the iova workload; unmap what was mapped */
		pfns[n++] = pfn;
		lab_delay_ns(c, think_time(wl, c));
	}
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = unmap_one(wl, c, pfns[i], hists, measuring);
	return rc;
}

/* irq: unmap a completed I/O's mapping if one is due for this CPU, else submit one. */
static int irq_op(struct dma_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t pfn, size;
	int rc;

	iova_wl_tick(wl->iova, c);
	if ((rc = fq_timer(wl, c, measuring)))
		return rc;
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
	int rc = fq_timer(wl, c, measuring);
	if (rc)
		return rc;
	uint64_t pfn = map_one(wl, c, hists, measuring);
	if (!pfn)
		return 0; /* a failed map is counted by the iova workload, and not unmapped */
	lab_delay_ns(c, wl->p.trans_ns);
	return unmap_one(wl, c, pfn, hists, measuring);
}

uint64_t dma_wl_idle_until(const struct dma_wl *wl, struct lab_cpu *c, uint64_t now)
{
	uint64_t until, due;

	if (wl->p.pattern != DMA_PATTERN_IRQ)
		return 0;
	until = iova_wl_idle_until(wl->iova, c, now);
	if (!until || !wl->fq)
		return until;
	due = fq_timer_due(wl->fq, c);
	if (due <= now)
		return 0;
	return due < until ? due : until;
}

const char *dma_wl_error(const struct dma_wl *wl)
{
	return __atomic_load_n(&wl->failed, __ATOMIC_ACQUIRE) ? wl->error : NULL;
}

void dma_wl_drain(struct dma_wl *wl, struct lab_cpu *c)
{
	if (wl->fq)
		fq_drain(wl->fq, c);
	if (wl->p.mode == DMA_MODE_PASSTHROUGH)
		iova_wl_discard(wl->iova);
}

uint32_t dma_wl_counters(const struct dma_wl *wl, struct dma_wl_counter *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < N_CTRS && n < max; k++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < wl->ncpus; i++)
			sum += wl->cpus[i].ctr[k];
		out[n++] = (struct dma_wl_counter){ ctr_names[k], sum };
	}
	return n;
}

struct flush_queue *dma_wl_fq(const struct dma_wl *wl)
{
	return wl->fq;
}
