/* SPDX-License-Identifier: MIT */
/*
 * test_scenario -- the scenario loader: every message format, all problems reported at once
 * with their lines, plugins through a fake lookup, sweeps, --set precedence, round trip.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params/params.h"
#include "scenario/scenario.h"

#define FIXTURES TEST_SOURCE_ROOT "/tests/fixtures/scenarios/"

/* ---- a fake plugin registry ---------------------------------------------------------- */

struct fake_cfg {
	uint64_t batch;
	int mode;
	char *label;
};

static const char *const fake_modes[] = { "fast", "slow", NULL };

static const struct lab_param fake_params[] = {
	{ "batch", LAB_PARAM_UINT, "8", 1, 64, NULL, "commands per batch",
	  offsetof(struct fake_cfg, batch) },
	{ "mode", LAB_PARAM_ENUM, "fast", 0, 0, fake_modes, "how",
	  offsetof(struct fake_cfg, mode) },
	{ "label", LAB_PARAM_STRING, "fake one", 0, 0, NULL, "a string",
	  offsetof(struct fake_cfg, label) },
};

static const struct lab_plugin fake_cmdq = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "fake",
	.summary = "test",
	.version = "1",
	.params = fake_params,
	.n_params = LAB_ARRAY_SIZE(fake_params),
	.config_size = sizeof(struct fake_cfg),
};

static const struct lab_plugin other_cmdq = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_CMDQ,
	.name = "spinlock",
	.summary = "test",
	.version = "1",
};

static const struct lab_plugin depot_iova = {
	.magic = LAB_PLUGIN_MAGIC,
	.abi_major = LAB_ABI_MAJOR,
	.abi_minor = LAB_ABI_MINOR,
	.struct_size = sizeof(struct lab_plugin),
	.kind = LAB_KIND_IOVA,
	.name = "depot",
	.summary = "test",
	.version = "1",
};

static const struct lab_plugin *const registry[] = { &fake_cmdq, &other_cmdq, &depot_iova };

static const struct lab_plugin *fake_find(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < LAB_ARRAY_SIZE(registry); i++) {
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	}
	return NULL;
}

static const struct lab_plugin *fake_at(void *ctx, size_t i)
{
	(void)ctx;
	return i < LAB_ARRAY_SIZE(registry) ? registry[i] : NULL;
}

static const struct plugin_lookup lookup = { .find = fake_find, .at = fake_at };

/* ---- helpers ----------------------------------------------------------------------------- */

static char tmp_path[64];

