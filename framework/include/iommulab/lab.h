/* SPDX-License-Identifier: MIT */
/*
 * lab.h -- the platform API: the only way a plugin touches shared memory, waits, spends
 * time, allocates, counts and marks phases.
 *
 * Why a plugin may not use raw atomics, pthreads or clocks: the same plugin source must run
 * under two engines. Natively (this file) every operation below is an inline wrapper over
 * the compiler's C11-memory-model __atomic builtins, i.e. the instructions <stdatomic.h>
 * would emit, with no call overhead. The sim engine provides the same names with another
 * implementation in which each operation is a point where virtual time advances, so a
 * plugin measured on 2 real cores can also be run on a simulated 256-core machine.
 *
 * Two builds of one source (the engine binding):
 *  - native (default): everything below is inline C11 atomics and the cycle counter.
 *  - sim (-DLAB_ENGINE_SIM, the build `plugins/meson.build` makes as <kind>-<name>.sim.so):
 *    every shared-memory operation, fence, lab_now(), lab_delay_ns() and spin-wait becomes a
 *    call to a lab_sim_*() function that the iommulab executable exports (it is linked with
 *    --export-dynamic), so the sim engine can price it and switch virtual CPUs there. A
 *    drop-in plugin is built for the sim with one command:
 *	cc -shared -fPIC -O2 -DLAB_ENGINE_SIM -I<prefix>/include foo.c -o cmdq-foo.sim.so
 *    The descriptor, ops and counters are the same in both builds.
 *  - host code built natively that runs on the sim's virtual CPUs (the device model, the
 *    workloads) sees a struct lab_clock with source LAB_CLOCK_SIM: lab_now() reads virtual
 *    time and lab_delay_ns() advances it, through the two function pointers of that clock.
 *
 * Conventions:
 *  - Shared words are plain uint32_t / uint64_t in memory from lab_alloc() (or the ring);
 *    every access to one that another CPU may touch concurrently goes through lab_load*,
 *    lab_store*, lab_cas*, lab_fetch_*, lab_xchg* with an explicit memory order.
 *  - lab_cas* returns the value found (the kernel's cmpxchg shape): success iff it equals old.
 *  - Spin-waits use LAB_COND_LOAD32/64 (the kernel's smp_cond_load_*() shape), never an
 *    open-coded loop: the engine needs to know the CPU is waiting (the sim parks it on the
 *    line; natively the host uses the wait to advance the device model and watch for hangs).
 *  - struct lab_cpu is the calling CPU's context: every op receives one; pass it down.
 */
#ifndef IOMMULAB_LAB_H
#define IOMMULAB_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "plugin.h"

#define LAB_CACHE_LINE 64 /* allocation alignment; pad per-CPU data to this */
#define LAB_CACHE_ALIGNED __attribute__((aligned(LAB_CACHE_LINE)))

/* Memory orders, the C11 ones. */
enum lab_order {
	LAB_RELAXED = __ATOMIC_RELAXED,
	LAB_ACQUIRE = __ATOMIC_ACQUIRE,
	LAB_RELEASE = __ATOMIC_RELEASE,
	LAB_ACQ_REL = __ATOMIC_ACQ_REL,
	LAB_SEQ_CST = __ATOMIC_SEQ_CST,
};

struct lab_cpu;

/* Services the host gives a plugin. Plugins call them through the lab_* wrappers below. */
struct lab_host {
	uint32_t struct_size;
	/* Zeroed, LAB_CACHE_LINE-aligned shared memory; NULL when out of memory (or injected). */
	void *(*alloc)(const struct lab_host *h, size_t size);
	/* Free lab_alloc() memory; NULL is fine. */
	void (*free)(const struct lab_host *h, void *p);
	/* One iteration of a spin-wait has found its condition false (see LAB_COND_LOAD32). */
	void (*spin)(struct lab_cpu *c);
	void *priv; /* host-private */
};

