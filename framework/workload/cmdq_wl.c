/* SPDX-License-Identifier: MIT */
/* cmdq_wl -- the "ways" workload and its oracle (see cmdq_wl.h). */
#include "workload/cmdq_wl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/host.h"

#define MAX_CMDS 256 /* [workload.cmdq] cmds_per_sync's upper bound */

struct cmdq_wl_cpu {
	uint64_t seq; /* last op issued */
	uint64_t rng; /* xorshift64* state for the think time's jitter */
} LAB_CACHE_ALIGNED;

struct cmdq_wl {
	const struct lab_cmdq_ops *ops;
	void *state;
	struct smmu_dev *dev;
	uint32_t ncpus;
	uint32_t n;
	uint64_t think_ns;
	double jitter;
	bool oracle;
	struct cmdq_wl_cpu *cpus;
	uint32_t failed; /* atomic: first writer of error wins */
	char error[256];
	uint32_t sync_bad; /* atomic */
	char sync_detail[256];
};

struct cmdq_wl *cmdq_wl_new(const struct lab_cmdq_ops *ops, void *state, struct smmu_dev *dev,
			    uint32_t ncpus, uint32_t cmds_per_sync, uint64_t think_ns,
			    double think_jitter, uint64_t seed, bool oracle)
{
	struct cmdq_wl *wl = calloc(1, sizeof(*wl));

	if (!wl || cmds_per_sync > MAX_CMDS)
		goto err;
	wl->cpus = aligned_alloc(LAB_CACHE_LINE, sizeof(*wl->cpus) * ncpus);
	if (!wl->cpus)
		goto err;
	memset(wl->cpus, 0, sizeof(*wl->cpus) * ncpus);
	for (uint32_t i = 0; i < ncpus; i++)
		wl->cpus[i].rng = (seed + 1) * 0x9e3779b97f4a7c15ull + i + 1; /* never 0 */
	wl->ops = ops;
	wl->state = state;
	wl->dev = dev;
	wl->ncpus = ncpus;
	wl->n = cmds_per_sync;
	wl->think_ns = think_ns;
	wl->jitter = think_jitter;
	wl->oracle = oracle;
	return wl;
err:
	free(wl);
	return NULL;
}

void cmdq_wl_free(struct cmdq_wl *wl)
{
	if (!wl)
		return;
	free(wl->cpus);
	free(wl);
}

