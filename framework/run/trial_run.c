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
#include "sim/sim_trial.h"
#include "workload/cmdq_wl.h"

#define TRACE_CAP_MAX (8u << 20) /* 128 MiB of trace at most */

static const char *const device_mode_names[] = { "inline", "thread" };

struct cmdq_trial {
	const struct trial_request *req;
	const struct lab_plugin *desc;
	const struct lab_cmdq_ops *ops;
	struct host_env *env;
	struct smmu_dev *dev;
	void *state;
	bool state_ok;
	struct cmdq_wl *wl;
	struct native_result nres;
	const char *phase_names[LAB_MAX_PHASES];
	uint32_t n_phases;
};

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
	uint32_t busy = (uint32_t)cfg->scenario.cpus + (cfg->smmu.device == DEVICE_THREAD);

	res->oversubscribed = busy > online;
	if (res->oversubscribed && cfg->scenario.oversubscribe != OVERSUBSCRIBE_ALLOW) {
		fail(res,
		     "%u busy threads (%" PRIu64 " CPUs%s) on %u online CPUs would measure the "
		     "scheduler, not the algorithm: lower [scenario] cpus, use engine = sim, or "
		     "set [scenario] oversubscribe = allow",
		     busy, cfg->scenario.cpus,
		     cfg->smmu.device == DEVICE_THREAD ? " + the device thread" : "", online);
		return -EINVAL;
	}
	return 0;
}

static int cmdq_setup(struct cmdq_trial *t, struct trial_result *res)
{
	const struct scenario_cfg *cfg = t->req->cfg;
	uint32_t ncpus = (uint32_t)cfg->scenario.cpus;
	char err[256] = "";

	t->env = host_env_new(ncpus, t->desc->n_counters, cfg->scenario.phases);
	if (!t->env) {
		fail(res, "out of memory setting up %u CPUs", ncpus);
		return -ENOMEM;
	}
	struct smmu_config sc = {
		.shift = (uint32_t)cfg->smmu.queue_shift,
		.msi = cfg->smmu.msi,
		.mode = cfg->smmu.device,
		.timing = cfg->smmu,
		.ncpus = ncpus,
		.on_violation = on_violation,
		.violation_arg = t->env,
	};
	if (t->req->oracle) {
		uint64_t cap = t->req->ops_per_cpu * ncpus * (cfg->wl_cmdq.cmds_per_sync + 2);
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
		.ncpus = ncpus,
		.config = t->req->cmdq_config,
		.err = err,
		.err_len = sizeof(err),
	};
	int rc = t->ops->init(&s, &t->state);
	if (rc) {
		fail(res, "%s: init failed: %s (%s)", t->desc->name, err[0] ? err : "no reason given",
		     strerror(-rc));
		return rc;
	}
	t->state_ok = true;
	t->wl = cmdq_wl_new(t->ops, t->state, t->dev, ncpus, (uint32_t)cfg->wl_cmdq.cmds_per_sync,
			    cfg->wl_cmdq.think_ns, t->req->oracle);
	if (!t->wl) {
		fail(res, "out of memory for the workload");
		return -ENOMEM;
	}
	if (cfg->smmu.device == DEVICE_INLINE)
		host_env_set_idle(t->env, smmu_idle, t->dev);
	rc = smmu_start(t->dev);
	if (rc)
		fail(res, "cannot start the device thread: %s", strerror(-rc));
	return rc;
}

static void add_counter(struct trial_result *res, const char *name, enum lab_counter_kind kind,
			uint64_t total)
{
	struct trial_counter *k = &res->counters[res->n_counters++];

	k->name = name;
	k->kind = kind;
	k->total = total;
	k->per_op = kind == LAB_COUNTER_LEVEL ? (double)total
					      : res->ops ? (double)total / (double)res->ops : 0;
}

static void merge(struct cmdq_trial *t, struct trial_result *res)
{
	uint32_t ncpus = (uint32_t)t->req->cfg->scenario.cpus;
	struct hist *all = malloc(sizeof(*all));
	uint64_t window = 0;

	res->ops_min_cpu = UINT64_MAX;
	if (all)
		hist_reset(all);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct native_cpu_result *cr = &t->nres.cpus[i];
		if (all)
			hist_merge(all, &cr->hists[0]);
		res->ops += cr->ops;
		window += cr->window_ns;
		if (cr->ops < res->ops_min_cpu)
			res->ops_min_cpu = cr->ops;
		if (cr->ops > res->ops_max_cpu)
			res->ops_max_cpu = cr->ops;
	}
	res->duration_s = t->nres.measured_s;
	res->ops_per_sec = res->duration_s > 0 ? (double)res->ops / res->duration_s : 0;
	res->n_metrics = 1;
	res->metrics[0].name = "op";
	if (all)
		hist_summarize(all, &res->metrics[0].lat);

	for (uint32_t k = 0; k < t->desc->n_counters; k++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < ncpus; i++)
			sum += host_env_cpu(t->env, i)->counters[k];
		add_counter(res, t->desc->counters[k].name, t->desc->counters[k].kind, sum);
	}
	struct smmu_stats st;
	smmu_get_stats(t->dev, &st);
	add_counter(res, "dev_syncs", LAB_COUNTER_EVENTS, st.syncs);
	add_counter(res, "dev_prod_writes", LAB_COUNTER_EVENTS, st.prod_writes);
	add_counter(res, "dev_cons_reads", LAB_COUNTER_EVENTS, st.cons_reads);
	/* What the loop costs beyond issue() and think time: the harness's own overhead. */
	double busy = all ? all->mean * (double)all->count : 0;
	double think = (double)res->ops * (double)t->req->cfg->wl_cmdq.think_ns;
	double harness = (double)window - busy - think;
	add_counter(res, "harness_ns", LAB_COUNTER_EVENTS, harness > 0 ? (uint64_t)harness : 0);

	res->n_phases = t->n_phases;
	for (uint32_t p = 0; p < t->n_phases; p++) {
		uint64_t sum = 0;
		for (uint32_t i = 0; i < ncpus; i++)
			sum += host_env_cpu(t->env, i)->phase_ns[p];
		res->phases[p].name = t->phase_names[p];
		res->phases[p].ns_per_op = res->ops ? (double)sum / (double)res->ops : 0;
	}
	free(all);
}

