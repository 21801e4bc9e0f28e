/* SPDX-License-Identifier: MIT */
/*
 * test_iova_conformance -- every iova plugin in the build's plugin directory against every
 * check of framework/verify/iova_check (the code `iommulab verify` runs), one parameterised
 * test per (plugin, check); and each deliberately broken plugin of tests/fixtures/iova_mutants
 * caught by the check that should catch it, with the counterexample that names its bug.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "loader/loader.h"
#include "verify/iova_check.h"

struct check_case {
	char path[512];
	char plugin[64];
	char check[64];
	char expect[96]; /* mutants: a piece of the counterexample; "" for the real plugins */
};

#define MAX_PLUGINS 32
#define MAX_CASES   (MAX_PLUGINS * 16)
static struct check_case cases[MAX_CASES];
static char plugin_names[MAX_PLUGINS][64];

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* iova-NAME.so in IOMMULAB_PLUGIN_PATH (sim builds run under the sim engine only), sorted. */
static size_t find_plugins(void)
{
	const char *dir = getenv("IOMMULAB_PLUGIN_PATH");
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (!dir || !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) && n < MAX_PLUGINS) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "iova-", 5) || len < 9 ||
		    strcmp(de->d_name + len - 3, ".so") || strstr(de->d_name, ".sim.so"))
			continue;
		snprintf(plugin_names[n++], sizeof(plugin_names[0]), "%.*s", (int)(len - 8),
			 de->d_name + 5);
	}
	closedir(d);
	qsort(plugin_names, n, sizeof(plugin_names[0]), name_cmp);
	return n;
}

static struct criterion_test_params plugin_params(void)
{
	size_t np = find_plugins(), nc, n = 0;
	const struct iova_check *chk = iova_checks(&nc);

	for (size_t i = 0; i < np; i++)
		for (size_t k = 0; k < nc && n < MAX_CASES; k++, n++) {
			struct check_case *cc = &cases[n];

			snprintf(cc->path, sizeof(cc->path), "%s/iova-%s.so",
				 getenv("IOMMULAB_PLUGIN_PATH"), plugin_names[i]);
			snprintf(cc->plugin, sizeof(cc->plugin), "%s", plugin_names[i]);
			snprintf(cc->check, sizeof(cc->check), "%s", chk[k].name);
			cc->expect[0] = '\0';
		}
	return cr_make_param_array(struct check_case, cases, n);
}

