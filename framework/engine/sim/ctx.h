/* SPDX-License-Identifier: MIT */
/*
 * ctx -- coroutine contexts for the sim's virtual CPUs: a stack each and a switch that saves
 * only the callee-saved registers (x86-64: six pushes, a stack swap, six pops; aarch64: ten
 * register pairs stored, a stack swap, ten loaded), with a ucontext fallback on other
 * architectures. One switch per scheduling decision is the sim's
 * main cost, which is why it is not swapcontext() (a signal-mask syscall per switch).
 */
#ifndef IOMMULAB_SIM_CTX_H
#define IOMMULAB_SIM_CTX_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define SIM_CTX_ASM 1
#else
#include <ucontext.h>
#endif

struct sim_ctx {
	void *sp; /* saved stack pointer (the assembly switch) */
#ifndef SIM_CTX_ASM
	ucontext_t uc;
#endif
	void *stack;
	size_t stack_size;
};

/* Give ctx a fresh stack (with a guard page) that will run fn(arg) on the first switch to it.
 * fn must never return. 0 or -errno. */
int sim_ctx_make(struct sim_ctx *ctx, size_t stack_size, void (*fn)(void *), void *arg);
/* Free the stack of a made context (not the one running). NULL-safe. */
void sim_ctx_free(struct sim_ctx *ctx);
/* Save the running context into from and resume to. */
void sim_ctx_switch(struct sim_ctx *from, struct sim_ctx *to);

#endif /* IOMMULAB_SIM_CTX_H */
