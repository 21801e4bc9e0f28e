/* SPDX-License-Identifier: MIT */
/*
 * cmdq.h -- the command-queue plugin kind: SMMUv3 commands, the device a strategy drives,
 * and the ops a strategy implements.
 *
 * The device is a model of an SMMUv3 command queue (framework/device/): a ring of 2^shift
 * 16-byte entries in shared memory, a PROD register the strategy writes, a CONS register it
 * reads. Indexes are encoded as the hardware encodes them: low `shift` bits IDX, bit `shift`
 * WRP (wrap), bit 31 OVF (free for software use in the cmdq; the kernel's owner flag). The
 * device consumes entries in order once PROD passes them and completes a CMD_SYNC either by
 * writing its MSIDATA to its MSIADDR (CS = IRQ, used when smmu->msi is set) or just by
 * advancing CONS (CS = NONE / SEV).
 *
 * What a strategy may rely on, in both engines (framework/device/smmu.h has the timing):
 *  - CONS moves past a command other than CMD_SYNC once the device has read it (its slot may
 *    be reused from then on), not when it has taken effect: invalidations overlap;
 *  - CONS moves past a CMD_SYNC only once every command before it has completed and the
 *    CMD_SYNC itself has; it never overtakes a pending CMD_SYNC;
 *  - a CMD_SYNC's MSI write lands BEFORE CONS moves past it (the [smmu] msi_cons_ns after;
 *    at the same instant with 0, the MSI still first). So a CPU that saw CONS pass its
 *    CMD_SYNC will find the MSI written, but one that saw the MSI may still read the old
 *    CONS: after an MSI, wait for CONS (if at all) rather than expect it moved;
 *  - CMD_SYNCs complete in queue order, so an MSI sequence number (msidata) only grows.
 */
#ifndef IOMMULAB_CMDQ_H
#define IOMMULAB_CMDQ_H

#include <stdbool.h>
#include <stdint.h>

#include "lab.h"

/* ---- commands (SMMUv3 encoding, 2 little-endian dwords) -------------------------------- */

struct lab_cmd {
	uint64_t dw[2];
};

enum lab_cmd_opcode {
	LAB_CMD_PREFETCH_CFG = 0x01,
	LAB_CMD_CFGI_STE = 0x03,
	LAB_CMD_CFGI_ALL = 0x04,
	LAB_CMD_CFGI_CD = 0x05,
	LAB_CMD_CFGI_CD_ALL = 0x06,
	LAB_CMD_TLBI_NH_ASID = 0x11,
	LAB_CMD_TLBI_NH_VA = 0x12,
	LAB_CMD_TLBI_EL2_ALL = 0x20,
	LAB_CMD_TLBI_S12_VMALL = 0x28,
	LAB_CMD_TLBI_NSNH_ALL = 0x30,
	LAB_CMD_ATC_INV = 0x40,
	LAB_CMD_PRI_RESP = 0x41,
	LAB_CMD_RESUME = 0x44,
	LAB_CMD_SYNC = 0x46,
};

#define LAB_CMD_OPCODE(dw0) ((uint32_t)((dw0)&0xff))

/* CMD_SYNC completion signal, CS[13:12]. */
enum lab_sync_cs {
	LAB_SYNC_CS_NONE = 0,
	LAB_SYNC_CS_IRQ = 1, /* MSI write of MSIDATA to MSIADDR */
	LAB_SYNC_CS_SEV = 2,
};

#define LAB_SYNC_CS_SHIFT      12
#define LAB_SYNC_MSH_ISH       (3ull << 22)
#define LAB_SYNC_MSIATTR_OIWB  (0xfull << 24)
#define LAB_SYNC_MSIDATA_SHIFT 32
#define LAB_SYNC_MSIADDR_MASK  0x000ffffffffffffcull /* dw1[51:2] */

/* Build a CMD_SYNC. With cs == LAB_SYNC_CS_IRQ the device writes msidata to *msi_word. */
static inline struct lab_cmd lab_cmd_sync(enum lab_sync_cs cs, uint32_t *msi_word, uint32_t msidata)
{
	struct lab_cmd cmd;
	cmd.dw[0] = LAB_CMD_SYNC | ((uint64_t)cs << LAB_SYNC_CS_SHIFT);
	cmd.dw[1] = 0;
	if (cs == LAB_SYNC_CS_IRQ) {
		cmd.dw[0] |= LAB_SYNC_MSH_ISH | LAB_SYNC_MSIATTR_OIWB |
			     ((uint64_t)msidata << LAB_SYNC_MSIDATA_SHIFT);
		cmd.dw[1] = (uint64_t)(uintptr_t)msi_word & LAB_SYNC_MSIADDR_MASK;
	}
	return cmd;
}

static inline enum lab_sync_cs lab_cmd_sync_cs(const struct lab_cmd *cmd)
{
	return (enum lab_sync_cs)((cmd->dw[0] >> LAB_SYNC_CS_SHIFT) & 3);
}

/* TLBI_NH_VA: ASID in dw0[63:48], the VA (page aligned) in dw1[63:12], LEAF in dw1[0]. */
static inline struct lab_cmd lab_cmd_tlbi_nh_va(uint16_t asid, uint64_t va, bool leaf)
{
	struct lab_cmd cmd;
	cmd.dw[0] = LAB_CMD_TLBI_NH_VA | ((uint64_t)asid << 48);
	cmd.dw[1] = (va & ~0xfffull) | (leaf ? 1 : 0);
	return cmd;
}

