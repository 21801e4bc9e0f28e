/* SPDX-License-Identifier: MIT */
/*
 * iommulab plot -- re-render the graphs and report.html of an earlier run from its
 * trials.csv; cli_render_plots is also what `run` calls at its end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "plot/plot.h"
#include "report/report.h"

int cli_plots_flags(const struct cli_command *cmd, const char *arg, unsigned *flags)
{
	if (!strcmp(arg, "all")) {
		*flags |= PLOT_ALL;
		return 0;
	}
	if (!strcmp(arg, "default")) {
		*flags &= ~PLOT_ALL;
		return 0;
	}
	cli_usage_error(cmd, "--plots wants default or all, not '%s'", arg);
	return -1;
}

int cli_render_plots(const char *dir, unsigned plot_flags)
{
	struct plot_report rep = { 0 };
	char err[512] = "";
	int status = EXIT_OK;
	int rc = plot_results(dir, cli_plot_dir(), NULL, plot_flags, &rep, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "iommulab: plot: %s\n", err);
		status = EXIT_USAGE;
	} else if (rep.rendered) {
		printf("graphs:\n");
		for (size_t i = 0; i < rep.n_written; i++)
			printf("  %s\n", rep.written[i]);
		if (rep.n_left_out)
			printf("  (%zu counter graph%s left out: --plots all draws them)\n",
			       rep.n_left_out, rep.n_left_out == 1 ? "" : "s");
	} else if (rep.note[0]) {
		fprintf(stderr, "iommulab: %s\n", rep.note);
	}
	/* The page even when a graph failed: the summary and the reasons are still worth it.
	 * Not from a missing or damaged trials.csv, whose error was just printed. */
	if (rc != -EINVAL && !(rc == -ENOENT && strstr(err, "trials.csv"))) {
		rc = report_html_write(dir, &rep, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "iommulab: report: %s\n", err);
			status = EXIT_USAGE;
		} else {
			printf("report: %s/report.html\n", dir);
		}
	}
	plot_report_free(&rep);
	return status;
}

int cmd_plot(int argc, char **argv, struct cli_common *c)
{
	struct cli_parser p;
	unsigned flags = 0;
	int o;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		if (o == PLOT_OPT_PLOTS && cli_plots_flags(c->cmd, optarg, &flags))
			return EXIT_USAGE;
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (cli_operands(c->cmd, argc, argv, 1, "a results dir (RESULTS_DIR)"))
		return EXIT_USAGE;
	return cli_render_plots(argv[optind], flags);
}
