/* SPDX-License-Identifier: MIT */
/*
 * bench_sim -- the sim engine's own speed on one trial of a scenario: lab.h operations
 * simulated per host second, and (run under callgrind at two durations) instructions per
 * lab.h operation, the difference of the two runs removing the start-up. A benchmark, not a
 * test: it prints.
 *   ./build/tests/bench/bench_sim SCENARIO.ini CMDQ_PLUGIN CPUS DURATION_MS [--set K=V]...
 * e.g. bench_sim configs/cmdq-ways-sim.ini mcs 256 5
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "results/trial.h"
#include "run/trial_run.h"
#include "scenario/scenario.h"

static const struct lab_plugin *lookup(void *ctx, const char *name)
{
	const struct loaded_plugin *p = registry_find(ctx, name, NULL);
	return p ? p->desc : NULL;
}

int main(int argc, char **argv)
{
	struct plugin_registry reg = { 0 };
	struct diag_list diags = { 0 };
	char sets[3][128];
	const char *v[3 + 32];
	size_t n_sets = 3;
	struct scenario_point pt;
	struct trial_result r;
	int rc = 1;

	if (argc < 5 || argc > 5 + 2 * 32) {
		fprintf(stderr, "usage: bench_sim SCENARIO.ini CMDQ_PLUGIN CPUS DURATION_MS "
				"[--set K=V]...\n");
		return 2;
	}
	snprintf(sets[0], sizeof(sets[0]), "plugins.cmdq=%s", argv[2]);
	snprintf(sets[1], sizeof(sets[1]), "cpus=%s", argv[3]);
	snprintf(sets[2], sizeof(sets[2]), "duration_ms=%s", argv[4]);
	for (size_t i = 0; i < 3; i++)
		v[i] = sets[i];
	for (int i = 5; i + 1 < argc; i += 2)
		v[n_sets++] = argv[i + 1];
	registry_add_dir(&reg, BENCH_PLUGIN_DIR, false, &diags);
	struct plugin_lookup pl = { .find = lookup, .ctx = &reg };
	struct scenario *s = scenario_load(argv[1], v, n_sets, &pl, &diags);
	if (!s) {
		for (size_t i = 0; i < diags.n; i++)
			fprintf(stderr, "%s\n", diags.msgs[i]);
		return 2;
	}
	if (scenario_point(s, 0, &pt))
		goto out;
	struct trial_request req = { .cfg = &pt.cfg,
				     .cmdq = s->cmdq[0].desc,
				     .cmdq_config = pt.plugin_cfgs[0] };
	memset(&r, 0, sizeof(r));
	if (trial_run(&req, &r, NULL) || r.status != TRIAL_OK) {
		fprintf(stderr, "bench_sim: %s\n", r.error);
		goto out_point;
	}
	printf("%s %s CPUs: %llu ops, %llu lab.h ops, %llu switches in %.3f host s = %.2f M lab.h "
	       "ops per host second\n",
	       argv[2], argv[3], (unsigned long long)r.ops, (unsigned long long)r.engine_cost.steps,
	       (unsigned long long)r.engine_cost.switches, r.engine_cost.host_s,
	       (double)r.engine_cost.steps / r.engine_cost.host_s / 1e6);
	rc = 0;
out_point:
	scenario_point_free(s, &pt);
out:
	scenario_free(s);
	registry_free(&reg);
	diag_clear(&diags);
	return rc;
}
