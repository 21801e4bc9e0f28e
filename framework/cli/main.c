/* SPDX-License-Identifier: MIT */
/* iommulab -- entry point: common options, then one of the commands (run, list, plot, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <iommulab/plugin.h>

#include "cli/cli.h"
#include "plot/plot.h"

static const char usage[] =
	"usage: iommulab [--plugin-dir DIR]... [--plugin FILE.so]... COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  run SCENARIO.ini [--set SECTION.KEY=VALUE]... [--out DIR]\n"
	"        run every trial of a scenario; results, summary and graphs go to\n"
	"        results/<name>-<time>/ (or DIR)\n"
	"  run --resume RESULTS_DIR\n"
	"        finish an interrupted run without redoing its finished trials\n"
	"  list [--params] [FILE.so...]\n"
	"        the plugins found, with kind, version and summary; --params adds every\n"
	"        parameter table (the framework's scenario keys and each plugin's)\n"
	"  plot RESULTS_DIR\n"
	"        render the graphs of an earlier run again from its trials.csv\n"
	"  verify PLUGIN.so|NAME [--set SECTION.KEY=VALUE]...\n"
	"        run the conformance checks on a cmdq plugin; exit 0 only if all pass\n"
	"  probe [--out FILE.csv] [--cpus N] [--rounds N] [--matrix pingpong|transfer]\n"
	"        measure this machine (core-to-core latency of every CPU pair, uncontended and\n"
	"        contended atomics, the timer) and write a topology file for the sim\n"
	"        (probe-<host>.csv)\n"
	"  calibrate RESULTS_DIR DATA.csv [--tolerance PCT]\n"
	"        compare a micro-workload run with measured ns per op, point by point\n"
	"        (table, RESULTS_DIR/calibration.csv); exit 0 only if all within PCT% (25)\n"
	"\n"
	"Plugins are searched in --plugin-dir, then $IOMMULAB_PLUGIN_PATH (colon-separated),\n"
	"then the built-in directory. Exit status: 0 ok, 1 some trials or checks failed,\n"
	"2 bad input (command line, scenario, plugin), 130 interrupted.\n";

static int add(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_common c = { 0 };
	int i = 1, rc;

	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--version")) {
			printf("iommulab %s (plugin ABI %d.%d)\n", LAB_VERSION, LAB_ABI_MAJOR,
			       LAB_ABI_MINOR);
			return EXIT_OK;
		} else if ((!strcmp(a, "--plugin-dir") || !strcmp(a, "--plugin")) && i + 1 < argc) {
			if (!strcmp(a, "--plugin-dir"))
				add(&c.plugin_dirs, &c.n_plugin_dirs, argv[++i]);
			else
				add(&c.plugin_files, &c.n_plugin_files, argv[++i]);
		} else {
			fprintf(stderr, "iommulab: unknown or incomplete option '%s'\n\n%s", a, usage);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "iommulab: no command given\n\n%s", usage);
		return EXIT_USAGE;
	}
	const char *cmd = argv[i];
	int sub_argc = argc - i;
	char **sub_argv = argv + i;
	if (!strcmp(cmd, "run"))
		rc = cmd_run(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "list"))
		rc = cmd_list(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "plot"))
		rc = cmd_plot(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "verify"))
		rc = cmd_verify(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "probe"))
		rc = cmd_probe(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "calibrate"))
		rc = cmd_calibrate(sub_argc, sub_argv, &c);
	else if (!strcmp(cmd, "help")) {
		fputs(usage, stdout);
		rc = EXIT_OK;
	} else {
		fprintf(stderr,
			"iommulab: unknown command '%s' (run, list, plot, verify, probe, "
			"calibrate)\n",
			cmd);
		rc = EXIT_USAGE;
	}
	free(c.plugin_dirs);
	free(c.plugin_files);
	return rc;
}

/* ---- shared by the commands ------------------------------------------------------------ */

void cli_print_diags(const struct diag_list *d, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s%s\n", prefix, d->msgs[i]);
}

void cli_load_plugins(const struct cli_common *c, struct plugin_registry *r,
		      struct diag_list *diags)
{
	for (size_t i = 0; i < c->n_plugin_files; i++)
		registry_add_file(r, c->plugin_files[i], diags);
	for (size_t i = 0; i < c->n_plugin_dirs; i++)
		registry_add_dir(r, c->plugin_dirs[i], false, diags);
	const char *env = getenv("IOMMULAB_PLUGIN_PATH");
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;
		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
		     dir = strtok_r(NULL, ":", &save))
			registry_add_dir(r, dir, false, diags);
		free(copy);
	}
	registry_add_dir(r, loader_builtin_dir(), true, diags);
}

const char *cli_plot_dir(void)
{
	const char *env = getenv("IOMMULAB_PLOT_DIR");
	struct stat st;

	if (env && *env)
		return env;
	/* A build tree runs against the source's templates; an installed binary uses its own. */
	if (!strncmp(loader_builtin_dir(), LAB_PLUGIN_INSTALL_DIR, strlen(LAB_PLUGIN_INSTALL_DIR)) &&
	    !stat(LAB_PLOT_INSTALL_DIR, &st))
		return LAB_PLOT_INSTALL_DIR;
	return LAB_PLOT_SOURCE_DIR;
}

int cli_render_plots(const char *dir)
{
	struct plot_report rep = { 0 };
	char err[512] = "";
	int rc = plot_results(dir, cli_plot_dir(), NULL, &rep, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "iommulab: plot: %s\n", err);
		return EXIT_USAGE;
	}
	if (rep.rendered) {
		printf("graphs:\n");
		for (size_t i = 0; i < rep.n_written; i++)
			printf("  %s\n", rep.written[i]);
	} else {
		fprintf(stderr, "iommulab: %s\n", rep.note);
	}
	plot_report_free(&rep);
	return EXIT_OK;
}
