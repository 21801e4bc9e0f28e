/* SPDX-License-Identifier: MIT */
/*
 * llq.h -- plugin-private building blocks of the mainline lock-free SMMUv3 command queue,
 * arm_smmu_cmdq_issue_cmdlist() as reworked by Will Deacon in 587e6c10a7ce ("Reduce
 * contention during command-queue insertion", v5.4), with the shared/exclusive lock in its
 * 2025 fair form (Alexander Grest / Jacob Pan, "Improve CMDQ lock fairness and efficiency",
 * lore 20251020224353.1408-3-jacob.pan@linux.microsoft.com) and Jacob Pan's exact-space
 * queue-full poll (lore 20251105190638.23172-2-jacob.pan@linux.microsoft.com).
 *
 * The cmpxchg, mcs and batched strategies differ only in how they reserve slots (and, for
 * batched, in who inserts the CMD_SYNC); everything around the reservation lives here, once.
 * All static inline: every plugin .so gets its own copy and exports nothing from it.
 *
 * The pieces, in the order an issue() uses them:
 *   llq_has_space, llq_inc, llq_consumed  index arithmetic on IDX | WRP (flags kept apart)
 *   llq_wait_space                        the queue-full path
 *   llq_reserve, llq_try_reserve          the CAS loop over {prod, cons}
 *   llq_write_cmds, llq_write_sync        fill the reserved slots
 *   llq_shared_lock & co                  the shared/exclusive lock over the shadow cons
 *   llq_valid_range                       the valid bitmap: mark (XOR) or poll
 *   llq_owner_*                           owner: wait for our turn, stop gathering, PROD
 *   llq_wait_sync                         MSI or CONS polling, then leave the shared lock
 *   llq_finish                            all of the above after a reservation
 *
 * Mutants (tests/fixtures/plugins) switch one bug on with a CMDQ_MUTANT_* define before
 * including a plugin; they default to 0 here so a real plugin compiles them away.
 */
#ifndef IOMMULAB_PLUGIN_LLQ_H
#define IOMMULAB_PLUGIN_LLQ_H

#include <errno.h>
#include <stdio.h>

#include <iommulab/cmdq.h>

#ifndef CMDQ_MUTANT_SKIP_SYNC_WAIT
#define CMDQ_MUTANT_SKIP_SYNC_WAIT 0 /* return from a sync issue without waiting */
#endif
#ifndef CMDQ_MUTANT_PUBLISH_EARLY
#define CMDQ_MUTANT_PUBLISH_EARLY 0 /* mark valid and write PROD before writing the entries */
#endif
#ifndef CMDQ_MUTANT_NO_WMB
#define CMDQ_MUTANT_NO_WMB 0 /* no dma_wmb() between the entries and their valid bits */
#endif
#ifndef CMDQ_MUTANT_NO_VALID
#define CMDQ_MUTANT_NO_VALID 0 /* never set the valid bits: the owner waits forever */
#endif

/* The llq word is read as one 64-bit value and its halves are also written alone. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "llq word layout assumes little-endian");

#define LLQ_OWNED	    LAB_Q_OVF	  /* CMDQ_PROD_OWNED_FLAG: an owner is gathering */
#define LLQ_LOCK_EXCL	    0x80000000u	  /* INT_MIN: the exclusive holder's bit */
#define LLQ_POLL_TIMEOUT_NS 1000000000ull /* ARM_SMMU_POLL_TIMEOUT_US = 1 s */
#define LLQ_MAP_WORD_BITS   64		  /* the kernel's BITS_PER_LONG on arm64 */

/* struct arm_smmu_ll_queue: prod and cons in one word, so one CAS reserves against cons. */
union llq_word {
	uint64_t val;
	struct {
		uint32_t prod; /* IDX | WRP, plus LLQ_OWNED (and a plugin's own flag bits) */
		uint32_t cons; /* shadow of the CONS register, advanced by lock holders only */
	};
};

