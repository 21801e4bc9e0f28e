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
	struct probe_opts opts = { 0 };
	struct cli_parser p;
	struct probe_result r;
	char def_path[300], err[512] = "";
	const char *out = NULL;
	int o, rc;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0) {
		switch (o) {
		case PROBE_OPT_OUT:
			out = optarg;
			break;
		case PROBE_OPT_CPUS:
			if (parse_uint(optarg, &opts.max_cpus) || opts.max_cpus < 2)
				return cli_usage_error(c->cmd, "--cpus wants a number >= 2");
			break;
		case PROBE_OPT_MATRIX:
			if (!strcmp(optarg, "pingpong"))
				opts.matrix = PROBE_MATRIX_PINGPONG;
			else if (!strcmp(optarg, "transfer"))
				opts.matrix = PROBE_MATRIX_TRANSFER;
			else
				return cli_usage_error(
					c->cmd, "--matrix '%s': expected pingpong or transfer",
					optarg);
			break;
		case PROBE_OPT_ROUNDS:
			if (parse_uint(optarg, &opts.rounds))
				return cli_usage_error(c->cmd, "--rounds wants a number >= 1");
			break;
		}
	}
	if (o == CLI_OPT_EXIT)
		return p.status;
	if (optind < argc)
		return cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind]);
	if (!out) {
		rc = probe_default_path(def_path, sizeof(def_path));
		if (rc) {
			fprintf(stderr, "iommulab probe: no default file name: %s\n",
				strerror(-rc));
			return EXIT_USAGE;
		}
		out = def_path;
	}
	rc = probe_run(&opts, &r);
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
