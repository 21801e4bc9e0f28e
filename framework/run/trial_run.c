/* SPDX-License-Identifier: MIT */
/* trial_run -- one trial on any engine, from setup to merged result (see trial_run.h). */
#include "run/trial_run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/cmdq.h>

#include "device/smmu.h"
#include "engine/engine.h"
#include "engine/host.h"
#include "iova/slowpath.h"
#include "run/engines.h"
#include "run/noise.h"
#include "util/diag.h"
#include "verify/cmdq_check.h"
#include "workload/cmdq_wl.h"
#include "workload/iova_wl.h"
#include "workload/workload.h"

#define TRACE_CAP_MAX (8u << 20) /* 128 MiB of trace at most */

static const char *const device_mode_names[] = { "inline", "thread" };

struct trial {
	const struct trial_request *req;
	const struct scenario_cfg *cfg;
	const struct engine_ops *engine;
	const struct workload_ops *workload;
	uint32_t ncpus;
	struct host_env *env;
	struct smmu_dev *dev; /* cmdq and dma workloads */
	const struct lab_cmdq_ops *cops;
	void *cstate;
	bool cstate_ok;
	const struct lab_iova_ops *iops;
	void *istate;
	bool istate_ok;
	uint64_t tick_ns;
	struct iova_slowpath *sp; /* iova and dma workloads */
	struct iova_wl *iwl;	  /* the IOVA half (iova and dma workloads) */
	void *wl;		  /* the workload (t->workload's) */
	struct cmdq_wl *cwl;	  /* the same, for the oracle, when it is the cmdq workload */
	struct lab_counter counters[2 * LAB_MAX_COUNTERS]; /* the cmdq plugin's, then the iova's */
	uint32_t n_counters;
	uint32_t iova_counter_off;
	uint32_t iova_phase_off; /* the iova plugin's phases follow the cmdq plugin's */
	struct engine_result eres;
	const char *phase_names[LAB_MAX_PHASES];
	uint32_t n_phases;
	bool abandoned;
	struct smmu_stats dev_base; /* the device's counters when measurement started */
};

static void snapshot_device(void *arg)
{
	struct trial *t = arg;

	if (t->dev)
		smmu_get_stats(t->dev, &t->dev_base);
}

static void on_violation(void *arg)
{
	host_env_abort(arg);
}

