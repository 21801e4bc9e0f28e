/* SPDX-License-Identifier: MIT */
/* iommulab probe -- measure this machine and write a topology file the sim can load. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "probe/probe.h"

static const char probe_usage[] =
    "usage: iommulab probe [--out FILE.csv] [--cpus N] [--rounds N] [--matrix transfer|pingpong]\n"
    "  --matrix: what the topology file holds: one isolated miss served from the other core's\n"
    "            cache (default: what the sim prices a miss at) or the CAS ping-pong one-way\n"
    "            latency (as configs/topologies/ were measured); both are printed\n";

static int parse_uint(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || x == 0 || x > UINT_MAX)
		return -EINVAL;
	*v = (unsigned)x;
	return 0;
}

static void print_matrix(const struct probe_result *r, const double *lat, const char *what,
			 bool written)
{
	double lo = 0, hi = 0, sum = 0;
	unsigned pairs = 0;

	printf("core-to-core latency, ns (%s), %u CPUs%s:\n", what, r->n,
	       written ? ", written to the topology file" : "");
	printf("%6s", "cpu");
	for (uint32_t j = 0; j < r->n; j++)
		printf(" %7d", r->cpus[j]);
	putchar('\n');
	for (uint32_t i = 0; i < r->n; i++) {
		printf("%6d", r->cpus[i]);
		for (uint32_t j = 0; j < r->n; j++) {
			double v = lat[i * r->n + j];
			if (i == j) {
				printf(" %7s", "-");
				continue;
			}
			printf(" %7.1f", v);
			if (j < i) {
				lo = pairs && lo < v ? lo : v;
				hi = hi > v ? hi : v;
				sum += v;
				pairs++;
			}
		}
		putchar('\n');
	}
	printf("pairs: %u, min %.1f ns, mean %.1f ns, max %.1f ns\n", pairs, lo,
	       pairs ? sum / pairs : 0.0, hi);
}

static void print_summary(const struct probe_result *r)
{
	print_matrix(r, r->xfer, "one isolated miss from the other core's cache",
		     r->matrix == PROBE_MATRIX_TRANSFER);
	print_matrix(r, r->lat, "CAS ping-pong round trip / 2", r->matrix == PROBE_MATRIX_PINGPONG);
	printf("atomics (uncontended, cpu %d): add %.2f ns, CAS %.2f ns\n", r->cpus[0],
	       r->atomic_add_ns, r->cas_ns);
	printf("atomics (contended, cpus %d and %d on one line, ns per op per CPU = wall x %u / "
	       "ops): add %.1f ns, CAS loop %.1f ns (%.2f tries per increment)\n",
	       r->cpus[0], r->cpus[1], r->contended_threads, r->contended_add_ns,
	       r->contended_cas_ns, r->contended_cas_tries);
	printf("timer: %s, %.2f ns per read\n", r->clock_source, r->timer_ns);
	printf("for the sim (engine = sim), with [machine] op_ns = 0.5:\n");
	probe_describe_machine(r, 0.5, "  ", stdout);
	printf("probe took %.2f s\n", r->elapsed_s);
}

int cmd_probe(int argc, char **argv, struct cli_common *c)
{
	struct probe_opts o = {0};
	struct probe_result r;
	char def_path[300], err[512] = "";
	const char *out = NULL;
	int rc;

	(void)c;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(probe_usage, stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--out") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "--cpus") && i + 1 < argc) {
			if (parse_uint(argv[++i], &o.max_cpus) || o.max_cpus < 2) {
				fprintf(stderr, "iommulab probe: --cpus wants a number >= 2\n");
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--matrix") && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(v, "pingpong")) {
				o.matrix = PROBE_MATRIX_PINGPONG;
			} else if (!strcmp(v, "transfer")) {
				o.matrix = PROBE_MATRIX_TRANSFER;
			} else {
				fprintf(stderr,
					"iommulab probe: --matrix '%s': expected pingpong or "
					"transfer\n",
					v);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--rounds") && i + 1 < argc) {
			if (parse_uint(argv[++i], &o.rounds)) {
				fprintf(stderr, "iommulab probe: --rounds wants a number >= 1\n");
				return EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "iommulab probe: unknown or incomplete option '%s'\n%s", a,
				probe_usage);
			return EXIT_USAGE;
		}
	}
	if (!out) {
		rc = probe_default_path(def_path, sizeof(def_path));
		if (rc) {
			fprintf(stderr, "iommulab probe: no default file name: %s\n",
				strerror(-rc));
			return EXIT_USAGE;
		}
		out = def_path;
	}
	rc = probe_run(&o, &r);
	if (rc == -EINVAL) {
		fprintf(stderr, "iommulab probe: needs at least 2 allowed CPUs\n");
		return EXIT_USAGE;
	} else if (rc) {
		fprintf(stderr, "iommulab probe: measurement failed: %s\n", strerror(-rc));
		return EXIT_TRIALS_FAILED;
	}
	print_summary(&r);
	rc = probe_write_topology(&r, out, NULL, err, sizeof(err));
	probe_result_free(&r);
	if (rc) {
		fprintf(stderr, "iommulab probe: %s\n", err);
		return EXIT_USAGE;
	}
	printf("topology: %s (use it as [machine] topology = %s)\n", out, out);
	return EXIT_OK;
}
