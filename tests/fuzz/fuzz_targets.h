/* SPDX-License-Identifier: MIT */
/*
 * fuzz_targets.h -- what each fuzz harness does with one input, shared by the libFuzzer
 * harnesses (tests/fuzz/fuzz_*.c) and the Criterion test that replays the kept inputs
 * (tests/unit/test_fuzz_regressions.c). Every reader under test takes a path, so an input is
 * written to a temporary file first. Included by exactly one translation unit per program.
 *
 * scenario: the input is an INI file, optionally followed by a line "--set" and then one
 *           --set argument per line (scenario_load with a fake plugin registry, then every
 *           sweep point up to a cap).
 * csv:      the input is a trials.csv (csv_read, as `iommulab plot` reads it).
 * topology: the input is a latency matrix (sim_topology_load, [machine] topology = ...).
 * histfile: the input is a histograms.csv (histfile_parse, as compare, merge and a resume read
 *           it, straight from the input's bytes: no NUL after them); what it accepts must
 *           rebuild into histograms and be written back as the same bytes (the format has one
 *           spelling per histogram), else the harness traps.
 */
#ifndef IOMMULAB_FUZZ_TARGETS_H
#define IOMMULAB_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/csv.h"
#include "results/histfile.h"
#include "scenario/scenario.h"
#include "engine/sim/sim.h"

#define FUZZ_MAX_SETS	16
#define FUZZ_MAX_POINTS 64

/* ---- the input as a file ---------------------------------------------------------------- */

static char fuzz_path[64];

static inline void fuzz_unlink(void)
{
	if (fuzz_path[0])
		unlink(fuzz_path);
}

/* Write data to this process's temporary file; its path, or NULL. */
static inline const char *fuzz_file(const uint8_t *data, size_t len)
{
	FILE *f;

	if (!fuzz_path[0]) {
		int fd;

		/* tmpfs where there is one: one file write per input. */
		snprintf(fuzz_path, sizeof(fuzz_path), "%s/iommulab-fuzz-XXXXXX",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
		fd = mkstemp(fuzz_path);
		if (fd < 0) {
			fuzz_path[0] = '\0';
			return NULL;
		}
		close(fd);
		atexit(fuzz_unlink);
	}
	f = fopen(fuzz_path, "wb");
	if (!f)
		return NULL;
	if (len && fwrite(data, 1, len, f) != len) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	return fuzz_path;
}

/* ---- scenario: a fake registry with the names the shipped configs use ---------------------- */

struct fuzz_cfg {
	uint64_t batch;
	int mode;
	char *label;
	double ratio;
	bool flag;
};

static const char *const fuzz_modes[] = { "fast", "slow", NULL };

static const struct lab_param fuzz_params[] = {
	{ "batch", LAB_PARAM_UINT, "8", 1, 64, NULL, "a uint", offsetof(struct fuzz_cfg, batch) },
	{ "mode", LAB_PARAM_ENUM, "fast", 0, 0, fuzz_modes, "an enum",
	  offsetof(struct fuzz_cfg, mode) },
	{ "label", LAB_PARAM_STRING, "x", 0, 0, NULL, "a string",
	  offsetof(struct fuzz_cfg, label) },
	{ "depot_max", LAB_PARAM_UINT, "32", 1, 65536, NULL, "a uint",
	  offsetof(struct fuzz_cfg, batch) },
	{ "ratio", LAB_PARAM_DOUBLE, "0.5", 0, 1, NULL, "a double",
	  offsetof(struct fuzz_cfg, ratio) },
	{ "flag", LAB_PARAM_BOOL, "true", 0, 0, NULL, "a bool", offsetof(struct fuzz_cfg, flag) },
};

#define FUZZ_PLUGIN(KIND, NAME)                                                                    \
	{                                                                                          \
		.magic = LAB_PLUGIN_MAGIC, .abi_major = LAB_ABI_MAJOR, .abi_minor = LAB_ABI_MINOR, \
		.struct_size = sizeof(struct lab_plugin), .kind = KIND, .name = NAME,              \
		.summary = "fuzz", .version = "1", .params = fuzz_params,                          \
		.n_params = sizeof(fuzz_params) / sizeof(fuzz_params[0]),                          \
		.config_size = sizeof(struct fuzz_cfg)                                             \
	}

static const struct lab_plugin fuzz_registry[] = {
	FUZZ_PLUGIN(LAB_KIND_CMDQ, "cmpxchg"),	   FUZZ_PLUGIN(LAB_KIND_CMDQ, "spinlock"),
	FUZZ_PLUGIN(LAB_KIND_CMDQ, "mcs"),	   FUZZ_PLUGIN(LAB_KIND_CMDQ, "batched"),
	FUZZ_PLUGIN(LAB_KIND_CMDQ, "null"),	   FUZZ_PLUGIN(LAB_KIND_CMDQ, "fake"),
	FUZZ_PLUGIN(LAB_KIND_IOVA, "fixed_depot"), FUZZ_PLUGIN(LAB_KIND_IOVA, "scaled_depot"),
	FUZZ_PLUGIN(LAB_KIND_IOVA, "depotless"),   FUZZ_PLUGIN(LAB_KIND_IOVA, "list_depot"),
	FUZZ_PLUGIN(LAB_KIND_IOVA, "null"),
};

#define FUZZ_N_PLUGINS (sizeof(fuzz_registry) / sizeof(fuzz_registry[0]))

static inline const struct lab_plugin *fuzz_find(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < FUZZ_N_PLUGINS; i++)
		if (!strcmp(fuzz_registry[i].name, name))
			return &fuzz_registry[i];
	return NULL;
}

