/* SPDX-License-Identifier: MIT */
/* smmu -- the simulated SMMUv3 command-queue consumer (see smmu.h for the model). */
#include "device/smmu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMMU_ERR_LEN 512
#define NEVER	     UINT64_MAX

/* A fetched CMD_SYNC: where it sits and when it completes. */
struct smmu_pending {
	uint32_t pos;
	uint64_t nth; /* the device's fetch count when it was fetched */
	uint64_t done;
};

/*
 * A fetched tagged command (the last of its issue) no CMD_SYNC has completed yet. A CMD_SYNC
 * covers those fetched before it (nth), however far back: commands issued without a sync
 * wait for the next one, which may come many queue lengths later.
 */
struct smmu_tagged {
	uint64_t nth;
	uint32_t cpu;
	uint64_t seq;
};

/*
 * One command queue: its registers, its ring and what the device knows of each entry in it.
 * Everything here is per queue; the fetch stage, the invalidation unit, the clock, the
 * counters and the trace's cap are the device's (struct smmu_dev).
 */
struct smmu_q {
	struct lab_smmu iface; /* priv: this queue */
	struct smmu_dev *dev;
	uint32_t idx;

	/* Registers, as the CPUs see them (atomics). */
	uint32_t prod_reg;
	uint32_t cons_reg;
	uint32_t fetch_reg; /* not a register: where fetching is, for the sim's agent */

	/* Consumer state, under the device's lock. */
	uint32_t prod;	     /* last PROD accepted */
	uint32_t fetch;	     /* next entry to fetch: cons <= fetch <= prod */
	uint32_t cons;	     /* next entry CONS has to move past */
	uint64_t t_ready;    /* model time the entry at fetch was published (idle queue) */
	uint64_t all_done;   /* model time everything fetched from it so far completed */
	uint64_t *retire_at; /* per ring slot: model time CONS may move past the fetched entry */
	struct smmu_pending *syncq; /* fetched CMD_SYNCs not yet completed, oldest first */
	uint32_t syncq_head, syncq_n;
	struct smmu_tagged *tagq; /* fetched tagged commands awaiting a CMD_SYNC, in order */
	uint32_t tagq_head, tagq_n, tagq_cap; /* a ring of tagq_cap (a power of two), grown */
	struct lab_cmd *shadow;		      /* each published entry as it was at its PROD write */
	struct lab_cmd *trace;
	uint64_t trace_n;
	bool trace_truncated;
};

struct smmu_dev {
	struct smmu_config cfg;
	const struct lab_clock *clk;
	uint32_t nents;
	uint32_t wrap_mask; /* IDX | WRP bits */
	struct smmu_q *q;
	uint32_t nq;
	uint32_t rr; /* arbitration: the queue served first at a tie */

	/* Shared consumer state, under lock. */
	uint32_t lock;
	uint64_t t_fetch;	    /* model time the fetch stage last took an entry */
	uint64_t *slot_busy;	    /* per slot of the invalidation unit: busy until then */
	uint32_t n_slots, slot_min; /* slot_min: the slot that frees first */
	uint64_t n_fetched, n_syncs_fetched;
	uint64_t events;   /* atomic: stores into memory and CONS moves (the sim's progress) */
	uint64_t next_due; /* atomic: model time of the next event; NEVER if idle */
	bool halted;

	struct smmu_stats stats; /* counters updated under lock, except cons_reads (atomic) */
	uint64_t *done_seq;	 /* per CPU, atomic */
	void (*stored)(void *arg, const void *p, size_t len); /* smmu_set_store_hook */
	void *stored_arg;

	uint32_t failed; /* atomic */
	char error[SMMU_ERR_LEN];

	pthread_t thread;
	bool thread_running;
	uint32_t stop; /* atomic */
};

/* ---- helpers ----------------------------------------------------------------------------- */

static void dev_lock(struct smmu_dev *dev)
{
	while (__atomic_exchange_n(&dev->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&dev->lock, __ATOMIC_RELAXED))
			lab_cpu_relax();
}

static bool dev_trylock(struct smmu_dev *dev)
{
	return !__atomic_load_n(&dev->lock, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&dev->lock, 1, __ATOMIC_ACQUIRE);
}

static void dev_unlock(struct smmu_dev *dev)
{
	__atomic_store_n(&dev->lock, 0, __ATOMIC_RELEASE);
}

static uint64_t dev_now(const struct smmu_dev *dev)
{
	return lab_clock_ns(dev->clk);
}

