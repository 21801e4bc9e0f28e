/* SPDX-License-Identifier: MIT */
/*
 * The sim engine: coroutine switching, the scheduler's order, the memory model's prices,
 * sleeping spin-waits, determinism, a whole cmdq trial on virtual CPUs, and its speed.
 *
 * This file is built against the sim binding of lab.h, as a sim plugin is, so the test ops
 * below are what a plugin's code becomes under the sim.
 */
#define LAB_ENGINE_SIM 1

#include <criterion/criterion.h>

#include "built_plugins.h"
#include "cmdq_trial.h"
#include <criterion/logging.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/host.h"
#include "loader/loader.h"
#include "params/params.h"
#include "run/trial_run.h"
#include "engine/sim/ctx.h"
#include "engine/sim/sim.h"
#include "engine/sim/sim_engine.h"
#include "engine/sim/sim_internal.h"
#include "workload/iova_wl.h"
#include "workload/micro_wl.h"

/* ---- ctx ---------------------------------------------------------------------------------- */

static struct sim_ctx main_ctx, co_ctx;
static int co_steps;

static void co_fn(void *arg)
{
	int *v = arg;
	for (;;) {
		co_steps += *v;
		sim_ctx_switch(&co_ctx, &main_ctx);
	}
}

Test(sim_ctx, ping_pong, .timeout = 10)
{
	int step = 3;

	cr_assert_eq(sim_ctx_make(&co_ctx, 64 << 10, co_fn, &step), 0);
	for (int i = 0; i < 1000; i++)
		sim_ctx_switch(&main_ctx, &co_ctx);
	cr_assert_eq(co_steps, 3000);
	sim_ctx_free(&co_ctx);
}

/* ---- the binding: lab.h's atomics table against the sim's implementation --------------- */

/*
 * Every row of LAB_ATOMICS at both widths: this file's lab_* are the sim binding (outside a
 * simulation lab_sim_*() does the plain operation), the row's native expression is what the
 * native binding compiles to. Both must find and leave the same values. The checks are
 * blocks, not statements: the table puts its rows side by side.
 */
static const uint64_t binding_samples[] = { 0,		 1,	      2,
					    0x80000000u, 0xffffffffu, 0x123456789abcdef0ull,
					    UINT64_MAX };

#define BINDING_CHECK(N, shape, name, kind, native) BINDING_CHECK_##shape(N, name, native)
#define BINDING_CHECK_LOAD(N, name, native)                                                        \
	{                                                                                          \
		uint##N##_t a = (uint##N##_t)x, *p = &a;                                           \
		enum lab_order o = LAB_ACQUIRE;                                                    \
		uint##N##_t want = native;                                                         \
		cr_expect_eq(lab_##name##N(&a, o), want, "lab_" #name #N "(%#" PRIx64 ")", x);     \
	}
#define BINDING_CHECK_STORE(N, name, native)                                                       \
	{                                                                                          \
		uint##N##_t a = (uint##N##_t)x, b = a, v = (uint##N##_t)y, *p = &a;                \
		enum lab_order o = LAB_RELEASE;                                                    \
		native;                                                                            \
		lab_##name##N(&b, v, o);                                                           \
		cr_expect_eq(b, a, "lab_" #name #N "(%#" PRIx64 ", %#" PRIx64 ")", x, y);          \
	}
#define BINDING_CHECK_CAS(N, name, native)                                                         \
	{                                                                                          \
		uint##N##_t a = (uint##N##_t)x, b = a, *p = &a;                                    \
		uint##N##_t old = (uint##N##_t)z, new_ = (uint##N##_t)y;                           \
		enum lab_order o = LAB_ACQ_REL;                                                    \
		uint##N##_t want = native, got = lab_##name##N(&b, old, new_, o);                  \
		cr_expect(got == want && b == a,                                                   \
			  "lab_" #name #N "(%#" PRIx64 ", old %#" PRIx64 ", new %#" PRIx64 ")", x, \
			  z, y);                                                                   \
	}
#define BINDING_CHECK_RMW(N, name, native)                                                         \
	{                                                                                          \
		uint##N##_t a = (uint##N##_t)x, b = a, v = (uint##N##_t)y, *p = &a;                \
		enum lab_order o = LAB_SEQ_CST;                                                    \
		uint##N##_t want = native, got = lab_##name##N(&b, v, o);                          \
		cr_expect(got == want && b == a, "lab_" #name #N "(%#" PRIx64 ", %#" PRIx64 ")",   \
			  x, y);                                                                   \
	}
#define BINDING_CHECK_WIDTH(N) LAB_ATOMICS(BINDING_CHECK, N)

/* ---- the run queue ------------------------------------------------------------------------ */

/*
 * The run queue pops the earliest (clock, id) whichever form holds it: 200 CPUs (a tree with
 * leaves to spare) queued and taken in a seeded random order that fills it past a quarter
 * (the winner tree takes over) and drains it below an eighth (the heap takes it back), several
 * times, each pop checked against a plain scan of what is queued.
 */
Test(sim_rq, pops_in_key_order_through_heap_and_tree)
{
	enum { N = 200 };
	struct sim *s = calloc(1, sizeof(*s));
	uint64_t queued[N]; /* key, or 0 when not queued (no key is 0 here: clocks from 1) */
	uint64_t rng = 12345, now = 1;
	uint32_t n = 0, to_tree = 0, to_heap = 0;

	cr_assert_not_null(s);
	cr_assert_eq(sim_rq_alloc(s, N), 0);
	s->horizon = UINT64_MAX;
	memset(queued, 0, sizeof(queued));
	for (int round = 0; round < 6; round++) {
		uint32_t fill = round % 2 ? 190 : 80, drain = round % 2 ? 3 : 20;
		while (n < fill) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t id = (uint32_t)(rng >> 33) % N;
			if (queued[id])
				continue;
			uint64_t clock = now + (rng >> 20) % 5000; /* at or after the last taken */
			sim_rq_push(s, clock, id);
			queued[id] = clock << 10 | id;
			n++;
			to_tree += n == s->rq_tree_at && sim_rq_in_tree(s);
		}
		cr_assert(sim_rq_in_tree(s), "filled to %u of %u: the tree holds the queue", n, N);
		while (n > drain) {
			uint64_t want = UINT64_MAX;
			for (uint32_t i = 0; i < N; i++)
				if (queued[i] && queued[i] < want)
					want = queued[i];
			uint64_t got = sim_rq_pop(s);
			cr_assert_eq(got, want, "pop %u: %#" PRIx64 ", the earliest is %#" PRIx64,
				     n, got, want);
			queued[want & 1023] = 0;
			now = want >> 10;
			n--;
			cr_assert_eq(s->rq_n, n);
		}
		to_heap += !sim_rq_in_tree(s);
		cr_assert(!sim_rq_in_tree(s), "drained to %u: the heap has it back", n);
	}
	cr_assert_eq(to_tree, 6, "the tree took over on every fill");
	cr_assert_eq(to_heap, 6);
	free(s->heap);
	free(s->rq);
	free(s);
}

Test(sim_binding, every_atomic_matches_its_native_row)
{
	size_t n = sizeof(binding_samples) / sizeof(binding_samples[0]);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++) {
				uint64_t x = binding_samples[i], y = binding_samples[j];
				uint64_t z = binding_samples[k];
				LAB_ATOMIC_WIDTHS(BINDING_CHECK_WIDTH)
			}
}

/* ---- a small harness: one op function, N virtual CPUs ------------------------------------ */

struct shared {
	uint32_t counter LAB_CACHE_ALIGNED;
	uint32_t plain;
	struct lab_spinlock lock LAB_CACHE_ALIGNED;
	struct lab_qspinlock qlock LAB_CACHE_ALIGNED;
	uint32_t qnodes_left; /* ops that ended with their CPU's queue nodes still in use */
	uint32_t flag LAB_CACHE_ALIGNED;
	uint32_t slot[16] LAB_CACHE_ALIGNED;		   /* one line, a word per CPU */
	uint32_t own[SIM_MAX_CPUS * 16] LAB_CACHE_ALIGNED; /* one line per CPU */
	uint64_t log_t[4096];
	uint32_t log_n;
	uint64_t max_hold;
};

static struct shared *sh;

static int op_add(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint64_t t0 = lab_now(c);
	(void)arg;
	lab_fetch_add32(&sh->counter, 1, LAB_RELAXED);
	if (measuring)
		hist_record(&h[0], lab_now(c) - t0);
	return 0;
}

static int op_cas(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint64_t t0 = lab_now(c);
	uint32_t v = lab_load32(&sh->counter, LAB_RELAXED), old;
	(void)arg;
	while ((old = lab_cas32(&sh->counter, v, v + 1, LAB_RELAXED)) != v)
		v = old;
	if (measuring)
		hist_record(&h[0], lab_now(c) - t0);
	return 0;
}

/* A critical section: a plain read-modify-write across a delay, which two holders would lose. */
static void critical(struct lab_cpu *c, uint64_t hold_ns)
{
	uint32_t v = sh->plain;

	lab_delay_ns(c, hold_ns);
	sh->plain = v + 1;
}

