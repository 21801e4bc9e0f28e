/* SPDX-License-Identifier: MIT */
/*
 * scenario -- load and validate a scenario INI file, apply --set overrides, expand the sweep.
 *
 * A scenario has fixed sections, each described by a struct lab_param table (see
 * scenario_sections()), plus [sweep] (section.key = v1, v2, ...; a bare key means
 * [scenario]), [plugins] (cmdq = a, b / iova = x, y) and one [plugin.NAME] section per listed
 * plugin, validated against that plugin's own table. Loading reports every problem at once
 * as "FILE:LINE: [section] key: reason" (did-you-mean for unknown keys) and nothing runs if
 * there is any.
 */
#ifndef IOMMULAB_SCENARIO_H
#define IOMMULAB_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "util/diag.h"

enum workload_kind { WORKLOAD_CMDQ = 0, WORKLOAD_IOVA, WORKLOAD_DMA };
enum engine_kind { ENGINE_NATIVE = 0, ENGINE_SIM };
enum device_mode { DEVICE_INLINE = 0, DEVICE_THREAD };
enum oversubscribe_policy { OVERSUBSCRIBE_REFUSE = 0, OVERSUBSCRIBE_ALLOW };

/* [scenario] */
struct scenario_main {
	char *name;		/* results/<name>-<time>/ */
	int workload;		/* enum workload_kind */
	int engine;		/* enum engine_kind */
	uint64_t cpus;		/* CPUs (worker threads / virtual CPUs) in the trial */
	uint64_t duration_ms;	/* measured time per trial */
	uint64_t warmup_ms;	/* unmeasured time before it */
	uint64_t repeats;	/* trials per sweep point and plugin */
	uint64_t seed;
	int oversubscribe;	/* enum oversubscribe_policy */
	bool phases;		/* record per-phase times */
	uint64_t watchdog_ms;	/* a CPU with no completed op for this long fails the trial */
};

/* [smmu]: the device model */
struct scenario_smmu {
	uint64_t queue_shift;	/* log2 entries */
	bool msi;		/* CMD_SYNC completes by MSI write (else poll CONS) */
	int device;		/* enum device_mode */
	uint64_t tlbi_va_ns, tlbi_asid_ns, cfgi_ns, atc_inv_ns, other_ns, sync_ns;
	uint64_t prod_write_ns;	/* MMIO write of PROD, paid by the writer */
	uint64_t cons_read_ns;	/* MMIO read of CONS, paid by the reader */
};

/* [workload.cmdq] */
struct scenario_wl_cmdq {
	uint64_t cmds_per_sync; /* TLBI commands before each CMD_SYNC */
	uint64_t think_ns;	/* local work between ops */
};

/* The framework's part of one resolved configuration. Plugin configs live beside it. */
struct scenario_cfg {
	struct scenario_main scenario;
	struct scenario_smmu smmu;
	struct scenario_wl_cmdq wl_cmdq;
};

/* One fixed section: its name, its table, and where its struct sits in scenario_cfg. */
struct scenario_section {
	const char *name; /* "scenario", "smmu", "workload.cmdq", ... */
	const struct lab_param *params;
	size_t n_params;
	size_t offset; /* of the section's struct within struct scenario_cfg */
	const char *help;
};

/* The fixed sections, for parsing and for `iommulab list --params`. */
const struct scenario_section *scenario_sections(size_t *n);

/* How the scenario finds the plugins it names (the loader's registry, or a test's table). */
struct plugin_lookup {
	const struct lab_plugin *(*find)(void *ctx, const char *name);
	void *ctx;
};

/* A plugin as the scenario uses it: which one, and its config at the base point. */
struct scenario_plugin {
	const struct lab_plugin *desc;
	void *config; /* desc->config_size bytes */
};

/* One swept key: "section.key" and its values as text. */
struct sweep_axis {
	char *section;
	char *key;
	char **values;
	size_t n_values;
};

struct scenario {
	char *path;			/* as given */
	struct scenario_cfg base;	/* all framework keys, defaults + file + --set */
	struct scenario_plugin *cmdq;	/* [plugins] cmdq = ..., in order */
	size_t n_cmdq;
	struct scenario_plugin *iova;	/* [plugins] iova = ..., in order */
	size_t n_iova;
	struct sweep_axis *axes;	/* in file order */
	size_t n_axes;
};

/*
 * Load path, apply sets ("section.key=value", later wins, checked like file values), validate.
 * On success returns the scenario and diags is empty. On any problem returns NULL with one
 * diagnostic per problem in diags (file:line where there is a line; "--set" otherwise).
 */
struct scenario *scenario_load(const char *path, const char *const *sets, size_t n_sets,
			       const struct plugin_lookup *plugins, struct diag_list *diags);

void scenario_free(struct scenario *s);

/* Number of sweep points: product of the axes' value counts (1 without axes). */
size_t scenario_n_points(const struct scenario *s);

/*
 * The resolved configuration of sweep point i (0 <= i < n_points; the last axis varies
 * fastest): cfg gets base with the swept framework keys applied; plugin_cfgs[k] (allocated,
 * one per s->cmdq then s->iova, in that order) get each plugin's base config with swept
 * [plugin.NAME] keys applied. Free with scenario_point_free. 0 or -errno.
 */
struct scenario_point {
	struct scenario_cfg cfg;
	void **plugin_cfgs;	/* n_cmdq + n_iova entries */
	size_t n_plugin_cfgs;
	char **swept_values;	/* the value of each axis at this point, as text */
};
int scenario_point(const struct scenario *s, size_t i, struct scenario_point *out);
void scenario_point_free(const struct scenario *s, struct scenario_point *p);

/* Write the resolved scenario (every key, defaults included) as an INI file. 0 or -errno. */
int scenario_write_resolved(const struct scenario *s, const char *path);

#endif /* IOMMULAB_SCENARIO_H */
