/* SPDX-License-Identifier: MIT */
/*
 * cmdq_wl -- the "ways" workload and its oracle (see cmdq_wl.h).
 *
 * Timing: one timestamp per op, chained. The end of an op's think time is the next op's start
 * (the think's own busy loop already reads the clock, so its last read costs nothing extra),
 * and the op's end is read once after issue(). The think time lies between the two and is
 * never part of a latency; the next op's commands are tagged during the think. What an op's
 * latency does include is the loop's few ns between the think's end and issue() (with
 * think_ns = 0: the histogram record too), which the null plugin's latency shows.
 */
#include "workload/cmdq_wl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/host.h"
#include "engine/sim/sim.h"
#include "util/diag.h"
#include "workload/rand.h"

#define MAX_CMDS 256 /* [workload.cmdq] cmds_per_sync's upper bound */

struct cmdq_wl_cpu {
	uint64_t seq;	    /* last op issued */
	uint64_t last_cmds; /* the last op that issued commands (0: none yet) */
	uint64_t synced;    /* the last op with commands that a sync issue returned after */
	uint64_t rng;	    /* xorshift64* state for the think time's jitter */
	uint64_t t_next;    /* the chain: when the next op starts (0: read the clock then) */
	uint64_t tagged;    /* the op whose commands cmds holds */
	uint32_t countdown; /* measured ops until the next timed one (sample_every) */
	struct lab_cmd *cmds;
} LAB_CACHE_ALIGNED;

struct cmdq_wl {
	const struct lab_cmdq_ops *ops;
	void *state;
	struct smmu_dev *dev;
	uint32_t ncpus;
	uint32_t n;
	bool mixed;
	uint64_t shape_seed; /* mixed: each op's shape is a function of this, its CPU and seq */
	uint64_t think_ns;
	double jitter;
	bool oracle;
	uint32_t sample_every;
	struct cmdq_wl_cpu *cpus;
	struct lab_cmd *cmds; /* each CPU's commands, a whole number of cache lines apart */
	uint32_t failed;      /* atomic: first writer of error wins */
	char error[256];
	uint32_t sync_bad; /* atomic */
	char sync_detail[256];
};

struct cmdq_wl *cmdq_wl_new(const struct lab_cmdq_ops *ops, void *state, struct smmu_dev *dev,
			    uint32_t ncpus, uint32_t cmds_per_sync, bool mixed, uint64_t think_ns,
			    double think_jitter, uint64_t seed, bool oracle, uint32_t sample_every)
{
	struct cmdq_wl *wl = calloc(1, sizeof(*wl));
	size_t per_cpu = LAB_CACHE_LINE; /* at least a line, so that no two CPUs share one */

	if (!wl || cmds_per_sync > MAX_CMDS)
		goto err;
	if (!sample_every)
		sample_every = 1; /* a configuration built by hand, without the key's default */
	while (per_cpu < sizeof(struct lab_cmd) * cmds_per_sync)
		per_cpu += LAB_CACHE_LINE;
	wl->cpus = aligned_alloc(LAB_CACHE_LINE, sizeof(*wl->cpus) * ncpus);
	wl->cmds = aligned_alloc(LAB_CACHE_LINE, per_cpu * ncpus);
	if (!wl->cpus || !wl->cmds)
		goto err;
	memset(wl->cpus, 0, sizeof(*wl->cpus) * ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		wl->cpus[i].rng = (seed + 1) * 0x9e3779b97f4a7c15ull + i + 1; /* never 0 */
		wl->cpus[i].countdown = sample_every;
		wl->cpus[i].cmds = (struct lab_cmd *)((char *)wl->cmds + per_cpu * i);
	}
	wl->ops = ops;
	wl->state = state;
	wl->dev = dev;
	wl->ncpus = ncpus;
	wl->n = cmds_per_sync;
	wl->mixed = mixed;
	wl->shape_seed = seed;
	wl->think_ns = think_ns;
	wl->jitter = think_jitter;
	wl->oracle = oracle;
	wl->sample_every = sample_every;
	return wl;
err:
	if (wl) {
		free(wl->cpus);
		free(wl->cmds);
	}
	free(wl);
	return NULL;
}

