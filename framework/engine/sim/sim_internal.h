/* SPDX-License-Identifier: MIT */
/*
 * sim_internal -- what the sim engine's files share: the machine's state (struct sim, its
 * CPUs and its lines) and the functions one file calls in another. sim.c is the memory model,
 * the scheduler and the lab_sim_*() binding, the hot path; sim_run.c sets a run up, runs the
 * CPUs' loop in virtual time and collects the result. Not for use outside engine/sim/.
 */
#ifndef IOMMULAB_SIM_INTERNAL_H
#define IOMMULAB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <iommulab/lab_sim.h>

#include "engine/engine.h"
#include "engine/sim/ctx.h"
#include "engine/sim/sim.h"

#define NEVER	       UINT64_MAX
#define PS_PER_NS      1000u
#define STACK_SIZE     (256u << 10) /* plugin + workload frames (cmdq_wl keeps 4 KiB of commands) */
#define SHARER_WORDS   (SIM_MAX_CPUS / 64)
#define LINES_MIN_BITS 14
#define RECENT	       4  /* lines a spin-wait's condition may read besides the watched one */
#define SIM_DIRTY_MAX  64 /* device stores remembered between two looks at its progress */

enum { LINE_SHARED = -1, LINE_HOME = -2, LINE_DEVICE = -3 };
enum cpu_state { CPU_RUNNABLE = 0, CPU_RUNNING, CPU_PARKED, CPU_DONE };
enum access { ACC_LOAD, ACC_STORE, ACC_RMW };

struct sim_line {
	uintptr_t tag;	     /* address >> 6; 0: empty slot */
	uint64_t busy_until; /* ps: the line serves the next transfer from here on */
	int32_t owner;	     /* CPU holding it exclusive, or LINE_* */
	uint32_t waiters;    /* first sleeping CPU + 1; 0: none */
	uint32_t last_rmw;   /* the CPU + 1 that did the last read-modify-write; 0: none */
	bool contended;	     /* atomics from two CPUs have met here (adaptive: far from now on) */
	uint16_t n_watchers; /* CPUs whose parked wait also read this line (watchers) */
	/*
	 * The words of sharers[] that may have a bit set: sh_lo..sh_hi (none when sh_hi <
	 * sh_lo), so clearing and scanning the set costs the words in use, not SHARER_WORDS
	 * (16 at every N).
	 */
	uint8_t sh_lo, sh_hi;
	bool w_set;	   /* w_*: the last write priced on the line, until it takes effect */
	uint8_t w_off;	   /* its word's byte offset in the line */
	uint64_t w_val;	   /* the value it leaves there */
	uint64_t w_at;	   /* ps: when it takes effect (its writer's completion) */
	uint32_t home_cpu; /* the CPU + 1 that touched it first: its home's socket (socket_ns) */
	uint64_t sharers[SHARER_WORDS]; /* LINE_SHARED: CPUs holding a copy */
	uint64_t watchers[SHARER_WORDS];
};

/*
 * A store or read-modify-write as the model prices it: which word, and what it does, so the
 * value the line will hold once it has taken effect is known before it has (a far CAS's
 * outcome is decided by the value the home holds when it serves it).
 */
struct sim_write {
	const void *p;
	uint32_t size; /* 4 or 8 */
	int op;	       /* enum lab_sim_rmw; SIM_STORE: a plain store of a */
	uint64_t a, b;
};

#define SIM_STORE (-1)

/*
 * memory = arm: a relaxed store that has completed but is not yet visible to the other CPUs
 * or the device (it sits in its CPU's store buffer). It takes effect at `at`, in (at, seq)
 * order with every other; its own CPU reads it at once (store-to-load forwarding).
 */
struct sim_sb_entry {
	uint64_t at;  /* ps: when the other CPUs and the device see it */
	uint64_t seq; /* program order among equal times */
	void *p;      /* ...an agent's register write (apply): its argument */
	uint64_t v;
	uint32_t cpu;
	uint32_t size; /* 4 or 8; 0: an agent's register write (sim_post_agent_write) */
	void (*apply)(void *arg, uint64_t v, uint64_t now_ns);
};
#define SB_PER_CPU 16 /* a full store buffer drains before it takes another store */