static void set_check(struct oracle_report *o, const char *name, bool pass, const char *detail)
{
	struct oracle_check *k = &o->checks[o->n_checks++];

	k->name = name;
	k->pass = pass;
	snprintf(k->detail, sizeof(k->detail), "%s", pass ? "" : detail);
}

static void run_oracle(struct cmdq_trial *t, struct trial_result *res, struct oracle_report *o)
{
	char once[ORACLE_DETAIL_LEN] = "", order[ORACLE_DETAIL_LEN] = "";
	bool exactly_once = false, in_order = false;
	const char *viol = smmu_error(t->dev);
	const char *sync = cmdq_wl_sync_violation(t->wl);

	memset(o, 0, sizeof(*o));
	set_check(o, "protocol", !viol, viol);
	if (!t->nres.hung && !viol)
		cmdq_wl_check_trace(t->wl, &exactly_once, once, &in_order, order, sizeof(once));
	else
		snprintf(once, sizeof(once), "not checked: the trial was abandoned");
	snprintf(order, sizeof(order), "%s", order[0] ? order : once);
	set_check(o, "exactly_once", exactly_once, once);
	set_check(o, "in_order", in_order, order);
	set_check(o, "sync_complete", !sync, sync);
	set_check(o, "no_deadlock", !t->nres.hung, res->error);
}

static int run_cmdq(const struct trial_request *req, struct trial_result *res,
		    struct oracle_report *oracle)
{
	struct cmdq_trial t = { .req = req, .desc = req->cmdq, .ops = req->cmdq->ops };
	const struct scenario_cfg *cfg = req->cfg;
	int rc = cmdq_setup(&t, res);

	if (rc)
		goto out;
	t.phase_names[0] = "other";
	t.n_phases = 1;
	for (uint32_t p = 0; p < t.desc->n_phases && p + 1 < LAB_MAX_PHASES; p++)
		t.phase_names[t.n_phases++] = t.desc->phases[p];

	struct native_job job = {
		.env = t.env,
		.n_metrics = 1,
		.warmup_ns = cfg->scenario.warmup_ms * 1000000u,
		.duration_ns = cfg->scenario.duration_ms * 1000000u,
		.ops_per_cpu = req->ops_per_cpu,
		.watchdog_ns = cfg->scenario.watchdog_ms * 1000000u,
		.op = cmdq_wl_op,
		.arg = t.wl,
		.counters = t.desc->counters,
		.n_counters = t.desc->n_counters,
	};
	if (cfg->scenario.engine == ENGINE_SIM)
		rc = sim_trial_run(&job, cfg, t.dev, &t.nres);
	else
		rc = native_run(&job, &t.nres, t.phase_names, t.n_phases);
	smmu_stop(t.dev);
	if (rc) {
		fail(res, "cannot start %" PRIu64 " threads: %s", cfg->scenario.cpus, strerror(-rc));
		goto out;
	}
	merge(&t, res);
	const char *viol = smmu_error(t.dev);
	if (viol)
		fail(res, "protocol violation: %s", viol);
	else if (t.nres.hung)
		fail(res, "%s", t.nres.why);
	else if (cmdq_wl_error(t.wl))
		fail(res, "%s", cmdq_wl_error(t.wl));
	else if (req->oracle && cmdq_wl_sync_violation(t.wl))
		fail(res, "%s", cmdq_wl_sync_violation(t.wl));
	if (req->oracle && oracle)
		run_oracle(&t, res, oracle);
	/* An abandoned plugin's state may be inconsistent: do not let fini walk it. */
	if (t.nres.hung || viol)
		t.state_ok = false;
out:
	if (t.state_ok && t.ops->fini)
		t.ops->fini(t.state);
	cmdq_wl_free(t.wl);
	native_result_free(&t.nres, (uint32_t)cfg->scenario.cpus);
	smmu_free(t.dev);
	host_env_free(t.env);
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
	switch (cfg->scenario.workload) {
	case WORKLOAD_CMDQ:
		if (!req->cmdq) {
			fail(res, "workload cmdq needs a cmdq plugin");
			return -EINVAL;
		}
		return run_cmdq(req, res, oracle);
	default:
		fail(res, "workload %d is not available in this build", cfg->scenario.workload);
		return -ENOTSUP;
	}
}
