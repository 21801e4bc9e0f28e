/* SPDX-License-Identifier: MIT */
/*
 * iova_check -- the iova conformance checks (see iova_check.h). Each check builds a rig (the
 * plugin, a host_env and a slow path), drives the plugin's ops directly and stops at the first
 * property that does not hold, recording it as the counterexample. Counters the policies of
 * plugins/iova report (iovas_cached, flushes, ...) sharpen the checks where a plugin has them;
 * a check that cannot say anything without one is skipped with the counter's name.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/iova.h>

#include "engine/host.h"
#include "iova/slowpath.h"
#include "params/params.h"
#include "verify/iova_check.h"

#define DMA32	  IOVA_DMA_32BIT_PFN_4K
#define LIM32	  (DMA32 - 1)
#define LIM64	  (4 * DMA32 - 1) /* a 34-bit device: keeps the shadow bitmap small (512 KiB) */
#define MAG_SIZE  127		  /* IOVA_MAG_SIZE: how many frees fill a magazine */
#define NBINS	  6		  /* IOVA_RANGE_CACHE_MAX_SIZE */
#define MAG_BYTES 1024		  /* sizeof(struct iova_magazine) */
#define MAX_CPUS  2

/* ---- the rig: plugin + host + slow path ---------------------------------------------------- */

struct shadow {
	uint8_t *bits;
	uint64_t npfns;
};

struct rig {
	const struct lab_plugin *p;
	const struct lab_iova_ops *ops;
	struct host_env *env;
	struct iova_slowpath *sp;
	void *state;
	void *config;
	bool own_config; /* config holds the defaults and its strings are ours */
	uint64_t tick_ns;
	uint32_t ncpus;
	struct shadow shadow; /* bits NULL: not tracked */
	struct iova_check_result *res;
	pthread_mutex_t lock; /* res and the shadow, shared by the workers */
	atomic_bool failed;
};

__attribute__((format(printf, 2, 3))) static bool rig_fail(struct rig *r, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->lock);
	if (!atomic_load(&r->failed)) {
		va_start(ap, fmt);
		vsnprintf(r->res->detail, sizeof(r->res->detail), fmt, ap);
		va_end(ap);
		r->res->verdict = IOVA_CHECK_FAIL;
		atomic_store(&r->failed, true);
	}
	pthread_mutex_unlock(&r->lock);
	return false;
}

static bool rig_skip(struct rig *r, const char *why)
{
	if (!atomic_load(&r->failed)) {
		r->res->verdict = IOVA_CHECK_SKIP;
		snprintf(r->res->detail, sizeof(r->res->detail), "%s", why);
	}
	return false;
}

static bool rig_ok(struct rig *r)
{
	return !atomic_load(&r->failed);
}

static struct lab_cpu *rig_cpu(struct rig *r, uint32_t i)
{
	return host_env_cpu(r->env, i);
}

static int counter_id(const struct rig *r, const char *name)
{
	for (uint32_t id = 0; id < r->p->n_counters; id++)
		if (!strcmp(r->p->counters[id].name, name))
			return (int)id;
	return -1;
}

/* A counter summed over CPUs (levels are per-CPU deltas; the sum wraps back to the truth). */
static uint64_t rig_counter(struct rig *r, const char *name)
{
	int id = counter_id(r, name);
	uint64_t sum = 0;

	if (id < 0)
		return 0;
	for (uint32_t i = 0; i < r->ncpus; i++)
		sum += rig_cpu(r, i)->counters[id];
	return sum;
}

/* Skips the check (returns false) unless the plugin reports every counter named. */
static bool rig_need_counters(struct rig *r, const char *const *names, size_t n)
{
	char why[128];

	for (size_t i = 0; i < n; i++) {
		if (counter_id(r, names[i]) >= 0)
			continue;
		snprintf(why, sizeof(why), "needs a counter named %s", names[i]);
		return rig_skip(r, why);
	}
	return true;
}

static const struct lab_param *rig_param(const struct rig *r, const char *key)
{
	for (uint32_t i = 0; i < r->p->n_params; i++)
		if (!strcmp(r->p->params[i].key, key))
			return &r->p->params[i];
	return NULL;
}

/* An integer parameter's value in the config the plugin runs with. */
static uint64_t rig_param_u64(const struct rig *r, const struct lab_param *prm)
{
	uint64_t v = 0;

	if (prm->type == LAB_PARAM_UINT || prm->type == LAB_PARAM_INT)
		memcpy(&v, (const char *)r->config + prm->offset, sizeof(v));
	return v;
}

static bool rig_open(struct rig *r, const struct lab_plugin *p, const void *config,
		     struct iova_check_result *res, uint32_t ncpus, uint64_t start_pfn)
{
	char err[256] = "";
	size_t csize = p->config_size ? p->config_size : 1;
	int ret;

	memset(r, 0, sizeof(*r));
	r->p = p;
	r->ops = p->ops;
	r->res = res;
	r->ncpus = ncpus;
	pthread_mutex_init(&r->lock, NULL);
	r->config = calloc(1, csize);
	if (!r->config)
		return rig_fail(r, "out of memory for the config");
	if (config) {
		memcpy(r->config, config, p->config_size);
	} else {
		r->own_config = true;
		if (param_set_defaults(p->params, p->n_params, r->config, err, sizeof(err)))
			return rig_fail(r, "parameter defaults: %s", err);
	}
	r->env = host_env_new(ncpus, p->n_counters, false, false);
	if (!r->env)
		return rig_fail(r, "out of memory for %u CPUs", ncpus);
	r->sp = slowpath_new(host_env_host(r->env), start_pfn, DMA32);
	if (!r->sp)
		return rig_fail(r, "out of memory for the slow path");

