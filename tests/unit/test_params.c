/* SPDX-License-Identifier: MIT */
/* test_params -- typed parameter tables: parsing, exact error messages, formatting, checks. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "params/params.h"

struct tcfg {
	bool on;
	int64_t delta;
	uint64_t batch;
	double ratio;
	int mode;
	char *label;
	uint64_t seed;
};

static const char *const modes[] = { "fast", "slow", "lazy", NULL };

static const struct lab_param tparams[] = {
	{ "on", LAB_PARAM_BOOL, "true", 0, 0, NULL, "a switch", offsetof(struct tcfg, on) },
	{ "delta", LAB_PARAM_INT, "-5", -100, 100, NULL, "signed", offsetof(struct tcfg, delta) },
	{ "batch", LAB_PARAM_UINT, "8", 1, 64, NULL, "per sync", offsetof(struct tcfg, batch) },
	{ "ratio", LAB_PARAM_DOUBLE, "0.5", 0, 1, NULL, "share", offsetof(struct tcfg, ratio) },
	{ "mode", LAB_PARAM_ENUM, "slow", 0, 0, modes, "how", offsetof(struct tcfg, mode) },
	{ "label", LAB_PARAM_STRING, "x", 0, 0, NULL, "a name", offsetof(struct tcfg, label) },
	{ "seed", LAB_PARAM_UINT, "1", 0, 0, NULL, "no range", offsetof(struct tcfg, seed) },
};
#define NT LAB_ARRAY_SIZE(tparams)

static const struct lab_param *tp(const char *key)
{
	const struct lab_param *p = param_find(tparams, NT, key);

	cr_assert_not_null(p, "no param %s", key);
	return p;
}

/* The message param_check gives for text, asserting it fails with rc. */
static void expect_error(const char *key, const char *text, int rc, const char *msg)
{
	char err[256] = "";

	cr_assert_eq(param_check(tp(key), text, err, sizeof(err)), rc, "%s=%s", key, text);
	cr_assert_str_eq(err, msg);
}

