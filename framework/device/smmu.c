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
#define NEVER UINT64_MAX

struct smmu_dev {
	struct lab_smmu iface;
	struct smmu_config cfg;
	const struct lab_clock *clk;
	uint32_t nents;
	uint32_t wrap_mask; /* IDX | WRP bits */

	/* Registers, as the CPUs see them (atomics). */
	uint32_t prod_reg;
	uint32_t cons_reg;

	/* Consumer state, under lock. */
	uint32_t lock;
	uint32_t prod;	   /* last PROD accepted */
	uint32_t cons;	   /* next entry to consume */
	uint64_t t_free;   /* model time the entry at cons started being serviced */
	uint64_t next_due; /* atomic: model time the entry at cons finishes; NEVER if idle */
	struct lab_cmd *shadow; /* each published entry as it was at its PROD write */
	bool halted;

	struct smmu_stats stats; /* counters updated under lock, except cons_reads (atomic) */
	uint64_t *done_seq;	 /* per CPU, atomic */
	struct lab_cmd *trace;
	uint64_t trace_n;
	bool trace_truncated;

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

/* Record the first violation, halt the device, tell the engine. Called under lock. */
__attribute__((format(printf, 2, 3))) static void violation(struct smmu_dev *dev,
							     const char *fmt, ...)
{
	va_list ap;

	dev->halted = true;
	__atomic_store_n(&dev->next_due, NEVER, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&dev->failed, 1, __ATOMIC_ACQ_REL))
		return;
	va_start(ap, fmt);
	vsnprintf(dev->error, sizeof(dev->error), fmt, ap);
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

	if (!f->sync_delay_ns || (dev->stats.syncs + 1) % f->sync_delay_every)
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
	case LAB_CMD_SYNC:
		return t->sync_ns + sync_delay(dev);
	default:
		return t->other_ns;
	}
}

static uint32_t q_dist(const struct smmu_dev *dev, uint32_t from, uint32_t to)
{
	return (to - from) & dev->wrap_mask;
}

/* ---- tags (the harness's oracle) ----------------------------------------------------------- */

#define TAG_I_BITS 8
#define TAG_N_BITS 8
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

/*
 * Act on one consumed entry: poison the slot, complete a CMD_SYNC, record tags. The slot is
 * poisoned before anything that lets a CPU reuse it (the MSI write, CONS), so the poison can
 * never land on a newer entry.
 */
static void consume_one(struct smmu_dev *dev, uint32_t idx)
{
	struct lab_cmd *slot = &dev->iface.ring[idx];
	struct lab_cmd cur = { { lab_load64(&slot->dw[0], LAB_ACQUIRE),
				 lab_load64(&slot->dw[1], LAB_RELAXED) } };
	const struct lab_cmd *pub = &dev->shadow[idx];
	uint32_t op = LAB_CMD_OPCODE(pub->dw[0]);
	uint32_t *msi_word = NULL;
	uint32_t msidata = 0;

	if (dev->cfg.faults.illegal_cmd_at && dev->stats.consumed + 1 == dev->cfg.faults.illegal_cmd_at) {
		violation(dev,
			  "slot %u: the device rejected command %" PRIu64 " (opcode 0x%02x) as illegal "
			  "and stopped (fault injected by [faults] illegal_cmd_at; CONS 0x%x, PROD 0x%x)",
			  idx, dev->stats.consumed + 1, op, dev->cons, dev->prod);
		return;
	}
	if (cur.dw[0] != pub->dw[0] || cur.dw[1] != pub->dw[1]) {
		violation(dev,
			  "slot %u rewritten after it was published and before it was consumed: "
			  "published %016" PRIx64 " %016" PRIx64 ", found %016" PRIx64
			  " %016" PRIx64 " (CONS 0x%x, PROD 0x%x)",
			  idx, pub->dw[0], pub->dw[1], cur.dw[0], cur.dw[1], dev->cons, dev->prod);
		return;
	}
	if (op == LAB_CMD_SYNC && lab_cmd_sync_cs(pub) == LAB_SYNC_CS_IRQ && dev->cfg.msi) {
		msi_word = (uint32_t *)(uintptr_t)(pub->dw[1] & LAB_SYNC_MSIADDR_MASK);
		msidata = (uint32_t)(pub->dw[0] >> LAB_SYNC_MSIDATA_SHIFT);
	}

	lab_store64(&slot->dw[1], 0, LAB_RELAXED);
	if (msi_word == (uint32_t *)&slot->dw[0]) {
		/* MSI into the CMD_SYNC's own slot (the kernel's MSIPOLL): one final store. */
		lab_store64(&slot->dw[0], msidata, LAB_RELEASE);
	} else {
		lab_store64(&slot->dw[0], 0, LAB_RELEASE);
		if (msi_word)
			lab_store32(msi_word, msidata, LAB_RELEASE);
	}

	dev->stats.consumed++;
	if (op == LAB_CMD_SYNC) {
		dev->stats.syncs++;
		dev->stats.msi_writes += msi_word != NULL;
	}
	uint32_t cpu, i, n;
	uint64_t seq;
	if (smmu_untag_cmd(pub, &cpu, &seq, &i, &n) && cpu < dev->cfg.ncpus && i == n - 1)
		__atomic_store_n(&dev->done_seq[cpu], seq, __ATOMIC_RELEASE);
	if (dev->trace) {
		if (dev->trace_n < dev->cfg.trace_cap)
			dev->trace[dev->trace_n++] = *pub;
		else
			dev->trace_truncated = true;
	}
}

