/* SPDX-License-Identifier: MIT */
/*
 * ecmdq -- SMMUv3.3 Enhanced Command Queues: one command queue per CPU, each driven by the
 * mainline lock-free algorithm.
 *
 * Zhen Lei's series (RFC 0/8, lore 20210626110130.2416-1-thunder.leizhen@huawei.com, Jun
 * 2021; v2, lore 20230809131303.1355-1-thunder.leizhen@huaweicloud.com, Aug 2023; resent by
 * Tanmay Jagdale of Marvell as V3, lore 20240425143013.52292-1-tanmay@marvell.com, Apr 2024;
 * not merged): the SMMU exposes nr_ecmdq = NUMP x NUMQ extra queues (IDR6), each with its
 * own PROD/CONS pair, and the driver gives every CPU its own (arm_smmu_get_cmdq() returns
 * this_cpu_ptr(ecmdqs)). Each ECMDQ embeds a whole struct arm_smmu_cmdq (its own prod/cons
 * word, valid map, owner_prod and lock), and the same arm_smmu_cmdq_issue_cmdlist() runs on
 * it: here llq.h, one struct llq per queue. A CMD_SYNC covers only its own queue, which is
 * exactly what a caller needs (its commands went there).
 *
 * v2 uses ECMDQs only when num_possible_cpus() <= nr_ecmdq. With fewer queues ([smmu]
 * queues < cpus) this plugin does what the RFC's dropped "less than one ECMDQ per core" mode
 * did: CPU i shares queue i % queues with the others mapped to it, still through the full
 * lock-free algorithm (so sharing is safe, and contended only within a group). With one
 * queue it is cmpxchg. The PROD.EN bit, ERRACK by IPI and patch 2's pinning of a command
 * set to one queue across preemption have no counterpart here (the lab's CPUs do not
 * migrate mid-issue).
 *
 * Counters: llq's, per CPU as for cmpxchg, and shared_queue_ops, the issues made on a queue
 * another CPU also uses (0 with a queue per CPU).
 */
#include "llq.h"

#ifndef CMDQ_MUTANT_ECMDQ_OTHER_QUEUE_SYNC
/* Mutant (tests/fixtures/plugins/mut_ecmdq_sync.c): the commands go to this CPU's queue, their
 * CMD_SYNC to the next queue, which does not cover them. */
#define CMDQ_MUTANT_ECMDQ_OTHER_QUEUE_SYNC 0
#endif
#ifndef ECMDQ_NAME
#define ECMDQ_NAME "ecmdq"
#define ECMDQ_SUMMARY                                                                              \
	"SMMUv3.3 ECMDQ: a queue per CPU (shared cpu % queues when fewer), lock-free on each"
#endif

enum { ECMDQ_CNT_SHARED = LLQ_N_COUNTERS, ECMDQ_N_COUNTERS };

struct ecmdq {
	const struct lab_host *host;
	uint32_t nq;	/* queues in use: min(device queues, cpus) */
	bool shared;	/* fewer queues than CPUs */
	struct llq *qs; /* nq of them, each on its own lines */
};

static void ecmdq_free(struct ecmdq *e)
{
	for (uint32_t i = 0; e->qs && i < e->nq; i++)
		if (e->qs[i].valid_map)
			llq_fini(&e->qs[i]);
	lab_free(e->host, e->qs);
	lab_free(e->host, e);
}

static int ecmdq_init(const struct lab_cmdq_setup *s, void **state)
{
	struct ecmdq *e = lab_alloc(s->host, sizeof(*e));
	uint32_t nq = lab_smmu_nqueues(s->smmu), ncpus = s->ncpus ? s->ncpus : 1;
	int rc = -ENOMEM;

	if (!e) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	e->host = s->host;
	if (CMDQ_MUTANT_ECMDQ_OTHER_QUEUE_SYNC)
		e->nq = nq; /* a queue to misplace the CMD_SYNC in, whatever the CPUs */
	else if (nq < ncpus)
		e->nq = nq;
	else
		e->nq = ncpus; /* queues no CPU maps to stay idle */
	e->shared = nq < ncpus;
	e->qs = lab_alloc(s->host, sizeof(*e->qs) * e->nq);
	if (!e->qs) {
		snprintf(s->err, s->err_len, "out of memory for %u queue states", e->nq);
		goto err;
	}
	for (uint32_t i = 0; i < e->nq; i++) {
		struct lab_cmdq_setup qs = *s;

		qs.smmu = lab_smmu_queue(s->smmu, i);
		rc = llq_init(&qs, &e->qs[i]);
		if (rc)
			goto err;
	}
	*state = e;
	return 0;
err:
	ecmdq_free(e);
	return rc;
}

static void ecmdq_fini(void *state)
{
	ecmdq_free(state);
}

static int ecmdq_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		       bool sync)
{
	struct ecmdq *e = state;
	struct llq *q = &e->qs[c->id % e->nq]; /* this_cpu_ptr(ecmdqs) */
	uint32_t need = n + (sync ? 1 : 0);

	if (!need)
		return 0;
	if (need > q->nents)
		return -EINVAL;
	if (e->shared)
		lab_count(c, ECMDQ_CNT_SHARED, 1);
	if (CMDQ_MUTANT_ECMDQ_OTHER_QUEUE_SYNC && sync && n) {
		struct llq *o = &e->qs[(c->id + 1) % e->nq];
		int rc;

		lab_phase(c, LLQ_PH_RESERVE);
		rc = llq_finish(c, q, cmds, n, false, llq_reserve(c, q, n, n, 0));
		if (rc)
			return rc;
		return llq_finish(c, o, NULL, 0, true, llq_reserve(c, o, 1, 1, 0));
	}
	lab_phase(c, LLQ_PH_RESERVE);
	return llq_finish(c, q, cmds, n, sync, llq_reserve(c, q, need, need, 0));
}

static const struct lab_counter ecmdq_counters[ECMDQ_N_COUNTERS] = {
	LLQ_COUNTERS,
	[ECMDQ_CNT_SHARED] = { "shared_queue_ops", LAB_COUNTER_EVENTS,
			       "issues on a queue other CPUs also use (fewer queues than CPUs)" },
};
static const char *const ecmdq_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops ecmdq_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = ecmdq_init,
	.fini = ecmdq_fini,
	.issue = ecmdq_issue,
};

static const struct lab_plugin ecmdq_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = ECMDQ_NAME,
	.summary = ECMDQ_SUMMARY,
	.version = "1.0",
	.counters = ecmdq_counters,
	.n_counters = ECMDQ_N_COUNTERS,
	.phases = ecmdq_phases,
	.n_phases = LAB_ARRAY_SIZE(ecmdq_phases),
	.ops = &ecmdq_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &ecmdq_plugin;
}
