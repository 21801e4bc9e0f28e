/* SPDX-License-Identifier: MIT */
/* iommulab run -- load a scenario, run it, print the summary, render the graphs. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "engine/native/native.h"
#include "results/results.h"
#include "run/engines.h"
#include "run/isolate.h"
#include "run/noise.h"
#include "run/runner.h"
#include "scenario/scenario.h"
#include "engine/sim/sim.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "workload/workload.h"

static volatile int stop_requested;

static void on_sigint(int sig)
{
	(void)sig;
	if (stop_requested >= 2) {
		/* Third: now, whatever the runner is doing (written trials are on disk). */
		isolate_kill_all();
		_exit(EXIT_INTERRUPTED);
	}
	if (stop_requested) {
		/* Second: the runner stops the trials in flight and writes what finished. */
		stop_requested = 2;
		return;
	}
	stop_requested = 1;
	static const char msg[] = "\niommulab: interrupted: finishing the trials in progress "
				  "(Ctrl-C again to stop them now; finished trials are kept)\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
}

/* How the trials will share the machine, for the plan line. */
static void plan_jobs(const struct scenario *s, unsigned jobs, char *text, size_t len)
{
	bool sim = false, native = false;

	for (size_t i = 0; i < scenario_n_points(s); i++) {
		struct scenario_point p;
		if (scenario_point(s, i, &p))
			continue;
		const struct engine_ops *e = engine_find(p.cfg.scenario.engine);
		native |= e && e->exclusive;
		sim |= e && !e->exclusive;
		scenario_point_free(s, &p);
	}
	if (sim && native)
		snprintf(text, len, "up to %u at a time (-j %u; native trials run alone)", jobs,
			 jobs);
	else if (native)
		snprintf(text, len, "one at a time (native trials run alone)");
	else
		snprintf(text, len, "up to %u at a time (-j %u)", jobs, jobs);
}

/* What the progress callback needs: where to print, and the axes' names for the labels. */
struct table {
	bool tty;
	const struct scenario *s;
	/* so far: the first of each is explained, the rest counted */
	size_t noisy, incomplete, unsteady, overran;
};

/*
 * A CPU that completed under a tenth of the busiest CPU's ops (or none) was starved: the
 * strategy's throughput then comes from a few CPUs, which a reader of ops/s cannot see.
 */
#define UNFAIR_RATIO 10

static bool unfair(const struct trial_result *tr)
{
	return tr->cpus > 1 && tr->ops_max_cpu > 0 &&
	       tr->ops_min_cpu * UNFAIR_RATIO < tr->ops_max_cpu;
}

