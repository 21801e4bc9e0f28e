/* SPDX-License-Identifier: MIT */
/* Loader refusals, via test-only plugins each broken in one way (tests/fixtures/loader). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader/loader.h"

#define FIXTURES TEST_BUILD_ROOT "/tests/fixtures/loader"
/* plugins that misbehave while loading (broken.c, built by misbehaving/meson.build) */
#define MISBEHAVING FIXTURES "/misbehaving"

static char err[1024];

static int load(const char *name, struct loaded_plugin *p)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	err[0] = '\0';
	return plugin_load(path, p, err, sizeof(err));
}

Test(loader, accepts_a_valid_plugin, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_eq(load("cmdq-ok.so", &p), 0, "%s", err);
	cr_assert_str_eq(p.desc->name, "ok");
	cr_assert_eq(p.desc->kind, LAB_KIND_CMDQ);
	plugin_unload(&p);
}

/* A bare file name is the file in the current directory, not a library dlopen() searches for. */
Test(loader, a_file_name_without_a_directory_is_the_file_here, .timeout = 10)
{
	struct loaded_plugin p;
	char cwd[4096];

	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(FIXTURES), 0);
	int rc = plugin_load("cmdq-ok.so", &p, err, sizeof(err));
	cr_assert_eq(chdir(cwd), 0);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(p.desc->name, "ok");
	plugin_unload(&p);
}

Test(loader, refuses_another_abi_major, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-bad_abi.so", &p), 0);
	cr_assert(strstr(err, "cmdq-bad_abi.so: ABI 2.0, host speaks 1.0 to 1.2"), "%s", err);
}

Test(loader, refuses_a_missing_entry_and_says_dlerror, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-no_entry.so", &p), 0);
	cr_assert(strstr(err, "cmdq-no_entry.so: no entry symbol 'iommulab_plugin_entry'"), "%s",
		  err);
	cr_assert(strstr(err, "undefined symbol"), "dlerror() text missing: %s", err);
}

Test(loader, refuses_a_bad_parameter_table, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-bad_params.so", &p), 0);
	cr_assert(strstr(err, "cmdq-bad_params.so: parameter table: "), "%s", err);
	cr_assert(strstr(err, "batch") && strstr(err, "99"), "%s", err);
}

Test(loader, refuses_a_kind_that_contradicts_the_file_name, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-wrong_kind.so", &p), 0);
	cr_assert(strstr(err, "kind is iova but the file name says cmdq"), "%s", err);
}

Test(loader, refuses_a_file_that_cannot_be_loaded, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-missing.so", &p), 0);
	cr_assert(strstr(err, "cmdq-missing.so: cannot load: "), "%s", err);
}

Test(loader, two_files_with_one_name_is_an_error_not_a_pick, .timeout = 10)
{
	struct plugin_registry r = { 0 };
	struct diag_list d = { 0 };
	const char *why = NULL;

	registry_add_dir(&r, FIXTURES, false, &d);
	size_t refusals = d.n; /* bad_abi, no_entry, bad_params, wrong_kind */
	cr_assert_eq(refusals, 4, "expected 4 refusals, got %zu", refusals);
	cr_assert_not_null(registry_find(&r, "ok", NULL));
	registry_add_dir(&r, FIXTURES "/dup", false, &d);
	cr_assert_eq(d.n, refusals + 1);
	cr_assert(strstr(d.msgs[refusals], "plugin name 'ok' is also used by"), "%s",
		  d.msgs[refusals]);
	cr_assert_null(registry_find(&r, "ok", &why));
	cr_assert_not_null(why);
	registry_free(&r);
	diag_clear(&d);
}

Test(loader, the_same_directory_twice_is_read_once, .timeout = 10)
{
	struct plugin_registry r = { 0 };
	struct diag_list d = { 0 };

	registry_add_dir(&r, TEST_BUILD_ROOT "/plugins", false, &d);
	size_t n = r.n;
	registry_add_dir(&r, TEST_BUILD_ROOT "/plugins/", false, &d);
	cr_assert_eq(r.n, n);
	cr_assert_eq(d.n, 0, "%s", d.n ? d.msgs[0] : "");
	cr_assert_not_null(registry_find(&r, "null", NULL));
	cr_assert_not_null(registry_find(&r, "biglock", NULL));
	/* A directory of refused files, twice: each refusal is reported once. */
	registry_add_dir(&r, FIXTURES, false, &d);
	size_t refusals = d.n;
	cr_assert_eq(refusals, 4, "expected 4 refusals, got %zu", refusals);
	registry_add_dir(&r, FIXTURES "/", false, &d);
	cr_assert_eq(d.n, refusals, "%s", d.n > refusals ? d.msgs[refusals] : "");
	cr_assert_lt(registry_add_file(&r, FIXTURES "/cmdq-bad_abi.so", &d), 0,
		     "a refused file reached again is still refused");
	cr_assert_eq(d.n, refusals);
	registry_free(&r);
	diag_clear(&d);
}

