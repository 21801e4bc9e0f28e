/* SPDX-License-Identifier: MIT */
/*
 * scenario -- load a scenario INI file and its --set overrides into a struct scenario,
 * reporting every problem at once as "FILE:LINE: [section] key: reason".
 *
 * Two steps. Reading (inih, through a reader that counts lines, since Debian's r55 gives the
 * handler no line number) turns the file into a list of entries and catches what only the
 * raw text shows: over-long lines, syntax errors, continuation lines, duplicate keys. Then
 * the entries and the --set ones (appended after the file's, so later wins) are applied in
 * an order where each step has what it needs: fixed sections and [plugins] first, then the
 * [plugin.NAME] sections (which need the plugin list), then [sweep] (which needs both), then
 * the --set values that replace sweep axes. Messages are collected with their line and
 * sorted, so they come out in file order whatever step found them.
 */
#include "scenario/scenario.h"

#include <assert.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"

/* inih reads into an INI_MAX_LINE buffer, so the longest line it keeps whole is one less. */
#define MAX_LINE SCENARIO_MAX_LINE
static_assert(SCENARIO_MAX_LINE == INI_MAX_LINE - 1, "SCENARIO_MAX_LINE follows inih's buffer");

/*
 * Every reason the loader gives, in one place (tests assert them). The location and the
 * "[section] key: " prefix are added by report().
 */
#define R_CANNOT_OPEN "cannot open: %s"
#define R_READ_ERROR "read error: %s"
#define R_NO_MEMORY "out of memory"
#define R_LINE_TOO_LONG "line longer than %d characters"
#define R_NO_BRACKET "expected ']' to close the section name"
#define R_NOT_KEY_VALUE "expected 'key = value'"
#define R_SYNTAX "syntax error"
#define R_CONTINUATION "indented line: continuation lines are not supported"
#define R_OUTSIDE_SECTION "key outside any section"
#define R_NO_KEY "missing key before '='"
#define R_DUPLICATE "duplicate key (first on line %d)"
#define R_UNKNOWN_SECTION "unknown section"
#define R_UNKNOWN_KEY "unknown key"
#define R_DID_YOU_MEAN ", did you mean '%s'?"
#define R_NOT_LISTED "plugin '%s' is not listed in [plugins]"
#define R_EMPTY_ITEM "empty item in list"
#define R_NO_VALUES "no values to sweep"
#define R_LISTED_TWICE "'%s' listed twice"
#define R_UNKNOWN_PLUGIN "unknown %s plugin '%s'"
#define R_WRONG_KIND "plugin '%s' is of kind %s, not %s"
#define R_BAD_PLUGIN "plugin '%s': %s"
#define R_NOT_SWEEPABLE "cannot be swept (name, workload and engine are fixed for a scenario)"
#define R_SECTION_NOT_SWEEPABLE "[%s] cannot be swept"
#define R_SWEPT_TWICE "swept twice (first on line %d)"
#define R_SET_SYNTAX "expected section.key=value"
#define R_MISSING_SCENARIO "missing section [scenario]"
#define R_MISSING_PLUGINS "missing [plugins] %s"

/* Sort keys for messages without a file line: whole-file problems, then --set ones. */
#define ORDER_FILE (INT_MAX / 2)
#define ORDER_SET (ORDER_FILE + 1)

/* One "key = value" (or a section header: key NULL) from the file or from --set. */
struct entry {
	char *section;
	char *key;
	char *value;
	int line;		/* file line, 0 for --set */
	const char *set;	/* the --set argument as given, or NULL */
	int order;		/* message sort key: line, or ORDER_SET + index */
	bool applied;		/* a --set that took effect (may replace a sweep axis) */
};

struct message {
	int order;
	size_t seq;
	char *text;
};

/* A name from [plugins], found or not: a [plugin.NAME] of a name that was listed but not
 * found has already been reported once, at the list. */
struct listed {
	char *name;
	uint32_t kind;
};

struct loader {
	const char *path;
	FILE *file;
	const struct plugin_lookup *lookup;
	struct scenario *s;

	/* reading */
	char *buf;
	size_t buf_cap;
	int line;
	bool prev_name;		/* inih's state: a key was read since the last header */
	bool continuation;	/* this line is one inih will hand over as a continuation */
	bool skip_section;	/* after a broken header: ignore keys until the next one */
	bool have_scenario;

	struct entry *entries;
	size_t n_entries, cap_entries;
	struct listed *listed;
	size_t n_listed, cap_listed;
	struct message *msgs;
	size_t n_msgs, cap_msgs;
	int *axis_lines;	/* the file line of each of s->axes, for "swept twice" */
	bool oom;
};

