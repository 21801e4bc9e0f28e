/* SPDX-License-Identifier: MIT */
/*
 * The device model: its timing (latency apart from throughput: fetch, overlapped
 * invalidations, CMD_SYNC completion), the order of a CMD_SYNC's MSI and CONS natively and
 * on the sim, and every protocol check.
 */
#include <criterion/criterion.h>

#include "built_plugins.h"
#include <stdio.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/host.h"
#include "params/params.h"
#include "run/trial_run.h"
#include "engine/sim/sim.h"
#include "engine/sim/sim_engine.h"
#include "workload/dma_wl.h"

static struct host_env *env;
static struct smmu_dev *dev;
static struct lab_smmu *q;
static struct lab_cpu *cpu;
static int violations;

/* A model clock the test moves by hand: every event time is exact. */
static uint64_t manual_ns;
static uint64_t manual_now(const struct lab_clock *clk)
{
	(void)clk;
	return manual_ns;
}
static void manual_delay(struct lab_cpu *c, uint64_t ns)
{
	(void)c;
	manual_ns += ns;
}
static const struct lab_clock manual_clock = {
	.source = LAB_CLOCK_SIM,
	.ns_per_tick = 1.0,
	.sim_now = manual_now,
	.sim_delay = manual_delay,
};

static void count_violation(void *arg)
{
	(void)arg;
	violations++;
}

/* The [smmu] table's defaults: the shipped calibration. */
static struct scenario_smmu default_timing(void)
{
	const struct scenario_section *sec = scenario_find_section("smmu");
	struct scenario_smmu t;
	char err[128];

	cr_assert_not_null(sec);
	cr_assert_eq(param_set_defaults(sec->params, sec->n_params, &t, err, sizeof(err)), 0, "%s",
		     err);
	return t;
}

static void make_timed(uint32_t shift, int mode, const struct scenario_smmu *t, bool manual)
{
	char err[128];
	struct smmu_config cfg = {
		.shift = shift,
		.msi = true,
		.mode = mode,
		.timing = *t,
		.ncpus = 1,
		.trace_cap = 64,
		.on_violation = count_violation,
	};

	violations = 0;
	manual_ns = 1000;
	env = host_env_new(1, 0, false, false);
	cr_assert_not_null(env);
	cpu = host_env_cpu(env, 0);
	if (manual)
		cpu->clock = &manual_clock;
	dev = smmu_new(&cfg, manual ? &manual_clock : host_env_clock(env), err, sizeof(err));
	cr_assert_not_null(dev, "%s", err);
	q = smmu_iface(dev);
	host_env_set_idle(env, smmu_idle, dev);
}

/* A serial device: every command but CMD_SYNC takes tlbi_ns, a CMD_SYNC sync_ns after it. */
static void make(uint32_t shift, int mode, uint64_t tlbi_ns, uint64_t sync_ns)
{
	struct scenario_smmu t = { .tlbi_va_ns = tlbi_ns, .sync_ns = sync_ns, .inv_slots = 1 };

	make_timed(shift, mode, &t, false);
}

static void teardown(void)
{
	smmu_free(dev);
	host_env_free(env);
}

TestSuite(device, .fini = teardown);

static void put(uint32_t index, struct lab_cmd cmd)
{
	lab_cmd_write(lab_q_slot(q, index), &cmd);
}

static uint32_t *msi_word_of(uint32_t index)
{
	return (uint32_t *)&lab_q_slot(q, index)->dw[0];
}

/* A CMD_SYNC at index whose MSI writes 0 into its own first word (the kernel's MSIPOLL). */
static void put_sync(uint32_t index)
{
	put(index, lab_cmd_sync(LAB_SYNC_CS_IRQ, msi_word_of(index), 0));
}

/* Spin (as a plugin would) until the device has consumed everything published. */
static void drain(void)
{
	uint64_t deadline = lab_now(cpu) + 1000000000ull;
	while (smmu_cons(dev) != smmu_prod(dev) && lab_now(cpu) < deadline && !smmu_error(dev))
		lab_spin_wait(cpu, NULL);
}

