/* SPDX-License-Identifier: MIT */
/*
 * lab_h_watch -- what a sim-built plugin does outside lab.h, which the sim can neither price,
 * order nor interleave (see sim_internal.h):
 *
 * - A virtual CPU that runs host code without calling into the sim (a spin loop on a plain
 *   word, a raw atomic in a retry loop): no virtual time passes, so no virtual watchdog can
 *   fire. A timer on the host thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, so neither a
 *   loaded machine nor a slow build makes it fire) looks every STUCK_TICK_MS; when the
 *   running CPU has made no lab.h operation and moved no virtual time for STUCK_MS,
 *   it takes the interrupted instruction's address as the place, ends the simulation as hung
 *   and leaves that CPU's coroutine behind (it switches to the main context from the signal
 *   handler, which never returns: the coroutine is abandoned, as a hung CPU always is).
 *   Always on; `run` and verify both say where the CPU was.
 *
 * - A plugin whose shared word changes without the sim seeing a store (a plain C store on a
 *   word other CPUs read through lab.h): only when the job asks (engine_job.watch_lab_h,
 *   verify's lab_h_only), as it costs a table lookup per access. Every aligned 4-byte half of
 *   a word a lab.h access touches keeps the value lab.h last left there; a later lab.h load
 *   or read-modify-write that finds memory holding something else saw a store that bypassed
 *   lab.h, somewhere between the two. The device's and the workload's own writes (reported
 *   through sim_agent_stored and sim_note_host_write) make the sim forget a word's value, and
 *   the virtual CPUs' stacks are not watched (a frame's words are reused by plain locals).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "engine/sim/sim_internal.h"

/*
 * Host CPU time without a lab.h operation after which the running CPU is stuck, and between
 * two looks at it: a stuck one is seen after STUCK_MS to STUCK_MS + STUCK_TICK_MS. The sim
 * makes a lab.h operation every few microseconds of host time (under valgrind, every few
 * hundred), so STUCK_MS without one is never a slow host, however loaded or instrumented.
 * (It was 200 ms, looked at every 200 ms: 200-400 ms per stuck trial, most of verify's time
 * on a plugin that spins outside lab.h, one such trial per configuration.)
 */
#define STUCK_MS      100
#define STUCK_TICK_MS 25

/* ---- a CPU stuck in host code ------------------------------------------------------------- */

static uintptr_t interrupted_pc(void *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	struct sim *s = cur_sim;
	struct sim_cpu *me;
	uint64_t cpu_ns = thread_cpu_ns();

	(void)sig;
	(void)si;
	if (!s || !s->stuck_armed || !(me = s->cur) || s->hung)
		return;
	/* The device acting (a long run of its events between two CPU steps) is progress too. */
	if (s->st.lab_ops != s->stuck_ops || me->id != s->stuck_cpu ||
	    me->clock != s->stuck_clock || s->agent_now != s->stuck_agent_now) {
		s->stuck_ops = s->st.lab_ops;
		s->stuck_cpu = me->id;
		s->stuck_clock = me->clock;
		s->stuck_agent_now = s->agent_now;
		s->stuck_since_ns = cpu_ns;
		return;
	}
	/*
	 * Unchanged since the last look is stuck only when STUCK_MS of CPU time has passed since
	 * the look that saw it change (ticks can also arrive bunched, as under valgrind).
	 */
	if (cpu_ns - s->stuck_since_ns < (uint64_t)STUCK_MS * 1000000u)
		return;
	/* Nothing of the sim's has run on this CPU for STUCK_MS: it is outside lab.h. */
	s->stuck = true;
	s->stuck_pc = interrupted_pc(uc);
	s->hung = true;
	s->horizon = 0;
	s->cur = NULL;
	sim_ctx_switch(&me->ctx, &s->main_ctx); /* never resumed: this handler never returns */
}

/*
 * Installed once, for the process, and left: sims on other threads may still have timers,
 * and a tick still pending when one's timer is deleted finds no sim and returns.
 */
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static bool handler_installed;

static void install_handler(void)
{
	struct sigaction sa = { .sa_sigaction = on_tick,
				.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART };
	const char *off = getenv("IOMMULAB_STUCK_TIMER");

	/* Callgrind asserts on a signal taken between coroutine stacks (tests/bench/sim-ipo.sh
	 * turns it off; the caller's stall limit still catches a stuck CPU). */
	if (off && !strcmp(off, "off"))
		return;
	sigemptyset(&sa.sa_mask);
	handler_installed = !sigaction(SIGVTALRM, &sa, NULL);
}

void sim_watch_start(struct sim *s)
{
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGVTALRM };
	struct itimerspec its = { .it_interval = { 0, STUCK_TICK_MS * 1000000L },
				  .it_value = { 0, STUCK_TICK_MS * 1000000L } };

	s->stuck_cpu = UINT32_MAX;
	ev._sigev_un._tid = gettid();
	/* Without the timer a stuck CPU is still caught, later, by its caller's stall limit. */
	pthread_once(&handler_once, install_handler);
	if (!handler_installed || timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &s->stuck_timer))
		return;
	s->stuck_armed = true;
	if (timer_settime(s->stuck_timer, 0, &its, NULL))
		sim_watch_stop(s);
}

