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

/* ---- verify's mutants: a shipped plugin with one plausible bug, caught by name ------------- */

/*
 * tests/fixtures/verify_mutants: `iommulab verify` on the mutant (and its .sim.so twin) exits 1
 * with check FAIL in its table, and every other line it prints still comes (a crash is that
 * trial's verdict, not verify's end): the table lists every check.
 */
static void verify_fails_in(const char *dir, const char *mutant, const char *check)
{
	char line[4096], cmd[1024];
	size_t n_names, reported = 0;
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
}

static void verify_fails(const char *mutant, const char *check)
{
	verify_fails_in("verify_mutants", mutant, check);
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

/* No dma_wmb() before the valid bits: only the sim's Arm store buffers (memory = arm) see it. */
Test(verify_mutants, missing_wmb_fails_protocol_under_weak_memory, .timeout = 600)
{
	verify_fails_in("weak_memory", "mut_no_wmb", "protocol");
}
