/* SPDX-License-Identifier: MIT */
/*
 * sim_run -- one run of the sim engine (see sim.h): the virtual clock host code reads, the
 * loop each virtual CPU runs (engine/cpu_loop.h) in virtual time, and the set-up and
 * collection around them. The memory model and the scheduler are in sim.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/cpu_loop.h"
#include "engine/host.h"
#include "engine/sim/sim_internal.h"

/* ---- the virtual clock seen by natively built host code ------------------------------------- */

static uint64_t sim_clock_now(const struct lab_clock *clk)
{
	struct sim *s = cur_sim;

	(void)clk;
	if (!s)
		return 0;
	if (s->in_agent)
		return s->agent_now / PS_PER_NS;
	/* Host code on a virtual CPU (a device register, the workload): it may move the
	 * device's due time and its progress next, so read them again at the next check. */
	s->agent_stale = true;
	s->agent_moved = true;
	return s->cur ? s->cur->clock / PS_PER_NS : 0;
}

static void sim_clock_delay(struct lab_cpu *c, uint64_t ns)
{
	lab_sim_delay(c, ns);
	cur_sim->agent_stale = true;
	cur_sim->agent_moved = true;
}

/* ---- the CPUs' loop (engine/cpu_loop.h) in virtual time ------------------------------------- */

static enum engine_phase cpu_phase(void *ctx)
{
	struct sim_cpu *me = ctx;
	struct sim *s = me->sim;

	if (s->job->ops_per_cpu)
		return ENGINE_MEASURE; /* measuring from the start, until the count is done */
	if (me->clock >= s->t_stop)
		return ENGINE_STOP;
	if (me->clock >= s->t_late)
		return ENGINE_MEASURE_LATE;
	return me->clock >= s->t_measure ? ENGINE_MEASURE : ENGINE_WARMUP;
}

/* The first CPU to start measuring marks the engine's own figures' start. */
static void cpu_measure_started(void *ctx)
{
	struct sim_cpu *me = ctx;
	struct sim *s = me->sim;

	sim_take_turn(); /* the engine's own figures start with every CPU's work before now */
	me->t_measure = me->clock;
	if (!s->measure_started) {
		s->measure_started = true;
		s->lab_ops_at_measure = s->st.lab_ops;
		s->misses_at_measure = s->st.misses;
		if (s->job->on_measure)
			s->job->on_measure(s->job->measure_arg);
	}
}

static void cpu_before_op(void *ctx)
{
	((struct sim_cpu *)ctx)->read_agent = false;
}

static void cpu_after_op(void *ctx, int rc)
{
	(void)ctx;
	(void)rc;
}

/*
 * Nothing to do this time: let virtual time move, as an idle poll would; or, when the
 * workload can say until when it will have nothing to do whatever the others do, sleep until
 * then (no sooner than a poll, no later than the run's next phase boundary or the CPU's
 * watchdog deadline, so every phase change and hang is seen as with polling).
 */
static void cpu_idle(void *ctx)
{
	struct sim_cpu *me = ctx;
	struct sim *s = me->sim;
	uint64_t poll = s->poll_ps / PS_PER_NS ? s->poll_ps / PS_PER_NS : 1;

	if (s->job->idle_until) {
		uint64_t until = s->job->idle_until(s->job->arg, me->c, me->clock / PS_PER_NS);
		uint64_t bound[] = { s->t_measure, s->t_late, s->t_stop, me->deadline };
		uint64_t target = until > NEVER / PS_PER_NS ? NEVER : until * PS_PER_NS;

		for (size_t i = 0; i < sizeof(bound) / sizeof(bound[0]); i++)
			if (bound[i] > me->clock && bound[i] < target)
				target = bound[i];
		if (until && target > me->clock + poll * PS_PER_NS)
			poll = (target - me->clock + PS_PER_NS - 1) / PS_PER_NS;
	}
	lab_sim_delay(me->c, poll);
}

static void cpu_failed(void *ctx)
{
	struct sim *s = ((struct sim_cpu *)ctx)->sim;

	s->failed = true;
	s->horizon = 0;
}

static void cpu_done(void *ctx)
{
	struct sim_cpu *me = ctx;

	me->deadline = me->clock + me->sim->watchdog;
}

static const struct engine_cpu_hooks sim_hooks = {
	.phase = cpu_phase,
	.measure_started = cpu_measure_started,
	.before_op = cpu_before_op,
	.after_op = cpu_after_op,
	.idle = cpu_idle,
	.failed = cpu_failed,
	.done = cpu_done,
};

