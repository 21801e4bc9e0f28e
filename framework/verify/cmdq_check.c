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
#include <string.h>

#include "device/smmu.h"
#include "engine/native/native.h"
#include "params/params.h"
#include "results/trial.h"
#include "scenario/scenario.h"
#include "workload/cmdq_wl.h"

/* ---- the grid ------------------------------------------------------------------------------ */

static const uint32_t grid_cpus[] = {1, 2};
static const uint32_t grid_shifts[] = {3, 4, 8};
static const bool grid_msi[] = {true, false};
static const uint32_t grid_cmds[] = {1, 5};
static const uint64_t grid_thinks[] = {0, 200};

#define GRID_MAX                                                                                   \
	(LAB_ARRAY_SIZE(grid_cpus) * LAB_ARRAY_SIZE(grid_shifts) * LAB_ARRAY_SIZE(grid_msi) *      \
	 LAB_ARRAY_SIZE(grid_cmds) * LAB_ARRAY_SIZE(grid_thinks))

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
						    .cpus = grid_cpus[c],
						    .queue_shift = grid_shifts[s],
						    .msi = grid_msi[m],
						    .cmds_per_sync = grid_cmds[k],
						    .think_ns = grid_thinks[t],
						};
					}
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
	cfg->scenario.workload = WORKLOAD_CMDQ;
	cfg->scenario.engine = ENGINE_NATIVE;
	/* meson runs suites side by side: a preempted lock holder is slow, not wrong. */
	cfg->scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
	cfg->smmu.device = DEVICE_INLINE;
	return 0;
}

void cmdq_check_apply(const struct cmdq_check_point *p, struct scenario_cfg *cfg)
{
	uint32_t online = native_online_cpus();

	/* Same grid on every machine (the callers count its points): 2 CPUs on 1 run as 1. */
	cfg->scenario.cpus = p->cpus < online ? p->cpus : online;
	cfg->smmu.queue_shift = p->queue_shift;
	cfg->smmu.msi = p->msi;
	cfg->wl_cmdq.cmds_per_sync = p->cmds_per_sync;
	cfg->wl_cmdq.think_ns = p->think_ns;
}

void cmdq_check_describe(const struct scenario_cfg *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "cpus=%u queue_shift=%u msi=%s cmds_per_sync=%u think_ns=%u",
		 (unsigned)cfg->scenario.cpus, (unsigned)cfg->smmu.queue_shift,
		 cfg->smmu.msi ? "on" : "off", (unsigned)cfg->wl_cmdq.cmds_per_sync,
		 (unsigned)cfg->wl_cmdq.think_ns);
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
enum { CHECK_PROTOCOL, CHECK_EXACTLY_ONCE, CHECK_IN_ORDER, CHECK_SYNC_COMPLETE, CHECK_NO_DEADLOCK };
static const char *const check_names[] = {
    [CHECK_PROTOCOL] = "protocol",	 [CHECK_EXACTLY_ONCE] = "exactly_once",
    [CHECK_IN_ORDER] = "in_order",	 [CHECK_SYNC_COMPLETE] = "sync_complete",
    [CHECK_NO_DEADLOCK] = "no_deadlock",
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
	snprintf(k->detail, sizeof(k->detail), "%s", pass ? "" : detail);
	o->n_checks = (uint32_t)which + 1;
}

void cmdq_check_oracle(struct oracle_report *o, const struct smmu_dev *dev,
		       const struct cmdq_wl *wl, bool hung, struct trial_result *res)
{
	char once[ORACLE_DETAIL_LEN] = "", order[ORACLE_DETAIL_LEN] = "";
	bool exactly_once = false, in_order = false;
	const char *viol = smmu_error(dev);
	const char *sync = cmdq_wl_sync_violation(wl);

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
	set_check(o, CHECK_SYNC_COMPLETE, !sync, sync);
	set_check(o, CHECK_NO_DEADLOCK, !hung, res->error);
}
