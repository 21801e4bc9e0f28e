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
	uint64_t counter; /* atomically, or under lock or qlock (op_counter()) */
	struct lab_qspinlock qlock;
} __attribute__((aligned(LAB_CACHE_LINE)));

/*
 * The other locks' shared words, each on a line of its own as the algorithms intend: the lock
 * word (TAS, TTAS) or queue tail (MCS, CLH), and the counter the lock protects, which the
 * holder changes with a plain load and store.
 */
struct micro_word {
	uint32_t v; /* TAS/TTAS: 1 held; MCS: last CPU queued + 1, 0 free; CLH: last node queued */
} __attribute__((aligned(LAB_CACHE_LINE)));

struct micro_data {
	uint64_t counter;
} __attribute__((aligned(LAB_CACHE_LINE)));

/* A queue lock's node, one line each: MCS one per CPU, CLH one per CPU and one spare. */
struct micro_qnode {
	uint32_t locked; /* MCS: 1 until the predecessor hands over; CLH: 1 while its CPU holds */
	uint32_t next;	 /* MCS: the successor's CPU + 1, 0 none yet */
} __attribute__((aligned(LAB_CACHE_LINE)));

/* A CPU's own line, so that counting and timing add no sharing to what is measured. */
struct micro_done {
	uint64_t n;	    /* ops completed */
	uint64_t t_next;    /* the chain: when the next op starts (0: read the clock then) */
	uint32_t countdown; /* measured ops until the next timed one (sample_every) */
	uint32_t clh_node;  /* CLH: the node this CPU owns now (it takes its predecessor's) */
	uint32_t clh_pred;  /* CLH, while holding: the predecessor's node, its next own */
} __attribute__((aligned(LAB_CACHE_LINE)));

struct micro_wl {
	struct micro_line line;
	struct micro_word word;
	struct micro_data data;
	enum micro_op op;
	uint64_t think_ns;
	uint64_t critical_ns; /* lock ops: local work while holding the lock */
	uint32_t ncpus;
	uint32_t sample_every; /* 0: throughput mode, no op is timed */
	uint32_t batch;	       /* ops per call of the native op (MICRO_BATCH in throughput mode) */
	struct micro_done *done;
	struct micro_qnode *nodes; /* ncpus + 1 */
	char err[160];
};

/*
 * A failed test-and-set: natively one pause and the host's spin hook (the watchdog, the
 * device model). On the sim nothing: the next xchg is the wait, and taking the line on every
 * attempt, as a real TAS loop does, is what this lock is measured for (parking the CPU until
 * the line is written would make it a TTAS).
 */
static inline void tas_retry(struct lab_cpu *c, const void *word)
{
#ifdef LAB_ENGINE_SIM
	(void)c;
	(void)word;
#else
	lab_spin_wait(c, word);
#endif
}

/* A critical section: critical_ns of work, then a plain increment of *counter. */
static inline void critical_work(struct micro_wl *w, struct lab_cpu *c, uint64_t *counter)
{
	uint64_t v;

	if (w->critical_ns) /* none: not even the delay's lab.h operation (the sim counts it) */
		lab_delay_ns(c, w->critical_ns);
	/* A plain increment: the lock, not an atomic, must keep it exact. */
	v = lab_load64(counter, LAB_RELAXED);
	lab_store64(counter, v + 1, LAB_RELAXED);
}

/* The critical section of the locks with their own counter line. */
static inline void locked_work(struct micro_wl *w, struct lab_cpu *c)
{
	critical_work(w, c, &w->data.counter);
}

static void tas_op(struct micro_wl *w, struct lab_cpu *c)
{
	while (lab_xchg32(&w->word.v, 1, LAB_ACQUIRE))
		tas_retry(c, &w->word.v);
	locked_work(w, c);
	lab_store32(&w->word.v, 0, LAB_RELEASE);
}

static void ttas_op(struct micro_wl *w, struct lab_cpu *c)
{
	uint32_t v;

	for (;;) {
		/* Spin on a shared copy; only a word seen free is worth taking the line for, with
		 * a CAS (libslock's CAS_U8): one that finds the lock taken writes nothing. */
		LAB_COND_LOAD32(c, &w->word.v, v, v == 0, LAB_RELAXED);
		if (!lab_cas32(&w->word.v, 0, 1, LAB_ACQUIRE))
			break;
	}
	locked_work(w, c);
	lab_store32(&w->word.v, 0, LAB_RELEASE);
}

static void mcs_op(struct micro_wl *w, struct lab_cpu *c)
{
	struct micro_qnode *me = &w->nodes[c->id];
	uint32_t self = c->id + 1, prev, nx, v;

	lab_store32(&me->next, 0, LAB_RELAXED);
	lab_store32(&me->locked, 1, LAB_RELAXED);
	/* Release: the node's reset is visible before a successor can find it through the tail. */
	prev = lab_xchg32(&w->word.v, self, LAB_ACQ_REL);
	if (prev) {
		lab_store32(&w->nodes[prev - 1].next, self, LAB_RELEASE);
		LAB_COND_LOAD32(c, &me->locked, v, v == 0, LAB_ACQUIRE);
	}
	locked_work(w, c);
	nx = lab_load32(&me->next, LAB_ACQUIRE);
	if (!nx) {
		/* Nobody linked behind us yet: free the lock, unless one is between xchg and link.
		 */
		if (lab_cas32(&w->word.v, self, 0, LAB_RELEASE) == self)
			return;
		LAB_COND_LOAD32(c, &me->next, nx, nx != 0, LAB_ACQUIRE);
	}
	lab_store32(&w->nodes[nx - 1].locked, 0, LAB_RELEASE);
}

