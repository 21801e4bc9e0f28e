/* SPDX-License-Identifier: MIT */
/*
 * lab.h's locks natively, on two real threads (the sim's side is tests/unit/test_sim.c): the
 * queued spinlock excludes, through its pending and queued paths, and gives its nodes back.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include <iommulab/lab.h>

#include "engine/host.h"

#define ROUNDS 200000

static struct {
	struct lab_qspinlock lock LAB_CACHE_ALIGNED;
	uint64_t plain LAB_CACHE_ALIGNED; /* written only under the lock */
	uint32_t nodes_left;		  /* under the lock: acquisitions with a node in use */
} shared;

static void *worker(void *arg)
{
	struct lab_cpu *c = arg;
	const struct lab_qnode *mine = &c->host->qnodes[c->id * LAB_QNODES];

	for (uint32_t i = 0; i < ROUNDS; i++) {
		lab_qspin_lock(c, &shared.lock);
		/* A plain read-modify-write: two holders at once would lose updates. */
		uint64_t v = shared.plain;
		__asm__ __volatile__("" ::: "memory");
		shared.plain = v + 1;
		shared.nodes_left += mine->count != 0;
		lab_qspin_unlock(&shared.lock);
	}
	return NULL;
}

Test(lab, queued_spinlock_excludes_on_two_threads, .timeout = 60)
{
	struct host_env *env = host_env_new(2, 0, false, false);
	pthread_t t[2];

	cr_assert_not_null(env);
	cr_assert_not_null(host_env_host(env)->qnodes, "the host gives every CPU queue nodes");
	/*
	 * Two threads (no more than this machine's cores: a queued waiter preempted would stall
	 * every hand-over behind it): a CPU that comes back while the other is pending queues, so
	 * both the pending and the queued path run.
	 */
	for (uint32_t i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, worker, host_env_cpu(env, i)), 0);
	for (uint32_t i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(shared.plain, 2ull * ROUNDS, "lost updates: %llu of %u",
		     (unsigned long long)shared.plain, 2 * ROUNDS);
	cr_assert_eq(shared.nodes_left, 0);
	cr_assert(!shared.lock.lp && !shared.lock.tail, "the lock ends 0x%x, tail 0x%x",
		  shared.lock.lp, shared.lock.tail);
	host_env_free(env);
}

Test(lab, queued_spinlock_trylock_takes_only_a_free_lock)
{
	struct lab_qspinlock l = { 0 };

	cr_assert(lab_qspin_trylock(&l));
	cr_assert_not(lab_qspin_trylock(&l));
	lab_qspin_unlock(&l);
	cr_assert_eq(l.lp, 0);
	cr_assert(lab_qspin_trylock(&l));
	/* A queue there: a newcomer does not take the lock ahead of it. */
	lab_qspin_unlock(&l);
	l.tail = 1 << 2;
	cr_assert_not(lab_qspin_trylock(&l));
}
