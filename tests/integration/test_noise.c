/* SPDX-License-Identifier: MIT */
/*
 * The noise check, the summary's output forms and the run's records end to end: a 1-CPU
 * native run beside a CPU hog pinned on the same core is noisy, and the summary says how
 * many; the same run alone is not; --dry-run measures nothing; --format json is JSON alone on
 * stdout; one repeat gives no interval; plugins.txt's sha256 is the file's.
 *
 * Determinism: the run and the hog are pinned (taskset) to one CPU, so the hog takes half of
 * the trial's core whatever else the machine does. The quiet run must not be flagged by
 * other people's load on a busy 2-core machine: with the kernel's autogroup scheduling, nice
 * only works within a session, so the test runs iommulab in a session of its own with the
 * autogroup's nice at -10 (where it may: root, or CAP_SYS_NICE), which puts it ahead of every
 * other session, and gives the quiet run three attempts (each genuinely noisy attempt is the
 * check working, not a flake). The hog shares that session, and so still half the core.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/sha256.h"

#include "cli_harness.h"

static void make_tmp(void)
{
	cli_make_tmp("noise");
}

TestSuite(noise, .init = make_tmp, .fini = cli_remove_tmp);

/* The first CPU this process may run on: where the trial and the hog share a core. */
static int first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return 0;
}

/*
 * A native biglock run of cpus CPUs (2 repeats of 300 ms; 2 CPUs oversubscribe the one core)
 * into tmp/DIR, pinned to one CPU in its own session, with a busy-looping hog pinned beside it
 * when hog; stdout, stderr to DIR.out/.err.
 */
