/* SPDX-License-Identifier: MIT */
/*
 * test_slowpath -- the IOVA slow path (framework/iova/slowpath.c) and its red-black tree:
 * tree invariants under random inserts/erases, then the allocator's kernel behaviours
 * (alignment, limits, 32-bit-first hints, max32 fast fail and its reset, the retry pass,
 * free by pfn, batch free), a randomized run against a shadow bitmap, and two threads.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/host.h"
#include "iova/rbtree.h"
#include "iova/slowpath.h"

#define DMA32 IOVA_DMA_32BIT_PFN_4K

static uint64_t roundup_pow2(uint64_t x)
{
	uint64_t r = 1;

	while (r < x)
		r <<= 1;
	return r;
}

/* ---- red-black tree ----------------------------------------------------------------------- */

struct key_node {
	struct rb_node rb;
	int key;
};

static void key_insert(struct rb_root *root, struct key_node *k)
{
	struct rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = k->key < rb_entry(parent, struct key_node, rb)->key ? &parent->left
									   : &parent->right;
	}
	rb_link_node(&k->rb, parent, link);
	rb_insert_color(&k->rb, root);
}

Test(rbtree, random_insert_erase_keeps_invariants, .timeout = 20)
{
	enum { N = 1500 };
	static struct key_node nodes[N];
	static bool in[N];
	struct rb_root root = { 0 };
	unsigned int seed = 7;
	int live = 0;

	for (int i = 0; i < N; i++)
		nodes[i].key = i;
	for (int step = 0; step < 20000; step++) {
		int i = rand_r(&seed) % N;

		if (in[i]) {
			rb_erase(&nodes[i].rb, &root);
			live--;
		} else {
			key_insert(&root, &nodes[i]);
			live++;
		}
		in[i] = !in[i];
		if (step % 97 == 0 || step < 200) {
			int count = 0, last = -1, bh = rb_check(&root);

			cr_assert_geq(bh, 0, "red-black invariant broken at step %d", step);
			/* In-order walk is sorted, complete, and rb_prev undoes rb_next. */
			for (struct rb_node *n = rb_first(&root); n; n = rb_next(n)) {
				int k = rb_entry(n, struct key_node, rb)->key;

				cr_assert(in[k]);
				cr_assert_gt(k, last);
				if (rb_next(n))
					cr_assert_eq(rb_prev(rb_next(n)), n);
				last = k;
				count++;
			}
			cr_assert_eq(count, live);
			/* Balanced: height <= 2 log2(n + 1), via the black height. */
			if (live)
				cr_assert_leq(1 << (bh - 1), live + 1);
		}
	}
	cr_assert_eq(rb_last(&root) ? rb_next(rb_last(&root)) : NULL, NULL);
}

/* ---- allocator ---------------------------------------------------------------------------- */

static struct host_env *env;
static struct lab_cpu *cpu0;

static void setup(void)
{
	env = host_env_new(2, 1, false, false);
	cr_assert_not_null(env);
	cpu0 = host_env_cpu(env, 0);
}

static void teardown(void)
{
	cr_assert_eq(host_env_live_allocs(env), 0, "slow path leaked %llu blocks",
		     (unsigned long long)host_env_live_allocs(env));
	host_env_free(env);
}

TestSuite(slowpath, .init = setup, .fini = teardown, .timeout = 30);

static struct iova_slowpath *new_sp(uint64_t start, uint64_t dma32)
{
	struct iova_slowpath *sp = slowpath_new(host_env_host(env), start, dma32);

	cr_assert_not_null(sp);
	return sp;
}

Test(slowpath, rejects_bad_arguments)
{
	cr_assert_null(slowpath_new(host_env_host(env), 0, DMA32));
	cr_assert_null(slowpath_new(host_env_host(env), 1, 0));
}

Test(slowpath, top_down_and_size_aligned)
{
	struct iova_slowpath *sp = new_sp(1, DMA32);
	uint64_t limit = DMA32 - 1;

	/* The first range sits at the very top of the space below the limit. */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 1, limit), limit);
	for (uint64_t size = 1; size <= 300; size++) {
		uint64_t pfn = slowpath_alloc(cpu0, sp, size, limit);

		cr_assert_neq(pfn, 0);
		cr_assert_eq(pfn % roundup_pow2(size), 0, "size %llu at %#llx not aligned",
			     (unsigned long long)size, (unsigned long long)pfn);
		cr_assert_leq(pfn + size - 1, limit);
	}
	cr_assert_eq(slowpath_live(sp), 301);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	cr_assert_eq(host_env_live_allocs(env), slowpath_allocs_held(sp));
	slowpath_free(sp);
}

