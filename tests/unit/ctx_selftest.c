/* SPDX-License-Identifier: MIT */
/*
 * ctx_selftest -- the sim's context switch (framework/engine/sim/ctx.c) on its own, with no test
 * framework, so that it can be cross-built and run under an emulator for the architectures
 * the build machine is not (ctx_other_arch.sh). Three coroutines and main take turns; each
 * keeps integer and floating-point values live across its switches, which only survive if
 * the switch saves every callee-saved register. Exit status 0 when everything adds up.
 */
#include <stdio.h>

#include "engine/sim/ctx.h"

#define ROUNDS 100000
#define NCO    3

static struct sim_ctx main_ctx, co[NCO];
static long steps[NCO];
static double fsum[NCO];

static void co_fn(void *arg)
{
	long i = (long)arg;
	double f = 0.5 * (double)(i + 1);
	long a = 7 * i, b = 11 * i, c = 13 * i, d = 17 * i;

	for (;;) {
		steps[i] += i + 1;
		fsum[i] += f;
		sim_ctx_switch(&co[i], &main_ctx);
		if (a != 7 * i || b != 11 * i || c != 13 * i || d != 17 * i)
			steps[i] = -1000000000; /* a register was lost across the switch */
	}
}

int main(void)
{
	volatile double keep_in = 1.25;
	double keep = keep_in;
	long k1 = 101, k2 = 202, k3 = 303;

	for (long i = 0; i < NCO; i++) {
		if (sim_ctx_make(&co[i], 64 << 10, co_fn, (void *)i)) {
			fprintf(stderr, "sim_ctx_make failed\n");
			return 2;
		}
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < NCO; i++)
			sim_ctx_switch(&main_ctx, &co[i]);
		k1 += 1;
		k2 += 2;
		k3 += 3;
		keep += 0.5;
	}
	int bad = 0;
	for (long i = 0; i < NCO; i++) {
		/* The last round's check runs only on the next switch in: ROUNDS - 1 checked. */
		if (steps[i] != (i + 1) * ROUNDS || fsum[i] != 0.5 * (double)(i + 1) * ROUNDS) {
			fprintf(stderr, "coroutine %ld: %ld steps, %g (want %ld, %g)\n", i,
				steps[i], fsum[i], (i + 1) * ROUNDS,
				0.5 * (double)(i + 1) * ROUNDS);
			bad = 1;
		}
		sim_ctx_free(&co[i]);
	}
	if (k1 != 101 + ROUNDS || k2 != 202 + 2 * ROUNDS || k3 != 303 + 3 * ROUNDS ||
	    keep != 1.25 + 0.5 * ROUNDS) {
		fprintf(stderr, "main's registers were not kept across the switches\n");
		bad = 1;
	}
	if (!bad)
		printf("ctx: %d rounds of %d coroutines, registers kept\n", ROUNDS, NCO);
	return bad;
}
