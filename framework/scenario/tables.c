/* SPDX-License-Identifier: MIT */
/*
 * tables -- the framework's fixed scenario sections and their typed keys. A new section is a
 * struct in scenario.h, a member of struct scenario_cfg, a table here and one SECTION() line.
 */
#include "scenario/scenario.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader/loader.h"
#include "params/params.h"

/* The key is the member's name, so a table cannot drift from its struct. */
#define P(st, member, type, def, lo, hi, choices, help)                                            \
	{                                                                                          \
#member, type, def, lo, hi, choices, help, offsetof(struct st, member)             \
	}
#define SECTION(name, member, table, help)                                                         \
	{                                                                                          \
		name, table, LAB_ARRAY_SIZE(table), offsetof(struct scenario_cfg, member), help,   \
			sizeof(((struct scenario_cfg *)0)->member)                                 \
	}

#define NS_MAX 100000000 /* 100 ms: far beyond any real SMMU command, still a sane bound */

static const char *const workload_choices[] = { "cmdq", "iova", "dma", "micro", NULL };
static const char *const engine_choices[] = { "native", "sim", NULL };
static const char *const oversubscribe_choices[] = { "refuse", "allow", NULL };
static const char *const device_choices[] = { "inline", "thread", NULL };

static const struct lab_param main_params[] = {
	P(scenario_main, name, LAB_PARAM_STRING, "scenario", 0, 0, NULL,
	  "results go to results/<name>-<time>/"),
	P(scenario_main, workload, LAB_PARAM_ENUM, "cmdq", 0, 0, workload_choices,
	  "the loop each CPU runs: cmdq (TLBI + CMD_SYNC), iova (alloc/free), dma (both)"),
	P(scenario_main, engine, LAB_PARAM_ENUM, "native", 0, 0, engine_choices,
	  "native: real threads and atomics; sim: simulated many-core machine"),
	P(scenario_main, cpus, LAB_PARAM_UINT, "1", 1, SCENARIO_MAX_CPUS, NULL,
	  "CPUs in the trial (worker threads natively, virtual CPUs in the sim)"),
	P(scenario_main, duration_ms, LAB_PARAM_UINT, "500", 1, 3600000, NULL,
	  "measured time per trial"),
	P(scenario_main, warmup_ms, LAB_PARAM_UINT, "100", 0, 600000, NULL,
	  "unmeasured time before each trial's measurement"),
	P(scenario_main, repeats, LAB_PARAM_UINT, "1", 1, 1000, NULL,
	  "trials per sweep point and plugin (mean and 95% interval over them)"),
	P(scenario_main, seed, LAB_PARAM_UINT, "1", 0, 0, NULL,
	  "random seed (the sim is bit-for-bit repeatable for a seed)"),
	P(scenario_main, oversubscribe, LAB_PARAM_ENUM, "refuse", 0, 0, oversubscribe_choices,
	  "more CPUs than online cores: refuse, or allow (measures the scheduler; flagged)"),
	P(scenario_main, phases, LAB_PARAM_BOOL, "true", 0, 0, NULL,
	  "record the time each op spends in each phase"),
	P(scenario_main, watchdog_ms, LAB_PARAM_UINT, "3000", 10, 3600000, NULL,
	  "a CPU with no completed op for this long fails the trial"),
	P(scenario_main, sample_every, LAB_PARAM_UINT, "1", 1, 1000000000, NULL,
	  "cmdq and micro: time only every N-th measured op (throughput still counts every op; "
	  "1: every op, the latency histograms exact)"),
};

/*
 * The device's defaults: a HiSilicon hi1620 (Kunpeng 920, the D06 board) SMMU. Latency and
 * throughput are separate parameters, set from two published figures and nothing else:
 *  - latency, one CPU alone (the reference's calibration point, John Garry's profile of a
 *    one-page strict unmap): CMD_SYNC wait 0.883 us, i.e. PROD write -> MSI =
 *    fetch_ns + tlbi_va_ns + sync_ns = 20 + 460 + 400 = 880 ns (the serial model's 100 + 780:
 *    one CPU's round trip is unchanged); `issue` 1.328 us, 0.445 us more than the wait: the
 *    CPU's side, of which the sim's queue code costs about 60 ns, so prod_write_ns = 400 is
 *    the owner's PROD write (writel after the barriers that make the ring visible to the
 *    SMMU, a posted write across the SoC to the IO die);
 *  - throughput, 8 CPUs (Barry Song's ways test, cmpxchg queue, strict): 282K map + unmap per
 *    CPU per second, 2.26 M TLBI + CMD_SYNC per second in aggregate, which the serial model
 *    (1.14 M/s at most) could not reach. What bounds the pipeline is a CMD_SYNC's own
 *    completion, one after the other: draining the TBUs' invalidation acknowledgements and
 *    writing the MSI. sync_ns = 400 is 2.5 M/s, which that 8-CPU point loads to ~90%
 *    (configs/ways-d06.ini reproduces it; README, calibration, has the figures);
 *  - fetch_ns = 20: the command fetch reads 64-byte lines (4 commands) from the L3, about 80
 *    ns each; never the bound (2 x 20 < 400);
 *  - tlbi_va_ns = 460: the rest of the round trip, a TLBI's broadcast to the TBUs and back;
 *    inv_slots = 8 in flight (8 / 460 ns = 17 M/s: the bound only for long TLBI runs, a
 *    64-command batch). The other opcodes keep their old ratio to tlbi_va_ns.
 */
