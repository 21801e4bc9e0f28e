/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the micro workload's locks (framework/workload/micro_wl.c): every lock op
 * keeps its plain increment exact (no lost update, the trial's own check) with exactly the
 * ops asked for, natively on 2 threads and on 8 virtual CPUs; on the sim the critical
 * sections of different CPUs never overlap in virtual time (the lock serialises them, so all
 * CPUs together complete at most one per critical_ns), and one CPU alone pays critical_ns
 * per op and little more.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "engine/sim/sim.h"
#include "run/trial_run.h"
#include "workload/micro_wl.h"

static const int lock_ops[] = { MICRO_TICKET_LOCK, MICRO_TAS_LOCK, MICRO_TTAS_LOCK,
				MICRO_MCS_LOCK,	   MICRO_CLH_LOCK, MICRO_QSPIN_LOCK };

#define N_LOCKS (sizeof(lock_ops) / sizeof(lock_ops[0]))

static void micro_cfg(struct scenario_cfg *cfg, int engine, uint64_t cpus, int op)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scenario.workload = WORKLOAD_MICRO;
	cfg->scenario.engine = engine;
	cfg->scenario.cpus = cpus;
	cfg->scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
	cfg->scenario.duration_ms = engine == ENGINE_SIM ? 1 : 20;
	cfg->scenario.watchdog_ms = 5000;
	cfg->scenario.sample_every = 1;
	cfg->wl_micro.op = op;
	cfg->wl_micro.mode = MICRO_THROUGHPUT;
	sim_machine_defaults(&cfg->machine);
}

static void run(const struct scenario_cfg *cfg, uint64_t ops_per_cpu, struct trial_result *r)
{
	struct trial_request req = { .cfg = cfg, .ops_per_cpu = ops_per_cpu };

	memset(r, 0, sizeof(*r));
	cr_assert_eq(trial_run(&req, r, NULL), 0, "%s", r->error);
}

/* Exactly the ops asked for, and the counter the lock protects agrees (else the trial fails
 * with "lost updates"). A critical section widens the window a broken lock would lose in. */
Test(micro, every_lock_keeps_its_increment_exact_on_both_engines, .timeout = 120)
{
	for (size_t i = 0; i < N_LOCKS; i++) {
		for (int engine = ENGINE_NATIVE; engine <= ENGINE_SIM; engine++) {
			for (uint64_t crit = 0; crit <= 200; crit += 200) {
				uint64_t cpus = engine == ENGINE_SIM ? 8 : 2;
				struct scenario_cfg cfg;
				struct trial_result r;

				micro_cfg(&cfg, engine, cpus, lock_ops[i]);
				cfg.wl_micro.critical_ns = crit;
				run(&cfg, 3000, &r);
				cr_assert_neq(r.status, TRIAL_FAILED,
					      "op %d engine %d crit %lu: %s", lock_ops[i], engine,
					      (unsigned long)crit, r.error);
				cr_assert_eq(r.ops, 3000 * cpus, "op %d engine %d", lock_ops[i],
					     engine);
			}
		}
	}
}

/*
 * Natively, a time-based throughput run calls the op once per MICRO_BATCH ops and counts every
 * one: each CPU's count is a whole number of batches, and the counter the ops increment agrees
 * with it (else the trial fails with "lost updates").
 */
Test(micro, native_throughput_counts_every_op_of_its_batches, .timeout = 60)
{
	static const int ops[] = { MICRO_ATOMIC_ADD, MICRO_CAS_ADD, MICRO_TICKET_LOCK };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct scenario_cfg cfg;
		struct trial_result r;

		micro_cfg(&cfg, ENGINE_NATIVE, 2, ops[i]);
		/*
		 * A run whose threads the host kept off their cores is incomplete, and one whose
		 * thread sat off its core for the whole 20 ms window completed no batch (seen in
		 * the suite beside a build on 2 cores): the machine's doing, not the op's, and
		 * nothing to judge the batches on, so it is taken again, a few times.
		 */
		for (int tries = 0; tries < 5; tries++) {
			run(&cfg, 0, &r);
			if (r.status != TRIAL_INCOMPLETE && r.ops_min_cpu > 0)
				break;
		}
		cr_assert(trial_status_measured(r.status), "op %d: status %d %s", ops[i], r.status,
			  r.error);
		cr_assert_gt(r.ops_min_cpu, 0, "op %d", ops[i]);
		cr_assert_eq(r.ops_min_cpu % MICRO_BATCH, 0, "op %d: %lu", ops[i],
			     (unsigned long)r.ops_min_cpu);
		cr_assert_eq(r.ops_max_cpu % MICRO_BATCH, 0, "op %d: %lu", ops[i],
			     (unsigned long)r.ops_max_cpu);
	}
}

/* The time-based run too: every CPU gets the lock (the queue locks are fair by design). */
Test(micro, queue_locks_serve_every_cpu_on_the_sim, .timeout = 60)
{
	static const int fair[] = { MICRO_TICKET_LOCK, MICRO_MCS_LOCK, MICRO_CLH_LOCK };

	for (size_t i = 0; i < sizeof(fair) / sizeof(fair[0]); i++) {
		struct scenario_cfg cfg;
		struct trial_result r;

		micro_cfg(&cfg, ENGINE_SIM, 16, fair[i]);
		cfg.wl_micro.critical_ns = 300;
		run(&cfg, 0, &r);
		cr_assert(trial_status_measured(r.status), "op %d: %s", fair[i], r.error);
		cr_assert_gt(r.ops_min_cpu, 0, "op %d", fair[i]);
		cr_assert_leq(r.ops_max_cpu - r.ops_min_cpu, 1, "op %d: %lu..%lu", fair[i],
			      (unsigned long)r.ops_min_cpu, (unsigned long)r.ops_max_cpu);
	}
}

/*
 * Mutual exclusion in virtual time: the critical sections are serialised, so 8 CPUs together
 * complete at most one op per critical_ns (a lock that let two in at once would beat it), and
 * one CPU alone pays its critical_ns plus the lock's few uncontended operations.
 */
Test(micro, critical_sections_never_overlap_on_the_sim, .timeout = 60)
{
	const uint64_t crit = 1000;

	for (size_t i = 0; i < N_LOCKS; i++) {
		struct scenario_cfg cfg;
		struct trial_result one, many;

		micro_cfg(&cfg, ENGINE_SIM, 1, lock_ops[i]);
		cfg.wl_micro.critical_ns = crit;
		run(&cfg, 0, &one);
		cr_assert(trial_status_measured(one.status), "%s", one.error);
		double ns1 = 1e9 / one.ops_per_sec;
		cr_assert(ns1 > crit && ns1 < crit + 100, "op %d alone: %.1f ns per op",
			  lock_ops[i], ns1);

		cfg.scenario.cpus = 8;
		run(&cfg, 0, &many);
		cr_assert(trial_status_measured(many.status), "%s", many.error);
		cr_assert_leq(many.ops_per_sec, 1e9 / crit, "op %d: %.0f ops/s at 8 CPUs",
			      lock_ops[i], many.ops_per_sec);
		/* ... and the lock is busy: at most a few transfers of hand-over per op. */
		cr_assert_gt(many.ops_per_sec, 1e9 / (crit + 1000), "op %d: %.0f ops/s",
			     lock_ops[i], many.ops_per_sec);
	}
}
