/* SPDX-License-Identifier: MIT */
/*
 * sim -- the scheduler, the memory model and the lab_sim_*() functions sim-built plugins
 * call (see sim.h for the model, lab.h for the binding).
 *
 * Time is kept in picoseconds (uint64_t: 213 days) so fractional measured latencies add up
 * without rounding drift; lab_now() reports nanoseconds.
 *
 * Order of events. A shared-memory operation is issued by the CPU with the earliest clock
 * (ties: lowest id), is priced against the line's state at that moment (which it then
 * updates: the line's next transfer queues behind it), moves the CPU's clock to its
 * completion, and takes effect (value read or written, sleepers woken) only once that CPU is
 * again the earliest: so values change in virtual-time order, and everything is a function of
 * the inputs alone.
 */
#include "engine/sim/sim.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iommulab/lab_sim.h>

#include "engine/cpu_loop.h"
#include "engine/host.h"
#include "engine/sim/ctx.h"

#include "engine/sim/sim_internal.h"

_Thread_local struct sim *cur_sim;

/* ---- the run queue: the CPUs' (clock, id) keys, in a 4-ary heap or a winner tree ---------- */

/*
 * Keys are unique (the id is in the key), so every correct priority queue pops them in the
 * same order: which of the two holds the queue never changes a run, only its speed.
 *
 * The heap (heap[0..rq_n)) is cheap while few CPUs are queued: a sift walks log4 rq_n levels.
 * Four children per node are adjacent (one or two cache lines), and slots from rq_n on hold
 * UINT64_MAX (the array has room for the CPUs + HEAP_ARITY), so the smallest child is picked
 * without a bounds test or a branch.
 *
 * With most of many CPUs queued (a CAS loop's contenders) every switch sifts its new key
 * from the root to the bottom, each level's loads waiting on the last level's compares. The
 * winner tree takes over there: leaf rq_leaves + id holds CPU id's key while it is queued
 * (UINT64_MAX while it is not), each inner node the smaller of its two children, node 1 the
 * earliest. A CPU queued or taken rewrites its leaf and replays the path to the root, whose
 * addresses are known in advance, and stops where a node keeps its value (a CPU giving way
 * behind its neighbours stops at once); the winner leaving replays its whole path. At 256
 * CPUs that made a cmpxchg trial 1.5x faster in wall time for as many instructions, and an
 * mcs trial, whose parked CPUs leave few queued, 10% slower: so the tree holds the queue only
 * from a quarter of rq_leaves queued (rq_tree_at; RQ_TREE_MIN_LEAVES leaves or more) and
 * hands it back below an eighth, each move O(rq_leaves). (A 4-ary tree, half the levels of
 * four siblings each, ran 4% slower at 256 CPUs and 16% at 1024.)
 */
#define HEAP_ARITY	   4
#define RQ_TREE_MIN_LEAVES 32

/* Insert e into the heap of n entries. */
static void heap_insert(uint64_t *heap, uint32_t n, uint64_t e)
{
	uint32_t i = n;

	while (i) {
		uint32_t parent = (i - 1) / HEAP_ARITY;
		if (e >= heap[parent])
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = e;
}

/* Put e where the head was and sift it down (n entries). */
static void heap_sift_down(uint64_t *heap, uint32_t n, uint64_t e)
{
	uint32_t i = 0;

	for (;;) {
		uint32_t c = HEAP_ARITY * i + 1;
		if (c >= n)
			break;
		uint64_t a = heap[c], b = heap[c + 1], x = heap[c + 2], y = heap[c + 3];
		uint32_t ab = b < a, xy = y < x;
		uint64_t m0 = ab ? b : a, m1 = xy ? y : x;
		uint32_t hi = m1 < m0;
		uint64_t m = hi ? m1 : m0;
		if (e <= m)
			break;
		heap[i] = m;
		i = c + (hi ? 2 + xy : ab);
	}
	heap[i] = e;
}

static inline void tree_set(struct sim *s, uint32_t id, uint64_t key)
{
	uint64_t *t = s->rq, m = key;
	uint32_t i = s->rq_leaves + id;

	t[i] = key;
	while (i > 1) {
		uint64_t b = t[i ^ 1];
		m = b < m ? b : m;
		i >>= 1;
		if (t[i] == m)
			break;
		t[i] = m;
	}
}

/* The head leaves: every node on its path held its key, so the walk goes to the root. */
static inline void tree_take_top(struct sim *s, uint64_t top)
{
	uint64_t *t = s->rq, m = UINT64_MAX;
	uint32_t i = s->rq_leaves + sim_key_id(top);

	t[i] = m;
	for (; i > 1; i >>= 1) {
		uint64_t b = t[i ^ 1];
		m = b < m ? b : m;
		t[i >> 1] = m;
	}
}

static __attribute__((noinline)) void rq_to_tree(struct sim *s)
{
	uint64_t *t = s->rq;
	uint32_t leaves = s->rq_leaves;

	for (uint32_t i = leaves; i < 2 * leaves; i++)
		t[i] = UINT64_MAX;
	for (uint32_t i = 0; i < s->rq_n; i++) {
		t[leaves + sim_key_id(s->heap[i])] = s->heap[i];
		s->heap[i] = UINT64_MAX;
	}
	for (uint32_t i = leaves - 1; i >= 1; i--)
		t[i] = t[2 * i] < t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
	s->rq_head = &t[1];
}

static __attribute__((noinline)) void rq_to_heap(struct sim *s)
{
	uint32_t n = 0;

	for (uint32_t i = s->rq_leaves; i < 2 * s->rq_leaves; i++)
		if (s->rq[i] != UINT64_MAX)
			heap_insert(s->heap, n++, s->rq[i]);
	s->rq_head = &s->heap[0];
}

int sim_rq_alloc(struct sim *s, uint32_t ncpus)
{
	size_t heap_slots = (size_t)ncpus + HEAP_ARITY; /* the last inner entry's 4 children */

	for (s->rq_leaves = 1; s->rq_leaves < ncpus;)
		s->rq_leaves *= 2;
	s->rq_tree_at = s->rq_leaves >= RQ_TREE_MIN_LEAVES ? s->rq_leaves / 4 : UINT32_MAX;
	s->rq_n = 0;
	s->heap = malloc(heap_slots * sizeof(*s->heap));
	s->rq = malloc(2 * s->rq_leaves * sizeof(*s->rq));
	if (!s->heap || !s->rq)
		return -ENOMEM;
	memset(s->heap, 0xff, heap_slots * sizeof(*s->heap)); /* none queued */
	memset(s->rq, 0xff, 2 * s->rq_leaves * sizeof(*s->rq));
	s->rq_head = s->heap;
	return 0;
}

/* The earliest queued key (UINT64_MAX: none), through rq_head: no branch on the structure. */
static inline uint64_t rq_top(const struct sim *s)
{
	return *s->rq_head;
}

void sim_rq_push(struct sim *s, uint64_t clock, uint32_t id)
{
	uint64_t key = key_of(clock, id);

	if (clock < s->horizon)
		s->horizon = clock;
	if (sim_rq_in_tree(s)) {
		tree_set(s, id, key);
		s->rq_n++;
		return;
	}
	heap_insert(s->heap, s->rq_n++, key);
	if (s->rq_n >= s->rq_tree_at)
		rq_to_tree(s);
}

uint64_t sim_rq_pop(struct sim *s)
{
	uint64_t top = rq_top(s);

	if (sim_rq_in_tree(s)) {
		tree_take_top(s, top);
		if (--s->rq_n < s->rq_tree_at / 2)
			rq_to_heap(s);
		return top;
	}
	uint64_t last = s->heap[--s->rq_n];
	s->heap[s->rq_n] = UINT64_MAX;
	if (s->rq_n)
		heap_sift_down(s->heap, s->rq_n, last);
	return top;
}

/* Take the head and queue (clock, id): a running CPU giving way. */
static inline __attribute__((always_inline)) uint64_t rq_replace_top(struct sim *s, uint64_t clock,
								     uint32_t id)
{
	uint64_t top = rq_top(s);

	if (sim_rq_in_tree(s)) {
		tree_set(s, id, key_of(clock, id));
		tree_take_top(s, top);
	} else {
		heap_sift_down(s->heap, s->rq_n, key_of(clock, id));
	}
	return top;
}

/* ---- lines --------------------------------------------------------------------------------- */

static inline size_t line_hash(const struct sim *s, uintptr_t tag)
{
	return (size_t)(((uint64_t)tag * 0x9e3779b97f4a7c15ull) >> (64 - s->lines_bits));
}

int sim_lines_alloc(struct sim *s, uint32_t bits)
{
	struct sim_line *old = s->lines;
	size_t old_cap = old ? s->lines_mask + 1 : 0;
	struct sim_line *v = calloc((size_t)1 << bits, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->lines = v;
	s->lines_bits = bits;
	s->lines_mask = ((size_t)1 << bits) - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].tag)
			continue;
		size_t j = line_hash(s, old[i].tag);
		while (v[j].tag)
			j = (j + 1) & s->lines_mask;
		v[j] = old[i];
	}
	free(old);
	s->lines_gen++;
	return 0;
}

