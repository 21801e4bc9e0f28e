/* SPDX-License-Identifier: MIT */
/*
 * rcache.h -- the per-CPU IOVA range cache shared by every iova policy: magazines, the
 * per-CPU loaded/prev pair, alloc_iova_fast()/free_iova_fast() and the flushes, as in
 * drivers/iommu/iova.c (reference section 4.2). Policies differ only in the depot behind
 * the per-CPU pairs, which they describe with a struct rcache_depot_ops.
 *
 * Each plugin is one .so built from one .c file, so this lives in a header that each policy
 * includes; everything here is static (inline, so a policy that does not use a helper pays
 * nothing for it).
 *
 * Locking, in the kernel's order: a CPU's rcache lock, then a bin's depot lock, then the
 * domain's tree lock (inside the lab_iova_slow_* calls). Nothing takes them in reverse.
 * Magazine contents are plain memory guarded by those locks, as in the kernel. Each is a
 * spinlock_t there, a queued spinlock since arm64 v4.18 and x86 v4.2 (struct lab_qspinlock):
 * where every CPU allocates from a depot that others fill, the depot's and the tree's locks
 * have a waiter per CPU, and a ticket lock's hand-over, which every waiter re-reads, would
 * cost the sim O(CPUs) transfers (96 CPUs of configs/nvme-d06-96.ini: 28 us per map).
 */
#ifndef IOMMULAB_PLUGINS_IOVA_RCACHE_H
#define IOMMULAB_PLUGINS_IOVA_RCACHE_H

#include <assert.h>
#include <errno.h>
#include <stdio.h>

#include <iommulab/iova.h>

/* Orders 0..5 are cached, i.e. sizes 1..32 pages (128 KiB with 4 KiB pages). */
#define IOVA_RANGE_CACHE_MAX_SIZE 6

/* 127, not 128, so that a magazine (count + pfns) is exactly 1024 bytes (Feng Tang's patch). */
#define IOVA_MAG_SIZE 127

struct iova_magazine {
	union {
		uint64_t size;		    /* pfns held */
		struct iova_magazine *next; /* list depot: link while parked (always full then) */
	};
	uint64_t pfns[IOVA_MAG_SIZE];
};

/* The kernel asserts this: a power-of-two size keeps magazines out of odd-sized slabs. */
static_assert(!(sizeof(struct iova_magazine) & (sizeof(struct iova_magazine) - 1)),
	      "struct iova_magazine must be a power of two in size");

#define IOVA_MAG_BYTES ((uint64_t)sizeof(struct iova_magazine))

/* Counters every policy reports (indices into rcache_counters[]). */
enum rcache_counter {
	RC_LOADED_HITS,
	RC_PREV_HITS,
	RC_DEPOT_HITS,
	RC_SLOW_ALLOCS,
	RC_SLOW_FREES,
	RC_ALLOC_FAILURES,
	RC_DEPOT_PUSHES,
	RC_DEPOT_POPS,
	RC_MAGS_FREED_FULL,
	RC_MAG_ALLOC_FAILURES,
	RC_DEPOT_RECLAIMS,
	RC_FLUSHES,
	RC_IOVAS_CACHED,
	RC_CACHE_BYTES,
	RC_NR_COUNTERS,
};

