/* SPDX-License-Identifier: MIT */
/*
 * probe -- measure this machine natively: the core-to-core latency of every pair of allowed
 * CPUs, two ways -- the CAS ping-pong one-way latency (two threads pinned to the pair pass one
 * cache line back and forth with CAS; one way is the round trip / 2, as github
 * nviennot/core-to-core-latency measures it, and so every file in configs/topologies/) and
 * one isolated miss (one CPU reads lines the other has just written, nothing else going on:
 * what the sim prices a miss at) -- the cost of an uncontended atomic add and CAS on one CPU,
 * the same two with two CPUs hammering one line, and the cost of reading the clock. One of the
 * matrices is written as a topology file that sim_topology_load() (sim/sim.h) reads back,
 * with the other figures and what they mean for the sim's [machine] section as '#' comments.
 *
 * At most two threads spin at any time; the calling thread only waits for them and keeps
 * its own CPU affinity.
 */
#ifndef IOMMULAB_PROBE_H
#define IOMMULAB_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Which matrix the topology file gets (both are always measured). The sim prices a miss at the
 * matrix's value, so by default it gets the isolated miss; the ping-pong figure is also what a
 * handoff costs while both cores hammer the line, 1.6-2.5x more on a 2-vCPU AMD EPYC VM.
 */
enum probe_matrix {
	/* one isolated miss served from the other core's cache: what the sim prices a miss at */
	PROBE_MATRIX_TRANSFER = 0,
	/* CAS ping-pong round trip / 2, as nviennot/core-to-core-latency and so every file in
	 * configs/topologies/ measure it: comparable with them */
	PROBE_MATRIX_PINGPONG,
};

struct probe_opts {
	uint32_t max_cpus; /* measure the first N allowed CPUs; 0: all of them */
	unsigned rounds;   /* measurements per pair, the median is kept; 0: 7 */
	unsigned iters;	   /* round trips per measurement; 0: 2000 */
	int matrix;	   /* enum probe_matrix: the one probe_write_topology writes */
};

struct probe_result {
	uint32_t n;		  /* CPUs measured */
	int *cpus;		  /* their ids (core i of the matrix is CPU cpus[i]) */
	double *lat;		  /* lat[i * n + j]: one-way ns, symmetric, 0 on the diagonal */
	double atomic_add_ns;	  /* uncontended __atomic_fetch_add, median of rounds */
	double cas_ns;		  /* uncontended successful CAS, median of rounds */
	double timer_ns;	  /* one lab_clock_ns() call */
	const char *clock_source; /* "tsc", "cntvct" or "monotonic" */
	double elapsed_s;	  /* wall time the probe took */
	/* Two threads on CPUs cpus[0] and cpus[1] hammering one line for 5 ms, median of rounds;
	 * per-thread ns per op = wall time x threads / total ops (the definition of
	 * configs/calibration/graviton2-atomics.csv's Nanos/Op). */
	uint32_t contended_threads; /* 2 */
	double contended_add_ns;    /* __atomic_fetch_add */
	double contended_cas_ns;    /* load, then a CAS retry loop until the increment lands */
	double contended_cas_tries; /* CAS attempts per increment */
	/* xfer[i * n + j]: ns of one isolated miss of a line cpus[j] holds modified, read by
	 * cpus[i] (a dependent pointer chase; median over both directions), symmetric */
	double *xfer;
	int matrix; /* enum probe_matrix: which of lat and xfer the topology file gets */
};

/* The matrix r's topology file gets (lat or xfer, as r->matrix says). */
const double *probe_topology_matrix(const struct probe_result *r);

/* Measure. Needs at least 2 allowed CPUs (-EINVAL otherwise). 0 or -errno; on success free
 * r with probe_result_free(). */
int probe_run(const struct probe_opts *o, struct probe_result *r);
void probe_result_free(struct probe_result *r);

/*
 * What r means for the sim's [machine] section (sim.h's model), as lines each starting with
 * prefix, into f: atomic_ns from the uncontended add, the atomic mode of this architecture,
 * and what the contended add says about occupancy (or that the model cannot reach it).
 * op_ns is the [machine] op_ns the sim would run with.
 */
void probe_describe_machine(const struct probe_result *r, double op_ns, const char *prefix,
			    FILE *f);

/*
 * Write r's topology matrix (probe_topology_matrix(): lat, or xfer with PROBE_MATRIX_TRANSFER)
 * as a topology file (lower-triangular CSV, line i: cores 0..i-1), after '#' comments naming
 * the machine (host, NULL: gethostname()), the CPUs, the method, the date, every figure as a
 * `# probe: key = value` line and probe_describe_machine()'s hints. 0 or -errno with a reason
 * in err.
 */
int probe_write_topology(const struct probe_result *r, const char *path, const char *host,
			 char *err, size_t err_len);

/* The default output name, "probe-<hostname>.csv", into buf. 0 or -errno. */
int probe_default_path(char *buf, size_t len);

#endif /* IOMMULAB_PROBE_H */
