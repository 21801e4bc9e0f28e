/* SPDX-License-Identifier: MIT */
/*
 * scenario_internal -- what the scenario loader's files share (scenario.c: messages, entries
 * and the load itself; scenario_read.c: the INI text and --set into entries;
 * scenario_apply.c: entries into the struct scenario; sweep.c and scenario_write.c). Not for use
 * outside framework/scenario/.
 */
#ifndef IOMMULAB_SCENARIO_INTERNAL_H
#define IOMMULAB_SCENARIO_INTERNAL_H

#include <assert.h>
#include <ini.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "scenario/scenario.h"

/* inih reads into an INI_MAX_LINE buffer, so the longest line it keeps whole is one less. */
#define MAX_LINE SCENARIO_MAX_LINE
static_assert(SCENARIO_MAX_LINE == INI_MAX_LINE - 1, "SCENARIO_MAX_LINE follows inih's buffer");

/*
 * Every reason the loader gives, in one place (tests assert them). The location and the
 * "[section] key: " prefix are added by report().
 */
#define R_CANNOT_OPEN	  "cannot open: %s"
#define R_READ_ERROR	  "read error: %s"
#define R_NO_MEMORY	  "out of memory"
#define R_LINE_TOO_LONG	  "line longer than %d characters"
#define R_NO_BRACKET	  "expected ']' to close the section name"
#define R_NOT_KEY_VALUE	  "expected 'key = value'"
#define R_SYNTAX	  "syntax error"
#define R_CONTINUATION	  "indented line: continuation lines are not supported"
#define R_OUTSIDE_SECTION "key outside any section"
#define R_NO_KEY	  "missing key before '='"
#define R_DUPLICATE	  "duplicate key (first on line %d)"
#define R_UNKNOWN_SECTION "unknown section"
#define R_UNKNOWN_KEY	  "unknown key"
#define R_DID_YOU_MEAN	  ", did you mean '%s'?"
#define R_NOT_LISTED	  "plugin '%s' is not listed in [plugins]"
#define R_EMPTY_ITEM	  "empty item in list"
#define R_NO_VALUES	  "no values to sweep"
#define R_LISTED_TWICE	  "'%s' listed twice"
#define R_UNKNOWN_PLUGIN  "unknown %s plugin '%s'"
#define R_AMBIGUOUS_PLUGIN                                                                         \
	"%s plugin '%s' is in two files (see the warning above): remove one, or point "            \
	"--plugin-dir at only one of them"
#define R_WRONG_KIND		"plugin '%s' is of kind %s, not %s"
#define R_BAD_PLUGIN		"plugin '%s': %s"
#define R_NOT_SWEEPABLE		"cannot be swept (name and workload are fixed for a scenario)"
#define R_SECTION_NOT_SWEEPABLE "[%s] cannot be swept"
#define R_SWEPT_TWICE		"swept twice (first on line %d)"
#define R_SET_SYNTAX		"expected section.key=value"
#define R_MISSING_SCENARIO	"missing section [scenario]"
#define R_MISSING_PLUGINS	"missing [plugins] %s"

/* Sort keys for messages without a file line: whole-file problems, then --set ones. */
#define ORDER_FILE (INT_MAX / 2)
#define ORDER_SET  (ORDER_FILE + 1)

/* One "key = value" (or a section header: key NULL) from the file or from --set. */
struct entry {
	char *section;
	char *key;
	char *value;
	int line;	 /* file line, 0 for --set */
	const char *set; /* the --set argument as given, or NULL */
	int order;	 /* message sort key: line, or ORDER_SET + index */
	bool applied;	 /* a --set that took effect (may replace a sweep axis) */
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
	bool prev_name;	   /* inih's state: a key was read since the last header */
	bool continuation; /* this line is one inih will hand over as a continuation */
	bool skip_section; /* after a broken header: ignore keys until the next one */
	bool have_scenario;
	/* bit (1 << kind): a [plugins] list of that kind was refused (already reported), so it
	 * is not also missing */
	uint32_t plugin_list_refused;

	struct entry *entries;
	size_t n_entries, cap_entries;
	struct listed *listed;
	size_t n_listed, cap_listed;
	struct message *msgs;
	size_t n_msgs, cap_msgs;
	int *axis_lines; /* the file line of each of s->axes, for "swept twice" */
	bool oom;
};

/* ---- scenario.c: growth, messages and entries ---- */

/* array, grown (doubling *cap) when n elements fill it; NULL when out of memory (array kept). */
void scn_add_message(struct loader *L, int order, char *text);
char *scn_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "LOCATION: [section] key: reason" (see scenario.c). */
void scn_report(struct loader *L, const struct entry *e, int line, const char *section,
		const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same, located at entry e (its line, or its --set). */
#define report_at(L, e, section, key, ...) scn_report(L, e, (e)->line, section, key, __VA_ARGS__)
/* "unknown key" / "unknown section", with the did-you-mean when there is one. */
void scn_report_unknown(struct loader *L, const struct entry *e, const char *section,
			const char *key, const char *what, const char *suggestion);
struct entry *scn_add_entry(struct loader *L, const char *section, const char *key,
			    const char *value, int line, const char *set);
void scn_free_entries(struct loader *L);

/* ---- scenario_read.c ---- */

/* The file's entries, in file order; problems of the raw text reported. */
void scn_read_file(struct loader *L);
/* One --set SECTION.KEY=VALUE (index: its place among the --set arguments). */
void scn_read_set(struct loader *L, const char *arg, int index);
/* s with its leading and trailing blanks cut (in place). */
char *scn_trim(char *s);

/* ---- scenario_apply.c ---- */

/* Every entry into L->s, in the order the loader's comment (scenario.c) gives. */
void scn_apply_all(struct loader *L);
void scn_free_plugins(struct scenario_plugin *list, size_t n);
void scn_forget_listed(struct loader *L, uint32_t kind);
void scn_free_values(char **values, size_t n);

/* ---- sweep.c and scenario_write.c ---- */

/* Plugin k of the run order: cmdq ones first, then iova. */
static inline const struct scenario_plugin *plugin_at(const struct scenario *s, size_t k)
{
	return k < s->n_cmdq ? &s->cmdq[k] : &s->iova[k - s->n_cmdq];
}

#endif /* IOMMULAB_SCENARIO_INTERNAL_H */