	struct lab_iova_setup s = {
		.struct_size = sizeof(s),
		.host = host_env_host(r->env),
		.domain = slowpath_domain(r->sp),
		.ncpus = ncpus,
		.config = r->config,
		.err = err,
		.err_len = sizeof(err),
	};
	ret = r->ops->init(&s, &r->state);
	if (ret)
		return rig_fail(r, "init on %u CPU(s): %s (%s)", ncpus, err, strerror(-ret));
	r->tick_ns = s.tick_ns;
	return true;
}

static bool shadow_init(struct rig *r, uint64_t npfns)
{
	r->shadow.bits = calloc(npfns / 8 + 1, 1);
	r->shadow.npfns = npfns;
	return r->shadow.bits ? true : rig_fail(r, "out of memory for the shadow bitmap");
}

/*
 * fini, then the tree must be back to the anchor and only the slow path may hold memory.
 * After an earlier failure the plugin's state is suspect: tear down, report nothing more.
 */
static void rig_close(struct rig *r, bool inited)
{
	struct slowpath_stats st;
	uint64_t allocs, held;
	char what[200];

	if (inited) {
		r->ops->fini(rig_cpu(r, 0), r->state);
		slowpath_get_stats(r->sp, &st);
		allocs = host_env_live_allocs(r->env);
		held = slowpath_allocs_held(r->sp);
		if (rig_ok(r) && host_env_overruns(r->env, what, sizeof(what)))
			rig_fail(r, "%s (its heap would be corrupted)", what);
		else if (rig_ok(r) && slowpath_check(r->sp, NULL, NULL))
			rig_fail(r, "after fini: the slow path's tree is inconsistent");
		else if (st.live)
			rig_fail(r,
				 "after fini: expected an empty tree, found %llu range(s) still "
				 "allocated",
				 (unsigned long long)st.live);
		else if (st.free_errors)
			rig_fail(r, "%llu range(s) returned twice or with the wrong size",
				 (unsigned long long)st.free_errors);
		else if (allocs != held)
			rig_fail(r,
				 "after fini: expected %llu lab_alloc block(s) (the slow path's), "
				 "found %llu: the plugin leaked %lld",
				 (unsigned long long)held, (unsigned long long)allocs,
				 (long long)(allocs - held));
		else if (rig_counter(r, "iovas_cached") || rig_counter(r, "cache_bytes"))
			rig_fail(r, "after fini: iovas_cached = %llu, cache_bytes = %llu, want 0",
				 (unsigned long long)rig_counter(r, "iovas_cached"),
				 (unsigned long long)rig_counter(r, "cache_bytes"));
	}
	slowpath_free(r->sp);
	if (r->env && inited && rig_ok(r) && host_env_live_allocs(r->env))
		rig_fail(r, "after fini: %llu lab_alloc block(s) never freed",
			 (unsigned long long)host_env_live_allocs(r->env));
	host_env_free(r->env);
	if (r->own_config)
		param_free_strings(r->p->params, r->p->n_params, r->config);
	free(r->config);
	free(r->shadow.bits);
	pthread_mutex_destroy(&r->lock);
}

static void rig_flush_everything(struct rig *r, struct lab_cpu *c)
{
	for (uint32_t i = 0; i < r->ncpus; i++)
		r->ops->flush_cpu(c, r->state, i);
	r->ops->flush_all(c, r->state);
}

/* ---- checked ops ------------------------------------------------------------------------------
 */

static uint64_t roundup_pow2(uint64_t x)
{
	uint64_t v = 1;

	while (v < x)
		v <<= 1;
	return v;
}

/* What alloc_iova_fast() really takes for a request: below 32 pages, a power of two. */
static uint64_t alloc_size(uint64_t size)
{
	return size < 32 ? roundup_pow2(size) : size;
}

