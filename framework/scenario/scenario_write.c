/* SPDX-License-Identifier: MIT */
/*
 * scenario_write -- write a loaded scenario back as a loadable INI: every section with every
 * key (defaults resolved), the plugin lists, their sections and the [sweep] axes.
 */
#include "scenario/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "scenario/scenario_internal.h"
#include "util/sha256.h"

/* items joined by sep, allocated; NULL when out of memory. */
static char *join(const char *const *items, size_t n, const char *sep)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(items[i]) + strlen(sep);
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, sep);
		strcat(s, items[i]);
	}
	return s;
}

/* "key = value", refused if the loader would refuse the line. */
static int write_line(FILE *f, const char *key, const char *value)
{
	if (strlen(key) + strlen(" = ") + strlen(value) > SCENARIO_MAX_LINE)
		return -E2BIG;
	return fprintf(f, "%s = %s\n", key, value) < 0 ? -EIO : 0;
}

/*
 * topology_as: what [machine] topology says instead of its path when it names one (the
 * results' copy, scenario_write_results), or NULL.
 */
static int write_table(FILE *f, const char *section, const struct lab_param *params, size_t n,
		       const void *config, const char *topology_as)
{
	char value[SCENARIO_MAX_LINE + 1];
	int rc = 0;

	if (fprintf(f, "\n[%s]\n", section) < 0)
		return -EIO;
	for (size_t i = 0; !rc && i < n; i++) {
		rc = param_format(&params[i], config, value, sizeof(value));
		if (rc == -ENOSPC)
			rc = -E2BIG;
		if (!rc && topology_as && *value && !strcmp(section, "machine") &&
		    !strcmp(params[i].key, "topology"))
			snprintf(value, sizeof(value), "%s", topology_as);
		if (!rc)
			rc = write_line(f, params[i].key, value);
	}
	return rc;
}

static int write_framework(FILE *f, const struct scenario *s, const char *topology_as)
{
	size_t n;
	const struct scenario_section *sections = scenario_sections(&n);
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		rc = write_table(f, sections[i].name, sections[i].params, sections[i].n_params,
				 (const char *)&s->base + sections[i].offset, topology_as);
	return rc;
}

static int write_list(FILE *f, const char *key, const struct scenario_plugin *list, size_t n)
{
	const char **names = calloc(n ? n : 1, sizeof(*names));
	char *value;
	int rc;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = list[i].desc->name;
	value = join(names, n, ", ");
	rc = value ? (n ? write_line(f, key, value) : 0) : -ENOMEM;
	free(value);
	free(names);
	return rc;
}

/* [plugins], then one [plugin.NAME] per name (a name in both lists is written once). */
static int write_plugins(FILE *f, const struct scenario *s)
{
	char section[128];
	int rc;

	if (fprintf(f, "\n[plugins]\n") < 0)
		return -EIO;
	rc = write_list(f, "cmdq", s->cmdq, s->n_cmdq);
	if (!rc)
		rc = write_list(f, "iova", s->iova, s->n_iova);
	for (size_t k = 0; !rc && k < s->n_cmdq + s->n_iova; k++) {
		const struct scenario_plugin *sp = plugin_at(s, k);
		bool seen = false;

		for (size_t j = 0; j < k; j++)
			seen |= !strcmp(plugin_at(s, j)->desc->name, sp->desc->name);
		if (seen)
			continue;
		snprintf(section, sizeof(section), "plugin.%s", sp->desc->name);
		rc = write_table(f, section, sp->desc->params, sp->desc->n_params, sp->config,
				 NULL);
	}
	return rc;
}

/* [sweep]: a [scenario] key bare, as users write it; ", " between values if the line allows. */
static int write_axis(FILE *f, const struct sweep_axis *a)
{
	const char *const *values = (const char *const *)a->values;
	char key[160], *text;
	int rc;

	if (!strcmp(a->section, "scenario"))
		snprintf(key, sizeof(key), "%s", a->key);
	else
		snprintf(key, sizeof(key), "%s.%s", a->section, a->key);
	text = join(values, a->n_values, ", ");
	if (!text)
		return -ENOMEM;
	rc = write_line(f, key, text);
	free(text);
	if (rc != -E2BIG)
		return rc;
	text = join(values, a->n_values, ",");
	rc = text ? write_line(f, key, text) : -ENOMEM;
	free(text);
	return rc;
}

static int write_sweep(FILE *f, const struct scenario *s)
{
	int rc = 0;

	if (s->n_axes && fprintf(f, "\n[sweep]\n") < 0)
		return -EIO;
	for (size_t i = 0; !rc && i < s->n_axes; i++)
		rc = write_axis(f, &s->axes[i]);
	return rc;
}

static int write_resolved(const struct scenario *s, const char *path, const char *topology_as)
{
	char *text = NULL, hex[SHA256_HEX_LEN];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		return -errno;
	rc = fprintf(f, "; resolved scenario: every key with its effective value\n") < 0 ? -EIO : 0;
	if (!rc)
		rc = write_framework(f, s, topology_as);
	if (!rc)
		rc = write_plugins(f, s);
	if (!rc)
		rc = write_sweep(f, s);
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc) {
		sha256_hex(text, len, hex);
		f = fopen(path, "w");
		if (!f)
			rc = -errno;
		else if (fwrite(text, 1, len, f) != len ||
			 fprintf(f, "\n%s%s\n", SCENARIO_CHECKSUM_LINE, hex) < 0)
			rc = -EIO;
		if (f && fclose(f) && !rc)
			rc = -errno;
	}
	free(text);
	return rc;
}

int scenario_write_resolved(const struct scenario *s, const char *path)
{
	return write_resolved(s, path, NULL);
}

int scenario_write_results(const struct scenario *s, const char *path)
{
	return write_resolved(s, path, "topology.csv");
}
