/* SPDX-License-Identifier: MIT */
/*
 * params -- typed parameter tables: parse, check, format and describe the values a struct
 * lab_param table declares, and sanity-check the table itself. The one place that words a
 * value error ("70 not in [3, 20]"); the scenario loader only adds the location.
 */
#include "params/params.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A parsed value before it is stored; which member is live follows the param's type. */
union param_value {
	bool b;
	int64_t i;
	uint64_t u;
	double d;
	int e;
	const char *s;
};

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* min == max == 0 is the "no range" convention (params.h). */
static bool has_range(const struct lab_param *p)
{
	return !(p->min == 0 && p->max == 0);
}

static void format_range(const struct lab_param *p, char *buf, size_t len)
{
	if (p->type == LAB_PARAM_DOUBLE)
		snprintf(buf, len, "[%g, %g]", p->min, p->max);
	else
		snprintf(buf, len, "[%.0f, %.0f]", p->min, p->max);
}

static bool out_of_range(const struct lab_param *p, double v)
{
	return has_range(p) && (v < p->min || v > p->max);
}

static int digit_value(char c, int base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static uint64_t suffix_multiplier(char c)
{
	switch (c) {
	case 'k':
		return 1000;
	case 'M':
		return 1000000;
	case 'G':
		return 1000000000;
	default:
		return 1;
	}
}

/*
 * [+-] then decimal or 0x hex digits, then an optional k/M/G (x1000). A leading 0 is not
 * octal: "010" is ten, as a reader of the INI file expects. 0, -EINVAL or -ERANGE.
 */
static int parse_magnitude(const char *text, bool *neg, uint64_t *mag)
{
	const char *s = text;
	unsigned int base = 10;
	uint64_t v = 0, mult;
	bool any = false;
	int d;

	*neg = *s == '-';
	if (*s == '-' || *s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; (d = digit_value(*s, (int)base)) >= 0; s++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base)
			return -ERANGE;
		v = v * base + (uint64_t)d;
		any = true;
	}
	mult = suffix_multiplier(*s);
	if (mult != 1)
		s++;
	if (!any || *s)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*mag = v * mult;
	return 0;
}

static int parse_int(const struct lab_param *p, const char *text, union param_value *v, char *err,
		     size_t err_len)
{
	char range[96];
	uint64_t mag;
	bool neg;
	int rc = parse_magnitude(text, &neg, &mag);

	if (rc == -EINVAL)
		return fail(err, err_len, rc, "'%s' is not an integer", text);
	if (rc == -ERANGE || mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		return fail(err, err_len, -ERANGE, "'%s' does not fit in 64 bits", text);
	/* -(mag - 1) - 1 reaches INT64_MIN without overflowing */
	v->i = neg && mag ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
	format_range(p, range, sizeof(range));
	if (out_of_range(p, (double)v->i))
		return fail(err, err_len, -ERANGE, "%" PRId64 " not in %s", v->i, range);
	return 0;
}

static int parse_uint(const struct lab_param *p, const char *text, union param_value *v, char *err,
		      size_t err_len)
{
	char range[96];
	uint64_t mag;
	bool neg;
	int rc = parse_magnitude(text, &neg, &mag);

	if (rc == -EINVAL)
		return fail(err, err_len, rc, "'%s' is not an integer", text);
	if (rc == -ERANGE)
		return fail(err, err_len, rc, "'%s' does not fit in 64 bits", text);
	if (neg && mag)
		return fail(err, err_len, -ERANGE, "'%s' is negative", text);
	v->u = mag;
	format_range(p, range, sizeof(range));
	if (out_of_range(p, (double)v->u))
		return fail(err, err_len, -ERANGE, "%" PRIu64 " not in %s", v->u, range);
	return 0;
}

static int parse_double(const struct lab_param *p, const char *text, union param_value *v,
			char *err, size_t err_len)
{
	char range[96], *end;

	errno = 0;
	v->d = strtod(text, &end);
	if (!*text || *end || !isfinite(v->d))
		return fail(err, err_len, -EINVAL, "'%s' is not a number", text);
	if (errno == ERANGE)
		return fail(err, err_len, -ERANGE, "'%s' is out of range for a double", text);
	format_range(p, range, sizeof(range));
	if (out_of_range(p, v->d))
		return fail(err, err_len, -ERANGE, "%g not in %s", v->d, range);
	return 0;
}

static int parse_bool(const char *text, union param_value *v, char *err, size_t err_len)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < LAB_ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(text, yes[i]) || !strcasecmp(text, no[i])) {
			v->b = !strcasecmp(text, yes[i]);
			return 0;
		}
	}
	return fail(err, err_len, -EINVAL, "'%s' is not one of: true, false", text);
}

