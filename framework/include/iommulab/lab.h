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
 *    call to a lab_sim_*() function (lab_sim.h, included only then) that the iommulab
 *    executable exports (it is linked with --export-dynamic), so the sim engine can price it
 *    and switch virtual CPUs there. Each function below is written once, with both bodies;
 *    the atomics are made from one table (LAB_ATOMICS) for both. A drop-in plugin is built
 *    for the sim with one command:
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

/* lab_read_counter()'s portable fallback is POSIX, which strict ISO C (-std=c11) hides. */
#ifndef CLOCK_MONOTONIC
#error "iommulab/lab.h needs POSIX clock_gettime(CLOCK_MONOTONIC): build with -std=gnu11 (the default), or add -D_POSIX_C_SOURCE=200809L to -std=c11"
#endif

#include "plugin.h"
#ifdef LAB_ENGINE_SIM
#include "lab_sim.h" /* the functions the sim binding calls */
#endif

#define LAB_CACHE_LINE	  64 /* allocation alignment; pad per-CPU data to this */
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
	/* ABI 1.2: LAB_QNODES queue nodes per CPU for struct lab_qspinlock, zeroed, CPU i's at
	 * qnodes[i * LAB_QNODES] (the kernel's per-CPU qnodes[MAX_NODES]). */
	struct lab_qnode *qnodes;
};

/* How lab_now() turns the CPU's counter into nanoseconds. Filled in by the host. */
enum lab_clock_source {
	LAB_CLOCK_MONOTONIC = 0, /* clock_gettime(CLOCK_MONOTONIC): the portable fallback */
	LAB_CLOCK_TSC,		 /* x86-64 invariant TSC (rdtsc) */
	LAB_CLOCK_CNTVCT,	 /* aarch64 generic timer (cntvct_el0) */
	LAB_CLOCK_SIM,		 /* the sim engine's virtual time (ABI 1.0, appended) */
};

struct lab_clock {
	uint32_t source;    /* enum lab_clock_source */
	uint64_t base;	    /* counter value at time 0 */
	double ns_per_tick; /* calibrated */
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
	uint32_t id;	/* 0 .. ncpus-1, this CPU's index in the trial (smp_processor_id()) */
	uint32_t ncpus; /* number of CPUs in the trial (num_online_cpus()) */
	const struct lab_host *host;
	const struct lab_clock *clock;
	uint64_t *counters;   /* this CPU's slots for the plugin's counters */
	uint32_t phase;	      /* current phase (0 = outside the plugin); read by the watchdog */
	uint32_t phases_on;   /* 0: lab_phase() is a no-op (scenario phases = off) */
	uint64_t phase_start; /* lab_now() when the current phase began */
	uint64_t phase_ns[LAB_MAX_PHASES]; /* time spent per phase, summed */
	void *host_priv;		   /* host-private per-CPU data */
};

/* ---- time ------------------------------------------------------------------------------ */

/* The raw counter of clk's source (host code; a plugin uses lab_now()). */
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

/* ---- the engine binding: time and local work ------------------------------------------- */

/* Nanoseconds since the trial's start on the calling CPU's clock (virtual time in the sim). */
static inline uint64_t lab_now(const struct lab_cpu *c)
{
#ifdef LAB_ENGINE_SIM
	return lab_sim_now(c);
#else
	return lab_clock_ns(c->clock);
#endif
}

/* The spin-loop hint (cpu_relax()); nothing in the sim, where a wait parks the CPU. */
static inline void lab_cpu_relax(void)
{
#if defined(LAB_ENGINE_SIM)
#elif defined(__x86_64__) || defined(__i386__)
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
#ifdef LAB_ENGINE_SIM
	lab_sim_delay(c, ns);
#else
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
#endif
}

/* ---- atomics on shared words ---------------------------------------------------------- */

/*
 * lab.h's accesses to shared memory (the atomics, fences, waits and the spinlock) are inlined
 * into their caller even at -O0, so the code address a sim-built access calls the engine
 * from is in the plugin's own function: the place the sim names when it reports one (verify's
 * lab_h_only), in a debug build too.
 */
#define LAB_INLINE static inline __attribute__((always_inline))