static bool shadow_mark(struct rig *r, const struct lab_cpu *c, uint64_t pfn, uint64_t n)
{
	struct shadow *s = &r->shadow;
	bool ok = true;

	pthread_mutex_lock(&r->lock);
	for (uint64_t p = pfn; p < pfn + n && ok; p++) {
		if (p >= s->npfns || (s->bits[p / 8] & (1u << (p % 8))))
			ok = false;
		else
			s->bits[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	pthread_mutex_unlock(&r->lock);
	if (!ok)
		return rig_fail(r,
				"CPU %u: range [%#llx, %#llx] handed out while pfn(s) of it "
				"were still live: expected a free range, found an overlap",
				c->id, (unsigned long long)pfn, (unsigned long long)(pfn + n - 1));
	return true;
}

/* Cleared before the plugin sees the free, so a concurrent reuse is never a false alarm. */
static void shadow_clear(struct rig *r, uint64_t pfn, uint64_t n)
{
	struct shadow *s = &r->shadow;

	pthread_mutex_lock(&r->lock);
	for (uint64_t p = pfn; p < pfn + n && p < s->npfns; p++)
		s->bits[p / 8] &= (uint8_t) ~(1u << (p % 8));
	pthread_mutex_unlock(&r->lock);
}

struct range {
	uint64_t pfn, size;
};

/* Allocate through the plugin and check the range. 0 when none or when a check failed. */
static uint64_t checked_alloc(struct rig *r, struct lab_cpu *c, uint64_t size, uint64_t limit,
			      bool flush)
{
	uint64_t pfn = r->ops->alloc(c, r->state, size, limit, flush);

	if (!pfn)
		return 0;
	if (pfn % roundup_pow2(size)) {
		rig_fail(r,
			 "CPU %u: alloc(size %llu, limit %#llx) = %#llx: expected a multiple of "
			 "%llu (size-aligned)",
			 c->id, (unsigned long long)size, (unsigned long long)limit,
			 (unsigned long long)pfn, (unsigned long long)roundup_pow2(size));
		return 0;
	}
	if (pfn + alloc_size(size) - 1 > limit || pfn + alloc_size(size) - 1 < pfn) {
		rig_fail(r,
			 "CPU %u: alloc(size %llu, limit %#llx) = [%#llx, %#llx]: expected an "
			 "end at or below the limit",
			 c->id, (unsigned long long)size, (unsigned long long)limit,
			 (unsigned long long)pfn, (unsigned long long)(pfn + alloc_size(size) - 1));
		return 0;
	}
	if (r->shadow.bits && !shadow_mark(r, c, pfn, alloc_size(size)))
		return 0;
	return pfn;
}

static void checked_free(struct rig *r, struct lab_cpu *c, uint64_t pfn, uint64_t size)
{
	if (r->shadow.bits)
		shadow_clear(r, pfn, alloc_size(size));
	r->ops->free(c, r->state, pfn, size);
}

/* Everything the test freed: the tree must hold exactly what the caches say they hold. */
static bool expect_tree_is_cache(struct rig *r, const char *when)
{
	uint64_t tree = slowpath_live(r->sp), cached = rig_counter(r, "iovas_cached");

	if (counter_id(r, "iovas_cached") < 0 || tree == cached)
		return true;
	return rig_fail(r,
			"%s: expected the tree to hold exactly the %llu cached range(s), found "
			"%llu",
			when, (unsigned long long)cached, (unsigned long long)tree);
}

/* ---- random alloc/free, 1 and 2 CPUs --------------------------------------------------------- */

struct worker {
	struct rig *r;
	struct lab_cpu *c;
	unsigned int seed;
	int steps;
	/*
	 * 0, or every allocation's limit: a domain of a few hundred pages that runs out, so that
	 * flush-and-retry runs on every CPU at once (an empty result is then legal).
	 */
	uint64_t small_limit;
};

/*
 * A limit that is not 2^k - 1: one below the end of the range just freed, so that a cache
 * handing that range straight back without looking at the limit is caught. Only where the
 * space below it is large enough that the slow path always finds room.
 */
#define LIMIT_BELOW_FREED_MIN 4096

static void *random_worker(void *arg)
{
	enum { MAXLIVE = 3000 };
	struct worker *w = arg;
	struct rig *r = w->r;
	struct range *live = calloc(MAXLIVE, sizeof(*live));
	uint64_t below_freed = 0;
	unsigned int limit_seed = w->seed ^ 0x5bd1e995u;
	int n = 0;

	if (!live) {
		rig_fail(r, "out of memory");
		return NULL;
	}
	for (int step = 0; step < w->steps && rig_ok(r); step++) {
		int x = rand_r(&w->seed) % 100;
		/* Phases of growth and shrinkage so that magazines fill and drain. */
		bool grow = (step / 2000) % 2 == 0;

		if (n && (n == MAXLIVE || x < (grow ? 35 : 65))) {
			int i = rand_r(&w->seed) % n;

			checked_free(r, w->c, live[i].pfn, live[i].size);
			uint64_t end = live[i].pfn + alloc_size(live[i].size) - 1;
			/* Its own stream: the random ops stay what they were before. */
			if (rand_r(&limit_seed) % 4 == 0 && end > LIMIT_BELOW_FREED_MIN)
				below_freed = end - 1;
			live[i] = live[--n];
		} else {
			/* Mostly small sizes (the cached bins), some up to 64 pages. */
			uint64_t span = rand_r(&w->seed) % 2 ? 4 : 64;
			uint64_t size = (uint64_t)rand_r(&w->seed) % span + 1;
			uint64_t limit = rand_r(&w->seed) % 2 ? LIM32 : LIM64;

			if (w->small_limit) {
				limit = w->small_limit;
				size = size % 4 + 1;
			} else if (below_freed) {
				limit = below_freed;
			}
			below_freed = 0;
			uint64_t pfn = checked_alloc(r, w->c, size, limit, true);

			if (!pfn && w->small_limit && rig_ok(r))
				continue; /* the small domain is full even after the flush */
			if (!pfn) {
				rig_fail(r,
					 "CPU %u: alloc(size %llu, limit %#llx) with %d range(s) "
					 "live: expected a range, found 0 (nearly empty space)",
					 w->c->id, (unsigned long long)size,
					 (unsigned long long)limit, n);
				break;
			}
			live[n].pfn = pfn;
			live[n].size = size;
			n++;
		}
	}
	while (n > 0 && rig_ok(r)) {
		n--;
		checked_free(r, w->c, live[n].pfn, live[n].size);
	}
	free(live);
	return NULL;
}

/*
 * fn(arg[i]) for each of ncpus CPUs, each arg size bytes after the one before: on a thread of
 * its own each, or with one CPU here.
 */
static void run_cpus(struct rig *r, uint32_t ncpus, void *(*fn)(void *), void *args, size_t size)
{
	pthread_t t[MAX_CPUS];
	uint32_t started = 0;

	if (ncpus == 1) {
		fn(args);
		return;
	}
	for (; started < ncpus; started++)
		if (pthread_create(&t[started], NULL, fn, (char *)args + started * size)) {
			rig_fail(r, "cannot start a thread for CPU %u", started);
			break;
		}
	for (uint32_t i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}

/* The test freed all it allocated (when): the tree holds just what is cached, and a flush of
 * every CPU and the depot leaves it empty. */
static bool expect_everything_returns(struct rig *r, const char *when)
{
	if (!rig_ok(r) || !expect_tree_is_cache(r, when))
		return false;
	if (slowpath_check(r->sp, NULL, NULL))
		return rig_fail(r, "the slow path's tree is inconsistent");
	rig_flush_everything(r, rig_cpu(r, 0));
	if (slowpath_live(r->sp))
		return rig_fail(r,
				"%s, flush of every CPU and the depot: expected an empty tree, "
				"found %llu range(s)",
				when, (unsigned long long)slowpath_live(r->sp));
	return rig_ok(r);
}

static bool check_random(struct rig *r, uint32_t ncpus, uint64_t small_limit)
{
	struct worker w[MAX_CPUS];

	if (!shadow_init(r, LIM64 + 1))
		return false;
	for (uint32_t i = 0; i < ncpus; i++)
		w[i] = (struct worker){ r, rig_cpu(r, i), 17u + i, 20000, small_limit };
	run_cpus(r, ncpus, random_worker, w, sizeof(w[0]));
	return expect_everything_returns(r, "after freeing everything");
}

static void run_random(const struct lab_plugin *p, const void *config,
		       struct iova_check_result *res, uint32_t ncpus, uint64_t small_limit)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, ncpus, 1);

	if (inited)
		check_random(&r, ncpus, small_limit);
	rig_close(&r, inited);
}

/*
 * 2 CPUs in a domain of SMALL_DOMAIN_PAGES (not a power of two, nor its limit 2^k - 1): it
 * runs out again and again, and each CPU's flush-and-retry runs while the other allocates and
 * frees, so a flush that touches another CPU's magazine without its lock hands a range out
 * twice (the shadow map sees it).
 */
#define SMALL_DOMAIN_PAGES 300

static void run_small_domain_2cpu(const struct lab_plugin *p, const void *config,
				  struct iova_check_result *res)
{
	run_random(p, config, res, 2, SMALL_DOMAIN_PAGES);
}

static void run_random_1cpu(const struct lab_plugin *p, const void *config,
			    struct iova_check_result *res)
{
	run_random(p, config, res, 1, 0);
}

static void run_random_2cpu(const struct lab_plugin *p, const void *config,
			    struct iova_check_result *res)
{
	run_random(p, config, res, 2, 0);
}

/* ---- the depot on 2 CPUs at once ----------------------------------------------------------- */

/*
 * Each CPU allocates DEPOT_BATCH single pages and then frees them all, DEPOT_ROUNDS times:
 * more than its two magazines hold (2 x 127), so every round pushes full magazines to the
 * depot and the next pops them, both CPUs in the same bin at once. CPU 0 also runs the tick
 * every 64 ops (the periodic reclaim runs on some CPU while the others work) and CPU 1
 * flush_all every 512 (free_global_cached_iovas(), from any CPU's flush-and-retry), so the
 * depot's every path races the other CPU's push and pop. Natively a missing lock there is a
 * window of a few instructions that two cores rarely hit; a ThreadSanitizer build reports it
 * at once (.ci/run's tsan-iova stage).
 */
#define DEPOT_BATCH  700
#define DEPOT_ROUNDS 60

struct depot_worker {
	struct rig *r;
	struct lab_cpu *c;
	uint64_t ops;
};

/* After each op: CPU 0 ticks every 64, CPU 1 empties the depot every 512. */
static void depot_side_work(struct depot_worker *w)
{
	struct rig *r = w->r;

	w->ops++;
	if (w->c->id == 0 && r->ops->tick && w->ops % 64 == 0)
		r->ops->tick(w->c, r->state);
	if (w->c->id == 1 && w->ops % 512 == 0)
		r->ops->flush_all(w->c, r->state);
}

static void *depot_worker(void *arg)
{
	struct depot_worker *w = arg;
	struct rig *r = w->r;
	uint64_t *pfns = calloc(DEPOT_BATCH, sizeof(*pfns));
	int n = 0;

	if (!pfns) {
		rig_fail(r, "out of memory");
		return NULL;
	}
	for (int round = 0; round < DEPOT_ROUNDS && rig_ok(r); round++) {
		for (n = 0; n < DEPOT_BATCH && rig_ok(r); n++, depot_side_work(w)) {
			pfns[n] = checked_alloc(r, w->c, 1, LIM64, true);
			if (!pfns[n]) {
				rig_fail(r,
					 "CPU %u: alloc(1) in round %d with %d page(s) live: "
					 "expected a range, found 0 (nearly empty space)",
					 w->c->id, round, n);
				break;
			}
		}
		while (n > 0) { /* all of them, also after a failure */
			checked_free(r, w->c, pfns[--n], 1);
			if (rig_ok(r))
				depot_side_work(w);
		}
	}
	free(pfns);
	return NULL;
}

static void run_depot_2cpu(const struct lab_plugin *p, const void *config,
			   struct iova_check_result *res)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 2, 1);
	struct depot_worker w[2];

	if (inited && shadow_init(&r, LIM64 + 1)) {
		for (uint32_t i = 0; i < 2; i++)
			w[i] = (struct depot_worker){ &r, rig_cpu(&r, i), 0 };
		run_cpus(&r, 2, depot_worker, w, sizeof(w[0]));
		expect_everything_returns(&r, "after the rounds");
	}
	rig_close(&r, inited);
}

