/* SPDX-License-Identifier: MIT */
/* engine -- what every engine's result needs (see engine.h). */
#include "engine/engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Every CPU's histograms in one anonymous mapping, each CPU's on cache lines of its own: its
 * zeroed pages cost nothing until recorded into. A CPU's ops land in a few of a histogram's
 * 7424 buckets; a memset of all of them was 8% of a 1 ms 256-CPU sim trial (and, before
 * hist_merge added only the used buckets, as much again to merge them).
 */
int engine_result_alloc(struct engine_result *res, uint32_t ncpus, uint32_t n_metrics)
{
	size_t per_cpu = sizeof(struct hist) * (n_metrics ? n_metrics : 1);

	per_cpu = (per_cpu + 2 * LAB_CACHE_LINE - 1) & ~(size_t)(2 * LAB_CACHE_LINE - 1);
	res->cpus = calloc(ncpus, sizeof(*res->cpus));
	res->hist_block_size = per_cpu * (ncpus ? ncpus : 1); /* mmap refuses 0 bytes */
	res->hist_block = mmap(NULL, res->hist_block_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res->hist_block == MAP_FAILED)
		res->hist_block = NULL;
	if (!res->cpus || !res->hist_block) {
		engine_result_free(res);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ncpus; i++) {
		res->cpus[i].hists = (struct hist *)((char *)res->hist_block + i * per_cpu);
		for (uint32_t m = 0; m < n_metrics; m++)
			hist_clear(&res->cpus[i].hists[m]); /* zero pages: no bucket written */
	}
	return 0;
}

void engine_result_free(struct engine_result *res)
{
	if (res->hist_block)
		munmap(res->hist_block, res->hist_block_size);
	res->hist_block = NULL;
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
