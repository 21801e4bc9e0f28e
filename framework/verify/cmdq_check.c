/* SPDX-License-Identifier: MIT */
/*
 * cmdq_check -- the cmdq conformance grid and the oracle's verdicts (see cmdq_check.h). The
 * trace walk that needs the workload's own bookkeeping stays in workload/cmdq_wl.c; which
 * checks there are, their order and their messages are decided here.
 */
#include "verify/cmdq_check.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/native/native.h"
#include "params/params.h"
#include "results/trial.h"
#include "scenario/scenario.h"
#include "workload/cmdq_wl.h"

/* ---- the grid ------------------------------------------------------------------------------ */

static const uint32_t grid_cpus[] = { 1, 2 };
static const uint32_t grid_shifts[] = { 3, 4, 8 };
static const bool grid_msi[] = { true, false };
static const uint32_t grid_cmds[] = { 1, 5 };
static const uint64_t grid_thinks[] = { 0, 200 };

/* The sim part: more CPUs than 2 native cores, small queues (hand-offs need 3+ CPUs). */
static const uint32_t sim_cpus[] = { 4, 16, 64 };
static const uint32_t sim_shifts[] = { 3, 4 };
static const uint32_t sim_cmds[] = { 1, 5 };
/*
 * The device's queues at each sim CPU count: one per CPU at 4, then fewer than the CPUs, so a
 * multi-queue strategy runs both with a queue of its own and sharing one; a single-queue
 * strategy drives queue 0 and never sees the others. Natively, one queue per CPU.
 */
static const uint32_t sim_queues[] = { 4, 4, 8 };
static_assert(LAB_ARRAY_SIZE(sim_queues) == LAB_ARRAY_SIZE(sim_cpus),
	      "a queue count per CPU count");
/* Sequential consistency, then Arm's store buffers: a missing barrier fails only there. */
static const int sim_memory[] = { MACHINE_MEMORY_SC, MACHINE_MEMORY_ARM };

/*
 * The mixed shapes ([workload.cmdq] mixed, up to this many commands an op): bare CMD_SYNCs,
 * commands without one, and sizes that differ from op to op and CPU to CPU, which the fixed
 * points never issue. On the tiny queues, without think time; on the sim under sequential
 * consistency.
 */
#define GRID_MIXED_CMDS 5
static const uint32_t mixed_shifts[] = { 3, 4 };

#define GRID_MAX                                                                                   \
	(LAB_ARRAY_SIZE(grid_cpus) * LAB_ARRAY_SIZE(grid_shifts) * LAB_ARRAY_SIZE(grid_msi) *      \
		 LAB_ARRAY_SIZE(grid_cmds) * LAB_ARRAY_SIZE(grid_thinks) +                         \
	 LAB_ARRAY_SIZE(sim_cpus) * LAB_ARRAY_SIZE(sim_shifts) * LAB_ARRAY_SIZE(grid_msi) *        \
		 LAB_ARRAY_SIZE(sim_cmds) * LAB_ARRAY_SIZE(sim_memory) +                           \
	 (LAB_ARRAY_SIZE(grid_cpus) + LAB_ARRAY_SIZE(sim_cpus)) * LAB_ARRAY_SIZE(mixed_shifts) *   \
		 LAB_ARRAY_SIZE(grid_msi))

static struct cmdq_check_point grid[GRID_MAX];
static size_t grid_n;
static pthread_once_t grid_once = PTHREAD_ONCE_INIT;

/*
 * Think time matters where the queue is tiny: it shifts which CPU finds the queue full or
 * wrapped. A 256-entry queue seldom fills at 2 CPUs either way, so it runs without think
 * time only (this keeps every configuration verify and the conformance suite ran before they
 * shared this grid, and no more).
 */
static bool grid_wanted(uint32_t shift, uint64_t think_ns)
{
	return !think_ns || shift <= 4;
}

/* The mixed points of one engine, CPU count and queue count. */
static void grid_add_mixed(int engine, uint32_t cpus, uint32_t queues, uint64_t ops_per_cpu)
{
	for (size_t s = 0; s < LAB_ARRAY_SIZE(mixed_shifts); s++)
		for (size_t m = 0; m < LAB_ARRAY_SIZE(grid_msi); m++)
			grid[grid_n++] = (struct cmdq_check_point){
				.engine = engine,
				.ops_per_cpu = ops_per_cpu,
				.cpus = cpus,
				.queue_shift = mixed_shifts[s],
				.msi = grid_msi[m],
				.cmds_per_sync = GRID_MIXED_CMDS,
				.mixed = true,
				.memory = MACHINE_MEMORY_SC,
				.queues = queues,
			};
}

