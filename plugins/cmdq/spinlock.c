/* SPDX-License-Identifier: MIT */
/*
 * spinlock -- the command queue before the lock-free rework (Linux v4.20 .. v5.3,
 * drivers/iommu/arm-smmu-v3.c; reverted to by Rahul Singh's Xen port).
 *
 * One spinlock (spin_lock_irqsave(): on arm64 since v4.18 the queued spinlock, struct
 * lab_qspinlock) guards the software prod/cons, the space check, the entry writes and the
 * PROD register: every command is written and published with its own PROD write
 * (queue_inc_prod() did a writel per command), and a full queue is waited out by polling
 * CONS with the lock held. The caller's commands go in under one hold of the lock, so they
 * stay contiguous.
 *
 * CMD_SYNC, two ways:
 *  - MSI (Robin Murphy, "Use CMD_SYNC completion MSI", poll outside the lock): under the lock
 *    take ++sync_nr (Zhen Lei's "Fix unexpected CMD_SYNC timeout" moved it there) and insert
 *    a CMD_SYNC whose MSI writes that number into a separate sync_count word; drop the lock
 *    and wait until (int32)(sync_count - nr) >= 0. CMD_SYNCs complete in order, so any
 *    number of waiters overlap. With elide_back_to_back (Robin Murphy, 57afa2225ea1, "Avoid
 *    back-to-back CMD_SYNC operations"), a sync whose previous command was itself a CMD_SYNC
 *    inserts nothing and waits for that one's number.
 *  - no MSI: insert the CMD_SYNC and wait, lock held, until the queue is empty (CONS == PROD).
 */
#include <errno.h>
#include <stdio.h>

#include <iommulab/cmdq.h>

#define SL_SYNC_TIMEOUT_NS 1000000000ull /* ARM_SMMU_CMDQ_SYNC_TIMEOUT_US = 1 s */

enum sl_counter {
	SL_CNT_LOCK_WAIT_NS,
	SL_CNT_SYNCS_ISSUED,
	SL_CNT_SYNCS_ELIDED,
	SL_CNT_QUEUE_FULL_WAITS,
	SL_CNT_PROD_WRITES,
};

enum sl_phase {
	SL_PH_RESERVE = 1, /* taking the lock */
	SL_PH_WRITE,	   /* entries + PROD writes (and queue-full waits) under the lock */
	SL_PH_PUBLISH,	   /* unused: publishing is per command, inside "write" */
	SL_PH_SYNC_WAIT,
};

struct sl_config {
	bool elide_back_to_back;
};

struct sl_state {
	struct lab_qspinlock lock LAB_CACHE_ALIGNED;
	/* Under the lock (still lab.h accesses: the sim must see every shared access). */
	uint32_t prod;	      /* software PROD, IDX | WRP */
	uint32_t cons;	      /* last CONS read */
	uint32_t sync_nr;     /* number of the last CMD_SYNC inserted */
	uint32_t prev_opcode; /* opcode of the last command inserted */
	/* The MSI target: 64 bits of room because Hi16xx SMMUs write 64. */
	uint32_t sync_count LAB_CACHE_ALIGNED;
	uint32_t sync_count_hi;
	/* Read-only after init. */
	struct lab_smmu *smmu LAB_CACHE_ALIGNED;
	const struct lab_host *host;
	uint32_t nents;
	uint32_t wrap_mask;
	bool msi;
	bool elide;
};

static int sl_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct sl_config *cfg = s->config;
	struct sl_state *st = lab_alloc(s->host, sizeof(*st));

	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	st->smmu = s->smmu;
	st->host = s->host;
	st->nents = lab_q_nents(s->smmu);
	st->wrap_mask = (st->nents << 1) - 1;
	st->msi = s->smmu->msi != 0;
	st->elide = cfg ? cfg->elide_back_to_back : true;
	*state = st;
	return 0;
}

static void sl_fini(void *state)
{
	struct sl_state *st = state;

	lab_free(st->host, st);
}

