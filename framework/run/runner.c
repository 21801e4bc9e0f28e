/* SPDX-License-Identifier: MIT */
/* runner -- the sweep: points x plugins x repeats, results appended as they come. */
#include "run/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/engines.h"
#include "run/isolate.h"
#include "run/trial_run.h"
#include "workload/workload.h"

/* Counters the host adds (see trial_run.c): the device's, the slow path's, the harness's. */
static const char *const host_device_counters[] = { "dev_syncs", "dev_prod_writes",
						    "dev_cons_reads" };
static const char *const host_iova_counters[] = { "tree_lock_wait_ns", "tree_ranges",
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
		lim->limit_ms = cfg->scenario.warmup_ms + cfg->scenario.duration_ms + watchdog2 +
				30000;
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
	for (size_t e = 0; e < engine_count() && !rc; e++) {
		const struct engine_ops *eng = engine_at(e);
		for (size_t k = 0; uses_engine(s, eng) && k < ENGINE_MAX_STATS && eng->stats[k] && !rc; k++)
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

/* A trial found done when resuming must be the one this scenario would run at its index. */
static int check_done(const struct results *r, size_t i, size_t point, uint64_t repeat,
		      const char *plugin, const char *dir, char *err, size_t err_len)
{
	const char *f_plugin = results_field(r, i, "plugin");
	const char *f_point = results_field(r, i, "point");
	const char *f_repeat = results_field(r, i, "repeat");

	if (f_plugin && f_point && f_repeat && !strcmp(f_plugin, plugin) &&
	    strtoull(f_point, NULL, 10) == point && strtoull(f_repeat, NULL, 10) == repeat)
		return 0;
	snprintf(err, err_len,
		 "%s/trials.csv row %zu is %s point %s repeat %s, but this scenario's trial %zu is "
		 "%s point %zu repeat %" PRIu64 ": the scenario changed since the run started",
		 dir, i + 1, f_plugin ? f_plugin : "?", f_point ? f_point : "?",
		 f_repeat ? f_repeat : "?", i, plugin, point, repeat);
	return -EINVAL;
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

int runner_run(const struct scenario *s, const struct run_options *opt, struct run_report *rep,
	       char *err, size_t err_len)
{
	size_t n_combos, total = runner_n_trials(s), done = 0;
	struct combo *combo = combos(s, &n_combos);
	struct results_layout layout;
	struct results_meta meta = { .name = s->base.scenario.name, .scenario_path = s->path };
	char started[64];
	double t0 = now_s();
	int rc;

	memset(rep, 0, sizeof(*rep));
	snprintf(rep->dir, sizeof(rep->dir), "%s", opt->out_dir);
	rc = combo ? runner_layout(s, &layout) : -ENOMEM;
	if (rc) {
		free(combo);
		snprintf(err, err_len, "out of memory");
		return rc;
	}
	meta.x_key = layout.n_axes ? layout.axes[0] : NULL;
	struct results *r = opt->resume ? results_resume(opt->out_dir, &layout, err, err_len)
				    : results_create(opt->out_dir, &layout, err, err_len);
	if (!r) {
		runner_layout_free(&layout);
		free(combo);
		return -EIO;
	}
	iso_now(started, sizeof(started));
	if (opt->resume) {
		rep->resumed = results_n_rows(r);
		rep->trials = rep->resumed;
		if (rep->resumed > total) {
			snprintf(err, err_len, "%s/trials.csv has %zu trials, more than this scenario's "
				 "%zu: it is not this scenario's run", opt->out_dir, rep->resumed, total);
			rc = -EINVAL;
			goto out;
		}
	}
	write_meta(r, &meta, started, false, false);

	for (size_t pt = 0; pt < scenario_n_points(s) && !rep->interrupted; pt++) {
		struct scenario_point point;
		rc = scenario_point(s, pt, &point);
		if (rc) {
			snprintf(err, err_len, "cannot resolve sweep point %zu: %s", pt, strerror(-rc));
			break;
		}
		for (size_t k = 0; k < n_combos && !rep->interrupted; k++) {
			const struct combo *cb = &combo[k];
			for (uint64_t rp = 0; rp < point.cfg.scenario.repeats; rp++) {
				if (opt->stop && *opt->stop) {
					rep->interrupted = true;
					break;
				}
				if (done < rep->resumed) {
					rc = check_done(r, done, pt, rp, cb->label, opt->out_dir, err,
							err_len);
					if (rc) {
						scenario_point_free(s, &point);
						goto out;
					}
					done++;
					continue;
				}
				struct trial_result res;
				memset(&res, 0, sizeof(res));
				res.index = (uint32_t)done;
				res.point = (uint32_t)pt;
				res.repeat = (uint32_t)rp;
				res.plugin = cb->label;
				res.cpus = (uint32_t)point.cfg.scenario.cpus;
				res.swept_values = (const char *const *)point.swept_values;
				res.n_swept = (uint32_t)s->n_axes;
				/* Each trial its own seed: repeats differ, so their spread is a
				 * confidence interval; every plugin at a point and repeat gets the
				 * same one, so they are compared on the same random stream. */
				struct scenario_cfg tcfg = point.cfg;
				tcfg.scenario.seed = runner_trial_seed(point.cfg.scenario.seed, pt, rp);
				struct trial_request req = { .cfg = &tcfg };
				if (cb->cmdq >= 0) {
					req.cmdq = s->cmdq[cb->cmdq].desc;
					req.cmdq_config = point.plugin_cfgs[cb->cmdq];
				}
				if (cb->iova >= 0) {
					req.iova = s->iova[cb->iova].desc;
					req.iova_config = point.plugin_cfgs[s->n_cmdq + (size_t)cb->iova];
				}
				struct isolate_limits lim;
				trial_limits(&point.cfg, &lim);
				if (isolate_trial(&req, &res, &lim))
					trial_run(&req, &res, NULL); /* no fork: run in-process */
				if (results_append(r, &res) == 0)
					rep->trials++;
				rep->failed += res.status != TRIAL_OK;
				done++;
				write_meta(r, &meta, started, false, false);
				if (opt->progress) {
					struct run_progress p = { .done = done, .total = total,
								  .last = &res };
					p.elapsed_s = now_s() - t0;
					p.eta_s = p.elapsed_s / (double)done * (double)(total - done);
					opt->progress(opt->arg, &p);
				}
			}
		}
		scenario_point_free(s, &point);
	}
out:
	if (opt->stop && *opt->stop)
		rep->interrupted = true;
	write_meta(r, &meta, started, true, rep->interrupted);
	results_close(r);
	runner_layout_free(&layout);
	free(combo);
	return rc;
}
