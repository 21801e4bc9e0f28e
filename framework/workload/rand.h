/* SPDX-License-Identifier: MIT */
/*
 * rand -- the workloads' seeded random streams: xorshift64* (fast, and a CPU's sequence
 * depends only on the seed it was started from), a uniform draw in [0, 1), and a time
 * jittered uniformly around its mean. Each CPU keeps its own state, so one CPU's draws never
 * move another's.
 */
#ifndef IOMMULAB_WORKLOAD_RAND_H
#define IOMMULAB_WORKLOAD_RAND_H

#include <stdint.h>

/* The next value of the stream in *s (never 0 while *s is not). */
static inline uint64_t wl_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* A draw uniform in [0, 1), with 53 bits. */
static inline double wl_unit(uint64_t *s)
{
	return (double)(wl_rand(s) >> 11) * 0x1.0p-53;
}

/* ns, or uniform in ns x [1 - jitter, 1 + jitter], rounded to the nearest ns. */
static inline uint64_t wl_jittered_ns(uint64_t ns, double jitter, uint64_t *s)
{
	if (jitter <= 0 || !ns)
		return ns;
	double t = (double)ns * (1.0 - jitter + 2.0 * jitter * wl_unit(s));
	return t > 0 ? (uint64_t)(t + 0.5) : 0;
}

#endif /* IOMMULAB_WORKLOAD_RAND_H */
