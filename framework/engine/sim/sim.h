/* SPDX-License-Identifier: MIT */
/*
 * sim -- the sim engine: a deterministic discrete-event simulation of an N-CPU machine on
 * one host thread, running the same workload and (sim-built) plugin code as the native
 * engine.
 *
 * Virtual CPUs are coroutines (ctx.h). Each has its own virtual clock; the CPU with the
 * earliest clock runs (ties: lowest id), so every shared-memory operation happens in
 * virtual-time order and a run is a pure function of its inputs. Every lab.h operation of a
 * sim-built plugin (lab.h, LAB_ENGINE_SIM) is priced by the memory model (mem_access() in
 * sim.c) and is a point where the CPU may be switched out; it takes effect at its completion
 * time.
 *
 * Memory model, per 64-byte line: an owner (a CPU holding it exclusive, the home node, or
 * the device) and a set of sharers. A hit costs local_ns (atomic_ns for a read-modify-write);
 * a miss costs the transfer latency between the requester and the line's holder (the
 * topology matrix, or line_ns), after the line has finished serving the transfers queued
 * before it: each transfer occupies the line for occupancy x latency, a read miss for
 * read_occupancy x it (a busy line queues requesters, first come first served).
 * Atomics are "near" (the line moves to the requester, x86) or "far" (executed at the line's
 * home, Arm LSE; the line leaves every L1), or adaptive (Neoverse N1: near while one CPU uses
 * the line, far once two CPUs' atomics meet on it).
 * A far atomic's request travels half its trip to the home, waits there while the line is
 * busy and is answered with the other half: one that queued does not pay a full round trip
 * after the line frees. It holds the line for home_hold_ns (a CAS that succeeds for
 * cas_hold_ns: read, compare, write), or occupancy x the trip when they are 0. A far CAS's
 * outcome is the one the home sees when it serves it (the value every write queued before it
 * leaves, even if that write has not reached its CPU yet), and a failing one returns that
 * newest value. One whose compare fails writes nothing, so it neither invalidates copies nor
 * moves the line; arriving at a busy line it is answered in the burst the line serves when
 * it frees (one read for all of them) and adds nothing to the line's time, arriving at an
 * idle one it holds the line for fail_hold of a hold. With N CPUs in a CAS retry loop about
 * N - 1 attempts still fail per success, but a success costs one hold plus one retry's round
 * trip whatever N (Graviton2's measured 40 ns from 7 to 16 CPUs), not a queue of N reads.
 * A near CAS that misses and fails takes the line (the next requester takes it from it) but,
 * writing nothing, rides along with the transfer a busy line is making: nothing is added.
 * A CPU in LAB_COND_LOAD* sleeps on the watched line and is woken, at the writer's completion
 * time, by any write to it, or to any other line its condition loaded (up to 4), or -- when
 * the condition read the device's CONS register -- by the device's progress: what a spinning
 * CPU would have seen. A lab_spin_wait(c, NULL) (an MMIO poll) moves its clock by poll_ns.
 *
 * The device model is an agent: the engine runs it at its next due time, before any CPU
 * whose clock is later, and wakes CPUs sleeping on words it changed (MSI writes, consumed
 * ring slots); their reload pays home_ns.
 */
#ifndef IOMMULAB_SIM_H
#define IOMMULAB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iommulab/plugin.h>

#include "engine/engine.h"
#include "scenario/scenario.h"

#define SIM_MAX_CPUS SCENARIO_SIM_MAX_CPUS

/* The machine is the scenario's [machine] section (struct scenario_machine, scenario.h). */

/* Fill m with the defaults of the [machine] table (topology NULL: uniform line_ns). */
void sim_machine_defaults(struct scenario_machine *m);

/*
 * A latency matrix: lat[i * n + j], ns, symmetric, 0 on the diagonal. CPUs beyond n are
 * mapped to core (cpu % n) of another copy of the machine; between copies the transfer
 * costs the matrix's maximum (a second socket's worth, no better measurement at hand).
 */
struct sim_topology {
	uint32_t n;
	double *lat;
	double max, median;
};

/* Load a lower-triangular CSV (line i: latencies between core i and cores 0..i-1; lines
 * starting with '#' are comments). 0 or -errno with "file:line: reason" in err. */
int sim_topology_load(const char *path, struct sim_topology *t, char *err, size_t err_len);
void sim_topology_free(struct sim_topology *t);

/* [machine] smt_ns: core's SMT sibling in t (the other core at most smt_ns away), or -1. */
int32_t sim_topology_smt_sibling(const struct sim_topology *t, uint32_t core, double smt_ns);
/* [machine] socket_ns: core's socket in t, named by its lowest core (the first within socket_ns
 * of it, or itself). */