static int op_ticket(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint64_t t0 = lab_now(c);
	(void)arg;
	lab_spin_lock(c, &sh->lock);
	critical(c, 10);
	lab_spin_unlock(&sh->lock);
	if (measuring)
		hist_record(&h[0], lab_now(c) - t0);
	lab_count(c, 0, 1);
	return 0;
}

/*
 * op_ticket's critical section under the queued spinlock, held longer than a line transfer so
 * that a waiter let in early would overlap the holder.
 */
static int op_qspin(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_qspin_lock(c, &sh->qlock);
	critical(c, 200);
	lab_qspin_unlock(&sh->qlock);
	sh->qnodes_left += c->host->qnodes[c->id * LAB_QNODES].count != 0;
	lab_count(c, 0, 1);
	return 0;
}

static int op_private(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_store32(&sh->own[c->id * 16], lab_load32(&sh->own[c->id * 16], LAB_RELAXED) + 1,
		    LAB_RELAXED);
	return 0;
}

/* Records every CPU's clock at each op: the sim must run them in time order. */
static int op_log(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_delay_ns(c, 7 + 13 * c->id);
	if (sh->log_n < LAB_ARRAY_SIZE(sh->log_t))
		sh->log_t[sh->log_n++] = lab_now(c);
	return 0;
}

/* op_log with the delay as sim_local_work: the host-side log waits for the CPU's turn. */
static int op_local_log(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	sim_local_work(c, 7 + 13 * c->id);
	sim_take_turn();
	if (sh->log_n < LAB_ARRAY_SIZE(sh->log_t))
		sh->log_t[sh->log_n++] = lab_now(c);
	return 0;
}

/* Two spells of local work around a shared add, as delays or as sim_local_work. */
static int op_delay_add(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_delay_ns(c, 50 + 7 * c->id);
	lab_fetch_add32(&sh->counter, 1, LAB_RELAXED);
	lab_delay_ns(c, 30);
	return 0;
}

static int op_local_add(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	sim_local_work(c, 50 + 7 * c->id);
	lab_fetch_add32(&sh->counter, 1, LAB_RELAXED);
	sim_local_work(c, 30);
	return 0;
}

/* A microsecond of local work and nothing shared. */
static int op_work(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_delay_ns(c, 1000);
	sh->log_t[c->id] = lab_now(c); /* when its latest op ended */
	return 0;
}

/* CPU 0 and 1 hand a token back and forth: one line transfer per hand-off. */
static int op_ping(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint32_t v;
	(void)arg;
	(void)h;
	(void)measuring;
	LAB_COND_LOAD32(c, &sh->flag, v, (v & 1) == c->id, LAB_ACQUIRE);
	lab_store32(&sh->flag, v + 1, LAB_RELEASE);
	return 0;
}

/*
 * CPUs ping_a and ping_b hand flag to each other (op_ping's roles); every other CPU reads flag
 * at its first op (CPU 0, the lowest id at time 0, is the line's first toucher), then does 1
 * ns of work per op.
 */
static uint32_t ping_a, ping_b;

static int op_ping_between(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint32_t v;
	(void)arg;
	(void)h;
	(void)measuring;
	if (c->id != ping_a && c->id != ping_b) {
		if (!sh->log_n++)
			(void)lab_load32(&sh->flag, LAB_RELAXED);
		lab_delay_ns(c, 1);
		return 0;
	}
	LAB_COND_LOAD32(c, &sh->flag, v, (v & 1) == (c->id == ping_b), LAB_ACQUIRE);
	lab_store32(&sh->flag, v + 1, LAB_RELEASE);
	return 0;
}

/*
 * CPU 0 waits on flag, but its condition also reads counter, which is what CPU 1 writes
 * (llq's queue-full wait does this: it watches the prod/cons word and tries the lock word).
 * Spinning natively it would see the write; parked, it must be woken by it too.
 */
static int op_two_words(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint32_t v;
	(void)arg;
	(void)h;
	(void)measuring;
	if (c->id == 0) {
		LAB_COND_LOAD32(c, &sh->flag, v, v || lab_load32(&sh->counter, LAB_RELAXED),
				LAB_ACQUIRE);
		sh->log_t[0] = lab_now(c);
	} else {
		lab_delay_ns(c, 1000);
		lab_store32(&sh->counter, 1, LAB_RELEASE);
	}
	return 0;
}

/* Every CPU CASes its own word of one shared line: every compare succeeds. */
static int op_cas_own_word(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	uint32_t *w = &sh->slot[c->id % 16];
	(void)arg;
	(void)h;
	(void)measuring;
	lab_cas32(w, *w, *w + 1, LAB_RELAXED); /* *w: only this CPU writes it */
	return 0;
}

/* The same line and the same instruction, but a compare that never matches: every one fails. */
static int op_cas_never_matches(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	lab_cas32(&sh->slot[c->id % 16], UINT32_MAX, 1, LAB_RELAXED);
	return 0;
}

/*
 * CPUs 0 and 1 race to CAS counter from 0 to 1 at the same instant; CPU 2 then CASes another
 * word of the same line. Each logs the time its CAS completed.
 */
static int op_cas_race(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	if (c->id < 2)
		lab_cas32(&sh->counter, 0, 1, LAB_RELAXED);
	else
		lab_cas32(&sh->plain, 0, 1, LAB_RELAXED);
	sh->log_t[c->id] = lab_now(c);
	return 0;
}

/*
 * Message passing, the litmus test of reordered loads: CPU 1 writes data (counter) then, with a
 * release, flag, each op the next number; CPU 0 loads flag with mp_order, then data twice,
 * back to back (a delay would end the window a load can be satisfied early in).
 * log_t[0] counts the ops that saw data behind flag (the flag's load performed after data's),
 * log_t[1] those whose second load of data went back before the first (never allowed).
 */
static int mp_order;

static int op_mp(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	if (c->id == 1) {
		uint32_t k = ++sh->own[16]; /* CPU 1's own count, plain */
		lab_store32(&sh->counter, k, LAB_RELAXED);
		lab_store32(&sh->flag, k, LAB_RELEASE);
		lab_delay_ns(c, 50);
	} else {
		uint32_t f = lab_load32(&sh->flag, mp_order);
		uint32_t d = lab_load32(&sh->counter, LAB_RELAXED);
		uint32_t d2 = lab_load32(&sh->counter, LAB_RELAXED);
		sh->log_t[0] += d < f;
		sh->log_t[1] += d2 < d;
	}
	return 0;
}

static const struct lab_counter test_counters[] = {
	{ "acquisitions", LAB_COUNTER_EVENTS, "lock acquisitions" },
};

struct run_out {
	struct engine_result res;
	struct sim_stats st;
	struct lat_summary lat;
	uint64_t ops, count0;
	int rc;
};

static void run_topo(engine_op_fn op, uint32_t ncpus, uint64_t ops_per_cpu, uint64_t duration_ns,
		     const struct scenario_machine *m, const struct sim_topology *topo,
		     struct run_out *out);

static void run(engine_op_fn op, uint32_t ncpus, uint64_t ops_per_cpu, uint64_t duration_ns,
		const struct scenario_machine *m, struct run_out *out)
{
	run_topo(op, ncpus, ops_per_cpu, duration_ns, m, NULL, out);
}

static void run_topo(engine_op_fn op, uint32_t ncpus, uint64_t ops_per_cpu, uint64_t duration_ns,
		     const struct scenario_machine *m, const struct sim_topology *topo,
		     struct run_out *out)
{
	struct host_env *env = host_env_new(ncpus, 1, false, true);
	struct hist all;

	cr_assert_not_null(env);
	memset(out, 0, sizeof(*out));
	memset(sh, 0, sizeof(*sh));
	struct engine_job job = {
		.env = env,
		.n_metrics = 1,
		.warmup_ns = duration_ns / 10,
		.duration_ns = duration_ns,
		.ops_per_cpu = ops_per_cpu,
		.watchdog_ns = 100000000,
		.op = op,
		.counters = test_counters,
		.n_counters = 1,
	};
	out->rc = sim_run(&job, m, topo, NULL, &out->res, &out->st);
	cr_assert_eq(out->rc, 0);
	hist_reset(&all);
	for (uint32_t i = 0; i < ncpus; i++) {
		hist_merge(&all, &out->res.cpus[i].hists[0]);
		out->ops += out->res.cpus[i].ops;
		out->count0 += host_env_cpu(env, i)->counters[0];
	}
	hist_summarize(&all, &out->lat);
	engine_result_free(&out->res);
	host_env_free(env);
}

static struct scenario_machine mach;

static void setup(void)
{
	sh = aligned_alloc(LAB_CACHE_LINE, sizeof(*sh));
	cr_assert_not_null(sh);
	sim_machine_defaults(&mach);
}

static void teardown(void)
{
	free(sh);
}

TestSuite(sim, .init = setup, .fini = teardown, .timeout = 60);

