/* SPDX-License-Identifier: MIT */
/*
 * trial -- the merged result of one trial, as the engines produce it and the results writer
 * stores it (one row of trials.csv).
 */
#ifndef IOMMULAB_TRIAL_H
#define IOMMULAB_TRIAL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "stats/histogram.h"

#define TRIAL_MAX_METRICS 4
#define TRIAL_ERR_LEN	  512

enum trial_status {
	TRIAL_OK = 0,
	TRIAL_FAILED,	  /* the plugin broke the protocol, hung, crashed, or init failed */
	TRIAL_NOISY,	  /* measured, but the host took its CPUs away materially (run/noise.h) */
	TRIAL_INCOMPLETE, /* ran far short of its duration, or completed no op: no result
			   * (natively its CPUs were off their cores, on the sim its ops outlast
			   * the warm-up: not a failure of the plugin) */
};

/* Whether a trial of this status measured what it was asked to (ok, or noisy). */
static inline bool trial_status_measured(enum trial_status s)
{
	return s == TRIAL_OK || s == TRIAL_NOISY;
}

/* The status as trials.csv writes it. */
static inline const char *trial_status_name(enum trial_status s)
{
	static const char *const names[] = { "ok", "failed", "noisy", "incomplete" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "failed";
}

/* What the host was doing around a trial (run/noise.h); native trials only, else zero. */
struct trial_noise {
	bool measured;		 /* native: the threads' figures below are known */
	double desched_frac;	 /* the worst CPU: involuntary time off its core / window */
	uint64_t invol_switches; /* all CPUs' threads, in the window */
	bool have_load;
	double load_start, load_end; /* 1-minute load average before and after */
	double steal_frac;	     /* steal ticks / all ticks of /proc/stat over the trial */
};

/* One latency metric: "op" for cmdq, "alloc"/"free" for iova, "map"/"unmap" for dma. */
struct trial_metric {
	const char *name;
	struct lat_summary lat; /* ns */
	struct hist hist; /* the merged histogram lat summarizes: histograms.csv (histfile.h) */
};

struct trial_counter {
	const char *name;
	enum lab_counter_kind kind;
	uint64_t total; /* EVENTS: sum over CPUs in the measured window; LEVEL: final level */
	double per_op;	/* EVENTS: total / ops; LEVEL: same as total */
};

struct trial_phase {
	const char *name; /* "other" for phase 0 */
	double ns_per_op; /* mean time per op spent in this phase */
};

/* What running the trial cost the host (the engine's own speed; not a result of the plugin). */
struct trial_engine_cost {
	double host_s;	   /* host seconds the engine ran */
	uint64_t steps;	   /* the sim: lab.h operations simulated; native: 0 */
	uint64_t switches; /* the sim: coroutine switches; native: 0 */
};

struct trial_result {
	/* identity */
	uint32_t index;	    /* 0-based, in run order */
	uint32_t point;	    /* sweep point */
	uint32_t repeat;    /* 0 .. repeats-1 */
	const char *plugin; /* the plugin(s) under test: "cmpxchg", or "cmpxchg+fixed_depot" */
	const char *const *swept_values; /* one per sweep axis, as text */
	uint32_t n_swept;

	enum trial_status status;
	char error[TRIAL_ERR_LEN]; /* why it failed: one line */

	/* conditions */
	uint32_t cpus;
	const char *engine;	 /* "native" | "sim" */
	const char *device_mode; /* "inline" | "thread" */
	bool oversubscribed;
	double duration_s; /* measured window */

	/* results */
	uint64_t ops; /* completed ops, all CPUs */
	double ops_per_sec;
	uint64_t ops_min_cpu, ops_max_cpu; /* fairness */
	/*
	 * Steady state: (ops in the window's second half - ops in its first) / ops in its
	 * first, over all CPUs; NAN when not judged (an op-count run, or under
	 * TRIAL_STEADY_MIN_OPS in a half). Beyond +-TRIAL_STEADY_DRIFT the trial was still
	 * warming up (or winding down): trial_unsteady().
	 */
	double steady_drift;
	/*
	 * (measured window - duration) / duration: how far the ops begun in the window ran past
	 * its end; NAN for an op-count run. Beyond TRIAL_OVERRUN the ops are too long for the
	 * duration: trial_overran().
	 */
	double window_overrun;
	struct trial_metric metrics[TRIAL_MAX_METRICS];
	uint32_t n_metrics;
	/* The plugins', then the host's: the workload's up to 16, the device's 3, the tree's 3,
	 * the engine's up to 4. */
	struct trial_counter counters[LAB_MAX_COUNTERS + 26];
	uint32_t n_counters;
	struct trial_phase phases[LAB_MAX_PHASES];
	uint32_t n_phases;
	struct trial_engine_cost engine_cost; /* not written to the results */
	struct trial_noise noise;
};

/*
 * The steady-state check: a trial whose throughput moved more than this between the halves of
 * its measured window had not settled (caches, queues, depots still filling) when measuring
 * began, or its machine changed under it; each half needs TRIAL_STEADY_MIN_OPS ops to judge.
 */
#define TRIAL_STEADY_DRIFT   0.10
#define TRIAL_STEADY_MIN_OPS 20

static inline bool trial_unsteady(const struct trial_result *t)
{
	return t->steady_drift == t->steady_drift &&
	       (t->steady_drift > TRIAL_STEADY_DRIFT || t->steady_drift < -TRIAL_STEADY_DRIFT);
}

/*
 * The duration check: a CPU's window opens at its first op after the warm-up and closes when
 * its last op begun before the stop ends, so ops about as long as the duration stretch the
 * window past it, and few of them fall in it (a CPU mid-op at the warm-up's end opens its
 * window only after that op): ops/s is then biased low and the latencies are of a handful of
 * ops (cmdq-beyond's spinlock at 256 CPUs with 2 ms: 4.4 K ops/s, the window 4 times the
 * duration; with 100 ms, 15.5 K).
 */
#define TRIAL_OVERRUN 0.10

static inline bool trial_overran(const struct trial_result *t)
{
	return t->window_overrun == t->window_overrun && t->window_overrun > TRIAL_OVERRUN;
}

#endif /* IOMMULAB_TRIAL_H */
