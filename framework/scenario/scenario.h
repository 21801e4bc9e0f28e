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

/*
 * The longest line a scenario file may have: inih (r55, INI_MAX_LINE 200) reads lines into a
 * 200-byte buffer and silently cuts anything longer, so longer lines are refused instead.
 */
#define SCENARIO_MAX_LINE 199

/* The most CPUs a scenario may ask for ([scenario] cpus; sweeps too). */
#define SCENARIO_MAX_CPUS 4096
/* The most virtual CPUs engine = sim runs (SIM_MAX_CPUS), checked when a scenario loads. */
#define SCENARIO_SIM_MAX_CPUS 1024
/*
 * [machine] perturb_ns: a virtual CPU stalls at one in this many of its shared accesses (the
 * sim's own definition; here so the key's help says it without scenario/ including the sim).
 */
#define SCENARIO_SIM_PERTURB_EVERY 16

enum workload_kind { WORKLOAD_CMDQ = 0, WORKLOAD_IOVA, WORKLOAD_DMA, WORKLOAD_MICRO };
enum engine_kind { ENGINE_NATIVE = 0, ENGINE_SIM };
enum device_mode { DEVICE_INLINE = 0, DEVICE_THREAD };
enum oversubscribe_policy { OVERSUBSCRIBE_REFUSE = 0, OVERSUBSCRIBE_ALLOW };

/* [scenario] */
struct scenario_main {
	char *name;	      /* results/<name>-<time>/ */
	int workload;	      /* enum workload_kind */
	int engine;	      /* enum engine_kind */
	uint64_t cpus;	      /* CPUs (worker threads / virtual CPUs) in the trial */
	uint64_t duration_ms; /* measured time per trial */
	uint64_t warmup_ms;   /* unmeasured time before it */
	uint64_t repeats;     /* trials per sweep point and plugin */
	uint64_t seed;
	int oversubscribe;     /* enum oversubscribe_policy */
	bool phases;	       /* record per-phase times */
	uint64_t watchdog_ms;  /* a CPU with no completed op for this long fails the trial */
	uint64_t sample_every; /* cmdq, micro: time every N-th measured op (1: all) */
};

/* [smmu]: the device model */
struct scenario_smmu {
	uint64_t queue_shift; /* log2 entries */
	bool msi;	      /* CMD_SYNC completes by MSI write (else poll CONS) */
	int device;	      /* enum device_mode */
	/* Latency of each command from its dispatch to its completion (invalidations overlap). */
	uint64_t tlbi_va_ns, tlbi_asid_ns, cfgi_ns, atc_inv_ns, other_ns;
	uint64_t sync_ns;	/* a CMD_SYNC's own completion once all before it completed */
	uint64_t prod_write_ns; /* MMIO write of PROD, paid by the writer */
	uint64_t cons_read_ns;	/* MMIO read of CONS, paid by the reader */
	uint64_t fetch_ns;	/* reading and decoding one command, in order, one at a time */
	uint64_t inv_slots;	/* commands other than CMD_SYNC in flight at once (0 read as 1) */
	uint64_t msi_cons_ns;	/* from a CMD_SYNC's MSI write landing to CONS moving past it */
	uint64_t queues;	/* command queues (ECMDQs, VCMDQs), 0 read as 1 */
};

/* The most command queues the device model has ([smmu] queues). */
#define SCENARIO_SMMU_MAX_QUEUES 256

/* [workload.cmdq] */
struct scenario_wl_cmdq {
	uint64_t cmds_per_sync; /* TLBI commands before each CMD_SYNC */
	bool mixed;		/* each op a seeded 0..cmds_per_sync commands, some unsynced */
	uint64_t think_ns;	/* local work between ops */
	double think_jitter;	/* each think time uniform in think_ns x [1 - j, 1 + j] */
};

