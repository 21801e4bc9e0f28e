/* SPDX-License-Identifier: MIT */
/*
 * host -- the native implementation of the services behind lab.h: shared allocation (with
 * accounting and optional fault injection), the clock, one struct lab_cpu per CPU with its
 * counter slots, and the spin hook that every LAB_COND_LOAD* iteration calls.
 *
 * The spin hook is where the host gets control while a plugin waits: it runs the registered
 * idle callback (the device model advances itself there when it has no thread of its own)
 * and, when the trial is being abandoned (watchdog, protocol violation), unwinds the waiting
 * CPU to its worker loop with longjmp so a hung plugin cannot hold the run.
 */
#ifndef IOMMULAB_HOST_H
#define IOMMULAB_HOST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include <iommulab/lab.h>

struct host_env;

/*
 * ncpus CPUs, each with n_counters counter slots; phases_on sets lab_cpu.phases_on.
 * virtual_time: the CPUs are a sim's, which replaces the clock with its own virtual one, so the
 * cycle counter is not calibrated (CLOCK_MONOTONIC stands in until then): a test framework
 * that runs each trial in a freshly executed process paid the 20 ms calibration per trial.
 */
struct host_env *host_env_new(uint32_t ncpus, uint32_t n_counters, bool phases_on,
			      bool virtual_time);
void host_env_free(struct host_env *env);

const struct lab_host *host_env_host(struct host_env *env);
struct lab_cpu *host_env_cpu(struct host_env *env, uint32_t cpu);
const struct lab_clock *host_env_clock(struct host_env *env);
uint32_t host_env_ncpus(const struct host_env *env);

/*
 * Replace the env's clock by clk, the old one saved to *saved (NULL: not kept): every holder
 * of host_env_clock()'s pointer (the CPUs, the device) reads the new one. The sim installs
 * its virtual clock for the length of a run this way and puts the host's back after it.
 */
void host_env_set_clock(struct host_env *env, const struct lab_clock *clk, struct lab_clock *saved);

/* Called from every spin-wait iteration of any CPU (NULL to clear). */
void host_env_set_idle(struct host_env *env, void (*idle)(struct lab_cpu *c, void *arg), void *arg);

/*
 * From now on, lab_alloc() carves memory from a single-threaded arena whose reuse depends
 * only on the sequence of allocations and frees, not on malloc's state (the sim, which
 * prices memory per line by address, must not see the host's heap). Earlier allocations are
 * still freed correctly. zeroing, when set, is told of every arena allocation's payload just
 * before lab_alloc() zeroes it with plain stores (the sim then forgets what lab.h left in a
 * freed line the arena hands out again). 0 or -ENOMEM. Not for threads allocating
 * concurrently.
 */
int host_env_use_arena(struct host_env *env, void (*zeroing)(const void *p, size_t len));

/* Make every N-th lab_alloc() fail (0: never). */
void host_env_set_alloc_fault(struct host_env *env, uint64_t every_n);

/*
 * Natively, how many lab_alloc() blocks a plugin wrote past the end of (their canary changed:
 * host.c), those freed and those still live; what the first one was, in what (may be NULL).
 */
uint64_t host_env_overruns(struct host_env *env, char *what, size_t len);

/* Live allocations and bytes (for leak checks and memory reports). */
uint64_t host_env_live_allocs(const struct host_env *env);
uint64_t host_env_live_bytes(const struct host_env *env);

/*
 * Abandoning a trial. A worker arms its CPU with a sigjmp_buf (host_cpu_arm) before calling into
 * the plugin; host_env_abort() makes every armed CPU that spins (or calls host_cpu_check)
 * siglongjmp there with value 1. host_cpu_disarm when done.
 */
void host_cpu_arm(struct lab_cpu *c, sigjmp_buf *bail);
void host_cpu_disarm(struct lab_cpu *c);
void host_env_abort(struct host_env *env);
void host_cpu_check(struct lab_cpu *c);

/*
 * For CPUs stuck outside any spin-wait (a livelocked CAS loop): install once a signal handler
 * that unwinds an armed CPU, and send that signal to a thread. host_signal_bail() is called by
 * the handler with the CPU the thread runs as (set with host_thread_set_cpu).
 */
int host_install_bail_signal(void);
void host_thread_set_cpu(struct lab_cpu *c);
int host_bail_thread(unsigned long thread); /* pthread_t; 0 or -errno */

/* Zero one CPU's counters of kind EVENTS and its phase times (the end of its warm-up). Only
 * the CPU itself may call this while the trial runs. */
void host_cpu_reset_events(struct lab_cpu *c, const struct lab_counter *counters,
			   uint32_t n_counters);

/*
 * Bracket a call into a plugin for the phase breakdown: the plugin's lab_phase() marks are
 * charged from t_enter, and the phase still open when it returns is closed at t_leave (the
 * workload's own timestamps, so bracketing costs no extra clock read).
 */
static inline void host_cpu_enter_plugin(struct lab_cpu *c, uint64_t t_enter)
{
	c->phase_start = t_enter;
}

static inline void host_cpu_leave_plugin(struct lab_cpu *c, uint64_t t_leave)
{
	if (!c->phases_on)
		return;
	c->phase_ns[c->phase] += t_leave - c->phase_start;
	__atomic_store_n(&c->phase, 0, __ATOMIC_RELAXED);
}

#endif /* IOMMULAB_HOST_H */