static void write_tmp(const char *text)
{
	int fd;
	FILE *f;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/iommulab-scenario-XXXXXX");
	fd = mkstemp(tmp_path);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_tmp(void)
{
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
}

/*
 * Assert the diagnostics exactly, in order. An expected message starting with ':' is
 * prefixed with path (":3: [smmu] ..." means "PATH:3: [smmu] ...").
 */
static void expect_diags(const struct diag_list *d, const char *path, const char *const *exp,
			 size_t n)
{
	char want[512];

	for (size_t i = 0; i < d->n && i < n; i++) {
		snprintf(want, sizeof(want), "%s%s", exp[i][0] == ':' ? path : "", exp[i]);
		cr_expect_str_eq(d->msgs[i], want, "message %zu:\n got  %s\n want %s", i,
				 d->msgs[i], want);
	}
	for (size_t i = n; i < d->n; i++)
		cr_expect_fail("unexpected message: %s", d->msgs[i]);
	cr_assert_eq(d->n, n, "%zu messages, expected %zu", d->n, n);
}

/* Load text (from a temp file) with sets; it must fail with exactly these messages. */
static void expect_load_errors(const char *text, const char *const *sets, size_t n_sets,
			       const char *const *exp, size_t n)
{
	struct diag_list d = { 0 };
	struct scenario *s;

	write_tmp(text);
	s = scenario_load(tmp_path, sets, n_sets, &lookup, &d);
	cr_expect_null(s);
	expect_diags(&d, tmp_path, exp, n);
	scenario_free(s);
	diag_clear(&d);
	remove_tmp();
}

static struct scenario *load_ok(const char *path, const char *const *sets, size_t n_sets)
{
	struct diag_list d = { 0 };
	struct scenario *s = scenario_load(path, sets, n_sets, &lookup, &d);

	for (size_t i = 0; i < d.n; i++)
		cr_log_error("%s", d.msgs[i]);
	cr_assert_not_null(s, "%s did not load", path);
	cr_assert_eq(d.n, 0);
	diag_clear(&d);
	return s;
}

static struct scenario *load_text_ok(const char *text, const char *const *sets, size_t n_sets)
{
	struct scenario *s;

	write_tmp(text);
	s = load_ok(tmp_path, sets, n_sets);
	remove_tmp();
	return s;
}

#define MINIMAL "[scenario]\n[plugins]\ncmdq = fake\n"
#define N(a)	LAB_ARRAY_SIZE(a)

/* ---- the tables ------------------------------------------------------------------------ */

Test(scenario, sections_are_sane_and_defaults_documented, .timeout = 5)
{
	size_t n;
	const struct scenario_section *sec = scenario_sections(&n);
	char err[256];

	cr_assert_geq(n, 3);
	for (size_t i = 0; i < n; i++) {
		cr_assert_not_null(sec[i].help);
		cr_assert_eq(param_table_check(sec[i].params, sec[i].n_params, sec[i].size, err,
					       sizeof(err)),
			     0, "[%s] %s", sec[i].name, err);
		cr_assert_eq(scenario_find_section(sec[i].name), &sec[i]);
	}
	cr_assert_null(scenario_find_section("smmus"));
}

Test(scenario, defaults, .timeout = 5)
{
	struct scenario *s = load_text_ok(MINIMAL, NULL, 0);
	const struct scenario_cfg *c = &s->base;

	cr_assert_str_eq(c->scenario.name, "scenario");
	cr_assert_eq(c->scenario.workload, WORKLOAD_CMDQ);
	cr_assert_eq(c->scenario.engine, ENGINE_NATIVE);
	cr_assert_eq(c->scenario.cpus, 1);
	cr_assert_eq(c->scenario.duration_ms, 500);
	cr_assert_eq(c->scenario.warmup_ms, 100);
	cr_assert_eq(c->scenario.repeats, 1);
	cr_assert_eq(c->scenario.seed, 1);
	cr_assert_eq(c->scenario.oversubscribe, OVERSUBSCRIBE_REFUSE);
	cr_assert(c->scenario.phases);
	cr_assert_eq(c->scenario.watchdog_ms, 3000);
	cr_assert_eq(c->smmu.queue_shift, 16);
	cr_assert(c->smmu.msi);
	cr_assert_eq(c->smmu.device, DEVICE_INLINE);
	cr_assert_eq(c->smmu.tlbi_va_ns, 460);
	cr_assert_eq(c->smmu.tlbi_asid_ns, 920);
	cr_assert_eq(c->smmu.cfgi_ns, 460);
	cr_assert_eq(c->smmu.atc_inv_ns, 2300);
	cr_assert_eq(c->smmu.other_ns, 460);
	cr_assert_eq(c->smmu.sync_ns, 400);
	cr_assert_eq(c->smmu.fetch_ns, 20);
	cr_assert_eq(c->smmu.inv_slots, 8);
	cr_assert_eq(c->smmu.msi_cons_ns, 0);
	cr_assert_eq(c->smmu.prod_write_ns, 400);
	cr_assert_eq(c->smmu.cons_read_ns, 150);
	cr_assert_eq(c->wl_cmdq.cmds_per_sync, 1);
	cr_assert_eq(c->wl_cmdq.think_ns, 1000);
	cr_assert_eq(s->n_cmdq, 1);
	cr_assert_eq(s->cmdq[0].desc, &fake_cmdq);
	cr_assert_eq(((struct fake_cfg *)s->cmdq[0].config)->batch, 8);
	cr_assert_eq(scenario_n_points(s), 1);
	scenario_free(s);
}

/* ---- errors -------------------------------------------------------------------------------- */

Test(scenario, fixture_reports_every_problem_at_its_line, .timeout = 5)
{
	static const char *const exp[] = {
		":3: [smmu] queu_shift: unknown key, did you mean 'queue_shift'?",
		":4: [smmu] queue_shift: 70 not in [3, 20]",
		":7: line longer than 199 characters",
		":8: [smmus]: unknown section, did you mean 'smmu'?",
		": missing section [scenario]",
	};
	struct diag_list d = { 0 };
	const char *path = FIXTURES "bad-mixed.ini";

	cr_assert_null(scenario_load(path, NULL, 0, &lookup, &d));
	expect_diags(&d, path, exp, N(exp));
	diag_clear(&d);
}

Test(scenario, missing_file, .timeout = 5)
{
	struct diag_list d = { 0 };

	cr_assert_null(scenario_load("/nonexistent/x.ini", NULL, 0, &lookup, &d));
	cr_assert_eq(d.n, 1);
	cr_assert_str_eq(d.msgs[0], "/nonexistent/x.ini: cannot open: No such file or directory");
	diag_clear(&d);
}

Test(scenario, value_errors, .timeout = 5)
{
	static const char *const exp[] = {
		":2: [scenario] cpus: 'abc' is not an integer",
		":3: [scenario] workload: 'disk' is not one of: cmdq, iova, dma, micro",
		":4: [scenario] phases: 'maybe' is not one of: true, false",
		":5: [scenario] seed: '-1' is negative",
		":7: [workload.cmdq] cmds_per_sync: 257 not in [0, 256]",
	};

	expect_load_errors("[scenario]\ncpus = abc\nworkload = disk\nphases = maybe\nseed = -1\n"
			   "[workload.cmdq]\ncmds_per_sync = 257\n[plugins]\ncmdq = fake\n",
			   NULL, 0, exp, N(exp));
}

Test(scenario, syntax_problems, .timeout = 5)
{
	static const char *const exp[] = {
		":1: key outside any section",
		":4: [scenario] cpus: duplicate key (first on line 3)",
		":5: expected 'key = value'",
		":6: expected ']' to close the section name", /* and line 7 is skipped with it */
		":10: [smmu] msi: indented line: continuation lines are not supported",
		":11: [smmu]: missing key before '='",
	};

	expect_load_errors("cpus = 2\n[scenario]\ncpus = 2\ncpus = 3\njust words\n[smmu\n"
			   "queue_shift = 5\n[smmu]\nmsi = true\n  false\n= 3\n"
			   "[plugins]\ncmdq = fake\n",
			   NULL, 0, exp, N(exp));
}

Test(scenario, plugin_errors, .timeout = 5)
{
	static const char *const exp[] = {
		":3: [plugins] cmdq: unknown cmdq plugin 'faek', did you mean 'fake'?",
		":3: [plugins] cmdq: plugin 'depot' is of kind iova, not cmdq",
		":3: [plugins] cmdq: 'spinlock' listed twice",
		":4: [plugins] iova: unknown iova plugin 'nothing'",
		":5: [plugins] cmd: unknown key, did you mean 'cmdq'?",
		":6: [plugin.absent]: plugin 'absent' is not listed in [plugins]",
		":9: [plugin.spinlock] batch: unknown key",
	};

	expect_load_errors("[scenario]\n[plugins]\ncmdq = faek, depot, spinlock, spinlock\n"
			   "iova = nothing\ncmd = x\n[plugin.absent]\nbatch = 3\n"
			   "[plugin.spinlock]\nbatch = 3\n[plugin.faek]\nbatch = 3\n",
			   NULL, 0, exp, N(exp));
}

Test(scenario, plugin_key_errors, .timeout = 5)
{
	static const char *const exp[] = {
		":5: [plugin.fake] bacth: unknown key, did you mean 'batch'?",
		":6: [plugin.fake] mode: 'medium' is not one of: fast, slow",
		":7: [plugin.fake] batch: 65 not in [1, 64]",
	};

	expect_load_errors(MINIMAL "[plugin.fake]\nbacth = 3\nmode = medium\nbatch = 65\n", NULL, 0,
			   exp, N(exp));
}

Test(scenario, missing_plugins_for_the_workload, .timeout = 5)
{
	static const char *const cmdq[] = { ": missing [plugins] cmdq" };
	static const char *const dma[] = { ": missing [plugins] iova" };
	static const char *const iova[] = { ": missing [plugins] iova" };

	expect_load_errors("[scenario]\nworkload = cmdq\n", NULL, 0, cmdq, N(cmdq));
	expect_load_errors("[scenario]\nworkload = dma\n[plugins]\ncmdq = fake\n", NULL, 0, dma,
			   N(dma));
	expect_load_errors("[scenario]\nworkload = iova\n[plugins]\niova =\n", NULL, 0, iova,
			   N(iova));
	/* A list refused for an empty item was given: it is not also missing. */
	static const char *const empty_item[] = { ":4: [plugins] cmdq: empty item in list" };
	expect_load_errors("[scenario]\nworkload = cmdq\n[plugins]\ncmdq = fake,,\n", NULL, 0,
			   empty_item, N(empty_item));
}

Test(scenario, sweep_errors, .timeout = 5)
{
	static const char *const exp[] = {
		":3: [sweep] workload: cannot be swept (name and workload are fixed for a "
		"scenario)",
		":4: [sweep] smmu.queu_shift: unknown key, did you mean 'smmu.queue_shift'?",
		":5: [sweep] smmu.queue_shift: 70 not in [3, 20]",
		":6: [sweep] smmus.msi: unknown section 'smmus', did you mean 'smmu'?",
		":7: [sweep] plugin.fake.bacth: unknown key, did you mean 'plugin.fake.batch'?",
		":8: [sweep] plugin.none.batch: plugin 'none' is not listed in [plugins]",
		":9: [sweep] cpus: empty item in list",
		":10: [sweep] repeats: no values to sweep",
		":12: [sweep] scenario.seed: swept twice (first on line 11)",
		":13: [sweep] cpu: unknown key, did you mean 'cpus'?",
		":14: [sweep] plugins.cmdq: [plugins] cannot be swept",
	};

	expect_load_errors(
		"[scenario]\n[sweep]\nworkload = cmdq, iova\nsmmu.queu_shift = 4\n"
		"smmu.queue_shift = 4, 70\nsmmus.msi = true\nplugin.fake.bacth = 1\n"
		"plugin.none.batch = 1\ncpus = 1,,2\nrepeats =\nseed = 1, 2\n"
		"scenario.seed = 3\ncpu = 1\nplugins.cmdq = fake\n[plugins]\ncmdq = fake\n",
		NULL, 0, exp, N(exp));
}

Test(scenario, set_errors, .timeout = 5)
{
	static const char *const sets[] = {
		"smmu.queue_shift=70", "smmu.queu_shift=3",   "smmus.msi=true",
		"plugin.none.batch=2", "plugin.fake.batch=0", "nonsense",
		"sweep.cpus=1,5000",
	};
	static const char *const exp[] = {
		"--set smmu.queue_shift=70: [smmu] queue_shift: 70 not in [3, 20]",
		"--set smmu.queu_shift=3: [smmu] queu_shift: unknown key, did you mean "
		"'queue_shift'?",
		"--set smmus.msi=true: [smmus]: unknown section, did you mean 'smmu'?",
		"--set plugin.none.batch=2: [plugin.none]: plugin 'none' is not listed in "
		"[plugins]",
		"--set plugin.fake.batch=0: [plugin.fake] batch: 0 not in [1, 64]",
		"--set nonsense: expected section.key=value",
		"--set sweep.cpus=1,5000: [sweep] cpus: 5000 not in [1, 4096]",
	};

	expect_load_errors(MINIMAL, sets, N(sets), exp, N(exp));
}

/* ---- good scenarios ----------------------------------------------------------------------- */

static uint64_t fake_batch(const struct scenario_point *p, size_t k)
{
	return ((const struct fake_cfg *)p->plugin_cfgs[k])->batch;
}

Test(scenario, good_fixture_sweeps_in_order, .timeout = 5)
{
	struct scenario *s = load_ok(FIXTURES "good-sweep.ini", NULL, 0);
	struct scenario_point p;
	size_t i = 0;

	cr_assert_str_eq(s->base.scenario.name, "good");
	cr_assert_eq(s->base.scenario.cpus, 3, "'cpus = 3' with no inline comment");
	cr_assert_eq(s->base.scenario.workload, WORKLOAD_CMDQ, "inline comment stripped");
	cr_assert_eq(s->base.scenario.duration_ms, 2000);
	cr_assert_eq(s->base.scenario.seed, 16);
	cr_assert_not(s->base.smmu.msi);
	cr_assert_eq(s->base.wl_cmdq.think_ns, 0);
	cr_assert_eq(((struct fake_cfg *)s->cmdq[0].config)->batch, 32);
	cr_assert_eq(((struct fake_cfg *)s->cmdq[0].config)->mode, 1);
	cr_assert_eq(s->n_axes, 3);
	cr_assert_eq(s->axes[0].n_values, 2, "'cpus = 1, 2   ; comment' is two values");
	cr_assert_str_eq(s->axes[0].values[1], "2");
	cr_assert_eq(scenario_n_points(s), 8);
	for (uint64_t cpus = 1; cpus <= 2; cpus++) {
		for (uint64_t shift = 8; shift <= 12; shift += 4) {
			for (uint64_t batch = 4; batch <= 16; batch *= 4, i++) {
				cr_assert_eq(scenario_point(s, i, &p), 0);
				cr_assert_eq(p.cfg.scenario.cpus, cpus, "point %zu", i);
				cr_assert_eq(p.cfg.smmu.queue_shift, shift, "point %zu", i);
				cr_assert_eq(p.n_plugin_cfgs, 1);
				cr_assert_eq(fake_batch(&p, 0), batch, "point %zu", i);
				cr_assert_eq(((struct fake_cfg *)p.plugin_cfgs[0])->mode, 1);
				cr_assert_str_eq(p.cfg.scenario.name, "good");
				cr_assert_neq(p.cfg.scenario.name, s->base.scenario.name);
				cr_assert_str_eq(p.swept_values[2], batch == 4 ? "4" : "16");
				scenario_point_free(s, &p);
			}
		}
	}
	cr_assert_eq(scenario_point(s, 8, &p), -EINVAL);
	scenario_free(s);
}

Test(scenario, set_overrides_file_and_replaces_sweep, .timeout = 5)
{
	static const char *const sets[] = {
		"cpus=4",	       /* swept in the file: the axis becomes [4] */
		"smmu.sync_ns = 1k",   /* spaces around '=' are fine */
		"smmu.sync_ns=500",    /* later wins */
		"plugin.fake.batch=2", /* base; the file sweeps batch, so the axis becomes [2] */
		"workload.cmdq.think_ns=7",
		"sweep.smmu.queue_shift=3, 4, 5",
		"plugin.fake.label=set here",
	};
	struct scenario *s = load_ok(FIXTURES "good-sweep.ini", sets, N(sets));
	struct scenario_point p;

	cr_assert_eq(s->base.scenario.cpus, 4);
	cr_assert_eq(s->base.smmu.sync_ns, 500);
	cr_assert_eq(s->base.wl_cmdq.think_ns, 7);
	cr_assert_eq(((struct fake_cfg *)s->cmdq[0].config)->batch, 2);
	cr_assert_str_eq(((struct fake_cfg *)s->cmdq[0].config)->label, "set here");
	cr_assert_eq(s->n_axes, 3);
	cr_assert_eq(s->axes[0].n_values, 1);
	cr_assert_eq(scenario_n_points(s), 3);
	cr_assert_eq(scenario_point(s, 2, &p), 0);
	cr_assert_eq(p.cfg.scenario.cpus, 4);
	cr_assert_eq(p.cfg.smmu.queue_shift, 5);
	cr_assert_eq(fake_batch(&p, 0), 2);
	cr_assert_str_eq(((struct fake_cfg *)p.plugin_cfgs[0])->label, "set here");
	scenario_point_free(s, &p);
	scenario_free(s);
}

Test(scenario, set_replaces_plugin_list, .timeout = 5)
{
	static const char *const sets[] = { "plugins.cmdq=spinlock, fake", "plugins.iova=depot" };
	struct scenario *s = load_text_ok(MINIMAL, sets, N(sets));
	struct scenario_point p;

	cr_assert_eq(s->n_cmdq, 2);
	cr_assert_eq(s->cmdq[0].desc, &other_cmdq);
	cr_assert_eq(s->cmdq[1].desc, &fake_cmdq);
	cr_assert_eq(s->n_iova, 1);
	cr_assert_eq(scenario_point(s, 0, &p), 0);
	cr_assert_eq(p.n_plugin_cfgs, 3, "cmdq ones, then iova");
	cr_assert_eq(fake_batch(&p, 1), 8);
	scenario_point_free(s, &p);
	scenario_free(s);
}

/* Every key of every framework section and every plugin key, as text. */
static void expect_same_point(const struct scenario *a, const struct scenario_point *pa,
			      const struct scenario *b, const struct scenario_point *pb)
{
	size_t n;
	const struct scenario_section *sec = scenario_sections(&n);
	char x[256], y[256];

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < sec[i].n_params; j++) {
			const struct lab_param *p = &sec[i].params[j];

			cr_assert_eq(param_format(p, (const char *)&pa->cfg + sec[i].offset, x,
						  sizeof(x)),
				     0);
			cr_assert_eq(param_format(p, (const char *)&pb->cfg + sec[i].offset, y,
						  sizeof(y)),
				     0);
			cr_assert_str_eq(x, y, "[%s] %s", sec[i].name, p->key);
		}
	}
	cr_assert_eq(pa->n_plugin_cfgs, pb->n_plugin_cfgs);
	for (size_t k = 0; k < pa->n_plugin_cfgs; k++) {
		const struct lab_plugin *d =
			k < a->n_cmdq ? a->cmdq[k].desc : a->iova[k - a->n_cmdq].desc;

		cr_assert_eq(d, k < b->n_cmdq ? b->cmdq[k].desc : b->iova[k - b->n_cmdq].desc);
		for (size_t j = 0; j < d->n_params; j++) {
			cr_assert_eq(param_format(&d->params[j], pa->plugin_cfgs[k], x, sizeof(x)),
				     0);
			cr_assert_eq(param_format(&d->params[j], pb->plugin_cfgs[k], y, sizeof(y)),
				     0);
			cr_assert_str_eq(x, y, "plugin %s %s", d->name, d->params[j].key);
		}
	}
}