/* The framework's part of one resolved configuration. Plugin configs live beside it. */
/* [workload.iova] (see framework/workload/iova_wl.h) */
struct scenario_wl_iova {
	int pattern; /* enum iova_pattern: same-cpu | remote-free | producer-consumer | irq */
	uint64_t free_every; /* remote-free: only every k-th CPU frees */
	uint64_t depth;	     /* outstanding ranges per CPU */
	uint64_t min_pages, max_pages;
	uint64_t dma_bits; /* the device's DMA mask */
	uint64_t think_ns;
	uint64_t irq_cpus;    /* irq: hardware queues, one IRQ CPU each */
	uint64_t submit_cpus; /* irq: jobs (0: every CPU) */
	uint64_t io_ns;	      /* irq: allocation to completion */
	double io_jitter;     /* irq: io_ns varies uniformly by this fraction */
	uint64_t migrate_ns;  /* irq: jobs move to another CPU this often (0: never) */
};

/* [workload.dma] (see framework/workload/dma_wl.h) */
struct scenario_wl_dma {
	uint64_t pages; /* granule: pages per mapping */
	uint64_t pt_map_ns, pt_unmap_ns, trans_ns;
	uint64_t dma_bits;
	int pattern;	      /* enum dma_pattern: single | ways | irq */
	uint64_t batch;	      /* ways: maps, then unmaps, per loop */
	uint64_t think_ns;    /* ways: work after each map (the harness's memcpy) */
	double think_jitter;  /* ways: each think time uniform in think_ns x [1 - j, 1 + j] */
	uint64_t irq_cpus;    /* irq: hardware queues, one IRQ CPU each */
	uint64_t submit_cpus; /* irq: jobs (0: every CPU) */
	uint64_t depth;	      /* irq: I/Os in flight per job */
	uint64_t irq_ns;      /* irq: completion work besides the unmap */
	double trans_jitter;  /* irq: trans_ns varies uniformly by this fraction */
	uint64_t migrate_ns;  /* irq: jobs move to another CPU this often (0: never) */

	/* The invalidation mode (enum dma_mode: strict | lazy | passthrough) and its keys. */
	int mode;
	bool gather;		/* strict: one CMD_SYNC per unmap, not per page */
	bool range_inv;		/* strict: range TLBIs */
	int fq;			/* lazy: 0 percpu, 1 single */
	uint64_t fq_size;	/* lazy: entries per ring (0: the variant's) */
	uint64_t fq_timeout_ms; /* lazy: the timer (0: the variant's) */
	uint64_t direct_ns;	/* passthrough: dma-direct's map or unmap */

	/* The identity-map lookup of every request (enum idmap_kind: none | list | cached). */
	int identity;
	uint64_t devices; /* list: nodes in the identity domain's list */
	double position;  /* list: where the device sits, a fraction of devices (1: last) */
};

/* [workload.micro] (see framework/workload/micro_wl.h) */
struct scenario_wl_micro {
	int op;		   /* enum micro_op: atomic_add | cas_add | ticket_lock | tas_lock | ... */
	uint64_t think_ns; /* local work after each op */
	uint64_t critical_ns; /* lock ops: local work while holding the lock */
	int mode;	      /* enum micro_mode: latency | throughput */
};

