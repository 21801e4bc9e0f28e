/* SPDX-License-Identifier: MIT */
/*
 * iommulab verify -- the conformance checks on one plugin (a dropped-in .so or a name).
 * cmdq: the oracle over the grid of framework/verify/cmdq_check (tiny queues to force wrap
 * and queue-full, MSI on and off, one and several commands per sync, 1 and 2 CPUs natively,
 * 4, 16 and 64 on the sim with the plugin's .sim.so), with the plugin's parameters as given
 * and then each varied in turn (cmdq_check_variants), the grid the conformance suite runs.
 * --set of a key the grid sets itself (engine, cpus, ...) is refused, never ignored.
 * iova: every check of framework/verify/iova_check (the conformance suite's own code).
 * Prints pass/fail per check with the first counterexample; exit 0 only if every check passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	char detail[ORACLE_DETAIL_LEN + 640]; /* "[where] " + the oracle's */
};

/* The one plugin verify checks, as the scenario's plugin lookup. */
static const struct lab_plugin *lookup_one(void *ctx, const char *name)
{
	const struct lab_plugin *d = ctx;

	return strcmp(d->name, name) ? NULL : d;
}

/*
 * verify has always taken "NAME.key=value" for the plugin's own keys; the scenario spells
 * that "plugin.NAME.key=value". Anything else goes to the scenario as given.
 */
static char *set_spelling(const char *set, const struct lab_plugin *d)
{
	size_t len = strlen(d->name);
	char *s;

	if (strncmp(set, d->name, len) || set[len] != '.' || !strchr(set + len + 1, '=') ||
	    scenario_find_section(d->name))
		return strdup(set);
	s = malloc(strlen("plugin.") + strlen(set) + 1);
	if (s)
		sprintf(s, "plugin.%s", set);
	return s;
}

/*
 * The keys each grid point sets itself: a --set of one would be overwritten without a word,
 * so it is refused, saying what verify runs instead. NULL, or the message.
 */
static const char *grid_key(const char *set)
{
	static const struct {
		const char *key, *why;
	} keys[] = {
		{ "engine",
		  "verify runs every plugin natively (1-2 CPUs) and on the sim (4-64 CPUs)" },
		{ "cpus", "verify runs 1 and 2 CPUs natively and 4, 16 and 64 on the sim" },
		{ "smmu.queue_shift", "verify runs queues of 8, 16 and 256 entries" },
		{ "smmu.msi", "verify runs MSI on and off" },
		{ "workload.cmdq.cmds_per_sync", "verify runs 1 and 5 commands per sync" },
		{ "workload.cmdq.think_ns", "verify runs think_ns 0 and 200" },
	};
	const char *eq = strchr(set, '=');
	size_t len = eq ? (size_t)(eq - set) : strlen(set);

	while (len && (set[len - 1] == ' ' || set[len - 1] == '\t'))
		len--;
	if (len > strlen("scenario.") && !strncmp(set, "scenario.", strlen("scenario."))) {
		set += strlen("scenario.");
		len -= strlen("scenario.");
	}
	for (size_t i = 0; i < LAB_ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].key) == len && !strncmp(set, keys[i].key, len))
			return keys[i].why;
	return NULL;
}

/* The base scenario verify's grid starts from: this plugin alone, watchdog_ms = 2000. */
static int write_base(const char *path, int fd, const struct lab_plugin *d)
{
	const char *kind = d->kind == LAB_KIND_IOVA ? "iova" : "cmdq";
	FILE *f = fdopen(fd, "w");

	if (!f) {
		close(fd);
		return -errno;
	}
	fprintf(f,
		"; iommulab verify: the base of its grid (%s), as cmdq_check_base() sets it\n"
		"[scenario]\nworkload = %s\nengine = native\noversubscribe = allow\n"
		"[smmu]\ndevice = inline\n[plugins]\n%s = %s\n",
		path, kind, kind, d->name);
	return fclose(f) ? -errno : 0;
}

/*
 * The configuration verify starts its grid from: the defaults, the base above, then the
 * --set options, loaded by scenario_load exactly as `run` loads a scenario and its --set
 * (the same spellings, checks and messages). scenario_load reads a file, so the base is
 * written to a temporary one first. NULL (and printed why) on any problem.
 */