/*
 * Record the first violation, halt the device, tell the engine. Called under lock. With more
 * than one queue the message names the queue (CMDQ_ERR is per queue on the hardware too).
 */
__attribute__((format(printf, 2, 3))) static void violation(struct smmu_q *q, const char *fmt, ...)
{
	struct smmu_dev *dev = q->dev;
	va_list ap;
	int off = 0;

	dev->halted = true;
	__atomic_store_n(&dev->next_due, NEVER, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&dev->failed, 1, __ATOMIC_ACQ_REL))
		return;
	if (dev->nq > 1)
		off = snprintf(dev->error, sizeof(dev->error), "queue %u: ", q->idx);
	va_start(ap, fmt);
	vsnprintf(dev->error + off, sizeof(dev->error) - (size_t)off, fmt, ap);
	va_end(ap);
	if (dev->cfg.on_violation)
		dev->cfg.on_violation(dev->cfg.violation_arg);
}

static bool opcode_known(uint32_t op)
{
	switch (op) {
	case LAB_CMD_PREFETCH_CFG:
	case LAB_CMD_CFGI_STE:
	case LAB_CMD_CFGI_ALL:
	case LAB_CMD_CFGI_CD:
	case LAB_CMD_CFGI_CD_ALL:
	case LAB_CMD_TLBI_NH_ASID:
	case LAB_CMD_TLBI_NH_VA:
	case LAB_CMD_TLBI_EL2_ALL:
	case LAB_CMD_TLBI_S12_VMALL:
	case LAB_CMD_TLBI_NSNH_ALL:
	case LAB_CMD_ATC_INV:
	case LAB_CMD_PRI_RESP:
	case LAB_CMD_RESUME:
	case LAB_CMD_SYNC:
		return true;
	default:
		return false;
	}
}

/* A CMD_SYNC the fault injection makes late: every sync_delay_every-th one. */
static uint64_t sync_delay(const struct smmu_dev *dev)
{
	const struct scenario_faults *f = &dev->cfg.faults;

	if (!f->sync_delay_ns || dev->n_syncs_fetched % f->sync_delay_every)
		return 0;
	return f->sync_delay_ns;
}

static uint64_t service_ns(const struct smmu_dev *dev, const struct lab_cmd *cmd)
{
	const struct scenario_smmu *t = &dev->cfg.timing;

	switch (LAB_CMD_OPCODE(cmd->dw[0])) {
	case LAB_CMD_TLBI_NH_VA:
		return t->tlbi_va_ns;
	case LAB_CMD_TLBI_NH_ASID:
	case LAB_CMD_TLBI_EL2_ALL:
	case LAB_CMD_TLBI_S12_VMALL:
	case LAB_CMD_TLBI_NSNH_ALL:
		return t->tlbi_asid_ns;
	case LAB_CMD_CFGI_STE:
	case LAB_CMD_CFGI_ALL:
	case LAB_CMD_CFGI_CD:
	case LAB_CMD_CFGI_CD_ALL:
		return t->cfgi_ns;
	case LAB_CMD_ATC_INV:
		return t->atc_inv_ns;
	default:
		return t->other_ns;
	}
}

static uint32_t q_dist(const struct smmu_dev *dev, uint32_t from, uint32_t to)
{
	return (to - from) & dev->wrap_mask;
}

/* ---- tags (the harness's oracle) ----------------------------------------------------------- */

#define TAG_I_BITS   8
#define TAG_N_BITS   8
#define TAG_SEQ_BITS (52 - TAG_I_BITS - TAG_N_BITS)

struct lab_cmd smmu_tag_cmd(uint32_t cpu, uint64_t seq, uint32_t i, uint32_t n)
{
	uint64_t tag = (seq & ((1ull << TAG_SEQ_BITS) - 1)) << (TAG_I_BITS + TAG_N_BITS);

	tag |= (uint64_t)(i & 0xff) << TAG_N_BITS | ((n - 1) & 0xff);
	return lab_cmd_tlbi_nh_va((uint16_t)cpu, tag << 12, true);
}