static const struct lab_counter rcache_counters[RC_NR_COUNTERS] = {
	[RC_LOADED_HITS] = { "loaded_hits", LAB_COUNTER_EVENTS,
			     "allocations served from the CPU's loaded magazine" },
	[RC_PREV_HITS] = { "prev_hits", LAB_COUNTER_EVENTS,
			   "allocations served after swapping in the prev magazine" },
	[RC_DEPOT_HITS] = { "depot_hits", LAB_COUNTER_EVENTS,
			    "allocations served from a full magazine taken from the depot" },
	[RC_SLOW_ALLOCS] = { "slow_allocs", LAB_COUNTER_EVENTS,
			     "allocations served by the rbtree slow path" },
	[RC_SLOW_FREES] = { "slow_frees", LAB_COUNTER_EVENTS,
			    "ranges returned to the rbtree slow path" },
	[RC_ALLOC_FAILURES] = { "alloc_failures", LAB_COUNTER_EVENTS,
				"allocations that returned 0 (no space)" },
	[RC_DEPOT_PUSHES] = { "depot_pushes", LAB_COUNTER_EVENTS,
			      "full magazines parked in the depot" },
	[RC_DEPOT_POPS] = { "depot_pops", LAB_COUNTER_EVENTS,
			    "full magazines taken from the depot by a CPU" },
	[RC_MAGS_FREED_FULL] = { "mags_freed_full", LAB_COUNTER_EVENTS,
				 "full magazines emptied to the slow path for lack of depot room" },
	[RC_MAG_ALLOC_FAILURES] = { "mag_alloc_failures", LAB_COUNTER_EVENTS,
				    "frees that went to the slow path because no magazine could be "
				    "allocated" },
	[RC_DEPOT_RECLAIMS] = { "depot_reclaims", LAB_COUNTER_EVENTS,
				"depot magazines returned to the slow path by the periodic tick" },
	[RC_FLUSHES] = { "flushes", LAB_COUNTER_EVENTS,
			 "flush-everything-and-retry after a failed slow-path allocation" },
	[RC_IOVAS_CACHED] = { "iovas_cached", LAB_COUNTER_LEVEL,
			      "ranges held in magazines (still allocated in the tree)" },
	[RC_CACHE_BYTES] = { "cache_bytes", LAB_COUNTER_LEVEL,
			     "bytes of magazine memory held (1024 per magazine)" },
};

enum rcache_phase {
	RC_PHASE_CACHE = 1,
	RC_PHASE_SLOW = 2,
};

static const char *const rcache_phases[] = { "cache", "slowpath" };

/* struct iova_cpu_rcache: one per CPU per bin, each on its own cache line. */
struct rcache_cpu {
	struct lab_qspinlock lock;
	struct iova_magazine *loaded;
	struct iova_magazine *prev;
} LAB_CACHE_ALIGNED;

/* The shared part of struct iova_rcache: one per bin, its depot under its own lock. */
struct rcache_bin {
	struct lab_qspinlock lock;
	uint32_t depot_size;
	struct iova_magazine *depot_list;   /* list depot: full magazines through ->next */
	struct iova_magazine **depot_slots; /* bounded depots: depot_max slots */
} LAB_CACHE_ALIGNED;

struct rcache;

/* What a policy's depot does; both called with the bin's lock held. */
struct rcache_depot_ops {
	/* Park a full magazine; false when there is no room. NULL: no depot at all. */
	bool (*push)(struct rcache *rc, struct rcache_bin *bin, struct iova_magazine *mag);
	/* A full magazine, or NULL when the depot is empty. NULL: no depot at all. */
	struct iova_magazine *(*pop)(struct rcache *rc, struct rcache_bin *bin);
};

