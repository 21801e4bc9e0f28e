/* SPDX-License-Identifier: MIT */
/*
 * iommulab merge -- the shards of one sweep (run --shard K/N, or any runs of one scenario that
 * hold different trials) joined into one results dir as the unsharded run writes it. The
 * inputs must agree on what ran: the resolved scenario (scenario.ini, byte for byte), the
 * plugin builds (plugins.txt) and the iommulab that ran them (machine.txt's iommulab line);
 * the first difference is named. The rows are results/merge.c's; the summary table and the
 * graphs are those of run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "results/csv.h"
#include "results/histfile.h"
#include "results/merge.h"
#include "results/results.h"
#include "run/runner.h"
#include "scenario/scenario.h"
#include "util/fs.h"

/* What one input dir says about itself. */
struct merge_input {
	const char *dir;
	char csv_path[4200];
	struct histfile hist; /* its histograms.csv */
	bool has_hist;
	char *scenario, *plugins, *machine;
	unsigned shard, n_shards; /* n_shards 0: a whole run */
	size_t shard_total;
};

static char *read_in(const char *dir, const char *name, bool must)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *text = util_read_file(path, NULL);
	if (!text && must)
		fprintf(stderr, "iommulab merge: %s: %s: is %s a results dir?\n", path,
			strerror(errno), dir);
	return text;
}

/* The line of text that starts with prefix, as "" when there is none (into buf). */
static const char *line_of(const char *text, const char *prefix, char *buf, size_t len)
{
	const char *p = text;

	buf[0] = '\0';
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(buf, len, "%.*s", (int)n, p);
			break;
		}
		p = nl ? nl + 1 : NULL;
	}
	return buf;
}

/* Compare one file of two inputs; on a difference, say where and return false. */
static bool same_file(const struct merge_input *a, const struct merge_input *b, const char *name,
		      const char *ta, const char *tb, const char *what)
{
	size_t line = 1;
	const char *pa = ta, *pb = tb;

	if (!strcmp(ta, tb))
		return true;
	while (*pa && *pa == *pb) {
		line += *pa == '\n';
		pa++;
		pb++;
	}
	while (pa > ta && pa[-1] != '\n') {
		pa--;
		pb--;
	}
	fprintf(stderr,
		"iommulab merge: %s/%s and %s/%s differ at line %zu ('%.*s' against '%.*s'): %s; "
		"nothing was written\n",
		a->dir, name, b->dir, name, line, (int)strcspn(pa, "\n"), pa,
		(int)strcspn(pb, "\n"), pb, what);
	return false;
}

static void free_input(struct merge_input *in)
{
	histfile_free(&in->hist);
	free(in->scenario);
	free(in->plugins);
	free(in->machine);
}

static int read_input(struct merge_input *in, const char *dir)
{
	memset(in, 0, sizeof(*in));
	in->dir = dir;
	snprintf(in->csv_path, sizeof(in->csv_path), "%s/trials.csv", dir);
	in->scenario = read_in(dir, "scenario.ini", true);
	in->plugins = in->scenario ? read_in(dir, "plugins.txt", true) : NULL;
	in->machine = in->plugins ? read_in(dir, "machine.txt", true) : NULL;
	if (!in->machine) {
		free_input(in);
		return -1;
	}
	if (cli_read_shard(dir, &in->shard, &in->n_shards, &in->shard_total) < 0) {
		cli_print_shard_damaged("merge", dir);
		free_input(in);
		return -1;
	}
	return 0;
}

/* The input's histograms.csv: absent (a run from before they were kept) is no error. */
static int read_hist(struct merge_input *in)
{
	char path[4200], err[1024];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", in->dir, HISTFILE_NAME);
	rc = histfile_read(path, &in->hist, err, sizeof(err));
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		fprintf(stderr, "iommulab merge: %s; nothing was written\n", err);
		return -1;
	}
	in->has_hist = true;
	return 0;
}

