/* SPDX-License-Identifier: MIT */
/*
 * cmdq conformance: every cmdq plugin the build produced (each cmdq-*.so in
 * IOMMULAB_PLUGIN_PATH but the null baseline, which consumes nothing on purpose) runs the
 * "ways" workload under trial_run()'s oracle over a grid of hostile points: 1 and 2 CPUs,
 * 8- and 16-entry queues (wrap and queue-full on nearly every op), MSI on and off, 1 and 5
 * commands per CMD_SYNC (5 + 1 fills most of a tiny queue), no think time and a little.
 * Plugins with a batching or elision switch run a second time with it flipped. Every check
 * (protocol, exactly_once, in_order, sync_complete, no_deadlock) must pass.
 *
 * Then the mutants (tests/fixtures/plugins: real plugins with one bug compiled in) must each
 * be caught by the check named for their bug.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iommulab/cmdq.h>

#include "engine/native/native.h"
#include "run/trial_run.h"
#include "scenario/scenario.h"

#define CONF_OPS_PER_CPU 3000
#define CONF_NAME_LEN 64
#define CONF_SET_LEN 48

/* One point of the grid. Plain data only: Criterion hands it to a fresh worker process. */
struct conf_point {
	char plugin[CONF_NAME_LEN]; /* descriptor name = file stem after "cmdq-" */
	char set[CONF_SET_LEN];	    /* "" or one "key=value" of the plugin's own table */
	uint32_t cpus;
	uint32_t shift;
	bool msi;
	uint32_t cmds_per_sync;
	uint64_t think_ns;
};

/* The framework's keys for a conformance trial; the device timings are the defaults' order. */
static void conf_cfg(struct scenario_cfg *cfg, uint32_t cpus, uint32_t shift, bool msi,
		     uint32_t cmds_per_sync, uint64_t think_ns)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->scenario.name = "cmdq-conformance";
	cfg->scenario.workload = WORKLOAD_CMDQ;
	cfg->scenario.engine = ENGINE_NATIVE;
	cfg->scenario.cpus = cpus;
	cfg->scenario.repeats = 1;
	cfg->scenario.seed = 1;
	/* meson runs suites side by side: a preempted lock holder is slow, not wrong. */
	cfg->scenario.oversubscribe = OVERSUBSCRIBE_ALLOW;
	cfg->scenario.phases = true;
	cfg->scenario.watchdog_ms = 3000;
	cfg->smmu.queue_shift = shift;
	cfg->smmu.msi = msi;
	cfg->smmu.device = DEVICE_INLINE;
	cfg->smmu.tlbi_va_ns = 40;
	cfg->smmu.tlbi_asid_ns = 200;
	cfg->smmu.cfgi_ns = 100;
	cfg->smmu.atc_inv_ns = 500;
	cfg->smmu.other_ns = 40;
	cfg->smmu.sync_ns = 300;
	cfg->smmu.prod_write_ns = 30;
	cfg->smmu.cons_read_ns = 60;
	cfg->wl_cmdq.cmds_per_sync = cmds_per_sync;
	cfg->wl_cmdq.think_ns = think_ns;
}

/* ---- plugin loading (dlopen: the loader module needs the params module, not yet here) ---- */

struct conf_plugin {
	void *handle;
	const struct lab_plugin *desc;
	void *config;
};

static const char *plugin_dir(void)
{
	const char *dir = getenv("IOMMULAB_PLUGIN_PATH");

	return dir && *dir ? dir : TEST_BUILD_ROOT "/plugins";
}

/* Parse one parameter value of the types the built plugins use into config. */
static bool conf_param_set(const struct lab_param *p, const char *text, void *config)
{
	char *base = config;
	char *end;

	switch (p->type) {
	case LAB_PARAM_BOOL: {
		bool v = !strcmp(text, "true") || !strcmp(text, "yes") || !strcmp(text, "on") ||
			 !strcmp(text, "1");
		memcpy(base + p->offset, &v, sizeof(v));
		return v || !strcmp(text, "false") || !strcmp(text, "no") || !strcmp(text, "off") ||
		       !strcmp(text, "0");
	}
	case LAB_PARAM_UINT: {
		uint64_t v = strtoull(text, &end, 0);
		memcpy(base + p->offset, &v, sizeof(v));
		return !*end;
	}
	case LAB_PARAM_INT: {
		int64_t v = strtoll(text, &end, 0);
		memcpy(base + p->offset, &v, sizeof(v));
		return !*end;
	}
	case LAB_PARAM_DOUBLE: {
		double v = strtod(text, &end);
		memcpy(base + p->offset, &v, sizeof(v));
		return !*end;
	}
	case LAB_PARAM_ENUM:
		for (int i = 0; p->choices && p->choices[i]; i++)
			if (!strcmp(p->choices[i], text)) {
				memcpy(base + p->offset, &i, sizeof(i));
				return true;
			}
		return false;
	default:
		return false;
	}
}

