/* SPDX-License-Identifier: MIT */
/*
 * The multi-queue strategies' routing, seen from the device's per-queue traces: which queue
 * each CPU's commands and CMD_SYNCs land on (ecmdq: a queue per CPU, cpu % queues when
 * fewer; cmdqv: VCMDQs 1..N-1 by cpu % (N - 1), the main queue for what a guest's VINTF
 * cannot take). The oracle checks correctness (verify, conformance); this checks placement.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/cmdq.h>

#include "device/smmu.h"
#include "engine/host.h"
#include "loader/loader.h"
#include "params/params.h"

#define PLUGINS TEST_BUILD_ROOT "/plugins"

static struct host_env *env;
static struct smmu_dev *dev;
static struct loaded_plugin lp;
static const struct lab_cmdq_ops *ops;
static void *config, *state;

/* name on a device of nq queues driven by ncpus CPUs, its parameters at their defaults but
 * for set ("key=value" or ""). */
static void open_plugin(const char *name, uint32_t nq, uint32_t ncpus, const char *set)
{
	char path[256], err[256];
	struct scenario_smmu t = {
		.tlbi_va_ns = 100, .sync_ns = 100, .inv_slots = 8, .queues = nq
	};
	struct smmu_config cfg = { .shift = 4,
				   .msi = true,
				   .mode = DEVICE_INLINE,
				   .timing = t,
				   .ncpus = ncpus,
				   .trace_cap = 64 };

	snprintf(path, sizeof(path), "%s/cmdq-%s.so", PLUGINS, name);
	cr_assert_eq(plugin_load(path, &lp, err, sizeof(err)), 0, "%s", err);
	ops = lp.desc->ops;
	config = calloc(1, lp.desc->config_size ? lp.desc->config_size : 1);
	cr_assert_eq(
		param_set_defaults(lp.desc->params, lp.desc->n_params, config, err, sizeof(err)), 0,
		"%s", err);
	if (*set) {
		const char *eq = strchr(set, '=');
		char key[64];
		cr_assert_not_null(eq);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - set), set);
		const struct lab_param *p = param_find(lp.desc->params, lp.desc->n_params, key);
		cr_assert_not_null(p, "no parameter %s", key);
		cr_assert_eq(param_parse(p, eq + 1, config, err, sizeof(err)), 0, "%s", err);
	}
	env = host_env_new(ncpus, lp.desc->n_counters, false, false);
	cr_assert_not_null(env);
	dev = smmu_new(&cfg, host_env_clock(env), err, sizeof(err));
	cr_assert_not_null(dev, "%s", err);
	host_env_set_idle(env, smmu_idle, dev);
	struct lab_cmdq_setup s = { .struct_size = sizeof(s),
				    .host = host_env_host(env),
				    .smmu = smmu_iface(dev),
				    .ncpus = ncpus,
				    .config = config,
				    .err = err,
				    .err_len = sizeof(err) };
	cr_assert_eq(ops->init(&s, &state), 0, "%s", err);
}

static void teardown(void)
{
	if (state && ops->fini)
		ops->fini(state);
	state = NULL;
	smmu_free(dev);
	dev = NULL;
	host_env_free(env);
	env = NULL;
	plugin_unload(&lp);
	free(config);
	config = NULL;
}

TestSuite(multiqueue, .fini = teardown);

static void issue(uint32_t cpu, const struct lab_cmd *cmds, uint32_t n)
{
	cr_assert_eq(ops->issue(host_env_cpu(env, cpu), state, cmds, n, true), 0);
}

/* Queue qi's trace as opcodes, e.g. "12 46" for a TLBI_NH_VA and a CMD_SYNC. */
static const char *opcodes(uint32_t qi)
{
	static char buf[256];
	uint64_t n;
	bool truncated;
	const struct lab_cmd *tr = smmu_q_trace(dev, qi, &n, &truncated);
	size_t off = 0;

	buf[0] = '\0';
	for (uint64_t i = 0; i < n && off < sizeof(buf) - 4; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%02x", i ? " " : "",
					LAB_CMD_OPCODE(tr[i].dw[0]));
	return buf;
}

