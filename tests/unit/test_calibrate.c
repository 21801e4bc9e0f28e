/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of calibrate: the run's and the measured curves averaged per (op, CPUs), the op
 * to implementation table, the sign of the error, the verdict against the tolerance, the
 * calibration.csv it writes, and bad input (missing columns, garbage numbers, empty files,
 * nothing to compare) as errors that name the file and line.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "results/csv.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/iommulab-test-calibrate-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tree(void)
{
	char cmd[128];

	/* Only our own mkdtemp() directory, whose name has no shell metacharacters. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(calibrate, .init = make_tmpdir, .fini = remove_tree);

/* Write text to tmpdir/name; returns the path (static: one at a time). */
static const char *put(const char *name, const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

static const struct calib_sample *find(const struct calib_curve *c, const char *op, unsigned cpus)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].cpus == cpus && !strcmp(c->v[i].op, op))
			return &c->v[i];
	return NULL;
}

/* A run that swept the workload and the op: both come from the rows. */
#define TRIALS_HEADER                                                                              \
	"trial,point,repeat,plugin,scenario.workload,scenario.cpus,workload.micro.op,status,"      \
	"cpus,ops_per_sec,error\n"

Test(calibrate, maps_each_micro_op_to_its_measured_implementation, .timeout = 10)
{
	cr_assert_str_eq(calib_implementation("atomic_add"), "atomic add");
	cr_assert_str_eq(calib_implementation("cas_add"), "cas add");
	cr_assert_str_eq(calib_implementation("ticket_lock"), "ticket spin");
	cr_assert_null(calib_implementation("plain_add"));
	cr_assert_null(calib_implementation("atomic add"), "names of the data are not ops");
	cr_assert_null(calib_implementation(""));
}