Test(scenario, write_resolved_round_trips, .timeout = 5)
{
	static const char *const sets[] = { "engine=sim", "plugins.iova=depot",
					    "plugin.fake.label=a;b" };
	struct scenario *a = load_ok(FIXTURES "good-sweep.ini", sets, N(sets)), *b;
	char path[] = "/tmp/iommulab-resolved-XXXXXX";
	struct scenario_point pa, pb;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(scenario_write_resolved(a, path), 0);
	b = load_ok(path, NULL, 0);
	unlink(path);
	cr_assert_eq(b->base.scenario.engine, ENGINE_SIM);
	cr_assert_eq(scenario_n_points(a), scenario_n_points(b));
	cr_assert_eq(a->n_axes, b->n_axes);
	for (size_t i = 0; i < scenario_n_points(a); i++) {
		cr_assert_eq(scenario_point(a, i, &pa), 0);
		cr_assert_eq(scenario_point(b, i, &pb), 0);
		expect_same_point(a, &pa, b, &pb);
		for (size_t x = 0; x < a->n_axes; x++)
			cr_assert_str_eq(pa.swept_values[x], pb.swept_values[x]);
		scenario_point_free(a, &pa);
		scenario_point_free(b, &pb);
	}
	scenario_free(a);
	scenario_free(b);
}

