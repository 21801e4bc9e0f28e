/* SPDX-License-Identifier: MIT */
/*
 * sim_engine -- the sim as an engine (engine.h): a trial runs with the plugins' sim builds on
 * virtual CPUs of the machine its [machine] section describes (a topology file, the memory
 * model's parameters), the device advanced as the simulation's agent, never on a thread.
 */
#ifndef IOMMULAB_SIM_ENGINE_H
#define IOMMULAB_SIM_ENGINE_H

#include "engine/engine.h"

extern const struct engine_ops sim_engine;

#endif /* IOMMULAB_SIM_ENGINE_H */
