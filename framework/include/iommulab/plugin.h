/* SPDX-License-Identifier: MIT */
/*
 * iommulab plugin ABI: the descriptor every plugin returns from its one exported entry symbol.
 *
 * A plugin is a shared object exporting exactly one symbol, LAB_PLUGIN_ENTRY_NAME, a function
 * returning a pointer to a const struct lab_plugin. The host checks, in this order: the magic,
 * the ABI major (must equal LAB_ABI_MAJOR), the ABI minor (must be <= the host's),
 * struct_size, the kind, that the name matches the file name ("<kind>-<name>.so"), the ops
 * table (required ops present), and the parameter table (unique keys, help present, defaults
 * that parse and lie in range, fields inside config_size). Any mismatch refuses the plugin
 * with a message naming the file, what was expected and what was found.
 *
 * Extending (SQLite/fio habit): the version fields stay first; new members are only ever
 * appended at the end of a struct, each commented with the ABI minor that added it, and
 * the host reads a member only if struct_size says the plugin was built with it
 * (LAB_OPS_HAS). A change to an existing member bumps LAB_ABI_MAJOR.
 */
#ifndef IOMMULAB_PLUGIN_H
#define IOMMULAB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define LAB_PLUGIN_MAGIC 0x494f4d4cu /* "IOML" */
#define LAB_ABI_MAJOR	 1
#define LAB_ABI_MINOR	 2 /* 1: struct lab_smmu nqueues, qidx, queue (cmdq.h); 2: lab_host qnodes */

#define LAB_PLUGIN_ENTRY      iommulab_plugin_entry
#define LAB_PLUGIN_ENTRY_NAME "iommulab_plugin_entry"

/* Mark the entry function; everything else in a plugin stays hidden. */
#define LAB_PLUGIN_EXPORT __attribute__((visibility("default")))

/* True when a struct that starts with uint32_t struct_size was built with MEMBER. */
#define LAB_OPS_HAS(ops, member)                                                                   \
	((ops)->struct_size >= offsetof(__typeof__(*(ops)), member) + sizeof((ops)->member))

enum lab_plugin_kind {
	LAB_KIND_CMDQ = 1, /* ops: struct lab_cmdq_ops (cmdq.h) */
	LAB_KIND_IOVA = 2, /* ops: struct lab_iova_ops (iova.h) */
};

/*
 * Parameter types and how each is stored in the plugin's config struct at .offset:
 *   LAB_PARAM_BOOL   bool      INI: true/false, yes/no, on/off, 1/0
 *   LAB_PARAM_INT    int64_t   decimal or 0x hex, optional k/M/G suffix (x1000); [min, max]
 *   LAB_PARAM_UINT   uint64_t  as INT, non-negative
 *   LAB_PARAM_DOUBLE double    [min, max]
 *   LAB_PARAM_ENUM   int       index into .choices (NULL-terminated list of words)
 *   LAB_PARAM_STRING char *    host-owned copy, valid for the life of the config
 */
enum lab_param_type {
	LAB_PARAM_BOOL = 1,
	LAB_PARAM_INT,
	LAB_PARAM_UINT,
	LAB_PARAM_DOUBLE,
	LAB_PARAM_ENUM,
	LAB_PARAM_STRING,
};

/* One tunable. A table of these is the documentation, the parser and the validator. */
struct lab_param {
	const char *key; /* INI key, lower_snake_case, unique in the table */
	enum lab_param_type type;
	const char *def;	    /* default, as INI text; must parse and be in range */
	double min, max;	    /* inclusive range for INT, UINT, DOUBLE (ignored otherwise) */
	const char *const *choices; /* ENUM only: NULL-terminated list of accepted words */
	const char *help;	    /* one line, required */
	size_t offset;		    /* where the value lives in the config struct */
};

/* How the host reports a counter. */
enum lab_counter_kind {
	LAB_COUNTER_EVENTS = 1, /* events: reset after warm-up, reported per op and per second */
	LAB_COUNTER_LEVEL,	/* a level (things held): per-CPU deltas summed, never reset */
};

struct lab_counter {
	const char *name; /* lower_snake_case, e.g. "cas_attempts" */
	enum lab_counter_kind kind;
	const char *help; /* one line: what one unit means */
};

#define LAB_MAX_COUNTERS 32
#define LAB_MAX_PHASES	 8 /* phase 0 is the host's ("other"); plugins name 1..7 */

/* The descriptor. Returned by the entry function; must stay valid while loaded. */
struct lab_plugin {
	uint32_t magic;			/* LAB_PLUGIN_MAGIC */
	uint16_t abi_major;		/* LAB_ABI_MAJOR the plugin was built against */
	uint16_t abi_minor;		/* LAB_ABI_MINOR the plugin was built against */
	uint32_t struct_size;		/* sizeof(struct lab_plugin) as built */
	uint32_t kind;			/* enum lab_plugin_kind */
	const char *name;		/* short name, [a-z0-9_]+; the file is "<kind>-<name>.so" */
	const char *summary;		/* one line for `iommulab list` */
	const char *version;		/* free-form, recorded in every result */
	const struct lab_param *params; /* may be NULL when n_params == 0 */
	uint32_t n_params;
	uint32_t config_size;		    /* size of the config struct the params fill */
	const struct lab_counter *counters; /* indexed by lab_count()'s id */
	uint32_t n_counters;		    /* <= LAB_MAX_COUNTERS */
	const char *const
		*phases;   /* names of phases 1..n_phases (index 0 of this array is phase 1) */
	uint32_t n_phases; /* < LAB_MAX_PHASES */
	const void *ops;   /* struct lab_cmdq_ops or struct lab_iova_ops, by kind */
};

/* The one exported symbol. */
typedef const struct lab_plugin *(*lab_plugin_entry_fn)(void);

/* Convenience for tables. */
#define LAB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* IOMMULAB_PLUGIN_H */
