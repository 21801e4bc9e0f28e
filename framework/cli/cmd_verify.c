/* SPDX-License-Identifier: MIT */
/*
 * iommulab verify -- the conformance checks on one plugin (a dropped-in .so or a name).
 * cmdq: the oracle over the grid of framework/verify/cmdq_check (tiny queues to force wrap
 * and queue-full, MSI on and off, one and several commands per sync, 1 and 2 CPUs), the grid
 * the conformance suite runs.
 * iova: every check of framework/verify/iova_check (the conformance suite's own code).
 * Prints pass/fail per check with the first counterexample; exit 0 only if every check passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "params/params.h"
#include "run/trial_run.h"
#include "scenario/scenario.h"
#include "verify/cmdq_check.h"
#include "verify/iova_check.h"

struct verdict {
	const char *name;
	bool pass;
	size_t runs;
	char detail[ORACLE_DETAIL_LEN + 128];
};

/* "section.key=value" onto cfg, or "plugin.NAME.key=value" / "NAME.key=value" onto pcfg. */
static int apply_set(const char *set, struct scenario_cfg *cfg, const struct lab_plugin *d,
		     void *pcfg, char *err, size_t len)
{
	char buf[512], why[256];
	size_t n;
	const struct scenario_section *sec = scenario_sections(&n);

	snprintf(buf, sizeof(buf), "%s", set);
	char *eq = strchr(buf, '='), *dot = strrchr(buf, '.');
	if (!eq || !dot || dot > eq) {
		snprintf(err, len, "--set %s: expected SECTION.KEY=VALUE", set);
		return -1;
	}
	*eq = *dot = '\0';
	const char *section = buf, *key = dot + 1, *value = eq + 1;
	if (!strncmp(section, "plugin.", 7))
		section += 7;
	if (!strcmp(section, d->name)) {
		const struct lab_param *p = param_find(d->params, d->n_params, key);
		if (!p || param_parse(p, value, pcfg, why, sizeof(why))) {
			snprintf(err, len, "--set %s: %s", set, p ? why : "unknown plugin key");
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(sec[i].name, section))
			continue;
		const struct lab_param *p = param_find(sec[i].params, sec[i].n_params, key);
		if (!p || param_parse(p, value, (char *)cfg + sec[i].offset, why, sizeof(why))) {
			snprintf(err, len, "--set %s: %s", set, p ? why : "unknown key");
			return -1;
		}
		return 0;
	}
	snprintf(err, len, "--set %s: unknown section '%s'", set, section);
	return -1;
}

static void record(struct verdict *v, size_t nv, const struct oracle_report *o, const char *where)
{
	for (uint32_t i = 0; i < o->n_checks; i++)
		for (size_t k = 0; k < nv; k++) {
			if (strcmp(v[k].name, o->checks[i].name))
				continue;
			v[k].runs++;
			if (!o->checks[i].pass && v[k].pass) {
				v[k].pass = false;
				snprintf(v[k].detail, sizeof(v[k].detail), "[%s] %s", where,
					 o->checks[i].detail);
			}
		}
}

/* Every iova check on d with config pcfg; EXIT_OK only if none failed (skips are fine). */
static int verify_iova(const struct loaded_plugin *lp, const void *pcfg)
{
	const struct lab_plugin *d = lp->desc;
	const struct iova_check *chk;
	size_t n, failed = 0, skipped = 0;

	printf("verify %s (%s %s, %s)\n", lp->path, d->name, d->version, d->summary);
	chk = iova_checks(&n);
	for (size_t i = 0; i < n; i++) {
		struct iova_check_result res;

		iova_check_run(&chk[i], d, pcfg, &res);
		printf("  %-28s %s  (%s)\n", chk[i].name, iova_check_verdict_name(res.verdict),
		       chk[i].summary);
		if (res.verdict == IOVA_CHECK_FAIL) {
			printf("      first counterexample: %s\n", res.detail);
			failed++;
		} else if (res.verdict == IOVA_CHECK_SKIP) {
			printf("      skipped: %s\n", res.detail);
			skipped++;
		}
	}
	if (failed)
		printf("%zu of %zu checks FAILED\n", failed, n);
	else
		printf("all checks passed (%zu skipped as not applicable)\n", skipped);
	return failed ? EXIT_TRIALS_FAILED : EXIT_OK;
}