Test(calibrate, run_averages_ok_repeats_per_thread_and_leaves_out_the_rest, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";
	const struct calib_sample *s;

	put("trials.csv", TRIALS_HEADER
	    /* 2 CPUs at 1e8 and 2e8 ops/s: 20 and 10 ns per thread, mean 15. */
	    "0,0,0,micro,micro,2,atomic_add,ok,2,100000000,\n"
	    "1,0,1,micro,micro,2,atomic_add,ok,2,2e8,\n"
	    /* A failed trial is left out, garbage and all. */
	    "2,0,2,micro,micro,2,atomic_add,failed,2,,\"crashed: SIGSEGV\"\n"
	    "3,1,0,micro,micro,1,cas_add,ok,1,125000000,\n"
	    "4,2,0,micro,micro,4,ticket_lock,ok,4,1e6,\n");
	cr_assert_eq(calib_load_run(tmpdir, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.n_used, 4);
	cr_assert_eq(c.n_left_out, 1);
	s = find(&c, "atomic_add", 2);
	cr_assert_not_null(s);
	cr_assert_eq(s->n, 2);
	cr_assert_float_eq(s->ns_per_op, 15.0, 1e-9);
	s = find(&c, "cas_add", 1);
	cr_assert_not_null(s);
	cr_assert_float_eq(s->ns_per_op, 8.0, 1e-9);
	s = find(&c, "ticket_lock", 4);
	cr_assert_not_null(s);
	cr_assert_float_eq(s->ns_per_op, 4000.0, 1e-9, "4 threads x 1 us / op");
	calib_curve_free(&c);
}

Test(calibrate, run_takes_keys_that_were_not_swept_from_scenario_ini, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";

	put("trials.csv", "trial,point,repeat,plugin,scenario.cpus,status,cpus,ops_per_sec\n"
			  "0,0,0,micro,1,ok,1,1e8\n"
			  "1,1,0,micro,3,ok,3,1e8\n");
	cr_assert_eq(calib_load_run(tmpdir, &c, err, sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "/scenario.ini: cannot read it"), "%s", err);

	put("scenario.ini", "; resolved\n[scenario]\nworkload = micro\ncpus = 1\n"
			    "[workload.micro]\nop = cas_add\nthink_ns = 0\n");
	cr_assert_eq(calib_load_run(tmpdir, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 2);
	cr_assert_not_null(find(&c, "cas_add", 1));
	cr_assert_float_eq(find(&c, "cas_add", 3)->ns_per_op, 30.0, 1e-9);
	calib_curve_free(&c);

	/* Another workload's run has no micro trial: said so, not an empty table. */
	put("scenario.ini", "[scenario]\nworkload = cmdq\n[workload.micro]\nop = cas_add\n");
	cr_assert_eq(calib_load_run(tmpdir, &c, err, sizeof(err)), -ENODATA);
	cr_assert_not_null(strstr(err, "trials.csv: no trial of the micro workload (2 trials of "
				       "others)"),
			   "%s", err);
}

Test(calibrate, run_refuses_bad_input_with_file_and_line, .timeout = 10)
{
	static const struct {
		const char *text;
		int ret;
		const char *msg;
	} cases[] = {
		{ "", -EINVAL, "trials.csv:1: empty file" },
		{ "trial,status,cpus,workload.micro.op,scenario.workload\n0,ok,2,cas_add,micro\n",
		  -EINVAL, "trials.csv:1: no 'ops_per_sec' column: not an iommulab trials.csv" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,2,1e8,\n"
				"1,1,0,micro,micro,2,cas_add,ok,2,fast,\n",
		  -EINVAL, "trials.csv:3: ops_per_sec 'fast' is not a positive number" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,2,0,\n", -EINVAL,
		  "trials.csv:2: ops_per_sec '0' is not a positive number" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,2,nan,\n", -EINVAL,
		  "trials.csv:2: ops_per_sec 'nan' is not a positive number" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,two,1e8,\n", -EINVAL,
		  "trials.csv:2: cpus 'two' is not a CPU count (1 to 4096)" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,-2,1e8,\n", -EINVAL,
		  "trials.csv:2: cpus '-2' is not a CPU count" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,ok,2\n", -EINVAL,
		  "trials.csv:2: 9 fields, but the header has 11 columns" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,,ok,2,1e8,\n", -EINVAL,
		  "trials.csv:2: no workload.micro.op" },
		{ TRIALS_HEADER, -ENODATA, "trials.csv: no trial of the micro workload (0 trials" },
		{ TRIALS_HEADER "0,0,0,micro,micro,2,cas_add,failed,2,,boom\n"
				"1,0,0,micro,micro,2,cas_add,failed,2,,boom\n",
		  -ENODATA, "trials.csv: none of the 2 micro trials finished ok" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_curve c;
		char err[512] = "";

		put("trials.csv", cases[i].text);
		cr_assert_eq(calib_load_run(tmpdir, &c, err, sizeof(err)), cases[i].ret,
			     "case %zu: %s", i, err);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
		cr_assert_eq(c.n, 0, "case %zu: nothing is left allocated", i);
	}
}

Test(calibrate, run_of_a_missing_dir_says_which_file, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";

	cr_assert_eq(calib_load_run("/nonexistent-iommulab-dir", &c, err, sizeof(err)), -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent-iommulab-dir/trials.csv: No such file"), "%s",
			   err);
}

#define DATA_HEADER                                                                                \
	"# where it comes from, with a comma\n"                                                    \
	"Trial,Cores,Implementation,Nanos/Op,Total,Rlen\n"

Test(calibrate, measured_averages_trials_of_mapped_implementations_only, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";
	const char *path = put("data.csv", DATA_HEADER "0,2,atomic add,10.0,100,1.0\n"
						       "1,2,atomic add,20.0,100,1.0\n"
						       "# a comment between rows\n"
						       "0,2,plain add,n/a,100,1.0\n"
						       "0,2,ticket spin,300,100,1.0\n"
						       "0,1,cas add,8.4,100,1.0\n");

	cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 3, "plain add is not compared with anything, garbage or not");
	cr_assert_eq(c.n_used, 4);
	cr_assert_float_eq(find(&c, "atomic_add", 2)->ns_per_op, 15.0, 1e-9);
	cr_assert_eq(find(&c, "atomic_add", 2)->n, 2);
	cr_assert_float_eq(find(&c, "ticket_lock", 2)->ns_per_op, 300.0, 1e-9);
	cr_assert_float_eq(find(&c, "cas_add", 1)->ns_per_op, 8.4, 1e-9);
	calib_curve_free(&c);
}

Test(calibrate, measured_refuses_bad_input_with_file_and_line, .timeout = 10)
{
	static const struct {
		const char *text;
		int ret;
		const char *msg;
	} cases[] = {
		{ "", -EINVAL, "data.csv:1: empty file" },
		{ "# only a comment\n", -EINVAL,
		  "data.csv:1: no header line: only comments or blank lines to the end (cut "
		  "short?)" },
		{ "Trial,Cores,Implementation,Nanos/Op,Nanos/Op\n0,2,atomic add,5,6\n", -EINVAL,
		  "data.csv:1: header: columns 4 and 5 are both named 'Nanos/Op'" },
		{ DATA_HEADER "0,2,atomic add,1e308,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op '1e308' is not a positive number (1e-9 to 1e18)" },
		{ DATA_HEADER "0,2,atomic add,1e-300,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op '1e-300' is not a positive number (1e-9 to 1e18)" },
		{ "Trial,Cores,Implementation,Total\n0,2,atomic add,5\n", -EINVAL,
		  "data.csv: no 'Nanos/Op' column (expected the header "
		  "Trial,Cores,Implementation,Nanos/Op,Total,Rlen)" },
		{ DATA_HEADER "0,2,atomic add,abc,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op 'abc' is not a positive number" },
		{ DATA_HEADER "0,2,atomic add,-1.5,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op '-1.5' is not a positive number" },
		{ DATA_HEADER "0,2,atomic add,inf,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op 'inf' is not a positive number" },
		{ DATA_HEADER "0,2,atomic add,,1,1\n", -EINVAL,
		  "data.csv:3: Nanos/Op '' is not a positive number" },
		{ DATA_HEADER "0,0,cas add,5,1,1\n", -EINVAL,
		  "data.csv:3: Cores '0' is not a CPU count (1 to 4096)" },
		{ DATA_HEADER "0,2.5,cas add,5,1,1\n", -EINVAL, "data.csv:3: Cores '2.5' is not" },
		{ DATA_HEADER "0,2,cas add,5\n", -EINVAL,
		  "data.csv:3: 4 fields, but the header has 6 columns" },
		{ DATA_HEADER "0,2,plain add,5,1,1\n", -ENODATA,
		  "data.csv: no row of implementation 'atomic add', 'cas add' or 'ticket spin'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_curve c;
		char err[512] = "";
		const char *path = put("data.csv", cases[i].text);

		cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), cases[i].ret,
			     "case %zu: %s", i, err);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
		cr_assert_eq(c.n, 0, "case %zu: nothing is left allocated", i);
	}
	struct calib_curve c;
	char err[512] = "";
	cr_assert_eq(calib_load_measured("/nonexistent-iommulab.csv", &c, err, sizeof(err)),
		     -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent-iommulab.csv: No such file"), "%s", err);
}

#define LH_ROW(t, rate, host, wl, c)                                                               \
	t ", 0.9, 10.0, 10.0, " rate ", 0.0, 2018-06-23 10:46:07.6, " host ", ../build/lh_" wl     \
	  ", -t, " t ", -a, 5000, -c, " c ", -p, 0ns\n"

Test(calibrate, lockhammer_rows_are_per_thread_access_rate_x_threads, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";
	/* One row a string: cas_lockref is a lockhammer workload no micro op is compared with. */
	static const char *const rows[] = {
		LH_ROW("4", "100.0", "x86-3", "ticket_spinlock", "0ns"),
		LH_ROW("4", "110.0", "x86-3", "ticket_spinlock", "0ns"),
		LH_ROW("4", "7.0", "x86-3", "swap_mutex", "0ns"),
		LH_ROW("4", "50.0", "x86-3", "incdec_refcount", "0ns"),
		LH_ROW("4", "9.0", "x86-3", "cas_lockref", "0ns"),
		LH_ROW("88", "550.0", "x86-3", "ticket_spinlock", "0ns"),
		LH_ROW("8", "60.0", "x86-3", "queued_spinlock", "0ns"),
	};
	char text[2048] = "# lockhammer, one host\n";

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		strcat(text, rows[i]);
	const char *path = put("lh.csv", text);

	cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 5, "cas_lockref is compared with nothing");
	cr_assert_float_eq(find(&c, "qspin_lock", 8)->ns_per_op, 480.0, 1e-9, "queued_spinlock");
	cr_assert_float_eq(find(&c, "ticket_lock", 4)->ns_per_op, 420.0, 1e-9);
	cr_assert_eq(find(&c, "ticket_lock", 4)->n, 2);
	cr_assert_float_eq(find(&c, "ticket_lock", 88)->ns_per_op, 550.0 * 88, 1e-6);
	cr_assert_float_eq(find(&c, "tas_lock", 4)->ns_per_op, 28.0, 1e-9, "swap_mutex: TAS");
	/* One acquire of incdec_refcount is a fetch-add and a fetch-sub: two atomic_adds. */
	cr_assert_float_eq(find(&c, "atomic_add", 4)->ns_per_op, 100.0, 1e-9);
	calib_curve_free(&c);
}

Test(calibrate, lockhammer_refuses_bad_input_with_file_and_line, .timeout = 10)
{
	static const struct {
		const char *text;
		int ret;
		const char *msg;
	} cases[] = {
		{ LH_ROW("x", "100.0", "h", "ticket_spinlock", "0ns"), -EINVAL,
		  "lh.csv:1: num_threads 'x' is not a CPU count (1 to 4096)" },
		{ LH_ROW("4", "-3", "h", "ticket_spinlock", "0ns"), -EINVAL,
		  "lh.csv:1: access_rate '-3' is not a positive number" },
		{ LH_ROW("4", "100", "h", "ticket_spinlock", "0ns") "4, 0.9, 1, 1\n", -EINVAL,
		  "lh.csv:2: not a lockhammer row (num_threads, avg_exectx, ..., access_rate, "
		  "avg_lock_depth, date, host, ../build/lh_WORKLOAD, -t ...)" },
		{ LH_ROW("4", "100", "a", "ticket_spinlock", "0ns")
			  LH_ROW("4", "100", "b", "ticket_spinlock", "0ns"),
		  -EINVAL, "lh.csv:2: host 'b' after 'a': keep one machine per file" },
		{ LH_ROW("4", "100", "a", "ticket_spinlock", "0ns")
			  LH_ROW("4", "100", "a", "ticket_spinlock", "1000ns"),
		  -EINVAL,
		  "lh.csv:2: '-c 1000ns -p 0ns' after '-c 0ns -p 0ns': keep one critical/parallel "
		  "setting per file" },
		{ LH_ROW("4", "100", "a", "cas_lockref", "0ns"), -ENODATA,
		  "lh.csv: no lockhammer row of workload 'ticket_spinlock', 'swap_mutex', "
		  "'incdec_refcount' or 'queued_spinlock'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_curve c;
		char err[512] = "";
		const char *path = put("lh.csv", cases[i].text);

		cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), cases[i].ret,
			     "case %zu: %s", i, err);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
		cr_assert_eq(c.n, 0, "case %zu: nothing is left allocated", i);
	}
}