void sim_watch_stop(struct sim *s)
{
	if (!s->stuck_armed)
		return;
	s->stuck_armed = false;
	timer_delete(s->stuck_timer);
}

/* ---- a shared word changed outside lab.h -------------------------------------------------- */

static inline size_t shadow_hash(const struct sim *s, uintptr_t word)
{
	return (size_t)(((uint64_t)(word >> 3) * 0x9e3779b97f4a7c15ull) >> 32) & s->shadow_mask;
}

static int shadow_alloc(struct sim *s, uint32_t bits)
{
	struct sim_shadow *old = s->shadow;
	size_t old_cap = old ? s->shadow_mask + 1 : 0;
	struct sim_shadow *t = calloc((size_t)1 << bits, sizeof(*t));

	if (!t)
		return -ENOMEM;
	s->shadow = t;
	s->shadow_mask = ((size_t)1 << bits) - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].word)
			continue;
		size_t j = shadow_hash(s, old[i].word);
		while (t[j].word)
			j = (j + 1) & s->shadow_mask;
		t[j] = old[i];
	}
	free(old);
	return 0;
}

/* A virtual CPU's stack holds its frames' locals, reused plainly once a frame returns. */
static bool on_a_stack(const struct sim *s, uintptr_t word)
{
	for (uint32_t i = 0; i < s->ncpus; i++) {
		uintptr_t lo = (uintptr_t)s->cpus[i].ctx.stack;
		if (word >= lo && word < lo + s->cpus[i].ctx.stack_size)
			return true;
	}
	return false;
}

/* word's entry; a new one when make (NULL when the table cannot grow), else NULL if none. */
static struct sim_shadow *shadow_of(struct sim *s, uintptr_t word, bool make)
{
	for (;;) {
		for (size_t i = shadow_hash(s, word);; i = (i + 1) & s->shadow_mask) {
			struct sim_shadow *e = &s->shadow[i];
			if (e->word == word)
				return e;
			if (e->word)
				continue;
			if (!make)
				return NULL;
			if ((s->shadow_n + 1) * 2 > s->shadow_mask + 1)
				break;
			e->word = word;
			e->exempt = on_a_stack(s, word);
			s->shadow_n++;
			return e;
		}
		unsigned int bits = (unsigned int)__builtin_ctzll((uint64_t)s->shadow_mask + 1);
		if (shadow_alloc(s, bits + 1)) {
			s->oom = true;
			return NULL;
		}
	}
}

int sim_shadow_init(struct sim *s)
{
	return shadow_alloc(s, LINES_MIN_BITS);
}

/* The 4-byte halves of p's word an access of size bytes covers (bit 0: the lower address). */
static inline uint8_t halves_of(const void *p, uint32_t size)
{
	return size == 8 ? 3 : (uint8_t)(1u << (((uintptr_t)p >> 2) & 1));
}

static inline uint32_t half_now(uintptr_t word, int h)
{
	return *(volatile const uint32_t *)(word + 4 * (uintptr_t)h);
}

struct sim_shadow *sim_shadow_entry(struct sim *s, const void *p, uint32_t size)
{
	struct sim_shadow *e;

	if ((uintptr_t)p & (size - 1) || !(e = shadow_of(s, (uintptr_t)p & ~(uintptr_t)7, true)) ||
	    e->exempt)
		return NULL;
	return e;
}

struct sim_shadow *sim_shadow_check(struct sim *s, const struct sim_cpu *me, const void *p,
				    uint32_t size, const void *pc)
{
	struct sim_shadow *e = sim_shadow_entry(s, p, size);
	uint8_t halves = halves_of(p, size);

	if (!e)
		return NULL;
	for (int h = 0; h < 2; h++) {
		uint32_t now;
		if (!(halves & e->known_mask & (1u << h)) ||
		    (now = half_now(e->word, h)) == e->known[h])
			continue;
		s->outside_words++;
		if (s->outside_words == 1) {
			s->outside = (struct sim_outside){
				.p = e->word + 4 * (uintptr_t)h,
				.was = e->known[h],
				.found = now,
				.cpu = me->id,
				.pc = (uintptr_t)pc,
				.at = me->clock,
				.last_cpu = e->cpu[h],
				.last_pc = e->pc[h],
				.last_at = e->at[h],
				.last_kind = e->kind[h],
			};
		}
		e->known[h] = now; /* one report per change */
	}
	return e;
}

void sim_shadow_seen(struct sim_shadow *e, const struct sim_cpu *me, const void *p, uint32_t size,
		     const void *pc, enum access kind)
{
	uint8_t halves = halves_of(p, size);

	if (!e)
		return;
	for (int h = 0; h < 2; h++) {
		if (!(halves & (1u << h)))
			continue;
		e->known[h] = half_now(e->word, h);
		e->cpu[h] = me->id;
		e->pc[h] = (uintptr_t)pc;
		e->at[h] = me->clock;
		e->kind[h] = (uint8_t)kind;
	}
	e->known_mask |= halves;
}

