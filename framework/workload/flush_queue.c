/* SPDX-License-Identifier: MIT */
/* flush_queue -- dma-iommu.c's flush queue for lazy invalidation (see flush_queue.h). */
#include "workload/flush_queue.h"

#include "scenario/scenario.h"

#include <stdlib.h>
#include <string.h>

/* Entries moved out of a ring per lock hold: frees are made with the lock dropped. */
#define FQ_TAKE 64

struct fq_entry {
	uint64_t pfn, pages;
	uint64_t stamp; /* the domain's flush start count when it was queued */
};

struct fq_ring {
	uint32_t lock;	     /* fq->lock: its CPU's (or every CPU's, single) and the timeout's */
	uint64_t head, tail; /* under lock: entries [head, tail) */
	struct fq_entry *e;
} LAB_CACHE_ALIGNED;

struct flush_queue {
	const struct fq_ops *ops;
	void *arg;
	uint32_t nrings, size;
	uint64_t timeout_ns;
	uint64_t start_cnt, finish_cnt; /* atomics: fq_flush_start_cnt / fq_flush_finish_cnt */
	uint64_t timer;			/* atomic: timer_word(expiry, arming CPU); 0 when off */
	struct fq_stats stats;		/* atomics */
	struct fq_ring *rings;
};

/*
 * The armed timer in one word, so that arming is one CAS: its expiry (ns, 52 bits: 52 days)
 * and the CPU that armed it (mod_timer() queues it there), which is the one that runs it.
 */
#define TIMER_CPU_BITS 12

_Static_assert(SCENARIO_MAX_CPUS <= 1u << TIMER_CPU_BITS, "every CPU id must fit the timer word");

static uint64_t timer_word(uint64_t expiry, uint32_t cpu)
{
	return expiry << TIMER_CPU_BITS | (cpu & ((1u << TIMER_CPU_BITS) - 1));
}

static uint64_t timer_expiry(uint64_t t)
{
	return t >> TIMER_CPU_BITS;
}

static uint32_t timer_cpu(uint64_t t)
{
	return (uint32_t)(t & ((1u << TIMER_CPU_BITS) - 1));
}

static void ring_lock(struct fq_ring *r)
{
	while (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&r->lock, __ATOMIC_RELAXED))
			;
}

static void ring_unlock(struct fq_ring *r)
{
	__atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
}

static void stat_add(uint64_t *s, uint64_t n)
{
	__atomic_add_fetch(s, n, __ATOMIC_RELAXED);
}

struct flush_queue *fq_new(uint32_t ncpus, bool single, uint32_t size, uint64_t timeout_ns,
			   const struct fq_ops *ops, void *arg)
{
	struct flush_queue *fq = calloc(1, sizeof(*fq));

	if (!fq || !size)
		goto err;
	fq->ops = ops;
	fq->arg = arg;
	fq->nrings = single ? 1 : ncpus;
	fq->size = size;
	fq->timeout_ns = timeout_ns ? timeout_ns : 1;
	fq->rings = aligned_alloc(LAB_CACHE_LINE, sizeof(*fq->rings) * fq->nrings);
	if (!fq->rings)
		goto err;
	memset(fq->rings, 0, sizeof(*fq->rings) * fq->nrings);
	for (uint32_t i = 0; i < fq->nrings; i++) {
		fq->rings[i].e = calloc(size, sizeof(struct fq_entry));
		if (!fq->rings[i].e)
			goto err;
	}
	return fq;
err:
	fq_free(fq);
	return NULL;
}

void fq_free(struct flush_queue *fq)
{
	if (!fq)
		return;
	for (uint32_t i = 0; fq->rings && i < fq->nrings; i++)
		free(fq->rings[i].e);
	free(fq->rings);
	free(fq);
}

static struct fq_ring *ring_of(struct flush_queue *fq, const struct lab_cpu *c)
{
	return &fq->rings[fq->nrings == 1 ? 0 : c->id];
}

/* fq_flush_iotlb(): entries stamped before the start bump are covered once it finishes. */
static int flush(struct flush_queue *fq, struct lab_cpu *c, enum fq_flush_why why)
{
	__atomic_add_fetch(&fq->start_cnt, 1, __ATOMIC_SEQ_CST);
	int rc = fq->ops->flush(fq->arg, c, why);
	__atomic_add_fetch(&fq->finish_cnt, 1, __ATOMIC_SEQ_CST);
	stat_add(why == FQ_FLUSH_FULL ? &fq->stats.flush_full : &fq->stats.flush_timeout, 1);
	return rc;
}

