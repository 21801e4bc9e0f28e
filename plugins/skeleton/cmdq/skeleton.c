/* SPDX-License-Identifier: MIT */
/*
 * skeleton -- the cmdq plugin author's template: a correct, simple strategy, with every hook
 * explained. Copy this file, rename it, change SKEL_NAME, and replace skel_issue() with your
 * idea. Build it out of tree against an installed iommulab with the one command
 *
 *	cc $(pkg-config --cflags iommulab) -O2 -shared -fPIC -o cmdq-skeleton.so skeleton.c
 *
 * and for the sim engine (engine = sim: virtual CPUs, same source) add -DLAB_ENGINE_SIM and
 * name the output cmdq-skeleton.sim.so; the Makefile beside this file builds both.
 *
 * (the file must be called cmdq-<name>.so where <name> is .name in the descriptor below), then
 * check it with `iommulab verify ./cmdq-skeleton.so` and race it against the built-in ones with
 * `iommulab --plugin-dir . run my-scenario.ini`.
 *
 * The strategy: a ticket lock (FIFO, so no CPU starves) held across the whole command-list
 * insertion, as the driver's cmdq spinlock was before the v5.4 lock-free rework:
 *
 *	lock -> wait for room (read CONS) -> write the commands (+ CMD_SYNC) -> dma_wmb()
 *	     -> write PROD -> [wait for the CMD_SYNC] -> unlock
 *
 * The CMD_SYNC is waited for while still holding the lock. That is what makes it simple: while
 * we hold the lock nobody else moves PROD, so the queue cannot lap us and "has the device
 * consumed my CMD_SYNC?" has an exact answer. Waiting outside the lock (so others can queue
 * behind a sync in flight) is the first thing worth improving, and it is where the real
 * strategies earn their keep -- see the note above skel_wait_cons() for the trap it hides.
 *
 * Rules of the platform (lab.h): every access to memory another CPU (or the device) touches
 * goes through lab_load/store/cas/fetch_* with an explicit memory order; spin-waits go through
 * LAB_COND_LOAD32/64 or lab_spin_wait() so the engine knows the CPU is waiting; shared memory
 * comes from lab_alloc(); no pthreads, no raw atomics, no clocks other than lab_now().
 */
#include <errno.h>

#include <iommulab/cmdq.h>

#define SKEL_NAME "skeleton"

/*
 * ---- parameters --------------------------------------------------------------------------
 * A plugin's tunables are a table: the host parses [plugin.skeleton] in a scenario with it,
 * checks ranges, prints it in `iommulab list --params`, and hands init() a filled struct.
 * Every key can be swept like a framework key: [sweep] plugin.skeleton.use_msi = true, false
 */
struct skel_config {
	bool use_msi;		  /* LAB_PARAM_BOOL is stored as bool */
	uint64_t poll_timeout_ms; /* LAB_PARAM_UINT is stored as uint64_t */
};

static const struct lab_param skel_params[] = {
	{ .key = "use_msi",
	  .type = LAB_PARAM_BOOL,
	  .def = "true",
	  .help = "complete CMD_SYNC by an MSI write to a private word when the device can "
		  "(else poll CONS)",
	  .offset = offsetof(struct skel_config, use_msi) },
	{ .key = "poll_timeout_ms",
	  .type = LAB_PARAM_UINT,
	  .def = "1000",
	  .min = 1,
	  .max = 60000,
	  .help = "give up on a CMD_SYNC after this long (the kernel's ARM_SMMU_POLL_TIMEOUT_US)",
	  .offset = offsetof(struct skel_config, poll_timeout_ms) },
};

/*
 * ---- counters and phases -----------------------------------------------------------------
 * Counters are per-CPU slots the host sums, reports per op and plots; lab_count(c, id, n).
 * Phases split each op's latency into named parts (the phase graph); lab_phase(c, p) enters
 * phase p (1-based, in the order of skel_phases[]), the host closes the last one.
 */
enum { SKEL_SYNCS_ISSUED, SKEL_QUEUE_FULL_WAITS, SKEL_LOCK_WAIT_NS, SKEL_N_COUNTERS };
enum { PHASE_LOCK = 1, PHASE_RESERVE, PHASE_WRITE, PHASE_PUBLISH, PHASE_SYNC_WAIT };

static const struct lab_counter skel_counters[SKEL_N_COUNTERS] = {
	[SKEL_SYNCS_ISSUED] = { "syncs_issued", LAB_COUNTER_EVENTS, "CMD_SYNCs written" },
	[SKEL_QUEUE_FULL_WAITS] = { "queue_full_waits", LAB_COUNTER_EVENTS,
				    "times the queue had no room and CONS was polled" },
	[SKEL_LOCK_WAIT_NS] = { "lock_wait_ns", LAB_COUNTER_EVENTS,
				"ns spent waiting for the ticket lock" },
};