bool smmu_untag_cmd(const struct lab_cmd *cmd, uint32_t *cpu, uint64_t *seq, uint32_t *i,
		    uint32_t *n)
{
	if (LAB_CMD_OPCODE(cmd->dw[0]) != LAB_CMD_TLBI_NH_VA)
		return false;
	uint64_t tag = cmd->dw[1] >> 12;
	*cpu = (uint32_t)(cmd->dw[0] >> 48);
	*n = (uint32_t)(tag & 0xff) + 1;
	*i = (uint32_t)((tag >> TAG_N_BITS) & 0xff);
	*seq = tag >> (TAG_I_BITS + TAG_N_BITS);
	return true;
}

uint64_t smmu_done_seq(const struct smmu_dev *dev, uint32_t cpu)
{
	return __atomic_load_n(&dev->done_seq[cpu], __ATOMIC_ACQUIRE);
}

/* ---- consumption ---------------------------------------------------------------------------- */

static uint32_t slot_of(const struct smmu_dev *dev, uint32_t p)
{
	return p & (dev->nents - 1);
}

/* The device has stored into CPU-visible memory: tell whoever asked (the sim's wake-ups). */
static inline void dev_stored(struct smmu_dev *dev, const void *p, size_t len)
{
	if (dev->stored)
		dev->stored(dev->stored_arg, p, len);
}

void smmu_set_store_hook(struct smmu_dev *dev, void (*fn)(void *arg, const void *p, size_t len),
			 void *arg)
{
	dev->stored = fn;
	dev->stored_arg = arg;
}

/* The word a CMD_SYNC's completion writes msidata to, or NULL (CS = NONE/SEV, or no MSI). */
static uint32_t *sync_msi_word(const struct smmu_dev *dev, const struct lab_cmd *pub,
			       uint32_t *msidata)
{
	if (lab_cmd_sync_cs(pub) != LAB_SYNC_CS_IRQ || !dev->cfg.msi)
		return NULL;
	*msidata = (uint32_t)(pub->dw[0] >> LAB_SYNC_MSIDATA_SHIFT);
	return (uint32_t *)(uintptr_t)(pub->dw[1] & LAB_SYNC_MSIADDR_MASK);
}

/* The slot still holds what was published in it, or the trial fails. Under lock. */
static bool slot_intact(struct smmu_q *q, uint32_t idx)
{
	struct lab_cmd *slot = &q->iface.ring[idx];
	struct lab_cmd cur = { { lab_load64(&slot->dw[0], LAB_ACQUIRE),
				 lab_load64(&slot->dw[1], LAB_RELAXED) } };
	const struct lab_cmd *pub = &q->shadow[idx];

	if (cur.dw[0] == pub->dw[0] && cur.dw[1] == pub->dw[1])
		return true;
	violation(q,
		  "slot %u rewritten after it was published and before it was consumed: "
		  "published %016" PRIx64 " %016" PRIx64 ", found %016" PRIx64 " %016" PRIx64
		  " (CONS 0x%x, PROD 0x%x)",
		  idx, pub->dw[0], pub->dw[1], cur.dw[0], cur.dw[1], q->cons, q->prod);
	return false;
}

/*
 * The earliest time the entry at q's fetch leaves the (shared) fetch stage; NEVER if none is
 * published: fetch_ns after the stage's last fetch or after the entry's PROD write.
 */
static uint64_t fetch_due(const struct smmu_dev *dev, const struct smmu_q *q)
{
	if (q->fetch == q->prod)
		return NEVER;
	uint64_t t =
		(dev->t_fetch > q->t_ready ? dev->t_fetch : q->t_ready) + dev->cfg.timing.fetch_ns;
	const struct lab_cmd *pub = &q->shadow[slot_of(dev, q->fetch)];

	/* In order: an invalidation waits for a free slot, and everything behind it waits too. */
	if (LAB_CMD_OPCODE(pub->dw[0]) != LAB_CMD_SYNC && dev->slot_busy[dev->slot_min] > t)
		t = dev->slot_busy[dev->slot_min];
	return t;
}

static void find_slot_min(struct smmu_dev *dev)
{
	uint32_t k = 0;

	for (uint32_t i = 1; i < dev->n_slots; i++)
		if (dev->slot_busy[i] < dev->slot_busy[k])
			k = i;
	dev->slot_min = k;
}

/*
 * Remember the fetched last command of cpu's op seq until a CMD_SYNC after it completes. The
 * ring doubles when full (unsynced commands pile up until the next sync); out of memory, the
 * device stops with a violation rather than forget a tag. Under lock.
 */
