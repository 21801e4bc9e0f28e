/* SPDX-License-Identifier: MIT */
/*
 * The probe: a short measurement of two CPUs finishes quickly, every figure is positive and
 * finite (contended atomics no cheaper than about half an uncontended one), the topology file
 * it writes loads with the sim's loader at the right size and records every figure, and the
 * [machine] hints say what each figure means for the sim.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe/probe.h"
#include "engine/sim/sim.h"

/* Each measuring test takes well under a second; a hang (a thread that never starts) fails. */
TestSuite(probe, .timeout = 30);

static int allowed_cpus(void)
{
	cpu_set_t s;

	if (sched_getaffinity(0, sizeof(s), &s))
		return 0;
	return CPU_COUNT(&s);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Two CPUs on one line: every figure positive and finite, at least one CAS try per
 * increment, and a contended op no cheaper than about half an uncontended one (an op that
 * moves a line between cores, or waits for the other core to let go of it, cannot beat the
 * line sitting in one core's cache; the slack absorbs a noisy shared machine).
 */
static void check_contended(const struct probe_result *r)
{
	cr_assert_eq(r->contended_threads, 2);
	cr_assert(isfinite(r->contended_add_ns) && r->contended_add_ns > 0, "%f",
		  r->contended_add_ns);
	cr_assert(isfinite(r->contended_cas_ns) && r->contended_cas_ns > 0, "%f",
		  r->contended_cas_ns);
	cr_assert(isfinite(r->contended_cas_tries) && r->contended_cas_tries >= 1.0, "%f",
		  r->contended_cas_tries);
	cr_assert_gt(r->contended_add_ns, 0.5 * r->atomic_add_ns, "contended %f, alone %f",
		     r->contended_add_ns, r->atomic_add_ns);
	cr_assert_gt(r->contended_cas_ns, 0.5 * r->cas_ns, "contended %f, alone %f",
		     r->contended_cas_ns, r->cas_ns);
}

/* The value of a `# probe: key = value` line of a written topology file; NAN if absent. */
static double file_figure(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[1024], want[128];
	double v = NAN;

	cr_assert_not_null(f);
	snprintf(want, sizeof(want), "# probe: %s = ", key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want))) {
			v = strtod(line + strlen(want), NULL);
			break;
		}
	fclose(f);
	return v;
}

