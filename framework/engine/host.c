/* SPDX-License-Identifier: MIT */
/* host -- the native services behind lab.h (see host.h). */
#include "engine/host.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
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
	uint64_t alloc_seq;   /* atomic */
	uint64_t live_allocs; /* atomic */
	uint64_t live_bytes;  /* atomic */
	uint32_t aborted;     /* atomic */
	struct arena *arena;  /* lab_alloc's memory under the sim (host_env_use_arena) */
	void (*zeroing)(const void *p, size_t len); /* ...told before it zeroes a payload */
	uint64_t overruns;	/* atomic: native blocks freed after being written past */
	uint32_t overrun_noted; /* atomic: the first one is described in overrun_what */
	char overrun_what[160];
	/* Natively, every live allocation, so that host_env_free() can give back what a trial
	 * abandoned mid-run (whose fini must not run) still held. */
	uint32_t live_lock; /* atomic */
	struct alloc_hdr *live;
};

/*
 * Each allocation carries a header in front, one cache line, to keep the payload aligned and
 * whole lines long: no two allocations ever share a line.
 */
struct alloc_hdr {
	size_t size;		/* the caller's */
	uint32_t lines;		/* header included */
	bool arena;		/* from the env's arena, not malloc */
	struct alloc_hdr *next; /* on an arena free list; natively, the env's live list */
	struct alloc_hdr *prev; /* natively, the env's live list */
};
static_assert(sizeof(struct alloc_hdr) <= LAB_CACHE_LINE, "the header is one line");

/*
 * The sim prices memory per 64-byte line and keeps each line's state (owner, sharers) by
 * address for the whole run, so which allocation reuses which freed line is part of the
 * result. malloc decides that from the whole process's heap (a longer --out path, a bigger
 * scenario, another libc), so under the sim allocations come from an arena instead: blocks
 * carved in allocation order and freed chunks reused last-in first-out per exact length. The
 * addresses differ from run to run; which chunk an allocation gets, and so every line's
 * history, depends only on the sequence of allocations and frees.
 */
#define ARENA_BLOCK_LINES 16384u /* 1 MiB blocks */
#define ARENA_CLASSES	  256u	 /* exact free lists up to 255 lines; longer ones share one */

struct arena {
	unsigned char **blocks;
	size_t n_blocks;
	unsigned char *next; /* the current block's first unused line */
	size_t left;	     /* its unused lines */
	struct alloc_hdr *free[ARENA_CLASSES];
};

static struct alloc_hdr *arena_get(struct arena *a, uint32_t lines)
{
	struct alloc_hdr **pp = &a->free[lines < ARENA_CLASSES ? lines : 0], *h;

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->lines == lines) {
			h = *pp;
			*pp = h->next;
			return h;
		}
	}
	if (a->left < lines) {
		size_t n = lines > ARENA_BLOCK_LINES ? lines : ARENA_BLOCK_LINES;
		unsigned char *b = aligned_alloc(LAB_CACHE_LINE, n * LAB_CACHE_LINE);
		unsigned char **v = realloc(a->blocks, (a->n_blocks + 1) * sizeof(*v));

		if (!b || !v) {
			free(b);
			if (v)
				a->blocks = v;
			return NULL;
		}
		a->blocks = v;
		a->blocks[a->n_blocks++] = b;
		a->next = b;
		a->left = n;
	}
	h = (struct alloc_hdr *)a->next;
	a->next += (size_t)lines * LAB_CACHE_LINE;
	a->left -= lines;
	return h;
}

static void arena_put(struct arena *a, struct alloc_hdr *h)
{
	struct alloc_hdr **head = &a->free[h->lines < ARENA_CLASSES ? h->lines : 0];

	h->next = *head;
	*head = h;
}

static void arena_free(struct arena *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_blocks; i++)
		free(a->blocks[i]);
	free(a->blocks);
	free(a);
}

static void live_lock(struct host_env *env)
{
	while (__atomic_exchange_n(&env->live_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&env->live_lock, __ATOMIC_RELAXED))
			lab_cpu_relax();
}

static void live_unlock(struct host_env *env)
{
	__atomic_store_n(&env->live_lock, 0, __ATOMIC_RELEASE);
}

static void live_add(struct host_env *env, struct alloc_hdr *h)
{
	live_lock(env);
	h->prev = NULL;
	h->next = env->live;
	if (env->live)
		env->live->prev = h;
	env->live = h;
	live_unlock(env);
}

static void live_remove(struct host_env *env, struct alloc_hdr *h)
{
	live_lock(env);
	if (h->prev)
		h->prev->next = h->next;
	else
		env->live = h->next;
	if (h->next)
		h->next->prev = h->prev;
	live_unlock(env);
}

/*
 * Natively, the bytes between the caller's size and the end of its lines hold CANARY, at
 * least CANARY_MIN of them (a line more where the size fills its lines): a plugin writing
 * past its block (an array one element short) is found at lab_free() or at the end of the
 * trial, where its heap would otherwise be corrupted silently. The sim's arena keeps its
 * layout (its pricing is by line) and has no canary.
 */
#define CANARY	   0xa5
#define CANARY_MIN 8

static unsigned char *payload_of(struct alloc_hdr *hdr)
{
	return (unsigned char *)hdr + LAB_CACHE_LINE;
}