/*
 * For N = 32 and 64, on a uintN_t word p (every one takes its memory order o last):
 *	uintN_t lab_loadN(const uintN_t *p, o)           the value of *p
 *	void    lab_storeN(uintN_t *p, uintN_t v, o)     *p = v
 *	uintN_t lab_casN(uintN_t *p, uintN_t old, uintN_t new_, o)
 *		compare-and-swap: returns the value found (== old on success)
 *	uintN_t lab_xchgN(uintN_t *p, uintN_t v, o)      and lab_fetch_addN, lab_fetch_subN,
 *		lab_fetch_andN, lab_fetch_andnotN, lab_fetch_orN, lab_fetch_xorN: apply v to *p,
 *		return the value found before
 * e.g. lab_fetch_add32(&l->next, 1, LAB_RELAXED), lab_cas64(&q->word, old, new_, LAB_ACQUIRE).
 *
 * They are made from the one table below, so both bindings have the same set: natively each
 * is the row's C11 __atomic expression, inline (the instructions <stdatomic.h> would emit);
 * under LAB_ENGINE_SIM each calls lab_sim_load/store/rmw (lab_sim.h), rmws with the row's kind.
 * A row: X(N, shape, name, sim rmw kind, native expression over the arguments p, v|old+new_, o).
 */
#define LAB_ATOMIC_WIDTHS(X) X(32) X(64)

#define LAB_ATOMICS(X, N)                                                                          \
	X(N, LOAD, load, NONE, __atomic_load_n(p, o))		      /* *p */                     \
	X(N, STORE, store, NONE, __atomic_store_n(p, v, o))	      /* *p = v */                 \
	X(N, CAS, cas, CAS, lab_native_cas##N(p, old, new_, o))	      /* *p == old ? *p = new_ */  \
	X(N, RMW, xchg, XCHG, __atomic_exchange_n(p, v, o))	      /* *p = v, swapping */       \
	X(N, RMW, fetch_add, ADD, __atomic_fetch_add(p, v, o))	      /* *p += v */                \
	X(N, RMW, fetch_sub, SUB, __atomic_fetch_sub(p, v, o))	      /* *p -= v */                \
	X(N, RMW, fetch_and, AND, __atomic_fetch_and(p, v, o))	      /* *p &= v */                \
	X(N, RMW, fetch_andnot, ANDNOT, __atomic_fetch_and(p, ~v, o)) /* atomic_fetch_andnot() */  \
	X(N, RMW, fetch_or, OR, __atomic_fetch_or(p, v, o))	      /* *p |= v */                \
	X(N, RMW, fetch_xor, XOR, __atomic_fetch_xor(p, v, o))	      /* *p ^= v */

/*
 * The native CAS. C11's failure order may be neither release nor stronger than the success
 * order. Defined in both builds (unused in the sim's), so a test can run every row natively.
 */
#define LAB_DEFINE_NATIVE_CAS(N)                                                                   \
	static inline uint##N##_t lab_native_cas##N(uint##N##_t *p, uint##N##_t old,               \
						    uint##N##_t new_, enum lab_order o)            \
	{                                                                                          \
		int fail = o == LAB_ACQ_REL   ? __ATOMIC_ACQUIRE                                   \
			   : o == LAB_RELEASE ? __ATOMIC_RELAXED                                   \
					      : (int)o;                                            \
		__atomic_compare_exchange_n(p, &old, new_, false, (int)o, fail);                   \
		return old;                                                                        \
	}
LAB_ATOMIC_WIDTHS(LAB_DEFINE_NATIVE_CAS)
#undef LAB_DEFINE_NATIVE_CAS

#ifndef LAB_ENGINE_SIM
/* Natively an atomic is its row's expression. */
#define LAB_BIND(N, shape, kind, native) native
#else
/* Under the sim an atomic is a call into the engine; the expression is not used. */
#define LAB_BIND(N, shape, kind, native) LAB_BIND_SIM_##shape(N, kind)
#define LAB_BIND_SIM_LOAD(N, kind)	 lab_sim_load##N(p, (int)o)
#define LAB_BIND_SIM_STORE(N, kind)	 lab_sim_store##N(p, v, (int)o)
#define LAB_BIND_SIM_CAS(N, kind)	 lab_sim_rmw##N(p, LAB_SIM_##kind, old, new_, (int)o)
#define LAB_BIND_SIM_RMW(N, kind)	 lab_sim_rmw##N(p, LAB_SIM_##kind, v, 0, (int)o)
#endif

/* One shape per signature; the row's name becomes lab_<name><N>. */
#define LAB_DEFINE_LOAD(N, name, kind, native)                                                     \
	LAB_INLINE uint##N##_t lab_##name##N(const uint##N##_t *p, enum lab_order o)               \
	{                                                                                          \
		return LAB_BIND(N, LOAD, kind, native);                                            \
	}
#define LAB_DEFINE_STORE(N, name, kind, native)                                                    \
	LAB_INLINE void lab_##name##N(uint##N##_t *p, uint##N##_t v, enum lab_order o)             \
	{                                                                                          \
		LAB_BIND(N, STORE, kind, native);                                                  \
	}
#define LAB_DEFINE_CAS(N, name, kind, native)                                                      \
	LAB_INLINE uint##N##_t lab_##name##N(uint##N##_t *p, uint##N##_t old, uint##N##_t new_,    \
					     enum lab_order o)                                     \
	{                                                                                          \
		return LAB_BIND(N, CAS, kind, native);                                             \
	}
