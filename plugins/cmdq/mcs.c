/* SPDX-License-Identifier: MIT */
/*
 * mcs -- ticketed MCS queued followers in front of the lock-free command queue: John
 * Garry's idea (a) in the thread "arm-smmu-v3 high cpu usage for NVMe" (lore
 * b2a6e26d-6d0d-7f0d-f222-589812f701d2@huawei.com, and his May 2020 reply with perf
 * annotations): the initial cmpxchg is unfair and its cache line "is constantly pinged
 * around the system", so after the first failed cmpxchg a CPU queues and spins on its own
 * node, "released by its leader, and releasing subsequent followers".
 *
 * A caller tries one CAS reservation (the cmpxchg strategy's). If that fails it joins an MCS
 * queue: its per-CPU node (own cache line) is linked behind the tail with one xchg of the
 * tail word, and it spins on its node until its predecessor makes it the head. The head
 * reserves with the CAS loop (only heads contend for the llq line, plus newcomers' single
 * try) and then makes its successor head.
 *
 * leader_batch > 1: the head also reserves, in its one CAS, for up to leader_batch - 1
 * followers already linked behind it (their sizes are in their nodes, and the batch never
 * exceeds the queue), hands each its start slot through its node, and passes headship to
 * the first CPU after them. Followers then write and publish as if they had reserved
 * themselves; they are gatherers of the head's chain (the head's CAS set OWNED).
 *
 * The head detaches its batch from the MCS queue (finds its successor, or empties the tail)
 * before granting anything, so a granted follower can reuse its node at once.
 * Everything after the reservation is the cmpxchg strategy's, from llq.h.
 */
#include "llq.h"

#define MCS_MAX_BATCH 64

/*
 * Test fixture switch (tests/fixtures/plugins/mcs_stress.c): every CPU queues, and a head
 * lingers before picking followers, so that even 2 CPUs exercise the leader_batch hand-off.
 */
#ifndef MCS_STRESS
#define MCS_STRESS  0
#define MCS_NAME    "mcs"
#define MCS_SUMMARY "one CAS try, then MCS-queued followers released by their leader (Garry 2020)"
#endif
#define MCS_STRESS_LINGER_NS 2000

enum mcs_counter {
	MCS_CNT_QUEUED = LLQ_N_COUNTERS,
	MCS_CNT_GRANTED,
	MCS_CNT_QUEUE_NS,
};

enum mcs_node_state {
	MCS_WAIT = 0, /* linked, spinning */
	MCS_HEAD,     /* made head by the predecessor: reserve */
	MCS_GRANTED,  /* a head reserved for us: our slots start at node->prod */
};

struct mcs_config {
	uint64_t leader_batch;
};

struct mcs_node {
	uint32_t state; /* enum mcs_node_state */
	uint32_t next;	/* successor's CPU id + 1; 0: none linked yet */
	uint32_t need;	/* n + sync of the waiting request */
	uint32_t prod;	/* MCS_GRANTED: first slot (IDX | WRP) */
} LAB_CACHE_ALIGNED;

struct mcs_state {
	struct llq q;
	uint32_t tail LAB_CACHE_ALIGNED; /* CPU id + 1 of the last node; 0: queue empty */
	struct mcs_node *nodes;		 /* one per CPU */
	uint32_t batch;
};

static int mcs_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct mcs_config *cfg = s->config;
	struct mcs_state *st = lab_alloc(s->host, sizeof(*st));
	int rc;

	if (!st) {
		snprintf(s->err, s->err_len, "out of memory for the queue state");
		return -ENOMEM;
	}
	rc = llq_init(s, &st->q);
	if (rc)
		goto err_free;
	st->batch = cfg && cfg->leader_batch ? (uint32_t)cfg->leader_batch : 1;
	if (st->batch > MCS_MAX_BATCH)
		st->batch = MCS_MAX_BATCH;
	st->nodes = lab_alloc(s->host, sizeof(*st->nodes) * (s->ncpus ? s->ncpus : 1));
	if (!st->nodes) {
		snprintf(s->err, s->err_len, "out of memory for %u MCS nodes", s->ncpus);
		rc = -ENOMEM;
		goto err_fini;
	}
	*state = st;
	return 0;

err_fini:
	llq_fini(&st->q);
err_free:
	lab_free(s->host, st);
	return rc;
}

static void mcs_fini(void *state)
{
	struct mcs_state *st = state;
	const struct lab_host *h = st->q.host;

	lab_free(h, st->nodes);
	llq_fini(&st->q);
	lab_free(h, st);
}

/* Link our node behind the tail and spin on it. Returns MCS_HEAD or MCS_GRANTED. */
static uint32_t mcs_enqueue(struct lab_cpu *c, struct mcs_state *st, uint32_t need)
{
	struct mcs_node *me = &st->nodes[c->id];
	uint32_t prev, v;

	lab_store32(&me->need, need, LAB_RELAXED);
	lab_store32(&me->next, 0, LAB_RELAXED);
	lab_store32(&me->state, MCS_WAIT, LAB_RELAXED);
	prev = lab_xchg32(&st->tail, c->id + 1, LAB_ACQ_REL);
	if (!prev)
		return MCS_HEAD;
	lab_store32(&st->nodes[prev - 1].next, c->id + 1, LAB_RELEASE);
	LAB_COND_LOAD32(c, &me->state, v, v != MCS_WAIT, LAB_ACQUIRE);
	return v;
}

/*
 * Pick up to batch - 1 followers already linked behind us, as long as the whole batch fits
 * the queue. Fills ids[], returns their count; *total is the batch's slot count.
 */
