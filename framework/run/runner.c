/* SPDX-License-Identifier: MIT */
/* runner -- the sweep: points x plugins x repeats, results appended as they come. */
#include "run/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run/engines.h"
#include "run/isolate.h"
#include "run/trial_run.h"
#include "workload/workload.h"

/* Counters the host adds (see trial_run.c): the device's, the slow path's, the harness's. */
static const char *const host_device_counters[] = { "dev_syncs", "dev_prod_writes",
						    "dev_cons_reads" };
static const char *const host_iova_counters[] = { "tree_lock_wait_ns", "tree_allocs",
						  "tree_walk_nodes", "tree_ranges",
						  "wl_alloc_failures" };

/* One plugin combination a trial runs: a cmdq plugin, an iova plugin, or both (dma). */
struct combo {
	int cmdq; /* index into s->cmdq, or -1 */
	int iova; /* index into s->iova, or -1 */
	char label[128];
};

static const struct workload_ops *workload_of(const struct scenario *s)
{
	return workload_find(s->base.scenario.workload);
}

static bool uses_cmdq(const struct scenario *s)
{
	const struct workload_ops *w = workload_of(s);
	return w && (w->needs & WORKLOAD_NEEDS_CMDQ);
}

static bool uses_iova(const struct scenario *s)
{
	const struct workload_ops *w = workload_of(s);
	return w && (w->needs & WORKLOAD_NEEDS_IOVA);
}

/* Does any trial of s run on engine e (the base's, or a value of a swept engine)? */
static bool uses_engine(const struct scenario *s, const struct engine_ops *e)
{
	const struct sweep_axis *a = scenario_find_axis(s, "scenario", "engine");

	if (engine_find(s->base.scenario.engine) == e)
		return true;
	for (size_t v = 0; a && v < a->n_values; v++)
		if (engine_find_name(a->values[v]) == e)
			return true;
	return false;
}

bool runner_uses_sim(const struct scenario *s)
{
	return uses_engine(s, engine_find(ENGINE_SIM));
}

/* cmdq: each cmdq plugin; iova: each iova plugin; dma: the cross product. */
static struct combo *combos(const struct scenario *s, size_t *n)
{
	size_t nc = uses_cmdq(s) ? s->n_cmdq : 1, ni = uses_iova(s) ? s->n_iova : 1;
	struct combo *v = calloc(nc * ni + 1, sizeof(*v));

	*n = 0;
	for (size_t c = 0; v && c < nc; c++)
		for (size_t i = 0; i < ni; i++) {
			struct combo *k = &v[(*n)++];
			k->cmdq = uses_cmdq(s) ? (int)c : -1;
			k->iova = uses_iova(s) ? (int)i : -1;
			const struct workload_ops *w = workload_of(s);
			snprintf(k->label, sizeof(k->label), "%s%s%s%s",
				 w && w->plugin_label ? w->plugin_label : "",
				 k->cmdq >= 0 ? s->cmdq[c].desc->name : "",
				 k->cmdq >= 0 && k->iova >= 0 ? "+" : "",
				 k->iova >= 0 ? s->iova[i].desc->name : "");
		}
	return v;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

size_t runner_n_trials(const struct scenario *s)
{
	size_t nc = uses_cmdq(s) ? s->n_cmdq : 1, ni = uses_iova(s) ? s->n_iova : 1;

	return scenario_n_points(s) * nc * ni * s->base.scenario.repeats;
}

/*
 * When a trial is given up. Native: when it outlives setup, warm-up, the run, two watchdog
 * periods and teardown. An engine that publishes progress (the sim) runs as long as the host
 * needs for the virtual time asked, and is given up only when its progress stops: a
 * livelocked plugin still moves virtual time (the virtual watchdog fails it), so a stall is
 * code that loops without calling lab.h. Its limit is ISOLATE_STALL_MS of wall clock with no
 * progress (the sim publishes every 4096 lab.h operations: milliseconds apart at its speed),
 * or two watchdog periods, whichever is longer.
 */
#define ISOLATE_STALL_MS 20000

static void trial_limits(const struct scenario_cfg *cfg, struct isolate_limits *lim)
{
	const struct engine_ops *e = engine_find(cfg->scenario.engine);
	uint64_t watchdog2 = 2 * cfg->scenario.watchdog_ms;

	if (e && e->publishes_progress) {
		lim->limit_ms = 0;
		lim->stall_ms = watchdog2 > ISOLATE_STALL_MS ? watchdog2 : ISOLATE_STALL_MS;
	} else {
		lim->limit_ms =
			cfg->scenario.warmup_ms + cfg->scenario.duration_ms + watchdog2 + 30000;
		lim->stall_ms = 0;
	}
}

uint64_t runner_trial_seed(uint64_t seed, size_t point, uint64_t repeat)
{
	/* splitmix64 over the three: nearby inputs give unrelated seeds. */
	uint64_t z = seed ^ (0x9e3779b97f4a7c15ull * ((uint64_t)point + 1)) ^
		     (0xbf58476d1ce4e5b9ull * (repeat + 1));

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int add_name(const char ***v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], name))
			return 0;
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = name;
	*v = nv;
	return 0;
}

