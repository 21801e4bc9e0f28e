/* SPDX-License-Identifier: MIT */
/*
 * engine -- what executes a trial, behind one interface. An engine is an ops table (struct
 * engine_ops): it adapts a trial to itself (prepare: the plugin builds it runs, what it
 * decides about the configuration, what it refuses), then runs a job: one struct lab_cpu per
 * CPU of the trial calling the workload's op in a loop, an unmeasured warm-up, a measured
 * window of fixed length (or a fixed op count), a watchdog, and per-CPU samples handed back
 * in a struct engine_result. The loop each CPU runs is written once (engine/cpu_loop.h); the
 * engines differ in what time is and what a CPU is:
 *
 *   native   one pinned pthread per CPU, real atomics, the host's clock (engine/native/)
 *   sim      virtual CPUs on a simulated many-core machine, virtual time (engine/sim/)
 *
 * The trial runner (run/trial_run.c) sets up the host, the device, the plugins and the
 * workload, and merges the result; it never asks which engine it drives. Adding an engine is
 * a folder here and one entry in run/engines.c.
 */
#ifndef IOMMULAB_ENGINE_H
#define IOMMULAB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "engine/host.h"
#include "results/trial.h"
#include "scenario/scenario.h"
#include "stats/histogram.h"

struct smmu_dev;

/*
 * One op of the workload on CPU c. Records its latencies into hists[0..n_metrics) when
 * measuring. Returns 0 (an op was done), 1 (nothing to do this time: not counted), or -errno
 * to stop this CPU (the trial fails with the message the workload keeps; every CPU stops).
 */
typedef int (*engine_op_fn)(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);
typedef uint64_t (*engine_idle_fn)(void *arg, struct lab_cpu *c, uint64_t now_ns);

/* Which build of lab.h the code an engine runs must be compiled against. */
enum engine_binding {
	ENGINE_BINDING_NATIVE = 0, /* real atomics: the plugins' .so */
	ENGINE_BINDING_SIM,	   /* lab_sim_*() calls: the plugins' .sim.so twins */
};

/*
 * How far a run has got, published by the engine while it runs (for a watcher in another
 * process: the words are written with relaxed atomic stores). The sim publishes the lab.h
 * operations it has simulated and its virtual time; native runs publish nothing.
 */
struct engine_progress {
	uint64_t steps;
	uint64_t virtual_ns;
};

struct engine_job {
	struct host_env *env;		/* the CPUs, their counters, the clock */
	const struct scenario_cfg *cfg; /* the trial's point (the sim reads its [machine]) */
	struct smmu_dev *dev;		/* the device, NULL for workloads without one */
	uint32_t n_metrics;
	uint64_t warmup_ns;
	uint64_t duration_ns; /* time-based when ops_per_cpu == 0 */
	uint64_t ops_per_cpu; /* > 0: exactly this many ops per CPU, all measured */
	uint64_t watchdog_ns;
	engine_op_fn op;
	/* Ops one call of op does when it returns 0 (a batch of untimed ops; 0 or 1: one). */
	uint32_t ops_per_call;
	/*
	 * After op returned 1 (nothing to do) at now (ns, the CPU's clock): the time before which
	 * it will have nothing to do whatever the other CPUs do (UINT64_MAX: never; 0: it cannot
	 * say). The sim lets an idle CPU sleep until then instead of polling; natively unused.
	 * May be NULL.
	 */
	engine_idle_fn idle_until;
	void *arg;
	const struct lab_counter *counters; /* the plugins', reset at the end of warm-up */
	uint32_t n_counters;
	const char *const *phase_names; /* for the hang report: which phase a CPU was stuck in */
	uint32_t n_phases;
	/* Called once when measurement starts (to snapshot device counters); may be NULL. */
	void (*on_measure)(void *measure_arg);
	void *measure_arg;
	struct engine_progress *progress; /* where to publish progress; may be NULL */
	/*
	 * The sim: watch every shared word a lab.h access touches and report one that changes
	 * without a lab.h store (verify's lab_h_only; a lookup per access, so off in `run`).
	 */
	bool watch_lab_h;
};

