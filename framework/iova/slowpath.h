/* SPDX-License-Identifier: MIT */
/*
 * slowpath -- the IOVA slow path: the kernel's rbtree allocator (drivers/iommu/iova.c,
 * alloc_iova()/free_iova(), reference section 4.1) re-implemented for the host.
 *
 * One domain, one lock (a struct lab_qspinlock, as iova_rbtree_lock), nodes from lab_alloc()
 * so that the same code runs natively and under the sim engine. Allocation is top-down first
 * fit from a cached hint (one for the 32-bit space, one above it), always size-aligned to
 * roundup_pow_of_two(size); a 32-bit request that failed remembers its size so that larger
 * ones fail fast until something below 4 GiB is freed. The tree always holds an anchor node
 * at IOVA_ANCHOR so every search has a node above it.
 *
 * Plugins see it only as a struct lab_iova_domain (iova.h). Units are pages (pfns).
 */
#ifndef IOMMULAB_IOVA_SLOWPATH_H
#define IOMMULAB_IOVA_SLOWPATH_H

#include <stdint.h>

#include <iommulab/iova.h>

/* pfn of the anchor node: the top of the space, never handed out. */
#define IOVA_ANCHOR UINT64_MAX

/* dma_32bit_pfn for 4 KiB pages: the first pfn above 4 GiB (1 << (32 - iova_shift)). */
#define IOVA_DMA_32BIT_PFN_4K (UINT64_C(1) << (32 - 12))

struct iova_slowpath;

/* What the host reports about the slow path. */
struct slowpath_stats {
	uint64_t allocs;	 /* ranges handed out */
	uint64_t frees;		 /* ranges returned (singly or in batches) */
	uint64_t failures;	 /* allocations that found no space (or no memory for a node) */
	uint64_t fast_fails;	 /* of those, refused by the max32_alloc_size check */
	uint64_t retries;	 /* second passes from iova_find_limit() */
	uint64_t walk_nodes;	 /* tree nodes the allocations' gap searches stepped over */
	uint64_t batches;	 /* free_batch calls (one lock acquisition each) */
	uint64_t free_errors;	 /* frees of a pfn not allocated, or with the wrong size */
	uint64_t live;		 /* ranges in the tree now, the anchor not counted */
	uint64_t max_live;	 /* high-water mark of live */
	uint64_t lock_acquires;	 /* acquisitions of the domain lock */
	uint64_t lock_contended; /* of those, ones that found it held */
	uint64_t lock_wait_ns;	 /* time spent waiting in contended acquisitions */
};

/*
 * A domain over [start_pfn, IOVA_ANCHOR) whose 32-bit space ends below dma_32bit_pfn.
 * start_pfn must be >= 1 (pfn 0 means failure). NULL when out of memory or on bad arguments.
 */
struct iova_slowpath *slowpath_new(const struct lab_host *h, uint64_t start_pfn,
				   uint64_t dma_32bit_pfn);
/*
 * Under the sim engine: the domain's ops become the sim build of this code (its lock, and
 * the lines of the nodes it walks, priced by the memory model). Call before any CPU runs.
 */
void slowpath_use_sim(struct iova_slowpath *sp);
/* Frees every node still in the tree and the domain itself. NULL is fine. */
void slowpath_free(struct iova_slowpath *sp);

/* The domain as plugins see it (valid until slowpath_free()). */
struct lab_iova_domain *slowpath_domain(struct iova_slowpath *sp);
/* The slow path behind a domain returned by slowpath_domain(). */
struct iova_slowpath *slowpath_from_domain(struct lab_iova_domain *d);

/*
 * Direct calls (what the domain's ops do). alloc returns the lowest pfn of a range of size
 * pages, aligned to roundup_pow_of_two(size), ending at or below limit_pfn; 0 when none.
 */
uint64_t slowpath_alloc(struct lab_cpu *c, struct iova_slowpath *sp, uint64_t size,
			uint64_t limit_pfn);
void slowpath_release(struct lab_cpu *c, struct iova_slowpath *sp, uint64_t pfn, uint64_t size);
void slowpath_release_batch(struct lab_cpu *c, struct iova_slowpath *sp, const uint64_t *pfns,
			    const uint64_t *sizes, uint32_t n);

/* A snapshot of the counters. Read it while no CPU is inside the domain. */
void slowpath_get_stats(const struct iova_slowpath *sp, struct slowpath_stats *out);
/* Ranges in the tree now, the anchor not counted. Same caveat. */
uint64_t slowpath_live(const struct iova_slowpath *sp);
/* lab_alloc() blocks the slow path holds now: the domain itself plus one per live range. */
uint64_t slowpath_allocs_held(const struct iova_slowpath *sp);

/*
 * Walk the tree in order, checking it: red-black invariants, ranges sorted, non-overlapping,
 * inside [start_pfn, IOVA_ANCHOR), the anchor last, the live count right, both cached hints
 * pointing at nodes in the tree. Calls fn(pfn_lo, pfn_hi, arg) for every live range (fn may
 * be NULL). Returns 0, or -EINVAL at the first violation. Call while no CPU is inside.
 */
int slowpath_check(const struct iova_slowpath *sp,
		   void (*fn)(uint64_t pfn_lo, uint64_t pfn_hi, void *arg), void *arg);

#endif /* IOMMULAB_IOVA_SLOWPATH_H */