int runner_layout(const struct scenario *s, struct results_layout *l)
{
	const char **axes = NULL, **phases = NULL, **counters = NULL, **metrics = NULL;
	size_t n_axes = 0, n_phases = 0, n_counters = 0, n_metrics = 0;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < s->n_axes && !rc; i++) {
		size_t len = strlen(s->axes[i].section) + strlen(s->axes[i].key) + 2;
		char *name = malloc(len);
		if (!name)
			return -ENOMEM;
		snprintf(name, len, "%s.%s", s->axes[i].section, s->axes[i].key);
		const char **nv = realloc(axes, (n_axes + 1) * sizeof(*nv));
		if (!nv) {
			free(name);
			rc = -ENOMEM;
			break;
		}
		axes = nv;
		axes[n_axes++] = name;
	}
	const struct workload_ops *w = workload_of(s);
	for (uint32_t m = 0; w && m < w->n_metrics && !rc; m++)
		rc = add_name(&metrics, &n_metrics, w->metrics[m]);
	rc = rc ? rc : add_name(&phases, &n_phases, "other");
	for (size_t i = 0; i < s->n_cmdq + s->n_iova && !rc; i++) {
		bool cmdq = i < s->n_cmdq;
		if ((cmdq && !uses_cmdq(s)) || (!cmdq && !uses_iova(s)))
			continue;
		const struct lab_plugin *d = cmdq ? s->cmdq[i].desc : s->iova[i - s->n_cmdq].desc;
		for (uint32_t p = 0; p < d->n_phases && !rc; p++)
			rc = add_name(&phases, &n_phases, d->phases[p]);
		for (uint32_t k = 0; k < d->n_counters && !rc; k++)
			rc = add_name(&counters, &n_counters, d->counters[k].name);
	}
	for (size_t k = 0; uses_cmdq(s) && k < LAB_ARRAY_SIZE(host_device_counters) && !rc; k++)
		rc = add_name(&counters, &n_counters, host_device_counters[k]);
	for (size_t k = 0; uses_iova(s) && k < LAB_ARRAY_SIZE(host_iova_counters) && !rc; k++)
		rc = add_name(&counters, &n_counters, host_iova_counters[k]);
	if (w && w->harness_think_ns && !rc)
		rc = add_name(&counters, &n_counters, "harness_ns");
	for (size_t k = 0; w && k < WORKLOAD_MAX_COUNTERS && w->counter_names[k] && !rc; k++)
		rc = add_name(&counters, &n_counters, w->counter_names[k]);
	for (size_t e = 0; e < engine_count() && !rc; e++) {
		const struct engine_ops *eng = engine_at(e);
		for (size_t k = 0;
		     uses_engine(s, eng) && k < ENGINE_MAX_STATS && eng->stats[k] && !rc; k++)
			rc = add_name(&counters, &n_counters, eng->stats[k]);
	}
	l->axes = axes;
	l->n_axes = n_axes;
	l->metrics = metrics;
	l->n_metrics = n_metrics;
	l->phases = phases;
	l->n_phases = n_phases;
	l->counters = counters;
	l->n_counters = n_counters;
	if (rc)
		runner_layout_free(l);
	return rc;
}

void runner_layout_free(struct results_layout *l)
{
	for (size_t i = 0; i < l->n_axes; i++)
		free((char *)l->axes[i]);
	free((void *)l->axes);
	free((void *)l->metrics);
	free((void *)l->phases);
	free((void *)l->counters);
	memset(l, 0, sizeof(*l));
}

