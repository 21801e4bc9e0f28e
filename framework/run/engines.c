/* SPDX-License-Identifier: MIT */
/* engines -- the table of engines (see engines.h): an engine is one entry here. */
#include "run/engines.h"

#include <stddef.h>
#include <string.h>

#include "engine/native/native.h"
#include "engine/sim/sim_engine.h"

static const struct engine_ops *const engines[] = { &native_engine, &sim_engine };

const struct engine_ops *engine_find(enum engine_kind kind)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (engines[i]->kind == kind)
			return engines[i];
	return NULL;
}

const struct engine_ops *engine_find_name(const char *name)
{
	for (size_t i = 0; i < engine_count(); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

size_t engine_count(void)
{
	return sizeof(engines) / sizeof(engines[0]);
}

const struct engine_ops *engine_at(size_t i)
{
	return i < engine_count() ? engines[i] : NULL;
}