/* Defaults, then "key=value" if set is not empty. */
static void conf_config(struct conf_plugin *cp, const char *set)
{
	const struct lab_plugin *d = cp->desc;
	char key[CONF_SET_LEN];
	const char *eq = strchr(set, '=');
	bool applied = !*set;

	cp->config = calloc(1, d->config_size ? d->config_size : 1);
	cr_assert_not_null(cp->config);
	for (uint32_t i = 0; i < d->n_params; i++)
		cr_assert(conf_param_set(&d->params[i], d->params[i].def, cp->config),
			  "%s: default of %s (\"%s\") not understood", d->name, d->params[i].key,
			  d->params[i].def);
	if (applied)
		return;
	cr_assert_not_null(eq, "bad set \"%s\"", set);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - set), set);
	for (uint32_t i = 0; i < d->n_params; i++)
		if (!strcmp(d->params[i].key, key))
			applied = conf_param_set(&d->params[i], eq + 1, cp->config);
	cr_assert(applied, "%s: cannot set %s", d->name, set);
}

static void conf_open(struct conf_plugin *cp, const char *path, const char *set)
{
	lab_plugin_entry_fn entry;

	memset(cp, 0, sizeof(*cp));
	cp->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(cp->handle, "dlopen %s: %s", path, dlerror());
	*(void **)&entry = dlsym(cp->handle, LAB_PLUGIN_ENTRY_NAME);
	cr_assert_not_null(entry, "%s: no %s", path, LAB_PLUGIN_ENTRY_NAME);
	cp->desc = entry();
	cr_assert_not_null(cp->desc);
	cr_assert_eq(cp->desc->magic, LAB_PLUGIN_MAGIC);
	cr_assert_eq(cp->desc->abi_major, LAB_ABI_MAJOR);
	cr_assert_eq(cp->desc->kind, LAB_KIND_CMDQ);
	conf_config(cp, set);
}

static void conf_close(struct conf_plugin *cp)
{
	free(cp->config);
	if (cp->handle)
		dlclose(cp->handle);
}

/* Run one trial under the oracle; fills o. Fails the test if the trial could not be set up. */
static void conf_trial(const struct conf_plugin *cp, const struct scenario_cfg *cfg,
		       struct trial_result *res, struct oracle_report *o)
{
	struct trial_request req = {
		.cfg = cfg,
		.cmdq = cp->desc,
		.cmdq_config = cp->config,
		.ops_per_cpu = CONF_OPS_PER_CPU,
		.oracle = true,
	};

	memset(res, 0, sizeof(*res));
	cr_assert_eq(trial_run(&req, res, o), 0, "%s: trial not run: %s", cp->desc->name,
		     res->error);
}

static const struct oracle_check *conf_check(const struct oracle_report *o, const char *name)
{
	for (uint32_t i = 0; i < o->n_checks; i++)
		if (!strcmp(o->checks[i].name, name))
			return &o->checks[i];
	cr_assert_fail("the oracle has no check called %s", name);
	return NULL;
}

/* ---- the grid ---------------------------------------------------------------------------- */

/* The built cmdq plugins but null: names into names[], returns the count. */
static size_t conf_list_plugins(char names[][CONF_NAME_LEN], size_t max)
{
	DIR *d = opendir(plugin_dir());
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "cmdq-", 5) || len < 9 ||
		    strcmp(e->d_name + len - 3, ".so") || !strcmp(e->d_name, "cmdq-null.so") ||
		    strstr(e->d_name, ".sim.so") || /* sim builds run under the sim engine only */
		    len - 8 >= CONF_NAME_LEN)
			continue;
		snprintf(names[n++], CONF_NAME_LEN, "%.*s", (int)(len - 8), e->d_name + 5);
	}
	closedir(d);
	return n;
}

