/* SPDX-License-Identifier: MIT */
/*
 * iova_wl -- the IOVA workload: CPUs allocate and free IOVA ranges through an iova plugin.
 *
 * Every CPU's allocations go into its own ring of at most `depth` outstanding ranges (a
 * queue depth); the ring is emptied by its CPU's "freer": the first CPU of its group of
 * `free_every` CPUs. So one code path gives the three patterns:
 *   same-cpu           groups of 1: each CPU frees its own ranges, oldest first, when full
 *   remote-free        groups of k: every CPU allocates, only every k-th CPU frees, as a
 *                      driver whose completion IRQs are bound to a few CPUs
 *   producer-consumer  groups of 2 where the freer does not allocate
 *   irq                a block driver on blk-mq: submit_cpus jobs, spread evenly, each
 *                      allocate up to depth ranges (the job's iodepth); a range completes
 *                      io_ns after its allocation and is freed by the IRQ CPU of the job's
 *                      hardware queue (irq_cpus queues over contiguous CPU blocks, the IRQ on
 *                      each block's first CPU); an IRQ CPU allocates only if it runs a job;
 *                      with migrate_ns the jobs move between CPUs (a seeded random CPU each
 *                      period), completions going to the queue of the CPU that submitted
 * Sizes are drawn log-uniformly in [min_pages, max_pages]. Like dma-iommu for a PCI device,
 * with a DMA mask above 32 bits the first attempt is below 4 GiB without flushing, then the
 * full mask with flush_rcache (and the 32-bit attempt is dropped for good once it fails).
 * Metrics: "alloc" and "free" latency.
 */
#ifndef IOMMULAB_IOVA_WL_H
#define IOMMULAB_IOVA_WL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/iova.h>

#include "stats/histogram.h"

enum iova_pattern { IOVA_SAME_CPU = 0, IOVA_REMOTE_FREE, IOVA_PRODUCER_CONSUMER, IOVA_IRQ };

struct iova_wl_params {
	int pattern;	     /* enum iova_pattern */
	uint32_t free_every; /* remote-free: group size k */
	uint32_t depth;	     /* outstanding ranges per CPU */
	uint64_t min_pages, max_pages;
	uint32_t dma_bits;    /* the device's DMA mask */
	uint64_t think_ns;    /* local work after each op */
	uint32_t irq_cpus;    /* irq: hardware queues, one IRQ CPU each */
	uint32_t submit_cpus; /* irq: jobs (0: every CPU) */
	uint64_t io_ns;	      /* irq: allocation to completion (the I/O's device time) */
	double io_jitter;     /* irq: io_ns drawn from io_ns x [1 - j, 1 + j] */
	uint64_t migrate_ns;  /* irq: a job moves to a seeded random CPU this often (0: never) */
	uint64_t seed;
	/* The plugin's phases in the trial's table: its phase k (1..n_phases) is the trial's
	 * phase phase_off + k (after the cmdq plugin's, in the dma workload). */
	uint32_t phase_off, n_phases;
};

struct iova_wl;

struct iova_wl *iova_wl_new(const struct lab_iova_ops *ops, void *state,
			    struct lab_iova_domain *domain, uint32_t ncpus,
			    const struct iova_wl_params *p, uint64_t tick_ns, uint32_t counter_off);
void iova_wl_free(struct iova_wl *wl);

/* The engine's op function: hists[0] alloc, hists[1] free. */
int iova_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);

/* After the run, on one thread: free every outstanding range through the plugin. */
void iova_wl_drain(struct iova_wl *wl, struct lab_cpu *c);

/* After the run: drop every outstanding range without freeing it (the dma workload's
 * passthrough mappings, which hold no IOVA). */
void iova_wl_discard(struct iova_wl *wl);

/* Allocations that returned 0 (no space even after flushing). */
uint64_t iova_wl_failures(const struct iova_wl *wl);

/* For the dma workload, which pairs one alloc with one free on the same CPU: */
uint64_t iova_wl_alloc(struct iova_wl *wl, struct lab_cpu *c, uint64_t size);
void iova_wl_free_range(struct iova_wl *wl, struct lab_cpu *c, uint64_t pfn, uint64_t size);
/*
 * The irq pattern's queues, for the dma workload (whose CPUs map on submission and unmap on
 * the IRQ CPU): a job now on this CPU with fewer than depth ranges outstanding (-1: none);
 * queue a range the job mapped, completing io_ns from now; take a completed range of one of
 * this CPU's submitters (false: none due).
 */
int iova_wl_job_here(const struct iova_wl *wl, struct lab_cpu *c);
void iova_wl_irq_push(struct iova_wl *wl, struct lab_cpu *c, int job, uint64_t pfn, uint64_t size);
bool iova_wl_irq_pop(struct iova_wl *wl, struct lab_cpu *c, uint64_t *pfn, uint64_t *size);
/*
 * After c's op found nothing to do at now (ns, c's clock): the time before which it will
 * find nothing again whatever the other CPUs do (the irq pattern: the next migration, the
 * next completion due on an IRQ CPU, the next periodic tick), UINT64_MAX for never, 0 when
 * it cannot say (another CPU's action may give it work: poll). For the sim's idle CPUs.
 */
uint64_t iova_wl_idle_until(const struct iova_wl *wl, struct lab_cpu *c, uint64_t now);
/* Run the policy's periodic work if due (CPU 0 only). */
void iova_wl_tick(struct iova_wl *wl, struct lab_cpu *c);

#endif /* IOMMULAB_IOVA_WL_H */