/*
 * memory = arm: the last changes of one aligned 8-byte word, so that a relaxed load can be
 * satisfied early, with the value the word held at an earlier time. e[] is a ring of its
 * last HIST_PER_WORD changes, oldest at e[head]: change i took effect at e[i].at, and the
 * word held e[i].old just before. Before lost_at (the oldest change forgotten) the word's
 * value is not known, so no load is satisfied before it.
 */
#define HIST_PER_WORD 4
struct sim_hist {
	uintptr_t word; /* address of the aligned 8 bytes; 0: empty slot */
	uint64_t lost_at;
	uint32_t n, head;
	struct {
		uint64_t at, old;
	} e[HIST_PER_WORD];
};

/*
 * memory = arm: per CPU, the time as of which it last saw each word it used (a later load
 * of the word is satisfied no earlier: coherence), for its COH_SLOTS most recently used
 * words; a word it forgot is bounded by coh_lost, the latest time so forgotten.
 */
#define COH_SLOTS 16

/*
 * memory = arm: how many of a CPU's own accesses a load may be satisfied ahead of (the
 * out-of-order window). A load is never satisfied before the access LD_WINDOW back, nor
 * before the CPU's last delay or stall: local work, an interrupt or a preemption fills or
 * drains the window, so no load reaches back across one.
 */
#define LD_WINDOW 4

/*
 * lab_h_watch.c (engine_job.watch_lab_h): a word a lab.h access touched, and what lab.h last
 * left in each of its 4-byte halves, so a change by a plain store shows at the next access.
 */
struct sim_shadow {
	uintptr_t word;	    /* address of the aligned 8 bytes; 0: empty slot */
	uint32_t known[2];  /* each half as lab.h last left it... */
	uint8_t known_mask; /* ...for the halves whose bit is set (forgotten: a device store) */
	bool exempt;	    /* on a virtual CPU's stack: not watched */
	uint8_t kind[2];    /* enum access: the last lab.h access to each half... */
	uint32_t cpu[2];    /* ...its CPU, code address and time (ps) */
	uintptr_t pc[2];
	uint64_t at[2];
};

/* The first word found changed outside lab.h: where, what, and the lab.h access before. */
struct sim_outside {
	uintptr_t p; /* the 4-byte half that changed */
	uint32_t was, found;
	uint32_t cpu, last_cpu;
	uintptr_t pc, last_pc; /* 0 for last_pc: a buffered store's drain */
	uint64_t at, last_at;  /* ps */
	uint8_t last_kind;
};

struct sim_cpu {
	/*
	 * What every access and switch touches comes first, in the first 144 bytes of a
	 * line-aligned entry: at 1024 CPUs the per-CPU state does not fit a core's L2, and the
	 * rest below is read once per op, on a park or a wake-up, or under memory = arm or
	 * perturbation.
	 */
	uint64_t clock;	   /* ps */
	uint64_t deadline; /* ps: watchdog, last progress + watchdog */
	struct sim *sim;
	struct lab_cpu *c;
	uint32_t id;
	uint32_t state;
	uint32_t sb_own; /* memory = arm: its entries in sim.sb */
	/*
	 * The lines this CPU loaded last, newest at recent[(n_recent - 1) % RECENT]: at a
	 * park, those loaded after the watched word are what its condition read besides it.
	 */
	uint32_t n_recent;
	uint64_t far_val; /* the value the line held when that CAS was served */
	/* The line it accessed last (its tag, and the table's generation then). */
	struct sim_line *last_line;
	uintptr_t last_tag;
	uint64_t last_gen;
	struct sim_ctx ctx;
	bool far_seen; /* its last rmw was a CAS that failed on a miss: it returns far_val */
	/* Ran local work past its turn (sim_local_work): it takes the turn before anything
	 * another CPU or the device can see. */
	bool owes_turn;
	/* Its SMT sibling is in the run: its local work takes 1 / smt_share as long. */
	bool smt_shared;
	/* The CPU of its core's other hardware thread, when in the run (the two share the L1
	 * data cache: a line either holds is a hit for both), else -1. */
	int32_t l1_peer;
	uintptr_t recent[RECENT];
	/* With an L1 peer: its last miss, the line's tag, when the fill lands, and whether the
	 * line comes exclusive; the peer's access to that line meanwhile merges with it. */
	uintptr_t fill_tag;
	uint64_t fill_at;
	bool fill_excl;

