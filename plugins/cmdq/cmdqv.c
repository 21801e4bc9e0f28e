/* SPDX-License-Identifier: MIT */
/*
 * cmdqv -- NVIDIA Tegra241 (Grace) CMDQV: virtual command queues, each shared by a subset of
 * CPUs, with the SMMU's own queue kept for what they cannot take.
 *
 * Mainline since v6.12 (drivers/iommu/arm/arm-smmu-v3/tegra241-cmdqv.c, commit
 * 918eb5c856f6, "[PATCH v14 00/10] Add Tegra241 (Grace) CMDQV Support (part 1/2)", lore
 * cover.1724970714.git.nicolinc@nvidia.com): the host's VINTF0 has num_lvcmdqs_per_vintf
 * logical VCMDQs, and tegra241_cmdqv_get_cmdq() picks lidx = smp_processor_id() %
 * num_lvcmdqs_per_vintf (the driver calls this a "temporal solution": each VCMDQ has its own
 * lock, and all CPUs on one queue would serialise). Each VCMDQ is a struct arm_smmu_cmdq
 * driven by the same arm_smmu_cmdq_issue_cmdlist() (llq.h here, one struct llq per queue),
 * and arm_smmu_cmdq_needs_busy_polling() holds for it: its CMD_SYNC completes without an MSI
 * and the waiter polls CONS (llq writes CS = SEV where the driver writes CS = NONE; the device
 * treats both as "no MSI").
 *
 * Queues: [smmu] queue 0 is the SMMU's own command queue (MSI as the device has it); queues
 * 1..N-1 are the VCMDQs. With one queue there is no VINTF0 and everything goes to the main
 * queue (the driver's fallback when VINTF0 is not enabled). With guest = true the VINTF is a
 * guest's, which takes only TLBI_NH_ASID, TLBI_NH_VA and ATC_INV
 * (tegra241_guest_vcmdq_supports_cmd()); other commands go to the main queue. As
 * arm_smmu_cmdq_batch_add() does when a command does not suit the batch's queue, a list is
 * cut into runs by queue, and every run but the last is issued with its own CMD_SYNC (the
 * last takes the caller's), so a sync still covers every command of the call.
 *
 * Counters: llq's, and main_queue_ops / vcmdq_ops, the runs issued to each kind of queue.
 */
#include <stddef.h>

#include "llq.h"

enum { CV_CNT_MAIN = LLQ_N_COUNTERS, CV_CNT_VCMDQ, CV_N_COUNTERS };

struct cv_config {
	bool guest;
};

struct cmdqv {
	const struct lab_host *host;
	uint32_t nq; /* llq states: the main queue, then the VCMDQs in use */
	uint32_t nv; /* VCMDQs in use: min(device queues - 1, cpus) */
	bool guest;
	struct llq *qs; /* [0] the main queue, [1 + lidx] VCMDQ lidx */
};

static void cv_free(struct cmdqv *v)
{
	for (uint32_t i = 0; v->qs && i < v->nq; i++)
		if (v->qs[i].valid_map)
			llq_fini(&v->qs[i]);
	lab_free(v->host, v->qs);
	lab_free(v->host, v);
}

static int cv_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct cv_config *cfg = s->config;
	struct cmdqv *v = lab_alloc(s->host, sizeof(*v));
	uint32_t nv = lab_smmu_nqueues(s->smmu) - 1, ncpus = s->ncpus ? s->ncpus : 1;
	int rc = -ENOMEM;

	if (!v) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	v->host = s->host;
	v->guest = cfg->guest;
	v->nv = nv < ncpus ? nv : ncpus; /* a VCMDQ no CPU maps to stays idle */
	v->nq = 1 + v->nv;
	v->qs = lab_alloc(s->host, sizeof(*v->qs) * v->nq);
	if (!v->qs) {
		snprintf(s->err, s->err_len, "out of memory for %u queue states", v->nq);
		goto err;
	}
	for (uint32_t i = 0; i < v->nq; i++) {
		struct lab_cmdq_setup qs = *s;

		qs.smmu = lab_smmu_queue(s->smmu, i);
		rc = llq_init(&qs, &v->qs[i]);
		if (rc)
			goto err;
		if (i)
			v->qs[i].msi = false; /* busy polling: CS = NONE, wait on CONS */
	}
	*state = v;
	return 0;
