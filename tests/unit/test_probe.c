/* SPDX-License-Identifier: MIT */
/*
 * The probe: a short measurement of two CPUs finishes quickly, every figure is positive and
 * finite, and the topology file it writes loads with the sim's loader at the right size.
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

#include "engine/probe.h"
#include "sim/sim.h"

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
	cr_log_info("probe of 2 CPUs: %.3f s, lat %.1f ns, add %.2f ns, cas %.2f ns, timer %.2f ns",
		    took, r.lat[1], r.atomic_add_ns, r.cas_ns, r.timer_ns);
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

	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
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
	cr_assert(line[0] == '#' && strstr(line, "test-host") && strstr(line, "iommulab probe on 20"),
		  "%s", line);
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

	cr_assert_eq(probe_write_topology(&r, "/tmp/iommulab-probe-never.csv", NULL, err,
					  sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "2 CPUs"), "%s", err);
}

Test(probe, default_path_names_the_host)
{
	char buf[300];

	cr_assert_eq(probe_default_path(buf, sizeof(buf)), 0);
	cr_assert(!strncmp(buf, "probe-", 6) && strstr(buf, ".csv"), "%s", buf);
}