static const struct lab_param smmu_params[] = {
	P(scenario_smmu, queue_shift, LAB_PARAM_UINT, "16", 3, 20, NULL,
	  "log2 of the command queue entries (the kernel needs > 6; tiny queues test wrap/full)"),
	P(scenario_smmu, msi, LAB_PARAM_BOOL, "true", 0, 0, NULL,
	  "CMD_SYNC completes by an MSI write into the command (else by polling CONS)"),
	P(scenario_smmu, device, LAB_PARAM_ENUM, "inline", 0, 0, device_choices,
	  "inline: advanced by whichever CPU reads CONS or waits; thread: a dedicated consumer "
	  "thread"),
	P(scenario_smmu, tlbi_va_ns, LAB_PARAM_UINT, "460", 0, NS_MAX, NULL,
	  "latency of a TLBI_NH_VA from its dispatch to its completion (overlaps other commands)"),
	P(scenario_smmu, tlbi_asid_ns, LAB_PARAM_UINT, "920", 0, NS_MAX, NULL,
	  "latency of a TLBI_NH_ASID (and the other whole-TLB invalidations)"),
	P(scenario_smmu, cfgi_ns, LAB_PARAM_UINT, "460", 0, NS_MAX, NULL,
	  "latency of a CFGI_* (configuration cache invalidation)"),
	P(scenario_smmu, atc_inv_ns, LAB_PARAM_UINT, "2300", 0, NS_MAX, NULL,
	  "latency of an ATC_INV (an ATS invalidation round trip to the endpoint)"),
	P(scenario_smmu, other_ns, LAB_PARAM_UINT, "460", 0, NS_MAX, NULL,
	  "latency of any other command"),
	P(scenario_smmu, sync_ns, LAB_PARAM_UINT, "400", 0, NS_MAX, NULL,
	  "a CMD_SYNC's own completion once everything before it completed (draining the "
	  "invalidation acks, the MSI write); one after the other, so it bounds the sync rate"),
	P(scenario_smmu, prod_write_ns, LAB_PARAM_UINT, "400", 0, NS_MAX, NULL,
	  "MMIO write of PROD with the barriers before it, paid by the writing CPU"),
	P(scenario_smmu, cons_read_ns, LAB_PARAM_UINT, "150", 0, NS_MAX, NULL,
	  "MMIO read of CONS, paid by the reading CPU"),
	P(scenario_smmu, fetch_ns, LAB_PARAM_UINT, "20", 0, NS_MAX, NULL,
	  "the device reading and decoding one command from the ring, in order, one at a time"),
	P(scenario_smmu, inv_slots, LAB_PARAM_UINT, "8", 1, 256, NULL,
	  "commands other than CMD_SYNC the device has in flight at once (their latencies "
	  "overlap; a full unit stalls the fetch)"),
	P(scenario_smmu, msi_cons_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "from a CMD_SYNC's MSI write landing to CONS moving past it (the MSI is always first)"),
	P(scenario_smmu, queues, LAB_PARAM_UINT, "1", 1, SCENARIO_SMMU_MAX_QUEUES, NULL,
	  "command queues, each with its own ring and PROD/CONS (ECMDQs, VCMDQs) and its own "
	  "CMD_SYNC pipeline (sync_ns per queue); one fetch stage and one invalidation unit "
	  "serve them all, round robin (strategies that know one queue use queue 0)"),
};