void sim_shadow_forget(struct sim *s, const void *p, size_t len)
{
	for (uintptr_t w = (uintptr_t)p & ~(uintptr_t)7; w < (uintptr_t)p + len; w += 8) {
		struct sim_shadow *e = shadow_of(s, w, false);
		if (e)
			e->known_mask = 0;
	}
}

/* ---- the report -------------------------------------------------------------------------- */

/*
 * "func (cmdq-x.sim.so+0x1c4f, file.c:42)" for a code address: its object by dladdr, the
 * function and line by addr2line on that object when binutils has them (with debug info, the
 * innermost inlined frame that is the plugin's own, not lab.h's), else "cmdq-x.sim.so+0x1c4f".
 * ret: pc is a return address (the call is the instruction before it).
 */
static void place_of(uintptr_t pc, bool ret, char *buf, size_t len)
{
	Dl_info info;
	const char *base;
	char cmd[4400], fn[256] = "", line[512] = "", f_fn[256], f_line[512];
	FILE *f;

	if (!pc || !dladdr((void *)pc, &info) || !info.dli_fname) {
		snprintf(buf, len, pc ? "0x%llx" : "an unknown place", (unsigned long long)pc);
		return;
	}
	base = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
	uintptr_t off = pc - (uintptr_t)info.dli_fbase - (ret ? 1 : 0);
	if (!strchr(info.dli_fname, '\'')) {
		snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' 0x%llx 2>/dev/null",
			 info.dli_fname, (unsigned long long)off);
		fflush(NULL);
		if ((f = popen(cmd, "r"))) {
			/* Frames innermost first: the first outside lab.h's headers is the place.
			 */
			while (fgets(f_fn, sizeof(f_fn), f) && fgets(f_line, sizeof(f_line), f)) {
				f_fn[strcspn(f_fn, "\n")] = 0;
				f_line[strcspn(f_line, "\n")] = 0;
				if (!fn[0] || strstr(line, "include/iommulab/")) {
					snprintf(fn, sizeof(fn), "%s", f_fn);
					snprintf(line, sizeof(line), "%s", f_line);
				}
			}
			pclose(f);
		}
	}
	if (fn[0] && strcmp(fn, "??")) {
		char *src = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
		size_t n = strcspn(src, " ");
		src[n] = 0; /* "file.c:42 (discriminator 3)" */
		if (n >= 2 && !strcmp(src + n - 2, ":?"))
			src[n - 2] = 0; /* no line table: the file alone */
		bool known = src[0] && strncmp(src, "??", 2);
		snprintf(buf, len, "%s (%s+0x%llx%s%s)", fn, base, (unsigned long long)off,
			 known ? ", " : "", known ? src : "");
	} else {
		snprintf(buf, len, "%s+0x%llx", base, (unsigned long long)off);
	}
}

static const char *kind_name(uint8_t kind)
{
	return kind == ACC_LOAD ? "load" : kind == ACC_STORE ? "store" : "read-modify-write";
}

void sim_watch_report(struct sim *s, struct engine_result *res)
{
	char here[640], last[640];

	if (s->stuck) {
		struct sim_cpu *x = &s->cpus[s->stuck_cpu];
		place_of(s->stuck_pc, false, here, sizeof(here));
		res->outside_lab_h = res->stopped_outside = true;
		snprintf(
			res->outside_why, sizeof(res->outside_why),
			"cpu%u ran host code for over %d ms of host CPU time without calling lab.h "
			"(a spin loop or a shared access outside lab.h: no virtual time passes), "
			"at %s, %.3f us into the run",
			x->id, STUCK_MS, here, (double)x->clock / 1e6);
		snprintf(s->why, sizeof(s->why), "no progress: %s", res->outside_why);
	}
	if (s->outside_words && !s->stuck) {
		const struct sim_outside *o = &s->outside;
		place_of(o->pc, true, here, sizeof(here));
		if (o->last_pc)
			place_of(o->last_pc, true, last, sizeof(last));
		else
			snprintf(last, sizeof(last), "a buffered store leaving its store buffer");
		res->outside_lab_h = true;
		snprintf(res->outside_why, sizeof(res->outside_why),
			 "a shared word changed outside lab.h: cpu%u's lab.h access at %s found "
			 "0x%x at %p (%.3f us), where lab.h had last left 0x%x (cpu%u's %s at %s, "
			 "%.3f us): a plain store in between; %llu word%s so changed",
			 o->cpu, here, o->found, (void *)o->p, (double)o->at / 1e6, o->was,
			 o->last_cpu, kind_name(o->last_kind), last, (double)o->last_at / 1e6,
			 (unsigned long long)s->outside_words, s->outside_words == 1 ? "" : "s");
	}
}