static void grid_build(void)
{
	for (size_t c = 0; c < LAB_ARRAY_SIZE(grid_cpus); c++)
		for (size_t s = 0; s < LAB_ARRAY_SIZE(grid_shifts); s++)
			for (size_t m = 0; m < LAB_ARRAY_SIZE(grid_msi); m++)
				for (size_t k = 0; k < LAB_ARRAY_SIZE(grid_cmds); k++)
					for (size_t t = 0; t < LAB_ARRAY_SIZE(grid_thinks); t++) {
						if (!grid_wanted(grid_shifts[s], grid_thinks[t]))
							continue;
						grid[grid_n++] = (struct cmdq_check_point){
							.engine = ENGINE_NATIVE,
							.ops_per_cpu = CMDQ_CHECK_OPS_PER_CPU,
							.cpus = grid_cpus[c],
							.queue_shift = grid_shifts[s],
							.msi = grid_msi[m],
							.cmds_per_sync = grid_cmds[k],
							.think_ns = grid_thinks[t],
							.queues = grid_cpus[c],
						};
					}
	for (size_t c = 0; c < LAB_ARRAY_SIZE(sim_cpus); c++)
		for (size_t s = 0; s < LAB_ARRAY_SIZE(sim_shifts); s++)
			for (size_t m = 0; m < LAB_ARRAY_SIZE(grid_msi); m++)
				for (size_t k = 0; k < LAB_ARRAY_SIZE(sim_cmds); k++)
					for (size_t w = 0; w < LAB_ARRAY_SIZE(sim_memory); w++)
						grid[grid_n++] = (struct cmdq_check_point){
							.engine = ENGINE_SIM,
							.ops_per_cpu =
								CMDQ_CHECK_SIM_OPS / sim_cpus[c],
							.cpus = sim_cpus[c],
							.queue_shift = sim_shifts[s],
							.msi = grid_msi[m],
							.cmds_per_sync = sim_cmds[k],
							.memory = sim_memory[w],
							.queues = sim_queues[c],
						};
	for (size_t c = 0; c < LAB_ARRAY_SIZE(grid_cpus); c++)
		grid_add_mixed(ENGINE_NATIVE, grid_cpus[c], grid_cpus[c], CMDQ_CHECK_OPS_PER_CPU);
	for (size_t c = 0; c < LAB_ARRAY_SIZE(sim_cpus); c++)
		grid_add_mixed(ENGINE_SIM, sim_cpus[c], sim_queues[c],
			       CMDQ_CHECK_SIM_OPS / sim_cpus[c]);
}

const struct cmdq_check_point *cmdq_check_grid(size_t *n)
{
	pthread_once(&grid_once, grid_build);
	*n = grid_n;
	return grid;
}

int cmdq_check_base(struct scenario_cfg *cfg, char *err, size_t err_len)
{
	size_t n;
	const struct scenario_section *sec = scenario_sections(&n);

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < n; i++)
		if (param_set_defaults(sec[i].params, sec[i].n_params, (char *)cfg + sec[i].offset,
				       err, err_len))
			return -EINVAL;
	/* The sim part's machine, as a scenario without [machine] gets it (graviton2). */
	if (scenario_machine_preset(&cfg->machine, cfg->machine.preset, err, err_len))
		return -EINVAL;
	cfg->scenario.workload = WORKLOAD_CMDQ;
	cfg->scenario.engine = ENGINE_NATIVE;
	/* meson runs suites side by side: a preempted lock holder is slow, not wrong. */
	cfg->scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
	cfg->scenario.watchdog_ms = CMDQ_CHECK_WATCHDOG_MS;
	cfg->smmu.device = DEVICE_INLINE;
	return 0;
}

void cmdq_check_apply(const struct cmdq_check_point *p, struct scenario_cfg *cfg)
{
	uint32_t online = native_online_cpus();

	cfg->scenario.engine = p->engine;
	/* Same grid on every machine (the callers count its points): 2 CPUs on 1 run as 1. */
	cfg->scenario.cpus = p->engine == ENGINE_SIM || p->cpus < online ? p->cpus : online;
	cfg->smmu.queue_shift = p->queue_shift;
	cfg->smmu.msi = p->msi;
	cfg->wl_cmdq.cmds_per_sync = p->cmds_per_sync;
	cfg->wl_cmdq.mixed = p->mixed;
	cfg->wl_cmdq.think_ns = p->think_ns;
	cfg->machine.memory = p->memory;
	cfg->smmu.queues = p->queues ? p->queues : 1;
}