Test(probe, two_cpus_measure_quickly_and_load_in_the_sim)
{
	struct probe_opts o = { .max_cpus = 2, .rounds = 3, .iters = 200 };
	struct probe_result r;
	struct sim_topology t;
	char path[] = "/tmp/iommulab-probe-XXXXXX", err[256] = "";
	int fd;

	if (allowed_cpus() < 2)
		cr_skip_test("needs 2 allowed CPUs");
	double t0 = now_s();
	cr_assert_eq(probe_run(&o, &r), 0);
	double took = now_s() - t0;
	cr_log_info("probe of 2 CPUs: %.3f s, lat %.1f ns, add %.2f ns, cas %.2f ns, contended add "
		    "%.1f ns, CAS loop %.1f ns (%.2f tries), timer %.2f ns",
		    took, r.lat[1], r.atomic_add_ns, r.cas_ns, r.contended_add_ns,
		    r.contended_cas_ns, r.contended_cas_tries, r.timer_ns);
	cr_assert_lt(took, 10.0, "took %.2f s", took);
	cr_assert_eq(r.n, 2);
	cr_assert_neq(r.cpus[0], r.cpus[1]);
	for (uint32_t i = 0; i < r.n; i++) {
		cr_assert_eq(r.lat[i * r.n + i], 0.0);
		for (uint32_t j = 0; j < r.n; j++) {
			if (i == j)
				continue;
			double v = r.lat[i * r.n + j];
			cr_assert(isfinite(v) && v > 0, "lat %u-%u = %f", i, j, v);
			cr_assert_eq(v, r.lat[j * r.n + i]);
		}
	}
	cr_assert(isfinite(r.atomic_add_ns) && r.atomic_add_ns > 0, "%f", r.atomic_add_ns);
	cr_assert(isfinite(r.cas_ns) && r.cas_ns > 0, "%f", r.cas_ns);
	cr_assert(isfinite(r.timer_ns) && r.timer_ns > 0, "%f", r.timer_ns);
	cr_assert_not_null(r.clock_source);
	check_contended(&r);
	/* the isolated miss: finite, symmetric, and (two cores on one L1, e.g. SMT siblings,
	 * hand a line over for free) not negative */
	for (uint32_t i = 0; i < r.n; i++)
		for (uint32_t j = 0; j < r.n; j++) {
			double v = r.xfer[i * r.n + j];
			cr_assert(isfinite(v) && v >= 0, "xfer %u-%u = %f", i, j, v);
			cr_assert_eq(v, r.xfer[j * r.n + i]);
		}
	cr_assert_eq(r.matrix, PROBE_MATRIX_TRANSFER, "the isolated misses by default");

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	/* --matrix pingpong: the ping-pong matrix is the topology */
	r.matrix = PROBE_MATRIX_PINGPONG;
	cr_assert_eq(probe_write_topology(&r, path, "test-host", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, r.n);
	for (uint32_t i = 0; i < t.n; i++)
		for (uint32_t j = 0; j < t.n; j++) {
			double v = t.lat[i * t.n + j];
			cr_assert(isfinite(v), "%f", v);
			if (i != j) {
				cr_assert_gt(v, 0.0);
				/* written with 4 decimals */
				cr_assert(fabs(v - r.lat[i * r.n + j]) < 1e-3, "%f vs %f", v,
					  r.lat[i * r.n + j]);
			}
		}
	sim_topology_free(&t);

	/* the header names the machine and the date */
	FILE *f = fopen(path, "r");
	char line[1024];
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert(line[0] == '#' && strstr(line, "test-host") &&
			  strstr(line, "iommulab probe on 20") && strstr(line, "CAS ping-pong"),
		  "%s", line);
	/* the contended figures are recorded, one `# probe: key = value` line each */
	cr_assert(fabs(file_figure(path, "contended_add_ns") - r.contended_add_ns) < 1e-2);
	cr_assert(fabs(file_figure(path, "contended_cas_ns") - r.contended_cas_ns) < 1e-2);
	cr_assert(fabs(file_figure(path, "contended_cas_tries") - r.contended_cas_tries) < 1e-2);
	cr_assert(fabs(file_figure(path, "atomic_add_ns") - r.atomic_add_ns) < 1e-2);
	cr_assert(fabs(file_figure(path, "timer_ns") - r.timer_ns) < 1e-2);
	cr_assert(fabs(file_figure(path, "pingpong_01_ns") - r.lat[1]) < 1e-2);
	cr_assert(fabs(file_figure(path, "transfer_01_ns") - r.xfer[1]) < 1e-2);

	/* the default: the isolated misses are the topology, and the header says so */
	r.matrix = PROBE_MATRIX_TRANSFER;
	cr_assert_eq(probe_write_topology(&r, path, "test-host", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, r.n);
	cr_assert(fabs(t.lat[1] - r.xfer[1]) < 1e-3, "%f vs %f", t.lat[1], r.xfer[1]);
	sim_topology_free(&t);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert(strstr(line, "one isolated miss"), "%s", line);
	unlink(path);
	probe_result_free(&r);
}

Test(probe, three_cpus_write_a_loadable_matrix)
{
	struct probe_opts o = { .max_cpus = 3, .rounds = 1, .iters = 100 };
	struct probe_result r;
	struct sim_topology t;
	char path[] = "/tmp/iommulab-probe-XXXXXX", err[256] = "";
	int fd;

	if (allowed_cpus() < 3)
		cr_skip_test("needs 3 allowed CPUs");
	cr_assert_eq(probe_run(&o, &r), 0);
	fd = mkstemp(path);
	close(fd);
	cr_assert_eq(probe_write_topology(&r, path, NULL, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(sim_topology_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 3);
	sim_topology_free(&t);
	unlink(path);
	probe_result_free(&r);
}

Test(probe, refuses_one_cpu)
{
	struct probe_opts o = { .max_cpus = 1, .rounds = 1, .iters = 10 };
	struct probe_result r;

	cr_assert_eq(probe_run(&o, &r), -EINVAL);
	cr_assert_null(r.lat);
}

Test(probe, write_refuses_an_empty_result)
{
	struct probe_result r = { 0 };
	char err[256] = "";

	cr_assert_eq(
		probe_write_topology(&r, "/tmp/iommulab-probe-never.csv", NULL, err, sizeof(err)),
		-EINVAL);
	cr_assert(strstr(err, "2 CPUs"), "%s", err);
}

Test(probe, default_path_names_the_host)
{
	char buf[300];

	cr_assert_eq(probe_default_path(buf, sizeof(buf)), 0);
	cr_assert(!strncmp(buf, "probe-", 6) && strstr(buf, ".csv"), "%s", buf);
}

/* The [machine] hints: both matrices' figure, atomic_ns from the uncontended add, and each case
 * of the contended add against the near model's floor L + op_ns + atomic_ns and ceiling 2 x L,
 * L from the matrix the file gets (ping-pong 32 ns, isolated miss 20 ns here). */
static char *describe_with(double contended_add_ns, int matrix)
{
	int cpus[2] = { 0, 1 };
	double lat[4] = { 0, 32, 32, 0 }, xfer[4] = { 0, 20, 20, 0 };
	struct probe_result r = {
		.n = 2,
		.cpus = cpus,
		.lat = lat,
		.xfer = xfer,
		.matrix = matrix,
		.atomic_add_ns = 5.5,
		.cas_ns = 5.5,
		.contended_threads = 2,
		.contended_add_ns = contended_add_ns,
		.contended_cas_ns = 30,
		.contended_cas_tries = 1.25,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	probe_describe_machine(&r, 0.5, "# ", f);
	fclose(f);
	cr_log_info("%s", buf);
	return buf;
}

static char *describe(double contended_add_ns)
{
	return describe_with(contended_add_ns, PROBE_MATRIX_PINGPONG);
}

Test(probe, machine_hints_map_the_figures_to_machine_keys)
{
	char *t = describe(10);

	cr_assert(strstr(t, "# [machine] atomic_ns = 5.00"), "%s", t);
	cr_assert(strstr(t, "CAS ping-pong 32.0 ns, one isolated miss 20.0 ns (the ping-pong is "
			    "written; iommulab probe --matrix transfer writes the other)"),
		  "%s", t);
	cr_assert(strstr(t, "1.25 tries"), "%s", t);
	for (char *p = t; (p = strchr(p, '\n')) && p[1]; p++)
		cr_assert(!strncmp(p + 1, "# ", 2), "every line carries the prefix: %s", t);
#if defined(__x86_64__)
	cr_assert(strstr(t, "atomic = near"), "%s", t);
	/* 10 ns is below one transfer (32 + 0.5 + 5): no occupancy reaches it */
	cr_assert(strstr(t, "below one transfer") && strstr(t, "37.5 ns (+275%)"), "%s", t);
	free(t);
	t = describe(48); /* 48 / (2 x 32) */
	cr_assert(strstr(t, "occupancy = 0.75 reproduces it"), "%s", t);
	free(t);
	t = describe(80);
	cr_assert(strstr(t, "above 2 x L") && strstr(t, "64.0 ns (-20%)"), "%s", t);
	free(t);
	t = describe_with(30, PROBE_MATRIX_TRANSFER); /* 30 / (2 x 20) */
	cr_assert(strstr(t, "the miss is written; iommulab probe --matrix pingpong"), "%s", t);
	cr_assert(strstr(t, "with L = 20.0 ns") && strstr(t, "occupancy = 0.75 reproduces it"),
		  "%s", t);
#endif
	free(t);
}
