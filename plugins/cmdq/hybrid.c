/* SPDX-License-Identifier: MIT */
/*
 * hybrid -- one CAS try, then a lock: Will Deacon's counter-proposal in the thread of John
 * Garry's "iommu/arm-smmu-v3: Improve cmdq lock efficiency" (lore
 * 20200716101940.GA7036@willie-the-truck and its corrected "second attempt",
 * 20200716102814.GD7036@willie-the-truck, July 2020; restated in the v2 thread, Sept 2020: "the
 * basic idea is to fall back to a spinlock if the cmpxchg() fails. The queueing in the spinlock
 * implementation should avoid the contention"). Will's drafts were build-tested only; the second
 * hung Garry's machine at boot (lore 54b0c8b9-d079-f832-2338-11cf6b09fa00@huawei.com: the CAS
 * success test was inverted, and a CAS won with the lock held left it held). Garry's working
 * form and his D06 figures, DMA map+unmap per CPU per second, are in lore
 * 37734fe9-8b67-3cf3-2925-2fee549cb45a@huawei.com: 9.5K (v5.9-rc1) -> 15.5K at 64 CPUs, 5.2K
 * -> 8.6K at 96, and a little below mainline at 8 and 16 CPUs (281K against 295K, 131K
 * against 157K). Never merged.
 *
 * A caller tries the mainline reservation CAS (cmpxchg's, llq.h) `tries` times (Will: once).
 * If every try fails it takes a lock and runs the CAS loop under it, so that at most one
 * loser at a time bounces the llq line while the others wait on the lock's own line, and
 * newcomers still take the lock-free path (Garry's objection: a newcomer's first CAS still
 * races the lock holder's). The lock is `lock = mcs` (the default: arm64's spin_lock() has been
 * the MCS-queued qspinlock since Will's c11090474d70, v4.18, so "the queueing in the spinlock"
 * is MCS queueing: struct lab_qspinlock, a waiter spinning on its own node past the first) or
 * `ticket` (the arm64 ticket lock before v4.18, every waiter on one line, for comparison). The
 * queue-full wait happens inside the CAS loop with the lock held (Will's draft dropped it around
 * the wait; holding it keeps the FIFO order and cannot deadlock, since the shadow cons is advanced
 * by the exclusive trylock or the last CMD_SYNC waiter, neither of which needs this lock).
 * Everything after the reservation is the cmpxchg strategy's.
 */
#include "llq.h"

#define HY_MAX_TRIES 16

/* The `lock` parameter's choices, in order: "ticket", "mcs" (the queued spinlock). */
enum hy_lock_kind {
	HY_LOCK_TICKET,
	HY_LOCK_QUEUED,
};

enum hy_counter {
	HY_CNT_FALLBACKS = LLQ_N_COUNTERS,
	HY_CNT_SLOCK_NS,
};

struct hy_config {
	uint64_t tries;
	int lock; /* enum hy_lock_kind */
};

struct hy_state {
	struct llq q;
	struct lab_spinlock slock LAB_CACHE_ALIGNED;
	struct lab_qspinlock qlock LAB_CACHE_ALIGNED;
	uint32_t tries;
	enum hy_lock_kind kind;
};

static int hy_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct hy_config *cfg = s->config;
	struct hy_state *st = lab_alloc(s->host, sizeof(*st));
	int rc;

	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	rc = llq_init(s, &st->q);
	if (rc)
		goto err_free;
	st->tries = cfg && cfg->tries ? (uint32_t)cfg->tries : 1;
	st->kind = cfg ? (enum hy_lock_kind)cfg->lock : HY_LOCK_QUEUED;
	*state = st;
	return 0;

err_free:
	lab_free(s->host, st);
	return rc;
}

static void hy_fini(void *state)
{
	struct hy_state *st = state;
	const struct lab_host *h = st->q.host;

	llq_fini(&st->q);
	lab_free(h, st);
}

static void hy_lock(struct lab_cpu *c, struct hy_state *st)
{
	uint64_t t0 = lab_now(c);

	if (st->kind == HY_LOCK_QUEUED)
		lab_qspin_lock(c, &st->qlock);
	else
		lab_spin_lock(c, &st->slock);
	lab_count(c, HY_CNT_SLOCK_NS, lab_now(c) - t0);
}

static void hy_unlock(struct hy_state *st)
{
	if (st->kind == HY_LOCK_QUEUED)
		lab_qspin_unlock(&st->qlock);
	else
		lab_spin_unlock(&st->slock);
}

/* Reserve need slots; returns the llq prod the winning CAS replaced. */
static uint32_t hy_reserve(struct lab_cpu *c, struct hy_state *st, uint32_t need)
{
	uint32_t prod;

	for (uint32_t i = 0; i < st->tries; i++)
		if (llq_try_reserve(c, &st->q, need, &prod))
			return prod;
	lab_count(c, HY_CNT_FALLBACKS, 1);
	hy_lock(c, st);
	prod = llq_reserve(c, &st->q, need, need, 0);
	hy_unlock(st);
	return prod;
}

static int hy_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct hy_state *st = state;
	uint32_t need = n + (sync ? 1 : 0);

	if (!need)
		return 0;
	if (need > st->q.nents)
		return -EINVAL;
	lab_phase(c, LLQ_PH_RESERVE);
	return llq_finish(c, &st->q, cmds, n, sync, hy_reserve(c, st, need));
}

static const char *const hy_lock_choices[] = { "ticket", "mcs", NULL };

static const struct lab_param hy_params[] = {
	{
		.key = "tries",
		.type = LAB_PARAM_UINT,
		.def = "1",
		.min = 1,
		.max = HY_MAX_TRIES,
		.help = "lock-free CAS tries before falling back to the lock (Will Deacon: 1)",
		.offset = offsetof(struct hy_config, tries),
	},
	{
		.key = "lock",
		.type = LAB_PARAM_ENUM,
		.def = "mcs",
		.choices = hy_lock_choices,
		.help = "the fallback lock: MCS queued (arm64 qspinlock, v4.18+) or ticket (one "
			"line)",
		.offset = offsetof(struct hy_config, lock),
	},
};

static const struct lab_counter hy_counters[] = {
	LLQ_COUNTERS,
	[HY_CNT_FALLBACKS] = { "fallbacks", LAB_COUNTER_EVENTS,
			       "reservations that lost every lock-free try and took the lock" },
	[HY_CNT_SLOCK_NS] = { "slock_wait_ns", LAB_COUNTER_EVENTS,
			      "ns spent acquiring the fallback lock" },
};

static const char *const hy_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops hy_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = hy_init,
	.fini = hy_fini,
	.issue = hy_issue,
};

static const struct lab_plugin hy_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "hybrid",
	.summary = "one lock-free CAS try, then the CAS loop under a lock (Deacon 2020, unmerged)",
	.version = "1.0",
	.params = hy_params,
	.n_params = LAB_ARRAY_SIZE(hy_params),
	.config_size = sizeof(struct hy_config),
	.counters = hy_counters,
	.n_counters = LAB_ARRAY_SIZE(hy_counters),
	.phases = hy_phases,
	.n_phases = LAB_ARRAY_SIZE(hy_phases),
	.ops = &hy_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &hy_plugin;
}