/* Copy one command into a ring slot (two relaxed 64-bit stores; order with a fence). */
LAB_INLINE void lab_cmd_write(struct lab_cmd *slot, const struct lab_cmd *cmd)
{
	lab_store64(&slot->dw[0], cmd->dw[0], LAB_RELAXED);
	lab_store64(&slot->dw[1], cmd->dw[1], LAB_RELAXED);
}

/* ---- the device ---------------------------------------------------------------------------- */

#define LAB_Q_OVF (1u << 31)

struct lab_smmu {
	uint32_t struct_size;
	uint32_t shift;	      /* log2 of the number of entries (max_n_shift) */
	struct lab_cmd *ring; /* 1 << shift entries, cache-line aligned */
	uint32_t msi;	      /* 1: CMD_SYNC may complete by MSI (ARM_SMMU_OPT_MSIPOLL) */
	uint32_t pad;
	/* readl(CONS): the device's consumer index (IDX | WRP). Like readl(), it orders the
	 * loads after it after it (the sim's memory = arm satisfies none of them earlier). */
	uint32_t (*read_cons)(struct lab_cpu *c, struct lab_smmu *s);
	/* writel_relaxed(PROD): publish entries up to prod (IDX | WRP; OVF must be clear). It
	 * orders nothing before it (a dma_wmb() does) and may be seen after this CPU's later
	 * relaxed stores (the sim's memory = arm posts it): a release after it orders it. */
	void (*write_prod)(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod);
	void *priv; /* host-private */
	/* ABI 1.1: the device's command queues (SMMUv3.3 ECMDQs, Tegra241 VCMDQs). Each is a
	 * struct lab_smmu of its own (ring, PROD, CONS; same shift and msi), queue 0 being the
	 * one this struct describes when a setup hands it over. Read them through
	 * lab_smmu_nqueues() and lab_smmu_queue(), which answer 1 and s for a host older than
	 * 1.1. Ordering and CMD_SYNC are per queue: a CMD_SYNC covers only the commands before
	 * it in its own queue. */
	uint32_t nqueues; /* >= 1 */
	uint32_t qidx;	  /* which queue this view is, 0..nqueues-1 */
	/* Queue i of the same device (any view reaches every queue); NULL past the last. */
	struct lab_smmu *(*queue)(struct lab_smmu *s, uint32_t i);
};

static inline uint32_t lab_smmu_nqueues(const struct lab_smmu *s)
{
	return LAB_OPS_HAS(s, queue) ? s->nqueues : 1;
}

static inline struct lab_smmu *lab_smmu_queue(struct lab_smmu *s, uint32_t i)
{
	if (LAB_OPS_HAS(s, queue))
		return s->queue(s, i);
	return i ? NULL : s;
}

static inline uint32_t lab_smmu_read_cons(struct lab_cpu *c, struct lab_smmu *s)
{
	return s->read_cons(c, s);
}

static inline void lab_smmu_write_prod(struct lab_cpu *c, struct lab_smmu *s, uint32_t prod)
{
	s->write_prod(c, s, prod);
}

static inline uint32_t lab_q_nents(const struct lab_smmu *s)
{
	return 1u << s->shift;
}

static inline uint32_t lab_q_idx(const struct lab_smmu *s, uint32_t p)
{
	return p & ((1u << s->shift) - 1);
}

static inline uint32_t lab_q_wrp(const struct lab_smmu *s, uint32_t p)
{
	return p & (1u << s->shift);
}

/* The ring slot an index (IDX | WRP | OVF) refers to. */
static inline struct lab_cmd *lab_q_slot(struct lab_smmu *s, uint32_t p)
{
	return &s->ring[lab_q_idx(s, p)];
}

/* ---- the ops a cmdq strategy implements ------------------------------------------------------ */

struct lab_cmdq_setup {
	uint32_t struct_size;
	const struct lab_host *host; /* lab_alloc() and friends */
	struct lab_smmu *smmu;	     /* the device this strategy drives */
	uint32_t ncpus;		     /* CPUs that will call issue(), ids 0..ncpus-1 */
	const void *config;	     /* the plugin's config struct, filled from its params */
	char *err;		     /* init may explain a failure here ... */
	size_t err_len;		     /* ... in at most this many bytes */
};

struct lab_cmdq_ops {
	uint32_t struct_size; /* sizeof(struct lab_cmdq_ops) as built */
	/* Required. Allocate and set up the queue state; 0 or -errno (and s->err). */
	int (*init)(const struct lab_cmdq_setup *s, void **state);
	/* Optional. Free what init allocated. Called only after every issue() has returned. */
	void (*fini)(void *state);
	/*
	 * Required. arm_smmu_cmdq_issue_cmdlist(): insert cmds[0..n) contiguously and in order,
	 * and if sync a CMD_SYNC after them; return when they are in the queue (published to
	 * the device) and, if sync, when the device has consumed everything up to and including
	 * a CMD_SYNC positioned after all of them and after every command this CPU issued
	 * before: an issue without sync (the kernel's batch_add of a full batch) is completed by
	 * its CPU's next sync. n may be 0 (a CMD_SYNC alone, arm_smmu_cmdq_issue_sync()). verify
	 * issues all of these, with n differing from call to call. 0 or -errno (-ETIMEDOUT: the
	 * CMD_SYNC did not complete in time).
	 */
	int (*issue)(struct lab_cpu *c, void *state, const struct lab_cmd *cmds, uint32_t n,
		     bool sync);
};

#endif /* IOMMULAB_CMDQ_H */