Test(scenario, write_resolved_refuses_what_cannot_round_trip, .timeout = 5)
{
	static const char *const sets[] = { "machine.topology=/a ; b" };
	struct scenario *s = load_text_ok(MINIMAL, NULL, 0);
	char path[] = "/tmp/iommulab-resolved-XXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	free(s->base.machine.topology);
	s->base.machine.topology = strdup("/a ; b"); /* inih would read "/a" */
	cr_assert_eq(scenario_write_resolved(s, path), -EINVAL);
	scenario_free(s);
	s = load_text_ok(MINIMAL, sets, N(sets));
	cr_assert_str_eq(s->base.machine.topology, "/a ; b", "--set values are not INI lines");
	scenario_free(s);
	unlink(path);
}

Test(scenario, suffixes_and_line_limit_edge, .timeout = 5)
{
	char text[512];
	struct scenario *s;
	static const char *const exp[] = { ":2: line longer than 199 characters" };

	/* exactly 199 characters is fine; 200 is not (inih would cut it). A path is the long
	 * value users write (a name is at most 64 characters). */
	snprintf(text, sizeof(text), "[machine]\ntopology = /%0187d\n" MINIMAL, 7);
	cr_assert_eq(strlen(strchr(text, '\n') + 1) - strlen(strchr(strchr(text, '\n') + 1, '\n')),
		     199);
	s = load_text_ok(text, NULL, 0);
	cr_assert_eq(strlen(s->base.machine.topology), 188);
	scenario_free(s);
	snprintf(text, sizeof(text), "[machine]\ntopology = /%0188d\n" MINIMAL, 7);
	expect_load_errors(text, NULL, 0, exp, N(exp));
}

