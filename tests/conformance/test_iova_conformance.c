/* SPDX-License-Identifier: MIT */
/*
 * test_iova_conformance -- every iova plugin in the build's plugin directory, parameterised:
 * loaded with dlopen, run on a host_env (1 and 2 CPUs) in front of the real slow path.
 * Properties: no range handed out twice or overlapping a live one, every range inside its
 * limit and size-aligned, everything returned exactly once by fini (tree back to the anchor,
 * no lab_alloc leak), flushes return everything cached, allocation failure flushes and
 * retries once and then fails cleanly, magazine allocation failure loses nothing, the list
 * depot's tick trims the depot to ncpus, bounded depots stay within their memory formula.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/iova.h>

#include "engine/host.h"
#include "iova/slowpath.h"

#define DMA32 IOVA_DMA_32BIT_PFN_4K
#define LIM32 (DMA32 - 1)
#define LIM64 (4 * DMA32 - 1) /* a 34-bit device: keeps the shadow bitmap small */
#define MAG_SIZE 127	      /* IOVA_MAG_SIZE: how many frees fill a magazine */
#define NBINS 6		      /* IOVA_RANGE_CACHE_MAX_SIZE */
#define MAG_BYTES 1024

/* ---- finding the plugins -------------------------------------------------------------------- */

struct plugin_case {
	char path[512];
	char name[64];
};

#define MAX_PLUGINS 32
static struct plugin_case cases[MAX_PLUGINS];

static int case_cmp(const void *a, const void *b)
{
	return strcmp(((const struct plugin_case *)a)->name, ((const struct plugin_case *)b)->name);
}

static size_t find_plugins(void)
{
	const char *dir = getenv("IOMMULAB_PLUGIN_PATH");
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (!dir || !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) && n < MAX_PLUGINS) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "iova-", 5) || len < 9 ||
		    strcmp(de->d_name + len - 3, ".so") ||
		    strstr(de->d_name, ".sim.so")) /* sim builds run under the sim engine only */
			continue;
		snprintf(cases[n].path, sizeof(cases[n].path), "%s/%s", dir, de->d_name);
		snprintf(cases[n].name, sizeof(cases[n].name), "%.*s", (int)(len - 8),
			 de->d_name + 5);
		n++;
	}
	closedir(d);
	qsort(cases, n, sizeof(cases[0]), case_cmp);
	return n;
}

static struct criterion_test_params plugin_params(void)
{
	size_t n = find_plugins();

	return cr_make_param_array(struct plugin_case, cases, n);
}

Test(iova_conformance, plugins_found, .timeout = 10)
{
	static const char *const expected[] = { "depotless", "fixed_depot", "list_depot",
						"scaled_depot" };
	size_t n = find_plugins();

	cr_assert_not_null(getenv("IOMMULAB_PLUGIN_PATH"));
	for (size_t i = 0; i < LAB_ARRAY_SIZE(expected); i++) {
		bool found = false;

		for (size_t j = 0; j < n; j++)
			found |= !strcmp(cases[j].name, expected[i]);
		cr_assert(found, "iova-%s.so not in %s", expected[i],
			  getenv("IOMMULAB_PLUGIN_PATH"));
	}
}

/* ---- the rig: plugin + host + slow path ---------------------------------------------------- */

struct rig {
	void *dl;
	const struct lab_plugin *p;
	const struct lab_iova_ops *ops;
	struct host_env *env;
	struct iova_slowpath *sp;
	void *state;
	uint64_t tick_ns;
	uint32_t ncpus;
	unsigned char config[512];
};