/* Each hot word on its own cache line: they are written by different CPUs at different times. */
struct llq {
	union llq_word word LAB_CACHE_ALIGNED;
	/*
	 * As struct arm_smmu_cmdq lays them out after its queue: the valid_map pointer,
	 * owner_prod and lock in one line, so every sync's shared-lock atomics move the line
	 * the next owner polls owner_prod on.
	 */
	uint64_t *valid_map LAB_CACHE_ALIGNED; /* one bit per slot, read-only pointer after init */
	uint32_t owner_prod;		       /* PROD as published by the last owner */
	uint32_t lock;			       /* 0 free, >0 shared count, INT_MIN+k exclusive */
	struct lab_smmu *smmu;
	const struct lab_host *host; /* fini gets only the state */
	uint32_t nents;
	uint32_t wrap_mask; /* IDX | WRP */
	uint32_t map_bits;  /* bits used in each valid-map word: min(64, nents) */
	bool msi;	    /* CMD_SYNC completes by an MSI write into its own slot */
};

/* Counters every llq plugin reports, in this order; a plugin appends its own after them. */
enum llq_counter {
	LLQ_CNT_CAS_ATTEMPTS,
	LLQ_CNT_OWNER_CHAINS,
	LLQ_CNT_CHAIN_CMDS,
	LLQ_CNT_SYNCS_ISSUED,
	LLQ_CNT_QUEUE_FULL_WAITS,
	LLQ_CNT_LOCK_WAIT_NS,
	LLQ_N_COUNTERS,
};

#define LLQ_COUNTERS                                                                               \
	{ "cas_attempts", LAB_COUNTER_EVENTS, "CAS tries on the prod/cons word" },                 \
		{ "owner_chains", LAB_COUNTER_EVENTS, "chains published by this CPU as owner" },   \
		{ "chain_cmds", LAB_COUNTER_EVENTS,                                                \
		  "entries published by owners (per op: chain share)" },                           \
		{ "syncs_issued", LAB_COUNTER_EVENTS, "CMD_SYNCs this plugin inserted" },          \
		{ "queue_full_waits", LAB_COUNTER_EVENTS,                                          \
		  "reservations that found the queue full" },                                      \
	{                                                                                          \
		"lock_wait_ns", LAB_COUNTER_EVENTS, "ns spent waiting for the cmdq lock (shared)"  \
	}

enum llq_phase {
	LLQ_PH_RESERVE = 1,
	LLQ_PH_WRITE,
	LLQ_PH_PUBLISH,
	LLQ_PH_SYNC_WAIT,
};

#define LLQ_PHASE_NAMES "reserve", "write", "publish", "sync_wait"

/* ---- life cycle -------------------------------------------------------------------------- */

/* Fill q (already zeroed, from lab_alloc) for the device in s. 0 or -errno with s->err. */
static inline int llq_init(const struct lab_cmdq_setup *s, struct llq *q)
{
	uint32_t nents = lab_q_nents(s->smmu);
	uint32_t words;

	q->smmu = s->smmu;
	q->host = s->host;
	q->nents = nents;
	q->wrap_mask = (nents << 1) - 1;
	q->map_bits = nents < LLQ_MAP_WORD_BITS ? nents : LLQ_MAP_WORD_BITS;
	q->msi = s->smmu->msi != 0;
	/* nents is a power of two, so it is either below one word or a multiple of it. */
	words = (nents + LLQ_MAP_WORD_BITS - 1) / LLQ_MAP_WORD_BITS;
	q->valid_map = lab_alloc(s->host, words * sizeof(uint64_t));
	if (!q->valid_map) {
		snprintf(s->err, s->err_len, "out of memory for a valid map of %u entries", nents);
		return -ENOMEM;
	}
	return 0;
}

static inline void llq_fini(struct llq *q)
{
	lab_free(q->host, q->valid_map);
}

/* ---- index arithmetic (Q_IDX, Q_WRP, queue_has_space, queue_consumed) ------------------ */

static inline uint32_t llq_pos(const struct llq *q, uint32_t p)
{
	return p & q->wrap_mask;
}

static inline uint32_t llq_idx(const struct llq *q, uint32_t p)
{
	return p & (q->nents - 1);
}

static inline uint32_t llq_wrp(const struct llq *q, uint32_t p)
{
	return p & q->nents;
}

/* queue_inc_prod_n(): advance IDX | WRP by n, keep every flag bit above them. */
static inline uint32_t llq_inc(const struct llq *q, uint32_t p, uint32_t n)
{
	return (p & ~q->wrap_mask) | ((p + n) & q->wrap_mask);
}

static inline uint32_t llq_dist(const struct llq *q, uint32_t from, uint32_t to)
{
	return (to - from) & q->wrap_mask;
}

