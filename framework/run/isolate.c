/* SPDX-License-Identifier: MIT */
/* isolate -- one trial per child process (see isolate.h). */
#include "run/isolate.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARENA_SIZE (64 * 1024)

/* What crosses from the child: the result, and the strings it points to. */
struct shared_block {
	struct trial_result res;
	uint32_t done;			 /* the child finished trial_run and copied everything */
	struct engine_progress progress; /* the child's engine publishes here */
	size_t used;
	char arena[ARENA_SIZE];
};

static volatile pid_t current_child;
/* One block for the whole run, reused by every trial: a result handed back stays valid
 * until the next isolate_trial() call. */
static struct shared_block *block;

int isolate_child_pid(void)
{
	return current_child;
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

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGABRT:
		return "SIGABRT";
	case SIGFPE:
		return "SIGFPE";
	case SIGILL:
		return "SIGILL";
	case SIGKILL:
		return "SIGKILL";
	default:
		return "a signal";
	}
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

int isolate_trial(const struct trial_request *req, struct trial_result *res,
		  const struct isolate_limits *lim)
{
	int status = 0;
	bool killed = false, stalled = false;
	uint64_t seen_steps = 0, seen_at;

	if (!block) {
		void *p = mmap(NULL, sizeof(*block), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		block = p;
	}
	struct shared_block *b = block;
	b->done = 0;
	b->used = 0;
	memset(&b->progress, 0, sizeof(b->progress));
	b->res = *res;
	fflush(NULL); /* nothing buffered may be written twice */
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(req, b);

	current_child = pid;
	uint64_t start = now_ms(), deadline = lim->limit_ms ? start + lim->limit_ms : UINT64_MAX;
	seen_at = start;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		uint64_t now = now_ms();
		uint64_t steps = __atomic_load_n(&b->progress.steps, __ATOMIC_RELAXED);
		if (steps != seen_steps) {
			seen_steps = steps;
			seen_at = now;
		}
		if (!killed && lim->stall_ms && now - seen_at > lim->stall_ms) {
			kill(pid, SIGKILL);
			killed = stalled = true;
		} else if (!killed && now > deadline) {
			kill(pid, SIGKILL);
			killed = true;
		}
		usleep(2000);
	}
	uint64_t elapsed = now_ms() - start;
	current_child = 0;

	if (__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)) {
		*res = b->res;
		return 0;
	}
	res->status = TRIAL_FAILED;
	if (stalled)
		snprintf(
		    res->error, sizeof(res->error),
		    "killed after %.1f s: the simulation made no progress for %.1f s of wall "
		    "time (stuck at %.3f ms of virtual time, %llu lab.h operations in): a plugin "
		    "looping without calling lab.h, where the virtual watchdog cannot see it",
		    (double)elapsed / 1000.0, (double)lim->stall_ms / 1000.0,
		    (double)__atomic_load_n(&b->progress.virtual_ns, __ATOMIC_RELAXED) / 1e6,
		    (unsigned long long)seen_steps);
	else if (killed)
		snprintf(
		    res->error, sizeof(res->error),
		    "killed after %.1f s: the trial outlived its duration, warm-up and watchdog "
		    "(a plugin stuck where neither the watchdog nor a signal could unwind it)",
		    (double)lim->limit_ms / 1000.0);
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
	return 0;
}