#define FOLLY_CPU "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\n"

Test(calibrate, folly_rows_are_per_thread_time_in_their_unit, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";
	const char *path = put(
		"folly.txt", "/*\n./small_locks_benchmark\n" FOLLY_CPU
			     "atomic_cas(1thread)                    109.86%   606.52ns    1.65M\n"
			     "atomic_cas(32thread)                   622.19%     4.87us  205.51K\n"
			     "atomic_fetch_xor(2thread)              179.85%   660.93ns    1.51M\n"
			     "std_mutex(2thread)                                 1.27us  784.90K\n"
			     "*/\n");

	cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 3, "std_mutex is compared with nothing");
	cr_assert_float_eq(find(&c, "cas_add", 1)->ns_per_op, 606.52, 1e-9);
	cr_assert_float_eq(find(&c, "cas_add", 32)->ns_per_op, 4870.0, 1e-6);
	cr_assert_float_eq(find(&c, "atomic_add", 2)->ns_per_op, 660.93, 1e-9);
	calib_curve_free(&c);
}

Test(calibrate, folly_refuses_bad_input_with_file_and_line, .timeout = 10)
{
	static const struct {
		const char *text;
		int ret;
		const char *msg;
	} cases[] = {
		{ FOLLY_CPU "atomic_cas(2thread)   100%  12.5parsecs  1M\n", -EINVAL,
		  "folly.txt:2: atomic_cas(2thread): time '12.5parsecs' is not a number with a "
		  "unit (ns, us, ms, s; 1e-9 to 1e18 ns)" },
		{ FOLLY_CPU "atomic_cas(2thread)   100%  1e300s  1M\n", -EINVAL,
		  "folly.txt:2: atomic_cas(2thread): time '1e300s' is not a number with a unit" },
		{ FOLLY_CPU "atomic_cas(0thread)   100%  12.5ns  1M\n", -EINVAL,
		  "folly.txt:2: atomic_cas: expected '(Nthread)' with N from 1 to 4096" },
		{ "atomic_cas(2thread)   100%  12.5ns  1M\n" FOLLY_CPU, -EINVAL,
		  "folly.txt:1: atomic_cas row before any CPU line" },
		{ FOLLY_CPU
		  "atomic_cas(2thread)  12ns  1M\nIntel(R) Xeon(R) D-2191 CPU @ 1.60GHz\n",
		  -EINVAL, "folly.txt:3: results of a second CPU" },
		{ FOLLY_CPU "std_mutex(2thread)  1.27us  784.90K\n", -ENODATA,
		  "folly.txt: no folly row 'atomic_cas(Nthread)' or 'atomic_fetch_xor(Nthread)'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_curve c;
		char err[512] = "";
		const char *path = put("folly.txt", cases[i].text);

		cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), cases[i].ret,
			     "case %zu: %s", i, err);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
		cr_assert_eq(c.n, 0, "case %zu: nothing is left allocated", i);
	}
}