static void tag_fetched(struct smmu_q *q, uint32_t cpu, uint64_t seq)
{
	if (q->tagq_n == q->tagq_cap) {
		uint32_t cap = q->tagq_cap * 2;
		struct smmu_tagged *t = cap ? malloc(sizeof(*t) * cap) : NULL;

		if (!t) {
			violation(q,
				  "out of memory for the oracle's %u tagged commands awaiting a "
				  "CMD_SYNC",
				  q->tagq_n);
			return;
		}
		for (uint32_t k = 0; k < q->tagq_n; k++)
			t[k] = q->tagq[(q->tagq_head + k) & (q->tagq_cap - 1)];
		free(q->tagq);
		q->tagq = t;
		q->tagq_head = 0;
		q->tagq_cap = cap;
	}
	q->tagq[(q->tagq_head + q->tagq_n++) & (q->tagq_cap - 1)] =
		(struct smmu_tagged){ .nth = q->dev->n_fetched, .cpu = cpu, .seq = seq };
}

/*
 * The entry at q's fetch leaves the fetch stage at t: checked, recorded, and either dispatched
 * to the invalidation unit (its slot is poisoned: the device has read it, and CONS may pass it
 * from now on) or, a CMD_SYNC, queued to complete once everything before it in its queue has.
 * Under lock.
 */
static void fetch_one(struct smmu_q *q, uint64_t t)
{
	struct smmu_dev *dev = q->dev;
	uint32_t idx = slot_of(dev, q->fetch);
	struct lab_cmd *slot = &q->iface.ring[idx];
	const struct lab_cmd *pub = &q->shadow[idx];
	uint32_t op = LAB_CMD_OPCODE(pub->dw[0]);

	if (dev->cfg.faults.illegal_cmd_at &&
	    dev->n_fetched + 1 == dev->cfg.faults.illegal_cmd_at) {
		violation(q,
			  "slot %u: the device rejected command %" PRIu64
			  " (opcode 0x%02x) as illegal "
			  "and stopped (fault injected by [faults] illegal_cmd_at; CONS 0x%x, PROD "
			  "0x%x)",
			  idx, dev->n_fetched + 1, op, q->cons, q->prod);
		return;
	}
	if (!slot_intact(q, idx))
		return;
	dev->n_fetched++;
	dev->t_fetch = t;
	dev->rr = q->idx + 1 == dev->nq ? 0 : q->idx + 1;
	if (op == LAB_CMD_SYNC) {
		uint32_t msidata;
		uint64_t done = (t > q->all_done ? t : q->all_done) + dev->cfg.timing.sync_ns +
				sync_delay(dev);
		struct smmu_pending *ps =
			&q->syncq[(q->syncq_head + q->syncq_n++) & (dev->nents - 1)];

		dev->n_syncs_fetched++;
		ps->pos = q->fetch;
		ps->nth = dev->n_fetched;
		ps->done = done;
		q->all_done = done;
		q->retire_at[idx] = done;
		if (sync_msi_word(dev, pub, &msidata))
			q->retire_at[idx] += dev->cfg.timing.msi_cons_ns;
	} else {
		uint64_t done = t + service_ns(dev, pub);

		dev->slot_busy[dev->slot_min] = done;
		find_slot_min(dev);
		if (done > q->all_done)
			q->all_done = done;
		q->retire_at[idx] = t;
		lab_store64(&slot->dw[1], 0, LAB_RELAXED);
		lab_store64(&slot->dw[0], 0, LAB_RELEASE);
		dev_stored(dev, slot, sizeof(*slot));
		__atomic_add_fetch(&dev->events, 1, __ATOMIC_RELAXED);

		/* Done for the oracle only when a CMD_SYNC after it completes: that is the
		 * guarantee a strategy's sync gives, not the fetch (which CONS shows). */
		uint32_t cpu, i, n;
		uint64_t seq;
		if (smmu_untag_cmd(pub, &cpu, &seq, &i, &n) && cpu < dev->cfg.ncpus && i == n - 1)
			tag_fetched(q, cpu, seq);
	}
	if (q->trace) {
		if (q->trace_n < dev->cfg.trace_cap)
			q->trace[q->trace_n++] = *pub;
		else
			q->trace_truncated = true;
	}
	q->fetch = (q->fetch + 1) & dev->wrap_mask;
	__atomic_store_n(&q->fetch_reg, q->fetch, __ATOMIC_RELEASE);
}

/*
 * The oldest pending CMD_SYNC of q completes: its slot is poisoned and its MSI written (into
 * its own slot, the kernel's MSIPOLL, as the one final store), before CONS moves past it
 * (retire_one, msi_cons_ns later). Under lock.
 */
