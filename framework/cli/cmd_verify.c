/* SPDX-License-Identifier: MIT */
/*
 * iommulab verify -- the conformance checks on one plugin (a dropped-in .so or a name).
 * cmdq: the oracle over the grid of framework/verify/cmdq_check (tiny queues to force wrap
 * and queue-full, MSI on and off, one and several commands per sync, 1 and 2 CPUs natively,
 * 4, 16 and 64 on the sim with the plugin's .sim.so, 4 and 16 also under seeded schedule
 * perturbations: cmdq_check_seeds; --seed N runs every sim point under N's alone, replaying
 * a perturbed counterexample; --engine native|sim runs that part of the grid alone), with the
 * plugin's parameters as given and then each varied in turn (cmdq_check_variants), the grid the
 * conformance suite runs.
 * --set of a key the grid sets itself (engine, cpus, ...) is refused, never ignored.
 * Each cmdq trial runs in its own process (run_isolated): a crash, an abort or a hang loses
 * that trial's verdicts only (no_crash or no_deadlock says how), and the table still comes,
 * native and sim side by side, then every failing configuration. A native trial that timed out
 * while its threads were starved is re-run, and is inconclusive if it stays so (noisy()).
 * iova: every check of framework/verify/iova_check (the conformance suite's own code).
 * Both kinds, once per verify whatever --engine: lab_h_only (framework/verify/atomics_check),
 * the plugin's sim build disassembled for atomics of its own, i.e. accesses bypassing lab.h.
 * Exit 0 only if every check passed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "engine/native/native.h"
#include "params/params.h"
#include "run/isolate.h"
#include "run/trial_run.h"
#include "scenario/scenario.h"
#include "verify/atomics_check.h"
#include "verify/cmdq_check.h"
#include "verify/iova_check.h"
#include "util/fs.h"

/* A check's verdict over every configuration, per engine ([0] native, [1] the sim). */
struct verdict {
	const char *name;
	size_t runs[2], failed[2], unchecked[2], inconclusive[2];
	size_t perturbed_fails; /* of the sim's failures, those under a seeded perturbation */
	char **fails;		/* "[where] detail" of every failing configuration */
	size_t n_fails;
};

/* ---- one trial in its own process --------------------------------------------------------- */

/*
 * What a trial's child hands back through a shared mapping: trial_run's return, the result's
 * status and message, the oracle's report (its check names are the executable's own strings,
 * the same in parent and child), and the engine's progress, which the parent watches.
 */
struct child_out {
	int rc;
	int status;
	char error[TRIAL_ERR_LEN];
	struct oracle_report o;
	struct engine_progress progress;
	uint32_t done; /* atomic */
};

/* How a trial's process ran: for the noise rule (see noisy()). */
struct verify_noise {
	long nivcsw;   /* involuntary context switches of all its threads */
	double cpu_s;  /* CPU time of all its threads, user and system */
	double wall_s; /* wall time from fork to reaping */
	uint32_t cpus; /* the trial's CPUs, one thread each */
};

/*
 * The sim's progress (every 4096 lab.h operations) stopping for this long of wall time is a
 * virtual CPU running without calling lab.h: what `run` gives up on too (runner.c).
 */
#define VERIFY_STALL_MS 20000

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* How a child that did not finish ended, with the last line it wrote to stderr, if any. */
static void describe_end(const char *what, int status, const char *tail, char *why, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(why, len, "the %s's process was killed by %s%s%s%s", what,
			 strsignal(WTERMSIG(status)), tail[0] ? " (it said: " : "", tail,
			 tail[0] ? ")" : "");
	else
		snprintf(why, len, "the %s's process exited with status %d%s%s%s", what,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail[0] ? " (it said: " : "",
			 tail, tail[0] ? ")" : "");
}

/*
 * fork() for a trial's or a check's child: stdio flushed first (nothing printed twice), and in
 * the child ^C's default back and stderr into errf, whose last line says how a crash ended.
 * *hup is the read end of a pipe whose only write end the child holds until it exits, so the
 * parent wakes the moment it ends (child_wait) instead of polling with naps: verify's trials
 * take milliseconds each, and a 10 ms nap between looks cost it seconds.
 */
static pid_t fork_child(FILE *errf, int *hup)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid_t pid = fork();

	if (!pid) {
		close(p[0]);
		signal(SIGINT, SIG_DFL);
		dup2(fileno(errf), STDERR_FILENO);
		return 0;
	}
	close(p[1]);
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		errno = e;
		return pid;
	}
	*hup = p[0];
	return pid;
}

/* wait4(pid) for at most ms: pid once it was reaped, 0 while it still runs. */
static pid_t child_wait(pid_t pid, int hup, int ms, int *status, struct rusage *ru)
{
	struct pollfd pf = { .fd = hup, .events = POLLIN };

	if (poll(&pf, 1, ms) > 0)
		return wait4(pid, status, 0, ru); /* its pipe closed: it has exited */
	return wait4(pid, status, WNOHANG, ru);
}

/*
 * One trial in a child process of its own, so that a plugin that crashes, aborts or hangs
 * beyond every watchdog loses that trial's verdicts only: trial_start forks it, trial_watch
 * waits for it (killing it when the sim stops making progress or a native trial outlives its
 * limit), trial_end reads its verdicts and frees it. Several run at once under -j.
 */
struct trial_proc {
	struct child_out *out;
	FILE *errf;
	pid_t pid;
	int hup; /* fork_child's pipe */
	bool sim, killed, stalled, reaped;
	uint32_t cpus;
	uint64_t start, moved, steps, limit_ms;
	int status;
	struct rusage ru;
};