static struct sim_line *line_of(struct sim *s, const void *p)
{
	uintptr_t tag = (uintptr_t)p >> 6;

	for (;;) {
		size_t i = line_hash(s, tag);
		for (;;) {
			struct sim_line *l = &s->lines[i];
			if (l->tag == tag)
				return l;
			if (!l->tag)
				break;
			i = (i + 1) & s->lines_mask;
		}
		/* New line: at its home, in nobody's cache. Keep the table at most half full. */
		if ((s->lines_n + 1) * 2 <= s->lines_mask + 1) {
			struct sim_line *l = &s->lines[i];
			l->tag = tag;
			l->owner = LINE_HOME;
			s->lines_n++;
			return l;
		}
		if (sim_lines_alloc(s, s->lines_bits + 1)) {
			/* Out of memory mid-run: fail the trial rather than corrupt the table. */
			s->oom = true;
			abort();
		}
	}
}

static inline bool sharer_has(const struct sim_line *l, uint32_t id)
{
	return (l->sharers[id / 64] >> (id % 64)) & 1;
}

static inline void sharer_set(struct sim_line *l, uint32_t id)
{
	uint8_t w = (uint8_t)(id / 64);

	l->sharers[w] |= 1ull << (id % 64);
	if (l->sh_hi < l->sh_lo) {
		l->sh_lo = l->sh_hi = w;
	} else {
		l->sh_lo = w < l->sh_lo ? w : l->sh_lo;
		l->sh_hi = w > l->sh_hi ? w : l->sh_hi;
	}
}

/* No CPU holds a copy any more: only the words that may have a bit are cleared. */
static inline void sharers_clear(struct sim_line *l)
{
	for (uint32_t w = l->sh_lo; w <= l->sh_hi; w++)
		l->sharers[w] = 0;
	l->sh_lo = 1;
	l->sh_hi = 0;
}

static inline uint64_t lat(const struct sim *s, uint32_t a, uint32_t b)
{
	const struct sim_loc *x = &s->loc[a], *y = &s->loc[b];

	return x->copy != y->copy ? s->cross_ps : s->lat_ps[x->core * s->lat_n + y->core];
}

/*
 * A transfer of line l between CPUs a and b. With [machine] socket_ns, a line's home is the
 * socket of the CPU that touched it first (first-touch placement), and a transfer between two
 * sockets neither of which is the home's goes through it: request to the home, the home's
 * snoop to the holder, the data to the requester, half of each pair's cost.
 */
static __attribute__((noinline)) uint64_t
xfer_via_home(const struct sim *s, const struct sim_line *l, uint32_t a, uint32_t b, uint64_t d)
{
	uint32_t h, sa = s->sock[a], sb = s->sock[b], sh;

	if (!l->home_cpu || sa == sb)
		return d;
	h = l->home_cpu - 1;
	sh = s->sock[h];
	return sa != sh && sb != sh ? (d + lat(s, a, h) + lat(s, b, h)) / 2 : d;
}

static inline uint64_t xfer(const struct sim *s, const struct sim_line *l, uint32_t a, uint32_t b,
			    bool topo)
{
	uint64_t d = lat(s, a, b);

	return topo && s->sock ? xfer_via_home(s, l, a, b, d) : d;
}

/*
 * SMT siblings share their L1: the line is a hit for me when my peer holds it, or once the
 * peer's miss on it, in flight, lands (the access merges with that miss). Returns the owner
 * to price with (me for a hit) and moves *t to the fill's landing when it merges.
 */
static __attribute__((noinline)) int32_t l1_owner(const struct sim *s, const struct sim_cpu *me,
						  const struct sim_line *l, enum access kind,
						  uint64_t *t)
{
	const struct sim_cpu *peer = &s->cpus[me->l1_peer];
	int32_t owner = l->owner;

	if (peer->fill_tag == l->tag && peer->fill_at > *t &&
	    (peer->fill_excl || kind == ACC_LOAD)) {
		*t = peer->fill_at;
		return (int32_t)me->id;
	}
	if (owner == me->l1_peer ||
	    (kind == ACC_LOAD && owner == LINE_SHARED && sharer_has(l, (uint32_t)me->l1_peer)))
		return (int32_t)me->id;
	return owner;
}

/* Invalidating every copy costs the round trip to the farthest holder (sent in parallel). */
static uint64_t sharers_farthest(const struct sim *s, const struct sim_line *l, uint32_t id,
				 bool topo)
{
	uint64_t worst = 0;

	for (uint32_t w = l->sh_lo; w <= l->sh_hi; w++) {
		uint64_t bits = l->sharers[w];
		while (bits) {
			uint32_t other = w * 64 + (uint32_t)__builtin_ctzll(bits);
			uint64_t d = xfer(s, l, id, other, topo); /* 0 to itself */

			bits &= bits - 1;
			if (d > worst)
				worst = d;
		}
	}
	return worst;
}

static uint64_t direct_rmw(uint64_t old, int op, uint64_t a, uint64_t b)
{
	switch (op) {
	case LAB_SIM_CAS:
		return old == a ? b : old;
	case LAB_SIM_XCHG:
		return a;
	case LAB_SIM_ADD:
		return old + a;
	case LAB_SIM_SUB:
		return old - a;
	case LAB_SIM_AND:
		return old & a;
	case LAB_SIM_ANDNOT:
		return old & ~a;
	case LAB_SIM_OR:
		return old | a;
	default:
		return old ^ a;
	}
}

/* How long a far atomic over a trip of latency holds the line at the home. */
static uint64_t far_hold_of(const struct sim *s, uint64_t latency, bool fails, bool cas)
{
	uint64_t hold;

	hold = s->home_hold_ps ? s->home_hold_ps : (uint64_t)((double)latency * s->occupancy);
	if (cas && s->cas_hold_ps)
		hold = s->cas_hold_ps;
	return fails ? (uint64_t)((double)hold * s->fail_hold) : hold;
}

/* The holds for the home's own trip, the common one (see far_serve). */
void sim_model_init(struct sim *s)
{
	for (int fails = 0; fails < 2; fails++)
		for (int cas = 0; cas < 2; cas++)
			s->far_hold_home[fails][cas] = far_hold_of(s, s->home_ps, fails, cas);
}

/*
 * A far atomic at the line's home: the request travels half of latency there, waits for the
 * line to be free, is served, and the answer travels the other half back -- so one that
 * queued has made its trip while it waited (its answer leaves when the line frees, not a
 * full round trip later). A success holds the line for home_hold (occupancy x the trip when
 * unset); a failing CAS that finds the line busy joins the burst served when it frees and
 * adds nothing, one that finds it idle holds it for fail_hold of that. Returns the answer's
 * arrival.
 */
static uint64_t far_serve(struct sim *s, struct sim_line *l, uint64_t t, uint64_t latency,
			  bool fails, bool cas)
{
	uint64_t half = latency / 2, arrive = t + half, served, hold;

	if (fails && arrive < l->busy_until && s->fail_burst)
		return l->busy_until + (latency - half);
	/* The home's own trip is the common one: its holds were worked out once (the same
	 * expression, so the same figures). */
	hold = latency == s->home_ps ? s->far_hold_home[fails][cas]
				     : far_hold_of(s, latency, fails, cas);
	served = arrive > l->busy_until ? arrive : l->busy_until;
	l->busy_until = served + hold;
	return served + (latency - half);
}

/*
 * Price one access by CPU me at its clock and update the line: returns its completion time.
 * Hits cost local_ps / atomic_ps; a miss waits for the line to be free, then costs the
 * transfer from where the line is, and keeps the line busy for occupancy x that transfer
 * (read_occupancy x it for a read).
 * cas_fails: an rmw that is a CAS whose compare will fail when it is served.
 * topo: with [machine] socket_ns's home (xfer) and the SMT pairs' shared L1 (l1_owner).
 */