/* This op's think time: think_ns, or uniform in think_ns x [1 - jitter, 1 + jitter]. */
static uint64_t think_time(struct cmdq_wl *wl, struct cmdq_wl_cpu *me)
{
	if (wl->jitter <= 0 || !wl->think_ns)
		return wl->think_ns;
	me->rng ^= me->rng >> 12;
	me->rng ^= me->rng << 25;
	me->rng ^= me->rng >> 27;
	double u = (double)((me->rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
	double t = (double)wl->think_ns * (1.0 - wl->jitter + 2.0 * wl->jitter * u);
	return t > 0 ? (uint64_t)(t + 0.5) : 0;
}

int cmdq_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct cmdq_wl *wl = arg;
	struct lab_cmd cmds[MAX_CMDS];
	uint64_t seq = ++wl->cpus[c->id].seq;

	for (uint32_t i = 0; i < wl->n; i++)
		cmds[i] = smmu_tag_cmd(c->id, seq, i, wl->n);

	uint64_t t0 = lab_now(c);
	host_cpu_enter_plugin(c, t0);
	int rc = wl->ops->issue(c, wl->state, cmds, wl->n, true);
	uint64_t t1 = lab_now(c);
	host_cpu_leave_plugin(c, t1);
	if (measuring)
		hist_record(&hists[0], t1 - t0);

	if (rc) {
		if (!__atomic_exchange_n(&wl->failed, 1, __ATOMIC_ACQ_REL))
			snprintf(wl->error, sizeof(wl->error),
				 "issue() returned %d (%s) on cpu %u, op %" PRIu64
				 "; the device is at "
				 "slot %u (PROD 0x%x, CONS 0x%x)",
				 rc, strerror(-rc), c->id, seq,
				 lab_q_idx(smmu_iface(wl->dev), smmu_cons(wl->dev)),
				 smmu_prod(wl->dev), smmu_cons(wl->dev));
		return rc;
	}
	if (wl->oracle && wl->n) {
		uint64_t done = smmu_done_seq(wl->dev, c->id);
		if (done < seq && !__atomic_exchange_n(&wl->sync_bad, 1, __ATOMIC_ACQ_REL))
			snprintf(wl->sync_detail, sizeof(wl->sync_detail),
				 "cpu %u: issue(sync) of op %" PRIu64 " returned while the device "
				 "had consumed its commands only up to op %" PRIu64
				 " (PROD 0x%x, CONS 0x%x)",
				 c->id, seq, done, smmu_prod(wl->dev), smmu_cons(wl->dev));
	}
	lab_delay_ns(c, think_time(wl, &wl->cpus[c->id]));
	return 0;
}

const char *cmdq_wl_error(const struct cmdq_wl *wl)
{
	return __atomic_load_n(&wl->failed, __ATOMIC_ACQUIRE) ? wl->error : NULL;
}

uint64_t cmdq_wl_issued(const struct cmdq_wl *wl, uint32_t cpu)
{
	return wl->cpus[cpu].seq;
}

const char *cmdq_wl_sync_violation(const struct cmdq_wl *wl)
{
	return __atomic_load_n(&wl->sync_bad, __ATOMIC_ACQUIRE) ? wl->sync_detail : NULL;
}

struct expect {
	uint64_t seq; /* next op expected from this CPU */
	uint32_t i;   /* next command of it */
};

bool cmdq_wl_check_trace(const struct cmdq_wl *wl, bool *exactly_once, char *once_detail,
			 bool *in_order, char *order_detail, size_t detail_len)
{
	uint64_t n;
	bool truncated = false, q_truncated;
	const struct lab_cmd *trace;
	struct expect *exp = calloc(wl->ncpus, sizeof(*exp));
	uint32_t nents = lab_q_nents(smmu_iface(wl->dev));
	uint32_t prev_cpu = UINT32_MAX, prev_i = 0;
	uint64_t prev_seq = 0;

	*exactly_once = *in_order = true;
	if (!exp) {
		*exactly_once = false;
		snprintf(once_detail, detail_len, "out of memory checking the trace");
		return !truncated;
	}
	for (uint32_t cpu = 0; cpu < wl->ncpus; cpu++)
		exp[cpu].seq = 1;
	/* Each queue's trace in its own fetch order; a CPU's ops stay on one queue, so each
	 * CPU's expectations carry across queues unchanged. */
	for (uint32_t qi = 0; qi < smmu_nqueues(wl->dev); qi++) {
		trace = smmu_q_trace(wl->dev, qi, &n, &q_truncated);
		truncated |= q_truncated;
		prev_cpu = UINT32_MAX;
		for (uint64_t p = 0; p < n; p++) {
			uint32_t cpu, i, cnt;
			uint64_t seq;
			if (!smmu_untag_cmd(&trace[p], &cpu, &seq, &i, &cnt)) {
				prev_cpu = UINT32_MAX; /* a CMD_SYNC (or other) separates ops */
				continue;
			}
			uint32_t slot = (uint32_t)(p % nents);
			if (cpu >= wl->ncpus || seq > wl->cpus[cpu].seq || cnt != wl->n) {
				if (*exactly_once)
					snprintf(once_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): a command nobody "
						 "issued (cpu %u, op %" PRIu64 ", cmd %u of %u)",
						 slot, p, cpu, seq, i, cnt);
				*exactly_once = false;
				continue;
			}
			struct expect *e = &exp[cpu];
			if (seq < e->seq || (seq == e->seq && i < e->i)) {
				if (*exactly_once)
					snprintf(once_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): cpu %u op %" PRIu64
						 " cmd %u consumed a second time",
						 slot, p, cpu, seq, i);
				*exactly_once = false;
			} else if (seq != e->seq || i != e->i) {
				if (*in_order)
					snprintf(order_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): caller cpu %u, "
						 "expected op %" PRIu64 " cmd %u, found op %" PRIu64
						 " cmd %u",
						 slot, p, cpu, e->seq, e->i, seq, i);
				*in_order = false;
			}
			if (i > 0 && (prev_cpu != cpu || prev_seq != seq || prev_i != i - 1)) {
				if (*in_order)
					snprintf(order_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): cpu %u op %" PRIu64
						 " cmd %u is not contiguous with cmd %u of the "
						 "same op",
						 slot, p, cpu, seq, i, i - 1);
				*in_order = false;
			}
			if (seq > e->seq || (seq == e->seq && i >= e->i)) {
				e->seq = i + 1 == cnt ? seq + 1 : seq;
				e->i = i + 1 == cnt ? 0 : i + 1;
			}
			prev_cpu = cpu;
			prev_seq = seq;
			prev_i = i;
		}
	}
	for (uint32_t cpu = 0; cpu < wl->ncpus && !truncated && wl->n; cpu++) {
		if (exp[cpu].seq <= wl->cpus[cpu].seq && *exactly_once) {
			snprintf(once_detail, detail_len,
				 "cpu %u op %" PRIu64 " cmd %u was issued but never consumed "
				 "(cpu %u issued %" PRIu64 " ops)",
				 cpu, exp[cpu].seq, exp[cpu].i, cpu, wl->cpus[cpu].seq);
			*exactly_once = false;
		}
	}
	free(exp);
	return !truncated;
}