/* How lab_now() turns the CPU's counter into nanoseconds. Filled in by the host. */
enum lab_clock_source {
	LAB_CLOCK_MONOTONIC = 0, /* clock_gettime(CLOCK_MONOTONIC): the portable fallback */
	LAB_CLOCK_TSC,		 /* x86-64 invariant TSC (rdtsc) */
	LAB_CLOCK_CNTVCT,	 /* aarch64 generic timer (cntvct_el0) */
	LAB_CLOCK_SIM,		 /* the sim engine's virtual time (ABI 1.0, appended) */
};

struct lab_clock {
	uint32_t source;     /* enum lab_clock_source */
	uint64_t base;	     /* counter value at time 0 */
	double ns_per_tick;  /* calibrated */
	/* LAB_CLOCK_SIM only, NULL otherwise (appended): the running virtual CPU's time in ns,
	 * and local work that advances it. Used by natively built host code under the sim. */
	uint64_t (*sim_now)(const struct lab_clock *clk);
	void (*sim_delay)(struct lab_cpu *c, uint64_t ns);
};

/*
 * The calling CPU. Owned by the host, one per CPU of the trial; a plugin reads id/ncpus and
 * otherwise only uses it through the wrappers (the layout is part of the ABI major).
 */
struct lab_cpu {
	uint32_t id;	   /* 0 .. ncpus-1, this CPU's index in the trial (smp_processor_id()) */
	uint32_t ncpus;	   /* number of CPUs in the trial (num_online_cpus()) */
	const struct lab_host *host;
	const struct lab_clock *clock;
	uint64_t *counters;	 /* this CPU's slots for the plugin's counters */
	uint32_t phase;		 /* current phase (0 = outside the plugin); read by the watchdog */
	uint32_t phases_on;	 /* 0: lab_phase() is a no-op (scenario phases = off) */
	uint64_t phase_start;	 /* lab_now() when the current phase began */
	uint64_t phase_ns[LAB_MAX_PHASES]; /* time spent per phase, summed */
	void *host_priv;	 /* host-private per-CPU data */
};

/* ---- time ------------------------------------------------------------------------------ */