static void join_choices(const char *const *choices, const char *sep, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; choices && choices[i] && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", choices[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static int parse_enum(const struct lab_param *p, const char *text, union param_value *v, char *err,
		      size_t err_len)
{
	char list[256];

	for (int i = 0; p->choices && p->choices[i]; i++) {
		if (!strcmp(text, p->choices[i])) {
			v->e = i;
			return 0;
		}
	}
	join_choices(p->choices, ", ", list, sizeof(list));
	return fail(err, err_len, -EINVAL, "'%s' is not one of: %s", text, list);
}

static int parse_value(const struct lab_param *p, const char *text, union param_value *v, char *err,
		       size_t err_len)
{
	switch (p->type) {
	case LAB_PARAM_BOOL:
		return parse_bool(text, v, err, err_len);
	case LAB_PARAM_INT:
		return parse_int(p, text, v, err, err_len);
	case LAB_PARAM_UINT:
		return parse_uint(p, text, v, err, err_len);
	case LAB_PARAM_DOUBLE:
		return parse_double(p, text, v, err, err_len);
	case LAB_PARAM_ENUM:
		return parse_enum(p, text, v, err, err_len);
	case LAB_PARAM_STRING:
		v->s = text;
		return 0;
	}
	return fail(err, err_len, -EINVAL, "unknown parameter type %d", (int)p->type);
}

/* The field of p in config, as bytes: the types' own alignment is checked by the table check. */
static void *field(const struct lab_param *p, void *config)
{
	return (char *)config + p->offset;
}

static const void *cfield(const struct lab_param *p, const void *config)
{
	return (const char *)config + p->offset;
}

static int store_value(const struct lab_param *p, const union param_value *v, void *config)
{
	void *f = field(p, config);
	char *dup;

	switch (p->type) {
	case LAB_PARAM_BOOL:
		memcpy(f, &v->b, sizeof(v->b));
		break;
	case LAB_PARAM_INT:
		memcpy(f, &v->i, sizeof(v->i));
		break;
	case LAB_PARAM_UINT:
		memcpy(f, &v->u, sizeof(v->u));
		break;
	case LAB_PARAM_DOUBLE:
		memcpy(f, &v->d, sizeof(v->d));
		break;
	case LAB_PARAM_ENUM:
		memcpy(f, &v->e, sizeof(v->e));
		break;
	case LAB_PARAM_STRING:
		dup = strdup(v->s);
		if (!dup)
			return -ENOMEM;
		free(*(char **)f);
		*(char **)f = dup;
		break;
	}
	return 0;
}

const struct lab_param *param_find(const struct lab_param *table, size_t n, const char *key)
{
	for (size_t i = 0; table && i < n; i++) {
		if (table[i].key && !strcmp(table[i].key, key))
			return &table[i];
	}
	return NULL;
}

size_t param_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64], prev;

	if (la >= LAB_ARRAY_SIZE(row) || lb >= LAB_ARRAY_SIZE(row))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;

			prev = row[j];
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
	}
	return row[lb];
}

/* Lower is closer; SIZE_MAX means "not a plausible typo of key". */
static size_t suggest_score(const char *candidate, const char *key)
{
	size_t len = strlen(key), limit = len / 3 > 2 ? len / 3 : 2;
	size_t d = param_edit_distance(key, candidate);

	if (d <= limit)
		return d;
	if (len >= 3 && !strncmp(candidate, key, len))
		return limit + 1;
	return SIZE_MAX;
}

const char *param_suggest_word(const char *const *words, size_t n, const char *key)
{
	const char *best = NULL;
	size_t best_score = SIZE_MAX;

	for (size_t i = 0; words && i < n; i++) {
		size_t score = words[i] ? suggest_score(words[i], key) : SIZE_MAX;

		if (score < best_score) {
			best = words[i];
			best_score = score;
		}
	}
	return best;
}

const char *param_suggest(const struct lab_param *table, size_t n, const char *key)
{
	const char *best = NULL;
	size_t best_score = SIZE_MAX;

	for (size_t i = 0; table && i < n; i++) {
		size_t score = table[i].key ? suggest_score(table[i].key, key) : SIZE_MAX;

		if (score < best_score) {
			best = table[i].key;
			best_score = score;
		}
	}
	return best;
}

int param_check(const struct lab_param *p, const char *text, char *err, size_t err_len)
{
	union param_value v;

	return parse_value(p, text, &v, err, err_len);
}

int param_parse(const struct lab_param *p, const char *text, void *config, char *err,
		size_t err_len)
{
	union param_value v;
	int rc = parse_value(p, text, &v, err, err_len);

	if (rc)
		return rc;
	rc = store_value(p, &v, config);
	if (rc)
		return fail(err, err_len, rc, "out of memory");
	return 0;
}

