/* SPDX-License-Identifier: MIT */
/*
 * iova_check -- the conformance checks of an iova plugin, run in front of the real slow path
 * on a host_env of 1 or 2 CPUs. One implementation for both callers: `iommulab verify` prints
 * the verdicts, tests/conformance/test_iova_conformance.c asserts them.
 *
 * Properties: no range handed out twice or overlapping a live one (a shadow bitmap of the
 * live pfns), every range inside its limit (also limits that are not 2^k - 1: one below the end
 * of a range just freed) and size-aligned, 2 CPUs in a 300-page domain flushing and retrying
 * at once (small_domain_2cpu), 2 CPUs filling and draining one depot bin at once with the tick
 * and flush_all racing them (depot_2cpu: a ThreadSanitizer build sees a missing lock there),
 * everything returned exactly once
 * by fini (tree back to the anchor, no lab_alloc leak), flushes return everything cached,
 * allocation failure flushes and retries once and then fails cleanly, magazine allocation
 * failure loses nothing, a ticking depot is trimmed to ncpus, a bounded depot stays within
 * (2 x CPUs + depot) x bins x magazine bytes (its size from the depot_max or depot_min
 * parameter; a policy that pushes to a depot of no stated size is not judged there).
 */
#ifndef IOMMULAB_VERIFY_IOVA_CHECK_H
#define IOMMULAB_VERIFY_IOVA_CHECK_H

#include <stddef.h>

#include <iommulab/plugin.h>

#define IOVA_CHECK_DETAIL_LEN 512

enum iova_check_verdict {
	IOVA_CHECK_PASS,
	IOVA_CHECK_FAIL,
	IOVA_CHECK_SKIP, /* the property does not apply (e.g. no tick op); detail says why */
};

struct iova_check_result {
	enum iova_check_verdict verdict;
	/* FAIL: the first counterexample (range, CPU, expected, found); SKIP: the reason. */
	char detail[IOVA_CHECK_DETAIL_LEN];
};

struct iova_check {
	const char *name;    /* lower_snake_case, stable: tests and the CLI name checks by it */
	const char *summary; /* one line for the verify listing */
	void (*run)(const struct lab_plugin *p, const void *config, struct iova_check_result *res);
};

/* Every check, in the order verify prints them. */
const struct iova_check *iova_checks(size_t *n);

/* The check called name, or NULL. */
const struct iova_check *iova_check_find(const char *name);

/*
 * Run one check on an iova plugin. config is the plugin's config struct (config_size bytes),
 * or NULL for the defaults of its parameter table. Always fills res; returns 0, or -EINVAL
 * when p is not an iova plugin with every required op (res says so as a FAIL).
 */
int iova_check_run(const struct iova_check *chk, const struct lab_plugin *p, const void *config,
		   struct iova_check_result *res);

/* "pass", "FAIL", "skip". */
const char *iova_check_verdict_name(enum iova_check_verdict v);

#endif /* IOMMULAB_VERIFY_IOVA_CHECK_H */