static const struct lab_param wl_cmdq_params[] = {
	P(scenario_wl_cmdq, cmds_per_sync, LAB_PARAM_UINT, "1", 0, 256, NULL,
	  "TLBI commands before each CMD_SYNC (0: CMD_SYNC alone)"),
	P(scenario_wl_cmdq, mixed, LAB_PARAM_BOOL, "false", 0, 0, NULL,
	  "each op issues a seeded 0 to cmds_per_sync commands (uniformly), one in four of "
	  "those with commands without a CMD_SYNC (the kernel's batch_add of a full batch), one "
	  "without commands a CMD_SYNC alone (issue_sync): the shapes a driver issues, which "
	  "verify runs too; false: cmds_per_sync and a CMD_SYNC every op"),
	P(scenario_wl_cmdq, think_ns, LAB_PARAM_UINT, "1000", 0, NS_MAX, NULL,
	  "local work between ops (a 4 KiB memcpy in the ways test)"),
	P(scenario_wl_cmdq, think_jitter, LAB_PARAM_DOUBLE, "0.1", 0, 1, NULL,
	  "each think time drawn uniformly from think_ns x [1 - j, 1 + j] (mean think_ns), "
	  "seeded per trial: real work varies, and a constant one lets the sim lock CPUs into "
	  "a deterministic cycle that reads as a result (0: constant)"),
};

static const char *const pattern_choices[] = { "same-cpu", "remote-free", "producer-consumer",
					       "irq", NULL };

static const struct lab_param wl_iova_params[] = {
	P(scenario_wl_iova, pattern, LAB_PARAM_ENUM, "same-cpu", 0, 0, pattern_choices,
	  "who frees: the allocating CPU, every k-th CPU (IRQ skew), the pair's partner, or "
	  "irq: submit_cpus jobs allocate, the IRQ CPU of each job's hardware queue frees "
	  "io_ns later (blk-mq: irq_cpus queues over contiguous CPU blocks)"),
	P(scenario_wl_iova, free_every, LAB_PARAM_UINT, "4", 1, 4096, NULL,
	  "remote-free: only CPUs 0, k, 2k, ... free (each for its group of k)"),
	P(scenario_wl_iova, depth, LAB_PARAM_UINT, "32", 1, 65536, NULL,
	  "outstanding ranges per CPU (a queue depth)"),
	P(scenario_wl_iova, min_pages, LAB_PARAM_UINT, "1", 1, 1048576, NULL,
	  "smallest range, pages (sizes are log-uniform in [min_pages, max_pages])"),
	P(scenario_wl_iova, max_pages, LAB_PARAM_UINT, "1", 1, 1048576, NULL,
	  "largest range, pages (above 32 the rcache does not cache)"),
	P(scenario_wl_iova, dma_bits, LAB_PARAM_UINT, "32", 20, 64, NULL,
	  "the device's DMA mask; above 32, dma-iommu tries below 4 GiB first"),
	P(scenario_wl_iova, think_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "local work after each alloc or free"),
	P(scenario_wl_iova, irq_cpus, LAB_PARAM_UINT, "16", 1, 65536, NULL,
	  "irq: hardware queues; queue q serves CPUs [q n/irq_cpus, (q+1) n/irq_cpus) and its "
	  "IRQ runs on the first of them"),
	P(scenario_wl_iova, submit_cpus, LAB_PARAM_UINT, "0", 0, 65536, NULL,
	  "irq: jobs (fio numjobs), on CPUs spread evenly over the machine (0: every CPU)"),
	P(scenario_wl_iova, io_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "irq: time from a range's allocation to its I/O's completion interrupt"),
	P(scenario_wl_iova, io_jitter, LAB_PARAM_DOUBLE, "0.5", 0, 1, NULL,
	  "irq: each I/O's time drawn uniformly from io_ns x [1 - j, 1 + j], seeded (flash "
	  "reads vary; a constant time locks submitters and IRQ CPUs into one cycle)"),
	P(scenario_wl_iova, migrate_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "irq: each job moves to a seeded random CPU this often, as an unpinned fio job woken "
	  "for its completions wherever the scheduler finds room (0: jobs stay on their CPU)"),
};

static const char *const dma_pattern_choices[] = { "single", "ways", "irq", NULL };
static const char *const dma_mode_choices[] = { "strict", "lazy", "passthrough", NULL };
static const char *const dma_fq_choices[] = { "percpu", "single", NULL };
static const char *const dma_identity_choices[] = { "none", "list", "cached", NULL };