struct rcache {
	/* Read-mostly, on the lines every op reads. */
	const struct rcache_depot_ops *ops;
	const struct lab_host *host;
	struct lab_iova_domain *domain;
	struct rcache_cpu *cpus; /* [cpu * IOVA_RANGE_CACHE_MAX_SIZE + bin] */
	uint32_t ncpus;
	uint32_t depot_max;	 /* bounded depots: slots per bin */
	uint32_t reclaim_above;	 /* list depot: reclaim while depot_size is above this */
	uint32_t levels_counted; /* atomic: the init magazines were added to cache_bytes */
	/* Written: each bin on its own lines. */
	struct rcache_bin bins[IOVA_RANGE_CACHE_MAX_SIZE];
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* order_base_2(): ceil(log2(n)), 0 for n <= 1. */
static inline unsigned int rc_order(uint64_t n)
{
	return n <= 1 ? 0 : 64u - (unsigned int)__builtin_clzll(n - 1);
}

/*
 * The size actually allocated for a request: alloc_iova_fast() rounds sizes below the
 * largest cached one up to a power of two, so that any freed range of a bin fits any request
 * of that bin; larger sizes go to the tree as they are.
 */
static inline uint64_t rc_alloc_size(uint64_t size)
{
	if (size < (UINT64_C(1) << (IOVA_RANGE_CACHE_MAX_SIZE - 1)))
		return UINT64_C(1) << rc_order(size);
	return size;
}

static inline struct rcache_cpu *rc_cpu(struct rcache *rc, uint32_t cpu, unsigned int bin)
{
	return &rc->cpus[(size_t)cpu * IOVA_RANGE_CACHE_MAX_SIZE + bin];
}

/* Counters take unsigned deltas; a level going down adds the two's complement. */
static inline void rc_count_down(struct lab_cpu *c, uint32_t id, uint64_t n)
{
	lab_count(c, id, (uint64_t)0 - n);
}

/*
 * init() has no CPU to count on, so the per-CPU loaded/prev magazines it allocated are added
 * to cache_bytes by whichever CPU first enters the cache (one CAS, then one read of a
 * read-mostly line per op).
 */
static inline void rc_count_init_mags(struct lab_cpu *c, struct rcache *rc)
{
	if (lab_load32(&rc->levels_counted, LAB_RELAXED))
		return;
	if (lab_cas32(&rc->levels_counted, 0, 1, LAB_RELAXED) == 0)
		lab_count(c, RC_CACHE_BYTES,
			  2 * (uint64_t)rc->ncpus * IOVA_RANGE_CACHE_MAX_SIZE * IOVA_MAG_BYTES);
}

/* ---- magazines ---------------------------------------------------------------------------- */

static inline struct iova_magazine *mag_alloc(struct lab_cpu *c, struct rcache *rc)
{
	struct iova_magazine *mag = lab_alloc(rc->host, sizeof(*mag)); /* zeroed: empty */

	if (mag)
		lab_count(c, RC_CACHE_BYTES, IOVA_MAG_BYTES);
	return mag;
}

static inline void mag_free(struct lab_cpu *c, struct rcache *rc, struct iova_magazine *mag)
{
	lab_free(rc->host, mag);
	rc_count_down(c, RC_CACHE_BYTES, IOVA_MAG_BYTES);
}

static inline bool mag_full(const struct iova_magazine *mag)
{
	return mag->size == IOVA_MAG_SIZE;
}

static inline bool mag_empty(const struct iova_magazine *mag)
{
	return mag->size == 0;
}

static inline void mag_push(struct iova_magazine *mag, uint64_t pfn)
{
	mag->pfns[mag->size++] = pfn;
}

/*
 * iova_magazine_pop(): the most recently pushed pfn that is <= max_pfn (the caller passes
 * limit - size + 1, so the whole range fits under the limit); the last entry fills the hole.
 * 0 when none fits: only then does the caller fall back to the tree.
 */
static inline uint64_t mag_pop(struct iova_magazine *mag, uint64_t max_pfn)
{
	uint64_t i, pfn;

	for (i = mag->size; i > 0; i--) {
		if (mag->pfns[i - 1] <= max_pfn)
			break;
	}
	if (!i)
		return 0;
	pfn = mag->pfns[i - 1];
	mag->pfns[i - 1] = mag->pfns[--mag->size];
	return pfn;
}

/* iova_magazine_free_pfns(): empty mag into the tree under one acquisition of its lock. */
static inline void mag_free_pfns(struct lab_cpu *c, struct rcache *rc, struct iova_magazine *mag,
				 unsigned int bin)
{
	uint64_t sizes[IOVA_MAG_SIZE];
	uint32_t n = (uint32_t)mag->size;

	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		sizes[i] = UINT64_C(1) << bin;
	lab_iova_slow_free_batch(c, rc->domain, mag->pfns, sizes, n);
	mag->size = 0;
	lab_count(c, RC_SLOW_FREES, n);
	rc_count_down(c, RC_IOVAS_CACHED, n);
}

/* ---- depots ------------------------------------------------------------------------------- */

/* The pre-v6.7 depot: an array of at most depot_max full magazines per bin, used as a stack. */
static inline bool depot_slots_push(struct rcache *rc, struct rcache_bin *bin,
				    struct iova_magazine *mag)
{
	if (bin->depot_size >= rc->depot_max)
		return false;
	bin->depot_slots[bin->depot_size++] = mag;
	return true;
}

static inline struct iova_magazine *depot_slots_pop(struct rcache *rc, struct rcache_bin *bin)
{
	(void)rc;
	return bin->depot_size ? bin->depot_slots[--bin->depot_size] : NULL;
}

/* The v6.7 depot: an unbounded list linked through the (full, so redundant) size word. */
static inline bool depot_list_push(struct rcache *rc, struct rcache_bin *bin,
				   struct iova_magazine *mag)
{
	(void)rc;
	mag->next = bin->depot_list;
	bin->depot_list = mag;
	bin->depot_size++;
	return true;
}

static inline struct iova_magazine *depot_list_pop(struct rcache *rc, struct rcache_bin *bin)
{
	struct iova_magazine *mag = bin->depot_list;

	(void)rc;
	if (!mag)
		return NULL;
	bin->depot_list = mag->next;
	mag->size = IOVA_MAG_SIZE; /* only full magazines are parked */
	bin->depot_size--;
	return mag;
}

/* ---- get and insert ------------------------------------------------------------------------ */

/* __iova_rcache_get(): a cached pfn <= max_pfn from this CPU's bin, or 0. */
static inline uint64_t rcache_get(struct lab_cpu *c, struct rcache *rc, unsigned int b,
				  uint64_t max_pfn)
{
	struct rcache_cpu *cr = rc_cpu(rc, c->id, b);
	struct rcache_bin *bin = &rc->bins[b];
	uint32_t level = RC_LOADED_HITS;
	bool has_pfn = true;
	uint64_t pfn = 0;

	lab_qspin_lock(c, &cr->lock);
	if (!mag_empty(cr->loaded)) {
		/* use it */
	} else if (!mag_empty(cr->prev)) {
		struct iova_magazine *tmp = cr->loaded;

		cr->loaded = cr->prev;
		cr->prev = tmp;
		level = RC_PREV_HITS;
	} else {
		struct iova_magazine *full = NULL;

		if (rc->ops->pop) {
			lab_qspin_lock(c, &bin->lock);
			full = rc->ops->pop(rc, bin);
			if (full) {
				/* As the kernel: the empty loaded one is freed, not kept. */
				mag_free(c, rc, cr->loaded);
				cr->loaded = full;
			}
			lab_qspin_unlock(&bin->lock);
		}
		if (full) {
			lab_count(c, RC_DEPOT_POPS, 1);
			level = RC_DEPOT_HITS;
		} else {
			has_pfn = false;
		}
	}
	if (has_pfn)
		pfn = mag_pop(cr->loaded, max_pfn);
	lab_qspin_unlock(&cr->lock);
	if (pfn) {
		lab_count(c, level, 1);
		rc_count_down(c, RC_IOVAS_CACHED, 1);
	}
	return pfn;
}

/* __iova_rcache_insert(): cache pfn in this CPU's bin; false sends it to the tree instead. */
static inline bool rcache_insert(struct lab_cpu *c, struct rcache *rc, unsigned int b, uint64_t pfn)
{
	struct rcache_cpu *cr = rc_cpu(rc, c->id, b);
	struct rcache_bin *bin = &rc->bins[b];
	struct iova_magazine *to_free = NULL;
	bool can_insert = true;

	lab_qspin_lock(c, &cr->lock);
	if (!mag_full(cr->loaded)) {
		/* room */
	} else if (!mag_full(cr->prev)) {
		struct iova_magazine *tmp = cr->loaded;

		cr->loaded = cr->prev;
		cr->prev = tmp;
	} else if (!rc->ops->push) {
		/* No depot: spill the full loaded magazine to the tree and reuse it. */
		mag_free_pfns(c, rc, cr->loaded, b);
		lab_count(c, RC_MAGS_FREED_FULL, 1);
	} else {
		/* GFP_ATOMIC under the CPU lock, as the kernel. */
		struct iova_magazine *new_mag = mag_alloc(c, rc);

		if (new_mag) {
			lab_qspin_lock(c, &bin->lock);
			if (rc->ops->push(rc, bin, cr->loaded))
				lab_count(c, RC_DEPOT_PUSHES, 1);
			else
				to_free = cr->loaded;
			lab_qspin_unlock(&bin->lock);
			cr->loaded = new_mag;
		} else {
			lab_count(c, RC_MAG_ALLOC_FAILURES, 1);
			can_insert = false;
		}
	}
	if (can_insert) {
		mag_push(cr->loaded, pfn);
		lab_count(c, RC_IOVAS_CACHED, 1);
	}
	lab_qspin_unlock(&cr->lock);

	/* A full depot: the whole magazine goes back, in one batch, outside the CPU lock. */
	if (to_free) {
		mag_free_pfns(c, rc, to_free, b);
		mag_free(c, rc, to_free);
		lab_count(c, RC_MAGS_FREED_FULL, 1);
	}
	return can_insert;
}

/* ---- flushes ------------------------------------------------------------------------------- */

/* free_cpu_cached_iovas(): empty (but keep) one CPU's loaded and prev in every bin. */
static inline void rcache_flush_cpu(struct lab_cpu *c, struct rcache *rc, uint32_t cpu)
{
	for (unsigned int b = 0; b < IOVA_RANGE_CACHE_MAX_SIZE; b++) {
		struct rcache_cpu *cr = rc_cpu(rc, cpu, b);

		lab_qspin_lock(c, &cr->lock);
		mag_free_pfns(c, rc, cr->loaded, b);
		mag_free_pfns(c, rc, cr->prev, b);
		lab_qspin_unlock(&cr->lock);
	}
}

/* free_global_cached_iovas(): empty and free every depot magazine, under each bin's lock. */
static inline void rcache_flush_depots(struct lab_cpu *c, struct rcache *rc)
{
	if (!rc->ops->pop)
		return;
	for (unsigned int b = 0; b < IOVA_RANGE_CACHE_MAX_SIZE; b++) {
		struct rcache_bin *bin = &rc->bins[b];
		struct iova_magazine *mag;

		lab_qspin_lock(c, &bin->lock);
		while ((mag = rc->ops->pop(rc, bin))) {
			mag_free_pfns(c, rc, mag, b);
			mag_free(c, rc, mag);
		}
		lab_qspin_unlock(&bin->lock);
	}
}

/*
 * The list depot's delayed work (iova_depot_work_func()), one step per bin: while a bin's
 * depot holds more than reclaim_above magazines, give one back to the tree.
 */
static inline void rcache_reclaim_step(struct lab_cpu *c, struct rcache *rc)
{
	for (unsigned int b = 0; b < IOVA_RANGE_CACHE_MAX_SIZE; b++) {
		struct rcache_bin *bin = &rc->bins[b];
		struct iova_magazine *mag = NULL;

		lab_qspin_lock(c, &bin->lock);
		if (bin->depot_size > rc->reclaim_above)
			mag = rc->ops->pop(rc, bin);
		lab_qspin_unlock(&bin->lock);
		if (mag) {
			mag_free_pfns(c, rc, mag, b);
			mag_free(c, rc, mag);
			lab_count(c, RC_DEPOT_RECLAIMS, 1);
		}
	}
}

/* ---- life cycle --------------------------------------------------------------------------- */

/* Free what rcache_create() allocated (magazines must be empty or their pfns returned). */
static inline void rcache_release_memory(struct rcache *rc)
{
	const struct lab_host *h = rc->host;

	if (rc->cpus) {
		for (uint32_t i = 0; i < rc->ncpus * IOVA_RANGE_CACHE_MAX_SIZE; i++) {
			lab_free(h, rc->cpus[i].loaded);
			lab_free(h, rc->cpus[i].prev);
		}
	}
	for (unsigned int b = 0; b < IOVA_RANGE_CACHE_MAX_SIZE; b++)
		lab_free(h, rc->bins[b].depot_slots);
	lab_free(h, rc->cpus);
	lab_free(h, rc);
}

/*
 * iova_domain_init_rcaches(): every CPU gets an empty loaded and prev magazine per bin up
 * front; depot_slots > 0 gives each bin an array depot of that many slots.
 */
static inline int rcache_create(struct lab_iova_setup *s, const struct rcache_depot_ops *ops,
				uint32_t depot_slots, struct rcache **out)
{
	const struct lab_host *h = s->host;
	uint32_t n = s->ncpus * IOVA_RANGE_CACHE_MAX_SIZE;
	struct rcache *rc;

	if (!s->ncpus || !s->domain) {
		snprintf(s->err, s->err_len, "iova rcache: need at least one CPU and a domain");
		return -EINVAL;
	}
	rc = lab_alloc(h, sizeof(*rc));
	if (!rc)
		goto err_nomem;
	rc->ops = ops;
	rc->host = h;
	rc->domain = s->domain;
	rc->ncpus = s->ncpus;
	rc->depot_max = depot_slots;
	rc->reclaim_above = s->ncpus;
	rc->cpus = lab_alloc(h, sizeof(*rc->cpus) * n);
	if (!rc->cpus)
		goto err_free;
	for (uint32_t i = 0; i < n; i++) {
		rc->cpus[i].loaded = lab_alloc(h, sizeof(struct iova_magazine));
		rc->cpus[i].prev = lab_alloc(h, sizeof(struct iova_magazine));
		if (!rc->cpus[i].loaded || !rc->cpus[i].prev)
			goto err_free;
	}
	for (unsigned int b = 0; depot_slots && b < IOVA_RANGE_CACHE_MAX_SIZE; b++) {
		rc->bins[b].depot_slots =
			lab_alloc(h, sizeof(*rc->bins[b].depot_slots) * depot_slots);
		if (!rc->bins[b].depot_slots)
			goto err_free;
	}
	*out = rc;
	return 0;

err_free:
	rcache_release_memory(rc);
err_nomem:
	snprintf(s->err, s->err_len, "iova rcache: out of memory for %u CPUs' magazines", s->ncpus);
	return -ENOMEM;
}

/* ---- the ops every policy shares ------------------------------------------------------------ */

/* alloc_iova_fast(). */
static inline uint64_t rcache_op_alloc(struct lab_cpu *c, void *state, uint64_t size,
				       uint64_t limit_pfn, bool flush_rcache)
{
	struct rcache *rc = state;
	unsigned int b;
	uint64_t pfn;

	rc_count_init_mags(c, rc);
	if (!size || size > limit_pfn) {
		lab_count(c, RC_ALLOC_FAILURES, 1);
		return 0;
	}
	size = rc_alloc_size(size);
	b = rc_order(size);
	lab_phase(c, RC_PHASE_CACHE);
	if (b < IOVA_RANGE_CACHE_MAX_SIZE && size <= limit_pfn) {
		pfn = rcache_get(c, rc, b, limit_pfn - size + 1);
		if (pfn)
			return pfn;
	}
	lab_phase(c, RC_PHASE_SLOW);
	for (;;) {
		pfn = lab_iova_slow_alloc(c, rc->domain, size, limit_pfn);
		if (pfn) {
			lab_count(c, RC_SLOW_ALLOCS, 1);
			return pfn;
		}
		if (!flush_rcache)
			break;
		/* Everything cached is still allocated in the tree: give it all back, once. */
		flush_rcache = false;
		lab_count(c, RC_FLUSHES, 1);
		for (uint32_t cpu = 0; cpu < rc->ncpus; cpu++)
			rcache_flush_cpu(c, rc, cpu);
		rcache_flush_depots(c, rc);
	}
	lab_count(c, RC_ALLOC_FAILURES, 1);
	return 0;
}

/* free_iova_fast(). */
static inline void rcache_op_free(struct lab_cpu *c, void *state, uint64_t pfn, uint64_t size)
{
	struct rcache *rc = state;
	unsigned int b;

	rc_count_init_mags(c, rc);
	size = rc_alloc_size(size);
	b = rc_order(size);
	lab_phase(c, RC_PHASE_CACHE);
	if (b < IOVA_RANGE_CACHE_MAX_SIZE && rcache_insert(c, rc, b, pfn))
		return;
	lab_phase(c, RC_PHASE_SLOW);
	lab_iova_slow_free(c, rc->domain, pfn, size);
	lab_count(c, RC_SLOW_FREES, 1);
}

static inline void rcache_op_flush_cpu(struct lab_cpu *c, void *state, uint32_t cpu)
{
	struct rcache *rc = state;

	rc_count_init_mags(c, rc);
	if (cpu < rc->ncpus)
		rcache_flush_cpu(c, rc, cpu);
}

static inline void rcache_op_flush_all(struct lab_cpu *c, void *state)
{
	struct rcache *rc = state;

	rc_count_init_mags(c, rc);
	rcache_flush_depots(c, rc);
}

/* Return everything, then free the magazines; the levels this CPU reports drop to match. */
static inline void rcache_op_fini(struct lab_cpu *c, void *state)
{
	struct rcache *rc = state;

	if (!rc)
		return;
	rc_count_init_mags(c, rc);
	for (uint32_t cpu = 0; cpu < rc->ncpus; cpu++)
		rcache_flush_cpu(c, rc, cpu);
	rcache_flush_depots(c, rc);
	rc_count_down(c, RC_CACHE_BYTES,
		      2 * (uint64_t)rc->ncpus * IOVA_RANGE_CACHE_MAX_SIZE * IOVA_MAG_BYTES);
	rcache_release_memory(rc);
}

#endif /* IOMMULAB_PLUGINS_IOVA_RCACHE_H */
