/* SPDX-License-Identifier: MIT */
/* engine -- what every engine's result needs (see engine.h). */
#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int engine_result_alloc(struct engine_result *res, uint32_t ncpus, uint32_t n_metrics)
{
	res->cpus = calloc(ncpus, sizeof(*res->cpus));
	if (!res->cpus)
		return -ENOMEM;
	for (uint32_t i = 0; i < ncpus; i++) {
		res->cpus[i].hists = malloc(sizeof(struct hist) * (n_metrics ? n_metrics : 1));
		if (!res->cpus[i].hists) {
			engine_result_free(res, ncpus);
			return -ENOMEM;
		}
		for (uint32_t m = 0; m < n_metrics; m++)
			hist_reset(&res->cpus[i].hists[m]);
	}
	return 0;
}

void engine_result_free(struct engine_result *res, uint32_t ncpus)
{
	if (!res->cpus)
		return;
	for (uint32_t i = 0; i < ncpus; i++)
		free(res->cpus[i].hists);
	free(res->cpus);
	res->cpus = NULL;
}

void engine_result_add_stat(struct engine_result *res, const char *name, uint64_t total)
{
	if (res->n_stats == ENGINE_MAX_STATS)
		return;
	res->stats[res->n_stats].name = name;
	res->stats[res->n_stats].total = total;
	res->n_stats++;
}