__attribute__((format(printf, 2, 3))) static void fail(struct trial_result *res, const char *fmt,
						       ...)
{
	va_list ap;

	res->status = TRIAL_FAILED;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

static void add_plugin_tables(struct trial *t, const struct lab_plugin *d)
{
	for (uint32_t k = 0; k < d->n_counters; k++)
		t->counters[t->n_counters++] = d->counters[k];
	for (uint32_t p = 0; p < d->n_phases && t->n_phases < LAB_MAX_PHASES; p++)
		t->phase_names[t->n_phases++] = d->phases[p];
}

static int setup_device(struct trial *t, struct trial_result *res)
{
	const struct scenario_cfg *cfg = t->cfg;
	char err[256] = "";
	struct smmu_config sc = {
		.shift = (uint32_t)cfg->smmu.queue_shift,
		.msi = cfg->smmu.msi,
		.mode = cfg->smmu.device,
		.timing = cfg->smmu,
		.ncpus = t->ncpus,
		.on_violation = on_violation,
		.violation_arg = t->env,
		.faults = cfg->faults,
	};

	if (t->req->oracle) {
		uint64_t cap = t->req->ops_per_cpu * t->ncpus * (cfg->wl_cmdq.cmds_per_sync + 2);
		sc.trace_cap = cap && cap < TRACE_CAP_MAX ? cap : TRACE_CAP_MAX;
	}
	t->dev = smmu_new(&sc, host_env_clock(t->env), err, sizeof(err));
	if (!t->dev) {
		fail(res, "device: %s", err);
		return -ENOMEM;
	}
	struct lab_cmdq_setup s = {
		.struct_size = sizeof(s),
		.host = host_env_host(t->env),
		.smmu = smmu_iface(t->dev),
		.ncpus = t->ncpus,
		.config = t->req->cmdq_config,
		.err = err,
		.err_len = sizeof(err),
	};
	int rc = t->cops->init(&s, &t->cstate);
	if (rc) {
		fail(res, "%s: init failed: %s (%s)", t->req->cmdq->name,
		     err[0] ? err : "no reason given", util_rc_text(rc));
		return rc;
	}
	t->cstate_ok = true;
	if (cfg->smmu.device == DEVICE_INLINE)
		host_env_set_idle(t->env, smmu_idle, t->dev);
	return 0;
}

static int setup_iova(struct trial *t, struct trial_result *res)
{
	char err[256] = "";

	t->sp = slowpath_new(host_env_host(t->env), 1, IOVA_DMA_32BIT_PFN_4K);
	if (!t->sp) {
		fail(res, "out of memory for the IOVA domain");
		return -ENOMEM;
	}
	if (t->engine->binding == ENGINE_BINDING_SIM)
		slowpath_use_sim(t->sp); /* its locked code as a sim build, like a plugin's */
	struct lab_iova_setup s = {
		.struct_size = sizeof(s),
		.host = host_env_host(t->env),
		.domain = slowpath_domain(t->sp),
		.ncpus = t->ncpus,
		.config = t->req->iova_config,
		.err = err,
		.err_len = sizeof(err),
	};
	int rc = t->iops->init(&s, &t->istate);
	if (rc) {
		fail(res, "%s: init failed: %s (%s)", t->req->iova->name,
		     err[0] ? err : "no reason given", util_rc_text(rc));
		return rc;
	}
	t->istate_ok = true;
	t->tick_ns = s.tick_ns;
	return 0;
}

static int setup_workload(struct trial *t, struct trial_result *res)
{
	const struct workload_ops *w = t->workload;

	if (w->needs & WORKLOAD_NEEDS_IOVA) {
		struct iova_wl_params p;
		workload_iova_params(w, t->cfg, &p);
		p.phase_off = t->iova_phase_off;
		p.n_phases = t->req->iova->n_phases;
		t->iwl = iova_wl_new(t->iops, t->istate, slowpath_domain(t->sp), t->ncpus, &p,
				     t->tick_ns, t->iova_counter_off);
		if (!t->iwl)
			goto oom;
	}
	struct workload_env env = {
		.cfg = t->cfg,
		.ncpus = t->ncpus,
		.oracle = t->req->oracle,
		.cmdq = t->cops,
		.cmdq_state = t->cstate,
		.dev = t->dev,
		.iova = t->iwl,
		.host = host_env_host(t->env),
		.ops_per_cpu = t->req->ops_per_cpu,
	};
	t->wl = w->make(&env);
	if (!t->wl)
		goto oom;
	if (w->kind == WORKLOAD_CMDQ)
		t->cwl = t->wl;
	return 0;
oom:
	fail(res, "out of memory for the workload");
	return -ENOMEM;
}

static int setup(struct trial *t, struct trial_result *res)
{
	int rc;

	t->phase_names[0] = "other";
	t->n_phases = 1;
	if (t->cops)
		add_plugin_tables(t, t->req->cmdq);
	t->iova_counter_off = t->n_counters;
	t->iova_phase_off = t->n_phases - 1;
	if (t->iops)
		add_plugin_tables(t, t->req->iova);
	t->env = host_env_new(t->ncpus, t->n_counters, t->cfg->scenario.phases,
			      t->engine->binding == ENGINE_BINDING_SIM);
	if (!t->env) {
		fail(res, "out of memory setting up %u CPUs", t->ncpus);
		return -ENOMEM;
	}
	if (t->cops && (rc = setup_device(t, res)))
		return rc;
	if (t->iops && (rc = setup_iova(t, res)))
		return rc;
	if ((rc = setup_workload(t, res)))
		return rc;
	rc = t->dev ? smmu_start(t->dev) : 0;
	if (rc)
		fail(res, "cannot start the device thread: %s", strerror(-rc));
	return rc;
}

static void add_counter(struct trial_result *res, const char *name, enum lab_counter_kind kind,
			uint64_t total)
{
	struct trial_counter *k;

	if (res->n_counters == sizeof(res->counters) / sizeof(res->counters[0]))
		return; /* the table has room for every host counter; a new one must add room */
	k = &res->counters[res->n_counters++];

	k->name = name;
	k->kind = kind;
	k->total = total;
	k->per_op = kind == LAB_COUNTER_LEVEL ? (double)total
		    : res->ops		      ? (double)total / (double)res->ops
					      : 0;
}

static void merge_metrics(struct trial *t, struct trial_result *res, uint64_t *window)
{
	uint32_t n_metrics = t->workload->n_metrics;
	struct hist *all = malloc(sizeof(*all) * n_metrics);

	uint64_t early = 0;

	res->ops_min_cpu = UINT64_MAX;
	for (uint32_t m = 0; all && m < n_metrics; m++)
		hist_reset(&all[m]);
	for (uint32_t i = 0; i < t->ncpus; i++) {
		struct engine_cpu_result *cr = &t->eres.cpus[i];
		for (uint32_t m = 0; all && m < n_metrics; m++)
			hist_merge(&all[m], &cr->hists[m]);
		res->ops += cr->ops;
		early += cr->ops_early;
		*window += cr->window_ns;
		if (cr->ops < res->ops_min_cpu)
			res->ops_min_cpu = cr->ops;
		if (cr->ops > res->ops_max_cpu)
			res->ops_max_cpu = cr->ops;
	}
	res->steady_drift = NAN;
	if (!t->req->ops_per_cpu && early >= TRIAL_STEADY_MIN_OPS &&
	    res->ops - early >= TRIAL_STEADY_MIN_OPS)
		res->steady_drift = ((double)(res->ops - early) - (double)early) / (double)early;
	res->duration_s = t->eres.measured_s;
	if (!t->req->ops_per_cpu && t->cfg->scenario.duration_ms && res->ops) {
		double asked = (double)t->cfg->scenario.duration_ms / 1e3;
		res->window_overrun = (res->duration_s - asked) / asked;
	}
	res->ops_per_sec = res->duration_s > 0 ? (double)res->ops / res->duration_s : 0;
	res->n_metrics = n_metrics;
	for (uint32_t m = 0; all && m < n_metrics; m++) {
		res->metrics[m].name = t->workload->metrics[m];
		hist_summarize(&all[m], &res->metrics[m].lat);
		res->metrics[m].hist = all[m];
	}
	if (all && t->workload->harness_think_ns) {
		/* What the loop spends outside every latency and think time (the ops' timestamps
		 * are chained, so it is the think loop's overshoot). Sampled ([scenario]
		 * sample_every): the timed ops' mean stands for every op. */
		double busy = all[0].count
				      ? (double)all[0].sum * (double)res->ops / (double)all[0].count
				      : 0;
		double think = (double)res->ops * (double)t->workload->harness_think_ns(t->cfg);
		double harness = (double)*window - busy - think;
		add_counter(res, "harness_ns", LAB_COUNTER_EVENTS,
			    harness > 0 ? (uint64_t)harness : 0);
	}
	free(all);
}

static void merge(struct trial *t, struct trial_result *res)
{
	uint64_t window = 0;

	merge_metrics(t, res, &window);
	for (uint32_t k = 0; k < t->n_counters; k++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < t->ncpus; i++)
			sum += host_env_cpu(t->env, i)->counters[k];
		add_counter(res, t->counters[k].name, t->counters[k].kind, sum);
	}
	if (t->workload->counters) {
		struct workload_counter wc[WORKLOAD_MAX_COUNTERS];
		uint32_t n = t->workload->counters(t->wl, wc);
		for (uint32_t k = 0; k < n; k++)
			add_counter(res, wc[k].name, LAB_COUNTER_EVENTS, wc[k].total);
	}
	if (t->dev) {
		struct smmu_stats st;
		smmu_get_stats(t->dev, &st);
		add_counter(res, "dev_syncs", LAB_COUNTER_EVENTS, st.syncs - t->dev_base.syncs);
		add_counter(res, "dev_prod_writes", LAB_COUNTER_EVENTS,
			    st.prod_writes - t->dev_base.prod_writes);
		add_counter(res, "dev_cons_reads", LAB_COUNTER_EVENTS,
			    st.cons_reads - t->dev_base.cons_reads);
	}
	if (t->sp) {
		struct slowpath_stats st;
		slowpath_get_stats(t->sp, &st);
		add_counter(res, "tree_lock_wait_ns", LAB_COUNTER_EVENTS, st.lock_wait_ns);
		/* the gap searches' length: tree_walk_nodes / tree_allocs nodes per allocation */
		add_counter(res, "tree_allocs", LAB_COUNTER_EVENTS, st.allocs);
		add_counter(res, "tree_walk_nodes", LAB_COUNTER_EVENTS, st.walk_nodes);
		add_counter(res, "tree_ranges", LAB_COUNTER_LEVEL, st.live);
		add_counter(res, "wl_alloc_failures", LAB_COUNTER_EVENTS, iova_wl_failures(t->iwl));
	}
	/* The engine's own figures (the sim: what each op costs the model). */
	for (uint32_t k = 0; k < t->eres.n_stats; k++)
		add_counter(res, t->eres.stats[k].name, LAB_COUNTER_EVENTS, t->eres.stats[k].total);
	res->engine_cost = t->eres.cost;
	res->n_phases = t->n_phases;
	for (uint32_t p = 0; p < t->n_phases; p++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < t->ncpus; i++)
			sum += host_env_cpu(t->env, i)->phase_ns[p];
		res->phases[p].name = t->phase_names[p];
		res->phases[p].ns_per_op = res->ops ? (double)sum / (double)res->ops : 0;
	}
}