/*
 * A string survives a trip through an INI line unless inih would change it: it trims
 * surrounding whitespace, ends the line at a newline and starts a comment at " ;".
 */
static bool ini_safe_string(const char *s)
{
	size_t len = strlen(s);

	if (len && (strchr(" \t", s[0]) || strchr(" \t", s[len - 1])))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n' || s[i] == '\r' || (s[i] == ';' && i && strchr(" \t", s[i - 1])))
			return false;
	}
	return true;
}

/*
 * d in the fewest significant digits that read back as d ("4.8", not "4.7999999999999998"):
 * what a user wrote comes back as written, and every value still round-trips exactly.
 */
static int format_double(char *buf, size_t len, double d)
{
	char tmp[40];

	for (int prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			return snprintf(buf, len, "%s", tmp);
	}
	return snprintf(buf, len, "%.17g", d);
}

int param_format(const struct lab_param *p, const void *config, char *buf, size_t len)
{
	const void *f = cfield(p, config);
	union param_value v;
	int n = -1;

	switch (p->type) {
	case LAB_PARAM_BOOL:
		memcpy(&v.b, f, sizeof(v.b));
		n = snprintf(buf, len, "%s", v.b ? "true" : "false");
		break;
	case LAB_PARAM_INT:
		memcpy(&v.i, f, sizeof(v.i));
		n = snprintf(buf, len, "%" PRId64, v.i);
		break;
	case LAB_PARAM_UINT:
		memcpy(&v.u, f, sizeof(v.u));
		n = snprintf(buf, len, "%" PRIu64, v.u);
		break;
	case LAB_PARAM_DOUBLE:
		memcpy(&v.d, f, sizeof(v.d));
		n = format_double(buf, len, v.d);
		break;
	case LAB_PARAM_ENUM:
		memcpy(&v.e, f, sizeof(v.e));
		for (int i = 0; p->choices && p->choices[i]; i++) {
			if (i == v.e)
				n = snprintf(buf, len, "%s", p->choices[i]);
		}
		if (n < 0)
			return -EINVAL;
		break;
	case LAB_PARAM_STRING:
		memcpy(&v.s, f, sizeof(v.s));
		if (v.s && !ini_safe_string(v.s))
			return -EINVAL;
		n = snprintf(buf, len, "%s", v.s ? v.s : "");
		break;
	}
	if (n < 0)
		return -EINVAL;
	return (size_t)n < len ? 0 : -ENOSPC;
}

static int check_default(const struct lab_param *p, char *err, size_t err_len)
{
	char why[256];
	int rc;

	if (!p->def)
		return fail(err, err_len, -EINVAL, "param '%s': no default", p->key);
	rc = param_check(p, p->def, why, sizeof(why));
	if (rc == -ERANGE)
		return fail(err, err_len, -EINVAL, "param '%s': default '%s' out of range: %s",
			    p->key, p->def, why);
	if (rc)
		return fail(err, err_len, -EINVAL, "param '%s': default '%s' invalid: %s", p->key,
			    p->def, why);
	return 0;
}

int param_set_defaults(const struct lab_param *table, size_t n, void *config, char *err,
		       size_t err_len)
{
	for (size_t i = 0; i < n; i++) {
		const struct lab_param *p = &table[i];
		int rc = check_default(p, err, err_len);

		if (rc)
			return rc;
		/* a fresh config: whatever the field held is not ours to free */
		if (p->type == LAB_PARAM_STRING)
			*(char **)field(p, config) = NULL;
		rc = param_parse(p, p->def, config, err, err_len);
		if (rc)
			return rc;
	}
	return 0;
}

size_t param_type_size(enum lab_param_type type)
{
	switch (type) {
	case LAB_PARAM_BOOL:
		return sizeof(bool);
	case LAB_PARAM_INT:
		return sizeof(int64_t);
	case LAB_PARAM_UINT:
		return sizeof(uint64_t);
	case LAB_PARAM_DOUBLE:
		return sizeof(double);
	case LAB_PARAM_ENUM:
		return sizeof(int);
	case LAB_PARAM_STRING:
		return sizeof(char *);
	}
	return 0;
}

static size_t param_type_align(enum lab_param_type type)
{
	switch (type) {
	case LAB_PARAM_BOOL:
		return _Alignof(bool);
	case LAB_PARAM_INT:
		return _Alignof(int64_t);
	case LAB_PARAM_UINT:
		return _Alignof(uint64_t);
	case LAB_PARAM_DOUBLE:
		return _Alignof(double);
	case LAB_PARAM_ENUM:
		return _Alignof(int);
	case LAB_PARAM_STRING:
		return _Alignof(char *);
	}
	return 1;
}

