/* SPDX-License-Identifier: MIT */
/* trial_run -- one trial, natively, from setup to merged result (see trial_run.h). */
#include "run/trial_run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/cmdq.h>

#include "device/smmu.h"
#include "engine/host.h"
#include "engine/native.h"
#include "iova/slowpath.h"
#include "sim/sim_trial.h"
#include "workload/cmdq_wl.h"
#include "workload/dma_wl.h"
#include "workload/iova_wl.h"
#include "workload/micro_wl.h"

#define TRACE_CAP_MAX (8u << 20) /* 128 MiB of trace at most */

static const char *const device_mode_names[] = { "inline", "thread" };

struct trial {
	const struct trial_request *req;
	const struct scenario_cfg *cfg;
	uint32_t ncpus;
	struct host_env *env;
	struct smmu_dev *dev;		/* cmdq and dma workloads */
	const struct lab_cmdq_ops *cops;
	void *cstate;
	bool cstate_ok;
	const struct lab_iova_ops *iops;
	void *istate;
	bool istate_ok;
	uint64_t tick_ns;
	struct iova_slowpath *sp;	/* iova and dma workloads */
	struct cmdq_wl *cwl;
	struct iova_wl *iwl;
	struct dma_wl *dwl;
	struct micro_wl *mwl;
	native_op_fn op;
	void *op_arg;
	const char *metrics[2];
	uint32_t n_metrics;
	struct lab_counter counters[2 * LAB_MAX_COUNTERS]; /* the cmdq plugin's, then the iova's */
	uint32_t n_counters;
	uint32_t iova_counter_off;
	struct native_result nres;
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

__attribute__((format(printf, 2, 3))) static void fail(struct trial_result *res,
							const char *fmt, ...)
{
	va_list ap;

	res->status = TRIAL_FAILED;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
}

static int check_cpus(const struct scenario_cfg *cfg, struct trial_result *res)
{
	uint32_t online = native_online_cpus();
	bool thread = cfg->smmu.device == DEVICE_THREAD && cfg->scenario.workload != WORKLOAD_IOVA;
	uint32_t busy = (uint32_t)cfg->scenario.cpus + thread;

	res->oversubscribed = busy > online;
	if (res->oversubscribed && cfg->scenario.oversubscribe != OVERSUBSCRIBE_ALLOW) {
		fail(res,
		     "%u busy threads (%" PRIu64 " CPUs%s) on %u online CPUs would measure the "
		     "scheduler, not the algorithm: lower [scenario] cpus, use engine = sim, or "
		     "set [scenario] oversubscribe = allow",
		     busy, cfg->scenario.cpus, thread ? " + the device thread" : "", online);
		return -EINVAL;
	}
	return 0;
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
		     err[0] ? err : "no reason given", strerror(-rc));
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
	if (t->cfg->scenario.engine == ENGINE_SIM)
		slowpath_use_sim(t->sp);
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
		     err[0] ? err : "no reason given", strerror(-rc));
		return rc;
	}
	t->istate_ok = true;
	t->tick_ns = s.tick_ns;
	return 0;
}

