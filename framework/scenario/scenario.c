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

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "scenario/scenario_internal.h"
#include "util/array.h"

/* ---- growth, messages and entries ---- */

void scn_add_message(struct loader *L, int order, char *text)
{
	struct message *m = array_grow(L->msgs, &L->cap_msgs, L->n_msgs + 1, sizeof(*m));

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

char *scn_format(const char *fmt, ...)
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
void scn_report(struct loader *L, const struct entry *e, int line, const char *section,
		const char *key, const char *fmt, ...)
{
	char *where, *what, *reason;
	va_list ap;

	va_start(ap, fmt);
	reason = vformat(fmt, ap);
	va_end(ap);
	if (e && e->set)
		where = scn_format("--set %s", e->set);
	else if (line)
		where = scn_format("%s:%d", L->path, line);
	else
		where = scn_format("%s", L->path);
	if (section && key)
		what = scn_format("[%s] %s: ", section, key);
	else if (section)
		what = scn_format("[%s]: ", section);
	else
		what = scn_format("%s", "");
	if (where && what && reason)
		scn_add_message(L,
				e      ? e->order
				: line ? line
				       : ORDER_FILE,
				scn_format("%s: %s%s", where, what, reason));
	else
		L->oom = true;
	free(where);
	free(what);
	free(reason);
}

/* "unknown key" / "unknown section", with the did-you-mean when there is one. */
void scn_report_unknown(struct loader *L, const struct entry *e, const char *section,
			const char *key, const char *what, const char *suggestion)
{
	if (suggestion)
		report_at(L, e, section, key, "%s" R_DID_YOU_MEAN, what, suggestion);
	else
		report_at(L, e, section, key, "%s", what);
}

struct entry *scn_add_entry(struct loader *L, const char *section, const char *key,
			    const char *value, int line, const char *set)
{
	struct entry *e = array_grow(L->entries, &L->cap_entries, L->n_entries + 1, sizeof(*e));

	if (!e) {
		L->oom = true;
		return NULL;
	}
	L->entries = e;
	e = &e[L->n_entries];
	*e = (struct entry){ .section = strdup(section),
			     .key = key ? strdup(key) : NULL,
			     .value = value ? strdup(value) : NULL,
			     .line = line,
			     .set = set,
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

void scn_free_entries(struct loader *L)
{
	for (size_t i = 0; i < L->n_entries; i++) {
		free(L->entries[i].section);
		free(L->entries[i].key);
		free(L->entries[i].value);
	}
	free(L->entries);
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
	scn_free_entries(L);
	scn_forget_listed(L, LAB_KIND_CMDQ);
	scn_forget_listed(L, LAB_KIND_IOVA);
	free(L->listed);
	free(L->axis_lines);
	free(L->buf);
	return !failed;
}

/*
 * [machine] preset (the last one written, file then --set) replaces the table's defaults
 * before any key is applied, so the keys the scenario sets override the preset's. A bad
 * value is left to apply_fixed to report (with the choices).
 */
static void apply_machine_preset(struct loader *L)
{
	const struct scenario_section *sec = scenario_find_section("machine");
	const struct lab_param *p = param_find(sec->params, sec->n_params, "preset");
	struct scenario_machine *m = &L->s->base.machine;
	int preset = m->preset;
	char err[256];

	for (size_t i = 0; i < L->n_entries; i++) {
		const struct entry *e = &L->entries[i];

		if (e->key && !strcmp(e->section, "machine") && !strcmp(e->key, "preset") &&
		    !param_parse(p, e->value, m, err, sizeof(err)))
			preset = m->preset;
	}
	if (scenario_machine_preset(m, preset, err, sizeof(err)))
		L->oom = true; /* the shipped presets parse: only the allocation can fail */
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

/* The last entry that sets section.key, or swept it (sweep.key or sweep.section.key). */
static const struct entry *last_entry(const struct loader *L, const char *section, const char *key)
{
	char dotted[64];

	snprintf(dotted, sizeof(dotted), "%s.%s", section, key);
	for (size_t i = L->n_entries; i-- > 0;) {
		const struct entry *e = &L->entries[i];
		if (!e->key)
			continue;
		if ((!strcmp(e->section, section) && !strcmp(e->key, key)) ||
		    (!strcmp(e->section, "sweep") &&
		     (!strcmp(e->key, key) || !strcmp(e->key, dotted))))
			return e;
	}
	return NULL;
}

/*
 * engine = sim runs at most SCENARIO_SIM_MAX_CPUS virtual CPUs: refused here, at every point of the
 * sweep, rather than trial by trial once the run has started.
 */
static void check_sim_cpus(struct loader *L)
{
	const struct scenario *s = L->s;
	const struct sweep_axis *eng = scenario_find_axis(s, "scenario", "engine");
	const struct sweep_axis *cpus = scenario_find_axis(s, "scenario", "cpus");
	bool sim = s->base.scenario.engine == ENGINE_SIM;

	for (size_t i = 0; eng && i < eng->n_values; i++)
		sim |= !strcmp(eng->values[i], "sim");
	if (!sim)
		return;
	for (size_t i = 0; i < (cpus ? cpus->n_values : 1); i++) {
		unsigned long long n =
			cpus ? strtoull(cpus->values[i], NULL, 10) : s->base.scenario.cpus;
		const struct entry *e = last_entry(L, "scenario", "cpus");

		if (n > SCENARIO_SIM_MAX_CPUS) {
			scn_report(L, e, e ? e->line : 0, "scenario", "cpus",
				   "engine = sim runs 1 to %d CPUs, not %llu",
				   SCENARIO_SIM_MAX_CPUS, n);
			return;
		}
	}
}

/*
 * [workload.micro] critical_ns is the work done holding a lock: refused with an op that takes
 * none (atomic_add, cas_add), at the base or at any swept op, rather than silently ignored.
 */
static void check_micro_critical(struct loader *L)
{
	const struct scenario *s = L->s;
	const struct sweep_axis *ops = scenario_find_axis(s, "workload.micro", "op");
	const struct entry *e = last_entry(L, "workload.micro", "critical_ns");
	const struct scenario_section *sec = scenario_find_section("workload.micro");
	static const char *const lockless[] = { "atomic_add", "cas_add" };
	char base[32];

	if (s->base.scenario.workload != WORKLOAD_MICRO || !s->base.wl_micro.critical_ns ||
	    param_format(param_find(sec->params, sec->n_params, "op"), &s->base.wl_micro, base,
			 sizeof(base)))
		return;
	for (size_t i = 0; i < (ops ? ops->n_values : 1); i++) {
		const char *op = ops ? ops->values[i] : base;

		for (size_t k = 0; op && k < sizeof(lockless) / sizeof(lockless[0]); k++) {
			if (strcmp(op, lockless[k]))
				continue;
			scn_report(
				L, e, e ? e->line : 0, "workload.micro", "critical_ns",
				"is work done holding a lock, and op = %s takes none: drop "
				"critical_ns or run a lock op (ticket_lock, tas_lock, ttas_lock, "
				"mcs_lock, clh_lock, qspin_lock)",
				op);
			return;
		}
	}
}

/*
 * A [machine] key that reads the core-to-core table (smt_ns, socket_ns) is set, and there is
 * no table: refused, since it would silently do nothing. finds: what the key looks for there.
 */
static void check_needs_topology(struct loader *L, const char *key, double value, const char *finds)
{
	const struct scenario_machine *m = &L->s->base.machine;
	const struct entry *e = last_entry(L, "machine", key);

	if (value <= 0 || (m->topology && *m->topology) ||
	    scenario_find_axis(L->s, "machine", "topology"))
		return;
	scn_report(L, e, e ? e->line : 0, "machine", key,
		   "finds %s in the core-to-core table, and there is none: set [machine] topology "
		   "(configs/topologies/), or drop %s",
		   finds, key);
}

/*
 * [machine] smt_ns finds a core's SMT threads in the topology, and smt_share acts on the pairs
 * it finds: each without the other (or smt_ns without a topology) would be silently nothing;
 * socket_ns finds sockets there, and without one would be nothing too.
 */
static void check_topology_keys(struct loader *L)
{
	const struct scenario_machine *m = &L->s->base.machine;
	const struct entry *share = last_entry(L, "machine", "smt_share");

	check_needs_topology(L, "smt_ns", m->smt_ns, "SMT pairs");
	check_needs_topology(L, "socket_ns", m->socket_ns, "sockets");
	if (m->smt_share < 1 && m->smt_ns <= 0 && !scenario_find_axis(L->s, "machine", "smt_ns"))
		scn_report(L, share, share ? share->line : 0, "machine", "smt_share",
			   "slows the SMT threads smt_ns finds, and smt_ns = 0 finds none: set "
			   "smt_ns (e.g. 20 for the mctop tables' 10-13 ns pairs), or drop "
			   "smt_share");
}

/*
 * The dma workload's jobs move with [workload.dma] migrate_ns; [workload.iova]'s is the iova
 * workload's and would be silently nothing under workload = dma.
 */
static void check_dma_migrate(struct loader *L)
{
	const struct entry *e = last_entry(L, "workload.iova", "migrate_ns");

	if (L->s->base.scenario.workload == WORKLOAD_DMA &&
	    (L->s->base.wl_iova.migrate_ns ||
	     scenario_find_axis(L->s, "workload.iova", "migrate_ns")))
		scn_report(L, e, e ? e->line : 0, "workload.iova", "migrate_ns",
			   "moves the iova workload's jobs, and this scenario runs workload = dma: "
			   "set [workload.dma] migrate_ns instead");
}

/*
 * [scenario] name names the results folder (results/<name>-<time>/): one path component of
 * letters, digits and . _ + -, not starting with . or -, so that it cannot climb out of
 * results/ ("../x"), nest ("a/b") or pass for an option.
 */
#define SCENARIO_MAX_NAME 64

static void check_name(struct loader *L)
{
	const char *name = L->s->base.scenario.name;
	const struct entry *e = last_entry(L, "scenario", "name");
	size_t len = name ? strlen(name) : 0;
	size_t bad = len ? strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789._+-")
			 : 0;

	if (len && len <= SCENARIO_MAX_NAME && bad == len && name[0] != '.' && name[0] != '-')
		return;
	if (!len || len > SCENARIO_MAX_NAME)
		scn_report(L, e, e ? e->line : 0, "scenario", "name",
			   "%zu characters: a name has 1 to %d (it names the results folder)", len,
			   SCENARIO_MAX_NAME);
	else if (bad < len)
		scn_report(L, e, e ? e->line : 0, "scenario", "name",
			   "'%s': '%c' cannot be in a name (letters, digits and . _ + -: it "
			   "names the results folder)",
			   name, name[bad]);
	else
		scn_report(L, e, e ? e->line : 0, "scenario", "name",
			   "'%s' cannot start with '%c' (it names the results folder)", name,
			   name[0]);
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
	scn_read_file(&L);
	if (L.n_msgs && L.msgs[0].order == ORDER_FILE)
		goto out; /* cannot open: nothing else to say */
	for (size_t i = 0; i < n_sets; i++)
		scn_read_set(&L, sets[i], (int)i);
	apply_machine_preset(&L);
	scn_apply_all(&L);
	resolve_topology(&L);
	if (!L.n_msgs && !L.oom)
		check_name(&L);
	if (!L.n_msgs && !L.oom)
		check_sim_cpus(&L);
	if (!L.n_msgs && !L.oom)
		check_micro_critical(&L);
	if (!L.n_msgs && !L.oom)
		check_dma_migrate(&L);
	if (!L.n_msgs && !L.oom)
		check_topology_keys(&L);
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
	scn_free_plugins(s->cmdq, s->n_cmdq);
	scn_free_plugins(s->iova, s->n_iova);
	for (size_t i = 0; i < s->n_axes; i++) {
		free(s->axes[i].section);
		free(s->axes[i].key);
		scn_free_values(s->axes[i].values, s->axes[i].n_values);
	}
	free(s->axes);
	free(s);
}
