/* SPDX-License-Identifier: MIT */
/*
 * sweep -- expand a loaded scenario's [sweep] axes into points (the last axis varies fastest,
 * like nested loops in file order); scenario_write.c writes the resolved scenario back.
 */
#include "scenario/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "scenario/scenario_internal.h"

size_t scenario_n_points(const struct scenario *s)
{
	size_t n = 1;

	for (size_t i = 0; i < s->n_axes; i++)
		n *= s->axes[i].n_values;
	return n;
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