static uint32_t mcs_pick(struct mcs_state *st, uint32_t cpu, uint32_t *ids, uint32_t *total)
{
	uint32_t k = 0, cur = cpu;

	while (k + 1 < st->batch) {
		uint32_t nx = lab_load32(&st->nodes[cur].next, LAB_ACQUIRE);
		uint32_t need;

		if (!nx)
			break;
		need = lab_load32(&st->nodes[nx - 1].need, LAB_RELAXED);
		if (*total + need > st->q.nents)
			break;
		*total += need;
		cur = ids[k++] = nx - 1;
	}
	return k;
}

/*
 * Detach everything up to `last` from the MCS queue: returns the CPU id + 1 to make head
 * next, or 0 when `last` was the tail (now empty). Waits for a successor that has swapped
 * the tail but not linked itself yet.
 */
static uint32_t mcs_detach(struct lab_cpu *c, struct mcs_state *st, uint32_t last)
{
	struct mcs_node *node = &st->nodes[last];
	uint32_t nx = lab_load32(&node->next, LAB_ACQUIRE);

	if (nx)
		return nx;
	if (lab_cas32(&st->tail, last + 1, 0, LAB_ACQ_REL) == last + 1)
		return 0;
	LAB_COND_LOAD32(c, &node->next, nx, nx != 0, LAB_ACQUIRE);
	return nx;
}

/* As head: reserve for us and the picked followers, grant them, pass headship on. */
static uint32_t mcs_lead(struct lab_cpu *c, struct mcs_state *st, uint32_t need)
{
	uint32_t ids[MCS_MAX_BATCH];
	uint32_t total = need, k, succ, prod, p;

	if (MCS_STRESS)
		lab_delay_ns(c, MCS_STRESS_LINGER_NS);
	k = mcs_pick(st, c->id, ids, &total);
	succ = mcs_detach(c, st, k ? ids[k - 1] : c->id);
	prod = llq_reserve(c, &st->q, total, total, 0);
	p = llq_inc(&st->q, llq_pos(&st->q, prod), need);
	for (uint32_t i = 0; i < k; i++) {
		struct mcs_node *f = &st->nodes[ids[i]];

		lab_store32(&f->prod, p, LAB_RELAXED);
		p = llq_inc(&st->q, p, lab_load32(&f->need, LAB_RELAXED));
		lab_store32(&f->state, MCS_GRANTED, LAB_RELEASE);
	}
	lab_count(c, MCS_CNT_GRANTED, k);
	if (succ)
		lab_store32(&st->nodes[succ - 1].state, MCS_HEAD, LAB_RELEASE);
	return prod;
}

/* Reserve need slots; returns the llq prod the reservation replaced (OWNED: not owner). */
static uint32_t mcs_acquire(struct lab_cpu *c, struct mcs_state *st, uint32_t need)
{
	uint32_t prod;
	uint64_t t0;

	if (!MCS_STRESS && llq_try_reserve(c, &st->q, need, &prod))
		return prod;
	lab_count(c, MCS_CNT_QUEUED, 1);
	t0 = lab_now(c);
	if (mcs_enqueue(c, st, need) == MCS_GRANTED) {
		/* A follower never owns: the head's CAS, before our slots, set OWNED. */
		prod = lab_load32(&st->nodes[c->id].prod, LAB_RELAXED) | LLQ_OWNED;
		lab_count(c, MCS_CNT_QUEUE_NS, lab_now(c) - t0);
		return prod;
	}
	lab_count(c, MCS_CNT_QUEUE_NS, lab_now(c) - t0);
	return mcs_lead(c, st, need);
}

static int mcs_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		     bool sync)
{
	struct mcs_state *st = state;
	uint32_t need = n + (sync ? 1 : 0);

	if (!need)
		return 0;
	if (need > st->q.nents)
		return -EINVAL;
	lab_phase(c, LLQ_PH_RESERVE);
	return llq_finish(c, &st->q, cmds, n, sync, mcs_acquire(c, st, need));
}

static const struct lab_param mcs_params[] = {
	{
		.key = "leader_batch",
		.type = LAB_PARAM_UINT,
		.def = "1",
		.min = 1,
		.max = MCS_MAX_BATCH,
		.help = "requests an MCS head reserves in one CAS (itself + waiting followers)",
		.offset = offsetof(struct mcs_config, leader_batch),
	},
};

static const struct lab_counter mcs_counters[] = {
	LLQ_COUNTERS,
	[MCS_CNT_QUEUED] = { "mcs_queued", LAB_COUNTER_EVENTS,
			     "reservations that lost the first CAS and queued" },
	[MCS_CNT_GRANTED] = { "mcs_granted", LAB_COUNTER_EVENTS,
			      "followers reserved for by a head (leader_batch > 1)" },
	[MCS_CNT_QUEUE_NS] = { "mcs_queue_ns", LAB_COUNTER_EVENTS,
			       "ns spent waiting in the MCS queue" },
};

static const char *const mcs_phases[] = { LLQ_PHASE_NAMES };

static const struct lab_cmdq_ops mcs_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = mcs_init,
	.fini = mcs_fini,
	.issue = mcs_issue,
};

static const struct lab_plugin mcs_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = MCS_NAME,
	.summary = MCS_SUMMARY,
	.version = "1.0",
	.params = mcs_params,
	.n_params = LAB_ARRAY_SIZE(mcs_params),
	.config_size = sizeof(struct mcs_config),
	.counters = mcs_counters,
	.n_counters = LAB_ARRAY_SIZE(mcs_counters),
	.phases = mcs_phases,
	.n_phases = LAB_ARRAY_SIZE(mcs_phases),
	.ops = &mcs_ops,
};

LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &mcs_plugin;
}
