/* SPDX-License-Identifier: MIT */
/*
 * noise -- whether the host disturbed a native trial, and what the host was like: the
 * figures a reader needs to trust (or distrust) a measurement taken on a shared machine.
 *
 * Per trial: the 1-minute load average before and after, the steal time of /proc/stat over
 * the trial (a hypervisor running someone else on our vCPUs), and per worker thread its CPU
 * time against its wall time in the measured window and its involuntary context switches.
 * A thread that was runnable but off its core lost (wall - cpu) of its window to someone
 * else; when it also slept voluntarily (a plugin that blocks), only the involuntary share of
 * the switches is counted against the host.
 *
 * Verdicts (noise_judge), for a trial that would otherwise be ok:
 *   incomplete  completed no op, or (time-based) measured under NOISE_SHORT_FRAC of its
 *               duration: there is no result to report
 *   noisy       native only: a worker lost over NOISE_DESCHED_FRAC of its window to
 *               involuntary descheduling (oversubscribed: the workers together lost over
 *               NOISE_DESCHED_FRAC of the core time the scenario left them), or steal time
 *               exceeded NOISE_STEAL_FRAC
 * The reason goes to the trial's error field. Sim trials run in virtual time and are never
 * noisy by host load; trials of a fixed op count (verify, conformance) get no verdict.
 */
#ifndef IOMMULAB_NOISE_H
#define IOMMULAB_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "results/trial.h"

/*
 * A CPU hog sharing a worker's core at the same priority takes about half of its window;
 * a quiet machine's timer ticks, kworkers and the supervisor take well under 1%, and a
 * machine busy with niced builds a few percent. A quarter lies far from both.
 */
#define NOISE_DESCHED_FRAC 0.25
/* Steal is time the hypervisor gave away; as much as a tenth skews every figure. */
#define NOISE_STEAL_FRAC 0.10
/* What an incomplete sim trial's reason adds: virtual time has no host to blame. */
#define SIM_INCOMPLETE_WHY                                                                         \
	" of virtual time: its ops outlast the warm-up (a CPU measures from its first op after "   \
	"warmup_ms to its first op boundary after duration_ms); lengthen warmup_ms and "           \
	"duration_ms"
/* A window under half its duration: the trial stopped early (cmpxchg measuring 5 ms of
 * 1000 was reported as a throughput). */
#define NOISE_SHORT_FRAC 0.5

/* The host at one moment: load average and /proc/stat's ticks (have_* when readable). */
struct noise_mark {
	bool have_load, have_stat;
	double load1;
	uint64_t total_ticks, steal_ticks;
};

void noise_mark(struct noise_mark *m);

/*
 * Fill res->noise from the marks around the trial and the engine's per-CPU figures, then
 * give res (if ok) its verdict. native: the engine runs in real time on the host's cores;
 * core_share: the share of a core each of its busy threads can have, 1 unless the scenario
 * oversubscribes the cores (oversubscribe = allow: 2 cores for 3 CPUs, 2/3), when the
 * threads' descheduling is the scenario's own up to 1 - core_share, and only what the CPUs
 * together lost beyond it is the host's; duration_ns: the measured window asked for, 0 when
 * the trial is a fixed op count.
 */
void noise_judge(struct trial_result *res, const struct noise_mark *start,
		 const struct noise_mark *end, const struct engine_result *eres, uint32_t ncpus,
		 bool native, double core_share, uint64_t duration_ns);

/* For machine.txt: "/proc/cpuinfo"'s model name (or "unknown"). */
void noise_cpu_model(char *buf, size_t len);

/* For machine.txt: cpu0's cpufreq scaling governor, or "unknown". */
void noise_governor(char *buf, size_t len);

#endif /* IOMMULAB_NOISE_H */