Test(slowpath, limits_and_32bit_hint)
{
	struct iova_slowpath *sp = new_sp(1, DMA32);
	uint64_t lim64 = 4 * DMA32 - 1, lim32 = DMA32 - 1, lo = 1000, pfn;

	/* Above-32-bit and 32-bit allocations interleave without disturbing each other. */
	for (int i = 0; i < 50; i++) {
		pfn = slowpath_alloc(cpu0, sp, 4, lim64);
		cr_assert_geq(pfn, DMA32);
		cr_assert_leq(pfn + 3, lim64);
		pfn = slowpath_alloc(cpu0, sp, 4, lim32);
		cr_assert_lt(pfn + 3, DMA32);
		pfn = slowpath_alloc(cpu0, sp, 2, lo);
		cr_assert_leq(pfn + 1, lo);
	}
	/* Continuing top-down from the hint: the next 64-bit range is just below the last. */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 4, lim64), lim64 + 1 - 51 * 4);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	/* A limit below start_pfn + size can never be met. */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 4, 2), 0);
	cr_assert_eq(slowpath_alloc(cpu0, sp, 0, lim64), 0);
	slowpath_free(sp);
}

Test(slowpath, max32_fast_fail_and_reset_on_free)
{
	/* 16 pages of 32-bit space: [DMA32 - 16, DMA32). */
	struct iova_slowpath *sp = new_sp(DMA32 - 16, DMA32);
	struct slowpath_stats st;
	uint64_t pfns[16];

	for (int i = 0; i < 16; i++) {
		pfns[i] = slowpath_alloc(cpu0, sp, 1, DMA32 - 1);
		cr_assert_eq(pfns[i], DMA32 - 1 - (uint64_t)i);
	}
	/* Full: a size-4 search fails and is remembered... */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 4, DMA32 - 1), 0);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.fast_fails, 0);
	/* ...so size 4 and larger now fail without a search, smaller ones still search. */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 8, DMA32 - 1), 0);
	cr_assert_eq(slowpath_alloc(cpu0, sp, 2, DMA32 - 1), 0);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.fast_fails, 1);
	cr_assert_eq(st.failures, 3);
	/* Above 32 bits the fast fail does not apply (the 2 just lowered max32 to 2). */
	cr_assert_geq(slowpath_alloc(cpu0, sp, 8, 2 * DMA32 - 1), DMA32);
	/* Freeing four aligned pages below 4 GiB resets the limit: size 4 fits again. */
	for (int i = 4; i < 8; i++)
		slowpath_release(cpu0, sp, pfns[i], 1);
	cr_assert_eq(slowpath_alloc(cpu0, sp, 4, DMA32 - 1), DMA32 - 8);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.fast_fails, 1);
	cr_assert_eq(st.free_errors, 0);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	slowpath_free(sp);
}

Test(slowpath, retry_pass_finds_space_above_the_hint)
{
	struct iova_slowpath *sp = new_sp(100, DMA32);
	struct slowpath_stats st;

	/* Fill [100, 199] with a low limit: the 32-bit hint ends at pfn 100. */
	for (uint64_t i = 0; i < 100; i++)
		cr_assert_eq(slowpath_alloc(cpu0, sp, 1, 199), 199 - i);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.retries, 0, "no pass failed yet");
	/*
	 * (Asking for one more below 200 now would fail both passes and set max32_alloc_size
	 * to 1, after which every 32-bit request fails fast until a free: see the test above.)
	 * The first pass below the hint finds nothing; the second, above it, finds 299.
	 */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 1, 299), 299);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.retries, 1);
	cr_assert_eq(st.failures, 0);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	slowpath_free(sp);
}

/*
 * The gap search's length (walk_nodes): an allocation below the newest range steps over one
 * node; one that must pass a dense region steps over every range in it.
 */
Test(slowpath, walk_nodes_counts_the_gap_search)
{
	struct iova_slowpath *sp = new_sp(1, DMA32);
	uint64_t limit = DMA32 - 1, pfn;
	struct slowpath_stats st;

	for (uint64_t i = 0; i < 100; i++)
		cr_assert_eq(slowpath_alloc(cpu0, sp, 1, limit), limit - i);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.walk_nodes, 100, "one node each below the hint: %llu",
		     (unsigned long long)st.walk_nodes);
	/* Free the top page: the hint moves above it, and a 2-page range does not fit its gap. */
	slowpath_release(cpu0, sp, limit, 1);
	pfn = slowpath_alloc(cpu0, sp, 2, limit);
	cr_assert_eq(pfn, limit - 101 - (limit - 101) % 2, "below the dense block: %#llx",
		     (unsigned long long)pfn);
	slowpath_get_stats(sp, &st);
	cr_assert_geq(st.walk_nodes, 100 + 99, "the search stepped over the 99 ranges: %llu",
		      (unsigned long long)st.walk_nodes);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	slowpath_free(sp);
}

