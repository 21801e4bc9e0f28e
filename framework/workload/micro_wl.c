/* SPDX-License-Identifier: MIT */
/*
 * micro_wl -- the micro workload (see micro_wl.h).
 *
 * The op is compiled twice from this one source, by the build: against the native binding of
 * lab.h, and with LAB_ENGINE_SIM against the sim binding (framework/engine/sim/meson.build), as
 * a plugin's .sim.so is built. Only the op differs between the two; the rest is compiled once,
 * in the native build.
 */
#include "workload/micro_wl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LAB_ENGINE_SIM
#define MICRO_OP_FN micro_wl_op_sim
#else
#define MICRO_OP_FN micro_wl_op
#endif

/* Everything the CPUs share sits in one cache line: the point of the workload. */
struct micro_line {
	struct lab_spinlock lock;
	uint64_t counter; /* atomic_add / cas_add: atomically; ticket_lock: under the lock */
} __attribute__((aligned(LAB_CACHE_LINE)));

/* Ops a CPU completed: its own line, so that counting adds no sharing to what is measured. */
struct micro_done {
	uint64_t n;
} __attribute__((aligned(LAB_CACHE_LINE)));

struct micro_wl {
	struct micro_line line;
	enum micro_op op;
	uint64_t think_ns;
	uint32_t ncpus;
	struct micro_done *done;
	char err[160];
};

int MICRO_OP_FN(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	struct micro_wl *w = arg;
	struct micro_line *l = &w->line;
	uint64_t t0 = lab_now(c), v, old;

	switch (w->op) {
	case MICRO_ATOMIC_ADD:
		lab_fetch_add64(&l->counter, 1, LAB_RELAXED);
		break;
	case MICRO_CAS_ADD:
		v = lab_load64(&l->counter, LAB_RELAXED);
		while ((old = lab_cas64(&l->counter, v, v + 1, LAB_RELAXED)) != v)
			v = old;
		break;
	default:
		lab_spin_lock(c, &l->lock);
		/* A plain increment: the lock, not an atomic, must keep it exact. */
		v = lab_load64(&l->counter, LAB_RELAXED);
		lab_store64(&l->counter, v + 1, LAB_RELAXED);
		lab_spin_unlock(&l->lock);
		break;
	}
	if (measuring)
		hist_record(&h[0], lab_now(c) - t0);
	w->done[c->id].n++; /* plain host memory, outside the model */
	lab_delay_ns(c, w->think_ns);
	return 0;
}

#ifndef LAB_ENGINE_SIM
struct micro_wl *micro_wl_new(enum micro_op op, uint64_t think_ns, uint32_t ncpus)
{
	struct micro_wl *w = aligned_alloc(LAB_CACHE_LINE, sizeof(*w));

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->done = aligned_alloc(LAB_CACHE_LINE, sizeof(*w->done) * (ncpus ? ncpus : 1));
	if (!w->done) {
		free(w);
		return NULL;
	}
	memset(w->done, 0, sizeof(*w->done) * (ncpus ? ncpus : 1));
	w->op = op;
	w->think_ns = think_ns;
	w->ncpus = ncpus;
	return w;
}

void micro_wl_free(struct micro_wl *w)
{
	if (!w)
		return;
	free(w->done);
	free(w);
}

const char *micro_wl_error(struct micro_wl *w)
{
	uint64_t done = 0;

	for (uint32_t i = 0; i < w->ncpus; i++)
		done += w->done[i].n;

	if (w->line.counter == done)
		return NULL;
	snprintf(w->err, sizeof(w->err),
		 "micro: the shared counter reads %llu after %llu ops "
		 "(lost updates)",
		 (unsigned long long)w->line.counter, (unsigned long long)done);
	return w->err;
}
#endif