/* ---- plugins that crash, exit or hang while loading: loaded in a child first ------------- */

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * name, from misbehaving/, is refused with want (the whole message after the path), the host
 * lives on with no child and no fd left behind, and cmdq-ok.so added to the same registry
 * after it still loads.
 */
static void refused_then_ok(const char *name, const char *declared, const char *want,
			    const char *quote)
{
	struct plugin_registry r = { 0 };
	struct diag_list d = { 0 };
	char path[512], msg[1024];
	int fds = open_fds(), status;

	snprintf(path, sizeof(path), "%s/%s", MISBEHAVING, name);
	snprintf(msg, sizeof(msg), "%s: %s", path, want);
	cr_assert_lt(registry_add_file(&r, path, &d), 0);
	cr_assert_eq(d.n, 1);
	/* want, then at most the child's last line on stderr: under the sanitizers that is
	 * their report, whatever the plugin printed. */
	size_t n = strlen(msg);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* A sanitizer's handler may end the crash with its own signal (UBSan's abort). */
	if (!strncmp(want, "crashed while loading (SIG", 26))
		n = strlen(path) + 2 + 26;
#endif
	cr_assert(!strncmp(d.msgs[0], msg, n) &&
			  (!d.msgs[0][n] || !strncmp(d.msgs[0] + n, " (it said: ", 11) ||
			   n < strlen(msg)),
		  "got  %s\nwant %s", d.msgs[0], msg);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	if (quote)
		cr_assert(strstr(d.msgs[0], quote), "got %s\nwant the quote '%s'", d.msgs[0],
			  quote);
#endif
	cr_assert(!quote || strstr(d.msgs[0], " (it said: "), "%s", d.msgs[0]);
	cr_assert_null(registry_find(&r, declared, NULL));
	cr_assert_eq(registry_add_file(&r, FIXTURES "/cmdq-ok.so", &d), 0, "%s",
		     d.n > 1 ? d.msgs[1] : "");
	cr_assert_eq(d.n, 1);
	cr_assert_not_null(registry_find(&r, "ok", NULL));
	cr_assert_eq(waitpid(-1, &status, WNOHANG), -1, "a child was left behind");
	cr_assert_eq(errno, ECHILD);
	cr_assert_eq(open_fds(), fds, "an fd was left open");
	registry_free(&r);
	diag_clear(&d);
}

Test(loader, refuses_a_constructor_that_exits, .timeout = 10)
{
	refused_then_ok("cmdq-ctor_exit.so", "ctor_exit",
			"ended the process while loading (exit status 0)", NULL);
}

Test(loader, refuses_a_constructor_that_crashes_and_quotes_its_stderr, .timeout = 10)
{
	refused_then_ok("cmdq-ctor_segv.so", "ctor_segv", "crashed while loading (SIGSEGV)",
			" (it said: ctor_segv: about to dereference NULL)");
}

Test(loader, refuses_an_entry_function_that_crashes, .timeout = 10)
{
	refused_then_ok("cmdq-entry_segv.so", "entry_segv", "crashed while loading (SIGSEGV)",
			NULL);
}

Test(loader, refuses_an_entry_function_that_hangs_after_5_s, .timeout = 20)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	refused_then_ok("cmdq-entry_hang.so", "entry_hang",
			"did not finish loading in 5 s (a constructor or its entry function "
			"hangs)",
			NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	cr_assert(s >= 5.0 && s < 9.0, "took %.2f s", s);
}

Test(loader, refuses_a_parameter_count_the_table_does_not_hold, .timeout = 10)
{
	refused_then_ok("cmdq-huge_params.so", "huge_params", "1000000 parameters (at most 256)",
			NULL);
}

Test(loader, a_refusal_in_the_child_reads_as_it_always_did, .timeout = 10)
{
	struct loaded_plugin p;

	/* the child's text comes back byte for byte, and its -errno with it */
	cr_assert_eq(load("cmdq-bad_abi.so", &p), -EPROTO);
	cr_assert_str_eq(err, FIXTURES "/cmdq-bad_abi.so: ABI 2.0, host speaks 1.0 to 1.2: "
				       "rebuild the plugin against this host's headers");
	cr_assert_eq(load("cmdq-missing.so", &p), -ENOEXEC);
	cr_assert_eq(load("cmdq-no_entry.so", &p), -ENOENT);
}