static const struct lab_param wl_dma_params[] = {
	P(scenario_wl_dma, pages, LAB_PARAM_UINT, "1", 1, 1024, NULL,
	  "pages per mapping (dma_map_benchmark's granule); one TLBI each on unmap"),
	P(scenario_wl_dma, pt_map_ns, LAB_PARAM_UINT, "100", 0, NS_MAX, NULL,
	  "writing the page-table entries on map"),
	P(scenario_wl_dma, pt_unmap_ns, LAB_PARAM_UINT, "100", 0, NS_MAX, NULL,
	  "clearing them on unmap"),
	P(scenario_wl_dma, trans_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "the device's transfer between map and unmap (dma_trans_ns)"),
	P(scenario_wl_dma, dma_bits, LAB_PARAM_UINT, "32", 20, 64, NULL,
	  "the device's DMA mask (dma_map_benchmark's -b, 32 by default)"),
	P(scenario_wl_dma, pattern, LAB_PARAM_ENUM, "single", 0, 0, dma_pattern_choices,
	  "single: an op is one map + unmap (dma_map_benchmark); ways: an op is batch maps, each "
	  "with think_ns of work, then batch unmaps (Barry Song's ways harness); irq: submit_cpus "
	  "jobs map, the IRQ CPU of each job's hardware queue unmaps trans_ns later (NVMe on "
	  "blk-mq), an op is one map or one unmap"),
	P(scenario_wl_dma, batch, LAB_PARAM_UINT, "50", 1, 1024, NULL,
	  "ways: maps, then unmaps, per loop (map + unmap per CPU per s = ops/s x batch / cpus)"),
	P(scenario_wl_dma, think_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "ways: work after each map (the harness's memcpy into the buffer); irq: the rest of "
	  "the submission path after its map"),
	P(scenario_wl_dma, think_jitter, LAB_PARAM_DOUBLE, "0.1", 0, 1, NULL,
	  "ways: each think time uniform in think_ns x [1 - j, 1 + j], from a stream per CPU "
	  "seeded by scenario.seed, so lock-step cycles do not read as results; 0: constant "
	  "(irq's completions are jittered by trans_jitter)"),
	P(scenario_wl_dma, irq_cpus, LAB_PARAM_UINT, "16", 1, 65536, NULL,
	  "irq: hardware queues; queue q serves CPUs [q n/irq_cpus, (q+1) n/irq_cpus) and its "
	  "IRQ, where the unmaps run, lands on the first of them"),
	P(scenario_wl_dma, submit_cpus, LAB_PARAM_UINT, "0", 0, 65536, NULL,
	  "irq: jobs (fio numjobs), on CPUs spread evenly over the machine (0: every CPU)"),
	P(scenario_wl_dma, depth, LAB_PARAM_UINT, "32", 1, 65536, NULL,
	  "irq: I/Os in flight per job (fio iodepth)"),
	P(scenario_wl_dma, irq_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "irq: the completion's work on the IRQ CPU besides the unmap (nvme_irq, "
	  "blk_mq_complete_request)"),
	P(scenario_wl_dma, trans_jitter, LAB_PARAM_DOUBLE, "0.5", 0, 1, NULL,
	  "irq: each I/O's trans_ns drawn uniformly from trans_ns x [1 - j, 1 + j], seeded"),
	P(scenario_wl_dma, migrate_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "irq: each job moves to a seeded random CPU this often, as an unpinned fio job woken "
	  "for its completions wherever the scheduler finds room (0: jobs stay on their CPU)"),
	P(scenario_wl_dma, mode, LAB_PARAM_ENUM, "strict", 0, 0, dma_mode_choices,
	  "strict: each unmap invalidates (TLBI + CMD_SYNC) before it returns; lazy: unmapped "
	  "IOVAs wait in a flush queue for one TLBI_NH_ASID + CMD_SYNC, then are freed "
	  "(iommu.strict=0); passthrough: no SMMU, dma-direct (direct_ns per map and unmap)"),
	P(scenario_wl_dma, gather, LAB_PARAM_BOOL, "true", 0, 0, NULL,
	  "strict: an unmap's invalidations share one CMD_SYNC (iommu_iotlb_gather); false: a "
	  "TLBI + CMD_SYNC per page, as if each page were unmapped on its own"),
	P(scenario_wl_dma, range_inv, LAB_PARAM_BOOL, "false", 0, 0, NULL,
	  "strict: range TLBIs (SMMUv3.2 RIL: up to 32 pages per command) instead of one per "
	  "page; the hi1620 predates them"),
	P(scenario_wl_dma, fq, LAB_PARAM_ENUM, "percpu", 0, 0, dma_fq_choices,
	  "lazy: a flush queue per CPU (256 entries, 10 ms) or one for the domain (single: "
	  "32768 entries, 1000 ms)"),
	P(scenario_wl_dma, fq_size, LAB_PARAM_UINT, "0", 0, 1048576, NULL,
	  "lazy: entries per flush queue ring; a full ring flushes (0: 256, single 32768)"),
	P(scenario_wl_dma, fq_timeout_ms, LAB_PARAM_UINT, "0", 0, 100000, NULL,
	  "lazy: a flush this long after the first unmap queued since the last timeout flush "
	  "(0: 10, single 1000)"),
	P(scenario_wl_dma, direct_ns, LAB_PARAM_UINT, "20", 0, NS_MAX, NULL,
	  "passthrough: dma-direct's map or unmap (phys_to_dma and the mask check)"),
	P(scenario_wl_dma, identity, LAB_PARAM_ENUM, "none", 0, 0, dma_identity_choices,
	  "intel-iommu's iommu=pt question per page of every map and unmap: list (2011: one "
	  "global lock, walk the identity domain's devices list), cached (the fix: a per-device "
	  "field), none (not asked)"),
	P(scenario_wl_dma, devices, LAB_PARAM_UINT, "11000", 1, 1000000, NULL,
	  "identity = list: devices on the identity domain's list, a cache line each (Travis's "
	  "2011 UV system had about 11,000 PCI devices)"),
	P(scenario_wl_dma, position, LAB_PARAM_DOUBLE, "1", 0, 1, NULL,
	  "identity = list, passthrough: where the device sits in the list, a fraction of "
	  "devices (1: last; the walk reads ceil(position x devices) nodes, at least 1); in "
	  "strict and lazy the device is on no list and the walk reads them all"),
};