/* Every input ran what the first did, and the shards are distinct shards of one split. */
static int check_inputs(const struct merge_input *in, size_t n, size_t total)
{
	char la[512], lb[512];

	for (size_t i = 0; i < n; i++) {
		const struct merge_input *a = &in[0], *b = &in[i];
		if (i && (!same_file(a, b, "scenario.ini", a->scenario, b->scenario,
				     "they are not runs of one resolved scenario") ||
			  !same_file(a, b, "plugins.txt", a->plugins, b->plugins,
				     "they ran different plugin builds")))
			return -1;
		line_of(a->machine, "iommulab:", la, sizeof(la));
		line_of(b->machine, "iommulab:", lb, sizeof(lb));
		if (strcmp(la, lb)) {
			fprintf(stderr,
				"iommulab merge: %s ran '%s', %s '%s': they ran different "
				"builds; nothing was written\n",
				a->dir, la, b->dir, lb);
			return -1;
		}
		if (b->n_shards && b->shard_total != total) {
			fprintf(stderr,
				"iommulab merge: %s/shard.txt says the sweep has %zu trials, "
				"its scenario.ini %zu; nothing was written\n",
				b->dir, b->shard_total, total);
			return -1;
		}
		for (size_t j = 0; j < i; j++) {
			const struct merge_input *c = &in[j];
			if (!b->n_shards || !c->n_shards)
				continue;
			if (b->n_shards != c->n_shards) {
				fprintf(stderr,
					"iommulab merge: %s is shard %u/%u, %s shard %u/%u: "
					"shards of different splits; nothing was written\n",
					c->dir, c->shard, c->n_shards, b->dir, b->shard,
					b->n_shards);
				return -1;
			}
			if (b->shard == c->shard) {
				fprintf(stderr,
					"iommulab merge: %s and %s are both shard %u/%u; "
					"nothing was written\n",
					c->dir, b->dir, b->shard, b->n_shards);
				return -1;
			}
		}
	}
	return 0;
}

/* machine.txt of the merge: each input's, under the shard it held. */
static int write_machine(const char *out, const struct merge_input *in, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "merged by iommulab merge from %zu result dirs:\n", n);
	for (size_t i = 0; i < n; i++) {
		if (in[i].n_shards)
			fprintf(f, "\n== %s (shard %u/%u) ==\n", in[i].dir, in[i].shard,
				in[i].n_shards);
		else
			fprintf(f, "\n== %s ==\n", in[i].dir);
		fputs(in[i].machine, f);
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	int rc = results_write_file(out, "machine.txt", text);
	free(text);
	return rc;
}

/* scenario.ini, plugins.txt and the topology copy, as every input has them. */
static int write_run_files(const char *out, const struct merge_input *in, size_t n)
{
	int rc = results_write_file(out, "scenario.ini", in->scenario);

	rc = rc ? rc : results_write_file(out, "plugins.txt", in->plugins);
	rc = rc ? rc : write_machine(out, in, n);
	char *topo = rc ? NULL : read_in(in->dir, "topology.csv", false);
	if (topo)
		rc = results_write_file(out, "topology.csv", topo);
	free(topo);
	return rc;
}

static size_t count_failed(const struct merge_table *t)
{
	size_t failed = 0;
	long c = -1;

	for (size_t i = 0; i < t->n_cols; i++)
		if (!strcmp(t->header[i], "status"))
			c = (long)i;
	for (size_t i = 0; c >= 0 && i < t->n_rows; i++)
		failed += strcmp(t->rows[i][c], "ok") != 0;
	return failed;
}