/* ---- flushes -----------------------------------------------------------------------------------
 */

static bool check_flush(struct rig *r)
{
	enum { N = 2000 };
	static const char *const need[] = { "iovas_cached" };
	struct range *live = calloc(2 * N, sizeof(*live));
	uint64_t cached, pfn;

	if (!live)
		return rig_fail(r, "out of memory");
	if (!rig_need_counters(r, need, LAB_ARRAY_SIZE(need)))
		goto out;
	/* Both CPUs fill their magazines (and the depot where there is one) in every bin. */
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		struct lab_cpu *c = rig_cpu(r, cpu);
		struct range *l = live + cpu * N;

		for (int i = 0; i < N; i++) {
			l[i].size = UINT64_C(1) << (i % NBINS);
			l[i].pfn = checked_alloc(r, c, l[i].size, LIM64, true);
			if (!l[i].pfn) {
				rig_fail(r,
					 "CPU %u: alloc(size %llu) #%d: expected a range, found 0",
					 cpu, (unsigned long long)l[i].size, i);
				goto out;
			}
		}
		for (int i = 0; i < N; i++)
			checked_free(r, c, l[i].pfn, l[i].size);
	}
	cached = rig_counter(r, "iovas_cached");
	if (!cached) {
		rig_skip(r, "caches nothing (iovas_cached = 0 after 2 x 2000 frees): no flush to "
			    "check");
		goto out;
	}
	if (!expect_tree_is_cache(r, "after the frees"))
		goto out;
	/* One CPU's flush returns exactly what that CPU's pair held; the rest stays. */
	r->ops->flush_cpu(rig_cpu(r, 0), r->state, 1);
	if (!expect_tree_is_cache(r, "CPU 0 flushed CPU 1"))
		goto out;
	if (rig_counter(r, "iovas_cached") >= cached) {
		rig_fail(r, "CPU 0 flushed CPU 1: expected fewer than %llu cached, found %llu",
			 (unsigned long long)cached,
			 (unsigned long long)rig_counter(r, "iovas_cached"));
		goto out;
	}
	r->ops->flush_cpu(rig_cpu(r, 1), r->state, 0);
	r->ops->flush_all(rig_cpu(r, 1), r->state);
	if (rig_counter(r, "iovas_cached") || slowpath_live(r->sp)) {
		rig_fail(r,
			 "CPU 1 flushed CPU 0 and the depot: expected 0 cached and an empty "
			 "tree, found %llu cached and %llu range(s) in the tree",
			 (unsigned long long)rig_counter(r, "iovas_cached"),
			 (unsigned long long)slowpath_live(r->sp));
		goto out;
	}
	/* Flushed magazines can be refilled. */
	pfn = checked_alloc(r, rig_cpu(r, 0), 1, LIM32, false);
	if (!pfn) {
		rig_fail(r, "CPU 0: alloc(1) after the flush: expected a range, found 0");
		goto out;
	}
	checked_free(r, rig_cpu(r, 0), pfn, 1);
	if (rig_counter(r, "iovas_cached") != 1)
		rig_fail(r, "CPU 0 freed [%#llx] after the flush: expected 1 cached, found %llu",
			 (unsigned long long)pfn,
			 (unsigned long long)rig_counter(r, "iovas_cached"));