static const char *const atomic_choices[] = { "near", "far", "adaptive", NULL };
static const char *const memory_choices[] = { "sc", "arm", NULL };
#define STR_(x)		  #x
#define STR(x)		  STR_(x)
#define PERTURB_EVERY_STR STR(SCENARIO_SIM_PERTURB_EVERY)
/* In enum machine_preset's order. */
static const char *const preset_choices[] = { "graviton2", "kunpeng920", "none", NULL };

/*
 * The table's defaults are preset = none's machine: a generic mesh server core, every
 * transfer line_ns, that matches nothing real. A scenario starts from the preset instead
 * (graviton2 unless it says otherwise), and the keys it sets replace the preset's.
 */
static const struct lab_param machine_params[] = {
	P(scenario_machine, preset, LAB_PARAM_ENUM, "graviton2", 0, 0, preset_choices,
	  "the shipped, calibrated machine the other [machine] keys start from (keys set here "
	  "replace its values): graviton2 (AWS Graviton2, 64 Neoverse N1 cores, within 25% of "
	  "its measured atomics), kunpeng920 (HiSilicon Kunpeng 920, 64 cores, LSE far atomics, "
	  "failing CASes served in turn at the home), "
	  "none (the defaults below: uniform line_ns, near atomics)"),
	P(scenario_machine, topology, LAB_PARAM_STRING, "", 0, 0, NULL,
	  "core-to-core latency CSV (lower-triangular, ns), relative to the INI file; empty: "
	  "every transfer costs line_ns (the presets name theirs, configs/topologies)"),
	P(scenario_machine, line_ns, LAB_PARAM_DOUBLE, "50", 0, 100000, NULL,
	  "cache-line transfer between two cores when there is no topology"),
	P(scenario_machine, home_ns, LAB_PARAM_DOUBLE, "40", 0, 100000, NULL,
	  "transfer of a line from its home (LLC / home node) or from the device"),
	P(scenario_machine, local_ns, LAB_PARAM_DOUBLE, "1", 0, 10000, NULL,
	  "load or store hitting the own cache"),
	P(scenario_machine, atomic_ns, LAB_PARAM_DOUBLE, "5", 0, 10000, NULL,
	  "read-modify-write once the line is there (own cache, or the home when far)"),
	P(scenario_machine, op_ns, LAB_PARAM_DOUBLE, "0.5", 0, 10000, NULL,
	  "added to every lab.h operation: the instructions around it"),
	P(scenario_machine, occupancy, LAB_PARAM_DOUBLE, "1", 0, 1, NULL,
	  "fraction of a transfer during which the line cannot serve the next requester"),
	P(scenario_machine, read_occupancy, LAB_PARAM_DOUBLE, "0", 0, 1, NULL,
	  "the same for a read miss (a copy handed out shared) where it differs from an "
	  "ownership transfer's; 0: occupancy"),
	P(scenario_machine, fail_hold, LAB_PARAM_DOUBLE, "0.24", 0, 1, NULL,
	  "a far CAS whose compare fails holds the line this fraction of a far atomic's time "
	  "(occupancy x home_ns): the home reads and compares, writes nothing, invalidates no "
	  "copy (the default is Graviton2's, calibrated)"),
	P(scenario_machine, atomic, LAB_PARAM_ENUM, "near", 0, 0, atomic_choices,
	  "near: the line moves to the requester (x86); far: done at the home (Arm LSE); "
	  "adaptive: near while no other core holds the line, far once it is contended (N1)"),
	P(scenario_machine, poll_ns, LAB_PARAM_DOUBLE, "50", 0.001, 1e9, NULL,
	  "one iteration of an MMIO register poll (lab_spin_wait with no line)"),
	P(scenario_machine, home_hold_ns, LAB_PARAM_DOUBLE, "0", 0, 100000, NULL,
	  "how long a far atomic holds the line at its home (the home's per-line atomic "
	  "throughput: 1 / this); 0: occupancy x the transfer"),
	P(scenario_machine, cas_hold_ns, LAB_PARAM_DOUBLE, "0", 0, 100000, NULL,
	  "how long a far CAS that succeeds holds the line at its home (read, compare, then "
	  "write); 0: as home_hold_ns"),
	P(scenario_machine, fail_burst, LAB_PARAM_BOOL, "true", 0, 0, NULL,
	  "true: a far CAS whose compare fails, arriving while the line is busy, is answered with "
	  "the burst the line serves when it frees, adding nothing to its time (Graviton2, "
	  "calibrated); false: the home serves it in turn, holding the line fail_hold of an "
	  "atomic's time like one that finds it idle"),
	P(scenario_machine, memory, LAB_PARAM_ENUM, "sc", 0, 0, memory_choices,
	  "sc: every store is seen by every CPU once it completes; arm: a relaxed store waits in "
	  "its CPU's store buffer and becomes visible to the others up to store_delay_ns later, "
	  "out of order with the CPU's other stores, until a release (store, rmw or fence) "
	  "orders it; the CPU itself reads its own stores at once; a relaxed load may be "
	  "satisfied early, with its word's value up to store_delay_ns ago, but not before the "
	  "CPU's last acquire or its last look at that word (verify runs both)"),
	P(scenario_machine, store_delay_ns, LAB_PARAM_DOUBLE, "5000", 0, 1e7, NULL,
	  "memory = arm: each relaxed store becomes visible to other CPUs and the device a "
	  "seeded, uniformly drawn 0 to this many ns after it completes (hardware drains in "
	  "tens of ns but the architecture sets no bound: large, so late visibility is explored); "
	  "and a relaxed load is satisfied at most this many ns early"),
	P(scenario_machine, smt_ns, LAB_PARAM_DOUBLE, "0", 0, 1000, NULL,
	  "two CPUs of the topology whose transfer costs at most this are the SMT threads of one "
	  "core (the mctop tables' 10-13 ns pairs; the next-nearest cores are 40 ns and more "
	  "away); 0: every CPU a core of its own"),
	P(scenario_machine, smt_share, LAB_PARAM_DOUBLE, "1", 0.01, 1, NULL,
	  "an SMT thread's speed at local work (lab_delay_ns, a think, a critical section) while "
	  "its sibling is in the run, working or spinning: both share the core's issue slots; "
	  "1: no slowdown"),
	P(scenario_machine, socket_ns, LAB_PARAM_DOUBLE, "0", 0, 10000, NULL,
	  "two CPUs of the topology whose transfer costs at most this share a socket; a line's "
	  "home is the socket of the CPU that touched it first, and a transfer between two other "
	  "sockets goes through it (three hops: half of each of the three pairs' costs); 0: "
	  "every transfer the pair's"),
	P(scenario_machine, perturb_ns, LAB_PARAM_DOUBLE, "0", 0, 1e7, NULL,
	  "schedule perturbation (PCT-like; verify sets it): at each lab.h shared access a "
	  "virtual CPU stalls, with probability 1/" PERTURB_EVERY_STR ", for a delay drawn "
	  "uniformly from 0 to this many ns (a per-CPU sequence seeded by scenario.seed), so "
	  "interleavings the deterministic schedule never produces are explored; 0: off (results "
	  "byte-identical to a run without the key)"),
};

