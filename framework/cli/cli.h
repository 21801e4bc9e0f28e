/* SPDX-License-Identifier: MIT */
/* cli -- the iommulab command line: the only layer that prints. */
#ifndef IOMMULAB_CLI_H
#define IOMMULAB_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "loader/loader.h"

/* Exit statuses. */
enum {
	EXIT_OK = 0,
	EXIT_TRIALS_FAILED = 1, /* the run happened; some trials (or checks) failed */
	EXIT_USAGE = 2,		/* bad command line, scenario or plugin */
	EXIT_INTERRUPTED = 130,
};

/* Options every command shares. */
struct cli_common {
	const char **plugin_dirs; /* --plugin-dir, in order */
	size_t n_plugin_dirs;
	const char **plugin_files; /* --plugin FILE.so */
	size_t n_plugin_files;
};

/* Load plugins from --plugin, --plugin-dir, IOMMULAB_PLUGIN_PATH, then the built-in dir.
 * Refusals are printed as warnings (verbose) and kept in diags. */
void cli_load_plugins(const struct cli_common *c, struct plugin_registry *r,
		      struct diag_list *diags);

/* Where the plot templates (plots/NAME.gp) are: IOMMULAB_PLOT_DIR, the installed dir, or the source tree's. */
const char *cli_plot_dir(void);

/* Render the graphs of a results dir and print where they are. 0 or an exit status. */
int cli_render_plots(const char *dir);

void cli_print_diags(const struct diag_list *d, const char *prefix);

int cmd_run(int argc, char **argv, struct cli_common *c);
int cmd_list(int argc, char **argv, struct cli_common *c);
int cmd_plot(int argc, char **argv, struct cli_common *c);
int cmd_verify(int argc, char **argv, struct cli_common *c);
int cmd_probe(int argc, char **argv, struct cli_common *c);
int cmd_calibrate(int argc, char **argv, struct cli_common *c);

#endif /* IOMMULAB_CLI_H */
