/* SPDX-License-Identifier: MIT */
/* probe -- core-to-core latency, atomic and timer costs of this machine (see probe.h). */
#include "probe/probe.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <iommulab/lab.h>

#include "engine/clock.h"

#define PROBE_WARMUP	100u /* round trips before timing starts */
#define PROBE_SIM_OP_NS 0.5  /* [machine] op_ns's default (scenario/tables.c) for the hints */

/* One pair's measurement. flag is the cache line that travels; the rest sits on another. */
struct pingpong {
	_Alignas(64) uint64_t flag;
	_Alignas(64) uint32_t ready; /* the pong thread is pinned and spinning */
	uint32_t stop;		     /* the ping thread is done (or one side failed) */
	int err_ping, err_pong;
	int cpu_ping, cpu_pong;
	unsigned iters;
	double one_way_ns;
	const struct lab_clock *clk;
};

static int pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int cas64(uint64_t *p, uint64_t old, uint64_t new)
{
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void *pong_main(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t k = 0;

	pp->err_pong = pin_self(pp->cpu_pong);
	if (pp->err_pong) {
		__atomic_store_n(&pp->stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&pp->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		while (!cas64(&pp->flag, 2 * k + 1, 2 * k + 2)) {
			if (__atomic_load_n(&pp->stop, __ATOMIC_ACQUIRE))
				return NULL;
		}
		k++;
	}
}

static void *ping_main(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t total = PROBE_WARMUP + pp->iters, t0 = 0, t1 = 0;

	pp->err_ping = pin_self(pp->cpu_ping);
	if (pp->err_ping)
		goto out;
	while (!__atomic_load_n(&pp->ready, __ATOMIC_ACQUIRE))
		if (__atomic_load_n(&pp->stop, __ATOMIC_ACQUIRE))
			goto out;
	/* CAS k succeeds once the pong side answered round trip k-1. */
	for (uint64_t k = 0; k <= total; k++) {
		while (!cas64(&pp->flag, 2 * k, 2 * k + 1)) {
			if (__atomic_load_n(&pp->stop, __ATOMIC_ACQUIRE)) {
				pp->err_ping = -EIO;
				goto out;
			}
		}
		if (k == PROBE_WARMUP)
			t0 = lab_clock_ns(pp->clk);
	}
	t1 = lab_clock_ns(pp->clk);
	pp->one_way_ns = (double)(t1 - t0) / pp->iters / 2.0;
out:
	__atomic_store_n(&pp->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One measurement of the pair (a, b): 0 or -errno. */
static int pingpong_once(const struct lab_clock *clk, int a, int b, unsigned iters, double *ns)
{
	struct pingpong *pp = aligned_alloc(64, sizeof(*pp));
	pthread_t tp, tq;
	int rc;

	if (!pp)
		return -ENOMEM;
	memset(pp, 0, sizeof(*pp));
	pp->cpu_ping = a;
	pp->cpu_pong = b;
	pp->iters = iters;
	pp->clk = clk;
	rc = -pthread_create(&tq, NULL, pong_main, pp);
	if (rc)
		goto out;
	rc = -pthread_create(&tp, NULL, ping_main, pp);
	if (rc) {
		__atomic_store_n(&pp->stop, 1, __ATOMIC_RELEASE);
		pthread_join(tq, NULL);
		goto out;
	}
	pthread_join(tp, NULL);
	pthread_join(tq, NULL);
	rc = pp->err_pong ? pp->err_pong : pp->err_ping;
	*ns = pp->one_way_ns;
out:
	free(pp);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* ---- isolated transfers: one CPU reads lines the other has just written ---------------------- */

/*
 * What the sim's matrix means: the latency of one miss served from another core's cache, with
 * nothing else going on. The holder writes XFER_LINES lines (they sit modified in its cache),
 * then the requester follows them as a pointer chain, so the misses are serialised by their
 * data dependency (no fences; the timer's resolution is divided by XFER_LINES), and chases the
 * chain again, now in its own cache, to subtract the hits' cost. The lines are every other
 * 64-byte line of one page in a shuffled order: no adjacent-line pair and no stride for a
 * prefetcher to fetch them early. The two roles swap at every step; the median step is kept.
 */
#define XFER_LINES  32u
#define XFER_STRIDE 128u /* bytes between lines: never two of a 128-byte prefetch pair */
#define XFER_WARMUP 8u	 /* steps not kept */

struct xfer_job {
	_Alignas(4096) unsigned char page[XFER_LINES * XFER_STRIDE];
	_Alignas(64) uint64_t turn; /* 2 x step + 1: the requester's go; 2 x step + 2: done */
	_Alignas(64) uint32_t ready, stop;
	unsigned steps;
	unsigned order[XFER_LINES]; /* the chain: line order[k] points to order[k + 1] */
	const struct lab_clock *clk;
	double *samples; /* steps - XFER_WARMUP */
	int cpu[2], err[2];
};

struct xfer_arg {
	struct xfer_job *j;
	unsigned me;
};

static void **xfer_line(struct xfer_job *j, unsigned i)
{
	return (void **)(void *)&j->page[i * XFER_STRIDE];
}

/* One dependent walk of the chain; returns the last pointer so the loads cannot be dropped. */
static void *xfer_chase(struct xfer_job *j)
{
	void *p = xfer_line(j, j->order[0]);

	for (unsigned k = 0; k < XFER_LINES; k++)
		p = *(void *volatile *)p;
	return p;
}

/*
 * The clock, once every earlier instruction (the chase's loads) has completed and before any
 * later one starts: a plain counter read executes out of order, as soon as it is decoded.
 */
static uint64_t xfer_clock(const struct lab_clock *clk)
{
	uint64_t t;

#if defined(__x86_64__)
	__asm__ __volatile__("lfence" ::: "memory");
	t = lab_clock_ns(clk);
	__asm__ __volatile__("lfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb ish" ::: "memory");
	t = lab_clock_ns(clk); /* reads cntvct_el0 after an isb */
	__asm__ __volatile__("isb" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	t = lab_clock_ns(clk);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	return t;
}

static bool xfer_wait(struct xfer_job *j, uint64_t want)
{
	while (__atomic_load_n(&j->turn, __ATOMIC_ACQUIRE) != want)
		if (__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static void *xfer_main(void *arg)
{
	struct xfer_arg *a = arg;
	struct xfer_job *j = a->j;
	void *sink = NULL;

	j->err[a->me] = pin_self(j->cpu[a->me]);
	__atomic_add_fetch(&j->ready, 1, __ATOMIC_ACQ_REL);
	if (j->err[a->me]) {
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	while (__atomic_load_n(&j->ready, __ATOMIC_ACQUIRE) < 2)
		;
	for (unsigned st = 0; st < j->steps; st++) {
		if (st % 2 == a->me) { /* holder: make every line modified here */
			if (!xfer_wait(j, 2ull * st))
				return NULL;
			for (unsigned k = 0; k < XFER_LINES; k++)
				*xfer_line(j, j->order[k]) =
					xfer_line(j, j->order[(k + 1) % XFER_LINES]);
			__atomic_store_n(&j->turn, 2ull * st + 1, __ATOMIC_RELEASE);
			continue;
		}
		if (!xfer_wait(j, 2ull * st + 1))
			return NULL;
		uint64_t t0 = xfer_clock(j->clk);
		sink = xfer_chase(j);
		uint64_t t1 = xfer_clock(j->clk);
		sink = xfer_chase(j);
		uint64_t t2 = xfer_clock(j->clk);
		double remote = (double)(t1 - t0), local = (double)(t2 - t1);
		if (st >= XFER_WARMUP)
			j->samples[st - XFER_WARMUP] =
				(remote > local ? remote - local : 0) / XFER_LINES;
		__atomic_store_n(&j->turn, 2ull * st + 2, __ATOMIC_RELEASE);
	}
	__asm__ __volatile__("" ::"r"(sink));
	return NULL;
}

/* The isolated transfer between CPUs a and b, ns: the median over both directions. */
static int xfer_pair(const struct lab_clock *clk, int a, int b, unsigned rounds, double *ns)
{
	struct xfer_job *j = aligned_alloc(4096, sizeof(*j));
	struct xfer_arg args[2];
	pthread_t th[2];
	unsigned started = 0;
	int rc = 0;

	if (!j)
		return -ENOMEM;
	memset(j, 0, sizeof(*j));
	j->steps = XFER_WARMUP + 16 * rounds;
	j->samples = calloc(j->steps - XFER_WARMUP, sizeof(*j->samples));
	if (!j->samples) {
		free(j);
		return -ENOMEM;
	}
	j->clk = clk;
	j->cpu[0] = a;
	j->cpu[1] = b;
	/* A fixed shuffle (Fisher-Yates with a small LCG): the same chain on every run. */
	for (unsigned k = 0; k < XFER_LINES; k++)
		j->order[k] = k;
	for (unsigned k = XFER_LINES - 1, x = 12345; k > 0; k--) {
		x = x * 1103515245u + 12345u;
		unsigned r = (x >> 16) % (k + 1), t = j->order[k];
		j->order[k] = j->order[r];
		j->order[r] = t;
	}
	for (; started < 2; started++) {
		args[started] = (struct xfer_arg){ j, started };
		rc = -pthread_create(&th[started], NULL, xfer_main, &args[started]);
		if (rc) {
			__atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
			__atomic_add_fetch(&j->ready, 2 - started, __ATOMIC_ACQ_REL);
			break;
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (!rc)
		rc = j->err[0] ? j->err[0] : j->err[1];
	if (!rc && __atomic_load_n(&j->stop, __ATOMIC_ACQUIRE))
		rc = -EIO;
	if (!rc)
		*ns = median(j->samples, j->steps - XFER_WARMUP);
	free(j->samples);
	free(j);
	return rc;
}

/* ---- uncontended atomics, on one pinned thread ---------------------------------------- */

struct atomics_job {
	_Alignas(64) uint64_t word;
	const struct lab_clock *clk;
	int cpu;
	unsigned rounds, iters;
	double *samples; /* rounds */
	double add_ns, cas_ns;
	int err;
};

static void *atomics_main(void *arg)
{
	struct atomics_job *j = arg;

	j->err = pin_self(j->cpu);
	if (j->err)
		return NULL;
	for (unsigned r = 0; r < j->rounds; r++) {
		uint64_t t0 = lab_clock_ns(j->clk);
		for (unsigned i = 0; i < j->iters; i++)
			__atomic_fetch_add(&j->word, 1, __ATOMIC_SEQ_CST);
		j->samples[r] = (double)(lab_clock_ns(j->clk) - t0) / j->iters;
	}
	j->add_ns = median(j->samples, j->rounds);
	for (unsigned r = 0; r < j->rounds; r++) {
		uint64_t t0 = lab_clock_ns(j->clk);
		for (unsigned i = 0; i < j->iters; i++) {
			uint64_t old = __atomic_load_n(&j->word, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&j->word, &old, old + 1, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
		}
		j->samples[r] = (double)(lab_clock_ns(j->clk) - t0) / j->iters;
	}
	j->cas_ns = median(j->samples, j->rounds);
	return NULL;
}

static int measure_atomics(const struct lab_clock *clk, int cpu, unsigned rounds,
			   struct probe_result *r)
{
	struct atomics_job *j = aligned_alloc(64, sizeof(*j));
	pthread_t t;
	int rc;

	if (!j)
		return -ENOMEM;
	memset(j, 0, sizeof(*j));
	j->clk = clk;
	j->cpu = cpu;
	j->rounds = rounds;
	j->iters = 100000;
	j->samples = calloc(rounds, sizeof(*j->samples));
	if (!j->samples) {
		free(j);
		return -ENOMEM;
	}
	rc = -pthread_create(&t, NULL, atomics_main, j);
	if (!rc) {
		pthread_join(t, NULL);
		rc = j->err;
	}
	r->atomic_add_ns = j->add_ns;
	r->cas_ns = j->cas_ns;
	free(j->samples);
	free(j);
	return rc;
}

/* ---- contended atomics: two pinned threads on one line ------------------------------------ */

/*
 * Both threads run the same loop on one word for PROBE_CONTEND_NS; thread 0 keeps the time
 * (reading the clock every PROBE_CLOCK_EVERY ops, so the clock is no part of what is measured)
 * and raises stop. Per-thread ns per op is wall time x threads / total ops, the definition of
 * concurrency-hierarchy-bench's Nanos/Op (configs/calibration/graviton2-atomics.csv).
 */
#define PROBE_CONTEND_NS      5000000ull /* 5 ms per measurement */
#define PROBE_CLOCK_EVERY     64u
#define PROBE_CONTEND_THREADS 2u

enum contend_op { CONTEND_ADD, CONTEND_CAS };

struct contend_thread {
	_Alignas(64) uint64_t ops; /* increments done */
	uint64_t tries;		   /* CAS attempts (CONTEND_CAS) */
	uint64_t wall_ns;	   /* thread 0: from go to stop */
	int cpu, err;
	struct contend_job *job;
	unsigned idx;
};

struct contend_job {
	_Alignas(64) uint64_t word; /* the contended line */
	_Alignas(64) uint32_t ready, go, stop;
	enum contend_op op;
	const struct lab_clock *clk;
	struct contend_thread t[PROBE_CONTEND_THREADS];
};

static void *contend_main(void *arg)
{
	struct contend_thread *me = arg;
	struct contend_job *j = me->job;
	uint64_t ops = 0, tries = 0, t0 = 0;

	me->err = pin_self(me->cpu);
	__atomic_add_fetch(&j->ready, 1, __ATOMIC_ACQ_REL);
	if (me->err) {
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	if (me->idx == 0) {
		while (__atomic_load_n(&j->ready, __ATOMIC_ACQUIRE) < PROBE_CONTEND_THREADS)
			;
		t0 = lab_clock_ns(j->clk);
		__atomic_store_n(&j->go, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&j->go, __ATOMIC_ACQUIRE))
			if (__atomic_load_n(&j->stop, __ATOMIC_ACQUIRE))
				return NULL;
	}
	while (!__atomic_load_n(&j->stop, __ATOMIC_RELAXED)) {
		for (unsigned k = 0; k < PROBE_CLOCK_EVERY; k++, ops++) {
			if (j->op == CONTEND_ADD) {
				__atomic_fetch_add(&j->word, 1, __ATOMIC_SEQ_CST);
				continue;
			}
			uint64_t v = __atomic_load_n(&j->word, __ATOMIC_RELAXED);
			do
				tries++;
			while (!__atomic_compare_exchange_n(&j->word, &v, v + 1, false,
							    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
		}
		if (me->idx == 0) {
			uint64_t now = lab_clock_ns(j->clk);
			if (now - t0 >= PROBE_CONTEND_NS) {
				me->wall_ns = now - t0;
				__atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
			}
		}
	}
	me->ops = ops;
	me->tries = tries;
	return NULL;
}

/* One measurement: per-thread ns per op and (CAS) attempts per increment. 0 or -errno. */
static int contend_once(const struct lab_clock *clk, const int *cpus, enum contend_op op,
			double *ns, double *tries)
{
	struct contend_job *j = aligned_alloc(64, sizeof(*j));
	pthread_t th[PROBE_CONTEND_THREADS];
	unsigned started = 0;
	uint64_t ops = 0, n_tries = 0;
	int rc = 0;

	if (!j)
		return -ENOMEM;
	memset(j, 0, sizeof(*j));
	j->op = op;
	j->clk = clk;
	for (unsigned i = 0; i < PROBE_CONTEND_THREADS; i++) {
		j->t[i].cpu = cpus[i];
		j->t[i].job = j;
		j->t[i].idx = i;
	}
	for (; started < PROBE_CONTEND_THREADS; started++) {
		rc = -pthread_create(&th[started], NULL, contend_main, &j->t[started]);
		if (rc) {
			__atomic_store_n(&j->stop, 1, __ATOMIC_RELEASE);
			/* thread 0 waits for every thread to be ready: count the missing ones */
			__atomic_add_fetch(&j->ready, PROBE_CONTEND_THREADS - started,
					   __ATOMIC_ACQ_REL);
			break;
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < PROBE_CONTEND_THREADS && !rc; i++) {
		rc = j->t[i].err;
		ops += j->t[i].ops;
		n_tries += j->t[i].tries;
	}
	if (!rc && (!ops || !j->t[0].wall_ns))
		rc = -EIO;
	if (!rc) {
		*ns = (double)j->t[0].wall_ns * PROBE_CONTEND_THREADS / (double)ops;
		*tries = op == CONTEND_CAS ? (double)n_tries / (double)ops : 1.0;
	}
	free(j);
	return rc;
}

static int measure_contended(const struct lab_clock *clk, const int *cpus, unsigned rounds,
			     double *samples, struct probe_result *r)
{
	double *tries = calloc(rounds, sizeof(*tries));
	int rc = 0;

	if (!tries)
		return -ENOMEM;
	r->contended_threads = PROBE_CONTEND_THREADS;
	for (unsigned k = 0; k < rounds && !rc; k++)
		rc = contend_once(clk, cpus, CONTEND_ADD, &samples[k], &tries[k]);
	if (!rc)
		r->contended_add_ns = median(samples, rounds);
	for (unsigned k = 0; k < rounds && !rc; k++)
		rc = contend_once(clk, cpus, CONTEND_CAS, &samples[k], &tries[k]);
	if (!rc) {
		r->contended_cas_ns = median(samples, rounds);
		r->contended_cas_tries = median(tries, rounds);
	}
	free(tries);
	return rc;
}

/* ---- the probe --------------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int probe_run(const struct probe_opts *o, struct probe_result *r)
{
	unsigned rounds = o && o->rounds ? o->rounds : 7;
	unsigned iters = o && o->iters ? o->iters : 2000;
	uint32_t max = o ? o->max_cpus : 0;
	struct lab_clock clk;
	cpu_set_t allowed;
	double *samples = NULL, start = now_s();
	int rc;

	memset(r, 0, sizeof(*r));
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return -errno;
	rc = clock_setup(&clk, 0);
	if (rc)
		return rc;
	r->clock_source = clock_source_name(&clk);
	r->cpus = calloc(CPU_SETSIZE, sizeof(*r->cpus));
	if (!r->cpus)
		return -ENOMEM;
	for (int c = 0; c < CPU_SETSIZE && (!max || r->n < max); c++)
		if (CPU_ISSET(c, &allowed))
			r->cpus[r->n++] = c;
	if (r->n < 2) {
		rc = -EINVAL;
		goto fail;
	}
	r->lat = calloc((size_t)r->n * r->n, sizeof(*r->lat));
	r->xfer = calloc((size_t)r->n * r->n, sizeof(*r->xfer));
	samples = calloc(rounds, sizeof(*samples));
	if (!r->lat || !r->xfer || !samples) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 1; i < r->n; i++) {
		for (uint32_t j = 0; j < i; j++) {
			for (unsigned k = 0; k < rounds; k++) {
				rc = pingpong_once(&clk, r->cpus[i], r->cpus[j], iters,
						   &samples[k]);
				if (rc)
					goto fail;
			}
			double m = median(samples, rounds);
			r->lat[i * r->n + j] = r->lat[j * r->n + i] = m;
			rc = xfer_pair(&clk, r->cpus[i], r->cpus[j], rounds, &m);
			if (rc)
				goto fail;
			r->xfer[i * r->n + j] = r->xfer[j * r->n + i] = m;
		}
	}
	r->matrix = o ? o->matrix : PROBE_MATRIX_TRANSFER;
	rc = measure_atomics(&clk, r->cpus[0], rounds, r);
	if (rc)
		goto fail;
	rc = measure_contended(&clk, r->cpus, rounds, samples, r);
	if (rc)
		goto fail;
	r->timer_ns = clock_cost_ns(&clk, 1000000);
	r->elapsed_s = now_s() - start;
	free(samples);
	return 0;
fail:
	free(samples);
	probe_result_free(r);
	return rc;
}

void probe_result_free(struct probe_result *r)
{
	if (!r)
		return;
	free(r->cpus);
	free(r->lat);
	free(r->xfer);
	r->xfer = NULL;
	r->cpus = NULL;
	r->lat = NULL;
	r->n = 0;
}

int probe_default_path(char *buf, size_t len)
{
	char host[256];

	if (gethostname(host, sizeof(host)))
		return -errno;
	host[sizeof(host) - 1] = '\0';
	for (char *p = host; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	if ((size_t)snprintf(buf, len, "probe-%s.csv", host) >= len)
		return -ENAMETOOLONG;
	return 0;
}

void probe_describe_machine(const struct probe_result *r, double op_ns, const char *prefix, FILE *f)
{
	double a = r->atomic_add_ns - op_ns > 0 ? r->atomic_add_ns - op_ns : 0;
	const double *m = probe_topology_matrix(r);
	double lat = r->n >= 2 && m ? m[1] : 0; /* cpus[0] <-> cpus[1], as the sim will see it */
	double x = r->contended_add_ns;

	if (r->n >= 2 && r->lat && r->xfer)
		fprintf(f,
			"%s[machine] topology: the sim prices a miss at the matrix's value; cpus "
			"%d-%d: CAS ping-pong %.1f ns, one isolated miss %.1f ns (%s is written; "
			"iommulab probe --matrix %s writes the other)\n",
			prefix, r->cpus[0], r->cpus[1], r->lat[1], r->xfer[1],
			r->matrix == PROBE_MATRIX_TRANSFER ? "the miss" : "the ping-pong",
			r->matrix == PROBE_MATRIX_TRANSFER ? "pingpong" : "transfer");
	fprintf(f,
		"%s[machine] atomic_ns = %.2f: an uncontended atomic costs op_ns + atomic_ns "
		"in the sim (op_ns = %.2f; add measured %.2f ns)\n",
		prefix, a, op_ns, r->atomic_add_ns);
#if defined(__x86_64__)
	fprintf(f, "%s[machine] atomic = near: x86 executes an atomic in the requester's cache\n",
		prefix);
	if (!r->contended_threads || lat <= 0 || x <= 0)
		return;
	/* sim.h's near model: each op fetches the line (lat) and does the atomic; the line
	 * serves the other CPU occupancy x lat later, so a CPU's cycle is the larger of the two. */
	double floor_ns = lat + op_ns + a;
	fprintf(f,
		"%scontended add, %u CPUs: %.1f ns per op per CPU; the near model gives "
		"max(L + op_ns + atomic_ns, 2 x occupancy x L) = max(%.1f, %.1f x occupancy) "
		"with L = %.1f ns (cpus %d-%d)\n",
		prefix, r->contended_threads, x, floor_ns, 2 * lat, lat, r->cpus[0], r->cpus[1]);
	if (x < floor_ns)
		fprintf(f,
			"%s  -> below one transfer per op: the line stays with one CPU for runs of "
			"ops here; "
			"the model hands the line over on every op and gives at least %.1f ns "
			"(%+.0f%%) whatever the occupancy\n",
			prefix, floor_ns, 100.0 * (floor_ns - x) / x);
	else if (x <= 2 * lat)
		fprintf(f, "%s  -> [machine] occupancy = %.2f reproduces it\n", prefix,
			x / (2 * lat));
	else
		fprintf(f, "%s  -> above 2 x L: even occupancy = 1 gives only %.1f ns (%+.0f%%)\n",
			prefix, 2 * lat, 100.0 * (2 * lat - x) / x);
#elif defined(__aarch64__)
	fprintf(f,
		"%s[machine] atomic = adaptive (LSE: near while one core uses a line, at the "
		"home once contended) or far\n",
		prefix);
	if (r->contended_threads && x > 0)
		fprintf(f,
			"%scontended add, %u CPUs: %.1f ns per op per CPU; adaptive gives "
			"max(home_ns + op_ns, 2 x occupancy x home_ns): e.g. home_ns = %.1f with "
			"occupancy <= 0.5\n",
			prefix, r->contended_threads, x, x - op_ns > 0 ? x - op_ns : x);
#else
	fprintf(f, "%s[machine] atomic: near or far, as this architecture executes atomics\n",
		prefix);
#endif
	if (r->contended_threads && r->contended_cas_ns > 0)
		fprintf(f,
			"%scontended CAS loop, %u CPUs: %.1f ns per increment per CPU, %.2f tries "
			"each: compare with the micro workload (workload.micro.op = cas_add, "
			"cpus = %u) under the sim\n",
			prefix, r->contended_threads, r->contended_cas_ns, r->contended_cas_tries,
			r->contended_threads);
}

const double *probe_topology_matrix(const struct probe_result *r)
{
	return r->matrix == PROBE_MATRIX_TRANSFER ? r->xfer : r->lat;
}

static const char *const matrix_what[] = {
	[PROBE_MATRIX_PINGPONG] = "CAS ping-pong round trip / 2",
	[PROBE_MATRIX_TRANSFER] = "one isolated miss from the other core's cache",
};

int probe_write_topology(const struct probe_result *r, const char *path, const char *host,
			 char *err, size_t err_len)
{
	const double *m = r ? probe_topology_matrix(r) : NULL;

	char hbuf[256], date[64];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int rc = 0;

	if (!r || r->n < 2 || !m) {
		snprintf(err, err_len, "%s: nothing measured (a topology needs 2 CPUs)", path);
		return -EINVAL;
	}
	if (!host) {
		if (gethostname(hbuf, sizeof(hbuf)))
			snprintf(hbuf, sizeof(hbuf), "unknown host");
		hbuf[sizeof(hbuf) - 1] = '\0';
		host = hbuf;
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	f = fopen(path, "w");
	if (!f) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot create: %s", path, strerror(-rc));
		return rc;
	}
	fprintf(f, "# %s, %u CPUs (", host, r->n);
	for (uint32_t i = 0; i < r->n; i++)
		fprintf(f, "%s%d", i ? " " : "cpus ", r->cpus[i]);
	fprintf(f,
		"): core-to-core latency, ns (%s), "
		"lower-triangular. Measured by iommulab probe on %s; uncontended atomic add "
		"%.2f ns, CAS %.2f ns, timer (%s) %.2f ns\n",
		matrix_what[r->matrix == PROBE_MATRIX_PINGPONG ? PROBE_MATRIX_PINGPONG
							       : PROBE_MATRIX_TRANSFER],
		date, r->atomic_add_ns, r->cas_ns, r->clock_source ? r->clock_source : "?",
		r->timer_ns);
	/* One figure per line, `# probe: key = value`, for scripts (sim_topology_load skips
	 * every '#' line). */
	fprintf(f, "# probe: matrix = %s\n",
		r->matrix == PROBE_MATRIX_TRANSFER ? "transfer" : "pingpong");
	if (r->lat)
		fprintf(f, "# probe: pingpong_01_ns = %.3f\n", r->lat[1]);
	if (r->xfer)
		fprintf(f, "# probe: transfer_01_ns = %.3f\n", r->xfer[1]);
	fprintf(f, "# probe: atomic_add_ns = %.3f\n", r->atomic_add_ns);
	fprintf(f, "# probe: cas_ns = %.3f\n", r->cas_ns);
	fprintf(f, "# probe: contended_threads = %u\n", r->contended_threads);
	fprintf(f, "# probe: contended_add_ns = %.3f\n", r->contended_add_ns);
	fprintf(f, "# probe: contended_cas_ns = %.3f\n", r->contended_cas_ns);
	fprintf(f, "# probe: contended_cas_tries = %.3f\n", r->contended_cas_tries);
	fprintf(f, "# probe: timer_ns = %.3f\n", r->timer_ns);
	fprintf(f, "# probe: clock_source = %s\n", r->clock_source ? r->clock_source : "?");
	probe_describe_machine(r, PROBE_SIM_OP_NS, "# sim: ", f);
	for (uint32_t i = 0; i < r->n; i++) {
		for (uint32_t j = 0; j < r->n; j++) {
			if (j)
				fputc(',', f);
			if (j < i)
				fprintf(f, "%.4f", m[i * r->n + j]);
		}
		fputc('\n', f);
	}
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc)
		snprintf(err, err_len, "%s: write failed: %s", path, strerror(-rc));
	return rc;
}
