/* SPDX-License-Identifier: MIT */
/* native -- real threads, real atomics (see native.h). */
#include "engine/native/native.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/cpu_loop.h"

/* RUN_LATE: the measured window's second half (engine/cpu_loop.h, the steady-state check). */
enum run_state { RUN_WARMUP = 0, RUN_MEASURE, RUN_LATE, RUN_STOP };

struct sched_mark {
	bool ok;
	uint64_t cpu_ns, wall_ns, invol, vol;
};

struct worker {
	pthread_t thread;
	bool started;
	struct native_run *run;
	struct lab_cpu *c;
	uint32_t host_cpu; /* the core it is pinned to */
	struct engine_cpu_result *res;
	uint64_t progress;  /* atomic: ops (and idle turns) completed; no clock read per op */
	uint64_t seen;	    /* supervisor only: progress when it last changed ... */
	uint64_t seen_at;   /* ... and when the supervisor saw it change; since then, ... */
	uint64_t off_ns;    /* ... the time one of the trial's threads was runnable but off its
			     * core (the rest, the watchdog's clock, is the time they had them) */
	uint64_t n_returns; /* the op's returns so far (written to progress) */
	uint32_t in_op;	    /* atomic */
	uint32_t timed_out; /* atomic: its op gave up with -ETIMEDOUT (a wall-clock poll limit) */
	uint32_t done;	    /* atomic */
	uint64_t t_measure, t_stop;
	struct sched_mark sched0; /* the thread's figures when measurement started */
} LAB_CACHE_ALIGNED;

/* A thread of the trial's process, for the watchdog's clock (open_task_clocks). */
struct task_clock {
	int fd;		 /* its /proc/self/task/TID/stat, open for the run: its state */
	clockid_t clock; /* its CPU clock */
	uint64_t cpu_ns; /* its CPU time at the last tick */
	bool primed;	 /* cpu_ns was read */
};

#define NATIVE_MAX_TASKS 1024

struct native_run {
	const struct engine_job *job;
	struct task_clock *tasks; /* every thread but the supervisor's (the CPUs, the device's) */
	uint32_t n_tasks;
	uint32_t ready;	 /* atomic: workers waiting for go */
	uint32_t go;	 /* atomic: the barrier start */
	uint32_t state;	 /* atomic enum run_state */
	uint32_t failed; /* atomic: an op returned an error */
	struct worker *workers;
};

uint32_t native_online_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return (uint32_t)CPU_COUNT(&set);
}

/* The i-th CPU this process may run on. */
static uint32_t nth_allowed_cpu(uint32_t i)
{
	cpu_set_t set;
	uint32_t n = native_online_cpus(), seen = 0;

	if (sched_getaffinity(0, sizeof(set), &set) || !n)
		return 0;
	i %= n;
	for (uint32_t cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (seen++ == i)
			return cpu;
	}
	return 0;
}

static void pin(uint32_t cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* Best effort: in a restricted container pinning may be refused; the run still counts. */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* What the host did to the calling thread so far: CPU time, wall time, context switches. */
static bool sched_mark(struct sched_mark *m)
{
	struct timespec cpu, wall;
	struct rusage ru;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) || clock_gettime(CLOCK_MONOTONIC, &wall) ||
	    getrusage(RUSAGE_THREAD, &ru))
		return m->ok = false;
	m->cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
	m->wall_ns = (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec;
	m->invol = (uint64_t)ru.ru_nivcsw;
	m->vol = (uint64_t)ru.ru_nvcsw;
	return m->ok = true;
}

/* The measured window's figures into the CPU's result (called by the worker at its end). */
static void sched_window(const struct worker *w)
{
	struct sched_mark end;
	struct engine_cpu_result *r = w->res;

	if (!w->sched0.ok || !sched_mark(&end))
		return;
	r->have_sched = true;
	r->cpu_ns = end.cpu_ns - w->sched0.cpu_ns;
	r->wall_ns = end.wall_ns - w->sched0.wall_ns;
	r->invol_switches = end.invol - w->sched0.invol;
	r->vol_switches = end.vol - w->sched0.vol;
}

