/* SPDX-License-Identifier: MIT */
/*
 * native -- the native engine: one pinned pthread per CPU of the trial, a barrier start, an
 * unmeasured warm-up, then a fixed measured duration (or a fixed op count), all driven by a
 * workload's op function; a watchdog on the calling thread fails the trial when a CPU makes
 * no progress for watchdog_ns and unwinds every CPU (spin hook, then a signal).
 */
#ifndef IOMMULAB_NATIVE_H
#define IOMMULAB_NATIVE_H

#include <stdint.h>

#include "engine/engine.h"

extern const struct engine_ops native_engine;

/* Online CPUs this process may run on. */
uint32_t native_online_cpus(void);

#endif /* IOMMULAB_NATIVE_H */
