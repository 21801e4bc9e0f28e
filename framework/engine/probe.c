/* SPDX-License-Identifier: MIT */
/* probe -- core-to-core latency, atomic and timer costs of this machine (see probe.h). */
#include "engine/probe.h"

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

#define PROBE_WARMUP 100u /* round trips before timing starts */

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
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
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
static int pingpong_once(const struct lab_clock *clk, int a, int b, unsigned iters,
			 double *ns)
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
	samples = calloc(rounds, sizeof(*samples));
	if (!r->lat || !samples) {
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
		}
	}
	rc = measure_atomics(&clk, r->cpus[0], rounds, r);
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

int probe_write_topology(const struct probe_result *r, const char *path, const char *host,
			 char *err, size_t err_len)
{
	char hbuf[256], date[64];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int rc = 0;

	if (!r || r->n < 2 || !r->lat) {
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
	fprintf(f, "): core-to-core latency, ns (CAS ping-pong round trip / 2), "
		   "lower-triangular. Measured by iommulab probe on %s; uncontended atomic add "
		   "%.2f ns, CAS %.2f ns, timer (%s) %.2f ns\n",
		date, r->atomic_add_ns, r->cas_ns, r->clock_source ? r->clock_source : "?",
		r->timer_ns);
	for (uint32_t i = 0; i < r->n; i++) {
		for (uint32_t j = 0; j < r->n; j++) {
			if (j)
				fputc(',', f);
			if (j < i)
				fprintf(f, "%.4f", r->lat[i * r->n + j]);
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
