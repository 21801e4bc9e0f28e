/* SPDX-License-Identifier: MIT */
/* sim_engine -- the sim as an engine (see sim_engine.h). */
#include "engine/sim/sim_engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/sim/sim.h"
#include "loader/loader.h"

/* ---- adapting the trial ------------------------------------------------------------------ */

/* The sim builds of the plugins, the device as the sim's agent, the CPUs it can simulate. */
static int sim_prepare(struct engine_trial *t, char *err, size_t err_len)
{
	struct scenario_cfg *cfg = t->cfg;

	if (cfg->scenario.cpus < 1 || cfg->scenario.cpus > SIM_MAX_CPUS) {
		snprintf(err, err_len, "engine = sim runs 1 to %d CPUs, not %llu", SIM_MAX_CPUS,
			 (unsigned long long)cfg->scenario.cpus);
		return -EINVAL;
	}
	/* The device is the sim's agent: no thread of its own, whatever the scenario says. */
	cfg->smmu.device = DEVICE_INLINE;
	if (t->cmdq && !(t->cmdq = plugin_sim_build(t->cmdq, err, err_len)))
		return -ENOENT;
	if (t->iova && !(t->iova = plugin_sim_build(t->iova, err, err_len)))
		return -ENOENT;
	return 0;
}

/* ---- the device as the agent ------------------------------------------------------------- */

/* What the sim last saw of one of the device's queues. */
struct dev_agent_q {
	struct lab_smmu *q;
	uint32_t seen_cons;  /* CONS when the sim last asked */
	uint32_t seen_fetch; /* the device's fetch index then */
};

struct dev_agent {
	struct smmu_dev *dev;
	struct dev_agent_q *qs; /* one per queue */
	uint32_t nq;
	uint32_t (*read_cons)(struct lab_cpu *c, struct lab_smmu *s); /* the device's own */
	void (*write_prod)(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod); /* ... */
	bool posted; /* memory = arm: PROD writes are posted (sim_write_prod_posted) */
};

/* One trial at a time per thread: the wrapped register's device. */
static _Thread_local struct dev_agent *cur_agent;

/*
 * readl(CONS) under the sim: the device's register, and the sim told that it was read (after
 * this CPU's posted PROD writes, which reach the device first).
 */
static uint32_t sim_read_cons(struct lab_cpu *c, struct lab_smmu *s)
{
	sim_take_turn();
	if (cur_agent->posted)
		sim_drain_agent_writes();
	uint32_t v = cur_agent->read_cons(c, s);

	sim_read_agent();
	return v;
}

/* A posted PROD write reaching the device (sim_post_agent_write). */
static void posted_prod(void *arg, uint64_t v, uint64_t now_ns)
{
	smmu_q_write_prod_at(arg, (uint32_t)v, now_ns);
}

/*
 * writel_relaxed(PROD) under memory = arm: the CPU pays for the write now, the device sees it
 * when the CPU's store buffer lets it go, so a later relaxed store (owner_prod handed to the
 * next owner) may be seen first, as on an Arm core without the release the kernel puts there.
 */
static void sim_write_prod_posted(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod)
{
	sim_take_turn();
	lab_delay_ns(c, smmu_prod_write_ns(cur_agent->dev));
	sim_post_agent_write(posted_prod, s, prod);
}

/* writel(PROD) under memory = sc: the device's own, in the writer's turn. */
static void sim_write_prod(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod)
{
	sim_take_turn();
	cur_agent->write_prod(c, s, prod);
}

static uint64_t dev_next_due(void *arg)
{
	return smmu_next_due(((struct dev_agent *)arg)->dev);
}

static void dev_advance(void *arg)
{
	smmu_advance(((struct dev_agent *)arg)->dev);
}

/*
 * The device writes memory CPUs may sleep on (MSI words, ring slots) or moves CONS only at
 * its events, and counts them: read on every switch, so it must be cheap (one load each, not
 * smmu_get_stats(): a lock and a copy).
 *
 * The slots fetched since the last call were read (and poisoned) by the device, and a
 * CMD_SYNC's slot is written once more (its MSI) before CONS passes it: their lines leave the
 * CPUs' caches, so the CPU that next touches one pays the miss. Fetch and CONS wrap after
 * 2 x queue entries, at most one queue's worth of which can be outstanding, so two reads a
 * wrap apart would need a whole queue published and consumed twice between two switches.
 */
static void dev_wrote_slots(struct lab_smmu *q, uint32_t from, uint32_t to)
{
	uint32_t mask = (2u << q->shift) - 1, nents = 1u << q->shift;

	for (uint32_t p = from; p != to; p = (p + 1) & mask)
		sim_agent_wrote(&q->ring[p & (nents - 1)], sizeof(q->ring[0]));
}