Test(sim, atomic_add_is_atomic)
{
	struct run_out o;

	run(op_add, 16, 1000, 0, &mach, &o);
	cr_assert_eq(sh->counter, 16000);
	cr_assert_eq(o.ops, 16000);
}

/* The most virtual CPUs a run may have, each doing its share. */
Test(sim, runs_the_most_cpus, .timeout = 60)
{
	struct run_out o;

	run(op_add, SIM_MAX_CPUS, 20, 0, &mach, &o);
	cr_assert_eq(sh->counter, SIM_MAX_CPUS * 20);
	cr_assert_eq(o.ops, SIM_MAX_CPUS * 20);
}

Test(sim, cas_loop_is_atomic)
{
	struct run_out o;

	run(op_cas, 8, 500, 0, &mach, &o);
	cr_assert_eq(sh->counter, 4000);
}

Test(sim, ticket_lock_excludes_and_waiters_sleep)
{
	struct run_out o;

	run(op_ticket, 32, 100, 0, &mach, &o);
	cr_assert_eq(sh->plain, 3200, "lost updates: %u", sh->plain);
	cr_assert_eq(o.count0, 3200);
	cr_assert_gt(o.st.parks, 0);
}

/*
 * Mutual exclusion through each of the queued spinlock's paths: the free lock's cmpxchg (1
 * CPU), the pending waiter (2), the MCS queue behind it (3, 32); every CPU's queue nodes are
 * given back once it holds the lock, and the lock ends free with no queue.
 */
Test(sim, queued_spinlock_excludes_on_every_path)
{
	static const uint32_t cpus[] = { 1, 2, 3, 32 };

	for (size_t i = 0; i < LAB_ARRAY_SIZE(cpus); i++) {
		struct run_out o;

		run(op_qspin, cpus[i], 100, 0, &mach, &o);
		cr_assert_eq(sh->plain, cpus[i] * 100, "%u CPUs: lost updates: %u", cpus[i],
			     sh->plain);
		cr_assert_eq(o.count0, cpus[i] * 100);
		cr_assert_eq(sh->qnodes_left, 0, "%u CPUs: %u ops left a queue node in use",
			     cpus[i], sh->qnodes_left);
		cr_assert(!sh->qlock.lp && !sh->qlock.tail,
			  "%u CPUs: the lock ends 0x%x, tail 0x%x", cpus[i], sh->qlock.lp,
			  sh->qlock.tail);
		if (cpus[i] ==
		    32) /* with fewer, a pending waiter's own fetch-or may outlast the hold */
			cr_assert_gt(o.st.parks, 0, "%u CPUs: nobody waited", cpus[i]);
	}
}

/*
 * What the queue is for: a hand-over moves the lock word and one node, so the line transfers
 * per acquisition do not grow with the waiters; at each hand-over of a ticket lock every
 * waiter re-reads the word, so its transfers grow with them.
 */
Test(sim, queued_spinlock_hand_over_does_not_grow_with_the_waiters, .timeout = 60)
{
	static const uint32_t cpus[2] = { 8, 64 };
	double q[2], t[2];

	for (int i = 0; i < 2; i++) {
		struct run_out o;

		run(op_qspin, cpus[i], 50, 0, &mach, &o);
		q[i] = (double)o.st.misses / (double)o.ops;
		run(op_ticket, cpus[i], 50, 0, &mach, &o);
		t[i] = (double)o.st.misses / (double)o.ops;
	}
	cr_assert_lt(q[1], 1.5 * q[0],
		     "queued: %.1f transfers per acquisition at 8 CPUs, %.1f at 64", q[0], q[1]);
	cr_assert_gt(t[1], 4 * t[0], "ticket: %.1f transfers per acquisition at 8 CPUs, %.1f at 64",
		     t[0], t[1]);
	cr_assert_lt(q[1], t[1] / 4);
}

Test(sim, runs_cpus_in_virtual_time_order)
{
	struct run_out o;

	run(op_log, 5, 200, 0, &mach, &o);
	cr_assert_eq(sh->log_n, 1000);
	for (uint32_t i = 1; i < sh->log_n; i++)
		cr_assert_geq(sh->log_t[i], sh->log_t[i - 1], "event %u at %lu before %lu", i,
			      (unsigned long)sh->log_t[i], (unsigned long)sh->log_t[i - 1]);
}

/* A CPU that carries on after local work still shows nothing to the others before its time. */
Test(sim, local_work_takes_its_turn_before_what_others_see)
{
	struct run_out o;

	run(op_local_log, 5, 200, 0, &mach, &o);
	cr_assert_eq(sh->log_n, 1000);
	for (uint32_t i = 1; i < sh->log_n; i++)
		cr_assert_geq(sh->log_t[i], sh->log_t[i - 1], "event %u at %lu before %lu", i,
			      (unsigned long)sh->log_t[i], (unsigned long)sh->log_t[i - 1]);
}

/* The same virtual times and the same work as delays, with fewer coroutine switches. */
Test(sim, local_work_keeps_the_times_and_spares_switches)
{
	struct run_out d, l;

	run(op_delay_add, 8, 500, 0, &mach, &d);
	cr_assert_eq(sh->counter, 4000);
	run(op_local_add, 8, 500, 0, &mach, &l);
	cr_assert_eq(sh->counter, 4000);
	cr_assert_eq(l.st.end_ns, d.st.end_ns, "ended at %lu ns, not %lu",
		     (unsigned long)l.st.end_ns, (unsigned long)d.st.end_ns);
	cr_assert_eq(l.st.lab_ops, d.st.lab_ops);
	cr_assert_eq(l.st.misses, d.st.misses);
	cr_assert_lt(l.st.switches, d.st.switches, "%lu switches, as many as delays' %lu",
		     (unsigned long)l.st.switches, (unsigned long)d.st.switches);
}

/*
 * Four CPUs, two cores of two SMT threads: 0 and 2 are one core's, 1 and 3 the other's (10 ns
 * apart, as in the mctop tables; 50 ns between the cores).
 */
static double smt_lat[16] = { 0, 50, 10, 50, 50, 0, 50, 10, 10, 50, 0, 50, 50, 10, 50, 0 };
static const struct sim_topology smt_topo = { .n = 4, .lat = smt_lat, .max = 50, .median = 50 };

/* Beside a sibling in the run, local work takes 1 / smt_share as long; alone on its core, not. */
Test(sim, smt_threads_share_their_core_at_local_work)
{
	struct run_out o;

	mach.smt_ns = 20;
	mach.smt_share = 0.5;
	run_topo(op_work, 2, 10, 0, &mach, &smt_topo, &o); /* CPUs 0 and 1: two cores */
	cr_assert_eq(o.st.end_ns, 10 * 1000, "ended at %lu", (unsigned long)o.st.end_ns);
	run_topo(op_work, 3, 10, 0, &mach, &smt_topo, &o); /* 0 and 2 share a core, 1 alone */
	cr_assert_eq(sh->log_t[0], 10 * 2000, "cpu0 ended at %lu", (unsigned long)sh->log_t[0]);
	cr_assert_eq(sh->log_t[1], 10 * 1000, "cpu1 ended at %lu", (unsigned long)sh->log_t[1]);
	cr_assert_eq(sh->log_t[2], 10 * 2000, "cpu2 ended at %lu", (unsigned long)sh->log_t[2]);
	mach.smt_ns = 0; /* no SMT pairs: every CPU a core of its own */
	run_topo(op_work, 4, 10, 0, &mach, &smt_topo, &o);
	cr_assert_eq(o.st.end_ns, 10 * 1000, "ended at %lu", (unsigned long)o.st.end_ns);
}

Test(sim, private_lines_cost_hits)
{
	struct run_out o;

	/* A load and a store per op, each op_ns + local_ns; the first load costs home_ns and
	 * brings the line exclusive, so every store hits. */
	mach.op_ns = 1;
	mach.local_ns = 2;
	mach.home_ns = 40;
	run(op_private, 1, 1000, 0, &mach, &o);
	cr_assert_eq(o.st.end_ns, (1 + 40) + (1 + 2) + 999 * 6, "end %lu",
		     (unsigned long)o.st.end_ns);
	cr_assert_eq(o.st.misses, 1);
}

/* Every transfer 100 ns, from a core or the home, and nothing added per lab.h op. */
static void transfers_of_100ns(void)
{
	mach.op_ns = 0;
	mach.line_ns = 100;
	mach.home_ns = 100;
}

Test(sim, hand_off_costs_one_transfer_each_way)
{
	struct run_out o;

	transfers_of_100ns();
	mach.local_ns = 0;
	run(op_ping, 2, 500, 0, &mach, &o);
	cr_assert_eq(sh->flag, 1000);
	/* Each hand-off: the waiter's reload (100) + its store's ownership transfer (100). */
	cr_assert(o.st.end_ns >= 1000 * 200 - 400 && o.st.end_ns <= 1000 * 200 + 400, "end %lu",
		  (unsigned long)o.st.end_ns);
	cr_assert_gt(o.st.parks, 100);
}