	struct engine_cpu_result *res;

	uint32_t next_waiter; /* next CPU + 1 sleeping on the same line */
	uint32_t watch_size;  /* 4 or 8; 0: wake on any write to the line only */
	bool read_agent;      /* read a device register since its last park or op */
	uint64_t agent_seen;  /* ...the device's progress at the first such read */
	uint32_t n_extra;
	uintptr_t extra[RECENT];    /* parked: the other lines whose write wakes it (tags) */
	bool agent_waiter;	    /* parked with read_agent: the device's progress wakes it too */
	const void *watch;	    /* the word it sleeps on */
	uint64_t watch_val;	    /* the value it last saw there */
	uint64_t t_measure, t_stop; /* ps */
	uint64_t sb_rng;	    /* memory = arm: the seeded store-delay sequence */
	uint64_t pt_rng;	    /* perturb_ns: the seeded stall sequence (splitmix64) */
	/* memory = arm, loads: */
	uint64_t ld_rng;    /* ...the seeded sequence of how early a relaxed load is satisfied */
	uint64_t ld_floor;  /* ...ps: no load before its last acquire, delay, stall or spin */
	uint64_t rel_floor; /* ...ps: its last release store or rmw: no acquire load before it */
	uint64_t win[LD_WINDOW]; /* ...ps: its last LD_WINDOW accesses, oldest at win[win_n % ..] */
	uint32_t win_n;
	bool stale_read; /* ...a load since its last park returned a value already gone */
	uint64_t coh_lost, coh_tick;
	struct {
		uintptr_t word;
		uint64_t at;
		uint64_t used; /* coh_tick at its last note: the least recent goes first */
	} coh[COH_SLOTS];
} LAB_CACHE_ALIGNED;