static inline __attribute__((always_inline)) uint64_t
mem_price_as(struct sim *s, struct sim_cpu *me, struct sim_line *l, enum access kind, bool is_cas,
	     bool cas_fails, bool topo)
{
	uint32_t id = me->id;
	uint64_t t = me->clock + s->op_ps;
	int32_t owner = l->owner;
	bool rmw = kind == ACC_RMW;
	uint64_t latency, start;

	if (rmw && l->last_rmw && l->last_rmw != id + 1)
		l->contended = true;
	if (topo && s->sock && !l->home_cpu)
		l->home_cpu = id + 1;
	if (topo && me->l1_peer >= 0)
		owner = l1_owner(s, me, l, kind, &t);
	if (owner == (int32_t)id) {
		if (rmw)
			l->last_rmw = id + 1;
		return t + (rmw ? s->atomic_ps : s->local_ps);
	}
	if (kind == ACC_LOAD && owner == LINE_SHARED && sharer_has(l, id))
		return t + s->local_ps;

	if (kind == ACC_LOAD && owner < 0 && owner != LINE_SHARED &&
	    !(s->adaptive && l->contended)) {
		/* Nobody has a copy: it arrives exclusive (MESI's E), a later store hits. (Not a
		 * line other CPUs' atomics use: the home hands it out shared.) */
		latency = s->home_ps;
		l->owner = (int32_t)id;
	} else if (kind == ACC_LOAD) {
		latency = owner >= 0 ? xfer(s, l, id, (uint32_t)owner, topo) : s->home_ps;
		if (owner >= 0) {
			sharers_clear(l);
			sharer_set(l, (uint32_t)owner);
		}
		sharer_set(l, id);
		l->owner = LINE_SHARED;
	} else {
		/*
		 * Far atomics run at the home node: afterwards no L1 holds the line. Adaptive
		 * (Neoverse N1's measured behaviour: 5.3 ns uncontended, ~9 ns per op at the home
		 * once two cores share the line): far only while another CPU did the last atomic,
		 * so a line used by one core alone stays in its L1.
		 */
		bool far = rmw && (s->far || (s->adaptive && l->contended));

		if (far && cas_fails && owner < 0) {
			/*
			 * The home holds the data and the compare fails: it reads the word and
			 * answers, writing nothing; no copy is invalidated, the line stays where
			 * it is. Arriving while the line is busy, the request waits there and is
			 * answered with the burst that the line serves when it frees (one read
			 * for all of them, the newest value for each): it adds nothing to the
			 * line's time. Arriving at an idle line it holds it for the read
			 * (fail_hold of an atomic's hold).
			 */
			l->last_rmw = id + 1;
			me->far_seen = true;
			s->st.misses++;
			return far_serve(s, l, t, s->home_ps, true, true) +
			       (s->adaptive ? 0 : s->atomic_ps);
		}
		if (!far && cas_fails) {
			/*
			 * A near CAS that misses and whose compare fails: the line comes to it
			 * (every other copy invalidated) with the newest value, but the compare
			 * leaves nothing to write, so arriving at a line in flight it rides along
			 * with the transfer the line is making (adding nothing to the line's
			 * time), and at an idle line holds it for fail_hold of a transfer. The
			 * next requester takes the line from it. Measured x86 CAS loops cost about
			 * two transfers per success at 8-16 threads (folly, E5-2680 v4), not one
			 * per attempt.
			 */
			latency = owner >= 0 ? xfer(s, l, id, (uint32_t)owner, topo) : s->home_ps;
			sharers_clear(l);
			l->owner = (int32_t)id;
			l->last_rmw = id + 1;
			me->far_seen = true;
			s->st.misses++;
			return far_serve(s, l, t, latency, true, false) + s->atomic_ps;
		}
		if (owner >= 0)
			latency = xfer(s, l, id, (uint32_t)owner, topo);
		else if (owner == LINE_SHARED)
			latency = s->home_ps > sharers_farthest(s, l, id, topo)
					  ? s->home_ps
					  : sharers_farthest(s, l, id, topo);
		else
			latency = s->home_ps;
		sharers_clear(l);
		l->owner = far ? LINE_HOME : (int32_t)id;
		if (rmw)
			l->last_rmw = id + 1;
		if (far) {
			/* The home's ALU does it as the line arrives; the home invalidates
			 * sharers' copies while it answers (in parallel). Adaptive (N1): no L1
			 * atomic on top. */
			if (owner == LINE_SHARED && s->adaptive)
				latency = s->home_ps;
			s->st.misses++;
			return far_serve(s, l, t, latency, false, is_cas) +
			       (s->adaptive ? 0 : s->atomic_ps);
		}
	}
	start = t > l->busy_until ? t : l->busy_until;
	l->busy_until = start + (uint64_t)((double)latency *
					   (kind == ACC_LOAD ? s->read_occupancy : s->occupancy));
	s->st.misses++;
	return start + latency + (rmw ? s->atomic_ps : 0);
}

/*
 * The model as it is for every machine, and with [machine] socket_ns or SMT pairs (smt_ns):
 * two copies of it, so the plain one costs what it did before those rules.
 */
static uint64_t mem_price_plain(struct sim *s, struct sim_cpu *me, struct sim_line *l,
				enum access kind, bool is_cas, bool cas_fails)
{
	return mem_price_as(s, me, l, kind, is_cas, cas_fails, false);
}

static __attribute__((noinline)) uint64_t mem_price_topo(struct sim *s, struct sim_cpu *me,
							 struct sim_line *l, enum access kind,
							 bool is_cas, bool cas_fails)
{
	return mem_price_as(s, me, l, kind, is_cas, cas_fails, true);
}

static inline uint64_t mem_price(struct sim *s, struct sim_cpu *me, struct sim_line *l,
				 enum access kind, bool is_cas, bool cas_fails, bool topo)
{
	return topo ? mem_price_topo(s, me, l, kind, is_cas, cas_fails)
		    : mem_price_plain(s, me, l, kind, is_cas, cas_fails);
}

/*
 * The value w's word will hold once every write priced before now has taken effect: the
 * line's pending write when it is to that word (values change at their writer's
 * completion), else memory.
 */
static uint64_t line_word(const struct sim_line *l, const struct sim_write *w, uint64_t now)
{
	if (l->w_set && l->w_off == ((uintptr_t)w->p & (LAB_CACHE_LINE - 1)) && l->w_at >= now)
		return l->w_val;
	return w->size == 4 ? *(volatile const uint32_t *)w->p : *(volatile const uint64_t *)w->p;
}

/* With an L1 peer: an access that missed fills the line at done (the peer's merge with it). */
static inline void note_fill(struct sim *s, struct sim_cpu *me, const struct sim_line *l,
			     enum access kind, uint64_t misses_before, uint64_t done)
{
	if (me->l1_peer < 0 || s->st.misses == misses_before)
		return;
	me->fill_tag = l->tag;
	me->fill_at = done;
	me->fill_excl = kind != ACC_LOAD || l->owner == (int32_t)me->id;
}

/*
 * Price an access (w: the store or rmw, NULL for a load) and note what a write will leave
 * in its word: the next CAS on the line is priced against it. topo: with socket_ns's home
 * and the SMT pairs' shared L1 (mem_price_as).
 */
static inline __attribute__((always_inline)) uint64_t
mem_access_as(struct sim *s, struct sim_cpu *me, struct sim_line *l, enum access kind,
	      const struct sim_write *w, bool topo)
{
	uint64_t mask, old, done, misses = topo ? s->st.misses : 0;
	bool cas_fails;

	if (!w) {
		done = mem_price(s, me, l, kind, false, false, topo);
		if (topo)
			note_fill(s, me, l, kind, misses, done);
		return done;
	}
	mask = w->size == 4 ? UINT32_MAX : UINT64_MAX;
	old = line_word(l, w, me->clock) & mask;
	cas_fails = w->op == LAB_SIM_CAS && old != (w->a & mask);
	me->far_seen = false;
	done = mem_price(s, me, l, kind, w->op == LAB_SIM_CAS, cas_fails, topo);
	me->far_val = old;
	if (!cas_fails) {
		l->w_set = true;
		l->w_off = (uint8_t)((uintptr_t)w->p & (LAB_CACHE_LINE - 1));
		l->w_val = (w->op == SIM_STORE ? w->a : direct_rmw(old, w->op, w->a, w->b)) & mask;
		l->w_at = done;
	}
	if (topo)
		note_fill(s, me, l, kind, misses, done);
	return done;
}

static __attribute__((noinline)) uint64_t mem_access_topo(struct sim *s, struct sim_cpu *me,
							  struct sim_line *l, enum access kind,
							  const struct sim_write *w)
{
	return mem_access_as(s, me, l, kind, w, true);
}

static uint64_t mem_access(struct sim *s, struct sim_cpu *me, struct sim_line *l, enum access kind,
			   const struct sim_write *w)
{
	if (__builtin_expect(s->topo_rules, 0))
		return mem_access_topo(s, me, l, kind, w);
	return mem_access_as(s, me, l, kind, w, false);
}

/* ---- scheduling ---------------------------------------------------------------------------- */

/*
 * One more lab.h operation simulated. Every PROGRESS_EVERY of them the run's progress is
 * published (job->progress) for whoever watches the trial from outside: a sim trial is
 * judged stuck by its progress, not by how long the host takes (the host's speed is not
 * the plugin's fault).
 */
#define PROGRESS_EVERY (1u << 12)

static void publish_progress(struct sim *s)
{
	struct engine_progress *p = s->job->progress;

	__atomic_store_n(&p->steps, s->st.lab_ops, __ATOMIC_RELAXED);
	if (s->cur)
		__atomic_store_n(&p->virtual_ns, s->cur->clock / PS_PER_NS, __ATOMIC_RELAXED);
}

static inline void count_op(struct sim *s)
{
	if (!(++s->st.lab_ops & (PROGRESS_EVERY - 1)) && s->job->progress)
		publish_progress(s);
}

static void switch_to(struct sim *s, struct sim_cpu *from, struct sim_cpu *to)
{
	s->st.switches++;
	s->cur = to;
	to->state = CPU_RUNNING;
	sim_ctx_switch(&from->ctx, &to->ctx);
	/* Back on from's stack: whoever switched here has set s->cur = from. */
}

static void to_main(struct sim *s, struct sim_cpu *from)
{
	s->cur = NULL;
	sim_ctx_switch(&from->ctx, &s->main_ctx);
}

