/* SPDX-License-Identifier: MIT */
/*
 * iommulab report -- the summary table of a finished, merged or resumed run, printed again
 * from its scenario.ini and trials.csv (summary_table.c), with how many of the scenario's
 * trials the dir holds. Also the loader of a results dir's scenario that merge shares.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "results/aggregate.h"
#include "results/csv.h"
#include "run/runner.h"
#include "scenario/scenario.h"
#include "util/fs.h"

static const struct lab_plugin *lookup(void *ctx, const char *name)
{
	const struct loaded_plugin *p = registry_find(ctx, name, NULL);
	return p ? p->desc : NULL;
}

static const struct lab_plugin *lookup_at(void *ctx, size_t i)
{
	const struct plugin_registry *r = ctx;
	return i < r->n ? r->v[i].desc : NULL;
}

struct scenario *cli_load_run_scenario(const struct cli_common *c, const char *dir,
				       struct plugin_registry *reg)
{
	struct diag_list diags = { 0 }, load_diags = { 0 };
	char path[4200];
	struct scenario *s;

	snprintf(path, sizeof(path), "%s/scenario.ini", dir);
	cli_load_plugins(c, reg, &load_diags);
	struct plugin_lookup pl = { .find = lookup, .ctx = reg, .at = lookup_at };
	s = scenario_load(path, NULL, 0, &pl, &diags);
	if (!s) {
		cli_print_diags(&load_diags, "iommulab: warning: ");
		cli_print_diags(&diags, "");
		fprintf(stderr, "iommulab: %s: cannot read the run's scenario (%zu error%s)\n",
			path, diags.n, diags.n == 1 ? "" : "s");
	}
	diag_clear(&diags);
	diag_clear(&load_diags);
	return s;
}

int cli_read_shard(const char *dir, unsigned *k, unsigned *n, size_t *total)
{
	char path[4200];
	size_t mine;

	snprintf(path, sizeof(path), "%s/shard.txt", dir);
	char *text = util_read_file(path, NULL);
	if (!text)
		return errno == ENOENT ? 0 : -errno;
	/* No sign anywhere: sscanf's %u and %zu would read "-1" as a huge count. */
	int rc = -EINVAL;
	if (!strchr(text, '-') &&
	    sscanf(text, "shard: %u/%u\ntrials: %zu of %zu", k, n, &mine, total) == 4 && *k < *n &&
	    mine <= *total)
		rc = 1;
	free(text);
	return rc;
}

void cli_print_shard_damaged(const char *cmd, const char *dir)
{
	fprintf(stderr,
		"iommulab %s: %s/shard.txt is damaged: expected the two lines `run --shard K/N` "
		"writes, 'shard: K/N' (K below N) and 'trials: M of T' (M at most T); run that "
		"shard again\n",
		cmd, dir);
}

int cmd_report(int argc, char **argv, struct cli_common *c)
{
	struct plugin_registry reg = { 0 };
	struct scenario *s = NULL;
	struct csv_table csv = { 0 };
	struct cli_parser p;
	char path[4200], err[512];
	unsigned k = 0, n = 0;
	size_t shard_total = 0;
	int o, status = EXIT_USAGE;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		; /* no options of its own: only --help */
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (cli_operands(c->cmd, argc, argv, 1, "a results dir (RESULTS_DIR)"))
		return EXIT_USAGE;
	const char *dir = argv[optind];
	snprintf(path, sizeof(path), "%s/trials.csv", dir);
	if (csv_read(path, &csv, err, sizeof(err)) ||
	    agg_check_numbers(&csv, path, err, sizeof(err))) {
		fprintf(stderr, "iommulab report: %s\n", err);
		csv_free(&csv);
		return EXIT_USAGE;
	}
	int sharded = cli_read_shard(dir, &k, &n, &shard_total);
	if (sharded < 0) {
		cli_print_shard_damaged("report", dir);
		goto out;
	}
	s = cli_load_run_scenario(c, dir, &reg);
	if (!s || cli_print_summary(dir, s, NULL))
		goto out;
	size_t total = runner_n_trials(s);
	size_t want = sharded ? runner_shard_trials(total, k, n) : total;
	printf("\n%s: %zu of the scenario's %zu trials", dir, csv.n_rows, total);
	if (sharded)
		printf(" (shard %u/%u: %zu of them; `iommulab merge` joins the shards)", k, n,
		       want);
	if (csv.n_rows < want)
		printf("; %zu not run yet: `iommulab run --resume %s` runs them", want - csv.n_rows,
		       dir);
	printf("\n");
	status = EXIT_OK;
out:
	csv_free(&csv);
	scenario_free(s);
	registry_free(&reg);
	return status;
}