err:
	cv_free(v);
	return rc;
}

static void cv_fini(void *state)
{
	cv_free(state);
}

/* tegra241_guest_vcmdq_supports_cmd(). */
static bool cv_guest_takes(const struct lab_cmd *cmd)
{
	switch (LAB_CMD_OPCODE(cmd->dw[0])) {
	case LAB_CMD_TLBI_NH_ASID:
	case LAB_CMD_TLBI_NH_VA:
	case LAB_CMD_ATC_INV:
		return true;
	default:
		return false;
	}
}

/* The queue for cmd from this CPU (tegra241_cmdqv_get_cmdq(); NULL there means main). */
static struct llq *cv_queue(struct lab_cpu *c, struct cmdqv *v, const struct lab_cmd *cmd)
{
	if (!v->nv || (v->guest && cmd && !cv_guest_takes(cmd)))
		return &v->qs[0];
	return &v->qs[1 + c->id % v->nv];
}

static int cv_issue_on(struct lab_cpu *c, struct cmdqv *v, struct llq *q,
		       const struct lab_cmd *cmds, uint32_t n, bool sync)
{
	uint32_t need = n + (sync ? 1 : 0);

	if (need > q->nents)
		return -EINVAL;
	lab_count(c, q == &v->qs[0] ? CV_CNT_MAIN : CV_CNT_VCMDQ, 1);
	lab_phase(c, LLQ_PH_RESERVE);
	return llq_finish(c, q, cmds, n, sync, llq_reserve(c, q, need, need, 0));
}

static int cv_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct cmdqv *v = state;
	uint32_t start = 0;

	if (!n)
		return sync ? cv_issue_on(c, v, cv_queue(c, v, NULL), cmds, 0, true) : 0;
	while (start < n) {
		struct llq *q = cv_queue(c, v, &cmds[start]);
		uint32_t end = start + 1;
		int rc;

		while (end < n && cv_queue(c, v, &cmds[end]) == q)
			end++;
		/* Switching queues: this run's own CMD_SYNC, or the next queue's would not
		 * cover it. */
		rc = cv_issue_on(c, v, q, &cmds[start], end - start, end < n || sync);
		if (rc)
			return rc;
		start = end;
	}
	return 0;
}

static const struct lab_param cv_params[] = {
	{
		.key = "guest",
		.type = LAB_PARAM_BOOL,
		.def = "false",
		.help = "a guest's VINTF: only TLBI_NH_ASID, TLBI_NH_VA and ATC_INV go to the "
			"VCMDQs, the rest to the main queue (false: the host's VINTF0 takes all)",
		.offset = offsetof(struct cv_config, guest),
	},
};

static const struct lab_counter cv_counters[CV_N_COUNTERS] = {
	LLQ_COUNTERS,
	[CV_CNT_MAIN] = { "main_queue_ops", LAB_COUNTER_EVENTS,
			  "runs of commands issued to the SMMU's own queue (queue 0)" },
	[CV_CNT_VCMDQ] = { "vcmdq_ops", LAB_COUNTER_EVENTS,
			   "runs of commands issued to a VCMDQ (queues 1..N-1)" },
};
static const char *const cv_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops cv_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = cv_init,
	.fini = cv_fini,
	.issue = cv_issue,
};

static const struct lab_plugin cv_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "cmdqv",
	.summary = "Tegra241 CMDQV: VCMDQs (queues 1..N-1) shared cpu % N-1, CONS polled; queue 0 "
		   "for the rest",
	.version = "1.0",
	.params = cv_params,
	.n_params = LAB_ARRAY_SIZE(cv_params),
	.config_size = sizeof(struct cv_config),
	.counters = cv_counters,
	.n_counters = CV_N_COUNTERS,
	.phases = cv_phases,
	.n_phases = LAB_ARRAY_SIZE(cv_phases),
	.ops = &cv_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &cv_plugin;
}
