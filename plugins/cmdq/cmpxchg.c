/* SPDX-License-Identifier: MIT */
/*
 * cmpxchg -- the mainline lock-free command queue: arm_smmu_cmdq_issue_cmdlist() since
 * Will Deacon's 587e6c10a7ce ("iommu/arm-smmu-v3: Reduce contention during command-queue
 * insertion", v5.4), with the 2025 fair shared lock (Alexander Grest / Jacob Pan) and Jacob
 * Pan's exact-space queue-full poll.
 *
 * Each caller reserves n (+1 for a CMD_SYNC) slots with one 64-bit CAS over {prod, shadow
 * cons}, setting the OWNED flag in prod. The caller that found OWNED clear is the owner of
 * a "chain": it waits for the previous owner to publish up to its first slot, clears OWNED
 * (everyone who reserved meanwhile is gathered into its chain), waits for every gathered
 * slot to be marked valid in a bitmap, and writes PROD once for the whole chain. A sync
 * caller then waits for its own CMD_SYNC: by the SMMU's MSI write of 0 into the CMD_SYNC's
 * own slot when the device has MSI, else by polling CONS. The shared lock, held by sync
 * waiters, stops the shadow cons (and so the space others may claim) from lapping a CMD_SYNC
 * still being waited for. Everything after the CAS lives in llq.h, shared with mcs and
 * batched.
 */
#include "llq.h"

#ifndef CMPXCHG_NAME
#define CMPXCHG_NAME	"cmpxchg"
#define CMPXCHG_SUMMARY "mainline lock-free CAS reservation with owner chains (v5.4+)"
#endif

static int cx_init(const struct lab_cmdq_setup *s, void **state)
{
	struct llq *q = lab_alloc(s->host, sizeof(*q));
	int rc;

	if (!q) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	rc = llq_init(s, q);
	if (rc) {
		lab_free(s->host, q);
		return rc;
	}
	*state = q;
	return 0;
}

static void cx_fini(void *state)
{
	struct llq *q = state;

	llq_fini(q);
	lab_free(q->host, q);
}

static int cx_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct llq *q = state;
	uint32_t need = n + (sync ? 1 : 0);

	if (!need)
		return 0;
	if (need > q->nents)
		return -EINVAL;
	lab_phase(c, LLQ_PH_RESERVE);
	return llq_finish(c, q, cmds, n, sync, llq_reserve(c, q, need, need, 0));
}

static const struct lab_counter cx_counters[] = { LLQ_COUNTERS };
static const char *const cx_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops cx_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = cx_init,
	.fini = cx_fini,
	.issue = cx_issue,
};

static const struct lab_plugin cx_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = CMPXCHG_NAME,
	.summary = CMPXCHG_SUMMARY,
	.version = "1.0",
	.counters = cx_counters,
	.n_counters = LAB_ARRAY_SIZE(cx_counters),
	.phases = cx_phases,
	.n_phases = LAB_ARRAY_SIZE(cx_phases),
	.ops = &cx_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &cx_plugin;
}
