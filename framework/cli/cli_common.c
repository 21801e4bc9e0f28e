/* SPDX-License-Identifier: MIT */
/*
 * cli support: option parsing from a command's table entry (getopt_long), the help and
 * usage texts made from the table, and the helpers the commands share (plugin search
 * path, plot rendering, diagnostics).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "params/params.h"
#include "plot/plot.h"
#include "run/isolate.h"

/* Long-only options get getopt values past every char, so they cannot clash with a short one. */
#define LONG_ONLY_VAL 256

/* ---- option parsing --------------------------------------------------------------------- */

void cli_parser_init(struct cli_parser *p, const struct cli_command *cmd, int argc, char **argv)
{
	size_t n = cmd->n_opts < CLI_MAX_OPTS ? cmd->n_opts : CLI_MAX_OPTS;

	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	for (size_t i = 0; i < n; i++) {
		const struct cli_option *o = &cmd->opts[i];
		int val = o->short_name ? o->short_name : LONG_ONLY_VAL + (int)i;

		p->longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument,
						  NULL, val };
	}
	p->longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	/* p->longopts[n + 1] stays zero: the end of the table. */
}

static void build_shortopts(struct cli_parser *p)
{
	char *s = p->shortopts;

	if (p->stop_at_operand)
		*s++ = '+'; /* options end at the first operand: the command's name */
	*s++ = ':';	    /* a missing argument returns ':', not '?' */
	*s++ = 'h';
	for (size_t i = 0; i < p->cmd->n_opts && i < CLI_MAX_OPTS; i++) {
		const struct cli_option *o = &p->cmd->opts[i];

		if (!o->short_name)
			continue;
		*s++ = o->short_name;
		if (o->arg)
			*s++ = ':';
	}
	*s = '\0';
}

/* The index in cmd->opts of the option getopt calls val, or -1. */
static int opt_index(const struct cli_parser *p, int val)
{
	for (size_t i = 0; i < p->cmd->n_opts && i < CLI_MAX_OPTS; i++)
		if (p->longopts[i].val == val)
			return (int)i;
	return -1;
}

/*
 * Whether an option's argument is itself one of the command's long options ("--out --dry-run"):
 * the value was forgotten, and the option after it would be swallowed as the value.
 */
static bool is_own_option(const struct cli_parser *p, const char *arg)
{
	if (strncmp(arg, "--", 2))
		return false;
	arg += 2;
	size_t len = strcspn(arg, "=");
	if (len == 4 && !strncmp(arg, "help", 4))
		return true;
	for (size_t i = 0; i < p->cmd->n_opts && i < CLI_MAX_OPTS; i++)
		if (strlen(p->cmd->opts[i].name) == len && !strncmp(p->cmd->opts[i].name, arg, len))
			return true;
	return false;
}

/* An option getopt did not know: "--ot=x" is named '--ot', with the closest long option. */
static int unknown_option(struct cli_parser *p)
{
	const char *words[CLI_MAX_OPTS + 1];
	char name[64];
	size_t n = 0;

	if (optopt)
		return cli_usage_error(p->cmd, "unknown option '-%c'", optopt);
	const char *text = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "?";
	snprintf(name, sizeof(name), "%s", text + strspn(text, "-"));
	name[strcspn(name, "=")] = '\0';
	for (size_t i = 0; i < p->cmd->n_opts && i < CLI_MAX_OPTS; i++)
		words[n++] = p->cmd->opts[i].name;
	words[n++] = "help";
	const char *near = param_suggest_word(words, n, name);
	if (near)
		return cli_usage_error(p->cmd, "unknown option '--%s' (did you mean '--%s'?)", name,
				       near);
	return cli_usage_error(p->cmd, "unknown option '--%s'", name);
}