static void judge(struct trial *t, struct trial_result *res)
{
	const char *viol = t->dev ? smmu_error(t->dev) : NULL;
	const char *err = t->workload->error ? t->workload->error(t->wl, t->eres.hung) : NULL;

	if (viol) {
		fail(res, "protocol violation: %s", viol);
	} else if (t->eres.spoiled) {
		/* The host held the trial off its cores: no result, and not the plugin's fault. */
		res->status = TRIAL_INCOMPLETE;
		snprintf(res->error, sizeof(res->error), "%s", t->eres.why);
	} else if (t->eres.hung) {
		fail(res, "%s", t->eres.why);
	} else if (err) {
		fail(res, "%s", err);
	}
	/* An abandoned plugin's state may be inconsistent: do not let fini walk it. */
	t->abandoned = t->eres.hung || viol;
}

/* Give back every IOVA: what the workload holds, then what the policy caches. */
static void return_iovas(struct trial *t, struct trial_result *res)
{
	struct lab_cpu *c0 = host_env_cpu(t->env, 0);

	if (t->wl && t->workload->drain)
		t->workload->drain(t->wl, c0);
	if (t->iwl)
		iova_wl_drain(t->iwl, c0);
	c0->counters += t->iova_counter_off;
	t->iops->fini(c0, t->istate);
	c0->counters -= t->iova_counter_off;
	t->istate_ok = false;
	uint64_t left = slowpath_live(t->sp);
	if (left && res->status == TRIAL_OK)
		fail(res,
		     "%s: %" PRIu64 " IOVA ranges still allocated after fini: they were not "
		     "returned to the domain",
		     t->req->iova->name, left);
}

