/* SPDX-License-Identifier: MIT */
/*
 * built_plugins -- the shipped plugins of this build tree (build/plugins/KIND-NAME.so) as the
 * unit tests that run whole trials open them: through the loader, with its checks, as the
 * CLI does (the sim build is found beside each), kept loaded for the test's short process.
 * Header-only: each test is one executable.
 */
#ifndef IOMMULAB_TEST_BUILT_PLUGINS_H
#define IOMMULAB_TEST_BUILT_PLUGINS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"
#include "params/params.h"

/*
 * The plugins built_open() loaded, kept for the process: held from a global, so LeakSanitizer
 * sees them reachable (held only through the descriptor, which points into the .so, each
 * loaded_plugin was reported as leaked whenever no stale copy of its address happened to lie
 * in scanned memory: the ASan stage's identity test failed that way, now and then).
 */
static struct loaded_plugin *built_kept[64];
static size_t built_n_kept;

static inline const struct lab_plugin *built_open(const char *kind, const char *name, bool must)
{
	char path[1024], err[1024];
	struct loaded_plugin *lp;

	snprintf(path, sizeof(path), "%s/plugins/%s-%s.so", TEST_BUILD_ROOT, kind, name);
	if (!must && access(path, F_OK))
		return NULL;
	cr_assert_lt(built_n_kept, sizeof(built_kept) / sizeof(built_kept[0]),
		     "built_open: more plugins than built_kept holds");
	lp = calloc(1, sizeof(*lp));
	cr_assert_not_null(lp);
	cr_assert_eq(plugin_load(path, lp, err, sizeof(err)), 0, "%s", err);
	built_kept[built_n_kept++] = lp;
	return lp->desc;
}

/* KIND-NAME.so of the build tree; the test fails when it cannot be loaded. */
static inline const struct lab_plugin *load_kind(const char *kind, const char *name)
{
	return built_open(kind, name, true);
}

/* A scenario's plugin lookup over the build tree (struct plugin_lookup's find). */
static inline const struct lab_plugin *find_built(void *ctx, const char *name)
{
	const struct lab_plugin *p = built_open("cmdq", name, false);

	(void)ctx;
	return p ? p : built_open("iova", name, false);
}

/* p's configuration at its table's defaults, into buf. */
static inline void plugin_defaults(const struct lab_plugin *p, void *buf, size_t len)
{
	char err[256];

	cr_assert_leq(p->config_size, len);
	memset(buf, 0, len);
	cr_assert_eq(param_set_defaults(p->params, p->n_params, buf, err, sizeof(err)), 0, "%s",
		     err);
}

#endif /* IOMMULAB_TEST_BUILT_PLUGINS_H */