#define MCTOP_HEAD "num_locks: 1\nduration: 5000\ncritical: 1000\n"

/* mctop: the median of a no_backoff row's repeats, per thread; backoff rows and CLH's
 * siblings of no micro op are left out, comments and CRLF line ends are fine. */
Test(calibrate, mctop_rows_are_threads_over_the_median_rate, .timeout = 10)
{
	struct calib_curve c;
	char err[512] = "";
	const char *path = put("mctop.txt",
			       "# copied from LPD-EPFL/mctop\r\n" MCTOP_HEAD "====== TAS ======\r\n"
			       "no_backoff - 10:  1000000 3000000 2000000\r\n"
			       "backoff_socket - 10:  9 9 9\r\n"
			       "====== MCS ======\n"
			       "no_backoff - 10:  2000000 2000000 1000000 4000000\n"
			       "no_backoff - 40:  1000000\n"
			       "====== HCLH ======\n"
			       "no_backoff - 10:  5 5 5\n");

	cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.n, 3, "backoff variants and unknown locks are compared with nothing");
	cr_assert_float_eq(find(&c, "tas_lock", 10)->ns_per_op, 10 * 1e9 / 2e6, 1e-6);
	cr_assert_float_eq(find(&c, "mcs_lock", 10)->ns_per_op, 10 * 1e9 / 2e6, 1e-6,
			   "an even count's median is the middle pair's mean");
	cr_assert_float_eq(find(&c, "mcs_lock", 40)->ns_per_op, 40 * 1e9 / 1e6, 1e-6);
	cr_assert_eq(find(&c, "mcs_lock", 10)->n, 1, "one point per row, not per repeat");
	calib_curve_free(&c);
}