static struct scenario *load_base(const struct lab_plugin *d, const char *const *args,
				  size_t n_sets)
{
	const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct plugin_lookup pl = { .find = lookup_one, .ctx = (void *)d };
	struct diag_list diags = { 0 };
	struct scenario *s = NULL;
	char path[4200], **sets = calloc(n_sets + 1, sizeof(*sets));
	int fd = -1, rc;

	snprintf(path, sizeof(path), "%s/iommulab-verify-XXXXXX.ini", tmpdir);
	fd = sets ? mkstemps(path, 4) : -1;
	rc = fd < 0 ? -errno : write_base(path, fd, d);
	if (rc) {
		fprintf(stderr, "iommulab verify: cannot write %s: %s\n", path, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < n_sets; i++)
		if (!(sets[i] = set_spelling(args[i], d)))
			goto out;
	s = scenario_load(path, (const char *const *)sets, n_sets, &pl, &diags);
	/* A valid --set of a key each grid point sets would be overwritten: refuse it. */
	for (size_t i = 0; s && i < n_sets; i++) {
		const char *why = grid_key(args[i]);

		if (why) {
			fprintf(stderr,
				"iommulab verify: --set %s: not for verify, which sets it "
				"per configuration: %s\n",
				args[i], why);
			scenario_free(s);
			s = NULL;
		}
	}
	if (!s) {
		if (diags.n)
			cli_print_diags(&diags, "iommulab verify: ");
	} else if (s->n_axes || s->n_cmdq + s->n_iova != 1) {
		fprintf(stderr,
			"iommulab verify: --set sweep.* and plugins.* are not for verify: "
			"it runs its own grid on %s alone\n",
			d->name);
		scenario_free(s);
		s = NULL;
	}
out:
	if (fd >= 0)
		unlink(path);
	for (size_t i = 0; sets && i < n_sets; i++)
		free(sets[i]);
	free(sets);
	diag_clear(&diags);
	return s;
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
	struct plugin_registry reg = { 0 };
	struct diag_list diags = { 0 };
	const struct loaded_plugin *lp = NULL;
	struct verdict v[ORACLE_MAX_CHECKS] = { 0 };
	const char *target = NULL;
	void *pcfg = NULL;
	struct scenario_cfg base = { 0 };
	struct scenario *s = NULL;
	struct cli_parser p;
	const char **sets = NULL;
	size_t n_sets = 0;
	int o, status = EXIT_USAGE;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		if (o == VERIFY_OPT_SET && cli_push(&sets, &n_sets, optarg))
			goto out;
	if (o == CLI_OPT_EXIT) {
		status = p.status;
		goto out;
	}
	if (optind == argc) {
		cli_usage_error(c->cmd, "no plugin given");
		goto out;
	}
	if (optind + 1 < argc) {
		cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	target = argv[optind];
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
	s = load_base(d, sets, n_sets);
	if (!s)
		goto out;
	if (scenario_cfg_copy(&base, &s->base)) {
		fprintf(stderr, "iommulab verify: out of memory\n");
		goto out;
	}
	pcfg = s->n_cmdq ? s->cmdq[0].config : s->iova[0].config;

	if (d->kind == LAB_KIND_IOVA) {
		status = verify_iova(lp, pcfg);
		goto out;
	}
	printf("verify %s (%s %s, %s)\n", lp->path, d->name, d->version, d->summary);
	size_t n_points, nv, n_var, n_native = 0, n_sim = 0;
	const struct cmdq_check_point *grid = cmdq_check_grid(&n_points);
	const char *const *names = cmdq_check_names(&nv);
	struct cmdq_check_variant var[CMDQ_CHECK_MAX_VARIANTS];
	char given[CMDQ_CHECK_SET_LEN * 4] = "";
	n_var = cmdq_check_variants(d, pcfg, var, CMDQ_CHECK_MAX_VARIANTS);
	/* The base's values by name: a counterexample says what every parameter was. */
	for (uint32_t i = 0; i < d->n_params; i++) {
		char val[CMDQ_CHECK_SET_LEN];
		size_t len = strlen(given);

		if (!param_format(&d->params[i], pcfg, val, sizeof(val)))
			snprintf(given + len, sizeof(given) - len, "%s%s=%s", len ? " " : "",
				 d->params[i].key, val);
	}
	for (size_t k = 0; k < nv; k++)
		v[k] = (struct verdict){ .name = names[k], .pass = true };
	/* Without its .sim.so twin the sim part cannot run: say so, never pass it silently. */
	char no_sim[512] = "";
	bool have_sim = plugin_sim_build(d, no_sim, sizeof(no_sim)) != NULL;
	if (!have_sim)
		printf("  the sim part is NOT run: %s\n", no_sim[0] ? no_sim : "no sim build");
	for (size_t j = 0; j < n_var; j++) {
		const char *vals = j ? var[j].set : given[0] ? given : "(no parameters)";
		char err[256];
		void *vcfg = cmdq_check_config(d, pcfg, &var[j], err, sizeof(err));

		if (!vcfg) {
			fprintf(stderr, "iommulab verify: %s %s: %s\n", d->name, var[j].set, err);
			goto out;
		}
		for (size_t i = 0; i < n_points; i++) {
			struct scenario_cfg cfg = base;
			struct trial_result res = { 0 };
			struct oracle_report o;
			char desc[160], where[160 + sizeof(given)];

			if (!cmdq_check_runs(&grid[i], j) ||
			    (grid[i].engine == ENGINE_SIM && !have_sim))
				continue;
			cmdq_check_apply(&grid[i], &cfg);
			cmdq_check_describe(&cfg, desc, sizeof(desc));
			/* Which parameter values the trial ran with: a counterexample replays. */
			snprintf(where, sizeof(where), "%s %s %s", desc, d->name, vals);
			struct trial_request req = { .cfg = &cfg,
						     .cmdq = d,
						     .cmdq_config = vcfg,
						     .ops_per_cpu = grid[i].ops_per_cpu,
						     .oracle = true };
			if (trial_run(&req, &res, &o)) {
				fprintf(stderr, "iommulab verify: [%s] %s\n", where, res.error);
				cmdq_check_config_free(d, vcfg);
				goto out;
			}
			record(v, nv, &o, where);
			*(grid[i].engine == ENGINE_SIM ? &n_sim : &n_native) += 1;
			fprintf(stderr, ".");
		}
		cmdq_check_config_free(d, vcfg);
	}
	fprintf(stderr, "\n");
	printf("  %zu configurations: %zu native, %zu on the sim; %zu parameter settings:",
	       n_native + n_sim, n_native, n_sim, n_var);
	for (size_t j = 0; j < n_var; j++)
		printf("%s%s", j ? ", " : " ",
		       j	  ? var[j].set
		       : given[0] ? given
				  : "(no parameters)");
	printf("\n");
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
	scenario_free(s);
	free(sets);
	registry_free(&reg);
	diag_clear(&diags);
	return status;
}
