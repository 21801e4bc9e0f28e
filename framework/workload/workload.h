/* SPDX-License-Identifier: MIT */
/*
 * workload -- the driver loops the CPUs run, as a table: one entry per [scenario] workload
 * saying which plugins it needs, which latencies it records, how it is made from the
 * scenario and the set-up plugins, its op (in each build of lab.h), and how it reports a
 * failure. The trial runner knows workloads only through this table.
 *
 *   cmdq   an unmap-like issue of TLBIs + CMD_SYNC through the cmdq plugin (cmdq_wl.h)
 *   iova   alloc/free through the IOVA cache policy (iova_wl.h)
 *   dma    both: map = IOVA alloc + PTE writes, unmap = IOVA free + TLBI + CMD_SYNC (dma_wl.h)
 *   micro  one contended atomic or lock, for calibrating the sim (micro_wl.h)
 */
#ifndef IOMMULAB_WORKLOAD_H
#define IOMMULAB_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/cmdq.h>

#include "engine/engine.h"
#include "scenario/scenario.h"
#include "workload/iova_wl.h"

#define WORKLOAD_NEEDS_CMDQ  1u /* a cmdq plugin and the device */
#define WORKLOAD_NEEDS_IOVA  2u /* an iova plugin, the slow path, and the IOVA half (iova_wl) */
#define WORKLOAD_MAX_METRICS 2

/* What a workload is made from: the trial's point and what the runner set up for it. */
struct workload_env {
	const struct scenario_cfg *cfg;
	uint32_t ncpus;
	bool oracle;			 /* tag commands and keep the trace (cmdq, for verify) */
	const struct lab_cmdq_ops *cmdq; /* WORKLOAD_NEEDS_CMDQ */
	void *cmdq_state;
	struct smmu_dev *dev;
	struct iova_wl *iova;	     /* WORKLOAD_NEEDS_IOVA: owned by the runner */
	const struct lab_host *host; /* the trial's lab_alloc() (the dma identity list) */
	uint64_t ops_per_cpu;	     /* > 0: a run of exactly this many ops per CPU */
};

/* One of a workload's own counters (events over the measured time). */
struct workload_counter {
	const char *name;
	uint64_t total;
};

#define WORKLOAD_MAX_COUNTERS 16

struct workload_ops {
	enum workload_kind kind;
	const char *name;
	unsigned needs;		  /* WORKLOAD_NEEDS_* */
	const char *plugin_label; /* the results' plugin column when it needs no plugin */
	uint32_t n_metrics;
	const char *metrics[WORKLOAD_MAX_METRICS]; /* the latencies each op records */
	/* Make it (NULL: out of memory). */
	void *(*make)(const struct workload_env *env);
	/* Free it; NULL-safe. May be NULL (the workload is the runner's IOVA half). */
	void (*destroy)(void *wl);
	/* One op, native binding; and the same source built against the sim binding, where the
	 * op itself touches shared memory (NULL: it reaches memory only through plugins). */
	engine_op_fn op;
	engine_op_fn op_sim;
	/* How many ops one call of the native op does (engine_job.ops_per_call); NULL: one. */
	uint32_t (*ops_per_call)(void *wl);
	/* After the op returned 1 (nothing to do) at now: see engine_job.idle_until. May be NULL.
	 */
	engine_idle_fn idle_until;
	/* Why it stopped a CPU, or NULL; hung: the trial was abandoned. May be NULL. */
	const char *(*error)(void *wl, bool hung);
	/* The think time between ops when the harness's own cost is reported (harness_ns, the
	 * op loop's time beyond the op's latency and the think time); NULL: not reported. */
	uint64_t (*harness_think_ns)(const struct scenario_cfg *cfg);
	/* Does the trial's seed change what it does (NULL: always)? On the sim, repeats with
	 * the same seed-free workload are identical. */
	bool (*uses_seed)(const struct scenario_cfg *cfg);
	/* The IOVA half's parameters where they are not [workload.iova]'s own; may be NULL. */
	void (*iova_params)(const struct scenario_cfg *cfg, struct iova_wl_params *p);
	/* Teardown, on c once no CPU runs and before the IOVA half drains: give back what the
	 * workload still holds (the dma workload's flush queue). May be NULL. */
	void (*drain)(void *wl, struct lab_cpu *c);
	/* Its own counters, at most WORKLOAD_MAX_COUNTERS, in the order of counter_names (the
	 * results' columns); returns how many. May be NULL. */
	uint32_t (*counters)(void *wl, struct workload_counter *out);
	const char *counter_names[WORKLOAD_MAX_COUNTERS];
};

/* The workload a scenario names, or NULL. */
const struct workload_ops *workload_find(enum workload_kind kind);

/* Its op for code built against binding. */
engine_op_fn workload_op(const struct workload_ops *w, enum engine_binding binding);

/* The IOVA half's parameters for cfg (WORKLOAD_NEEDS_IOVA). */
void workload_iova_params(const struct workload_ops *w, const struct scenario_cfg *cfg,
			  struct iova_wl_params *p);

#endif /* IOMMULAB_WORKLOAD_H */