int cmd_merge(int argc, char **argv, struct cli_common *c)
{
	struct plugin_registry reg = { 0 };
	struct scenario *s = NULL;
	struct merge_input *in = NULL;
	struct csv_table *csv = NULL;
	const char **names = NULL;
	struct merge_table mt = { 0 };
	struct histfile *hists = NULL; /* shallow copies of in[i].hist */
	struct cli_parser p;
	bool partial = false;
	size_t n = 0, n_read = 0;
	char err[1024];
	int o, status = EXIT_USAGE;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		if (o == MERGE_OPT_PARTIAL)
			partial = true;
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (argc - optind < 2)
		return cli_usage_error(c->cmd, "give the OUT_DIR to write and at least one "
					       "RESULTS_DIR to merge");
	const char *out = argv[optind];
	n = (size_t)(argc - optind - 1);
	in = calloc(n, sizeof(*in));
	csv = calloc(n, sizeof(*csv));
	names = calloc(n, sizeof(*names));
	if (!in || !csv || !names)
		goto out;
	for (; n_read < n; n_read++) {
		struct merge_input *m = &in[n_read];
		if (read_input(m, argv[optind + 1 + n_read]))
			goto out;
		names[n_read] = m->csv_path;
		if (csv_read(m->csv_path, &csv[n_read], err, sizeof(err))) {
			fprintf(stderr, "iommulab merge: %s\n", err);
			free_input(m);
			goto out;
		}
		if (read_hist(m)) {
			free_input(m);
			csv_free(&csv[n_read]);
			goto out;
		}
	}
	s = cli_load_run_scenario(c, in[0].dir, &reg);
	if (!s)
		goto out;
	size_t total = runner_n_trials(s);
	if (check_inputs(in, n, total))
		goto out;
	if (merge_tables(csv, names, n, total, &mt, err, sizeof(err))) {
		fprintf(stderr, "iommulab merge: %s; nothing was written\n", err);
		goto out;
	}
	size_t missing = merge_missing(&mt, total, err, sizeof(err));
	if (missing && !partial) {
		fprintf(stderr,
			"iommulab merge: %zu of the sweep's %zu trials are in none of the dirs "
			"(trial %s): a shard is missing or unfinished (`iommulab run --resume "
			"DIR`); --partial merges what there is; nothing was written\n",
			missing, total, err);
		goto out;
	}
	if (missing)
		fprintf(stderr,
			"iommulab merge: warning: %zu of the sweep's %zu trials are missing "
			"(trial %s): `iommulab run --resume %s` runs them\n",
			missing, total, err, out);

	/* The inputs' histograms, one array as merge_write_hist takes them; all or none. */
	hists = calloc(n, sizeof(*hists));
	if (!hists)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (in[i].has_hist) {
			hists[i] = in[i].hist;
			continue;
		}
		fprintf(stderr,
			"iommulab merge: warning: %s has no %s (a run from before iommulab kept "
			"them): the merge has none, and compare reads only its means\n",
			in[i].dir, HISTFILE_NAME);
		free(hists);
		hists = NULL;
		break;
	}

	char now[64];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%S%z", &tm);
	struct results_meta meta = { .name = s->base.scenario.name,
				     .scenario_path = s->path,
				     .started = now,
				     .finished = now,
				     .interrupted = missing > 0 };
	if (merge_write_hist(out, &mt, hists, &meta, err, sizeof(err))) {
		fprintf(stderr, "iommulab merge: %s\n", err);
		goto out;
	}
	if (write_run_files(out, in, n)) {
		fprintf(stderr, "iommulab merge: cannot write to %s: %s\n", out, strerror(errno));
		goto out;
	}
	fprintf(stderr, "iommulab merge: %zu trials from %zu dirs into %s/\n", mt.n_rows, n, out);
	cli_print_summary(out, s, NULL);
	if (cli_write_summary_file(out, s, NULL))
		fprintf(stderr, "iommulab merge: warning: could not write %s/summary.txt\n", out);
	printf("\nresults: %s/ (trials.csv, %ssummary.json)\n", out,
	       hists ? HISTFILE_NAME ", " : "");
	cli_render_plots(out, 0);
	size_t failed = count_failed(&mt);
	if (failed)
		fprintf(stderr,
			"iommulab merge: %zu of %zu trials failed (see the error column of "
			"%s/trials.csv)\n",
			failed, mt.n_rows, out);
	status = failed ? EXIT_TRIALS_FAILED : EXIT_OK;
out:
	merge_table_free(&mt);
	for (size_t i = 0; i < n_read; i++) {
		free_input(&in[i]);
		csv_free(&csv[i]);
	}
	free(hists);
	free(in);
	free(csv);
	free(names);
	scenario_free(s);
	registry_free(&reg);
	return status;
}