static inline uint64_t lab_read_counter(const struct lab_clock *clk)
{
#if defined(__x86_64__)
	if (clk->source == LAB_CLOCK_TSC) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#elif defined(__aarch64__)
	if (clk->source == LAB_CLOCK_CNTVCT) {
		uint64_t v;
		__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
		return v;
	}
#endif
	/* After the counter's test, so the cycle-counter path is unchanged. */
	if (clk->source == LAB_CLOCK_SIM)
		return clk->sim_now(clk);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds since the trial's clock base (monotonic, per CPU consistent across CPUs). */
static inline uint64_t lab_clock_ns(const struct lab_clock *clk)
{
	uint64_t t = lab_read_counter(clk);
	if (t <= clk->base)
		return 0;
	return (uint64_t)((double)(t - clk->base) * clk->ns_per_tick);
}

/*
 * The sim binding (declared in both builds, called only by the sim build): declarations of what the executable exports (framework/sim/sim_mem.c).
 * The memory order is passed along; the sim executes every access sequentially consistent.
 * rmw: op is enum lab_sim_rmw; for LAB_SIM_CAS a is the expected and b the new value; every
 * rmw returns the value found.
 */
enum lab_sim_rmw {
	LAB_SIM_CAS = 0,
	LAB_SIM_XCHG,
	LAB_SIM_ADD,
	LAB_SIM_SUB,
	LAB_SIM_AND,
	LAB_SIM_ANDNOT,
	LAB_SIM_OR,
	LAB_SIM_XOR,
};

#define LAB_SIM_API __attribute__((visibility("default")))
LAB_SIM_API uint64_t lab_sim_now(const struct lab_cpu *c);
LAB_SIM_API void lab_sim_delay(struct lab_cpu *c, uint64_t ns);
LAB_SIM_API uint32_t lab_sim_load32(const uint32_t *p, int o);
LAB_SIM_API uint64_t lab_sim_load64(const uint64_t *p, int o);
LAB_SIM_API void lab_sim_store32(uint32_t *p, uint32_t v, int o);
LAB_SIM_API void lab_sim_store64(uint64_t *p, uint64_t v, int o);
LAB_SIM_API uint32_t lab_sim_rmw32(uint32_t *p, int op, uint32_t a, uint32_t b, int o);
LAB_SIM_API uint64_t lab_sim_rmw64(uint64_t *p, int op, uint64_t a, uint64_t b, int o);
LAB_SIM_API void lab_sim_fence(int o);
/* Park the calling CPU on p's line until the line is written (seen: the value just read). */
LAB_SIM_API void lab_sim_park32(struct lab_cpu *c, const uint32_t *p, uint32_t seen);
LAB_SIM_API void lab_sim_park64(struct lab_cpu *c, const uint64_t *p, uint64_t seen);
/* lab_spin_wait(): NULL polls (an MMIO register): time moves by the machine's poll interval. */
LAB_SIM_API void lab_sim_spin_wait(struct lab_cpu *c, const void *watched);

#ifdef LAB_ENGINE_SIM

static inline uint64_t lab_now(const struct lab_cpu *c)
{
	return lab_sim_now(c);
}

static inline void lab_cpu_relax(void)
{
}

static inline void lab_delay_ns(struct lab_cpu *c, uint64_t ns)
{
	lab_sim_delay(c, ns);
}

#define LAB_DEFINE_ATOMICS(bits)                                                                   \
	static inline uint##bits##_t lab_load##bits(const uint##bits##_t *p, enum lab_order o)    \
	{                                                                                          \
		return lab_sim_load##bits(p, (int)o);                                              \
	}                                                                                          \
	static inline void lab_store##bits(uint##bits##_t *p, uint##bits##_t v, enum lab_order o) \
	{                                                                                          \
		lab_sim_store##bits(p, v, (int)o);                                                 \
	}                                                                                          \
	static inline uint##bits##_t lab_cas##bits(uint##bits##_t *p, uint##bits##_t old,        \
						    uint##bits##_t new_, enum lab_order o)        \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_CAS, old, new_, (int)o);                       \
	}                                                                                          \
	static inline uint##bits##_t lab_xchg##bits(uint##bits##_t *p, uint##bits##_t v,          \
						     enum lab_order o)                             \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_XCHG, v, 0, (int)o);                           \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_add##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_ADD, v, 0, (int)o);                            \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_sub##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_SUB, v, 0, (int)o);                            \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_and##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_AND, v, 0, (int)o);                            \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_andnot##bits(uint##bits##_t *p, uint##bits##_t v,  \
							     enum lab_order o)                     \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_ANDNOT, v, 0, (int)o);                         \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_or##bits(uint##bits##_t *p, uint##bits##_t v,      \
							 enum lab_order o)                         \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_OR, v, 0, (int)o);                             \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_xor##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return lab_sim_rmw##bits(p, LAB_SIM_XOR, v, 0, (int)o);                            \
	}

LAB_DEFINE_ATOMICS(32)
LAB_DEFINE_ATOMICS(64)
#undef LAB_DEFINE_ATOMICS

static inline void lab_fence(enum lab_order o)
{
	lab_sim_fence((int)o);
}

static inline void lab_spin_wait(struct lab_cpu *c, const void *watched)
{
	lab_sim_spin_wait(c, watched);
}

/* As below, but the CPU sleeps on the line instead of spinning: waiting costs no host time. */
#define LAB_COND_LOAD32(c, ptr, var, cond, order)                                                 \
	do {                                                                                       \
		for (;;) {                                                                         \
			(var) = lab_load32((ptr), (order));                                        \
			if (cond)                                                                  \
				break;                                                             \
			lab_sim_park32((c), (ptr), (var));                                         \
		}                                                                                  \
	} while (0)

