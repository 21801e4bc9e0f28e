/* SPDX-License-Identifier: MIT */
/* iova_wl -- the IOVA workload (see iova_wl.h). */
#include "workload/iova_wl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/host.h"
#include "workload/rand.h"

struct range {
	uint64_t pfn, size;
	uint64_t due; /* irq: when the I/O completes and the range may be freed */
	uint32_t job; /* irq: the job that submitted it */
};

/* One CPU's outstanding ranges: single producer (the CPU), single consumer (its freer). */
struct iova_ring {
	uint64_t head;			 /* atomic: next to free (consumer) */
	uint64_t tail LAB_CACHE_ALIGNED; /* atomic: next to fill (producer) */
	struct range *v LAB_CACHE_ALIGNED;
	uint64_t rng;		   /* the CPU's own random state */
	uint32_t next_src;	   /* freer: ring to look at next */
	uint32_t src_begin, src_n; /* irq: this CPU's submitters in wl->srcs */
	bool submits;		   /* irq: runs a job (allocates) */
} LAB_CACHE_ALIGNED;

struct iova_wl {
	const struct lab_iova_ops *ops;
	void *state;
	struct lab_iova_domain *domain;
	uint32_t ncpus;
	struct iova_wl_params p;
	uint32_t cap; /* ring capacity, a power of two >= depth */
	uint64_t limit_pfn, limit32_pfn;
	uint32_t try32; /* atomic: the 32-bit workaround still on */
	uint64_t tick_ns, next_tick;
	uint64_t failures;    /* atomic */
	uint32_t counter_off; /* where the iova plugin's counters start in a CPU's slots */
	struct iova_ring *rings;
	uint32_t *srcs;	    /* irq: the submitters, grouped by the CPU their completions go to */
	uint32_t jobs;	    /* irq: submit_cpus, bounded by ncpus */
	uint32_t *inflight; /* irq, atomic: each job's outstanding ranges */
};

static uint64_t pick_size(struct iova_wl *wl, struct iova_ring *r)
{
	uint64_t lo = wl->p.min_pages, hi = wl->p.max_pages;

	if (hi <= lo)
		return lo;
	/* Log-uniform: small sizes as common per octave as large ones. */
	double a = __builtin_log((double)lo), b = __builtin_log((double)hi + 1);
	double u = wl_unit(&r->rng);
	uint64_t size = (uint64_t)__builtin_exp(a + (b - a) * u);
	return size < lo ? lo : size > hi ? hi : size;
}

/*
 * A call into the iova plugin, bracketed for its counters and its phases. In the dma
 * workload a CPU runs two plugins, each counting into its own slots: the CPU's counters
 * point at the iova plugin's while it runs, and back. Its lab_phase(c, k) marks land in the
 * CPU's slot k, which in the dma workload is the cmdq plugin's: those are set aside for the
 * call and the plugin's time moved to its own slots (phase_off + k) afterwards. The time in
 * the plugin outside its marks is "other", as for the cmdq plugin (host_cpu_enter_plugin).
 */
struct plugin_call {
	uint64_t *counters;
	uint64_t stash[LAB_MAX_PHASES];
};

static void plugin_enter(struct iova_wl *wl, struct lab_cpu *c, struct plugin_call *pc)
{
	uint32_t n = wl->p.n_phases;

	pc->counters = c->counters;
	c->counters = pc->counters + wl->counter_off;
	if (!c->phases_on)
		return;
	for (uint32_t k = 1; wl->p.phase_off && k <= n && k < LAB_MAX_PHASES; k++) {
		pc->stash[k] = c->phase_ns[k];
		c->phase_ns[k] = 0;
	}
	host_cpu_enter_plugin(c, lab_now(c));
}

static void plugin_leave(struct iova_wl *wl, struct lab_cpu *c, struct plugin_call *pc)
{
	uint32_t n = wl->p.n_phases, off = wl->p.phase_off;

	c->counters = pc->counters;
	if (!c->phases_on)
		return;
	host_cpu_leave_plugin(c, lab_now(c));
	for (uint32_t k = 1; off && k <= n && off + k < LAB_MAX_PHASES; k++) {
		c->phase_ns[off + k] += c->phase_ns[k];
		c->phase_ns[k] = pc->stash[k];
	}
}

