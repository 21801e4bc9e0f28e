/* SPDX-License-Identifier: MIT */
/*
 * smmu -- the device model: a simulated SMMUv3 command-queue consumer.
 *
 * It owns the ring and the PROD/CONS registers behind struct lab_smmu. Entries become
 * visible when PROD is written past them. Like the hardware, its latency and its throughput
 * are separate (timing: struct scenario_smmu, the [smmu] keys):
 *  - fetch: one entry at a time, in order, fetch_ns each, from the PROD write on;
 *  - every command but CMD_SYNC (invalidations, CFGIs, ...) is dispatched to an invalidation
 *    unit with inv_slots slots and completes its own latency (tlbi_va_ns, ...) after its
 *    dispatch; when every slot is busy the fetch stage waits for the first to free, and so
 *    does everything behind it. CONS may move past such an entry once it has been fetched
 *    (the device has read it: its slot is poisoned, so a slot consumed twice without being
 *    rewritten is caught);
 *  - a CMD_SYNC completes sync_ns after it was fetched and everything before it (earlier
 *    CMD_SYNCs included) completed; the fetch stage does not wait for it. On completion it
 *    writes its MSIDATA to its MSIADDR (CS = IRQ with msi); CONS moves past it msi_cons_ns
 *    after that write landed (at once without an MSI). So a CMD_SYNC's MSI is always visible
 *    before CONS passes it, in both engines (cmdq.h).
 * One CPU alone, a TLBI + CMD_SYNC: MSI at PROD write + fetch_ns + tlbi_va_ns + sync_ns.
 * Many CPUs: CMD_SYNCs pipeline, the device sustains one per max(2 x fetch_ns, sync_ns,
 * tlbi_va_ns / inv_slots) with one TLBI each.
 *
 * Queues ([smmu] queues = N, SMMUv3.3 ECMDQs or Tegra241 VCMDQs): each queue has its own
 * ring, PROD, CONS, protocol checks, pending CMD_SYNCs and completion time, so ordering and
 * CMD_SYNC are per queue (a CMD_SYNC waits for everything before it in its own queue only).
 * Shared by all queues: the fetch stage (one entry at a time, fetch_ns each, from whichever
 * queue), the invalidation unit's inv_slots, the clock, the counters. Arbitration: the queue
 * whose head entry can leave the fetch stage first goes first; at equal times, round robin
 * from the queue after the last one served. So N busy queues share the fetch rate one queue
 * had; what they gain is that a CMD_SYNC no longer waits for other queues' invalidations, and
 * that sync_ns, which serialises one queue's CMD_SYNCs, does not serialise two queues'. With
 * enough queues the bound is the shared max(2 x fetch_ns, tlbi_va_ns / inv_slots) per TLBI +
 * CMD_SYNC (an assumption: the SMMUv3.3 spec leaves arbitration and parallelism to the
 * implementation). One queue is the model above exactly.
 *
 * Protocol checks (each fails the trial with the slot and values, and halts the device as a
 * real SMMU halts on CMDQ_ERR): PROD with OVF set, PROD moving backwards, PROD overrunning
 * CONS by more than the queue, an entry published (PROD written past it) before it was
 * written, an unknown opcode, an entry rewritten after it was published but before it was
 * consumed.
 *
 * Time: a model clock, not the observer's. Each event (a fetch, a CMD_SYNC's completion, CONS
 * moving) happens at its model time and is acted on by whichever observer first looks after
 * that time:
 *  - DEVICE_INLINE: no thread of its own; CPUs that write PROD, read CONS or spin in a
 *    LAB_COND_LOAD* advance it (so a 2-core machine runs 2 workers, not 2 + a consumer);
 *  - DEVICE_THREAD: a dedicated thread polls the clock and advances it.
 * Both modes use the same timings and the same checks; the sim runs it as an agent at each
 * event's time (engine/sim/sim_engine.c).
 */
#ifndef IOMMULAB_SMMU_H
#define IOMMULAB_SMMU_H

#include <stdbool.h>
#include <stdint.h>

#include <iommulab/cmdq.h>

#include "scenario/scenario.h"

struct smmu_dev;

#define SMMU_MAX_QUEUES SCENARIO_SMMU_MAX_QUEUES

struct smmu_config {
	uint32_t shift;		       /* log2 entries */
	bool msi;		       /* CMD_SYNC may complete by MSI */
	int mode;		       /* enum device_mode */
	struct scenario_smmu timing;   /* latencies, fetch, concurrency and MMIO costs */
	uint32_t ncpus;		       /* for per-CPU tags (the harness's oracle) */
	uint64_t trace_cap;	       /* record up to this many consumed commands (0: none) */
	struct scenario_faults faults; /* injected: late CMD_SYNCs, a rejected command */
	/* Called once, from whichever thread found it, on the first protocol violation. */
	void (*on_violation)(void *arg);
	void *violation_arg;
};

/* The host's lab_host (for the ring's memory) and clock. NULL with err on failure. */
struct smmu_dev *smmu_new(const struct smmu_config *cfg, const struct lab_clock *clk, char *err,
			  size_t err_len);
