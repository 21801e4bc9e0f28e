/* SPDX-License-Identifier: MIT */
/*
 * plot_gnuplot -- the gnuplot side of plotting: finding the program, running it without a
 * shell under a time limit, writing each graph's .gp wrapper, drawing every graph of a run
 * with one gnuplot process, and copying the templates.
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

/* A render of a run's graphs takes seconds at most; a hung gnuplot must not hang the run. */
#define GNUPLOT_TIMEOUT_MS 60000

static const char *const template_names[] = { "style.gp", "lines.gp", "stacked.gp" };

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

/* The calls that draw graph `name` on both terminals, as render-all.gp and NAME.gp hold them. */
static void write_calls(FILE *f, const char *name, const char *template, const char *const args[7])
{
	static const char *const ext[2] = { "png", "svg" };

	for (int k = 0; k < 2; k++) {
		char *flags = util_asprintf("%s %s", args[5], ext[k]);

		fprintf(f, "call _d.'%s' _d.'%s.dat' _d.'%s.%s'", template, name, name, ext[k]);
		for (int a = 0; a < 7; a++) {
			fputc(' ', f);
			gp_quote(f, a == 5 ? (flags ? flags : ext[k]) : args[a]);
		}
		fputc('\n', f);
		free(flags);
	}
}

/* Sets _d to the directory of the script being run, so it renders wherever it was moved. */
static void write_prologue(FILE *f)
{
	fputs("_d = \"\"\n_p = ARG0\n", f);
	fputs("while (strstrt(_p, \"/\") > 0) { _i = strstrt(_p, \"/\"); "
	      "_d = _d . _p[1:_i]; _p = _p[_i+1:] }\n",
	      f);
}

/*
 * Write DIR/plots/<name>.gp (re-renders from the copies of the templates next to it, wherever
 * the directory is moved) and queue the graph for plot_render_all: starting gnuplot once per
 * graph and terminal was most of a short run's time (40 processes for a cmdq sweep).
 */
int plot_render(struct plot_ctx *c, const char *name, const char *template,
		const char *const args[7])
{
	char *gp = util_asprintf("%s/%s.gp", c->plots_dir, name);
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (!gp)
		goto out;
	f = fopen(gp, "w");
	if (!f) {
		ret = plot_set_err(c, -errno, "%s: %s", gp, strerror(errno));
		goto out;
	}
	fprintf(f, "# %s.gp -- re-render %s.png and %s.svg from %s.dat (written by iommulab)\n",
		name, name, name, name);
	fprintf(f, "# usage: gnuplot path/to/%s.gp   (from any directory)\n", name);
	write_prologue(f);
	write_calls(f, name, template, args);
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", gp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!c->first_graph)
		c->first_graph = strdup(gp);
	ret = plot_report_add_graph(c->rep, name, args[0]);
	if (ret)
		goto out;
	ret = -ENOMEM;

	if (!c->gnuplot) {
		ret = plot_report_add(c->rep, gp);
		goto out;
	}
	if (!c->batch) {
		c->batch = open_memstream(&c->batch_text, &c->batch_len);
		if (!c->batch)
			goto out;
	}
	write_calls(c->batch, name, template, args);
	char **np = realloc(c->pending, (c->n_pending + 1) * sizeof(*np));

	if (!np)
		goto out;
	c->pending = np;
	np[c->n_pending] = strdup(name);
	if (!np[c->n_pending])
		goto out;
	c->n_pending++;
	ret = 0;
out:
	if (f)
		fclose(f);
	free(gp);
	return ret;
}

/* Both images of graph `name` exist and are not empty. */
static bool rendered(struct plot_ctx *c, const char *name)
{
	static const char *const ext[2] = { "png", "svg" };

	for (int k = 0; k < 2; k++) {
		char *out = util_asprintf("%s/%s.%s", c->plots_dir, name, ext[k]);
		struct stat st;
		bool ok = out && !stat(out, &st) && st.st_size > 0;

		free(out);
		if (!ok)
			return false;
	}
	return true;
}

static int run_script(struct plot_ctx *c, const char *script)
{
	/* A relative path starting with '-' (--out -x) would be read as an option: ./-x/... */
	char *dotted = script[0] == '-' ? util_asprintf("./%s", script) : NULL;
	char *argv[] = { c->gnuplot, dotted ? dotted : (char *)script, NULL };
	int rc;

	if (script[0] == '-' && !dotted)
		return -ENOMEM;
	rc = run_program(c, argv);
	free(dotted);
	return rc;
}

/*
 * Draw every queued graph with one gnuplot process running render-all.gp. gnuplot stops a
 * script at its first error, so a graph missing afterwards is drawn again alone (NAME.gp):
 * one bad graph costs only itself.
 */
int plot_render_all(struct plot_ctx *c)
{
	char *all = util_asprintf("%s/render-all.gp", c->plots_dir);
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (!all)
		goto out;
	if (c->batch) {
		if (fclose(c->batch)) {
			c->batch = NULL;
			goto out;
		}
		c->batch = NULL;
	}
	f = fopen(all, "w");
	if (!f) {
		ret = plot_set_err(c, -errno, "%s: %s", all, strerror(errno));
		goto out;
	}
	fputs("# render-all.gp -- re-render every graph of this directory (written by iommulab)\n"
	      "# usage: gnuplot path/to/render-all.gp   (from any directory)\n",
	      f);
	write_prologue(f);
	if (c->batch_text)
		fputs(c->batch_text, f);
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", all, strerror(errno));
		goto out;
	}
	f = NULL;
	ret = 0;
	if (!c->gnuplot || !c->n_pending)
		goto out;

	for (size_t i = 0; i < c->n_pending; i++) {
		char *png = util_asprintf("%s/%s.png", c->plots_dir, c->pending[i]);
		char *svg = util_asprintf("%s/%s.svg", c->plots_dir, c->pending[i]);

		if (png)
			unlink(png);
		if (svg)
			unlink(svg);
		free(png);
		free(svg);
	}
	ret = run_script(c, all);
	if (ret)
		dprintf(c->log_fd, "iommulab: %s: %s; drawing the missing graphs one by one\n", all,
			strerror(-ret));
	for (size_t i = 0; i < c->n_pending; i++) {
		const char *name = c->pending[i];

		if (!rendered(c, name)) {
			char *gp = util_asprintf("%s/%s.gp", c->plots_dir, name);

			if (!gp) {
				ret = -ENOMEM;
				goto out;
			}
			ret = run_script(c, gp);
			free(gp);
			if (ret || !rendered(c, name)) {
				dprintf(c->log_fd, "iommulab: rendering %s failed: %s\n", name,
					strerror(ret ? -ret : EIO));
				c->n_render_failed++;
				continue;
			}
		}
		char *png = util_asprintf("%s/%s.png", c->plots_dir, name);
		char *svg = util_asprintf("%s/%s.svg", c->plots_dir, name);

		ret = png && svg ? plot_report_add(c->rep, png) : -ENOMEM;
		if (!ret)
			ret = plot_report_add(c->rep, svg);
		free(png);
		free(svg);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	free(all);
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
