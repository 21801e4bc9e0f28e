/* SPDX-License-Identifier: MIT */
/*
 * slowpath -- the kernel's rbtree IOVA allocator (alloc_iova/free_iova of
 * drivers/iommu/iova.c, described in reference section 4.1), written from that description.
 *
 * Everything that changes the tree, the cached hints or max32_alloc_size happens under the
 * one domain lock, exactly where the kernel holds iova_rbtree_lock; the node for a new range
 * is allocated before taking the lock (the kernel's alloc_iova_mem() in alloc_iova()).
 */
#ifdef LAB_ENGINE_SIM
/* The sim build's own names for the functions both builds define. */
#define slowpath_alloc	       slowpath_alloc_sim
#define slowpath_release       slowpath_release_sim
#define slowpath_release_batch slowpath_release_batch_sim
#endif

#include "iova/slowpath.h"

#include <errno.h>
#include <stdbool.h>

#include "iova/rbtree.h"

struct iova_node {
	struct rb_node rb;
	uint64_t pfn_lo;
	uint64_t pfn_hi;
};

struct iova_slowpath {
	struct lab_iova_domain dom; /* what plugins get; dom.priv points back here */
	const struct lab_host *host;
	struct lab_qspinlock lock; /* iova_rbtree_lock */
	struct rb_root root;
	struct rb_node *cached_node;   /* where the next search above 32 bits starts */
	struct rb_node *cached32_node; /* same for limits inside the 32-bit space */
	uint64_t start_pfn;
	uint64_t dma_32bit_pfn;
	uint64_t max32_alloc_size; /* a 32-bit request this big or bigger cannot succeed */
	struct iova_node anchor;
	struct slowpath_stats stats; /* written under lock */
};

static struct iova_node *to_iova(const struct rb_node *n)
{
	return rb_entry(n, struct iova_node, rb);
}

/*
 * The tree's memory as the sim engine sees it. This file is built twice: natively, where the
 * hardware prices every node the walk touches, and for the sim (LAB_ENGINE_SIM,
 * framework/engine/sim/meson.build), where the lock is the simulated one and each node the walk
 * reads, or the change writes, is one access to its cache line in the memory model: so the slow
 * path takes virtual time, and its lines move between the CPUs that take the lock in turn. The
 * touches read or rewrite a field's own value, under the lock.
 */
#ifdef LAB_ENGINE_SIM
static void sp_read(const struct rb_node *n)
{
	(void)lab_load64(&to_iova(n)->pfn_lo, LAB_RELAXED);
}

static void sp_write(struct rb_node *n)
{
	lab_store64(&to_iova(n)->pfn_lo, to_iova(n)->pfn_lo, LAB_RELAXED);
}

/* The domain's own line: the hints and the counters every locked operation updates. */
static void sp_write_domain(struct iova_slowpath *sp)
{
	lab_store64(&sp->stats.lock_acquires, sp->stats.lock_acquires, LAB_RELAXED);
}
#else
static inline void sp_read(const struct rb_node *n)
{
	(void)n;
}

static inline void sp_write(struct rb_node *n)
{
	(void)n;
}

static inline void sp_write_domain(struct iova_slowpath *sp)
{
	(void)sp;
}
#endif

/* The kernel's fls_long(): 1-based index of the highest set bit, 0 for 0. */
static unsigned int fls64_(uint64_t x)
{
	return x ? 64u - (unsigned int)__builtin_clzll(x) : 0;
}

/*
 * Take the domain lock, counting contention. The uncontended case costs one trylock; only a
 * CPU that has to wait reads the clock, so the accounting is cheap where it matters.
 */
static void sp_lock(struct lab_cpu *c, struct iova_slowpath *sp)
{
	uint64_t t0;

	if (lab_qspin_trylock(&sp->lock)) {
		sp->stats.lock_acquires++;
		sp_write_domain(sp);
		return;
	}
	t0 = lab_now(c);
	lab_qspin_lock(c, &sp->lock);
	sp->stats.lock_acquires++;
	sp->stats.lock_contended++;
	sp->stats.lock_wait_ns += lab_now(c) - t0;
	sp_write_domain(sp);
}

static void sp_unlock(struct iova_slowpath *sp)
{
	lab_qspin_unlock(&sp->lock);
}