/* ---- the CPU loop's hooks (engine/cpu_loop.h): the run's state word, the progress count -- */

static enum engine_phase w_phase(void *ctx)
{
	struct worker *w = ctx;

	switch (__atomic_load_n(&w->run->state, __ATOMIC_ACQUIRE)) {
	case RUN_WARMUP:
		return ENGINE_WARMUP;
	case RUN_MEASURE:
		return ENGINE_MEASURE;
	case RUN_LATE:
		return ENGINE_MEASURE_LATE;
	default:
		return ENGINE_STOP;
	}
}

static void w_measure_started(void *ctx)
{
	struct worker *w = ctx;

	w->t_measure = lab_now(w->c);
	sched_mark(&w->sched0);
}

static void w_before_op(void *ctx)
{
	__atomic_store_n(&((struct worker *)ctx)->in_op, 1, __ATOMIC_RELAXED);
}

/* The watchdog counts returns instead of reading the clock after each op. */
static void w_after_op(void *ctx, int rc)
{
	struct worker *w = ctx;

	if (rc == -ETIMEDOUT)
		__atomic_store_n(&w->timed_out, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->in_op, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->progress, ++w->n_returns, __ATOMIC_RELAXED);
}

static void w_idle(void *ctx)
{
	(void)ctx; /* the op returns to the loop at once: a busy poll */
}

static void w_failed(void *ctx)
{
	__atomic_store_n(&((struct worker *)ctx)->run->failed, 1, __ATOMIC_RELAXED);
}

static void w_done(void *ctx)
{
	(void)ctx;
}

static const struct engine_cpu_hooks native_hooks = {
	.phase = w_phase,
	.measure_started = w_measure_started,
	.before_op = w_before_op,
	.after_op = w_after_op,
	.idle = w_idle,
	.failed = w_failed,
	.done = w_done,
};