/* Whether hdr's canary was overwritten; the first such block is described. */
static bool canary_broken(struct host_env *env, struct alloc_hdr *hdr)
{
	const unsigned char *p = payload_of(hdr);
	size_t end = (size_t)(hdr->lines - 1) * LAB_CACHE_LINE, first = end, last = 0;

	for (size_t i = hdr->size; i < end; i++)
		if (p[i] != CANARY) {
			first = i < first ? i : first;
			last = i;
		}
	if (first == end)
		return false;
	if (__atomic_exchange_n(&env->overrun_noted, 1, __ATOMIC_ACQ_REL))
		return true;
	snprintf(env->overrun_what, sizeof(env->overrun_what),
		 "a lab_alloc(%zu) block was written past its end: bytes +%zu..+%zu of the %zu "
		 "after it changed",
		 hdr->size, first - hdr->size, last - hdr->size, end - hdr->size);
	return true;
}

static void *host_alloc(const struct lab_host *h, size_t size)
{
	struct host_env *env = h->priv;
	uint64_t seq = __atomic_add_fetch(&env->alloc_seq, 1, __ATOMIC_RELAXED);
	size_t guard = env->arena ? 0 : CANARY_MIN;
	size_t payload = (size + guard + LAB_CACHE_LINE - 1) / LAB_CACHE_LINE, lines = 1 + payload;
	struct alloc_hdr *hdr;

	if (env->fault_every && seq % env->fault_every == 0)
		return NULL;
	if (lines > UINT32_MAX)
		return NULL;
	hdr = env->arena ? arena_get(env->arena, (uint32_t)lines)
			 : aligned_alloc(LAB_CACHE_LINE, lines * LAB_CACHE_LINE);
	if (!hdr)
		return NULL;
	if (env->zeroing) /* set with the arena: every allocation from here is the arena's */
		env->zeroing((unsigned char *)hdr + LAB_CACHE_LINE, payload * LAB_CACHE_LINE);
	memset(hdr, 0, lines * LAB_CACHE_LINE);
	hdr->size = size;
	hdr->lines = (uint32_t)lines;
	hdr->arena = env->arena != NULL;
	if (!hdr->arena) {
		memset(payload_of(hdr) + size, CANARY, payload * LAB_CACHE_LINE - size);
		live_add(env, hdr);
	}
	__atomic_add_fetch(&env->live_allocs, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&env->live_bytes, size, __ATOMIC_RELAXED);
	return (unsigned char *)hdr + LAB_CACHE_LINE;
}

static void host_free(const struct lab_host *h, void *ptr)
{
	struct host_env *env = h->priv;
	struct alloc_hdr *hdr;

	if (!ptr)
		return;
	hdr = (struct alloc_hdr *)((unsigned char *)ptr - LAB_CACHE_LINE);
	__atomic_sub_fetch(&env->live_allocs, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&env->live_bytes, hdr->size, __ATOMIC_RELAXED);
	if (hdr->arena) {
		arena_put(env->arena, hdr);
	} else {
		if (canary_broken(env, hdr))
			__atomic_add_fetch(&env->overruns, 1, __ATOMIC_RELAXED);
		live_remove(env, hdr);
		free(hdr);
	}
}

uint64_t host_env_overruns(struct host_env *env, char *what, size_t len)
{
	uint64_t n = __atomic_load_n(&env->overruns, __ATOMIC_ACQUIRE);

	live_lock(env);
	for (struct alloc_hdr *h = env->live; h; h = h->next)
		n += canary_broken(env, h);
	live_unlock(env);

	if (what && len)
		snprintf(what, len, "%s", n ? env->overrun_what : "");
	return n;
}

int host_env_use_arena(struct host_env *env, void (*zeroing)(const void *p, size_t len))
{
	if (!env->arena && !(env->arena = calloc(1, sizeof(*env->arena))))
		return -ENOMEM;
	env->zeroing = zeroing;
	return 0;
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

struct host_env *host_env_new(uint32_t ncpus, uint32_t n_counters, bool phases_on,
			      bool virtual_time)
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
	env->counters =
		aligned_alloc(LAB_CACHE_LINE, sizeof(uint64_t) * env->counters_stride * ncpus);
	/* The queued spinlock's per-CPU nodes: each on its own line, as the kernel's. */
	env->host.qnodes =
		aligned_alloc(LAB_CACHE_LINE, sizeof(*env->host.qnodes) * LAB_QNODES * ncpus);
	if (!env->cpus || !env->counters || !env->host.qnodes)
		goto err_free;
	memset(env->cpus, 0, sizeof(*env->cpus) * ncpus);
	memset(env->counters, 0, sizeof(uint64_t) * env->counters_stride * ncpus);
	memset(env->host.qnodes, 0, sizeof(*env->host.qnodes) * LAB_QNODES * ncpus);
	if (clock_setup(&env->clock, virtual_time))
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
	free(env->host.qnodes);
	free(env);
	return NULL;
}

void host_env_free(struct host_env *env)
{
	if (!env)
		return;
	/* What is still allocated: an abandoned trial's plugin state, never given back. */
	for (struct alloc_hdr *h = env->live, *next; h; h = next) {
		next = h->next;
		free(h);
	}
	arena_free(env->arena);
	free(env->cpus);
	free(env->counters);
	free(env->host.qnodes);
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

void host_env_set_clock(struct host_env *env, const struct lab_clock *clk, struct lab_clock *saved)
{
	if (saved)
		*saved = env->clock;
	env->clock = *clk;
}

uint32_t host_env_ncpus(const struct host_env *env)
{
	return env->ncpus;
}

void host_env_set_idle(struct host_env *env, void (*idle)(struct lab_cpu *c, void *arg), void *arg)
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