static uint64_t dev_progress(void *arg)
{
	struct dev_agent *a = arg;

	for (uint32_t i = 0; i < a->nq; i++) {
		struct dev_agent_q *aq = &a->qs[i];
		uint32_t fetch = smmu_q_fetched(a->dev, i), cons = smmu_q_cons(a->dev, i);

		dev_wrote_slots(aq->q, aq->seen_fetch, fetch);
		dev_wrote_slots(aq->q, aq->seen_cons, cons);
		aq->seen_fetch = fetch;
		aq->seen_cons = cons;
	}
	return smmu_events(a->dev);
}

static void dev_stored(void *arg, const void *p, size_t len)
{
	(void)arg;
	sim_agent_stored(p, len);
}

static int sim_engine_run(const struct engine_job *job, struct engine_result *res)
{
	struct dev_agent da = { .dev = job->dev };
	struct sim_agent agent = {
		.next_due = dev_next_due,
		.advance = dev_advance,
		.progress = dev_progress,
		.arg = &da,
	};
	struct sim_topology topo = { 0 };
	const struct scenario_machine *m = &job->cfg->machine;
	struct sim_stats st = { 0 };
	char err[TRIAL_ERR_LEN];
	int rc;

	/*
	 * The line each allocation gets must not depend on the host's heap (host.c); a line
	 * allocated again mid-run was zeroed by plain stores, which the sim must not take for a
	 * plugin's (lab_h_only), nor a load satisfied early see through (memory = arm).
	 */
	if (host_env_use_arena(job->env, sim_note_host_write)) {
		memset(res, 0, sizeof(*res));
		snprintf(res->why, sizeof(res->why), "out of memory for the sim's arena");
		return -ENOMEM;
	}
	if (m->topology && m->topology[0]) {
		rc = sim_topology_load(m->topology, &topo, err, sizeof(err));
		if (rc) {
			memset(res, 0, sizeof(*res));
			snprintf(res->why, sizeof(res->why), "%s", err);
			return rc;
		}
	}
	if (job->dev) {
		da.nq = smmu_nqueues(job->dev);
		da.qs = calloc(da.nq, sizeof(*da.qs));
		if (!da.qs) {
			sim_topology_free(&topo);
			memset(res, 0, sizeof(*res));
			snprintf(res->why, sizeof(res->why),
				 "out of memory for the device's agent");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < da.nq; i++) {
			struct dev_agent_q *aq = &da.qs[i];

			aq->q = smmu_q_iface(job->dev, i);
			aq->seen_cons = smmu_q_cons(job->dev, i);
			aq->seen_fetch = smmu_q_fetched(job->dev, i);
			da.read_cons = aq->q->read_cons; /* the same for every queue */
			aq->q->read_cons = sim_read_cons;
			da.write_prod = aq->q->write_prod;
			da.posted = m->memory == MACHINE_MEMORY_ARM;
			aq->q->write_prod = da.posted ? sim_write_prod_posted : sim_write_prod;
		}
		smmu_set_store_hook(job->dev, dev_stored, NULL);
		cur_agent = &da;
	}
	rc = sim_run(job, m, topo.n ? &topo : NULL, job->dev ? &agent : NULL, res, &st);
	if (job->dev) {
		for (uint32_t i = 0; i < da.nq; i++) { /* teardown uses them natively */
			da.qs[i].q->read_cons = da.read_cons;
			da.qs[i].q->write_prod = da.write_prod;
		}
		free(da.qs);
		smmu_set_store_hook(job->dev, NULL, NULL);
		cur_agent = NULL;
	}
	sim_topology_free(&topo);
	if (rc) {
		snprintf(res->why, sizeof(res->why), "cannot set up %u virtual CPUs: %s",
			 host_env_ncpus(job->env), strerror(-rc));
		return rc;
	}
	/* The simulation's own work: what each op costs the model (and the host). */
	engine_result_add_stat(res, sim_engine.stats[0], st.lab_ops_measured);
	engine_result_add_stat(res, sim_engine.stats[1], st.misses_measured);
	res->cost.host_s = st.host_s;
	res->cost.steps = st.lab_ops;
	res->cost.switches = st.switches;
	return 0;
}

const struct engine_ops sim_engine = {
	.name = "sim",
	.kind = ENGINE_SIM,
	.binding = ENGINE_BINDING_SIM,
	.publishes_progress = true,
	.stats = { "sim_lab_ops", "sim_line_transfers" },
	.prepare = sim_prepare,
	.run = sim_engine_run,
};
