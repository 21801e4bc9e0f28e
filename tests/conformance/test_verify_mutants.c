/* SPDX-License-Identifier: MIT */
/*
 * test_verify_mutants -- `iommulab verify` catches each mutant of tests/fixtures/verify_mutants
 * (a shipped plugin with one plausible bug, generated from its source) by the name of the check
 * that must fail, and still prints its whole table when a trial crashes.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "verify/cmdq_check.h"
#include "verify/iova_check.h"

/* ---- verify's mutants: a shipped plugin with one plausible bug, caught by name ------------- */

/*
 * tests/fixtures/verify_mutants: `iommulab verify` on the mutant (and its .sim.so twin) exits 1
 * with check FAIL in its table, and every other line it prints still comes (a crash is that
 * trial's verdict, not verify's end): the table lists every check. every_in, when set, is text
 * that every configuration counterexample must name (the only place the bug can show).
 */
static void verify_fails_where(const char *dir, const char *mutant, const char *check,
			       const char *every_in)
{
	char line[4096], cmd[1024];
	size_t n_names, reported = 0, shown = 0, elsewhere = 0;
	const char *const *names = cmdq_check_names(&n_names);
	bool failed = false, listed = false;

	snprintf(cmd, sizeof(cmd),
		 "'%s/iommulab' verify '%s/tests/fixtures/%s/cmdq-%s.so' 2>/dev/null",
		 TEST_BUILD_ROOT, TEST_BUILD_ROOT, dir, mutant);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f, "cannot run %s", cmd);
	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];
		size_t runs;

		if (strstr(line, "FAILED in ") && !strncmp(line + 2, check, strlen(check)))
			listed = true;
		if (every_in && strstr(line, "counterexample: [")) {
			shown++;
			elsewhere += !strstr(line, every_in);
		}
		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) != 3)
			continue;
		for (size_t i = 0; i < n_names; i++)
			reported += !strcmp(name, names[i]);
		if (!strcmp(name, check) && !strcmp(verdict, "FAIL"))
			failed = true;
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x, not exit 1", cmd,
		  status);
	cr_expect(failed, "verify did not fail %s on %s", check, mutant);
	cr_expect(listed, "verify listed no failing configuration of %s on %s", check, mutant);
	cr_expect_eq(reported, n_names, "verify reported %zu of the oracle's %zu checks on %s",
		     reported, n_names, mutant);
	if (every_in)
		cr_expect(shown > 0 && !elsewhere,
			  "%zu of the %zu counterexamples on %s are not under %s", elsewhere, shown,
			  mutant, every_in);
}

static void verify_fails(const char *mutant, const char *check)
{
	verify_fails_where("verify_mutants", mutant, check, NULL);
}

Test(verify_mutants, sync_wait_one_slot_early_fails_sync_complete, .timeout = 600)
{
	verify_fails("mut_sync_early", "sync_complete");
}

Test(verify_mutants, msi_off_by_one_fails_sync_complete, .timeout = 600)
{
	verify_fails("mut_msi_early", "sync_complete");
}

Test(verify_mutants, issue_timeout_fails_sync_complete, .timeout = 600)
{
	verify_fails("mut_issue_timeout", "sync_complete");
}

Test(verify_mutants, missing_unlock_fails_no_deadlock, .timeout = 900)
{
	verify_fails("mut_missing_unlock", "no_deadlock");
}

Test(verify_mutants, heap_overflow_fails_no_crash, .timeout = 600)
{
	verify_fails("mut_heap_overflow", "no_crash");
}

/* Past the end of a block by one MCS node: nothing crashes, the block's canary says so. */
Test(verify_mutants, one_node_short_fails_no_crash_by_the_canary, .timeout = 600)
{
	verify_fails_where("verify_mutants", "mut_nodes_short", "no_crash", "written past its end");
}