void cmdq_wl_free(struct cmdq_wl *wl)
{
	if (!wl)
		return;
	free(wl->cpus);
	free(wl->cmds);
	free(wl);
}

/*
 * The shape of op seq of cpu: how many commands it issues and whether with a CMD_SYNC. Fixed:
 * cmds_per_sync and a sync, every op. Mixed: 0 to cmds_per_sync commands, uniformly, and one
 * op in four that has commands issues them without a sync (the kernel's
 * arm_smmu_cmdq_batch_add() for a full batch); an op without commands is a CMD_SYNC alone
 * (arm_smmu_cmdq_issue_sync()). A function of (seed, cpu, seq) alone (splitmix64), so the
 * trace check knows what any op issued without a record of it.
 */
static uint64_t op_hash(const struct cmdq_wl *wl, uint32_t cpu, uint64_t seq)
{
	uint64_t z = wl->shape_seed + ((uint64_t)cpu << 40) + seq * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct op_shape {
	uint32_t n; /* commands */
	bool sync;
};

static struct op_shape op_shape(const struct cmdq_wl *wl, uint32_t cpu, uint64_t seq)
{
	if (!wl->mixed)
		return (struct op_shape){ .n = wl->n, .sync = true };
	uint64_t h = op_hash(wl, cpu, seq);
	uint32_t n = (uint32_t)(h % (wl->n + 1));

	return (struct op_shape){ .n = n, .sync = !n || (h >> 32) % 4 };
}

static uint32_t op_cmds(const struct cmdq_wl *wl, uint32_t cpu, uint64_t seq)
{
	return op_shape(wl, cpu, seq).n;
}

/* This op's think time: think_ns, or uniform in think_ns x [1 - jitter, 1 + jitter]. */
static uint64_t think_time(struct cmdq_wl *wl, struct cmdq_wl_cpu *me)
{
	return wl_jittered_ns(wl->think_ns, wl->jitter, &me->rng);
}

static void tag(const struct cmdq_wl *wl, struct lab_cpu *c, struct cmdq_wl_cpu *me, uint64_t seq)
{
	uint32_t n = op_cmds(wl, c->id, seq);

	sim_note_host_write(me->cmds, n * sizeof(*me->cmds));
	for (uint32_t i = 0; i < n; i++)
		me->cmds[i] = smmu_tag_cmd(c->id, seq, i, n);
	me->tagged = seq;
}

/*
 * The think: local work. On a virtual CPU the CPU does not give way at its end but at its
 * next shared access (sim_local_work): the same virtual time, a coroutine switch fewer.
 */
static void think_ns(struct lab_cpu *c, uint64_t ns)
{
	if (ns && c->clock->source == LAB_CLOCK_SIM)
		sim_local_work(c, ns);
	else
		lab_delay_ns(c, ns);
}

/*
 * Spend ns of local work from t (the op's end, read just before) and return when it ended:
 * the next op's start. Natively the busy loop's last clock read is that time; on a virtual
 * CPU it is t + ns exactly, without reading the clock again.
 */
static uint64_t think_from(struct lab_cpu *c, uint64_t t, uint64_t ns)
{
	if (!ns)
		return t;
	if (c->clock->source == LAB_CLOCK_SIM) {
		think_ns(c, ns);
		return t + ns;
	}
	uint64_t end = t + ns;
	while ((t = lab_now(c)) < end)
		lab_cpu_relax();
	return t;
}

/* The first sync that returned early, in words. */
static void sync_violation(struct cmdq_wl *wl, uint32_t cpu, uint64_t seq, uint32_t n,
			   uint64_t last_cmds, uint64_t done)
{
	char what[96] = "";

	if (last_cmds != seq)
		snprintf(what, sizeof(what),
			 " (%s, after op %" PRIu64 "'s commands issued without one)",
			 n ? "commands" : "a CMD_SYNC alone", last_cmds);
	snprintf(wl->sync_detail, sizeof(wl->sync_detail),
		 "cpu %u: issue(sync) of op %" PRIu64
		 "%s returned while the device had consumed its "
		 "commands only up to op %" PRIu64 " (PROD 0x%x, CONS 0x%x)",
		 cpu, seq, what, done, smmu_prod(wl->dev), smmu_cons(wl->dev));
}

int cmdq_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct cmdq_wl *wl = arg;
	struct cmdq_wl_cpu *me = &wl->cpus[c->id];
	uint64_t seq = ++me->seq, t0 = 0, t1 = 0;
	struct op_shape shape = op_shape(wl, c->id, seq);
	bool timed = false;

	if (measuring && --me->countdown == 0) {
		me->countdown = wl->sample_every;
		timed = true;
	}
	/* The phase breakdown brackets every op: sampling thins the latency record only. */
	bool stamped = timed || c->phases_on;

	if (me->tagged != seq)
		tag(wl, c, me, seq);
	if (shape.n)
		me->last_cmds = seq;
	if (stamped) {
		t0 = me->t_next ? me->t_next : lab_now(c);
		host_cpu_enter_plugin(c, t0);
	}
	int rc = wl->ops->issue(c, wl->state, me->cmds, shape.n, shape.sync);
	if (stamped) {
		t1 = lab_now(c);
		host_cpu_leave_plugin(c, t1);
	}
	if (timed)
		hist_record(&hists[0], t1 - t0);

	if (rc) {
		if (!__atomic_exchange_n(&wl->failed, 1, __ATOMIC_ACQ_REL))
			snprintf(wl->error, sizeof(wl->error),
				 "issue() returned %d (%s) on cpu %u, op %" PRIu64
				 "; the device is at "
				 "slot %u (PROD 0x%x, CONS 0x%x)",
				 rc, util_rc_text(rc), c->id, seq,
				 lab_q_idx(smmu_iface(wl->dev), smmu_cons(wl->dev)),
				 smmu_prod(wl->dev), smmu_cons(wl->dev));
		return rc;
	}
	/* An unsynced op waits for nothing: a later sync of this CPU's covers its commands. */
	if (shape.sync && me->last_cmds) {
		if (wl->oracle) {
			sim_take_turn(); /* a null issue() took none: the device as of now */
			uint64_t done = smmu_done_seq(wl->dev, c->id);
			if (done < me->last_cmds &&
			    !__atomic_exchange_n(&wl->sync_bad, 1, __ATOMIC_ACQ_REL))
				sync_violation(wl, c->id, seq, shape.n, me->last_cmds, done);
		}
		me->synced = me->last_cmds;
	}
	uint64_t think = think_time(wl, me);
	tag(wl, c, me, seq + 1); /* during the think when there is one */
	/*
	 * Chain only into a measured op that will be stamped (an unsampled op reads no clock);
	 * never from the warm-up, so that the engine's work when measuring starts is no op's.
	 */
	bool next_stamped = measuring && (c->phases_on || me->countdown == 1);
	if (stamped && next_stamped) {
		me->t_next = think_from(c, t1, think);
	} else {
		me->t_next = 0;
		think_ns(c, think);
	}
	return 0;
}

