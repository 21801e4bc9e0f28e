/* SPDX-License-Identifier: MIT */
/* iommulab plot -- re-render the graphs of an earlier run from its trials.csv. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_plot(int argc, char **argv, struct cli_common *c)
{
	struct cli_parser p;
	int o;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		; /* plot has no options of its own: only --help */
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (cli_operands(c->cmd, argc, argv, 1, "a results dir (RESULTS_DIR)"))
		return EXIT_USAGE;
	return cli_render_plots(argv[optind]);
}
