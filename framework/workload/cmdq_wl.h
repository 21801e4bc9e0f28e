/* SPDX-License-Identifier: MIT */
/*
 * cmdq_wl -- the "ways" workload: each CPU loops { build cmds_per_sync TLBI_NH_VA commands,
 * issue them with a CMD_SYNC, spend think_ns of local work }. Mixed ([workload.cmdq] mixed,
 * what verify runs too): each op issues a seeded 0 to cmds_per_sync commands, one in four of
 * those with commands without a CMD_SYNC, and one without commands is a CMD_SYNC alone. One
 * metric, "op": the latency of issue(). Every command carries the harness's tag (CPU, op
 * sequence, position) so the oracle can check, after the trial, what the device consumed: a
 * sync issue returns only once every command its CPU issued before it has completed.
 */
#ifndef IOMMULAB_CMDQ_WL_H
#define IOMMULAB_CMDQ_WL_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/cmdq.h>

#include "device/smmu.h"
#include "stats/histogram.h"

struct cmdq_wl;

struct cmdq_wl *cmdq_wl_new(const struct lab_cmdq_ops *ops, void *state, struct smmu_dev *dev,
			    uint32_t ncpus, uint32_t cmds_per_sync, bool mixed, uint64_t think_ns,
			    double think_jitter, uint64_t seed, bool oracle, uint32_t sample_every);
void cmdq_wl_free(struct cmdq_wl *wl);

/* The engine's op function (native_op_fn). */
int cmdq_wl_op(void *arg, struct lab_cpu *c, struct hist *hists, bool measuring);

/* The first op error ("issue() returned -110 ..."), or NULL. */
const char *cmdq_wl_error(const struct cmdq_wl *wl);

/* Ops issued by cpu so far (its last sequence number). */
uint64_t cmdq_wl_issued(const struct cmdq_wl *wl, uint32_t cpu);

/* The first sync that returned before its commands were consumed, or NULL. */
const char *cmdq_wl_sync_violation(const struct cmdq_wl *wl);

/*
 * Check the device's trace against what was issued. Fills the exactly_once and in_order
 * verdicts (first counterexample in the detail buffers). Returns false if the trace was
 * truncated (checks then cover only the recorded prefix).
 */
bool cmdq_wl_check_trace(const struct cmdq_wl *wl, bool *exactly_once, char *once_detail,
			 bool *in_order, char *order_detail, size_t detail_len);

#endif /* IOMMULAB_CMDQ_WL_H */
