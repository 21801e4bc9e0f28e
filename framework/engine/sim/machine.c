/* SPDX-License-Identifier: MIT */
/*
 * machine -- defaults of the simulated machine ([machine], scenario/tables.c) and the
 * topology files it names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sim/sim.h"

void sim_machine_defaults(struct scenario_machine *m)
{
	/* Kept equal to the table's defaults (test_sim checks it). */
	memset(m, 0, sizeof(*m));
	m->preset = MACHINE_PRESET_NONE; /* these are preset = none's values */
	m->topology = NULL;
	m->line_ns = 50;
	m->home_ns = 40;
	m->local_ns = 1;
	m->atomic_ns = 5;
	m->op_ns = 0.5;
	m->occupancy = 1;
	m->fail_hold = 0.24;
	m->atomic = MACHINE_ATOMIC_NEAR;
	m->poll_ns = 50;
	m->home_hold_ns = 0;
	m->cas_hold_ns = 0;
	m->fail_burst = true;
	m->memory = MACHINE_MEMORY_SC;
	m->store_delay_ns = 5000;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int sim_topology_load(const char *path, struct sim_topology *t, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	char line[65536];
	double *rows = NULL; /* lower triangle, row-major */
	size_t n_vals = 0, cap = 0;
	uint32_t row = 0, lineno = 0;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	if (!f) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(-rc));
		return rc;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		uint32_t col = 0;

		lineno++;
		if (line[0] == '#')
			continue;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, err_len, "%s:%u: line too long", path, lineno);
			rc = -EINVAL;
			goto out;
		}
		/* Row i holds i values (cores 0..i-1), then empty fields up to the width. */
		while (col < row) {
			double v = strtod(p, &end);
			if (end == p || v < 0) {
				snprintf(err, err_len,
					 "%s:%u: core %u to core %u: expected a latency "
					 "in ns, found '%.20s'",
					 path, lineno, row, col, p);
				rc = -EINVAL;
				goto out;
			}
			if (n_vals == cap) {
				cap = cap ? cap * 2 : 1024;
				double *v2 = realloc(rows, cap * sizeof(*v2));
				if (!v2) {
					rc = -ENOMEM;
					snprintf(err, err_len, "%s: out of memory", path);
					goto out;
				}
				rows = v2;
			}
			rows[n_vals++] = v;
			col++;
			p = end;
			if (*p == ',')
				p++;
		}
		row++;
	}
	if (row < 2) {
		snprintf(err, err_len, "%s: %u cores: a topology needs at least 2", path, row);
		rc = -EINVAL;
		goto out;
	}
	t->n = row;
	t->lat = calloc((size_t)row * row, sizeof(*t->lat));
	double *sorted = malloc(n_vals * sizeof(*sorted));
	if (!t->lat || !sorted) {
		free(sorted);
		rc = -ENOMEM;
		snprintf(err, err_len, "%s: out of memory", path);
		goto out;
	}
	size_t k = 0;
	for (uint32_t i = 1; i < row; i++) {
		for (uint32_t j = 0; j < i; j++, k++) {
			t->lat[i * row + j] = t->lat[j * row + i] = rows[k];
			if (rows[k] > t->max)
				t->max = rows[k];
		}
	}
	memcpy(sorted, rows, n_vals * sizeof(*sorted));
	qsort(sorted, n_vals, sizeof(*sorted), cmp_double);
	t->median = sorted[n_vals / 2];
	free(sorted);
out:
	fclose(f);
	free(rows);
	if (rc)
		sim_topology_free(t);
	return rc;
}

void sim_topology_free(struct sim_topology *t)
{
	if (!t)
		return;
	free(t->lat);
	memset(t, 0, sizeof(*t));
}
