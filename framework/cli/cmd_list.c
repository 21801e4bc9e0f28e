/* SPDX-License-Identifier: MIT */
/* iommulab list -- the plugins found, and with --params every parameter table. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "params/params.h"
#include "scenario/scenario.h"

static void print_params(const struct lab_param *t, size_t n)
{
	char range[256];

	if (!n) {
		printf("    (no parameters)\n");
		return;
	}
	printf("    %-18s %-7s %-10s %-24s %s\n", "key", "type", "default", "range", "help");
	for (size_t i = 0; i < n; i++) {
		param_describe_range(&t[i], range, sizeof(range));
		printf("    %-18s %-7s %-10s %-24s %s\n", t[i].key, param_type_name(t[i].type),
		       t[i].def, range, t[i].help);
	}
}

int cmd_list(int argc, char **argv, struct cli_common *c)
{
	struct plugin_registry reg = { 0 };
	struct diag_list diags = { 0 };
	bool params = false;
	struct cli_parser p;
	int o, status = EXIT_OK;

	cli_parser_init(&p, c->cmd, argc, argv);
	while ((o = cli_next_opt(&p)) >= 0)
		if (o == LIST_OPT_PARAMS)
			params = true;
	if (o == CLI_OPT_EXIT)
		return p.status;
	/* A file named on the command line must load: its refusal is an error. */
	for (int i = optind; i < argc; i++)
		if (registry_add_file(&reg, argv[i], &diags))
			status = EXIT_USAGE;
	cli_load_plugins(c, &reg, &diags);
	printf("%-5s %-16s %-8s %s\n", "kind", "name", "version", "summary");
	for (uint32_t kind = LAB_KIND_CMDQ; kind <= LAB_KIND_IOVA; kind++)
		for (size_t i = 0; i < reg.n; i++) {
			const struct loaded_plugin *p = &reg.v[i];
			if (p->desc->kind != kind)
				continue;
			printf("%-5s %-16s %-8s %s%s\n", plugin_kind_name(kind), p->desc->name,
			       p->desc->version, p->desc->summary,
			       p->duplicate_of ? "  [ERROR: name also used by another file]" : "");
			printf("      %s\n", p->path);
		}
	if (!reg.n)
		printf("(no plugins found: build them, or point --plugin-dir / "
		       "IOMMULAB_PLUGIN_PATH at a directory of <kind>-<name>.so files)\n");
	if (params) {
		size_t n;
		const struct scenario_section *sec = scenario_sections(&n);
		printf("\nscenario sections (framework):\n");
		for (size_t i = 0; i < n; i++) {
			printf("\n  [%s]  %s\n", sec[i].name, sec[i].help ? sec[i].help : "");
			print_params(sec[i].params, sec[i].n_params);
		}
		printf("\n  [sweep]    SECTION.KEY = V1, V2, ...  (a bare KEY means [scenario] "
		       "KEY)\n");
		printf("  [plugins]  cmdq = NAME, ...   iova = NAME, ...\n");
		printf("\nplugin sections:\n");
		for (size_t i = 0; i < reg.n; i++) {
			printf("\n  [plugin.%s]  (%s) %s\n", reg.v[i].desc->name,
			       plugin_kind_name(reg.v[i].desc->kind), reg.v[i].desc->summary);
			print_params(reg.v[i].desc->params, reg.v[i].desc->n_params);
		}
	}
	if (diags.n) {
		fprintf(stderr, "\n");
		cli_print_diags(&diags, "iommulab: refused: ");
	}
	registry_free(&reg);
	diag_clear(&diags);
	return status;
}
