/* SPDX-License-Identifier: MIT */
/* host -- the native services behind lab.h (see host.h). */
#include "engine/host.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "engine/clock.h"

/* Per-CPU host data, one cache line apart from its neighbours. */
struct host_cpu {
	struct lab_cpu cpu;
	sigjmp_buf *bail;
	struct host_env *env;
} LAB_CACHE_ALIGNED;

struct host_env {
	struct lab_host host;
	struct lab_clock clock;
	uint32_t ncpus;
	uint32_t n_counters;
	struct host_cpu *cpus;
	uint64_t *counters; /* ncpus rows of counters_stride slots */
	uint32_t counters_stride;
	void (*idle)(struct lab_cpu *c, void *arg);
	void *idle_arg;
	uint64_t fault_every;
	uint64_t alloc_seq;  /* atomic */
	uint64_t live_allocs; /* atomic */
	uint64_t live_bytes;  /* atomic */
	uint32_t aborted;     /* atomic */
};

/* Each allocation carries its size in front, one cache line, to keep the payload aligned. */
static void *host_alloc(const struct lab_host *h, size_t size)
{
	struct host_env *env = h->priv;
	uint64_t seq = __atomic_add_fetch(&env->alloc_seq, 1, __ATOMIC_RELAXED);
	size_t total;
	unsigned char *p;

	if (env->fault_every && seq % env->fault_every == 0)
		return NULL;
	total = LAB_CACHE_LINE + ((size + LAB_CACHE_LINE - 1) & ~(size_t)(LAB_CACHE_LINE - 1));
	p = aligned_alloc(LAB_CACHE_LINE, total);
	if (!p)
		return NULL;
	memset(p, 0, total);
	memcpy(p, &size, sizeof(size));
	__atomic_add_fetch(&env->live_allocs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&env->live_bytes, size, __ATOMIC_RELAXED);
	return p + LAB_CACHE_LINE;
}

static void host_free(const struct lab_host *h, void *ptr)
{
	struct host_env *env = h->priv;
	unsigned char *p = ptr;
	size_t size;

	if (!ptr)
		return;
	p -= LAB_CACHE_LINE;
	memcpy(&size, p, sizeof(size));
	__atomic_sub_fetch(&env->live_allocs, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&env->live_bytes, size, __ATOMIC_RELAXED);
	free(p);
}

void host_cpu_check(struct lab_cpu *c)
{
	struct host_cpu *hc = c->host_priv;

	if (hc->bail && __atomic_load_n(&hc->env->aborted, __ATOMIC_RELAXED))
		siglongjmp(*hc->bail, 1);
}

static void host_spin(struct lab_cpu *c)
{
	struct host_cpu *hc = c->host_priv;
	struct host_env *env = hc->env;

	if (env->idle)
		env->idle(c, env->idle_arg);
	host_cpu_check(c);
}

struct host_env *host_env_new(uint32_t ncpus, uint32_t n_counters, bool phases_on)
{
	struct host_env *env = calloc(1, sizeof(*env));

	if (!env)
		return NULL;
	env->ncpus = ncpus;
	env->n_counters = n_counters;
	/* Round each CPU's counter row up to a cache line so CPUs never share one. */
	env->counters_stride = (n_counters + 7) & ~7u;
	if (!env->counters_stride)
		env->counters_stride = 8;
	env->cpus = aligned_alloc(LAB_CACHE_LINE, sizeof(*env->cpus) * ncpus);
	env->counters = aligned_alloc(LAB_CACHE_LINE,
				      sizeof(uint64_t) * env->counters_stride * ncpus);
	if (!env->cpus || !env->counters)
		goto err_free;
	memset(env->cpus, 0, sizeof(*env->cpus) * ncpus);
	memset(env->counters, 0, sizeof(uint64_t) * env->counters_stride * ncpus);
	if (clock_setup(&env->clock, 0))
		goto err_free;

	env->host.struct_size = sizeof(env->host);
	env->host.alloc = host_alloc;
	env->host.free = host_free;
	env->host.spin = host_spin;
	env->host.priv = env;
	for (uint32_t i = 0; i < ncpus; i++) {
		struct host_cpu *hc = &env->cpus[i];
		hc->env = env;
		hc->cpu.id = i;
		hc->cpu.ncpus = ncpus;
		hc->cpu.host = &env->host;
		hc->cpu.clock = &env->clock;
		hc->cpu.counters = &env->counters[(size_t)i * env->counters_stride];
		hc->cpu.phases_on = phases_on;
		hc->cpu.host_priv = hc;
	}
	return env;

err_free:
	free(env->cpus);
	free(env->counters);
	free(env);
	return NULL;
}

void host_env_free(struct host_env *env)
{
	if (!env)
		return;
	free(env->cpus);
	free(env->counters);
	free(env);
}

const struct lab_host *host_env_host(struct host_env *env)
{
	return &env->host;
}

struct lab_cpu *host_env_cpu(struct host_env *env, uint32_t cpu)
{
	return &env->cpus[cpu].cpu;
}

const struct lab_clock *host_env_clock(struct host_env *env)
{
	return &env->clock;
}

void host_env_set_clock(struct host_env *env, const struct lab_clock *clk,
			struct lab_clock *saved)
{
	if (saved)
		*saved = env->clock;
	env->clock = *clk;
}

uint32_t host_env_ncpus(const struct host_env *env)
{
	return env->ncpus;
}

void host_env_set_idle(struct host_env *env, void (*idle)(struct lab_cpu *c, void *arg),
		       void *arg)
{
	env->idle = idle;
	env->idle_arg = arg;
}

void host_env_set_alloc_fault(struct host_env *env, uint64_t every_n)
{
	env->fault_every = every_n;
}

uint64_t host_env_live_allocs(const struct host_env *env)
{
	return __atomic_load_n(&env->live_allocs, __ATOMIC_RELAXED);
}

uint64_t host_env_live_bytes(const struct host_env *env)
{
	return __atomic_load_n(&env->live_bytes, __ATOMIC_RELAXED);
}

void host_cpu_arm(struct lab_cpu *c, sigjmp_buf *bail)
{
	((struct host_cpu *)c->host_priv)->bail = bail;
}

void host_cpu_disarm(struct lab_cpu *c)
{
	((struct host_cpu *)c->host_priv)->bail = NULL;
}

void host_env_abort(struct host_env *env)
{
	__atomic_store_n(&env->aborted, 1, __ATOMIC_RELAXED);
}

void host_cpu_reset_events(struct lab_cpu *c, const struct lab_counter *counters,
			   uint32_t n_counters)
{
	struct host_cpu *hc = c->host_priv;

	for (uint32_t k = 0; k < n_counters && k < hc->env->n_counters; k++)
		if (counters[k].kind == LAB_COUNTER_EVENTS)
			c->counters[k] = 0;
	memset(c->phase_ns, 0, sizeof(c->phase_ns));
}

/* ---- unwinding a CPU stuck outside a spin-wait ------------------------------------------- */

#define BAIL_SIGNAL SIGUSR1

static _Thread_local struct lab_cpu *thread_cpu;

void host_thread_set_cpu(struct lab_cpu *c)
{
	thread_cpu = c;
}

static void bail_handler(int sig)
{
	(void)sig;
	if (thread_cpu)
		host_cpu_check(thread_cpu);
}

int host_install_bail_signal(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bail_handler;
	sigemptyset(&sa.sa_mask);
	return sigaction(BAIL_SIGNAL, &sa, NULL) ? -errno : 0;
}

int host_bail_thread(unsigned long thread)
{
	return -pthread_kill((pthread_t)thread, BAIL_SIGNAL);
}