static void *grow(void *array, size_t *cap, size_t n, size_t size)
{
	size_t new_cap;
	void *p;

	if (n < *cap)
		return array;
	new_cap = *cap ? *cap * 2 : 16;
	p = realloc(array, new_cap * size);
	if (p)
		*cap = new_cap;
	return p;
}

static void add_message(struct loader *L, int order, char *text)
{
	struct message *m = grow(L->msgs, &L->cap_msgs, L->n_msgs, sizeof(*m));

	if (!m || !text) {
		free(text);
		L->oom = true;
		return;
	}
	L->msgs = m;
	m[L->n_msgs] = (struct message){ order, L->n_msgs, text };
	L->n_msgs++;
}

static char *vformat(const char *fmt, va_list ap)
{
	va_list ap2;
	char *s;
	int len;

	va_copy(ap2, ap);
	len = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (len < 0)
		return NULL;
	s = malloc((size_t)len + 1);
	if (s)
		vsnprintf(s, (size_t)len + 1, fmt, ap);
	return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *format(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	return s;
}

/*
 * The one place a message is put together: "LOCATION: [section] key: reason", where
 * LOCATION is "PATH:LINE", "--set ARG" or "PATH" (e NULL), and the section/key part shrinks
 * to "[section]: " or to nothing when they are NULL.
 */
static void report(struct loader *L, const struct entry *e, int line, const char *section,
		   const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void report(struct loader *L, const struct entry *e, int line, const char *section,
		   const char *key, const char *fmt, ...)
{
	char *where, *what, *reason;
	va_list ap;

	va_start(ap, fmt);
	reason = vformat(fmt, ap);
	va_end(ap);
	if (e && e->set)
		where = format("--set %s", e->set);
	else if (line)
		where = format("%s:%d", L->path, line);
	else
		where = format("%s", L->path);
	if (section && key)
		what = format("[%s] %s: ", section, key);
	else if (section)
		what = format("[%s]: ", section);
	else
		what = format("%s", "");
	if (where && what && reason)
		add_message(L, e ? e->order : line ? line : ORDER_FILE,
			    format("%s: %s%s", where, what, reason));
	else
		L->oom = true;
	free(where);
	free(what);
	free(reason);
}

/* The same, located at entry e (its line, or its --set). */
#define report_at(L, e, section, key, ...) report(L, e, (e)->line, section, key, __VA_ARGS__)

/* "unknown key" / "unknown section", with the did-you-mean when there is one. */
static void report_unknown(struct loader *L, const struct entry *e, const char *section,
			   const char *key, const char *what, const char *suggestion)
{
	if (suggestion)
		report_at(L, e, section, key, "%s" R_DID_YOU_MEAN, what, suggestion);
	else
		report_at(L, e, section, key, "%s", what);
}

static struct entry *add_entry(struct loader *L, const char *section, const char *key,
			       const char *value, int line, const char *set)
{
	struct entry *e = grow(L->entries, &L->cap_entries, L->n_entries, sizeof(*e));

	if (!e) {
		L->oom = true;
		return NULL;
	}
	L->entries = e;
	e = &e[L->n_entries];
	*e = (struct entry){ .section = strdup(section), .key = key ? strdup(key) : NULL,
			     .value = value ? strdup(value) : NULL, .line = line, .set = set,
			     .order = line };
	if (!e->section || (key && !e->key) || (value && !e->value)) {
		free(e->section);
		free(e->key);
		free(e->value);
		L->oom = true;
		return NULL;
	}
	L->n_entries++;
	return e;
}

static void free_entries(struct loader *L)
{
	for (size_t i = 0; i < L->n_entries; i++) {
		free(L->entries[i].section);
		free(L->entries[i].key);
		free(L->entries[i].value);
	}
	free(L->entries);
}

/* ---- reading ------------------------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static void rstrip(char *s)
{
	size_t len = strlen(s);

	while (len && is_blank(s[len - 1]))
		s[--len] = '\0';
}

static char *trim(char *s)
{
	while (is_blank(*s))
		s++;
	rstrip(s);
	return s;
}

/* Where inih's find_chars_or_comment(s, chars) stops: a char of chars, or a " ;" comment. */
static const char *find_or_comment(const char *s, const char *chars)
{
	bool was_space = false;

	for (; *s && !strchr(chars, *s) && !(was_space && *s == ';'); s++)
		was_space = is_blank(*s);
	return s;
}

static void read_header(struct loader *L, const char *t)
{
	const char *end = find_or_comment(t + 1, "]");
	char name[INI_MAX_LINE];

	if (*end != ']') {
		report(L, NULL, L->line, NULL, NULL, R_NO_BRACKET);
		L->skip_section = true;
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(end - t - 1), t + 1);
	add_entry(L, name, NULL, NULL, L->line, NULL);
	L->prev_name = false;
	L->skip_section = false;
}

/*
 * Classify a line the way inih r55 will (ini.c, ini_parse_stream): it sees the same text, so
 * this knows which lines it will hand to on_key as continuations and which it will reject
 * without calling anyone, and reports those here with their line.
 */
static void classify_line(struct loader *L, const char *line)
{
	const char *start = line, *t, *end;

	if (L->line == 1 && !strncmp(start, "\xEF\xBB\xBF", 3))
		start += 3;
	t = start;
	while (is_blank(*t))
		t++;
	L->continuation = false;
	if (!*t || *t == ';' || *t == '#')
		return;
	if (L->prev_name && t > line) {
		L->continuation = true;
		return;
	}
	if (*t == '[') {
		read_header(L, t);
		return;
	}
	end = find_or_comment(t, "=:");
	if (*end == '=' || *end == ':')
		L->prev_name = end > t;
	else
		report(L, NULL, L->line, NULL, NULL, R_NOT_KEY_VALUE);
}

/* inih's reader: one line per call, counted; over-long lines reported and blanked. */
static char *read_line(char *str, int num, void *stream)
{
	struct loader *L = stream;
	ssize_t len = getline(&L->buf, &L->buf_cap, L->file);

	if (len < 0)
		return NULL;
	L->line++;
	rstrip(L->buf);
	len = (ssize_t)strlen(L->buf);
	if (len > MAX_LINE || len >= num) {
		report(L, NULL, L->line, NULL, NULL, R_LINE_TOO_LONG, MAX_LINE);
		str[0] = '\0';
		return str;
	}
	memcpy(str, L->buf, (size_t)len + 1);
	classify_line(L, str);
	return str;
}

static const struct entry *find_key(const struct loader *L, const char *section, const char *key)
{
	for (size_t i = 0; i < L->n_entries; i++) {
		const struct entry *e = &L->entries[i];

		if (e->key && !strcmp(e->section, section) && !strcmp(e->key, key))
			return e;
	}
	return NULL;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct loader *L = user;
	const struct entry *first;

	if (L->skip_section)
		return 1;
	if (L->continuation) {
		report(L, NULL, L->line, section, name, R_CONTINUATION);
		return 1;
	}
	if (!*section) {
		report(L, NULL, L->line, NULL, NULL, R_OUTSIDE_SECTION);
		return 1;
	}
	if (!*name) {
		report(L, NULL, L->line, section, NULL, R_NO_KEY);
		return 1;
	}
	first = find_key(L, section, name);
	if (first) {
		report(L, NULL, L->line, section, name, R_DUPLICATE, first->line);
		return 1;
	}
	add_entry(L, section, name, value, L->line, NULL);
	return 1;
}

static bool reported_line(const struct loader *L, int line)
{
	for (size_t i = 0; i < L->n_msgs; i++) {
		if (L->msgs[i].order == line)
			return true;
	}
	return false;
}

static void read_file(struct loader *L)
{
	int rc;

	L->file = fopen(L->path, "r");
	if (!L->file) {
		report(L, NULL, 0, NULL, NULL, R_CANNOT_OPEN, strerror(errno));
		return;
	}
	rc = ini_parse_stream(read_line, L, on_key, L);
	if (ferror(L->file))
		report(L, NULL, 0, NULL, NULL, R_READ_ERROR, strerror(errno));
	else if (rc == -2)
		L->oom = true;
	else if (rc > 0 && !reported_line(L, rc))
		report(L, NULL, rc, NULL, NULL, R_SYNTAX); /* a case classify_line missed */
	fclose(L->file);
	L->file = NULL;
}

/* "section.key=value": "cpus" is scenario.cpus, "sweep.smmu.queue_shift" a sweep axis. */
static void read_set(struct loader *L, const char *arg, int index)
{
	char *copy = strdup(arg), *eq, *target, *value, *dot, *key;
	const char *section;
	struct entry *e;

	if (!copy) {
		L->oom = true;
		return;
	}
	eq = strchr(copy, '=');
	if (eq)
		*eq = '\0';
	target = trim(copy);
	value = eq ? trim(eq + 1) : NULL;
	dot = strrchr(target, '.');
	if (!strncmp(target, "sweep.", 6)) {
		section = "sweep";
		key = target + 6;
	} else if (dot) {
		*dot = '\0';
		section = target;
		key = dot + 1;
	} else {
		section = "scenario";
		key = target;
	}
	e = add_entry(L, section, key, value ? value : "", 0, arg);
	if (e) {
		e->order = ORDER_SET + index;
		if (!value || !*section || !*key) {
			report_at(L, e, NULL, NULL, R_SET_SYNTAX);
			e->key[0] = '\0'; /* reported: the steps below skip it (skipped()) */
		}
	}
	free(copy);
}

/* ---- applying -------------------------------------------------------------------------- */

enum section_kind { SEC_FIXED, SEC_SWEEP, SEC_PLUGINS, SEC_PLUGIN, SEC_UNKNOWN };

static enum section_kind section_kind(const char *name)
{
	if (scenario_find_section(name))
		return SEC_FIXED;
	if (!strcmp(name, "sweep"))
		return SEC_SWEEP;
	if (!strcmp(name, "plugins"))
		return SEC_PLUGINS;
	if (!strncmp(name, "plugin.", 7) && name[7])
		return SEC_PLUGIN;
	return SEC_UNKNOWN;
}

static const char *suggest_section(const char *name)
{
	const char *words[64] = { "sweep", "plugins" };
	size_t n = 2, n_sections;
	const struct scenario_section *sections = scenario_sections(&n_sections);

	for (size_t i = 0; i < n_sections && n < LAB_ARRAY_SIZE(words); i++)
		words[n++] = sections[i].name;
	return param_suggest_word(words, n, name);
}

static void apply_fixed(struct loader *L, struct entry *e)
{
	const struct scenario_section *sec = scenario_find_section(e->section);
	const struct lab_param *p = param_find(sec->params, sec->n_params, e->key);
	char err[256];

	if (!p) {
		report_unknown(L, e, e->section, e->key, R_UNKNOWN_KEY,
			       param_suggest(sec->params, sec->n_params, e->key));
		return;
	}
	if (param_parse(p, e->value, (char *)&L->s->base + sec->offset, err, sizeof(err)))
		report_at(L, e, e->section, e->key, "%s", err);
	else
		e->applied = true;
}

static const char *kind_name(uint32_t kind)
{
	return kind == LAB_KIND_CMDQ ? "cmdq" : kind == LAB_KIND_IOVA ? "iova" : "unknown";
}

static const struct lab_plugin *lookup_any(const struct plugin_lookup *pl, const char *name)
{
	return pl && pl->find ? pl->find(pl->ctx, name) : NULL;
}

static const struct lab_plugin *lookup_kind(const struct plugin_lookup *pl, uint32_t kind,
					    const char *name)
{
	const struct lab_plugin *p;

	if (pl && pl->find_kind)
		return pl->find_kind(pl->ctx, kind, name);
	p = lookup_any(pl, name);
	return p && p->kind == kind ? p : NULL;
}

static const char *suggest_plugin(const struct plugin_lookup *pl, uint32_t kind, const char *name)
{
	const char *words[256];
	const struct lab_plugin *p;
	size_t n = 0;

	for (size_t i = 0; pl && pl->at && n < LAB_ARRAY_SIZE(words); i++) {
		p = pl->at(pl->ctx, i);
		if (!p)
			break;
		if (p->kind == kind && p->name)
			words[n++] = p->name;
	}
	return param_suggest_word(words, n, name);
}

static void free_plugins(struct scenario_plugin *list, size_t n)
{
	for (size_t i = 0; list && i < n; i++) {
		param_free_strings(list[i].desc->params, list[i].desc->n_params, list[i].config);
		free(list[i].config);
	}
	free(list);
}

/* Remember a listed name (found or not) so that [plugin.NAME] can tell "listed" apart. */
static void add_listed(struct loader *L, const char *name, uint32_t kind)
{
	struct listed *l = grow(L->listed, &L->cap_listed, L->n_listed, sizeof(*l));

	if (!l) {
		L->oom = true;
		return;
	}
	L->listed = l;
	l[L->n_listed].name = strdup(name);
	l[L->n_listed].kind = kind;
	if (!l[L->n_listed].name)
		L->oom = true;
	else
		L->n_listed++;
}

static void forget_listed(struct loader *L, uint32_t kind)
{
	size_t kept = 0;

	for (size_t i = 0; i < L->n_listed; i++) {
		if (L->listed[i].kind == kind)
			free(L->listed[i].name);
		else
			L->listed[kept++] = L->listed[i];
	}
	L->n_listed = kept;
}

static bool is_listed(const struct loader *L, const char *name)
{
	for (size_t i = 0; i < L->n_listed; i++) {
		if (!strcmp(L->listed[i].name, name))
			return true;
	}
	return false;
}

/* One plugin named in [plugins] KIND: found, of that kind, with defaults that load. */
static int add_plugin(struct loader *L, struct entry *e, uint32_t kind, const char *name,
		      struct scenario_plugin *list, size_t *n)
{
	const struct lab_plugin *p = lookup_kind(L->lookup, kind, name);
	char err[256];

	if (!p) {
		const struct lab_plugin *other = lookup_any(L->lookup, name);
		char what[128];

		if (other && other->kind != kind) {
			report_at(L, e, e->section, e->key, R_WRONG_KIND, name, kind_name(other->kind),
				  kind_name(kind));
			return -ENOENT;
		}
		snprintf(what, sizeof(what), R_UNKNOWN_PLUGIN, kind_name(kind), name);
		report_unknown(L, e, e->section, e->key, what, suggest_plugin(L->lookup, kind, name));
		return -ENOENT;
	}
	list[*n].desc = p;
	list[*n].config = calloc(1, p->config_size ? p->config_size : 1);
	if (!list[*n].config) {
		L->oom = true;
		return -ENOMEM;
	}
	if (param_set_defaults(p->params, p->n_params, list[*n].config, err, sizeof(err))) {
		report_at(L, e, e->section, e->key, R_BAD_PLUGIN, name, err);
		param_free_strings(p->params, p->n_params, list[*n].config);
		free(list[*n].config);
		return -EINVAL;
	}
	(*n)++;
	return 0;
}

/*
 * Split a comma-separated list in place into trimmed items. An empty value is an empty list;
 * an empty item ("1,,2", "1,") is -EINVAL. *items is allocated.
 */
static int split_list(char *text, char ***items, size_t *n)
{
	size_t max = 1;
	char *next;

	*n = 0;
	for (const char *c = text; *c; c++)
		max += *c == ',';
	*items = calloc(max, sizeof(**items));
	if (!*items)
		return -ENOMEM;
	if (!*trim(text))
		return 0;
	for (char *item = text; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		item = trim(item);
		if (!*item)
			return -EINVAL;
		(*items)[(*n)++] = item;
	}
	return 0;
}

/* [plugins] cmdq = a, b / iova = x, y: replaces that kind's list. */
static void apply_plugin_list(struct loader *L, struct entry *e)
{
	static const char *const keys[] = { "cmdq", "iova" };
	uint32_t kind = !strcmp(e->key, "cmdq") ? LAB_KIND_CMDQ :
			!strcmp(e->key, "iova") ? LAB_KIND_IOVA : 0;
	struct scenario_plugin *list = NULL, **old;
	size_t n_items, n = 0, *old_n;
	char **items = NULL;
	int rc;

	if (!kind) {
		report_unknown(L, e, e->section, e->key, R_UNKNOWN_KEY,
			       param_suggest_word(keys, LAB_ARRAY_SIZE(keys), e->key));
		return;
	}
	rc = split_list(e->value, &items, &n_items);
	if (rc == -EINVAL)
		report_at(L, e, e->section, e->key, R_EMPTY_ITEM);
	if (rc)
		goto out;
	list = calloc(n_items ? n_items : 1, sizeof(*list));
	if (!list) {
		L->oom = true;
		goto out;
	}
	forget_listed(L, kind);
	for (size_t i = 0; i < n_items; i++) {
		bool twice = false;

		for (size_t j = 0; j < i; j++)
			twice |= !strcmp(items[i], items[j]);
		if (twice) {
			report_at(L, e, e->section, e->key, R_LISTED_TWICE, items[i]);
			continue;
		}
		add_listed(L, items[i], kind);
		add_plugin(L, e, kind, items[i], list, &n);
	}
	old = kind == LAB_KIND_CMDQ ? &L->s->cmdq : &L->s->iova;
	old_n = kind == LAB_KIND_CMDQ ? &L->s->n_cmdq : &L->s->n_iova;
	free_plugins(*old, *old_n);
	*old = list;
	*old_n = n;
	e->applied = true;
out:
	free(items);
}

/* Calls fn for every listed plugin called name (cmdq ones, then iova); how many there were. */
static size_t for_each_named(struct scenario *s, const char *name,
			     void (*fn)(struct scenario_plugin *sp, void *arg), void *arg)
{
	size_t found = 0;

	for (size_t i = 0; i < s->n_cmdq + s->n_iova; i++) {
		struct scenario_plugin *sp = i < s->n_cmdq ? &s->cmdq[i] : &s->iova[i - s->n_cmdq];

		if (!strcmp(sp->desc->name, name)) {
			found++;
			if (fn)
				fn(sp, arg);
		}
	}
	return found;
}

struct plugin_key {
	struct loader *L;
	struct entry *e;
	const char *key;	/* the key within the plugin's table */
	const char *shown;	/* the key as the message shows it */
	const char *prefix;	/* put before a suggestion: "" or "plugin.NAME." */
	char **values;		/* NULL: parse e->value into the config; else check these */
	size_t n_values;
	bool bad;
};

static void plugin_key(struct scenario_plugin *sp, void *arg)
{
	struct plugin_key *k = arg;
	const struct lab_plugin *d = sp->desc;
	const struct lab_param *p = param_find(d->params, d->n_params, k->key);
	const char *section = k->values ? "sweep" : k->e->section;
	char err[256], suggestion[128];
	const char *near;

	if (!p) {
		near = param_suggest(d->params, d->n_params, k->key);
		snprintf(suggestion, sizeof(suggestion), "%s%s", k->prefix, near ? near : "");
		report_unknown(k->L, k->e, section, k->shown, R_UNKNOWN_KEY, near ? suggestion : NULL);
		k->bad = true;
		return;
	}
	for (size_t i = 0; k->values && i < k->n_values; i++) {
		if (param_check(p, k->values[i], err, sizeof(err))) {
			report_at(k->L, k->e, section, k->shown, "%s", err);
			k->bad = true;
		}
	}
	if (!k->values && param_parse(p, k->e->value, sp->config, err, sizeof(err))) {
		report_at(k->L, k->e, section, k->shown, "%s", err);
		k->bad = true;
	}
}

/* A [plugin.NAME] header or key (from the file or --set). */
static void apply_plugin_entry(struct loader *L, struct entry *e)
{
	const char *name = e->section + strlen("plugin.");
	struct plugin_key k = { L, e, e->key, e->key, "", NULL, 0, false };

	if (!for_each_named(L->s, name, NULL, NULL)) {
		/* a listed name that was not found is reported at the list already; a file key
		 * under an unlisted section is covered by the report at its header */
		if (!is_listed(L, name) && (!e->key || e->set))
			report_at(L, e, e->section, NULL, R_NOT_LISTED, name);
		return;
	}
	if (!e->key)
		return;
	for_each_named(L->s, name, plugin_key, &k);
	e->applied = !k.bad;
}

static bool fixed_per_scenario(const char *section, const char *key)
{
	return !strcmp(section, "scenario") &&
	       (!strcmp(key, "name") || !strcmp(key, "workload") || !strcmp(key, "engine"));
}

/* A [sweep] target in a fixed section: the key exists, may be swept, takes every value. */
static bool check_fixed_sweep(struct loader *L, struct entry *e, const char *section,
			      const char *key, char **values, size_t n)
{
	const struct scenario_section *sec = scenario_find_section(section);
	const struct lab_param *p = param_find(sec->params, sec->n_params, key);
	const char *near;
	char err[256], suggestion[160];
	bool ok = true;

	if (!p) {
		near = param_suggest(sec->params, sec->n_params, key);
		/* suggest in the form the user wrote: bare keys stay bare */
		snprintf(suggestion, sizeof(suggestion), "%s%s%s", strchr(e->key, '.') ? section : "",
			 strchr(e->key, '.') ? "." : "", near ? near : "");
		report_unknown(L, e, "sweep", e->key, R_UNKNOWN_KEY, near ? suggestion : NULL);
		return false;
	}
	if (fixed_per_scenario(section, key)) {
		report_at(L, e, "sweep", e->key, R_NOT_SWEEPABLE);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (param_check(p, values[i], err, sizeof(err))) {
			report_at(L, e, "sweep", e->key, "%s", err);
			ok = false;
		}
	}
	return ok;
}

static bool check_plugin_sweep(struct loader *L, struct entry *e, const char *section,
			       const char *key, char **values, size_t n)
{
	const char *name = section + strlen("plugin.");
	char prefix[160];
	struct plugin_key k = { L, e, key, e->key, prefix, values, n, false };

	snprintf(prefix, sizeof(prefix), "%s.", section);
	if (!for_each_named(L->s, name, plugin_key, &k)) {
		if (!is_listed(L, name))
			report_at(L, e, "sweep", e->key, R_NOT_LISTED, name);
		return false;
	}
	return !k.bad;
}

struct sweep_axis *scenario_find_axis(const struct scenario *s, const char *section,
				      const char *key)
{
	for (size_t i = 0; i < s->n_axes; i++) {
		if (!strcmp(s->axes[i].section, section) && !strcmp(s->axes[i].key, key))
			return &s->axes[i];
	}
	return NULL;
}

static void free_values(char **values, size_t n)
{
	for (size_t i = 0; values && i < n; i++)
		free(values[i]);
	free(values);
}

static char **dup_values(char *const *values, size_t n)
{
	char **copy = calloc(n ? n : 1, sizeof(*copy));

	for (size_t i = 0; copy && i < n; i++) {
		copy[i] = strdup(values[i]);
		if (!copy[i]) {
			free_values(copy, i);
			return NULL;
		}
	}
	return copy;
}

/* Replace an axis's values (a --set wins over the file). */
static void set_axis_values(struct loader *L, struct sweep_axis *a, char *const *values, size_t n)
{
	char **copy = dup_values(values, n);

	if (!copy) {
		L->oom = true;
		return;
	}
	free_values(a->values, a->n_values);
	a->values = copy;
	a->n_values = n;
}

static void add_axis(struct loader *L, struct entry *e, const char *section, const char *key,
		     char *const *values, size_t n)
{
	struct scenario *s = L->s;
	struct sweep_axis *a = scenario_find_axis(s, section, key);
	size_t cap = s->n_axes;
	int *lines;

	if (a && e->set) {
		set_axis_values(L, a, values, n);
		return;
	}
	if (a) {
		report_at(L, e, "sweep", e->key, R_SWEPT_TWICE, L->axis_lines[a - s->axes]);
		return;
	}
	a = realloc(s->axes, (s->n_axes + 1) * sizeof(*a));
	if (a)
		s->axes = a;
	lines = a ? grow(L->axis_lines, &cap, s->n_axes, sizeof(int)) : NULL;
	if (!lines) {
		L->oom = true;
		return;
	}
	L->axis_lines = lines;
	a = &s->axes[s->n_axes];
	*a = (struct sweep_axis){ strdup(section), strdup(key), dup_values(values, n), n };
	if (!a->section || !a->key || !a->values) {
		free(a->section);
		free(a->key);
		free_values(a->values, n);
		L->oom = true;
		return;
	}
	L->axis_lines[s->n_axes++] = e->line;
}

/* [sweep] section.key = v1, v2 (a bare key means [scenario]). */
static void apply_sweep(struct loader *L, struct entry *e)
{
	char *target = strdup(e->key), *text = strdup(e->value), **values = NULL, *dot, what[160];
	const char *section = "scenario", *key;
	bool ok = false;
	size_t n;
	int rc;

	if (!target || !text) {
		L->oom = true;
		goto out;
	}
	dot = strrchr(target, '.');
	key = dot ? dot + 1 : target;
	if (dot) {
		*dot = '\0';
		section = target;
	}
	rc = split_list(text, &values, &n);
	if (rc == -EINVAL || (!rc && !n))
		report_at(L, e, "sweep", e->key, rc ? R_EMPTY_ITEM : R_NO_VALUES);
	if (rc || !n)
		goto out;
	switch (section_kind(section)) {
	case SEC_FIXED:
		ok = check_fixed_sweep(L, e, section, key, values, n);
		break;
	case SEC_PLUGIN:
		ok = check_plugin_sweep(L, e, section, key, values, n);
		break;
	case SEC_SWEEP:
	case SEC_PLUGINS:
		report_at(L, e, "sweep", e->key, R_SECTION_NOT_SWEEPABLE, section);
		break;
	case SEC_UNKNOWN:
		snprintf(what, sizeof(what), "%s '%s'", R_UNKNOWN_SECTION, section);
		report_unknown(L, e, "sweep", e->key, what, suggest_section(section));
		break;
	}
	if (ok)
		add_axis(L, e, section, key, values, n);
out:
	free(values);
	free(text);
	free(target);
}

/* A --set of a swept key runs that one value: the axis keeps its column, with one value. */
static void apply_set_over_sweep(struct loader *L, struct entry *e)
{
	struct sweep_axis *a = scenario_find_axis(L->s, e->section, e->key);

	if (a)
		set_axis_values(L, a, &e->value, 1);
}

static bool listed_kind(const struct loader *L, uint32_t kind)
{
	for (size_t i = 0; i < L->n_listed; i++) {
		if (L->listed[i].kind == kind)
			return true;
	}
	return false;
}

static void check_required(struct loader *L)
{
	int workload = L->s->base.scenario.workload;

	if (!L->have_scenario)
		report(L, NULL, 0, NULL, NULL, R_MISSING_SCENARIO);
	if ((workload == WORKLOAD_CMDQ || workload == WORKLOAD_DMA) &&
	    !listed_kind(L, LAB_KIND_CMDQ))
		report(L, NULL, 0, NULL, NULL, R_MISSING_PLUGINS, "cmdq");
	if ((workload == WORKLOAD_IOVA || workload == WORKLOAD_DMA) &&
	    !listed_kind(L, LAB_KIND_IOVA))
		report(L, NULL, 0, NULL, NULL, R_MISSING_PLUGINS, "iova");
}

/* Headers, fixed sections and [plugins] (file, then --set). */
static void apply_first(struct loader *L, struct entry *e)
{
	enum section_kind kind = section_kind(e->section);

	if (!e->key) {
		if (kind == SEC_UNKNOWN)
			report_unknown(L, e, e->section, NULL, R_UNKNOWN_SECTION,
				       suggest_section(e->section));
		L->have_scenario |= !strcmp(e->section, "scenario");
		return;
	}
	if (kind == SEC_FIXED)
		apply_fixed(L, e);
	else if (kind == SEC_PLUGINS)
		apply_plugin_list(L, e);
	else if (kind == SEC_UNKNOWN && e->set)
		report_unknown(L, e, e->section, NULL, R_UNKNOWN_SECTION,
			       suggest_section(e->section));
}

/* A --set already reported as malformed. */
static bool skipped(const struct entry *e)
{
	return e->key && !e->key[0];
}

static void apply_all(struct loader *L)
{
	struct entry *e;

	/* An empty file has no entries array at all: NULL + 0 is undefined (found by fuzzing). */
	if (!L->n_entries) {
		check_required(L);
		return;
	}
	for (e = L->entries; e < L->entries + L->n_entries; e++) {
		if (!skipped(e))
			apply_first(L, e);
	}
	for (e = L->entries; e < L->entries + L->n_entries; e++) {
		if (!skipped(e) && section_kind(e->section) == SEC_PLUGIN)
			apply_plugin_entry(L, e);
	}
	for (e = L->entries; e < L->entries + L->n_entries; e++) {
		if (e->key && !skipped(e) && section_kind(e->section) == SEC_SWEEP)
			apply_sweep(L, e);
	}
	for (e = L->entries; e < L->entries + L->n_entries; e++) {
		if (e->set && e->applied && section_kind(e->section) != SEC_PLUGINS)
			apply_set_over_sweep(L, e);
	}
	check_required(L);
}

static int set_defaults(struct scenario_cfg *cfg)
{
	size_t n;
	const struct scenario_section *sections = scenario_sections(&n);

	for (size_t i = 0; i < n; i++) {
		int rc = param_set_defaults(sections[i].params, sections[i].n_params,
					    (char *)cfg + sections[i].offset, NULL, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static int compare_messages(const void *a, const void *b)
{
	const struct message *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand the messages over in file order; the loader's state goes. Any message means failure. */
static bool finish(struct loader *L, struct diag_list *diags)
{
	bool failed = L->n_msgs || L->oom;

	if (L->n_msgs)
		qsort(L->msgs, L->n_msgs, sizeof(*L->msgs), compare_messages);
	for (size_t i = 0; i < L->n_msgs; i++) {
		diag_add(diags, "%s", L->msgs[i].text);
		free(L->msgs[i].text);
	}
	if (L->oom)
		diag_add(diags, "%s: %s", L->path, R_NO_MEMORY);
	free(L->msgs);
	free_entries(L);
	forget_listed(L, LAB_KIND_CMDQ);
	forget_listed(L, LAB_KIND_IOVA);
	free(L->listed);
	free(L->axis_lines);
	free(L->buf);
	return !failed;
}

/* [machine] topology names a file relative to the INI file's folder (topologies/...). */
static void resolve_topology(struct loader *L)
{
	char **t = &L->s->base.machine.topology;
	const char *slash = strrchr(L->path, '/');
	size_t dir;
	char *p;

	if (!*t || !**t || **t == '/' || !slash)
		return;
	dir = (size_t)(slash - L->path) + 1;
	p = malloc(dir + strlen(*t) + 1);
	if (!p) {
		L->oom = true;
		return;
	}
	memcpy(p, L->path, dir);
	strcpy(p + dir, *t);
	free(*t);
	*t = p;
}

struct scenario *scenario_load(const char *path, const char *const *sets, size_t n_sets,
			       const struct plugin_lookup *plugins, struct diag_list *diags)
{
	struct loader L = { .path = path, .lookup = plugins };

	L.s = calloc(1, sizeof(*L.s));
	if (!L.s || !(L.s->path = strdup(path)) || set_defaults(&L.s->base)) {
		L.oom = true;
		goto out;
	}
	read_file(&L);
	if (L.n_msgs && L.msgs[0].order == ORDER_FILE)
		goto out; /* cannot open: nothing else to say */
	for (size_t i = 0; i < n_sets; i++)
		read_set(&L, sets[i], (int)i);
	apply_all(&L);
	resolve_topology(&L);
out:
	if (finish(&L, diags))
		return L.s;
	scenario_free(L.s);
	return NULL;
}

void scenario_free(struct scenario *s)
{
	if (!s)
		return;
	free(s->path);
	scenario_cfg_free(&s->base);
	free_plugins(s->cmdq, s->n_cmdq);
	free_plugins(s->iova, s->n_iova);
	for (size_t i = 0; i < s->n_axes; i++) {
		free(s->axes[i].section);
		free(s->axes[i].key);
		free_values(s->axes[i].values, s->axes[i].n_values);
	}
	free(s->axes);
	free(s);
}
