/* SPDX-License-Identifier: MIT */
/*
 * iommulab compare end to end: short sim runs of the quickstart scenario, compared with a
 * copy under another seed (no significant difference) and with one whose think time is
 * longer (slower, p < 0.05); too few repeats, points only one run has, and the bad input
 * that must exit 2 with its reason (missing dir, a damaged trials.csv with file:line, an
 * unknown metric naming the available ones, runs on different x axes or workloads); and the
 * latency distributions of histograms.csv: none changed between runs of one scenario, biglock
 * slower with a slower CMD_SYNC, results without the file compared on their means, a cut or
 * foreign file refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_harness.h"

static void make_tmp(void)
{
	cli_make_tmp("compare");
}

TestSuite(compare, .init = make_tmp, .fini = cli_remove_tmp);

/* Run iommulab with argv (NULL-terminated), stdout and stderr to tmp/out.txt and tmp/err.txt. */
static int run(char *const argv[])
{
	char out[300], err[300];

	snprintf(out, sizeof(out), "%s/out.txt", tmp);
	snprintf(err, sizeof(err), "%s/err.txt", tmp);
	return cli_run_to(argv, NULL, out, err);
}

/*
 * A short sim run of the quickstart (null and biglock at 1 and 2 CPUs) into tmp/name, with
 * up to two more --set. The sim's think-time jitter makes repeats differ, so the test has
 * something to rank.
 */
static void sim_run(const char *name, const char *repeats, const char *set1, const char *set2)
{
	char out[300], rep[64];
	char *argv[24];
	int n = 0;

	snprintf(out, sizeof(out), "%s/%s", tmp, name);
	snprintf(rep, sizeof(rep), "scenario.repeats=%s", repeats);
	argv[n++] = "iommulab";
	argv[n++] = "run";
	argv[n++] = CONFIGS "/quickstart.ini";
	argv[n++] = "--set";
	argv[n++] = "scenario.engine=sim";
	argv[n++] = "--set";
	argv[n++] = "scenario.duration_ms=5";
	argv[n++] = "--set";
	argv[n++] = "scenario.warmup_ms=1";
	argv[n++] = "--set";
	argv[n++] = rep;
	argv[n++] = "-j";
	argv[n++] = "2";
	if (set1) {
		argv[n++] = "--set";
		argv[n++] = (char *)set1;
	}
	if (set2) {
		argv[n++] = "--set";
		argv[n++] = (char *)set2;
	}
	argv[n++] = "--out";
	argv[n++] = out;
	argv[n] = NULL;
	cr_assert_eq(run(argv), 0, "run %s failed: %s", name, cli_slurp("err.txt"));
}

static int compare(const char *a, const char *b, const char *opt, const char *val)
{
	char pa[300], pb[300];
	char *argv[] = { "iommulab", "compare", pa, pb, (char *)opt, (char *)val, NULL };

	snprintf(pa, sizeof(pa), "%s/%s", tmp, a);
	snprintf(pb, sizeof(pb), "%s/%s", tmp, b);
	return run(argv);
}

/*
 * The first line of the last output, from the text from on, that starts with plugin and holds
 * "scenario.cpus=CPUS " and extra (NULL: nothing more); a failed assertion if none does.
 */
static const char *find_line(const char *from, const char *plugin, const char *cpus,
			     const char *extra)
{
	static char line[512];
	char want[128];
	const char *s = from;

	snprintf(want, sizeof(want), "scenario.cpus=%s ", cpus);
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		if (len < sizeof(line)) {
			memcpy(line, s, len);
			line[len] = '\0';
			if (!strncmp(line, plugin, strlen(plugin)) && line[strlen(plugin)] == ' ' &&
			    strstr(line, want) && (!extra || strstr(line, extra)))
				return line;
		}
		s = nl ? nl + 1 : NULL;
	}
	cr_assert_fail("no line for %s at %s CPUs%s%s in:\n%s", plugin, cpus, extra ? " with " : "",
		       extra ? extra : "", cli_slurp("out.txt"));
	return NULL;
}

/* The table line of plugin at scenario.cpus=cpus in the last output. */
static const char *line_of(const char *plugin, const char *cpus)
{
	return find_line(cli_slurp("out.txt"), plugin, cpus, NULL);
}

/* The p value printed in a table line. */
static double p_of(const char *line)
{
	const char *p = strstr(line, "p=");

	cr_assert_not_null(p, "no p value in '%s'", line);
	return atof(p + 2);
}