/*
 * The MSI wait wants sync_count to equal its number rather than reach it: a waiter that looks
 * only after the next CMD_SYNC has completed too waits forever. The sim's deterministic
 * schedule always wakes it in time; only seeded stalls (perturb_ns) show it, so every failing
 * configuration is a perturbed one, and verify --seed N with the seed it names replays it.
 */
Test(verify_mutants, msi_exact_wait_fails_no_deadlock_only_under_perturbation, .timeout = 900)
{
	char line[4096], cmd[1024], replay[512] = "";
	size_t n = 0, perturbed = 0;
	bool replayed = false, failed = false;

	snprintf(cmd, sizeof(cmd),
		 "'%s/iommulab' verify '%s/tests/fixtures/verify_mutants/cmdq-mut_msi_exact.so' "
		 "2>/dev/null",
		 TEST_BUILD_ROOT, TEST_BUILD_ROOT);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *r = strstr(line, "verify ");
		char name[64], verdict[16];
		size_t runs;

		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) == 3 &&
		    !strcmp(name, "no_deadlock") && !strcmp(verdict, "FAIL"))
			failed = true;
		if (sscanf(line, "  no_deadlock FAILED in %zu configurations (%zu of them", &n,
			   &perturbed) == 2)
			continue;
		if (strstr(line, "replay a perturbed counterexample: iommulab ") && r)
			snprintf(replay, sizeof(replay), "%.*s", (int)strcspn(r, "("), r);
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x", cmd, status);
	cr_expect(failed, "verify did not fail no_deadlock on mut_msi_exact");
	cr_expect(n > 0 && perturbed == n, "no_deadlock failed in %zu, %zu of them perturbed", n,
		  perturbed);
	cr_assert(replay[0], "verify printed no --seed replay line");
	/* The replay: the same failure under that seed alone. */
	snprintf(cmd, sizeof(cmd), "'%s/iommulab' %s 2>/dev/null", TEST_BUILD_ROOT, replay);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];
		size_t runs;
		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) == 3 &&
		    !strcmp(name, "no_deadlock") && !strcmp(verdict, "FAIL"))
			replayed = true;
	}
	status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x", cmd, status);
	cr_expect(replayed, "%s did not fail no_deadlock again", cmd);
	/*
	 * -j runs sim trials side by side and takes their verdicts in the grid's order: the sim
	 * part's output (its verdicts, counts and counterexamples, in order) is the same byte for
	 * byte one at a time and three at a time.
	 */
	static char out[2][1 << 16];
	for (int j = 0; j < 2; j++) {
		size_t n_out = 0, got;

		snprintf(cmd, sizeof(cmd), "'%s/iommulab' %s --engine sim -j %d 2>/dev/null",
			 TEST_BUILD_ROOT, replay, j ? 3 : 1);
		f = popen(cmd, "r");
		cr_assert_not_null(f);
		while ((got = fread(out[j] + n_out, 1, sizeof(out[j]) - 1 - n_out, f)) > 0)
			n_out += got;
		out[j][n_out] = '\0';
		status = pclose(f);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x", cmd,
			  status);
	}
	cr_expect(strstr(out[0], "no_deadlock    FAIL"), "%s", out[0]);
	cr_expect_str_eq(out[1], out[0], "verify -j 3 printed otherwise than -j 1");
}

/* No dma_wmb() before the valid bits: only the sim's Arm store buffers (memory = arm) see it. */
Test(verify_mutants, missing_wmb_fails_protocol_under_weak_memory, .timeout = 600)
{
	verify_fails_where("weak_memory", "mut_no_wmb", "protocol", "memory=arm");
}

/*
 * mcs's granted follower waits for its grant with a relaxed load: its load of the slot its head
 * wrote for it may be satisfied before the grant, so it writes its commands at the slot of its
 * previous op. Only the sim's early loads (memory = arm) can show it: every failing
 * configuration is an Arm-memory one.
 */