static void worker_loop(struct worker *w)
{
	w->t_measure = lab_now(w->c);
	engine_cpu_loop(w->run->job, w->c, w->res, &native_hooks, w);
	w->t_stop = lab_now(w->c);
	sched_window(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	sigjmp_buf bail;

	pin(w->host_cpu);
	host_thread_set_cpu(w->c);
	__atomic_add_fetch(&w->run->ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&w->run->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (sigsetjmp(bail, 1) == 0) {
		host_cpu_arm(w->c, &bail);
		worker_loop(w);
	} else {
		w->t_stop = lab_now(w->c); /* unwound by the watchdog */
	}
	host_cpu_disarm(w->c);
	host_thread_set_cpu(NULL);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static bool all_done(const struct native_run *run, uint32_t ncpus)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (!__atomic_load_n(&run->workers[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * The watchdog's clock is the time the trial could run, not the wall clock: a thread that was
 * runnable but off its core (the kernel ran something else there) cannot progress, and nor can
 * a CPU spinning on a lock its holder was preempted with. So a tick in which one of the trial's
 * threads lost time counts only what is left of it after the longest such loss. A thread's loss
 * in a tick is the tick less its CPU time (its thread CPU clock, exact to the call) unless it
 * was asleep when sampled (its state in /proc/self/task/TID/stat): a plugin blocked in the
 * kernel is its own doing. A thread whose clock cannot be read loses nothing (a wall clock).
 * With more busy threads than cores (oversubscribe = allow) the trial shares its cores with
 * itself, by the scenario's choice: the watchdog keeps the wall clock.
 */

/* Whether the thread is asleep or blocked (not runnable) now; false when it cannot be read. */
static bool task_asleep(int fd)
{
	char buf[512];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "TID (comm) STATE ...": comm may hold ')' itself, so the last one */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	return p[2] != 'R';
}

static void close_task_clocks(struct native_run *run)
{
	for (uint32_t i = 0; i < run->n_tasks; i++)
		close(run->tasks[i].fd);
	free(run->tasks);
	run->tasks = NULL;
	run->n_tasks = 0;
}

static void open_task_clocks(struct native_run *run)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return;
	run->tasks = calloc(NATIVE_MAX_TASKS, sizeof(*run->tasks));
	while (run->tasks && run->n_tasks < NATIVE_MAX_TASKS && (e = readdir(d))) {
		char path[64];
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0 || tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* The thread's CPU clock by its id: the kernel's CPUCLOCK_SCHED per-thread clock,
		 * what pthread_getcpuclockid() returns for a pthread_t. */
		struct task_clock *tc = &run->tasks[run->n_tasks++];
		tc->fd = fd;
		tc->clock = (clockid_t)((~(unsigned int)tid << 3) | 6u); /* unsigned: no UB */
	}
	closedir(d);
	uint32_t busy = 0; /* more than the cores: oversubscribed by the scenario */
	for (uint32_t i = 0; i < run->n_tasks; i++)
		busy += !task_asleep(run->tasks[i].fd);
	if (busy > native_online_cpus())
		close_task_clocks(run);
}

/*
 * The longest time any of the trial's threads lost to the host in a tick of tick_ns. The
 * clocks are read every tick (about 1.3 us a thread), as a stall's first tick may be long when
 * the supervisor itself waited for a core; a thread's state only while a CPU is stalled (no
 * progress since the last tick) and the thread fell behind: reading /proc costs about 12 us.
 */
static uint64_t task_clocks_lost(struct native_run *run, uint64_t tick_ns, bool stalled)
{
	uint64_t worst = 0;

	for (uint32_t i = 0; i < run->n_tasks; i++) {
		struct task_clock *tc = &run->tasks[i];
		struct timespec ts;

		if (clock_gettime(tc->clock, &ts)) {
			tc->primed = false; /* the thread has exited */
			continue;
		}
		uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		bool primed = tc->primed;
		uint64_t ran = primed && cpu > tc->cpu_ns ? cpu - tc->cpu_ns : 0;

		tc->cpu_ns = cpu;
		tc->primed = true;
		if (stalled && primed && tick_ns && ran < tick_ns && tick_ns - ran > worst &&
		    !task_asleep(tc->fd))
			worst = tick_ns - ran;
	}
	return worst;
}

/*
 * Each CPU's progress since the supervisor last looked: one that moved restarts its stall
 * (seen_at = now). Whether some CPU has not moved (stalled), the one case where the threads'
 * losses are worth reading.
 */
static bool note_progress(struct native_run *run, uint32_t ncpus, uint64_t now)
{
	bool stalled = false;

	for (uint32_t i = 0; i < ncpus; i++) {
		struct worker *w = &run->workers[i];
		uint64_t p = __atomic_load_n(&w->progress, __ATOMIC_RELAXED);

		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			continue;
		if (p != w->seen || !w->seen_at) {
			w->seen = p;
			w->seen_at = now;
			w->off_ns = 0;
		} else {
			stalled = true;
		}
	}
	return stalled;
}

/* Which way a CPU without progress for too long is reported, in the order the report
 * prefers (a hung CPU is what it is about). */
enum stall { STALL_NONE, STALL_SPOILED, STALL_HUNG };

/*
 * How long the host may hold the trial off its cores before the trial is given up as the
 * host's doing: the watchdog's wall clock runs at most this many periods without progress.
 */
#define NATIVE_STALL_WALL_PERIODS 2

/*
 * The CPU that has gone longest without completing an op, if too long, and why: hung (the
 * plugin's doing) when the trial had its cores for a watchdog period without that CPU
 * progressing; spoiled (the host's doing) when NATIVE_STALL_WALL_PERIODS periods of wall clock
 * passed without it but the host held the trial off its cores for much of them.
 */
static enum stall find_stall(struct native_run *run, uint32_t ncpus, uint64_t now, uint64_t tick_ns,
			     uint64_t lost_ns, uint64_t limit, int *which)
{
	enum stall kind = STALL_NONE;
	uint64_t worst_age = 0;

	for (uint32_t i = 0; i < ncpus; i++) {
		struct worker *w = &run->workers[i];
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) || w->seen_at == now)
			continue; /* finished, or it moved this tick (note_progress) */
		w->off_ns += lost_ns < tick_ns ? lost_ns : tick_ns;
		uint64_t age = now - w->seen_at;
		enum stall k = age - w->off_ns > limit			 ? STALL_HUNG
			       : age > NATIVE_STALL_WALL_PERIODS * limit ? STALL_SPOILED
									 : STALL_NONE;
		if (k > kind || (k != STALL_NONE && k == kind && age > worst_age)) {
			kind = k;
			worst_age = age;
			*which = (int)i;
		}
	}
	return kind;
}

static void describe_stall(struct native_run *run, uint32_t ncpus, uint64_t now, enum stall kind,
			   int which, char *buf, size_t len)
{
	const char *const *phase_names = run->job->phase_names;
	uint32_t n_phase_names = run->job->n_phases;
	const struct worker *stuck = &run->workers[which];
	double watchdog_ms = (double)run->job->watchdog_ns / 1e6;
	size_t off = 0;

	if (kind == STALL_SPOILED)
		off += (size_t)snprintf(
			buf + off, len - off,
			"incomplete: cpu%d made no progress for %.0f ms, but the host held the "
			"trial's threads off their cores for %.0f ms of it (a thread runnable and "
			"waiting for a core): given up as the host's doing, not the plugin's "
			"(watchdog %.0f ms of the trial running); give it cores to itself:",
			which, (double)(now - stuck->seen_at) / 1e6, (double)stuck->off_ns / 1e6,
			watchdog_ms);
	else
		off += (size_t)snprintf(buf + off, len - off,
					"no progress (watchdog %.0f ms):", watchdog_ms);
	for (uint32_t i = 0; i < ncpus && off < len; i++) {
		const struct worker *w = &run->workers[i];
		uint32_t ph = __atomic_load_n(&w->c->phase, __ATOMIC_RELAXED);
		const char *name = ph < n_phase_names ? phase_names[ph] : "?";
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
			off += (size_t)snprintf(buf + off, len - off, " cpu%u finished;", i);
			continue;
		}
		off += (size_t)snprintf(
			buf + off, len - off, " cpu%u %s phase '%s' for %.0f ms", i,
			__atomic_load_n(&w->in_op, __ATOMIC_RELAXED) ? "in op," : "between ops,",
			name, (double)(now - w->seen_at) / 1e6);
		/* A hung CPU's wait, where the host also took some of it away. */
		if (kind == STALL_HUNG && w->off_ns >= 1000000 && off < len)
			off += (size_t)snprintf(buf + off, len - off,
						" (the trial off its cores %.0f ms of it)",
						(double)w->off_ns / 1e6);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, ";");
	}
	if (off > 0 && off < len && buf[off - 1] == ';')
		buf[off - 1] = '\0';
}

/*
 * An op that gave up by the wall clock (-ETIMEDOUT: a plugin's poll limit, the kernel's 1 s
 * CMD_SYNC timeout) while the host held the trial off its cores for half of its wait or more
 * is the host's doing: its wait is the time since its CPU last progressed, as find_stall
 * accounted it up to the last tick.
 */
static void judge_timeout(struct native_run *run, uint32_t ncpus, uint64_t now,
			  struct engine_result *res)
{
	for (uint32_t i = 0; i < ncpus; i++) {
		const struct worker *w = &run->workers[i];
		uint64_t age = w->seen_at && now > w->seen_at ? now - w->seen_at : 0;

		if (!__atomic_load_n(&w->timed_out, __ATOMIC_RELAXED) || !age ||
		    2 * w->off_ns < age)
			continue;
		res->spoiled = true;
		snprintf(
			res->why, sizeof(res->why),
			"incomplete: cpu%u's op gave up by the wall clock (-ETIMEDOUT) after about "
			"%.0f ms, but the host held the trial's threads off their cores for "
			"%.0f ms of it (a thread runnable and waiting for a core): the host's "
			"doing, not the plugin's; give it cores to itself",
			i, (double)age / 1e6, (double)w->off_ns / 1e6);
		return;
	}
}

/* Unwind every CPU: spinning ones see the abort in the spin hook, others get a signal. */
static void abandon(struct native_run *run, uint32_t ncpus)
{
	host_env_abort(run->job->env);
	for (int tries = 0; tries < 200 && !all_done(run, ncpus); tries++) {
		sleep_ns(5000000);
		for (uint32_t i = 0; i < ncpus; i++)
			if (!__atomic_load_n(&run->workers[i].done, __ATOMIC_ACQUIRE))
				host_bail_thread((unsigned long)run->workers[i].thread);
	}
}

static void supervise(struct native_run *run, uint32_t ncpus, struct engine_result *res)
{
	const struct engine_job *job = run->job;
	const struct lab_clock *clk = host_env_clock(job->env);
	uint64_t start = lab_clock_ns(clk);
	uint64_t t_measure = start + (job->ops_per_cpu ? 0 : job->warmup_ns);
	uint64_t t_stop = t_measure + job->duration_ns;
	uint64_t t_late = t_measure + job->duration_ns / 2;
	uint64_t slice = 2000000; /* 2 ms: the watchdog's and the tick's resolution */
	uint64_t last;		  /* the previous tick */

	open_task_clocks(run);
	task_clocks_lost(run, 0, false); /* each thread's CPU time so far: the baseline */
	last = lab_clock_ns(clk);

	if (job->ops_per_cpu) {
		if (job->on_measure)
			job->on_measure(job->measure_arg);
		__atomic_store_n(&run->state, RUN_MEASURE, __ATOMIC_RELEASE);
	}
	for (;;) {
		uint64_t now = lab_clock_ns(clk);
		if (all_done(run, ncpus))
			break;
		if (__atomic_load_n(&run->failed, __ATOMIC_RELAXED) && !res->op_failed) {
			__atomic_store_n(&run->state, RUN_STOP, __ATOMIC_RELEASE);
			res->op_failed = true;
			judge_timeout(run, ncpus, now, res);
		}
		if (!job->ops_per_cpu) {
			uint32_t state = __atomic_load_n(&run->state, __ATOMIC_RELAXED);
			if (state == RUN_WARMUP && now >= t_measure) {
				if (job->on_measure)
					job->on_measure(job->measure_arg);
				__atomic_store_n(&run->state, RUN_MEASURE, __ATOMIC_RELEASE);
			} else if ((state == RUN_MEASURE || state == RUN_LATE) && now >= t_stop) {
				__atomic_store_n(&run->state, RUN_STOP, __ATOMIC_RELEASE);
			} else if (state == RUN_MEASURE && now >= t_late) {
				__atomic_store_n(&run->state, RUN_LATE, __ATOMIC_RELEASE);
			}
		}
		uint64_t tick = now - last;
		uint64_t lost = task_clocks_lost(run, tick, note_progress(run, ncpus, now));
		int which = -1;
		enum stall kind = find_stall(run, ncpus, now, tick, lost, job->watchdog_ns, &which);
		last = now;
		if (kind != STALL_NONE) {
			res->hung = true;
			res->spoiled = kind == STALL_SPOILED;
			describe_stall(run, ncpus, now, kind, which, res->why, sizeof(res->why));
			__atomic_store_n(&run->state, RUN_STOP, __ATOMIC_RELEASE);
			abandon(run, ncpus);
			break;
		}
		sleep_ns(slice);
	}
	/* The last CPU may have failed and finished between two ticks. */
	if (__atomic_load_n(&run->failed, __ATOMIC_RELAXED) && !res->op_failed) {
		res->op_failed = true;
		judge_timeout(run, ncpus, lab_clock_ns(clk), res);
	}
	close_task_clocks(run);
}

static int native_run(const struct engine_job *job, struct engine_result *res)
{
	uint32_t ncpus = host_env_ncpus(job->env);
	struct native_run run = { .job = job };
	struct timespec h0, h1;
	bool leak = false;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	clock_gettime(CLOCK_MONOTONIC, &h0);
	run.workers = aligned_alloc(LAB_CACHE_LINE, sizeof(*run.workers) * ncpus);
	if (!run.workers || engine_result_alloc(res, ncpus, job->n_metrics)) {
		rc = -ENOMEM;
		goto out;
	}
	memset(run.workers, 0, sizeof(*run.workers) * ncpus);
	host_install_bail_signal();
	uint32_t started = 0;
	for (; started < ncpus; started++) {
		struct worker *w = &run.workers[started];
		w->run = &run;
		w->c = host_env_cpu(job->env, started);
		w->host_cpu = nth_allowed_cpu(started);
		w->res = &res->cpus[started];
		if (pthread_create(&w->thread, NULL, worker_main, w))
			break;
		w->started = true;
	}
	if (started < ncpus) {
		/* Let the started ones go straight to a stop. */
		__atomic_store_n(&run.state, RUN_STOP, __ATOMIC_RELEASE);
		rc = -EAGAIN;
		snprintf(res->why, sizeof(res->why), "cannot start %u threads: %s", ncpus,
			 strerror(-rc));
		for (uint32_t i = started; i < ncpus; i++)
			__atomic_store_n(&run.workers[i].done, 1, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&run.ready, __ATOMIC_ACQUIRE) < started)
		sched_yield();
	__atomic_store_n(&run.go, 1, __ATOMIC_RELEASE);
	if (!rc)
		supervise(&run, ncpus, res);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct worker *w = &run.workers[i];
		if (!w->started)
			continue;
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
			pthread_join(w->thread, NULL);
		} else {
			/* Truly stuck even for the signal: leave it (and its memory), report it. */
			pthread_detach(w->thread);
			leak = true;
			res->threads_left = true;
		}
		res->cpus[i].window_ns = w->res->window_open && w->t_stop > w->t_measure
						 ? w->t_stop - w->t_measure
						 : 0;
		double s = (double)res->cpus[i].window_ns / 1e9;
		if (s > res->measured_s)
			res->measured_s = s;
	}
