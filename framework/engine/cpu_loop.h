/* SPDX-License-Identifier: MIT */
/*
 * cpu_loop -- the loop every CPU of every engine runs: warm up, start measuring when the
 * engine says so (the CPU's own counters and histograms reset, its window opened), call the
 * workload's op until the engine says stop or the op count is reached, count measured ops.
 *
 * Written once, instantiated by each engine with its own hooks: a struct engine_cpu_hooks
 * of static functions passed as a compile-time constant, so the hooks inline into the loop
 * and the native loop costs what a hand-written one would (the harness budget is a few ns).
 */
#ifndef IOMMULAB_CPU_LOOP_H
#define IOMMULAB_CPU_LOOP_H

#include "engine/engine.h"

enum engine_phase {
	ENGINE_WARMUP = 0,
	ENGINE_MEASURE,	     /* the measured window's first half */
	ENGINE_MEASURE_LATE, /* its second half (time-based runs): the steady-state check */
	ENGINE_STOP,
};

struct engine_cpu_hooks {
	/* Where the run is as this CPU sees it now (time-based runs; ops-based runs start
	 * measuring and only ask for a stop). */
	enum engine_phase (*phase)(void *ctx);
	/* This CPU has just started measuring (its window opens now). */
	void (*measure_started)(void *ctx);
	/* Around each call of the op: before, and after with its return value. */
	void (*before_op)(void *ctx);
	void (*after_op)(void *ctx, int rc);
	/* The op had nothing to do (returned 1): how the CPU lets time pass. */
	void (*idle)(void *ctx);
	/* The op failed (returned -errno): this CPU stops. */
	void (*failed)(void *ctx);
	/* The op completed. */
	void (*done)(void *ctx);
};

/* Run CPU c's loop for job; the measured ops go to res->ops. */
static inline __attribute__((always_inline)) void
engine_cpu_loop(const struct engine_job *job, struct lab_cpu *c, struct engine_cpu_result *res,
		const struct engine_cpu_hooks *h, void *ctx)
{
	bool measuring = job->ops_per_cpu > 0, late = false;
	uint64_t n = 0, per_call = job->ops_per_call ? job->ops_per_call : 1;

	res->window_open = measuring;
	for (;;) {
		enum engine_phase ph = h->phase(ctx);
		if (ph == ENGINE_STOP)
			break;
		if (!measuring && ph != ENGINE_WARMUP) {
			measuring = true;
			res->window_open = true;
			host_cpu_reset_events(c, job->counters, job->n_counters);
			for (uint32_t m = 0; m < job->n_metrics; m++)
				hist_clear(&res->hists[m]);
			h->measure_started(ctx);
		}
		if (!late && ph == ENGINE_MEASURE_LATE) {
			late = true;
			res->ops_early = res->ops;
		}
		h->before_op(ctx);
		int rc = job->op(job->arg, c, res->hists, measuring);
		h->after_op(ctx, rc);
		if (rc < 0) {
			h->failed(ctx);
			break;
		}
		if (rc > 0) {
			h->idle(ctx);
			continue;
		}
		h->done(ctx);
		if (measuring)
			res->ops += per_call;
		if (job->ops_per_cpu && (n += per_call) >= job->ops_per_cpu)
			break;
	}
	/* Never saw the second half begin (stopped or stuck first): every op was early. */
	if (!late)
		res->ops_early = res->ops;
}

#endif /* IOMMULAB_CPU_LOOP_H */
