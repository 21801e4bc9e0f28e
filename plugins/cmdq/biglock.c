/* SPDX-License-Identifier: MIT */
/*
 * biglock -- the simplest correct strategy: one global lock held across everything.
 *
 * Take the lock; wait for space by reading CONS; write the commands and the CMD_SYNC; write
 * PROD; if a sync was asked for, poll CONS until the device has consumed everything (the
 * queue is empty); drop the lock. It is the old non-MSI driver's worst case (reference §2:
 * "wait until the whole queue is empty while holding the spinlock") reduced to its essence:
 * obviously correct, fully serialised. It is the pipeline's reference point, not one of the
 * strategies under study (see spinlock, cmpxchg, mcs, batched).
 */
#include <errno.h>

#include <iommulab/cmdq.h>

enum { BIGLOCK_LOCK_WAIT_NS, BIGLOCK_QUEUE_FULL_WAITS, BIGLOCK_N_COUNTERS };
enum { PHASE_RESERVE = 1, PHASE_WRITE, PHASE_PUBLISH, PHASE_SYNC_WAIT };

/* ARM_SMMU_POLL_TIMEOUT_US: how long the kernel polls before "CMD_SYNC timeout". */
#define BIGLOCK_POLL_TIMEOUT_NS 1000000000ull

struct biglock {
	struct lab_spinlock lock;
	struct lab_smmu *smmu;
	uint32_t prod; /* under lock */
	uint32_t cons; /* last CONS read, under lock */
	const struct lab_host *host;
};

static uint32_t biglock_space(const struct biglock *q)
{
	uint32_t mask = (lab_q_nents(q->smmu) << 1) - 1;
	return lab_q_nents(q->smmu) - ((q->prod - q->cons) & mask);
}

/* Poll CONS until pred holds; -ETIMEDOUT after the kernel's poll timeout. */
static int biglock_poll_cons(struct lab_cpu *c, struct biglock *q, uint32_t need_space, bool drain)
{
	uint64_t deadline = lab_now(c) + BIGLOCK_POLL_TIMEOUT_NS;

	for (;;) {
		q->cons = lab_smmu_read_cons(c, q->smmu);
		if (drain ? q->cons == q->prod : biglock_space(q) >= need_space)
			return 0;
		if (lab_now(c) > deadline)
			return -ETIMEDOUT;
		lab_spin_wait(c, NULL);
	}
}

static int biglock_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
			 bool sync)
{
	struct biglock *q = state;
	uint32_t need = n + (sync ? 1 : 0);
	uint32_t mask = (lab_q_nents(q->smmu) << 1) - 1;
	int rc = 0;

	lab_phase(c, PHASE_RESERVE);
	uint64_t t0 = lab_now(c);
	lab_spin_lock(c, &q->lock);
	lab_count(c, BIGLOCK_LOCK_WAIT_NS, lab_now(c) - t0);
	if (biglock_space(q) < need) {
		lab_count(c, BIGLOCK_QUEUE_FULL_WAITS, 1);
		rc = biglock_poll_cons(c, q, need, false);
		if (rc)
			goto unlock;
	}

	lab_phase(c, PHASE_WRITE);
	for (uint32_t i = 0; i < n; i++)
		lab_cmd_write(lab_q_slot(q->smmu, q->prod + i), &cmds[i]);
	if (sync) {
		struct lab_cmd s = lab_cmd_sync(LAB_SYNC_CS_SEV, NULL, 0);
		lab_cmd_write(lab_q_slot(q->smmu, q->prod + n), &s);
	}

	lab_phase(c, PHASE_PUBLISH);
	lab_fence(LAB_RELEASE); /* dma_wmb(): entries before PROD */
	q->prod = (q->prod + need) & mask;
	lab_smmu_write_prod(c, q->smmu, q->prod);

	if (sync) {
		lab_phase(c, PHASE_SYNC_WAIT);
		rc = biglock_poll_cons(c, q, 0, true);
	}
unlock:
	lab_spin_unlock(&q->lock);
	return rc;
}

static int biglock_init(const struct lab_cmdq_setup *s, void **state)
{
	struct biglock *q = lab_alloc(s->host, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->smmu = s->smmu;
	q->host = s->host;
	*state = q;
	return 0;
}

static void biglock_fini(void *state)
{
	struct biglock *q = state;

	lab_free(q->host, q);
}

static const struct lab_counter biglock_counters[BIGLOCK_N_COUNTERS] = {
	[BIGLOCK_LOCK_WAIT_NS] = { "lock_wait_ns", LAB_COUNTER_EVENTS,
				   "ns spent acquiring the global lock" },
	[BIGLOCK_QUEUE_FULL_WAITS] = { "queue_full_waits", LAB_COUNTER_EVENTS,
				       "times the queue had no room and CONS was polled" },
};

static const char *const biglock_phases[] = { "reserve", "write", "publish", "sync_wait" };

static const struct lab_cmdq_ops biglock_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = biglock_init,
	.fini = biglock_fini,
	.issue = biglock_issue,
};

static const struct lab_plugin biglock_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "biglock",
	.summary = "reference: one global lock held across reserve, write, PROD and the drain",
	.version = "1.0",
	.counters = biglock_counters,
	.n_counters = BIGLOCK_N_COUNTERS,
	.phases = biglock_phases,
	.n_phases = LAB_ARRAY_SIZE(biglock_phases),
	.ops = &biglock_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &biglock_plugin;
}
