/* SPDX-License-Identifier: MIT */
/*
 * flatcomb -- the command queue as a flat-combining object: D. Hendler, I. Incze, N. Shavit and
 * M. Tzafrir, "Flat Combining and the Synchronization-Parallelism Tradeoff", SPAA 2010. Not a
 * Linux proposal: no patch for the SMMUv3 queue does this; it is the textbook answer to "one
 * hot structure, many CPUs", raced here against the kernel's answers. The nearest kernel idea
 * is the lock-free queue's owner chain (587e6c10a7ce), which combines PROD writes but not
 * CMD_SYNCs, and John Garry's remark that CMD_SYNCs could be combined (lore
 * b2a6e26d-6d0d-7f0d-f222-589812f701d2@huawei.com; see the batched strategy).
 *
 * Each CPU has a publication record on its own cache line. A caller posts its request there
 * (a pointer to its commands, n, sync) and tries the combiner lock (a test-and-test-and-set
 * word). The CPU that gets it is the combiner: it scans every record, takes each posted
 * request in record order while the batch (plus one CMD_SYNC) fits the queue, copies their
 * commands into the ring one request after another (so each caller's commands stay contiguous
 * and in order), appends ONE CMD_SYNC if any request asked for one, writes PROD ONCE, waits for
 * that CMD_SYNC (the MSI into its own slot, as upstream, or CONS), then marks every request of
 * the batch done and makes `passes` - 1 more scans before it drops the lock. A caller that
 * did not get the lock spins on its own record until it is done, or until the lock is free
 * (then it tries to combine). Only the combiner touches the ring, prod and cons, so there is no
 * reservation protocol at all: the price is that the queue holds one batch at a time, and
 * every other CPU waits while the combiner waits for the device.
 *
 * The combiner reads the callers' commands with lab.h loads (they are in the callers' memory:
 * the sim prices those transfers as the cache lines they are). After an MSI the combiner does
 * not assume CONS has moved past the CMD_SYNC (cmdq.h: the MSI lands first); the next batch's
 * space check reads CONS when the last value read is not enough.
 */
#include <errno.h>
#include <stdio.h>

#include <iommulab/cmdq.h>

#define FC_MAX_PASSES	   16
#define FC_POLL_TIMEOUT_NS 1000000000ull /* ARM_SMMU_POLL_TIMEOUT_US = 1 s */

enum fc_counter {
	FC_CNT_COMBINES,
	FC_CNT_BATCH_REQS,
	FC_CNT_BATCH_CMDS,
	FC_CNT_SCANS,
	FC_CNT_SYNCS_ISSUED,
	FC_CNT_SYNCS_ELIDED,
	FC_CNT_PROD_WRITES,
	FC_CNT_QUEUE_FULL_WAITS,
	FC_CNT_SERVED_BY_OTHER,
};

enum fc_phase {
	FC_PH_POST = 1, /* posting and waiting for the lock or to be served */
	FC_PH_WRITE,	/* combiner: scan and copy into the ring */
	FC_PH_PUBLISH,	/* combiner: the PROD write */
	FC_PH_SYNC_WAIT,
};

enum fc_rec_state {
	FC_IDLE = 0,
	FC_POSTED,
	FC_DONE,
};

struct fc_config {
	uint64_t passes;
};

struct fc_rec {
	uint32_t state; /* enum fc_rec_state */
	uint32_t n;
	uint32_t sync;
	uint32_t rc;   /* -errno as uint32_t, set with FC_DONE */
	uint64_t cmds; /* const struct lab_cmd * of the poster */
} LAB_CACHE_ALIGNED;

struct fc_state {
	uint32_t lock LAB_CACHE_ALIGNED; /* 0 free, 1 a combiner holds it */
	/* The combiner's: only the lock holder touches these (through lab.h all the same). */
	uint32_t prod LAB_CACHE_ALIGNED; /* IDX | WRP */
	uint32_t cons;			 /* last CONS read */
	struct fc_rec *recs;		 /* one per CPU */
	uint32_t *batch;		 /* combiner scratch: ids of the batch's records */
	struct lab_smmu *smmu;
	const struct lab_host *host;
	uint32_t ncpus;
	uint32_t nents;
	uint32_t wrap_mask;
	uint32_t passes;
	bool msi;
};