const char *cmdq_wl_error(const struct cmdq_wl *wl)
{
	return __atomic_load_n(&wl->failed, __ATOMIC_ACQUIRE) ? wl->error : NULL;
}

uint64_t cmdq_wl_issued(const struct cmdq_wl *wl, uint32_t cpu)
{
	return wl->cpus[cpu].seq;
}

const char *cmdq_wl_sync_violation(const struct cmdq_wl *wl)
{
	return __atomic_load_n(&wl->sync_bad, __ATOMIC_ACQUIRE) ? wl->sync_detail : NULL;
}

struct expect {
	uint64_t seq; /* next op expected from this CPU */
	uint32_t i;   /* next command of it */
};

/* The first op of cpu from seq on that issued commands (past its last op: none). */
static uint64_t next_with_cmds(const struct cmdq_wl *wl, uint32_t cpu, uint64_t seq)
{
	while (seq <= wl->cpus[cpu].seq && !op_cmds(wl, cpu, seq))
		seq++;
	return seq;
}

bool cmdq_wl_check_trace(const struct cmdq_wl *wl, bool *exactly_once, char *once_detail,
			 bool *in_order, char *order_detail, size_t detail_len)
{
	uint64_t n;
	bool truncated = false, q_truncated;
	const struct lab_cmd *trace;
	struct expect *exp = calloc(wl->ncpus, sizeof(*exp));
	uint32_t nents = lab_q_nents(smmu_iface(wl->dev));
	uint32_t prev_cpu = UINT32_MAX, prev_i = 0;
	uint64_t prev_seq = 0;

	*exactly_once = *in_order = true;
	if (!exp) {
		*exactly_once = false;
		snprintf(once_detail, detail_len, "out of memory checking the trace");
		return !truncated;
	}
	for (uint32_t cpu = 0; cpu < wl->ncpus; cpu++)
		exp[cpu].seq = next_with_cmds(wl, cpu, 1);
	/* Each queue's trace in its own fetch order; a CPU's ops stay on one queue, so each
	 * CPU's expectations carry across queues unchanged. */
	for (uint32_t qi = 0; qi < smmu_nqueues(wl->dev); qi++) {
		trace = smmu_q_trace(wl->dev, qi, &n, &q_truncated);
		truncated |= q_truncated;
		prev_cpu = UINT32_MAX;
		for (uint64_t p = 0; p < n; p++) {
			uint32_t cpu, i, cnt;
			uint64_t seq;
			if (!smmu_untag_cmd(&trace[p], &cpu, &seq, &i, &cnt)) {
				prev_cpu = UINT32_MAX; /* a CMD_SYNC (or other) separates ops */
				continue;
			}
			uint32_t slot = (uint32_t)(p % nents);
			if (cpu >= wl->ncpus || !seq || seq > wl->cpus[cpu].seq ||
			    cnt != op_cmds(wl, cpu, seq)) {
				if (*exactly_once)
					snprintf(once_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): a command nobody "
						 "issued (cpu %u, op %" PRIu64 ", cmd %u of %u)",
						 slot, p, cpu, seq, i, cnt);
				*exactly_once = false;
				continue;
			}
			struct expect *e = &exp[cpu];
			if (seq < e->seq || (seq == e->seq && i < e->i)) {
				if (*exactly_once)
					snprintf(once_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): cpu %u op %" PRIu64
						 " cmd %u consumed a second time",
						 slot, p, cpu, seq, i);
				*exactly_once = false;
			} else if (seq != e->seq || i != e->i) {
				if (*in_order)
					snprintf(order_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): caller cpu %u, "
						 "expected op %" PRIu64 " cmd %u, found op %" PRIu64
						 " cmd %u",
						 slot, p, cpu, e->seq, e->i, seq, i);
				*in_order = false;
			}
			if (i > 0 && (prev_cpu != cpu || prev_seq != seq || prev_i != i - 1)) {
				if (*in_order)
					snprintf(order_detail, detail_len,
						 "slot %u (trace position %" PRIu64
						 "): cpu %u op %" PRIu64
						 " cmd %u is not contiguous with cmd %u of the "
						 "same op",
						 slot, p, cpu, seq, i, i - 1);
				*in_order = false;
			}
			if (seq > e->seq || (seq == e->seq && i >= e->i)) {
				e->seq = i + 1 == cnt ? next_with_cmds(wl, cpu, seq + 1) : seq;
				e->i = i + 1 == cnt ? 0 : i + 1;
			}
			prev_cpu = cpu;
			prev_seq = seq;
			prev_i = i;
		}
	}
	for (uint32_t cpu = 0; cpu < wl->ncpus && !truncated && wl->n; cpu++) {
		/* A CPU's commands after its last sync may still be on their way. */
		if (exp[cpu].seq <= wl->cpus[cpu].synced && *exactly_once) {
			snprintf(once_detail, detail_len,
				 "cpu %u op %" PRIu64 " cmd %u was issued but never consumed "
				 "(cpu %u issued %" PRIu64 " ops, synced up to op %" PRIu64 ")",
				 cpu, exp[cpu].seq, exp[cpu].i, cpu, wl->cpus[cpu].seq,
				 wl->cpus[cpu].synced);
			*exactly_once = false;
		}
	}
	free(exp);
	return !truncated;
}
