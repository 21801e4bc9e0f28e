/* SPDX-License-Identifier: MIT */
/*
 * sweep -- expand a loaded scenario's [sweep] axes into points (the last axis varies fastest,
 * like nested loops in file order), and write the resolved scenario back as a loadable INI.
 */
#include "scenario/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"

size_t scenario_n_points(const struct scenario *s)
{
	size_t n = 1;

	for (size_t i = 0; i < s->n_axes; i++)
		n *= s->axes[i].n_values;
	return n;
}

/* Plugin k of the run order: cmdq ones first, then iova. */
static const struct scenario_plugin *plugin_at(const struct scenario *s, size_t k)
{
	return k < s->n_cmdq ? &s->cmdq[k] : &s->iova[k - s->n_cmdq];
}

/* Set an axis's value in the point: a framework key, or a key of every plugin of that name. */
static int apply_value(const struct scenario *s, const struct sweep_axis *a, const char *value,
		       struct scenario_point *pt)
{
	const struct scenario_section *sec = scenario_find_section(a->section);
	const struct lab_param *p;
	const char *name = a->section + strlen("plugin.");
	int rc;

	if (sec) {
		p = param_find(sec->params, sec->n_params, a->key);
		return p ? param_parse(p, value, (char *)&pt->cfg + sec->offset, NULL, 0) : -EINVAL;
	}
	if (strncmp(a->section, "plugin.", strlen("plugin.")))
		return -EINVAL;
	for (size_t k = 0; k < pt->n_plugin_cfgs; k++) {
		const struct lab_plugin *d = plugin_at(s, k)->desc;

		if (strcmp(d->name, name))
			continue;
		p = param_find(d->params, d->n_params, a->key);
		rc = p ? param_parse(p, value, pt->plugin_cfgs[k], NULL, 0) : -EINVAL;
		if (rc)
			return rc;
	}
	return 0;
}

static int copy_plugin_cfgs(const struct scenario *s, struct scenario_point *pt)
{
	size_t n = s->n_cmdq + s->n_iova;

	pt->plugin_cfgs = calloc(n ? n : 1, sizeof(*pt->plugin_cfgs));
	if (!pt->plugin_cfgs)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		const struct scenario_plugin *sp = plugin_at(s, k);
		size_t size = sp->desc->config_size;

		pt->plugin_cfgs[k] = malloc(size ? size : 1);
		if (!pt->plugin_cfgs[k])
			return -ENOMEM;
		pt->n_plugin_cfgs = k + 1;
		if (param_copy(sp->desc->params, sp->desc->n_params, pt->plugin_cfgs[k], sp->config,
			       size))
			return -ENOMEM;
	}
	return 0;
}

int scenario_point(const struct scenario *s, size_t i, struct scenario_point *out)
{
	size_t rest = i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (i >= scenario_n_points(s))
		return -EINVAL;
	rc = scenario_cfg_copy(&out->cfg, &s->base);
	if (rc)
		return rc;
	rc = copy_plugin_cfgs(s, out);
	out->swept_values = calloc(s->n_axes ? s->n_axes : 1, sizeof(*out->swept_values));
	if (!rc && !out->swept_values)
		rc = -ENOMEM;
	for (size_t a = s->n_axes; !rc && a-- > 0;) {
		const struct sweep_axis *axis = &s->axes[a];

		out->swept_values[a] = axis->values[rest % axis->n_values];
		rest /= axis->n_values;
		rc = apply_value(s, axis, out->swept_values[a], out);
	}
	if (rc)
		scenario_point_free(s, out);
	return rc;
}

void scenario_point_free(const struct scenario *s, struct scenario_point *p)
{
	scenario_cfg_free(&p->cfg);
	for (size_t k = 0; p->plugin_cfgs && k < p->n_plugin_cfgs; k++) {
		const struct lab_plugin *d = plugin_at(s, k)->desc;

		param_free_strings(d->params, d->n_params, p->plugin_cfgs[k]);
		free(p->plugin_cfgs[k]);
	}
	free(p->plugin_cfgs);
	free(p->swept_values);
	memset(p, 0, sizeof(*p));
}

/* ---- writing --------------------------------------------------------------------------- */

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

static int write_table(FILE *f, const char *section, const struct lab_param *params, size_t n,
		       const void *config)
{
	char value[SCENARIO_MAX_LINE + 1];
	int rc = 0;

	if (fprintf(f, "\n[%s]\n", section) < 0)
		return -EIO;
	for (size_t i = 0; !rc && i < n; i++) {
		rc = param_format(&params[i], config, value, sizeof(value));
		if (rc == -ENOSPC)
			rc = -E2BIG;
		if (!rc)
			rc = write_line(f, params[i].key, value);
	}
	return rc;
}

static int write_framework(FILE *f, const struct scenario *s)
{
	size_t n;
	const struct scenario_section *sections = scenario_sections(&n);
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++)
		rc = write_table(f, sections[i].name, sections[i].params, sections[i].n_params,
				 (const char *)&s->base + sections[i].offset);
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
		rc = write_table(f, section, sp->desc->params, sp->desc->n_params, sp->config);
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

int scenario_write_resolved(const struct scenario *s, const char *path)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return -errno;
	rc = fprintf(f, "; resolved scenario: every key with its effective value\n") < 0 ? -EIO : 0;
	if (!rc)
		rc = write_framework(f, s);
	if (!rc)
		rc = write_plugins(f, s);
	if (!rc)
		rc = write_sweep(f, s);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}
