/* SPDX-License-Identifier: MIT */
/*
 * test_harness -- how the cmdq and micro workloads time their ops: one chained timestamp per
 * op (the think time never part of a latency), [scenario] sample_every (every N-th measured op
 * timed, every op counted) and the micro workload's throughput mode (no op timed). Native
 * trials use at most 2 worker threads.
 */
#include <criterion/criterion.h>

#include "built_plugins.h"
#include "cmdq_trial.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine/host.h"
#include "engine/sim/sim.h"
#include "loader/loader.h"
#include "run/trial_run.h"
#include "verify/cmdq_check.h"
#include "workload/micro_wl.h"

static void micro_cfg(struct scenario_cfg *cfg, int engine, uint64_t cpus)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scenario.workload = WORKLOAD_MICRO;
	cfg->scenario.engine = engine;
	cfg->scenario.cpus = cpus;
	cfg->scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
	cfg->scenario.duration_ms = 1;
	cfg->scenario.watchdog_ms = 2000;
	cfg->scenario.sample_every = 1;
	cfg->wl_micro.op = MICRO_ATOMIC_ADD;
	sim_machine_defaults(&cfg->machine);
	cfg->machine.atomic = MACHINE_ATOMIC_ADAPTIVE;
}

static void run_request(const struct trial_request *req, struct trial_result *r)
{
	memset(r, 0, sizeof(*r));
	cr_assert_eq(trial_run(req, r, NULL), 0, "%s", r->error);
	cr_assert(trial_status_measured(r->status), "%s", r->error);
}

static void run(const struct scenario_cfg *cfg, uint64_t ops_per_cpu, struct trial_result *r)
{
	struct trial_request req = { .cfg = cfg, .ops_per_cpu = ops_per_cpu };

	run_request(&req, r);
}

/* Every N-th measured op of each CPU is timed; every op is counted. */
Test(harness, sample_every_times_every_nth_op)
{
	for (int engine = ENGINE_NATIVE; engine <= ENGINE_SIM; engine++) {
		uint64_t cpus = engine == ENGINE_SIM ? 4 : 2;
		struct scenario_cfg cfg;
		struct trial_result r;

		micro_cfg(&cfg, engine, cpus);
		run(&cfg, 1000, &r);
		cr_assert_eq(r.ops, 1000 * cpus);
		cr_assert_eq(r.metrics[0].lat.count, 1000 * cpus, "engine %d", engine);

		cfg.scenario.sample_every = 7;
		run(&cfg, 1000, &r);
		cr_assert_eq(r.ops, 1000 * cpus);
		cr_assert_eq(r.metrics[0].lat.count, (1000 / 7) * cpus, "engine %d: %llu timed",
			     engine, (unsigned long long)r.metrics[0].lat.count);
	}
}

/* Throughput mode reads no clock per op: nothing timed, every op counted, no lost update. */
Test(harness, micro_throughput_mode_times_no_op)
{
	for (int op = MICRO_ATOMIC_ADD; op <= MICRO_TICKET_LOCK; op++) {
		for (int engine = ENGINE_NATIVE; engine <= ENGINE_SIM; engine++) {
			uint64_t cpus = engine == ENGINE_SIM ? 4 : 2;
			struct scenario_cfg cfg;
			struct trial_result r;

			micro_cfg(&cfg, engine, cpus);
			cfg.wl_micro.op = op;
			cfg.wl_micro.mode = MICRO_THROUGHPUT;
			run(&cfg, 5000, &r);
			cr_assert_eq(r.status == TRIAL_FAILED, 0, "%s", r.error);
			cr_assert_eq(r.ops, 5000 * cpus);
			cr_assert_eq(r.metrics[0].lat.count, 0, "op %d engine %d", op, engine);
			cr_assert_gt(r.ops_per_sec, 0);
		}
	}
}

/* Chained timestamps leave the think time out of the latency: on one virtual CPU (a line that
 * stays in its cache) the latencies are the same with and without a think time. */
