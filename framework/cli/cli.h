/* SPDX-License-Identifier: MIT */
/*
 * cli -- the iommulab command line: the only layer that prints.
 *
 * Every command is one entry of the table in commands.c: its name, the function that runs
 * it, its usage lines, summary, help, options and exit statuses. main.c dispatches through
 * the table; the commands parse their options with cli_next_opt() (getopt_long over the
 * entry's options, with --help/-h and "did you mean" for every command) and call the
 * helpers below. Nothing here calls back into main.c.
 */
#ifndef IOMMULAB_CLI_H
#define IOMMULAB_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "loader/loader.h"

/* Exit statuses. */
enum {
	EXIT_OK = 0,
	EXIT_TRIALS_FAILED = 1, /* the run happened; some trials (or checks) failed */
	EXIT_USAGE = 2,		/* bad command line, scenario or plugin */
	EXIT_INTERRUPTED = 130,
};

/* One option of a command: --name (and -short where it has one). */
struct cli_option {
	const char *name; /* the long name, without "--" */
	char short_name;  /* 0: none */
	const char *arg;  /* the argument's name in the help ("DIR"), NULL for a flag */
	const char *help;
};

/* One exit status of a command and what it means there. */
struct cli_exit {
	int status;
	const char *meaning;
};

#define CLI_MAX_OPTS  12
#define CLI_MAX_EXITS 5

struct cli_common;

/* One command: the table entry that drives dispatch, parsing and the help. */
struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli_common *c);
	const char *usage;		      /* one synopsis per line, without "iommulab " */
	const char *summary;		      /* one line, for the list of commands */
	const char *help;		      /* what it does, a paragraph */
	struct cli_option opts[CLI_MAX_OPTS]; /* indexed by the command's enum below */
	size_t n_opts;
	struct cli_exit exits[CLI_MAX_EXITS]; /* ends at the first without a meaning */
};

/* The table (commands.c), in the order the help lists it. */
extern const struct cli_command cli_commands[];
extern const size_t cli_n_commands;

/* The options that come before the command (main.c parses them with the same code). */
extern const struct cli_command cli_global;

/* The option indexes of each command: cli_next_opt() returns them, the table is indexed by them. */
enum {
	RUN_OPT_SET,
	RUN_OPT_OUT,
	RUN_OPT_RESUME,
	RUN_OPT_JOBS,
	RUN_OPT_SHARD,
	RUN_OPT_PLOTS,
	RUN_OPT_DRY_RUN,
	RUN_OPT_FORMAT,
	RUN_OPT_BASELINE,
	RUN_N_OPTS
};
enum { MERGE_OPT_PARTIAL, MERGE_N_OPTS };
enum { PLOT_OPT_PLOTS, PLOT_N_OPTS };
enum { LIST_OPT_PARAMS, LIST_N_OPTS };
enum { VERIFY_OPT_SET, VERIFY_OPT_SEED, VERIFY_OPT_ENGINE, VERIFY_OPT_JOBS, VERIFY_N_OPTS };
enum { PROBE_OPT_OUT, PROBE_OPT_CPUS, PROBE_OPT_ROUNDS, PROBE_OPT_MATRIX, PROBE_N_OPTS };
enum { CALIBRATE_OPT_TOLERANCE, CALIBRATE_N_OPTS };
enum { COMPARE_OPT_METRIC, COMPARE_OPT_ALPHA, COMPARE_N_OPTS };
enum { GLOBAL_OPT_PLUGIN_DIR, GLOBAL_OPT_PLUGIN, GLOBAL_OPT_VERSION, GLOBAL_N_OPTS };

/* Options every command shares, and the command being run. */
struct cli_common {
	const char **plugin_dirs; /* --plugin-dir, in order */
	size_t n_plugin_dirs;
	const char **plugin_files; /* --plugin FILE.so */
	size_t n_plugin_files;
	const struct cli_command *cmd; /* the table entry main.c dispatched to */
};

/* The command called name, or NULL. */
const struct cli_command *cli_find_command(const char *name);

/* ---- option parsing --------------------------------------------------------------------- */

enum {
	CLI_OPT_END = -1,  /* no more options: the operands are argv[optind..argc) */
	CLI_OPT_EXIT = -2, /* --help printed, or an error printed: return p->status */
};

/* getopt_long over one command's options. */
struct cli_parser {
	const struct cli_command *cmd;
	int argc;
	char **argv;
	bool stop_at_operand; /* main: options end at the command's name */
	int status;	      /* after CLI_OPT_EXIT: EXIT_OK (help) or EXIT_USAGE */
	struct option longopts[CLI_MAX_OPTS + 2];
	char shortopts[2 * CLI_MAX_OPTS + 6];
};

/* Start parsing argv[1..argc) (argv[0] is the command's name) for cmd. */
void cli_parser_init(struct cli_parser *p, const struct cli_command *cmd, int argc, char **argv);