out:
	free(live);
	return rig_ok(r);
}

static void run_flush(const struct lab_plugin *p, const void *config, struct iova_check_result *res)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 2, 1);

	if (inited)
		check_flush(&r);
	rig_close(&r, inited);
}

/* ---- a tiny domain: failure, flush and retry ---------------------------------------------------
 */

static bool expect_counter(struct rig *r, const char *name, uint64_t want, const char *when)
{
	uint64_t v = rig_counter(r, name);

	if (v == want)
		return true;
	return rig_fail(r, "%s: expected %s = %llu, found %llu", when, name,
			(unsigned long long)want, (unsigned long long)v);
}

static bool check_full_domain(struct rig *r, uint64_t start)
{
	static const char *const need[] = { "flushes", "iovas_cached" };
	struct range pairs[32];
	uint64_t ones[64], flushes, pfn;
	struct lab_cpu *c0 = rig_cpu(r, 0), *c1 = rig_cpu(r, 1);
	int npairs = 0;

	if (!rig_need_counters(r, need, LAB_ARRAY_SIZE(need)) || !shadow_init(r, DMA32))
		return false;
	for (int i = 0; i < 64; i++) {
		ones[i] = checked_alloc(r, c1, 1, LIM32, false);
		if (ones[i] < start)
			return !rig_ok(r) ? false
					  : (rig_fail(r,
						      "CPU 1: alloc(1) #%d in the 64-page domain "
						      "[%#llx, %#llx]: expected a page in it, "
						      "found %#llx",
						      i, (unsigned long long)start,
						      (unsigned long long)LIM32,
						      (unsigned long long)ones[i]));
	}
	/* Truly full: flushing finds nothing, the retry fails, 0 comes back. */
	pfn = checked_alloc(r, c1, 1, LIM32, true);
	if (pfn)
		return rig_fail(r, "CPU 1: alloc(1) in a full domain: expected 0, found %#llx",
				(unsigned long long)pfn);
	if (!rig_ok(r) || !expect_counter(r, "flushes", 1, "a failed alloc(flush=true)"))
		return false;

	/* CPU 1 frees the ten lowest pages: they sit in its magazines, still allocated. */
	for (int i = 54; i < 64; i++)
		checked_free(r, c1, ones[i], 1);
	if (!rig_counter(r, "iovas_cached") && slowpath_live(r->sp) == 54) {
		rig_skip(r, "caches nothing (10 frees went straight to the tree): the flush "
			    "and retry path is never taken");
		goto out;
	}
	if (!expect_counter(r, "iovas_cached", 10, "CPU 1 freed 10 pages"))
		return false;
	if (slowpath_live(r->sp) != 64)
		return rig_fail(r,
				"CPU 1 freed 10 pages into its cache: expected 64 ranges "
				"in the tree, found %llu",
				(unsigned long long)slowpath_live(r->sp));

	/* CPU 0 wants two pages: without the flush there is no room... */
	pfn = checked_alloc(r, c0, 2, LIM32, false);
	if (pfn)
		return rig_fail(r,
				"CPU 0: alloc(2, flush=false) with every page held: "
				"expected 0, found %#llx",
				(unsigned long long)pfn);
	if (!rig_ok(r) || !expect_counter(r, "flushes", 1, "alloc(flush=false)"))
		return false;
	/* ...with it, CPU 1's magazines go back to the tree and the retry succeeds. */
	pairs[npairs].size = 2;
	pairs[npairs].pfn = checked_alloc(r, c0, 2, LIM32, true);
	if (!rig_ok(r))
		return false;
	if (!pairs[npairs].pfn || pairs[npairs].pfn >= start + 10)
		return rig_fail(r,
				"CPU 0: alloc(2, flush=true) with CPU 1 caching [%#llx, "
				"%#llx]: expected a range there after the flush, found "
				"%#llx",
				(unsigned long long)start, (unsigned long long)(start + 9),
				(unsigned long long)pairs[npairs].pfn);
	npairs++;
	if (!expect_counter(r, "flushes", 2, "alloc(2, flush=true)") ||
	    !expect_counter(r, "iovas_cached", 0, "the flush"))
		return false;

	/* Use up the rest: four more pairs fit in the ten pages, then it is full again. */
	while ((pairs[npairs].pfn = checked_alloc(r, c0, 2, LIM32, true))) {
		pairs[npairs].size = 2;
		if (++npairs == 32)
			break;
	}
	if (!rig_ok(r))
		return false;
	if (npairs != 5)
		return rig_fail(r, "CPU 0: pairs in 10 flushed pages: expected 5, found %d",
				npairs);
	flushes = rig_counter(r, "flushes");
	pfn = checked_alloc(r, c0, 1, LIM32, true);
	if (pfn)
		return rig_fail(r, "CPU 0: alloc(1) in a full domain: expected 0, found %#llx",
				(unsigned long long)pfn);
	if (!rig_ok(r) || !expect_counter(r, "flushes", flushes + 1, "a failed alloc(1)"))
		return false;
	if (counter_id(r, "alloc_failures") >= 0 && !rig_counter(r, "alloc_failures"))
		return rig_fail(r, "failed allocations: expected alloc_failures > 0, "
				   "found 0");

	for (int i = 0; i < npairs; i++)
		checked_free(r, c0, pairs[i].pfn, pairs[i].size);
out:
	for (int i = 0; i < 54; i++)
		checked_free(r, i % 2 ? c0 : c1, ones[i], 1);
	return rig_ok(r);
}

