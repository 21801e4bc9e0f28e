/* SPDX-License-Identifier: MIT */
/* iommulab plot -- re-render the graphs of an earlier run from its trials.csv. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_plot(int argc, char **argv, struct cli_common *c)
{
	(void)c;
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: iommulab plot RESULTS_DIR\n");
		return EXIT_USAGE;
	}
	return cli_render_plots(argv[1]);
}
