/* SPDX-License-Identifier: MIT */
/*
 * sim_trial -- what trial_run needs to run a trial on the sim engine: the sim builds of the
 * plugins, a configuration the sim can honour, and the run itself with the device as an
 * agent. Kept apart so that trial_run.c only branches on the engine.
 */
#ifndef IOMMULAB_SIM_TRIAL_H
#define IOMMULAB_SIM_TRIAL_H

#include <stddef.h>

#include "device/smmu.h"
#include "engine/native.h"
#include "run/trial_run.h"
#include "sim/sim.h"

/*
 * Rewrite a request for the sim: out_req/out_cfg are copies with the plugins replaced by
 * their sim builds and the device advanced inline (the sim's agent, never a thread).
 * 0 or -errno with the reason in err.
 */
int sim_trial_prepare(const struct trial_request *req, struct trial_request *out_req,
		      struct scenario_cfg *out_cfg, char *err, size_t err_len);

/* The machine a configuration describes ([machine]). */
void sim_trial_machine(const struct scenario_cfg *cfg, struct scenario_machine *m);

/* native_run's counterpart: the device dev (NULL without one) runs as the agent. 0, or
 * -errno with the reason in err (a topology file that cannot be read, out of memory). */
int sim_trial_run(const struct native_job *job, const struct scenario_cfg *cfg,
		  struct smmu_dev *dev, struct native_result *res, char *err, size_t err_len);

/* The engine's figures of the last sim_trial_run on this thread (for reports and benches). */
const struct sim_stats *sim_trial_last_stats(void);

#endif /* IOMMULAB_SIM_TRIAL_H */