static void hang(struct sim *s, const char *fmt_cause, uint32_t cpu)
{
	size_t off;

	if (s->hung)
		return;
	s->hung = true;
	s->horizon = 0;
	off = (size_t)snprintf(s->why, sizeof(s->why), "no progress (virtual watchdog %.3f ms): ",
			       (double)s->watchdog / 1e9);
	off += (size_t)snprintf(s->why + off, sizeof(s->why) - off, fmt_cause, cpu);
	for (uint32_t i = 0; i < s->ncpus && off < sizeof(s->why); i++) {
		struct sim_cpu *x = &s->cpus[i];
		const char *st = x->state == CPU_DONE	  ? "finished"
				 : x->state == CPU_PARKED ? "waiting on a line"
							  : "running";
		off += (size_t)snprintf(s->why + off, sizeof(s->why) - off, "; cpu%u %s at %.3f us",
					i, st, (double)x->clock / 1e6);
	}
}

void sim_read_agent(void)
{
	struct sim *s = cur_sim;

	if (!s || !s->cur)
		return;
	if (!s->cur->read_agent && s->agent && s->agent->progress)
		s->cur->agent_seen = s->agent->progress(s->agent->arg);
	s->cur->read_agent = true;
	loads_after(s, s->cur, 0); /* readl() is a load and an rmb */
}

void sim_agent_wrote(const void *p, size_t len)
{
	struct sim *s = cur_sim;
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + len;

	if (!s)
		return;
	for (; a < end; a += 64) {
		struct sim_line *l = line_of(s, (const void *)a);
		l->owner = LINE_DEVICE;
		sharers_clear(l);
	}
}

/* Take a parked CPU off every line it sleeps on, the watched one's list excepted. */
static void clear_extras(struct sim *s, struct sim_cpu *x)
{
	for (uint32_t k = 0; k < x->n_extra; k++) {
		struct sim_line *l = line_of(s, (const void *)(x->extra[k] << 6));
		l->watchers[x->id / 64] &= ~(1ull << (x->id % 64));
		l->n_watchers--;
	}
	x->n_extra = 0;
}

/* Take a parked CPU off its watched line's list. */
static void unlink_waiter(struct sim *s, struct sim_cpu *x)
{
	struct sim_line *l = line_of(s, x->watch);
	uint32_t *link = &l->waiters;

	while (*link && *link != x->id + 1)
		link = &s->cpus[*link - 1].next_waiter;
	if (*link)
		*link = x->next_waiter;
	x->next_waiter = 0;
}

static void make_runnable(struct sim *s, struct sim_cpu *x, uint64_t now)
{
	uint64_t bit = 1ull << (x->id % 64);

	s->dev_parked[x->id / 64] &= ~bit;
	s->agent_parked[x->id / 64] &= ~bit;
	s->stale_parked[x->id / 64] &= ~bit;
	x->agent_waiter = false;
	x->clock = x->clock > now ? x->clock : now;
	x->state = CPU_RUNNABLE;
	sim_rq_push(s, x->clock, x->id);
}

/* A line that parked CPUs' conditions read was written: wake them to look again. */
static void wake_watchers(struct sim *s, struct sim_line *l, uint64_t now)
{
	uint64_t bits[SHARER_WORDS];

	memcpy(bits, l->watchers, s->words * sizeof(bits[0]));
	for (uint32_t w = 0; w < s->words; w++) {
		while (bits[w]) {
			struct sim_cpu *x = &s->cpus[w * 64 + (uint32_t)__builtin_ctzll(bits[w])];
			bits[w] &= bits[w] - 1;
			unlink_waiter(s, x);
			clear_extras(s, x);
			make_runnable(s, x, now);
		}
	}
}

/* The line of tag, or NULL when no CPU has touched it (nobody sleeps on it). */
static struct sim_line *line_find(struct sim *s, uintptr_t tag)
{
	for (size_t i = line_hash(s, tag);; i = (i + 1) & s->lines_mask) {
		struct sim_line *l = &s->lines[i];
		if (l->tag == tag)
			return l;
		if (!l->tag)
			return NULL;
	}
}

static void hist_forget(struct sim *s, const void *p, size_t len, uint64_t at);

void sim_agent_stored(const void *p, size_t len)
{
	struct sim *s = cur_sim;
	uintptr_t a = (uintptr_t)p >> 6, end = ((uintptr_t)p + len + 63) >> 6;

	if (!s)
		return;
	if (s->shadow) /* lab.h did not write it: no later access can tell what it held */
		sim_shadow_forget(s, p, len);
	if (s->hist) /* memory = arm: its old value is gone, so no load goes back before it */
		hist_forget(s, p, len, s->in_agent ? s->agent_now : s->cur ? s->cur->clock : 0);
	for (; a < end; a++) {
		if (s->n_dirty < SIM_DIRTY_MAX)
			s->dirty[s->n_dirty++] = a;
		else
			s->dirty_all = true;
	}
}

static inline bool watch_changed(const struct sim_cpu *x)
{
	if (!x->watch_size)
		return false;
	return (x->watch_size == 4 ? *(volatile const uint32_t *)x->watch
				   : *(volatile const uint64_t *)x->watch) != x->watch_val;
}

/*
 * Wake the CPUs sleeping on a word the device has changed, and those whose condition read a
 * device register. A sleeping CPU's word changes under it only by a device store (a CPU's
 * store wakes it at once), so the candidates are the sleepers on the lines the device stored
 * into since the last look (sim_agent_stored; every sleeper the device can wake when they
 * overflow), those that read a device register, and those that went to sleep on a value
 * already gone (stale_parked). They are handled in id order, as a look at every CPU would:
 * at 256 CPUs that look was the sim's largest cost.
 */
static __attribute__((noinline)) void device_look(struct sim *s, uint64_t now)
{
	uint64_t cand[SHARER_WORDS], p;
	uint32_t words = s->words;

	if (!s->agent || !s->agent->progress)
		return;
	s->agent_moved = false;
	p = s->agent->progress(s->agent->arg);
	if (p == s->agent_progress)
		return;
	s->agent_progress = p;
	for (uint32_t w = 0; w < words; w++)
		cand[w] = s->agent_parked[w] | s->stale_parked[w] |
			  (s->dirty_all ? s->dev_parked[w] : 0);
	for (uint32_t k = 0; k < s->n_dirty && !s->dirty_all; k++) {
		struct sim_line *l = line_find(s, s->dirty[k]);
		for (uint32_t i = l ? l->waiters : 0; i; i = s->cpus[i - 1].next_waiter)
			cand[(i - 1) / 64] |= 1ull << ((i - 1) % 64);
	}
	s->n_dirty = 0;
	s->dirty_all = false;
	for (uint32_t w = 0; w < words; w++) {
		while (cand[w]) {
			struct sim_cpu *x = &s->cpus[w * 64 + (uint32_t)__builtin_ctzll(cand[w])];
			bool changed = watch_changed(x);
			cand[w] &= cand[w] - 1;
			if (!changed && !x->agent_waiter)
				continue;
			unlink_waiter(s, x);
			clear_extras(s, x);
			if (changed) {
				/* The device wrote the word (an MSI, a consumed slot): reload from
				 * home. */
				struct sim_line *l = line_of(s, x->watch);
				l->owner = LINE_DEVICE;
				sharers_clear(l);
			}
			make_runnable(s, x, now);
		}
	}
#ifndef NDEBUG
	/*
	 * The candidates must have been every CPU a look at all of them would wake. That look is
	 * the O(N) scan the candidates replace, so a trial's first 64 looks are audited and then
	 * every 1024th: audited every time, the default (debugoptimized) build spent 42% of a
	 * 256-CPU mcs trial's instructions and 92% of its L1 misses here.
	 */
	if (s->looks++ >= 64 && s->looks % 1024)
		return;
	for (uint32_t w = 0; w < words; w++)
		for (uint64_t b = s->dev_parked[w]; b; b &= b - 1) {
			const struct sim_cpu *x = &s->cpus[w * 64 + (uint32_t)__builtin_ctzll(b)];
			assert(!watch_changed(x) && !x->agent_waiter);
		}
#endif
}

/* After a switch, on every one: the look only when the progress may have moved. */
static inline void device_wakeups(struct sim *s, uint64_t now)
{
	if (__builtin_expect(s->agent_moved, 0))
		device_look(s, now);
}

/* ---- memory = arm: loads satisfied early ------------------------------------------------- */

/*
 * A load may be satisfied early, as an Arm core may perform it ahead of the accesses before
 * it: it returns the value its word held at a time drawn uniformly from [lo, now], where lo
 * is the latest of now - store_delay_ns, the CPU's access LD_WINDOW back (its out-of-order
 * window), its last delay or stall, the last pass of its last spin-wait, its last acquire (an
 * acquire load, rmw or fence, or a readl() of a device register: nothing after it is
 * performed before it) and the time as of which the CPU last saw the word (coherence: it
 * never goes back). An acquire (or seq_cst) load is satisfied early too, but not before the
 * CPU's last release store or rmw (stlr then ldar stay in order: Arm is RCsc), and what
 * follows it is then performed no earlier than it. Address dependencies are not honoured:
 * C11's relaxed order (lab.h's) does not promise them, as the kernel's READ_ONCE() does. An
 * rmw reads the word as it is now. The device's stores are reported after the fact
 * (sim_agent_stored): no load of what one changed goes back before it.
 */