/* One trial of the sweep, in index order, and where it stands. */
struct trial_slot {
	uint32_t index; /* in the whole sweep (the same in every shard) */
	uint32_t point, repeat;
	uint32_t combo;
	bool exclusive;		     /* its engine runs alone (engine_ops.exclusive) */
	bool done;		     /* found in trials.csv when resuming, or written now */
	struct isolate_job *job;     /* in flight or ended, not yet written */
	struct trial_result *res;    /* ended: the result to write (in job, or inproc) */
	struct trial_result *inproc; /* run in-process when no child could be started */
};

/*
 * The trials of s in index order: point, then plugin combination, then repeat; of them, only
 * shard k of n_shards.
 */
static struct trial_slot *trial_slots(const struct scenario *s, const struct scenario_point *points,
				      size_t n_combos, unsigned k, unsigned n_shards, size_t *n)
{
	size_t cap = 0, index = 0;

	for (size_t pt = 0; pt < scenario_n_points(s); pt++)
		cap += n_combos * points[pt].cfg.scenario.repeats;
	struct trial_slot *v = calloc(cap + 1, sizeof(*v));
	*n = 0;
	for (size_t pt = 0; v && pt < scenario_n_points(s); pt++) {
		const struct engine_ops *e = engine_find(points[pt].cfg.scenario.engine);
		for (size_t c = 0; c < n_combos; c++)
			for (uint64_t rp = 0; rp < points[pt].cfg.scenario.repeats; rp++, index++)
				if (runner_in_shard(index, k, n_shards))
					v[(*n)++] =
						(struct trial_slot){ .index = (uint32_t)index,
								     .point = (uint32_t)pt,
								     .repeat = (uint32_t)rp,
								     .combo = (uint32_t)c,
								     .exclusive =
									     e && e->exclusive };
	}
	return v;
}

/*
 * Mark the trials trials.csv already holds. A row is matched by (point, repeat, plugins), not
 * by its place: a run stopped at once (Ctrl-C twice) under -j may have written trials past a
 * gap. Each row must be a trial this scenario runs, once.
 */
static int mark_done(const struct results *r, struct trial_slot *t, size_t n,
		     const struct combo *combo, const char *dir, char *err, size_t err_len)
{
	for (size_t i = 0; i < results_n_rows(r); i++) {
		const char *f_plugin = results_field(r, i, "plugin");
		const char *f_point = results_field(r, i, "point");
		const char *f_repeat = results_field(r, i, "repeat");
		size_t k = n;

		if (f_plugin && f_point && f_repeat) {
			uint64_t pt = strtoull(f_point, NULL, 10),
				 rp = strtoull(f_repeat, NULL, 10);
			for (k = 0; k < n; k++)
				if (t[k].point == pt && t[k].repeat == rp &&
				    !strcmp(combo[t[k].combo].label, f_plugin))
					break;
		}
		if (k < n && !t[k].done) {
			t[k].done = true;
			continue;
		}
		snprintf(err, err_len,
			 "%s/trials.csv row %zu is %s point %s repeat %s, which this scenario %s: "
			 "the scenario changed since the run started",
			 dir, i + 1, f_plugin ? f_plugin : "?", f_point ? f_point : "?",
			 f_repeat ? f_repeat : "?", k < n ? "runs only once" : "does not run");
		return -EINVAL;
	}
	return 0;
}

static void write_meta(struct results *r, struct results_meta *meta, const char *started,
		       bool finished, bool interrupted)
{
	char fin[64];

	iso_now(fin, sizeof(fin));
	meta->started = started;
	meta->finished = finished ? fin : NULL;
	meta->interrupted = interrupted;
	results_write_summary(r, meta);
}

/* What runner_run keeps while the sweep runs. */
struct run_state {
	const struct scenario *s;
	const struct run_options *opt;
	struct run_report *rep;
	struct results *r;
	struct results_meta *meta;
	const char *started;
	struct combo *combo;
	struct scenario_point *points;
	size_t n_points;
	struct trial_slot *t;
	size_t n, total, written; /* written: resumed + written now */
	size_t running;
	bool exclusive_running;
	double t0;
};