Test(calibrate, mctop_refuses_bad_input_with_file_and_line, .timeout = 10)
{
	static const struct {
		const char *text;
		int ret;
		const char *msg;
	} cases[] = {
		{ "num_locks: 4\n", -EINVAL,
		  "mctop.txt:1: num_locks ' 4': only one lock that every thread contends on (1)" },
		{ MCTOP_HEAD "no_backoff - 10:  5\n", -EINVAL,
		  "mctop.txt:4: not an mctop lock row ('====== LOCK ======', then" },
		{ MCTOP_HEAD "====== TAS ======\nno_backoff - 0:  5\n", -EINVAL,
		  "mctop.txt:5: threads '0' is not a CPU count (1 to 4096)" },
		{ MCTOP_HEAD "====== TAS ======\nno_backoff - 10:  5 -1\n", -EINVAL,
		  "mctop.txt:5: repeat '-1' is not a positive number of acquisitions per second" },
		{ MCTOP_HEAD "====== TAS ======\nno_backoff - 10:\n", -EINVAL,
		  "mctop.txt:5: no repeat after '10:'" },
		{ MCTOP_HEAD "====== TAS ======\nno_backoff - 10 5\n", -EINVAL,
		  "mctop.txt:5: no ':' after the thread count" },
		{ MCTOP_HEAD "====== TAS ======\nno_backoff - 10: 5\nno_backoff - 10: 6\n", -EINVAL,
		  "mctop.txt:6: a second no_backoff row of TAS at 10 threads" },
		{ MCTOP_HEAD "====== TAS ======\nbackoff_max - 10: 5\n", -ENODATA,
		  "mctop.txt: no no_backoff row of TAS, TTAS, TICKET, MCS or CLH" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_curve c;
		char err[512] = "";
		const char *path = put("mctop.txt", cases[i].text);

		cr_assert_eq(calib_load_measured(path, &c, err, sizeof(err)), cases[i].ret,
			     "case %zu: %s", i, err);
		cr_assert_not_null(strstr(err, cases[i].msg), "case %zu: got \"%s\"", i, err);
		cr_assert_eq(c.n, 0, "case %zu: nothing is left allocated", i);
	}
}

/* Curves built in place: { op, cpus, ns } points. */
struct pt {
	const char *op;
	unsigned cpus;
	double ns;
};

static struct calib_curve curve(const struct pt *p, size_t n, struct calib_sample *v)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (struct calib_sample){ .op = (char *)p[i].op,
					      .cpus = p[i].cpus,
					      .ns_per_op = p[i].ns,
					      .sum = p[i].ns,
					      .n = 1 };
	return (struct calib_curve){ .v = v, .n = n, .cap = n, .n_used = n };
}