/* The name names the results folder: one path component, nothing that climbs or nests. */
#define FOLDER " (it names the results folder)"
#define CHARS  " (letters, digits and . _ + -: it names the results folder)"
Test(scenario, a_name_must_be_one_safe_path_component, .timeout = 5)
{
	static const struct {
		const char *set, *msg;
	} bad[] = {
		{ "name=../../evil", "'../../evil': '/' cannot be in a name" CHARS },
		{ "name=a/b", "'a/b': '/' cannot be in a name" CHARS },
		{ "name=a b", "'a b': ' ' cannot be in a name" CHARS },
		{ "name=.hidden", "'.hidden' cannot start with '.'" FOLDER },
		{ "name=-x", "'-x' cannot start with '-'" FOLDER },
		{ "name=", "0 characters: a name has 1 to 64" FOLDER },
		{ "name=12345678901234567890123456789012345678901234567890123456789012345",
		  "65 characters: a name has 1 to 64" FOLDER },
	};

	for (size_t i = 0; i < N(bad); i++) {
		const char *sets[] = { bad[i].set };
		char want[200];
		const char *exp[] = { want };

		snprintf(want, sizeof(want), "--set %s: [scenario] name: %s", bad[i].set,
			 bad[i].msg);
		expect_load_errors(MINIMAL, sets, 1, exp, 1);
	}
	const char *ok[] = { "name=cmdq-ways_2.1+x" };
	scenario_free(load_text_ok(MINIMAL, ok, 1));
}