/* Fill the config struct from the parameter table's defaults (what the host's loader does). */
static void rig_default_config(struct rig *r)
{
	cr_assert_leq(r->p->config_size, sizeof(r->config));
	for (uint32_t i = 0; i < r->p->n_params; i++) {
		const struct lab_param *prm = &r->p->params[i];

		cr_assert_leq(prm->offset + sizeof(uint64_t), r->p->config_size);
		if (prm->type == LAB_PARAM_UINT) {
			uint64_t v = strtoull(prm->def, NULL, 0);

			memcpy(r->config + prm->offset, &v, sizeof(v));
		} else if (prm->type == LAB_PARAM_INT) {
			int64_t v = strtoll(prm->def, NULL, 0);

			memcpy(r->config + prm->offset, &v, sizeof(v));
		} else {
			cr_assert_fail("param %s: type %d not handled by this test", prm->key,
				       (int)prm->type);
		}
	}
}

static const struct lab_param *rig_param(const struct rig *r, const char *key)
{
	for (uint32_t i = 0; i < r->p->n_params; i++)
		if (!strcmp(r->p->params[i].key, key))
			return &r->p->params[i];
	return NULL;
}

static void rig_open(struct rig *r, const struct plugin_case *pc, uint32_t ncpus,
		     uint64_t start_pfn)
{
	char err[256] = "";
	lab_plugin_entry_fn entry;
	void *sym;

	memset(r, 0, sizeof(*r));
	r->ncpus = ncpus;
	r->dl = dlopen(pc->path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(r->dl, "dlopen %s: %s", pc->path, dlerror());
	sym = dlsym(r->dl, LAB_PLUGIN_ENTRY_NAME);
	cr_assert_not_null(sym, "%s: no %s", pc->path, LAB_PLUGIN_ENTRY_NAME);
	memcpy(&entry, &sym, sizeof(entry)); /* ISO C has no object-to-function cast */
	r->p = entry();
	cr_assert_eq(r->p->magic, LAB_PLUGIN_MAGIC);
	cr_assert_eq(r->p->abi_major, LAB_ABI_MAJOR);
	cr_assert_eq(r->p->kind, LAB_KIND_IOVA);
	cr_assert_str_eq(r->p->name, pc->name);
	r->ops = r->p->ops;
	cr_assert(r->ops->init && r->ops->fini && r->ops->alloc && r->ops->free &&
		  r->ops->flush_cpu && r->ops->flush_all);
	rig_default_config(r);
	r->env = host_env_new(ncpus, r->p->n_counters, false);
	cr_assert_not_null(r->env);
	r->sp = slowpath_new(host_env_host(r->env), start_pfn, DMA32);
	cr_assert_not_null(r->sp);

	struct lab_iova_setup s = {
		.struct_size = sizeof(s),
		.host = host_env_host(r->env),
		.domain = slowpath_domain(r->sp),
		.ncpus = ncpus,
		.config = r->config,
		.err = err,
		.err_len = sizeof(err),
	};
	cr_assert_eq(r->ops->init(&s, &r->state), 0, "%s init: %s", pc->name, err);
	r->tick_ns = s.tick_ns;
}

static struct lab_cpu *rig_cpu(struct rig *r, uint32_t i)
{
	return host_env_cpu(r->env, i);
}

/* A counter summed over CPUs (levels are per-CPU deltas; the sum wraps back to the truth). */
static uint64_t rig_counter(struct rig *r, const char *name)
{
	uint64_t sum = 0;
	uint32_t id;

	for (id = 0; id < r->p->n_counters; id++)
		if (!strcmp(r->p->counters[id].name, name))
			break;
	cr_assert_lt(id, r->p->n_counters, "%s has no counter %s", r->p->name, name);
	for (uint32_t i = 0; i < r->ncpus; i++)
		sum += rig_cpu(r, i)->counters[id];
	return sum;
}

/* fini, then the tree must be back to the anchor and only the slow path may hold memory. */
static void rig_close(struct rig *r)
{
	struct slowpath_stats st;

	r->ops->fini(rig_cpu(r, 0), r->state);
	slowpath_get_stats(r->sp, &st);
	cr_assert_eq(slowpath_check(r->sp, NULL, NULL), 0);
	cr_assert_eq(st.live, 0, "%s: %llu ranges still in the tree after fini", r->p->name,
		     (unsigned long long)st.live);
	cr_assert_eq(st.free_errors, 0, "%s: a range was returned twice or mis-sized", r->p->name);
	cr_assert_eq(host_env_live_allocs(r->env), slowpath_allocs_held(r->sp),
		     "%s leaked lab_alloc memory", r->p->name);
	cr_assert_eq(rig_counter(r, "iovas_cached"), 0);
	cr_assert_eq(rig_counter(r, "cache_bytes"), 0);
	slowpath_free(r->sp);
	cr_assert_eq(host_env_live_allocs(r->env), 0);
	host_env_free(r->env);
	dlclose(r->dl);
}

static void rig_flush_everything(struct rig *r, struct lab_cpu *c)
{
	for (uint32_t i = 0; i < r->ncpus; i++)
		r->ops->flush_cpu(c, r->state, i);
	r->ops->flush_all(c, r->state);
}

/* ---- shadow of the live ranges ------------------------------------------------------------- */

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

struct shadow {
	uint8_t *bits;
	uint64_t npfns;
	pthread_mutex_t lock;
};

static void shadow_init(struct shadow *s, uint64_t npfns)
{
	s->bits = calloc(npfns / 8 + 1, 1);
	cr_assert_not_null(s->bits);
	s->npfns = npfns;
	pthread_mutex_init(&s->lock, NULL);
}

static void shadow_mark(struct shadow *s, uint64_t pfn, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	for (uint64_t p = pfn; p < pfn + n; p++) {
		cr_assert_lt(p, s->npfns);
		cr_assert_eq(s->bits[p / 8] & (1u << (p % 8)), 0,
			     "pfn %#llx handed out while live", (unsigned long long)p);
		s->bits[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	pthread_mutex_unlock(&s->lock);
}

/* Cleared before the plugin sees the free, so a concurrent reuse is never a false alarm. */
static void shadow_clear(struct shadow *s, uint64_t pfn, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	for (uint64_t p = pfn; p < pfn + n; p++) {
		cr_assert(s->bits[p / 8] & (1u << (p % 8)));
		s->bits[p / 8] &= (uint8_t)~(1u << (p % 8));
	}
	pthread_mutex_unlock(&s->lock);
}

struct range {
	uint64_t pfn, size;
};

/* Allocate through the plugin and check the range; 0 when none. */
static uint64_t checked_alloc(struct rig *r, struct lab_cpu *c, struct shadow *s, uint64_t size,
			      uint64_t limit, bool flush)
{
	uint64_t pfn = r->ops->alloc(c, r->state, size, limit, flush);

	if (!pfn)
		return 0;
	cr_assert_eq(pfn % roundup_pow2(size), 0, "%s: size %llu at %#llx not aligned",
		     r->p->name, (unsigned long long)size, (unsigned long long)pfn);
	cr_assert_leq(pfn + alloc_size(size) - 1, limit, "%s: %#llx+%llu over limit %#llx",
		      r->p->name, (unsigned long long)pfn, (unsigned long long)size,
		      (unsigned long long)limit);
	if (s)
		shadow_mark(s, pfn, alloc_size(size));
	return pfn;
}

static void checked_free(struct rig *r, struct lab_cpu *c, struct shadow *s, uint64_t pfn,
			 uint64_t size)
{
	if (s)
		shadow_clear(s, pfn, alloc_size(size));
	r->ops->free(c, r->state, pfn, size);
}

/* ---- random alloc/free, 1 and 2 CPUs ------------------------------------------------------- */

struct worker {
	struct rig *r;
	struct shadow *s;
	struct lab_cpu *c;
	unsigned int seed;
	int steps;
};

static void *random_worker(void *arg)
{
	enum { MAXLIVE = 3000 };
	struct worker *w = arg;
	struct range *live = calloc(MAXLIVE, sizeof(*live));
	int n = 0;

	cr_assert_not_null(live);
	for (int step = 0; step < w->steps; step++) {
		int r = rand_r(&w->seed) % 100;

		/* Phases of growth and shrinkage so that magazines fill and drain. */
		bool grow = (step / 2000) % 2 == 0;

		if (n && (n == MAXLIVE || r < (grow ? 35 : 65))) {
			int i = rand_r(&w->seed) % n;

			checked_free(w->r, w->c, w->s, live[i].pfn, live[i].size);
			live[i] = live[--n];
		} else {
			/* Mostly small sizes (the cached bins), some up to 64 pages. */
			uint64_t span = rand_r(&w->seed) % 2 ? 4 : 64;
			uint64_t size = (uint64_t)rand_r(&w->seed) % span + 1;
			uint64_t limit = rand_r(&w->seed) % 2 ? LIM32 : LIM64;
			uint64_t pfn = checked_alloc(w->r, w->c, w->s, size, limit, true);

			cr_assert_neq(pfn, 0, "%s: alloc failed in a nearly empty space",
				      w->r->p->name);
			live[n].pfn = pfn;
			live[n].size = size;
			n++;
		}
	}
	for (int i = 0; i < n; i++)
		checked_free(w->r, w->c, w->s, live[i].pfn, live[i].size);
	free(live);
	return NULL;
}

static void run_random(const struct plugin_case *pc, uint32_t ncpus)
{
	struct rig r;
	struct shadow s;
	struct worker w[2];
	pthread_t t[2];
	uint64_t cached, live_before;

	rig_open(&r, pc, ncpus, 1);
	shadow_init(&s, LIM64 + 1);
	for (uint32_t i = 0; i < ncpus; i++) {
		w[i] = (struct worker){ &r, &s, rig_cpu(&r, i), 17u + i, 20000 };
		cr_assert_eq(pthread_create(&t[i], NULL, random_worker, &w[i]), 0);
	}
	for (uint32_t i = 0; i < ncpus; i++)
		pthread_join(t[i], NULL);

	/* Everything was freed: what the tree still holds is exactly what is cached. */
	cached = rig_counter(&r, "iovas_cached");
	live_before = slowpath_live(r.sp);
	cr_assert_eq(live_before, cached, "%s: tree holds %llu, caches %llu", pc->name,
		     (unsigned long long)live_before, (unsigned long long)cached);
	cr_assert_gt(cached, 0, "%s cached nothing", pc->name);
	cr_assert_gt(rig_counter(&r, "loaded_hits"), 0);
	cr_assert_eq(slowpath_check(r.sp, NULL, NULL), 0);
	rig_flush_everything(&r, rig_cpu(&r, 0));
	cr_assert_eq(rig_counter(&r, "iovas_cached"), 0);
	cr_assert_eq(slowpath_live(r.sp), 0);
	rig_close(&r);
	free(s.bits);
}

ParameterizedTestParameters(iova_conformance, random_1cpu)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, random_1cpu, .timeout = 60)
{
	run_random(pc, 1);
}

ParameterizedTestParameters(iova_conformance, random_2cpu)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, random_2cpu, .timeout = 60)
{
	run_random(pc, 2);
}

/* ---- flushes --------------------------------------------------------------------------------- */

ParameterizedTestParameters(iova_conformance, flush_returns_everything)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, flush_returns_everything,
		  .timeout = 30)
{
	enum { N = 2000 };
	static struct range live[2][N];
	struct rig r;
	uint64_t cached, tree;

	rig_open(&r, pc, 2, 1);
	/* Both CPUs fill their magazines (and the depot where there is one) in every bin. */
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		struct lab_cpu *c = rig_cpu(&r, cpu);

		for (int i = 0; i < N; i++) {
			live[cpu][i].size = UINT64_C(1) << (i % NBINS);
			live[cpu][i].pfn = checked_alloc(&r, c, NULL, live[cpu][i].size, LIM64,
							 true);
			cr_assert_neq(live[cpu][i].pfn, 0);
		}
		for (int i = 0; i < N; i++)
			checked_free(&r, c, NULL, live[cpu][i].pfn, live[cpu][i].size);
	}
	cached = rig_counter(&r, "iovas_cached");
	tree = slowpath_live(r.sp);
	cr_assert_gt(cached, 0);
	cr_assert_eq(tree, cached);
	/* One CPU's flush returns exactly what that CPU's pair held; the rest stays. */
	r.ops->flush_cpu(rig_cpu(&r, 0), r.state, 1);
	cr_assert_eq(slowpath_live(r.sp), rig_counter(&r, "iovas_cached"));
	cr_assert_lt(rig_counter(&r, "iovas_cached"), cached);
	r.ops->flush_cpu(rig_cpu(&r, 1), r.state, 0);
	r.ops->flush_all(rig_cpu(&r, 1), r.state);
	cr_assert_eq(rig_counter(&r, "iovas_cached"), 0);
	cr_assert_eq(slowpath_live(r.sp), 0, "%s: the tree did not shrink by what was cached",
		     pc->name);
	/* Flushed magazines can be refilled. */
	uint64_t pfn = checked_alloc(&r, rig_cpu(&r, 0), NULL, 1, LIM32, false);
	checked_free(&r, rig_cpu(&r, 0), NULL, pfn, 1);
	cr_assert_eq(rig_counter(&r, "iovas_cached"), 1);
	rig_close(&r);
}

