/* SPDX-License-Identifier: MIT */
/*
 * scenario_read -- the scenario loader's first step: the INI text (through inih and a reader
 * that counts lines) and the --set arguments into a list of entries, with the problems only
 * the raw text shows: over-long lines, syntax errors, continuation lines, duplicate keys.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "scenario/scenario_internal.h"

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

char *scn_trim(char *s)
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
		scn_report(L, NULL, L->line, NULL, NULL, R_NO_BRACKET);
		L->skip_section = true;
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(end - t - 1), t + 1);
	scn_add_entry(L, name, NULL, NULL, L->line, NULL);
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
		scn_report(L, NULL, L->line, NULL, NULL, R_NOT_KEY_VALUE);
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
		scn_report(L, NULL, L->line, NULL, NULL, R_LINE_TOO_LONG, MAX_LINE);
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
		scn_report(L, NULL, L->line, section, name, R_CONTINUATION);
		return 1;
	}
	if (!*section) {
		scn_report(L, NULL, L->line, NULL, NULL, R_OUTSIDE_SECTION);
		return 1;
	}
	if (!*name) {
		scn_report(L, NULL, L->line, section, NULL, R_NO_KEY);
		return 1;
	}
	first = find_key(L, section, name);
	if (first) {
		scn_report(L, NULL, L->line, section, name, R_DUPLICATE, first->line);
		return 1;
	}
	scn_add_entry(L, section, name, value, L->line, NULL);
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

void scn_read_file(struct loader *L)
{
	int rc;

	L->file = fopen(L->path, "r");
	if (!L->file) {
		scn_report(L, NULL, 0, NULL, NULL, R_CANNOT_OPEN, strerror(errno));
		return;
	}
	rc = ini_parse_stream(read_line, L, on_key, L);
	if (ferror(L->file))
		scn_report(L, NULL, 0, NULL, NULL, R_READ_ERROR, strerror(errno));
	else if (rc == -2)
		L->oom = true;
	else if (rc > 0 && !reported_line(L, rc))
		scn_report(L, NULL, rc, NULL, NULL, R_SYNTAX); /* a case classify_line missed */
	fclose(L->file);
	L->file = NULL;
}

/* "section.key=value": "cpus" is scenario.cpus, "sweep.smmu.queue_shift" a sweep axis. */
void scn_read_set(struct loader *L, const char *arg, int index)
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
	target = scn_trim(copy);
	value = eq ? scn_trim(eq + 1) : NULL;
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
	e = scn_add_entry(L, section, key, value ? value : "", 0, arg);
	if (e) {
		e->order = ORDER_SET + index;
		if (!value || !*section || !*key) {
			report_at(L, e, NULL, NULL, R_SET_SYNTAX);
			e->key[0] = '\0'; /* reported: the steps below skip it (skipped()) */
		}
	}
	free(copy);
}
