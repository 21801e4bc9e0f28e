/* SPDX-License-Identifier: MIT */
/*
 * nocache -- the iova plugin author's template: a policy that caches nothing. Every alloc
 * and free goes straight to the host's slow path (the rbtree allocator behind one lock, as
 * drivers/iommu/iova.c without its rcache), so it is both correct and the baseline a cache
 * has to beat. Copy this file, rename it, change SKEL_NAME, and put your cache in front of
 * the slow path. Build it out of tree against an installed iommulab with the one command
 *
 *	cc $(pkg-config --cflags iommulab) -O2 -shared -fPIC -o iova-nocache.so nocache.c
 *
 * and for the sim engine (engine = sim: virtual CPUs, same source) add -DLAB_ENGINE_SIM and
 * name the output iova-nocache.sim.so; the Makefile beside this file builds both.
 *
 * (the file must be called iova-<name>.so where <name> is .name in the descriptor below).
 *
 * What a real cache must keep from here: the size rounding (skel_round_size()), handing back
 * to the domain what it cannot hold, and the flush-and-retry-once on allocation failure. The
 * ranges a cache holds stay allocated in the domain, as in the kernel, so flush_cpu() and
 * flush_all() must return every one of them; fini() must leave nothing behind.
 *
 * Rules of the platform (lab.h): shared memory from lab_alloc(), shared words through
 * lab_load/store/cas/fetch_*, locks from lab.h (struct lab_spinlock) -- no pthreads, no raw
 * atomics, no clocks other than lab_now().
 */
#include <errno.h>

#include <iommulab/iova.h>

#define SKEL_NAME "nocache"

/*
 * The kernel caches sizes of 1 .. 32 pages (IOVA_RANGE_CACHE_MAX_SIZE = 6: orders 0..5) and
 * rounds those up to a power of two in alloc_iova_fast(), so that a range freed into a cache
 * bin can serve any later request of that bin. Larger sizes are passed through unrounded.
 */
#define SKEL_RANGE_CACHE_MAX_SIZE 6
#define SKEL_ROUND_BELOW	  (1ull << (SKEL_RANGE_CACHE_MAX_SIZE - 1)) /* 32 pages */

/*
 * Counters, named as the built-in caches name theirs so the graphs line up. A cache must keep
 * the two LEVEL counters true at every moment (lab_count(c, id, +n) when it takes ranges or
 * magazine memory, -n when it gives them back): the iova conformance suite checks that what
 * the tree holds after every range was freed is exactly iovas_cached, and that both are 0
 * after fini(). Here they never move.
 */
enum {
	SKEL_SLOW_ALLOCS,
	SKEL_SLOW_FREES,
	SKEL_FLUSHES,
	SKEL_IOVAS_CACHED,
	SKEL_CACHE_BYTES,
	SKEL_N_COUNTERS
};

static const struct lab_counter skel_counters[SKEL_N_COUNTERS] = {
	[SKEL_SLOW_ALLOCS] = { "slow_allocs", LAB_COUNTER_EVENTS,
			       "allocations served by the rbtree slow path" },
	[SKEL_SLOW_FREES] = { "slow_frees", LAB_COUNTER_EVENTS,
			      "ranges returned to the rbtree slow path" },
	[SKEL_FLUSHES] = { "flushes", LAB_COUNTER_EVENTS,
			   "flush-everything-and-retry after a failed slow-path allocation" },
	[SKEL_IOVAS_CACHED] = { "iovas_cached", LAB_COUNTER_LEVEL,
				"ranges held in caches (still allocated in the tree)" },
	[SKEL_CACHE_BYTES] = { "cache_bytes", LAB_COUNTER_LEVEL, "bytes of cache memory held" },
};

/* Shared by every CPU of the trial. A cache would add per-CPU magazines here. */
struct skel_iova {
	struct lab_iova_domain *domain; /* the slow path */
	const struct lab_host *host;
	uint32_t ncpus;
};

/* roundup_pow_of_two() for the cached sizes; others unchanged. 0 stays 0 (and fails). */
static uint64_t skel_round_size(uint64_t size)
{
	if (size <= 1 || size >= SKEL_ROUND_BELOW)
		return size;
	return 1ull << (64 - __builtin_clzll(size - 1));
}

