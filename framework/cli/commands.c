/* SPDX-License-Identifier: MIT */
/*
 * The table of commands: one entry per command with everything the command line says about
 * it (usage, summary, help, options, exit statuses). main.c dispatches through it, each
 * command parses its options from it and `iommulab help [CMD]` prints it, so the usage a
 * command prints and the one the overview lists cannot disagree.
 */
#include <string.h>

#include "cli/cli.h"

const struct cli_command cli_commands[] = {
    {
	.name = "run",
	.fn = cmd_run,
	.usage = "run SCENARIO.ini [--set SECTION.KEY=VALUE]... [--out DIR] [-j N] [--shard K/N]\n"
		 "    [--plots all] [--dry-run] [--baseline PLUGIN] [--format text|json]\n"
		 "run --resume RESULTS_DIR [-j N]",
	.summary = "run every trial of a scenario; results, summary and graphs go to "
		   "results/<name>-<time>/ (or DIR)",
	.help = "Load SCENARIO.ini, check it and every plugin it names, run each trial of\n"
		"its sweep, print the summary table and render the graphs. Ctrl-C finishes\n"
		"the trials in progress and keeps the finished ones (twice: stop them now).\n"
		"-j N runs up to N sim trials at once, each in its own process; a native\n"
		"trial always runs alone. trials.csv is the same whatever N.\n"
		"--shard K/N runs only trial i with i mod N = K (a job array's task, merged\n"
		"back with `iommulab merge`).\n"
		"--resume finishes an interrupted run without redoing its finished trials;\n"
		"it refuses when RESULTS_DIR/scenario.ini or the plugins changed since.",
	.opts =
	    {
		[RUN_OPT_SET] = {"set", 0, "SECTION.KEY=VALUE",
				 "override a scenario key, checked like the file (repeat "
				 "for more; a bare KEY is [scenario] KEY, plugin.NAME.KEY "
				 "a plugin's, plugins.cmdq=A,B a list, sweep.KEY=V1,V2 an "
				 "axis; a set swept key runs that one value)"},
		[RUN_OPT_OUT] = {"out", 0, "DIR",
				 "write the results to DIR instead of "
				 "results/<name>-<time>/"},
		[RUN_OPT_RESUME] = {"resume", 0, "RESULTS_DIR",
				    "finish the interrupted run in RESULTS_DIR (no "
				    "scenario, --set or --out with it)"},
		[RUN_OPT_JOBS] = {"jobs", 'j', "N",
				  "run up to N trials at once, each in its own process "
				  "(default: the online CPUs); native trials never run next "
				  "to another: each waits until nothing runs, and nothing "
				  "starts while it runs"},
		[RUN_OPT_SHARD] = {"shard", 0, "K/N",
				   "run only the trials of shard K of N (0 <= K < N: trial i is "
				   "in shard i mod N, so $SLURM_ARRAY_TASK_ID goes straight in); "
				   "the shard and the total are written to shard.txt"},
		[RUN_OPT_PLOTS] = {"plots", 0, "default|all",
				   "which graphs to draw: default (latency, throughput, "
				   "phases) or all (a graph per counter too)"},
		[RUN_OPT_DRY_RUN] = {"dry-run", 0, NULL,
				     "print the plan (every trial, its engine and the "
				     "estimated time) and exit 0 without measuring"},
		[RUN_OPT_FORMAT] = {"format", 0, "text|json",
				    "the summary as a table (text, the default) or as one "
				    "JSON object on stdout (json; the rest goes to stderr)"},
		[RUN_OPT_BASELINE] = {"baseline", 0, "PLUGIN",
				      "compare every plugin's ops/s with PLUGIN's at the same "
				      "point (default: the first plugin that is not null)"},
	    },
	.n_opts = RUN_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "every trial ran and passed"},
		{EXIT_TRIALS_FAILED, "the run happened; some trials failed (see the error "
				     "column of trials.csv)"},
		{EXIT_USAGE, "bad input (command line, scenario or plugin: nothing was run)"},
		{EXIT_INTERRUPTED, "interrupted (finished trials are kept)"},
	    },
    },
    {
	.name = "merge",
	.fn = cmd_merge,
	.usage = "merge OUT_DIR RESULTS_DIR... [--partial]",
	.summary = "merge the shards of a sweep (run --shard K/N) into one results dir, as the "
		   "unsharded run would have written it",
	.help = "Check that every RESULTS_DIR ran the same resolved scenario (scenario.ini)\n"
		"with the same plugin builds (plugins.txt, the iommulab version), take the\n"
		"union of their trials.csv columns, order the rows by trial number as the\n"
		"unsharded run does, and write OUT_DIR: trials.csv, summary.json, the graphs\n"
		"and the summary table. A trial in two dirs is refused; a trial in none is an\n"
		"error naming it unless --partial.",
	.opts =
	    {
		[MERGE_OPT_PARTIAL] = {"partial", 0, NULL,
				       "merge even when trials are missing (they are named "
				       "in a warning; `run --resume OUT_DIR` runs them)"},
	    },
	.n_opts = MERGE_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "merged, every trial ok"},
		{EXIT_TRIALS_FAILED, "merged; some trials failed (see the error column)"},
		{EXIT_USAGE, "bad input (command line, a dir that is not a run, runs that "
			     "differ, trials missing or in two dirs: nothing was written)"},
	    },
    },
    {
	.name = "report",
	.fn = cmd_report,
	.usage = "report RESULTS_DIR",
	.summary = "print the summary table of a finished, merged or resumed run again",
	.help = "Read RESULTS_DIR/scenario.ini and trials.csv and print the summary table\n"
		"`iommulab run` printed at its end, and how many of the scenario's trials\n"
		"the dir holds (a shard, an interrupted run).",
	.n_opts = 0,
	.exits =
	    {
		{EXIT_OK, "printed"},
		{EXIT_USAGE, "bad input (command line, a missing or damaged scenario.ini or "
			     "trials.csv)"},
	    },
    },
    {
	.name = "list",
	.fn = cmd_list,
	.usage = "list [--params] [FILE.so...]",
	.summary = "the plugins found, with kind, version and summary; --params adds every "
		   "parameter table",
	.help = "List every plugin found (--plugin, --plugin-dir, $IOMMULAB_PLUGIN_PATH,\n"
		"the built-in directory) and every file refused, with the reason. A FILE.so\n"
		"named here must load.",
	.opts =
	    {
		[LIST_OPT_PARAMS] = {"params", 0, NULL,
				     "add every parameter table: the framework's scenario "
				     "keys and each plugin's"},
	    },
	.n_opts = LIST_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "listed"},
		{EXIT_USAGE, "bad input (command line, or a FILE.so named that does not load)"},
	    },
    },
    {
	.name = "plot",
	.fn = cmd_plot,
	.usage = "plot RESULTS_DIR [--plots all]",
	.summary = "render the graphs and report.html of an earlier run again from its "
		   "trials.csv",
	.help = "Render RESULTS_DIR/plots/ again from RESULTS_DIR/trials.csv (gnuplot; without\n"
		"it the .dat and .gp files are written and the command says how to render\n"
		"them), and write RESULTS_DIR/report.html.",
	.opts =
	    {
		[PLOT_OPT_PLOTS] = {"plots", 0, "default|all",
				    "which graphs to draw: default (latency, throughput, "
				    "phases) or all (a graph per counter too)"},
	    },
	.n_opts = PLOT_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "rendered (or written for rendering later)"},
		{EXIT_USAGE, "bad input (command line, or a missing or damaged trials.csv)"},
	    },
    },
    {
	.name = "verify",
	.fn = cmd_verify,
	.usage = "verify PLUGIN.so|NAME [--set SECTION.KEY=VALUE]... [--seed N] "
		 "[--engine native|sim] [-j N]",
	.summary = "run the conformance checks on a cmdq or iova plugin; exit 0 only if all "
		   "pass",
	.help = "cmdq: the oracle over a grid of hostile configurations (tiny queues to force\n"
		"wrap and queue-full, MSI on and off, one and several commands per sync, 1\n"
		"and 2 CPUs natively; 4, 16 and 64 on the sim, each unperturbed and under\n"
		"seeded schedule perturbations). iova: every check of the conformance suite.\n"
		"Prints pass or fail per check with every failing configuration.",
	.opts =
	    {
		[VERIFY_OPT_SET] = {"set", 0, "SECTION.KEY=VALUE",
				    "set a key as `run --set` does (NAME.KEY or "
				    "plugin.NAME.KEY for the plugin's own); the grid's keys "
				    "are the grid's"},
		[VERIFY_OPT_SEED] = {"seed", 0, "N",
				     "run the sim part under the perturbation of seed N only "
				     "(a counterexample's seed=N: replays it exactly)"},
		[VERIFY_OPT_ENGINE] = {"engine", 0, "native|sim",
				       "run that engine's part of the grid alone (cmdq; "
				       "default both): native for a ThreadSanitizer build, "
				       "sim for the many-CPU and weak-memory points"},
		[VERIFY_OPT_JOBS] = {"jobs", 'j', "N",
				     "run up to N sim trials at once, each in its own process "
				     "(default: the online CPUs); a native trial runs alone. "
				     "The verdicts and their order are the same whatever N"},
	    },
	.n_opts = VERIFY_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "every check passed"},
		{EXIT_TRIALS_FAILED, "some check failed"},
		{EXIT_USAGE, "bad input (command line, --set or plugin)"},
	    },
    },
    {
	.name = "probe",
	.fn = cmd_probe,
	.usage = "probe [--out FILE.csv] [--cpus N] [--rounds N] [--matrix transfer|pingpong]",
	.summary = "measure this machine (core-to-core latency of every CPU pair, atomics, the "
		   "timer) and write a topology file for the sim",
	.help = "Measure the core-to-core latency of every pair of allowed CPUs, uncontended\n"
		"and contended atomics and the timer, print them and write a topology file\n"
		"the sim loads as [machine] topology.",
	.opts =
	    {
		[PROBE_OPT_OUT] = {"out", 0, "FILE.csv",
				   "the topology file to write (default: probe-<host>.csv)"},
		[PROBE_OPT_CPUS] = {"cpus", 0, "N", "measure at most N CPUs (N >= 2)"},
		[PROBE_OPT_ROUNDS] = {"rounds", 0, "N", "measurement rounds per pair (N >= 1)"},
		[PROBE_OPT_MATRIX] = {"matrix", 0, "transfer|pingpong",
				      "what the topology file holds: one isolated miss "
				      "served from the other core's cache (transfer, the "
				      "default: what the sim prices a miss at) or the CAS "
				      "ping-pong one-way latency (as configs/topologies/ were "
				      "measured); both are printed"},
	    },
	.n_opts = PROBE_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "measured and written"},
		{EXIT_TRIALS_FAILED, "the measurement failed"},
		{EXIT_USAGE,
		 "bad input (command line, fewer than 2 CPUs, or the file cannot be written)"},
	    },
    },
    {
	.name = "calibrate",
	.fn = cmd_calibrate,
	.usage = "calibrate RESULTS_DIR DATA.csv [--tolerance PCT]",
	.summary = "compare a micro-workload run with measured ns per op, point by point; "
		   "exit 0 only if all within PCT%",
	.help = "Compare a run of the micro workload with the same primitives measured on a\n"
		"machine: per op and CPU count, the run's per-thread ns per op (cpus /\n"
		"ops_per_sec), the measured Nanos/Op and the relative error (run - measured)\n"
		"/ measured. The table also goes to RESULTS_DIR/calibration.csv. Points with\n"
		"2 or more CPUs are judged against PCT percent; 1 CPU is shown only\n"
		"(atomic_ns is set from it). DATA is a concurrency-hierarchy-bench CSV,\n"
		"lockhammer rows (one host and -c/-p per file), folly SmallLocksBenchmark\n"
		"output (one CPU per file) or mctop lock results (the no_backoff rows), told\n"
		"apart by content (README \"Engines\" maps each one's names to the micro\n"
		"ops). For example:\n"
		"  iommulab run configs/calibrate-graviton2.ini --out results/cal\n"
		"  iommulab calibrate results/cal configs/calibration/graviton2-atomics.csv",
	.opts =
	    {
		[CALIBRATE_OPT_TOLERANCE] = {"tolerance", 0, "PCT",
					     "the largest error in percent a judged "
					     "point may have (default 25)"},
	    },
	.n_opts = CALIBRATE_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "every judged point within the tolerance"},
		{EXIT_TRIALS_FAILED, "some judged point misses"},
		{EXIT_USAGE, "bad input (command line, results dir or data file)"},
	    },
    },
    {
	.name = "compare",
	.fn = cmd_compare,
	.usage = "compare A B [--metric COL] [--alpha P]",
	.summary = "two results directories point by point: means, the ratio B/A and a "
		   "Mann-Whitney U test per plugin and sweep point",
	.help = "For every (plugin, sweep point) both runs have: the mean and 95% CI of the\n"
		"metric over the ok repeats in A and in B, the ratio B/A with its 95% interval\n"
		"(delta method) and a two-sided Mann-Whitney U test (exact for small samples\n"
		"without ties, the normal approximation with tie correction otherwise), and a\n"
		"verdict: faster, slower or no significant difference at alpha, or \"too few\n"
		"repeats\" when a side has fewer than 2. The significant ones are then told as\n"
		"\"cmpxchg at scenario.cpus=2: ran 1.52 +/- 0.03 times faster in B\". Points and\n"
		"plugins only one run has are listed as such. Runs of different workloads or\n"
		"over different sweep keys are refused; a different engine, machine or other key\n"
		"is allowed and noted above the table. For example:\n"
		"  iommulab run configs/quickstart.ini --out results/a\n"
		"  iommulab run configs/quickstart.ini --set workload.cmdq.think_ns=2000 --out "
		"results/b\n"
		"  iommulab compare results/a results/b",
	.opts =
	    {
		[COMPARE_OPT_METRIC] = {"metric", 0, "COL",
					"the trials.csv column to compare (default "
					"ops_per_sec; e.g. op_p99_ns, lower is better)"},
		[COMPARE_OPT_ALPHA] = {"alpha", 0, "P",
				       "the significance level of the test (default 0.05)"},
	    },
	.n_opts = COMPARE_N_OPTS,
	.exits =
	    {
		{EXIT_OK, "compared (whatever the verdicts)"},
		{EXIT_USAGE, "bad input (command line, a missing or damaged results dir, an "
			     "unknown metric, or runs that cannot be compared)"},
	    },
    },
    {
	.name = "help",
	.fn = cmd_help,
	.usage = "help [COMMAND]",
	.summary = "the commands (this list), or one command's usage, options and exit "
		   "status",
	.help = "Without COMMAND, list the commands; with it, print its usage, options and\n"
		"exit statuses (as `iommulab COMMAND --help` does).",
	.n_opts = 0,
	.exits =
	    {
		{EXIT_OK, "printed"},
		{EXIT_USAGE, "bad input (no such command)"},
	    },
    },
};