Test(params, defaults_fill_every_type, .timeout = 5)
{
	struct tcfg c;
	char err[256];

	memset(&c, 0xa5, sizeof(c)); /* set_defaults must not free the garbage in label */
	cr_assert_eq(param_set_defaults(tparams, NT, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert(c.on);
	cr_assert_eq(c.delta, -5);
	cr_assert_eq(c.batch, 8);
	cr_assert_float_eq(c.ratio, 0.5, 1e-12);
	cr_assert_eq(c.mode, 1);
	cr_assert_str_eq(c.label, "x");
	param_free_strings(tparams, NT, &c);
	cr_assert_null(c.label);
}

Test(params, integers_suffixes_and_hex, .timeout = 5)
{
	struct tcfg c = { 0 };
	char err[256];

	cr_assert_eq(param_parse(tp("seed"), "4k", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, 4000);
	cr_assert_eq(param_parse(tp("seed"), "2M", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, 2000000);
	cr_assert_eq(param_parse(tp("seed"), "3G", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, 3000000000ull);
	cr_assert_eq(param_parse(tp("seed"), "0x1F", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, 31);
	cr_assert_eq(param_parse(tp("seed"), "010", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, 10, "a leading zero is not octal");
	cr_assert_eq(param_parse(tp("seed"), "18446744073709551615", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.seed, UINT64_MAX);
	cr_assert_eq(param_parse(tp("delta"), "-100", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.delta, -100);
	cr_assert_eq(param_parse(tp("delta"), "-0x10", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.delta, -16);
}

Test(params, integer_messages, .timeout = 5)
{
	expect_error("batch", "abc", -EINVAL, "'abc' is not an integer");
	expect_error("batch", "", -EINVAL, "'' is not an integer");
	expect_error("batch", "12x", -EINVAL, "'12x' is not an integer");
	expect_error("batch", "4kk", -EINVAL, "'4kk' is not an integer");
	expect_error("batch", "70", -ERANGE, "70 not in [1, 64]");
	expect_error("batch", "1k", -ERANGE, "1000 not in [1, 64]");
	expect_error("batch", "-1", -ERANGE, "'-1' is negative");
	expect_error("seed", "18446744073709551616", -ERANGE,
		     "'18446744073709551616' does not fit in 64 bits");
	expect_error("seed", "20000000000G", -ERANGE, "'20000000000G' does not fit in 64 bits");
	expect_error("delta", "-101", -ERANGE, "-101 not in [-100, 100]");
	expect_error("delta", "1.5", -EINVAL, "'1.5' is not an integer");
}

Test(params, bool_enum_double_messages, .timeout = 5)
{
	struct tcfg c = { 0 };
	char err[256];

	expect_error("on", "maybe", -EINVAL, "'maybe' is not one of: true, false");
	expect_error("mode", "quick", -EINVAL, "'quick' is not one of: fast, slow, lazy");
	expect_error("ratio", "abc", -EINVAL, "'abc' is not a number");
	expect_error("ratio", "nan", -EINVAL, "'nan' is not a number");
	expect_error("ratio", "1.5", -ERANGE, "1.5 not in [0, 1]");
	for (size_t i = 0; i < 4; i++) {
		static const char *const no[] = { "false", "no", "off", "0" };
		static const char *const yes[] = { "TRUE", "yes", "on", "1" };

		cr_assert_eq(param_parse(tp("on"), no[i], &c, err, sizeof(err)), 0);
		cr_assert(!c.on, "%s", no[i]);
		cr_assert_eq(param_parse(tp("on"), yes[i], &c, err, sizeof(err)), 0);
		cr_assert(c.on, "%s", yes[i]);
	}
	cr_assert_eq(param_parse(tp("mode"), "lazy", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.mode, 2);
}

Test(params, failed_parse_leaves_value, .timeout = 5)
{
	struct tcfg c = { .batch = 9 };
	char err[256];

	cr_assert_neq(param_parse(tp("batch"), "99", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.batch, 9);
}

Test(params, strings_replace_and_copy, .timeout = 5)
{
	struct tcfg a = { 0 }, b;
	char err[256];

	cr_assert_eq(param_parse(tp("label"), "one", &a, err, sizeof(err)), 0);
	cr_assert_eq(param_parse(tp("label"), "two", &a, err, sizeof(err)), 0);
	cr_assert_eq(param_copy(tparams, NT, &b, &a, sizeof(a)), 0);
	cr_assert_str_eq(b.label, "two");
	cr_assert_neq(b.label, a.label, "the copy owns its own string");
	param_free_strings(tparams, NT, &a);
	param_free_strings(tparams, NT, &b);
}

Test(params, format_round_trips, .timeout = 5)
{
	struct tcfg a = { 0 }, b = { 0 };
	char err[256], buf[64];
	const char *in[] = { "off", "-0x20", "0x3f", "0.1", "fast", "hello world", "5G" };

	for (size_t i = 0; i < NT; i++)
		cr_assert_eq(param_parse(&tparams[i], in[i], &a, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < NT; i++) {
		cr_assert_eq(param_format(&tparams[i], &a, buf, sizeof(buf)), 0);
		cr_assert_eq(param_parse(&tparams[i], buf, &b, err, sizeof(err)), 0, "%s", buf);
	}
	cr_assert_eq(b.on, a.on);
	cr_assert_eq(b.delta, -32);
	cr_assert_eq(b.batch, 63);
	cr_assert(b.ratio == a.ratio, "doubles round-trip exactly");
	cr_assert_eq(b.mode, 0);
	cr_assert_str_eq(b.label, "hello world");
	cr_assert_eq(b.seed, 5000000000ull);
	cr_assert_eq(param_format(tp("label"), &a, buf, 4), -ENOSPC);
	param_free_strings(tparams, NT, &a);
	param_free_strings(tparams, NT, &b);
}

Test(params, format_refuses_strings_inih_would_change, .timeout = 5)
{
	struct tcfg a = { .label = (char *)"a ; b" };
	char buf[64];

	cr_assert_eq(param_format(tp("label"), &a, buf, sizeof(buf)), -EINVAL);
	a.label = (char *)" lead";
	cr_assert_eq(param_format(tp("label"), &a, buf, sizeof(buf)), -EINVAL);
	a.label = (char *)"a;b";
	cr_assert_eq(param_format(tp("label"), &a, buf, sizeof(buf)), 0);
}

Test(params, suggest, .timeout = 5)
{
	static const char *const words[] = { "scenario", "smmu", "workload.cmdq" };

	cr_assert_str_eq(param_suggest(tparams, NT, "btach"), "batch");
	cr_assert_str_eq(param_suggest(tparams, NT, "mod"), "mode");
	cr_assert_str_eq(param_suggest(tparams, NT, "lab"), "label", "a prefix");
	cr_assert_null(param_suggest(tparams, NT, "frobnicate"));
	cr_assert_str_eq(param_suggest_word(words, 3, "smmus"), "smmu");
	cr_assert_str_eq(param_suggest_word(words, 3, "workload.cmd"), "workload.cmdq");
	cr_assert_null(param_suggest_word(words, 3, "machine"));
	cr_assert_eq(param_edit_distance("kitten", "sitting"), 3);
	cr_assert_eq(param_edit_distance("", "abc"), 3);
}

Test(params, describe, .timeout = 5)
{
	char buf[64];

	param_describe_range(tp("batch"), buf, sizeof(buf));
	cr_assert_str_eq(buf, "[1, 64]");
	param_describe_range(tp("mode"), buf, sizeof(buf));
	cr_assert_str_eq(buf, "fast|slow|lazy");
	param_describe_range(tp("on"), buf, sizeof(buf));
	cr_assert_str_eq(buf, "true|false");
	param_describe_range(tp("seed"), buf, sizeof(buf));
	cr_assert_str_eq(buf, "any");
	cr_assert_str_eq(param_type_name(LAB_PARAM_DOUBLE), "double");
	cr_assert_eq(param_type_size(LAB_PARAM_STRING), sizeof(char *));
}

/* One broken copy of the good table per problem, and the first message it must produce. */
static void expect_table_error(struct lab_param *bad, size_t n, size_t size, const char *msg)
{
	char err[256] = "";

	cr_assert_eq(param_table_check(bad, n, size, err, sizeof(err)), -EINVAL, "%s", msg);
	cr_assert_str_eq(err, msg);
}

Test(params, table_check, .timeout = 5)
{
	struct lab_param t[NT];
	char err[256];

	cr_assert_eq(param_table_check(tparams, NT, sizeof(struct tcfg), err, sizeof(err)), 0, "%s",
		     err);
	memcpy(t, tparams, sizeof(t));
	t[2].def = "99";
	expect_table_error(t, NT, sizeof(struct tcfg),
			   "param 'batch': default '99' out of range: 99 not in [1, 64]");
	t[2].def = "many";
	expect_table_error(t, NT, sizeof(struct tcfg),
			   "param 'batch': default 'many' invalid: 'many' is not an integer");
	t[2].def = NULL;
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'batch': no default");
	memcpy(t, tparams, sizeof(t));
	t[1].key = "batch";
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'batch': duplicate key");
	memcpy(t, tparams, sizeof(t));
	t[0].key = "Bad-Key";
	expect_table_error(t, NT, sizeof(struct tcfg),
			   "param 'Bad-Key': key must match [a-z0-9_]+");
	memcpy(t, tparams, sizeof(t));
	t[0].help = "";
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'on': no help text");
	memcpy(t, tparams, sizeof(t));
	t[2].min = 65;
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'batch': min 65 > max 64");
	memcpy(t, tparams, sizeof(t));
	t[4].choices = NULL;
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'mode': enum without choices");
	memcpy(t, tparams, sizeof(t));
	t[0].type = (enum lab_param_type)42;
	expect_table_error(t, NT, sizeof(struct tcfg), "param 'on': unknown type 42");
	memcpy(t, tparams, sizeof(t));
	t[2].offset = 3;
	expect_table_error(t, NT, sizeof(struct tcfg),
			   "param 'batch': offset 3 not aligned for uint");
	expect_table_error((struct lab_param *)tparams, NT, 16,
			   "param 'batch': offset 16 + size 8 > config size 16");
}