/* The second configuration a plugin runs in: its batching / elision switch flipped. */
static const char *conf_variant(const char *dir, const char *name)
{
	static const char *const flips[] = { "leader_batch=4", "elide_back_to_back=false" };
	char path[512];
	struct conf_plugin cp = { 0 };
	const char *found = NULL;
	lab_plugin_entry_fn entry;

	snprintf(path, sizeof(path), "%s/cmdq-%s.so", dir, name);
	cp.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cp.handle)
		return NULL;
	*(void **)&entry = dlsym(cp.handle, LAB_PLUGIN_ENTRY_NAME);
	cp.desc = entry ? entry() : NULL;
	for (size_t f = 0; cp.desc && f < LAB_ARRAY_SIZE(flips) && !found; f++)
		for (uint32_t i = 0; i < cp.desc->n_params; i++) {
			size_t len = strlen(cp.desc->params[i].key);

			if (!strncmp(flips[f], cp.desc->params[i].key, len) && flips[f][len] == '=')
				found = flips[f];
		}
	dlclose(cp.handle);
	return found;
}

#define CONF_MAX_PLUGINS 32
#define CONF_GRID 32 /* 2 cpus x 2 shifts x 2 msi x 2 cmds_per_sync x 2 think */
#define CONF_MAX_POINTS (CONF_MAX_PLUGINS * 2 * CONF_GRID)

static size_t conf_fill(struct conf_point *out, const char *name, const char *set)
{
	static const uint32_t cmds[] = { 1, 5 };
	static const uint64_t thinks[] = { 0, 200 };
	uint32_t max_cpus = native_online_cpus() >= 2 ? 2 : 1;
	size_t k = 0;

	for (uint32_t cpus = 1; cpus <= 2; cpus++)
		for (uint32_t shift = 3; shift <= 4; shift++)
			for (int msi = 1; msi >= 0; msi--)
				for (size_t ci = 0; ci < 2; ci++)
					for (size_t ti = 0; ti < 2; ti++) {
						struct conf_point *p = &out[k++];

						snprintf(p->plugin, sizeof(p->plugin), "%s", name);
						snprintf(p->set, sizeof(p->set), "%s", set);
						p->cpus = cpus < max_cpus ? cpus : max_cpus;
						p->shift = shift;
						p->msi = msi;
						p->cmds_per_sync = cmds[ci];
						p->think_ns = thinks[ti];
					}
	return k;
}

ParameterizedTestParameters(cmdq_conformance, oracle)
{
	static char names[CONF_MAX_PLUGINS][CONF_NAME_LEN];
	static struct conf_point points[CONF_MAX_POINTS];
	size_t n = conf_list_plugins(names, CONF_MAX_PLUGINS), k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *variant = conf_variant(plugin_dir(), names[i]);

		k += conf_fill(&points[k], names[i], "");
		if (variant)
			k += conf_fill(&points[k], names[i], variant);
	}
	return cr_make_param_array(struct conf_point, points, k);
}

ParameterizedTest(struct conf_point *p, cmdq_conformance, oracle, .timeout = 60)
{
	char path[512];
	struct conf_plugin cp;
	struct scenario_cfg cfg;
	struct trial_result res;
	struct oracle_report o;

	snprintf(path, sizeof(path), "%s/cmdq-%s.so", plugin_dir(), p->plugin);
	conf_open(&cp, path, p->set);
	cr_assert_str_eq(cp.desc->name, p->plugin, "descriptor name does not match the file");
	conf_cfg(&cfg, p->cpus, p->shift, p->msi, p->cmds_per_sync, p->think_ns);
	conf_trial(&cp, &cfg, &res, &o);
	for (uint32_t i = 0; i < o.n_checks; i++)
		cr_expect(o.checks[i].pass, "%s%s%s cpus=%u queue_shift=%u msi=%d cmds_per_sync=%u "
			  "think_ns=%lu: %s FAILED: %s", p->plugin, *p->set ? " " : "", p->set,
			  p->cpus, p->shift, p->msi, p->cmds_per_sync, (unsigned long)p->think_ns,
			  o.checks[i].name, o.checks[i].detail);
	cr_assert_geq(o.n_checks, 5, "the oracle ran %u checks", o.n_checks);
	cr_assert_eq(res.status, TRIAL_OK, "%s: trial failed: %s", p->plugin, res.error);
	cr_assert_eq(res.ops, (uint64_t)CONF_OPS_PER_CPU * p->cpus);
	conf_close(&cp);
}

