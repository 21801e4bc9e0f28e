/* SPDX-License-Identifier: MIT */
/*
 * slowpath_sim -- the IOVA slow path's locked code built against the sim binding of lab.h
 * (the same source as the native build, framework/iova/slowpath.c): under the sim its lock is
 * simulated and the tree's lines are priced. slowpath_use_sim() points a domain at it.
 */
#define LAB_ENGINE_SIM 1
#define SLOWPATH_SIM_BUILD 1
#define slowpath_alloc slowpath_alloc_sim
#define slowpath_release slowpath_release_sim
#define slowpath_release_batch slowpath_release_batch_sim

#include "iova/slowpath.c"