/* fq_ring_free(): give back, oldest first, every entry a completed flush covers. */
static void free_covered(struct flush_queue *fq, struct lab_cpu *c, struct fq_ring *r)
{
	struct fq_entry take[FQ_TAKE];
	uint32_t n;

	do {
		uint64_t finish = __atomic_load_n(&fq->finish_cnt, __ATOMIC_SEQ_CST);
		n = 0;
		ring_lock(r);
		while (n < FQ_TAKE && r->head != r->tail && r->e[r->head % fq->size].stamp < finish)
			take[n++] = r->e[r->head++ % fq->size];
		ring_unlock(r);
		for (uint32_t i = 0; i < n; i++)
			fq->ops->free(fq->arg, c, take[i].pfn, take[i].pages);
		stat_add(&fq->stats.freed, n);
	} while (n == FQ_TAKE);
}

/*
 * fq_flush_timeout(), run by the CPU that armed the timer (mod_timer() queues it on the
 * current CPU) once it has expired: the flush, then every ring's covered entries freed by
 * that CPU, as the kernel's timer walks every CPU's queue (so they go into its IOVA cache,
 * not their own CPUs').
 */
static int timer_check(struct flush_queue *fq, struct lab_cpu *c, uint64_t now)
{
	uint64_t t = __atomic_load_n(&fq->timer, __ATOMIC_ACQUIRE);
	int rc;

	if (!t || now < timer_expiry(t) || timer_cpu(t) != c->id ||
	    !__atomic_compare_exchange_n(&fq->timer, &t, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;
	rc = flush(fq, c, FQ_FLUSH_TIMEOUT);
	for (uint32_t i = 0; !rc && i < fq->nrings; i++)
		free_covered(fq, c, &fq->rings[i]);
	return rc;
}

int fq_queue(struct flush_queue *fq, struct lab_cpu *c, uint64_t pfn, uint64_t pages, uint64_t now)
{
	struct fq_ring *r = ring_of(fq, c);
	int rc = timer_check(fq, c, now);

	if (rc)
		return rc;
	for (;;) {
		free_covered(fq, c, r);
		ring_lock(r);
		if (r->tail - r->head < fq->size) {
			/* The PTEs were cleared before this read (smp_mb() in queue_iova). */
			uint64_t stamp = __atomic_load_n(&fq->start_cnt, __ATOMIC_SEQ_CST);
			r->e[r->tail++ % fq->size] = (struct fq_entry){ pfn, pages, stamp };
			ring_unlock(r);
			break;
		}
		ring_unlock(r);
		rc = flush(fq, c, FQ_FLUSH_FULL);
		if (rc)
			return rc;
	}
	stat_add(&fq->stats.queued, 1);
	uint64_t off = 0;
	if (!__atomic_load_n(&fq->timer, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(&fq->timer, &off,
					    timer_word(now + fq->timeout_ns, c->id), false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	return 0;
}

uint64_t fq_timer_due(const struct flush_queue *fq, const struct lab_cpu *c)
{
	uint64_t t = __atomic_load_n(&fq->timer, __ATOMIC_ACQUIRE);

	return t && timer_cpu(t) == c->id ? timer_expiry(t) : UINT64_MAX;
}

int fq_tick(struct flush_queue *fq, struct lab_cpu *c, uint64_t now)
{
	int rc = timer_check(fq, c, now);

	free_covered(fq, c, ring_of(fq, c));
	return rc;
}

uint64_t fq_drain(struct flush_queue *fq, struct lab_cpu *c)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < fq->nrings; i++) {
		struct fq_ring *r = &fq->rings[i];
		for (; r->head != r->tail; r->head++, n++) {
			const struct fq_entry *e = &r->e[r->head % fq->size];
			fq->ops->free(fq->arg, c, e->pfn, e->pages);
		}
	}
	stat_add(&fq->stats.drained, n);
	__atomic_store_n(&fq->timer, 0, __ATOMIC_RELAXED);
	return n;
}

uint64_t fq_pending(const struct flush_queue *fq)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < fq->nrings; i++)
		n += __atomic_load_n(&fq->rings[i].tail, __ATOMIC_ACQUIRE) -
		     __atomic_load_n(&fq->rings[i].head, __ATOMIC_ACQUIRE);
	return n;
}

void fq_get_stats(const struct flush_queue *fq, struct fq_stats *out)
{
	out->flush_full = __atomic_load_n(&fq->stats.flush_full, __ATOMIC_RELAXED);
	out->flush_timeout = __atomic_load_n(&fq->stats.flush_timeout, __ATOMIC_RELAXED);
	out->queued = __atomic_load_n(&fq->stats.queued, __ATOMIC_RELAXED);
	out->freed = __atomic_load_n(&fq->stats.freed, __ATOMIC_RELAXED);
	out->drained = __atomic_load_n(&fq->stats.drained, __ATOMIC_RELAXED);
}