/* [machine]: the simulated machine (engine = sim only; see framework/engine/sim/sim.h) */
enum machine_atomic { MACHINE_ATOMIC_NEAR = 0, MACHINE_ATOMIC_FAR, MACHINE_ATOMIC_ADAPTIVE };
/* What a load may see: every store at once (sc), or relaxed stores late and out of order. */
enum machine_memory { MACHINE_MEMORY_SC = 0, MACHINE_MEMORY_ARM };
/* The shipped, calibrated machines a [machine] section starts from (tables.c). */
enum machine_preset {
	MACHINE_PRESET_GRAVITON2 = 0,
	MACHINE_PRESET_KUNPENG920,
	MACHINE_PRESET_NONE
};
struct scenario_machine {
	int preset;	       /* enum machine_preset: the keys' values before [machine] sets any */
	char *topology;	       /* core-to-core CSV, resolved against the INI's folder; "" uniform */
	double line_ns;	       /* core-to-core transfer without a topology */
	double home_ns;	       /* transfer from the line's home (LLC / home node) or the device */
	double local_ns;       /* load or store hitting the own cache */
	double atomic_ns;      /* read-modify-write once the line is there */
	double op_ns;	       /* added to every lab.h operation */
	double occupancy;      /* fraction of a transfer during which the line serves nobody else */
	double read_occupancy; /* the same for a read miss; 0: occupancy (machine_read_occupancy) */
	double fail_hold; /* a far CAS whose compare fails holds the line this share of an atomic's
			     time */
	int atomic;	  /* enum machine_atomic: near (x86) | far (Arm LSE) | adaptive */
	double poll_ns;	  /* one MMIO register poll */
	double home_hold_ns; /* a far atomic's hold of the line at its home; 0: occupancy x home_ns
			      */
	double cas_hold_ns;  /* ...of a far CAS that succeeds; 0: home_hold_ns */
	bool fail_burst;     /* a failing far CAS at a busy line rides the burst that frees it */
	int memory;	     /* enum machine_memory */
	double store_delay_ns; /* arm: a relaxed store becomes visible within this; a load is
				  satisfied at most this early */
	double perturb_ns;     /* seeded stalls of up to this at shared accesses; 0: none */
	double smt_ns;	       /* topology pairs at most this far apart are one core's SMT
				  threads; 0: none */
	double smt_share;      /* a thread's speed at local work while its sibling runs too */
	double socket_ns;      /* topology pairs at most this far apart share a socket (0: off) */
};

/* The share of a read miss's transfer the line is held for: read_occupancy, 0 meaning occupancy. */
static inline double machine_read_occupancy(const struct scenario_machine *m)
{
	return m->read_occupancy > 0 ? m->read_occupancy : m->occupancy;
}

/* [faults]: fault injection (see framework/device/smmu.h and framework/engine/host.h) */
struct scenario_faults {
	uint64_t alloc_fail_every; /* every N-th lab_alloc() fails (0: never) */
	uint64_t sync_delay_ns;	   /* extra device time on a CMD_SYNC ... */
	uint64_t sync_delay_every; /* ... on every k-th one */
	uint64_t illegal_cmd_at;   /* the device rejects the N-th command it consumes (0: never) */
};

struct scenario_cfg {
	struct scenario_main scenario;
	struct scenario_smmu smmu;
	struct scenario_wl_cmdq wl_cmdq;
	struct scenario_wl_iova wl_iova;
	struct scenario_wl_dma wl_dma;
	struct scenario_machine machine;
	struct scenario_wl_micro wl_micro;
	struct scenario_faults faults;
};

/* One fixed section: its name, its table, and where its struct sits in scenario_cfg. */
struct scenario_section {
	const char *name; /* "scenario", "smmu", "workload.cmdq", ... */
	const struct lab_param *params;
	size_t n_params;
	size_t offset; /* of the section's struct within struct scenario_cfg */
	const char *help;
	size_t size; /* of the section's struct (its tables' config_size) */
};

/* The fixed sections, for parsing and for `iommulab list --params`. */
const struct scenario_section *scenario_sections(size_t *n);

/* The fixed section called name ("smmu"), or NULL. */
const struct scenario_section *scenario_find_section(const char *name);

/*
 * Reset m to preset's values: the table's defaults, then the preset's keys, its topology an
 * absolute path into scenario_topology_dir(). Frees the topology it replaces. 0 or -errno
 * (-EINVAL: no such preset; the reason in err).
 */
int scenario_machine_preset(struct scenario_machine *m, int preset, char *err, size_t err_len);

/* "graviton2", "kunpeng920", "none"; NULL for anything else. */
const char *scenario_machine_preset_name(int preset);

/*
 * One line naming the machine m is, for the run's plan line and machine.txt: the preset and
 * the keys whose values differ from it ("graviton2 (preset; home_ns, occupancy set in
 * [machine])"). Truncated to len.
 */
void scenario_machine_describe(const struct scenario_machine *m, char *buf, size_t len);

/*
 * Where the presets' topology files are: $IOMMULAB_TOPOLOGY_DIR, else the installed copy for
 * an installed binary, else the source tree's configs/topologies (a build tree).
 */