/* Start trial i: in a child, or in-process when no child can be started. */
static void start_trial(struct run_state *st, size_t i)
{
	const struct scenario *s = st->s;
	struct trial_slot *t = &st->t[i];
	const struct scenario_point *point = &st->points[t->point];
	const struct combo *cb = &st->combo[t->combo];
	struct trial_result res;

	memset(&res, 0, sizeof(res));
	res.index = t->index;
	res.point = t->point;
	res.repeat = t->repeat;
	res.plugin = cb->label;
	res.cpus = (uint32_t)point->cfg.scenario.cpus;
	res.swept_values = (const char *const *)point->swept_values;
	res.n_swept = (uint32_t)s->n_axes;
	/* Each trial its own seed: repeats differ, so their spread is a confidence interval;
	 * every plugin at a point and repeat gets the same one, so they are compared on the
	 * same random stream. The seed depends on nothing but (point, repeat): the same
	 * whatever runs next to it. */
	struct scenario_cfg tcfg = point->cfg;
	tcfg.scenario.seed = runner_trial_seed(point->cfg.scenario.seed, t->point, t->repeat);
	struct trial_request req = { .cfg = &tcfg };
	if (cb->cmdq >= 0) {
		req.cmdq = s->cmdq[cb->cmdq].desc;
		req.cmdq_config = point->plugin_cfgs[cb->cmdq];
	}
	if (cb->iova >= 0) {
		req.iova = s->iova[cb->iova].desc;
		req.iova_config = point->plugin_cfgs[s->n_cmdq + (size_t)cb->iova];
	}
	struct isolate_limits lim;
	trial_limits(&point->cfg, &lim);
	if (!isolate_start(&req, &res, &lim, &t->job)) {
		st->running++;
		st->exclusive_running |= t->exclusive;
		return;
	}
	t->job = NULL;
	t->inproc = malloc(sizeof(*t->inproc));
	if (!t->inproc) {
		t->done = true; /* skipped, not written: a resume runs it */
		return;
	}
	trial_run(&req, &res, NULL); /* no fork: run in-process */
	*t->inproc = res;
	t->res = t->inproc;
}

/* Check the children in flight; true when one ended. */
static bool poll_trials(struct run_state *st)
{
	bool ended = false;

	for (size_t i = 0; i < st->n && st->running; i++) {
		struct trial_slot *t = &st->t[i];
		if (t->job && !t->res && isolate_poll(t->job, &t->res)) {
			st->running--;
			if (t->exclusive)
				st->exclusive_running = false;
			ended = true;
		}
	}
	return ended;
}

/* Append trial i's result and report it. */
static void write_trial(struct run_state *st, size_t i)
{
	struct trial_slot *t = &st->t[i];
	struct run_report *rep = st->rep;

	if (results_append(st->r, t->res) == 0)
		rep->trials++;
	/* noisy and incomplete trials are the host's doing: the summary counts them. */
	rep->failed += t->res->status == TRIAL_FAILED;
	st->written++;
	write_meta(st->r, st->meta, st->started, false, false);
	if (st->opt->progress) {
		struct run_progress p = { .done = st->written, .total = st->total, .last = t->res };
		size_t ran = st->written - rep->resumed;
		p.elapsed_s = now_s() - st->t0;
		p.eta_s = p.elapsed_s / (double)ran * (double)(st->total - st->written);
		st->opt->progress(st->opt->arg, &p);
	}
	t->done = true;
	isolate_job_free(t->job);
	free(t->inproc);
	t->job = NULL;
	t->inproc = NULL;
	t->res = NULL;
}

/* May trial i start now? Native trials run alone; the rest up to jobs at a time. */
static bool may_start(const struct run_state *st, size_t i)
{
	if (st->exclusive_running)
		return false;
	if (st->t[i].exclusive)
		return st->running == 0;
	return st->running < (st->opt->jobs ? st->opt->jobs : 1);
}

/*
 * The sweep: start trials in index order as may_start() allows, and write each one that
 * ended as soon as every trial before it is written, so that trials.csv comes out in the
 * same order with the same rows whatever the number of jobs. stop = 1: start nothing more,
 * let the trials in flight end. stop >= 2: stop those too and write what ended.
 */