static void complete_sync(struct smmu_q *q)
{
	struct smmu_dev *dev = q->dev;
	struct smmu_pending *ps = &q->syncq[q->syncq_head];
	uint32_t ps_pos = ps->pos, idx = slot_of(dev, ps_pos);
	struct lab_cmd *slot = &q->iface.ring[idx];
	uint32_t msidata = 0;
	uint32_t *msi_word = sync_msi_word(dev, &q->shadow[idx], &msidata);

	q->syncq_head = (q->syncq_head + 1) & (dev->nents - 1);
	q->syncq_n--;
	if (!slot_intact(q, idx))
		return;
	/* Every tagged command before this CMD_SYNC in its queue has completed: published before
	 * the MSI, which lets the waiter return. */
	while (q->tagq_n) {
		struct smmu_tagged *tg = &q->tagq[q->tagq_head];
		if (tg->nth > ps->nth)
			break; /* fetched after it */
		/* A CPU's seqs only grow, but with several queues it may have issued on another
		 * one since: never move its done mark back. */
		if (tg->seq > __atomic_load_n(&dev->done_seq[tg->cpu], __ATOMIC_RELAXED))
			__atomic_store_n(&dev->done_seq[tg->cpu], tg->seq, __ATOMIC_RELEASE);
		q->tagq_head = (q->tagq_head + 1) & (q->tagq_cap - 1);
		q->tagq_n--;
	}
	lab_store64(&slot->dw[1], 0, LAB_RELAXED);
	if (msi_word == (uint32_t *)&slot->dw[0]) {
		lab_store64(&slot->dw[0], msidata, LAB_RELEASE);
	} else {
		lab_store64(&slot->dw[0], 0, LAB_RELEASE);
		if (msi_word) {
			lab_store32(msi_word, msidata, LAB_RELEASE);
			dev_stored(dev, msi_word, sizeof(*msi_word));
		}
	}
	dev_stored(dev, slot, sizeof(*slot));
	__atomic_add_fetch(&dev->events, 1, __ATOMIC_RELAXED);
	dev->stats.syncs++;
	dev->stats.msi_writes += msi_word != NULL;
}

/* CONS of q moves past the entry at cons (fetched; a CMD_SYNC also completed). Under lock. */
static void retire_one(struct smmu_q *q)
{
	struct smmu_dev *dev = q->dev;

	dev->stats.consumed++;
	q->cons = (q->cons + 1) & dev->wrap_mask;
	__atomic_store_n(&q->cons_reg, q->cons, __ATOMIC_RELEASE);
	__atomic_add_fetch(&dev->events, 1, __ATOMIC_RELAXED);
}

/*
 * Act on every event due by now, in time order: CMD_SYNC completions (MSI writes) first, then
 * CONS moves, then fetches, so at equal times an MSI always lands before CONS passes its
 * CMD_SYNC. Between queues, fetches are arbitrated earliest-due first and, at equal times,
 * round robin from the queue after the last one served. Under lock.
 */
static void advance_locked(struct smmu_dev *dev, uint64_t now)
{
	while (!dev->halted) {
		uint64_t tm = NEVER, tr = NEVER, tf = NEVER;
		struct smmu_q *qm = NULL, *qr = NULL, *qf = NULL;

		for (uint32_t k = 0, i = dev->rr; k < dev->nq;
		     k++, i = i + 1 == dev->nq ? 0 : i + 1) {
			struct smmu_q *q = &dev->q[i];
			uint64_t t;

			if (q->syncq_n && (t = q->syncq[q->syncq_head].done) < tm) {
				tm = t;
				qm = q;
			}
			if (q->cons != q->fetch && (t = q->retire_at[slot_of(dev, q->cons)]) < tr) {
				tr = t;
				qr = q;
			}
			if ((t = fetch_due(dev, q)) < tf) {
				tf = t;
				qf = q;
			}
		}
		uint64_t t = tm < tr ? tm : tr;

		t = tf < t ? tf : t;
		if (t > now) {
			__atomic_store_n(&dev->next_due, t, __ATOMIC_RELAXED);
			return;
		}
		if (tm == t)
			complete_sync(qm);
		else if (tr == t)
			retire_one(qr);
		else
			fetch_one(qf, t);
	}
	__atomic_store_n(&dev->next_due, NEVER, __ATOMIC_RELAXED);
}

