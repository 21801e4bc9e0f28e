/* SPDX-License-Identifier: MIT */
/*
 * batched -- CMD_SYNC combining on top of the lock-free command queue (cmpxchg, 587e6c10a7ce):
 * one CMD_SYNC per owner chain instead of one per sync caller. Upstream's chains already
 * combine PROD writes, but every sync caller still inserts its own CMD_SYNC; John Garry
 * suggested combining them for small batches ("we could improve this code to try to
 * combine CMD SYNCs", lore b2a6e26d-6d0d-7f0d-f222-589812f701d2@huawei.com), and no merged
 * patch does it for the lock-free queue.
 *
 * Design. A sync caller never reserves a CMD_SYNC slot itself. Its reservation CAS adds one
 * to a count of sync requests kept in the prod word, in the bits between WRP and OWNED.
 * The owner stops gathering with a CAS (not upstream's fetch_andnot) that clears OWNED and
 * the count and, if the count was non-zero, claims one more slot at the chain's end: the
 * chain's CMD_SYNC, which it writes and marks valid itself before publishing the chain with
 * one PROD write. Every sync caller of the chain is before that CMD_SYNC, so waiting for it
 * is enough (the rule: return only once a CMD_SYNC positioned after all of our commands has
 * completed). How a sync caller finds it: owners record the slot of the CMD_SYNC they
 * appended in last_sync before handing over owner_prod, so last_sync moves forward in chain
 * order. A gatherer waits until owner_prod has moved past its slots (its chain is
 * published: that chain ended in a CMD_SYNC after it), then reads last_sync: that is its
 * chain's CMD_SYNC or a later one, either of which covers it. Completion is waited for as
 * upstream (MSI into that slot, or CONS) under the shared lock, which the caller took
 * before marking its slots valid: until it leaves, the shadow cons stays at or before its
 * first slot, so neither owner_prod nor last_sync can be a lap away (the comparisons are
 * exact) and the CMD_SYNC's slot cannot be reused before the caller has seen it complete.
 * That needs the shadow cons never ahead of owner_prod, so every owner holds the lock shared
 * from before its PROD write until owner_prod is stored, an owner without a sync request too:
 * otherwise a CPU refreshing the shadow from CONS in that window (the device may consume
 * the chain at once) lets the next reservations run a whole lap past owner_prod, and a
 * gatherer whose slots lie exactly a lap ahead of it reads owner_prod as past them (found
 * by verify's mixed shapes: unsynced issues on an 8-entry queue, perturbed schedules).
 *
 * Room for the chain's CMD_SYNC: every reservation waits for n + 1 free slots but claims n,
 * so after any reservation one slot is free; the stop CAS, which follows the chain's last
 * reservation, always finds it (it still checks, and waits, to be safe).
 *
 * The count field holds at most one request per CPU per chain (a sync caller waits before
 * issuing again), so init refuses a queue_shift that leaves it fewer bits than ncpus needs.
 */
#include "llq.h"

enum bt_counter {
	BT_CNT_SYNCS_ELIDED = LLQ_N_COUNTERS,
};

struct bt_state {
	struct llq q;
	uint32_t last_sync LAB_CACHE_ALIGNED; /* slot of the newest chain CMD_SYNC */
	uint32_t sync_one;		      /* one sync request in the prod word */
	uint32_t sync_mask;		      /* the request count's bits */
};

static int bt_init(const struct lab_cmdq_setup *s, void **state)
{
	struct bt_state *st = lab_alloc(s->host, sizeof(*st));
	uint32_t shift = s->smmu->shift;
	int rc;

	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	/* Count bits: [shift + 1, 31); bit 31 is OWNED. */
	if (shift + 1 >= 31 || s->ncpus > (LLQ_OWNED - 1) >> (shift + 1)) {
		snprintf(s->err, s->err_len,
			 "queue_shift %u leaves too few prod bits to count %u CPUs' sync requests",
			 shift, s->ncpus);
		rc = -EINVAL;
		goto err_free;
	}
	rc = llq_init(s, &st->q);
	if (rc)
		goto err_free;
	st->sync_one = 1u << (shift + 1);
	st->sync_mask = (LLQ_OWNED - 1) & ~st->q.wrap_mask;
	*state = st;
	return 0;

err_free:
	lab_free(s->host, st);
	return rc;
}

static void bt_fini(void *state)
{
	struct bt_state *st = state;
	const struct lab_host *h = st->q.host;

	llq_fini(&st->q);
	lab_free(h, st);
}

/*
 * Stop gathering: clear OWNED and the request count, and claim the chain's CMD_SYNC slot if
 * anyone asked. Returns where the chain's entries end (the CMD_SYNC slot, if any); *nsync
 * gets the number of requests.
 */
static uint32_t bt_stop_gathering(struct lab_cpu *c, struct bt_state *st, uint32_t *nsync)
{
	struct llq *q = &st->q;
	union llq_word old, new;
	uint64_t found;

	old.val = lab_load64(&q->word.val, LAB_RELAXED);
	for (;;) {
		*nsync = (old.prod & st->sync_mask) / st->sync_one;
		if (*nsync && !llq_has_space(q, old.prod, old.cons, 1)) {
			llq_wait_space(c, q, &old, 1);
			continue;
		}
		new.cons = old.cons;
		new.prod = llq_inc(q, llq_pos(q, old.prod), *nsync ? 1 : 0);
		lab_count(c, LLQ_CNT_CAS_ATTEMPTS, 1);
		found = lab_cas64(&q->word.val, old.val, new.val, LAB_RELAXED);
		if (found == old.val)
			return llq_pos(q, old.prod);
		old.val = found;
	}
}

