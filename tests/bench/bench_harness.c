/* SPDX-License-Identifier: MIT */
/*
 * bench_harness -- the harness's own cost per recorded op, the budget DESIGN.md sets (timestamp
 * + histogram record <= 30 ns on x86): one hist_record(), two lab_now()-style timestamps plus
 * the record (the harness before chaining), one timestamp per op chained (the end of one op is
 * the start of the next, what the cmdq and micro workloads do now) plus the record, and the
 * same sampled ([scenario] sample_every = 16: a countdown per op, a timestamp pair and a
 * record every 16th), each averaged over N iterations. A benchmark, not a test: it prints.
 *   ./build/tests/bench/bench_harness [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/clock.h"
#include "stats/histogram.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static struct hist h;
	struct lab_clock clk;
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000ul;
	uint64_t x = 12345;

	if (!n || clock_setup(&clk, 0)) {
		fprintf(stderr, "usage: bench_harness [ITERATIONS > 0]\n");
		return 2;
	}
	hist_reset(&h);
	double t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull; /* values 500..4595 */
		hist_record(&h, 500 + (x >> 52));
	}
	double record = (now_ns() - t0) / (double)n;
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		uint64_t a = lab_clock_ns(&clk), b = lab_clock_ns(&clk);
		hist_record(&h, b - a);
	}
	double pair = (now_ns() - t0) / (double)n;
	t0 = now_ns();
	uint64_t prev = lab_clock_ns(&clk);
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = lab_clock_ns(&clk);
		hist_record(&h, t - prev);
		prev = t;
	}
	double chained = (now_ns() - t0) / (double)n;
	uint32_t countdown = 16;
	unsigned long timed = 0;
	t0 = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		if (--countdown)
			continue;
		countdown = 16;
		uint64_t a = lab_clock_ns(&clk), b = lab_clock_ns(&clk);
		hist_record(&h, b - a);
		timed++;
	}
	double sampled = (now_ns() - t0) / (double)n;
	printf("clock %s: %.1f ns per read\n", clock_source_name(&clk),
	       clock_cost_ns(&clk, 1000000));
	printf("hist_record: %.1f ns\n", record);
	printf("two timestamps + hist_record: %.1f ns per op (budget 30 ns on x86)\n", pair);
	printf("one chained timestamp + hist_record: %.1f ns per op\n", chained);
	printf("sample_every = 16 (countdown per op, pair + record per 16th): %.1f ns per op\n",
	       sampled);
	return h.count == 3 * n + timed && timed == n / 16 ? 0 : 1;
}