struct sim {
	const struct engine_job *job;
	uint64_t local_ps, atomic_ps, op_ps, home_ps, poll_ps;
	uint64_t
		home_hold_ps; /* a far atomic's hold of the line at the home; 0: occupancy x trip */
	uint64_t cas_hold_ps; /* ...of a far CAS that succeeds; 0: home_hold_ps */
	double occupancy;
	double read_occupancy; /* ...of a read miss: [machine] read_occupancy, or occupancy */
	double fail_hold;      /* share of a far atomic's hold a failing far CAS takes */
	bool far;	       /* every atomic miss runs at the home */
	bool fail_burst;       /* a failing far CAS at a busy line adds nothing to its time */
	bool weak;	       /* memory = arm: relaxed stores go through store buffers */
	uint64_t sb_delay_ps;
	uint64_t perturb_ps;	 /* [machine] perturb_ns; 0: no stalls, the hot path's one branch */
	double smt_slow;	 /* 1 / [machine] smt_share: local work beside a busy sibling */
	struct sim_sb_entry *sb; /* every store buffer's entries, sorted by (at, seq) */
	uint32_t sb_n, sb_cap;
	uint64_t sb_seq;
	struct sim_hist *hist; /* memory = arm: every word's last changes (open addressing) */
	size_t hist_n, hist_mask;
	bool adaptive; /* ...only when another CPU did the line's last atomic */
	uint32_t ncpus;
	uint32_t words; /* of a CPU bitmap in use: (ncpus + 63) / 64 */
	/*
	 * Transfer latencies, ps: CPU i is core loc[i].core of copy loc[i].copy of a
	 * lat_n-core matrix lat_ps (lat_n x lat_n, its diagonal 0); CPUs of different copies
	 * are cross_ps apart. The matrix stays the topology's size (64 x 64 for the shipped
	 * ones) whatever the CPU count, so at 1024 CPUs a lookup is not a miss in a 4 MB table.
	 * Uniform (no topology): every CPU a copy of its own, cross_ps = line_ns.
	 */
	uint32_t *lat_ps;
	/* [machine] socket_ns: each CPU's socket (named by its lowest core); NULL: off */
	uint32_t *sock;
	/* socket_ns or SMT pairs in the run: the memory model with those rules (mem_price_topo) */
	bool topo_rules;
	uint32_t lat_n;
	uint32_t cross_ps;
	struct sim_loc {
		uint32_t core, copy;
	} * loc;
	/* A far atomic's hold of the line for home_ps's trip, [fails][cas] (sim_model_init). */
	uint64_t far_hold_home[2][2];
	struct sim_cpu *cpus;
	/* The run queue (sim.c, sim_rq_alloc): rq_n CPUs' keys (clock << KEY_ID_BITS | id), in
	 * the 4-ary heap or (sim_rq_in_tree) in the winner tree of 2 rq_leaves nodes. */
	uint64_t *heap, *rq;
	const uint64_t *rq_head; /* the earliest key's slot: &heap[0] or &rq[1] */
	uint32_t rq_leaves, rq_n;
	uint32_t rq_tree_at; /* the tree takes over from this many queued (UINT32_MAX: never) */
	struct sim_line *lines;
	size_t lines_n, lines_mask;
	uint32_t lines_bits;
	uint64_t lines_gen; /* bumped when the table moves (line pointers go stale) */
	struct sim_cpu *cur;
	struct sim_ctx main_ctx;
	const struct sim_agent *agent;
	uint64_t agent_due; /* ps: the agent's next_due as last read */
	bool agent_stale;   /* host code ran on a CPU since: it may have moved agent_due */
	/*
	 * Host code ran on a CPU, or the agent acted, since its progress was last looked at
	 * (device_wakeups): only then can the progress have moved. Set where agent_stale is.
	 */
	bool agent_moved;
	/*
	 * ps: nothing but the running CPU can happen before this (the run queue's head, the
	 * agent's due time; 0 forces the full check). The running CPU carries on without
	 * looking at anything else while its clock is below it: the common case is one compare.
	 */
	uint64_t horizon;
	uint64_t agent_progress;
	bool in_agent;
	uint64_t agent_now;		      /* ps, while in_agent */
	uint64_t t_measure, t_stop, watchdog; /* ps */
	uint64_t t_late; /* ps: the measured window's second half begins (the steady-state check) */
	uint32_t n_live;
	/* Parked CPUs the device's progress may wake: watching a value, or a device register. */
	uint64_t dev_parked[SHARER_WORDS];
	uint64_t agent_parked[SHARER_WORDS]; /* ...of those, the ones that read a register */
	uint64_t stale_parked[SHARER_WORDS]; /* ...that parked on a value already gone */
	uintptr_t dirty[SIM_DIRTY_MAX];	     /* lines the device stored into since the last look */
	uint32_t n_dirty;
	bool dirty_all; /* more than SIM_DIRTY_MAX: look at every sleeper in dev_parked */
	uint32_t looks; /* device_look's that found progress (NDEBUG unset: some are audited) */
	bool hung, failed, oom;
	bool measure_started;				/* job->on_measure called */
	uint64_t lab_ops_at_measure, misses_at_measure; /* st's counts then */
	char why[TRIAL_ERR_LEN];
	struct sim_stats st;
	/* lab_h_watch.c: a CPU stuck in host code (always), a word changed outside lab.h. */
	bool stuck_armed, stuck;
	timer_t stuck_timer;
	uint64_t stuck_ops, stuck_clock, stuck_agent_now; /* at the last tick */
	uint64_t stuck_since_ns; /* the thread's CPU time when they last changed */
	uint32_t stuck_cpu;
	uintptr_t stuck_pc;
	struct sim_shadow *shadow; /* NULL unless job->watch_lab_h */
	size_t shadow_n, shadow_mask;
	uint64_t outside_words;
	struct sim_outside outside;
};

/* The simulation this host thread is running (one at a time per thread). */
extern _Thread_local struct sim *cur_sim;

static inline uint64_t ns_to_ps(double ns)
{
	return ns <= 0 ? 0 : (uint64_t)(ns * PS_PER_NS + 0.5);
}

static inline uint64_t due_to_ps(uint64_t ns)
{
	return ns >= NEVER / PS_PER_NS ? NEVER : ns * PS_PER_NS;
}

/*
 * One compare per step instead of two (clock, then id) is what makes the run queue cheap: it
 * is walked on nearly every switch. The clock keeps 54 bits of picoseconds (5 hours of
 * virtual time), the id the low 10 (SIM_MAX_CPUS).
 */
