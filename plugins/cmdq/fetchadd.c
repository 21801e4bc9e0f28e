/* SPDX-License-Identifier: MIT */
/*
 * fetchadd -- reservation by one atomic fetch-add, never a retry: John Garry's "iommu/arm-smmu-v3:
 * Improve cmdq lock efficiency" (v1, lore 1592846920-45338-1-git-send-email-john.garry@huawei.com,
 * June 2020; v2, lore 1598018062-175608-1-git-send-email-john.garry@huawei.com, Aug 2020, patch
 * 2/2 "Remove cmpxchg() in arm_smmu_cmdq_issue_cmdlist()"), with the free-running 32-bit
 * "pseudo-prod" Robin Murphy suggested in the v1 thread (Will Deacon's reply to it, lore
 * 20200716113234.GA7290@willie-the-truck: "the hard part is figuring how that you have space").
 * Never merged: Will was "still not a fan" (v2 thread, Sept 2020) and asked for the spinlock
 * fallback instead (the hybrid strategy). Garry's figures, DMA map+unmap per CPU per second on a
 * D06: 64 CPUs 11K -> 30K (v2 cover), and 9.5K (v5.9-rc1) / 15.5K (Will's fallback) / 30K (this)
 * at 64 CPUs in lore 37734fe9-8b67-3cf3-2925-2fee549cb45a@huawei.com.
 *
 * The llq word, one 64-bit line of its own: { sync:FA_SYNC_BITS, count:FA_COUNT_BITS | prod:32 }.
 * A caller of n commands (+1 CMD_SYNC) adds (n + sync) << 32 | 1 << count | sync in one
 * fetch_add64: the old prod is its first slot, and it is the owner of a chain iff the count it
 * replaced was 0 (nobody gathering). prod is free-running (Robin's pseudo-prod): the hardware
 * index is its low IDX|WRP bits. The owner waits for the previous owner to publish up to its
 * first slot, then stops gathering with one fetch_andnot64 of the count and sync fields: the
 * prod it reads back ends its chain, the sync field says how many CMD_SYNCs the chain carries.
 * (Garry's prod field held IDX|WRP, its higher bits cleared by that same andnot; his owner
 * hand-off, owner_prod, was upstream's IDX|WRP. Both are free-running here, see below.)
 *
 * Space is checked after the reservation, not before (it cannot be checked before: the add is
 * unconditional). The shadow cons is a separate word, also free-running, so "is there room for
 * my slots [p, p + need)" is the exact signed test cons + nents - (p + need) >= 0 however far
 * the reservations have run past the queue: a reservation that overruns the queue does not back
 * out (nobody could undo a fetch-add others have built on) but waits, before writing anything,
 * until the device has consumed enough. It waits on CONS itself: it reads the register and moves
 * the shadow forward with a CAS (CONS's IDX|WRP lifted to the free-running count, exact because
 * the published PROD is never more than a queue ahead of the shadow it was checked against).
 *
 * Where this departs from Garry's v2, and why. He kept the shared/exclusive cmdq lock and made
 * the owner take it for every CMD_SYNC it gathered, once all of them were written ("otherwise
 * some non-owner(s) may lock the cmdq, blocking the cons being updated ... leading to
 * deadlock"); that is sound only if a whole chain fits the queue, which v2 ensured by bounding
 * each CPU's batch. Here a chain may be longer than the queue (verify runs 64 CPUs on an
 * 8-entry queue), so the owner publishes such a chain piecewise, each PROD write up to the
 * longest run of valid slots no more than a queue past the last one: the writer at the front
 * of the unpublished part then always finds room once the device drains what is published (a
 * chain that fits goes out as upstream's, with one PROD write once all of it is valid). The lock
 * goes: it only existed to stop the IDX|WRP shadow cons from lapping a pending CMD_SYNC, and a
 * free-running cons cannot alias; nor can the free-running owner_prod, which a chain longer
 * than two laps would otherwise alias for the next owner. A CMD_SYNC waiter (MSI into its own slot,
 * as upstream, or CONS polling) is done when the MSI has landed or the shadow cons has passed its
 * slot (the slot can only be reused after that). Mind the MSI-before-CONS order (cmdq.h): a waiter
 * that saw its MSI does NOT move the shadow cons, since CONS may not have moved yet: space waiters
 * advance it from what CONS really says, so nobody writes PROD past the real CONS, and nobody waits
 * for a shadow update that an MSI waiter was expected to make.
 *
 * The count field counts reservations since the last stop; at most nents of them can have
 * returned (their slots were written, so lie within a queue of the chain's start) and ncpus can
 * be in flight, so init refuses a queue where nents + ncpus overflows it; the sync field holds
 * at most one CMD_SYNC per CPU.
 */
