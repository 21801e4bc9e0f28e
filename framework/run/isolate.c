/* SPDX-License-Identifier: MIT */
/* isolate -- one trial per child process, several at once (see isolate.h). */
#include "run/isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/diag.h"

#define ARENA_SIZE (64 * 1024)

/* What crosses from the child: the result, and the strings it points to. */
struct shared_block {
	struct trial_result res;
	uint32_t done;			 /* the child finished trial_run and copied everything */
	struct engine_progress progress; /* the child's engine publishes here */
	size_t used;
	char arena[ARENA_SIZE];
};

/* The children in flight, by job slot: what a signal handler kills (isolate_kill_all). */
static volatile pid_t children[ISOLATE_MAX_JOBS];

struct isolate_job {
	pid_t pid;
	int slot; /* in children[] */
	struct shared_block *block;
	struct isolate_limits lim;
	uint64_t start, deadline;
	uint64_t seen_steps, seen_at; /* the child's progress, when it last moved */
	bool killed, stalled, ended;
	struct trial_result res;
	char *strings; /* the result's strings, moved out of the block when the child ended */
};

void isolate_kill_all(void)
{
	for (size_t i = 0; i < ISOLATE_MAX_JOBS; i++) {
		pid_t pid = children[i];
		if (pid > 0)
			kill(pid, SIGKILL);
	}
}

static const char *keep(struct shared_block *b, const char *s)
{
	size_t len;

	if (!s)
		return NULL;
	len = strlen(s) + 1;
	if (b->used + len > sizeof(b->arena))
		return "?";
	char *dst = b->arena + b->used;
	memcpy(dst, s, len);
	b->used += len;
	return dst;
}

/* Make every pointer of the result point into the shared block. */
static void keep_strings(struct shared_block *b)
{
	struct trial_result *r = &b->res;

	r->engine = keep(b, r->engine);
	r->device_mode = keep(b, r->device_mode);
	for (uint32_t i = 0; i < r->n_metrics; i++)
		r->metrics[i].name = keep(b, r->metrics[i].name);
	for (uint32_t i = 0; i < r->n_counters; i++)
		r->counters[i].name = keep(b, r->counters[i].name);
	for (uint32_t i = 0; i < r->n_phases; i++)
		r->phases[i].name = keep(b, r->phases[i].name);
}