const char *scenario_topology_dir(void);

/* Deep-copy a framework configuration (its strings duplicated) / free its strings. 0 or -ENOMEM. */
int scenario_cfg_copy(struct scenario_cfg *dst, const struct scenario_cfg *src);
void scenario_cfg_free(struct scenario_cfg *cfg);

/*
 * How the scenario finds the plugins it names (the loader's registry, or a test's table).
 * find is required; the others are optional (NULL) and make the answers better.
 */
struct plugin_lookup {
	const struct lab_plugin *(*find)(void *ctx, const char *name);
	void *ctx;
	/* The plugin of this kind with this name. Names may repeat across kinds (cmdq-null.so and
	 * iova-null.so), which find alone cannot tell apart; without it find's answer must match.
	 */
	const struct lab_plugin *(*find_kind)(void *ctx, uint32_t kind, const char *name);
	/* The i-th known plugin (any kind), NULL past the last: the candidates for did-you-mean. */
	const struct lab_plugin *(*at)(void *ctx, size_t i);
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
	char *path;		      /* as given */
	struct scenario_cfg base;     /* all framework keys, defaults + file + --set */
	struct scenario_plugin *cmdq; /* [plugins] cmdq = ..., in order */
	size_t n_cmdq;
	struct scenario_plugin *iova; /* [plugins] iova = ..., in order */
	size_t n_iova;
	struct sweep_axis *axes; /* in file order */
	size_t n_axes;
};

/*
 * Load path, apply sets ("section.key=value", later wins, checked like file values), validate.
 * On success returns the scenario and diags is empty. On any problem returns NULL with one
 * diagnostic per problem in diags (file:line where there is a line; "--set" otherwise), in
 * line order, --set problems last.
 *
 * --set targets: "cpus=4" is scenario.cpus; "smmu.queue_shift=12", "workload.cmdq.think_ns=0",
 * "plugin.mcs.batch=4" (a listed plugin), "plugins.cmdq=mcs, spinlock" (replaces the list),
 * "sweep.cpus=1, 2, 4" (adds or replaces a sweep axis). A --set of a swept key also replaces
 * that sweep axis by the single value given, so "--set cpus=4" runs only cpus = 4 even when
 * the file sweeps cpus (the axis stays, with one value, so results still show the column).
 */
struct scenario *scenario_load(const char *path, const char *const *sets, size_t n_sets,
			       const struct plugin_lookup *plugins, struct diag_list *diags);

void scenario_free(struct scenario *s);

/* The sweep axis of section.key, NULL when the scenario does not sweep it. */
struct sweep_axis *scenario_find_axis(const struct scenario *s, const char *section,
				      const char *key);

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
	void **plugin_cfgs; /* n_cmdq + n_iova entries */
	size_t n_plugin_cfgs;
	char **swept_values; /* the value of each axis at this point, as text (n_axes entries;
			      * the array is the point's, the strings belong to the scenario) */
};
int scenario_point(const struct scenario *s, size_t i, struct scenario_point *out);
void scenario_point_free(const struct scenario *s, struct scenario_point *p);

/*
 * Write the resolved scenario (every key, defaults included, --set applied; [plugins], every
 * [plugin.NAME] and [sweep]) as an INI file that scenario_load reads back to the same points.
 * 0 or -errno: -EINVAL for a string value an INI line cannot hold (" ;", surrounding blanks),
 * -E2BIG for a line over the loader's limit.
 */
int scenario_write_resolved(const struct scenario *s, const char *path);

/*
 * The last line of a written scenario: this, then the SHA-256 of every byte before the blank
 * line above it, in hex. A value edited later no longer matches it (run --resume refuses).
 */
#define SCENARIO_CHECKSUM_LINE "; sha256 of the lines above: "

/*
 * As scenario_write_resolved, for a results folder's scenario.ini: a [machine] topology is
 * named as the folder's own copy of it, topology.csv (relative to the folder, so the folder
 * resumes and reruns from anywhere).
 */
int scenario_write_results(const struct scenario *s, const char *path);

#endif /* IOMMULAB_SCENARIO_H */