int cmd_verify(int argc, char **argv, struct cli_common *c)
{
	struct plugin_registry reg = {0};
	struct diag_list diags = {0};
	const struct loaded_plugin *lp = NULL;
	struct verdict v[ORACLE_MAX_CHECKS] = {0};
	const char *target = NULL;
	char err[512];
	void *pcfg = NULL;
	struct scenario_cfg base = {0};
	int status = EXIT_USAGE;
	int set_from = argc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			if (set_from == argc)
				set_from = i;
			i++;
		} else if (!target && argv[i][0] != '-') {
			target = argv[i];
		} else {
			fprintf(
			    stderr,
			    "usage: iommulab verify PLUGIN.so|NAME [--set SECTION.KEY=VALUE]...\n");
			return EXIT_USAGE;
		}
	}
	if (!target) {
		fprintf(stderr,
			"usage: iommulab verify PLUGIN.so|NAME [--set SECTION.KEY=VALUE]...\n");
		return EXIT_USAGE;
	}
	if (strstr(target, ".so")) {
		if (registry_add_file(&reg, target, &diags)) {
			cli_print_diags(&diags, "iommulab verify: ");
			goto out;
		}
		lp = &reg.v[0];
	} else {
		const char *why;
		cli_load_plugins(c, &reg, &diags);
		lp = registry_find(&reg, target, &why);
		if (!lp) {
			fprintf(stderr, "iommulab verify: no plugin '%s'%s%s\n", target,
				why ? ": " : "", why ? why : "");
			goto out;
		}
	}
	const struct lab_plugin *d = lp->desc;
	if (d->kind != LAB_KIND_CMDQ && d->kind != LAB_KIND_IOVA) {
		fprintf(stderr,
			"iommulab verify: %s is a plugin of kind %s; verify checks cmdq and "
			"iova plugins\n",
			d->name, plugin_kind_name(d->kind));
		goto out;
	}
	pcfg = calloc(1, d->config_size ? d->config_size : 1);
	if (!pcfg || cmdq_check_base(&base, err, sizeof(err)) ||
	    param_set_defaults(d->params, d->n_params, pcfg, err, sizeof(err))) {
		fprintf(stderr, "iommulab verify: %s\n", err);
		goto out;
	}
	for (int i = set_from; i < argc; i += 2)
		if (apply_set(argv[i + 1], &base, d, pcfg, err, sizeof(err))) {
			fprintf(stderr, "iommulab verify: %s\n", err);
			goto out;
		}

	if (d->kind == LAB_KIND_IOVA) {
		status = verify_iova(lp, pcfg);
		goto out;
	}
	printf("verify %s (%s %s, %s)\n", lp->path, d->name, d->version, d->summary);
	size_t n_points, nv;
	const struct cmdq_check_point *grid = cmdq_check_grid(&n_points);
	const char *const *names = cmdq_check_names(&nv);
	for (size_t k = 0; k < nv; k++)
		v[k] = (struct verdict){.name = names[k], .pass = true};
	for (size_t i = 0; i < n_points; i++) {
		struct scenario_cfg cfg = base;
		struct trial_result res = {0};
		struct oracle_report o;
		char where[160];

		cmdq_check_apply(&grid[i], &cfg);
		cmdq_check_describe(&cfg, where, sizeof(where));
		struct trial_request req = {.cfg = &cfg,
					    .cmdq = d,
					    .cmdq_config = pcfg,
					    .ops_per_cpu = CMDQ_CHECK_OPS_PER_CPU,
					    .oracle = true};
		if (trial_run(&req, &res, &o)) {
			fprintf(stderr, "iommulab verify: [%s] %s\n", where, res.error);
			goto out;
		}
		record(v, nv, &o, where);
		fprintf(stderr, ".");
	}
	fprintf(stderr, "\n");
	status = EXIT_OK;
	for (size_t k = 0; k < nv; k++) {
		printf("  %-14s %s  (%zu runs)%s%s\n", v[k].name, v[k].pass ? "PASS" : "FAIL",
		       v[k].runs, v[k].pass ? "" : "\n      first counterexample: ",
		       v[k].pass ? "" : v[k].detail);
		if (!v[k].pass)
			status = EXIT_TRIALS_FAILED;
	}
	printf("%s\n", status == EXIT_OK ? "all checks passed" : "some checks FAILED");
out:
	scenario_cfg_free(&base);
	if (lp && pcfg)
		param_free_strings(lp->desc->params, lp->desc->n_params, pcfg);
	free(pcfg);
	registry_free(&reg);
	diag_clear(&diags);
	return status;
}