static int fc_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct fc_config *cfg = s->config;
	uint32_t ncpus = s->ncpus ? s->ncpus : 1;
	struct fc_state *st = lab_alloc(s->host, sizeof(*st));

	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	st->recs = lab_alloc(s->host, sizeof(*st->recs) * ncpus);
	st->batch = lab_alloc(s->host, sizeof(*st->batch) * ncpus);
	if (!st->recs || !st->batch) {
		snprintf(s->err, s->err_len, "out of memory for %u publication records", ncpus);
		lab_free(s->host, st->recs);
		lab_free(s->host, st->batch);
		lab_free(s->host, st);
		return -ENOMEM;
	}
	st->smmu = s->smmu;
	st->host = s->host;
	st->ncpus = ncpus;
	st->nents = lab_q_nents(s->smmu);
	st->wrap_mask = (st->nents << 1) - 1;
	st->passes = cfg && cfg->passes ? (uint32_t)cfg->passes : 1;
	st->msi = s->smmu->msi != 0;
	*state = st;
	return 0;
}

static void fc_fini(void *state)
{
	struct fc_state *st = state;
	const struct lab_host *h = st->host;

	lab_free(h, st->batch);
	lab_free(h, st->recs);
	lab_free(h, st);
}

static uint32_t fc_inc(const struct fc_state *st, uint32_t p, uint32_t n)
{
	return (p + n) & st->wrap_mask;
}

static uint32_t fc_used(const struct fc_state *st, uint32_t prod, uint32_t cons)
{
	return (prod - cons) & st->wrap_mask;
}

/* Has CONS passed the entry at p? (cons within a lap of p: one producer, one batch.) */
static bool fc_consumed(const struct fc_state *st, uint32_t p, uint32_t cons)
{
	uint32_t d = (cons - p) & st->wrap_mask;

	return d >= 1 && d <= st->nents;
}

static bool fc_expired(struct lab_cpu *c, uint64_t deadline, uint32_t *late)
{
	/* The second pass past the deadline, as llq.h: one more look for a descheduled CPU. */
	return lab_now(c) >= deadline && ++*late > 1;
}

static bool fc_space_pass(struct lab_cpu *c, struct fc_state *st, uint32_t need)
{
	uint32_t prod = lab_load32(&st->prod, LAB_RELAXED);
	uint32_t cons = lab_smmu_read_cons(c, st->smmu) & st->wrap_mask;

	lab_store32(&st->cons, cons, LAB_RELAXED);
	return st->nents - fc_used(st, prod, cons) >= need;
}

/* Room for need entries, reading CONS only when the last value read is not enough. */
static void fc_wait_space(struct lab_cpu *c, struct fc_state *st, uint32_t need)
{
	uint32_t prod = lab_load32(&st->prod, LAB_RELAXED);
	uint32_t v;

	if (st->nents - fc_used(st, prod, lab_load32(&st->cons, LAB_RELAXED)) >= need)
		return;
	lab_count(c, FC_CNT_QUEUE_FULL_WAITS, 1);
	LAB_COND_LOAD32(c, &st->cons, v, ((void)v, fc_space_pass(c, st, need)), LAB_ACQUIRE);
}

/* Copy a posted request's commands (in the poster's memory) into the ring at prod. */
static uint32_t fc_copy(struct fc_state *st, const struct fc_rec *r, uint32_t prod, uint32_t n)
{
	const struct lab_cmd *cmds =
		(const struct lab_cmd *)(uintptr_t)lab_load64(&r->cmds, LAB_RELAXED);

	for (uint32_t i = 0; i < n; i++) {
		struct lab_cmd cmd = {
			.dw = { lab_load64(&cmds[i].dw[0], LAB_RELAXED),
				lab_load64(&cmds[i].dw[1], LAB_RELAXED) },
		};

		lab_cmd_write(lab_q_slot(st->smmu, prod), &cmd);
		prod = fc_inc(st, prod, 1);
	}
	return prod;
}

static bool fc_msi_pass(struct lab_cpu *c, uint32_t v, uint64_t deadline, uint32_t *late)
{
	return v == 0 || fc_expired(c, deadline, late);
}

static bool fc_cons_pass(struct lab_cpu *c, struct fc_state *st, uint32_t sync_p, uint64_t deadline,
			 uint32_t *late)
{
	uint32_t cons = lab_smmu_read_cons(c, st->smmu) & st->wrap_mask;

	lab_store32(&st->cons, cons, LAB_RELAXED);
	return fc_consumed(st, sync_p, cons) || fc_expired(c, deadline, late);
}