/* Write the chain's CMD_SYNC at slot, mark it valid, and tell the chain's waiters where. */
static void bt_append_sync(struct lab_cpu *c, struct bt_state *st, uint32_t slot, uint32_t nsync)
{
	llq_write_sync(&st->q, slot);
	llq_mark_valid(c, &st->q, slot, llq_inc(&st->q, slot, 1));
	lab_store32(&st->last_sync, slot, LAB_RELAXED);
	lab_count(c, LLQ_CNT_SYNCS_ISSUED, 1);
	lab_count(c, BT_CNT_SYNCS_ELIDED, nsync - 1);
}

/* The owner's part. Returns the chain's CMD_SYNC slot (meaningful when it has one). */
static uint32_t bt_own_chain(struct lab_cpu *c, struct bt_state *st, uint32_t sprod)
{
	uint32_t nsync, end;

	llq_owner_wait_turn(c, &st->q, sprod);
	end = bt_stop_gathering(c, st, &nsync);
	if (nsync)
		bt_append_sync(c, st, end, nsync);
	/* owner_prod's release orders last_sync before it, for the chain's waiters. */
	llq_owner_publish(c, &st->q, sprod, llq_inc(&st->q, end, nsync ? 1 : 0));
	return end;
}

/* Has the published PROD moved past slot sprod? Exact while we hold the lock shared. */
static bool bt_passed(const struct llq *q, uint32_t sprod, uint32_t owner_prod)
{
	uint32_t d = llq_dist(q, sprod, owner_prod);

	return d >= 1 && d <= q->nents;
}

/* A gatherer's CMD_SYNC: its chain's, or a later one, once its chain is published. */
static uint32_t bt_find_sync(struct lab_cpu *c, struct bt_state *st, uint32_t sprod)
{
	uint32_t v;

	LAB_COND_LOAD32(c, &st->q.owner_prod, v, bt_passed(&st->q, sprod, v), LAB_ACQUIRE);
	return lab_load32(&st->last_sync, LAB_RELAXED);
}

/*
 * A CMD_SYNC alone (the kernel's arm_smmu_cmdq_issue_sync()). A sync request is anchored by
 * its caller's own slots: with none, the queue could lap the caller's reservation before it
 * takes the shared lock, and bt_passed() would then compare across laps. So it reserves one
 * slot and writes a CMD_SYNC of its own there, as mainline does, in whatever chain it lands
 * in (as that chain's owner it still ends the chain with the chain's CMD_SYNC for the others).
 */
static int bt_issue_sync(struct lab_cpu *c, struct bt_state *st)
{
	struct llq *q = &st->q;
	uint32_t old_prod, sprod;

	lab_phase(c, LLQ_PH_RESERVE);
	old_prod = llq_reserve(c, q, 2, 1, 0);
	sprod = llq_pos(q, old_prod);
	lab_phase(c, LLQ_PH_WRITE);
	llq_write_sync(q, sprod);
	llq_shared_lock(c, q);
	lab_count(c, LLQ_CNT_SYNCS_ISSUED, 1);
	lab_phase(c, LLQ_PH_PUBLISH);
	llq_mark_valid(c, q, sprod, llq_inc(q, sprod, 1));
	if (!(old_prod & LLQ_OWNED))
		bt_own_chain(c, st, sprod);
	return llq_wait_sync(c, q, sprod);
}

static int bt_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct bt_state *st = state;
	struct llq *q = &st->q;
	uint32_t old_prod, sprod, sync_prod = 0;
	bool owner;

	if (!n)
		return sync ? bt_issue_sync(c, st) : 0;
	if (n + 1 > q->nents)
		return -EINVAL;
	lab_phase(c, LLQ_PH_RESERVE);
	old_prod = llq_reserve(c, q, n + 1, n, sync ? st->sync_one : 0);
	owner = !(old_prod & LLQ_OWNED);
	sprod = llq_pos(q, old_prod);

	lab_phase(c, LLQ_PH_WRITE);
	llq_write_cmds(q, sprod, cmds, n);
	if (sync)
		llq_shared_lock(c, q);
	lab_phase(c, LLQ_PH_PUBLISH);
	llq_mark_valid(c, q, sprod, llq_inc(q, sprod, n));
	if (owner && !sync) {
		/* Unsynced: the lock only for the publish (see the header). */
		llq_shared_lock(c, q);
		bt_own_chain(c, st, sprod);
		llq_shared_unlock(q);
		return 0;
	}
	if (owner)
		sync_prod = bt_own_chain(c, st, sprod);
	if (!sync)
		return 0;
	if (!owner)
		sync_prod = bt_find_sync(c, st, sprod);
	return llq_wait_sync(c, q, sync_prod);
}

static const struct lab_counter bt_counters[] = {
	LLQ_COUNTERS,
	[BT_CNT_SYNCS_ELIDED] = { "syncs_elided", LAB_COUNTER_EVENTS,
				  "sync requests served by another caller's chain CMD_SYNC" },
};

static const char *const bt_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops bt_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = bt_init,
	.fini = bt_fini,
	.issue = bt_issue,
};

static const struct lab_plugin bt_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "batched",
	.summary = "lock-free CAS queue with one CMD_SYNC per owner chain (sync combining)",
	.version = "1.0",
	.counters = bt_counters,
	.n_counters = LAB_ARRAY_SIZE(bt_counters),
	.phases = bt_phases,
	.n_phases = LAB_ARRAY_SIZE(bt_phases),
	.ops = &bt_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &bt_plugin;
}