Test(scenario, messages_come_in_line_order_whatever_step_found_them, .timeout = 5)
{
	static const char *const exp[] = {
		":2: [sweep] cpus: 0 not in [1, 4096]",	     /* found third: sweeps need the rest */
		":4: [plugin.fake] batch: 0 not in [1, 64]", /* found second */
		":6: [smmu] msi: 'perhaps' is not one of: true, false", /* found first */
		"--set repeats=0: [scenario] repeats: 0 not in [1, 1000]",
	};
	static const char *const sets[] = { "repeats=0" };

	expect_load_errors("[sweep]\ncpus = 0, 1\n[plugin.fake]\nbatch = 0\n[smmu]\nmsi = perhaps\n"
			   "[scenario]\n[plugins]\ncmdq = fake\n",
			   sets, N(sets), exp, N(exp));
}

/* A registry where a cmdq and an iova plugin share a name, told apart by find_kind. */
static const struct lab_plugin null_cmdq = { .kind = LAB_KIND_CMDQ, .name = "null" };
static const struct lab_plugin null_iova = { .kind = LAB_KIND_IOVA, .name = "null" };

static const struct lab_plugin *null_find(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "null") ? NULL : &null_iova;
}

static const struct lab_plugin *null_find_kind(void *ctx, uint32_t kind, const char *name)
{
	(void)ctx;
	if (strcmp(name, "null"))
		return NULL;
	return kind == LAB_KIND_CMDQ ? &null_cmdq : &null_iova;
}