/* ---- a tiny domain: failure, flush and retry ----------------------------------------------- */

ParameterizedTestParameters(iova_conformance, full_domain_flush_and_retry)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, full_domain_flush_and_retry,
		  .timeout = 30)
{
	/* 64 pages of space, all below 4 GiB: [DMA32 - 64, DMA32). */
	const uint64_t start = DMA32 - 64;
	struct range pairs[32];
	uint64_t ones[64], flushes;
	struct lab_cpu *c0, *c1;
	struct shadow s;
	struct rig r;
	int npairs = 0;

	rig_open(&r, pc, 2, start);
	shadow_init(&s, DMA32);
	c0 = rig_cpu(&r, 0);
	c1 = rig_cpu(&r, 1);
	for (int i = 0; i < 64; i++) {
		ones[i] = checked_alloc(&r, c1, &s, 1, LIM32, false);
		cr_assert_geq(ones[i], start);
	}
	/* Truly full: flushing finds nothing, the retry fails, 0 comes back. */
	cr_assert_eq(checked_alloc(&r, c1, &s, 1, LIM32, true), 0);
	cr_assert_eq(rig_counter(&r, "flushes"), 1);

	/* CPU 1 frees the ten lowest pages: they sit in its magazines, still allocated. */
	for (int i = 54; i < 64; i++)
		checked_free(&r, c1, &s, ones[i], 1);
	cr_assert_eq(rig_counter(&r, "iovas_cached"), 10);
	cr_assert_eq(slowpath_live(r.sp), 64);

	/* CPU 0 wants two pages: without the flush there is no room... */
	cr_assert_eq(checked_alloc(&r, c0, &s, 2, LIM32, false), 0);
	cr_assert_eq(rig_counter(&r, "flushes"), 1);
	/* ...with it, CPU 1's magazines go back to the tree and the retry succeeds. */
	pairs[npairs].size = 2;
	pairs[npairs].pfn = checked_alloc(&r, c0, &s, 2, LIM32, true);
	cr_assert_neq(pairs[npairs].pfn, 0, "%s: no success after flushing", pc->name);
	cr_assert_lt(pairs[npairs].pfn, start + 10);
	npairs++;
	cr_assert_eq(rig_counter(&r, "flushes"), 2);
	cr_assert_eq(rig_counter(&r, "iovas_cached"), 0);

	/* Use up the rest: four more pairs fit in the ten pages, then it is full again. */
	while ((pairs[npairs].pfn = checked_alloc(&r, c0, &s, 2, LIM32, true))) {
		pairs[npairs].size = 2;
		cr_assert_lt(++npairs, 32);
	}
	cr_assert_eq(npairs, 5);
	flushes = rig_counter(&r, "flushes");
	cr_assert_eq(checked_alloc(&r, c0, &s, 1, LIM32, true), 0);
	cr_assert_eq(rig_counter(&r, "flushes"), flushes + 1);
	cr_assert_gt(rig_counter(&r, "alloc_failures"), 0);

	for (int i = 0; i < npairs; i++)
		checked_free(&r, c0, &s, pairs[i].pfn, pairs[i].size);
	for (int i = 0; i < 54; i++)
		checked_free(&r, i % 2 ? c0 : c1, &s, ones[i], 1);
	rig_close(&r);
	free(s.bits);
}