static void on_progress(void *arg, const struct run_progress *p)
{
	struct table *t = arg;
	const struct trial_result *tr = p->last;
	char label[160];
	int off = snprintf(label, sizeof(label), "%s", tr->plugin);

	for (uint32_t i = 0; i < tr->n_swept && off < (int)sizeof(label); i++)
		off += snprintf(label + off, sizeof(label) - (size_t)off, " %s=%s",
				t->s->axes[i].key, tr->swept_values[i]);
	if (tr->status == TRIAL_NOISY) {
		if (!t->noisy++)
			fprintf(stderr,
				"%siommulab: warning: trial %u (%s) is %s; its figures are kept "
				"but "
				"suspect (status noisy in trials.csv; the summary counts the "
				"others)\n",
				t->tty ? "\r\033[K" : "", tr->index, label, tr->error);
	} else if (tr->status == TRIAL_INCOMPLETE) {
		if (!t->incomplete++)
			fprintf(stderr,
				"%siommulab: warning: trial %u (%s) is %s: it is left out of the "
				"means (status incomplete in trials.csv; the summary counts the "
				"others)\n",
				t->tty ? "\r\033[K" : "", tr->index, label, tr->error);
	} else if (tr->status != TRIAL_OK)
		fprintf(stderr, "%siommulab: trial %u (%s) failed: %s\n", t->tty ? "\r\033[K" : "",
			tr->index, label, tr->error);
	else if (unfair(tr))
		fprintf(stderr,
			"%siommulab: trial %u (%s) note: fairness collapsed: the slowest of %u "
			"CPUs completed %llu ops, the fastest %llu%s: its ops/s is what the "
			"winners did, and the starved CPUs' latency is not in the percentiles\n",
			t->tty ? "\r\033[K" : "", tr->index, label, tr->cpus,
			(unsigned long long)tr->ops_min_cpu, (unsigned long long)tr->ops_max_cpu,
			tr->ops == tr->ops_max_cpu ? " (every op was that one CPU's)" : "");
	if ((tr->status == TRIAL_OK || tr->status == TRIAL_NOISY) && trial_unsteady(tr) &&
	    !t->unsteady++)
		fprintf(stderr,
			"%siommulab: trial %u (%s) note: not in steady state: its ops/s moved "
			"%+.0f%% from the first half of the measured window to the second (caches, "
			"queues or depots still filling, or the host's load changed): lengthen "
			"warmup_ms (column steady_drift; the summary counts the others)\n",
			t->tty ? "\r\033[K" : "", tr->index, label, tr->steady_drift * 100);
	if ((tr->status == TRIAL_OK || tr->status == TRIAL_NOISY) && trial_overran(tr) &&
	    !t->overran++)
		fprintf(stderr,
			"%siommulab: trial %u (%s) note: too short for its ops: its ops ran %.0f%% "
			"past the duration (the window closes when the last op begun in it ends), "
			"so few ops fall in the window and its ops/s is biased low: lengthen "
			"duration_ms (and warmup_ms) to many times the op's p99 (column "
			"window_overrun; the summary counts the others)\n",
			t->tty ? "\r\033[K" : "", tr->index, label, tr->window_overrun * 100);
	if (t->tty) {
		fprintf(stderr, "\r\033[K[%zu/%zu] %s  elapsed %.0fs  eta %.0fs", p->done, p->total,
			label, p->elapsed_s, p->eta_s);
		if (p->done == p->total)
			fputc('\n', stderr);
	}
}

/* "  LABEL: PATH\n  SHA_LABEL: HEX\n" for a plugin file, at text + off. */
static int file_lines(char *text, size_t len, int off, const char *label, const char *sha_label,
		      const char *path)
{
	char hex[SHA256_HEX_LEN], real[PATH_MAX];
	int rc = sha256_file_hex(path, hex);

	if (off < 0 || (size_t)off >= len)
		return off;
	return off + snprintf(text + off, len - (size_t)off, "  %s: %s\n  %s: %s\n", label,
			      realpath(path, real) ? real : path, sha_label,
			      rc ? strerror(-rc) : hex);
}

/*
 * plugins.txt: kind, name, version and ABI of every plugin the scenario uses, and the file it
 * was loaded from with its sha256 (and its sim build's, where the run uses the sim): a result
 * names the exact build that produced it, and --resume refuses a rebuilt plugin.
 */
static void plugins_text(const struct scenario *s, char *text, size_t len)
{
	bool sim = runner_uses_sim(s);
	int off = 0;

	text[0] = '\0';
	for (size_t i = 0; i < s->n_cmdq + s->n_iova && off >= 0 && off < (int)len; i++) {
		const struct lab_plugin *d =
			i < s->n_cmdq ? s->cmdq[i].desc : s->iova[i - s->n_cmdq].desc;
		Dl_info info;

		off += snprintf(text + off, len - (size_t)off, "%s %s %s ABI %u.%u\n",
				plugin_kind_name(d->kind), d->name, d->version, d->abi_major,
				d->abi_minor);
		if (!dladdr(d, &info) || !info.dli_fname)
			continue;
		off = file_lines(text, len, off, "path", "sha256", info.dli_fname);
		size_t n = strlen(info.dli_fname);
		char twin[PATH_MAX];

		if (sim && n > 3 && n + 5 < sizeof(twin) &&
		    !strcmp(info.dli_fname + n - 3, ".so")) {
			snprintf(twin, sizeof(twin), "%.*s.sim.so", (int)(n - 3), info.dli_fname);
			if (!access(twin, F_OK))
				off = file_lines(text, len, off, "sim build", "sim build sha256",
						 twin);
		}
	}
}

/*
 * The simulated machine, for machine.txt (appended at text + off), and its topology copied
 * into the results as topology.csv, so that the results say what they were simulated on.
 */