/* Manual clock: step to each event in turn; the model time the MSI at index landed. */
static uint64_t msi_time(uint32_t index)
{
	for (int guard = 0; guard < 100000 && *msi_word_of(index); guard++) {
		uint64_t due = smmu_next_due(dev);
		cr_assert_neq(due, UINT64_MAX, "the device went idle before the MSI");
		manual_ns = due > manual_ns ? due : manual_ns;
		smmu_advance(dev);
	}
	cr_assert_eq(*msi_word_of(index), 0);
	return manual_ns;
}

Test(device, completes_a_cmd_sync_by_msi_after_its_service_time, .timeout = 10)
{
	make(4, DEVICE_INLINE, 100, 780);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put_sync(1);
	uint64_t t0 = lab_now(cpu);
	lab_smmu_write_prod(cpu, q, 2);
	uint32_t v;
	LAB_COND_LOAD32(cpu, msi_word_of(1), v, v == 0, LAB_RELAXED);
	uint64_t took = lab_now(cpu) - t0;

	cr_assert_geq(took, 880, "the round trip took %lu ns, less than the service times",
		      (unsigned long)took);
	cr_assert_lt(took, 50000000, "the round trip took %lu ns", (unsigned long)took);
	drain();
	struct smmu_stats st;
	smmu_get_stats(dev, &st);
	cr_assert_eq(st.consumed, 2);
	cr_assert_eq(st.syncs, 1);
	cr_assert_eq(st.msi_writes, 1);
	cr_assert_eq(smmu_cons(dev), 2);
	cr_assert_eq(smmu_done_seq(dev, 0), 1);
	cr_assert_null(smmu_error(dev));
}

/* The calibration point: one CPU alone, PROD write -> MSI of a TLBI + CMD_SYNC, 880 ns. */
Test(device, one_cpus_sync_latency_is_the_serial_models, .timeout = 10)
{
	struct scenario_smmu t = default_timing();

	make_timed(4, DEVICE_INLINE, &t, true);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put_sync(1);
	lab_smmu_write_prod(cpu, q, 2);
	uint64_t t0 = manual_ns;
	uint64_t took = msi_time(1) - t0;

	/* The serial model's tlbi_va_ns + sync_ns was 100 + 780. */
	cr_assert_eq(took, 880, "PROD write -> MSI took %lu ns", (unsigned long)took);
	cr_assert_eq(took, t.fetch_ns + t.tlbi_va_ns + t.sync_ns);
	cr_assert_null(smmu_error(dev));
}

/* N invalidations then a CMD_SYNC: faster than N x latency, no faster than the slots allow. */
Test(device, overlapped_invalidations_are_bounded_by_the_slots, .timeout = 10)
{
	struct scenario_smmu t = {
		.fetch_ns = 10, .tlbi_va_ns = 500, .sync_ns = 50, .inv_slots = 4
	};
	const uint32_t n = 16;

	make_timed(5, DEVICE_INLINE, &t, true);
	for (uint32_t i = 0; i < n; i++)
		put(i, smmu_tag_cmd(0, 1, i, n));
	put_sync(n);
	lab_smmu_write_prod(cpu, q, n + 1);
	uint64_t t0 = manual_ns;
	uint64_t took = msi_time(n) - t0;

	/* 4 waves of 4: the last TLBI dispatched at 4 x 10 + 3 x 500, done 500 later, + sync. */
	cr_assert_lt(took, n * t.tlbi_va_ns, "%lu ns: no overlap", (unsigned long)took);
	cr_assert_geq(took, (n / t.inv_slots) * t.tlbi_va_ns + t.sync_ns,
		      "%lu ns: more than %lu in flight", (unsigned long)took,
		      (unsigned long)t.inv_slots);
	cr_assert_eq(took, 40 + 3 * 500 + 500 + 50, "%lu ns", (unsigned long)took);
	cr_assert_null(smmu_error(dev));
}