Test(scenario, find_kind_tells_same_named_plugins_apart, .timeout = 5)
{
	static const struct plugin_lookup both = { .find = null_find, .find_kind = null_find_kind };
	struct diag_list d = { 0 };
	struct scenario *s;

	write_tmp("[scenario]\nworkload = dma\n[plugins]\ncmdq = null\niova = null\n");
	s = scenario_load(tmp_path, NULL, 0, &both, &d);
	remove_tmp();
	cr_assert_not_null(s, "%s", d.n ? d.msgs[0] : "");
	cr_assert_eq(s->cmdq[0].desc, &null_cmdq);
	cr_assert_eq(s->iova[0].desc, &null_iova);
	scenario_free(s);
	diag_clear(&d);
}

/* engine = sim's CPU limit is checked when the scenario loads, at every point of the sweep. */
Test(scenario, sim_cpus_are_refused_at_load, .timeout = 5)
{
	static const char *const file[] = {
		":3: [scenario] cpus: engine = sim runs 1 to 1024 CPUs, not 2048",
	};
	static const char *const swept[] = {
		":6: [scenario] cpus: engine = sim runs 1 to 1024 CPUs, not 1025",
	};
	static const char *const set_arg[] = { "sweep.engine=native, sim" };
	static const char *const by_set[] = {
		":3: [scenario] cpus: engine = sim runs 1 to 1024 CPUs, not 4096",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nengine = sim\ncpus = 2048\n[plugins]\ncmdq = fake\n", NULL,
			   0, file, N(file));
	expect_load_errors("[scenario]\nengine = sim\n[plugins]\ncmdq = fake\n[sweep]\n"
			   "cpus = 1, 1024, 1025\n",
			   NULL, 0, swept, N(swept));
	expect_load_errors("[scenario]\nengine = native\ncpus = 4096\n[plugins]\ncmdq = fake\n",
			   set_arg, 1, by_set, N(by_set));
	write_tmp("[scenario]\nengine = native\ncpus = 4096\n[plugins]\ncmdq = fake\n");
	s = load_ok(tmp_path, NULL, 0);
	scenario_free(s);
	remove_tmp();
	write_tmp("[scenario]\nengine = sim\ncpus = 1024\n[plugins]\ncmdq = fake\n");
	s = load_ok(tmp_path, NULL, 0);
	scenario_free(s);
	remove_tmp();
}

/*
 * smt_ns finds SMT pairs in the topology and smt_share slows the pairs it finds: each one
 * alone (or smt_ns without a topology) would silently do nothing, so each is refused.
 */