static int sim_machine_text(const char *dir, const struct scenario *s, char *text, size_t len)
{
	static const char *const atomic_modes[] = { "near", "far", "adaptive" };
	const struct scenario_machine *m = &s->base.machine;
	struct sim_topology t = { 0 };
	char err[256];
	size_t off = 0;

	if (!runner_uses_sim(s))
		return 0;
	char mach[512];

	scenario_machine_describe(m, mach, sizeof(mach));
	off += (size_t)snprintf(text + off, len - off,
				"engine: sim (virtual CPUs; the model is "
				"[machine] in scenario.ini)\nsim machine: %s\n",
				mach);
	if (m->topology && m->topology[0]) {
		if (sim_topology_load(m->topology, &t, err, sizeof(err)))
			return -EINVAL; /* the trials will say why */
		off += (size_t)snprintf(text + off, len - off,
					"sim topology: %s (%u cores, "
					"median %.1f ns, max %.1f ns; copied to topology.csv)\n",
					m->topology, t.n, t.median, t.max);
		if (m->smt_ns > 0) {
			uint32_t paired = 0;
			for (uint32_t i = 0; i < t.n; i++)
				paired += sim_topology_smt_sibling(&t, i, m->smt_ns) >= 0;
			off += (size_t)snprintf(
				text + off, len - off,
				"sim SMT: %u of the %u CPUs have a sibling within "
				"smt_ns = %g ns%s; smt_share = %g\n",
				paired, t.n, m->smt_ns,
				paired ? "" : " (so every CPU is a core of its own)", m->smt_share);
		}
		if (m->socket_ns > 0) {
			uint32_t sockets = 0;
			for (uint32_t i = 0; i < t.n; i++)
				sockets += sim_topology_socket(&t, i, m->socket_ns) == i;
			off += (size_t)snprintf(
				text + off, len - off,
				"sim sockets: %u in the %u cores (pairs within socket_ns = %g ns);"
				" a line's home is its first toucher's socket, a transfer"
				" between two others goes through it\n",
				sockets, t.n, m->socket_ns);
		}
		sim_topology_free(&t);
		char *copy = util_read_file(m->topology, NULL);
		int rc = copy ? results_write_file(dir, "topology.csv", copy) : -EIO;
		free(copy);
		if (rc)
			return rc;
	} else {
		off += (size_t)snprintf(text + off, len - off,
					"sim topology: uniform, line_ns = "
					"%g\n",
					m->line_ns);
	}
	snprintf(text + off, len - off,
		 "sim model: atomic = %s, home_ns = %g, occupancy = %g, read_occupancy = %g, "
		 "atomic_ns = %g, local_ns = %g, op_ns = %g, poll_ns = %g\n",
		 m->atomic >= 0 && m->atomic < 3 ? atomic_modes[m->atomic] : "?", m->home_ns,
		 m->occupancy, machine_read_occupancy(m), m->atomic_ns, m->local_ns, m->op_ns,
		 m->poll_ns);
	return 0;
}

static int write_run_files(const char *dir, const struct scenario *s, const struct lab_clock *clk)
{
	char path[4200], text[16384];
	struct utsname u;
	int off;

	snprintf(path, sizeof(path), "%s/scenario.ini", dir);
	if (scenario_write_results(s, path))
		return -EIO;
	char model[256], governor[64], load[64] = "unknown", steal[64] = "unknown";
	struct noise_mark nm;

	uname(&u);
	noise_cpu_model(model, sizeof(model));
	noise_governor(governor, sizeof(governor));
	noise_mark(&nm);
	if (nm.have_load)
		snprintf(load, sizeof(load), "%.2f (1-minute average at the start)", nm.load1);
	if (nm.have_stat && nm.total_ticks)
		snprintf(steal, sizeof(steal), "%.2f%% of CPU time since boot",
			 100.0 * (double)nm.steal_ticks / (double)nm.total_ticks);
	off = snprintf(text, sizeof(text),
		       "host: %s\nkernel: %s %s %s\ncpu model: %s\nonline_cpus: %u\n"
		       "cpufreq governor: %s\nload: %s\nsteal: %s\n"
		       "clock: %s (%.4f ns per tick)\n"
		       "iommulab: %s (plugin ABI %d.%d), build: %s\n",
		       u.nodename, u.sysname, u.release, u.machine, model, native_online_cpus(),
		       governor, load, steal, clock_source_name(clk), clk->ns_per_tick, LAB_VERSION,
		       LAB_ABI_MAJOR, LAB_ABI_MINOR, LAB_BUILD_TYPE);
	if (off > 0 && (size_t)off < sizeof(text) &&
	    sim_machine_text(dir, s, text + off, sizeof(text) - (size_t)off) == -EIO)
		return -EIO;
	if (results_write_file(dir, "machine.txt", text))
		return -EIO;
	plugins_text(s, text, sizeof(text));
	return results_write_file(dir, "plugins.txt", text);
}