Test(compare, same_scenario_no_difference_slower_think_time_slower, .timeout = 300)
{
	const char *l;

	sim_run("a", "5", NULL, NULL);
	sim_run("a2", "5", "scenario.seed=7", NULL);
	sim_run("slow", "5", "workload.cmdq.think_ns=1500", NULL);

	/* Same scenario, other seed: nothing differs significantly. The sim is exact for a
	 * seed (whatever -j), so this is the same verdict on every run, not a 5% gamble. */
	cr_assert_eq(compare("a", "a2", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	for (const char *const *cpus = (const char *const[]){ "1", "2", NULL }; *cpus; cpus++) {
		l = line_of("biglock", *cpus);
		cr_assert(strstr(l, "no significant difference"), "%s", l);
		cr_assert_geq(p_of(l), 0.05, "%s", l);
	}
	cr_assert(strstr(cli_slurp("out.txt"), "scenario.seed = 1 in A, 7 in B"), "%s",
		  cli_slurp("out.txt"));

	/* 1.5 us of think time instead of 1: fewer ops per second, every point. */
	cr_assert_eq(compare("a", "slow", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	l = line_of("biglock", "1");
	cr_assert(strstr(l, "slower"), "%s", l);
	cr_assert_lt(p_of(l), 0.05, "%s", l);
	cr_assert(strstr(l, "(exact)"), "5 against 5 without ties is exact: %s", l);
	cr_assert(strstr(cli_slurp("out.txt"), "biglock at scenario.cpus=1: ran "), "%s",
		  cli_slurp("out.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "times slower in B (p = "), "%s",
		  cli_slurp("out.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "workload.cmdq.think_ns = 1000 in A, 1500 in B"));

	/* The other way round, B is faster; and the same on a latency: lower is better. */
	cr_assert_eq(compare("slow", "a", NULL, NULL), 0);
	cr_assert(strstr(line_of("biglock", "1"), "faster"), "%s", line_of("biglock", "1"));
	cr_assert_eq(compare("a", "slow", "--metric", "op_p50_ns"), 0, "%s", cli_slurp("err.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "metric op_p50_ns (lower is better)"));
}

Test(compare, too_few_repeats_and_points_in_one_run, .timeout = 300)
{
	const char *l;

	sim_run("a", "3", NULL, NULL);
	sim_run("one", "1", "plugins.cmdq=null,mcs", "sweep.cpus=1,2,4");
	cr_assert_eq(compare("a", "one", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	l = line_of("null", "1");
	cr_assert(strstr(l, "too few repeats"), "%s", l);
	cr_assert(strstr(l, "(n=1)"), "%s", l);
	cr_assert_null(strstr(l, "p="), "no p value with one repeat: %s", l);
	cr_assert(strstr(cli_slurp("out.txt"), "only in A: biglock at scenario.cpus=1\n"), "%s",
		  cli_slurp("out.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "only in B: mcs at scenario.cpus=4\n"), "%s",
		  cli_slurp("out.txt"));
	/* B's [plugin.mcs] keys, which A does not have, are named in the note. */
	cr_assert(strstr(cli_slurp("out.txt"), "plugin.mcs.leader_batch = (absent) in A, 1 in B"),
		  "%s", cli_slurp("out.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "only in B: null at scenario.cpus=4\n"), "%s",
		  cli_slurp("out.txt"));
}

Test(compare, bad_input_exits_2_with_the_reason, .timeout = 300)
{
	char cmd[1024];

	sim_run("a", "2", NULL, NULL);

	cr_assert_eq(compare("a", "missing", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "/missing (B): no such directory"), "%s",
		  cli_slurp("err.txt"));

	cr_assert_eq(compare("a", "a", "--metric", "bogus"), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "unknown metric 'bogus'"), "%s",
		  cli_slurp("err.txt"));
	cr_assert(strstr(cli_slurp("err.txt"), " op_p99_ns,"), "%s", cli_slurp("err.txt"));
	cr_assert_eq(compare("a", "a", "--alpha", "1.5"), 2);

	/* A damaged number in an ok row (line 3: the second trial), then a short row. */
	snprintf(cmd, sizeof(cmd),
		 "cp -r '%s/a' '%s/bad' && awk -F, -v OFS=, 'NR == 3 { $13 = \"12x\" } 1' "
		 "'%s/a/trials.csv' > '%s/bad/trials.csv'",
		 tmp, tmp, tmp, tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(compare("a", "bad", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"),
			 "/bad/trials.csv:3: ops_per_sec '12x' is not a number"),
		  "%s", cli_slurp("err.txt"));
	snprintf(cmd, sizeof(cmd), "echo '9,9,9' >> '%s/bad/trials.csv'", tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(compare("bad", "a", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "/bad/trials.csv:"), "%s", cli_slurp("err.txt"));

	/* Another x axis, another workload: refused. */
	sim_run("axes", "2", "sweep.workload.cmdq.cmds_per_sync=1,4", NULL);
	cr_assert_eq(compare("a", "axes", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "different x axes"), "%s", cli_slurp("err.txt"));
	sim_run("iova", "2", "scenario.workload=iova", "plugins.iova=depotless");
	cr_assert_eq(compare("a", "iova", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "(workload cmdq) with"), "%s", cli_slurp("err.txt"));
}

/* The distributions table's line of plugin's op latency at scenario.cpus=cpus. */
static const char *dist_line_of(const char *plugin, const char *cpus)
{
	const char *s = strstr(cli_slurp("out.txt"), "\nlatency distributions");

	cr_assert_not_null(s, "no distributions table in:\n%s", cli_slurp("out.txt"));
	return find_line(s, plugin, cpus, " op ");
}

Test(compare, latency_distributions_from_histograms_csv, .timeout = 300)
{
	char cmd[1024];
	const char *l;

	sim_run("a", "3", NULL, NULL);
	sim_run("same", "3", NULL, NULL);
	sim_run("seed", "3", "scenario.seed=7", NULL);
	/* A slower CMD_SYNC: biglock's every op waits for one, null never touches the device. */
	sim_run("slow", "3", "smmu.sync_ns=800", NULL);

	/* The sim is exact for a seed: the same run twice is the same histograms, byte for byte. */
	snprintf(cmd, sizeof(cmd), "cmp -s '%s/a/histograms.csv' '%s/same/histograms.csv'", tmp,
		 tmp);
	cr_assert_eq(system(cmd), 0, "two runs of one sim scenario wrote other histograms");
	cr_assert_eq(compare("a", "same", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	for (const char *const *cpus = (const char *const[]){ "1", "2", NULL }; *cpus; cpus++) {
		l = dist_line_of("biglock", *cpus);
		cr_assert(strstr(l, " 0.500 ") && strstr(l, "p=1") &&
				  strstr(l, "no significant difference"),
			  "%s", l);
	}
	cr_assert(strstr(cli_slurp("out.txt"), "two-sided Mann-Whitney U of the bucketed values"));
	cr_assert(strstr(cli_slurp("out.txt"), "distributions: 4 compared: 0 slower in B, 0 "
					       "faster in B"),
		  "%s", cli_slurp("out.txt"));

	/* Another seed: other ops, the same distribution; no change is named. */
	cr_assert_eq(compare("a", "seed", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	for (const char *const *cpus = (const char *const[]){ "1", "2", NULL }; *cpus; cpus++) {
		l = dist_line_of("biglock", *cpus);
		cr_assert_null(strstr(l, "slower"), "%s", l);
		cr_assert_null(strstr(l, "faster"), "%s", l);
	}

	/* The slower device: biglock's latencies are higher at every point, null's the same. */
	cr_assert_eq(compare("a", "slow", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	for (const char *const *cpus = (const char *const[]){ "1", "2", NULL }; *cpus; cpus++) {
		l = dist_line_of("biglock", *cpus);
		cr_assert(strstr(l, "slower"), "%s", l);
		cr_assert_lt(p_of(l), 0.05, "%s", l);
		cr_assert(strstr(dist_line_of("null", *cpus), "no significant difference"), "%s",
			  dist_line_of("null", *cpus));
	}
	cr_assert(strstr(cli_slurp("out.txt"), "distributions: 4 compared: 2 slower in B, 0 "
					       "faster in B"),
		  "%s", cli_slurp("out.txt"));
	cr_assert_eq(compare("slow", "a", NULL, NULL), 0);
	cr_assert(strstr(dist_line_of("biglock", "1"), "faster"), "%s",
		  dist_line_of("biglock", "1"));

	/* Older results without histograms.csv: said once, the means compared as before. */
	snprintf(cmd, sizeof(cmd), "cp -r '%s/a' '%s/old' && rm '%s/old/histograms.csv'", tmp, tmp,
		 tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(compare("a", "old", NULL, NULL), 0, "%s", cli_slurp("err.txt"));
	cr_assert(strstr(cli_slurp("out.txt"), "B (") &&
			  strstr(cli_slurp("out.txt"), "/old) has no histograms.csv"),
		  "%s", cli_slurp("out.txt"));
	cr_assert_null(strstr(cli_slurp("out.txt"), "latency distributions"));
	cr_assert(strstr(line_of("biglock", "1"), "no significant difference"));

	/* Cut short in its last line, or of another version: exit 2, with the line and why. */
	snprintf(cmd, sizeof(cmd),
		 "cp -r '%s/a' '%s/cut' && head -c -9 '%s/a/histograms.csv' > "
		 "'%s/cut/histograms.csv'",
		 tmp, tmp, tmp, tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(compare("a", "cut", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "/cut/histograms.csv:14: the last line has no "
					       "newline"),
		  "%s", cli_slurp("err.txt"));
	snprintf(cmd, sizeof(cmd), "sed -i '1s/v1/v2/' '%s/cut/histograms.csv'", tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(compare("cut", "a", NULL, NULL), 2);
	cr_assert(strstr(cli_slurp("err.txt"), "/cut/histograms.csv:1: '# iommulab histograms "
					       "v2': this iommulab reads version 1"),
		  "%s", cli_slurp("err.txt"));
}
