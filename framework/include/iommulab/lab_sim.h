/* SPDX-License-Identifier: MIT */
/*
 * lab_sim.h -- the sim binding of lab.h: the functions the iommulab executable exports for
 * plugins built with -DLAB_ENGINE_SIM (their <kind>-<name>.sim.so twins).
 *
 * A plugin does not include this file or call these functions: lab.h includes it under
 * LAB_ENGINE_SIM and maps every lab_* operation onto them (the atomics through the table
 * LAB_ATOMICS). The sim engine (framework/engine/sim/sim.c) defines them: each is a point
 * where the calling virtual CPU's time advances and where it may be switched out.
 *
 * This is an ABI between a .sim.so and the executable, covered by the plugin ABI major
 * (plugin.h): the names, the signatures and the values of enum lab_sim_rmw do not change.
 * The memory order o is an enum lab_order passed as int; the sim executes every access
 * sequentially consistent. Outside a simulation (a trial's setup and teardown on the host
 * thread) each does the plain operation, unpriced.
 */
#ifndef IOMMULAB_LAB_SIM_H
#define IOMMULAB_LAB_SIM_H

#include <stdint.h>

struct lab_cpu;

/*
 * What lab_sim_rmw32/64() does to *p; every one returns the value found. For LAB_SIM_CAS
 * a is the expected and b the new value; for the others a is the operand and b is unused.
 * The values are ABI: new kinds only at the end.
 */
enum lab_sim_rmw {
	LAB_SIM_CAS = 0,    /* *p = *p == a ? b : *p */
	LAB_SIM_XCHG = 1,   /* *p = a */
	LAB_SIM_ADD = 2,    /* *p += a */
	LAB_SIM_SUB = 3,    /* *p -= a */
	LAB_SIM_AND = 4,    /* *p &= a */
	LAB_SIM_ANDNOT = 5, /* *p &= ~a */
	LAB_SIM_OR = 6,	    /* *p |= a */
	LAB_SIM_XOR = 7,    /* *p ^= a */
};

/* Exported by the executable, so visible even from a plugin built -fvisibility=hidden. */
#define LAB_SIM_API __attribute__((visibility("default")))

/* The running virtual CPU's time, ns (lab_now()). */
LAB_SIM_API uint64_t lab_sim_now(const struct lab_cpu *c);
/* Local work: advance the running CPU's time by ns (lab_delay_ns()). */
LAB_SIM_API void lab_sim_delay(struct lab_cpu *c, uint64_t ns);
/* Shared-memory accesses, priced by the memory model (lab_load*, lab_store*). */
LAB_SIM_API uint32_t lab_sim_load32(const uint32_t *p, int o);
LAB_SIM_API uint64_t lab_sim_load64(const uint64_t *p, int o);
LAB_SIM_API void lab_sim_store32(uint32_t *p, uint32_t v, int o);
LAB_SIM_API void lab_sim_store64(uint64_t *p, uint64_t v, int o);
/* A read-modify-write, op an enum lab_sim_rmw (lab_cas*, lab_xchg*, lab_fetch_*). */
LAB_SIM_API uint32_t lab_sim_rmw32(uint32_t *p, int op, uint32_t a, uint32_t b, int o);
LAB_SIM_API uint64_t lab_sim_rmw64(uint64_t *p, int op, uint64_t a, uint64_t b, int o);
/* lab_fence(): a local cost; ordering is the next shared access's turn. */
LAB_SIM_API void lab_sim_fence(int o);
/* Park the calling CPU on p's line until the line is written (seen: the value just read). */
LAB_SIM_API void lab_sim_park32(struct lab_cpu *c, const uint32_t *p, uint32_t seen);
LAB_SIM_API void lab_sim_park64(struct lab_cpu *c, const uint64_t *p, uint64_t seen);
/* lab_spin_wait(): NULL polls (an MMIO register): time moves by the machine's poll interval. */
LAB_SIM_API void lab_sim_spin_wait(struct lab_cpu *c, const void *watched);

#endif /* IOMMULAB_LAB_SIM_H */