/* CMD_SYNCs pipeline: back-to-back TLBI + CMD_SYNC pairs complete one per sync_ns. */
Test(device, back_to_back_syncs_pipeline, .timeout = 10)
{
	struct scenario_smmu t = default_timing();
	const uint32_t pairs = 8;

	make_timed(5, DEVICE_INLINE, &t, true);
	for (uint32_t i = 0; i < pairs; i++) {
		put(2 * i, smmu_tag_cmd(0, i + 1, 0, 1));
		put_sync(2 * i + 1);
	}
	lab_smmu_write_prod(cpu, q, 2 * pairs);
	uint64_t t0 = manual_ns;
	uint64_t first = msi_time(1) - t0, last = msi_time(2 * pairs - 1) - t0;

	cr_assert_eq(first, 880);
	cr_assert_eq(last, first + (pairs - 1) * t.sync_ns, "%lu ns for %u pairs",
		     (unsigned long)last, pairs);
	cr_assert_lt(last, pairs * first, "no faster than a serial server");
}

/* Everything ahead of a CMD_SYNC completes before it, however slow, and CONS waits for it. */
Test(device, a_sync_never_completes_before_the_commands_ahead_of_it, .timeout = 10)
{
	struct scenario_smmu t = { .fetch_ns = 10,
				   .tlbi_va_ns = 100,
				   .tlbi_asid_ns = 5000,
				   .sync_ns = 50,
				   .inv_slots = 8 };

	make_timed(4, DEVICE_INLINE, &t, true);
	put(0, lab_cmd_tlbi_nh_va(1, 0x1000, true));
	put(1, (struct lab_cmd){ { LAB_CMD_TLBI_NH_ASID | (1ull << 48), 0 } });
	put(2, lab_cmd_tlbi_nh_va(1, 0x2000, true));
	put_sync(3);
	put(4, smmu_tag_cmd(0, 1, 0, 1));
	put_sync(5);
	lab_smmu_write_prod(cpu, q, 6);
	uint64_t t0 = manual_ns;

	/* Step to just before the slow TLBI_NH_ASID is done: neither sync, CONS stuck at 3. */
	manual_ns = t0 + 20 + 5000 - 1;
	smmu_advance(dev);
	cr_assert_neq(*msi_word_of(3), 0, "a CMD_SYNC completed before a command ahead of it");
	cr_assert_neq(*msi_word_of(5), 0, "a later CMD_SYNC completed first");
	cr_assert_eq(smmu_cons(dev), 3, "CONS 0x%x passed a pending CMD_SYNC", smmu_cons(dev));
	cr_assert_eq(smmu_fetched(dev), 6, "fetching stopped at a CMD_SYNC");
	cr_assert_eq(smmu_done_seq(dev, 0), 0, "a fetched command counted done before its sync");
	uint64_t s1 = msi_time(3) - t0, s2 = msi_time(5) - t0;
	cr_assert_eq(s1, 20 + 5000 + 50);
	cr_assert_eq(s2, s1 + 50, "the second sync waits for the first");
	cr_assert_eq(smmu_done_seq(dev, 0), 1);
	drain();
	cr_assert_eq(smmu_cons(dev), 6);
	cr_assert_null(smmu_error(dev));
}

/* Natively: the MSI lands msi_cons_ns before CONS moves past its CMD_SYNC, never after. */
Test(device, msi_lands_before_cons_passes_the_sync, .timeout = 10)
{
	struct scenario_smmu t = default_timing();

	t.msi_cons_ns = 30;
	make_timed(4, DEVICE_INLINE, &t, true);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put_sync(1);
	lab_smmu_write_prod(cpu, q, 2);
	uint64_t t0 = manual_ns;
	uint64_t tm = msi_time(1);
	cr_assert_eq(tm - t0, 880);
	cr_assert_eq(smmu_cons(dev), 1, "CONS moved past the CMD_SYNC with its MSI");
	manual_ns = tm + 29;
	smmu_advance(dev);
	cr_assert_eq(smmu_cons(dev), 1);
	manual_ns = tm + 30;
	smmu_advance(dev);
	cr_assert_eq(smmu_cons(dev), 2);

	/* msi_cons_ns = 0: one instant, the MSI still first (a CONS poller never sees it late). */
	teardown();
	t.msi_cons_ns = 0;
	make_timed(4, DEVICE_INLINE, &t, false);
	for (uint32_t k = 0; k < 50; k++) {
		uint32_t p = 2 * k;
		put(p, smmu_tag_cmd(0, k + 1, 0, 1));
		put_sync(p + 1);
		lab_smmu_write_prod(cpu, q, (p + 2) & 31);
		uint32_t target = (p + 2) & 31;
		while (lab_smmu_read_cons(cpu, q) != target)
			lab_cpu_relax();
		cr_assert_eq(__atomic_load_n(msi_word_of(p + 1), __ATOMIC_ACQUIRE), 0,
			     "CONS passed CMD_SYNC %u before its MSI", k);
	}
}