void smmu_advance(struct smmu_dev *dev)
{
	dev_lock(dev);
	advance_locked(dev, dev_now(dev));
	dev_unlock(dev);
}

void smmu_idle(struct lab_cpu *c, void *arg)
{
	struct smmu_dev *dev = arg;
	uint64_t now = lab_now(c);

	if (now < __atomic_load_n(&dev->next_due, __ATOMIC_RELAXED) || !dev_trylock(dev))
		return;
	advance_locked(dev, now);
	dev_unlock(dev);
}

/* ---- registers ------------------------------------------------------------------------------ */

/* Check and snapshot entries [from, to) of q being published. Under lock. */
static void publish_locked(struct smmu_q *q, uint32_t from, uint32_t to)
{
	struct smmu_dev *dev = q->dev;

	/* Pairs with the writers' release (dma_wmb()) before they marked their entries valid. */
	lab_fence(LAB_ACQUIRE);
	for (uint32_t p = from; p != to && !dev->halted; p = (p + 1) & dev->wrap_mask) {
		uint32_t idx = p & (dev->nents - 1);
		struct lab_cmd *slot = &q->iface.ring[idx];
		struct lab_cmd e = { { lab_load64(&slot->dw[0], LAB_RELAXED),
				       lab_load64(&slot->dw[1], LAB_RELAXED) } };
		uint32_t op = LAB_CMD_OPCODE(e.dw[0]);

		if (op == 0)
			violation(q,
				  "slot %u (index 0x%x) published before it was written: it still "
				  "holds a consumed entry (PROD 0x%x -> 0x%x, CONS 0x%x)",
				  idx, p, from, to, q->cons);
		else if (!opcode_known(op))
			violation(q,
				  "slot %u (index 0x%x): unknown opcode 0x%02x (%016" PRIx64
				  " %016" PRIx64 ")",
				  idx, p, op, e.dw[0], e.dw[1]);
		q->shadow[idx] = e;
	}
}

uint64_t smmu_prod_write_ns(const struct smmu_dev *dev)
{
	return dev->cfg.timing.prod_write_ns;
}

/* PROD written at now. Under lock. */
static void write_prod_locked(struct smmu_q *q, uint32_t prod, uint64_t now)
{
	struct smmu_dev *dev = q->dev;

	dev->stats.prod_writes++;
	if (dev->halted)
		return;
	advance_locked(dev, now);

	uint32_t old = q->prod;
	if (prod & ~dev->wrap_mask) {
		violation(q,
			  "PROD write 0x%x has bits outside IDX|WRP (mask 0x%x): OVF/owner "
			  "flag not stripped?",
			  prod, dev->wrap_mask);
		return;
	}
	uint32_t back = q_dist(dev, prod, old);
	if (back && back < dev->nents) { /* a move of exactly nents is a full queue */
		violation(q, "PROD moved backwards: 0x%x -> 0x%x (CONS 0x%x)", old, prod, q->cons);
		return;
	}
	if (q_dist(dev, q->cons, prod) > dev->nents) {
		violation(q,
			  "PROD 0x%x overruns CONS 0x%x: %u entries outstanding in a queue of %u",
			  prod, q->cons, q_dist(dev, q->cons, prod), dev->nents);
		return;
	}
	publish_locked(q, old, prod);
	if (dev->halted)
		return;
	if (q->fetch == old)
		q->t_ready = now; /* idle until now: fetching starts at the PROD write */
	q->prod = prod;
	__atomic_store_n(&q->prod_reg, prod, __ATOMIC_RELEASE);
	advance_locked(dev, now);
}

void smmu_q_write_prod_at(struct lab_smmu *s, uint32_t prod, uint64_t now)
{
	struct smmu_q *q = s->priv;

	dev_lock(q->dev);
	write_prod_locked(q, prod, now);
	dev_unlock(q->dev);
}

static void smmu_write_prod(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod)
{
	struct smmu_q *q = s->priv;

	lab_delay_ns(c, q->dev->cfg.timing.prod_write_ns);
	dev_lock(q->dev);
	write_prod_locked(q, prod, lab_now(c));
	dev_unlock(q->dev);
}