/* 0, or -errno (err says why) when the trial's process could not be started. */
static int trial_start(struct trial_proc *t, const struct trial_request *req, char *err,
		       size_t err_len)
{
	*t = (struct trial_proc){
		.out = mmap(NULL, sizeof(*t->out), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0),
		.errf = tmpfile(),
		.hup = -1,
		.sim = req->cfg->scenario.engine == ENGINE_SIM,
		.cpus = req->cfg->scenario.cpus,
		.start = mono_ms(),
		/* Natively, the trial's own watchdog fires first; this is for a CPU it cannot
		 * unwind. */
		.limit_ms = 2 * req->cfg->scenario.watchdog_ms + 60000,
	};
	t->moved = t->start;
	int rc = 0;

	if (t->out == MAP_FAILED || !t->errf) {
		rc = -errno;
		snprintf(err, err_len, "cannot start a trial's process: %s", strerror(-rc));
		goto fail;
	}
	t->pid = fork_child(t->errf, &t->hup);
	if (t->pid < 0) {
		rc = -errno;
		snprintf(err, err_len, "cannot fork a trial's process: %s", strerror(-rc));
		goto fail;
	}
	if (!t->pid) {
		struct trial_request r = *req;
		struct trial_result res = { 0 };

		r.progress = &t->out->progress;
		t->out->rc = trial_run(&r, &res, &t->out->o);
		t->out->status = res.status;
		snprintf(t->out->error, sizeof(t->out->error), "%s", res.error);
		__atomic_store_n(&t->out->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	return 0;
fail:
	if (t->errf)
		fclose(t->errf);
	if (t->out != MAP_FAILED)
		munmap(t->out, sizeof(*t->out));
	return rc;
}

/* Wait up to ms for t to end, killing it when it is stuck: true once it has been reaped. */
static bool trial_watch(struct trial_proc *t, int ms)
{
	if (t->reaped)
		return true;
	if (child_wait(t->pid, t->hup, ms, &t->status, &t->ru) == t->pid)
		return t->reaped = true;
	uint64_t now = mono_ms(), s = __atomic_load_n(&t->out->progress.steps, __ATOMIC_RELAXED);

	if (s != t->steps) {
		t->steps = s;
		t->moved = now;
	}
	if (!t->killed && ((t->sim && now - t->moved > VERIFY_STALL_MS) ||
			   (!t->sim && now - t->start > t->limit_ms))) {
		t->stalled = t->sim;
		t->killed = true;
		kill(t->pid, SIGKILL);
	}
	return false;
}

/*
 * After trial_watch saw t reaped: o is the oracle's report, or cmdq_check_lost's saying how the
 * child ended; t's resources are freed. 0, or -errno (err says why) when the trial could not
 * be set up.
 */
static int trial_end(struct trial_proc *t, struct oracle_report *o, struct verify_noise *nz,
		     char *err, size_t err_len)
{
	struct child_out *out = t->out;
	int rc = 0;

	nz->nivcsw = t->ru.ru_nivcsw;
	nz->cpu_s = (double)t->ru.ru_utime.tv_sec + (double)t->ru.ru_utime.tv_usec / 1e6 +
		    (double)t->ru.ru_stime.tv_sec + (double)t->ru.ru_stime.tv_usec / 1e6;
	nz->cpus = t->cpus;
	nz->wall_s = (double)(mono_ms() - t->start) / 1000.0;
	if (!t->killed && WIFEXITED(t->status) && !WEXITSTATUS(t->status) &&
	    __atomic_load_n(&out->done, __ATOMIC_ACQUIRE)) {
		if (out->rc) {
			rc = out->rc;
			snprintf(err, err_len, "%s", out->error);
		}
		*o = out->o;
		goto out;
	}
	char why[ORACLE_DETAIL_LEN], tail[200];

	util_last_line(t->errf, tail, sizeof(tail));
	if (t->stalled)
		snprintf(why, sizeof(why),
			 "a virtual CPU spins or accesses shared memory outside lab.h: the sim saw "
			 "no lab.h operation for %.0f s of host time (stuck at %.3f ms of virtual "
			 "time, after %llu progress reports); killed",
			 VERIFY_STALL_MS / 1000.0,
			 (double)__atomic_load_n(&out->progress.virtual_ns, __ATOMIC_RELAXED) / 1e6,
			 (unsigned long long)t->steps);
	else if (t->killed)
		snprintf(why, sizeof(why),
			 "the trial did not end within %.0f s, its watchdog included (a CPU stuck "
			 "where the watchdog cannot unwind it); killed",
			 (double)t->limit_ms / 1000.0);
	else
		describe_end("trial", t->status, tail, why, sizeof(why));
	cmdq_check_lost(o,
			t->stalled  ? CMDQ_LOST_STALL
			: t->killed ? CMDQ_LOST_HANG
				    : CMDQ_LOST_CRASH,
			t->sim, why);
out:
	close(t->hup);
	fclose(t->errf);
	munmap(out, sizeof(*out));
	return rc;
}

/* A started trial whose verdicts are no longer wanted (verify is giving up): killed, freed. */
static void trial_abandon(struct trial_proc *t)
{
	struct oracle_report o;
	struct verify_noise nz;
	char err[TRIAL_ERR_LEN];

	if (!t->reaped)
		kill(t->pid, SIGKILL);
	while (!trial_watch(t, 100))
		;
	trial_end(t, &o, &nz, err, sizeof(err));
}

/* req run to its end in a child process: trial_start, trial_watch and trial_end in one. */
static int run_isolated(const struct trial_request *req, struct oracle_report *o,
			struct verify_noise *nz, char *err, size_t err_len)
{
	struct trial_proc t;
	int rc = trial_start(&t, req, err, err_len);

	if (rc)
		return rc;
	while (!trial_watch(&t, 100))
		;
	return trial_end(&t, o, nz, err, err_len);
}

/* Room for a trial's "where": its description, the plugin's name and its parameter values. */
#define VERIFY_WHERE_LEN (160 + CMDQ_CHECK_SET_LEN * 4)

/* What verify has seen so far: every check's verdict, and the trials counted. */
struct verify_tally {
	struct verdict *v;
	size_t nv, n_native, n_sim, n_perturbed;
	bool perturbed_failed; /* a perturbed sim counterexample: its seed, for the replay line */
	uint64_t failed_seed;
};

/* A sim trial started and not yet taken, with what its verdicts are recorded under. */
struct queued_trial {
	struct trial_proc t;
	char where[VERIFY_WHERE_LEN];
	bool perturbed;
	uint64_t seed;
};

/* The one plugin verify checks, as the scenario's plugin lookup. */
static const struct lab_plugin *lookup_one(void *ctx, const char *name)
{
	const struct lab_plugin *d = ctx;

	return strcmp(d->name, name) ? NULL : d;
}

/*
 * verify has always taken "NAME.key=value" for the plugin's own keys; the scenario spells
 * that "plugin.NAME.key=value". Anything else goes to the scenario as given.
 */
static char *set_spelling(const char *set, const struct lab_plugin *d)
{
	size_t len = strlen(d->name);
	char *s;

	if (strncmp(set, d->name, len) || set[len] != '.' || !strchr(set + len + 1, '=') ||
	    scenario_find_section(d->name))
		return strdup(set);
	s = malloc(strlen("plugin.") + strlen(set) + 1);
	if (s)
		sprintf(s, "plugin.%s", set);
	return s;
}

/*
 * The keys each grid point sets itself: a --set of one would be overwritten without a word,
 * so it is refused, saying what verify runs instead. NULL, or the message.
 */
static const char *grid_key(const char *set)
{
	static const struct {
		const char *key, *why;
	} keys[] = {
		{ "engine",
		  "verify runs every plugin natively (1-2 CPUs) and on the sim (4-64 CPUs)" },
		{ "cpus", "verify runs 1 and 2 CPUs natively and 4, 16 and 64 on the sim" },
		{ "smmu.queue_shift", "verify runs queues of 8, 16 and 256 entries" },
		{ "smmu.msi", "verify runs MSI on and off" },
		{ "smmu.queues", "verify runs a queue per CPU natively and 4, 4 and 8 on the sim" },
		{ "workload.cmdq.cmds_per_sync", "verify runs 1 and 5 commands per sync" },
		{ "workload.cmdq.mixed",
		  "verify runs the fixed shapes and, on the small queues, the mixed ones" },
		{ "workload.cmdq.think_ns", "verify runs think_ns 0 and 200" },
	};
	const char *eq = strchr(set, '=');
	size_t len = eq ? (size_t)(eq - set) : strlen(set);

	while (len && (set[len - 1] == ' ' || set[len - 1] == '\t'))
		len--;
	if (len > strlen("scenario.") && !strncmp(set, "scenario.", strlen("scenario."))) {
		set += strlen("scenario.");
		len -= strlen("scenario.");
	}
	for (size_t i = 0; i < LAB_ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].key) == len && !strncmp(set, keys[i].key, len))
			return keys[i].why;
	return NULL;
}