#define LAB_DEFINE_RMW(N, name, kind, native)                                                      \
	LAB_INLINE uint##N##_t lab_##name##N(uint##N##_t *p, uint##N##_t v, enum lab_order o)      \
	{                                                                                          \
		return LAB_BIND(N, RMW, kind, native);                                             \
	}
#define LAB_DEFINE_ATOMIC(N, shape, name, kind, native) LAB_DEFINE_##shape(N, name, kind, native)
#define LAB_DEFINE_ATOMICS(N)				LAB_ATOMICS(LAB_DEFINE_ATOMIC, N)

LAB_ATOMIC_WIDTHS(LAB_DEFINE_ATOMICS)

#undef LAB_DEFINE_ATOMICS
#undef LAB_DEFINE_ATOMIC
#undef LAB_DEFINE_RMW
#undef LAB_DEFINE_CAS
#undef LAB_DEFINE_STORE
#undef LAB_DEFINE_LOAD
#undef LAB_BIND_SIM_RMW
#undef LAB_BIND_SIM_CAS
#undef LAB_BIND_SIM_STORE
#undef LAB_BIND_SIM_LOAD
#undef LAB_BIND

/* A standalone fence (dma_wmb() is lab_fence(LAB_RELEASE), smp_mb() is LAB_SEQ_CST). */
LAB_INLINE void lab_fence(enum lab_order o)
{
#ifdef LAB_ENGINE_SIM
	lab_sim_fence((int)o);
#else
	__atomic_thread_fence((int)o);
#endif
}

/* ---- waiting ----------------------------------------------------------------------------- */

/*
 * One failed iteration of a wait. Plugins use LAB_COND_LOAD* for memory; they call this
 * directly only when polling a device register (queue_poll() on CONS), with watched = NULL.
 */
LAB_INLINE void lab_spin_wait(struct lab_cpu *c, const void *watched)
{
#ifdef LAB_ENGINE_SIM
	lab_sim_spin_wait(c, watched);
#else
	(void)watched; /* the sim engine parks the CPU on this line */
	lab_cpu_relax();
	c->host->spin(c);
#endif
}

/*
 * LAB_COND_LOAD32(c, ptr, var, cond, order): the kernel's smp_cond_load_*(ptr, cond):
 * repeatedly loads *ptr into var with the given order until cond (an expression over var) is
 * true. var holds the value that satisfied cond afterwards. Example, waiting for a hand-off:
 *	uint32_t v;
 *	LAB_COND_LOAD32(c, &q->owner_prod, v, v == my_prod, LAB_RELAXED);
 * LAB_COND_LOAD64 is the same on a uint64_t.
 */
#define LAB_COND_LOAD32(c, ptr, var, cond, order) LAB_COND_LOAD(32, c, ptr, var, cond, order)
#define LAB_COND_LOAD64(c, ptr, var, cond, order) LAB_COND_LOAD(64, c, ptr, var, cond, order)

#ifdef LAB_ENGINE_SIM
/* The CPU sleeps on the line instead of spinning: waiting costs no host time. */
#define LAB_COND_WAIT(N, c, ptr, var) lab_sim_park##N((c), (ptr), (var))
#else
#define LAB_COND_WAIT(N, c, ptr, var) lab_spin_wait((c), (ptr))
#endif

#define LAB_COND_LOAD(N, c, ptr, var, cond, order)                                                 \
	do {                                                                                       \
		for (;;) {                                                                         \
			(var) = lab_load##N((ptr), (order));                                       \
			if (cond)                                                                  \
				break;                                                             \
			LAB_COND_WAIT(N, (c), (ptr), (var));                                       \
		}                                                                                  \
	} while (0)

