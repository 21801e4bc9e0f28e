/* SPDX-License-Identifier: MIT */
/*
 * flush_queue -- the lazy (non-strict) mode's deferred IOVA frees, as dma-iommu.c's flush
 * queue ("iommu.strict=0"): an unmap clears its PTEs and queues its IOVA instead of
 * invalidating; the IOVA goes back to the allocator only after a domain-wide invalidation
 * (flush_iotlb_all: TLBI_NH_ASID + CMD_SYNC on an SMMUv3) that started after it was queued
 * has completed, so the device can no longer hold a stale translation for it.
 *
 * What is reproduced (dma-iommu.c, queue_iova / fq_ring_free / fq_flush_iotlb /
 * fq_flush_timeout; constants IOVA_DEFAULT_FQ_SIZE 256, IOVA_DEFAULT_FQ_TIMEOUT 10 ms,
 * IOVA_SINGLE_FQ_SIZE 32768, IOVA_SINGLE_FQ_TIMEOUT 1000 ms):
 *  - one ring per CPU (percpu) or one for the domain (single, IOMMU_DMA_OPTS_SINGLE_QUEUE);
 *  - each entry is stamped with the domain's flush start count when queued; a flush bumps
 *    the start count, invalidates, then bumps the finish count; an entry is freed once the
 *    finish count is above its stamp (a flush already running when it was queued may have
 *    invalidated before its PTEs were cleared, so it does not count);
 *  - queueing first frees what completed flushes cover; a ring still full then flushes and
 *    frees (a "full" flush);
 *  - the first queueing while no timer is armed arms one timeout later, on its CPU (as
 *    mod_timer() does; the kernel's timer migration off idle CPUs is not modelled: the
 *    arming CPU is an unmapping one, busy); when it is due that CPU flushes (a "timeout"
 *    flush) at its next op and, as the kernel's timer does, walks every CPU's ring and frees
 *    their covered entries itself: they go into that CPU's IOVA cache, in one burst (a
 *    per-CPU ring's lock is taken by its own CPU and the timer's);
 *  - every op of a CPU's loop (fq_tick) also frees what completed flushes cover in its own
 *    ring, as queue_iova's first fq_ring_free() does at the CPU's next unmap.
 * Time is the caller's (lab_now(): virtual time under the sim). The invalidation and the
 * frees are callbacks, made with no lock held (they call plugins, which may wait). The
 * single ring's lock is held only across memory operations, never across a plugin call or
 * a clock read, so on the sim (one thread) it is never seen held; its cost and contention
 * are not modelled.
 */
#ifndef IOMMULAB_FLUSH_QUEUE_H
#define IOMMULAB_FLUSH_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/lab.h>

#define FQ_PERCPU_SIZE	     256
#define FQ_PERCPU_TIMEOUT_MS 10
#define FQ_SINGLE_SIZE	     32768
#define FQ_SINGLE_TIMEOUT_MS 1000

enum fq_flush_why { FQ_FLUSH_FULL = 0, FQ_FLUSH_TIMEOUT };

struct fq_ops {
	/* flush_iotlb_all(): invalidate the whole domain and wait for it; 0 or -errno. */
	int (*flush)(void *arg, struct lab_cpu *c, enum fq_flush_why why);
	/* Give [pfn, pfn + pages) back to the allocator. */
	void (*free)(void *arg, struct lab_cpu *c, uint64_t pfn, uint64_t pages);
};

struct fq_stats {
	uint64_t flush_full, flush_timeout; /* flushes, by what triggered them */
	uint64_t queued, freed;		    /* entries queued, and freed after a flush */
	uint64_t drained;		    /* freed at teardown (fq_drain) */
};

struct flush_queue;

/*
 * ncpus CPUs; single: one ring for all of them; size entries per ring; timeout_ns after the
 * timer is armed the timeout flush is due. NULL: out of memory.
 */
struct flush_queue *fq_new(uint32_t ncpus, bool single, uint32_t size, uint64_t timeout_ns,
			   const struct fq_ops *ops, void *arg);
void fq_free(struct flush_queue *fq);

/* queue_iova() on CPU c at time now. 0, or the flush's -errno. */
int fq_queue(struct flush_queue *fq, struct lab_cpu *c, uint64_t pfn, uint64_t pages, uint64_t now);

/* The timer-like check of c's loop: the timeout flush if due, then free what is covered. */
int fq_tick(struct flush_queue *fq, struct lab_cpu *c, uint64_t now);

/* When c's timer is due (c armed it), for a CPU about to sleep; UINT64_MAX: not c's, or off. */
uint64_t fq_timer_due(const struct flush_queue *fq, const struct lab_cpu *c);

/*
 * Teardown, single-threaded on c, once no CPU runs: free every queued entry without another
 * flush (the trial is over: no device reads through the domain any more, and the device
 * model is no longer driven). Nothing is lost. Returns how many.
 */
uint64_t fq_drain(struct flush_queue *fq, struct lab_cpu *c);

/* Entries queued and not yet freed. */
uint64_t fq_pending(const struct flush_queue *fq);

void fq_get_stats(const struct flush_queue *fq, struct fq_stats *out);

#endif /* IOMMULAB_FLUSH_QUEUE_H */
