/* SPDX-License-Identifier: MIT */
/*
 * iommulab -- entry point: the global options, then one command of the table in commands.c
 * (run, list, plot, ...), which parses the rest.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iommulab/plugin.h>

#include "cli/cli.h"
#include "params/params.h"

/* Whether path is a directory this process can list (errno says why not). */
static bool is_dir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return false;
	closedir(d);
	return true;
}

static int unknown_command(const char *name)
{
	const char *words[16];
	size_t n = 0;

	for (size_t i = 0; i < cli_n_commands && n < LAB_ARRAY_SIZE(words); i++)
		words[n++] = cli_commands[i].name;
	const char *near = param_suggest_word(words, n, name);
	if (near)
		return cli_usage_error(&cli_global, "unknown command '%s' (did you mean '%s'?)",
				       name, near);
	return cli_usage_error(&cli_global, "unknown command '%s'", name);
}

int main(int argc, char **argv)
{
	struct cli_common c = { 0 };
	struct cli_parser p;
	int o, rc = EXIT_OK;

	cli_parser_init(&p, &cli_global, argc, argv);
	p.stop_at_operand = true;
	while ((o = cli_next_opt(&p)) >= 0) {
		switch (o) {
		case GLOBAL_OPT_PLUGIN_DIR:
			/* Named on the command line: one that cannot be read is the user's error,
			 * not a directory to skip as $IOMMULAB_PLUGIN_PATH's may be. */
			if (!is_dir(optarg)) {
				rc = cli_usage_error(&cli_global, "--plugin-dir %s: %s", optarg,
						     strerror(errno));
				goto out;
			}
			rc = cli_push(&c.plugin_dirs, &c.n_plugin_dirs, optarg);
			break;
		case GLOBAL_OPT_PLUGIN:
			if (access(optarg, R_OK)) {
				rc = cli_usage_error(&cli_global, "--plugin %s: %s", optarg,
						     strerror(errno));
				goto out;
			}
			rc = cli_push(&c.plugin_files, &c.n_plugin_files, optarg);
			break;
		case GLOBAL_OPT_VERSION:
			printf("iommulab %s (plugin ABI %d.%d)\n", LAB_VERSION, LAB_ABI_MAJOR,
			       LAB_ABI_MINOR);
			goto out;
		}
		if (rc) {
			fprintf(stderr, "iommulab: out of memory\n");
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (o == CLI_OPT_EXIT) {
		rc = p.status;
		goto out;
	}
	if (optind >= argc) {
		rc = cli_usage_error(&cli_global, "no command given");
		goto out;
	}
	c.cmd = cli_find_command(argv[optind]);
	if (!c.cmd) {
		rc = unknown_command(argv[optind]);
		goto out;
	}
	/* The command sees its own name as argv[0], as a program would. */
	rc = c.cmd->fn(argc - optind, argv + optind, &c);
out:
	free(c.plugin_dirs);
	free(c.plugin_files);
	return rc;
}