/* ---- a ticket spinlock built on the above (for plugins that need a plain lock) --------- */

struct lab_spinlock {
	uint32_t next;	/* next ticket to hand out */
	uint32_t owner; /* ticket now holding the lock */
};

/* Take the lock, waiting in ticket order (zeroed memory is an unlocked lock). */
LAB_INLINE void lab_spin_lock(struct lab_cpu *c, struct lab_spinlock *l)
{
	uint32_t ticket = lab_fetch_add32(&l->next, 1, LAB_RELAXED);
	uint32_t v;
	LAB_COND_LOAD32(c, &l->owner, v, v == ticket, LAB_ACQUIRE);
}

/* Take the lock if it is free now; true if taken. */
LAB_INLINE bool lab_spin_trylock(struct lab_spinlock *l)
{
	/*
	 * owner is read with acquire: the last holder's unlock is a release store of owner, and
	 * the CAS is on another word (next), so without it nothing orders the last critical
	 * section before ours (the kernel's ticket lock is one word: its cmpxchg_acquire does).
	 */
	uint32_t owner = lab_load32(&l->owner, LAB_ACQUIRE);
	return lab_cas32(&l->next, owner, owner + 1, LAB_ACQUIRE) == owner;
}

/* Release the lock to the next ticket. */
LAB_INLINE void lab_spin_unlock(struct lab_spinlock *l)
{
	/* Only the holder writes owner, so a relaxed read of it is exact. */
	lab_store32(&l->owner, lab_load32(&l->owner, LAB_RELAXED) + 1, LAB_RELEASE);
}

/* ---- the kernel's spin_lock(): a queued spinlock ------------------------------------------- */

/*
 * struct lab_qspinlock is what spinlock_t has been on arm64 since v4.18 and on x86 since v4.2
 * (kernel/locking/qspinlock.c), re-implemented on lab.h's 32-bit atomics. Free, one cmpxchg
 * takes it. One waiter sets the pending bit and spins on the lock word; more queue: each swaps
 * itself into the tail (one xchg) and spins on its own per-CPU node (lab_host.qnodes) until its
 * predecessor makes it the head, and only the head spins on the lock word. So a hand-over moves
 * the lock word to the head and one node's line to the next CPU, whatever the number of
 * waiters, where a ticket lock (lab_spinlock) has every waiter re-read the word at each
 * hand-over. The kernel keeps locked, pending and the tail in one word and updates its bytes
 * and halves on their own; lab.h has no narrower access, so here they are two words of one
 * line: `lp` (locked, pending) and `tail`. Where the kernel's one cmpxchg sees both, this one
 * reads the tail and then CASes lp, so a CPU that takes the lock on the fast path, or becomes
 * pending, has seen no queue; the queue's head takes the lock with a CAS (the kernel's byte
 * store) and clears the tail with another when it was the last; unlock is an atomic and-not of
 * the locked bit (the kernel's release store of that byte). Zeroed memory is an unlocked lock.
 * Use it where the kernel takes a spinlock_t (iova_rbtree_lock, the rcache's locks).
 */
struct lab_qspinlock {
	uint32_t lp;   /* LAB_Q_LOCKED | LAB_Q_PENDING */
	uint32_t tail; /* the last queued CPU: (cpu + 1) << 2 | its node; 0: no queue */
};

/* Per CPU, one node per context that may be queued at once (task, softirq, hardirq, NMI). */
#define LAB_QNODES 4

struct lab_qnode {
	uint32_t locked; /* set by the predecessor: this CPU is the queue's head */
	uint32_t next;	 /* the successor's tail code; 0: none linked yet */
	uint32_t count;	 /* node 0 only: this CPU's nodes in use (its own: plain) */
} LAB_CACHE_ALIGNED;

#define LAB_Q_LOCKED  1u
#define LAB_Q_PENDING (1u << 8)

/* Take the lock if it is free and nobody queues for it; true if taken (queued_spin_trylock()). */
LAB_INLINE bool lab_qspin_trylock(struct lab_qspinlock *l)
{
	return !lab_load32(&l->lp, LAB_RELAXED) && !lab_load32(&l->tail, LAB_RELAXED) &&
	       lab_cas32(&l->lp, 0, LAB_Q_LOCKED, LAB_ACQUIRE) == 0;
}