/* ---- the same order on the sim: the device as the agent, one virtual CPU polling ---------- */

struct sim_probe {
	uint32_t next;	   /* index of the next pair */
	uint64_t msi_seen; /* virtual ns the MSI was first seen, per op */
	uint64_t late;	   /* polls that found CONS past a CMD_SYNC whose MSI was not there */
	uint64_t gap_min;  /* least CONS-seen minus MSI-seen over the ops */
};

static int sim_probe_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring)
{
	struct sim_probe *pr = arg;
	uint32_t p = pr->next, target = (p + 2) & 31;
	uint64_t msi_at = 0;

	(void)hists;
	(void)measuring;
	put(p, smmu_tag_cmd(0, p / 2 + 1, 0, 1));
	put_sync(p + 1);
	lab_smmu_write_prod(c, q, target);
	for (;;) {
		lab_delay_ns(c, 5);
		bool msi = !__atomic_load_n(msi_word_of(p + 1), __ATOMIC_ACQUIRE);
		bool passed = lab_smmu_read_cons(c, q) == target;
		if (msi && !msi_at)
			msi_at = lab_now(c);
		if (passed) {
			pr->late += !msi;
			uint64_t gap = msi_at ? lab_now(c) - msi_at : 0;
			pr->gap_min = gap < pr->gap_min ? gap : pr->gap_min;
			break;
		}
	}
	pr->next = target;
	return 0;
}

Test(device, msi_lands_before_cons_passes_the_sync_on_the_sim, .timeout = 30)
{
	struct scenario_smmu t = default_timing();
	struct scenario_cfg cfg;
	struct engine_result res;
	struct sim_probe pr = { .gap_min = UINT64_MAX };

	t.msi_cons_ns = 200; /* longer than a poll, so the order shows in virtual time */
	t.cons_read_ns = 10;
	make_timed(4, DEVICE_INLINE, &t, false);
	memset(&cfg, 0, sizeof(cfg));
	sim_machine_defaults(&cfg.machine);
	struct engine_job job = {
		.env = env,
		.cfg = &cfg,
		.dev = dev,
		.n_metrics = 1,
		.ops_per_cpu = 40,
		.watchdog_ns = 100000000,
		.op = sim_probe_op,
		.arg = &pr,
	};
	memset(&res, 0, sizeof(res));
	cr_assert_eq(sim_engine.run(&job, &res), 0, "%s", res.why);
	cr_assert(!res.hung && !res.op_failed, "%s", res.why);
	engine_result_free(&res);
	cr_assert_eq(pr.next, (40 * 2) & 31);
	cr_assert_eq(pr.late, 0, "CONS passed a CMD_SYNC before its MSI %lu times",
		     (unsigned long)pr.late);
	/* The MSI is seen up to one poll (5 ns + a 10 ns CONS read) late, CONS too. */
	cr_assert_geq(pr.gap_min, 200 - 2 * (5 + 10), "CONS seen only %lu ns after the MSI",
		      (unsigned long)pr.gap_min);
	cr_assert_null(smmu_error(dev));
}

/* ---- configs/ways-d06.ini end to end ------------------------------------------------------ */

/* One sim trial of configs/NAME with the sets given (its first point, first plugins). */
#define ways_trial(name, sets, res) ways_trial_n(name, sets, sizeof(sets) / sizeof(sets[0]), res)