/*
 * blk-mq's default map: CPUs in contiguous blocks of ncpus / irq_cpus per hardware queue, the
 * queue's managed IRQ landing on the block's first CPU. The jobs are spread evenly over the
 * machine, as a scheduler places a handful of busy threads.
 */
static uint32_t irq_cpu_of(const struct iova_wl *wl, uint32_t cpu)
{
	uint32_t q = (uint32_t)((uint64_t)cpu * wl->p.irq_cpus / wl->ncpus);

	return (uint32_t)((uint64_t)q * wl->ncpus / wl->p.irq_cpus);
}

/*
 * Where job j runs at time now: its own CPU, or with migrate_ns a CPU drawn anew every
 * migrate_ns from (seed, job, period) -- a job that sleeps for its completions and is woken
 * wherever the scheduler finds room, leaving its CPU's magazines behind.
 */
static uint32_t job_cpu(const struct iova_wl *wl, uint32_t j, uint64_t now)
{
	if (!wl->p.migrate_ns)
		return (uint32_t)((uint64_t)j * wl->ncpus / wl->jobs);
	uint64_t x = (wl->p.seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)j << 40) ^
		     (now / wl->p.migrate_ns);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((x ^ (x >> 31)) % wl->ncpus);
}

static int irq_setup(struct iova_wl *wl)
{
	uint32_t n = 0;

	if (!wl->p.irq_cpus || wl->p.irq_cpus > wl->ncpus)
		wl->p.irq_cpus = wl->ncpus;
	for (uint32_t j = 0; j < wl->jobs; j++)
		wl->rings[job_cpu(wl, j, 0)].submits = true;
	for (uint32_t i = 0; wl->p.migrate_ns && i < wl->ncpus; i++)
		wl->rings[i].submits = true; /* any CPU may host a job */
	wl->srcs = calloc(wl->ncpus, sizeof(*wl->srcs));
	wl->inflight = calloc(wl->jobs, sizeof(*wl->inflight));
	if (!wl->srcs || !wl->inflight)
		return -ENOMEM;
	for (uint32_t f = 0; f < wl->ncpus; f++) {
		wl->rings[f].src_begin = n;
		for (uint32_t s = 0; s < wl->ncpus; s++)
			if (wl->rings[s].submits && irq_cpu_of(wl, s) == f)
				wl->srcs[n++] = s;
		wl->rings[f].src_n = n - wl->rings[f].src_begin;
	}
	return 0;
}

struct iova_wl *iova_wl_new(const struct lab_iova_ops *ops, void *state,
			    struct lab_iova_domain *domain, uint32_t ncpus,
			    const struct iova_wl_params *p, uint64_t tick_ns, uint32_t counter_off)
{
	struct iova_wl *wl = calloc(1, sizeof(*wl));

	if (!wl)
		return NULL;
	wl->ops = ops;
	wl->state = state;
	wl->domain = domain;
	wl->ncpus = ncpus;
	wl->p = *p;
	if (wl->p.pattern == IOVA_SAME_CPU)
		wl->p.free_every = 1;
	else if (wl->p.pattern == IOVA_PRODUCER_CONSUMER)
		wl->p.free_every = 2;
	if (!wl->p.free_every)
		wl->p.free_every = 1;
	wl->jobs = p->submit_cpus && p->submit_cpus < ncpus ? p->submit_cpus : ncpus;
	wl->cap = 1;
	/* irq with migration: every job may be on one CPU at once, with all its ranges. */
	while (wl->cap <
	       (uint64_t)p->depth * (p->pattern == IOVA_IRQ && p->migrate_ns ? wl->jobs : 1))
		wl->cap <<= 1;
	wl->limit_pfn = p->dma_bits >= 64 ? (UINT64_MAX >> 12) - 1
					  : ((UINT64_C(1) << (p->dma_bits - 12)) - 1);
	wl->limit32_pfn = domain->dma_32bit_pfn - 1;
	wl->try32 = p->dma_bits > 32;
	wl->tick_ns = tick_ns;
	wl->counter_off = counter_off;
	wl->rings = aligned_alloc(LAB_CACHE_LINE, sizeof(*wl->rings) * ncpus);
	if (!wl->rings)
		goto err;
	memset(wl->rings, 0, sizeof(*wl->rings) * ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		wl->rings[i].v = calloc(wl->cap, sizeof(struct range));
		if (!wl->rings[i].v)
			goto err;
		wl->rings[i].rng = (p->seed + 1) * 0x9e3779b97f4a7c15ull + i;
		wl->rings[i].next_src = i;
	}
	if (wl->p.pattern == IOVA_IRQ && irq_setup(wl))
		goto err;
	return wl;
err:
	iova_wl_free(wl);
	return NULL;
}