/*
 * Three sockets of two cores (20 ns apart within one, 100 ns across). With socket_ns a line's
 * home is the socket of the CPU that touched it first, and a transfer between two other sockets
 * goes through it: half of each of the three pairs' costs, 150 ns here.
 */
static double sock_lat[36] = {
	0,   20,  100, 100, 100, 100, /* */
	20,  0,	  100, 100, 100, 100, /* */
	100, 100, 0,   20,  100, 100, /* */
	100, 100, 20,  0,   100, 100, /* */
	100, 100, 100, 100, 0,	 20,  /* */
	100, 100, 100, 100, 20,	 0,
};
static const struct sim_topology sock_topo = { .n = 6, .lat = sock_lat, .max = 100, .median = 100 };

Test(sim, a_transfer_between_two_sockets_goes_through_the_lines_home)
{
	struct run_out o;

	transfers_of_100ns();
	mach.local_ns = 0;
	ping_a = 2;
	ping_b = 4; /* sockets 1 and 2; CPU 0 (socket 0) touches the line first */
	run_topo(op_ping_between, 5, 500, 0, &mach, &sock_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	/* every hand-off a reload and an ownership transfer, each the pair's 100 ns */
	cr_assert(o.st.end_ns >= 1000 * 200 - 400 && o.st.end_ns <= 1000 * 200 + 400, "end %lu",
		  (unsigned long)o.st.end_ns);
	mach.socket_ns = 50;
	run_topo(op_ping_between, 5, 500, 0, &mach, &sock_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	/* through socket 0: (100 + 100 + 100) / 2 each */
	cr_assert(o.st.end_ns >= 1000 * 300 - 600 && o.st.end_ns <= 1000 * 300 + 600, "end %lu",
		  (unsigned long)o.st.end_ns);
	ping_a = 0;
	ping_b = 4; /* the home's socket is one end: the pair's cost */
	run_topo(op_ping_between, 5, 500, 0, &mach, &sock_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	cr_assert(o.st.end_ns >= 1000 * 200 - 400 && o.st.end_ns <= 1000 * 200 + 400, "end %lu",
		  (unsigned long)o.st.end_ns);
	ping_a = 2;
	ping_b = 3; /* one socket: the reload its own 20 ns, the store's upgrade home_ns */
	run_topo(op_ping_between, 5, 500, 0, &mach, &sock_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	cr_assert(o.st.end_ns >= 1000 * 120 - 300 && o.st.end_ns <= 1000 * 120 + 300, "end %lu",
		  (unsigned long)o.st.end_ns);
}

/*
 * SMT siblings share their L1: a line either holds is a hit for the other, and an access while
 * the sibling's miss on that line is in flight merges with it (no transfer of its own).
 */
Test(sim, smt_siblings_share_their_l1)
{
	struct run_out o;
	uint64_t apart;

	transfers_of_100ns();
	mach.local_ns = 0;
	ping_a = 0;
	ping_b = 2; /* smt_topo: one core's two threads */
	run_topo(op_ping_between, 3, 500, 0, &mach, &smt_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	apart = o.st.end_ns; /* smt_ns = 0: two caches, 10 ns apart */
	cr_assert(apart >= 1000 * 20 - 100, "end %lu", (unsigned long)apart);
	mach.smt_ns = 20;
	run_topo(op_ping_between, 3, 500, 0, &mach, &smt_topo, &o);
	cr_assert_eq(sh->flag, 1000);
	cr_assert_lt(o.st.end_ns, apart / 4, "end %lu: hand-offs inside one L1 cost hits",
		     (unsigned long)o.st.end_ns);
	/* Four CPUs adding to one counter: the sibling's adds merge or hit, and none is lost. */
	mach.smt_ns = 0;
	run_topo(op_add, 4, 200, 0, &mach, &smt_topo, &o);
	cr_assert_eq(sh->counter, 800);
	apart = o.st.misses;
	mach.smt_ns = 20;
	run_topo(op_add, 4, 200, 0, &mach, &smt_topo, &o);
	cr_assert_eq(sh->counter, 800);
	cr_assert_lt(o.st.misses, apart, "%lu misses, as many as four caches' %lu",
		     (unsigned long)o.st.misses, (unsigned long)apart);
}

Test(sim, far_atomics_do_not_move_the_line)
{
	struct run_out near_o, far_o;

	run(op_add, 8, 200, 0, &mach, &near_o);
	mach.atomic = MACHINE_ATOMIC_FAR;
	run(op_add, 8, 200, 0, &mach, &far_o);
	cr_assert_eq(sh->counter, 1600);
	cr_assert_neq(near_o.st.end_ns, far_o.st.end_ns);
}

Test(sim, a_wait_wakes_on_any_line_its_condition_read)
{
	struct run_out o;

	run(op_two_words, 2, 1, 0, &mach, &o);
	cr_assert_not(o.res.hung, "%s", o.res.why);
	cr_assert_eq(o.ops, 2);
	cr_assert_geq(sh->log_t[0], 1000, "woke at %lu ns", (unsigned long)sh->log_t[0]);
	cr_assert_lt(sh->log_t[0], 1000 + 4 * (uint64_t)mach.line_ns + 100, "woke at %lu ns",
		     (unsigned long)sh->log_t[0]);
}

/*
 * memory = arm satisfies a relaxed load early: data's load may be performed before flag's, so
 * it sees an older number than flag, as an Arm core may. An acquire on flag forbids it, and so
 * does sequentially consistent memory; one CPU's loads of one word never go back (coherence).
 */
Test(sim, arm_memory_reorders_relaxed_loads_and_acquire_forbids_it)
{
	struct scenario_machine m = mach;
	struct run_out o;
	uint64_t seen[3][2];
	const int orders[3] = { LAB_RELAXED, LAB_ACQUIRE, LAB_RELAXED };

	for (int i = 0; i < 3; i++) {
		m.memory = i < 2 ? MACHINE_MEMORY_ARM : MACHINE_MEMORY_SC;
		mp_order = orders[i];
		run(op_mp, 2, 20000, 0, &m, &o);
		cr_assert_not(o.res.hung, "%s", o.res.why);
		seen[i][0] = sh->log_t[0];
		seen[i][1] = sh->log_t[1];
	}
	cr_expect_gt(seen[0][0], 0, "arm, relaxed flag: data never behind flag in 20000 ops");
	cr_expect_eq(seen[1][0], 0, "arm, acquire flag: data behind flag %lu times",
		     (unsigned long)seen[1][0]);
	cr_expect_eq(seen[2][0], 0, "sc: data behind flag %lu times", (unsigned long)seen[2][0]);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(seen[i][1], 0, "case %d: a load of data went back %lu times", i,
			     (unsigned long)seen[i][1]);
}

/* Far atomics at a home that is the bottleneck: 1 ns per lab.h op, 100 ns to the home. */
static void far_home_machine(double fail_hold)
{
	mach.atomic = MACHINE_ATOMIC_FAR;
	mach.op_ns = 0;
	mach.atomic_ns = 5;
	mach.home_ns = 100;
	mach.occupancy = 1;
	mach.fail_hold = fail_hold;
}

/*
 * A far CAS whose compare fails writes nothing: the home holds the line only for the read,
 * and not at all when the line is busy as it arrives (it is answered with the burst the line
 * serves when it frees). Eight CPUs on one line, each CAS served at the home: when every
 * compare succeeds the line is held a whole transfer per CAS (8 x 200 x 100 ns, one after
 * another); when every compare fails, each CPU's loop runs at about its own round trip
 * (100 + 5 ns) plus the quarter-hold reads that found the line idle: under 200 x (105 + 25).
 * With fail_hold = 1 those reads cost a whole hold each, and the loop is slower, but still
 * far from the successes' serial time.
 */
Test(sim, a_failed_far_cas_holds_the_line_only_to_read)
{
	struct run_out ok, failed, failed_whole;

	far_home_machine(0.25);
	run(op_cas_own_word, 8, 200, 0, &mach, &ok);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(sh->slot[i], 200);
	run(op_cas_never_matches, 8, 200, 0, &mach, &failed);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(sh->slot[i], 0);
	cr_assert(ok.st.end_ns >= 1600 * 100 && ok.st.end_ns <= 1600 * 100 + 200, "end %lu",
		  (unsigned long)ok.st.end_ns);
	cr_assert(failed.st.end_ns >= 200 * 105 && failed.st.end_ns <= 200 * (105 + 25), "end %lu",
		  (unsigned long)failed.st.end_ns);

	far_home_machine(1);
	run(op_cas_never_matches, 8, 200, 0, &mach, &failed_whole);
	cr_assert_gt(failed_whole.st.end_ns, failed.st.end_ns);
	cr_assert_lt(failed_whole.st.end_ns, ok.st.end_ns / 2, "end %lu",
		     (unsigned long)failed_whole.st.end_ns);
}

/*
 * The outcome is the one the home sees when it serves the CAS, not what memory holds when it
 * is issued. CPUs 0 and 1 both issue CAS(counter, 0 -> 1) at time 0; each request reaches
 * the home after half the 100 ns trip. CPU 0 is served first (50 to 150 ns: a whole hold, it
 * writes) and completes at 105 ns; CPU 1 arrived while the line was busy, is answered when it
 * frees (150 ns, with the value CPU 0 wrote: it fails) and completes 50 + 5 ns later. Its
 * failed compare joined that burst and held nothing: CPU 2's CAS on the same line, queued
 * behind CPU 0's, is served at 150 ns too.
 */
Test(sim, a_far_cas_is_priced_by_the_value_the_home_serves)
{
	struct run_out o;

	far_home_machine(0.25);
	run(op_cas_race, 3, 1, 0, &mach, &o);
	cr_assert_eq(sh->counter, 1);
	cr_assert_eq(sh->plain, 1);
	cr_assert_eq(sh->log_t[0], 105);
	cr_assert_eq(sh->log_t[1], 100 + 105, "cpu1 done at %lu", (unsigned long)sh->log_t[1]);
	cr_assert_eq(sh->log_t[2], 100 + 105, "cpu2 done at %lu", (unsigned long)sh->log_t[2]);
}

/* Every CPU loads (read_mode) or stores the flag's line once, at time 0, and logs when. */
static bool read_mode;

static int op_read_or_write(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	(void)arg;
	(void)h;
	(void)measuring;
	if (read_mode)
		(void)lab_load32(&sh->flag, LAB_RELAXED);
	else
		lab_store32(&sh->flag, 1, LAB_RELAXED);
	sh->log_t[c->id] = lab_now(c);
	return 0;
}

/*
 * [machine] read_occupancy: eight CPUs miss on one line at time 0, every transfer 100 ns.
 * Ownership transfers hold the line occupancy x 100 = 100 ns each, so the k-th store is done
 * at 100 + 100k; reads hold it read_occupancy x 100 = 10 ns each, so the k-th load is done at
 * 100 + 10k. Left at 0, reads hold it as long as ownership transfers do.
 */
Test(sim, read_misses_hold_the_line_for_read_occupancy)
{
	struct run_out o;

	transfers_of_100ns();
	mach.occupancy = 1;
	mach.read_occupancy = 0.1;
	for (int mode = 0; mode < 2; mode++) {
		read_mode = mode;
		run(op_read_or_write, 8, 1, 0, &mach, &o);
		for (uint64_t k = 0; k < 8; k++)
			cr_assert_eq(sh->log_t[k], 100 + (read_mode ? 10 : 100) * k,
				     "%s %lu done at %lu", read_mode ? "load" : "store",
				     (unsigned long)k, (unsigned long)sh->log_t[k]);
	}
	mach.read_occupancy = 0;
	read_mode = true;
	run(op_read_or_write, 8, 1, 0, &mach, &o);
	cr_assert_eq(sh->log_t[7], 800, "load 7 done at %lu", (unsigned long)sh->log_t[7]);
}

Test(sim, machine_defaults_are_the_tables)
{
	const struct scenario_section *sec = scenario_find_section("machine");
	struct scenario_machine table;
	char err[128];

	cr_assert_not_null(sec);
	cr_assert_eq(param_set_defaults(sec->params, sec->n_params, &table, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_str_eq(table.topology, "");
	cr_assert_eq(table.line_ns, mach.line_ns);
	cr_assert_eq(table.home_ns, mach.home_ns);
	cr_assert_eq(table.local_ns, mach.local_ns);
	cr_assert_eq(table.atomic_ns, mach.atomic_ns);
	cr_assert_eq(table.op_ns, mach.op_ns);
	cr_assert_eq(table.occupancy, mach.occupancy);
	cr_assert_eq(table.read_occupancy, mach.read_occupancy);
	cr_assert_eq(table.fail_hold, mach.fail_hold);
	cr_assert_eq(table.atomic, mach.atomic);
	cr_assert_eq(table.poll_ns, mach.poll_ns);
	param_free_strings(sec->params, sec->n_params, &table);
}

Test(sim, same_inputs_same_numbers)
{
	struct run_out a, b;

	run(op_ticket, 12, 0, 200000, &mach, &a);
	uint32_t plain_a = sh->plain;
	run(op_ticket, 12, 0, 200000, &mach, &b);
	cr_assert_gt(a.ops, 100);
	cr_assert_eq(a.ops, b.ops);
	cr_assert_eq(plain_a, sh->plain);
	cr_assert_eq(a.count0, b.count0);
	cr_assert_eq(memcmp(&a.lat, &b.lat, sizeof(a.lat)), 0);
	cr_assert_eq(a.st.lab_ops, b.st.lab_ops);
	cr_assert_eq(a.st.switches, b.st.switches);
	cr_assert_eq(a.st.end_ns, b.st.end_ns);
}

/*
 * CAS contention past 16 CPUs: with far atomics (Kunpeng 920's LSE, the Kunpeng topology's
 * home) a successful CAS costs the line one hold plus one retry's trip, whatever the number
 * of CPUs in the loop (failing CASes that queue are answered in the line's burst with the
 * newest value). The system time per success must stay flat from 16 to 96 CPUs, as
 * Graviton2's measured 40 ns per success does from 7 to 16; a home serving the failures
 * one by one made it grow with every contender (2.1 -> 105 attempts per op in the cmdq run).
 */
Test(sim, cas_cost_per_success_stays_flat_from_16_to_96_cpus, .timeout = 60)
{
	static const uint32_t cpus[] = { 16, 32, 64, 96 };
	double per_success[4];

	far_home_machine(0.24);
	mach.home_ns = 40;
	for (size_t i = 0; i < 4; i++) {
		struct run_out o;

		run(op_cas, cpus[i], 0, 200000, &mach, &o);
		per_success[i] = 200000.0 / (double)sh->counter;
		cr_log_info("%u CPUs: %.1f ns of the line per successful CAS", cpus[i],
			    per_success[i]);
	}
	for (size_t i = 1; i < 4; i++)
		cr_assert(per_success[i] < per_success[0] * 1.25 &&
				  per_success[i] > per_success[0] * 0.8,
			  "%u CPUs: %.1f ns per success, %u CPUs: %.1f", cpus[i], per_success[i],
			  cpus[0], per_success[0]);
}

/*
 * fail_burst = false (the Kunpeng 920 preset): the home serves every failing CAS in turn,
 * each holding the line fail_hold of a hold, so the line's time per success grows with the
 * CPUs in the loop -- the collapse past 16 CPUs that the D06's mainline queue shows.
 */
Test(sim, served_in_turn_failing_cases_make_each_success_dearer, .timeout = 60)
{
	static const uint32_t cpus[] = { 16, 96 };
	double per_success[2];

	far_home_machine(0.24);
	mach.home_ns = 40;
	mach.fail_burst = false;
	for (size_t i = 0; i < 2; i++) {
		struct run_out o;

		run(op_cas, cpus[i], 0, 200000, &mach, &o);
		per_success[i] = 200000.0 / (double)sh->counter;
	}
	cr_assert_gt(per_success[1], per_success[0] * 2, "16 CPUs %.1f ns, 96 CPUs %.1f ns",
		     per_success[0], per_success[1]);
	mach.fail_burst = true;
}

/*
 * A near (x86) CAS that misses and fails is a read of the line in flight: it moves no
 * ownership, so a CAS loop on 16 CPUs with whole-transfer occupancy costs the line about two
 * transfers per success (the load's and the winning CAS's, folly's measured E5-2680 v4
 * shape), not one per attempt (16 here).
 */
Test(sim, a_failed_near_cas_does_not_take_the_line, .timeout = 60)
{
	struct run_out o;

	sim_machine_defaults(&mach);
	mach.line_ns = 100;
	mach.home_ns = 100;
	mach.occupancy = 1;
	run(op_cas, 16, 0, 200000, &mach, &o);
	double per_success = 200000.0 / (double)sh->counter;
	cr_log_info("near CAS loop, 16 CPUs: %.1f ns per success", per_success);
	cr_assert(per_success > 100 && per_success < 300, "%.1f ns per success", per_success);
}

/* The benchmark of the speed budget (>= 10 M lab.h operations per host second). */
Test(sim, speed)
{
	struct run_out o;

	run(op_cas, 64, 0, 2000000, &mach, &o);
	double rate = (double)o.st.lab_ops / o.st.host_s;
	cr_log_info("sim speed: %lu lab.h ops in %.3f host s = %.1f M ops/s, %lu switches",
		    (unsigned long)o.st.lab_ops, o.st.host_s, rate / 1e6,
		    (unsigned long)o.st.switches);
	fprintf(stderr, "sim speed (cas_add, 64 CPUs): %.1f M lab.h ops per host second\n",
		rate / 1e6);
	cr_assert_gt(rate, 1e6);
}

/* ---- topology -------------------------------------------------------------------------- */

Test(sim_topology, loads_the_shipped_matrices)
{
	struct sim_topology t;
	char err[256];
	const char *files[] = { "configs/topologies/kunpeng920-64c.csv",
				"configs/topologies/graviton2-64c.csv" };

	for (size_t i = 0; i < 2; i++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", TEST_SOURCE_ROOT, files[i]);
		cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(t.n, 64);
		cr_assert_eq(t.lat[3 * 64 + 5], t.lat[5 * 64 + 3]);
		cr_assert(t.median > 30 && t.median < 80, "median %f", t.median);
		sim_topology_free(&t);
	}
}

Test(sim_topology, refuses_garbage_with_file_and_line)
{
	struct sim_topology t;
	char err[256];
	char path[] = "/tmp/iommulab-topo-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("# test\n,,\n12.5,,\n1,abc,\n", f);
	fclose(f);
	cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, ":4: core 2 to core 1"), "%s", err);
	unlink(path);
}

/*
 * What loads is what the model uses: a NaN or an infinity is not a latency (it made every
 * transfer free), and a value past a row's lower triangle (a diagonal, an upper triangle, a
 * ragged row) would be ignored, so each is refused, naming the line and the field.
 */
Test(sim_topology, refuses_what_it_would_misread)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ ",\nnan,\n", ":2: core 1 to core 0: expected a latency in ns (a finite number, 0 "
			       "or more), found 'nan'" },
		{ ",\ninf\n", ":2: core 1 to core 0: expected a latency in ns" },
		{ ",\n-3\n", ":2: core 1 to core 0: expected a latency in ns" },
		{ "0,10,20\n10,0\n20,10,0\n", ":1: core 0: '0' after its 0 latencies" },
		{ ",,\n10,0,\n20,10,\n", ":2: core 1: '0' after its 1 latency (row i" },
		{ ",\n", ": 1 core: a topology needs at least 2" },
	};
	struct sim_topology t;
	char err[512];

	for (size_t i = 0; i < LAB_ARRAY_SIZE(bad); i++) {
		char path[] = "/tmp/iommulab-topo-XXXXXX";
		FILE *f = fdopen(mkstemp(path), "w");

		fputs(bad[i].text, f);
		fclose(f);
		cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), -EINVAL, "case %zu", i);
		cr_assert(strstr(err, bad[i].msg), "case %zu: %s", i, err);
		unlink(path);
	}
	cr_assert_eq(sim_topology_load("/tmp", &t, err, sizeof(err)), -EISDIR);
	cr_assert(strstr(err, "/tmp: a directory, not a topology file"), "%s", err);
	/* Empty fields after the triangle, spaces and a CR are still fine. */
	char path[] = "/tmp/iommulab-topo-XXXXXX";
	FILE *f = fdopen(mkstemp(path), "w");
	fputs(",, \r\n10, ,\r\n20,10,\n", f);
	fclose(f);
	cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 3);
	cr_assert_eq(t.lat[2 * 3 + 1], 10);
	sim_topology_free(&t);
	unlink(path);
}

