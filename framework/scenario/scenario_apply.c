/* SPDX-License-Identifier: MIT */
/*
 * scenario_apply -- the scenario loader's second step: the entries into the struct scenario,
 * fixed sections and [plugins] first, then [plugin.NAME] sections, then [sweep], then the
 * --set values that replace sweep axes (see scenario.c for why in that order).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "scenario/scenario_internal.h"
#include "util/array.h"

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
		scn_report_unknown(L, e, e->section, e->key, R_UNKNOWN_KEY,
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

void scn_free_plugins(struct scenario_plugin *list, size_t n)
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
	struct listed *l = array_grow(L->listed, &L->cap_listed, L->n_listed + 1, sizeof(*l));

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

void scn_forget_listed(struct loader *L, uint32_t kind)
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
			report_at(L, e, e->section, e->key, R_WRONG_KIND, name,
				  kind_name(other->kind), kind_name(kind));
			return -ENOENT;
		}
		const char *like = suggest_plugin(L->lookup, kind, name);
		if (like && !strcmp(like, name)) {
			/* Loaded, yet not found by its name: two files claim it. */
			report_at(L, e, e->section, e->key, R_AMBIGUOUS_PLUGIN, kind_name(kind),
				  name);
			return -ENOENT;
		}
		snprintf(what, sizeof(what), R_UNKNOWN_PLUGIN, kind_name(kind), name);
		scn_report_unknown(L, e, e->section, e->key, what, like);
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
	if (!*scn_trim(text))
		return 0;
	for (char *item = text; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		item = scn_trim(item);
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
	uint32_t kind = !strcmp(e->key, "cmdq")	  ? LAB_KIND_CMDQ
			: !strcmp(e->key, "iova") ? LAB_KIND_IOVA
						  : 0;
	struct scenario_plugin *list = NULL, **old;
	size_t n_items, n = 0, *old_n;
	char **items = NULL;
	int rc;

	if (!kind) {
		scn_report_unknown(L, e, e->section, e->key, R_UNKNOWN_KEY,
				   param_suggest_word(keys, LAB_ARRAY_SIZE(keys), e->key));
		return;
	}
	rc = split_list(e->value, &items, &n_items);
	if (rc == -EINVAL) {
		report_at(L, e, e->section, e->key, R_EMPTY_ITEM);
		L->plugin_list_refused |= 1u << kind;
	}
	if (rc)
		goto out;
	list = calloc(n_items ? n_items : 1, sizeof(*list));
	if (!list) {
		L->oom = true;
		goto out;
	}
	scn_forget_listed(L, kind);
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
	scn_free_plugins(*old, *old_n);
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
	const char *key;    /* the key within the plugin's table */
	const char *shown;  /* the key as the message shows it */
	const char *prefix; /* put before a suggestion: "" or "plugin.NAME." */
	char **values;	    /* NULL: parse e->value into the config; else check these */
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
		scn_report_unknown(k->L, k->e, section, k->shown, R_UNKNOWN_KEY,
				   near ? suggestion : NULL);
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
	/* machine.preset is applied once, under the keys: a point cannot change it */
	return (!strcmp(section, "scenario") &&
		(!strcmp(key, "name") || !strcmp(key, "workload"))) ||
	       (!strcmp(section, "machine") && !strcmp(key, "preset"));
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
		snprintf(suggestion, sizeof(suggestion), "%s%s%s",
			 strchr(e->key, '.') ? section : "", strchr(e->key, '.') ? "." : "",
			 near ? near : "");
		scn_report_unknown(L, e, "sweep", e->key, R_UNKNOWN_KEY, near ? suggestion : NULL);
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

void scn_free_values(char **values, size_t n)
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
			scn_free_values(copy, i);
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
	scn_free_values(a->values, a->n_values);
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
	lines = a ? array_grow(L->axis_lines, &cap, s->n_axes + 1, sizeof(int)) : NULL;
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
		scn_free_values(a->values, n);
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
		scn_report_unknown(L, e, "sweep", e->key, what, suggest_section(section));
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
		scn_report(L, NULL, 0, NULL, NULL, R_MISSING_SCENARIO);
	if ((workload == WORKLOAD_CMDQ || workload == WORKLOAD_DMA) &&
	    !listed_kind(L, LAB_KIND_CMDQ) && !(L->plugin_list_refused & (1u << LAB_KIND_CMDQ)))
		scn_report(L, NULL, 0, NULL, NULL, R_MISSING_PLUGINS, "cmdq");
	if ((workload == WORKLOAD_IOVA || workload == WORKLOAD_DMA) &&
	    !listed_kind(L, LAB_KIND_IOVA) && !(L->plugin_list_refused & (1u << LAB_KIND_IOVA)))
		scn_report(L, NULL, 0, NULL, NULL, R_MISSING_PLUGINS, "iova");
}

/* Headers, fixed sections and [plugins] (file, then --set). */
static void apply_first(struct loader *L, struct entry *e)
{
	enum section_kind kind = section_kind(e->section);

	if (!e->key) {
		if (kind == SEC_UNKNOWN)
			scn_report_unknown(L, e, e->section, NULL, R_UNKNOWN_SECTION,
					   suggest_section(e->section));
		L->have_scenario |= !strcmp(e->section, "scenario");
		return;
	}
	if (kind == SEC_FIXED)
		apply_fixed(L, e);
	else if (kind == SEC_PLUGINS)
		apply_plugin_list(L, e);
	else if (kind == SEC_UNKNOWN && e->set)
		scn_report_unknown(L, e, e->section, NULL, R_UNKNOWN_SECTION,
				   suggest_section(e->section));
}

/* A --set already reported as malformed. */
static bool skipped(const struct entry *e)
{
	return e->key && !e->key[0];
}

void scn_apply_all(struct loader *L)
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