Test(harness, think_time_is_no_part_of_a_chained_latency)
{
	struct scenario_cfg cfg;
	struct trial_result a, b;

	micro_cfg(&cfg, ENGINE_SIM, 1);
	run(&cfg, 2000, &a);
	cfg.wl_micro.think_ns = 250;
	run(&cfg, 2000, &b);
	cr_assert_eq(a.metrics[0].lat.count, 2000);
	cr_assert_eq(b.metrics[0].lat.count, 2000);
	cr_assert_eq(memcmp(&a.metrics[0].lat, &b.metrics[0].lat, sizeof(a.metrics[0].lat)), 0,
		     "mean %g vs %g, max %llu vs %llu", a.metrics[0].lat.mean,
		     b.metrics[0].lat.mean, (unsigned long long)a.metrics[0].lat.max,
		     (unsigned long long)b.metrics[0].lat.max);
	cr_assert_gt(a.metrics[0].lat.min, 0);
}

/* On the sim reading the clock costs no virtual time: a sampled cmdq trial does exactly what
 * the unsampled one does, with every 4th op of each CPU timed. */
Test(harness, cmdq_sampling_changes_no_virtual_time, .timeout = 60)
{
	const struct lab_plugin *p = load_kind("cmdq", "cmpxchg");
	char cfgbuf[256] = { 0 };
	struct scenario_cfg cfg;
	struct trial_result a, b;

	cmdq_sim_cfg(&cfg, 8);
	struct trial_request req = { .cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf };
	run_request(&req, &a);
	cr_assert_eq(a.status, TRIAL_OK, "%s", a.error);
	cr_assert_eq(a.metrics[0].lat.count, a.ops);
	cr_assert(!trial_overran(&a) && a.window_overrun > -0.10, "window_overrun %g",
		  a.window_overrun);
	cfg.scenario.sample_every = 4;
	run_request(&req, &b);
	cr_assert_eq(b.status, TRIAL_OK, "%s", b.error);
	cr_assert_eq(a.ops, b.ops);
	cr_assert_gt(a.ops, 100);
	/* Each CPU times its 4th, 8th, ... op: between ops/4 - ncpus and ops/4. */
	cr_assert_leq(b.metrics[0].lat.count * 4, b.ops);
	cr_assert_gt(b.metrics[0].lat.count * 4 + 4 * 8, b.ops, "%llu timed of %llu",
		     (unsigned long long)b.metrics[0].lat.count, (unsigned long long)b.ops);
	double ma = a.metrics[0].lat.mean, mb = b.metrics[0].lat.mean;
	cr_assert(mb > 0.8 * ma && mb < 1.25 * ma, "mean %g sampled vs %g", mb, ma);
	for (uint32_t k = 0; k < a.n_counters; k++)
		if (strcmp(a.counters[k].name, "harness_ns"))
			cr_assert_eq(a.counters[k].total, b.counters[k].total, "%s",
				     a.counters[k].name);
}

/* A counter's total per op, by name. */
static double per_op(const struct trial_result *r, const char *name)
{
	for (uint32_t k = 0; k < r->n_counters; k++)
		if (!strcmp(r->counters[k].name, name))
			return (double)r->counters[k].total / (double)r->ops;
	cr_assert_fail("no counter %s", name);
	return 0;
}

/*
 * [workload.cmdq] mixed: each op a seeded 0 to cmds_per_sync commands, one in four of those
 * with commands unsynced, one without a CMD_SYNC alone. With 5: a sixth are bare syncs and 5/6
 * x 3/4 synced commands, so 0.79 CMD_SYNCs and 2.5 + 0.79 queue entries an op. The oracle
 * holds every sync to all of its CPU's commands before it, unsynced ones included, and the
 * fixed shape (mixed off) still issues one sync and 5 commands every op.
 */