/* The file at path holds exactly text. */
static bool same_text(const char *path, const char *text)
{
	char *have = util_read_file(path, NULL);
	bool same = have && !strcmp(have, text);

	free(have);
	return same;
}

/*
 * Native trials with more busy threads than online CPUs measure the scheduler: refuse the
 * scenario up front (every offending point), unless it says oversubscribe = allow.
 */
/*
 * Every sim point's [machine] topology loads (the file exists and parses), checked once per
 * file before anything runs: a bad data file is bad input (exit 2), not a failure of every
 * trial.
 */
static int check_topologies(const struct scenario *s, const char *path)
{
	char last[512] = "";
	int bad = 0;

	for (size_t i = 0; i < scenario_n_points(s); i++) {
		struct scenario_point p;
		struct sim_topology t;
		char err[512];

		if (scenario_point(s, i, &p))
			continue;
		const char *topo = p.cfg.machine.topology;
		/* sim_topology_load keeps what it parsed: each file is read once */
		if (p.cfg.scenario.engine == ENGINE_SIM && topo && *topo) {
			if (sim_topology_load(topo, &t, err, sizeof(err))) {
				if (strcmp(err, last)) /* once per file, not per point */
					fprintf(stderr,
						"%s: sweep point %zu: [machine] topology: %s\n",
						path, i, err);
				snprintf(last, sizeof(last), "%s", err);
				bad++;
			} else {
				sim_topology_free(&t);
			}
		}
		scenario_point_free(s, &p);
	}
	if (bad)
		fprintf(stderr,
			"iommulab: %d sweep point%s cannot load %s topology: nothing was run\n",
			bad, bad == 1 ? "" : "s", bad == 1 ? "its" : "their");
	return bad ? -1 : 0;
}

static int check_oversubscription(const struct scenario *s, const char *path)
{
	uint32_t online = native_online_cpus();
	int bad = 0;

	for (size_t i = 0; i < scenario_n_points(s); i++) {
		struct scenario_point p;
		if (scenario_point(s, i, &p))
			continue;
		const struct scenario_main *m = &p.cfg.scenario;
		bool thread = p.cfg.smmu.device == DEVICE_THREAD && m->workload != WORKLOAD_IOVA;
		uint64_t busy = m->cpus + thread;
		if (m->engine == ENGINE_NATIVE && m->oversubscribe == OVERSUBSCRIBE_REFUSE &&
		    busy > online) {
			fprintf(stderr,
				"%s: sweep point %zu: %" PRIu64 " busy threads (cpus = %" PRIu64
				"%s) on %u online CPUs would measure the scheduler, not the "
				"algorithm: lower cpus, use engine = sim, or set [scenario] "
				"oversubscribe = allow\n",
				path, i, busy, m->cpus, thread ? " + the device thread" : "",
				online);
			bad++;
		}
		scenario_point_free(s, &p);
	}
	if (bad)
		fprintf(stderr,
			"iommulab: %d sweep point%s would oversubscribe this machine: "
			"nothing was run\n",
			bad, bad == 1 ? "" : "s");
	return bad ? -1 : 0;
}