/* ---- a whole cmdq trial on virtual CPUs ----------------------------------------------------- */

Test(sim_trial, biglock_runs_on_virtual_cpus_deterministically, .timeout = 60)
{
	struct scenario_cfg cfg;
	struct trial_result a, b;
	struct oracle_report o;
	const struct lab_plugin *p = load_kind("cmdq", "biglock");
	char cfgbuf[256] = { 0 };

	cmdq_sim_cfg(&cfg, 8);
	struct trial_request req = { .cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf };
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cr_assert_eq(trial_run(&req, &a, NULL), 0, "%s", a.error);
	cr_assert_eq(a.status, TRIAL_OK, "%s", a.error);
	cr_assert_str_eq(a.engine, "sim");
	cr_assert_gt(a.ops, 100);
	cr_assert_eq(trial_run(&req, &b, NULL), 0, "%s", b.error);
	cr_assert_eq(a.ops, b.ops);
	cr_assert_eq(memcmp(&a.metrics[0].lat, &b.metrics[0].lat, sizeof(a.metrics[0].lat)), 0);
	cr_assert_eq(a.n_counters, b.n_counters);
	for (uint32_t k = 0; k < a.n_counters; k++)
		cr_assert_eq(a.counters[k].total, b.counters[k].total, "%s", a.counters[k].name);

	/* One CPU alone: a CMD_SYNC round trip is the device's service plus the MMIO costs. */
	cmdq_sim_cfg(&cfg, 1);
	req.ops_per_cpu = 200;
	req.oracle = true;
	struct trial_result c;
	memset(&c, 0, sizeof(c));
	cr_assert_eq(trial_run(&req, &c, &o), 0, "%s", c.error);
	cr_assert_eq(c.status, TRIAL_OK, "%s", c.error);
	for (uint32_t k = 0; k < o.n_checks; k++)
		cr_assert(o.checks[k].pass, "%s: %s", o.checks[k].name, o.checks[k].detail);
	cr_log_info("1 cpu p50 %lu ns", (unsigned long)c.metrics[0].lat.p50);
	cr_assert(c.metrics[0].lat.p50 >= 540 && c.metrics[0].lat.p50 < 1500, "p50 %lu",
		  (unsigned long)c.metrics[0].lat.p50);
}