#include "llq.h"

#define FA_SYNC_BITS  12
#define FA_COUNT_BITS 20
#define FA_COUNT_ONE  (1ull << FA_SYNC_BITS)
#define FA_SYNC_MASK  ((1ull << FA_SYNC_BITS) - 1)
#define FA_COUNT_MASK (((1ull << FA_COUNT_BITS) - 1) << FA_SYNC_BITS)
#define FA_PROD_SHIFT 32
_Static_assert(FA_SYNC_BITS + FA_COUNT_BITS == FA_PROD_SHIFT, "sync and count fill the low word");

enum fa_counter {
	FA_CNT_FETCH_ADDS,
	FA_CNT_OWNER_CHAINS,
	FA_CNT_CHAIN_CMDS,
	FA_CNT_CHAIN_SYNCS,
	FA_CNT_PROD_WRITES,
	FA_CNT_SYNCS_ISSUED,
	FA_CNT_QUEUE_FULL_WAITS,
	FA_CNT_CONS_CAS,
};

struct fa_state {
	struct llq q; /* valid map, owner_prod, device; its word and lock unused */
	uint64_t word LAB_CACHE_ALIGNED; /* { sync, count | prod } */
	uint32_t cons LAB_CACHE_ALIGNED; /* free-running shadow of CONS */
};

static int fa_init(const struct lab_cmdq_setup *s, void **state)
{
	uint64_t nents = lab_q_nents(s->smmu);
	struct fa_state *st;
	int rc;

	if (s->ncpus > FA_SYNC_MASK || nents + s->ncpus > (FA_COUNT_MASK >> FA_SYNC_BITS)) {
		snprintf(s->err, s->err_len,
			 "%u CPUs on a %llu-entry queue overflow the llq word's %u-bit sync or "
			 "%u-bit count field",
			 s->ncpus, (unsigned long long)nents, FA_SYNC_BITS, FA_COUNT_BITS);
		return -EINVAL;
	}
	st = lab_alloc(s->host, sizeof(*st));
	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	rc = llq_init(s, &st->q);
	if (rc) {
		lab_free(s->host, st);
		return rc;
	}
	*state = st;
	return 0;
}

static void fa_fini(void *state)
{
	struct fa_state *st = state;
	const struct lab_host *h = st->q.host;

	llq_fini(&st->q);
	lab_free(h, st);
}

/* Free-running position to IDX | WRP (2^32 is a multiple of the queue's 2 * nents). */
static uint32_t fa_pos(const struct fa_state *st, uint32_t p)
{
	return p & st->q.wrap_mask;
}

static bool fa_room(const struct fa_state *st, uint32_t cons, uint32_t end)
{
	return (int32_t)(cons + st->q.nents - end) >= 0;
}

/*
 * Move the shadow cons up to what CONS says; returns the shadow afterwards. The lift from IDX|WRP
 * is exact while the shadow stays what we loaded (the CAS checks that): PROD was never written
 * more than nents past it, so CONS is at most nents ahead.
 */
static uint32_t fa_refresh_cons(struct lab_cpu *c, struct fa_state *st, uint32_t cons)
{
	for (;;) {
		uint32_t hw = lab_smmu_read_cons(c, st->q.smmu);
		uint32_t ahead = (hw - cons) & st->q.wrap_mask;
		uint32_t found;

		if (!ahead || ahead > st->q.nents)
			return cons; /* nothing new, or an older read than the shadow */
		lab_count(c, FA_CNT_CONS_CAS, 1);
		found = lab_cas32(&st->cons, cons, cons + ahead, LAB_RELAXED);
		if (found == cons)
			return cons + ahead;
		cons = found;
	}
}

static bool fa_space_pass(struct lab_cpu *c, struct fa_state *st, uint32_t cons, uint32_t end)
{
	return fa_room(st, cons, end) || fa_room(st, fa_refresh_cons(c, st, cons), end);
}

/* The queue-full path: wait, before writing, until our slots up to end are free. */
static void fa_wait_space(struct lab_cpu *c, struct fa_state *st, uint32_t end)
{
	uint32_t v = lab_load32(&st->cons, LAB_RELAXED);

	if (fa_room(st, v, end))
		return;
	lab_count(c, FA_CNT_QUEUE_FULL_WAITS, 1);
	/* Acquire: the device has read the slots we are about to overwrite. */
	LAB_COND_LOAD32(c, &st->cons, v, fa_space_pass(c, st, v, end), LAB_ACQUIRE);
}

static bool fa_slot_valid(const struct fa_state *st, uint64_t word, uint32_t p)
{
	uint32_t bit = lab_q_idx(st->q.smmu, p) % LLQ_MAP_WORD_BITS;

	return ((word >> bit) & 1) == (llq_wrp(&st->q, p) ? 0 : 1);
}

