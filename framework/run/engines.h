/* SPDX-License-Identifier: MIT */
/* engines -- the engines a trial can run on, by the [scenario] engine that names them. */
#ifndef IOMMULAB_ENGINES_H
#define IOMMULAB_ENGINES_H

#include <stddef.h>

#include "engine/engine.h"

/* The engine of that kind, or NULL. */
const struct engine_ops *engine_find(enum engine_kind kind);

/* The engine called name ("native", "sim"), or NULL. */
const struct engine_ops *engine_find_name(const char *name);

/* Every engine, in a fixed order: engine_at(0 .. engine_count() - 1). */
size_t engine_count(void);
const struct engine_ops *engine_at(size_t i);

#endif /* IOMMULAB_ENGINES_H */