static inline bool llq_has_space(const struct llq *q, uint32_t prod, uint32_t cons, uint32_t n)
{
	uint32_t space;

	if (llq_wrp(q, prod) == llq_wrp(q, cons))
		space = q->nents - (llq_idx(q, prod) - llq_idx(q, cons));
	else
		space = llq_idx(q, cons) - llq_idx(q, prod);
	return space >= n;
}

/* Has CONS passed the entry at prod? Valid while cons is within a lap of prod. */
static inline bool llq_consumed(const struct llq *q, uint32_t prod, uint32_t cons)
{
	if (llq_wrp(q, cons) == llq_wrp(q, prod))
		return llq_idx(q, cons) > llq_idx(q, prod);
	return llq_idx(q, cons) <= llq_idx(q, prod);
}

/* ---- the shared/exclusive lock ------------------------------------------------------------- */

/*
 * Fair form: the increment is never undone, so an exclusive holder's unlock (which clears
 * only the sign bit) lets every queued shared locker in at once instead of starving them.
 */
static inline void llq_shared_lock(struct lab_cpu *c, struct llq *q)
{
	uint64_t t0;
	uint32_t v;

	if ((int32_t)lab_fetch_add32(&q->lock, 1, LAB_RELAXED) >= 0)
		return;
	t0 = lab_now(c);
	LAB_COND_LOAD32(c, &q->lock, v, (int32_t)v > 0, LAB_RELAXED);
	lab_count(c, LLQ_CNT_LOCK_WAIT_NS, lab_now(c) - t0);
}

static inline void llq_shared_unlock(struct llq *q)
{
	lab_fetch_sub32(&q->lock, 1, LAB_RELEASE);
}

/* Racy on purpose, as upstream: fails when we appear to be the last holder. */
static inline bool llq_shared_tryunlock(struct llq *q)
{
	if (lab_load32(&q->lock, LAB_RELAXED) == 1)
		return false;
	llq_shared_unlock(q);
	return true;
}

static inline bool llq_exclusive_trylock(struct llq *q)
{
	return lab_cas32(&q->lock, 0, LLQ_LOCK_EXCL, LAB_ACQUIRE) == 0;
}

static inline void llq_exclusive_unlock(struct llq *q)
{
	lab_fetch_andnot32(&q->lock, LLQ_LOCK_EXCL, LAB_RELEASE);
}

/* ---- queue full ------------------------------------------------------------------------------ */

/*
 * One pass of the queue-full wait, on the llq value just loaded into *w: true once there is
 * room for need entries. Whoever finds the lock free refreshes the shadow cons from CONS
 * under the exclusive lock; while CMD_SYNC waiters hold it shared, the last of them
 * publishes its cons instead (llq_sync_release).
 */
static inline bool llq_full_pass(struct lab_cpu *c, struct llq *q, union llq_word *w, uint32_t need)
{
	if (llq_has_space(q, w->prod, w->cons, need))
		return true;
	if (lab_load32(&q->lock, LAB_RELAXED) || !llq_exclusive_trylock(q))
		return false;
	lab_store32(&q->word.cons, llq_pos(q, lab_smmu_read_cons(c, q->smmu)), LAB_RELAXED);
	llq_exclusive_unlock(q);
	w->val = lab_load64(&q->word.val, LAB_RELAXED);
	return llq_has_space(q, w->prod, w->cons, need);
}

/*
 * arm_smmu_cmdq_poll_until_not_full() with Jacob Pan's fix: wait for room for exactly need
 * entries, not merely "not full". Two deliberate differences from upstream: the exclusive
 * lock is retried whenever it reads free, because with the exact-space condition the CPU
 * that would otherwise advance the shadow for us may already have left; and there is no
 * timeout (upstream only warns "CMDQ timeout" and retries; here a queue that never drains
 * is reported by the harness's watchdog). On return *w holds an llq value with room.
 */
static inline void llq_wait_space(struct lab_cpu *c, struct llq *q, union llq_word *w,
				  uint32_t need)
{
	uint64_t v;

	lab_count(c, LLQ_CNT_QUEUE_FULL_WAITS, 1);
	LAB_COND_LOAD64(c, &q->word.val, v, (w->val = v, llq_full_pass(c, q, w, need)),
			LAB_RELAXED);
}

/* ---- reservation --------------------------------------------------------------------- */

