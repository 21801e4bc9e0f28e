/* SPDX-License-Identifier: MIT */
/*
 * test_flush_queue -- the lazy mode's flush queue (framework/workload/flush_queue.h) on its
 * own, with the caller's time: it flushes when a ring is full and when its timer is due,
 * frees nothing before a flush that started after the entry was queued has completed, and
 * gives everything back at teardown; then in front of a real IOVA policy and the slow path,
 * no IOVA is handed out again while it waits in the queue and every one comes back exactly
 * once. The dma workload's modes on the sim (virtual time) are tests/unit/test_dma_modes.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/iova.h>

#include "engine/host.h"
#include "iova/slowpath.h"
#include "loader/loader.h"
#include "params/params.h"
#include "workload/flush_queue.h"

#define MS	    1000000ull
#define MAX_PFN	    4096
#define MAX_FLUSHES 64

struct rig {
	struct flush_queue *fq;
	uint32_t flushes[2];	    /* by why */
	uint64_t freed[MAX_PFN];    /* times each pfn was freed */
	uint32_t freed_by[MAX_PFN]; /* the CPU that freed it last */
	uint32_t freed_n;
	/* Queue this from inside the next flush, on cpu_in_flush (a queueing racing a flush). */
	bool queue_in_flush;
	struct lab_cpu *cpu_in_flush;
	uint64_t pfn_in_flush;
	uint64_t now;
	/* the real policy (iova rig) */
	const struct lab_iova_ops *iops;
	void *istate;
	uint8_t *live; /* per pfn: 1 while allocated by the test and not yet freed */
};

static int rig_flush(void *arg, struct lab_cpu *c, enum fq_flush_why why)
{
	struct rig *r = arg;

	(void)c;
	r->flushes[why]++;
	if (r->queue_in_flush) {
		r->queue_in_flush = false;
		cr_assert_eq(fq_queue(r->fq, r->cpu_in_flush, r->pfn_in_flush, 1, r->now), 0);
	}
	return 0;
}

static void rig_free(void *arg, struct lab_cpu *c, uint64_t pfn, uint64_t pages)
{
	struct rig *r = arg;

	cr_assert_eq(pages, 1);
	cr_assert_lt(pfn, MAX_PFN);
	r->freed[pfn]++;
	r->freed_by[pfn] = c->id;
	r->freed_n++;
	if (r->iops) {
		cr_assert_eq(r->live[pfn], 1, "pfn %lu freed while not allocated",
			     (unsigned long)pfn);
		r->live[pfn] = 0;
		r->iops->free(c, r->istate, pfn, pages);
	}
}

static const struct fq_ops rig_ops = { .flush = rig_flush, .free = rig_free };

static struct lab_cpu cpus[4];

static void rig_init(struct rig *r, bool single, uint32_t size, uint64_t timeout_ns)
{
	memset(r, 0, sizeof(*r));
	for (uint32_t i = 0; i < 4; i++)
		cpus[i] = (struct lab_cpu){ .id = i, .ncpus = 4 };
	r->fq = fq_new(4, single, size, timeout_ns, &rig_ops, r);
	cr_assert_not_null(r->fq);
}

Test(flush_queue, a_full_ring_flushes_and_only_then_frees)
{
	struct rig r;
	struct fq_stats st;

	rig_init(&r, false, 4, 10 * MS);
	for (uint64_t pfn = 1; pfn <= 4; pfn++)
		cr_assert_eq(fq_queue(r.fq, &cpus[0], pfn, 1, 0), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_FULL] + r.flushes[FQ_FLUSH_TIMEOUT], 0);
	cr_assert_eq(r.freed_n, 0, "freed before any flush");
	cr_assert_eq(fq_pending(r.fq), 4);
	/* Another CPU's ring is its own: CPU 1 fills nothing of CPU 0's. */
	cr_assert_eq(fq_queue(r.fq, &cpus[1], 100, 1, 0), 0);
	cr_assert_eq(r.freed_n, 0);
	/* The fifth on CPU 0: one full flush, then its four come back, oldest first. */
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 5, 1, 0), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_FULL], 1);
	cr_assert_eq(r.freed_n, 4);
	for (uint64_t pfn = 1; pfn <= 4; pfn++)
		cr_assert_eq(r.freed[pfn], 1);
	cr_assert_eq(r.freed[5], 0, "the entry queued after the flush was freed by it");
	/* CPU 1's entry is covered by that flush too: its next tick frees it. */
	cr_assert_eq(r.freed[100], 0);
	cr_assert_eq(fq_tick(r.fq, &cpus[1], 1), 0);
	cr_assert_eq(r.freed[100], 1);
	fq_get_stats(r.fq, &st);
	cr_assert_eq(st.queued, 6);
	cr_assert_eq(st.freed, 5);
	cr_assert_eq(st.flush_full, 1);
	cr_assert_eq(st.flush_timeout, 0);
	fq_free(r.fq);
}