static void cpu_main(void *arg)
{
	struct sim_cpu *me = arg;
	struct sim *s = me->sim;

	me->t_measure = me->clock;
	engine_cpu_loop(s->job, me->c, me->res, &sim_hooks, me);
	me->t_stop = me->clock;
	me->state = CPU_DONE;
	s->n_live--;
	sim_schedule(s, me, false);
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int build_latencies(struct sim *s, const struct scenario_machine *m,
			   const struct sim_topology *topo)
{
	bool uniform = !topo || !topo->n;
	uint32_t n = uniform ? 1 : topo->n;

	s->lat_n = n;
	s->cross_ps = (uint32_t)ns_to_ps(uniform ? m->line_ns : topo->max);
	s->lat_ps = malloc(sizeof(*s->lat_ps) * n * n);
	s->loc = malloc(sizeof(*s->loc) * s->ncpus);
	if (!s->lat_ps || !s->loc)
		return -ENOMEM;
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t b = 0; b < n; b++)
			s->lat_ps[a * n + b] =
				a == b ? 0 : (uint32_t)ns_to_ps(topo->lat[a * topo->n + b]);
	for (uint32_t i = 0; i < s->ncpus; i++)
		s->loc[i] = uniform ? (struct sim_loc){ 0, i } : (struct sim_loc){ i % n, i / n };
	if (uniform || m->socket_ns <= 0)
		return 0;
	s->sock = malloc(sizeof(*s->sock) * s->ncpus);
	if (!s->sock)
		return -ENOMEM;
	s->topo_rules = true;
	for (uint32_t i = 0; i < s->ncpus; i++)
		s->sock[i] = s->loc[i].copy * n +
			     sim_topology_socket(topo, s->loc[i].core, m->socket_ns);
	return 0;
}

/*
 * [machine] smt_ns: a CPU shares its core with the CPU of the same copy of the matrix on its
 * core's SMT sibling, when that CPU is in the run. The sibling is taken to be busy the whole
 * run, working or spinning: on hardware a spin-wait issues instructions too.
 */
static void mark_smt(struct sim *s, const struct scenario_machine *m,
		     const struct sim_topology *topo)
{
	s->smt_slow = 1.0 / m->smt_share;
	for (uint32_t i = 0; i < s->ncpus; i++)
		s->cpus[i].l1_peer = -1;
	if (!topo || !topo->n)
		return;
	for (uint32_t i = 0; i < s->ncpus; i++) {
		int32_t j = sim_topology_smt_sibling(topo, s->loc[i].core, m->smt_ns);
		uint32_t peer = j >= 0 ? s->loc[i].copy * topo->n + (uint32_t)j : UINT32_MAX;
		if (peer >= s->ncpus)
			continue;
		s->cpus[i].l1_peer = (int32_t)peer;
		s->cpus[i].smt_shared = m->smt_share < 1;
		s->topo_rules = true;
	}
}

static void sim_free(struct sim *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->cpus && i < s->ncpus; i++)
		sim_ctx_free(&s->cpus[i].ctx);
	free(s->cpus);
	free(s->heap);
	free(s->rq);
	free(s->sb);
	free(s->hist);
	free(s->shadow);
	free(s->lines);
	free(s->lat_ps);
	free(s->sock);
	free(s->loc);
	free(s);
}