/* ---- magazine allocation failure ----------------------------------------------------------- */

ParameterizedTestParameters(iova_conformance, magazine_alloc_failure_loses_nothing)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, magazine_alloc_failure_loses_nothing,
		  .timeout = 30)
{
	enum { N = 3000 };
	static struct range live[N];
	struct lab_cpu *c;
	struct shadow s;
	struct rig r;
	int n = 0;

	rig_open(&r, pc, 1, 1);
	shadow_init(&s, LIM64 + 1);
	c = rig_cpu(&r, 0);
	for (int i = 0; i < N; i++) {
		live[n].size = 1;
		live[n].pfn = checked_alloc(&r, c, &s, 1, LIM64, true);
		cr_assert_neq(live[n].pfn, 0);
		n++;
	}
	/* Every third lab_alloc fails from now on: magazines and tree nodes alike. */
	host_env_set_alloc_fault(r.env, 3);
	for (int i = 0; i < N / 2; i++) {
		n--;
		checked_free(&r, c, &s, live[n].pfn, live[n].size);
	}
	for (int i = 0; i < N / 4; i++) {
		uint64_t pfn = checked_alloc(&r, c, &s, 1 + (uint64_t)(i % 8), LIM64, true);

		if (pfn) {
			live[n].pfn = pfn;
			live[n].size = 1 + (uint64_t)(i % 8);
			n++;
		}
	}
	while (n > 0) {
		n--;
		checked_free(&r, c, &s, live[n].pfn, live[n].size);
	}
	host_env_set_alloc_fault(r.env, 0);
	/* A policy with a depot had to fall back; one without spilled instead. */
	cr_assert_gt(rig_counter(&r, "mag_alloc_failures") + rig_counter(&r, "mags_freed_full"),
		     0);
	cr_assert_eq(slowpath_live(r.sp), rig_counter(&r, "iovas_cached"),
		     "%s: a range is neither cached nor free", pc->name);
	rig_close(&r);
	free(s.bits);
}