static int pinned_run_cpus(const char *dir, bool hog, int cpus)
{
	char cmd[2048], start_hog[256] = "";
	int cpu = first_cpu();

	/* The hog is started and given a moment before the run, and killed after it. */
	if (hog)
		snprintf(start_hog, sizeof(start_hog),
			 "taskset -c %d sh -c \"while :; do :; done\" & hog=$!; sleep 0.2; ", cpu);
	snprintf(cmd, sizeof(cmd),
		 "setsid sh -c '"
		 "echo -10 > /proc/self/autogroup 2>/dev/null; %s"
		 "taskset -c %d %s run %s/quickstart.ini --set sweep.cpus=%d --set "
		 "plugins.cmdq=biglock --set scenario.oversubscribe=%s "
		 "--set scenario.duration_ms=300 --set scenario.warmup_ms=50 "
		 "--set scenario.repeats=2 --out %s/%s > %s/%s.out 2> %s/%s.err; rc=$?; %s"
		 "exit $rc'",
		 start_hog, cpu, EXE, CONFIGS, cpus, cpus > 1 ? "allow" : "refuse", tmp, dir, tmp,
		 dir, tmp, dir, hog ? "kill $hog; " : "");
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int pinned_run(const char *dir, bool hog)
{
	return pinned_run_cpus(dir, hog, 1);
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

Test(noise, a_hog_on_the_trials_core_makes_it_noisy, .timeout = 120)
{
	int rc = pinned_run("hog", true);
	char *err = cli_slurp("hog.err");

	cr_assert_eq(rc, 0, "noisy trials are measured: the run succeeds\n%s", err);
	cr_assert_eq(count(err, "iommulab: warning: trial"), 1, "warned once:\n%s", err);
	cr_assert_not_null(strstr(err, "is noisy: cpu0's thread was descheduled"), "%s", err);
	char *out = cli_slurp("hog.out");
	cr_assert_not_null(strstr(out, "2 of 2 trials were noisy"), "%s", out);
	cr_assert_not_null(strstr(out, "2 of 2 noisy"), "the row's status:\n%s", out);
	char *csv = cli_slurp("hog/trials.csv");
	cr_assert_eq(count(csv, ",noisy,"), 2, "%s", csv);
	cr_assert_eq(count(csv, "\"noisy: cpu0's thread was descheduled"), 2, "%s", csv);
	char *json = cli_slurp("hog/summary.json");
	cr_assert_not_null(strstr(json, "\"ok\": 0, \"noisy\": 2, \"failed\": 0"), "%s", json);
}

Test(noise, a_quiet_run_flags_none, .timeout = 180)
{
	char dir[32], name[64];
	int attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		snprintf(dir, sizeof(dir), "quiet%d", attempt);
		cr_assert_eq(pinned_run(dir, false), 0, "%s", cli_slurp("quiet0.err"));
		snprintf(name, sizeof(name), "%s/trials.csv", dir);
		if (!count(cli_slurp(name), ",noisy,"))
			break;
	}
	cr_assert_lt(attempt, 3, "three quiet runs, each noisy:\n%s", cli_slurp(name));
	snprintf(name, sizeof(name), "%s.out", dir);
	char *out = cli_slurp(name);
	cr_assert_null(strstr(out, "noisy"), "%s", out);
	cr_assert_not_null(strstr(out, "timer: "), "a native run names its timer:\n%s", out);
	snprintf(name, sizeof(name), "%s.err", dir);
	cr_assert_null(strstr(cli_slurp(name), "warning"), "%s", cli_slurp(name));
	snprintf(name, sizeof(name), "%s/machine.txt", dir);
	char *m = cli_slurp(name);
	cr_assert_not_null(strstr(m, "\ncpu model: "), "%s", m);
	cr_assert_not_null(strstr(m, "\ncpufreq governor: "), "%s", m);
	cr_assert_not_null(strstr(m, "\nload: "), "%s", m);
	cr_assert_not_null(strstr(m, "\nsteal: "), "%s", m);
	cr_assert_not_null(strstr(m, ", build: "), "%s", m);

	/* plugins.txt: the .so that ran, by path and sha256. */
	snprintf(name, sizeof(name), "%s/plugins.txt", dir);
	char *pl = cli_slurp(name), path[4096], want[80], hex[SHA256_HEX_LEN];
	cr_assert_eq(sscanf(strstr(pl, "  path: ") + 8, "%4095s", path), 1, "%s", pl);
	cr_assert_not_null(strstr(path, "cmdq-biglock.so"), "%s", path);
	cr_assert_eq(sha256_file_hex(path, hex), 0);
	snprintf(want, sizeof(want), "  sha256: %s\n", hex);
	cr_assert_not_null(strstr(pl, want), "%s lacks %s", pl, want);
}

/*
 * 2 CPUs on one core by the scenario's choice (oversubscribe = allow): each thread is off the
 * core half its window by its sibling, which is not the host's doing. Alone the run is judged
 * on the half core each was left (three attempts, as the quiet run's), and never blames one
 * thread; with a hog beside them the two get two thirds of the core where the scenario left
 * them all of it, and the verdict is the shared one.
 */
Test(noise, an_oversubscribed_run_is_judged_on_its_own_share, .timeout = 180)
{
	char dir[32], name[64];
	int attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		snprintf(dir, sizeof(dir), "over%d", attempt);
		cr_assert_eq(pinned_run_cpus(dir, false, 2), 0, "%s", cli_slurp("over0.err"));
		snprintf(name, sizeof(name), "%s/trials.csv", dir);
		if (!count(cli_slurp(name), ",noisy,"))
			break;
	}
	cr_assert_lt(attempt, 3, "three runs alone, each noisy:\n%s", cli_slurp(name));
	char *csv = cli_slurp(name);
	cr_assert_eq(count(csv, ",ok,"), 2, "%s", csv);
	cr_assert_null(strstr(csv, "thread was descheduled"), "%s", csv);

	cr_assert_eq(pinned_run_cpus("overhog", true, 2), 0, "%s", cli_slurp("overhog.err"));
	csv = cli_slurp("overhog/trials.csv");
	cr_assert_eq(count(csv, ",noisy,"), 2, "%s", csv);
	cr_assert_eq(count(csv, "\"noisy: its 2 CPUs' threads, sharing the cores by the "
				"scenario's choice (0.50 of a core each), lost "),
		     2, "%s", csv);
}