void iova_wl_free(struct iova_wl *wl)
{
	if (!wl)
		return;
	for (uint32_t i = 0; wl->rings && i < wl->ncpus; i++)
		free(wl->rings[i].v);
	free(wl->rings);
	free(wl->srcs);
	free(wl->inflight);
	free(wl);
}

uint64_t iova_wl_alloc(struct iova_wl *wl, struct lab_cpu *c, uint64_t size)
{
	uint64_t pfn = 0;
	struct plugin_call pc;

	plugin_enter(wl, c, &pc);

	/* iommu_dma_alloc_iova(): below 4 GiB first while the workaround holds. */
	if (__atomic_load_n(&wl->try32, __ATOMIC_RELAXED)) {
		pfn = wl->ops->alloc(c, wl->state, size, wl->limit32_pfn, false);
		if (!pfn)
			__atomic_store_n(&wl->try32, 0, __ATOMIC_RELAXED);
	}
	if (!pfn)
		pfn = wl->ops->alloc(c, wl->state, size, wl->limit_pfn, true);
	if (!pfn)
		__atomic_add_fetch(&wl->failures, 1, __ATOMIC_RELAXED);
	plugin_leave(wl, c, &pc);
	return pfn;
}

void iova_wl_free_range(struct iova_wl *wl, struct lab_cpu *c, uint64_t pfn, uint64_t size)
{
	struct plugin_call pc;

	plugin_enter(wl, c, &pc);
	wl->ops->free(c, wl->state, pfn, size);
	plugin_leave(wl, c, &pc);
}

void iova_wl_tick(struct iova_wl *wl, struct lab_cpu *c)
{
	/* The kernel's delayed work runs on some CPU: here CPU 0, between its ops. */
	if (!wl->tick_ns || c->id != 0 || !wl->ops->tick)
		return;
	uint64_t now = lab_now(c);
	if (!wl->next_tick)
		wl->next_tick = now + wl->tick_ns;
	if (now >= wl->next_tick) {
		struct plugin_call pc;
		plugin_enter(wl, c, &pc);
		wl->ops->tick(c, wl->state);
		plugin_leave(wl, c, &pc);
		wl->next_tick = now + wl->tick_ns;
	}
}

static bool is_freer(const struct iova_wl *wl, uint32_t cpu)
{
	return cpu % wl->p.free_every == 0;
}

static bool allocates(const struct iova_wl *wl, uint32_t cpu)
{
	return !(wl->p.pattern == IOVA_PRODUCER_CONSUMER && is_freer(wl, cpu) &&
		 cpu + 1 < wl->ncpus);
}

/* Take the oldest range of ring src if it has one (and, for one's own ring, only if full). */
static bool pop(struct iova_wl *wl, uint32_t src, bool only_if_full, struct range *out)
{
	struct iova_ring *r = &wl->rings[src];
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (tail == head || (only_if_full && tail - head < wl->p.depth))
		return false;
	*out = r->v[head & (wl->cap - 1)];
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	return true;
}

