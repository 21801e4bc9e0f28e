/* SPDX-License-Identifier: MIT */
/*
 * loader -- find, load and check plugins.
 *
 * A plugin file is "<kind>-<name>.so" (cmdq-cmpxchg.so, iova-fixed_depot.so). Directories are
 * searched in the order given (the CLI passes --plugin-dir, then IOMMULAB_PLUGIN_PATH, then
 * the built-in directory); the same directory reached twice is read once. Every refusal is a
 * diagnostic naming the file and what was expected versus found; a refused file never stops
 * the others from loading. Two files that declare the same name are an error for that name:
 * the registry remembers both and refuses to pick one.
 */
#ifndef IOMMULAB_LOADER_H
#define IOMMULAB_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include <iommulab/plugin.h>

#include "util/diag.h"

struct loaded_plugin {
	char *path;
	void *handle;
	const struct lab_plugin *desc;
	char *duplicate_of; /* the other file with the same name, or NULL */
};

/* A file the registry has tried, loaded or refused: reached again, it is not tried again. */
struct tried_file {
	unsigned long long dev, ino;
	int rc; /* what registry_add_file() returned for it */
};

struct plugin_registry {
	struct loaded_plugin *v;
	size_t n;
	size_t cap;
	struct tried_file *tried;
	size_t n_tried, cap_tried;
};

/*
 * Load and check one file. 0, or -errno with the reason in err (the file is not kept). The file
 * is first loaded and checked in a forked child (one fork per call), so one that crashes, ends
 * the process or hangs in a constructor or its entry function is refused, and the caller lives
 * on; only then is it loaded here.
 */
int plugin_load(const char *path, struct loaded_plugin *out, char *err, size_t err_len);
void plugin_unload(struct loaded_plugin *p);

/* "cmdq", "iova" or "?". */
const char *plugin_kind_name(uint32_t kind);

/* Add one explicit .so file. Refusals and duplicates go to diags. 0 or -errno. */
int registry_add_file(struct plugin_registry *r, const char *path, struct diag_list *diags);

/* Add every *.so of a directory (sorted by name). A missing directory: -ENOENT, one diag
 * unless quiet. */
int registry_add_dir(struct plugin_registry *r, const char *dir, bool quiet,
		     struct diag_list *diags);

/* The plugin called name, or NULL (also NULL, with why set, when the name is ambiguous). */
const struct loaded_plugin *registry_find(const struct plugin_registry *r, const char *name,
					  const char **why);

void registry_free(struct plugin_registry *r);

/*
 * The sim build of a loaded plugin (its .sim.so twin, built with -DLAB_ENGINE_SIM): the file
 * next to it called <kind>-<name>.sim.so, loaded with every check plugin_load() makes, and
 * held to the native build's promises (name, kind, ABI, config, counters, phases,
 * parameters). Opened once and kept for the life of the process. NULL with err otherwise.
 */
const struct lab_plugin *plugin_sim_build(const struct lab_plugin *native, char *err,
					  size_t err_len);

/* The directory of plugins next to the running executable (a build tree), else the install
 * directory. Returns a static buffer. */
const char *loader_builtin_dir(void);

#endif /* IOMMULAB_LOADER_H */