static void run_full_domain(const struct lab_plugin *p, const void *config,
			    struct iova_check_result *res)
{
	/* 64 pages of space, all below 4 GiB: [DMA32 - 64, DMA32). */
	const uint64_t start = DMA32 - 64;
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 2, start);

	if (inited)
		check_full_domain(&r, start);
	rig_close(&r, inited);
}

/* ---- magazine allocation failure ---------------------------------------------------------------
 */

static bool check_mag_failure(struct rig *r)
{
	enum { N = 3000 };
	struct range *live = calloc(N, sizeof(*live));
	struct lab_cpu *c = rig_cpu(r, 0);
	int n = 0;

	if (!live)
		return rig_fail(r, "out of memory");
	if (!shadow_init(r, LIM64 + 1))
		goto out;
	for (int i = 0; i < N; i++) {
		live[n].size = 1;
		live[n].pfn = checked_alloc(r, c, 1, LIM64, true);
		if (!live[n].pfn) {
			if (rig_ok(r))
				rig_fail(r, "CPU 0: alloc(1) #%d: expected a range, found 0", i);
			goto out;
		}
		n++;
	}
	/* Every third lab_alloc fails from now on: magazines and tree nodes alike. */
	host_env_set_alloc_fault(r->env, 3);
	for (int i = 0; i < N / 2; i++) {
		n--;
		checked_free(r, c, live[n].pfn, live[n].size);
	}
	for (int i = 0; i < N / 4 && rig_ok(r); i++) {
		uint64_t size = 1 + (uint64_t)(i % 8);
		uint64_t pfn = checked_alloc(r, c, size, LIM64, true);

		if (pfn) {
			live[n].pfn = pfn;
			live[n].size = size;
			n++;
		}
	}
	while (n > 0 && rig_ok(r)) {
		n--;
		checked_free(r, c, live[n].pfn, live[n].size);
	}
	host_env_set_alloc_fault(r->env, 0);
	if (!rig_ok(r))
		goto out;
	if (counter_id(r, "mag_alloc_failures") >= 0 && counter_id(r, "mags_freed_full") >= 0 &&
	    !rig_counter(r, "mag_alloc_failures") && !rig_counter(r, "mags_freed_full")) {
		/* A policy with a depot had to fall back; one without spilled instead. */
		rig_fail(r, "every 3rd lab_alloc failing: expected mag_alloc_failures or "
			    "mags_freed_full > 0, found both 0");
		goto out;
	}
	expect_tree_is_cache(r, "every 3rd lab_alloc failing, everything freed (a range is "
				"neither cached nor free)");
out:
	free(live);
	return rig_ok(r);
}

static void run_mag_failure(const struct lab_plugin *p, const void *config,
			    struct iova_check_result *res)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 1, 1);

	if (inited)
		check_mag_failure(&r);
	rig_close(&r, inited);
}

/* ---- list depot reclaim ------------------------------------------------------------------------
 */

static uint64_t depot_size(struct rig *r)
{
	return rig_counter(r, "depot_pushes") - rig_counter(r, "depot_pops") -
	       rig_counter(r, "depot_reclaims");
}