static bool sl_full(const struct sl_state *st, uint32_t prod, uint32_t cons)
{
	return ((prod ^ cons) & st->wrap_mask) == st->nents; /* same IDX, other WRP */
}

/* What queue_poll_cons() waits for: room for one entry, or (drain) an empty queue. */
static bool sl_cons_ok(const struct sl_state *st, uint32_t cons, bool drain)
{
	uint32_t prod = lab_load32(&st->prod, LAB_RELAXED);

	return drain ? prod == cons : !sl_full(st, prod, cons);
}

/*
 * A deadline (0: none) counts only on the second pass past it: a CPU descheduled across the
 * whole timeout still gives the device model (advanced by spinning CPUs) one more look.
 */
static bool sl_expired(struct lab_cpu *c, uint64_t deadline, uint32_t *late)
{
	return deadline && lab_now(c) >= deadline && ++*late > 1;
}

/* One pass of queue_poll_cons(): refresh the software cons from the register. */
static bool sl_cons_pass(struct lab_cpu *c, struct sl_state *st, bool drain, uint64_t deadline,
			 uint32_t *late)
{
	uint32_t cons = lab_smmu_read_cons(c, st->smmu) & st->wrap_mask;

	lab_store32(&st->cons, cons, LAB_RELAXED);
	return sl_cons_ok(st, cons, drain) || sl_expired(c, deadline, late);
}

/*
 * Poll CONS (a register: the spin-wait watches our software copy and reads the register in
 * its condition) until sl_cons_ok() or, with a deadline, until it passes.
 */
static void sl_poll_cons(struct lab_cpu *c, struct sl_state *st, bool drain, uint64_t deadline)
{
	uint32_t v, late = 0;

	LAB_COND_LOAD32(c, &st->cons, v, ((void)v, sl_cons_pass(c, st, drain, deadline, &late)),
			LAB_RELAXED);
}

/*
 * arm_smmu_cmdq_insert_cmd(): wait out a full queue (upstream only warned "CMDQ timeout" and
 * kept polling), write the entry, then writel(PROD) for it alone.
 */
static void sl_insert(struct lab_cpu *c, struct sl_state *st, const struct lab_cmd *cmd)
{
	uint32_t prod = lab_load32(&st->prod, LAB_RELAXED);

	if (sl_full(st, prod, lab_load32(&st->cons, LAB_RELAXED))) {
		lab_count(c, SL_CNT_QUEUE_FULL_WAITS, 1);
		sl_poll_cons(c, st, false, 0);
	}
	lab_cmd_write(lab_q_slot(st->smmu, prod), cmd);
	prod = (prod + 1) & st->wrap_mask;
	lab_store32(&st->prod, prod, LAB_RELAXED);
	lab_store32(&st->prev_opcode, LAB_CMD_OPCODE(cmd->dw[0]), LAB_RELAXED);
	lab_fence(LAB_RELEASE); /* writel()'s barrier: the entry before PROD */
	lab_smmu_write_prod(c, st->smmu, prod);
	lab_count(c, SL_CNT_PROD_WRITES, 1);
}

static void sl_lock(struct lab_cpu *c, struct sl_state *st)
{
	uint64_t t0 = lab_now(c);

	lab_qspin_lock(c, &st->lock);
	lab_count(c, SL_CNT_LOCK_WAIT_NS, lab_now(c) - t0);
}

/* MSI: number (or reuse) the CMD_SYNC under the lock, wait for its number outside it. */
static int sl_sync_msi(struct lab_cpu *c, struct sl_state *st)
{
	uint32_t nr = lab_load32(&st->sync_nr, LAB_RELAXED);
	uint64_t deadline;
	uint32_t v, late = 0;

	if (st->elide && lab_load32(&st->prev_opcode, LAB_RELAXED) == LAB_CMD_SYNC) {
		lab_count(c, SL_CNT_SYNCS_ELIDED, 1);
	} else {
		struct lab_cmd sync = lab_cmd_sync(LAB_SYNC_CS_IRQ, &st->sync_count, ++nr);

		lab_store32(&st->sync_nr, nr, LAB_RELAXED);
		sl_insert(c, st, &sync);
		lab_count(c, SL_CNT_SYNCS_ISSUED, 1);
	}
	lab_qspin_unlock(&st->lock);

	lab_phase(c, SL_PH_SYNC_WAIT);
	deadline = lab_now(c) + SL_SYNC_TIMEOUT_NS;
	LAB_COND_LOAD32(c, &st->sync_count, v,
			(int32_t)(v - nr) >= 0 || sl_expired(c, deadline, &late), LAB_ACQUIRE);
	return (int32_t)(v - nr) >= 0 ? 0 : -ETIMEDOUT;
}