/* --resume: the scenario and the plugins must be those the run started with. */
static int check_resumable(const char *dir, const struct scenario *s)
{
	char path[4200], check[4200], text[16384];

	snprintf(path, sizeof(path), "%s/scenario.ini", dir);
	snprintf(check, sizeof(check), "%s/.scenario-check.ini", dir);
	int rc = scenario_write_results(s, check);
	char *written = rc ? NULL : util_read_file(check, NULL);
	bool same = written && same_text(path, written);
	char *before = same ? NULL : util_read_file(path, NULL);

	free(written);
	unlink(check);
	if (!same && before && !strstr(before, SCENARIO_CHECKSUM_LINE)) {
		fprintf(stderr,
			"iommulab: %s has no checksum line (an older iommulab wrote it, or it was "
			"edited): refusing to resume a run whose scenario cannot be checked "
			"(start a new run)\n",
			path);
		free(before);
		return -1;
	}
	free(before);
	if (!same) {
		fprintf(stderr,
			"iommulab: %s was edited since the run started: refusing to mix "
			"its trials with another scenario's (start a new run)\n",
			path);
		return -1;
	}
	plugins_text(s, text, sizeof(text));
	snprintf(path, sizeof(path), "%s/plugins.txt", dir);
	if (!same_text(path, text)) {
		fprintf(stderr,
			"iommulab: the plugins changed since the run started (%s says "
			"otherwise than what is loaded now): start a new run\n",
			path);
		return -1;
	}
	return 0;
}

/* Whether name[0..len) is one of the scenario's plugins (either kind). */
static bool has_plugin(const struct scenario *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->n_cmdq + s->n_iova; i++) {
		const char *p =
			i < s->n_cmdq ? s->cmdq[i].desc->name : s->iova[i - s->n_cmdq].desc->name;

		if (strlen(p) == len && !strncmp(p, name, len))
			return true;
	}
	return false;
}

/* --baseline: a plugin of the scenario, or a dma pair of them ("cmpxchg+fixed_depot"). */
static bool scenario_has_plugin(const struct scenario *s, const char *name)
{
	const char *plus = strchr(name, '+');

	if (!plus)
		return has_plugin(s, name, strlen(name));
	return has_plugin(s, name, (size_t)(plus - name)) &&
	       has_plugin(s, plus + 1, strlen(plus + 1));
}

/* --shard K/N: 0 <= K < N <= RUNNER_MAX_SHARDS, in decimal. */
static int parse_shard(const char *text, unsigned *k, unsigned *n)
{
	char *end;

	errno = 0;
	unsigned long vk = strtoul(text, &end, 10);
	if (errno || end == text || *end != '/' || text[0] == '-')
		return -EINVAL;
	const char *ns = end + 1;
	unsigned long vn = strtoul(ns, &end, 10);
	if (errno || end == ns || *end || ns[0] == '-' || vn < 1 || vn > RUNNER_MAX_SHARDS ||
	    vk >= vn)
		return -EINVAL;
	*k = (unsigned)vk;
	*n = (unsigned)vn;
	return 0;
}

/*
 * shard.txt: which shard this dir holds and of how many trials, so that `iommulab merge` can
 * tell a complete set of shards from an incomplete one, and --resume runs the same shard.
 */
static int write_shard_file(const char *dir, const struct scenario *s, unsigned k, unsigned n)
{
	size_t total = runner_n_trials(s);
	char text[256];

	snprintf(text, sizeof(text),
		 "shard: %u/%u\ntrials: %zu of %zu (trial i is in shard i mod %u)\n", k, n,
		 runner_shard_trials(total, k, n), total, n);
	return results_write_file(dir, "shard.txt", text);
}