Test(scenario, smt_keys_need_a_topology_and_each_other, .timeout = 5)
{
	static const char *const no_topology[] = {
		":5: [machine] smt_ns: finds SMT pairs in the core-to-core table, and there is "
		"none: set [machine] topology (configs/topologies/), or drop smt_ns",
	};
	static const char *const no_ns[] = {
		":5: [machine] smt_share: slows the SMT threads smt_ns finds, and smt_ns = 0 finds "
		"none: set smt_ns (e.g. 20 for the mctop tables' 10-13 ns pairs), or drop "
		"smt_share",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nworkload = micro\nengine = sim\n[machine]\nsmt_ns = 20\n"
			   "preset = none\n",
			   NULL, 0, no_topology, N(no_topology));
	expect_load_errors(
		"[scenario]\nworkload = micro\nengine = sim\n[machine]\nsmt_share = 0.5\n", NULL, 0,
		no_ns, N(no_ns));
	/* The graviton2 preset names its table: smt_ns alone is accepted (it finds no pair). */
	write_tmp("[scenario]\nworkload = micro\nengine = sim\n[machine]\nsmt_ns = 20\n"
		  "smt_share = 0.5\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(s->base.machine.smt_share, 0.5);
	scenario_free(s);
	remove_tmp();
}

/* socket_ns finds sockets in the topology: without one it would do nothing, so it is refused. */
Test(scenario, socket_ns_needs_a_topology, .timeout = 5)
{
	static const char *const no_topology[] = {
		":5: [machine] socket_ns: finds sockets in the core-to-core table, and there is "
		"none: set [machine] topology (configs/topologies/), or drop socket_ns",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nworkload = micro\nengine = sim\n[machine]\n"
			   "socket_ns = 100\npreset = none\n",
			   NULL, 0, no_topology, N(no_topology));
	write_tmp("[scenario]\nworkload = micro\nengine = sim\n[machine]\nsocket_ns = 100\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(s->base.machine.socket_ns, 100, "the graviton2 preset names its table");
	scenario_free(s);
	remove_tmp();
}

/* read_occupancy: a fraction of a transfer, refused outside [0, 1] (swept too); 0, the
 * default, is occupancy's value. */
Test(scenario, read_occupancy_is_a_fraction_and_defaults_to_occupancy, .timeout = 5)
{
	static const char *const bad[] = {
		":5: [machine] read_occupancy: -0.5 not in [0, 1]",
	};
	static const char *const bad_swept[] = {
		":5: [sweep] machine.read_occupancy: -0.5 not in [0, 1]",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nworkload = micro\nengine = sim\n[machine]\n"
			   "read_occupancy = -0.5\n",
			   NULL, 0, bad, N(bad));
	expect_load_errors("[scenario]\nworkload = micro\nengine = sim\n[sweep]\n"
			   "machine.read_occupancy = 0.1, -0.5\n",
			   NULL, 0, bad_swept, N(bad_swept));
	write_tmp("[scenario]\nworkload = micro\nengine = sim\n[machine]\npreset = none\n"
		  "occupancy = 0.4\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(machine_read_occupancy(&s->base.machine), 0.4, "unset: occupancy's value");
	scenario_free(s);
	remove_tmp();
	write_tmp("[scenario]\nworkload = micro\nengine = sim\n[machine]\npreset = none\n"
		  "read_occupancy = 0.1\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(machine_read_occupancy(&s->base.machine), 0.1);
	cr_assert_eq(s->base.machine.occupancy, 1, "occupancy keeps its own value");
	scenario_free(s);
	remove_tmp();
}

/* The dma workload's jobs move with its own migrate_ns: [workload.iova]'s would be nothing. */
Test(scenario, dma_jobs_move_with_their_own_migrate_ns, .timeout = 5)
{
	static const char *const iova_key[] = {
		":7: [workload.iova] migrate_ns: moves the iova workload's jobs, and this scenario "
		"runs workload = dma: set [workload.dma] migrate_ns instead",
	};
	static const char *const swept[] = {
		":7: [workload.iova] migrate_ns: moves the iova workload's jobs, and this scenario "
		"runs workload = dma: set [workload.dma] migrate_ns instead",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nworkload = dma\n[plugins]\ncmdq = fake\niova = depot\n"
			   "[workload.iova]\nmigrate_ns = 1000\n",
			   NULL, 0, iova_key, N(iova_key));
	expect_load_errors(
		"[scenario]\nworkload = dma\n[plugins]\ncmdq = fake\niova = depot\n[sweep]\n"
		"workload.iova.migrate_ns = 0, 1000\n",
		NULL, 0, swept, N(swept));
	write_tmp("[scenario]\nworkload = dma\n[plugins]\ncmdq = fake\niova = depot\n"
		  "[workload.dma]\npattern = irq\n"
		  "migrate_ns = 1000\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(s->base.wl_dma.migrate_ns, 1000);
	scenario_free(s);
	remove_tmp();
	write_tmp("[scenario]\nworkload = iova\n[plugins]\niova = depot\n[workload.iova]\n"
		  "migrate_ns = 1000\n");
	s = load_ok(tmp_path, NULL, 0);
	cr_assert_eq(s->base.wl_iova.migrate_ns, 1000, "the iova workload's own");
	scenario_free(s);
	remove_tmp();
}

/* critical_ns is work done holding a lock: refused with an op that takes none, swept or not. */
Test(scenario, micro_critical_ns_needs_a_lock_op, .timeout = 5)
{
	static const char *const base[] = {
		":4: [workload.micro] critical_ns: is work done holding a lock, and op = cas_add "
		"takes none: drop critical_ns or run a lock op (ticket_lock, tas_lock, ttas_lock, "
		"mcs_lock, clh_lock, qspin_lock)",
	};
	static const char *const swept[] = {
		":4: [workload.micro] critical_ns: is work done holding a lock, and op = "
		"atomic_add "
		"takes none: drop critical_ns or run a lock op (ticket_lock, tas_lock, ttas_lock, "
		"mcs_lock, clh_lock, qspin_lock)",
	};
	struct scenario *s;

	expect_load_errors("[scenario]\nworkload = micro\n[workload.micro]\ncritical_ns = 100\n"
			   "op = cas_add\n",
			   NULL, 0, base, N(base));
	expect_load_errors("[scenario]\nworkload = micro\n[workload.micro]\ncritical_ns = 100\n"
			   "[sweep]\nworkload.micro.op = mcs_lock, atomic_add\n",
			   NULL, 0, swept, N(swept));
	write_tmp("[scenario]\nworkload = micro\n[workload.micro]\ncritical_ns = 100\n"
		  "[sweep]\nworkload.micro.op = mcs_lock, ticket_lock\n");
	s = load_ok(tmp_path, NULL, 0);
	scenario_free(s);
	remove_tmp();
}
