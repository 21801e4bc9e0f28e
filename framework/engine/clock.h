/* SPDX-License-Identifier: MIT */
/*
 * clock -- pick and calibrate the timestamp source behind lab_now(): the invariant TSC on
 * x86-64, cntvct_el0 on aarch64, clock_gettime(CLOCK_MONOTONIC) otherwise or when the
 * counter cannot be trusted (no constant_tsc/nonstop_tsc flags).
 */
#ifndef IOMMULAB_CLOCK_H
#define IOMMULAB_CLOCK_H

#include <iommulab/lab.h>

/*
 * Fill clk, its base now. The counter's rate is calibrated against CLOCK_MONOTONIC for about
 * 20 ms on the process's first call (a forked child inherits it: set the clock up before
 * forking trials). force_monotonic skips the cycle counter. 0 or -errno.
 */
int clock_setup(struct lab_clock *clk, int force_monotonic);

/* "tsc", "cntvct" or "monotonic". */
const char *clock_source_name(const struct lab_clock *clk);

/* Mean cost of one lab_clock_ns() call in ns, measured over n calls. */
double clock_cost_ns(const struct lab_clock *clk, unsigned n);

#endif /* IOMMULAB_CLOCK_H */