/*
 * The presets, as the INI text of the keys they set over the table's defaults (so a preset is
 * exactly what a [machine] section with these lines would give). Each is a shipped,
 * calibrated parameter set; change one only together with its calibration.
 */
struct preset_keys {
	const char *topology; /* a file in scenario_topology_dir(); NULL: uniform */
	const char *keys[16][2];
};

static const struct preset_keys presets[] = {
	/* configs/calibrate-graviton2.ini, within 25% of calibration/graviton2-atomics.csv */
	[MACHINE_PRESET_GRAVITON2] = { "graviton2-64c.csv",
				       { { "atomic", "adaptive" },
					 { "home_ns", "16" },
					 { "occupancy", "0.55" },
					 { "home_hold_ns", "9.4" },
					 { "cas_hold_ns", "16" },
					 { "fail_hold", "0.24" },
					 { "atomic_ns", "4.8" },
					 { "local_ns", "1" },
					 { "op_ns", "0.5" } } },
	/*
	 * configs/cmdq-ways-sim.ini: the D06's measured matrix, Armv8.1 LSE far atomics served
	 * in turn at the home, failing CASes too (John Garry's CAS "failing at an exponential
	 * rate" past 16 CPUs; README "Engines")
	 */
	[MACHINE_PRESET_KUNPENG920] = { "kunpeng920-64c.csv",
					{ { "atomic", "far" },
					  { "home_ns", "40" },
					  { "fail_burst", "false" } } },
	[MACHINE_PRESET_NONE] = { NULL, { { NULL, NULL } } },
};