Test(verify_mutants, relaxed_grant_wait_fails_only_under_early_loads, .timeout = 600)
{
	verify_fails_where("verify_mutants", "mut_grant_relaxed", "sync_complete", "memory=arm");
}

/*
 * fetchadd's owner hands owner_prod to the next owner with a relaxed store: on Arm its
 * writel_relaxed(PROD) may reach the device after the next owner's, and PROD moves backwards.
 * Only the sim's posted register writes under memory = arm show it.
 */
Test(verify_mutants, relaxed_owner_hand_off_fails_protocol_only_under_arm, .timeout = 600)
{
	verify_fails_where("verify_mutants", "mut_owner_relaxed", "protocol", "memory=arm");
}

/*
 * Three bugs on paths the fixed points never take, so only the mixed ones (mixed=on: 0 to 5
 * commands an op, some without a CMD_SYNC) fail, and every counterexample names one. spinlock
 * returns from a CMD_SYNC alone without issuing it: the sync after an unsynced issue returns
 * with that issue's commands not yet complete.
 */
Test(verify_mutants, bare_sync_returning_at_once_fails_sync_complete_when_mixed, .timeout = 600)
{
	verify_fails_where("verify_mutants", "mut_sync_only_returns", "sync_complete", "mixed=on");
}

/* fetchadd claims a CMD_SYNC slot for an unsynced issue too and leaves it unwritten: the owner
 * publishes a slot nobody wrote, which the device refuses. */
Test(verify_mutants, unsynced_issue_claiming_a_sync_slot_fails_protocol_when_mixed, .timeout = 600)
{
	verify_fails_where("verify_mutants", "mut_nosync_need", "protocol", "mixed=on");
}

/* mcs's head hands its followers slots spaced by its own need: with needs that differ,
 * followers' slots overlap or leave holes nobody writes. */
Test(verify_mutants, head_granting_by_its_own_need_fails_when_mixed, .timeout = 900)
{
	verify_fails_where("verify_mutants", "mut_grant_own_need", "no_deadlock", "mixed=on");
}

/* ---- iova mutants (tests/fixtures/iova_mutants): caught by `iommulab verify`, by name ------ */

/* What `iommulab verify` printed for iova mutant NAME: its check rows, and one check's verdict. */
struct iova_table {
	size_t rows;	  /* rows naming an iova check */
	size_t fails;	  /* rows, lab_h_only's included, whose verdict is FAIL */
	bool summary;	  /* the last line: "N of M checks FAILED" or "all checks passed" */
	char verdict[16]; /* the verdict of the check asked for */
	bool detail;	  /* its counterexample holds the text asked for */
	int status;	  /* verify's exit status, or -1 */
};

static void iova_verify_table(const char *mutant, const char *check, const char *text,
			      struct iova_table *t)
{
	char line[4096], cmd[1024];
	bool in_check = false;

	memset(t, 0, sizeof(*t));
	snprintf(cmd, sizeof(cmd),
		 "'%s/iommulab' verify '%s/tests/fixtures/iova_mutants/iova-%s.so' 2>/dev/null",
		 TEST_BUILD_ROOT, TEST_BUILD_ROOT, mutant);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f, "cannot run %s", cmd);
	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];

		if (sscanf(line, " %63s %15s", name, verdict) == 2 && line[2] != ' ') {
			t->rows += iova_check_find(name) != NULL;
			t->fails += !strcmp(verdict, "FAIL");
			in_check = !strcmp(name, check);
			if (in_check)
				snprintf(t->verdict, sizeof(t->verdict), "%s", verdict);
		} else if (in_check && text && strstr(line, "first counterexample:") &&
			   strstr(line, text)) {
			t->detail = true;
		}
		t->summary |= strstr(line, "checks FAILED") || strstr(line, "all checks passed");
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status), "%s did not exit", cmd);
	t->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether `iommulab verify` on iova mutant NAME prints check FAIL with text in its detail. */