/* The speed budget with the device as an agent (the case the cmdq scenarios run). */
Test(sim_trial, speed_with_the_device, .timeout = 120)
{
	struct scenario_cfg cfg;
	struct trial_result r;
	const struct lab_plugin *p = load_kind("cmdq", "cmpxchg");
	char cfgbuf[256] = { 0 };

	cmdq_sim_cfg(&cfg, 64);
	cfg.scenario.duration_ms = 20;
	cfg.machine.atomic = MACHINE_ATOMIC_FAR;
	struct trial_request req = { .cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf };
	memset(&r, 0, sizeof(r));
	cr_assert_eq(trial_run(&req, &r, NULL), 0, "%s", r.error);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	const struct trial_engine_cost *st = &r.engine_cost;
	double rate = (double)st->steps / st->host_s;
	fprintf(stderr,
		"sim speed (cmdq cmpxchg + device, 64 CPUs): %.1f M lab.h ops per host "
		"second (%lu ops, %lu switches)\n",
		rate / 1e6, (unsigned long)st->steps, (unsigned long)st->switches);
	cr_assert_gt(st->steps, 10000);
	cr_assert_gt(rate, 1e6);
}

/* The micro workload through a whole trial, on both engines: no lost updates, sane costs. */
Test(sim_trial, micro_runs_every_op_on_both_engines, .timeout = 60)
{
	for (int op = MICRO_ATOMIC_ADD; op <= MICRO_TICKET_LOCK; op++) {
		for (int engine = ENGINE_NATIVE; engine <= ENGINE_SIM; engine++) {
			struct scenario_cfg cfg;
			struct trial_result r;

			memset(&cfg, 0, sizeof(cfg));
			cfg.scenario.workload = WORKLOAD_MICRO;
			cfg.scenario.engine = engine;
			cfg.scenario.cpus =
				engine == ENGINE_SIM ? 8 : 2; /* at most 2 busy natively */
			cfg.scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
			cfg.scenario.duration_ms = engine == ENGINE_SIM ? 1 : 20;
			cfg.scenario.watchdog_ms = 1000;
			cfg.wl_micro.op = op;
			sim_machine_defaults(&cfg.machine);
			cfg.machine.atomic = MACHINE_ATOMIC_ADAPTIVE;
			struct trial_request req = { .cfg = &cfg };
			memset(&r, 0, sizeof(r));
			cr_assert_eq(trial_run(&req, &r, NULL), 0, "%s", r.error);
			/* Natively a busy host may make it noisy or incomplete (run/noise.h). */
			if (engine == ENGINE_NATIVE && r.status == TRIAL_INCOMPLETE)
				continue;
			cr_assert(trial_status_measured(r.status), "op %d engine %d: %s", op,
				  engine, r.error);
			cr_assert_gt(r.ops, 100, "op %d engine %d", op, engine);
			double ns_per_op = (double)r.cpus / r.ops_per_sec * 1e9;
			cr_assert(ns_per_op > 0.5 && ns_per_op < 1e6, "op %d engine %d: %g ns", op,
				  engine, ns_per_op);
		}
	}
}

/* ---- iova and dma trials on virtual CPUs ---------------------------------------------------- */

static void iova_cfg(struct scenario_cfg *cfg, int workload, uint64_t cpus)
{
	cmdq_sim_cfg(cfg, cpus);
	cfg->scenario.workload = workload;
	cfg->scenario.duration_ms = 1;
	cfg->wl_iova.pattern = 0; /* same-cpu */
	cfg->wl_iova.depth = 32;
	cfg->wl_iova.min_pages = 1;
	cfg->wl_iova.max_pages = 4;
	cfg->wl_iova.dma_bits = 32;
	cfg->wl_dma.pages = 1;
	cfg->wl_dma.dma_bits = 32;
}

static const struct trial_counter *counter(const struct trial_result *r, const char *name)
{
	for (uint32_t k = 0; k < r->n_counters; k++)
		if (!strcmp(r->counters[k].name, name))
			return &r->counters[k];
	cr_assert_fail("no counter %s", name);
	return NULL;
}