/* ---- list depot reclaim --------------------------------------------------------------------- */

static uint64_t depot_size(struct rig *r)
{
	return rig_counter(r, "depot_pushes") - rig_counter(r, "depot_pops") -
	       rig_counter(r, "depot_reclaims");
}

ParameterizedTestParameters(iova_conformance, tick_reclaims_to_ncpus)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, tick_reclaims_to_ncpus,
		  .timeout = 30)
{
	enum { N = 12 * MAG_SIZE };
	static uint64_t pfns[N];
	struct rig r;
	struct lab_cpu *c;
	uint64_t depot, cached, reclaims;

	rig_open(&r, pc, 2, 1);
	if (!r.ops->tick) {
		cr_assert_eq(r.tick_ns, 0, "%s asks for ticks but has no tick op", pc->name);
		rig_close(&r);
		cr_skip_test("%s has no periodic reclaim", pc->name);
	}
	if (rig_param(&r, "reclaim_ms"))
		cr_assert_eq(r.tick_ns, 100000000, "IOVA_DEPOT_DELAY is 100 ms by default");
	c = rig_cpu(&r, 0);
	for (int i = 0; i < N; i++)
		pfns[i] = checked_alloc(&r, c, NULL, 1, LIM64, true);
	for (int i = 0; i < N; i++)
		checked_free(&r, c, NULL, pfns[i], 1);
	depot = depot_size(&r);
	cr_assert_gt(depot, r.ncpus, "%s: the depot should be above ncpus", pc->name);
	cached = rig_counter(&r, "iovas_cached");
	for (int t = 0; t < 30; t++)
		r.ops->tick(rig_cpu(&r, (uint32_t)t % 2), r.state);
	reclaims = rig_counter(&r, "depot_reclaims");
	cr_assert_eq(depot_size(&r), r.ncpus, "%s: depot %llu after ticks, want %u", pc->name,
		     (unsigned long long)depot_size(&r), r.ncpus);
	cr_assert_eq(reclaims, depot - r.ncpus);
	cr_assert_eq(rig_counter(&r, "iovas_cached"), cached - reclaims * MAG_SIZE);
	cr_assert_eq(slowpath_live(r.sp), rig_counter(&r, "iovas_cached"));
	rig_close(&r);
}