static bool iova_verify_fails(const char *mutant, const char *check, const char *text)
{
	struct iova_table t;

	iova_verify_table(mutant, check, text, &t);
	return !strcmp(t.verdict, "FAIL") && t.detail && t.status == 1;
}

/*
 * A plugin that crashes costs verify the checks it crashed in, never its table: the loaded/prev
 * swap that loses a magazine frees it twice, and its process dies in the middle of a check.
 * Each iova check runs in its own process; before, verify died with it (SIGSEGV, no output).
 */
Test(verify_mutants, iova_plugin_that_crashes_fails_its_checks_and_verify_prints_them_all,
     .timeout = 120)
{
	struct iova_table t;
	size_t n;

	iova_verify_table("mut_swap_loses_prev", "random_1cpu", "check's process", &t);
	cr_expect_str_eq(t.verdict, "FAIL");
	cr_expect(t.detail, "random_1cpu does not say how its process ended");
	iova_checks(&n);
	cr_expect_eq(t.rows, n, "%zu of the %zu iova checks printed", t.rows, n);
	cr_expect(t.summary, "no summary line");
	cr_expect_eq(t.status, 1);
}

/*
 * No false positive: fixed_depot with its 32-magazine depot a constant instead of a depot_max
 * parameter is correct, and verify passes it; bounded_depot_memory, which cannot know that
 * depot's size, skips (it took the missing parameter for no depot and failed the policy).
 */
Test(verify_mutants, iova_depot_of_unnamed_size_passes_and_its_bound_is_skipped, .timeout = 120)
{
	struct iova_table t;

	iova_verify_table("ok_depot_unnamed", "bounded_depot_memory", NULL, &t);
	cr_expect_eq(t.fails, 0, "a correct policy failed %zu check(s)", t.fails);
	cr_expect_str_eq(t.verdict, "skip");
	cr_expect(t.summary, "no summary line");
	cr_expect_eq(t.status, 0);
}

/* A cached range that ends above limit_pfn: only a limit that is not 2^k - 1 can show it. */
Test(verify_mutants, iova_cache_past_limit_fails_random_1cpu, .timeout = 120)
{
	cr_expect(iova_verify_fails("mut_cache_past_limit", "random_1cpu",
				    "expected an end at or below the limit"));
}

/*
 * Flush-and-retry emptying the other CPU's magazines without its lock: a race, natively, that
 * small_domain_2cpu catches in about 8 of 10 runs on 2 busy cores; five runs miss it all only
 * about once in 3000.
 */
Test(verify_mutants, iova_flush_unlocked_fails_small_domain_2cpu, .timeout = 300)
{
	bool caught = false;

	for (int i = 0; i < 5 && !caught; i++)
		caught = iova_verify_fails("mut_flush_unlocked", "small_domain_2cpu",
					   "handed out while");
	cr_expect(caught, "5 verify runs of mut_flush_unlocked passed small_domain_2cpu");
}

/*
 * A depot scaled with the CPUs is depot_min deep at the 2 CPUs the other checks run on, so
 * bounded_depot_memory runs it again as initialised for 2 x depot_min CPUs: slot arrays sized
 * for depot_min overflow there (the canary, or the heap, says so), and a depot that does not
 * scale holds too little.
 */
Test(verify_mutants, iova_scaled_depot_with_short_slots_fails_bounded_depot_memory, .timeout = 120)
{
	struct iova_table t;

	iova_verify_table("mut_scaled_slots_short", "bounded_depot_memory", NULL, &t);
	cr_expect_str_eq(t.verdict, "FAIL");
	cr_expect_eq(t.fails, 1, "%zu checks failed, want bounded_depot_memory alone", t.fails);
	cr_expect_eq(t.status, 1);
}