/*
 * Every iova policy runs on virtual CPUs, and the slow path is simulated too: with the
 * caches too small to hold a CPU's working set every op reaches the rbtree, whose lock the
 * CPUs then wait for in virtual time (natively built, the slow path would cost nothing and
 * never contend under the sim).
 */
Test(sim_trial, iova_policies_run_and_the_slow_path_takes_virtual_time, .timeout = 60)
{
	static const char *const names[] = { "fixed_depot", "scaled_depot", "depotless",
					     "list_depot" };
	char cfgbuf[4096] = { 0 };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct scenario_cfg cfg;
		struct trial_result r;
		const struct lab_plugin *p = load_kind("iova", names[i]);

		plugin_defaults(p, cfgbuf, sizeof(cfgbuf));
		iova_cfg(&cfg, WORKLOAD_IOVA, 8);
		/* Sizes up to 256 pages: beyond every rcache size class, so all go to the tree. */
		cfg.wl_iova.min_pages = 64;
		cfg.wl_iova.max_pages = 256;
		struct trial_request req = { .cfg = &cfg, .iova = p, .iova_config = cfgbuf };
		memset(&r, 0, sizeof(r));
		cr_assert_eq(trial_run(&req, &r, NULL), 0, "%s: %s", names[i], r.error);
		cr_assert_eq(r.status, TRIAL_OK, "%s: %s", names[i], r.error);
		cr_assert_str_eq(r.engine, "sim");
		cr_assert_gt(r.ops, 100, "%s", names[i]);
		cr_assert_gt(counter(&r, "slow_allocs")->total, 100, "%s", names[i]);
		cr_assert_gt(counter(&r, "tree_lock_wait_ns")->total, 0,
			     "%s: 8 CPUs on one tree lock never waited", names[i]);
		/* A tree allocation walks lines other CPUs wrote: well above a cache hit. */
		cr_assert_gt(r.metrics[0].lat.p50, 50, "%s: alloc p50 %lu ns", names[i],
			     (unsigned long)r.metrics[0].lat.p50);
	}
}

/* Map/unmap through both plugins and the device, twice: the same numbers both times. */
Test(sim_trial, dma_runs_on_virtual_cpus_deterministically, .timeout = 60)
{
	char ccfg[4096] = { 0 }, icfg[4096] = { 0 };
	const struct lab_plugin *cq = load_kind("cmdq", "cmpxchg");
	const struct lab_plugin *io = load_kind("iova", "fixed_depot");
	struct scenario_cfg cfg;
	struct trial_result a, b;

	plugin_defaults(cq, ccfg, sizeof(ccfg));
	plugin_defaults(io, icfg, sizeof(icfg));
	iova_cfg(&cfg, WORKLOAD_DMA, 16);
	struct trial_request req = {
		.cfg = &cfg, .cmdq = cq, .cmdq_config = ccfg, .iova = io, .iova_config = icfg
	};
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cr_assert_eq(trial_run(&req, &a, NULL), 0, "%s", a.error);
	cr_assert_eq(a.status, TRIAL_OK, "%s", a.error);
	cr_assert_gt(a.ops, 100);
	cr_assert_eq(trial_run(&req, &b, NULL), 0, "%s", b.error);
	cr_assert_eq(a.ops, b.ops);
	cr_assert_eq(a.n_metrics, b.n_metrics);
	for (uint32_t m = 0; m < a.n_metrics; m++)
		cr_assert_eq(memcmp(&a.metrics[m].lat, &b.metrics[m].lat, sizeof(a.metrics[m].lat)),
			     0, "%s", a.metrics[m].name);
	for (uint32_t k = 0; k < a.n_counters; k++)
		cr_assert_eq(a.counters[k].total, b.counters[k].total, "%s", a.counters[k].name);
}

/*
 * The phase breakdown of a dma trial: both plugins mark phases, each in its own slots, and
 * only time inside a plugin is charged, so every phase together never exceeds the op
 * latencies (map + unmap) it is part of, and each plugin's named phases get time.
 */
Test(sim_trial, dma_phases_stay_inside_the_plugins_time, .timeout = 60)
{
	char ccfg[4096] = { 0 }, icfg[4096] = { 0 };
	const struct lab_plugin *cq = load_kind("cmdq", "cmpxchg");
	const struct lab_plugin *io = load_kind("iova", "fixed_depot");
	struct scenario_cfg cfg;
	struct trial_result r;

	plugin_defaults(cq, ccfg, sizeof(ccfg));
	plugin_defaults(io, icfg, sizeof(icfg));
	iova_cfg(&cfg, WORKLOAD_DMA, 8);
	cfg.scenario.phases = true;
	struct trial_request req = {
		.cfg = &cfg, .cmdq = cq, .cmdq_config = ccfg, .iova = io, .iova_config = icfg
	};
	memset(&r, 0, sizeof(r));
	cr_assert_eq(trial_run(&req, &r, NULL), 0, "%s", r.error);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	cr_assert_eq(r.n_phases, 1 + cq->n_phases + io->n_phases);
	double total = 0, op = 0;
	for (uint32_t p = 0; p < r.n_phases; p++)
		total += r.phases[p].ns_per_op;
	for (uint32_t m = 0; m < r.n_metrics; m++)
		op += r.metrics[m].lat.mean;
	cr_assert_gt(total, 0);
	cr_assert_leq(total, op * 1.001, "phases add up to %.0f ns per op, the op to %.0f", total,
		      op);
	double iova_named = 0;
	for (uint32_t p = 1 + cq->n_phases; p < r.n_phases; p++)
		iova_named += r.phases[p].ns_per_op;
	cr_assert_gt(iova_named, 0, "the iova plugin's phases got no time");
	cr_assert_str_eq(r.phases[1 + cq->n_phases].name, io->phases[0]);
}

/* ---- the [machine] presets -------------------------------------------------------------- */

/* Load an INI written to a temporary file (no plugins: the micro workload needs none). */
static struct scenario *load_text(const char *text, const char *const *sets, size_t n_sets,
				  struct diag_list *d)
{
	char path[] = "/tmp/iommulab-preset-XXXXXX";
	int fd = mkstemp(path);
	struct plugin_lookup none = { .find = NULL };
	struct scenario *s;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	s = scenario_load(path, sets, n_sets, &none, d);
	unlink(path);
	return s;
}

static const char micro_sim[] = "[scenario]\nworkload = micro\nengine = sim\n";