/* ---- memory bound of bounded depots -------------------------------------------------------- */

ParameterizedTestParameters(iova_conformance, bounded_depot_memory)
{
	return plugin_params();
}

ParameterizedTest(struct plugin_case *pc, iova_conformance, bounded_depot_memory, .timeout = 60)
{
	/* More frees per bin than a pair plus a 32-deep depot can hold. */
	enum { N = (2 + 32 + 4) * MAG_SIZE };
	static uint64_t pfns[N];
	const struct lab_param *prm;
	uint64_t depot_max = 0, bound, peak = 0;
	struct rig r;

	rig_open(&r, pc, 2, 1);
	if (r.ops->tick) {
		rig_close(&r);
		cr_skip_test("%s has an unbounded depot", pc->name);
	}
	/* The depot's size as each bounded policy documents it in its parameter table. */
	if ((prm = rig_param(&r, "depot_max")))
		depot_max = strtoull(prm->def, NULL, 0);
	else if ((prm = rig_param(&r, "depot_min")))
		depot_max = strtoull(prm->def, NULL, 0) > r.ncpus ? strtoull(prm->def, NULL, 0)
								  : r.ncpus;
	bound = (2 * (uint64_t)r.ncpus + depot_max) * NBINS * MAG_BYTES;
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		struct lab_cpu *c = rig_cpu(&r, cpu);

		for (unsigned int b = 0; b < NBINS; b++) {
			uint64_t size = UINT64_C(1) << b;

			for (int i = 0; i < N; i++)
				pfns[i] = checked_alloc(&r, c, NULL, size, LIM64, true);
			for (int i = 0; i < N; i++) {
				uint64_t bytes;

				checked_free(&r, c, NULL, pfns[i], size);
				bytes = rig_counter(&r, "cache_bytes");
				cr_assert_leq(bytes, bound, "%s: %llu cache bytes > %llu", pc->name,
					      (unsigned long long)bytes, (unsigned long long)bound);
				if (bytes > peak)
					peak = bytes;
			}
		}
	}
	cr_assert_gt(rig_counter(&r, "mags_freed_full"), 0, "%s never hit its bound", pc->name);
	if (depot_max)
		cr_assert_gt(peak, 2 * (uint64_t)r.ncpus * NBINS * MAG_BYTES, "depot never used");
	else
		cr_assert_eq(peak, bound, "a policy without a depot holds exactly its pairs");
	/* The magazine memory the counter claims is really held (among other host blocks). */
	cr_assert_geq(host_env_live_bytes(r.env), rig_counter(&r, "cache_bytes"));
	rig_close(&r);
}