size_t cmdq_check_seeds(const struct cmdq_check_point *p, size_t variant)
{
	if (p->engine != ENGINE_SIM || p->cpus > 16)
		return 0;
	return variant ? 1 : CMDQ_CHECK_SEEDS;
}

void cmdq_check_perturb(struct scenario_cfg *cfg, uint64_t seed, double perturb_ns)
{
	cfg->scenario.seed = seed;
	cfg->machine.perturb_ns = perturb_ns > 0 ? perturb_ns : CMDQ_CHECK_PERTURB_NS;
}

void cmdq_check_describe(const struct scenario_cfg *cfg, char *buf, size_t len)
{
	int n = snprintf(
		buf, len,
		"engine=%s cpus=%u queues=%u queue_shift=%u msi=%s cmds_per_sync=%u%s think_ns=%u",
		cfg->scenario.engine == ENGINE_SIM
			? (cfg->machine.memory == MACHINE_MEMORY_ARM ? "sim memory=arm" : "sim")
			: "native",
		(unsigned)cfg->scenario.cpus, (unsigned)(cfg->smmu.queues ? cfg->smmu.queues : 1),
		(unsigned)cfg->smmu.queue_shift, cfg->smmu.msi ? "on" : "off",
		(unsigned)cfg->wl_cmdq.cmds_per_sync, cfg->wl_cmdq.mixed ? " mixed=on" : "",
		(unsigned)cfg->wl_cmdq.think_ns);

	if (cfg->scenario.engine == ENGINE_SIM && cfg->machine.perturb_ns > 0 && n > 0 &&
	    (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " perturb_ns=%g seed=%llu",
			 cfg->machine.perturb_ns, (unsigned long long)cfg->scenario.seed);
}

/* ---- the plugin's parameters ----------------------------------------------------------------- */

/*
 * A parameter's other values are only worth a trial where its code can behave differently:
 * contention (2 native CPUs or the sim) on a queue small enough to fill. The base runs
 * everywhere.
 */
bool cmdq_check_runs(const struct cmdq_check_point *p, size_t variant)
{
	if (!variant)
		return true;
	return p->engine == ENGINE_SIM || (p->cpus >= 2 && p->queue_shift <= 4 && !p->think_ns);
}

/* Add "key=text" to out when it parses and differs from the base's value. */
static size_t add_variant(const struct lab_param *p, const void *base, void *scratch, size_t size,
			  const char *text, struct cmdq_check_variant *out, size_t n, size_t max)
{
	char was[CMDQ_CHECK_SET_LEN], now[CMDQ_CHECK_SET_LEN], err[128];

	if (n >= max || param_format(p, base, was, sizeof(was)))
		return n;
	memcpy(scratch, base, size);
	if (param_parse(p, text, scratch, err, sizeof(err)))
		return n;
	int rc = param_format(p, scratch, now, sizeof(now));
	if (p->type == LAB_PARAM_STRING)
		free(*(char **)((char *)scratch + p->offset));
	if (rc || !strcmp(was, now))
		return n;
	for (size_t i = 1; i < n; i++)
		if (!strncmp(out[i].set, p->key, strlen(p->key)) &&
		    out[i].set[strlen(p->key)] == '=' &&
		    !strcmp(out[i].set + strlen(p->key) + 1, now))
			return n; /* min = 4, say: once is enough */
	snprintf(out[n].set, sizeof(out[n].set), "%s=%s", p->key, now);
	return n + 1;
}

/*
 * A duration (a key ending _ns, _us, _ms or _s: a poll timeout, a back-off) keeps its value:
 * shortening a timeout only makes it fire, which the plugin reports as its error on a
 * loaded machine, and lengthening one changes no path the oracle judges.
 */
static bool is_duration(const char *key)
{
	static const char *const units[] = { "_ns", "_us", "_ms", "_s" };
	size_t len = strlen(key);

	for (size_t i = 0; i < LAB_ARRAY_SIZE(units); i++) {
		size_t u = strlen(units[i]);

		if (len > u && !strcmp(key + len - u, units[i]))
			return true;
	}
	return false;
}

size_t cmdq_check_variants(const struct lab_plugin *d, const void *base,
			   struct cmdq_check_variant *out, size_t max)
{
	size_t n = 0, size = d->config_size ? d->config_size : 1;
	void *scratch = malloc(size);
	char text[64];

	if (!max)
		return 0;
	out[n++].set[0] = '\0';
	for (uint32_t i = 0; scratch && i < d->n_params; i++) {
		const struct lab_param *p = &d->params[i];

		switch (p->type) {
		case LAB_PARAM_BOOL:
			n = add_variant(p, base, scratch, size, "true", out, n, max);
			n = add_variant(p, base, scratch, size, "false", out, n, max);
			break;
		case LAB_PARAM_ENUM:
			for (size_t c = 0; p->choices[c]; c++)
				n = add_variant(p, base, scratch, size, p->choices[c], out, n, max);
			break;
		case LAB_PARAM_INT:
		case LAB_PARAM_UINT:
		case LAB_PARAM_DOUBLE: {
			if (is_duration(p->key))
				break;
			/* min, a small value above it (a batch of 4, say), and max when a trial
			 * at max stays short (a huge max is a timeout or a size, not a mode). */
			double small = p->min + 3 < p->max ? p->min + 3 : p->max;
			const double vals[] = { p->min, small, p->max };

			for (size_t v = 0; v < LAB_ARRAY_SIZE(vals); v++) {
				if (vals[v] > CMDQ_CHECK_PARAM_MAX)
					continue;
				snprintf(text, sizeof(text),
					 p->type == LAB_PARAM_DOUBLE ? "%g" : "%.0f", vals[v]);
				n = add_variant(p, base, scratch, size, text, out, n, max);
			}
			break;
		}
		default:
			break; /* a string has no legal values verify could know */
		}
	}
	free(scratch);
	return n;
}

void *cmdq_check_config(const struct lab_plugin *d, const void *base,
			const struct cmdq_check_variant *v, char *err, size_t err_len)
{
	size_t size = d->config_size ? d->config_size : 1;
	const char *eq = strchr(v->set, '=');
	void *cfg = calloc(1, size);
	char key[CMDQ_CHECK_SET_LEN];

	if (!cfg || param_copy(d->params, d->n_params, cfg, base, d->config_size)) {
		free(cfg);
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (!eq)
		return cfg;
	snprintf(key, sizeof(key), "%.*s", (int)(eq - v->set), v->set);
	const struct lab_param *p = param_find(d->params, d->n_params, key);
	if (!p || param_parse(p, eq + 1, cfg, err, err_len)) {
		if (!p)
			snprintf(err, err_len, "no parameter %s", key);
		cmdq_check_config_free(d, cfg);
		return NULL;
	}
	return cfg;
}

void cmdq_check_config_free(const struct lab_plugin *d, void *cfg)
{
	if (!cfg)
		return;
	param_free_strings(d->params, d->n_params, cfg);
	free(cfg);
}

/* ---- the oracle ------------------------------------------------------------------------------ */

const struct oracle_check *cmdq_check_find(const struct oracle_report *o, const char *name)
{
	for (uint32_t i = 0; i < o->n_checks; i++)
		if (!strcmp(o->checks[i].name, name))
			return &o->checks[i];
	return NULL;
}

/* The checks, in the order they are evaluated and reported. */
enum {
	CHECK_PROTOCOL,
	CHECK_EXACTLY_ONCE,
	CHECK_IN_ORDER,
	CHECK_SYNC_COMPLETE,
	CHECK_NO_DEADLOCK,
	CHECK_NO_CRASH,
	CHECK_LAB_H_ONLY, /* the sim's alone: last, so a native report ends before it */
};
static const char *const check_names[] = {
	[CHECK_PROTOCOL] = "protocol",	     [CHECK_EXACTLY_ONCE] = "exactly_once",
	[CHECK_IN_ORDER] = "in_order",	     [CHECK_SYNC_COMPLETE] = "sync_complete",
	[CHECK_NO_DEADLOCK] = "no_deadlock", [CHECK_NO_CRASH] = "no_crash",
	[CHECK_LAB_H_ONLY] = "lab_h_only",
};
static_assert(LAB_ARRAY_SIZE(check_names) <= ORACLE_MAX_CHECKS, "oracle_report too small");

const char *const *cmdq_check_names(size_t *n)
{
	*n = LAB_ARRAY_SIZE(check_names);
	return check_names;
}

static void set_check(struct oracle_report *o, int which, bool pass, const char *detail)
{
	struct oracle_check *k = &o->checks[which];

	k->name = check_names[which];
	k->pass = pass;
	k->unchecked = false;
	snprintf(k->detail, sizeof(k->detail), "%s", pass ? "" : detail);
	o->n_checks = (uint32_t)which + 1;
}

void cmdq_check_oracle(struct oracle_report *o, const struct smmu_dev *dev,
		       const struct cmdq_wl *wl, bool hung, bool spoiled, bool lab_h_watched,
		       const char *outside_lab_h, bool stopped_outside, struct trial_result *res)
{
	char once[ORACLE_DETAIL_LEN] = "", order[ORACLE_DETAIL_LEN] = "";
	bool exactly_once = false, in_order = false;
	const char *viol = smmu_error(dev);
	const char *sync = cmdq_wl_sync_violation(wl);
	/*
	 * An issue() that returned an error stopped its CPU's trial there: what it was asked to
	 * complete was not completed, whatever the trace shows. The workload's message names the
	 * op and the code.
	 */
	const char *ierr = cmdq_wl_error(wl);

	if (!sync)
		sync = ierr;

	if (sync && res->status == TRIAL_OK) {
		res->status = TRIAL_FAILED;
		snprintf(res->error, sizeof(res->error), "%s", sync);
	}
	memset(o, 0, sizeof(*o));
	set_check(o, CHECK_PROTOCOL, !viol, viol);
	/* A hung or violated trial's trace stops mid-op: judging it would blame the wrong op. */
	if (!hung && !viol)
		cmdq_wl_check_trace(wl, &exactly_once, once, &in_order, order, sizeof(once));
	else
		snprintf(once, sizeof(once), "not checked: the trial was abandoned");
	if (!order[0])
		snprintf(order, sizeof(order), "%s", once);
	set_check(o, CHECK_EXACTLY_ONCE, exactly_once, once);
	set_check(o, CHECK_IN_ORDER, in_order, order);
	o->checks[CHECK_EXACTLY_ONCE].unchecked = o->checks[CHECK_IN_ORDER].unchecked =
		hung || viol;
	set_check(o, CHECK_SYNC_COMPLETE, !sync, sync);
	set_check(o, CHECK_NO_DEADLOCK, !hung, res->error);
	/* Given up because the host held its threads off their cores (hung, or an op's poll
	 * timed out): no verdict either way, unless the plugin broke the sync itself. */
	o->checks[CHECK_NO_DEADLOCK].unchecked = spoiled && hung;
	o->checks[CHECK_SYNC_COMPLETE].unchecked = spoiled && sync && sync == ierr;
	/* The trial came back to its caller: whatever else it did, it did not crash. */
	set_check(o, CHECK_NO_CRASH, true, NULL);
	if (!lab_h_watched)
		return;
	set_check(o, CHECK_LAB_H_ONLY, !outside_lab_h, outside_lab_h);
	/*
	 * A CPU stuck in host code stopped the run, not a deadlock of the plugin's protocol:
	 * the sim cannot say what the plugin would have done next.
	 */
	if (stopped_outside) {
		o->checks[CHECK_NO_DEADLOCK].unchecked = true;
		snprintf(o->checks[CHECK_NO_DEADLOCK].detail, ORACLE_DETAIL_LEN,
			 "not checked: a CPU ran outside lab.h (lab_h_only)");
	}
}

void cmdq_check_heap_overrun(struct oracle_report *o, const char *what)
{
	set_check(o, CHECK_NO_CRASH, false, what);
	o->checks[CHECK_NO_CRASH].unchecked = false;
}

void cmdq_check_lost(struct oracle_report *o, enum cmdq_lost how, bool sim, const char *detail)
{
	int failing = how == CMDQ_LOST_CRASH  ? CHECK_NO_CRASH
		      : how == CMDQ_LOST_HANG ? CHECK_NO_DEADLOCK
		      : sim		      ? CHECK_LAB_H_ONLY
					      : CHECK_NO_DEADLOCK;
	int n = sim ? (int)LAB_ARRAY_SIZE(check_names) : CHECK_LAB_H_ONLY;

	memset(o, 0, sizeof(*o));
	for (int k = 0; k < n; k++) {
		bool fails = k == failing;

		set_check(o, k, !fails, fails ? detail : NULL);
		o->checks[k].unchecked = !fails;
		if (!fails)
			snprintf(o->checks[k].detail, sizeof(o->checks[k].detail),
				 "not checked: the trial's process %s",
				 how == CMDQ_LOST_CRASH ? "crashed" : "was killed");
	}
}