/* --dry-run: every sweep point's trials, engine and estimated time; nothing is measured. */
static void print_plan(const struct scenario *s, unsigned jobs)
{
	const struct workload_ops *w = workload_find(s->base.scenario.workload);
	bool cmdq = w && (w->needs & WORKLOAD_NEEDS_CMDQ),
	     iova = w && (w->needs & WORKLOAD_NEEDS_IOVA);
	size_t nc = cmdq ? s->n_cmdq : 1, ni = iova ? s->n_iova : 1;
	double native_s = 0, virtual_s = 0;
	size_t total = 0;

	printf("plan: %s (workload %s), %zu sweep point%s x %zu plugin%s:", s->path,
	       w ? w->name : "?", scenario_n_points(s), scenario_n_points(s) == 1 ? "" : "s",
	       nc * ni, nc * ni == 1 ? "" : "s");
	for (size_t c = 0; c < nc; c++)
		for (size_t i = 0; i < ni; i++)
			printf(" %s%s%s", cmdq ? s->cmdq[c].desc->name : "",
			       cmdq && iova ? "+" : "", iova ? s->iova[i].desc->name : "");
	printf("\n");
	for (size_t i = 0; i < scenario_n_points(s); i++) {
		struct scenario_point p;
		char at[256] = "";
		int off = 0;

		if (scenario_point(s, i, &p))
			continue;
		const struct scenario_main *m = &p.cfg.scenario;
		const struct engine_ops *e = engine_find(m->engine);
		size_t n = nc * ni * m->repeats;
		double each = (double)(m->warmup_ms + m->duration_ms) / 1000.0;

		for (size_t a = 0; a < s->n_axes && off < (int)sizeof(at); a++)
			off += snprintf(at + off, sizeof(at) - (size_t)off, " %s=%s",
					s->axes[a].key, p.swept_values[a]);
		printf("  point %zu:%s  engine %s, %" PRIu64 " CPU%s, %zu trial%s (%" PRIu64
		       " repeat%s), %.3f s each%s\n",
		       i, at, e ? e->name : "?", m->cpus, m->cpus == 1 ? "" : "s", n,
		       n == 1 ? "" : "s", m->repeats, m->repeats == 1 ? "" : "s", each,
		       e && !e->exclusive ? " of virtual time" : "");
		total += n;
		if (e && e->exclusive)
			native_s += (double)n * each;
		else
			virtual_s += (double)n * each;
		scenario_point_free(s, &p);
	}
	printf("total: %zu trials", total);
	if (native_s > 0)
		printf("; native: about %.0f s, one trial at a time", native_s);
	if (virtual_s > 0)
		printf("; sim: %.3f s of virtual time, up to %u at once (the host time depends on "
		       "the model and the CPU count)",
		       virtual_s, jobs);
	printf("\nnothing was measured (--dry-run)\n");
}

static const struct lab_plugin *lookup(void *ctx, const char *name)
{
	const struct loaded_plugin *p = registry_find(ctx, name, NULL);
	return p ? p->desc : NULL;
}

static const struct lab_plugin *lookup_at(void *ctx, size_t i)
{
	const struct plugin_registry *r = ctx;
	return i < r->n ? r->v[i].desc : NULL;
}