Test(flush_queue, the_timer_flushes_once_its_timeout_has_passed)
{
	struct rig r;

	rig_init(&r, false, 256, 10 * MS);
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 1, 1, 1 * MS), 0); /* arms: due at 11 ms */
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 2, 1, 5 * MS), 0); /* already armed */
	cr_assert_eq(fq_queue(r.fq, &cpus[1], 7, 1, 6 * MS), 0); /* CPU 1's ring */
	cr_assert_eq(fq_tick(r.fq, &cpus[0], 11 * MS - 1), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 0, "flushed before its timeout");
	cr_assert_eq(r.freed_n, 0);
	/* The timer is CPU 0's, which armed it (mod_timer() on the current CPU). */
	cr_assert_eq(fq_timer_due(r.fq, &cpus[0]), 11 * MS);
	cr_assert_eq(fq_timer_due(r.fq, &cpus[1]), UINT64_MAX);
	cr_assert_eq(fq_tick(r.fq, &cpus[2], 11 * MS), 0);
	cr_assert_eq(fq_tick(r.fq, &cpus[1], 11 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 0, "run by a CPU that did not arm it");
	/*
	 * CPU 0 runs it: one flush, and it frees every ring's covered entries itself
	 * (fq_flush_timeout() walks every CPU's queue): CPU 1's entry goes into CPU 0's cache.
	 */
	cr_assert_eq(fq_tick(r.fq, &cpus[0], 11 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 1);
	cr_assert_eq(r.freed_n, 3);
	cr_assert(r.freed_by[1] == 0 && r.freed_by[2] == 0 && r.freed_by[7] == 0,
		  "freed by CPUs %u, %u and %u", r.freed_by[1], r.freed_by[2], r.freed_by[7]);
	cr_assert_eq(fq_timer_due(r.fq, &cpus[0]), UINT64_MAX, "still armed");
	cr_assert_eq(fq_tick(r.fq, &cpus[1], 11 * MS), 0);
	cr_assert_eq(fq_tick(r.fq, &cpus[0], 11 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 1);
	cr_assert_eq(r.freed_n, 3, "freed twice");
	/* Disarmed until the next queueing, which arms it again. */
	cr_assert_eq(fq_tick(r.fq, &cpus[0], 100 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 1);
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 3, 1, 100 * MS), 0);
	/* The unmap path checks the timer too. */
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 4, 1, 110 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 2);
	cr_assert_eq(r.freed[3], 1);
	cr_assert_eq(r.freed[4], 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_FULL], 0);
	fq_free(r.fq);
}

/* An entry queued while a flush runs may have been cleared after that flush invalidated. */
Test(flush_queue, an_entry_queued_during_a_flush_waits_for_the_next)
{
	struct rig r;

	rig_init(&r, false, 2, 10 * MS);
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 1, 1, 0), 0);
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 2, 1, 0), 0);
	r.queue_in_flush = true;
	r.cpu_in_flush = &cpus[1];
	r.pfn_in_flush = 50;
	cr_assert_eq(fq_queue(r.fq, &cpus[0], 3, 1, 0), 0); /* full: flush, CPU 1 queues in it */
	cr_assert_eq(r.flushes[FQ_FLUSH_FULL], 1);
	cr_assert_eq(r.freed[1] + r.freed[2], 2);
	cr_assert_eq(fq_tick(r.fq, &cpus[1], 0), 0);
	cr_assert_eq(r.freed[50], 0, "freed by a flush that was running when it was queued");
	/* The next flush covers it: the timeout CPU 0 armed, which frees CPU 1's ring too. */
	cr_assert_eq(fq_tick(r.fq, &cpus[0], 10 * MS), 0);
	cr_assert_eq(r.flushes[FQ_FLUSH_TIMEOUT], 1);
	cr_assert_eq(r.freed[50], 1);
	fq_free(r.fq);
}

Test(flush_queue, single_is_one_ring_for_every_cpu_and_teardown_loses_nothing)
{
	struct rig r;
	struct fq_stats st;

	rig_init(&r, true, 8, 1000 * MS);
	for (uint64_t pfn = 1; pfn <= 8; pfn++)
		cr_assert_eq(fq_queue(r.fq, &cpus[pfn % 4], pfn, 1, 0), 0);
	cr_assert_eq(r.freed_n, 0);
	cr_assert_eq(fq_queue(r.fq, &cpus[3], 9, 1, 0), 0); /* the ninth fills the shared ring */
	cr_assert_eq(r.flushes[FQ_FLUSH_FULL], 1);
	cr_assert_eq(r.freed_n, 8);
	for (uint64_t pfn = 10; pfn <= 14; pfn++)
		cr_assert_eq(fq_queue(r.fq, &cpus[pfn % 4], pfn, 1, 0), 0);
	cr_assert_eq(fq_pending(r.fq), 6);
	cr_assert_eq(fq_drain(r.fq, &cpus[0]), 6);
	cr_assert_eq(fq_pending(r.fq), 0);
	for (uint64_t pfn = 1; pfn <= 14; pfn++)
		cr_assert_eq(r.freed[pfn], 1, "pfn %lu freed %lu times", (unsigned long)pfn,
			     (unsigned long)r.freed[pfn]);
	fq_get_stats(r.fq, &st);
	cr_assert_eq(st.queued, 14);
	cr_assert_eq(st.freed + st.drained, 14);
	fq_free(r.fq);
}