static_assert(LAB_ARRAY_SIZE(presets) == LAB_ARRAY_SIZE(preset_choices) - 1,
	      "one preset per choice");

const char *scenario_machine_preset_name(int preset)
{
	if (preset < 0 || (size_t)preset >= LAB_ARRAY_SIZE(presets))
		return NULL;
	return preset_choices[preset];
}

const char *scenario_topology_dir(void)
{
	const char *env = getenv("IOMMULAB_TOPOLOGY_DIR");
	struct stat st;

	if (env && *env)
		return env;
	/* As cli_plot_dir(): a build tree reads the source's files, an installed binary its own. */
	if (!strncmp(loader_builtin_dir(), LAB_PLUGIN_INSTALL_DIR,
		     strlen(LAB_PLUGIN_INSTALL_DIR)) &&
	    !stat(LAB_TOPOLOGY_INSTALL_DIR, &st))
		return LAB_TOPOLOGY_INSTALL_DIR;
	return LAB_TOPOLOGY_SOURCE_DIR;
}

int scenario_machine_preset(struct scenario_machine *m, int preset, char *err, size_t err_len)
{
	const struct lab_param *t = machine_params;
	const size_t n = LAB_ARRAY_SIZE(machine_params);
	const struct preset_keys *mp;
	char *topo = NULL;
	int rc;

	if (!scenario_machine_preset_name(preset)) {
		snprintf(err, err_len, "no machine preset %d", preset);
		return -EINVAL;
	}
	mp = &presets[preset];
	if (mp->topology) {
		const char *dir = scenario_topology_dir();

		topo = malloc(strlen(dir) + 1 + strlen(mp->topology) + 1);
		if (!topo) {
			snprintf(err, err_len, "out of memory");
			return -ENOMEM;
		}
		sprintf(topo, "%s/%s", dir, mp->topology);
	}
	param_free_strings(t, n, m);
	rc = param_set_defaults(t, n, m, err, err_len);
	for (size_t i = 0; !rc && i < LAB_ARRAY_SIZE(mp->keys) && mp->keys[i][0]; i++) {
		const struct lab_param *p = param_find(t, n, mp->keys[i][0]);

		rc = p ? param_parse(p, mp->keys[i][1], m, err, err_len) : -EINVAL;
	}
	if (rc) {
		free(topo);
		return rc;
	}
	m->preset = preset;
	if (topo) {
		free(m->topology);
		m->topology = topo;
	}
	return 0;
}

void scenario_machine_describe(const struct scenario_machine *m, char *buf, size_t len)
{
	const struct lab_param *t = machine_params;
	const size_t n = LAB_ARRAY_SIZE(machine_params);
	struct scenario_machine ref = { 0 };
	const char *name = scenario_machine_preset_name(m->preset);
	char err[128], a[4200], b[4200];
	size_t off, n_set = 0;

	off = (size_t)snprintf(buf, len, "%s (preset", name ? name : "?");
	if (!name || scenario_machine_preset(&ref, m->preset, err, sizeof(err))) {
		snprintf(buf + off, len > off ? len - off : 0, ")");
		return;
	}
	for (size_t i = 0; i < n && off < len; i++) {
		if (t[i].offset == offsetof(struct scenario_machine, preset))
			continue;
		if (param_format(&t[i], m, a, sizeof(a)) ||
		    param_format(&t[i], &ref, b, sizeof(b)) || !strcmp(a, b))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", n_set++ ? ", " : "; ",
					t[i].key);
	}
	if (off < len)
		snprintf(buf + off, len - off, "%s)", n_set ? " set in [machine]" : "");
	param_free_strings(t, n, &ref);
}