static void ways_trial_n(const char *name, const char **sets, size_t n_sets,
			 struct trial_result *res)
{
	struct plugin_lookup lookup = { .find = find_built };
	struct diag_list diags = { 0 };
	struct scenario_point pt;
	char path[512];

	snprintf(path, sizeof(path), "%s/configs/%s", TEST_SOURCE_ROOT, name);
	struct scenario *s = scenario_load(path, sets, n_sets, &lookup, &diags);
	cr_assert_not_null(s, "%s", diags.n ? diags.msgs[0] : "?");
	cr_assert_eq(s->base.wl_dma.pattern, DMA_PATTERN_WAYS);
	cr_assert_eq(s->base.scenario.engine, ENGINE_SIM);
	cr_assert_eq(scenario_point(s, 0, &pt), 0);
	struct trial_request req = {
		.cfg = &pt.cfg,
		.cmdq = s->cmdq[0].desc,
		.cmdq_config = pt.plugin_cfgs[0],
		.iova = s->iova[0].desc,
		.iova_config = pt.plugin_cfgs[1],
	};
	memset(res, 0, sizeof(*res));
	cr_assert_eq(trial_run(&req, res, NULL), 0, "%s", res->error);
	cr_assert_eq(res->status, TRIAL_OK, "%s: %s", name, res->error);
	cr_assert_gt(res->ops, 0);
	scenario_point_free(s, &pt);
	scenario_free(s);
	diag_clear(&diags);
}

Test(ways, the_d06_config_runs_end_to_end, .timeout = 120)
{
	const char *sets[] = { "cpus=2", "duration_ms=2", "warmup_ms=1" };
	struct trial_result res;

	ways_trial("ways-d06.ini", sets, &res);
	cr_assert_str_eq(res.metrics[0].name, "map");
	cr_assert_str_eq(res.metrics[1].name, "unmap");
	/* Every op is a whole loop: 50 maps and 50 unmaps each. */
	cr_assert_eq(res.metrics[0].lat.count, 50 * res.ops);
	cr_assert_eq(res.metrics[1].lat.count, 50 * res.ops);
	/* A strict unmap waits for a CMD_SYNC: at least the device's 880 ns round trip. */
	cr_assert_gt(res.metrics[1].lat.mean, 880, "unmap %.0f ns", res.metrics[1].lat.mean);
}

/*
 * The memcpy's time is drawn per map from a stream seeded by the trial's seed: the same seed
 * gives the same trial (the sim is deterministic), another seed another one, so repeats
 * differ; with think_jitter = 0 the seed changes nothing.
 */
Test(ways, the_think_time_jitter_follows_the_seed, .timeout = 120)
{
	const char *a[] = { "cpus=4", "duration_ms=2", "warmup_ms=1", "seed=1" };
	const char *b[] = { "cpus=4", "duration_ms=2", "warmup_ms=1", "seed=2" };
	const char *a0[] = { "cpus=4", "duration_ms=2", "warmup_ms=1", "seed=1",
			     "workload.dma.think_jitter=0" };
	const char *b0[] = { "cpus=4", "duration_ms=2", "warmup_ms=1", "seed=2",
			     "workload.dma.think_jitter=0" };
	struct trial_result r1, r2, r3, z1, z2;

	ways_trial("ways-d06.ini", a, &r1);
	ways_trial("ways-d06.ini", a, &r2);
	ways_trial("ways-d06.ini", b, &r3);
	ways_trial("ways-d06.ini", a0, &z1);
	ways_trial("ways-d06.ini", b0, &z2);
	cr_assert_eq(r1.metrics[0].lat.mean, r2.metrics[0].lat.mean, "same seed, same trial");
	cr_assert_eq(r1.ops, r2.ops);
	/* A map is pt_map_ns and the IOVA allocation; the memcpy after it moves its neighbours'
	 * timing, so the unmaps' mean differs with the draws. */
	cr_assert_neq(r1.metrics[1].lat.mean, r3.metrics[1].lat.mean, "another seed");
	cr_assert_eq(z1.metrics[1].lat.mean, z2.metrics[1].lat.mean, "no jitter: no seed");
	cr_assert_eq(z1.ops, z2.ops);
	/* The mean think time stays 300 ns: an unmap costs about the same, jittered or not. */
	cr_assert_float_eq(r3.metrics[1].lat.mean, z1.metrics[1].lat.mean,
			   0.05 * z1.metrics[1].lat.mean, "%.1f vs %.1f ns", r3.metrics[1].lat.mean,
			   z1.metrics[1].lat.mean);
}

