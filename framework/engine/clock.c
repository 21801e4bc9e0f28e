/* SPDX-License-Identifier: MIT */
/* clock -- choose and calibrate the cycle counter behind lab_now(). */
#include "engine/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* The TSC is only a clock if it ticks at a constant rate and does not stop in idle states. */
static int tsc_is_invariant(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int constant = 0, nonstop = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
}
#endif

/* How many ticks of the counter make a ns: measured against CLOCK_MONOTONIC over 20 ms. */
static double calibrate(const struct lab_clock *clk)
{
	struct lab_clock raw = *clk;
	uint64_t c0, c1, t0, t1;

	raw.base = 0;
	t0 = mono_ns();
	c0 = lab_read_counter(&raw);
	do {
		t1 = mono_ns();
	} while (t1 - t0 < 20000000u);
	c1 = lab_read_counter(&raw);
	return (double)(t1 - t0) / (double)(c1 - c0);
}

/*
 * The counter and its rate are the machine's, not a trial's: chosen and measured once per
 * process (under the lock), and inherited by the children of a process that set its clock up
 * before forking them. verify's 228 trials, each in a child of its own, spun 20 ms apiece in
 * calibrate() before, a quarter of verify's time.
 */
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool known;
	enum lab_clock_source source;
	double ns_per_tick;
} counter;

int clock_setup(struct lab_clock *clk, int force_monotonic)
{
	memset(clk, 0, sizeof(*clk));
	clk->source = LAB_CLOCK_MONOTONIC;
	clk->ns_per_tick = 1.0;
	if (force_monotonic) {
		clk->base = mono_ns();
		return 0;
	}
	pthread_mutex_lock(&counter_lock);
	if (!counter.known) {
		counter.source = LAB_CLOCK_MONOTONIC;
		counter.ns_per_tick = 1.0;
#if defined(__x86_64__)
		if (tsc_is_invariant())
			counter.source = LAB_CLOCK_TSC;
#elif defined(__aarch64__)
		counter.source = LAB_CLOCK_CNTVCT;
#endif
		if (counter.source != LAB_CLOCK_MONOTONIC) {
			clk->source = counter.source;
			counter.ns_per_tick = calibrate(clk);
		}
		counter.known = counter.ns_per_tick > 0.0;
	}
	clk->source = counter.source;
	clk->ns_per_tick = counter.ns_per_tick;
	pthread_mutex_unlock(&counter_lock);
	if (!(clk->ns_per_tick > 0.0))
		return -EIO;
	clk->base = lab_read_counter(clk);
	return 0;
}

const char *clock_source_name(const struct lab_clock *clk)
{
	switch (clk->source) {
	case LAB_CLOCK_TSC:
		return "tsc";
	case LAB_CLOCK_CNTVCT:
		return "cntvct";
	default:
		return "monotonic";
	}
}

double clock_cost_ns(const struct lab_clock *clk, unsigned n)
{
	uint64_t t0 = mono_ns(), sink = 0;

	for (unsigned i = 0; i < n; i++)
		sink += lab_clock_ns(clk);
	uint64_t t1 = mono_ns();
	__asm__ __volatile__("" ::"r"(sink));
	return n ? (double)(t1 - t0) / n : 0.0;
}
