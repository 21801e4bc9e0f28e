/* SPDX-License-Identifier: MIT */
/*
 * micro_sim -- the micro workload's op built against the sim binding of lab.h: the same
 * source as the native op (workload/micro_wl.c), so both engines run the same code, as they
 * do a plugin's.
 */
#define LAB_ENGINE_SIM 1
#define MICRO_WL_SIM_BUILD 1

#include "workload/micro_wl.h"

#include "workload/micro_wl.c"