/* No MSI: drain the whole queue with the lock held. */
static int sl_sync_drain(struct lab_cpu *c, struct sl_state *st)
{
	struct lab_cmd sync = lab_cmd_sync(LAB_SYNC_CS_SEV, NULL, 0);
	int rc;

	sl_insert(c, st, &sync);
	lab_count(c, SL_CNT_SYNCS_ISSUED, 1);
	lab_phase(c, SL_PH_SYNC_WAIT);
	sl_poll_cons(c, st, true, lab_now(c) + SL_SYNC_TIMEOUT_NS);
	rc = sl_cons_ok(st, lab_load32(&st->cons, LAB_RELAXED), true) ? 0 : -ETIMEDOUT;
	lab_qspin_unlock(&st->lock);
	return rc;
}

static int sl_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct sl_state *st = state;

	if (!n && !sync)
		return 0;
	lab_phase(c, SL_PH_RESERVE);
	sl_lock(c, st);
	lab_phase(c, SL_PH_WRITE);
	for (uint32_t i = 0; i < n; i++)
		sl_insert(c, st, &cmds[i]);
	if (!sync) {
		lab_qspin_unlock(&st->lock);
		return 0;
	}
	return st->msi ? sl_sync_msi(c, st) : sl_sync_drain(c, st);
}

static const struct lab_param sl_params[] = {
	{
		.key = "elide_back_to_back",
		.type = LAB_PARAM_BOOL,
		.def = "true",
		.help = "MSI path: a CMD_SYNC right after a CMD_SYNC reuses it (57afa2225ea1)",
		.offset = offsetof(struct sl_config, elide_back_to_back),
	},
};

static const struct lab_counter sl_counters[] = {
	[SL_CNT_LOCK_WAIT_NS] = { "lock_wait_ns", LAB_COUNTER_EVENTS,
				  "ns spent acquiring the cmdq spinlock" },
	[SL_CNT_SYNCS_ISSUED] = { "syncs_issued", LAB_COUNTER_EVENTS,
				  "CMD_SYNCs this plugin inserted" },
	[SL_CNT_SYNCS_ELIDED] = { "syncs_elided", LAB_COUNTER_EVENTS,
				  "sync requests served by the CMD_SYNC just before them" },
	[SL_CNT_QUEUE_FULL_WAITS] = { "queue_full_waits", LAB_COUNTER_EVENTS,
				      "commands that found the queue full" },
	[SL_CNT_PROD_WRITES] = { "prod_writes", LAB_COUNTER_EVENTS, "MMIO writes of PROD" },
};

static const char *const sl_phases[] = { "reserve", "write", "publish", "sync_wait" };

static const struct lab_cmdq_ops sl_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = sl_init,
	.fini = sl_fini,
	.issue = sl_issue,
};

static const struct lab_plugin sl_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "spinlock",
	.summary = "one lock around insert + PROD per command; MSI sync counter (v4.20-v5.3)",
	.version = "1.0",
	.params = sl_params,
	.n_params = LAB_ARRAY_SIZE(sl_params),
	.config_size = sizeof(struct sl_config),
	.counters = sl_counters,
	.n_counters = LAB_ARRAY_SIZE(sl_counters),
	.phases = sl_phases,
	.n_phases = LAB_ARRAY_SIZE(sl_phases),
	.ops = &sl_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &sl_plugin;
}