/* __get_cached_rbnode(): limit is exclusive here, as in __alloc_and_insert_iova_range(). */
static struct rb_node *sp_cached_node(struct iova_slowpath *sp, uint64_t limit)
{
	return limit <= sp->dma_32bit_pfn ? sp->cached32_node : sp->cached_node;
}

/*
 * iova_find_limit(): where the second pass starts. Above the 32-bit space nothing is cached
 * below the anchor's reach, so start at the anchor; otherwise the lowest node that ends at
 * or above the (exclusive) limit, i.e. the first node the walk must step below.
 */
static struct rb_node *sp_find_limit(struct iova_slowpath *sp, uint64_t limit)
{
	struct rb_node *n = sp->root.node, *best = &sp->anchor.rb;

	if (limit > sp->dma_32bit_pfn)
		return &sp->anchor.rb;
	while (n) {
		sp_read(n);
		if (to_iova(n)->pfn_hi >= limit) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

/*
 * Link a node whose range is free and lies just below start: the kernel starts the descent
 * at the node the search stopped on rather than at the root, since that is where it belongs.
 */
static void sp_insert(struct iova_slowpath *sp, struct iova_node *new, struct rb_node *start)
{
	struct rb_node **link, *parent = start->parent;

	/* The child slot that holds start: descending from it writes into the tree. */
	if (!parent)
		link = &sp->root.node;
	else if (parent->left == start)
		link = &parent->left;
	else
		link = &parent->right;
	while (*link) {
		parent = *link;
		sp_read(parent);
		if (new->pfn_lo < to_iova(parent)->pfn_lo)
			link = &parent->left;
		else
			link = &parent->right;
	}
	rb_link_node(&new->rb, parent, link);
	rb_insert_color(&new->rb, &sp->root);
	sp_write(&new->rb);
	if (parent)
		sp_write(parent);
}

/*
 * __alloc_and_insert_iova_range(): top-down first fit below limit (exclusive), from the
 * cached hint, with one second pass above the hint when the first found nothing. Called with
 * the lock held; 0 on success, -ENOMEM when there is no room.
 */
static int sp_alloc_range(struct iova_slowpath *sp, struct iova_node *new, uint64_t size,
			  uint64_t limit)
{
	uint64_t align_mask = ~UINT64_C(0) << fls64_(size - 1);
	uint64_t high_pfn = limit, low_pfn = sp->start_pfn, new_pfn, retry_pfn;
	struct rb_node *curr, *prev;

	if (limit <= sp->dma_32bit_pfn && size >= sp->max32_alloc_size) {
		sp->stats.fast_fails++;
		return -ENOMEM;
	}
	curr = sp_cached_node(sp, limit);
	retry_pfn = to_iova(curr)->pfn_hi;
retry:
	/* Step down over allocated ranges until the gap below curr fits the aligned range. */
	do {
		sp_read(curr);
		sp->stats.walk_nodes++;
		if (to_iova(curr)->pfn_lo < high_pfn)
			high_pfn = to_iova(curr)->pfn_lo;
		new_pfn = (high_pfn - size) & align_mask;
		prev = curr;
		curr = rb_prev(curr);
	} while (curr && new_pfn <= to_iova(curr)->pfn_hi && new_pfn >= low_pfn);

	if (high_pfn < size || new_pfn < low_pfn) {
		/*
		 * Frees above the hint leave space the first pass cannot see; look there once
		 * (commit 4e89dce72521, "Retry from last rb tree node if iova search fails").
		 */
		if (low_pfn == sp->start_pfn && retry_pfn < limit) {
			sp->stats.retries++;
			high_pfn = limit;
			low_pfn = retry_pfn + 1;
			curr = sp_find_limit(sp, limit);
			goto retry;
		}
		/* As the kernel: recorded for any failed request, consulted for 32-bit ones. */
		sp->max32_alloc_size = size;
		return -ENOMEM;
	}

	new->pfn_lo = new_pfn;
	new->pfn_hi = new_pfn + size - 1;
	sp_insert(sp, new, prev);
	/* __cached_rbnode_insert_update(): the next search starts below the newest range. */
	if (new->pfn_hi < sp->dma_32bit_pfn)
		sp->cached32_node = &new->rb;
	else
		sp->cached_node = &new->rb;
	return 0;
}

uint64_t slowpath_alloc(struct lab_cpu *c, struct iova_slowpath *sp, uint64_t size,
			uint64_t limit_pfn)
{
	struct iova_node *new;
	uint64_t limit;
	int ret;

	/* Nothing may reach the anchor; the exclusive limit must stay representable. */
	if (limit_pfn >= IOVA_ANCHOR - 1)
		limit_pfn = IOVA_ANCHOR - 2;
	limit = limit_pfn + 1;
	if (!size || size > limit) {
		sp_lock(c, sp);
		sp->stats.failures++;
		sp_unlock(sp);
		return 0;
	}
	new = lab_alloc(sp->host, sizeof(*new));
	sp_lock(c, sp);
	if (!new) {
		sp->stats.failures++;
		sp_unlock(sp);
		return 0;
	}
	ret = sp_alloc_range(sp, new, size, limit);
	if (ret) {
		sp->stats.failures++;
		sp_unlock(sp);
		lab_free(sp->host, new);
		return 0;
	}
	sp->stats.allocs++;
	if (++sp->stats.live > sp->stats.max_live)
		sp->stats.max_live = sp->stats.live;
	sp_unlock(sp);
	return new->pfn_lo;
}

/* private_find_iova(): the node whose range contains pfn, or NULL. Lock held. */
static struct iova_node *sp_find(struct iova_slowpath *sp, uint64_t pfn)
{
	struct rb_node *n = sp->root.node;

	while (n) {
		struct iova_node *iova = to_iova(n);

		sp_read(n);
		if (pfn < iova->pfn_lo)
			n = n->left;
		else if (pfn > iova->pfn_hi)
			n = n->right;
		else
			return iova;
	}
	return NULL;
}

/*
 * __cached_rbnode_delete_update() then erase. The hints move up past the freed range so the
 * next search can reuse it; freeing anything below 4 GiB may make room for any 32-bit size.
 */
static void sp_remove(struct iova_slowpath *sp, struct iova_node *free)
{
	struct iova_node *cached32 = to_iova(sp->cached32_node);
	struct iova_node *cached = to_iova(sp->cached_node);

	if (free == cached32 ||
	    (free->pfn_hi < sp->dma_32bit_pfn && free->pfn_lo >= cached32->pfn_lo))
		sp->cached32_node = rb_next(&free->rb);
	if (free->pfn_lo < sp->dma_32bit_pfn)
		sp->max32_alloc_size = sp->dma_32bit_pfn;
	if (free->pfn_lo >= cached->pfn_lo)
		sp->cached_node = rb_next(&free->rb);
	if (free->rb.parent)
		sp_write(free->rb.parent);
	rb_erase(&free->rb, &sp->root);
	sp->stats.frees++;
	sp->stats.live--;
}

/* Find and remove one range, lock held; the node to lab_free() or NULL. */
static struct iova_node *sp_release_locked(struct iova_slowpath *sp, uint64_t pfn, uint64_t size)
{
	struct iova_node *iova = sp_find(sp, pfn);

	/* The kernel frees by pfn only; here a stray or mis-sized free is counted as a bug. */
	if (!iova || iova == &sp->anchor || iova->pfn_lo != pfn) {
		sp->stats.free_errors++;
		return NULL;
	}
	if (iova->pfn_hi - iova->pfn_lo + 1 != size)
		sp->stats.free_errors++;
	sp_remove(sp, iova);
	return iova;
}

void slowpath_release(struct lab_cpu *c, struct iova_slowpath *sp, uint64_t pfn, uint64_t size)
{
	struct iova_node *iova;

	sp_lock(c, sp);
	iova = sp_release_locked(sp, pfn, size);
	sp_unlock(sp);
	lab_free(sp->host, iova);
}

/* iova_magazine_free_pfns(): every range under one acquisition of the tree lock. */
void slowpath_release_batch(struct lab_cpu *c, struct iova_slowpath *sp, const uint64_t *pfns,
			    const uint64_t *sizes, uint32_t n)
{
	sp_lock(c, sp);
	sp->stats.batches++;
	for (uint32_t i = 0; i < n; i++)
		lab_free(sp->host, sp_release_locked(sp, pfns[i], sizes[i]));
	sp_unlock(sp);
}

static uint64_t sp_dom_alloc(struct lab_cpu *c, struct lab_iova_domain *d, uint64_t size,
			     uint64_t limit_pfn)
{
	return slowpath_alloc(c, d->priv, size, limit_pfn);
}

static void sp_dom_free(struct lab_cpu *c, struct lab_iova_domain *d, uint64_t pfn, uint64_t size)
{
	slowpath_release(c, d->priv, pfn, size);
}

static void sp_dom_free_batch(struct lab_cpu *c, struct lab_iova_domain *d, const uint64_t *pfns,
			      const uint64_t *sizes, uint32_t n)
{
	slowpath_release_batch(c, d->priv, pfns, sizes, n);
}

#ifdef LAB_ENGINE_SIM
void slowpath_use_sim(struct iova_slowpath *sp)
{
	sp->dom.alloc = sp_dom_alloc;
	sp->dom.free = sp_dom_free;
	sp->dom.free_batch = sp_dom_free_batch;
}
#else
struct iova_slowpath *slowpath_new(const struct lab_host *h, uint64_t start_pfn,
				   uint64_t dma_32bit_pfn)
{
	struct iova_slowpath *sp;

	if (!start_pfn || start_pfn >= IOVA_ANCHOR - 1 || !dma_32bit_pfn)
		return NULL;
	sp = lab_alloc(h, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->dom.struct_size = sizeof(sp->dom);
	sp->dom.dma_32bit_pfn = dma_32bit_pfn;
	sp->dom.alloc = sp_dom_alloc;
	sp->dom.free = sp_dom_free;
	sp->dom.free_batch = sp_dom_free_batch;
	sp->dom.priv = sp;
	sp->host = h;
	sp->start_pfn = start_pfn;
	sp->dma_32bit_pfn = dma_32bit_pfn;
	sp->max32_alloc_size = dma_32bit_pfn;
	/* init_iova_domain(): the anchor is the tree's permanent top and both hints' start. */
	sp->anchor.pfn_lo = IOVA_ANCHOR;
	sp->anchor.pfn_hi = IOVA_ANCHOR;
	rb_link_node(&sp->anchor.rb, NULL, &sp->root.node);
	rb_insert_color(&sp->anchor.rb, &sp->root);
	sp->cached_node = &sp->anchor.rb;
	sp->cached32_node = &sp->anchor.rb;
	return sp;
}

void slowpath_free(struct iova_slowpath *sp)
{
	struct rb_node *n;

	if (!sp)
		return;
	/* put_iova_domain(): drop every node; unlinking one at a time keeps this simple. */
	while ((n = rb_first(&sp->root)) != &sp->anchor.rb) {
		rb_erase(n, &sp->root);
		lab_free(sp->host, to_iova(n));
	}
	lab_free(sp->host, sp);
}

struct lab_iova_domain *slowpath_domain(struct iova_slowpath *sp)
{
	return &sp->dom;
}

struct iova_slowpath *slowpath_from_domain(struct lab_iova_domain *d)
{
	return d->priv;
}

void slowpath_get_stats(const struct iova_slowpath *sp, struct slowpath_stats *out)
{
	*out = sp->stats;
}

uint64_t slowpath_live(const struct iova_slowpath *sp)
{
	return sp->stats.live;
}

uint64_t slowpath_allocs_held(const struct iova_slowpath *sp)
{
	return 1 + sp->stats.live;
}

int slowpath_check(const struct iova_slowpath *sp,
		   void (*fn)(uint64_t pfn_lo, uint64_t pfn_hi, void *arg), void *arg)
{
	const struct rb_node *n;
	bool seen_cached = false, seen_cached32 = false;
	uint64_t count = 0, next_free = sp->start_pfn;

	if (rb_check(&sp->root) < 0)
		return -EINVAL;
	for (n = rb_first(&sp->root); n; n = rb_next(n)) {
		const struct iova_node *iova = to_iova(n);

		seen_cached |= n == sp->cached_node;
		seen_cached32 |= n == sp->cached32_node;
		if (iova->pfn_lo > iova->pfn_hi || iova->pfn_lo < next_free)
			return -EINVAL;
		if (n == &sp->anchor.rb)
			return rb_next(n) || count != sp->stats.live || !seen_cached ||
					       !seen_cached32
				       ? -EINVAL
				       : 0;
		next_free = iova->pfn_hi + 1;
		count++;
		if (fn)
			fn(iova->pfn_lo, iova->pfn_hi, arg);
	}
	return -EINVAL; /* no anchor */
}
#endif /* !LAB_ENGINE_SIM */
