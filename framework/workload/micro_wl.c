/* SPDX-License-Identifier: MIT */
/*
 * micro_wl -- the micro workload (see micro_wl.h).
 *
 * The op is compiled twice from this one source, by the build: against the native binding of
 * lab.h, and with LAB_ENGINE_SIM against the sim binding (framework/engine/sim/meson.build), as
 * a plugin's .sim.so is built. Only the op differs between the two; the rest is compiled once,
 * in the native build.
 *
 * Latency mode times each op with one timestamp, chained: an op's end is the next op's start
 * (after its think time, which the delay's end marks), so a back-to-back op costs one clock
 * read, not two, and the loop's few ns between ops are part of each latency. Throughput mode
 * reads no clock inside the window at all: the engine's window, opened and closed once per
 * CPU, divided by the ops the CPU did is the per-thread time per op, as lockhammer and the
 * calibration data define it.
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

/* A CPU's own line, so that counting and timing add no sharing to what is measured. */
struct micro_done {
	uint64_t n;	    /* ops completed */
	uint64_t t_next;    /* the chain: when the next op starts (0: read the clock then) */
	uint32_t countdown; /* measured ops until the next timed one (sample_every) */
} __attribute__((aligned(LAB_CACHE_LINE)));

struct micro_wl {
	struct micro_line line;
	enum micro_op op;
	uint64_t think_ns;
	uint32_t ncpus;
	uint32_t sample_every; /* 0: throughput mode, no op is timed */
	struct micro_done *done;
	char err[160];
};

int MICRO_OP_FN(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	struct micro_wl *w = arg;
	struct micro_line *l = &w->line;
	struct micro_done *me = &w->done[c->id];
	uint64_t t0 = 0, v, old;
	bool timed = false;

	if (measuring && w->sample_every && --me->countdown == 0) {
		me->countdown = w->sample_every;
		timed = true;
		t0 = me->t_next ? me->t_next : lab_now(c);
	}
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
	me->n++; /* plain host memory, outside the model */
	if (!timed) {
		me->t_next = 0;
		lab_delay_ns(c, w->think_ns);
		return 0;
	}
	uint64_t t1 = lab_now(c);
	hist_record(&h[0], t1 - t0);
	lab_delay_ns(c, w->think_ns);
	/* Chain into the next op when it is timed too; after a think, its end is read once. */
	if (me->countdown == 1)
		me->t_next = w->think_ns ? lab_now(c) : t1;
	else
		me->t_next = 0;
	return 0;
}

#ifndef LAB_ENGINE_SIM
struct micro_wl *micro_wl_new(enum micro_op op, uint64_t think_ns, uint32_t ncpus,
			      uint32_t sample_every, bool throughput)
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
	w->sample_every = throughput ? 0 : sample_every ? sample_every : 1;
	for (uint32_t i = 0; i < (ncpus ? ncpus : 1); i++)
		w->done[i].countdown = w->sample_every;
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