static void run_trials(struct run_state *st)
{
	const volatile int *stop = st->opt->stop;
	size_t next = 0, head = 0;

	for (;;) {
		bool moved = false;

		while (!(stop && *stop) && next < st->n &&
		       (st->t[next].done || may_start(st, next))) {
			if (!st->t[next].done)
				start_trial(st, next);
			next++;
			moved = true;
		}
		moved |= poll_trials(st);
		for (; head < st->n && (st->t[head].done || st->t[head].res); head++)
			if (!st->t[head].done)
				write_trial(st, head);
		if (stop && *stop >= 2)
			break;
		/* Stopping with nothing in flight: every trial started has been written. */
		if (head == st->n || (stop && *stop && !st->running))
			return;
		if (!moved)
			usleep(2000);
	}
	/* Stopped at once: what ended is written (past the gaps a resume fills), the rest
	 * stopped. */
	poll_trials(st);
	for (size_t i = head; i < st->n; i++) {
		struct trial_slot *t = &st->t[i];
		if (t->res && !t->done) {
			write_trial(st, i);
		} else if (t->job) {
			isolate_job_free(t->job);
			t->job = NULL;
		}
	}
}

int runner_run(const struct scenario *s, const struct run_options *opt, struct run_report *rep,
	       char *err, size_t err_len)
{
	size_t n_combos;
	struct combo *combo = combos(s, &n_combos);
	struct results_layout layout;
	struct results_meta meta = { .name = s->base.scenario.name, .scenario_path = s->path };
	char started[64];
	struct run_state st = { .s = s,
				.opt = opt,
				.rep = rep,
				.meta = &meta,
				.started = started,
				.combo = combo,
				.t0 = now_s() };
	int rc;

	memset(rep, 0, sizeof(*rep));
	snprintf(rep->dir, sizeof(rep->dir), "%s", opt->out_dir);
	rc = combo ? runner_layout(s, &layout) : -ENOMEM;
	if (rc) {
		free(combo);
		snprintf(err, err_len, "out of memory");
		return rc;
	}
	st.points = calloc(scenario_n_points(s) + 1, sizeof(*st.points));
	if (!st.points) {
		snprintf(err, err_len, "out of memory");
		rc = -ENOMEM;
		goto free_layout;
	}
	for (; st.n_points < scenario_n_points(s); st.n_points++) {
		rc = scenario_point(s, st.n_points, &st.points[st.n_points]);
		if (rc) {
			snprintf(err, err_len, "cannot resolve sweep point %zu: %s", st.n_points,
				 strerror(-rc));
			goto free_points;
		}
	}
	if (opt->n_shards > 1 && opt->shard >= opt->n_shards) {
		snprintf(err, err_len, "shard %u of %u does not exist (0 .. %u)", opt->shard,
			 opt->n_shards, opt->n_shards - 1);
		rc = -EINVAL;
		goto free_points;
	}
	st.t = trial_slots(s, st.points, n_combos, opt->shard, opt->n_shards, &st.n);
	if (!st.t) {
		snprintf(err, err_len, "out of memory");
		rc = -ENOMEM;
		goto free_points;
	}
	st.total = st.n;
	meta.x_key = layout.n_axes ? layout.axes[0] : NULL;
	st.r = opt->resume ? results_resume(opt->out_dir, &layout, err, err_len)
			   : results_create(opt->out_dir, &layout, err, err_len);
	if (!st.r) {
		rc = -EIO;
		goto free_trials;
	}
	iso_now(started, sizeof(started));
	if (opt->resume) {
		rep->resumed = results_n_rows(st.r);
		rep->torn_bytes = results_torn_bytes(st.r);
		rep->trials = rep->resumed;
		if (rep->resumed > st.total) {
			snprintf(err, err_len,
				 "%s/trials.csv has %zu trials, more than this scenario's "
				 "%zu: it is not this scenario's run",
				 opt->out_dir, rep->resumed, st.total);
			rc = -EINVAL;
			goto out;
		}
		rc = mark_done(st.r, st.t, st.n, combo, opt->out_dir, err, err_len);
		if (rc)
			goto out;
		st.written = rep->resumed;
	}
	write_meta(st.r, &meta, started, false, false);
	run_trials(&st);
out:
	if (opt->stop && *opt->stop)
		rep->interrupted = true;
	write_meta(st.r, &meta, started, true, rep->interrupted);
	results_close(st.r);
free_trials:
	free(st.t);
free_points:
	for (size_t i = 0; i < st.n_points; i++)
		scenario_point_free(s, &st.points[i]);
	free(st.points);
free_layout:
	runner_layout_free(&layout);
	free(combo);
	return rc;
}
