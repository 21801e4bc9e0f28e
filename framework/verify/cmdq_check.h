/* SPDX-License-Identifier: MIT */
/*
 * cmdq_check -- the cmdq conformance grid and the oracle that judges each of its trials. One
 * definition for both callers: `iommulab verify` runs the grid on one plugin and prints the
 * verdicts, tests/conformance/test_cmdq_conformance.c runs it on every built plugin and
 * asserts them.
 *
 * The grid is a list of hostile configurations: 1 and 2 CPUs; 8-, 16- and 256-entry queues
 * (wrap and queue-full on nearly every op, and a queue that rarely fills); MSI on and off;
 * 1 and 5 commands per CMD_SYNC (5 + 1 fills most of a tiny queue); no think time, and on the
 * tiny queues also a little. Each point runs CMDQ_CHECK_OPS_PER_CPU ops per CPU of the "ways"
 * workload on the inline device, with the oracle on.
 *
 * The oracle (trial_run with req->oracle): every command carries a tag (issuing CPU, op
 * sequence, position), the device keeps the consumption trace, and after the trial these
 * checks are evaluated, in this order:
 *   protocol      the device saw no protocol violation (its message is the counterexample)
 *   exactly_once  every issued command was consumed exactly once
 *   in_order      each op's commands consumed contiguously, in order; each CPU's ops in order
 *   sync_complete every sync issue returned only after all of its commands were consumed
 *   no_deadlock   every CPU finished within watchdog_ms of its last progress
 */
#ifndef IOMMULAB_VERIFY_CMDQ_CHECK_H
#define IOMMULAB_VERIFY_CMDQ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmdq_wl;
struct scenario_cfg;
struct smmu_dev;
struct trial_result;

/* Enough for a tiny queue to wrap a few hundred times per CPU, short enough for 40 points. */
#define CMDQ_CHECK_OPS_PER_CPU 3000

#define ORACLE_MAX_CHECKS 8
#define ORACLE_DETAIL_LEN 512

struct oracle_check {
	const char *name; /* lower_snake_case, stable: tests and the CLI name checks by it */
	bool pass;
	char detail[ORACLE_DETAIL_LEN]; /* the first counterexample when !pass */
};

struct oracle_report {
	struct oracle_check checks[ORACLE_MAX_CHECKS];
	uint32_t n_checks;
};

/* One point of the grid: the framework keys it sets (everything else is cmdq_check_base's). */
struct cmdq_check_point {
	uint32_t cpus; /* clamped to the online CPUs when applied */
	uint32_t queue_shift;
	bool msi;
	uint32_t cmds_per_sync;
	uint64_t think_ns;
};

/* Every point, in the order verify runs them. */
const struct cmdq_check_point *cmdq_check_grid(size_t *n);

/*
 * The scenario defaults with the keys every conformance trial shares (the cmdq workload,
 * natively, oversubscription allowed). A caller may change keys afterwards (verify's --set);
 * cmdq_check_apply then sets only the point's own. 0, or -errno with the reason in err;
 * scenario_cfg_free() it either way.
 */
int cmdq_check_base(struct scenario_cfg *cfg, char *err, size_t err_len);

/* Set p's keys onto cfg. */
void cmdq_check_apply(const struct cmdq_check_point *p, struct scenario_cfg *cfg);

/* "cpus=2 queue_shift=3 msi=on cmds_per_sync=5 think_ns=0": the grid keys of cfg. */
void cmdq_check_describe(const struct scenario_cfg *cfg, char *buf, size_t len);

/* The oracle's check names, in the order every oracle_report lists them. */
const char *const *cmdq_check_names(size_t *n);

/* The check called name in o, or NULL. */
const struct oracle_check *cmdq_check_find(const struct oracle_report *o, const char *name);

/*
 * The oracle's verdicts on a trial that ran (trial_run's part, after it judged res): fills o
 * from the device's record (dev), the workload's (wl) and whether the trial hung. A sync that
 * returned early also fails res, when nothing failed it before.
 */
void cmdq_check_oracle(struct oracle_report *o, const struct smmu_dev *dev,
		       const struct cmdq_wl *wl, bool hung, struct trial_result *res);

#endif /* IOMMULAB_VERIFY_CMDQ_CHECK_H */