static const char *const skel_phases[] = { "lock", "reserve", "write", "publish", "sync_wait" };

/*
 * ---- state -------------------------------------------------------------------------------
 * One instance per trial, shared by every CPU, allocated with lab_alloc() (zeroed, cache-line
 * aligned). Fields written by different CPUs at different times belong on different cache
 * lines, or false sharing will dominate the measurement.
 */
struct skel_queue {
	struct lab_spinlock lock; /* ticket lock from lab.h */
	uint32_t prod;		  /* our PROD (IDX | WRP): only the lock holder touches it */
	uint32_t cons;		  /* the last CONS we read: only the lock holder touches it */
	struct lab_smmu *smmu;
	const struct lab_host *host;
	bool use_msi;
	uint64_t timeout_ns;
	/* The device writes MSIDATA (0) here when our CMD_SYNC completes; one at a time. */
	uint32_t msi_word LAB_CACHE_ALIGNED;
};

/* IDX | WRP wrap at twice the queue size; OVF (bit 31) stays clear in our copies. */
static uint32_t skel_mask(const struct skel_queue *q)
{
	return (lab_q_nents(q->smmu) << 1) - 1;
}

/* Free entries between our PROD and the last CONS we read (the kernel's queue_has_space()). */
static uint32_t skel_space(const struct skel_queue *q)
{
	return lab_q_nents(q->smmu) - ((q->prod - q->cons) & skel_mask(q));
}

/*
 * Has the device consumed the entry at pos, given that CONS reads cons? (the kernel's
 * queue_consumed()). Compares IDX, using WRP to tell "behind" from "ahead": exact as long as
 * CONS is within one lap of pos.
 */
static bool skel_consumed(const struct skel_queue *q, uint32_t cons, uint32_t pos)
{
	const struct lab_smmu *s = q->smmu;

	if (lab_q_wrp(s, cons) == lab_q_wrp(s, pos))
		return lab_q_idx(s, cons) > lab_q_idx(s, pos);
	return lab_q_idx(s, cons) <= lab_q_idx(s, pos);
}

/*
 * Poll CONS until there is room for need entries (sync_pos == UINT32_MAX) or the entry at
 * sync_pos has been consumed; -ETIMEDOUT after the poll timeout. CONS is a device register,
 * not memory, so the wait is lab_spin_wait(c, NULL) rather than LAB_COND_LOAD32.
 *
 * Why this is only safe under the lock (the double-wrap hazard): skel_consumed() can only tell
 * positions apart within one lap of the ring. A CPU that dropped the lock and then polled CONS
 * for its CMD_SYNC could be descheduled while others fill and drain the queue more than once;
 * CONS would then read as "one lap behind" and it would wait for a lap that may never come
 * (or, with a different test, return before its sync ran). The kernel avoids it with the
 * cmdq's shared lock (no queue refill past a waiter); an MSI into a word the waiter owns (as
 * below, but per CPU) avoids it too. Holding the lock here means PROD cannot move, CONS <= PROD,
 * and the question is exact.
 */
static int skel_wait_cons(struct lab_cpu *c, struct skel_queue *q, uint32_t need, uint32_t sync_pos)
{
	uint64_t deadline = lab_now(c) + q->timeout_ns;

	for (;;) {
		q->cons = lab_smmu_read_cons(c, q->smmu);
		if (sync_pos == UINT32_MAX ? skel_space(q) >= need
					   : skel_consumed(q, q->cons, sync_pos))
			return 0;
		if (lab_now(c) > deadline)
			return -ETIMEDOUT;
		lab_spin_wait(c, NULL);
	}
}

/* Wait for the device's MSI write of 0 into q->msi_word (the kernel's MSIPOLL path). */
static int skel_wait_msi(struct lab_cpu *c, struct skel_queue *q)
{
	uint64_t deadline = lab_now(c) + q->timeout_ns;
	uint32_t v;

	/* smp_cond_load_relaxed(word, !VAL || timed out), with acquire: the device's writes to
	 * the ring it consumed are visible once we see the 0. */
	LAB_COND_LOAD32(c, &q->msi_word, v, v == 0 || lab_now(c) > deadline, LAB_ACQUIRE);
	return v == 0 ? 0 : -ETIMEDOUT;
}

/*
 * ---- the ops -------------------------------------------------------------------------------
 * issue() is arm_smmu_cmdq_issue_cmdlist(): put cmds[0..n) into the queue contiguously and in
 * order, followed by a CMD_SYNC if sync; return once they are published (PROD written) and, if
 * sync, once the device has consumed everything up to and including that CMD_SYNC. The host
 * calls it from every CPU at once; c is the calling CPU (c->id in 0..ncpus-1).
 */
