/* SPDX-License-Identifier: MIT */
/*
 * iova.h -- the IOVA cache plugin kind: per-CPU caching of freed IOVA ranges in front of the
 * host's slow path (the rbtree allocator of drivers/iommu/iova.c, one lock per domain).
 *
 * Units are pages (pfns). A policy implements alloc_iova_fast()/free_iova_fast(): serve
 * from its caches, fall back to the domain, flush and retry on failure as the kernel does.
 * Ranges it holds in its caches stay allocated in the domain (as in the kernel).
 */
#ifndef IOMMULAB_IOVA_H
#define IOMMULAB_IOVA_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"

/* The slow path: the host's allocator, shared by all CPUs, one lock. */
struct lab_iova_domain {
	uint32_t struct_size;
	uint32_t pad;
	uint64_t dma_32bit_pfn; /* first pfn above 4 GiB */
	/* alloc_iova(size, limit_pfn, size_aligned=true): lowest pfn of the range, 0 if none. */
	uint64_t (*alloc)(struct lab_cpu *c, struct lab_iova_domain *d, uint64_t size,
			  uint64_t limit_pfn);
	/* free_iova(): the range that starts at pfn (size only checked). */
	void (*free)(struct lab_cpu *c, struct lab_iova_domain *d, uint64_t pfn, uint64_t size);
	/* Free n ranges under one acquisition of the tree lock (iova_magazine_free_pfns()). */
	void (*free_batch)(struct lab_cpu *c, struct lab_iova_domain *d, const uint64_t *pfns,
			   const uint64_t *sizes, uint32_t n);
	void *priv; /* host-private */
};

static inline uint64_t lab_iova_slow_alloc(struct lab_cpu *c, struct lab_iova_domain *d,
					   uint64_t size, uint64_t limit_pfn)
{
	return d->alloc(c, d, size, limit_pfn);
}

static inline void lab_iova_slow_free(struct lab_cpu *c, struct lab_iova_domain *d, uint64_t pfn,
				      uint64_t size)
{
	d->free(c, d, pfn, size);
}

static inline void lab_iova_slow_free_batch(struct lab_cpu *c, struct lab_iova_domain *d,
					    const uint64_t *pfns, const uint64_t *sizes, uint32_t n)
{
	d->free_batch(c, d, pfns, sizes, n);
}

struct lab_iova_setup {
	uint32_t struct_size;
	const struct lab_host *host;
	struct lab_iova_domain *domain;
	uint32_t ncpus;
	const void *config;
	char *err;
	size_t err_len;
	uint64_t tick_ns; /* out: call tick() this often (0 = never); set by init */
};

struct lab_iova_ops {
	uint32_t struct_size;
	/* Required. Set up caches for s->ncpus CPUs; may set s->tick_ns. 0 or -errno. */
	int (*init)(struct lab_iova_setup *s, void **state);
	/* Required. Return every cached range to the domain, then free the caches. */
	void (*fini)(struct lab_cpu *c, void *state);
	/*
	 * Required. alloc_iova_fast(): a size-aligned range of size pages ending at or below
	 * limit_pfn; 0 when none. With flush_rcache, on failure flush all caches and retry once.
	 */
	uint64_t (*alloc)(struct lab_cpu *c, void *state, uint64_t size, uint64_t limit_pfn,
			  bool flush_rcache);
	/* Required. free_iova_fast(): cache or return the range [pfn, pfn + size). */
	void (*free)(struct lab_cpu *c, void *state, uint64_t pfn, uint64_t size);
	/*
	 * flush_cpu, flush_all and tick run while other CPUs allocate and free (a failed
	 * allocation's flush-and-retry, the periodic work on some CPU): they take the locks
	 * alloc and free take.
	 */
	/* Required. free_cpu_cached_iovas(cpu): return that CPU's magazines to the domain. */
	void (*flush_cpu)(struct lab_cpu *c, void *state, uint32_t cpu);
	/* Required. free_global_cached_iovas(): return the depot to the domain. */
	void (*flush_all)(struct lab_cpu *c, void *state);
	/* Optional. Periodic work (depot reclaim), every tick_ns on some CPU. */
	void (*tick)(struct lab_cpu *c, void *state);
};

#endif /* IOMMULAB_IOVA_H */