Test(verify_mutants, iova_scaled_depot_that_does_not_scale_fails_bounded_depot_memory,
     .timeout = 120)
{
	cr_expect(iova_verify_fails("mut_scaled_not_scaled", "bounded_depot_memory",
				    "on 64 CPUs: expected the depot to hold 64 magazines"));
}

/* A depot smaller than it says: the peak above the pairs passed it; filling to its size does
 * not. */
Test(verify_mutants, iova_scaled_depot_shrunk_to_the_cpus_fails_bounded_depot_memory,
     .timeout = 120)
{
	cr_expect(iova_verify_fails("mut_scaled_inverted", "bounded_depot_memory",
				    "on 2 CPUs: expected the depot to hold 32 magazines"));
}

/* ---- lab.h bypassed (tests/fixtures/verify_mutants' mut_raw_*): lab_h_only, by name ------- */

/*
 * A raw __atomic builtin on a shared word is, natively, the very instruction lab.h emits, so
 * no native trial can tell; on the sim it is an access the engine never sees. lab_h_only
 * (static, so run whatever --engine: here the native part only, a few seconds) fails it and
 * names the function, the instruction (want, on x86-64) and where it is.
 */
/* `iommulab verify` on verify_mutants' mutant with options: its output; cmd, the call. */
static FILE *verify_mutant(const char *mutant, const char *options, char *cmd, size_t len)
{
	snprintf(cmd, len,
		 "'%s/iommulab' verify '%s/tests/fixtures/verify_mutants/cmdq-%s.so' %s "
		 "2>/dev/null",
		 TEST_BUILD_ROOT, TEST_BUILD_ROOT, mutant, options);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f, "cannot run %s", cmd);
	return f;
}

static void verify_fails_lab_h_only(const char *mutant, const char *want)
{
	char line[4096], cmd[1024], where[256];
	bool failed = false, listed = false, named = false;
	FILE *f = verify_mutant(mutant, "--engine native", cmd, sizeof(cmd));

	snprintf(where, sizeof(where), "counterexample: cmdq-%s.sim.so: function ", mutant);
	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];
		size_t runs;

		/* Natively the row has no sim verdicts, only the static one, which fails it. */
		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) == 3 &&
		    !strcmp(name, "lab_h_only") && !strcmp(verdict, "FAIL") &&
		    strstr(line, "sim: -, static: FAIL, "))
			failed = true;
		if (!strncmp(line, "  lab_h_only FAILED in ", strlen("  lab_h_only FAILED in ")))
			listed = true;
#ifdef __x86_64__
		if (strstr(line, where) && strstr(line, want) && strstr(line, " at 0x"))
			named = true;
#else
		(void)want;
		if (strstr(line, where) && strstr(line, " at 0x"))
			named = true;
#endif
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x, not exit 1", cmd,
		  status);
	cr_expect(failed, "verify did not fail lab_h_only on %s", mutant);
	cr_expect(listed, "verify listed no lab_h_only failure on %s", mutant);
	cr_expect(named, "no counterexample naming a function and '%s' on %s", want, mutant);
}

Test(verify_mutants, raw_fetch_add_fails_lab_h_only, .timeout = 300)
{
	verify_fails_lab_h_only("mut_raw_fetch_add", "lock xadd");
}

Test(verify_mutants, raw_cas_fails_lab_h_only, .timeout = 300)
{
	verify_fails_lab_h_only("mut_raw_cas", "lock cmpxchg");
}

Test(verify_mutants, raw_full_fence_fails_lab_h_only, .timeout = 300)
{
	verify_fails_lab_h_only("mut_raw_fence", "full memory fence");
}

/*
 * Plain C that bypasses lab.h holds no instruction to find (an x86-64 load or store is a mov
 * either way) and works natively: only the sim, watching the run, sees it. verify --engine sim
 * fails lab_h_only, every failing configuration fails lab_h_only with the sim's own words
 * (want), and each names the place: a function of the plugin's (func, a prefix: which one
 * depends on what the compiler inlined) in the mutant's sim build.
 * The static half of the row passes: nothing in the disassembly gives it away.
 */