/* The signal's name ("SIGSEGV"), for a message. */
static const char *signal_name(int sig)
{
	const char *name = util_signal_name(sig);

	return name ? name : "a signal";
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void child(const struct trial_request *req, struct shared_block *b)
{
	/* Ctrl-C is the parent's to handle: the trial in progress finishes or is killed. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	struct trial_request r = *req;
	r.progress = &b->progress;
	trial_run(&r, &b->res, NULL);
	keep_strings(b);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	_exit(0);
}

static int free_slot(void)
{
	for (int i = 0; i < ISOLATE_MAX_JOBS; i++)
		if (!children[i])
			return i;
	return -1;
}

int isolate_start(const struct trial_request *req, const struct trial_result *res,
		  const struct isolate_limits *lim, struct isolate_job **out)
{
	int slot = free_slot(), err;
	struct isolate_job *j;

	if (slot < 0)
		return -EAGAIN;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	void *p = mmap(NULL, sizeof(*j->block), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto free_job;
	}
	j->block = p;
	j->block->res = *res;
	j->res = *res;
	j->lim = *lim;
	j->slot = slot;
	fflush(NULL); /* nothing buffered may be written twice */
	j->pid = fork();
	if (j->pid < 0) {
		err = -errno;
		goto unmap;
	}
	if (j->pid == 0)
		child(req, j->block);
	children[slot] = j->pid;
	j->start = now_ms();
	j->deadline = lim->limit_ms ? j->start + lim->limit_ms : UINT64_MAX;
	j->seen_at = j->start;
	*out = j;
	return 0;
unmap:
	munmap(j->block, sizeof(*j->block));
free_job:
	free(j);
	return err;
}

static const char *moved(const char *s, const struct shared_block *b, char *to)
{
	uintptr_t p = (uintptr_t)s, base = (uintptr_t)b->arena;

	return p >= base && p < base + b->used ? to + (p - base) : s;
}

/* The child finished trial_run: take its result, with its strings out of the block. */
static void take_result(struct isolate_job *j)
{
	struct shared_block *b = j->block;
	struct trial_result *r = &j->res;

	*r = b->res;
	j->strings = malloc(b->used ? b->used : 1);
	if (!j->strings)
		return; /* the strings stay in the block, kept until the job is freed */
	memcpy(j->strings, b->arena, b->used);
	r->engine = moved(r->engine, b, j->strings);
	r->device_mode = moved(r->device_mode, b, j->strings);
	for (uint32_t i = 0; i < r->n_metrics; i++)
		r->metrics[i].name = moved(r->metrics[i].name, b, j->strings);
	for (uint32_t i = 0; i < r->n_counters; i++)
		r->counters[i].name = moved(r->counters[i].name, b, j->strings);
	for (uint32_t i = 0; i < r->n_phases; i++)
		r->phases[i].name = moved(r->phases[i].name, b, j->strings);
	munmap(b, sizeof(*b));
	j->block = NULL;
}

/* The child ended without a result: say how. */
static void failed_result(struct isolate_job *j, int status)
{
	struct trial_result *res = &j->res;
	uint64_t elapsed = now_ms() - j->start;

	res->status = TRIAL_FAILED;
	if (j->stalled)
		snprintf(res->error, sizeof(res->error),
			 "killed after %.1f s: the simulation made no progress for %.1f s of wall "
			 "time (its progress, published every few thousand lab.h operations, last "
			 "said %.3f ms of virtual time, %llu operations in): a plugin looping or "
			 "blocking (a sleep, a system call) without calling lab.h, where the "
			 "virtual watchdog cannot see it",
			 (double)elapsed / 1000.0, (double)j->lim.stall_ms / 1000.0,
			 (double)__atomic_load_n(&j->block->progress.virtual_ns, __ATOMIC_RELAXED) /
				 1e6,
			 (unsigned long long)j->seen_steps);
	else if (j->killed)
		snprintf(res->error, sizeof(res->error),
			 "killed after %.1f s: the trial outlived its duration, warm-up and "
			 "watchdog "
			 "(a plugin stuck where neither the watchdog nor a signal could unwind it)",
			 (double)j->lim.limit_ms / 1000.0);
	else if (WIFSIGNALED(status))
		snprintf(res->error, sizeof(res->error),
			 "crashed: %s (%s) in the trial's process; the plugin likely touched bad "
			 "memory or failed an assertion (run it alone under gdb or "
			 "-Db_sanitize=address)",
			 signal_name(WTERMSIG(status)), strsignal(WTERMSIG(status)));
	else
		snprintf(res->error, sizeof(res->error),
			 "the trial's process exited with status %d before finishing",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int isolate_poll(struct isolate_job *j, struct trial_result **res)
{
	int status = 0;

	if (j->ended)
		goto ended;
	pid_t w = waitpid(j->pid, &status, WNOHANG);
	if (w == j->pid || (w < 0 && errno != EINTR)) {
		children[j->slot] = 0;
		j->ended = true;
		if (__atomic_load_n(&j->block->done, __ATOMIC_ACQUIRE))
			take_result(j);
		else
			failed_result(j, status);
		goto ended;
	}
	uint64_t now = now_ms();
	uint64_t steps = __atomic_load_n(&j->block->progress.steps, __ATOMIC_RELAXED);
	if (steps != j->seen_steps) {
		j->seen_steps = steps;
		j->seen_at = now;
	}
	if (!j->killed && j->lim.stall_ms && now - j->seen_at > j->lim.stall_ms) {
		kill(j->pid, SIGKILL);
		j->killed = j->stalled = true;
	} else if (!j->killed && now > j->deadline) {
		kill(j->pid, SIGKILL);
		j->killed = true;
	}
	return 0;
ended:
	*res = &j->res;
	return 1;
}

void isolate_job_free(struct isolate_job *j)
{
	if (!j)
		return;
	if (!j->ended) {
		kill(j->pid, SIGKILL);
		while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
			;
		children[j->slot] = 0;
	}
	if (j->block)
		munmap(j->block, sizeof(*j->block));
	free(j->strings);
	free(j);
}

int isolate_trial(const struct trial_request *req, struct trial_result *res,
		  const struct isolate_limits *lim)
{
	/* The last result's strings live in its job: kept until the next call. */
	static struct isolate_job *last;
	struct trial_result *r;
	int rc;

	isolate_job_free(last);
	last = NULL;
	rc = isolate_start(req, res, lim, &last);
	if (rc)
		return rc;
	while (!isolate_poll(last, &r))
		usleep(2000);
	*res = *r;
	return 0;
}