int cli_next_opt(struct cli_parser *p)
{
	int c, i;

	if (!p->shortopts[0]) {
		build_shortopts(p);
		/* glibc: 0 (not 1) re-initialises getopt fully, so each parse starts afresh. */
		optind = 0;
		opterr = 0;
	}
	c = getopt_long(p->argc, p->argv, p->shortopts, p->longopts, NULL);
	if (c == -1)
		return CLI_OPT_END;
	p->status = EXIT_USAGE;
	if (c == 'h') {
		if (p->cmd == &cli_global)
			cli_print_overview(stdout);
		else
			cli_print_help(stdout, p->cmd);
		p->status = EXIT_OK;
		return CLI_OPT_EXIT;
	}
	if (c == ':') {
		i = opt_index(p, optopt);
		if (i < 0)
			cli_usage_error(p->cmd, "option '-%c' needs an argument", optopt);
		else
			cli_usage_error(p->cmd, "--%s needs an argument (%s)", p->cmd->opts[i].name,
					p->cmd->opts[i].arg);
		return CLI_OPT_EXIT;
	}
	if (c == '?') {
		i = optopt ? opt_index(p, optopt) : -1;
		if (i >= 0)
			cli_usage_error(p->cmd, "--%s takes no argument", p->cmd->opts[i].name);
		else if (optopt == 'h')
			cli_usage_error(p->cmd, "--help takes no argument");
		else
			unknown_option(p);
		return CLI_OPT_EXIT;
	}
	i = opt_index(p, c);
	if (i < 0)
		return cli_usage_error(p->cmd, "option '%c' not in the table", c), CLI_OPT_EXIT;
	if (p->cmd->opts[i].arg && optarg && is_own_option(p, optarg)) {
		cli_usage_error(p->cmd,
				"--%s needs an argument (%s), not the option '%s' (a path of that "
				"name is ./%s)",
				p->cmd->opts[i].name, p->cmd->opts[i].arg, optarg, optarg);
		return CLI_OPT_EXIT;
	}
	p->status = EXIT_OK;
	return i;
}

/* ---- help ------------------------------------------------------------------------------- */

#define HELP_WIDTH 92
#define OPT_COLUMN 26

/* text from column col (the cursor is there), wrapped at HELP_WIDTH with indent col. */
static void print_wrapped(FILE *f, const char *text, int col)
{
	int at = col;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (at > col && at + 1 + (int)word > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		fprintf(f, "%.*s", (int)word, text);
		at += (int)word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void cli_print_usage(FILE *f, const struct cli_command *cmd)
{
	const char *line = cmd->usage;
	bool first = true;

	while (line && *line) {
		size_t len = strcspn(line, "\n");

		if (!first && line[0] == ' ') /* a long form's next line: under its options */
			fprintf(f, "%*s%.*s\n", (int)strlen("usage: iommulab "), "", (int)len,
				line);
		else
			fprintf(f, "%s iommulab %.*s\n", first ? "usage:" : "      ", (int)len,
				line);
		first = false;
		line += len;
		line += *line == '\n';
	}
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iommulab%s%s: ", cmd == &cli_global ? "" : " ",
		cmd == &cli_global ? "" : cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	cli_print_usage(stderr, cmd);
	if (cmd == &cli_global)
		fprintf(stderr, "(`iommulab help` lists the commands)\n");
	else
		fprintf(stderr, "(`iommulab help %s` for its options and exit status)\n",
			cmd->name);
	return EXIT_USAGE;
}

int cli_operands(const struct cli_command *cmd, int argc, char **argv, int n, const char *what)
{
	if (argc - optind > n)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + n]);
	if (argc - optind < n)
		return cli_usage_error(cmd, "expected %s", what);
	return 0;
}

static void print_option(FILE *f, const struct cli_option *o)
{
	char head[96];
	int n;

	if (o->short_name)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->short_name, o->name,
			     o->arg ? " " : "", o->arg ? o->arg : "");
	else
		n = snprintf(head, sizeof(head), "  --%s%s%s", o->name, o->arg ? " " : "",
			     o->arg ? o->arg : "");
	fputs(head, f);
	if (n + 2 > OPT_COLUMN)
		fprintf(f, "\n%*s", OPT_COLUMN, "");
	else
		fprintf(f, "%*s", OPT_COLUMN - n, "");
	print_wrapped(f, o->help, OPT_COLUMN);
}