Test(slowpath, free_by_pfn_and_batch)
{
	struct iova_slowpath *sp = new_sp(1, DMA32);
	struct slowpath_stats st;
	uint64_t pfns[10], sizes[10], big;

	big = slowpath_alloc(cpu0, sp, 8, DMA32 - 1);
	cr_assert_neq(big, 0);
	/* A pfn inside the range, an unknown pfn and a wrong size are all counted errors. */
	slowpath_release(cpu0, sp, big + 1, 8);
	slowpath_release(cpu0, sp, 12345, 1);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.free_errors, 2);
	cr_assert_eq(slowpath_live(sp), 1);
	slowpath_release(cpu0, sp, big, 8);
	cr_assert_eq(slowpath_live(sp), 0);

	for (int i = 0; i < 10; i++) {
		sizes[i] = (uint64_t)i % 3 + 1;
		pfns[i] = slowpath_alloc(cpu0, sp, sizes[i], 4 * DMA32 - 1);
		sizes[i] = sizes[i]; /* the size asked for is the size freed */
	}
	slowpath_get_stats(sp, &st);
	uint64_t acquires = st.lock_acquires;
	slowpath_release_batch(cpu0, sp, pfns, sizes, 10);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.lock_acquires, acquires + 1, "a batch takes the lock once");
	cr_assert_eq(st.batches, 1);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.free_errors, 2);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	/* Everything returned: the hints are back at the anchor, the top is free again. */
	cr_assert_eq(slowpath_alloc(cpu0, sp, 1, DMA32 - 1), DMA32 - 1);
	slowpath_free(sp);
}

/* ---- randomized against a shadow bitmap ----------------------------------------------------- */

struct shadow {
	uint8_t *bits;
	uint64_t npfns;
	pthread_mutex_t lock;
};

static void shadow_init(struct shadow *s, uint64_t npfns)
{
	s->bits = calloc(npfns / 8 + 1, 1);
	s->npfns = npfns;
	pthread_mutex_init(&s->lock, NULL);
	cr_assert_not_null(s->bits);
}