Test(harness, mixed_shapes_issue_bare_and_unsynced_commands, .timeout = 60)
{
	const struct lab_plugin *p = load_kind("cmdq", "cmpxchg");
	char cfgbuf[256] = { 0 };
	struct scenario_cfg cfg;
	struct trial_result r;
	struct oracle_report o;

	cmdq_sim_cfg(&cfg, 4);
	cfg.wl_cmdq.cmds_per_sync = 5;
	cfg.wl_cmdq.mixed = true;
	cfg.smmu.queue_shift = 3;
	struct trial_request req = {
		.cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf, .ops_per_cpu = 2000, .oracle = true
	};
	memset(&r, 0, sizeof(r));
	cr_assert_eq(trial_run(&req, &r, &o), 0, "%s", r.error);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	for (uint32_t i = 0; i < o.n_checks; i++)
		cr_expect(o.checks[i].pass, "%s: %s", o.checks[i].name, o.checks[i].detail);
	double syncs = per_op(&r, "syncs_issued"), entries = per_op(&r, "chain_cmds");
	cr_expect(syncs > 0.74 && syncs < 0.84, "%g CMD_SYNCs an op", syncs);
	cr_expect(entries > 3.0 && entries < 3.6, "%g queue entries an op", entries);

	cfg.wl_cmdq.mixed = false;
	memset(&r, 0, sizeof(r));
	cr_assert_eq(trial_run(&req, &r, &o), 0, "%s", r.error);
	cr_assert_eq(r.status, TRIAL_OK, "%s", r.error);
	cr_expect_eq(per_op(&r, "syncs_issued"), 1.0);
	cr_expect_eq(per_op(&r, "chain_cmds"), 6.0);
}

/*
 * A CPU whose only op began in the warm-up and ended after the stop never opened a window:
 * its time counts neither in the trial's duration nor as harness (harness_ns once counted a
 * starved CPU's whole wait, 9.1 s on a 0.1 s trial). Here biglock serialises 0.7 ms ops on 4
 * CPUs, 1 ms of warm-up then 1 ms measured: the five ops begun in the warm-up are served one
 * after another, so at most two end by the stop and at least two CPUs measure nothing.
 */
Test(harness, starved_cpu_opens_no_window, .timeout = 60)
{
	const struct lab_plugin *p = load_kind("cmdq", "biglock");
	char cfgbuf[256] = { 0 };
	struct scenario_cfg cfg;
	struct trial_result r;
	uint64_t harness = UINT64_MAX;

	cmdq_sim_cfg(&cfg, 4);
	cfg.scenario.warmup_ms = 1;
	cfg.scenario.duration_ms = 1;
	cfg.smmu.sync_ns = 700000;
	struct trial_request req = { .cfg = &cfg, .cmdq = p, .cmdq_config = cfgbuf };
	run_request(&req, &r);
	cr_assert_eq(r.ops_min_cpu, 0, "every CPU measured an op (min %llu)",
		     (unsigned long long)r.ops_min_cpu);
	cr_assert_gt(r.ops, 0);
	for (uint32_t k = 0; k < r.n_counters; k++)
		if (!strcmp(r.counters[k].name, "harness_ns"))
			harness = r.counters[k].total;
	/* The sim's harness costs no virtual time: what is left is rounding, not milliseconds. */
	cr_assert_lt(harness, 1000 * r.ops, "harness_ns %llu for %llu ops",
		     (unsigned long long)harness, (unsigned long long)r.ops);
	/* The window is the measured CPUs': from the warm-up's end to their last op's end. */
	cr_assert_lt(r.duration_s, 0.004, "duration %g s", r.duration_s);
	/* ...which 0.7 ms ops stretch past the 1 ms duration: the run says it was too short. */
	cr_assert(trial_overran(&r), "window_overrun %g", r.window_overrun);
}

/*
 * Natively a lab_alloc() block is followed by a canary (engine/host.c): a plugin writing past
 * its end is found when the block is freed, or at the trial's end while it is still live, and
 * a block used within its size is not.
 */
