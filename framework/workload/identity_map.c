/* SPDX-License-Identifier: MIT */
/*
 * identity_map -- the identity-mapping lookup of intel-iommu under iommu=pt, the 2011 list
 * walk and its per-device cache (see identity_map.h).
 *
 * This file is built twice: natively, and with LAB_ENGINE_SIM against the sim binding
 * (framework/engine/sim/meson.build), as the IOVA slow path is; only the lookup differs
 * between the two builds, the rest is compiled once, in the native build.
 */
#ifdef LAB_ENGINE_SIM
#define idmap_lookup idmap_lookup_sim
#endif

#include "workload/identity_map.h"

#include <stdlib.h>

/* device_domain_info: one per device in the domain, each its own line (lab_alloc). */
struct idmap_node {
	uint64_t dev;  /* info->dev */
	uint64_t next; /* info->link.next, as an address (0: the list's end) */
};

/* The global lock and the list head (device_domain_lock, si_domain->devices). */
struct idmap_head {
	struct lab_spinlock lock;
	uint64_t first;
};

/* The device's own field the fix reads (pdev->dev.archdata.iommu). */
struct idmap_dev {
	uint64_t identity; /* 1: in the identity domain */
};

struct idmap {
	const struct lab_host *h;
	int kind;
	uint32_t devices;
	uint64_t me; /* the caller's device id; nodes hold 1 .. devices */
	struct idmap_head *head;
	struct idmap_node **nodes; /* for idmap_free() */
	struct idmap_dev *dev;
};

/* identity_mapping() of 2011: the lock, then list_for_each_entry until info->dev == pdev. */
static bool lookup_list(struct lab_cpu *c, struct idmap *m, struct idmap_walk *w)
{
	struct idmap_head *head = m->head;
	uint64_t t0 = lab_now(c), n;
	bool found = false;

	lab_spin_lock(c, &head->lock);
	w->lock_wait_ns = lab_now(c) - t0;
	w->locked = true;
	for (n = lab_load64(&head->first, LAB_RELAXED); n;) {
		struct idmap_node *node = (struct idmap_node *)(uintptr_t)n;
		w->nodes++;
		if (lab_load64(&node->dev, LAB_RELAXED) == m->me) {
			found = true;
			break;
		}
		n = lab_load64(&node->next, LAB_RELAXED);
	}
	lab_spin_unlock(&head->lock);
	return found;
}

bool idmap_lookup(struct lab_cpu *c, struct idmap *m, struct idmap_walk *w)
{
	*w = (struct idmap_walk){ 0 };
	if (m->kind == IDMAP_LIST)
		return lookup_list(c, m, w);
	/* Travis's fix: the device's own field says it, no lock and no list. */
	return lab_load64(&m->dev->identity, LAB_RELAXED) != 0;
}

#ifndef LAB_ENGINE_SIM
struct idmap *idmap_new(const struct lab_host *h, int kind, uint32_t devices, uint32_t position,
			bool member)
{
	struct idmap *m;

	if ((kind != IDMAP_LIST && kind != IDMAP_CACHED) || !devices || position > devices)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->h = h;
	m->kind = kind;
	m->devices = devices;
	m->me = member ? (position ? position : devices) : (uint64_t)devices + 1;
	m->head = lab_alloc(h, sizeof(*m->head));
	m->dev = lab_alloc(h, sizeof(*m->dev));
	m->nodes = calloc(devices, sizeof(*m->nodes));
	if (!m->head || !m->dev || !m->nodes)
		goto fail;
	m->dev->identity = member;
	/* Built back to front so node k (1-based) holds device k and the head points at 1. */
	for (uint32_t k = devices; k >= 1; k--) {
		struct idmap_node *node = lab_alloc(h, sizeof(*node));
		if (!node)
			goto fail;
		node->dev = k;
		node->next = m->head->first;
		m->head->first = (uintptr_t)node;
		m->nodes[k - 1] = node;
	}
	return m;
fail:
	idmap_free(m);
	return NULL;
}

void idmap_free(struct idmap *m)
{
	if (!m)
		return;
	for (uint32_t k = 0; m->nodes && k < m->devices; k++)
		lab_free(m->h, m->nodes[k]);
	free(m->nodes);
	lab_free(m->h, m->dev);
	lab_free(m->h, m->head);
	free(m);
}
#endif