/* Run argv with stdout, stderr to tmp/NAME.out and .err; the exit status. */
static int run(const char *name, char *const argv[])
{
	char out[400], err[400];
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		snprintf(out, sizeof(out), "%s/%s.out", tmp, name);
		snprintf(err, sizeof(err), "%s/%s.err", tmp, name);
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		execv(EXE, argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(noise, dry_run_prints_the_plan_and_measures_nothing, .timeout = 60)
{
	char dir[300];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/never", tmp);
	char *argv[] = { "iommulab", "run", CONFIGS "/quickstart.ini", "--dry-run", "--out",
			 dir,	     NULL };
	cr_assert_eq(run("dry", argv), 0, "%s", cli_slurp("dry.err"));
	char *out = cli_slurp("dry.out");
	cr_assert_not_null(strstr(out, "plan: " CONFIGS "/quickstart.ini (workload cmdq), 2 sweep "
				       "points x 2 plugins: null biglock\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "  point 1: cpus=2  engine native, 2 CPUs, 6 trials (3 "
				       "repeats), 1.200 s each\n"),
			   "%s", out);
	cr_assert_not_null(strstr(out, "total: 12 trials; native: about 14 s"), "%s", out);
	cr_assert_neq(stat(dir, &st), 0, "nothing written");
}

Test(noise, json_summary_and_one_repeat_without_interval, .timeout = 120)
{
	char dir[300];
	char *argv[] = { "iommulab",
			 "run",
			 CONFIGS "/cmdq-ways-sim.ini",
			 "--set",
			 "sweep.cpus=4",
			 "--set",
			 "scenario.duration_ms=2",
			 "--set",
			 "scenario.repeats=1",
			 "--format",
			 "json",
			 "--baseline",
			 "cmpxchg",
			 "--out",
			 dir,
			 NULL };

	snprintf(dir, sizeof(dir), "%s/sim", tmp);
	cr_assert_eq(run("json", argv), 0, "%s", cli_slurp("json.err"));
	char *out = cli_slurp("json.out");
	cr_assert_eq(out[0], '{', "JSON alone on stdout:\n%s", out);
	cr_assert_null(strstr(out, "results:"), "the rest went to stderr");
	cr_assert_not_null(strstr(out, "\"baseline\": \"cmpxchg\""), "%s", out);
	cr_assert_not_null(strstr(out, "\"winners\": [\n  {\"point\": 0, \"at\": \"4 CPUs\""), "%s",
			   out);
	cr_assert_not_null(strstr(out, "\"ci_low\": null, \"ci_high\": null, \"n\": 1"), "%s", out);
	char *json = cli_slurp("sim/summary.json");
	cr_assert_not_null(strstr(json, "\"ci95\": null, \"ci_low\": null, \"ci_high\": null, "
					"\"ci_method\": \"none\", \"n\": 1}"),
			   "one repeat: no interval, not 0");
	cr_assert_null(strstr(json, "\"ci95\": 0,"), "%s", json);
	/* Checked by a JSON parser where there is one. */
	char cmd[400];
	snprintf(cmd, sizeof(cmd),
		 "command -v python3 >/dev/null || exit 0; python3 -m json.tool %s/json.out "
		 ">/dev/null",
		 tmp);
	cr_assert_eq(system(cmd), 0, "%s", out);

	/* The text table of a sim run: n=1, no harness or timer lines. */
	char *argv2[] = { "iommulab",
			  "run",
			  CONFIGS "/cmdq-ways-sim.ini",
			  "--set",
			  "sweep.cpus=4",
			  "--set",
			  "scenario.duration_ms=2",
			  "--out",
			  dir,
			  NULL };
	snprintf(dir, sizeof(dir), "%s/sim2", tmp);
	cr_assert_eq(run("text", argv2), 0, "%s", cli_slurp("text.err"));
	out = cli_slurp("text.out");
	cr_assert_not_null(strstr(out, " n=1"), "%s", out);
	cr_assert_not_null(strstr(out, "vs biglock"), "the first plugin not null:\n%s", out);
	cr_assert_not_null(strstr(out, "\nat 4 CPUs: "), "%s", out);
	cr_assert_null(strstr(out, "harness overhead"), "%s", out);
	cr_assert_null(strstr(out, "timer:"), "%s", out);
}
