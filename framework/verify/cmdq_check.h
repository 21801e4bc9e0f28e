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
 * tiny queues also a little; and on the tiny queues the mixed shapes ([workload.cmdq] mixed:
 * 0 to 5 commands per op, a CMD_SYNC alone, commands without a CMD_SYNC, each CPU its own
 * sequence), which a strategy's bare-sync, unsynced and differing-size paths need. Each point runs
 * CMDQ_CHECK_OPS_PER_CPU ops per CPU of the "ways" workload on the inline device, with the oracle
 * on. Then the sim part, the plugin's .sim.so on 4, 16 and 64 virtual CPUs (hand-offs among 3+
 * CPUs, which 2 native cores cannot show), 8- and 16-entry queues, MSI on and off, 1 and 5 commands
 * per sync and the mixed shapes (under sequential consistency), CMDQ_CHECK_SIM_OPS ops per trial,
 * at 4 and 16 CPUs also under seeded schedule perturbations (cmdq_check_seeds, cmdq_check_perturb).
 * The plugin's parameters: the whole grid as given, then each parameter varied in turn
 * (cmdq_check_variants) at the hostile points (cmdq_check_runs).
 *
 * The oracle (trial_run with req->oracle): every command carries a tag (issuing CPU, op
 * sequence, position), the device keeps the consumption trace, and after the trial these
 * checks are evaluated, in this order:
 *   protocol      the device saw no protocol violation (its message is the counterexample)
 *   exactly_once  every issued command was consumed exactly once
 *   in_order      each op's commands consumed contiguously, in order; each CPU's ops in order
 *   sync_complete every sync issue returned 0, and only after the device completed a CMD_SYNC
 *                 behind all of its CPU's commands so far, an earlier unsynced issue's too
 *                 (the device's record, smmu_done_seq: not CONS passing the last command,
 *                 which a TLBI does at its fetch)
 *   no_deadlock   every CPU finished within watchdog_ms of its last progress
 *   no_crash      the trial ended without a signal (a crash or an abort: verify runs each trial
 *                 in a child process and fills a lost one's report with cmdq_check_lost)
 *   lab_h_only    on the sim only: the plugin stayed inside lab.h, as the sim saw it run (no
 *                 shared word a lab.h access touched changed without a lab.h store, and no
 *                 virtual CPU ran host code for long without calling lab.h: the engine's
 *                 lab_h_watch, with the place); verify adds its static disassembly to the row
 * A check that could not be judged (exactly_once and in_order on an abandoned trial, every
 * other check of a lost one) is neither pass nor a counterexample: unchecked.
 */
#ifndef IOMMULAB_VERIFY_CMDQ_CHECK_H
#define IOMMULAB_VERIFY_CMDQ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmdq_wl;
struct lab_plugin;
struct scenario_cfg;
struct smmu_dev;
struct trial_result;

/* Enough for a tiny queue to wrap a few hundred times per CPU, short enough for 40 points. */
#define CMDQ_CHECK_OPS_PER_CPU 3000
/*
 * On the sim, ops per trial, shared among its CPUs (64 spinning CPUs cost the sim 64 times
 * one): still over a thousand wraps of the small queues, a few seconds at 64 CPUs.
 */
#define CMDQ_CHECK_SIM_OPS 4800

/*
 * Schedule perturbation on the sim ([machine] perturb_ns, PCT-like): each sim point runs once
 * unperturbed and then under seeds 1, 2, ... (scenario.seed; cmdq_check_seeds says how many),
 * each a different seeded pattern of stalls of up to CMDQ_CHECK_PERTURB_NS at shared
 * accesses: a few microseconds, long enough for the other CPUs to run through a lock hand-off
 * or a publish while one stands still, short against the virtual watchdog.
 */
#define CMDQ_CHECK_SEEDS      3
#define CMDQ_CHECK_SEEDS_STR  "3" /* for messages */
#define CMDQ_CHECK_PERTURB_NS 2000

/* A numeric parameter's extreme above this is skipped (a timeout or a size, not a mode). */
#define CMDQ_CHECK_PARAM_MAX 4096

/* One configuration of the plugin's own parameters. */
#define CMDQ_CHECK_SET_LEN	80
#define CMDQ_CHECK_MAX_VARIANTS 64
struct cmdq_check_variant {
	char set[CMDQ_CHECK_SET_LEN]; /* "" (the base configuration) or one "key=value" */
};

#define ORACLE_MAX_CHECKS 8
#define ORACLE_DETAIL_LEN 512

struct oracle_check {
	const char *name; /* lower_snake_case, stable: tests and the CLI name checks by it */
	bool pass;
	bool unchecked; /* not judged (then !pass, and detail says why): no verdict either way */
	char detail[ORACLE_DETAIL_LEN]; /* the first counterexample when !pass */
};

struct oracle_report {
	struct oracle_check checks[ORACLE_MAX_CHECKS];
	uint32_t n_checks;
};

/* One point of the grid: the framework keys it sets (everything else is cmdq_check_base's). */
struct cmdq_check_point {
	int engine;	      /* enum engine_kind: the sim runs the plugin's .sim.so */
	uint64_t ops_per_cpu; /* the trial's length */
	uint32_t cpus;	      /* native: clamped to the online CPUs when applied */
	uint32_t queue_shift;
	bool msi;
	uint32_t cmds_per_sync;
	bool mixed; /* [workload.cmdq] mixed: 0 to cmds_per_sync per op, some unsynced */
	uint64_t think_ns;
	int memory;	 /* sim: enum machine_memory */
	uint32_t queues; /* [smmu] queues: one per CPU natively, fewer than CPUs from 16 on */
};

/* Every point, in the order verify runs them. */
const struct cmdq_check_point *cmdq_check_grid(size_t *n);

/*
 * The plugin configurations the grid runs d in, one parameter varied at a time: [0] is base
 * itself (the defaults, or verify's --set), then each parameter of d's table at each other
 * legal value: a bool flipped, every other enum choice, a number's min, min + 3 and max (the
 * ones no larger than CMDQ_CHECK_PARAM_MAX, and each only when it differs from base; a
 * duration, a key ending _ns, _us, _ms or _s, keeps its value: a shorter timeout only fires).
 * Returns
 * how many (at most max; at least 1 when max is not 0).
 */
size_t cmdq_check_variants(const struct lab_plugin *d, const void *base,
			   struct cmdq_check_variant *out, size_t max);

/*
 * Whether variant number variant runs at point p: the base at every point, the others at the
 * hostile ones only (2 native CPUs on a tiny queue without think time, and the sim part).
 */
bool cmdq_check_runs(const struct cmdq_check_point *p, size_t variant);

/* A deep copy of base with v applied (NULL with err); free with cmdq_check_config_free. */
void *cmdq_check_config(const struct lab_plugin *d, const void *base,
			const struct cmdq_check_variant *v, char *err, size_t err_len);
void cmdq_check_config_free(const struct lab_plugin *d, void *cfg);

/*
 * verify's watchdog, in ms (the scenario default is 3000). An op of a correct plugin ends within
 * the kernel's 1 s CMD_SYNC poll (plugins/cmdq/llq.h's LLQ_POLL_TIMEOUT_NS) even when it gives
 * up; natively the watchdog counts only the time the trial had its cores, so 1.5 s without
 * progress is a hang whatever the load. Each hung native configuration costs verify this much
 * (a plugin that never unlocks hangs 30 of them: 95 s of verify at 3000 ms, 51 s at 1500).
 */
#define CMDQ_CHECK_WATCHDOG_MS 1500u

/*
 * The scenario defaults with the keys every conformance trial shares (the cmdq workload,
 * natively, oversubscription allowed, verify's watchdog). A caller may change keys
 * afterwards (verify's --set); cmdq_check_apply then sets only the point's own. 0, or -errno
 * with the reason in err; scenario_cfg_free() it either way.
 */
int cmdq_check_base(struct scenario_cfg *cfg, char *err, size_t err_len);

/* Set p's keys onto cfg. */
void cmdq_check_apply(const struct cmdq_check_point *p, struct scenario_cfg *cfg);

/*
 * How many perturbed seeds (1 .. n) run at point p for variant number variant, besides its
 * unperturbed run: none natively and at 64 CPUs (the costliest trials, whose contention
 * already scrambles the schedule), CMDQ_CHECK_SEEDS for the base at 4 and 16 CPUs, 1 for
 * each other variant there.
 */
size_t cmdq_check_seeds(const struct cmdq_check_point *p, size_t variant);

/*
 * Perturb a sim point's cfg (after cmdq_check_apply): stalls of up to perturb_ns (0:
 * CMDQ_CHECK_PERTURB_NS) drawn from seed's sequences. The same seed replays the same run.
 */
void cmdq_check_perturb(struct scenario_cfg *cfg, uint64_t seed, double perturb_ns);

/*
 * "engine=native cpus=2 queues=2 queue_shift=3 msi=on cmds_per_sync=5 think_ns=0": the grid keys of
 * cfg (a mixed point says "cmds_per_sync=5 mixed=on", a perturbed sim point adds
 * "perturb_ns=2000 seed=N").
 */
void cmdq_check_describe(const struct scenario_cfg *cfg, char *buf, size_t len);

/* The oracle's check names, in the order every oracle_report lists them. */
const char *const *cmdq_check_names(size_t *n);

/* The check called name in o, or NULL. */
const struct oracle_check *cmdq_check_find(const struct oracle_report *o, const char *name);

/*
 * The oracle's verdicts on a trial that ran (trial_run's part, after it judged res): fills o
 * from the device's record (dev), the workload's (wl) and whether the trial hung (spoiled: given
 * up because the host held its threads off their cores, so no_deadlock is unchecked); when the
 * engine watched the plugin's use of lab.h (lab_h_watched: the sim), lab_h_only too, failing
 * with outside_lab_h when that is not NULL (stopped_outside: it ended the run, so no_deadlock
 * cannot be judged). A sync that returned early also fails res, when
 * nothing failed it before.
 */
void cmdq_check_oracle(struct oracle_report *o, const struct smmu_dev *dev,
		       const struct cmdq_wl *wl, bool hung, bool spoiled, bool lab_h_watched,
		       const char *outside_lab_h, bool stopped_outside, struct trial_result *res);

/*
 * A trial whose plugin wrote past the end of a lab_alloc() block (host_env_overruns(), found at
 * lab_free() or at the trial's end): no_crash fails with what, the crash its heap was headed
 * for. After cmdq_check_oracle().
 */
void cmdq_check_heap_overrun(struct oracle_report *o, const char *what);

/* How a trial's process was lost. */
enum cmdq_lost {
	CMDQ_LOST_CRASH, /* ended by a signal: no_crash fails */
	CMDQ_LOST_HANG,	 /* killed when it outlived every watchdog: no_deadlock fails */
	/* killed when the sim stopped moving (a CPU outside lab.h): lab_h_only fails on the sim,
	   no_deadlock natively */
	CMDQ_LOST_STALL,
};

/*
 * The report of a trial whose process never returned its own (sim: it ran on the sim, so the
 * report has the sim's checks too): the check how names fails with detail, every other is
 * unchecked.
 */
void cmdq_check_lost(struct oracle_report *o, enum cmdq_lost how, bool sim, const char *detail);

#endif /* IOMMULAB_VERIFY_CMDQ_CHECK_H */