/* Load the case's plugin and run its check. */
static void run_case(const struct check_case *cc, struct iova_check_result *res)
{
	const struct iova_check *chk = iova_check_find(cc->check);
	struct loaded_plugin lp;
	char err[512];

	cr_assert_not_null(chk, "no check %s", cc->check);
	cr_assert_eq(plugin_load(cc->path, &lp, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(lp.desc->name, cc->plugin);
	cr_assert_eq(iova_check_run(chk, lp.desc, NULL, res), 0, "%s", res->detail);
	plugin_unload(&lp);
}

Test(iova_conformance, plugins_found, .timeout = 10)
{
	static const char *const expected[] = { "depotless", "fixed_depot", "list_depot",
						"scaled_depot" };
	size_t n = find_plugins();

	cr_assert_not_null(getenv("IOMMULAB_PLUGIN_PATH"));
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		bool found = false;

		for (size_t j = 0; j < n; j++)
			found |= !strcmp(plugin_names[j], expected[i]);
		cr_assert(found, "iova-%s.so not in %s", expected[i],
			  getenv("IOMMULAB_PLUGIN_PATH"));
	}
}

ParameterizedTestParameters(iova_conformance, check)
{
	return plugin_params();
}

/*
 * A check may skip only where it does not apply: the bounded policies have no tick, the list
 * depot no bound. Every other (plugin, check) must pass -- a policy of this tree that cached
 * nothing would skip the flush checks and fail here.
 */
static bool skip_expected(const struct check_case *cc)
{
	if (!strcmp(cc->check, "tick_reclaims_to_ncpus"))
		return strcmp(cc->plugin, "list_depot") != 0;
	if (!strcmp(cc->check, "bounded_depot_memory"))
		return !strcmp(cc->plugin, "list_depot");
	return false;
}

ParameterizedTest(struct check_case *cc, iova_conformance, check, .timeout = 60)
{
	struct iova_check_result res;

	run_case(cc, &res);
	if (res.verdict == IOVA_CHECK_SKIP) {
		cr_assert(skip_expected(cc), "%s %s: unexpected skip: %s", cc->plugin, cc->check,
			  res.detail);
		cr_skip_test("%s %s: %s", cc->plugin, cc->check, res.detail);
	}
	cr_assert_eq(res.verdict, IOVA_CHECK_PASS, "%s %s: %s", cc->plugin, cc->check, res.detail);
	cr_assert_not(skip_expected(cc), "%s %s: passed, expected a skip", cc->plugin, cc->check);
}

/* ---- the mutants: each caught by its check, with the counterexample naming the bug ---------- */

#define MUTANT(name, chk, text)                                                                    \
	{                                                                                          \
		TEST_BUILD_ROOT "/tests/fixtures/iova_mutants/iova-" name ".so", name, chk, text   \
	}

static struct check_case mutants[] = {
	MUTANT("mut_dup_range", "random_1cpu", "handed out while"),
	MUTANT("mut_dup_range", "random_2cpu", "handed out while"),
	MUTANT("mut_fini_keeps_mags", "flush_returns_everything",
	       "after fini: expected an empty tree, found 1 range"),
	MUTANT("mut_fini_keeps_mags", "magazine_alloc_failure",
	       "after fini: expected an empty tree"),
	MUTANT("mut_flush_keeps_depot", "flush_returns_everything",
	       "flushed CPU 0 and the depot: expected 0 cached"),
};

ParameterizedTestParameters(iova_conformance, mutant_caught)
{
	return cr_make_param_array(struct check_case, mutants,
				   sizeof(mutants) / sizeof(mutants[0]));
}

ParameterizedTest(struct check_case *cc, iova_conformance, mutant_caught, .timeout = 60)
{
	struct iova_check_result res;

	run_case(cc, &res);
	cr_assert_eq(res.verdict, IOVA_CHECK_FAIL, "%s %s: %s, want FAIL", cc->plugin, cc->check,
		     iova_check_verdict_name(res.verdict));
	cr_assert(strstr(res.detail, cc->expect), "%s %s: counterexample '%s' lacks '%s'",
		  cc->plugin, cc->check, res.detail, cc->expect);
}

/* A mutant only breaks what it breaks: its other checks still pass. */
Test(iova_conformance, mutant_flush_keeps_depot_passes_the_rest, .timeout = 60)
{
	struct check_case cc = MUTANT("mut_flush_keeps_depot", "random_1cpu", "");
	struct iova_check_result res;

	run_case(&cc, &res);
	cr_assert_eq(res.verdict, IOVA_CHECK_PASS, "%s", res.detail);
}

/* ---- the CLI: `iommulab verify` prints the same verdicts and exits by them ------------------- */

/* Run `iommulab verify ARG`, keep its stdout in out; the exit status. */
static int run_verify(const char *arg, char *out, size_t len)
{
	char cmd[1024];
	size_t got = 0, k;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s/iommulab' verify '%s' 2>/dev/null", TEST_BUILD_ROOT, arg);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (got + 1 < len && (k = fread(out + got, 1, len - 1 - got, f)) > 0)
		got += k;
	out[got] = '\0';
	st = pclose(f);
	cr_assert(WIFEXITED(st), "%s did not exit", cmd);
	return WEXITSTATUS(st);
}

Test(iova_conformance, cli_verify_passes_a_real_policy, .timeout = 120)
{
	static char out[8192];
	char path[600];

	snprintf(path, sizeof(path), "%s/iova-fixed_depot.so", getenv("IOMMULAB_PLUGIN_PATH"));
	cr_assert_eq(run_verify(path, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "random_2cpu                  pass"), "%s", out);
	cr_assert(strstr(out, "all checks passed"), "%s", out);
	/* By name, through IOMMULAB_PLUGIN_PATH. */
	cr_assert_eq(run_verify("depotless", out, sizeof(out)), 0, "%s", out);
}

ParameterizedTestParameters(iova_conformance, cli_verify_catches_mutant)
{
	return cr_make_param_array(struct check_case, mutants,
				   sizeof(mutants) / sizeof(mutants[0]));
}

ParameterizedTest(struct check_case *cc, iova_conformance, cli_verify_catches_mutant,
		  .timeout = 120)
{
	static char out[8192];
	char line[128];

	cr_assert_eq(run_verify(cc->path, out, sizeof(out)), 1, "%s", out);
	snprintf(line, sizeof(line), "  %-28s FAIL", cc->check);
	cr_assert(strstr(out, line), "no '%s' in:\n%s", line, out);
	cr_assert(strstr(out, "first counterexample: ") && strstr(out, cc->expect), "%s", out);
	cr_assert(strstr(out, "checks FAILED"), "%s", out);
}