/* The llq value a reservation of n slots (plus flag bits `add`) installs over old. */
static inline uint64_t llq_claim(const struct llq *q, union llq_word old, uint32_t n, uint32_t add)
{
	union llq_word head;

	head.cons = old.cons;
	head.prod = (llq_inc(q, old.prod, n) + add) | LLQ_OWNED;
	return head.val;
}

/*
 * Step 1 of arm_smmu_cmdq_issue_cmdlist(): the CAS loop, re-checking space on every retry.
 * Waits for `room` free slots, claims n of them (room > n leaves slack, see batched) and
 * adds `add` to the prod word's flag bits. Returns the prod our CAS replaced: OWNED clear
 * there makes us the owner of a chain.
 */
static inline uint32_t llq_reserve(struct lab_cpu *c, struct llq *q, uint32_t room, uint32_t n,
				   uint32_t add)
{
	union llq_word old;
	uint64_t found;

	old.val = lab_load64(&q->word.val, LAB_RELAXED);
	for (;;) {
		if (!llq_has_space(q, old.prod, old.cons, room))
			llq_wait_space(c, q, &old, room);
		lab_count(c, LLQ_CNT_CAS_ATTEMPTS, 1);
		found = lab_cas64(&q->word.val, old.val, llq_claim(q, old, n, add), LAB_RELAXED);
		if (found == old.val)
			return old.prod;
		old.val = found;
	}
}

/* A single CAS try, without waiting for space; true with *prod set when it won. */
static inline bool llq_try_reserve(struct lab_cpu *c, struct llq *q, uint32_t n, uint32_t *prod)
{
	union llq_word old;

	old.val = lab_load64(&q->word.val, LAB_RELAXED);
	if (!llq_has_space(q, old.prod, old.cons, n))
		return false;
	lab_count(c, LLQ_CNT_CAS_ATTEMPTS, 1);
	*prod = old.prod;
	return lab_cas64(&q->word.val, old.val, llq_claim(q, old, n, 0), LAB_RELAXED) == old.val;
}

/* ---- entries ------------------------------------------------------------------------- */

/* The MSI target of a CMD_SYNC in its own slot: the low 32 bits of dw[0] (little-endian). */
static inline uint32_t *llq_msi_word(struct lab_cmd *slot)
{
	return (uint32_t *)(void *)&slot->dw[0];
}

static inline void llq_write_cmds(struct llq *q, uint32_t prod, const struct lab_cmd *cmds,
				  uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		lab_cmd_write(lab_q_slot(q->smmu, llq_inc(q, prod, i)), &cmds[i]);
}

/* With MSIPOLL the SMMU writes MSIDATA (0) over the CMD_SYNC's own first word. */
static inline void llq_write_sync(struct llq *q, uint32_t prod)
{
	struct lab_cmd *slot = lab_q_slot(q->smmu, prod);
	struct lab_cmd sync = q->msi ? lab_cmd_sync(LAB_SYNC_CS_IRQ, llq_msi_word(slot), 0)
				     : lab_cmd_sync(LAB_SYNC_CS_SEV, NULL, 0);

	lab_cmd_write(slot, &sync);
}

/* ---- the valid bitmap ------------------------------------------------------------------------ */

/* Bits [lo, hi) of a map word, 0 <= lo < hi <= 64. */
static inline uint64_t llq_genmask(uint32_t hi, uint32_t lo)
{
	uint64_t upto = hi == 64 ? ~0ull : (1ull << hi) - 1;

	return upto & (~0ull << lo);
}

/*
 * Walk [sprod, eprod) one map word at a time and either mark it valid (XOR: a valid bit
 * reads as the inverse of its lap's wrap bit, so one toggle per lap flips it from invalid to
 * valid) or wait until all of it is valid. A word holds min(64, nents) slots, so a range
 * that wraps within a small queue's only word is split at the lap boundary, and each part
 * is polled against its own lap's sense.
 */
