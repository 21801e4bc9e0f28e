/* SPDX-License-Identifier: MIT */
/* Loader refusals, via test-only plugins each broken in one way (tests/fixtures/loader). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"

#define FIXTURES TEST_BUILD_ROOT "/tests/fixtures/loader"

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

Test(loader, refuses_another_abi_major, .timeout = 10)
{
	struct loaded_plugin p;

	cr_assert_lt(load("cmdq-bad_abi.so", &p), 0);
	cr_assert(strstr(err, "cmdq-bad_abi.so: ABI 2.0, host speaks 1.0 to 1.1"), "%s", err);
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
	registry_free(&r);
	diag_clear(&d);
}