static bool check_tick(struct rig *r)
{
	enum { N = 12 * MAG_SIZE };
	static const char *const need[] = { "depot_pushes", "depot_pops", "depot_reclaims",
					    "iovas_cached" };
	const struct lab_param *prm = rig_param(r, "reclaim_ms");
	uint64_t *pfns, depot, cached, reclaims;
	struct lab_cpu *c = rig_cpu(r, 0);

	if (!r->ops->tick) {
		if (r->tick_ns)
			rig_fail(r,
				 "init set tick_ns = %llu: expected 0, the plugin has no tick op",
				 (unsigned long long)r->tick_ns);
		else
			rig_skip(r, "no tick op (no periodic reclaim)");
		return false;
	}
	if (!rig_need_counters(r, need, LAB_ARRAY_SIZE(need)))
		return false;
	if (prm && r->tick_ns != rig_param_u64(r, prm) * 1000000)
		return rig_fail(r,
				"init with reclaim_ms = %llu: expected tick_ns = %llu, "
				"found %llu",
				(unsigned long long)rig_param_u64(r, prm),
				(unsigned long long)rig_param_u64(r, prm) * 1000000,
				(unsigned long long)r->tick_ns);
	pfns = calloc(N, sizeof(*pfns));
	if (!pfns)
		return rig_fail(r, "out of memory");
	for (int i = 0; i < N; i++) {
		pfns[i] = checked_alloc(r, c, 1, LIM64, true);
		if (!pfns[i]) {
			if (rig_ok(r))
				rig_fail(r, "CPU 0: alloc(1) #%d: expected a range, found 0", i);
			goto out;
		}
	}
	for (int i = 0; i < N; i++)
		checked_free(r, c, pfns[i], 1);
	depot = depot_size(r);
	if (depot <= r->ncpus) {
		rig_fail(r, "CPU 0 freed %d pages: expected a depot above %u magazines, found %llu",
			 N, r->ncpus, (unsigned long long)depot);
		goto out;
	}
	cached = rig_counter(r, "iovas_cached");
	for (int t = 0; t < 30; t++)
		r->ops->tick(rig_cpu(r, (uint32_t)t % 2), r->state);
	reclaims = rig_counter(r, "depot_reclaims");
	if (depot_size(r) != r->ncpus)
		rig_fail(r, "30 ticks on a depot of %llu: expected %u magazines left, found %llu",
			 (unsigned long long)depot, r->ncpus, (unsigned long long)depot_size(r));
	else if (reclaims != depot - r->ncpus)
		rig_fail(r, "30 ticks: expected %llu reclaims, found %llu",
			 (unsigned long long)(depot - r->ncpus), (unsigned long long)reclaims);
	else if (rig_counter(r, "iovas_cached") != cached - reclaims * MAG_SIZE)
		rig_fail(r, "%llu reclaims: expected %llu cached, found %llu",
			 (unsigned long long)reclaims,
			 (unsigned long long)(cached - reclaims * MAG_SIZE),
			 (unsigned long long)rig_counter(r, "iovas_cached"));
	else
		expect_tree_is_cache(r, "after the ticks");
out:
	free(pfns);
	return rig_ok(r);
}

static void run_tick(const struct lab_plugin *p, const void *config, struct iova_check_result *res)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 2, 1);

	if (inited)
		check_tick(&r);
	rig_close(&r, inited);
}

/* ---- memory bound of bounded depots -------------------------------------------------------- */

/* The deepest depot the check fills: 2 + this + 4 magazines of frees per bin and CPU. */
#define BOUNDED_DEPOT_MAX     256
#define BOUNDED_DEPOT_MAX_STR "256" /* for messages */

static bool check_bounded(struct rig *r)
{
	static const char *const need[] = { "cache_bytes", "mags_freed_full" };
	const struct lab_param *prm;
	uint64_t depot_max = 0, bound, peak = 0, base = 0, *pfns;
	int n;

	if (r->ops->tick)
		return rig_skip(r, "has a tick op (an unbounded depot, reclaimed over time)");
	if (!rig_need_counters(r, need, LAB_ARRAY_SIZE(need)))
		return false;
	/* The depot's size as each bounded policy documents it in its parameter table. */
	if ((prm = rig_param(r, "depot_max")))
		depot_max = rig_param_u64(r, prm);
	else if ((prm = rig_param(r, "depot_min")))
		depot_max = rig_param_u64(r, prm) > r->ncpus ? rig_param_u64(r, prm) : r->ncpus;
	/* Neither parameter: no depot, unless the policy says it pushed to one (below). */
	bool sized = prm != NULL, unsized = false;

	if (depot_max > BOUNDED_DEPOT_MAX)
		return rig_skip(r, "a depot deeper than " BOUNDED_DEPOT_MAX_STR
				   " magazines is not filled here");
	/* More frees per bin than a pair plus the depot can hold (32 deep for no stated one). */
	n = (int)(2 + (sized ? depot_max : 32) + 4) * MAG_SIZE;
	bound = (2 * (uint64_t)r->ncpus + depot_max) * NBINS * MAG_BYTES;
	pfns = calloc((size_t)n, sizeof(*pfns));
	if (!pfns)
		return rig_fail(r, "out of memory");
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		struct lab_cpu *c = rig_cpu(r, cpu);

		for (unsigned int b = 0; b < NBINS; b++) {
			uint64_t size = UINT64_C(1) << b;

			for (int i = 0; i < n; i++) {
				pfns[i] = checked_alloc(r, c, size, LIM64, true);
				if (!pfns[i]) {
					if (rig_ok(r))
						rig_fail(r,
							 "CPU %u: alloc(%llu) #%d: expected "
							 "a range, found 0",
							 cpu, (unsigned long long)size, i);
					goto out;
				}
			}
			/* Before any free: what the cache holds empty (a policy may allocate
			 * every CPU's magazines up front and count them at its first use). */
			if (!cpu && !b)
				base = rig_counter(r, "cache_bytes");
			for (int i = 0; i < n; i++) {
				uint64_t bytes;

				checked_free(r, c, pfns[i], size);
				bytes = rig_counter(r, "cache_bytes");
				/* Past the pairs with a depot of no stated size: nothing to judge,
				 * but everything allocated is still freed. */
				unsized |= bytes > bound && !sized &&
					   counter_id(r, "depot_pushes") >= 0 &&
					   rig_counter(r, "depot_pushes");
				if (bytes > bound && !unsized) {
					rig_fail(r,
						 "CPU %u freed [%#llx] (size %llu): expected "
						 "cache_bytes <= (2 x %u CPUs + %llu) x %d bins x "
						 "%d = %llu, found %llu",
						 cpu, (unsigned long long)pfns[i],
						 (unsigned long long)size, r->ncpus,
						 (unsigned long long)depot_max, NBINS, MAG_BYTES,
						 (unsigned long long)bound,
						 (unsigned long long)bytes);
					goto out;
				}
				if (bytes > peak)
					peak = bytes;
			}
		}
	}
	if (unsized)
		rig_skip(r, "a depot (depot_pushes > 0) whose size is not in the parameter table "
			    "(depot_max, or depot_min for max(depot_min, CPUs)): its bound is not "
			    "known");
	else if (!rig_counter(r, "mags_freed_full"))
		rig_fail(r,
			 "%d frees per bin and CPU: expected the bound to be hit "
			 "(mags_freed_full > 0), found 0",
			 n);
	else if (depot_max && peak - base < depot_max * NBINS * MAG_BYTES)
		/* Every bin's depot filled: a depot that does not reach its size fails here. */
		rig_fail(r,
			 "%d frees per bin and CPU on %u CPUs: expected the depot to hold %llu "
			 "magazines in each of the %d bins (%llu bytes over the %llu held empty), "
			 "found %llu",
			 n, r->ncpus, (unsigned long long)depot_max, NBINS,
			 (unsigned long long)(depot_max * NBINS * MAG_BYTES),
			 (unsigned long long)base, (unsigned long long)(peak - base));
	else if (!depot_max && peak != bound)
		rig_fail(r,
			 "no depot: expected a peak of exactly the pairs (%llu bytes), found %llu",
			 (unsigned long long)bound, (unsigned long long)peak);
	else if (host_env_live_bytes(r->env) < rig_counter(r, "cache_bytes"))
		/* The magazine memory the counter claims is really held. */
		rig_fail(r, "cache_bytes = %llu: expected at most the %llu bytes allocated",
			 (unsigned long long)rig_counter(r, "cache_bytes"),
			 (unsigned long long)host_env_live_bytes(r->env));