static void print_options(FILE *f, const struct cli_command *cmd, const char *title)
{
	static const struct cli_option help = { "help", 'h', NULL, "print this help and exit" };

	fprintf(f, "\n%s:\n", title);
	for (size_t i = 0; i < cmd->n_opts && i < CLI_MAX_OPTS; i++)
		print_option(f, &cmd->opts[i]);
	print_option(f, &help);
}

static void print_exits(FILE *f, const struct cli_command *cmd)
{
	fprintf(f, "\nexit status:\n");
	for (size_t i = 0; i < CLI_MAX_EXITS && cmd->exits[i].meaning; i++) {
		fprintf(f, "  %-5d", cmd->exits[i].status);
		print_wrapped(f, cmd->exits[i].meaning, 7);
	}
}

void cli_print_help(FILE *f, const struct cli_command *cmd)
{
	cli_print_usage(f, cmd);
	fprintf(f, "\n%s\n", cmd->help);
	print_options(f, cmd, "options");
	print_exits(f, cmd);
}

void cli_print_overview(FILE *f)
{
	cli_print_usage(f, &cli_global);
	fprintf(f, "\ncommands:\n");
	for (size_t i = 0; i < cli_n_commands; i++) {
		const struct cli_command *cmd = &cli_commands[i];
		const char *line = cmd->usage;

		while (*line) {
			size_t len = strcspn(line, "\n");

			fprintf(f, "  %.*s\n", (int)len, line);
			line += len;
			line += *line == '\n';
		}
		fprintf(f, "%8s", "");
		print_wrapped(f, cmd->summary, 8);
	}
	print_options(f, &cli_global, "options (before COMMAND)");
	fprintf(f, "\n%s\n", cli_global.help);
	print_exits(f, &cli_global);
	fprintf(f,
		"\n`iommulab help COMMAND` or `iommulab COMMAND --help`: a command's options and "
		"exit status.\n");
}

/* ---- shared by the commands ------------------------------------------------------------- */

int cli_push(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

int cli_parse_jobs(const char *text, unsigned *jobs)
{
	char *end;

	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > ISOLATE_MAX_JOBS)
		return -EINVAL;
	*jobs = (unsigned)v;
	return 0;
}

void cli_print_diags(const struct diag_list *d, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s%s\n", prefix, d->msgs[i]);
}

void cli_load_plugins(const struct cli_common *c, struct plugin_registry *r,
		      struct diag_list *diags)
{
	for (size_t i = 0; i < c->n_plugin_files; i++)
		registry_add_file(r, c->plugin_files[i], diags);
	for (size_t i = 0; i < c->n_plugin_dirs; i++)
		registry_add_dir(r, c->plugin_dirs[i], false, diags);
	const char *env = getenv("IOMMULAB_PLUGIN_PATH");
	if (env && *env) {
		char *copy = strdup(env), *save = NULL;
		for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
		     dir = strtok_r(NULL, ":", &save))
			registry_add_dir(r, dir, false, diags);
		free(copy);
	}
	registry_add_dir(r, loader_builtin_dir(), true, diags);
}

const char *cli_plot_dir(void)
{
	const char *env = getenv("IOMMULAB_PLOT_DIR");
	struct stat st;

	if (env && *env)
		return env;
	/* A build tree runs against the source's templates; an installed binary uses its own. */
	if (!strncmp(loader_builtin_dir(), LAB_PLUGIN_INSTALL_DIR,
		     strlen(LAB_PLUGIN_INSTALL_DIR)) &&
	    !stat(LAB_PLOT_INSTALL_DIR, &st))
		return LAB_PLOT_INSTALL_DIR;
	return LAB_PLOT_SOURCE_DIR;
}