const size_t cli_n_commands = sizeof(cli_commands) / sizeof(cli_commands[0]);

const struct cli_command cli_global = {
    .name = "iommulab",
    .usage = "[--plugin-dir DIR]... [--plugin FILE.so]... COMMAND [ARGS]",
    .summary = "an arena for SMMUv3 command-queue strategies and IOVA cache policies",
    .help = "Plugins are searched in --plugin files, --plugin-dir directories, then\n"
	    "$IOMMULAB_PLUGIN_PATH (colon-separated), then the built-in directory.",
    .opts =
	{
	    [GLOBAL_OPT_PLUGIN_DIR] = {"plugin-dir", 0, "DIR",
				       "search DIR for <kind>-<name>.so plugins (repeat for "
				       "more; searched in order)"},
	    [GLOBAL_OPT_PLUGIN] = {"plugin", 0, "FILE.so",
				   "load this plugin file (repeat for "
				   "more)"},
	    [GLOBAL_OPT_VERSION] = {"version", 0, NULL,
				    "print the version and the plugin ABI and exit"},
	},
    .n_opts = GLOBAL_N_OPTS,
    .exits =
	{
	    {EXIT_OK, "all good"},
	    {EXIT_TRIALS_FAILED, "the run happened but some trials (or verify checks, or "
				 "calibration points) failed"},
	    {EXIT_USAGE, "bad input (command line, scenario, plugin, data file)"},
	    {EXIT_INTERRUPTED, "interrupted (finished trials are kept)"},
	},
};

const struct cli_command *cli_find_command(const char *name)
{
	for (size_t i = 0; i < cli_n_commands; i++)
		if (!strcmp(cli_commands[i].name, name))
			return &cli_commands[i];
	return NULL;
}

/* iommulab help [COMMAND]: the overview, or one command's help. */
int cmd_help(int argc, char **argv, struct cli_common *c)
{
	struct cli_parser p;
	const struct cli_command *cmd;
	int o;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		;
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (optind == argc) {
		cli_print_overview(stdout);
		return EXIT_OK;
	}
	if (optind + 1 < argc)
		return cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind + 1]);
	cmd = cli_find_command(argv[optind]);
	if (!cmd)
		return cli_usage_error(c->cmd, "unknown command '%s'", argv[optind]);
	cli_print_help(stdout, cmd);
	return EXIT_OK;
}