static int do_free(struct iova_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint32_t group = c->id / wl->p.free_every * wl->p.free_every;
	uint32_t n = wl->p.free_every;
	struct iova_ring *self = &wl->rings[c->id];
	struct range rg;

	if (group + n > wl->ncpus)
		n = wl->ncpus - group;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t src = group + (self->next_src - group + k) % n;
		bool own = src == c->id && allocates(wl, c->id);
		if (!pop(wl, src, own, &rg))
			continue;
		self->next_src = group + (src - group + 1) % n;
		uint64_t t0 = lab_now(c);
		iova_wl_free_range(wl, c, rg.pfn, rg.size);
		if (measuring)
			hist_record(&hists[1], lab_now(c) - t0);
		return 0;
	}
	return 1;
}

/*
 * irq: the I/O's device time, io_ns x [1 - j, 1 + j] drawn from the CPU's seeded sequence.
 * Truncated, not rounded as wl_jittered_ns() is: the shipped irq configs' figures were taken
 * with this, and rounding would move every completion by up to 1 ns.
 */
static uint64_t io_time(struct iova_wl *wl, struct iova_ring *r)
{
	if (!wl->p.io_ns || wl->p.io_jitter <= 0)
		return wl->p.io_ns;
	double u = wl_unit(&r->rng);
	return (uint64_t)((double)wl->p.io_ns * (1.0 + wl->p.io_jitter * (2.0 * u - 1.0)));
}