static void clh_op(struct micro_wl *w, struct lab_cpu *c)
{
	struct micro_done *me = &w->done[c->id];
	uint32_t mine = me->clh_node, pred, v;

	lab_store32(&w->nodes[mine].locked, 1, LAB_RELAXED);
	pred = lab_xchg32(&w->word.v, mine, LAB_ACQ_REL);
	LAB_COND_LOAD32(c, &w->nodes[pred].locked, v, v == 0, LAB_ACQUIRE);
	locked_work(w, c);
	lab_store32(&w->nodes[mine].locked, 0, LAB_RELEASE);
	/* The predecessor's node is nobody's now: it is this CPU's for its next acquisition. */
	me->clh_node = pred;
}

/* One op of the primitive on the shared line(s). */
static inline void one_op(struct micro_wl *w, struct lab_cpu *c)
{
	struct micro_line *l = &w->line;
	uint64_t v, old;

	switch (w->op) {
	case MICRO_ATOMIC_ADD:
		lab_fetch_add64(&l->counter, 1, LAB_RELAXED);
		break;
	case MICRO_CAS_ADD:
		v = lab_load64(&l->counter, LAB_RELAXED);
		while ((old = lab_cas64(&l->counter, v, v + 1, LAB_RELAXED)) != v)
			v = old;
		break;
	case MICRO_TICKET_LOCK:
		lab_spin_lock(c, &l->lock);
		critical_work(w, c, &l->counter);
		lab_spin_unlock(&l->lock);
		break;
	case MICRO_TAS_LOCK:
		tas_op(w, c);
		break;
	case MICRO_TTAS_LOCK:
		ttas_op(w, c);
		break;
	case MICRO_MCS_LOCK:
		mcs_op(w, c);
		break;
	case MICRO_QSPIN_LOCK:
		/* As ticket_lock: the counter shares the lock's line (the queue nodes are the
		 * host's, one line each). */
		lab_qspin_lock(c, &l->qlock);
		critical_work(w, c, &l->counter);
		lab_qspin_unlock(&l->qlock);
		break;
	default:
		clh_op(w, c);
		break;
	}
}

int MICRO_OP_FN(void *arg, struct lab_cpu *c, struct hist *h, bool measuring)
{
	struct micro_wl *w = arg;
	struct micro_done *me = &w->done[c->id];
	uint64_t t0 = 0;

	if (!(measuring && w->sample_every && --me->countdown == 0)) {
		/*
		 * Untimed: natively, throughput mode's batch of ops per call (the engine counts
		 * them), so the loop around the primitive is as tight as lockhammer's; on the sim
		 * one, as every op there is priced anyway.
		 */
#ifdef LAB_ENGINE_SIM
		const uint32_t batch = 1;
#else
		const uint32_t batch = w->batch;
#endif
		for (uint32_t k = 0; k < batch; k++) {
			one_op(w, c);
			me->n++; /* plain host memory, outside the model */
			lab_delay_ns(c, w->think_ns);
		}
		me->t_next = 0;
		return 0;
	}
	me->countdown = w->sample_every;
	t0 = me->t_next ? me->t_next : lab_now(c);
	one_op(w, c);
	me->n++;
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
	w->nodes = aligned_alloc(LAB_CACHE_LINE, sizeof(*w->nodes) * (ncpus + 1));
	if (!w->nodes) {
		free(w->done);
		free(w);
		return NULL;
	}
	memset(w->nodes, 0, sizeof(*w->nodes) * (ncpus + 1));
	w->sample_every = throughput ? 0 : sample_every ? sample_every : 1;
	w->batch = 1;
	for (uint32_t i = 0; i < (ncpus ? ncpus : 1); i++) {
		w->done[i].countdown = w->sample_every;
		w->done[i].clh_node = i;
	}
	/* CLH starts with the spare node, unlocked, as the tail: the first CPU waits on nothing. */
	w->word.v = op == MICRO_CLH_LOCK ? ncpus : 0;
	w->op = op;
	w->think_ns = think_ns;
	w->ncpus = ncpus;
	return w;
}

void micro_wl_set_batch(struct micro_wl *w, uint32_t batch)
{
	w->batch = batch ? batch : 1;
}

uint32_t micro_wl_batch(void *w)
{
	return ((struct micro_wl *)w)->batch;
}

void micro_wl_set_critical(struct micro_wl *w, uint64_t critical_ns)
{
	w->critical_ns = critical_ns;
}

void micro_wl_free(struct micro_wl *w)
{
	if (!w)
		return;
	free(w->nodes);
	free(w->done);
	free(w);
}

/*
 * The counter an op keeps: the shared line's for the atomics and for the locks whose word shares
 * that line (ticket, queued), the data line's for the others.
 */
static const uint64_t *op_counter(const struct micro_wl *w)
{
	switch (w->op) {
	case MICRO_ATOMIC_ADD:
	case MICRO_CAS_ADD:
	case MICRO_TICKET_LOCK:
	case MICRO_QSPIN_LOCK:
		return &w->line.counter;
	default:
		return &w->data.counter;
	}
}

const char *micro_wl_error(struct micro_wl *w)
{
	uint64_t done = 0;

	uint64_t counter = *op_counter(w);

	for (uint32_t i = 0; i < w->ncpus; i++)
		done += w->done[i].n;

	if (counter == done)
		return NULL;
	snprintf(w->err, sizeof(w->err),
		 "micro: the shared counter reads %llu after %llu ops "
		 "(lost updates)",
		 (unsigned long long)counter, (unsigned long long)done);
	return w->err;
}
#endif