static uint64_t *fa_map_word(const struct fa_state *st, uint32_t p)
{
	return &st->q.valid_map[lab_q_idx(st->q.smmu, p) / LLQ_MAP_WORD_BITS];
}

/*
 * Wait until slot cur is valid, then return the end of the run of valid slots from cur, at
 * most limit. Only slots within a queue of the published PROD (cur) are polled: their previous
 * lap is published, so its toggle of the bit has happened and the sense cannot alias.
 */
static uint32_t fa_valid_run(struct lab_cpu *c, struct fa_state *st, uint32_t cur, uint32_t limit)
{
	uint64_t *mw = fa_map_word(st, cur);
	uint64_t w;
	uint32_t end = cur + 1;

	LAB_COND_LOAD64(c, mw, w, fa_slot_valid(st, w, cur), LAB_RELAXED);
	while (end != limit) {
		if (fa_map_word(st, end) != mw) {
			mw = fa_map_word(st, end);
			w = lab_load64(mw, LAB_RELAXED);
		}
		if (!fa_slot_valid(st, w, end))
			break;
		end++;
	}
	return end;
}

/*
 * The owner: publish [sprod, eprod) in order, a queue at most per PROD write. Waiting for a
 * whole chain longer than the queue would deadlock: a writer straddling the queue's end cannot
 * get room until the part before it is published.
 */
static void fa_publish_chain(struct lab_cpu *c, struct fa_state *st, uint32_t sprod, uint32_t eprod)
{
	uint32_t cur = sprod;

	while (cur != eprod) {
		uint32_t end = eprod;

		/*
		 * A chain that fits the queue goes out as upstream's: every gathered slot valid,
		 * then one PROD write. A longer one goes out a valid run at a time.
		 */
		if (eprod - cur < st->q.nents)
			llq_valid_range(c, &st->q, fa_pos(st, cur), fa_pos(st, eprod), false);
		else
			end = fa_valid_run(c, st, cur, cur + st->q.nents);

		/* The valid bits were read relaxed: order the entries before PROD. */
		lab_fence(LAB_ACQUIRE);
		lab_smmu_write_prod(c, st->q.smmu, fa_pos(st, end));
		lab_count(c, FA_CNT_PROD_WRITES, 1);
		cur = end;
	}
	/*
	 * Free-running, unlike upstream's IDX|WRP: a chain may be longer than two laps, and the
	 * next owner must not take the end of the chain before ours for its turn.
	 */
	lab_store32(&st->q.owner_prod, eprod, LAB_RELEASE);
	lab_count(c, FA_CNT_OWNER_CHAINS, 1);
	lab_count(c, FA_CNT_CHAIN_CMDS, eprod - sprod);
}

static void fa_own_chain(struct lab_cpu *c, struct fa_state *st, uint32_t sprod)
{
	uint64_t old;
	uint32_t eprod, v;

	/* Wait for the previous owner to publish exactly up to our first slot. */
	LAB_COND_LOAD32(c, &st->q.owner_prod, v, v == sprod, LAB_ACQUIRE);
	old = lab_fetch_andnot64(&st->word, FA_COUNT_MASK | FA_SYNC_MASK, LAB_RELAXED);
	eprod = (uint32_t)(old >> FA_PROD_SHIFT);
	lab_count(c, FA_CNT_CHAIN_SYNCS, old & FA_SYNC_MASK);
	fa_publish_chain(c, st, sprod, eprod);
}

/* Has the device consumed the slot at (free-running) p, by the shadow cons? */
static bool fa_consumed(struct fa_state *st, uint32_t p)
{
	return (int32_t)(lab_load32(&st->cons, LAB_ACQUIRE) - p) > 0;
}

static bool fa_msi_pass(struct lab_cpu *c, struct fa_state *st, uint32_t v, uint32_t sync_p,
			uint64_t deadline, uint32_t *late)
{
	return v == 0 || fa_consumed(st, sync_p) || llq_expired(c, deadline, late);
}

static bool fa_cons_pass(struct lab_cpu *c, struct fa_state *st, uint32_t cons, uint32_t sync_p,
			 uint64_t deadline, uint32_t *late)
{
	return (int32_t)(fa_refresh_cons(c, st, cons) - sync_p) > 0 ||
	       llq_expired(c, deadline, late);
}