static inline size_t hist_hash(const struct sim *s, uintptr_t word)
{
	return (size_t)(((uint64_t)(word >> 3) * 0x9e3779b97f4a7c15ull) >> 32) & s->hist_mask;
}

int sim_hist_alloc(struct sim *s, uint32_t bits)
{
	struct sim_hist *old = s->hist;
	size_t old_cap = old ? s->hist_mask + 1 : 0;
	struct sim_hist *v = calloc((size_t)1 << bits, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->hist = v;
	s->hist_mask = ((size_t)1 << bits) - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].word)
			continue;
		size_t j = hist_hash(s, old[i].word);
		while (v[j].word)
			j = (j + 1) & s->hist_mask;
		v[j] = old[i];
	}
	free(old);
	return 0;
}

/* word's history; NULL when it has none and !make. */
static struct sim_hist *hist_of(struct sim *s, uintptr_t word, bool make)
{
	for (;;) {
		size_t i = hist_hash(s, word);
		for (;;) {
			struct sim_hist *h = &s->hist[i];
			if (h->word == word)
				return h;
			if (!h->word)
				break;
			i = (i + 1) & s->hist_mask;
		}
		if (!make)
			return NULL;
		if ((s->hist_n + 1) * 2 <= s->hist_mask + 1) {
			struct sim_hist *h = &s->hist[i];
			h->word = word;
			s->hist_n++;
			return h;
		}
		unsigned int bits = (unsigned int)__builtin_ctzll((uint64_t)s->hist_mask + 1);
		if (sim_hist_alloc(s, bits + 1)) {
			s->oom = true; /* as line_of: fail the trial rather than guess */
			abort();
		}
	}
}

static inline uintptr_t word_of(const void *p)
{
	return (uintptr_t)p & ~(uintptr_t)7;
}

/* [p, p + size) is about to change at time at: remember what its word held until then. */
static void hist_note(struct sim *s, const void *p, uint64_t at)
{
	struct sim_hist *h = hist_of(s, word_of(p), true);
	uint64_t old = *(volatile const uint64_t *)word_of(p);
	uint32_t newest = (h->head + h->n + HIST_PER_WORD - 1) % HIST_PER_WORD;

	if (h->n && h->e[newest].at > at)
		at = h->e[newest].at; /* changes stay in time order */
	if (h->n == HIST_PER_WORD) {
		h->lost_at = h->e[h->head].at;
		h->head = (h->head + 1) % HIST_PER_WORD;
		h->n--;
	}
	uint32_t i = (h->head + h->n) % HIST_PER_WORD;
	h->e[i].at = at;
	h->e[i].old = old;
	h->n++;
}

/*
 * [p, p + len) has changed at time at, its old value unrecorded (a device store, reported
 * after the fact): no load of it is satisfied before at.
 */
static void hist_forget(struct sim *s, const void *p, size_t len, uint64_t at)
{
	for (uintptr_t w = word_of(p); w < (uintptr_t)p + len; w += 8) {
		struct sim_hist *h = hist_of(s, w, true);
		h->n = 0;
		h->head = 0;
		if (at > h->lost_at)
			h->lost_at = at;
	}
}