static int setup_workload(struct trial *t, struct trial_result *res)
{
	const struct scenario_cfg *cfg = t->cfg;

	if (t->iops) {
		const struct scenario_wl_iova *w = &cfg->wl_iova;
		struct iova_wl_params p = {
			.pattern = w->pattern,
			.free_every = (uint32_t)w->free_every,
			.depth = (uint32_t)w->depth,
			.min_pages = w->min_pages,
			.max_pages = w->max_pages,
			.dma_bits = (uint32_t)w->dma_bits,
			.think_ns = w->think_ns,
			.seed = cfg->scenario.seed,
		};
		if (cfg->scenario.workload == WORKLOAD_DMA) {
			p.dma_bits = (uint32_t)cfg->wl_dma.dma_bits;
			p.depth = 1;
		}
		t->iwl = iova_wl_new(t->iops, t->istate, slowpath_domain(t->sp), t->ncpus, &p,
				     t->tick_ns, t->iova_counter_off);
		if (!t->iwl)
			goto oom;
	}
	switch (cfg->scenario.workload) {
	case WORKLOAD_MICRO:
		t->mwl = micro_wl_new((enum micro_op)cfg->wl_micro.op, cfg->wl_micro.think_ns,
				      t->ncpus);
		if (!t->mwl)
			goto oom;
		/* Framework code, built for both engines (framework/sim/micro_sim.c). */
		t->op = cfg->scenario.engine == ENGINE_SIM ? micro_wl_op_sim : micro_wl_op;
		t->op_arg = t->mwl;
		t->metrics[0] = "op";
		t->n_metrics = 1;
		return 0;
	case WORKLOAD_CMDQ:
		t->cwl = cmdq_wl_new(t->cops, t->cstate, t->dev, t->ncpus,
				     (uint32_t)cfg->wl_cmdq.cmds_per_sync, cfg->wl_cmdq.think_ns,
				     t->req->oracle);
		if (!t->cwl)
			goto oom;
		t->op = cmdq_wl_op;
		t->op_arg = t->cwl;
		t->metrics[0] = "op";
		t->n_metrics = 1;
		return 0;
	case WORKLOAD_IOVA:
		t->op = iova_wl_op;
		t->op_arg = t->iwl;
		t->metrics[0] = "alloc";
		t->metrics[1] = "free";
		t->n_metrics = 2;
		return 0;
	default: {
		struct dma_wl_params p = {
			.pages = (uint32_t)cfg->wl_dma.pages,
			.pt_map_ns = cfg->wl_dma.pt_map_ns,
			.pt_unmap_ns = cfg->wl_dma.pt_unmap_ns,
			.trans_ns = cfg->wl_dma.trans_ns,
			.pattern = cfg->wl_dma.pattern,
			.batch = (uint32_t)cfg->wl_dma.batch,
			.think_ns = cfg->wl_dma.think_ns,
		};
		t->dwl = dma_wl_new(t->cops, t->cstate, t->iwl, t->ncpus, &p);
		if (!t->dwl)
			goto oom;
		t->op = dma_wl_op;
		t->op_arg = t->dwl;
		t->metrics[0] = "map";
		t->metrics[1] = "unmap";
		t->n_metrics = 2;
		return 0;
	}
	}
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
	if (t->iops)
		add_plugin_tables(t, t->req->iova);
	t->env = host_env_new(t->ncpus, t->n_counters, t->cfg->scenario.phases);
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
					      : res->ops ? (double)total / (double)res->ops : 0;
}

static void merge_metrics(struct trial *t, struct trial_result *res, uint64_t *window)
{
	struct hist *all = malloc(sizeof(*all) * t->n_metrics);

	res->ops_min_cpu = UINT64_MAX;
	for (uint32_t m = 0; all && m < t->n_metrics; m++)
		hist_reset(&all[m]);
	for (uint32_t i = 0; i < t->ncpus; i++) {
		struct native_cpu_result *cr = &t->nres.cpus[i];
		for (uint32_t m = 0; all && m < t->n_metrics; m++)
			hist_merge(&all[m], &cr->hists[m]);
		res->ops += cr->ops;
		*window += cr->window_ns;
		if (cr->ops < res->ops_min_cpu)
			res->ops_min_cpu = cr->ops;
		if (cr->ops > res->ops_max_cpu)
			res->ops_max_cpu = cr->ops;
	}
	res->duration_s = t->nres.measured_s;
	res->ops_per_sec = res->duration_s > 0 ? (double)res->ops / res->duration_s : 0;
	res->n_metrics = t->n_metrics;
	for (uint32_t m = 0; all && m < t->n_metrics; m++) {
		res->metrics[m].name = t->metrics[m];
		hist_summarize(&all[m], &res->metrics[m].lat);
	}
	if (all && t->cwl) {
		/* What the loop costs beyond issue() and think time: the harness's own overhead. */
		double busy = all[0].mean * (double)all[0].count;
		double think = (double)res->ops * (double)t->cfg->wl_cmdq.think_ns;
		double harness = (double)*window - busy - think;
		add_counter(res, "harness_ns", LAB_COUNTER_EVENTS, harness > 0 ? (uint64_t)harness : 0);
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
		add_counter(res, "tree_ranges", LAB_COUNTER_LEVEL, st.live);
		add_counter(res, "wl_alloc_failures", LAB_COUNTER_EVENTS, iova_wl_failures(t->iwl));
	}
	if (t->cfg->scenario.engine == ENGINE_SIM) {
		/* The simulation's own work: what each op costs the model (and the host). */
		const struct sim_stats *st = sim_trial_last_stats();
		add_counter(res, "sim_lab_ops", LAB_COUNTER_EVENTS, st->lab_ops_measured);
		add_counter(res, "sim_line_transfers", LAB_COUNTER_EVENTS, st->misses_measured);
	}
	res->n_phases = t->n_phases;
	for (uint32_t p = 0; p < t->n_phases; p++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < t->ncpus; i++)
			sum += host_env_cpu(t->env, i)->phase_ns[p];
		res->phases[p].name = t->phase_names[p];
		res->phases[p].ns_per_op = res->ops ? (double)sum / (double)res->ops : 0;
	}
}