/* The 16-to-96-CPU comparison with Garry's figures runs (shortened: 16 CPUs, mainline). */
Test(ways, the_d06_scale_config_runs, .timeout = 120)
{
	const char *sets[] = { "cpus=16", "duration_ms=2", "warmup_ms=2", "plugins.cmdq=cmpxchg" };
	struct trial_result res;

	ways_trial("ways-d06-scale.ini", sets, &res);
	cr_assert_eq(res.metrics[1].lat.count, 50 * res.ops);
}

/* ---- protocol checks ------------------------------------------------------------------------ */

Test(device, a_thread_consumes_without_anyone_spinning, .timeout = 10)
{
	make(4, DEVICE_THREAD, 100, 100);
	host_env_set_idle(env, NULL, NULL);
	cr_assert_eq(smmu_start(dev), 0);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put(1, lab_cmd_sync(LAB_SYNC_CS_NONE, NULL, 0));
	lab_smmu_write_prod(cpu, q, 2);
	uint64_t deadline = lab_now(cpu) + 1000000000ull;
	while (smmu_cons(dev) != 2 && lab_now(cpu) < deadline)
		lab_cpu_relax();
	smmu_stop(dev);
	cr_assert_eq(smmu_cons(dev), 2);
}

Test(device, wraps_and_poisons_consumed_slots, .timeout = 10)
{
	make(3, DEVICE_INLINE, 10, 10);
	for (uint32_t p = 0; p < 20; p++) {
		put(p, smmu_tag_cmd(0, p + 1, 0, 1));
		lab_smmu_write_prod(cpu, q, (p + 1) & 15);
		drain();
	}
	cr_assert_null(smmu_error(dev));
	cr_assert_eq(smmu_cons(dev), 20 & 15);
	cr_assert_eq(lab_q_slot(q, 19)->dw[0], 0, "a consumed slot must read as consumed");
	uint64_t n;
	bool truncated;
	smmu_trace(dev, &n, &truncated);
	cr_assert_eq(n, 20);
}

Test(device, refuses_an_entry_published_before_it_was_written, .timeout = 10)
{
	make(3, DEVICE_INLINE, 10, 10);
	lab_smmu_write_prod(cpu, q, 1);
	cr_assert_eq(violations, 1);
	cr_assert_str_eq(smmu_error(dev),
			 "slot 0 (index 0x0) published before it was written: it still holds a "
			 "consumed entry (PROD 0x0 -> 0x1, CONS 0x0)");
}

Test(device, refuses_an_unknown_opcode, .timeout = 10)
{
	make(3, DEVICE_INLINE, 10, 10);
	put(0, (struct lab_cmd){ { 0x99, 0 } });
	lab_smmu_write_prod(cpu, q, 1);
	cr_assert(strstr(smmu_error(dev), "slot 0 (index 0x0): unknown opcode 0x99"), "%s",
		  smmu_error(dev));
}

/* A fetch stage this slow consumes nothing while the test looks. */
static void make_stalled(uint32_t shift)
{
	struct scenario_smmu t = { .fetch_ns = 1000000000, .tlbi_va_ns = 10, .sync_ns = 10 };

	make_timed(shift, DEVICE_INLINE, &t, false);
}

Test(device, refuses_prod_moving_backwards, .timeout = 10)
{
	make_stalled(3);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put(1, smmu_tag_cmd(0, 2, 0, 1));
	lab_smmu_write_prod(cpu, q, 2);
	lab_smmu_write_prod(cpu, q, 1);
	cr_assert_str_eq(smmu_error(dev), "PROD moved backwards: 0x2 -> 0x1 (CONS 0x0)");
}