/* ---- the queued hand-off of mcs, forced ---------------------------------------------------- */

static uint64_t conf_counter(const struct trial_result *res, const char *name)
{
	for (uint32_t i = 0; i < res->n_counters; i++)
		if (!strcmp(res->counters[i].name, name))
			return res->counters[i].total;
	cr_assert_fail("no counter called %s", name);
	return 0;
}

/*
 * Two CPUs rarely queue behind each other in mcs, so its leader_batch path (a head reserving
 * for followers and granting their ranges) is run through a fixture variant that always
 * queues and makes heads linger: it must pass the oracle and must really have granted.
 */
Test(cmdq_conformance, mcs_leader_batch_forced, .timeout = 120)
{
	uint64_t granted = 0;
	struct conf_plugin cp;

	conf_open(&cp, TEST_BUILD_ROOT "/tests/fixtures/plugins/cmdq-mcs_stress.so",
		  "leader_batch=4");
	for (uint32_t point = 0; point < 8; point++) {
		uint32_t shift = 3 + (point & 1), cmds = point & 2 ? 5 : 1;
		bool msi = point & 4;
		struct scenario_cfg cfg;
		struct trial_result res;
		struct oracle_report o;

		conf_cfg(&cfg, native_online_cpus() >= 2 ? 2 : 1, shift, msi, cmds, 0);
		conf_trial(&cp, &cfg, &res, &o);
		for (uint32_t i = 0; i < o.n_checks; i++)
			cr_expect(o.checks[i].pass,
				  "mcs_stress queue_shift=%u msi=%d cmds_per_sync=%u: %s FAILED: "
				  "%s", shift, msi, cmds, o.checks[i].name, o.checks[i].detail);
		cr_expect_eq(res.status, TRIAL_OK, "%s", res.error);
		granted += conf_counter(&res, "mcs_granted");
	}
	if (native_online_cpus() >= 2)
		cr_expect_gt(granted, 0, "no head ever reserved for a follower");
	conf_close(&cp);
}

/* ---- mutants ------------------------------------------------------------------------------ */

#define MUTANT_DIR TEST_BUILD_ROOT "/tests/fixtures/plugins"

/* Run mutant name at one point; its trial must fail and `check` must be among the failures. */
static void conf_mutant(const char *name, const char *check, uint32_t cpus, bool msi,
			uint64_t watchdog_ms)
{
	char path[512];
	struct conf_plugin cp;
	struct scenario_cfg cfg;
	struct trial_result res;
	struct oracle_report o;
	const struct oracle_check *k;

	snprintf(path, sizeof(path), "%s/cmdq-%s.so", MUTANT_DIR, name);
	conf_open(&cp, path, "");
	cr_assert_str_eq(cp.desc->name, name);
	conf_cfg(&cfg, cpus, 4, msi, 1, 0);
	cfg.scenario.watchdog_ms = watchdog_ms;
	conf_trial(&cp, &cfg, &res, &o);
	k = conf_check(&o, check);
	cr_expect_not(k->pass, "%s (cpus=%u msi=%d) got past the %s check", name, cpus, msi,
		      check);
	cr_expect_neq(res.status, TRIAL_OK, "%s: trial status OK", name);
	conf_close(&cp);
}

Test(cmdq_mutants, skip_sync_caught_by_sync_complete, .timeout = 60)
{
	conf_mutant("mut_skip_sync", "sync_complete", 1, true, 3000);
	conf_mutant("mut_skip_sync", "sync_complete", 1, false, 3000);
}

Test(cmdq_mutants, publish_early_caught_by_protocol, .timeout = 60)
{
	conf_mutant("mut_publish_early", "protocol", 1, true, 3000);
	conf_mutant("mut_publish_early", "protocol", 2, false, 3000);
}

Test(cmdq_mutants, no_valid_caught_by_no_deadlock, .timeout = 60)
{
	conf_mutant("mut_no_valid", "no_deadlock", 1, true, 300);
	conf_mutant("mut_no_valid", "no_deadlock", 2, false, 300);
}