out:
	free(pfns);
	return rig_ok(r);
}

/*
 * A depot scaled with the machine (depot_min: max(depot_min, CPUs) magazines) sizes itself at
 * init from the CPU count: at 2 CPUs it is depot_min deep and never scales. So it is checked
 * again as initialised for twice depot_min CPUs (two of them running), where it must hold the
 * CPU count's magazines and not one more, and no array of it may be sized for depot_min (a
 * write past a lab_alloc block fails the check). 0: no such pass.
 */
static uint32_t scaled_cpus(struct rig *r)
{
	const struct lab_param *prm = rig_param(r, "depot_min");
	uint64_t min = prm ? rig_param_u64(r, prm) : 0;

	/* depot_min 1: twice it is the 2 CPUs the first pass ran on. */
	return min > 1 && 2 * min <= BOUNDED_DEPOT_MAX ? (uint32_t)(2 * min) : 0;
}

static void run_bounded(const struct lab_plugin *p, const void *config,
			struct iova_check_result *res)
{
	struct rig r;
	bool inited = rig_open(&r, p, config, res, 2, 1);
	uint32_t many = inited && check_bounded(&r) ? scaled_cpus(&r) : 0;

	rig_close(&r, inited);
	if (!many || res->verdict != IOVA_CHECK_PASS)
		return;
	inited = rig_open(&r, p, config, res, many, 1);
	if (inited)
		check_bounded(&r);
	rig_close(&r, inited);
}

/* ---- the table ------------------------------------------------------------------------------- */

static const struct iova_check checks[] = {
	{ "random_1cpu", "1 CPU, 20000 random ops: no overlap, limits, alignment, fini returns all",
	  run_random_1cpu },
	{ "random_2cpu", "2 CPUs concurrently, 20000 random ops each: the same properties",
	  run_random_2cpu },
	{ "small_domain_2cpu",
	  "2 CPUs in a 300-page domain: flush-and-retry on both at once, no range twice",
	  run_small_domain_2cpu },
	{ "depot_2cpu",
	  "2 CPUs fill and drain one depot bin at once, the tick and flush_all racing them",
	  run_depot_2cpu },
	{ "flush_returns_everything", "flush_cpu/flush_all return exactly what is cached",
	  run_flush },
	{ "full_domain_flush_and_retry", "a 64-page domain: flush and retry once, then fail",
	  run_full_domain },
	{ "magazine_alloc_failure", "every 3rd lab_alloc fails: nothing lost, fallback taken",
	  run_mag_failure },
	{ "tick_reclaims_to_ncpus", "the periodic tick trims the depot to ncpus magazines",
	  run_tick },
	{ "bounded_depot_memory",
	  "cache bytes <= (2 x CPUs + depot) x bins x magazine bytes, the depot filled (scaled: "
	  "also at 2 x depot_min CPUs)",
	  run_bounded },
};

const struct iova_check *iova_checks(size_t *n)
{
	*n = LAB_ARRAY_SIZE(checks);
	return checks;
}

const struct iova_check *iova_check_find(const char *name)
{
	for (size_t i = 0; i < LAB_ARRAY_SIZE(checks); i++)
		if (!strcmp(checks[i].name, name))
			return &checks[i];
	return NULL;
}

int iova_check_run(const struct iova_check *chk, const struct lab_plugin *p, const void *config,
		   struct iova_check_result *res)
{
	const struct lab_iova_ops *ops = p->ops;

	memset(res, 0, sizeof(*res));
	if (p->kind != LAB_KIND_IOVA || !ops || !ops->init || !ops->fini || !ops->alloc ||
	    !ops->free || !ops->flush_cpu || !ops->flush_all) {
		res->verdict = IOVA_CHECK_FAIL;
		snprintf(res->detail, sizeof(res->detail),
			 "%s: expected an iova plugin with init, fini, alloc, free, flush_cpu and "
			 "flush_all",
			 p->name);
		return -EINVAL;
	}
	res->verdict = IOVA_CHECK_PASS;
	chk->run(p, config, res);
	return 0;
}

const char *iova_check_verdict_name(enum iova_check_verdict v)
{
	switch (v) {
	case IOVA_CHECK_PASS:
		return "pass";
	case IOVA_CHECK_FAIL:
		return "FAIL";
	case IOVA_CHECK_SKIP:
		return "skip";
	}
	return "?";
}