void smmu_free(struct smmu_dev *dev);

/* What a cmdq plugin is given: queue 0 (the others through its queue member). */
struct lab_smmu *smmu_iface(struct smmu_dev *dev);

/* The queues: how many, and queue i's view (0 <= i < smmu_nqueues()). */
uint32_t smmu_nqueues(const struct smmu_dev *dev);
struct lab_smmu *smmu_q_iface(struct smmu_dev *dev, uint32_t i);

/* The spin hook of DEVICE_INLINE mode: advance if something is due (host_env_set_idle). */
void smmu_idle(struct lab_cpu *c, void *dev);

/* DEVICE_THREAD mode: start/stop the consumer thread. 0 or -errno. */
int smmu_start(struct smmu_dev *dev);
void smmu_stop(struct smmu_dev *dev);

/* Consume everything published whose time has come (for tests and teardown). */
void smmu_advance(struct smmu_dev *dev);

/* Model time (ns) of the device's next event; UINT64_MAX when idle (the sim's agent). */
uint64_t smmu_next_due(const struct smmu_dev *dev);

/* The index (IDX | WRP) of the next entry to fetch: slots before it were read and poisoned. */
uint32_t smmu_fetched(const struct smmu_dev *dev);
uint32_t smmu_q_fetched(const struct smmu_dev *dev, uint32_t i); /* queue i's (above: queue 0) */

/* A count that moves whenever the device stores into memory (a poisoned slot, an MSI) or
 * moves CONS: the sim's progress. */
uint64_t smmu_events(const struct smmu_dev *dev);

/*
 * fn (NULL: none) is called with [p, p + len) after each store the device makes into memory
 * CPUs read (a poisoned slot, an MSI), before events moves: so the sim wakes only the CPUs
 * sleeping on what changed instead of looking at every sleeping CPU.
 */
void smmu_set_store_hook(struct smmu_dev *dev, void (*fn)(void *arg, const void *p, size_t len),
			 void *arg);

/*
 * writel_relaxed(PROD) in two halves, for an engine that posts the write (the sim's memory =
 * arm, where a CPU's MMIO write may take effect after its later stores): the CPU's cost of the
 * write (ns), and its effect on queue s at time now (ns) of the device's clock. s->write_prod
 * is the two at once.
 */
uint64_t smmu_prod_write_ns(const struct smmu_dev *dev);
void smmu_q_write_prod_at(struct lab_smmu *s, uint32_t prod, uint64_t now);

/* The first violation, or NULL. */
const char *smmu_error(const struct smmu_dev *dev);

struct smmu_stats {
	uint64_t consumed;    /* commands CONS moved past, CMD_SYNCs included */
	uint64_t syncs;	      /* CMD_SYNCs consumed */
	uint64_t msi_writes;  /* CMD_SYNCs completed by MSI */
	uint64_t prod_writes; /* MMIO writes of PROD */
	uint64_t cons_reads;  /* MMIO reads of CONS */
};
void smmu_get_stats(struct smmu_dev *dev, struct smmu_stats *out);

/*
 * Every CPU that drove the device has been unwound (an abandoned trial): one may have been
 * unwound inside a register access, holding the device's lock. The device stops and its
 * lock is released, so that its counters can be read. Only once no CPU runs any more.
 */
void smmu_cpus_unwound(struct smmu_dev *dev);

/* Register values now (for reports): queue 0's, and queue i's. */
uint32_t smmu_prod(const struct smmu_dev *dev);
uint32_t smmu_cons(const struct smmu_dev *dev);
uint32_t smmu_q_prod(const struct smmu_dev *dev, uint32_t i);
uint32_t smmu_q_cons(const struct smmu_dev *dev, uint32_t i);

/*
 * The harness's tags. A TLBI_NH_VA built by smmu_tag_cmd(cpu, seq, i) carries the issuing
 * CPU in its ASID and (seq, i) in its address; the device records, per CPU, the highest seq
 * whose last command (i == last) a completed CMD_SYNC covers, and keeps the trace (in fetch
 * order) for the oracle.
 */
struct lab_cmd smmu_tag_cmd(uint32_t cpu, uint64_t seq, uint32_t i, uint32_t n);
bool smmu_untag_cmd(const struct lab_cmd *cmd, uint32_t *cpu, uint64_t *seq, uint32_t *i,
		    uint32_t *n);
/* Highest seq of cpu whose commands a completed CMD_SYNC covers (0: none yet; seqs start at
 * 1): what a strategy's issue(sync) must have waited for. */
uint64_t smmu_done_seq(const struct smmu_dev *dev, uint32_t cpu);

/* The trace: commands in consumption order. *truncated if trace_cap was reached. One per
 * queue (each up to trace_cap): smmu_trace is queue 0's. */
const struct lab_cmd *smmu_trace(const struct smmu_dev *dev, uint64_t *n, bool *truncated);
const struct lab_cmd *smmu_q_trace(const struct smmu_dev *dev, uint32_t i, uint64_t *n,
				   bool *truncated);

#endif /* IOMMULAB_SMMU_H */