static int skel_issue(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		      bool sync)
{
	struct skel_queue *q = state;
	struct lab_smmu *s = q->smmu;
	uint32_t need = n + (sync ? 1 : 0);
	bool msi = sync && q->use_msi;
	int rc = 0;

	if (need > lab_q_nents(s))
		return -EINVAL; /* can never fit; the kernel batches at most 64 commands */

	lab_phase(c, PHASE_LOCK);
	uint64_t t0 = lab_now(c);
	lab_spin_lock(c, &q->lock);
	lab_count(c, SKEL_LOCK_WAIT_NS, lab_now(c) - t0);

	/* Reserve: our cached CONS may be stale, so read the register only when short. */
	lab_phase(c, PHASE_RESERVE);
	if (skel_space(q) < need) {
		lab_count(c, SKEL_QUEUE_FULL_WAITS, 1);
		rc = skel_wait_cons(c, q, need, UINT32_MAX);
		if (rc)
			goto unlock;
	}

	/* Write: plain relaxed stores into the ring; the device will not look before PROD. */
	lab_phase(c, PHASE_WRITE);
	for (uint32_t i = 0; i < n; i++)
		lab_cmd_write(lab_q_slot(s, q->prod + i), &cmds[i]);
	uint32_t sync_pos = (q->prod + n) & skel_mask(q);
	if (sync) {
		struct lab_cmd cmd;

		if (msi) {
			/* Armed before PROD: the device can only write 0 after it sees PROD. */
			lab_store32(&q->msi_word, 1, LAB_RELAXED);
			cmd = lab_cmd_sync(LAB_SYNC_CS_IRQ, &q->msi_word, 0);
		} else {
			cmd = lab_cmd_sync(LAB_SYNC_CS_NONE, NULL, 0);
		}
		lab_cmd_write(lab_q_slot(s, sync_pos), &cmd);
		lab_count(c, SKEL_SYNCS_ISSUED, 1);
	}

	/* Publish: dma_wmb() orders the entries before the PROD write that exposes them. */
	lab_phase(c, PHASE_PUBLISH);
	lab_fence(LAB_RELEASE);
	q->prod = (q->prod + need) & skel_mask(q);
	lab_smmu_write_prod(c, s, q->prod);

	if (sync) {
		lab_phase(c, PHASE_SYNC_WAIT);
		rc = msi ? skel_wait_msi(c, q) : skel_wait_cons(c, q, 0, sync_pos);
	}
unlock:
	lab_spin_unlock(&q->lock);
	return rc;
}

/*
 * init(): called once per trial before any issue(), on one CPU. s->config is our struct
 * skel_config, filled from the parameter table (defaults, scenario, sweep). Allocate shared
 * state with lab_alloc() and hand it back in *state; on failure return -errno and say why in
 * s->err (the host prints it with the trial).
 */
static int skel_init(const struct lab_cmdq_setup *s, void **state)
{
	const struct skel_config *cfg = s->config;
	struct skel_queue *q = lab_alloc(s->host, sizeof(*q));

	if (!q)
		return -ENOMEM; /* the host can inject allocation failures: never crash on NULL */
	q->smmu = s->smmu;
	q->host = s->host;
	q->use_msi = cfg->use_msi && s->smmu->msi; /* the device says whether it can MSI */
	q->timeout_ns = cfg->poll_timeout_ms * 1000000u;
	/* The device starts with PROD = CONS = 0 and so do we (lab_alloc zeroes). */
	*state = q;
	return 0;
}

/* fini(): called once after every issue() has returned; undo init(). Optional (may be NULL). */
static void skel_fini(void *state)
{
	struct skel_queue *q = state;

	lab_free(q->host, q);
}

/* Ops tables only grow at the end; struct_size tells the host which members we know of. */
static const struct lab_cmdq_ops skel_ops = {
	.struct_size = sizeof(struct lab_cmdq_ops),
	.init = skel_init,
	.fini = skel_fini,
	.issue = skel_issue,
};

/*
 * ---- the descriptor --------------------------------------------------------------------------
 * The host checks every field on load and refuses with a precise message. .name must match the
 * file name: cmdq-<name>.so. Bump .version when the algorithm changes: it is recorded in every
 * result so old numbers are not mistaken for new ones.
 */
static const struct lab_plugin skel_plugin = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = SKEL_NAME,
	.summary = "template: ticket lock across reserve, write, PROD and the CMD_SYNC wait",
	.version = "1.0",
	.params = skel_params,
	.n_params = LAB_ARRAY_SIZE(skel_params),
	.config_size = sizeof(struct skel_config),
	.counters = skel_counters,
	.n_counters = SKEL_N_COUNTERS,
	.phases = skel_phases,
	.n_phases = LAB_ARRAY_SIZE(skel_phases),
	.ops = &skel_ops,
};

/* The one exported symbol: everything above is static, so only this is visible. */
LAB_PLUGIN_EXPORT const struct lab_plugin *LAB_PLUGIN_ENTRY(void)
{
	return &skel_plugin;
}