LAB_INLINE struct lab_qnode *lab_qnode_of(const struct lab_cpu *c, uint32_t tail)
{
	return &c->host->qnodes[((tail >> 2) - 1) * LAB_QNODES + (tail & 3)];
}

/* queued_spin_lock_slowpath(): lp was not free, or a queue was there. */
static inline void lab_qspin_lock_slow(struct lab_cpu *c, struct lab_qspinlock *l, uint32_t lp)
{
	struct lab_qnode *node0 = &c->host->qnodes[c->id * LAB_QNODES], *node;
	uint32_t idx, tail, old, v, next = 0;

	/* A pending waiter is taking the lock over: look once more (_Q_PENDING_LOOPS). */
	if (lp == LAB_Q_PENDING)
		lp = lab_load32(&l->lp, LAB_RELAXED);
	if (!(lp & LAB_Q_PENDING) && !lab_load32(&l->tail, LAB_RELAXED)) {
		/* Nobody pending or queued: become the pending waiter, spinning on the word. */
		lp = lab_fetch_or32(&l->lp, LAB_Q_PENDING, LAB_ACQUIRE);
		if (!(lp & LAB_Q_PENDING)) {
			if (lp & LAB_Q_LOCKED)
				LAB_COND_LOAD32(c, &l->lp, v, !(v & LAB_Q_LOCKED), LAB_ACQUIRE);
			/* clear_pending_set_locked(): nobody else changes lp while we are pending.
			 */
			lab_store32(&l->lp, LAB_Q_LOCKED, LAB_RELAXED);
			return;
		}
	}
	idx = node0->count++;
	if (idx >= LAB_QNODES) { /* nested deeper than the nodes: spin on the lock */
		while (!lab_qspin_trylock(l))
			lab_spin_wait(c, &l->lp);
		node0->count--;
		return;
	}
	node = node0 + idx;
	tail = (c->id + 1) << 2 | idx;
	lab_store32(&node->locked, 0, LAB_RELAXED);
	lab_store32(&node->next, 0, LAB_RELAXED);
	if (lab_qspin_trylock(l))
		goto release;
	/* xchg_tail(): the node's initialisation published with it (the kernel's smp_wmb()). */
	old = lab_xchg32(&l->tail, tail, LAB_ACQ_REL);
	if (old) {
		/* Link behind the previous tail and spin on our own node until we are head. */
		lab_store32(&lab_qnode_of(c, old)->next, tail, LAB_RELEASE);
		LAB_COND_LOAD32(c, &node->locked, v, v != 0, LAB_ACQUIRE);
		next = lab_load32(&node->next, LAB_RELAXED);
	}
	/* The head: wait for the owner and the pending waiter to go, then take the lock. */
	do
		LAB_COND_LOAD32(c, &l->lp, v, !(v & (LAB_Q_LOCKED | LAB_Q_PENDING)), LAB_ACQUIRE);
	while (lab_cas32(&l->lp, 0, LAB_Q_LOCKED, LAB_ACQUIRE) != 0);
	/* The last in the queue: empty it. Else hand the head on. */
	if (!next && lab_cas32(&l->tail, tail, 0, LAB_RELAXED) == tail)
		goto release;
	if (!next)
		LAB_COND_LOAD32(c, &node->next, next, next != 0, LAB_RELAXED);
	lab_store32(&lab_qnode_of(c, next)->locked, 1, LAB_RELEASE);
release:
	node0->count--;
}

/* Take the lock (queued_spin_lock()). */
LAB_INLINE void lab_qspin_lock(struct lab_cpu *c, struct lab_qspinlock *l)
{
	uint32_t lp = LAB_Q_LOCKED;

	if (!lab_load32(&l->tail, LAB_RELAXED) &&
	    !(lp = lab_cas32(&l->lp, 0, LAB_Q_LOCKED, LAB_ACQUIRE)))
		return;
	lab_qspin_lock_slow(c, l, lp);
}

/* Release it (queued_spin_unlock(): the kernel's release store of the locked byte). */
LAB_INLINE void lab_qspin_unlock(struct lab_qspinlock *l)
{
	lab_fetch_andnot32(&l->lp, LAB_Q_LOCKED, LAB_RELEASE);
}

/* ---- memory, counters, phases ------------------------------------------------------------ */

/* Zeroed, cache-line-aligned memory that every CPU may share; NULL on failure. */
static inline void *lab_alloc(const struct lab_host *h, size_t size)
{
	return h->alloc(h, size);
}

/* Free lab_alloc() memory; NULL is fine. */
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