Test(device, refuses_prod_overrunning_cons, .timeout = 10)
{
	make_stalled(3); /* nothing gets consumed */
	for (uint32_t p = 0; p < 8; p++)
		put(p, smmu_tag_cmd(0, p + 1, 0, 1));
	lab_smmu_write_prod(cpu, q, 8); /* full: allowed */
	cr_assert_null(smmu_error(dev));
	lab_smmu_write_prod(cpu, q, 9);
	cr_assert_str_eq(smmu_error(dev),
			 "PROD 0x9 overruns CONS 0x0: 9 entries outstanding in a queue of 8");
}

Test(device, refuses_prod_with_the_owner_flag_left_on, .timeout = 10)
{
	make(3, DEVICE_INLINE, 10, 10);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	lab_smmu_write_prod(cpu, q, 1u | LAB_Q_OVF);
	cr_assert(strstr(smmu_error(dev), "PROD write 0x80000001 has bits outside IDX|WRP"), "%s",
		  smmu_error(dev));
}

Test(device, refuses_an_entry_rewritten_before_it_was_consumed, .timeout = 10)
{
	struct scenario_smmu t = { .fetch_ns = 2000000, .tlbi_va_ns = 10, .sync_ns = 10 };

	make_timed(3, DEVICE_INLINE, &t, false); /* 2 ms to fetch: time to overwrite it */
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	lab_smmu_write_prod(cpu, q, 1);
	put(0, smmu_tag_cmd(0, 7, 0, 1));
	drain();
	cr_assert(strstr(smmu_error(dev), "slot 0 rewritten after it was published and before it "
					  "was consumed"),
		  "%s", smmu_error(dev) ? smmu_error(dev) : "(no error)");
}

Test(device, tags_round_trip, .timeout = 10)
{
	uint32_t cpu_id, i, n;
	uint64_t seq;
	struct lab_cmd cmd = smmu_tag_cmd(37, 123456789, 62, 63);

	cr_assert(smmu_untag_cmd(&cmd, &cpu_id, &seq, &i, &n));
	cr_assert_eq(cpu_id, 37);
	cr_assert_eq(seq, 123456789);
	cr_assert_eq(i, 62);
	cr_assert_eq(n, 63);
}

/* ---- several queues ([smmu] queues) ---------------------------------------------------------- */

static void put_q(struct lab_smmu *s, uint32_t index, struct lab_cmd cmd)
{
	lab_cmd_write(lab_q_slot(s, index), &cmd);
}

static void put_sync_q(struct lab_smmu *s, uint32_t index)
{
	put_q(s, index, lab_cmd_sync(LAB_SYNC_CS_IRQ, (uint32_t *)&lab_q_slot(s, index)->dw[0], 0));
}

/* Step the manual clock to the next event; false once the device is idle. */
static bool step(void)
{
	uint64_t due = smmu_next_due(dev);

	if (due == UINT64_MAX)
		return false;
	manual_ns = due > manual_ns ? due : manual_ns;
	smmu_advance(dev);
	return true;
}

Test(device, every_view_reaches_every_queue, .timeout = 10)
{
	struct scenario_smmu t = { .tlbi_va_ns = 100, .sync_ns = 100, .inv_slots = 1, .queues = 3 };

	make_timed(4, DEVICE_INLINE, &t, true);
	cr_assert_eq(lab_smmu_nqueues(q), 3);
	cr_assert_eq(smmu_nqueues(dev), 3);
	struct lab_smmu *q2 = lab_smmu_queue(q, 2);
	cr_assert_not_null(q2);
	cr_assert_eq(q2->qidx, 2);
	cr_assert_neq(q2->ring, q->ring, "two queues share a ring");
	cr_assert_eq(lab_smmu_queue(q2, 0), q);
	cr_assert_null(lab_smmu_queue(q, 3));
}