static void set_check(struct oracle_report *o, const char *name, bool pass, const char *detail)
{
	struct oracle_check *k = &o->checks[o->n_checks++];

	k->name = name;
	k->pass = pass;
	snprintf(k->detail, sizeof(k->detail), "%s", pass ? "" : detail);
}

static void run_oracle(struct trial *t, struct trial_result *res, struct oracle_report *o)
{
	char once[ORACLE_DETAIL_LEN] = "", order[ORACLE_DETAIL_LEN] = "";
	bool exactly_once = false, in_order = false;
	const char *viol = smmu_error(t->dev);
	const char *sync = cmdq_wl_sync_violation(t->cwl);

	memset(o, 0, sizeof(*o));
	set_check(o, "protocol", !viol, viol);
	if (!t->nres.hung && !viol)
		cmdq_wl_check_trace(t->cwl, &exactly_once, once, &in_order, order, sizeof(once));
	else
		snprintf(once, sizeof(once), "not checked: the trial was abandoned");
	snprintf(order, sizeof(order), "%s", order[0] ? order : once);
	set_check(o, "exactly_once", exactly_once, once);
	set_check(o, "in_order", in_order, order);
	set_check(o, "sync_complete", !sync, sync);
	set_check(o, "no_deadlock", !t->nres.hung, res->error);
}

static void judge(struct trial *t, struct trial_result *res)
{
	const char *viol = t->dev ? smmu_error(t->dev) : NULL;
	const char *err = t->cwl ? cmdq_wl_error(t->cwl) : t->dwl ? dma_wl_error(t->dwl) : NULL;

	if (!err && t->mwl && !t->nres.hung)
		err = micro_wl_error(t->mwl);

	if (viol)
		fail(res, "protocol violation: %s", viol);
	else if (t->nres.hung)
		fail(res, "%s", t->nres.why);
	else if (err)
		fail(res, "%s", err);
	else if (t->req->oracle && t->cwl && cmdq_wl_sync_violation(t->cwl))
		fail(res, "%s", cmdq_wl_sync_violation(t->cwl));
	/* An abandoned plugin's state may be inconsistent: do not let fini walk it. */
	t->abandoned = t->nres.hung || viol;
}

/* Give back every IOVA: what the workload holds, then what the policy caches. */
static void return_iovas(struct trial *t, struct trial_result *res)
{
	struct lab_cpu *c0 = host_env_cpu(t->env, 0);

	if (t->iwl)
		iova_wl_drain(t->iwl, c0);
	c0->counters += t->iova_counter_off;
	t->iops->fini(c0, t->istate);
	c0->counters -= t->iova_counter_off;
	t->istate_ok = false;
	uint64_t left = slowpath_live(t->sp);
	if (left && res->status == TRIAL_OK)
		fail(res, "%s: %" PRIu64 " IOVA ranges still allocated after fini: they were not "
		     "returned to the domain", t->req->iova->name, left);
}