#define LAB_COND_LOAD64(c, ptr, var, cond, order)                                                 \
	do {                                                                                       \
		for (;;) {                                                                         \
			(var) = lab_load64((ptr), (order));                                        \
			if (cond)                                                                  \
				break;                                                             \
			lab_sim_park64((c), (ptr), (var));                                         \
		}                                                                                  \
	} while (0)

#else /* native */

static inline uint64_t lab_now(const struct lab_cpu *c)
{
	return lab_clock_ns(c->clock);
}

/* The spin-loop hint (cpu_relax()). */
static inline void lab_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* Spend ns of CPU-local work (ndelay(), or the work a driver does between calls). */
static inline void lab_delay_ns(struct lab_cpu *c, uint64_t ns)
{
	if (!ns)
		return;
	if (c->clock->source == LAB_CLOCK_SIM) {
		/* Host code on a virtual CPU: a busy loop would never see virtual time move. */
		c->clock->sim_delay(c, ns);
		return;
	}
	uint64_t end = lab_now(c) + ns;
	while (lab_now(c) < end)
		lab_cpu_relax();
}

/* ---- atomics on shared words ---------------------------------------------------------- */

#define LAB_DEFINE_ATOMICS(bits)                                                                   \
	static inline uint##bits##_t lab_load##bits(const uint##bits##_t *p, enum lab_order o)    \
	{                                                                                          \
		return __atomic_load_n(p, (int)o);                                                 \
	}                                                                                          \
	static inline void lab_store##bits(uint##bits##_t *p, uint##bits##_t v, enum lab_order o) \
	{                                                                                          \
		__atomic_store_n(p, v, (int)o);                                                    \
	}                                                                                          \
	/* Compare-and-swap; returns the value found (== old on success). */                     \
	static inline uint##bits##_t lab_cas##bits(uint##bits##_t *p, uint##bits##_t old,        \
						    uint##bits##_t new_, enum lab_order o)        \
	{                                                                                          \
		int fail = o == LAB_ACQ_REL ? __ATOMIC_ACQUIRE                                     \
			   : o == LAB_RELEASE ? __ATOMIC_RELAXED                                   \
					      : (int)o;                                            \
		__atomic_compare_exchange_n(p, &old, new_, false, (int)o, fail);                   \
		return old;                                                                        \
	}                                                                                          \
	static inline uint##bits##_t lab_xchg##bits(uint##bits##_t *p, uint##bits##_t v,          \
						     enum lab_order o)                             \
	{                                                                                          \
		return __atomic_exchange_n(p, v, (int)o);                                          \
	}                                                                                          \
	/* fetch_OP: returns the old value. */                                                    \
	static inline uint##bits##_t lab_fetch_add##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return __atomic_fetch_add(p, v, (int)o);                                           \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_sub##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return __atomic_fetch_sub(p, v, (int)o);                                           \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_and##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return __atomic_fetch_and(p, v, (int)o);                                           \
	}                                                                                          \
	/* atomic_fetch_andnot(): clears the bits of v. */                                        \
	static inline uint##bits##_t lab_fetch_andnot##bits(uint##bits##_t *p, uint##bits##_t v,  \
							     enum lab_order o)                     \
	{                                                                                          \
		return __atomic_fetch_and(p, (uint##bits##_t)~v, (int)o);                          \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_or##bits(uint##bits##_t *p, uint##bits##_t v,      \
							 enum lab_order o)                         \
	{                                                                                          \
		return __atomic_fetch_or(p, v, (int)o);                                            \
	}                                                                                          \
	static inline uint##bits##_t lab_fetch_xor##bits(uint##bits##_t *p, uint##bits##_t v,     \
							  enum lab_order o)                        \
	{                                                                                          \
		return __atomic_fetch_xor(p, v, (int)o);                                           \
	}

LAB_DEFINE_ATOMICS(32)
LAB_DEFINE_ATOMICS(64)
#undef LAB_DEFINE_ATOMICS

/* A standalone fence (dma_wmb() is lab_fence(LAB_RELEASE), smp_mb() is LAB_SEQ_CST). */
static inline void lab_fence(enum lab_order o)
{
	__atomic_thread_fence((int)o);
}

/* ---- waiting ----------------------------------------------------------------------------- */

/*
 * One failed iteration of a wait. Plugins use LAB_COND_LOAD* for memory; they call this
 * directly only when polling a device register (queue_poll() on CONS), with watched = NULL.
 */
static inline void lab_spin_wait(struct lab_cpu *c, const void *watched)
{
	(void)watched; /* the sim engine parks the CPU on this line */
	lab_cpu_relax();
	c->host->spin(c);
}

/*
 * LAB_COND_LOAD32(c, ptr, var, cond, order): the kernel's smp_cond_load_*(ptr, cond):
 * repeatedly loads *ptr into var with the given order until cond (an expression over var) is
 * true. var holds the value that satisfied cond afterwards. Example, waiting for a hand-off:
 *	uint32_t v;
 *	LAB_COND_LOAD32(c, &q->owner_prod, v, v == my_prod, LAB_RELAXED);
 */
#define LAB_COND_LOAD32(c, ptr, var, cond, order)                                                 \
	do {                                                                                       \
		for (;;) {                                                                         \
			(var) = lab_load32((ptr), (order));                                        \
			if (cond)                                                                  \
				break;                                                             \
			lab_spin_wait((c), (ptr));                                                 \
		}                                                                                  \
	} while (0)

#define LAB_COND_LOAD64(c, ptr, var, cond, order)                                                 \
	do {                                                                                       \
		for (;;) {                                                                         \
			(var) = lab_load64((ptr), (order));                                        \
			if (cond)                                                                  \
				break;                                                             \
			lab_spin_wait((c), (ptr));                                                 \
		}                                                                                  \
	} while (0)

#endif /* LAB_ENGINE_SIM */

/* ---- a ticket spinlock built on the above (for plugins that need a plain lock) --------- */

struct lab_spinlock {
	uint32_t next;	/* next ticket to hand out */
	uint32_t owner; /* ticket now holding the lock */
};

static inline void lab_spin_lock(struct lab_cpu *c, struct lab_spinlock *l)
{
	uint32_t ticket = lab_fetch_add32(&l->next, 1, LAB_RELAXED);
	uint32_t v;
	LAB_COND_LOAD32(c, &l->owner, v, v == ticket, LAB_ACQUIRE);
}

static inline bool lab_spin_trylock(struct lab_spinlock *l)
{
	uint32_t owner = lab_load32(&l->owner, LAB_RELAXED);
	return lab_cas32(&l->next, owner, owner + 1, LAB_ACQUIRE) == owner;
}

static inline void lab_spin_unlock(struct lab_spinlock *l)
{
	/* Only the holder writes owner, so a relaxed read of it is exact. */
	lab_store32(&l->owner, lab_load32(&l->owner, LAB_RELAXED) + 1, LAB_RELEASE);
}

/* ---- memory, counters, phases ------------------------------------------------------------ */

/* Zeroed, cache-line-aligned memory that every CPU may share; NULL on failure. */
static inline void *lab_alloc(const struct lab_host *h, size_t size)
{
	return h->alloc(h, size);
}

static inline void lab_free(const struct lab_host *h, void *p)
{
	h->free(h, p);
}

/* Add delta to the plugin's counter id (an index into its descriptor's counters[]). */
static inline void lab_count(struct lab_cpu *c, uint32_t id, uint64_t delta)
{
	c->counters[id] += delta;
}

/*
 * Enter phase p (1 .. n_phases of the descriptor; 0 = "other"). The time since the previous
 * mark is charged to the previous phase; the host closes the last phase when the op returns.
 */
static inline void lab_phase(struct lab_cpu *c, uint32_t p)
{
	if (!c->phases_on)
		return;
	uint64_t t = lab_now(c);
	c->phase_ns[c->phase] += t - c->phase_start;
	c->phase_start = t;
	__atomic_store_n(&c->phase, p, __ATOMIC_RELAXED);
}

#endif /* IOMMULAB_LAB_H */