static inline uint64_t ld_next_rng(struct sim_cpu *me)
{
	uint64_t z = (me->ld_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * me has seen word as of at: none of its later loads of it is satisfied earlier. The table is
 * kept least recently used first out, so what it remembers follows from the CPU's accesses
 * alone, never from where the host put the words (a seed replays exactly).
 */
static void coh_note(struct sim_cpu *me, uintptr_t word, uint64_t at)
{
	uint32_t k, victim = 0;

	for (k = 0; k < COH_SLOTS; k++) {
		if (me->coh[k].word == word) {
			if (at > me->coh[k].at)
				me->coh[k].at = at;
			me->coh[k].used = ++me->coh_tick;
			return;
		}
		if (me->coh[k].used < me->coh[victim].used)
			victim = k;
	}
	/* Until now coh_lost bounded it: it still does. */
	uint64_t floor = me->coh_lost;
	if (me->coh[victim].word && me->coh[victim].at > me->coh_lost)
		me->coh_lost = me->coh[victim].at;
	me->coh[victim].word = word;
	me->coh[victim].at = at > floor ? at : floor;
	me->coh[victim].used = ++me->coh_tick;
}

static inline uint64_t coh_floor(const struct sim_cpu *me, uintptr_t word)
{
	for (uint32_t k = 0; k < COH_SLOTS; k++)
		if (me->coh[k].word == word)
			return me->coh[k].at;
	return me->coh_lost;
}

static inline bool orders_acquire(int o)
{
	return o == __ATOMIC_ACQUIRE || o == __ATOMIC_ACQ_REL || o == __ATOMIC_SEQ_CST ||
	       o == __ATOMIC_CONSUME;
}

/*
 * me loads [p, p + size) at me->clock, order o, its value there now being v: the value it
 * returns (an earlier one when it is satisfied early).
 */
static uint64_t early_load(struct sim *s, struct sim_cpu *me, const void *p, uint32_t size, int o,
			   uint64_t v)
{
	uintptr_t word = word_of(p);
	uint64_t now = me->clock, lo, at;
	const struct sim_hist *h;
	bool acquire = orders_acquire(o);

	lo = now > s->sb_delay_ps ? now - s->sb_delay_ps : 0;
	if (me->ld_floor > lo)
		lo = me->ld_floor;
	if (me->win[me->win_n % LD_WINDOW] > lo)
		lo = me->win[me->win_n % LD_WINDOW];
	win_note(me, now);
	if (acquire && me->rel_floor > lo)
		lo = me->rel_floor;
	at = coh_floor(me, word);
	if (at > lo)
		lo = at;
	if (lo >= now) {
		coh_note(me, word, now);
		if (acquire)
			me->ld_floor = now;
		return v;
	}
	at = lo + ld_next_rng(me) % (now - lo + 1);
	h = hist_of(s, word, false);
	if (h && at < h->lost_at) /* its value before then is not known */
		at = h->lost_at < now ? h->lost_at : now;
	coh_note(me, word, at);
	if (acquire)
		me->ld_floor = at;
	if (!h || !h->n || h->e[(h->head + h->n - 1) % HIST_PER_WORD].at <= at)
		return v; /* unchanged since then: now's value is its value then */
	uint64_t w = *(volatile const uint64_t *)word;
	for (uint32_t k = h->n; k--;) {
		uint32_t i = (h->head + k) % HIST_PER_WORD;
		if (h->e[i].at <= at)
			break;
		w = h->e[i].old;
	}
	unsigned int shift = (unsigned int)((uintptr_t)p - word) * 8;
	uint64_t old = size == 8 ? w : (uint32_t)(w >> shift);
	if (old != v)
		me->stale_read = true;
	return old;
}

/* ---- memory = arm: store buffers ----------------------------------------------------------- */

static void wake_line(struct sim *s, struct sim_line *l, uint64_t now);

static inline uint64_t sb_due(const struct sim *s)
{
	return s->sb_n ? s->sb[0].at : NEVER;
}

/* Stores before a release (store, rmw or fence) are seen before it: dmb ish / stlr. */
static inline bool orders_release(int o)
{
	return o == __ATOMIC_RELEASE || o == __ATOMIC_ACQ_REL || o == __ATOMIC_SEQ_CST;
}

static inline bool sb_before(const struct sim_sb_entry *a, const struct sim_sb_entry *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

/* Re-sort after entries moved earlier (few entries, nearly sorted: insertion sort). */
static void sb_sort(struct sim *s)
{
	for (uint32_t i = 1; i < s->sb_n; i++) {
		struct sim_sb_entry e = s->sb[i];
		uint32_t j = i;
		while (j && sb_before(&e, &s->sb[j - 1])) {
			s->sb[j] = s->sb[j - 1];
			j--;
		}
		s->sb[j] = e;
	}
}

static inline bool sb_overlaps(const struct sim_sb_entry *e, const void *p, uint32_t size)
{
	uintptr_t a = (uintptr_t)e->p, b = (uintptr_t)p;
	return a < b + size && b < a + e->size;
}

/*
 * me's entries (all, or those overlapping [p, p + size) when p is set; exact matches too
 * unless partial_only) become visible no later than now: a release drains the buffer, an
 * access to a buffered location waits for it (coherence). The scheduler applies them before
 * anything later happens.
 */
static void sb_retime(struct sim *s, struct sim_cpu *me, const void *p, uint32_t size,
		      bool partial_only)
{
	bool moved = false;

	for (uint32_t i = 0; i < s->sb_n; i++) {
		struct sim_sb_entry *e = &s->sb[i];
		if (e->cpu != me->id || e->at <= me->clock)
			continue;
		if (p &&
		    (!sb_overlaps(e, p, size) || (partial_only && e->p == p && e->size == size)))
			continue;
		e->at = me->clock;
		moved = true;
	}
	if (!moved)
		return;
	sb_sort(s);
	if (me->clock < s->horizon)
		s->horizon = me->clock;
}

static inline uint64_t sb_next_rng(struct sim_cpu *me)
{
	uint64_t z = (me->sb_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The agent acts at time at (ps): the clock reads its time, and CPUs it woke are looked at. */
static inline void agent_enter(struct sim *s, uint64_t at)
{
	s->in_agent = true;
	s->agent_now = at;
}

static void agent_leave(struct sim *s, uint64_t at)
{
	s->in_agent = false;
	s->agent_stale = true;
	s->agent_moved = true;
	device_wakeups(s, at);
}

/*
 * The earliest buffered store takes effect: memory changes, its line's sleepers wake (no
 * earlier than now: a drain by the running CPU wakes them at its own time).
 */
static void sb_apply_head(struct sim *s, uint64_t now)
{
	struct sim_sb_entry e = s->sb[0];
	struct sim_line *l;

	memmove(s->sb, s->sb + 1, (size_t)(--s->sb_n) * sizeof(*s->sb));
	s->cpus[e.cpu].sb_own--;
	if (e.apply) { /* a posted register write reaches the agent */
		uint64_t at = now > e.at ? now : e.at;
		agent_enter(s, at);
		e.apply(e.p, e.v, at / PS_PER_NS);
		agent_leave(s, at);
		return;
	}
	if (s->hist) {
		hist_note(s, e.p, now > e.at ? now : e.at);
		/* From now on its CPU no longer forwards it: no load of it goes back before it. */
		coh_note(&s->cpus[e.cpu], word_of(e.p), now > e.at ? now : e.at);
	}
	if (e.size == 4)
		*(volatile uint32_t *)e.p = (uint32_t)e.v;
	else
		*(volatile uint64_t *)e.p = e.v;
	if (s->shadow)
		sim_shadow_seen(sim_shadow_entry(s, e.p, e.size), &s->cpus[e.cpu], e.p, e.size,
				NULL, ACC_STORE);
	l = line_of(s, e.p);
	now = now > e.at ? now : e.at;
	if (l->n_watchers)
		wake_watchers(s, l, now);
	if (l->waiters)
		wake_line(s, l, now);
}

/* me is the earliest event: every buffered store due by its clock takes effect now, in order. */
static void sb_apply_due(struct sim *s, struct sim_cpu *me)
{
	while (s->sb_n && s->sb[0].at <= me->clock)
		sb_apply_head(s, me->clock);
}

/*
 * A completed relaxed store enters me's store buffer, visible to the others from `at` on (a
 * posted register write: size 0, its effect apply).
 */
static void sb_push(struct sim *s, struct sim_cpu *me, void *p, uint32_t size, uint64_t v,
		    void (*apply)(void *arg, uint64_t v, uint64_t now_ns))
{
	uint64_t at = me->clock + sb_next_rng(me) % (s->sb_delay_ps + 1);
	uint32_t i;

	if (me->sb_own >= SB_PER_CPU) {
		/*
		 * Full: it drains before taking more. me is the earliest event (its store has
		 * just completed), so everything due by its clock takes effect now, in order.
		 */
		sb_retime(s, me, NULL, 0, false);
		sb_apply_due(s, me);
	}
	/* One location's stores become visible in program order (coherence). */
	for (i = 0; i < s->sb_n; i++)
		if (s->sb[i].cpu == me->id && s->sb[i].p == p && s->sb[i].at > at)
			at = s->sb[i].at;
	struct sim_sb_entry e = { at, ++s->sb_seq, p, v, me->id, size, apply };
	for (i = s->sb_n; i && sb_before(&e, &s->sb[i - 1]); i--)
		s->sb[i] = s->sb[i - 1];
	s->sb[i] = e;
	s->sb_n++;
	me->sb_own++;
	if (at < s->horizon)
		s->horizon = at;
}

/* me's own newest buffered store to exactly [p, p + size): what its load returns. */
static bool sb_forward(const struct sim *s, const struct sim_cpu *me, const void *p, uint32_t size,
		       uint64_t *v)
{
	for (uint32_t i = s->sb_n; i--;) {
		const struct sim_sb_entry *e = &s->sb[i];
		if (e->cpu == me->id && e->p == p && e->size == size) {
			*v = e->v;
			return true;
		}
	}
	return false;
}

static void run_agent(struct sim *s, uint64_t due)
{
	agent_enter(s, due);
	s->agent->advance(s->agent->arg);
	agent_leave(s, due);
}

/*
 * The agent's next due time. Read through its (indirect) next_due only when it may have
 * changed: after the agent acted, or after host code ran on a virtual CPU (the device's
 * registers are host code, and every one reads the clock, which marks the value stale).
 */
static inline uint64_t agent_due(struct sim *s)
{
	if (s->agent_stale) {
		s->agent_stale = false;
		s->agent_due = s->agent ? due_to_ps(s->agent->next_due(s->agent->arg)) : NEVER;
	}
	return s->agent_due;
}

static inline void update_horizon(struct sim *s)
{
	uint64_t h = s->rq_n ? key_clock(rq_top(s)) : NEVER;
	uint64_t due = agent_due(s);

	if (sb_due(s) < due)
		due = sb_due(s);

	s->horizon = s->hung || s->failed ? 0 : due < h ? due : h;
}

/*
 * me (running, or parked/done when !me_runnable) gives way to whatever comes first: the
 * device when it is due no later than every CPU, else the earliest CPU. Returns when me is
 * the earliest again (never, when me is parked for good or done).
 */
void sim_schedule(struct sim *s, struct sim_cpu *me, bool me_runnable)
{
	/*
	 * The common case first: another CPU is earlier than me, before the device and with no
	 * store buffer in play. The loop below takes the same turn (its first pass finds
	 * nothing else to do), after more tests.
	 */
	if (me_runnable && s->rq_n && !s->sb_n && !s->hung && !s->failed) {
		uint64_t top = rq_top(s), due = agent_due(s);
		if (top < key_of(me->clock, me->id) && (due == NEVER || due > key_clock(top))) {
			uint32_t next = sim_key_id(rq_replace_top(s, me->clock, me->id));
			me->state = CPU_RUNNABLE;
			switch_to(s, me, &s->cpus[next]);
			device_wakeups(s, me->clock);
			update_horizon(s);
			return;
		}
	}
	for (;;) {
		uint64_t due = agent_due(s);
		uint64_t first = me_runnable ? me->clock : NEVER;
		if (s->rq_n && key_clock(rq_top(s)) < first)
			first = key_clock(rq_top(s));
		if (__builtin_expect(s->sb_n, 0) && s->sb[0].at <= first && s->sb[0].at <= due &&
		    !s->hung && !s->failed) {
			sb_apply_head(s, 0);
			continue;
		}
		if (due != NEVER && due <= first) {
			run_agent(s, due);
			continue;
		}
		if (s->hung || s->failed) {
			to_main(s, me);
			continue; /* never resumed */
		}
		if (me_runnable && rq_top(s) > key_of(me->clock, me->id)) {
			update_horizon(s);
			return;
		}
		if (!s->rq_n) {
			if (s->n_live)
				hang(s, "every CPU left (%u) waits on a line nobody will write",
				     s->n_live);
			to_main(s, me);
			continue;
		}
		uint32_t next;
		if (me_runnable) {
			next = sim_key_id(rq_replace_top(s, me->clock, me->id));
			me->state = CPU_RUNNABLE;
			switch_to(s, me, &s->cpus[next]);
			device_wakeups(s, me->clock);
			update_horizon(s);
			return;
		}
		next = sim_key_id(sim_rq_pop(s));
		if (next == me->id) { /* woken by the device while parking */
			me->state = CPU_RUNNING;
			update_horizon(s);
			return;
		}
		switch_to(s, me, &s->cpus[next]);
		device_wakeups(s, me->clock);
		update_horizon(s);
		return;
	}
}

/* The common fast path: still the earliest and the device not due? Carry on. */
static inline void maybe_yield(struct sim *s, struct sim_cpu *me)
{
	me->owes_turn = false; /* it holds the turn when this returns */
	if (__builtin_expect(me->clock > me->deadline, 0))
		hang(s, "cpu%u made no progress", me->id);
	if (__builtin_expect(s->agent_stale, 0))
		update_horizon(s);
	if (__builtin_expect(me->clock < s->horizon, 1))
		return;
	if (rq_top(s) > key_of(me->clock, me->id) && agent_due(s) > me->clock &&
	    sb_due(s) > me->clock && !s->hung)
		return;
	sim_schedule(s, me, true);
}

static void park(struct sim *s, struct sim_cpu *me, const void *p, uint32_t size, uint64_t seen)
{
	struct sim_line *l;

	if (__builtin_expect(me->owes_turn, 0))
		maybe_yield(s, me);

	/*
	 * What its condition saw is already stale: the device has written the watched word, or
	 * moved past the register the condition read, since (while this CPU stood still: a
	 * miss, a stall), so the progress that would wake it is gone. A spinning CPU would look
	 * again, so it does, one poll later. Sleeping instead loses the wake-up: when the
	 * device has gone idle in that gap nothing ever wakes it, a false deadlock (spinlock's
	 * CONS-polled drain at 64 CPUs reported "every CPU left (64) waits on a line nobody
	 * will write"; perturb_ns's stalls made it common).
	 */
	/*
	 * memory = arm: a load of its condition returned a value already gone (satisfied
	 * early), so the write that would wake it may have happened: it looks again.
	 */
	bool stale = me->stale_read;

	me->stale_read = false;
	if ((stale || (size == 4 && *(volatile const uint32_t *)p != (uint32_t)seen) ||
	     (size == 8 && *(volatile const uint64_t *)p != seen) ||
	     (me->read_agent && s->agent && s->agent->progress &&
	      s->agent->progress(s->agent->arg) != me->agent_seen))) {
		me->read_agent = false;
		me->clock += s->poll_ps;
		loads_after(s, me, s->poll_ps); /* the spin's next pass */
		count_op(s);
		maybe_yield(s, me);
		return;
	}
	l = line_of(s, p);

	me->watch = p;
	me->watch_size = size;
	me->watch_val = seen;
	/*
	 * A wait whose condition reads a device register (CONS) watches the device as well as
	 * the line: spinning natively, it would see the register move without any write to the
	 * line. So the device's progress wakes it too.
	 */
	me->agent_waiter = me->read_agent;
	me->read_agent = false;
	/* The lines its condition loaded after the watched word wake it too. */
	uintptr_t tag = (uintptr_t)p >> 6;
	me->n_extra = 0;
	for (uint32_t k = 1; k <= RECENT && k <= me->n_recent; k++) {
		uintptr_t t = me->recent[(me->n_recent - k) % RECENT];
		if (t == tag)
			break;
		bool dup = false;
		for (uint32_t e = 0; e < me->n_extra; e++)
			dup |= me->extra[e] == t;
		if (dup)
			continue;
		struct sim_line *x = line_of(s, (const void *)(t << 6));
		l = line_of(s, p); /* line_of may have moved the table */
		x->watchers[me->id / 64] |= 1ull << (me->id % 64);
		x->n_watchers++;
		me->extra[me->n_extra++] = t;
	}
	me->next_waiter = l->waiters;
	l->waiters = me->id + 1;
	me->state = CPU_PARKED;
	if (me->watch_size || me->agent_waiter)
		s->dev_parked[me->id / 64] |= 1ull << (me->id % 64);
	if (me->agent_waiter)
		s->agent_parked[me->id / 64] |= 1ull << (me->id % 64);
	/* Its condition loaded other lines after the word: the word may have moved since. */
	if (watch_changed(me))
		s->stale_parked[me->id / 64] |= 1ull << (me->id % 64);
	s->st.parks++;
	count_op(s);
	sim_schedule(s, me, false);
	me->watch = NULL;
	loads_after(s, me, s->poll_ps); /* woken: the spin's last pass */
}

/* A write to p's line took effect at now: every CPU sleeping on the line wakes to reload. */
static void wake_line(struct sim *s, struct sim_line *l, uint64_t now)
{
	uint32_t w = l->waiters;

	l->waiters = 0;
	while (w) {
		struct sim_cpu *x = &s->cpus[w - 1];
		w = x->next_waiter;
		x->next_waiter = 0;
		if (x->n_extra)
			clear_extras(s, x);
		make_runnable(s, x, now);
	}
}

/* ---- what sim-built plugins call (lab_sim.h, through lab.h under LAB_ENGINE_SIM) ----------- */

static inline struct sim_cpu *running(struct sim *s)
{
	return s->cur;
}

/*
 * Outside a simulation -- a trial's setup and teardown (init, draining the caches, fini) run
 * on the host thread, not on a virtual CPU -- the sim binding does the plain operation,
 * unpriced, as the native binding would: nothing else runs then.
 */
static inline bool unsimulated(void)
{
	return __builtin_expect(!cur_sim || !cur_sim->cur, 0);
}

uint64_t lab_sim_now(const struct lab_cpu *c)
{
	(void)c;
	if (unsimulated())
		return 0;
	return running(cur_sim)->clock / PS_PER_NS;
}

/*
 * ns of local work on me: the instructions take longer beside a busy SMT sibling, which
 * shares the core's issue slots ([machine] smt_ns, smt_share).
 */
static inline uint64_t local_ps(const struct sim *s, const struct sim_cpu *me, uint64_t ns)
{
	uint64_t ps = ns * PS_PER_NS;

	return __builtin_expect(me->smt_shared, 0) ? (uint64_t)((double)ps * s->smt_slow) : ps;
}

/* ns of local work by the running CPU, priced; NULL outside a simulation. */
static struct sim_cpu *local_work(struct sim *s, uint64_t ns)
{
	struct sim_cpu *me;

	if (unsimulated())
		return NULL;
	me = running(s);
	me->clock += local_ps(s, me, ns);
	loads_after(s, me, 0); /* local work fills the out-of-order window */
	count_op(s);
	return me;
}

void lab_sim_delay(struct lab_cpu *c, uint64_t ns)
{
	struct sim_cpu *me = local_work(cur_sim, ns);

	(void)c;
	if (me)
		maybe_yield(cur_sim, me);
}

void sim_local_work(struct lab_cpu *c, uint64_t ns)
{
	struct sim_cpu *me = local_work(cur_sim, ns);

	(void)c;
	if (!me)
		return;
	/* Host code ran, as after any host-side delay (sim_run.c's sim_clock_delay). */
	cur_sim->agent_stale = true;
	cur_sim->agent_moved = true;
	me->owes_turn = true;
}

void sim_take_turn(void)
{
	struct sim *s = cur_sim;

	if (!unsimulated() && running(s)->owes_turn)
		maybe_yield(s, running(s));
}

void lab_sim_fence(int o)
{
	struct sim *s = cur_sim;

	if (unsimulated()) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return;
	}
	if (__builtin_expect(running(s)->owes_turn, 0)) /* a release reorders the store buffer */
		maybe_yield(s, running(s));
	/* Local: priced now, ordered by the next shared access's own turn. */
	running(s)->clock += s->op_ps;
	if (s->weak && running(s)->sb_own && orders_release(o))
		sb_retime(s, running(s), NULL, 0, false);
	if (orders_acquire(o))
		loads_after(s, running(s), 0);
	count_op(s);
}

void lab_sim_spin_wait(struct lab_cpu *c, const void *watched)
{
	struct sim *s = cur_sim;
	struct sim_cpu *me;

	(void)c;
	if (unsimulated())
		return; /* the caller's loop re-reads: a plain spin */
	me = running(s);
	if (!watched) {
		me->clock += s->poll_ps;
		loads_after(s, me, s->poll_ps); /* the spin's next pass */
		count_op(s);
		maybe_yield(s, me);
		return;
	}
	maybe_yield(s, me);
	park(s, me, watched, 0, 0);
}

void lab_sim_park32(struct lab_cpu *c, const uint32_t *p, uint32_t seen)
{
	struct sim *s = cur_sim;

	(void)c;
	if (unsimulated())
		return;
	park(s, running(s), p, 4, seen);
}

void lab_sim_park64(struct lab_cpu *c, const uint64_t *p, uint64_t seen)
{
	struct sim *s = cur_sim;

	(void)c;
	if (unsimulated())
		return;
	park(s, running(s), p, 8, seen);
}

/*
 * [machine] perturb_ns, in the spirit of PCT (Burckhardt et al., "A randomized scheduler with
 * probabilistic guarantees of finding bugs"): the schedule is otherwise a function of the
 * machine's timing alone, so a window that timing always closes is never seen open. Here a
 * CPU stalls before one in SIM_PERTURB_EVERY of its shared accesses, for a delay drawn
 * uniformly from [0, perturb_ps]: while it stands still (a preempted thread, an interrupt, a
 * slow miss) the others run through the window it is in. Each CPU draws from its own seeded
 * sequence, so a seed replays exactly. Out of line: the hot path only tests perturb_ps.
 */
#define SIM_PERTURB_EVERY SCENARIO_SIM_PERTURB_EVERY

static __attribute__((noinline)) void perturb(struct sim *s, struct sim_cpu *me)
{
	uint64_t z = (me->pt_rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	if (z % SIM_PERTURB_EVERY)
		return;
	me->clock += (z >> 8) % (s->perturb_ps + 1);
	loads_after(s, me, 0); /* an interrupt or a preemption drains the window */
}

/*
 * The line of p, through the CPU's last one: a CPU's accesses mostly go to the line it used
 * last (a CAS retry loop, a spin), and a slot stays the line's until the table moves.
 */
static inline struct sim_line *line_of_cpu(struct sim *s, struct sim_cpu *me, const void *p)
{
	uintptr_t tag = (uintptr_t)p >> 6;

	if (me->last_tag == tag && me->last_gen == s->lines_gen)
		return me->last_line;
	me->last_line = line_of(s, p);
	me->last_tag = tag;
	me->last_gen = s->lines_gen;
	return me->last_line;
}

/* Take the turn, price the access, wait for its completion to be the earliest event. */
static inline __attribute__((always_inline)) struct sim_line *
access_begin(struct sim *s, struct sim_cpu *me, const void *p, enum access kind,
	     const struct sim_write *w)
{
	struct sim_line *l;
	uint64_t gen;

	if (__builtin_expect(s->perturb_ps != 0, 0))
		perturb(s, me);
	maybe_yield(s, me);
	l = line_of_cpu(s, me, p);
	if (kind != ACC_STORE)
		me->recent[me->n_recent++ % RECENT] = (uintptr_t)p >> 6;
	me->clock = mem_access(s, me, l, kind, w);
	count_op(s);
	gen = s->lines_gen;
	maybe_yield(s, me);
	return gen == s->lines_gen ? l : line_of(s, p);
}

static inline void access_wrote(struct sim *s, struct sim_cpu *me, struct sim_line *l)
{
	me->deadline = me->clock + s->watchdog;
	if (l->n_watchers)
		wake_watchers(s, l, me->clock);
	if (l->waiters)
		wake_line(s, l, me->clock);
}

/* Host code on the running CPU is about to write [p, p + len) plainly (sim.h). */
void sim_note_host_write(const void *p, size_t len)
{
	struct sim *s = cur_sim;

	if (unsimulated() || !len)
		return;
	if (s->shadow)
		sim_shadow_forget(s, p, len);
	if (!s->hist)
		return;
	struct sim_cpu *me = running(s);
	for (uintptr_t w = word_of(p); w < (uintptr_t)p + len; w += 8) {
		hist_note(s, (const void *)w, me->clock);
		coh_note(me, w, me->clock);
	}
}

/* engine_job.watch_lab_h: a lab.h load at p from pc sees memory as lab.h last left it? */
static inline void watch_load(struct sim *s, const struct sim_cpu *me, const void *p, uint32_t size,
			      const void *pc)
{
	sim_shadow_seen(sim_shadow_check(s, me, p, size, pc), me, p, size, pc, ACC_LOAD);
}

/*
 * memory = arm, a load: a partly overlapping buffered store of its CPU must be visible first
 * (coherence); an exact one is forwarded (its own CPU sees it at once); otherwise the load
 * may be satisfied early (early_load).
 */
static uint64_t weak_load(struct sim *s, struct sim_cpu *me, const void *p, uint32_t size, int o,
			  const void *pc)
{
	uint64_t v;

	if (me->sb_own)
		sb_retime(s, me, p, size, true);
	access_begin(s, me, p, ACC_LOAD, NULL);
	if (me->sb_own && sb_forward(s, me, p, size, &v)) {
		win_note(me, me->clock);
		if (orders_acquire(o))
			me->ld_floor = me->clock;
		return v;
	}
	if (__builtin_expect(s->shadow != NULL, 0))
		watch_load(s, me, p, size, pc);
	v = size == 4 ? *(volatile const uint32_t *)p : *(volatile const uint64_t *)p;
	return early_load(s, me, p, size, o, v);
}

/*
 * memory = arm: a store or rmw by me at p completes now (me->clock), order o; wrote: it is
 * about to change memory (not a CAS that failed), so its word's old value is remembered and
 * a release is one (a failed CAS stores nothing to order).
 */
static void weak_access(struct sim *s, struct sim_cpu *me, const void *p, int o, bool wrote)
{
	if (wrote)
		hist_note(s, p, me->clock);
	coh_note(me, word_of(p), me->clock);
	win_note(me, me->clock);
	if (orders_acquire(o))
		me->ld_floor = me->clock;
	if (wrote && orders_release(o))
		me->rel_floor = me->clock;
}

/* memory = arm: a relaxed store completes into the store buffer, not into memory. */
static void weak_store(struct sim *s, struct sim_cpu *me, void *p, uint32_t size, uint64_t v)
{
	access_begin(s, me, p, ACC_STORE, NULL);
	me->deadline = me->clock + s->watchdog;
	win_note(me, me->clock);
	sb_push(s, me, p, size, v, NULL);
}

void sim_post_agent_write(void (*apply)(void *arg, uint64_t v, uint64_t now_ns), void *arg,
			  uint64_t v)
{
	struct sim *s = cur_sim;

	if (unsimulated() || !s->weak) {
		apply(arg, v, s && s->cur ? s->cur->clock / PS_PER_NS : 0);
		return;
	}
	sb_push(s, running(s), arg, 0, v, apply);
}

void sim_drain_agent_writes(void)
{
	struct sim *s = cur_sim;
	struct sim_cpu *me;
	bool moved = false;

	if (unsimulated() || !s->weak || !(me = running(s))->sb_own)
		return;
	for (uint32_t i = 0; i < s->sb_n; i++) {
		struct sim_sb_entry *e = &s->sb[i];
		if (e->cpu == me->id && e->apply && e->at > me->clock) {
			e->at = me->clock;
			moved = true;
		}
	}
	if (moved)
		sb_sort(s);
	sb_apply_due(s, me);
}

#define SIM_DEFINE_ACCESS(bits)                                                                    \
	uint##bits##_t lab_sim_load##bits(const uint##bits##_t *p, int o)                          \
	{                                                                                          \
		struct sim *s = cur_sim;                                                           \
		if (unsimulated())                                                                 \
			return __atomic_load_n(p, __ATOMIC_SEQ_CST);                               \
		if (__builtin_expect(s->weak, 0))                                                  \
			return (uint##bits##_t)weak_load(s, running(s), p, bits / 8, o,            \
							 __builtin_return_address(0));             \
		access_begin(s, running(s), p, ACC_LOAD, NULL);                                    \
		if (__builtin_expect(s->shadow != NULL, 0))                                        \
			watch_load(s, running(s), p, bits / 8, __builtin_return_address(0));       \
		return *(volatile const uint##bits##_t *)p;                                        \
	}                                                                                          \
	void lab_sim_store##bits(uint##bits##_t *p, uint##bits##_t v, int o)                       \
	{                                                                                          \
		struct sim *s = cur_sim;                                                           \
		if (unsimulated()) {                                                               \
			__atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                  \
			return;                                                                    \
		}                                                                                  \
		struct sim_cpu *me = running(s);                                                   \
		if (__builtin_expect(s->weak, 0)) {                                                \
			if (!orders_release(o)) {                                                  \
				weak_store(s, me, p, bits / 8, v);                                 \
				return;                                                            \
			}                                                                          \
			if (me->sb_own)                                                            \
				sb_retime(s, me, NULL, 0, false);                                  \
		}                                                                                  \
		struct sim_write w = { p, bits / 8, SIM_STORE, v, 0 };                             \
		struct sim_line *l = access_begin(s, me, p, ACC_STORE, &w);                        \
		if (__builtin_expect(s->weak, 0))                                                  \
			weak_access(s, me, p, o, true);                                            \
		*(volatile uint##bits##_t *)p = v;                                                 \
		if (__builtin_expect(s->shadow != NULL, 0))                                        \
			sim_shadow_seen(sim_shadow_entry(s, p, bits / 8), me, p, bits / 8,         \
					__builtin_return_address(0), ACC_STORE);                   \
		access_wrote(s, me, l);                                                            \
	}                                                                                          \
	uint##bits##_t lab_sim_rmw##bits(uint##bits##_t *p, int op, uint##bits##_t a,              \
					 uint##bits##_t b, int o)                                  \
	{                                                                                          \
		struct sim *s = cur_sim;                                                           \
		uint##bits##_t old, v;                                                             \
		if (unsimulated()) {                                                               \
			old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                \
			do                                                                         \
				v = (uint##bits##_t)direct_rmw(old, op, a, b);                     \
			while (!__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,   \
							    __ATOMIC_SEQ_CST));                    \
			return old;                                                                \
		}                                                                                  \
		struct sim_cpu *me = running(s);                                                   \
		if (__builtin_expect(me->sb_own, 0))                                               \
			sb_retime(s, me, orders_release(o) ? NULL : p, bits / 8, false);           \
		struct sim_write w = { p, bits / 8, op, a, b };                                    \
		struct sim_line *l = access_begin(s, me, p, ACC_RMW, &w);                          \
		if (me->far_seen) { /* failed at the home: the value it answered with */           \
			if (__builtin_expect(s->weak, 0))                                          \
				weak_access(s, me, p, o, false);                                   \
			return (uint##bits##_t)me->far_val;                                        \
		}                                                                                  \
		struct sim_shadow *sh = NULL; /* engine_job.watch_lab_h: p's entry */              \
		if (__builtin_expect(s->shadow != NULL, 0))                                        \
			sh = sim_shadow_check(s, me, p, bits / 8, __builtin_return_address(0));    \
		old = *p;                                                                          \
		v = (uint##bits##_t)direct_rmw(old, op, a, b);                                     \
		if (__builtin_expect(s->weak, 0))                                                  \
			weak_access(s, me, p, o, op != LAB_SIM_CAS || old == a);                   \
		*p = v;                                                                            \
		if (__builtin_expect(sh != NULL, 0))                                               \
			sim_shadow_seen(sh, me, p, bits / 8, __builtin_return_address(0),          \
					ACC_RMW);                                                  \
		if (op != LAB_SIM_CAS || old == a)                                                 \
			access_wrote(s, me, l);                                                    \
		return old;                                                                        \
	}

/* The widths lab.h's atomics table is made for: one load, store and rmw entry each. */
LAB_ATOMIC_WIDTHS(SIM_DEFINE_ACCESS)