static uint32_t smmu_read_cons(struct lab_cpu *c, struct lab_smmu *s)
{
	struct smmu_q *q = s->priv;
	struct smmu_dev *dev = q->dev;

	lab_delay_ns(c, dev->cfg.timing.cons_read_ns);
	__atomic_add_fetch(&dev->stats.cons_reads, 1, __ATOMIC_RELAXED);
	if (dev->cfg.mode == DEVICE_INLINE)
		smmu_idle(c, dev);
	return __atomic_load_n(&q->cons_reg, __ATOMIC_ACQUIRE);
}

/* lab_smmu.queue: every view reaches every queue. NULL past the last. */
static struct lab_smmu *smmu_queue(struct lab_smmu *s, uint32_t i)
{
	struct smmu_dev *dev = ((struct smmu_q *)s->priv)->dev;

	return i < dev->nq ? &dev->q[i].iface : NULL;
}

/* ---- thread mode ---------------------------------------------------------------------------- */

static void *consumer_thread(void *arg)
{
	struct smmu_dev *dev = arg;

	while (!__atomic_load_n(&dev->stop, __ATOMIC_RELAXED)) {
		uint64_t now = dev_now(dev);
		if (now >= __atomic_load_n(&dev->next_due, __ATOMIC_RELAXED) && dev_trylock(dev)) {
			advance_locked(dev, now);
			dev_unlock(dev);
		}
		lab_cpu_relax();
	}
	return NULL;
}

int smmu_start(struct smmu_dev *dev)
{
	if (dev->cfg.mode != DEVICE_THREAD || dev->thread_running)
		return 0;
	__atomic_store_n(&dev->stop, 0, __ATOMIC_RELAXED);
	int rc = pthread_create(&dev->thread, NULL, consumer_thread, dev);
	if (rc)
		return -rc;
	dev->thread_running = true;
	return 0;
}

void smmu_stop(struct smmu_dev *dev)
{
	if (!dev->thread_running)
		return;
	__atomic_store_n(&dev->stop, 1, __ATOMIC_RELAXED);
	pthread_join(dev->thread, NULL);
	dev->thread_running = false;
}

/* ---- life cycle ----------------------------------------------------------------------------- */

static int q_init(struct smmu_dev *dev, struct smmu_q *q, uint32_t idx)
{
	const struct smmu_config *cfg = &dev->cfg;

	q->dev = dev;
	q->idx = idx;
	q->iface.struct_size = sizeof(q->iface);
	q->iface.shift = cfg->shift;
	q->iface.msi = cfg->msi;
	q->iface.read_cons = smmu_read_cons;
	q->iface.write_prod = smmu_write_prod;
	q->iface.priv = q;
	q->iface.nqueues = dev->nq;
	q->iface.qidx = idx;
	q->iface.queue = smmu_queue;
	q->iface.ring = aligned_alloc(LAB_CACHE_LINE, sizeof(struct lab_cmd) * dev->nents);
	q->shadow = calloc(dev->nents, sizeof(struct lab_cmd));
	q->retire_at = calloc(dev->nents, sizeof(uint64_t));
	q->syncq = calloc(dev->nents, sizeof(*q->syncq));
	q->tagq_cap = dev->nents;
	q->tagq = calloc(q->tagq_cap, sizeof(*q->tagq));
	if (!q->iface.ring || !q->shadow || !q->retire_at || !q->syncq || !q->tagq)
		return -ENOMEM;
	/* An all-zero ring reads as "consumed" everywhere: nothing has been written yet. */
	memset(q->iface.ring, 0, sizeof(struct lab_cmd) * dev->nents);
	if (cfg->trace_cap && !(q->trace = malloc(sizeof(struct lab_cmd) * cfg->trace_cap)))
		return -ENOMEM;
	return 0;
}

static void q_fini(struct smmu_q *q)
{
	free(q->iface.ring);
	free(q->shadow);
	free(q->retire_at);
	free(q->syncq);
	free(q->tagq);
	free(q->trace);
}

