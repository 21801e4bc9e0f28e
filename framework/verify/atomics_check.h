/* SPDX-License-Identifier: MIT */
/*
 * atomics_check -- verify's static check `lab_h_only`: a plugin's sim build (X.sim.so, built
 * with -DLAB_ENGINE_SIM) holds no hardware atomic, barrier or spin-wait hint at all.
 *
 * Why: under -DLAB_ENGINE_SIM every lab.h access to a shared word is a call into the
 * executable (lab_sim_load32, lab_sim_rmw64, lab_sim_fence, ...), so a correct sim build
 * needs no atomic instruction. One that has one bypasses lab.h: a raw __atomic_* / __sync_*
 * builtin, a C11 atomic_* or inline asm on a shared word. The sim cannot see such an access
 * (it neither orders nor prices it, nor can it interleave another CPU around it), so every
 * sim verdict on that plugin would be about a different program. The native build cannot be
 * checked this way: there lab.h itself compiles to these very instructions.
 *
 * How: objdump -d of the file's executable sections (the objdump of the file's machine:
 * aarch64-linux-gnu-objdump for an aarch64 file on another host, else objdump), then per
 * function symbol: x86-64 lock-prefixed instructions, cmpxchg*, xchg with a memory operand,
 * mfence/sfence/lfence, pause; aarch64 load/store-exclusives, load-acquires, store-releases,
 * LSE atomics, dmb/dsb, yield/wfe/sev; on both, a call or jump to libatomic's __atomic_*,
 * libgcc's __sync_* or __aarch64_* (outline atomics), or atomic_*. PLT stubs are skipped
 * (their callers are judged); nothing of the framework is linked into a sim build, and the C
 * runtime's start files (_init, frame_dummy, ...) have none of these instructions, so every
 * function in the file is judged. __tsan_* calls are not flagged: a ThreadSanitizer build
 * turns lab.h's own relaxed store of the CPU's phase into one.
 *
 * Limits: x86-64 plain loads and stores are atomic already, so a raw relaxed or acquire load,
 * or a release store, is a mov like any other and is not seen (on aarch64 its ldar/stlr is);
 * a raw spin loop without a pause/yield hint, a pthread lock, or time read without lab_now
 * are not looked for; machines other than x86-64 and aarch64 are unchecked, as is a file
 * objdump cannot read. Unchecked is never a pass: the report says why.
 *
 * Library code: nothing here prints.
 */
#ifndef IOMMULAB_VERIFY_ATOMICS_CHECK_H
#define IOMMULAB_VERIFY_ATOMICS_CHECK_H

#include <stdint.h>
#include <stdio.h>

/* The check's name, as verify's table and the tests spell it. */
#define ATOMICS_CHECK_NAME "lab_h_only"

#define ATOMICS_NAME_LEN 128
#define ATOMICS_INSN_LEN 128
#define ATOMICS_WHY_LEN	 256
/* Instructions kept for the report; the rest are counted. */
#define ATOMICS_MAX_HITS 16

enum atomics_arch {
	ATOMICS_ARCH_UNKNOWN,
	ATOMICS_ARCH_X86_64,
	ATOMICS_ARCH_AARCH64,
};

/* One instruction that bypasses lab.h. */
struct atomics_hit {
	char func[ATOMICS_NAME_LEN]; /* the function symbol it is in */
	uint64_t addr;		     /* its address in the file */
	uint64_t offset;	     /* from the function's start */
	char insn[ATOMICS_INSN_LEN]; /* as objdump prints it, comment dropped */
	const char *what;	     /* "a locked read-modify-write", ... (static) */
};

struct atomics_report {
	enum atomics_arch arch;
	size_t n_funcs;	    /* functions judged (PLT stubs not counted) */
	size_t n_hit_funcs; /* of them, those with a hit */
	size_t n_hits;	    /* every hit; the first ATOMICS_MAX_HITS are in hits[] */
	struct atomics_hit hits[ATOMICS_MAX_HITS];
	char unchecked[ATOMICS_WHY_LEN]; /* why it could not be judged, or "" */
};

/*
 * Judge objdump's `-d --no-show-raw-insn` output, read from f (its "file format" line names
 * the machine). Fills r; 0, or -EINVAL when the text names no machine this check knows (r's
 * unchecked says so), or -errno reading f.
 */
int atomics_scan(FILE *f, struct atomics_report *r);

/*
 * Disassemble the ELF file at path with objdump and judge it. 0 with r filled (a verdict:
 * r->n_hits), or -errno with r->unchecked saying why no verdict (no objdump, a machine
 * without a table, objdump's own complaint).
 */
int atomics_check_file(const char *path, struct atomics_report *r);

/* "FUNC: INSN at 0xADDR (FUNC+0xOFF): WHAT" for one hit. */
void atomics_hit_format(const struct atomics_hit *h, char *buf, size_t len);

/* "x86-64", "aarch64" or "unknown". */
const char *atomics_arch_name(enum atomics_arch a);

#endif /* IOMMULAB_VERIFY_ATOMICS_CHECK_H */