/*
 * The next option: its index in cmd->opts with its argument in optarg, CLI_OPT_END, or
 * CLI_OPT_EXIT after --help/-h (printed to stdout, status EXIT_OK) or a bad option (the
 * error, naming the option, and the usage printed to stderr, status EXIT_USAGE).
 */
int cli_next_opt(struct cli_parser *p);

/* ---- help ------------------------------------------------------------------------------- */

/* usage: lines of cmd ("usage: iommulab run ..."). */
void cli_print_usage(FILE *f, const struct cli_command *cmd);

/* A usage error: "iommulab CMD: MESSAGE" and the usage, to stderr. Returns EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * After the options: exactly n operands (argv[optind ..]), or the usage error naming the
 * extra one or saying what was expected (what: "RESULTS_DIR and DATA.csv"). 0 or EXIT_USAGE.
 */
int cli_operands(const struct cli_command *cmd, int argc, char **argv, int n, const char *what);

/* iommulab help CMD: usage, help, options and exit statuses, to f. */
void cli_print_help(FILE *f, const struct cli_command *cmd);

/* iommulab help: every command with its usage and summary, the global options, to f. */
void cli_print_overview(FILE *f);

/* ---- shared by the commands ------------------------------------------------------------- */

/* Append s to a growing array of strings. 0 or -ENOMEM. */
int cli_push(const char ***v, size_t *n, const char *s);

/* -j N: 1 to ISOLATE_MAX_JOBS, in decimal, into *jobs. 0 or -EINVAL. */
int cli_parse_jobs(const char *text, unsigned *jobs);

/* Load plugins from --plugin, --plugin-dir, IOMMULAB_PLUGIN_PATH, then the built-in dir.
 * Refusals are printed as warnings (verbose) and kept in diags. */
void cli_load_plugins(const struct cli_common *c, struct plugin_registry *r,
		      struct diag_list *diags);

/* Where the plot templates (plots/NAME.gp) are: IOMMULAB_PLOT_DIR, the installed dir, or the source
 * tree's. */
const char *cli_plot_dir(void);

/* Render the graphs of a results dir (PLOT_ALL: every counter too), write its report.html
 * and print where they are (cmd_plot.c). 0 or an exit status. */
int cli_render_plots(const char *dir, unsigned plot_flags);
/* --plots default|all as PLOT_ALL, or -1 (printed) for anything else. */
int cli_plots_flags(const struct cli_command *cmd, const char *arg, unsigned *flags);

/* The summary table of the run in dir (its trials.csv, repeats folded by results/aggregate):
 * one line per sweep point and plugin, then the timer line unless clk is NULL (a report of
 * a run done elsewhere). 0, or -1 with the reason printed. */
struct scenario;
struct lab_clock;
int cli_print_summary(const char *dir, const struct scenario *s, const struct lab_clock *clk);

enum cli_summary_format {
	CLI_SUMMARY_TEXT = 0, /* the table, winner lines, noise count (and, natively, the timer) */
	CLI_SUMMARY_JSON,     /* the same figures as one JSON object on stdout */
};

struct cli_summary_opts {
	const char *baseline; /* the plugin the relative column and winners compare with;
			       * NULL: the first plugin that is not null */
	enum cli_summary_format format;
};

/* cli_print_summary with options (o NULL: the defaults). clk may be NULL (no timer line). */
int cli_print_summary_as(const char *dir, const struct scenario *s, const struct lab_clock *clk,
			 const struct cli_summary_opts *o);

/* The same table as text into dir/summary.txt (what report.html shows): 0 or -errno. */
int cli_write_summary_file(const char *dir, const struct scenario *s,
			   const struct cli_summary_opts *o);

void cli_print_diags(const struct diag_list *d, const char *prefix);

/* The scenario of the run in dir (its scenario.ini), with the plugins loaded into reg as run
 * loads them; NULL with the reason printed. */
struct scenario *cli_load_run_scenario(const struct cli_common *c, const char *dir,
				       struct plugin_registry *reg);

/* dir/shard.txt (written by run --shard): 1 with its K/N and the sweep's total trials, 0 when
 * dir holds none (not a shard), -errno when it is unreadable or damaged. */
int cli_read_shard(const char *dir, unsigned *k, unsigned *n, size_t *total);

/* "iommulab CMD: DIR/shard.txt is damaged: ..." with what it should hold, on stderr. */
void cli_print_shard_damaged(const char *cmd, const char *dir);

int cmd_run(int argc, char **argv, struct cli_common *c);
int cmd_list(int argc, char **argv, struct cli_common *c);
int cmd_plot(int argc, char **argv, struct cli_common *c);
int cmd_verify(int argc, char **argv, struct cli_common *c);
int cmd_probe(int argc, char **argv, struct cli_common *c);
int cmd_calibrate(int argc, char **argv, struct cli_common *c);
int cmd_compare(int argc, char **argv, struct cli_common *c);
int cmd_merge(int argc, char **argv, struct cli_common *c);
int cmd_report(int argc, char **argv, struct cli_common *c);
int cmd_help(int argc, char **argv, struct cli_common *c);

#endif /* IOMMULAB_CLI_H */