/* Consume every entry whose service has finished by now. Under lock. */
static void advance_locked(struct smmu_dev *dev, uint64_t now)
{
	while (!dev->halted && dev->cons != dev->prod) {
		uint32_t idx = dev->cons & (dev->nents - 1);
		uint64_t done = dev->t_free + service_ns(dev, &dev->shadow[idx]);

		if (done > now) {
			__atomic_store_n(&dev->next_due, done, __ATOMIC_RELAXED);
			return;
		}
		consume_one(dev, idx);
		if (dev->halted)
			return;
		dev->t_free = done;
		dev->cons = (dev->cons + 1) & dev->wrap_mask;
		__atomic_store_n(&dev->cons_reg, dev->cons, __ATOMIC_RELEASE);
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

/* Check and snapshot entries [from, to) being published. Under lock. */
static void publish_locked(struct smmu_dev *dev, uint32_t from, uint32_t to)
{
	/* Pairs with the writers' release (dma_wmb()) before they marked their entries valid. */
	lab_fence(LAB_ACQUIRE);
	for (uint32_t p = from; p != to && !dev->halted; p = (p + 1) & dev->wrap_mask) {
		uint32_t idx = p & (dev->nents - 1);
		struct lab_cmd *slot = &dev->iface.ring[idx];
		struct lab_cmd e = { { lab_load64(&slot->dw[0], LAB_RELAXED),
				       lab_load64(&slot->dw[1], LAB_RELAXED) } };
		uint32_t op = LAB_CMD_OPCODE(e.dw[0]);

		if (op == 0)
			violation(dev,
				  "slot %u (index 0x%x) published before it was written: it still "
				  "holds a consumed entry (PROD 0x%x -> 0x%x, CONS 0x%x)",
				  idx, p, from, to, dev->cons);
		else if (!opcode_known(op))
			violation(dev, "slot %u (index 0x%x): unknown opcode 0x%02x (%016" PRIx64
				       " %016" PRIx64 ")",
				  idx, p, op, e.dw[0], e.dw[1]);
		dev->shadow[idx] = e;
	}
}

static void smmu_write_prod(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod)
{
	struct smmu_dev *dev = s->priv;

	lab_delay_ns(c, dev->cfg.timing.prod_write_ns);
	dev_lock(dev);
	uint64_t now = lab_now(c);
	dev->stats.prod_writes++;
	if (dev->halted)
		goto out;
	advance_locked(dev, now);

	uint32_t old = dev->prod;
	if (prod & ~dev->wrap_mask) {
		violation(dev, "PROD write 0x%x has bits outside IDX|WRP (mask 0x%x): OVF/owner "
			       "flag not stripped?",
			  prod, dev->wrap_mask);
		goto out;
	}
	uint32_t back = q_dist(dev, prod, old);
	if (back && back < dev->nents) { /* a move of exactly nents is a full queue */
		violation(dev, "PROD moved backwards: 0x%x -> 0x%x (CONS 0x%x)", old, prod,
			  dev->cons);
		goto out;
	}
	if (q_dist(dev, dev->cons, prod) > dev->nents) {
		violation(dev, "PROD 0x%x overruns CONS 0x%x: %u entries outstanding in a queue of %u",
			  prod, dev->cons, q_dist(dev, dev->cons, prod), dev->nents);
		goto out;
	}
	publish_locked(dev, old, prod);
	if (dev->halted)
		goto out;
	if (dev->cons == old && dev->t_free < now)
		dev->t_free = now; /* idle until now: service starts at the PROD write */
	dev->prod = prod;
	__atomic_store_n(&dev->prod_reg, prod, __ATOMIC_RELEASE);
	advance_locked(dev, now);
out:
	dev_unlock(dev);
}

static uint32_t smmu_read_cons(struct lab_cpu *c, struct lab_smmu *s)
{
	struct smmu_dev *dev = s->priv;

	lab_delay_ns(c, dev->cfg.timing.cons_read_ns);
	__atomic_add_fetch(&dev->stats.cons_reads, 1, __ATOMIC_RELAXED);
	if (dev->cfg.mode == DEVICE_INLINE)
		smmu_idle(c, dev);
	return __atomic_load_n(&dev->cons_reg, __ATOMIC_ACQUIRE);
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

struct smmu_dev *smmu_new(const struct smmu_config *cfg, const struct lab_clock *clk, char *err,
			  size_t err_len)
{
	struct smmu_dev *dev;

	if (cfg->shift < 1 || cfg->shift > 24) {
		snprintf(err, err_len, "queue_shift %u not in [1, 24]", cfg->shift);
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
	dev->iface.struct_size = sizeof(dev->iface);
	dev->iface.shift = cfg->shift;
	dev->iface.msi = cfg->msi;
	dev->iface.read_cons = smmu_read_cons;
	dev->iface.write_prod = smmu_write_prod;
	dev->iface.priv = dev;
	dev->iface.ring = aligned_alloc(LAB_CACHE_LINE, sizeof(struct lab_cmd) * dev->nents);
	dev->shadow = calloc(dev->nents, sizeof(struct lab_cmd));
	dev->done_seq = calloc(cfg->ncpus ? cfg->ncpus : 1, sizeof(uint64_t));
	if (!dev->iface.ring || !dev->shadow || !dev->done_seq)
		goto err_free;
	/* An all-zero ring reads as "consumed" everywhere: nothing has been written yet. */
	memset(dev->iface.ring, 0, sizeof(struct lab_cmd) * dev->nents);
	if (cfg->trace_cap) {
		dev->trace = malloc(sizeof(struct lab_cmd) * cfg->trace_cap);
		if (!dev->trace)
			goto err_free;
	}
	return dev;

err_free:
	smmu_free(dev);
err_oom:
	snprintf(err, err_len, "out of memory for a queue of %u entries", 1u << cfg->shift);
	return NULL;
}

void smmu_free(struct smmu_dev *dev)
{
	if (!dev)
		return;
	smmu_stop(dev);
	free(dev->iface.ring);
	free(dev->shadow);
	free(dev->done_seq);
	free(dev->trace);
	free(dev);
}

struct lab_smmu *smmu_iface(struct smmu_dev *dev)
{
	return &dev->iface;
}

uint64_t smmu_next_due(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->next_due, __ATOMIC_RELAXED);
}

const char *smmu_error(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->failed, __ATOMIC_ACQUIRE) ? dev->error : NULL;
}

void smmu_get_stats(struct smmu_dev *dev, struct smmu_stats *out)
{
	dev_lock(dev);
	*out = dev->stats;
	dev_unlock(dev);
	out->cons_reads = __atomic_load_n(&dev->stats.cons_reads, __ATOMIC_RELAXED);
}

uint32_t smmu_prod(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->prod_reg, __ATOMIC_ACQUIRE);
}

uint32_t smmu_cons(const struct smmu_dev *dev)
{
	return __atomic_load_n(&dev->cons_reg, __ATOMIC_ACQUIRE);
}

const struct lab_cmd *smmu_trace(const struct smmu_dev *dev, uint64_t *n, bool *truncated)
{
	*n = dev->trace_n;
	*truncated = dev->trace_truncated;
	return dev->trace;
}
