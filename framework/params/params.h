/* SPDX-License-Identifier: MIT */
/*
 * params -- typed parameter tables (struct lab_param): parse INI text into a config struct,
 * format it back, check a table for sanity, suggest a key for a typo. One table drives the
 * parser, the validator and `iommulab list --params`, for the framework's own sections and
 * for every plugin's [plugin.NAME] section alike.
 *
 * Library code: never prints. Errors go into err (NUL-terminated, at most err_len bytes) as a
 * sentence without file or section prefix, e.g. "70 not in [3, 20]"; callers add the location.
 *
 * Conventions: an INT/UINT/DOUBLE entry with min == max == 0 has no range beyond its type's.
 * String fields of a config are either NULL or owned by it: param_set_defaults initialises a
 * fresh config (it does not free what it overwrites), param_parse frees the string it replaces.
 */
#ifndef IOMMULAB_PARAMS_H
#define IOMMULAB_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include <iommulab/plugin.h>

/* The entry for key, or NULL. */
const struct lab_param *param_find(const struct lab_param *table, size_t n, const char *key);

/*
 * The closest key, or NULL: for "did you mean". A candidate qualifies by Levenshtein distance
 * <= max(2, strlen(key) / 3), or (ranked after those) when key (3+ characters) is its prefix;
 * the smallest distance wins, ties go to the earlier entry.
 */
const char *param_suggest(const struct lab_param *table, size_t n, const char *key);

/* The same rule over a plain list of words (section names, plugin names). */
const char *param_suggest_word(const char *const *words, size_t n, const char *key);

/* Levenshtein distance; SIZE_MAX for words longer than 63 characters. */
size_t param_edit_distance(const char *a, const char *b);

/*
 * Parse text as p's type, check it against p's range/choices and store it into config at
 * p->offset. Strings are strdup'ed (free with param_free_strings). 0 or -EINVAL / -ERANGE
 * with the reason in err, e.g. "'abc' is not an integer", "70 not in [3, 20]",
 * "'maybe' is not one of: true, false".
 */
int param_parse(const struct lab_param *p, const char *text, void *config, char *err,
		size_t err_len);

/* Check text without storing (same messages). */
int param_check(const struct lab_param *p, const char *text, char *err, size_t err_len);

/* Write the value at p->offset as INI text (round-trips through param_parse). */
int param_format(const struct lab_param *p, const void *config, char *buf, size_t len);

/* Fill every field from its default. 0, or -EINVAL naming the key whose default is bad. */
int param_set_defaults(const struct lab_param *table, size_t n, void *config, char *err,
		       size_t err_len);

/*
 * The sanity checks the loader applies to a plugin's table: keys present, [a-z0-9_]+ and
 * unique; help present; type known; min <= max; ENUM has choices; default present, parses
 * and is in range; offset + size of the type <= config_size. 0 or -EINVAL with the first
 * problem, e.g. "param 'batch': default '99' out of range: 99 not in [1, 64]".
 */
int param_table_check(const struct lab_param *table, size_t n, size_t config_size, char *err,
		      size_t err_len);

/* Bytes a value of this type occupies in a config struct. */
size_t param_type_size(enum lab_param_type type);

/* "bool", "int", "uint", "double", "enum", "string". */
const char *param_type_name(enum lab_param_type type);

/* Range or choices as text for documentation: "[3, 20]", "true|false", "cmdq|iova|dma". */
void param_describe_range(const struct lab_param *p, char *buf, size_t len);

/* Deep-copy a config (strings duplicated); free strings of a config. */
int param_copy(const struct lab_param *table, size_t n, void *dst, const void *src,
	       size_t config_size);
void param_free_strings(const struct lab_param *table, size_t n, void *config);

#endif /* IOMMULAB_PARAMS_H */