static inline void llq_valid_range(struct lab_cpu *c, struct llq *q, uint32_t sprod, uint32_t eprod,
				   bool set)
{
	uint32_t p = llq_pos(q, sprod), e = llq_pos(q, eprod);
	uint32_t ewidx = llq_idx(q, e) / LLQ_MAP_WORD_BITS;
	uint32_t ebidx = llq_idx(q, e) % LLQ_MAP_WORD_BITS;

	while (p != e) {
		uint32_t swidx = llq_idx(q, p) / LLQ_MAP_WORD_BITS;
		uint32_t sbidx = llq_idx(q, p) % LLQ_MAP_WORD_BITS;
		uint32_t limit = swidx == ewidx && sbidx < ebidx ? ebidx : q->map_bits;
		uint64_t mask = llq_genmask(limit, sbidx);
		uint64_t *word = &q->valid_map[swidx];

		if (set) {
			lab_fetch_xor64(word, mask, LAB_RELAXED);
		} else {
			uint64_t want = (llq_wrp(q, p) ? 0 : ~0ull) & mask;
			uint64_t v;

			LAB_COND_LOAD64(c, word, v, (v & mask) == want, LAB_RELAXED);
		}
		p = llq_inc(q, p, limit - sbidx);
	}
}

/* dma_wmb() then the XOR: the device must see the entries once it sees them valid. */
static inline void llq_mark_valid(struct lab_cpu *c, struct llq *q, uint32_t sprod, uint32_t eprod)
{
	if (CMDQ_MUTANT_NO_VALID)
		return;
	if (!CMDQ_MUTANT_NO_WMB)
		lab_fence(LAB_RELEASE);
	llq_valid_range(c, q, sprod, eprod, true);
}

/* ---- the owner ------------------------------------------------------------------------------ */

/* Wait until the previous owner has published PROD exactly up to where our chain starts. */
static inline void llq_owner_wait_turn(struct lab_cpu *c, struct llq *q, uint32_t sprod)
{
	uint32_t want = llq_pos(q, sprod), v;

	LAB_COND_LOAD32(c, &q->owner_prod, v, v == want, LAB_ACQUIRE);
}

/* Clear OWNED: whoever reserves next owns the next chain. Returns the end of ours. */
static inline uint32_t llq_owner_stop_gathering(struct llq *q)
{
	return llq_pos(q, lab_fetch_andnot32(&q->word.prod, LLQ_OWNED, LAB_RELAXED));
}

/*
 * Wait for every gathered slot in [sprod, eprod) to be valid (slower gatherers may still be
 * writing), write PROD once for the whole chain and hand over to the next owner.
 */
static inline void llq_owner_publish(struct lab_cpu *c, struct llq *q, uint32_t sprod,
				     uint32_t eprod)
{
	llq_valid_range(c, q, sprod, eprod, false);
	/* Upstream relies on the control dependency of the polls; C11 wants it spelled out. */
	lab_fence(LAB_ACQUIRE);
	lab_smmu_write_prod(c, q->smmu, llq_pos(q, eprod));
	lab_store32(&q->owner_prod, llq_pos(q, eprod), LAB_RELEASE);
	lab_count(c, LLQ_CNT_OWNER_CHAINS, 1);
	lab_count(c, LLQ_CNT_CHAIN_CMDS, llq_dist(q, sprod, eprod));
}

/* ---- waiting for a CMD_SYNC ------------------------------------------------------------------ */

/*
 * The poll timeout. It fires only on the second pass that finds the deadline gone, so that a
 * CPU descheduled across the whole second (an overloaded host) still gives the device model,
 * which advances when a CPU spins, one look before it declares the CMD_SYNC lost.
 */
static inline bool llq_expired(struct lab_cpu *c, uint64_t deadline, uint32_t *late)
{
	return lab_now(c) >= deadline && ++*late > 1;
}

/* __arm_smmu_cmdq_poll_until_msi(): the SMMU zeroes the CMD_SYNC's first word. */
static inline int llq_wait_msi(struct lab_cpu *c, struct llq *q, uint32_t sync_prod, uint32_t *cons)
{
	uint32_t *word = llq_msi_word(lab_q_slot(q->smmu, sync_prod));
	uint64_t deadline = lab_now(c) + LLQ_POLL_TIMEOUT_NS;
	uint32_t v, late = 0;

	LAB_COND_LOAD32(c, word, v, v == 0 || llq_expired(c, deadline, &late), LAB_ACQUIRE);
	if (v) {
		/* Upstream would publish sync_prod here; a CONS we really saw is never ahead. */
		*cons = llq_pos(q, lab_smmu_read_cons(c, q->smmu));
		return -ETIMEDOUT;
	}
	*cons = llq_inc(q, llq_pos(q, sync_prod), 1);
	return 0;
}