uint32_t sim_topology_socket(const struct sim_topology *t, uint32_t core, double socket_ns);

/* The device (or any other agent) as the engine sees it. */
struct sim_agent {
	/* Virtual ns of its next action; UINT64_MAX when it has nothing to do. */
	uint64_t (*next_due)(void *arg);
	/* Act now (the clock reads the agent's due time). */
	void (*advance)(void *arg);
	/* A count that changes whenever it may have written memory (consumed commands). */
	uint64_t (*progress)(void *arg);
	void *arg;
};

/*
 * For an agent's progress(): the agent has read or written [p, p + len) since it was last
 * asked (the device consuming ring slots): those lines leave every CPU's cache, and the next
 * CPU access misses to the home. Only inside the simulation's progress() call.
 */
void sim_agent_wrote(const void *p, size_t len);

/*
 * For an agent: it has just stored into [p, p + len) (an MSI, a poisoned slot), memory CPUs
 * may be sleeping on. Only the CPUs sleeping on lines stored into are looked at when its
 * progress moves: an agent must report every store to memory a CPU may wait on.
 */
void sim_agent_stored(const void *p, size_t len);

/*
 * For an agent's registers: the running CPU has just read one (CONS). If it then sleeps in
 * a spin-wait before its op ends, the agent's progress wakes it as well as a write to the
 * watched line (its condition reads the register, which no CPU writes).
 */
void sim_read_agent(void);

/*
 * For an agent's registers under memory = arm: the running CPU has just written one (PROD, a
 * writel_relaxed()), a posted write. It takes effect as a relaxed store does, through the
 * CPU's store buffer, so the CPU's later stores may be seen first (Arm orders a Device write
 * before later Normal stores only with a barrier: a release, a fence, an rmw drain it), but
 * before the CPU's next read of one of the agent's registers (sim_drain_agent_writes: Device
 * nGnRE accesses to one device arrive in program order). apply(arg, v, now_ns) is its effect,
 * run as the agent (the clock reads its time). Under memory = sc, or outside a simulation,
 * apply runs at once.
 */
void sim_post_agent_write(void (*apply)(void *arg, uint64_t v, uint64_t now_ns), void *arg,
			  uint64_t v);

/* Before the running CPU reads one of an agent's registers: its posted writes take effect. */
void sim_drain_agent_writes(void);

/*
 * For host code on a virtual CPU (a workload writing the commands it hands a plugin): it is
 * about to write [p, p + len) with plain stores. Under memory = arm the sim remembers what
 * the words held, so another CPU's lab.h load satisfied early may still return it, as an Arm
 * core's may. Nothing natively, outside a simulation, or under memory = sc.
 */
void sim_note_host_write(const void *p, size_t len);

/*
 * For host code on a virtual CPU: ns of local work, touching nothing another CPU or the
 * device can see, after which the CPU carries on without giving way; it takes its turn at
 * its next lab.h access, device register, spin-wait or fence, or at sim_take_turn(). The
 * same virtual time as lab_delay_ns(), one coroutine switch fewer when what follows is
 * local too (the null plugin's whole op). Outside a simulation: nothing.
 */
void sim_local_work(struct lab_cpu *c, uint64_t ns);

/* Before host code on a virtual CPU looks at what others share: the turn sim_local_work left. */
void sim_take_turn(void);

/* What the engine measured about itself. */
struct sim_stats {
	uint64_t lab_ops; /* lab.h operations simulated (loads, stores, rmws, fences, delays, waits)
			   */
	uint64_t switches;	   /* coroutine switches */
	uint64_t parks;		   /* CPUs put to sleep on a line */
	uint64_t misses;	   /* line transfers */
	uint64_t lab_ops_measured; /* of lab_ops, those since measuring began */
	uint64_t misses_measured;  /* of misses, those since measuring began */
	uint64_t end_ns;	   /* virtual time at the end */
	double host_s;		   /* host seconds spent */
};

/*
 * Run job on a simulated machine: the same job and result as every engine (warm-up and
 * duration in virtual time; job->watchdog_ns is virtual too). The env's clock is switched to
 * the virtual clock for the run (so host code and the device read virtual time). topo may be
 * NULL (uniform line_ns). agent may be NULL. 0 or -errno.
 */
int sim_run(const struct engine_job *job, const struct scenario_machine *m,
	    const struct sim_topology *topo, const struct sim_agent *agent,
	    struct engine_result *res, struct sim_stats *stats);

#endif /* IOMMULAB_SIM_H */