int sim_run(const struct engine_job *job, const struct scenario_machine *m,
	    const struct sim_topology *topo, const struct sim_agent *agent,
	    struct engine_result *res, struct sim_stats *stats)
{
	uint32_t ncpus = host_env_ncpus(job->env);
	struct lab_clock virt = {
		.source = LAB_CLOCK_SIM,
		.base = 0,
		.ns_per_tick = 1.0,
		.sim_now = sim_clock_now,
		.sim_delay = sim_clock_delay,
	};
	struct lab_clock saved;
	struct timespec h0, h1;
	struct sim *s;
	int rc = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!ncpus || ncpus > SIM_MAX_CPUS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->job = job;
	s->ncpus = ncpus;
	s->words = (ncpus + 63) / 64;
	s->local_ps = ns_to_ps(m->local_ns);
	s->atomic_ps = ns_to_ps(m->atomic_ns);
	s->op_ps = ns_to_ps(m->op_ns);
	s->home_ps = ns_to_ps(m->home_ns);
	s->poll_ps = ns_to_ps(m->poll_ns > 0 ? m->poll_ns : 1);
	s->occupancy = m->occupancy;
	s->read_occupancy = machine_read_occupancy(m);
	s->home_hold_ps = ns_to_ps(m->home_hold_ns);
	s->cas_hold_ps = ns_to_ps(m->cas_hold_ns);
	s->fail_hold = m->fail_hold;
	s->far = m->atomic == MACHINE_ATOMIC_FAR;
	s->adaptive = m->atomic == MACHINE_ATOMIC_ADAPTIVE;
	s->fail_burst = m->fail_burst;
	s->weak = m->memory == MACHINE_MEMORY_ARM;
	s->sb_delay_ps = ns_to_ps(m->store_delay_ns);
	s->perturb_ps = ns_to_ps(m->perturb_ns);
	sim_model_init(s);
	s->agent = agent && agent->next_due && agent->advance ? agent : NULL;
	s->t_measure = job->ops_per_cpu ? 0 : job->warmup_ns * PS_PER_NS;
	s->t_stop = s->t_measure + job->duration_ns * PS_PER_NS;
	s->t_late = s->t_measure + job->duration_ns * PS_PER_NS / 2;
	s->watchdog = job->watchdog_ns ? job->watchdog_ns * PS_PER_NS : NEVER / 2;
	s->n_live = ncpus;
	s->cpus = aligned_alloc(LAB_CACHE_LINE, sizeof(*s->cpus) * ncpus); /* line-aligned */
	if (s->cpus)
		memset(s->cpus, 0, sizeof(*s->cpus) * ncpus);
	if (s->weak) { /* every buffer full at once is the most there can be */
		s->sb_cap = ncpus * SB_PER_CPU;
		s->sb = calloc(s->sb_cap, sizeof(*s->sb));
		if (!s->sb || sim_hist_alloc(s, LINES_MIN_BITS))
			goto out;
	}
	if (!s->cpus || sim_rq_alloc(s, ncpus) || engine_result_alloc(res, ncpus, job->n_metrics) ||
	    build_latencies(s, m, topo) || sim_lines_alloc(s, LINES_MIN_BITS) ||
	    (job->watch_lab_h && sim_shadow_init(s)))
		goto out;
	mark_smt(s, m, topo);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct sim_cpu *x = &s->cpus[i];
		x->sim = s;
		x->id = i;
		x->c = host_env_cpu(job->env, i);
		x->res = &res->cpus[i];
		x->deadline = s->watchdog;
		x->sb_rng =
			((job->cfg ? job->cfg->scenario.seed : 0) + 1) * 0xd1342543de82ef95ull + i;
		/* Its own stream: satisfying loads early leaves the store delays as they were. */
		x->ld_rng = ((job->cfg ? job->cfg->scenario.seed : 0) + 1) * 0x9fb21c651e98df25ull +
			    (uint64_t)i * 0xc2b2ae3d27d4eb4full;
		/* Its own stream: perturbing leaves the store delays as they were for a seed. */
		x->pt_rng = ((job->cfg ? job->cfg->scenario.seed : 0) + 1) * 0xaf251af3b0f025b5ull +
			    (uint64_t)i * 0x9e3779b97f4a7c15ull;
		rc = sim_ctx_make(&x->ctx, STACK_SIZE, cpu_main, x);
		if (rc)
			goto out;
		sim_rq_push(s, 0, i);
	}
	if (s->agent && s->agent->progress)
		s->agent_progress = s->agent->progress(s->agent->arg);
	s->agent_stale = true;
	s->agent_moved = true;
	if (job->ops_per_cpu && job->on_measure) {
		s->measure_started = true;
		job->on_measure(job->measure_arg);
	}

	/* From here on host code reads (and spends) virtual time. */
	host_env_set_clock(job->env, &virt, &saved);
	cur_sim = s;
	clock_gettime(CLOCK_MONOTONIC, &h0);
	s->cur = &s->cpus[sim_key_id(sim_rq_pop(s))];
	s->cur->state = CPU_RUNNING;
	sim_watch_start(s);
	sim_ctx_switch(&s->main_ctx, &s->cur->ctx);
	sim_watch_stop(s);
	clock_gettime(CLOCK_MONOTONIC, &h1);
	cur_sim = NULL;
	host_env_set_clock(job->env, &saved, NULL);

	sim_watch_report(s, res);
	res->hung = s->hung;
	res->op_failed = s->failed;
	snprintf(res->why, sizeof(res->why), "%s", s->why);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct sim_cpu *x = &s->cpus[i];
		uint64_t stop = x->state == CPU_DONE ? x->t_stop : x->clock;
		res->cpus[i].window_ns = res->cpus[i].window_open && stop > x->t_measure
						 ? (stop - x->t_measure) / PS_PER_NS
						 : 0;
		double sec = (double)res->cpus[i].window_ns / 1e9;
		if (sec > res->measured_s)
			res->measured_s = sec;
		if (x->clock > s->st.end_ns)
			s->st.end_ns = x->clock;
	}
	s->st.end_ns /= PS_PER_NS;
	s->st.lab_ops_measured = s->st.lab_ops - s->lab_ops_at_measure;
	s->st.misses_measured = s->st.misses - s->misses_at_measure;
	s->st.host_s = (double)(h1.tv_sec - h0.tv_sec) + (double)(h1.tv_nsec - h0.tv_nsec) / 1e9;
	if (stats)
		*stats = s->st;
	rc = 0;
out:
	sim_free(s);
	if (rc)
		engine_result_free(res);
	return rc;
}