static const char *const micro_op_choices[] = { "atomic_add", "cas_add",    "ticket_lock",
						"tas_lock",   "ttas_lock",  "mcs_lock",
						"clh_lock",   "qspin_lock", NULL };
static const char *const micro_mode_choices[] = { "latency", "throughput", NULL };

static const struct lab_param wl_micro_params[] = {
	P(scenario_wl_micro, op, LAB_PARAM_ENUM, "atomic_add", 0, 0, micro_op_choices,
	  "the primitive every CPU repeats on one shared line: fetch-add, CAS retry loop, or "
	  "a lock (ticket, test-and-set, test-and-test-and-set, MCS, CLH, the kernel's queued "
	  "spinlock) around an increment"),
	P(scenario_wl_micro, think_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "local work after each op (0: back to back)"),
	P(scenario_wl_micro, critical_ns, LAB_PARAM_UINT, "0", 0, NS_MAX, NULL,
	  "lock ops: local work while holding the lock (0: only the increment); refused with "
	  "atomic_add and cas_add, which hold no lock"),
	P(scenario_wl_micro, mode, LAB_PARAM_ENUM, "latency", 0, 0, micro_mode_choices,
	  "latency: each op timed (one chained timestamp); throughput: no clock read inside the "
	  "window, ns per op per thread = window / ops, as lockhammer"),
};

static const struct lab_param faults_params[] = {
	P(scenario_faults, alloc_fail_every, LAB_PARAM_UINT, "0", 0, 1000000000, NULL,
	  "every N-th shared allocation during the run fails (0: never): the kernel's fallbacks"),
	P(scenario_faults, sync_delay_ns, LAB_PARAM_UINT, "0", 0, 10000000000.0, NULL,
	  "extra device time on a CMD_SYNC (a late completion; past 1 s the kernel's poll times "
	  "out)"),
	P(scenario_faults, sync_delay_every, LAB_PARAM_UINT, "1", 1, 1000000000, NULL,
	  "apply sync_delay_ns to every k-th CMD_SYNC"),
	P(scenario_faults, illegal_cmd_at, LAB_PARAM_UINT, "0", 0, 1000000000000.0, NULL,
	  "the device rejects the N-th command it consumes as illegal (CMDQ_ERR; 0: never)"),
};

/* Append new sections here. */
static const struct scenario_section sections[] = {
	SECTION("scenario", scenario, main_params, "what to run: workload, engine, CPUs, timing"),
	SECTION("smmu", smmu, smmu_params, "the device model: queue size and per-command times"),
	SECTION("workload.cmdq", wl_cmdq, wl_cmdq_params, "the cmdq workload's loop"),
	SECTION("workload.iova", wl_iova, wl_iova_params,
		"the iova workload: who allocates, who frees"),
	SECTION("workload.dma", wl_dma, wl_dma_params,
		"the dma workload: map + unmap, strict, lazy or passthrough"),
	SECTION("machine", machine, machine_params, "the simulated machine (engine = sim)"),
	SECTION("faults", faults, faults_params,
		"fault injection: failing allocations, late or "
		"rejected commands"),
	SECTION("workload.micro", wl_micro, wl_micro_params,
		"the micro workload: one primitive on one shared line (calibration)"),
};

const struct scenario_section *scenario_sections(size_t *n)
{
	*n = LAB_ARRAY_SIZE(sections);
	return sections;
}

const struct scenario_section *scenario_find_section(const char *name)
{
	for (size_t i = 0; i < LAB_ARRAY_SIZE(sections); i++) {
		if (!strcmp(sections[i].name, name))
			return &sections[i];
	}
	return NULL;
}

int scenario_cfg_copy(struct scenario_cfg *dst, const struct scenario_cfg *src)
{
	*dst = *src;
	for (size_t i = 0; i < LAB_ARRAY_SIZE(sections); i++) {
		const struct scenario_section *sec = &sections[i];
		int rc = param_copy(sec->params, sec->n_params, (char *)dst + sec->offset,
				    (const char *)src + sec->offset, sec->size);

		if (rc) {
			/* sections before i own copies; those from i on still alias src */
			for (size_t j = i; j < LAB_ARRAY_SIZE(sections); j++)
				memset((char *)dst + sections[j].offset, 0, sections[j].size);
			scenario_cfg_free(dst);
			return rc;
		}
	}
	return 0;
}

void scenario_cfg_free(struct scenario_cfg *cfg)
{
	for (size_t i = 0; cfg && i < LAB_ARRAY_SIZE(sections); i++)
		param_free_strings(sections[i].params, sections[i].n_params,
				   (char *)cfg + sections[i].offset);
}