static int do_alloc(struct iova_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct iova_ring *r = &wl->rings[c->id];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	if (tail - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) >= wl->p.depth)
		return 1; /* queue full: wait for the freer */
	uint64_t size = pick_size(wl, r);
	uint64_t t0 = lab_now(c);
	uint64_t pfn = iova_wl_alloc(wl, c, size);
	if (measuring)
		hist_record(&hists[0], lab_now(c) - t0);
	if (pfn) {
		r->v[tail & (wl->cap - 1)] = (struct range){ .pfn = pfn, .size = size };
		__atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

int iova_wl_job_here(const struct iova_wl *wl, struct lab_cpu *c)
{
	uint64_t now;

	if (!wl->rings[c->id].submits)
		return -1;
	now = lab_now(c);
	for (uint32_t j = 0; j < wl->jobs; j++)
		if (job_cpu(wl, j, now) == c->id &&
		    __atomic_load_n(&wl->inflight[j], __ATOMIC_ACQUIRE) < wl->p.depth)
			return (int)j;
	return -1;
}

void iova_wl_irq_push(struct iova_wl *wl, struct lab_cpu *c, int job, uint64_t pfn, uint64_t size)
{
	struct iova_ring *r = &wl->rings[c->id];
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	__atomic_add_fetch(&wl->inflight[job], 1, __ATOMIC_RELAXED);
	r->v[tail & (wl->cap - 1)] =
		(struct range){ pfn, size, lab_now(c) + io_time(wl, r), (uint32_t)job };
	__atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
}

/* irq: submit one range for a job on this CPU with room; 1 when there is none. */
static int irq_alloc(struct iova_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	int job = iova_wl_job_here(wl, c);

	if (job < 0)
		return 1;
	uint64_t size = pick_size(wl, &wl->rings[c->id]);
	uint64_t t0 = lab_now(c);
	uint64_t pfn = iova_wl_alloc(wl, c, size);
	if (measuring)
		hist_record(&hists[0], lab_now(c) - t0);
	if (pfn)
		iova_wl_irq_push(wl, c, job, pfn, size);
	return 0;
}

bool iova_wl_irq_pop(struct iova_wl *wl, struct lab_cpu *c, uint64_t *pfn, uint64_t *size)
{
	struct iova_ring *self = &wl->rings[c->id];
	uint64_t now = lab_now(c);

	/* Round robin over this CPU's submitters, the oldest completed range of each. */
	for (uint32_t k = 0; k < self->src_n; k++) {
		uint32_t i = (self->next_src + k) % self->src_n;
		struct iova_ring *r = &wl->rings[wl->srcs[self->src_begin + i]];
		uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
		uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

		if (tail == head || r->v[head & (wl->cap - 1)].due > now)
			continue;
		*pfn = r->v[head & (wl->cap - 1)].pfn;
		*size = r->v[head & (wl->cap - 1)].size;
		__atomic_sub_fetch(&wl->inflight[r->v[head & (wl->cap - 1)].job], 1,
				   __ATOMIC_RELEASE);
		__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
		self->next_src = (i + 1) % self->src_n;
		return true;
	}
	return false;
}

/* irq: complete (free) one completed range of one of this CPU's submitters. */
static int irq_free(struct iova_wl *wl, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	uint64_t pfn, size;

	if (!iova_wl_irq_pop(wl, c, &pfn, &size))
		return 1;
	uint64_t t0 = lab_now(c);
	iova_wl_free_range(wl, c, pfn, size);
	if (measuring)
		hist_record(&hists[1], lab_now(c) - t0);
	return 0;
}

uint64_t iova_wl_idle_until(const struct iova_wl *wl, struct lab_cpu *c, uint64_t now)
{
	const struct iova_ring *self = &wl->rings[c->id];
	uint64_t until = UINT64_MAX;

	if (wl->p.pattern != IOVA_IRQ)
		return 0;
	/* A job here waits for an IRQ CPU's free: that is another CPU's doing, not time's. */
	for (uint32_t j = 0; self->submits && j < wl->jobs; j++)
		if (job_cpu(wl, j, now) == c->id)
			return 0;
	/* A job may move here at the next migration. */
	if (self->submits && wl->p.migrate_ns)
		until = (now / wl->p.migrate_ns + 1) * wl->p.migrate_ns;
	/* The policy's periodic work runs on CPU 0's op. */
	if (c->id == 0 && wl->tick_ns && wl->ops->tick) {
		if (!wl->next_tick)
			return 0;
		if (wl->next_tick < until)
			until = wl->next_tick;
	}
	if (self->src_n) {
		/*
		 * An IRQ CPU: the head of each submitter's queue completes at its due time, and a
		 * range submitted from now on completes io_ns x (1 - io_jitter) later at the
		 * earliest (the sim runs the earliest CPU: every other one is at now or later).
		 */
		double lo =
			(double)wl->p.io_ns * (1.0 - (wl->p.io_jitter > 0 ? wl->p.io_jitter : 0));
		uint64_t soonest = now + (uint64_t)lo;

		if (soonest <= now)
			return 0;
		if (soonest < until)
			until = soonest;
		for (uint32_t k = 0; k < self->src_n; k++) {
			const struct iova_ring *r = &wl->rings[wl->srcs[self->src_begin + k]];
			uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
			uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

			if (tail != head && r->v[head & (wl->cap - 1)].due < until)
				until = r->v[head & (wl->cap - 1)].due;
		}
	}
	return until == UINT64_MAX ? UINT64_MAX : until > now ? until : 0;
}

int iova_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct iova_wl *wl = arg;
	int rc = 1;

	if (wl->p.pattern == IOVA_IRQ) {
		iova_wl_tick(wl, c);
		rc = irq_free(wl, c, hists, measuring);
		if (rc > 0)
			rc = irq_alloc(wl, c, hists, measuring);
		if (rc == 0)
			lab_delay_ns(c, wl->p.think_ns);
		else
			lab_cpu_relax();
		return rc;
	}

	iova_wl_tick(wl, c);
	if (is_freer(wl, c->id))
		rc = do_free(wl, c, hists, measuring);
	if (rc > 0 && allocates(wl, c->id))
		rc = do_alloc(wl, c, hists, measuring);
	if (rc == 0)
		lab_delay_ns(c, wl->p.think_ns);
	else
		lab_cpu_relax();
	return rc;
}

void iova_wl_drain(struct iova_wl *wl, struct lab_cpu *c)
{
	struct range rg;

	for (uint32_t i = 0; i < wl->ncpus; i++)
		while (pop(wl, i, false, &rg))
			iova_wl_free_range(wl, c, rg.pfn, rg.size);
}

void iova_wl_discard(struct iova_wl *wl)
{
	struct range rg;

	for (uint32_t i = 0; i < wl->ncpus; i++)
		while (pop(wl, i, false, &rg))
			;
}

uint64_t iova_wl_failures(const struct iova_wl *wl)
{
	return __atomic_load_n(&wl->failures, __ATOMIC_RELAXED);
}