/* Wait for the batch's CMD_SYNC at sync_p: 0 or -ETIMEDOUT. */
static int fc_wait_sync(struct lab_cpu *c, struct fc_state *st, uint32_t sync_p)
{
	uint64_t deadline = lab_now(c) + FC_POLL_TIMEOUT_NS;
	uint32_t v, late = 0;

	lab_phase(c, FC_PH_SYNC_WAIT);
	if (st->msi) {
		uint32_t *word = (uint32_t *)(void *)&lab_q_slot(st->smmu, sync_p)->dw[0];

		LAB_COND_LOAD32(c, word, v, fc_msi_pass(c, v, deadline, &late), LAB_ACQUIRE);
		return v == 0 ? 0 : -ETIMEDOUT;
	}
	LAB_COND_LOAD32(c, &st->cons, v, ((void)v, fc_cons_pass(c, st, sync_p, deadline, &late)),
			LAB_ACQUIRE);
	return fc_consumed(st, sync_p, lab_load32(&st->cons, LAB_RELAXED)) ? 0 : -ETIMEDOUT;
}

/*
 * Gather posted requests, starting at the record after start (fairness: the scan origin
 * rotates with the combiner), while they fit the queue with one CMD_SYNC. Returns the count in
 * st->batch; *cmds and *syncs get the totals.
 */
static uint32_t fc_gather(struct lab_cpu *c, struct fc_state *st, uint32_t start, uint32_t *cmds,
			  uint32_t *syncs)
{
	uint32_t k = 0;

	*cmds = 0;
	*syncs = 0;
	for (uint32_t i = 0; i < st->ncpus; i++) {
		uint32_t id = (start + i) % st->ncpus;
		struct fc_rec *r = &st->recs[id];
		uint32_t n;

		if (lab_load32(&r->state, LAB_ACQUIRE) != FC_POSTED)
			continue;
		n = lab_load32(&r->n, LAB_RELAXED);
		if (*cmds + n + 1 > st->nents)
			continue; /* the next pass (or combiner) takes it */
		*cmds += n;
		*syncs += lab_load32(&r->sync, LAB_RELAXED);
		lab_store32(&st->batch[k++], id, LAB_RELAXED);
	}
	lab_count(c, FC_CNT_SCANS, 1);
	return k;
}

/* One combining pass; returns the number of requests served. */
static uint32_t fc_combine_pass(struct lab_cpu *c, struct fc_state *st)
{
	uint32_t ncmds, nsync, k, prod, sync_p;
	int rc = 0;

	lab_phase(c, FC_PH_WRITE);
	k = fc_gather(c, st, c->id, &ncmds, &nsync);
	if (!k)
		return 0;
	fc_wait_space(c, st, ncmds + (nsync ? 1 : 0));
	prod = lab_load32(&st->prod, LAB_RELAXED);
	for (uint32_t i = 0; i < k; i++) {
		struct fc_rec *r = &st->recs[lab_load32(&st->batch[i], LAB_RELAXED)];

		prod = fc_copy(st, r, prod, lab_load32(&r->n, LAB_RELAXED));
	}
	sync_p = prod;
	if (nsync) {
		struct lab_cmd *slot = lab_q_slot(st->smmu, sync_p);
		struct lab_cmd sync =
			st->msi ? lab_cmd_sync(LAB_SYNC_CS_IRQ, (uint32_t *)(void *)&slot->dw[0], 0)
				: lab_cmd_sync(LAB_SYNC_CS_SEV, NULL, 0);

		lab_cmd_write(slot, &sync);
		prod = fc_inc(st, prod, 1);
		lab_count(c, FC_CNT_SYNCS_ISSUED, 1);
		lab_count(c, FC_CNT_SYNCS_ELIDED, nsync - 1);
	}
	lab_phase(c, FC_PH_PUBLISH);
	lab_store32(&st->prod, prod, LAB_RELAXED);
	lab_fence(LAB_RELEASE); /* dma_wmb(): the entries before PROD */
	lab_smmu_write_prod(c, st->smmu, prod);
	lab_count(c, FC_CNT_PROD_WRITES, 1);
	if (nsync)
		rc = fc_wait_sync(c, st, sync_p);
	for (uint32_t i = 0; i < k; i++) {
		struct fc_rec *r = &st->recs[lab_load32(&st->batch[i], LAB_RELAXED)];

		lab_store32(&r->rc, (uint32_t)rc, LAB_RELAXED);
		lab_store32(&r->state, FC_DONE, LAB_RELEASE);
	}
	lab_count(c, FC_CNT_BATCH_REQS, k);
	lab_count(c, FC_CNT_BATCH_CMDS, ncmds);
	return k;
}

