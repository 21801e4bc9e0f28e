/* SPDX-License-Identifier: MIT */
/*
 * micro_wl -- the micro workload: every CPU repeatedly does one primitive on one shared cache
 * line, through lab.h, so that both engines run it and the sim's memory model can be checked
 * against measured hardware (configs/calibration/, `iommulab calibrate`):
 *   atomic_add   one fetch-and-add on a shared counter (LSE ldadd on Arm, lock xadd on x86);
 *   cas_add      a load, then a compare-and-swap retry loop adding one to that counter;
 *   ticket_lock  a ticket spinlock (lab_spin_lock) around a plain increment of a counter in
 *                the same line as the lock.
 * These are the `atomic add`, `cas add` and `ticket spin` implementations of
 * travisdowns/concurrency-hierarchy-bench, whose Nanos/Op is the per-thread time per op.
 * The other locks of mctop's lock curves (configs/calibration/mctop-*), each around a plain
 * increment of a counter on a line of its own (the data the lock protects):
 *   tas_lock     test-and-set: xchg until it returns 0, the line taken by every attempt;
 *   ttas_lock    test-and-test-and-set: wait until the word reads 0, then CAS it 0 -> 1 (as
 *                libslock's ttas, the EPFL lab's locks behind mctop's curves);
 *   mcs_lock     Mellor-Crummey and Scott: a queue of per-CPU nodes, each CPU spinning on
 *                its own node until its predecessor hands over;
 *   clh_lock     Craig, Landin and Hagersten: each CPU spins on its predecessor's node and
 *                takes that node over when it releases.
 * And the kernel's spin_lock(), against lockhammer's queued_spinlock (a port of the kernel's):
 *   qspin_lock   lab.h's queued spinlock (struct lab_qspinlock, the host's per-CPU queue
 *                nodes) around a plain increment of a counter in the lock's line.
 * Every lock op can hold its lock for critical_ns of local work (micro_wl_set_critical).
 */
#ifndef IOMMULAB_MICRO_WL_H
#define IOMMULAB_MICRO_WL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/lab.h>

#include "stats/histogram.h"

enum micro_op {
	MICRO_ATOMIC_ADD = 0,
	MICRO_CAS_ADD,
	MICRO_TICKET_LOCK,
	MICRO_TAS_LOCK,
	MICRO_TTAS_LOCK,
	MICRO_MCS_LOCK,
	MICRO_CLH_LOCK,
	MICRO_QSPIN_LOCK,
	MICRO_N_OPS
};
enum micro_mode { MICRO_LATENCY = 0, MICRO_THROUGHPUT };

struct micro_wl;

/*
 * think_ns: local work after each op (0: back to back, as the benchmark). sample_every: time
 * every N-th measured op (1: all). throughput: time none (the latency histogram stays empty;
 * the per-thread ns per op is the CPU's window over its ops). NULL when out of memory.
 */
struct micro_wl *micro_wl_new(enum micro_op op, uint64_t think_ns, uint32_t ncpus,
			      uint32_t sample_every, bool throughput);
void micro_wl_free(struct micro_wl *w);

/*
 * Throughput mode's native op does this many ops per call (the engine counts them:
 * engine_job.ops_per_call), so the loop around the primitive costs what lockhammer's does;
 * the sim's op does one. Runs of an exact op count keep one per call.
 */
#define MICRO_BATCH 16
void micro_wl_set_batch(struct micro_wl *w, uint32_t batch);
uint32_t micro_wl_batch(void *w);

/* Local work done while holding the lock, before the increment (lock ops only: atomic_add and
 * cas_add hold no lock, and ignore it). */
void micro_wl_set_critical(struct micro_wl *w, uint64_t critical_ns);

/* One op, native build (a native_op_fn; metric 0 is the op's latency). */
int micro_wl_op(void *arg, struct lab_cpu *c, struct hist *h, bool measuring);
/* The same op built against the sim binding of lab.h (built by framework/engine/sim/meson.build).
 */
int micro_wl_op_sim(void *arg, struct lab_cpu *c, struct hist *h, bool measuring);

/* After a trial: NULL, or why the shared counter disagrees with the ops done (lost updates). */
const char *micro_wl_error(struct micro_wl *w);

#endif /* IOMMULAB_MICRO_WL_H */