/*
 * In front of a real policy and the slow path: map/unmap 20000 times on 2 CPUs through the
 * flush queue. An allocation never returns an IOVA that is still waiting in the queue (it is
 * not free yet), every IOVA is freed exactly once, and after the drain and the policy's fini
 * the domain is back to empty with no bad free.
 */
static void run_policy(const char *name, bool single)
{
	char path[1024], err[1024], cfgbuf[4096] = { 0 };
	struct loaded_plugin *lp = calloc(1, sizeof(*lp));
	struct rig r;

	cr_assert_not_null(lp);
	snprintf(path, sizeof(path), "%s/plugins/iova-%s.so", TEST_BUILD_ROOT, name);
	cr_assert_eq(plugin_load(path, lp, err, sizeof(err)), 0, "%s", err);
	const struct lab_plugin *p = lp->desc;
	cr_assert_eq(param_set_defaults(p->params, p->n_params, cfgbuf, err, sizeof(err)), 0);

	struct host_env *env = host_env_new(2, p->n_counters, false, false);
	cr_assert_not_null(env);
	struct iova_slowpath *sp = slowpath_new(host_env_host(env), 1, IOVA_DMA_32BIT_PFN_4K);
	cr_assert_not_null(sp);
	rig_init(&r, single, 64, 10 * MS);
	r.iops = p->ops;
	r.live = calloc(MAX_PFN, 1);
	struct lab_iova_setup s = { .struct_size = sizeof(s),
				    .host = host_env_host(env),
				    .domain = slowpath_domain(sp),
				    .ncpus = 2,
				    .config = cfgbuf,
				    .err = err,
				    .err_len = sizeof(err) };
	cr_assert_eq(r.iops->init(&s, &r.istate), 0, "%s", err);

	const uint64_t limit = MAX_PFN - 1;
	for (uint32_t i = 0; i < 20000; i++) {
		struct lab_cpu *c = host_env_cpu(env, i % 2);
		r.now = (uint64_t)i * 1000; /* 1 us apart: a timeout flush every 10000 */
		uint64_t pfn = r.iops->alloc(c, r.istate, 1, limit, true);
		cr_assert_neq(pfn, 0, "%s: IOVA space exhausted at %u", name, i);
		cr_assert_lt(pfn, MAX_PFN);
		cr_assert_eq(r.live[pfn], 0, "%s: pfn %lu handed out while still queued", name,
			     (unsigned long)pfn);
		r.live[pfn] = 1;
		cr_assert_eq(fq_queue(r.fq, c, pfn, 1, r.now), 0);
		cr_assert_eq(fq_tick(r.fq, c, r.now), 0);
	}
	cr_assert_gt(r.flushes[FQ_FLUSH_FULL], 0);
	cr_assert_gt(r.flushes[FQ_FLUSH_TIMEOUT], 0);
	fq_drain(r.fq, host_env_cpu(env, 0));
	r.iops->fini(host_env_cpu(env, 0), r.istate);
	for (uint64_t pfn = 0; pfn < MAX_PFN; pfn++)
		cr_assert_eq(r.live[pfn], 0, "%s: pfn %lu never came back", name,
			     (unsigned long)pfn);
	cr_assert_eq(r.freed_n, 20000);
	struct slowpath_stats st;
	slowpath_get_stats(sp, &st);
	cr_assert_eq(st.free_errors, 0, "%s: %lu bad frees", name, (unsigned long)st.free_errors);
	cr_assert_eq(slowpath_live(sp), 0, "%s: %lu ranges left in the domain", name,
		     (unsigned long)slowpath_live(sp));
	fq_free(r.fq);
	free(r.live);
	slowpath_free(sp);
	host_env_free(env);
	plugin_unload(lp);
	free(lp);
}

Test(flush_queue, iovas_come_back_exactly_once_through_every_policy, .timeout = 60)
{
	static const char *const names[] = { "fixed_depot", "scaled_depot", "depotless",
					     "list_depot" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		run_policy(names[i], false);
		run_policy(names[i], true);
	}
}