/* One pass of the CONS poll: the shadow first (free), then the register. */
static inline bool llq_cons_pass(struct lab_cpu *c, struct llq *q, uint32_t shadow,
				 uint32_t sync_prod, uint32_t *cons, uint64_t deadline,
				 uint32_t *late)
{
	if (llq_consumed(q, sync_prod, shadow)) {
		*cons = shadow;
		return true;
	}
	/* A full readl: orders the lock read in llq_sync_release after it (upstream's comment). */
	*cons = llq_pos(q, lab_smmu_read_cons(c, q->smmu));
	return llq_consumed(q, sync_prod, *cons) || llq_expired(c, deadline, late);
}

/*
 * __arm_smmu_cmdq_poll_until_consumed(). CONS is a register, not a word a CPU writes, so the
 * spin-wait watches the shadow cons and reads the register in its condition.
 */
static inline int llq_wait_cons(struct lab_cpu *c, struct llq *q, uint32_t sync_prod,
				uint32_t *cons)
{
	uint64_t deadline = lab_now(c) + LLQ_POLL_TIMEOUT_NS;
	uint32_t v, late = 0;

	LAB_COND_LOAD32(c, &q->word.cons, v,
			llq_cons_pass(c, q, v, sync_prod, cons, deadline, &late), LAB_RELAXED);
	return llq_consumed(q, sync_prod, *cons) ? 0 : -ETIMEDOUT;
}

/* Leave the shared lock; the last holder out publishes the cons it saw to the shadow. */
static inline void llq_sync_release(struct llq *q, uint32_t cons)
{
	if (llq_shared_tryunlock(q))
		return;
	lab_store32(&q->word.cons, cons, LAB_RELAXED);
	llq_shared_unlock(q);
}

/* Wait for the CMD_SYNC at sync_prod (we hold the lock shared), then release the lock. */
static inline int llq_wait_sync(struct lab_cpu *c, struct llq *q, uint32_t sync_prod)
{
	uint32_t cons = 0;
	int rc;

	lab_phase(c, LLQ_PH_SYNC_WAIT);
	if (CMDQ_MUTANT_SKIP_SYNC_WAIT) {
		llq_shared_unlock(q);
		return 0;
	}
	rc = q->msi ? llq_wait_msi(c, q, sync_prod, &cons) : llq_wait_cons(c, q, sync_prod, &cons);
	llq_sync_release(q, cons);
	return rc;
}

/* ---- everything after a reservation -------------------------------------------------- */

/* Mark [sprod, eprod) valid and, as owner, publish the chain it starts. */
static inline void llq_publish(struct lab_cpu *c, struct llq *q, uint32_t sprod, uint32_t eprod,
			       bool owner)
{
	lab_phase(c, LLQ_PH_PUBLISH);
	llq_mark_valid(c, q, sprod, eprod);
	if (!owner)
		return;
	llq_owner_wait_turn(c, q, sprod);
	llq_owner_publish(c, q, sprod, llq_owner_stop_gathering(q));
}

/*
 * Steps 2-5 of arm_smmu_cmdq_issue_cmdlist() once n + sync slots have been reserved at
 * old_prod (the llq prod our CAS replaced: OWNED clear there makes us the owner).
 */
static inline int llq_finish(struct lab_cpu *c, struct llq *q, const struct lab_cmd *cmds,
			     uint32_t n, bool sync, uint32_t old_prod)
{
	bool owner = !(old_prod & LLQ_OWNED);
	uint32_t sprod = llq_pos(q, old_prod);
	uint32_t sync_prod = llq_inc(q, sprod, n);
	uint32_t eprod = llq_inc(q, sync_prod, sync);

	if (CMDQ_MUTANT_PUBLISH_EARLY)
		llq_publish(c, q, sprod, eprod, owner);
	lab_phase(c, LLQ_PH_WRITE);
	llq_write_cmds(q, sprod, cmds, n);
	if (sync) {
		llq_write_sync(q, sync_prod);
		/* Before our slots turn valid: the queue cannot lap our CMD_SYNC unseen. */
		llq_shared_lock(c, q);
		lab_count(c, LLQ_CNT_SYNCS_ISSUED, 1);
	}
	if (!CMDQ_MUTANT_PUBLISH_EARLY)
		llq_publish(c, q, sprod, eprod, owner);
	if (!sync)
		return 0;
	return llq_wait_sync(c, q, sync_prod);
}

#endif /* IOMMULAB_PLUGIN_LLQ_H */