/* flush_cpu(): free_cpu_cached_iovas(cpu) -- hand that CPU's cached ranges back. None here. */
static void skel_flush_cpu(struct lab_cpu *c, void *state, uint32_t cpu)
{
	(void)c;
	(void)state;
	(void)cpu;
}

/* flush_all(): free_global_cached_iovas() -- hand the shared depot back. None here. */
static void skel_flush_all(struct lab_cpu *c, void *state)
{
	(void)c;
	(void)state;
}

/*
 * alloc(): alloc_iova_fast(). A size-aligned range of size pages ending at or below limit_pfn,
 * or 0. A cache would look in its magazines first; on a miss it goes to the slow path, and if
 * that fails with flush_rcache set, it flushes every cache (they may hold the space) and tries
 * the slow path once more -- exactly the kernel's order.
 */
static uint64_t skel_alloc(struct lab_cpu *c, void *state, uint64_t size, uint64_t limit_pfn,
			   bool flush_rcache)
{
	struct skel_iova *v = state;
	uint64_t pfn;

	size = skel_round_size(size);
	if (!size)
		return 0;
	lab_count(c, SKEL_SLOW_ALLOCS, 1);
	pfn = lab_iova_slow_alloc(c, v->domain, size, limit_pfn);
	if (pfn || !flush_rcache)
		return pfn;

	lab_count(c, SKEL_FLUSHES, 1);
	for (uint32_t cpu = 0; cpu < v->ncpus; cpu++)
		skel_flush_cpu(c, state, cpu);
	skel_flush_all(c, state);
	lab_count(c, SKEL_SLOW_ALLOCS, 1);
	return lab_iova_slow_alloc(c, v->domain, size, limit_pfn);
}

/*
 * free(): free_iova_fast(). A cache would try to keep the range; what it cannot keep (or, as
 * in the kernel, when a new magazine cannot be allocated) goes back to the slow path. The
 * caller passes the size it asked for; round it the same way so the domain sees the size it
 * handed out.
 */
static void skel_free(struct lab_cpu *c, void *state, uint64_t pfn, uint64_t size)
{
	struct skel_iova *v = state;

	lab_count(c, SKEL_SLOW_FREES, 1);
	lab_iova_slow_free(c, v->domain, pfn, skel_round_size(size));
}

/*
 * init(): once per trial, on one CPU, before any other op. s->ncpus CPUs will call in; set
 * s->tick_ns (and provide .tick) for periodic work such as the mainline depot's 100 ms
 * reclaim. Return -errno and explain in s->err on failure; lab_alloc() may fail on purpose
 * (fault injection), so handle NULL.
 */
static int skel_init(struct lab_iova_setup *s, void **state)
{
	struct skel_iova *v = lab_alloc(s->host, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v->domain = s->domain;
	v->host = s->host;
	v->ncpus = s->ncpus;
	s->tick_ns = 0; /* no periodic work */
	*state = v;
	return 0;
}

/* fini(): return every cached range to the domain (none here), then free the state. */
static void skel_fini(struct lab_cpu *c, void *state)
{
	struct skel_iova *v = state;

	for (uint32_t cpu = 0; cpu < v->ncpus; cpu++)
		skel_flush_cpu(c, state, cpu);
	skel_flush_all(c, state);
	lab_free(v->host, v);
}

/* Ops tables only grow at the end; .tick is optional and left NULL. */
static const struct lab_iova_ops skel_ops = {
	.struct_size = sizeof(struct lab_iova_ops),
	.init = skel_init,
	.fini = skel_fini,
	.alloc = skel_alloc,
	.free = skel_free,
	.flush_cpu = skel_flush_cpu,
	.flush_all = skel_flush_all,
};

/* The host checks every field on load. .name must match the file name: iova-<name>.so. */
static const struct lab_plugin skel_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = SKEL_NAME,
	.summary = "template: caches nothing, every alloc and free goes to the rbtree",
	.version = "1.0",
	.counters = skel_counters,
	.n_counters = SKEL_N_COUNTERS,
	.ops = &skel_ops,
};

/* The one exported symbol: everything above is static, so only this is visible. */
LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &skel_plugin;
}