/* Everything the trial set up, given back; oracle: the report cmdq_check_oracle() filled, or
 * NULL. */
static void teardown(struct trial *t, struct trial_result *res, struct oracle_report *oracle)
{
	if (t->istate_ok && !t->abandoned)
		return_iovas(t, res);
	if (t->cstate_ok && !t->abandoned && t->cops->fini)
		t->cops->fini(t->cstate);
	bool stuck = t->eres.threads_left; /* a CPU may still touch any of it: leave it all */

	if (t->wl && t->workload->destroy && !stuck)
		t->workload->destroy(t->wl);
	if (!stuck)
		iova_wl_free(t->iwl);
	if (stuck)
		return;
	engine_result_free(&t->eres);
	smmu_free(t->dev);
	if (!t->abandoned)
		slowpath_free(t->sp);
	char what[200];

	if (host_env_overruns(t->env, what, sizeof(what))) {
		if (res->status == TRIAL_OK)
			fail(res, "%s: the plugin corrupts its heap", what);
		if (oracle)
			cmdq_check_heap_overrun(oracle, what);
	}
	host_env_free(t->env); /* and with it whatever an abandoned plugin still held */
}

static int run(const struct trial_request *req, const struct engine_ops *engine,
	       const struct workload_ops *workload, double core_share, struct trial_result *res,
	       struct oracle_report *oracle)
{
	struct trial t = {
		.req = req,
		.cfg = req->cfg,
		.engine = engine,
		.workload = workload,
		.ncpus = (uint32_t)req->cfg->scenario.cpus,
	};
	struct oracle_report *judged = NULL; /* oracle, once cmdq_check_oracle() filled it */
	int rc;