static void verify_sim_fails_lab_h_only(const char *mutant, const char *want, const char *func)
{
	char line[8192], cmd[1024], place[256];
	size_t shown = 0, elsewhere = 0, named = 0;
	bool failed = false, static_pass = false;
	FILE *f = verify_mutant(mutant, "--engine sim", cmd, sizeof(cmd));

	snprintf(place, sizeof(place), "(cmdq-%s.sim.so+0x", mutant);
	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];
		size_t runs;

		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) == 3 &&
		    !strcmp(name, "lab_h_only")) {
			failed = !strcmp(verdict, "FAIL") && strstr(line, "sim: FAIL ");
			static_pass = strstr(line, ", static: all ") != NULL;
		}
		if (!strstr(line, "counterexample: ["))
			continue;
		shown++;
		elsewhere += !strstr(line, want);
		/* "... at mcs_lead (cmdq-mut_plain_spin.sim.so+0x1787, mut_plain_spin.c:174) ..."
		 */
		const char *fn = strstr(line, func), *at = fn ? strchr(fn, '(') : NULL;
		named += fn && fn - line > 4 && !strncmp(fn - 4, " at ", 4) && at &&
			 !strncmp(at, place, strlen(place)) &&
			 !memchr(fn, ' ', (size_t)(at - 1 - fn));
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status 0x%x, not exit 1", cmd,
		  status);
	cr_expect(failed, "verify did not fail lab_h_only on the sim on %s", mutant);
	cr_expect(static_pass, "lab_h_only's static half did not pass %s", mutant);
	cr_expect(shown > 0 && !elsewhere, "%zu of %zu counterexamples of %s do not say '%s'",
		  elsewhere, shown, mutant, want);
	cr_expect(named == shown, "%zu of %zu counterexamples of %s name the place '%s'", named,
		  shown, mutant, place);
}

Test(verify_mutants, plain_store_fails_lab_h_only_on_the_sim, .timeout = 600)
{
	verify_sim_fails_lab_h_only("mut_plain_store",
				    "a shared word changed outside lab.h: ", "mcs_");
}

/* The CPU spinning in host code is stopped within a second of host CPU time, not 20 s. */
Test(verify_mutants, plain_spin_fails_lab_h_only_on_the_sim, .timeout = 600)
{
	verify_sim_fails_lab_h_only("mut_plain_spin", "ran host code for over ", "mcs_");
}

/*
 * Not a mutant: ok_scratch allocates a scratch line, uses it through lab.h and frees it on
 * every call, and the sim's arena hands the next call the same line, zeroed by lab_alloc with
 * plain stores. That zeroing is not the plugin's: verify passes it (it failed lab_h_only in
 * every run before the arena told the sim). --seed 1 keeps it to one perturbation seed.
 */
Test(verify_mutants, a_line_freed_and_allocated_again_is_no_plain_store, .timeout = 600)
{
	char line[8192], cmd[1024];
	bool passed = false;
	size_t checks = 0;
	FILE *f = verify_mutant("ok_scratch", "--engine sim --seed 1", cmd, sizeof(cmd));

	while (fgets(line, sizeof(line), f)) {
		char name[64], verdict[16];
		size_t runs;

		if (sscanf(line, " %63s %15s (%zu runs)", name, verdict, &runs) != 3)
			continue;
		checks++;
		if (!strcmp(name, "lab_h_only"))
			passed = !strcmp(verdict, "PASS") && strstr(line, "sim: pass ");
		cr_expect_str_eq(verdict, "PASS", "%s", line);
	}
	int status = pclose(f);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status 0x%x, not exit 0", cmd,
		  status);
	cr_expect(checks > 0 && passed, "lab_h_only did not pass on the sim (%zu checks read)",
		  checks);
}