/* Mark [pfn, pfn + n): every page must have been free. */
static void shadow_mark(struct shadow *s, uint64_t pfn, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	for (uint64_t p = pfn; p < pfn + n; p++) {
		cr_assert_lt(p, s->npfns);
		cr_assert_eq(s->bits[p / 8] & (1u << (p % 8)), 0, "pfn %#llx handed out twice",
			     (unsigned long long)p);
		s->bits[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	pthread_mutex_unlock(&s->lock);
}

static void shadow_clear(struct shadow *s, uint64_t pfn, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	for (uint64_t p = pfn; p < pfn + n; p++)
		s->bits[p / 8] &= (uint8_t) ~(1u << (p % 8));
	pthread_mutex_unlock(&s->lock);
}

struct walk_ctx {
	struct shadow *s;
	uint64_t pages;
};

static void walk_cb(uint64_t lo, uint64_t hi, void *arg)
{
	struct walk_ctx *w = arg;

	for (uint64_t p = lo; p <= hi; p++)
		cr_assert(w->s->bits[p / 8] & (1u << (p % 8)), "tree has %#llx, shadow not",
			  (unsigned long long)p);
	w->pages += hi - lo + 1;
}

struct range {
	uint64_t pfn, size;
};

struct worker {
	struct iova_slowpath *sp;
	struct shadow *s;
	struct lab_cpu *c;
	unsigned int seed;
	int steps;
	uint64_t small_dma32;
	uint64_t live_pages;
	uint64_t fails;
};

static void run_random(struct worker *w)
{
	enum { MAXLIVE = 400 };
	struct range live[MAXLIVE];
	int n = 0;

	for (int step = 0; step < w->steps; step++) {
		int r = rand_r(&w->seed) % 100;

		if (n && (r < 40 || n == MAXLIVE)) {
			if (r < 5 && n >= 8) {
				/* Batch-free the last eight. */
				uint64_t pfns[8], sizes[8];

				for (int i = 0; i < 8; i++) {
					n--;
					pfns[i] = live[n].pfn;
					sizes[i] = live[n].size;
					shadow_clear(w->s, pfns[i], sizes[i]);
				}
				slowpath_release_batch(w->c, w->sp, pfns, sizes, 8);
			} else {
				int i = rand_r(&w->seed) % n;

				shadow_clear(w->s, live[i].pfn, live[i].size);
				slowpath_release(w->c, w->sp, live[i].pfn, live[i].size);
				live[i] = live[--n];
			}
		} else {
			uint64_t size = (uint64_t)(rand_r(&w->seed) % 64) + 1;
			uint64_t limit =
				rand_r(&w->seed) % 2 ? w->small_dma32 - 1 : 4 * w->small_dma32 - 1;
			uint64_t pfn = slowpath_alloc(w->c, w->sp, size, limit);

			if (!pfn) {
				w->fails++;
				continue;
			}
			cr_assert_eq(pfn % roundup_pow2(size), 0);
			cr_assert_leq(pfn + size - 1, limit);
			shadow_mark(w->s, pfn, size);
			live[n].pfn = pfn;
			live[n].size = size;
			n++;
		}
	}
	for (int i = 0; i < n; i++)
		w->live_pages += live[i].size;
	/* Leave the survivors for the caller to check, then free them. */
	w->steps = n;
	for (int i = 0; i < n; i++) {
		shadow_clear(w->s, live[i].pfn, live[i].size);
		slowpath_release(w->c, w->sp, live[i].pfn, live[i].size);
	}
}

Test(slowpath, randomized_against_shadow)
{
	/* A small "32-bit" space (1024 pages) so that the space fills and failures happen. */
	uint64_t dma32 = 1024;
	struct iova_slowpath *sp = new_sp(1, dma32);
	struct shadow s;
	struct slowpath_stats st;

	shadow_init(&s, 4 * dma32);
	for (unsigned int round = 0; round < 20; round++) {
		struct worker w = { sp, &s, cpu0, round + 1, 1000, dma32, 0, 0 };
		struct walk_ctx wc = { &s, 0 };

		run_random(&w);
		cr_assert_eq(slowpath_check(sp, walk_cb, &wc), 0);
		cr_assert_eq(slowpath_live(sp), 0);
	}
	slowpath_get_stats(sp, &st);
	cr_assert_gt(st.failures, 0, "the space should have filled at times");
	cr_assert_eq(st.free_errors, 0);
	cr_assert_eq(st.allocs, st.frees);
	slowpath_free(sp);
	free(s.bits);
}

/* Stop mid-run and compare the tree with the shadow while ranges are live. */
Test(slowpath, tree_matches_shadow_midway)
{
	uint64_t dma32 = 4096;
	struct iova_slowpath *sp = new_sp(1, dma32);
	struct shadow s;
	struct walk_ctx wc;
	uint64_t pages = 0;
	unsigned int seed = 3;

	shadow_init(&s, 4 * dma32);
	wc.s = &s;
	wc.pages = 0;
	for (int i = 0; i < 300; i++) {
		uint64_t size = (uint64_t)(rand_r(&seed) % 64) + 1;
		uint64_t pfn = slowpath_alloc(cpu0, sp, size, 4 * dma32 - 1);

		if (pfn) {
			shadow_mark(&s, pfn, size);
			pages += size;
		}
	}
	cr_assert_eq(slowpath_check(sp, walk_cb, &wc), 0);
	cr_assert_eq(wc.pages, pages);
	cr_assert_eq(host_env_live_allocs(env), slowpath_allocs_held(sp));
	slowpath_free(sp);
	free(s.bits);
}

static void *thread_main(void *arg)
{
	run_random(arg);
	return NULL;
}

Test(slowpath, two_threads_unique_ranges)
{
	uint64_t dma32 = 1 << 14;
	struct iova_slowpath *sp = new_sp(1, dma32);
	struct shadow s;
	struct worker w[2];
	pthread_t t[2];
	struct slowpath_stats st;

	shadow_init(&s, 4 * dma32);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){
			sp, &s, host_env_cpu(env, (uint32_t)i), 100u + (unsigned)i, 20000, dma32,
			0,  0
		};
		cr_assert_eq(pthread_create(&t[i], NULL, thread_main, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.free_errors, 0);
	cr_assert_eq(st.live, 0);
	cr_assert_eq(st.allocs, st.frees);
	cr_assert_geq(st.max_live, 2);
	cr_assert_eq(slowpath_check(sp, NULL, NULL), 0);
	slowpath_free(sp);
	free(s.bits);
}