out:
	if (!leak)
		free(run.workers);
	if (rc == -ENOMEM)
		snprintf(res->why, sizeof(res->why), "out of memory for %u CPUs", ncpus);
	clock_gettime(CLOCK_MONOTONIC, &h1);
	res->cost.host_s =
		(double)(h1.tv_sec - h0.tv_sec) + (double)(h1.tv_nsec - h0.tv_nsec) / 1e9;
	return rc;
}

/*
 * Native trials need the cores to themselves: more busy threads (CPUs, and the device's
 * thread) than online CPUs would measure the scheduler, unless the scenario allows it.
 */
static int native_prepare(struct engine_trial *t, char *err, size_t err_len)
{
	const struct scenario_cfg *cfg = t->cfg;
	uint32_t online = native_online_cpus();
	bool thread = cfg->smmu.device == DEVICE_THREAD && cfg->scenario.workload != WORKLOAD_IOVA;
	uint32_t busy = (uint32_t)cfg->scenario.cpus + thread;

	if (busy <= online)
		return 0;
	t->core_share = (double)online / busy;
	if (cfg->scenario.oversubscribe != OVERSUBSCRIBE_ALLOW) {
		snprintf(
			err, err_len,
			"%u busy threads (%llu CPUs%s) on %u online CPUs would measure the "
			"scheduler, not the algorithm: lower [scenario] cpus, use engine = sim, or "
			"set [scenario] oversubscribe = allow",
			busy, (unsigned long long)cfg->scenario.cpus,
			thread ? " + the device thread" : "", online);
		return -EINVAL;
	}
	return 0;
}

const struct engine_ops native_engine = {
	.name = "native",
	.kind = ENGINE_NATIVE,
	.binding = ENGINE_BINDING_NATIVE,
	.exclusive = true, /* pinned threads measuring real time: other trials would skew it */
	.prepare = native_prepare,
	.run = native_run,
};
