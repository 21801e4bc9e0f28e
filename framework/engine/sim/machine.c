/* SPDX-License-Identifier: MIT */
/*
 * machine -- defaults of the simulated machine ([machine], scenario/tables.c) and the
 * topology files it names (parsed once per process: see topo_cache).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	m->read_occupancy = 0;
	m->fail_hold = 0.24;
	m->atomic = MACHINE_ATOMIC_NEAR;
	m->poll_ns = 50;
	m->home_hold_ns = 0;
	m->cas_hold_ns = 0;
	m->fail_burst = true;
	m->memory = MACHINE_MEMORY_SC;
	m->store_delay_ns = 5000;
	m->smt_ns = 0;
	m->smt_share = 1;
	m->socket_ns = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The length of the field at p: up to the next comma or the line's end. */
static size_t field_len(const char *p)
{
	size_t n = strcspn(p, ",\r\n");

	return n > 40 ? 40 : n;
}

static int topology_parse(const char *path, struct sim_topology *t, char *err, size_t err_len)
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
	struct stat st;
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "%s: a directory, not a topology file", path);
		fclose(f);
		return -EISDIR;
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
			if (end == p || !isfinite(v) || v < 0) {
				snprintf(err, err_len,
					 "%s:%u: core %u to core %u: expected a latency "
					 "in ns (a finite number, 0 or more), found '%.*s'",
					 path, lineno, row, col, (int)field_len(p), p);
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
		/* The rest of the row is empty fields: a value there (the diagonal, the upper
		 * triangle, a ragged row) is not read, so it is refused rather than ignored. */
		p += strspn(p, " \t,\r\n");
		if (*p) {
			snprintf(err, err_len,
				 "%s:%u: core %u: '%.*s' after its %u latenc%s (row i of the "
				 "lower-triangular file holds the latencies to cores 0..i-1, then "
				 "empty fields)",
				 path, lineno, row, (int)field_len(p), p, row,
				 row == 1 ? "y" : "ies");
			rc = -EINVAL;
			goto out;
		}
		row++;
	}
	if (row < 2) {
		snprintf(err, err_len, "%s: %u core%s: a topology needs at least 2", path, row,
			 row == 1 ? "" : "s");
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

/*
 * The files parsed so far in this process, kept for its life: a run loads its topology once
 * (writing machine.txt) before it forks its trials, which then copy the parsed matrix instead
 * of parsing the CSV again (strtod was 3% of a short trial). A file is known by its inode,
 * size and modification time, so a file rewritten in place is parsed again.
 */
struct topo_cached {
	struct topo_cached *next;
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct sim_topology t;
};

static struct topo_cached *topo_cache;
static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;

static bool topo_same(const struct topo_cached *c, const char *path, const struct stat *st)
{
	return !strcmp(c->path, path) && c->dev == st->st_dev && c->ino == st->st_ino &&
	       c->size == st->st_size && c->mtime.tv_sec == st->st_mtim.tv_sec &&
	       c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static int topology_copy(struct sim_topology *dst, const struct sim_topology *src)
{
	*dst = *src;
	dst->lat = malloc((size_t)src->n * src->n * sizeof(*dst->lat));
	if (!dst->lat) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->lat, src->lat, (size_t)src->n * src->n * sizeof(*dst->lat));
	return 0;
}

int sim_topology_load(const char *path, struct sim_topology *t, char *err, size_t err_len)
{
	struct topo_cached *c;
	struct stat st;
	int rc;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st))
		return topology_parse(path, t, err, err_len); /* says why */
	pthread_mutex_lock(&topo_lock);
	for (c = topo_cache; c && !topo_same(c, path, &st); c = c->next)
		;
	if (c) {
		rc = topology_copy(t, &c->t);
		pthread_mutex_unlock(&topo_lock);
		if (rc)
			snprintf(err, err_len, "%s: out of memory", path);
		return rc;
	}
	rc = topology_parse(path, t, err, err_len);
	c = rc ? NULL : calloc(1, sizeof(*c));
	if (c && (c->path = strdup(path)) && !topology_copy(&c->t, t)) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
		c->size = st.st_size;
		c->mtime = st.st_mtim;
		c->next = topo_cache;
		topo_cache = c;
	} else if (c) {
		free(c->path);
		free(c);
	}
	pthread_mutex_unlock(&topo_lock);
	return rc;
}

int32_t sim_topology_smt_sibling(const struct sim_topology *t, uint32_t core, double smt_ns)
{
	for (uint32_t j = 0; smt_ns > 0 && j < t->n; j++)
		if (j != core && t->lat[core * t->n + j] <= smt_ns)
			return (int32_t)j;
	return -1;
}

void sim_topology_free(struct sim_topology *t)
{
	if (!t)
		return;
	free(t->lat);
	memset(t, 0, sizeof(*t));
}

uint32_t sim_topology_socket(const struct sim_topology *t, uint32_t core, double socket_ns)
{
	for (uint32_t j = 0; j < core; j++)
		if (t->lat[core * t->n + j] <= socket_ns)
			return j;
	return core;
}