#define KEY_ID_BITS   10
#define KEY_CLOCK_MAX ((1ull << (64 - KEY_ID_BITS)) - 1)

_Static_assert(SIM_MAX_CPUS <= 1u << KEY_ID_BITS, "CPU ids must fit a run queue key");

static inline uint64_t key_of(uint64_t clock, uint32_t id)
{
	return (clock < KEY_CLOCK_MAX ? clock : KEY_CLOCK_MAX) << KEY_ID_BITS | id;
}

static inline uint64_t key_clock(uint64_t key)
{
	return key >> KEY_ID_BITS;
}

static inline uint32_t sim_key_id(uint64_t key)
{
	return (uint32_t)(key & ((1u << KEY_ID_BITS) - 1));
}

/* memory = arm: me has just made an access at t, the newest of its out-of-order window. */
static inline void win_note(struct sim_cpu *me, uint64_t t)
{
	me->win[me->win_n++ % LD_WINDOW] = t;
}

/*
 * memory = arm: no load of me's after this point is satisfied before me->clock - back_ps (an
 * acquire, a delay, a stall, a readl: 0; the pass of a spin-wait that just ended: the loads
 * after it may have been satisfied during it, as a core runs on past the loop's exit branch).
 */
static inline void loads_after(const struct sim *s, struct sim_cpu *me, uint64_t back_ps)
{
	uint64_t f = me->clock > back_ps ? me->clock - back_ps : 0;

	if (s->weak && f > me->ld_floor)
		me->ld_floor = f;
}

/* The run queue (sim.c): CPU id's clock enters it; the earliest (clock, id) leaves it. */
int sim_rq_alloc(struct sim *s, uint32_t ncpus); /* empty, for ncpus; 0 or -ENOMEM */
void sim_rq_push(struct sim *s, uint64_t clock, uint32_t id);
uint64_t sim_rq_pop(struct sim *s);

/* Whether the winner tree holds the run queue (its head is the tree's root), not the heap. */
static inline bool sim_rq_in_tree(const struct sim *s)
{
	return s->rq_head != s->heap;
}

/* memory = arm: the word history's table (sim.c), 2^bits slots. 0 or -ENOMEM. */
int sim_hist_alloc(struct sim *s, uint32_t bits);

/* The line table (sim.c), 2^bits slots. 0 or -ENOMEM. */
int sim_lines_alloc(struct sim *s, uint32_t bits);

/* Work out what the model's parameters give once per run (after they are set). */
void sim_model_init(struct sim *s);

/* Switch away from me to whatever runs next (sim.c); me_runnable: me goes back in the queue. */
void sim_schedule(struct sim *s, struct sim_cpu *me, bool me_runnable);

/*
 * lab_h_watch.c. The stuck-CPU timer on this thread's CPU time, for the run (start may fail
 * quietly: the caller's wall-clock stall limit is still there). sim_shadow_init: the table,
 * 0 or -ENOMEM. For a lab.h access of size bytes at p from code address pc: _check before
 * it reads memory (a load, an rmw), which returns p's entry (_entry alone for a store: NULL
 * when p is not watched), then _seen with it once memory holds what it leaves;
 * _forget when something the sim is told of writes [p, p + len) (the device, the workload).
 * sim_watch_report: what was found, into res (outside_lab_h, outside_why) and s->why.
 */
void sim_watch_start(struct sim *s);
void sim_watch_stop(struct sim *s);
int sim_shadow_init(struct sim *s);
struct sim_shadow *sim_shadow_entry(struct sim *s, const void *p, uint32_t size);
struct sim_shadow *sim_shadow_check(struct sim *s, const struct sim_cpu *me, const void *p,
				    uint32_t size, const void *pc);
void sim_shadow_seen(struct sim_shadow *e, const struct sim_cpu *me, const void *p, uint32_t size,
		     const void *pc, enum access kind);
void sim_shadow_forget(struct sim *s, const void *p, size_t len);
void sim_watch_report(struct sim *s, struct engine_result *res);

/* What sim-built code calls (lab_sim.h), for the engine's own idle delay. */

#endif /* IOMMULAB_SIM_INTERNAL_H */
