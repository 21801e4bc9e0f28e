/* SPDX-License-Identifier: MIT */
/* ctx -- coroutine stacks and the context switch (see ctx.h). */
#include "engine/sim/ctx.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
/*
 * sim_ctx_swap(void **save_sp, void *sp): push the SysV callee-saved registers, store the
 * stack pointer, switch stacks, pop, return into the other context. Floating-point control
 * state is not saved: nothing in the sim changes it.
 * sim_ctx_start: the first "return" of a new context lands here with fn in r13, arg in r12.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl sim_ctx_swap\n"
	".hidden sim_ctx_swap\n"
	".type sim_ctx_swap, @function\n"
	"sim_ctx_swap:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size sim_ctx_swap, .-sim_ctx_swap\n"
	".p2align 4\n"
	".globl sim_ctx_start\n"
	".hidden sim_ctx_start\n"
	".type sim_ctx_start, @function\n"
	"sim_ctx_start:\n"
	"	movq %r12, %rdi\n"
	"	callq *%r13\n"
	"	ud2\n"
	".size sim_ctx_start, .-sim_ctx_start\n");

#elif defined(__aarch64__)
/*
 * The same for AAPCS64: the callee-saved x19-x28, the frame pointer x29, the link register
 * x30 and the low halves of v8-v15 (d8-d15), 160 bytes, so sp stays 16-aligned. The swap
 * "returns" through the restored x30. sim_ctx_start: a new context's first return lands
 * here with fn in x19 and arg in x20.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl sim_ctx_swap\n"
	".hidden sim_ctx_swap\n"
	".type sim_ctx_swap, %function\n"
	"sim_ctx_swap:\n"
	"	sub sp, sp, #160\n"
	"	stp x19, x20, [sp, #0]\n"
	"	stp x21, x22, [sp, #16]\n"
	"	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n"
	"	stp x27, x28, [sp, #64]\n"
	"	stp x29, x30, [sp, #80]\n"
	"	stp d8, d9, [sp, #96]\n"
	"	stp d10, d11, [sp, #112]\n"
	"	stp d12, d13, [sp, #128]\n"
	"	stp d14, d15, [sp, #144]\n"
	"	mov x9, sp\n"
	"	str x9, [x0]\n"
	"	mov sp, x1\n"
	"	ldp x19, x20, [sp, #0]\n"
	"	ldp x21, x22, [sp, #16]\n"
	"	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n"
	"	ldp x27, x28, [sp, #64]\n"
	"	ldp x29, x30, [sp, #80]\n"
	"	ldp d8, d9, [sp, #96]\n"
	"	ldp d10, d11, [sp, #112]\n"
	"	ldp d12, d13, [sp, #128]\n"
	"	ldp d14, d15, [sp, #144]\n"
	"	add sp, sp, #160\n"
	"	ret\n"
	".size sim_ctx_swap, .-sim_ctx_swap\n"
	".p2align 4\n"
	".globl sim_ctx_start\n"
	".hidden sim_ctx_start\n"
	".type sim_ctx_start, %function\n"
	"sim_ctx_start:\n"
	"	mov x0, x20\n"
	"	blr x19\n"
	"	brk #0\n"
	".size sim_ctx_start, .-sim_ctx_start\n");
#endif

#ifdef SIM_CTX_ASM
void sim_ctx_swap(void **save_sp, void *sp);
void sim_ctx_start(void);
#endif

static long page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? p : 4096;
}

#ifndef SIM_CTX_ASM
static void ctx_trampoline(unsigned hi_fn, unsigned lo_fn, unsigned hi_arg, unsigned lo_arg)
{
	void (*fn)(void *) = (void (*)(void *))(((uintptr_t)hi_fn << 32) | lo_fn);
	void *arg = (void *)(((uintptr_t)hi_arg << 32) | lo_arg);

	fn(arg);
}
#endif

int sim_ctx_make(struct sim_ctx *ctx, size_t stack_size, void (*fn)(void *), void *arg)
{
	size_t pg = (size_t)page_size();
	size_t size = (stack_size + pg - 1) / pg * pg + pg;
	unsigned char *base = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (base == MAP_FAILED)
		return -errno;
	/* The lowest page catches an overflow with a fault instead of silent corruption. */
	if (mprotect(base, pg, PROT_NONE)) {
		int rc = -errno;
		munmap(base, size);
		return rc;
	}
	ctx->stack = base;
	ctx->stack_size = size;
#if defined(__x86_64__)
	uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
	void **sp = (void **)(top - 7 * sizeof(void *));
	sp[0] = NULL;				  /* r15 */
	sp[1] = NULL;				  /* r14 */
	sp[2] = (void *)(uintptr_t)fn;		  /* r13 */
	sp[3] = arg;				  /* r12 */
	sp[4] = NULL;				  /* rbx */
	sp[5] = NULL;				  /* rbp */
	sp[6] = (void *)(uintptr_t)sim_ctx_start; /* ret: rsp ends 16-aligned before the call */
	ctx->sp = sp;
#elif defined(__aarch64__)
	uintptr_t top = ((uintptr_t)base + size) & ~(uintptr_t)15;
	void **sp = (void **)(top - 160);
	for (int i = 0; i < 20; i++)
		sp[i] = NULL;
	sp[0] = (void *)(uintptr_t)fn;		   /* x19 */
	sp[1] = arg;				   /* x20 */
	sp[11] = (void *)(uintptr_t)sim_ctx_start; /* x30: the swap's ret goes there */
	ctx->sp = sp;
#else
	if (getcontext(&ctx->uc)) {
		munmap(base, size);
		return -errno;
	}
	ctx->uc.uc_stack.ss_sp = base + pg;
	ctx->uc.uc_stack.ss_size = size - pg;
	ctx->uc.uc_link = NULL;
	uintptr_t f = (uintptr_t)fn, a = (uintptr_t)arg;
	makecontext(&ctx->uc, (void (*)(void))ctx_trampoline, 4, (unsigned)(f >> 32), (unsigned)f,
		    (unsigned)(a >> 32), (unsigned)a);
#endif
	return 0;
}

void sim_ctx_free(struct sim_ctx *ctx)
{
	if (!ctx || !ctx->stack)
		return;
	munmap(ctx->stack, ctx->stack_size);
	ctx->stack = NULL;
}

void sim_ctx_switch(struct sim_ctx *from, struct sim_ctx *to)
{
#ifdef SIM_CTX_ASM
	sim_ctx_swap(&from->sp, to->sp);
#else
	swapcontext(&from->uc, &to->uc);
#endif
}