struct engine_cpu_result {
	struct hist *hists; /* n_metrics, merged by the caller */
	uint64_t ops;	    /* measured ops */
	uint64_t ops_early; /* ...of them, those before the window's second half began */
	uint64_t window_ns; /* this CPU's measured window */
	/* Its window opened (engine/cpu_loop.h): an op began in the measured phase, or an
	 * op-count run measures from the start. A CPU whose one op began in the warm-up and
	 * ended after the stop (starved) has none: window_ns 0. */
	bool window_open;
	/* What the host did to this CPU's thread in the window (native only; have_sched):
	 * its own CPU time and wall time by CLOCK_THREAD_CPUTIME_ID / CLOCK_MONOTONIC, and its
	 * context switches (getrusage RUSAGE_THREAD), for the noise check (run/noise.h). */
	bool have_sched;
	uint64_t cpu_ns, wall_ns;
	uint64_t invol_switches, vol_switches;
};

/* A figure an engine measures about its own work in the measured window (a host counter). */
struct engine_stat {
	const char *name;
	uint64_t total;
};

#define ENGINE_MAX_STATS 4

struct engine_result {
	struct engine_cpu_result *cpus; /* ncpus */
	void *hist_block;		/* every CPU's histograms, one mapping... */
	size_t hist_block_size;		/* ...of this many bytes */
	double measured_s;		/* the measured window (time-based), or the longest CPU's */
	bool hung;
	/* Natively: hung, or an op timed out by the wall clock (op_failed), only because the
	 * host held the trial off its cores (why says so): the host's doing, not the plugin's;
	 * the trial is incomplete, not failed. */
	bool spoiled;
	bool op_failed;
	bool threads_left; /* CPUs still stuck after the run: their memory must be left alone */
	char why[TRIAL_ERR_LEN]; /* the hang, or why the run could not start */
	/* The sim saw the plugin go outside lab.h (a CPU stuck in host code, or with
	 * watch_lab_h a shared word changed by a plain store): where, in outside_why. */
	bool outside_lab_h;
	bool stopped_outside; /* ...and it stopped the run: a CPU stuck in host code */
	char outside_why[TRIAL_ERR_LEN];
	struct engine_stat stats[ENGINE_MAX_STATS];
	uint32_t n_stats;
	struct trial_engine_cost cost; /* the whole run's cost to the host */
};

/* What prepare may adapt before the trial is set up. */
struct engine_trial {
	struct scenario_cfg *cfg;      /* a copy the engine may change */
	const struct lab_plugin *cmdq; /* the plugins to load, replaced by the engine's builds */
	const struct lab_plugin *iova;
	/* in 1, out: the share of a core each busy thread can have, under 1 when there are more
	 * busy threads than cores (the scenario allowed it): cores / busy threads */
	double core_share;
};

struct engine_ops {
	const char *name; /* as in [scenario] engine = */
	enum engine_kind kind;
	enum engine_binding binding;
	/* Publishes job->progress: a trial is stuck when that stops moving, however long the
	 * host takes; otherwise when it outlives its warm-up, duration and watchdog. */
	bool publishes_progress;
	/* Needs the host's cores to itself: its trials never run next to another (run -j
	 * starts nothing while one runs, and starts one only when nothing else runs). */
	bool exclusive;
	/* The figures its results carry about its own work (res->stats), NULL-terminated if
	 * fewer: the results' layout has a column for each. */
	const char *stats[ENGINE_MAX_STATS];
	/* Adapt t to the engine, or refuse it: 0, or -errno with the reason in err. */
	int (*prepare)(struct engine_trial *t, char *err, size_t err_len);
	/* Run job. 0 (res->hung / op_failed say how it went), or -errno when it could not
	 * start (res->why says why). res is cleared first; engine_result_free() releases it. */
	int (*run)(const struct engine_job *job, struct engine_result *res);
};

/* Allocate res->cpus and each CPU's histograms (reset), for ncpus CPUs. 0 or -ENOMEM. */
int engine_result_alloc(struct engine_result *res, uint32_t ncpus, uint32_t n_metrics);
void engine_result_free(struct engine_result *res);

/* Add a figure to res->stats (ignored past ENGINE_MAX_STATS). */
void engine_result_add_stat(struct engine_result *res, const char *name, uint64_t total);

#endif /* IOMMULAB_ENGINE_H */