struct smmu_dev *smmu_new(const struct smmu_config *cfg, const struct lab_clock *clk, char *err,
			  size_t err_len)
{
	struct smmu_dev *dev;
	uint32_t nq = cfg->timing.queues ? (uint32_t)cfg->timing.queues : 1;

	if (cfg->shift < 1 || cfg->shift > 24) {
		snprintf(err, err_len, "queue_shift %u not in [1, 24]", cfg->shift);
		return NULL;
	}
	if (nq > SMMU_MAX_QUEUES) {
		snprintf(err, err_len, "queues %u not in [1, %u]", nq, SMMU_MAX_QUEUES);
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		goto err_oom;
	dev->cfg = *cfg;
	dev->clk = clk;
	dev->nents = 1u << cfg->shift;
	dev->wrap_mask = (dev->nents << 1) - 1;
	dev->next_due = NEVER;
	dev->done_seq = calloc(cfg->ncpus ? cfg->ncpus : 1, sizeof(uint64_t));
	dev->n_slots = cfg->timing.inv_slots ? (uint32_t)cfg->timing.inv_slots : 1;
	dev->slot_busy = calloc(dev->n_slots, sizeof(uint64_t));
	dev->q = calloc(nq, sizeof(*dev->q));
	if (!dev->done_seq || !dev->slot_busy || !dev->q)
		goto err_free;
	dev->nq = nq;
	for (uint32_t i = 0; i < nq; i++)
		if (q_init(dev, &dev->q[i], i))
			goto err_free;
	return dev;

err_free:
	smmu_free(dev);
err_oom:
	snprintf(err, err_len, "out of memory for %u queue(s) of %u entries", nq, 1u << cfg->shift);
	return NULL;
}

void smmu_free(struct smmu_dev *dev)
{
	if (!dev)
		return;
	smmu_stop(dev);
	for (uint32_t i = 0; dev->q && i < dev->nq; i++)
		q_fini(&dev->q[i]);
	free(dev->q);
	free(dev->done_seq);
	free(dev->slot_busy);
	free(dev);
}

struct lab_smmu *smmu_iface(struct smmu_dev *dev)
{
	return &dev->q[0].iface;
}

uint32_t smmu_nqueues(const struct smmu_dev *dev)
{
	return dev->nq;
}

struct lab_smmu *smmu_q_iface(struct smmu_dev *dev, uint32_t i)
{
	return &dev->q[i].iface;
}

uint32_t smmu_fetched(const struct smmu_dev *dev)
{
	return smmu_q_fetched(dev, 0);
}

uint32_t smmu_q_fetched(const struct smmu_dev *dev, uint32_t i)
{
	return __atomic_load_n(&dev->q[i].fetch_reg, __ATOMIC_ACQUIRE);
}

uint64_t smmu_events(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->events, __ATOMIC_RELAXED);
}

uint64_t smmu_next_due(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->next_due, __ATOMIC_RELAXED);
}

const char *smmu_error(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->failed, __ATOMIC_ACQUIRE) ? dev->error : NULL;
}

void smmu_cpus_unwound(struct smmu_dev *dev)
{
	dev->halted = true;
	__atomic_store_n(&dev->next_due, NEVER, __ATOMIC_RELAXED);
	dev_unlock(dev);
}

/*
 * The counters the device's lock guards, copied under it; cons_reads is counted by CONS reads
 * outside the lock (atomically), so it is read atomically, never by the struct copy (a data
 * race with a CPU reading CONS meanwhile: ThreadSanitizer, snapshot at measurement start).
 */
void smmu_get_stats(struct smmu_dev *dev, struct smmu_stats *out)
{
	dev_lock(dev);
	out->consumed = dev->stats.consumed;
	out->syncs = dev->stats.syncs;
	out->msi_writes = dev->stats.msi_writes;
	out->prod_writes = dev->stats.prod_writes;
	dev_unlock(dev);
	out->cons_reads = __atomic_load_n(&dev->stats.cons_reads, __ATOMIC_RELAXED);
}

uint32_t smmu_prod(const struct smmu_dev *dev)
{
	return smmu_q_prod(dev, 0);
}

uint32_t smmu_cons(const struct smmu_dev *dev)
{
	return smmu_q_cons(dev, 0);
}

uint32_t smmu_q_prod(const struct smmu_dev *dev, uint32_t i)
{
	return __atomic_load_n(&dev->q[i].prod_reg, __ATOMIC_ACQUIRE);
}

uint32_t smmu_q_cons(const struct smmu_dev *dev, uint32_t i)
{
	return __atomic_load_n(&dev->q[i].cons_reg, __ATOMIC_ACQUIRE);
}

const struct lab_cmd *smmu_trace(const struct smmu_dev *dev, uint64_t *n, bool *truncated)
{
	return smmu_q_trace(dev, 0, n, truncated);
}

const struct lab_cmd *smmu_q_trace(const struct smmu_dev *dev, uint32_t i, uint64_t *n,
				   bool *truncated)
{
	*n = dev->q[i].trace_n;
	*truncated = dev->q[i].trace_truncated;
	return dev->q[i].trace;
}