/* Wait for our CMD_SYNC at free-running slot sync_p. */
static int fa_wait_sync(struct lab_cpu *c, struct fa_state *st, uint32_t sync_p)
{
	uint64_t deadline = lab_now(c) + LLQ_POLL_TIMEOUT_NS;
	uint32_t v, late = 0;

	lab_phase(c, LLQ_PH_SYNC_WAIT);
	if (st->q.msi) {
		uint32_t *word = llq_msi_word(lab_q_slot(st->q.smmu, sync_p));

		LAB_COND_LOAD32(c, word, v, fa_msi_pass(c, st, v, sync_p, deadline, &late),
				LAB_ACQUIRE);
		return v == 0 || fa_consumed(st, sync_p) ? 0 : -ETIMEDOUT;
	}
	LAB_COND_LOAD32(c, &st->cons, v, fa_cons_pass(c, st, v, sync_p, deadline, &late),
			LAB_ACQUIRE);
	return fa_consumed(st, sync_p) ? 0 : -ETIMEDOUT;
}

/*
 * Mark [sprod, sprod + need) valid. llq_valid_range() takes IDX|WRP ends, which coincide for a
 * whole-queue range, so that one is marked in two parts.
 */
static void fa_mark_valid(struct lab_cpu *c, struct fa_state *st, uint32_t sprod, uint32_t need)
{
	uint32_t split = need == st->q.nents ? 1 : need;

	llq_mark_valid(c, &st->q, fa_pos(st, sprod), fa_pos(st, sprod + split));
	if (split != need)
		llq_mark_valid(c, &st->q, fa_pos(st, sprod + split), fa_pos(st, sprod + need));
}

static int fa_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct fa_state *st = state;
	uint32_t need = n + (sync ? 1 : 0);
	uint64_t old;
	uint32_t sprod;
	bool owner;

	if (!need)
		return 0;
	if (need > st->q.nents)
		return -EINVAL;
	lab_phase(c, LLQ_PH_RESERVE);
	old = lab_fetch_add64(&st->word,
			      ((uint64_t)need << FA_PROD_SHIFT) | FA_COUNT_ONE | (sync ? 1 : 0),
			      LAB_RELAXED);
	lab_count(c, FA_CNT_FETCH_ADDS, 1);
	sprod = (uint32_t)(old >> FA_PROD_SHIFT);
	owner = !(old & FA_COUNT_MASK);
	fa_wait_space(c, st, sprod + need);

	lab_phase(c, LLQ_PH_WRITE);
	llq_write_cmds(&st->q, fa_pos(st, sprod), cmds, n);
	if (sync) {
		llq_write_sync(&st->q, fa_pos(st, sprod + n));
		lab_count(c, FA_CNT_SYNCS_ISSUED, 1);
	}
	lab_phase(c, LLQ_PH_PUBLISH);
	fa_mark_valid(c, st, sprod, need);
	if (owner)
		fa_own_chain(c, st, sprod);
	return sync ? fa_wait_sync(c, st, sprod + n) : 0;
}

static const struct lab_counter fa_counters[] = {
	[FA_CNT_FETCH_ADDS] = { "fetch_adds", LAB_COUNTER_EVENTS,
				"fetch-adds on the llq word (one per reservation, never retried)" },
	[FA_CNT_OWNER_CHAINS] = { "owner_chains", LAB_COUNTER_EVENTS,
				  "chains published by this CPU as owner" },
	[FA_CNT_CHAIN_CMDS] = { "chain_cmds", LAB_COUNTER_EVENTS,
				"entries published by owners (per op: chain share)" },
	[FA_CNT_CHAIN_SYNCS] = { "chain_syncs", LAB_COUNTER_EVENTS,
				 "CMD_SYNCs in owners' chains (the llq word's sync field)" },
	[FA_CNT_PROD_WRITES] = { "prod_writes", LAB_COUNTER_EVENTS,
				 "MMIO writes of PROD (above owner_chains: chains longer than "
				 "the queue, published a valid run at a time)" },
	[FA_CNT_SYNCS_ISSUED] = { "syncs_issued", LAB_COUNTER_EVENTS,
				  "CMD_SYNCs this plugin inserted" },
	[FA_CNT_QUEUE_FULL_WAITS] = { "queue_full_waits", LAB_COUNTER_EVENTS,
				      "reservations that ran past the free space and waited" },
	[FA_CNT_CONS_CAS] = { "cons_cas", LAB_COUNTER_EVENTS,
			      "CAS tries moving the shadow cons forward from CONS" },
};

static const char *const fa_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops fa_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = fa_init,
	.fini = fa_fini,
	.issue = fa_issue,
};

static const struct lab_plugin fa_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "fetchadd",
	.summary =
		"one fetch-add per reservation, free-running prod/cons (Garry v2 2020, unmerged)",
	.version = "1.0",
	.counters = fa_counters,
	.n_counters = LAB_ARRAY_SIZE(fa_counters),
	.phases = fa_phases,
	.n_phases = LAB_ARRAY_SIZE(fa_phases),
	.ops = &fa_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &fa_plugin;
}