Test(harness, a_write_past_a_lab_alloc_block_is_found)
{
	struct host_env *env = host_env_new(1, 0, false, false);
	const struct lab_host *h = host_env_host(env);
	char what[200];

	cr_assert_not_null(env);
	unsigned char *a = h->alloc(h, 100), *b = h->alloc(h, 64), *c = h->alloc(h, 40);
	cr_assert(a && b && c);
	memset(a, 1, 100); /* all of it, no more */
	h->free(h, a);
	cr_expect_eq(host_env_overruns(env, what, sizeof(what)), 0, "%s", what);
	b[64] = 1; /* one byte past a block that fills its line: the extra line's canary */
	h->free(h, b);
	cr_assert_eq(host_env_overruns(env, what, sizeof(what)), 1);
	cr_expect(strstr(what, "a lab_alloc(64) block was written past its end: bytes +0..+0"),
		  "%s", what);
	c[47] = 1; /* still live at the end */
	cr_expect_eq(host_env_overruns(env, NULL, 0), 2);
	cr_expect_eq(host_env_overruns(env, NULL, 0), 2, "a block looked at twice counts once");
	h->free(h, c);
	cr_expect_eq(host_env_overruns(env, NULL, 0), 2, "nor once live and once freed");
	host_env_free(env);
}

/*
 * The counter's rate is the machine's: measured once per process (a 20 ms spin each time a
 * trial's clock was set up before), and a child forked after the first setup inherits it.
 * Two measurements of a real counter never give the same double, so equality says "once".
 */
Test(harness, the_counter_rate_is_measured_once_per_process)
{
	struct lab_clock a, b;

	cr_assert_eq(clock_setup(&a, 0), 0);
	if (a.source == LAB_CLOCK_MONOTONIC)
		cr_skip_test("no cycle counter here: nothing is calibrated");
	cr_assert_eq(clock_setup(&b, 0), 0);
	cr_expect_eq(b.source, a.source);
	cr_expect(b.ns_per_tick == a.ns_per_tick, "measured again: %.12g then %.12g", a.ns_per_tick,
		  b.ns_per_tick);
	cr_expect_geq(b.base, a.base, "each setup takes the counter's value then as its base");
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		struct lab_clock c;
		_exit(clock_setup(&c, 0) || c.ns_per_tick != a.ns_per_tick);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && !WEXITSTATUS(status),
		  "a forked child measured the rate again");
	struct lab_clock m;
	cr_assert_eq(clock_setup(&m, 1), 0);
	cr_expect_eq(m.source, LAB_CLOCK_MONOTONIC, "force_monotonic still skips the counter");
	cr_expect(m.ns_per_tick == 1.0);
}

/*
 * A trial's per-CPU histograms (engine_result_alloc): one zeroed mapping, touched only where
 * recorded into. Each starts empty as hist_reset leaves it, each CPU's on cache lines of its
 * own (natively, CPUs record into them at once), and a record lands in its own CPU's only.
 */
Test(harness, per_cpu_histograms_start_empty_on_lines_of_their_own)
{
	struct engine_result res = { 0 };

	cr_assert_eq(engine_result_alloc(&res, 3, 2), 0);
	for (uint32_t i = 0; i < 3; i++) {
		uintptr_t at = (uintptr_t)res.cpus[i].hists;

		cr_expect_eq(at % LAB_CACHE_LINE, 0, "cpu %u's histograms share a line", i);
		if (i)
			cr_expect_geq(at - (uintptr_t)res.cpus[i - 1].hists,
				      2 * sizeof(struct hist), "cpu %u overlaps cpu %u", i, i - 1);
		for (uint32_t m = 0; m < 2; m++) {
			const struct hist *h = &res.cpus[i].hists[m];

			cr_expect(h->count == 0 && h->min == UINT64_MAX && h->max == 0 &&
				  h->sum == 0 && h->sumsq == 0);
			for (uint32_t b = 0; b < HIST_N_BUCKETS; b++)
				cr_assert_eq(h->buckets[b], 0, "cpu %u metric %u bucket %u", i, m,
					     b);
		}
	}
	hist_record(&res.cpus[1].hists[1], 12345);
	cr_expect_eq(res.cpus[1].hists[1].count, 1);
	cr_expect_eq(res.cpus[1].hists[1].min, 12345);
	cr_expect_eq(res.cpus[1].hists[0].count + res.cpus[0].hists[1].count +
			     res.cpus[2].hists[1].count,
		     0);
	engine_result_free(&res);
	cr_expect_null(res.cpus);
}
