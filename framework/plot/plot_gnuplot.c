/* SPDX-License-Identifier: MIT */
/*
 * plot_gnuplot -- the gnuplot side of plotting: finding the program, running it without a
 * shell under a time limit, writing each graph's .gp wrapper and copying the templates.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plot/plot_internal.h"
#include "util/fs.h"

extern char **environ;

/* A gnuplot render of one graph is well under a second; a hung one must not hang the run. */
#define GNUPLOT_TIMEOUT_MS 60000

static const char *const template_names[] = { "style.gp", "lines.gp", "phases.gp" };

/* ---- gnuplot ---- */

static bool is_executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The program to run: a path as given, or a bare name looked up in PATH like execvp would. */
char *plot_find_program(const char *prog)
{
	if (strchr(prog, '/'))
		return is_executable(prog) ? strdup(prog) : NULL;

	const char *path = getenv("PATH");

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *cand = util_asprintf("%.*s/%s", (int)len, len ? p : ".", prog);

		if (cand && is_executable(cand))
			return cand;
		free(cand);
		if (!colon)
			return NULL;
		p = colon + 1;
	}
}

/* Run argv with stdin from /dev/null and stdout/stderr into the log; 0 if it exited 0. */
static int run_program(struct plot_ctx *c, char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int ret, status;

	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, c->log_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, c->log_fd, 2);
	/* argv goes to the program as is: no shell ever sees text from the CSV. */
	ret = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -ret;

	for (long waited_ms = 0;; waited_ms += 10) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (waited_ms >= GNUPLOT_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			dprintf(c->log_fd, "iommulab: %s killed after %d ms\n", argv[0],
				GNUPLOT_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Append a gnuplot single-quoted string ('' is the only escape inside one). */
static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('\'', f);
}

#define N_TEMPLATE_ARGS 7 /* TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS, after DATA OUT */

/*
 * Write DIR/plots/<name>.gp (re-renders from the copies of the templates next to it, wherever
 * the directory is moved) and, if gnuplot is here, render <name>.png and <name>.svg.
 */
int plot_render(struct plot_ctx *c, const char *name, const char *template,
		const char *const args[6])
{
	char *gp = util_asprintf("%s/%s.gp", c->plots_dir, name);
	char *dat = util_asprintf("%s/%s.dat", c->plots_dir, name);
	char *tpl = util_asprintf("%s/%s", c->template_dir, template);
	char *out[2] = { util_asprintf("%s/%s.png", c->plots_dir, name),
			 util_asprintf("%s/%s.svg", c->plots_dir, name) };
	static const char *const ext[2] = { "png", "svg" };
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (!gp || !dat || !tpl || !out[0] || !out[1])
		goto out;

	f = fopen(gp, "w");
	if (!f) {
		ret = plot_set_err(c, -errno, "%s: %s", gp, strerror(errno));
		goto out;
	}
	fprintf(f, "# %s.gp -- re-render %s.png and %s.svg from %s.dat (written by iommulab)\n",
		name, name, name, name);
	fprintf(f, "# usage: gnuplot path/to/%s.gp   (from any directory)\n", name);
	fputs("_d = \"\"\n_p = ARG0\n", f);
	fputs("while (strstrt(_p, \"/\") > 0) { _i = strstrt(_p, \"/\"); "
	      "_d = _d . _p[1:_i]; _p = _p[_i+1:] }\n",
	      f);
	for (int k = 0; k < 2; k++) {
		fprintf(f, "call _d.'%s' _d.'%s.dat' _d.'%s.%s'", template, name, name, ext[k]);
		for (int a = 0; a < 6; a++) {
			fputc(' ', f);
			gp_quote(f, args[a]);
		}
		fprintf(f, " '%s'\n", ext[k]);
	}
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", gp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!c->first_graph)
		c->first_graph = strdup(gp);

	if (!c->gnuplot) {
		ret = plot_report_add(c->rep, gp);
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		char *argv[] = { c->gnuplot,
				 "-c",
				 tpl,
				 dat,
				 out[k],
				 (char *)args[0],
				 (char *)args[1],
				 (char *)args[2],
				 (char *)args[3],
				 (char *)args[4],
				 (char *)args[5],
				 (char *)ext[k],
				 NULL };
		struct stat st;

		unlink(out[k]);
		ret = run_program(c, argv);
		if (!ret && (stat(out[k], &st) || st.st_size == 0))
			ret = -EIO;
		if (ret) {
			dprintf(c->log_fd, "iommulab: rendering %s failed: %s\n", out[k],
				strerror(-ret));
			c->n_render_failed++;
			continue;
		}
		ret = plot_report_add(c->rep, out[k]);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	free(gp);
	free(dat);
	free(tpl);
	free(out[0]);
	free(out[1]);
	return ret;
}

/* Copy the templates next to the data so DIR/plots/ renders on any machine with gnuplot. */
int plot_copy_templates(struct plot_ctx *c)
{
	char buf[8192];

	for (size_t i = 0; i < sizeof(template_names) / sizeof(template_names[0]); i++) {
		char *src = util_asprintf("%s/%s", c->template_dir, template_names[i]);
		char *dst = util_asprintf("%s/%s", c->plots_dir, template_names[i]);
		FILE *in = NULL, *out = NULL;
		int ret = 0;

		if (!src || !dst) {
			ret = -ENOMEM;
			goto next;
		}
		in = fopen(src, "rb");
		if (!in) {
			ret = plot_set_err(c, -errno,
					   "%s: %s (is the plot template directory right?)", src,
					   strerror(errno));
			goto next;
		}
		out = fopen(dst, "wb");
		if (!out) {
			ret = plot_set_err(c, -errno, "%s: %s", dst, strerror(errno));
			goto next;
		}
		for (size_t n; (n = fread(buf, 1, sizeof(buf), in)) > 0;)
			if (fwrite(buf, 1, n, out) != n) {
				ret = plot_set_err(c, -EIO, "%s: write failed", dst);
				goto next;
			}
	next:
		if (in)
			fclose(in);
		if (out && fclose(out) && !ret)
			ret = plot_set_err(c, -EIO, "%s: write failed", dst);
		free(src);
		free(dst);
		if (ret)
			return ret;
	}
	return 0;
}
