/* SPDX-License-Identifier: MIT */
/*
 * identity_map -- the question intel-iommu asked on every DMA request under iommu=pt: "is
 * this device identity mapped?" (iommu_no_mapping() -> identity_mapping()), two ways:
 *  - list: the 2011 code: take one global lock and walk the identity domain's device list
 *    (si_domain->devices), comparing each node's device with the caller's, until it is found
 *    or the list ends. Mike Travis's 2011 report (a UV system with about 11,000 PCI devices,
 *    iommu=pt: a 10GbE receiver spent 50.3% of its cycles in _spin_lock and 27.4% in
 *    iommu_no_mapping) is this search run for every page of every request;
 *  - cached: his fix, the answer kept with the device (its archdata.iommu pointer to the
 *    domain info): one read of a per-device field, no lock, no walk.
 *
 * Each list node and the lock are their own cache lines from lab_alloc(), read through
 * lab.h, so the sim prices the walk line by line and the lock's hand-offs between CPUs. The
 * lookup is built twice from identity_map.c (natively, and against the sim binding as
 * idmap_lookup_sim, framework/engine/sim/meson.build); the dma workload picks the one for the
 * clock its CPU runs on.
 */
#ifndef IOMMULAB_IDENTITY_MAP_H
#define IOMMULAB_IDENTITY_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/lab.h>

enum idmap_kind { IDMAP_NONE = 0, IDMAP_LIST, IDMAP_CACHED };

struct idmap;

/*
 * A list of `devices` nodes, or the cached field (kind). member: the caller's device is in
 * the identity domain, at 1-based `position` of the list (0: the last node); not a member,
 * it is in no node and a list lookup walks every one. NULL: out of memory or bad arguments.
 */
struct idmap *idmap_new(const struct lab_host *h, int kind, uint32_t devices, uint32_t position,
			bool member);
void idmap_free(struct idmap *m);

/* What one lookup did, for the workload's counters. */
struct idmap_walk {
	uint64_t nodes;	       /* list nodes read */
	uint64_t lock_wait_ns; /* from asking for the lock to holding it */
	bool locked;	       /* the global lock was taken */
};

/* Is the device identity mapped? Fills *w. idmap_lookup_sim is the sim build of the same. */
bool idmap_lookup(struct lab_cpu *c, struct idmap *m, struct idmap_walk *w);
bool idmap_lookup_sim(struct lab_cpu *c, struct idmap *m, struct idmap_walk *w);

#endif /* IOMMULAB_IDENTITY_MAP_H */