int cmd_run(int argc, char **argv, struct cli_common *c)
{
	const char *path = NULL, *out = NULL, *resume = NULL;
	char resume_ini[4200];
	const char **sets = NULL;
	size_t n_sets = 0;
	struct plugin_registry reg = { 0 };
	struct diag_list diags = { 0 }, load_diags = { 0 };
	struct scenario *s = NULL;
	struct table table = { .tty = isatty(STDERR_FILENO) };
	char dir[4096], err[1024] = "";
	struct cli_parser p;
	int o, status = EXIT_USAGE;
	unsigned jobs = 0;		  /* 0: the online CPUs */
	unsigned shard = 0, n_shards = 0; /* 0: not sharded */
	unsigned plot_flags = 0;
	bool dry_run = false;
	struct cli_summary_opts sum = { 0 };

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0) {
		switch (o) {
		case RUN_OPT_SET:
			if (cli_push(&sets, &n_sets, optarg))
				goto out;
			break;
		case RUN_OPT_OUT:
			out = optarg;
			break;
		case RUN_OPT_RESUME:
			resume = optarg;
			break;
		case RUN_OPT_JOBS:
			if (cli_parse_jobs(optarg, &jobs)) {
				cli_usage_error(c->cmd,
						"-j wants a number of jobs from 1 to %d, "
						"not '%s'",
						ISOLATE_MAX_JOBS, optarg);
				goto out;
			}
			break;
		case RUN_OPT_SHARD:
			if (parse_shard(optarg, &shard, &n_shards)) {
				cli_usage_error(c->cmd,
						"--shard wants K/N with 0 <= K < N <= %d (K "
						"counts from 0, as $SLURM_ARRAY_TASK_ID), not '%s'",
						RUNNER_MAX_SHARDS, optarg);
				goto out;
			}
			break;
		case RUN_OPT_PLOTS:
			if (cli_plots_flags(c->cmd, optarg, &plot_flags))
				goto out;
			break;
		case RUN_OPT_DRY_RUN:
			dry_run = true;
			break;
		case RUN_OPT_FORMAT:
			if (!strcmp(optarg, "json")) {
				sum.format = CLI_SUMMARY_JSON;
			} else if (strcmp(optarg, "text")) {
				cli_usage_error(c->cmd, "--format wants text or json, not '%s'",
						optarg);
				goto out;
			}
			break;
		case RUN_OPT_BASELINE:
			sum.baseline = optarg;
			break;
		}
	}
	if (o == CLI_OPT_EXIT) {
		status = p.status;
		goto out;
	}
	if (optind < argc)
		path = argv[optind];
	if (optind + 1 < argc) {
		cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	if (resume) {
		if (path || out || n_sets) {
			fprintf(stderr,
				"iommulab run: --resume DIR takes the scenario from "
				"DIR/scenario.ini: give no scenario, --set or --out with it\n");
			goto out;
		}
		unsigned rk = 0, rn = 0;
		size_t rtotal;
		if (cli_read_shard(resume, &rk, &rn, &rtotal) < 0) {
			cli_print_shard_damaged("run", resume);
			goto out;
		}
		if (n_shards && (rk != shard || rn != n_shards)) {
			if (rn)
				fprintf(stderr,
					"iommulab run: %s holds shard %u/%u, not --shard %u/%u: "
					"leave --shard out, --resume takes it from "
					"%s/shard.txt\n",
					resume, rk, rn, shard, n_shards, resume);
			else
				fprintf(stderr,
					"iommulab run: %s is a whole run, not a shard: leave "
					"--shard out\n",
					resume);
			goto out;
		}
		shard = rk;
		n_shards = rn;
		snprintf(resume_ini, sizeof(resume_ini), "%s/scenario.ini", resume);
		path = resume_ini;
		out = resume;
	}
	if (!path) {
		cli_usage_error(c->cmd, "no scenario given");
		goto out;
	}
	cli_load_plugins(c, &reg, &load_diags);
	struct plugin_lookup pl = { .find = lookup, .ctx = &reg, .at = lookup_at };
	s = scenario_load(path, sets, n_sets, &pl, &diags);
	if (!s) {
		cli_print_diags(&load_diags, "iommulab: warning: ");
		cli_print_diags(&diags, "");
		/* Say where the errors are: the file, the --set options, or both. */
		size_t n_set = 0;
		for (size_t i = 0; i < diags.n; i++)
			n_set += !strncmp(diags.msgs[i], "--set ", strlen("--set "));
		if (n_set == diags.n)
			fprintf(stderr, "iommulab: %zu error%s in --set: nothing was run\n", n_set,
				n_set == 1 ? "" : "s");
		else if (n_set)
			fprintf(stderr,
				"iommulab: %zu error%s in %s and %zu in --set: nothing was run\n",
				diags.n - n_set, diags.n - n_set == 1 ? "" : "s", path, n_set);
		else
			fprintf(stderr, "iommulab: %zu error%s in %s: nothing was run\n", diags.n,
				diags.n == 1 ? "" : "s", path);
		goto out;
	}
	for (size_t i = 0; i < s->n_cmdq + s->n_iova; i++) {
		const char *name =
			i < s->n_cmdq ? s->cmdq[i].desc->name : s->iova[i - s->n_cmdq].desc->name;
		const char *why;
		if (!registry_find(&reg, name, &why) && why) {
			cli_print_diags(&load_diags, "iommulab: ");
			fprintf(stderr, "iommulab: plugin '%s': %s: nothing was run\n", name, why);
			goto out;
		}
	}
	if (check_oversubscription(s, path) || check_topologies(s, path) ||
	    (resume && check_resumable(resume, s)))
		goto out;
	if (sum.baseline && !scenario_has_plugin(s, sum.baseline)) {
		fprintf(stderr,
			"iommulab run: --baseline %s: not a plugin of %s: nothing was run\n",
			sum.baseline, path);
		goto out;
	}
	if (out) {
		snprintf(dir, sizeof(dir), "%s", out);
	} else {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
		snprintf(dir, sizeof(dir), "results/%s-%s", s->base.scenario.name, stamp);
	}

	if (dry_run) {
		print_plan(s, jobs ? jobs : (native_online_cpus() ? native_online_cpus() : 1));
		status = EXIT_OK;
		goto out;
	}
	struct lab_clock clk;
	clock_setup(&clk, 0);
	table.s = s;
	struct sigaction sa = { .sa_handler = on_sigint };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!jobs)
		jobs = native_online_cpus() ? native_online_cpus() : 1;
	char par[256];
	plan_jobs(s, jobs, par, sizeof(par));
	if (n_shards) {
		size_t len = strlen(par);
		snprintf(par + len, sizeof(par) - len, "; shard %u/%u: %zu of them", shard,
			 n_shards, runner_shard_trials(runner_n_trials(s), shard, n_shards));
	}
	double run_s = (double)runner_n_trials(s) *
		       (double)(s->base.scenario.duration_ms + s->base.scenario.warmup_ms) / 1000.0;
	if (runner_uses_sim(s)) {
		char mach[512];

		scenario_machine_describe(&s->base.machine, mach, sizeof(mach));
		fprintf(stderr,
			"iommulab: %s: %zu trials, %.3f s of virtual time on %s, %s; "
			"results in %s/\n",
			path, runner_n_trials(s), run_s, mach, par, dir);
	} else
		fprintf(stderr, "iommulab: %s: %zu trials, about %.0f s, %s; results in %s/\n",
			path, runner_n_trials(s), run_s, par, dir);
	const struct workload_ops *wl = workload_find(s->base.scenario.workload);
	if (runner_uses_sim(s) && s->base.scenario.repeats > 1 && wl && wl->uses_seed &&
	    !wl->uses_seed(&s->base))
		fprintf(stderr,
			"iommulab: note: the sim is deterministic and nothing in this "
			"workload is random (think_jitter = 0, or micro), so each of the %llu "
			"repeats of a point gives the same numbers: set repeats = 1\n",
			(unsigned long long)s->base.scenario.repeats);
	if (!resume && (util_mkdir_p(dir) || write_run_files(dir, s, &clk) ||
			(n_shards && write_shard_file(dir, s, shard, n_shards)))) {
		fprintf(stderr, "iommulab: cannot write to %s: %s\n", dir, strerror(errno));
		goto out;
	}
	struct run_options opt = { .out_dir = dir,
				   .progress = on_progress,
				   .arg = &table,
				   .stop = &stop_requested,
				   .resume = resume != NULL,
				   .jobs = jobs,
				   .shard = shard,
				   .n_shards = n_shards };
	struct run_report rep;
	int rc = runner_run(s, &opt, &rep, err, sizeof(err));
	if (rc && rep.trials == rep.resumed) {
		fprintf(stderr, "iommulab: %s\n", err);
		goto out;
	}
	if (rep.torn_bytes)
		fprintf(stderr,
			"iommulab: resumed: %s/trials.csv ended inside a row (%zu bytes: the run "
			"was killed or the disk filled while writing it): dropped, its trial ran "
			"again\n",
			dir, rep.torn_bytes);
	if (rep.resumed)
		fprintf(stderr, "iommulab: resumed: %zu trials were already done, %zu run now\n",
			rep.resumed, rep.trials - rep.resumed);
	cli_print_summary_as(dir, s, &clk, &sum);
	if (cli_write_summary_file(dir, s, &sum))
		fprintf(stderr, "iommulab: warning: could not write %s/summary.txt\n", dir);
	if (sum.format == CLI_SUMMARY_JSON) {
		/* stdout holds the JSON alone: what else the run says goes to stderr. */
		fflush(stdout);
		int saved = dup(STDOUT_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		printf("results: %s/ (trials.csv, histograms.csv, summary.json, report.html)\n",
		       dir);
		cli_render_plots(dir, plot_flags);
		fflush(stdout);
		if (saved >= 0) {
			dup2(saved, STDOUT_FILENO);
			close(saved);
		}
	} else {
		printf("\nresults: %s/ (trials.csv, histograms.csv, summary.json, report.html)\n",
		       dir);
		cli_render_plots(dir, plot_flags);
	}
	if (rep.interrupted) {
		fprintf(stderr,
			"iommulab: interrupted after %zu trials; they are in %s/trials.csv\n",
			rep.trials, dir);
		status = EXIT_INTERRUPTED;
	} else if (rep.failed) {
		fprintf(stderr,
			"iommulab: %zu of %zu trials failed (see the error column of "
			"%s/trials.csv)\n",
			rep.failed, rep.trials, dir);
		status = EXIT_TRIALS_FAILED;
	} else {
		status = EXIT_OK;
	}
out:
	scenario_free(s);
	registry_free(&reg);
	diag_clear(&diags);
	diag_clear(&load_diags);
	free(sets);
	return status;
}