	if (workload->needs & WORKLOAD_NEEDS_CMDQ)
		t.cops = req->cmdq->ops;
	if (workload->needs & WORKLOAD_NEEDS_IOVA)
		t.iops = req->iova->ops;
	rc = setup(&t, res);
	if (rc)
		goto out;
	struct engine_job job = {
		.env = t.env,
		.cfg = t.cfg,
		.dev = t.dev,
		.n_metrics = workload->n_metrics,
		.warmup_ns = t.cfg->scenario.warmup_ms * 1000000u,
		.duration_ns = t.cfg->scenario.duration_ms * 1000000u,
		.ops_per_cpu = req->ops_per_cpu,
		.watchdog_ns = t.cfg->scenario.watchdog_ms * 1000000u,
		.op = workload_op(workload, engine->binding),
		.ops_per_call = engine->binding == ENGINE_BINDING_NATIVE && workload->ops_per_call
					? workload->ops_per_call(t.wl)
					: 1,
		.idle_until = workload->idle_until,
		.arg = t.wl,
		.counters = t.counters,
		.n_counters = t.n_counters,
		.phase_names = t.phase_names,
		.n_phases = t.n_phases,
		.on_measure = snapshot_device,
		.measure_arg = &t,
		.progress = req->progress,
		/* The sim's watch on plugins going outside lab.h is the oracle's lab_h_only. */
		.watch_lab_h = req->oracle && engine->kind == ENGINE_SIM,
	};
	/* Injected allocation failures start with the run: set-up is not what is tested. */
	host_env_set_alloc_fault(t.env, t.cfg->faults.alloc_fail_every);
	struct noise_mark before, after;
	noise_mark(&before);
	rc = engine->run(&job, &t.eres);
	noise_mark(&after);
	if (t.dev)
		smmu_stop(t.dev);
	if (t.dev && t.eres.hung && !t.eres.threads_left)
		smmu_cpus_unwound(t.dev);
	if (rc) {
		fail(res, "%s", t.eres.why);
		goto out;
	}
	merge(&t, res);
	judge(&t, res);
	noise_judge(res, &before, &after, &t.eres, t.ncpus,
		    engine->binding == ENGINE_BINDING_NATIVE, core_share,
		    req->ops_per_cpu ? 0 : job.duration_ns);
	if (req->oracle && oracle && t.cwl) {
		judged = oracle;
		cmdq_check_oracle(oracle, t.dev, t.cwl, t.eres.hung, t.eres.spoiled,
				  job.watch_lab_h, t.eres.outside_lab_h ? t.eres.outside_why : NULL,
				  t.eres.stopped_outside, res);
	}
out:
	teardown(&t, res, judged);
	return rc;
}

int trial_run(const struct trial_request *req, struct trial_result *res,
	      struct oracle_report *oracle)
{
	const struct engine_ops *engine = engine_find(req->cfg->scenario.engine);
	const struct workload_ops *workload = workload_find(req->cfg->scenario.workload);
	struct scenario_cfg cfg = *req->cfg;
	struct engine_trial et = {
		.cfg = &cfg, .cmdq = req->cmdq, .iova = req->iova, .core_share = 1
	};
	int rc;

	res->status = TRIAL_OK;
	res->error[0] = '\0';
	res->steady_drift = NAN;   /* judged in merge_metrics */
	res->window_overrun = NAN; /* judged in merge_metrics */
	res->cpus = (uint32_t)cfg.scenario.cpus;
	res->device_mode = device_mode_names[cfg.smmu.device ? 1 : 0];
	if (oracle)
		memset(oracle, 0, sizeof(*oracle));
	if (!engine || !workload) {
		fail(res, "no %s %d in this build", !engine ? "engine" : "workload",
		     !engine ? cfg.scenario.engine : cfg.scenario.workload);
		return -EINVAL;
	}
	res->engine = engine->name;
	/* The same trial, adapted to the engine (the sim: the plugins' sim builds). */
	rc = engine->prepare(&et, res->error, sizeof(res->error));
	res->oversubscribed = et.core_share < 1;
	if (rc) {
		res->status = TRIAL_FAILED;
		return rc;
	}
	if (((workload->needs & WORKLOAD_NEEDS_CMDQ) && !et.cmdq) ||
	    ((workload->needs & WORKLOAD_NEEDS_IOVA) && !et.iova)) {
		fail(res, "this workload needs a %s plugin", !et.cmdq ? "cmdq" : "iova");
		return -EINVAL;
	}
	struct trial_request prepared = *req;
	prepared.cfg = &cfg;
	prepared.cmdq = et.cmdq;
	prepared.iova = et.iova;
	return run(&prepared, engine, workload, et.core_share, res, oracle);
}