Test(machine_preset, the_default_is_the_calibrated_graviton2)
{
	struct diag_list d = { 0 };
	struct scenario *s = load_text(micro_sim, NULL, 0, &d);
	struct sim_topology t;
	char desc[256], err[256];

	cr_assert_not_null(s, "%s", d.n ? d.msgs[0] : "");
	const struct scenario_machine *m = &s->base.machine;
	cr_assert_eq(m->preset, MACHINE_PRESET_GRAVITON2);
	cr_assert_eq(m->atomic, MACHINE_ATOMIC_ADAPTIVE);
	cr_assert_eq(m->home_ns, 16);
	cr_assert_eq(m->cas_hold_ns, 16);
	/* the topology is found from the build tree, whatever the INI's folder */
	cr_assert_eq(sim_topology_load(m->topology, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 64);
	sim_topology_free(&t);
	scenario_machine_describe(m, desc, sizeof(desc));
	cr_assert_str_eq(desc, "graviton2 (preset)");
	scenario_free(s);
}

/* The preset is exactly the calibrated configuration, key for key. */
Test(machine_preset, graviton2_is_calibrate_graviton2_ini)
{
	const char *none[] = { "machine.preset=none" };
	const struct scenario_section *sec = scenario_find_section("machine");
	struct diag_list d = { 0 };
	char path[4096], a[4200], b[4200], ra[PATH_MAX], rb[PATH_MAX];

	snprintf(path, sizeof(path), "%s/configs/calibrate-graviton2.ini", TEST_SOURCE_ROOT);
	struct scenario *cal = scenario_load(path, none, 1, &(struct plugin_lookup){ 0 }, &d);
	struct scenario *pre = load_text(micro_sim, NULL, 0, &d);
	cr_assert(cal && pre, "%s", d.n ? d.msgs[0] : "");
	for (size_t i = 0; i < sec->n_params; i++) {
		const struct lab_param *p = &sec->params[i];

		if (!strcmp(p->key, "preset"))
			continue;
		cr_assert_eq(param_format(p, &cal->base.machine, a, sizeof(a)), 0);
		cr_assert_eq(param_format(p, &pre->base.machine, b, sizeof(b)), 0);
		if (!strcmp(p->key, "topology")) {
			cr_assert_not_null(realpath(a, ra), "%s", a);
			cr_assert_not_null(realpath(b, rb), "%s", b);
			cr_assert_str_eq(ra, rb);
		} else {
			cr_assert_str_eq(a, b, "%s: %s vs the preset's %s", p->key, a, b);
		}
	}
	scenario_free(cal);
	scenario_free(pre);
}

Test(machine_preset, keys_set_in_the_scenario_override_it)
{
	const char *sets[] = { "machine.preset=kunpeng920", "machine.occupancy=0.5" };
	char text[256], desc[256];
	struct diag_list d = { 0 };

	snprintf(text, sizeof(text), "%s[machine]\nhome_ns = 20\n", micro_sim);
	struct scenario *s = load_text(text, NULL, 0, &d);
	cr_assert_not_null(s, "%s", d.n ? d.msgs[0] : "");
	cr_assert_eq(s->base.machine.home_ns, 20);
	cr_assert_eq(s->base.machine.occupancy, 0.55, "the rest stays the preset's");
	scenario_machine_describe(&s->base.machine, desc, sizeof(desc));
	cr_assert_str_eq(desc, "graviton2 (preset; home_ns set in [machine])");
	scenario_free(s);

	/* a --set preset is the preset too; the file's keys still win over it */
	s = load_text(text, sets, 2, &d);
	cr_assert_not_null(s, "%s", d.n ? d.msgs[0] : "");
	cr_assert_eq(s->base.machine.preset, MACHINE_PRESET_KUNPENG920);
	cr_assert_eq(s->base.machine.atomic, MACHINE_ATOMIC_FAR);
	cr_assert_eq(s->base.machine.home_ns, 20);
	cr_assert_eq(s->base.machine.occupancy, 0.5);
	cr_assert_not_null(strstr(s->base.machine.topology, "kunpeng920-64c.csv"));
	scenario_machine_describe(&s->base.machine, desc, sizeof(desc));
	cr_assert_str_eq(desc, "kunpeng920 (preset; home_ns, occupancy set in [machine])");
	scenario_free(s);

	/* none: today's uniform machine */
	snprintf(text, sizeof(text), "%s[machine]\npreset = none\n", micro_sim);
	s = load_text(text, NULL, 0, &d);
	cr_assert_not_null(s, "%s", d.n ? d.msgs[0] : "");
	struct scenario_machine uniform;
	sim_machine_defaults(&uniform);
	cr_assert_str_eq(s->base.machine.topology, "");
	cr_assert_eq(s->base.machine.line_ns, uniform.line_ns);
	cr_assert_eq(s->base.machine.atomic, uniform.atomic);
	cr_assert_eq(s->base.machine.home_hold_ns, uniform.home_hold_ns);
	scenario_free(s);
}

Test(machine_preset, an_unknown_preset_names_the_choices)
{
	char text[256];
	struct diag_list d = { 0 };

	snprintf(text, sizeof(text), "%s[machine]\npreset = graviton3\n", micro_sim);
	cr_assert_null(load_text(text, NULL, 0, &d));
	cr_assert_eq(d.n, 1);
	cr_assert_not_null(strstr(d.msgs[0], "[machine] preset: 'graviton3' is not one of: "
					     "graviton2, kunpeng920, none"),
			   "%s", d.msgs[0]);
	diag_clear(&d);

	/* applied once under the keys, so a sweep could not change it */
	snprintf(text, sizeof(text), "%s[sweep]\nmachine.preset = none, graviton2\n", micro_sim);
	cr_assert_null(load_text(text, NULL, 0, &d));
	cr_assert_eq(d.n, 1);
	cr_assert_not_null(strstr(d.msgs[0], "machine.preset"), "%s", d.msgs[0]);
	diag_clear(&d);
}

/* ---- determinism across the host's heap ------------------------------------------------- */

/*
 * Run req twice, the host's heap reshuffled after each run (odd sizes, every other one freed:
 * holes of every size class in malloc's heap), so the second run's memory lies elsewhere.
 */
static void run_twice_across_the_heap(const struct trial_request *req, struct trial_result r[2])
{
	void *junk[997] = { 0 };

	for (int k = 0; k < 2; k++) {
		memset(&r[k], 0, sizeof(r[k]));
		cr_assert_eq(trial_run(req, &r[k], NULL), 0, "%s", r[k].error);
		cr_assert_eq(r[k].status, TRIAL_OK, "%s", r[k].error);
		for (size_t i = 0; i < LAB_ARRAY_SIZE(junk); i++)
			junk[i] = malloc(16 + (i * 37) % 700);
		for (size_t i = 0; i < LAB_ARRAY_SIZE(junk); i += 2) {
			free(junk[i]);
			junk[i] = NULL;
		}
	}
	for (size_t i = 0; i < LAB_ARRAY_SIZE(junk); i++)
		free(junk[i]);
}

/* The two runs' ops, every metric's latency summary and every counter are the same. */
static void expect_same_results(const struct trial_result r[2])
{
	cr_assert_eq(r[0].ops, r[1].ops);
	for (uint32_t m = 0; m < r[0].n_metrics; m++)
		cr_assert_eq(memcmp(&r[0].metrics[m].lat, &r[1].metrics[m].lat,
				    sizeof(r[0].metrics[m].lat)),
			     0, "metric %u", m);
	cr_assert_eq(r[0].n_counters, r[1].n_counters);
	for (uint32_t k = 0; k < r[0].n_counters; k++)
		cr_assert_eq(r[0].counters[k].total, r[1].counters[k].total, "%s",
			     r[0].counters[k].name);
}

/*
 * The sim keeps each line's state by address, so which freed line an allocation reuses is
 * part of the result: it must follow from the trial's own allocations, not from malloc's
 * state. The same remote-free trial (rbtree nodes allocated on one CPU, freed on the other)
 * before and after the host's heap is churned must give the same numbers; through malloc it
 * did not (48973013 vs 49068151 ops/s from a longer --out path alone).
 */
Test(sim_trial, results_do_not_depend_on_the_host_heap, .timeout = 60)
{
	const struct lab_plugin *p = load_kind("iova", "depotless");
	char cfgbuf[4096] = { 0 };
	struct trial_result r[2];
	struct scenario_cfg cfg;

	plugin_defaults(p, cfgbuf, sizeof(cfgbuf));
	iova_cfg(&cfg, WORKLOAD_IOVA, 2);
	cfg.scenario.duration_ms = 5;
	cfg.scenario.warmup_ms = 1;
	cfg.wl_iova.pattern = IOVA_REMOTE_FREE;
	cfg.wl_iova.free_every = 2;
	cfg.wl_iova.depth = 128;
	cfg.wl_iova.max_pages = 16;
	struct trial_request req = { .cfg = &cfg, .iova = p, .iova_config = cfgbuf };
	run_twice_across_the_heap(&req, r);
	cr_assert_gt(counter(&r[0], "slow_allocs")->total, 100);
	expect_same_results(r);
}

/*
 * memory = arm too: early loads and store buffers are functions of the seed and the schedule,
 * never of where the host put the words (verify's --seed replays a counterexample exactly).
 * mcs with leader_batch = 4 on 16 CPUs and an 8-entry queue, perturbed: hand-offs, wraps and
 * stale loads all happen.
 */
Test(sim_trial, arm_memory_results_do_not_depend_on_the_host_heap, .timeout = 60)
{
	const struct lab_plugin *p = load_kind("cmdq", "mcs");
	char cfgbuf[256] = { 0 };
	struct trial_result r[2];
	struct scenario_cfg cfg;
	char err[256];

	plugin_defaults(p, cfgbuf, sizeof(cfgbuf));
	cr_assert_eq(param_parse(param_find(p->params, p->n_params, "leader_batch"), "4", cfgbuf,
				 err, sizeof(err)),
		     0, "%s", err);
	cmdq_sim_cfg(&cfg, 16);
	cfg.smmu.queue_shift = 3;
	cfg.wl_cmdq.think_ns = 0;
	cfg.machine.memory = MACHINE_MEMORY_ARM;
	cfg.machine.perturb_ns = 2000;
	cfg.scenario.seed = 2;
	struct trial_request req = { .cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf };
	run_twice_across_the_heap(&req, r);
	cr_assert_gt(counter(&r[0], "mcs_granted")->total, 0);
	expect_same_results(r);
}

/* A topology loaded twice is parsed once; a file rewritten in place is parsed again. */
Test(sim_topology, a_rewritten_file_is_parsed_again)
{
	char path[] = "/tmp/iommulab-topo-XXXXXX", err[256];
	struct sim_topology a, b;
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	fputs("# three cores\n\n10\n20,30\n", f);
	fclose(f);
	cr_assert_eq(sim_topology_load(path, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sim_topology_load(path, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.n, 3);
	cr_assert_eq(b.n, 3);
	cr_assert_eq(memcmp(a.lat, b.lat, 9 * sizeof(*a.lat)), 0);
	cr_assert_eq(b.lat[2 * 3 + 1], 30);
	sim_topology_free(&b);
	f = fopen(path, "w");
	fputs("\n10\n20,40\n5,5,5\n", f);
	fclose(f);
	cr_assert_eq(sim_topology_load(path, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(b.n, 4);
	cr_assert_eq(b.lat[2 * 4 + 1], 40);
	cr_assert_eq(a.lat[2 * 3 + 1], 30); /* the first copy is the caller's own */
	sim_topology_free(&a);
	sim_topology_free(&b);
	unlink(path);
}