/* The base scenario verify's grid starts from: this plugin alone, with verify's watchdog
 * (CMDQ_CHECK_WATCHDOG_MS, which a counterexample names). */
static int write_base(const char *path, int fd, const struct lab_plugin *d)
{
	const char *kind = d->kind == LAB_KIND_IOVA ? "iova" : "cmdq";
	FILE *f = fdopen(fd, "w");

	if (!f) {
		close(fd);
		return -errno;
	}
	fprintf(f,
		"; iommulab verify: the base of its grid (%s), as cmdq_check_base() sets it\n"
		"[scenario]\nworkload = %s\nengine = native\noversubscribe = allow\n"
		"watchdog_ms = %u\n[smmu]\ndevice = inline\n[plugins]\n%s = %s\n",
		path, kind, CMDQ_CHECK_WATCHDOG_MS, kind, d->name);
	return fclose(f) ? -errno : 0;
}

/*
 * The configuration verify starts its grid from: the defaults, the base above, then the
 * --set options, loaded by scenario_load exactly as `run` loads a scenario and its --set
 * (the same spellings, checks and messages). scenario_load reads a file, so the base is
 * written to a temporary one first. NULL (and printed why) on any problem.
 */
static struct scenario *load_base(const struct lab_plugin *d, const char *const *args,
				  size_t n_sets)
{
	const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct plugin_lookup pl = { .find = lookup_one, .ctx = (void *)d };
	struct diag_list diags = { 0 };
	struct scenario *s = NULL;
	char path[4200], **sets = calloc(n_sets + 1, sizeof(*sets));
	int fd = -1, rc;

	snprintf(path, sizeof(path), "%s/iommulab-verify-XXXXXX.ini", tmpdir);
	fd = sets ? mkstemps(path, 4) : -1;
	rc = fd < 0 ? -errno : write_base(path, fd, d);
	if (rc) {
		fprintf(stderr, "iommulab verify: cannot write %s: %s\n", path, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < n_sets; i++) {
		/* verify runs d alone over its own grid: no list of plugins, no sweep */
		if (!strncmp(args[i], "plugins.", strlen("plugins.")) ||
		    !strncmp(args[i], "sweep.", strlen("sweep."))) {
			fprintf(stderr,
				"iommulab verify: --set %s: sweep.* and plugins.* are not for "
				"verify: it runs its own grid on %s alone\n",
				args[i], d->name);
			goto out;
		}
		if (!(sets[i] = set_spelling(args[i], d)))
			goto out;
	}
	s = scenario_load(path, (const char *const *)sets, n_sets, &pl, &diags);
	/* A valid --set of a key each grid point sets would be overwritten: refuse it. */
	for (size_t i = 0; s && i < n_sets; i++) {
		const char *why = grid_key(args[i]);

		if (why) {
			fprintf(stderr,
				"iommulab verify: --set %s: not for verify, which sets it "
				"per configuration: %s\n",
				args[i], why);
			scenario_free(s);
			s = NULL;
		}
	}
	if (!s) {
		if (diags.n)
			cli_print_diags(&diags, "iommulab verify: ");
	} else if (s->n_axes || s->n_cmdq + s->n_iova != 1) {
		fprintf(stderr,
			"iommulab verify: --set sweep.* and plugins.* are not for verify: "
			"it runs its own grid on %s alone\n",
			d->name);
		scenario_free(s);
		s = NULL;
	}
out:
	if (fd >= 0)
		unlink(path);
	for (size_t i = 0; sets && i < n_sets; i++)
		free(sets[i]);
	free(sets);
	diag_clear(&diags);
	return s;
}

/*
 * Noise, not a verdict: a native trial that failed only by running out of time (no_deadlock,
 * or its plugin's own poll timeout reported as sync_complete's -ETIMEDOUT) while its threads
 * were starved: together they ran (getrusage of its process: user + system time of all its
 * threads) less than NOISE_RUN_SHARE of wall time x its CPUs. A trial's CPUs spin, waiting
 * included, so alone on its cores a trial runs nearly all the time, deadlocked or not; beside
 * busy processes the kernel shares the cores out and a preempted lock holder stalls everyone.
 * Such a trial is re-run up to NOISE_RERUNS times; if every run stays starved it is
 * inconclusive, never a failure. The sim's virtual time is immune to the host's load.
 */
#define NOISE_RUN_SHARE 0.5
#define NOISE_RERUNS	2

static bool timed_out_only(const struct oracle_report *o)
{
	bool timed_out = false;

	for (uint32_t i = 0; i < o->n_checks; i++) {
		const struct oracle_check *k = &o->checks[i];

		if (k->pass || k->unchecked)
			continue;
		if (!strcmp(k->name, "no_deadlock") ||
		    (!strcmp(k->name, "sync_complete") && strstr(k->detail, "returned -110")))
			timed_out = true;
		else
			return false;
	}
	return timed_out;
}

static bool noisy(const struct verify_noise *nz)
{
	return nz->cpu_s < NOISE_RUN_SHARE * nz->wall_s * (nz->cpus ? nz->cpus : 1);
}

static int record(struct verdict *v, size_t nv, const struct oracle_report *o, const char *where,
		  bool sim, bool inconclusive, bool perturbed)
{
	for (uint32_t i = 0; i < o->n_checks; i++)
		for (size_t k = 0; k < nv; k++) {
			const struct oracle_check *c = &o->checks[i];
			char *line, **fails;

			if (strcmp(v[k].name, c->name))
				continue;
			v[k].runs[sim]++;
			/* Unchecked first: a check the run could not judge (its process crashed
			 * or was killed) also reads as not failed. */
			if (c->unchecked) {
				v[k].unchecked[sim]++;
				continue;
			}
			if (c->pass)
				continue;
			if (inconclusive) {
				v[k].inconclusive[sim]++;
				continue;
			}
			v[k].failed[sim]++;
			v[k].perturbed_fails += perturbed;
			fails = realloc(v[k].fails, (v[k].n_fails + 1) * sizeof(*fails));
			if (!fails || asprintf(&line, "[%s] %s", where, c->detail) < 0) {
				if (fails)
					v[k].fails = fails;
				return -ENOMEM;
			}
			v[k].fails = fails;
			v[k].fails[v[k].n_fails++] = line;
		}
	return 0;
}

/* Whether a check failed in o (not merely unchecked or passing). */
static bool failed_any(const struct oracle_report *o)
{
	for (uint32_t i = 0; i < o->n_checks; i++)
		if (!o->checks[i].pass && !o->checks[i].unchecked)
			return true;
	return false;
}

/* One trial's report into the tally, and its dot on stderr. 0 or -ENOMEM. */
static int tally_add(struct verify_tally *t, const struct oracle_report *o, const char *where,
		     bool sim, bool inconclusive, bool perturbed, uint64_t seed)
{
	if (record(t->v, t->nv, o, where, sim, inconclusive, perturbed))
		return -ENOMEM;
	if (perturbed && !t->perturbed_failed && failed_any(o)) {
		t->perturbed_failed = true;
		t->failed_seed = seed;
	}
	*(sim ? &t->n_sim : &t->n_native) += 1;
	t->n_perturbed += perturbed;
	fprintf(stderr, ".");
	return 0;
}

/*
 * The oldest of the n queued sim trials (a ring of jobs from *head), once it has ended, into
 * the tally; the others are watched meanwhile. 0, or -errno once it is printed why not.
 */
static int fifo_take(struct queued_trial *fifo, size_t *n, size_t jobs, struct verify_tally *tally,
		     size_t *head)
{
	struct queued_trial *q = &fifo[*head];
	struct oracle_report o;
	struct verify_noise nz;
	char err[TRIAL_ERR_LEN];

	while (!trial_watch(&q->t, 100))
		for (size_t i = 1; i < *n; i++)
			trial_watch(&fifo[(*head + i) % jobs].t, 0);
	*head = (*head + 1) % jobs;
	(*n)--;
	if (trial_end(&q->t, &o, &nz, err, sizeof(err))) {
		fprintf(stderr, "iommulab verify: [%s] %s\n", q->where, err);
		return -EINVAL;
	}
	if (tally_add(tally, &o, q->where, true, false, q->perturbed, q->seed)) {
		fprintf(stderr, "iommulab verify: out of memory\n");
		return -ENOMEM;
	}
	return 0;
}

/* The failing configurations printed per check; the rest are counted. */
#define VERIFY_FAILS_SHOWN 16

/* "PASS 48/48" or "FAIL 3 of 48": one engine's column of the table. */
static void column(const struct verdict *v, int sim, char *buf, size_t len)
{
	if (!v->runs[sim])
		snprintf(buf, len, "-");
	else if (v->failed[sim])
		snprintf(buf, len, "FAIL %zu of %zu", v->failed[sim], v->runs[sim]);
	else if (v->inconclusive[sim])
		snprintf(buf, len, "INCONCL. %zu of %zu", v->inconclusive[sim], v->runs[sim]);
	else
		snprintf(buf, len, "pass %zu/%zu", v->runs[sim] - v->unchecked[sim], v->runs[sim]);
}

/* ---- lab_h_only: no atomic of the plugin's own in its sim build --------------------------- */

/* The static check's outcome, judged once per verify. */
struct lab_h_only {
	int rc;		  /* 0: a verdict (r.n_hits); else unchecked, r.unchecked says why */
	char file[4096];  /* the sim build judged */
	const char *base; /* its file name, for counterexamples */
	struct atomics_report r;
};

/*
 * Disassemble d's sim build (only it: natively lab.h is these very atomics). Without a sim
 * build there is nothing to judge: unchecked, never passed.
 */
static void lab_h_only_run(const struct lab_plugin *d, struct lab_h_only *l)
{
	char no_sim[512] = "";
	const struct lab_plugin *sim = plugin_sim_build(d, no_sim, sizeof(no_sim));
	Dl_info info;

	memset(l, 0, sizeof(*l));
	l->base = l->file;
	if (!sim || !dladdr(sim, &info) || !info.dli_fname) {
		snprintf(l->r.unchecked, sizeof(l->r.unchecked), "no sim build to disassemble: %s",
			 no_sim[0] ? no_sim : "its file is not known");
		l->rc = -ENOENT;
		return;
	}
	snprintf(l->file, sizeof(l->file), "%s", info.dli_fname);
	if (strrchr(l->file, '/'))
		l->base = strrchr(l->file, '/') + 1;
	l->rc = atomics_check_file(l->file, &l->r);
}

static bool lab_h_only_failed(const struct lab_h_only *l)
{
	return !l->rc && l->r.n_hits;
}

/* Its row in an iova plugin's table (a cmdq plugin's has the sim's verdicts too). */
static void lab_h_only_row(const struct lab_h_only *l)
{
	const int name_width = 28, verdict_width = 4;

	if (l->rc) {
		printf("  %-*s %-*s (static)  %s\n", name_width, ATOMICS_CHECK_NAME, verdict_width,
		       "UNCHECKED", l->r.unchecked);
		return;
	}
	printf("  %-*s %-*s (static: %s%zu functions of %s, %s)  every shared access goes "
	       "through lab.h: no atomic, barrier or spin hint of its own\n",
	       name_width, ATOMICS_CHECK_NAME, verdict_width, l->r.n_hits ? "FAIL" : "pass",
	       l->r.n_hits ? "" : "all ", l->r.n_funcs, l->base, atomics_arch_name(l->r.arch));
}

/* The static half of cmdq's lab_h_only row, after the sim's verdicts on the same row. */
static void lab_h_only_static(const struct lab_h_only *l, char *buf, size_t len)
{
	if (l->rc)
		snprintf(buf, len, "static: UNCHECKED, %s", l->r.unchecked);
	else if (l->r.n_hits)
		snprintf(buf, len, "static: FAIL, %zu instruction%s in %zu of %zu functions of %s",
			 l->r.n_hits, l->r.n_hits == 1 ? "" : "s", l->r.n_hit_funcs, l->r.n_funcs,
			 l->base);
	else
		snprintf(buf, len, "static: all %zu functions of %s (%s)", l->r.n_funcs, l->base,
			 atomics_arch_name(l->r.arch));
}

/* Every instruction found (the first ATOMICS_MAX_HITS), each a counterexample. */
static void lab_h_only_fails(const struct lab_h_only *l)
{
	char line[512];

	printf("  %s FAILED in %zu of %zu functions of %s (%zu instruction%s: accesses shared "
	       "memory outside lab.h, which the sim cannot see, order or interleave):\n",
	       ATOMICS_CHECK_NAME, l->r.n_hit_funcs, l->r.n_funcs, l->base, l->r.n_hits,
	       l->r.n_hits == 1 ? "" : "s");
	for (size_t i = 0; i < l->r.n_hits && i < ATOMICS_MAX_HITS; i++) {
		atomics_hit_format(&l->r.hits[i], line, sizeof(line));
		printf("      counterexample: %s: %s\n", l->base, line);
	}
	if (l->r.n_hits > ATOMICS_MAX_HITS)
		printf("      ... and %zu more\n", l->r.n_hits - ATOMICS_MAX_HITS);
}

/* An iova check that runs this long (a few seconds at most on a loaded 2-core host) hangs. */
#define IOVA_CHECK_LIMIT_MS 120000

/* What an iova check's child hands back: the result, written as the check goes. */
struct iova_child_out {
	struct iova_check_result res;
	uint32_t done; /* atomic */
};

/*
 * Run one iova check in a child process, as run_isolated() does a cmdq trial: a plugin that
 * crashes (a double free at teardown, a wild write) or hangs costs that check only, as a FAIL
 * that says how its process ended, after the counterexample the check had found, if any.
 * Without a process to run it in, the check runs here.
 */
static void run_iova_isolated(const struct iova_check *chk, const struct lab_plugin *d,
			      const void *pcfg, struct iova_check_result *res)
{
	struct iova_child_out *out =
		mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	FILE *errf = tmpfile();
	uint64_t start = mono_ms();
	bool killed = false;
	int status = 0, hup = -1;
	pid_t pid = -1;

	if (out != MAP_FAILED && errf)
		pid = fork_child(errf, &hup);
	if (pid < 0) {
		iova_check_run(chk, d, pcfg, res);
		goto out;
	}
	if (!pid) {
		iova_check_run(chk, d, pcfg, &out->res);
		__atomic_store_n(&out->done, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	while (child_wait(pid, hup, 100, &status, NULL) == 0) {
		if (!killed && mono_ms() - start > IOVA_CHECK_LIMIT_MS) {
			killed = true;
			kill(pid, SIGKILL);
		}
	}
	*res = out->res;
	if (!killed && WIFEXITED(status) && !WEXITSTATUS(status) &&
	    __atomic_load_n(&out->done, __ATOMIC_ACQUIRE))
		goto out;

	char why[256], tail[200];

	util_last_line(errf, tail, sizeof(tail));
	if (killed)
		snprintf(why, sizeof(why),
			 "the check did not end within %.0f s (the plugin hangs); killed",
			 IOVA_CHECK_LIMIT_MS / 1000.0);
	else
		describe_end("check", status, tail, why, sizeof(why));
	if (res->verdict == IOVA_CHECK_FAIL) {
		size_t used = strlen(res->detail);

		snprintf(res->detail + used, sizeof(res->detail) - used, "; then %s", why);
	} else {
		res->verdict = IOVA_CHECK_FAIL;
		snprintf(res->detail, sizeof(res->detail), "%s", why);
	}
out:
	if (hup >= 0)
		close(hup);
	if (errf)
		fclose(errf);
	if (out != MAP_FAILED)
		munmap(out, sizeof(*out));
}

/* Every iova check on d with config pcfg; EXIT_OK only if none failed (skips are fine). */
static int verify_iova(const struct loaded_plugin *lp, const void *pcfg)
{
	const struct lab_plugin *d = lp->desc;
	const struct iova_check *chk;
	size_t n, failed = 0, skipped = 0;
	struct lab_h_only lho;

	printf("verify %s (%s %s, %s)\n", lp->path, d->name, d->version, d->summary);
	lab_h_only_run(d, &lho);
	chk = iova_checks(&n);
	for (size_t i = 0; i < n; i++) {
		struct iova_check_result res;

		run_iova_isolated(&chk[i], d, pcfg, &res);
		printf("  %-28s %s  (%s)\n", chk[i].name, iova_check_verdict_name(res.verdict),
		       chk[i].summary);
		if (res.verdict == IOVA_CHECK_FAIL) {
			printf("      first counterexample: %s\n", res.detail);
			failed++;
		} else if (res.verdict == IOVA_CHECK_SKIP) {
			printf("      skipped: %s\n", res.detail);
			skipped++;
		}
	}
	lab_h_only_row(&lho);
	if (lab_h_only_failed(&lho)) {
		lab_h_only_fails(&lho);
		failed++;
	}
	if (failed)
		printf("%zu of %zu checks FAILED\n", failed, n + 1);
	else
		printf("all checks passed (%zu skipped as not applicable)%s\n", skipped,
		       lho.rc ? "; " ATOMICS_CHECK_NAME " NOT checked" : "");
	return failed ? EXIT_TRIALS_FAILED : EXIT_OK;
}

int cmd_verify(int argc, char **argv, struct cli_common *c)
{
	struct plugin_registry reg = { 0 };
	struct diag_list diags = { 0 };
	const struct loaded_plugin *lp = NULL;
	struct verdict v[ORACLE_MAX_CHECKS] = { 0 };
	const char *target = NULL;
	char twin[4096];
	void *pcfg = NULL;
	struct scenario_cfg base = { 0 };
	struct scenario *s = NULL;
	struct cli_parser p;
	const char **sets = NULL;
	size_t n_sets = 0;
	bool seed_given = false;
	uint64_t seed = 0;
	int only_engine = -1; /* --engine: enum engine_kind, or -1 for both parts */
	int o, status = EXIT_USAGE;
	unsigned jobs = 0; /* -j: 0 for the online CPUs */
	struct queued_trial *fifo = NULL;
	size_t n_fifo = 0, head = 0;
	struct verify_tally tally = { .v = v };

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0) {
		if (o == VERIFY_OPT_SET && cli_push(&sets, &n_sets, optarg))
			goto out;
		if (o == VERIFY_OPT_SEED) {
			char *end;

			errno = 0;
			seed = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				cli_usage_error(c->cmd,
						"--seed %s: not a seed (a number, as a "
						"counterexample's seed=N prints it)",
						optarg);
				goto out;
			}
			seed_given = true;
		}
		if (o == VERIFY_OPT_JOBS && cli_parse_jobs(optarg, &jobs)) {
			cli_usage_error(c->cmd, "-j wants a number of jobs from 1 to %d, not '%s'",
					ISOLATE_MAX_JOBS, optarg);
			goto out;
		}
		if (o == VERIFY_OPT_ENGINE) {
			if (!strcmp(optarg, "native")) {
				only_engine = ENGINE_NATIVE;
			} else if (!strcmp(optarg, "sim")) {
				only_engine = ENGINE_SIM;
			} else {
				cli_usage_error(c->cmd,
						"--engine %s: not an engine (native or sim)",
						optarg);
				goto out;
			}
		}
	}
	if (o == CLI_OPT_EXIT) {
		status = p.status;
		goto out;
	}
	if (optind == argc) {
		cli_usage_error(c->cmd, "no plugin given");
		goto out;
	}
	if (optind + 1 < argc) {
		cli_usage_error(c->cmd, "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	target = argv[optind];
	/*
	 * X.sim.so names the plugin as its sim build: verify loads its native twin X.so, whose
	 * sim part then runs X.sim.so, so both engines are judged either way it is named.
	 */
	size_t tlen = strlen(target);
	if (tlen > strlen(".sim.so") && !strcmp(target + tlen - strlen(".sim.so"), ".sim.so")) {
		snprintf(twin, sizeof(twin), "%.*s.so", (int)(tlen - strlen(".sim.so")), target);
		if (access(twin, R_OK)) {
			fprintf(stderr,
				"iommulab verify: %s is a sim build; its native twin %s is needed "
				"beside it (%s)\n",
				target, twin, strerror(errno));
			goto out;
		}
		target = twin;
	}
	if (strstr(target, ".so")) {
		if (registry_add_file(&reg, target, &diags)) {
			cli_print_diags(&diags, "iommulab verify: ");
			goto out;
		}
		lp = &reg.v[0];
	} else {
		const char *why;
		cli_load_plugins(c, &reg, &diags);
		lp = registry_find(&reg, target, &why);
		if (!lp) {
			fprintf(stderr, "iommulab verify: no plugin '%s'%s%s\n", target,
				why ? ": " : "", why ? why : "");
			goto out;
		}
	}
	const struct lab_plugin *d = lp->desc;
	if (d->kind != LAB_KIND_CMDQ && d->kind != LAB_KIND_IOVA) {
		fprintf(stderr,
			"iommulab verify: %s is a plugin of kind %s; verify checks cmdq and "
			"iova plugins\n",
			d->name, plugin_kind_name(d->kind));
		goto out;
	}
	/* null returns at once without issuing anything: the harness baseline, not a strategy. */
	if (d->kind == LAB_KIND_CMDQ && !strcmp(d->name, "null")) {
		printf("verify %s: skipped: null is the harness baseline (it issues nothing), not "
		       "a "
		       "correct strategy\n",
		       lp->path);
		status = EXIT_OK;
		goto out;
	}
	s = load_base(d, sets, n_sets);
	if (!s)
		goto out;
	if (scenario_cfg_copy(&base, &s->base)) {
		fprintf(stderr, "iommulab verify: out of memory\n");
		goto out;
	}
	pcfg = s->n_cmdq ? s->cmdq[0].config : s->iova[0].config;
	/* The counter's rate, measured here once: every trial's child inherits it. */
	struct lab_clock clk;
	clock_setup(&clk, 0);

	if (d->kind == LAB_KIND_IOVA) {
		if (only_engine >= 0) {
			cli_usage_error(c->cmd,
					"--engine: %s is an iova plugin, whose checks run on no "
					"engine (drop --engine)",
					d->name);
			goto out;
		}
		status = verify_iova(lp, pcfg);
		goto out;
	}
	printf("verify %s (%s %s, %s)\n", lp->path, d->name, d->version, d->summary);
	size_t n_points, nv, n_var, n_reruns = 0;
	const struct cmdq_check_point *grid = cmdq_check_grid(&n_points);
	const char *const *names = cmdq_check_names(&nv);
	tally.nv = nv;
	if (!jobs)
		jobs = native_online_cpus() ? native_online_cpus() : 1;
	struct cmdq_check_variant var[CMDQ_CHECK_MAX_VARIANTS];
	char given[CMDQ_CHECK_SET_LEN * 4] = "";
	n_var = cmdq_check_variants(d, pcfg, var, CMDQ_CHECK_MAX_VARIANTS);
	/* The base's values by name: a counterexample says what every parameter was. */
	for (uint32_t i = 0; i < d->n_params; i++) {
		char val[CMDQ_CHECK_SET_LEN];
		size_t len = strlen(given);

		if (!param_format(&d->params[i], pcfg, val, sizeof(val)))
			snprintf(given + len, sizeof(given) - len, "%s%s=%s", len ? " " : "",
				 d->params[i].key, val);
	}
	for (size_t k = 0; k < nv; k++)
		v[k] = (struct verdict){ .name = names[k] };
	/* Static, so once whatever --engine and --seed: the grid's trials cannot see it. */
	struct lab_h_only lho;
	lab_h_only_run(d, &lho);
	/* Without its .sim.so twin the sim part cannot run: say so, never pass it silently. */
	char no_sim[512] = "";
	bool have_sim = plugin_sim_build(d, no_sim, sizeof(no_sim)) != NULL;
	if (only_engine == ENGINE_NATIVE)
		printf("  the sim part is NOT run: --engine native\n");
	else if (!have_sim)
		printf("  the sim part is NOT run: %s\n", no_sim[0] ? no_sim : "no sim build");
	if (only_engine == ENGINE_SIM) {
		if (!have_sim) {
			fprintf(stderr,
				"iommulab verify: --engine sim, but %s has no sim build to run "
				"(%s)\n",
				d->name, no_sim[0] ? no_sim : "no sim build");
			goto out;
		}
		printf("  the native part is NOT run: --engine sim\n");
	}
	/*
	 * Sim trials run up to jobs at a time, each in its own process (the sim is one host
	 * thread and deterministic: running beside another changes nothing it computes); their
	 * verdicts are taken in the grid's order, so the output is the same whatever -j. A native
	 * trial measures real concurrency: it starts only once nothing else runs, and runs alone.
	 */
	if (!(fifo = calloc(jobs, sizeof(*fifo)))) {
		fprintf(stderr, "iommulab verify: out of memory\n");
		goto out;
	}
	for (size_t j = 0; j < n_var; j++) {
		const char *vals = j ? var[j].set : given[0] ? given : "(no parameters)";
		char err[256];
		void *vcfg = cmdq_check_config(d, pcfg, &var[j], err, sizeof(err));

		if (!vcfg) {
			fprintf(stderr, "iommulab verify: %s %s: %s\n", d->name, var[j].set, err);
			goto out;
		}
		for (size_t i = 0; i < n_points; i++) {
			bool sim = grid[i].engine == ENGINE_SIM;
			/*
			 * A sim point runs unperturbed, then under each of its seeds' stalls
			 * (--seed N: every sim point under N's alone, replaying a counterexample).
			 */
			size_t n_runs = sim && seed_given ? 1 : 1 + cmdq_check_seeds(&grid[i], j);

			if (!cmdq_check_runs(&grid[i], j) || (sim && !have_sim) ||
			    (only_engine >= 0 && grid[i].engine != only_engine))
				continue;
			for (size_t k = 0; k < n_runs; k++) {
				struct scenario_cfg cfg = base;
				struct oracle_report o;
				char desc[160];
				bool perturbed = sim && (seed_given || k);

				/* A native trial runs alone; a sim trial waits for a free job. */
				while (n_fifo && (!sim || n_fifo == jobs))
					if (fifo_take(fifo, &n_fifo, jobs, &tally, &head))
						goto out_fifo;
				cmdq_check_apply(&grid[i], &cfg);
				if (perturbed)
					cmdq_check_perturb(&cfg, seed_given ? seed : k,
							   base.machine.perturb_ns);
				else
					cfg.machine.perturb_ns = 0;
				cmdq_check_describe(&cfg, desc, sizeof(desc));
				/* Which parameter values it ran with: a counterexample replays. */
				char where[VERIFY_WHERE_LEN];
				snprintf(where, sizeof(where), "%s %s %s", desc, d->name, vals);
				struct trial_request req = { .cfg = &cfg,
							     .cmdq = d,
							     .cmdq_config = vcfg,
							     .ops_per_cpu = grid[i].ops_per_cpu,
							     .oracle = true };
				struct verify_noise nz;
				char err[TRIAL_ERR_LEN];
				if (sim) {
					struct queued_trial *q = &fifo[(head + n_fifo) % jobs];

					memcpy(q->where, where, sizeof(q->where));
					q->perturbed = perturbed;
					q->seed = cfg.scenario.seed;
					if (trial_start(&q->t, &req, err, sizeof(err))) {
						fprintf(stderr, "iommulab verify: [%s] %s\n",
							q->where, err);
						cmdq_check_config_free(d, vcfg);
						goto out_fifo;
					}
					n_fifo++;
					continue;
				}
				if (run_isolated(&req, &o, &nz, err, sizeof(err))) {
					fprintf(stderr, "iommulab verify: [%s] %s\n", where, err);
					cmdq_check_config_free(d, vcfg);
					goto out;
				}
				/* A trial that timed out while preempted: run it again (see
				 * noisy()). */
				for (int r = 0;
				     r < NOISE_RERUNS && timed_out_only(&o) && noisy(&nz); r++) {
					if (run_isolated(&req, &o, &nz, err, sizeof(err))) {
						fprintf(stderr, "iommulab verify: [%s] %s\n", where,
							err);
						cmdq_check_config_free(d, vcfg);
						goto out;
					}
					n_reruns++;
				}
				bool inconclusive = timed_out_only(&o) && noisy(&nz);
				if (tally_add(&tally, &o, where, false, inconclusive, false, 0))
					goto out_nomem;
			}
		}
		/* Its trials' processes were forked with vcfg in them: the parent's is done. */
		cmdq_check_config_free(d, vcfg);
	}
	while (n_fifo)
		if (fifo_take(fifo, &n_fifo, jobs, &tally, &head))
			goto out_fifo;
	fprintf(stderr, "\n");
	printf("  %zu configurations: %zu native, %zu on the sim", tally.n_native + tally.n_sim,
	       tally.n_native, tally.n_sim);
	if (tally.n_sim)
		printf(" (%zu of them under seeded schedule perturbation, perturb_ns=%g, %s)",
		       tally.n_perturbed,
		       base.machine.perturb_ns > 0 ? base.machine.perturb_ns
						   : CMDQ_CHECK_PERTURB_NS,
		       seed_given ? "--seed's alone"
				  : "4 and 16 CPUs: seeds 1-" CMDQ_CHECK_SEEDS_STR
				    " for the parameters as given, seed 1 for each varied one");
	printf("; %zu parameter settings:", n_var);
	for (size_t j = 0; j < n_var; j++)
		printf("%s%s", j ? ", " : " ",
		       j	  ? var[j].set
		       : given[0] ? given
				  : "(no parameters)");
	printf("\n");
	if (n_reruns)
		printf("  %zu trials re-run: they timed out while preempted (noise)\n", n_reruns);
	status = EXIT_OK;
	bool any_inconclusive = false;
	for (size_t k = 0; k < nv; k++) {
		size_t runs = v[k].runs[0] + v[k].runs[1];
		/* lab_h_only: what the sim saw the plugin do, and its sim build disassembled. */
		bool lab_h = !strcmp(v[k].name, ATOMICS_CHECK_NAME);
		bool failed = v[k].n_fails > 0 || (lab_h && lab_h_only_failed(&lho));
		bool inconcl = !failed && v[k].inconclusive[0] + v[k].inconclusive[1];
		/* No run judged it (none ran, or each one's process was lost) and, for
		 * lab_h_only, no sim build was there to disassemble: never passed. */
		size_t judged = runs - v[k].unchecked[0] - v[k].unchecked[1];
		bool unchecked = !failed && !judged && (!lab_h || lho.rc);
		char nat[40], sim[40], stat[400] = "";

		column(&v[k], 0, nat, sizeof(nat));
		column(&v[k], 1, sim, sizeof(sim));
		if (lab_h)
			lab_h_only_static(&lho, stat, sizeof(stat));
		printf("  %-14s %-12s (%zu runs)  native: %-18s sim: %s%s%s\n", v[k].name,
		       failed	   ? "FAIL"
		       : unchecked ? "UNCHECKED"
		       : inconcl   ? "INCONCLUSIVE"
				   : "PASS",
		       runs, nat, sim, lab_h ? ", " : "", stat);
		if (failed)
			status = EXIT_TRIALS_FAILED;
		any_inconclusive |= inconcl;
	}
	for (size_t k = 0; k < nv; k++) {
		if (!v[k].n_fails)
			continue;
		printf("  %s FAILED in %zu configurations (%zu of them under seeded schedule "
		       "perturbation):\n",
		       v[k].name, v[k].n_fails, v[k].perturbed_fails);
		for (size_t f = 0; f < v[k].n_fails && f < VERIFY_FAILS_SHOWN; f++)
			printf("      counterexample: %s\n", v[k].fails[f]);
		if (v[k].n_fails > VERIFY_FAILS_SHOWN)
			printf("      ... and %zu more\n", v[k].n_fails - VERIFY_FAILS_SHOWN);
	}
	if (lab_h_only_failed(&lho))
		lab_h_only_fails(&lho);
	if (tally.perturbed_failed)
		printf("  replay a perturbed counterexample: iommulab verify %s --seed %llu (its "
		       "sim part under that seed's stalls only)\n",
		       lp->path, (unsigned long long)tally.failed_seed);
	if (status == EXIT_OK && any_inconclusive)
		status = EXIT_TRIALS_FAILED;
	printf("%s\n",
	       status != EXIT_OK && !any_inconclusive ? "some checks FAILED"
	       : status != EXIT_OK && any_inconclusive
		       ? "some checks FAILED or INCONCLUSIVE (timed out under other load: rerun on "
			 "a quieter machine)"
	       : lho.rc ? "all checks passed; " ATOMICS_CHECK_NAME " NOT checked (see above)"
			: "all checks passed");
	goto out;
out_nomem:
	fprintf(stderr, "iommulab verify: out of memory\n");
out_fifo:
	for (; n_fifo; n_fifo--, head = (head + 1) % jobs)
		trial_abandon(&fifo[head].t);
out:
	free(fifo);
	for (size_t k = 0; k < ORACLE_MAX_CHECKS; k++) {
		for (size_t f = 0; f < v[k].n_fails; f++)
			free(v[k].fails[f]);
		free(v[k].fails);
	}
	scenario_cfg_free(&base);
	scenario_free(s);
	free(sets);
	registry_free(&reg);
	diag_clear(&diags);
	return status;
}