static bool fc_trylock(struct fc_state *st)
{
	return !lab_load32(&st->lock, LAB_RELAXED) && !lab_xchg32(&st->lock, 1, LAB_ACQUIRE);
}

/* Our record is served, or the lock reads free (then we try to combine). */
static bool fc_wait_pass(struct fc_state *st, uint32_t v)
{
	return v == FC_DONE || !lab_load32(&st->lock, LAB_RELAXED);
}

static int fc_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		    bool sync)
{
	struct fc_state *st = state;
	struct fc_rec *me = &st->recs[c->id];
	bool combined = false;
	uint32_t v;

	if (!n && !sync)
		return 0;
	if (n + 1 > st->nents)
		return -EINVAL;
	lab_phase(c, FC_PH_POST);
	lab_store64(&me->cmds, (uint64_t)(uintptr_t)cmds, LAB_RELAXED);
	lab_store32(&me->n, n, LAB_RELAXED);
	lab_store32(&me->sync, sync ? 1 : 0, LAB_RELAXED);
	lab_store32(&me->state, FC_POSTED, LAB_RELEASE);
	for (;;) {
		if (fc_trylock(st)) {
			lab_count(c, FC_CNT_COMBINES, 1);
			combined = true;
			for (uint32_t p = 0; p < st->passes; p++)
				if (!fc_combine_pass(c, st))
					break;
			lab_store32(&st->lock, 0, LAB_RELEASE);
			lab_phase(c, FC_PH_POST);
		}
		LAB_COND_LOAD32(c, &me->state, v, fc_wait_pass(st, v), LAB_ACQUIRE);
		if (v == FC_DONE)
			break;
	}
	if (!combined)
		lab_count(c, FC_CNT_SERVED_BY_OTHER, 1);
	lab_store32(&me->state, FC_IDLE, LAB_RELAXED);
	return (int)lab_load32(&me->rc, LAB_RELAXED);
}

static const struct lab_param fc_params[] = {
	{
		.key = "passes",
		.type = LAB_PARAM_UINT,
		.def = "1",
		.min = 1,
		.max = FC_MAX_PASSES,
		.help = "combining passes (scans of every record) per hold of the combiner lock",
		.offset = offsetof(struct fc_config, passes),
	},
};

static const struct lab_counter fc_counters[] = {
	[FC_CNT_COMBINES] = { "combines", LAB_COUNTER_EVENTS,
			      "holds of the combiner lock by this CPU" },
	[FC_CNT_BATCH_REQS] = { "batch_reqs", LAB_COUNTER_EVENTS,
				"requests served by combiners (per combine: batch size)" },
	[FC_CNT_BATCH_CMDS] = { "batch_cmds", LAB_COUNTER_EVENTS,
				"commands copied into the ring by combiners" },
	[FC_CNT_SCANS] = { "scans", LAB_COUNTER_EVENTS,
			   "scans of all publication records (each reads ncpus lines)" },
	[FC_CNT_SYNCS_ISSUED] = { "syncs_issued", LAB_COUNTER_EVENTS,
				  "CMD_SYNCs this plugin inserted (one per batch)" },
	[FC_CNT_SYNCS_ELIDED] = { "syncs_elided", LAB_COUNTER_EVENTS,
				  "sync requests served by another request's batch CMD_SYNC" },
	[FC_CNT_PROD_WRITES] = { "prod_writes", LAB_COUNTER_EVENTS, "MMIO writes of PROD" },
	[FC_CNT_QUEUE_FULL_WAITS] = { "queue_full_waits", LAB_COUNTER_EVENTS,
				      "batches that found too little room and polled CONS" },
	[FC_CNT_SERVED_BY_OTHER] = { "served_by_other", LAB_COUNTER_EVENTS,
				     "requests completed by another CPU's combining pass" },
};

static const char *const fc_phases[] = { "post", "write", "publish", "sync_wait" };

static const struct lab_cmdq_ops fc_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = fc_init,
	.fini = fc_fini,
	.issue = fc_issue,
};

static const struct lab_plugin fc_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "flatcomb",
	.summary = "flat combining: a combiner writes all posted requests, one PROD + one CMD_SYNC",
	.version = "1.0",
	.params = fc_params,
	.n_params = LAB_ARRAY_SIZE(fc_params),
	.config_size = sizeof(struct fc_config),
	.counters = fc_counters,
	.n_counters = LAB_ARRAY_SIZE(fc_counters),
	.phases = fc_phases,
	.n_phases = LAB_ARRAY_SIZE(fc_phases),
	.ops = &fc_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &fc_plugin;
}