static inline const struct lab_plugin *fuzz_find_kind(void *ctx, uint32_t kind, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < FUZZ_N_PLUGINS; i++)
		if (fuzz_registry[i].kind == kind && !strcmp(fuzz_registry[i].name, name))
			return &fuzz_registry[i];
	return NULL;
}

static inline const struct lab_plugin *fuzz_at(void *ctx, size_t i)
{
	(void)ctx;
	return i < FUZZ_N_PLUGINS ? &fuzz_registry[i] : NULL;
}

static inline int fuzz_scenario_one(const uint8_t *data, size_t len)
{
	static const struct plugin_lookup lookup = {
		.find = fuzz_find, .ctx = NULL, .find_kind = fuzz_find_kind, .at = fuzz_at
	};
	static const char marker[] = "\n--set\n";
	const char *sets[FUZZ_MAX_SETS];
	struct diag_list diags = { 0 };
	size_t ini_len = len, n_sets = 0;
	char *copy = malloc(len + 1), *p;
	struct scenario *s;
	const char *path;

	if (!copy)
		return 0;
	memcpy(copy, data, len);
	copy[len] = '\0';
	/* The INI part ends at the first "\n--set\n"; the lines after it are --set arguments. */
	p = strstr(copy, marker);
	if (p && (size_t)(p - copy) < len) {
		ini_len = (size_t)(p - copy) + 1;
		p += sizeof(marker) - 1;
		while (p && *p && n_sets < FUZZ_MAX_SETS) {
			char *nl = strchr(p, '\n');

			if (nl)
				*nl = '\0';
			sets[n_sets++] = p;
			p = nl ? nl + 1 : NULL;
		}
	}
	path = fuzz_file(data, ini_len);
	if (path) {
		s = scenario_load(path, sets, n_sets, &lookup, &diags);
		if (s) {
			size_t n = scenario_n_points(s);

			for (size_t i = 0; i < n && i < FUZZ_MAX_POINTS; i++) {
				struct scenario_point pt;

				if (!scenario_point(s, i, &pt))
					scenario_point_free(s, &pt);
			}
			scenario_free(s);
		}
		diag_clear(&diags);
	}
	free(copy);
	return 0;
}

/* ---- csv and topology ---------------------------------------------------------------------- */

static inline int fuzz_csv_one(const uint8_t *data, size_t len)
{
	const char *path = fuzz_file(data, len);
	struct csv_table t;
	char err[512];

	if (path && !csv_read(path, &t, err, sizeof(err))) {
		(void)csv_column(&t, "plugin");
		for (size_t i = 0; i < t.n_rows; i++)
			for (size_t c = 0; c < t.n_cols; c++)
				(void)strlen(t.rows[i][c]);
		csv_free(&t);
	}
	return 0;
}

static inline int fuzz_topology_one(const uint8_t *data, size_t len)
{
	const char *path = fuzz_file(data, len);
	struct sim_topology t;
	char err[512];

	if (path && !sim_topology_load(path, &t, err, sizeof(err))) {
		double sum = 0;

		for (size_t i = 0; i < (size_t)t.n * t.n; i++)
			sum += t.lat[i];
		(void)sum;
		sim_topology_free(&t);
	}
	return 0;
}

static inline int fuzz_histfile_one(const uint8_t *data, size_t len)
{
	struct histfile hf;
	struct hist *h;
	char err[512], *text = NULL;
	size_t text_len = 0;
	FILE *m;

	if (histfile_parse((const char *)data, len, "fuzz", &hf, err, sizeof(err)))
		return 0;
	h = malloc(sizeof(*h));
	m = open_memstream(&text, &text_len);
	if (h && m) {
		histfile_write_header(m);
		for (size_t i = 0; i < hf.n; i++) {
			size_t n;

			hist_reset(h);
			histfile_rec_merge(h, &hf.recs[i]);
			(void)hist_quantile(h, 0.99);
			(void)hist_stddev(h);
			(void)histfile_find(&hf, hf.recs[i].trial, &n);
			histfile_write_rec(m, &hf.recs[i]);
		}
		fclose(m);
		if (text_len != len || memcmp(text, data, len))
			__builtin_trap(); /* accepted, but not as the writer spells it */
	} else if (m) {
		fclose(m);
	}
	free(text);
	free(h);
	histfile_free(&hf);
	return 0;
}

#endif /* IOMMULAB_FUZZ_TARGETS_H */