#define CURVE(name, ...)                                                                           \
	static const struct pt name##_pts[] = { __VA_ARGS__ };                                     \
	struct calib_sample name##_v[sizeof(name##_pts) / sizeof(name##_pts[0])];                  \
	struct calib_curve name =                                                                  \
		curve(name##_pts, sizeof(name##_pts) / sizeof(name##_pts[0]), name##_v)

static const struct calib_row *row_of(const struct calib_report *r, const char *op, unsigned cpus)
{
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].cpus == cpus && !strcmp(r->rows[i].op, op))
			return &r->rows[i];
	return NULL;
}

Test(calibrate, error_is_sim_minus_measured_over_measured, .timeout = 10)
{
	CURVE(sim, { "cas_add", 2, 15.0 }, { "atomic_add", 2, 5.0 });
	CURVE(meas, { "atomic_add", 2, 10.0 }, { "cas_add", 2, 10.0 });
	struct calib_report r;
	char err[512] = "";

	cr_assert_eq(calib_compare(&sim, &meas, 25, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n_rows, 2);
	cr_assert_str_eq(r.rows[0].op, "atomic_add", "rows are sorted by op, then CPUs");
	cr_assert_float_eq(row_of(&r, "cas_add", 2)->err_pct, 50.0, 1e-9, "sim slower: +");
	cr_assert_float_eq(row_of(&r, "atomic_add", 2)->err_pct, -50.0, 1e-9, "sim faster: -");
	cr_assert_float_eq(row_of(&r, "atomic_add", 2)->meas_ns, 10.0, 1e-9);
	cr_assert_float_eq(row_of(&r, "atomic_add", 2)->sim_ns, 5.0, 1e-9);
	cr_assert_eq(r.n_judged, 2);
	cr_assert_eq(r.n_missed, 2);
	cr_assert_not(calib_all_within(&r));
	calib_report_free(&r);
}

Test(calibrate, verdict_judges_points_from_two_cpus_against_the_tolerance, .timeout = 10)
{
	CURVE(sim, { "ticket_lock", 1, 100.0 }, { "ticket_lock", 2, 125.0 },
	      { "ticket_lock", 4, 80.0 }, { "ticket_lock", 8, 90.0 }, { "cas_add", 2, 10.0 },
	      { "cas_add", 3, 10.0 });
	CURVE(meas, { "ticket_lock", 1, 10.0 }, { "ticket_lock", 2, 100.0 },
	      { "ticket_lock", 4, 100.0 }, { "ticket_lock", 8, 100.0 },
	      { "ticket_lock", 16, 100.0 }, { "cas_add", 2, 10.0 });
	struct calib_report r;
	char err[512] = "";

	cr_assert_eq(calib_compare(&sim, &meas, 25, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n_rows, 6, "one row per point of the run, none for measured-only ones");
	/* 1 CPU: +900%, shown but not judged. */
	cr_assert_float_eq(row_of(&r, "ticket_lock", 1)->err_pct, 900.0, 1e-9);
	cr_assert_not(row_of(&r, "ticket_lock", 1)->judged);
	/* Exactly on the tolerance is within it. */
	cr_assert(row_of(&r, "ticket_lock", 2)->within);
	cr_assert(row_of(&r, "ticket_lock", 4)->within);
	/* No measured value: shown, not judged. */
	cr_assert(isnan(row_of(&r, "cas_add", 3)->meas_ns));
	cr_assert(isnan(row_of(&r, "cas_add", 3)->err_pct));
	cr_assert_not(row_of(&r, "cas_add", 3)->judged);
	cr_assert_eq(r.n_judged, 4);
	cr_assert_eq(r.n_missed, 0);
	cr_assert(calib_all_within(&r));

	cr_assert_eq(r.n_ops, 2);
	cr_assert_str_eq(r.ops[1].op, "ticket_lock");
	cr_assert_eq(r.ops[1].n_judged, 3);
	cr_assert_float_eq(r.ops[1].worst_pct, 25.0, 1e-9, "the signed worst |error|");
	cr_assert_eq(r.ops[1].worst_cpus, 2);
	cr_assert_eq(r.ops[1].min_cpus, 2);
	cr_assert_eq(r.ops[1].max_cpus, 8);
	calib_report_free(&r);

	/* A tighter tolerance: the 2- and 4-CPU points (+25%, -20%) miss, 8 (-10%) does not. */
	cr_assert_eq(calib_compare(&sim, &meas, 15, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r.n_missed, 2);
	cr_assert_eq(r.ops[1].n_missed, 2);
	cr_assert_eq(r.ops[0].n_missed, 0);
	cr_assert_not(row_of(&r, "ticket_lock", 4)->within);
	cr_assert(row_of(&r, "ticket_lock", 8)->within);
	cr_assert_not(calib_all_within(&r));
	calib_report_free(&r);

	cr_assert_eq(calib_compare(&sim, &meas, 0, &r, err, sizeof(err)), -EINVAL);
	cr_assert_eq(calib_compare(&sim, &meas, NAN, &r, err, sizeof(err)), -EINVAL);
}

Test(calibrate, no_overlap_with_two_or_more_cpus_is_an_error_that_says_what_each_has, .timeout = 10)
{
	CURVE(sim, { "atomic_add", 1, 5.0 }, { "cas_add", 4, 10.0 });
	CURVE(meas, { "atomic_add", 1, 5.0 }, { "atomic_add", 2, 9.0 }, { "atomic_add", 16, 90.0 },
	      { "cas_add", 2, 10.0 });
	struct calib_report r;
	char err[512] = "";

	cr_assert_eq(calib_compare(&sim, &meas, 25, &r, err, sizeof(err)), -ENODATA);
	cr_assert_not_null(strstr(err,
				  "no point with 2 or more CPUs is both in the run "
				  "(atomic_add at 1 CPU, cas_add at 4 CPUs) and in the measured "
				  "data (atomic_add at 1-16 CPUs, cas_add at 2 CPUs)"),
			   "%s", err);
	cr_assert_eq(r.n_rows, 0, "nothing is left allocated");
}

Test(calibrate, writes_the_table_as_calibration_csv, .timeout = 10)
{
	CURVE(sim, { "atomic_add", 1, 5.3 }, { "atomic_add", 2, 17.6 }, { "cas_add", 2, 60.0 });
	CURVE(meas, { "atomic_add", 1, 5.3 }, { "atomic_add", 2, 17.0 });
	struct calib_report r;
	struct csv_table t;
	char err[512] = "", path[128];

	cr_assert_eq(calib_compare(&sim, &meas, 25, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(calib_write_csv(&r, tmpdir), 0);
	cr_assert_eq(calib_write_csv(&r, "/nonexistent-iommulab-dir"), -ENOENT);
	calib_report_free(&r);

	snprintf(path, sizeof(path), "%s/calibration.csv", tmpdir);
	cr_assert_eq(csv_read(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n_cols, 5);
	cr_assert_str_eq(t.header[0], "op");
	cr_assert_str_eq(t.header[1], "cpus");
	cr_assert_str_eq(t.header[2], "sim_ns_per_op");
	cr_assert_str_eq(t.header[3], "measured_ns_per_op");
	cr_assert_str_eq(t.header[4], "error_pct");
	cr_assert_eq(t.n_rows, 3);
	cr_assert_str_eq(t.rows[1][0], "atomic_add");
	cr_assert_str_eq(t.rows[1][1], "2");
	cr_assert_float_eq(atof(t.rows[1][2]), 17.6, 1e-9);
	cr_assert_float_eq(atof(t.rows[1][3]), 17.0, 1e-9);
	cr_assert_float_eq(atof(t.rows[1][4]), 0.6 / 17.0 * 100, 1e-4);
	cr_assert_str_eq(t.rows[2][0], "cas_add");
	cr_assert_str_eq(t.rows[2][3], "", "no measured value: an empty field, not 'nan'");
	cr_assert_str_eq(t.rows[2][4], "");
	csv_free(&t);
}