static void teardown(struct trial *t, struct trial_result *res)
{
	if (t->istate_ok && !t->abandoned)
		return_iovas(t, res);
	if (t->cstate_ok && !t->abandoned && t->cops->fini)
		t->cops->fini(t->cstate);
	cmdq_wl_free(t->cwl);
	dma_wl_free(t->dwl);
	micro_wl_free(t->mwl);
	iova_wl_free(t->iwl);
	native_result_free(&t->nres, t->ncpus);
	smmu_free(t->dev);
	if (!t->abandoned)
		slowpath_free(t->sp);
	host_env_free(t->env);
}

static int run(const struct trial_request *req, struct trial_result *res,
	       struct oracle_report *oracle)
{
	struct trial t = { .req = req, .cfg = req->cfg, .ncpus = (uint32_t)req->cfg->scenario.cpus };
	int rc;

	int wl = req->cfg->scenario.workload;

	if (wl == WORKLOAD_CMDQ || wl == WORKLOAD_DMA)
		t.cops = req->cmdq ? req->cmdq->ops : NULL;
	if (wl == WORKLOAD_IOVA || wl == WORKLOAD_DMA)
		t.iops = req->iova ? req->iova->ops : NULL;
	rc = setup(&t, res);
	if (rc)
		goto out;
	struct native_job job = {
		.env = t.env,
		.n_metrics = t.n_metrics,
		.warmup_ns = t.cfg->scenario.warmup_ms * 1000000u,
		.duration_ns = t.cfg->scenario.duration_ms * 1000000u,
		.ops_per_cpu = req->ops_per_cpu,
		.watchdog_ns = t.cfg->scenario.watchdog_ms * 1000000u,
		.op = t.op,
		.arg = t.op_arg,
		.counters = t.counters,
		.n_counters = t.n_counters,
		.on_measure = snapshot_device,
		.measure_arg = &t,
	};
	/* Injected allocation failures start with the run: set-up is not what is tested. */
	host_env_set_alloc_fault(t.env, t.cfg->faults.alloc_fail_every);
	char why[512] = "";
	if (t.cfg->scenario.engine == ENGINE_SIM)
		rc = sim_trial_run(&job, t.cfg, t.dev, &t.nres, why, sizeof(why));
	else
		rc = native_run(&job, &t.nres, t.phase_names, t.n_phases);
	if (t.dev)
		smmu_stop(t.dev);
	if (rc) {
		if (why[0])
			fail(res, "%s", why);
		else
			fail(res, "cannot start %u threads: %s", t.ncpus, strerror(-rc));
		goto out;
	}
	merge(&t, res);
	judge(&t, res);
	if (req->oracle && oracle && t.cwl)
		run_oracle(&t, res, oracle);
out:
	teardown(&t, res);
	return rc;
}

int trial_run(const struct trial_request *req, struct trial_result *res,
	      struct oracle_report *oracle)
{
	const struct scenario_cfg *cfg = req->cfg;
	int rc;

	res->status = TRIAL_OK;
	res->error[0] = '\0';
	res->cpus = (uint32_t)cfg->scenario.cpus;
	res->engine = cfg->scenario.engine == ENGINE_SIM ? "sim" : "native";
	res->device_mode = device_mode_names[cfg->smmu.device ? 1 : 0];
	if (oracle)
		memset(oracle, 0, sizeof(*oracle));
	struct trial_request sim_req;
	struct scenario_cfg sim_cfg;
	if (cfg->scenario.engine == ENGINE_SIM) {
		/* Same trial, with the plugins' sim builds and virtual CPUs (framework/sim). */
		rc = sim_trial_prepare(req, &sim_req, &sim_cfg, res->error, sizeof(res->error));
		if (rc) {
			res->status = TRIAL_FAILED;
			return rc;
		}
		req = &sim_req;
		cfg = &sim_cfg;
	} else {
		rc = check_cpus(cfg, res);
		if (rc)
			return rc;
	}
	int wl = cfg->scenario.workload;
	if (((wl == WORKLOAD_CMDQ || wl == WORKLOAD_DMA) && !req->cmdq) ||
	    ((wl == WORKLOAD_IOVA || wl == WORKLOAD_DMA) && !req->iova)) {
		fail(res, "this workload needs a %s plugin", !req->cmdq ? "cmdq" : "iova");
		return -EINVAL;
	}
	return run(req, res, oracle);
}