/* A CMD_SYNC waits for what is before it in its own queue, not for another queue's TLBIs. */
Test(device, a_cmd_sync_covers_its_own_queue_only, .timeout = 10)
{
	struct scenario_smmu t = {
		.tlbi_va_ns = 10000, .sync_ns = 100, .fetch_ns = 20, .inv_slots = 8, .queues = 2
	};

	make_timed(4, DEVICE_INLINE, &t, true);
	struct lab_smmu *q1 = lab_smmu_queue(q, 1);
	uint32_t *msi0 = (uint32_t *)&lab_q_slot(q, 1)->dw[0];
	uint32_t *msi1 = (uint32_t *)&lab_q_slot(q1, 0)->dw[0];

	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put_sync(1);
	put_sync_q(q1, 0);
	lab_smmu_write_prod(cpu, q, 2);
	lab_smmu_write_prod(cpu, q1, 1);
	uint64_t t1 = 0, t0 = 0;
	for (int guard = 0; guard < 1000 && (*msi0 || *msi1) && step(); guard++) {
		if (!*msi1 && !t1)
			t1 = manual_ns;
		if (!*msi0 && !t0)
			t0 = manual_ns;
	}
	cr_assert_null(smmu_error(dev), "%s", smmu_error(dev));
	cr_assert(t0 && t1, "a CMD_SYNC never completed");
	/* Queue 1's sync: fetched after queue 0's TLBI (the shared fetch stage), then sync_ns. */
	cr_assert_eq(t1, 1000 + 2 * 20 + 100, "queue 1's MSI at %lu", (unsigned long)t1);
	/* Queue 0's: after its TLBI's 10 us. */
	cr_assert_eq(t0, 1000 + 20 + 10000 + 100, "queue 0's MSI at %lu", (unsigned long)t0);
	while (step())
		;
	cr_assert_eq(smmu_q_cons(dev, 0), 2);
	cr_assert_eq(smmu_q_cons(dev, 1), 1);
	cr_assert_eq(smmu_done_seq(dev, 0), 1);
}

/* Busy queues are served one command each in turn. */
Test(device, busy_queues_are_fetched_round_robin, .timeout = 10)
{
	struct scenario_smmu t = {
		.tlbi_va_ns = 10, .sync_ns = 10, .fetch_ns = 20, .inv_slots = 64, .queues = 3
	};

	make_timed(4, DEVICE_INLINE, &t, true);
	for (uint32_t i = 0; i < 3; i++) {
		struct lab_smmu *qi = lab_smmu_queue(q, i);
		for (uint32_t k = 0; k < 4; k++)
			put_q(qi, k, smmu_tag_cmd(0, 1, k, 4));
	}
	for (uint32_t i = 0; i < 3; i++)
		lab_smmu_write_prod(cpu, lab_smmu_queue(q, i), 4);
	for (uint32_t n = 1; n <= 12; n++) {
		uint32_t f[3];
		for (uint32_t i = 0; i < 3; i++)
			f[i] = smmu_q_fetched(dev, i);
		while (f[0] + f[1] + f[2] < n) {
			cr_assert(step(), "the device went idle after %u fetches", n - 1);
			for (uint32_t i = 0; i < 3; i++)
				f[i] = smmu_q_fetched(dev, i);
		}
		for (uint32_t i = 0; i < 3; i++)
			cr_assert_leq(f[i], (n + 2 - i) / 3,
				      "after %u fetches queue %u had %u: not round robin", n, i,
				      f[i]);
	}
	cr_assert_null(smmu_error(dev));
}

/* Each queue is checked on its own, and the message names it. */
Test(device, protocol_checks_are_per_queue, .timeout = 10)
{
	struct scenario_smmu t = { .tlbi_va_ns = 100, .sync_ns = 100, .inv_slots = 1, .queues = 2 };

	make_timed(4, DEVICE_INLINE, &t, true);
	struct lab_smmu *q1 = lab_smmu_queue(q, 1);

	put(0, smmu_tag_cmd(0, 1, 0, 1));
	lab_smmu_write_prod(cpu, q, 1); /* queue 0's slot 0 is written; queue 1's is not */
	cr_assert_null(smmu_error(dev));
	lab_smmu_write_prod(cpu, q1, 1);
	cr_assert_not_null(smmu_error(dev));
	cr_assert(strstr(smmu_error(dev), "queue 1: slot 0 (index 0x0) published before it was "
					  "written") == smmu_error(dev),
		  "%s", smmu_error(dev));
	cr_assert_eq(violations, 1);
}