Test(multiqueue, ecmdq_gives_each_cpu_its_own_queue, .timeout = 20)
{
	struct lab_cmd t = lab_cmd_tlbi_nh_va(1, 0x1000, true);

	open_plugin("ecmdq", 4, 3, "");
	issue(0, &t, 1);
	issue(2, &t, 1);
	issue(2, &t, 1);
	cr_assert_str_eq(opcodes(0), "12 46");
	cr_assert_str_eq(opcodes(1), "");
	cr_assert_str_eq(opcodes(2), "12 46 12 46");
	cr_assert_str_eq(opcodes(3), "", "a queue no CPU maps to was used");
	cr_assert_null(smmu_error(dev));
}

Test(multiqueue, ecmdq_shares_queues_cpu_mod_queues_when_fewer, .timeout = 20)
{
	struct lab_cmd t = lab_cmd_tlbi_nh_va(1, 0x1000, true);

	open_plugin("ecmdq", 2, 5, "");
	issue(4, &t, 1);
	issue(3, &t, 1);
	cr_assert_str_eq(opcodes(0), "12 46");
	cr_assert_str_eq(opcodes(1), "12 46");
}

Test(multiqueue, cmdqv_puts_cpus_on_vcmdqs_and_polls_cons, .timeout = 20)
{
	struct lab_cmd t = lab_cmd_tlbi_nh_va(1, 0x1000, true);

	open_plugin("cmdqv", 3, 4, "");
	issue(0, &t, 1); /* VCMDQ 0: queue 1 */
	issue(3, &t, 1); /* VCMDQ 1: queue 2 */
	cr_assert_str_eq(opcodes(0), "", "the main queue was used with VCMDQs there");
	cr_assert_str_eq(opcodes(1), "12 46");
	cr_assert_str_eq(opcodes(2), "12 46");
	uint64_t n;
	bool truncated;
	const struct lab_cmd *tr = smmu_q_trace(dev, 1, &n, &truncated);
	cr_assert_neq(lab_cmd_sync_cs(&tr[1]), LAB_SYNC_CS_IRQ,
		      "a VCMDQ's CMD_SYNC asked for an MSI");
	struct smmu_stats st;
	smmu_get_stats(dev, &st);
	cr_assert_eq(st.msi_writes, 0);
}

Test(multiqueue, cmdqv_without_vcmdqs_uses_the_main_queue, .timeout = 20)
{
	struct lab_cmd t = lab_cmd_tlbi_nh_va(1, 0x1000, true);

	open_plugin("cmdqv", 1, 2, "");
	issue(1, &t, 1);
	cr_assert_str_eq(opcodes(0), "12 46");
}

/* A guest's VINTF takes invalidations only: a CFGI goes to the main queue with its own
 * CMD_SYNC, so the caller's sync still covers it. */
Test(multiqueue, cmdqv_guest_sends_what_a_vcmdq_cannot_take_to_the_main_queue, .timeout = 20)
{
	struct lab_cmd cmds[3] = { lab_cmd_tlbi_nh_va(1, 0x1000, true),
				   { { LAB_CMD_CFGI_STE, 0 } },
				   lab_cmd_tlbi_nh_va(1, 0x2000, true) };

	open_plugin("cmdqv", 2, 1, "guest=true");
	issue(0, cmds, 3);
	cr_assert_str_eq(opcodes(1), "12 46 12 46");
	cr_assert_str_eq(opcodes(0), "03 46");
	teardown();
	open_plugin("cmdqv", 2, 1, "");
	issue(0, cmds, 3);
	cr_assert_str_eq(opcodes(1), "12 03 12 46", "the host's VINTF0 takes every command");
	cr_assert_str_eq(opcodes(0), "");
}
