/* SPDX-License-Identifier: MIT */
/* The device model: timing of a CMD_SYNC round trip, and every protocol check. */
#include <criterion/criterion.h>
#include <string.h>

#include "device/smmu.h"
#include "engine/host.h"

static struct host_env *env;
static struct smmu_dev *dev;
static struct lab_smmu *q;
static struct lab_cpu *cpu;
static int violations;

static void count_violation(void *arg)
{
	(void)arg;
	violations++;
}

static void make(uint32_t shift, int mode, uint64_t tlbi_ns, uint64_t sync_ns)
{
	char err[128];
	struct smmu_config cfg = {
		.shift = shift,
		.msi = true,
		.mode = mode,
		.ncpus = 1,
		.trace_cap = 64,
		.on_violation = count_violation,
	};

	cfg.timing.tlbi_va_ns = tlbi_ns;
	cfg.timing.sync_ns = sync_ns;
	violations = 0;
	env = host_env_new(1, 0, false);
	cr_assert_not_null(env);
	dev = smmu_new(&cfg, host_env_clock(env), err, sizeof(err));
	cr_assert_not_null(dev, "%s", err);
	q = smmu_iface(dev);
	cpu = host_env_cpu(env, 0);
	host_env_set_idle(env, smmu_idle, dev);
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

/* Spin (as a plugin would) until the device has consumed everything published. */
static void drain(void)
{
	uint64_t deadline = lab_now(cpu) + 1000000000ull;
	while (smmu_cons(dev) != smmu_prod(dev) && lab_now(cpu) < deadline && !smmu_error(dev))
		lab_spin_wait(cpu, NULL);
}

Test(device, completes_a_cmd_sync_by_msi_after_its_service_time, .timeout = 10)
{
	make(4, DEVICE_INLINE, 100, 780);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	struct lab_cmd *sync_slot = lab_q_slot(q, 1);
	put(1, lab_cmd_sync(LAB_SYNC_CS_IRQ, (uint32_t *)&sync_slot->dw[0], 0));
	uint64_t t0 = lab_now(cpu);
	lab_smmu_write_prod(cpu, q, 2);
	uint32_t v;
	LAB_COND_LOAD32(cpu, (uint32_t *)&sync_slot->dw[0], v, v == 0, LAB_RELAXED);
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

Test(device, refuses_prod_moving_backwards, .timeout = 10)
{
	make(3, DEVICE_INLINE, 1000000, 10);
	put(0, smmu_tag_cmd(0, 1, 0, 1));
	put(1, smmu_tag_cmd(0, 2, 0, 1));
	lab_smmu_write_prod(cpu, q, 2);
	lab_smmu_write_prod(cpu, q, 1);
	cr_assert_str_eq(smmu_error(dev), "PROD moved backwards: 0x2 -> 0x1 (CONS 0x0)");
}

Test(device, refuses_prod_overrunning_cons, .timeout = 10)
{
	make(3, DEVICE_INLINE, 1000000000, 10); /* nothing gets consumed */
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
	make(3, DEVICE_INLINE, 2000000, 10); /* 2 ms per TLBI: time to overwrite it */
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