const char *param_type_name(enum lab_param_type type)
{
	switch (type) {
	case LAB_PARAM_BOOL:
		return "bool";
	case LAB_PARAM_INT:
		return "int";
	case LAB_PARAM_UINT:
		return "uint";
	case LAB_PARAM_DOUBLE:
		return "double";
	case LAB_PARAM_ENUM:
		return "enum";
	case LAB_PARAM_STRING:
		return "string";
	}
	return "unknown";
}

void param_describe_range(const struct lab_param *p, char *buf, size_t len)
{
	switch (p->type) {
	case LAB_PARAM_BOOL:
		snprintf(buf, len, "true|false");
		break;
	case LAB_PARAM_ENUM:
		join_choices(p->choices, "|", buf, len);
		break;
	case LAB_PARAM_STRING:
		snprintf(buf, len, "text");
		break;
	default:
		if (has_range(p))
			format_range(p, buf, len);
		else
			snprintf(buf, len, "any");
		break;
	}
}

static bool valid_key(const char *key)
{
	if (!*key)
		return false;
	for (; *key; key++) {
		if (!((*key >= 'a' && *key <= 'z') || (*key >= '0' && *key <= '9') || *key == '_'))
			return false;
	}
	return true;
}

static bool is_numeric(enum lab_param_type type)
{
	return type == LAB_PARAM_INT || type == LAB_PARAM_UINT || type == LAB_PARAM_DOUBLE;
}

/* Everything about one entry except uniqueness. */
static int check_entry(const struct lab_param *p, size_t config_size, char *err, size_t err_len)
{
	size_t size = param_type_size(p->type);

	if (!valid_key(p->key))
		return fail(err, err_len, -EINVAL, "param '%s': key must match [a-z0-9_]+", p->key);
	if (!p->help || !*p->help)
		return fail(err, err_len, -EINVAL, "param '%s': no help text", p->key);
	if (!size)
		return fail(err, err_len, -EINVAL, "param '%s': unknown type %d", p->key,
			    (int)p->type);
	if (is_numeric(p->type) && p->min > p->max)
		return fail(err, err_len, -EINVAL, "param '%s': min %g > max %g", p->key, p->min,
			    p->max);
	if (p->type == LAB_PARAM_UINT && p->min < 0)
		return fail(err, err_len, -EINVAL, "param '%s': uint with min %g < 0", p->key,
			    p->min);
	if (p->type == LAB_PARAM_ENUM && (!p->choices || !p->choices[0]))
		return fail(err, err_len, -EINVAL, "param '%s': enum without choices", p->key);
	if (p->offset > config_size || size > config_size - p->offset)
		return fail(err, err_len, -EINVAL,
			    "param '%s': offset %zu + size %zu > config size %zu", p->key,
			    p->offset, size, config_size);
	if (p->offset % param_type_align(p->type))
		return fail(err, err_len, -EINVAL, "param '%s': offset %zu not aligned for %s",
			    p->key, p->offset, param_type_name(p->type));
	return check_default(p, err, err_len);
}

int param_table_check(const struct lab_param *table, size_t n, size_t config_size, char *err,
		      size_t err_len)
{
	if (n && !table)
		return fail(err, err_len, -EINVAL, "no parameter table but %zu parameters", n);
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (!table[i].key)
			return fail(err, err_len, -EINVAL, "param #%zu: no key", i);
		rc = check_entry(&table[i], config_size, err, err_len);
		if (rc)
			return rc;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(table[i].key, table[j].key))
				return fail(err, err_len, -EINVAL, "param '%s': duplicate key",
					    table[i].key);
		}
	}
	return 0;
}

int param_copy(const struct lab_param *table, size_t n, void *dst, const void *src,
	       size_t config_size)
{
	memcpy(dst, src, config_size);
	/* first drop the aliases, so a failure half way leaves dst freeable */
	for (size_t i = 0; i < n; i++) {
		if (table[i].type == LAB_PARAM_STRING)
			*(char **)field(&table[i], dst) = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *s;

		if (table[i].type != LAB_PARAM_STRING)
			continue;
		s = *(char *const *)cfield(&table[i], src);
		if (!s)
			continue;
		*(char **)field(&table[i], dst) = strdup(s);
		if (!*(char **)field(&table[i], dst)) {
			param_free_strings(table, n, dst);
			return -ENOMEM;
		}
	}
	return 0;
}

void param_free_strings(const struct lab_param *table, size_t n, void *config)
{
	for (size_t i = 0; config && i < n; i++) {
		if (table[i].type == LAB_PARAM_STRING) {
			free(*(char **)field(&table[i], config));
			*(char **)field(&table[i], config) = NULL;
		}
	}
}
