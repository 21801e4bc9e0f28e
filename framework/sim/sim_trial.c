/* SPDX-License-Identifier: MIT */
/* sim_trial -- a trial on the sim engine (see sim_trial.h). */
#include "sim/sim_trial.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static _Thread_local struct sim_stats last_stats;

/* ---- the sim builds of plugins ------------------------------------------------------------- */

#define TWINS_MAX 64

struct twin {
	const struct lab_plugin *native;
	const struct lab_plugin *sim;
};

/* Opened once and kept: descriptors must outlive every trial that uses them. */
static struct twin twins[TWINS_MAX];
static size_t n_twins;

const struct lab_plugin *sim_plugin_twin(const struct lab_plugin *native, char *err,
					 size_t err_len)
{
	char path[4096];
	Dl_info info;
	size_t len;

	for (size_t i = 0; i < n_twins; i++)
		if (twins[i].native == native)
			return twins[i].sim;
	if (!dladdr(native, &info) || !info.dli_fname) {
		snprintf(err, err_len, "%s: cannot find the file it was loaded from", native->name);
		return NULL;
	}
	len = strlen(info.dli_fname);
	if (len < 3 || strcmp(info.dli_fname + len - 3, ".so") || len + 5 > sizeof(path)) {
		snprintf(err, err_len, "%s: not a .so file", info.dli_fname);
		return NULL;
	}
	snprintf(path, sizeof(path), "%.*s.sim.so", (int)(len - 3), info.dli_fname);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, err_len, "%s has no sim build: %s (build it with -DLAB_ENGINE_SIM, "
			 "see lab.h)", info.dli_fname, dlerror());
		return NULL;
	}
	lab_plugin_entry_fn entry;
	void *sym = dlsym(h, LAB_PLUGIN_ENTRY_NAME);
	memcpy(&entry, &sym, sizeof(entry));
	const struct lab_plugin *d = sym ? entry() : NULL;
	if (!d || d->magic != native->magic || d->abi_major != native->abi_major ||
	    d->kind != native->kind || strcmp(d->name, native->name) ||
	    d->config_size != native->config_size || d->n_counters != native->n_counters) {
		snprintf(err, err_len, "%s does not match %s (name, kind, ABI, config or counters)",
			 path, info.dli_fname);
		dlclose(h);
		return NULL;
	}
	if (n_twins == TWINS_MAX) {
		snprintf(err, err_len, "more than %d plugins under the sim", TWINS_MAX);
		dlclose(h);
		return NULL;
	}
	twins[n_twins].native = native;
	twins[n_twins].sim = d;
	n_twins++;
	return d;
}

int sim_trial_prepare(const struct trial_request *req, struct trial_request *out_req,
		      struct scenario_cfg *out_cfg, char *err, size_t err_len)
{
	*out_req = *req;
	*out_cfg = *req->cfg;
	out_req->cfg = out_cfg;
	if (out_cfg->scenario.cpus < 1 || out_cfg->scenario.cpus > SIM_MAX_CPUS) {
		snprintf(err, err_len, "engine = sim runs 1 to %d CPUs, not %llu", SIM_MAX_CPUS,
			 (unsigned long long)out_cfg->scenario.cpus);
		return -EINVAL;
	}
	/* The device is the sim's agent: no thread of its own, whatever the scenario says. */
	out_cfg->smmu.device = DEVICE_INLINE;
	if (req->cmdq && !(out_req->cmdq = sim_plugin_twin(req->cmdq, err, err_len)))
		return -ENOENT;
	if (req->iova && !(out_req->iova = sim_plugin_twin(req->iova, err, err_len)))
		return -ENOENT;
	return 0;
}

void sim_trial_machine(const struct scenario_cfg *cfg, struct scenario_machine *m)
{
	*m = cfg->machine;
}

/* ---- the device as the agent ------------------------------------------------------------- */

struct dev_agent {
	struct smmu_dev *dev;
	struct lab_smmu *q;
	uint32_t seen_cons; /* CONS when the sim last asked */
	uint32_t seen_fetch; /* the device's fetch index then */
	uint32_t (*read_cons)(struct lab_cpu *c, struct lab_smmu *s); /* the device's own */
};

/* One trial at a time per thread: the wrapped register's device. */
static _Thread_local struct dev_agent *cur_agent;

/* readl(CONS) under the sim: the device's register, and the sim told that it was read. */
static uint32_t sim_read_cons(struct lab_cpu *c, struct lab_smmu *s)
{
	uint32_t v = cur_agent->read_cons(c, s);

	sim_read_agent();
	return v;
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
static void dev_wrote_slots(struct dev_agent *a, uint32_t from, uint32_t to)
{
	uint32_t mask = (2u << a->q->shift) - 1, nents = 1u << a->q->shift;

	for (uint32_t p = from; p != to; p = (p + 1) & mask)
		sim_agent_wrote(&a->q->ring[p & (nents - 1)], sizeof(a->q->ring[0]));
}

static uint64_t dev_progress(void *arg)
{
	struct dev_agent *a = arg;
	uint32_t fetch = smmu_fetched(a->dev), cons = smmu_cons(a->dev);

	dev_wrote_slots(a, a->seen_fetch, fetch);
	dev_wrote_slots(a, a->seen_cons, cons);
	a->seen_fetch = fetch;
	a->seen_cons = cons;
	return smmu_events(a->dev);
}

int sim_trial_run(const struct native_job *job, const struct scenario_cfg *cfg,
		  struct smmu_dev *dev, struct native_result *res, char *err, size_t err_len)
{
	struct dev_agent da = { .dev = dev };
	struct sim_agent agent = {
		.next_due = dev_next_due,
		.advance = dev_advance,
		.progress = dev_progress,
		.arg = &da,
	};
	struct sim_topology topo = { 0 };
	struct scenario_machine m;
	int rc;

	sim_trial_machine(cfg, &m);
	if (m.topology && m.topology[0]) {
		rc = sim_topology_load(m.topology, &topo, err, err_len);
		if (rc) {
			memset(res, 0, sizeof(*res));
			return rc;
		}
	}
	if (dev) {
		da.q = smmu_iface(dev);
		da.seen_cons = smmu_cons(dev);
		da.seen_fetch = smmu_fetched(dev);
		da.read_cons = da.q->read_cons;
		da.q->read_cons = sim_read_cons;
		cur_agent = &da;
	}
	memset(&last_stats, 0, sizeof(last_stats));
	rc = sim_run(job, &m, topo.n ? &topo : NULL, dev ? &agent : NULL, res, &last_stats);
	if (dev) {
		da.q->read_cons = da.read_cons; /* teardown reads it natively */
		cur_agent = NULL;
	}
	sim_topology_free(&topo);
	if (rc)
		snprintf(err, err_len, "cannot set up %u virtual CPUs: %s",
			 host_env_ncpus(job->env), strerror(-rc));
	return rc;
}

const struct sim_stats *sim_trial_last_stats(void)
{
	return &last_stats;
}
