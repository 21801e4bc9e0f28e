/* SPDX-License-Identifier: MIT */
/*
 * plot -- read a results directory's trials.csv back, aggregate the repeats of each (x value,
 * line) into a mean and 95% CI (results/aggregate.h, as summary.json does), and write gnuplot data,
 * wrapper scripts and PNG/SVG graphs under DIR/plots/ (see plot.h). trials.csv is read by column
 * name, so the same code plots any run: cmdq, iova or dma, with any sweep axes, metrics, phases and
 * counters.
 */
#include "plot/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "results/aggregate.h"
#include "results/csv.h"
#include "stats/stats.h"
#include "util/fs.h"

extern char **environ;

/* A gnuplot render of one graph is well under a second; a hung one must not hang the run. */
#define GNUPLOT_TIMEOUT_MS 60000

static const char *const template_names[] = {"style.gp", "lines.gp", "phases.gp"};

struct plot_ctx {
	const char *dir;
	char *plots_dir;
	const char *template_dir;
	char *gnuplot; /* resolved program, NULL when not found */
	char *log_path;
	int log_fd;
	struct plot_report *rep;
	char *err;
	size_t err_len;
	int n_render_failed;
	char *first_graph; /* for the "render with" note */

	struct csv_table t;
	long c_plugin, c_status, c_x;
	long *other_axes;
	size_t n_other;
	const char *x_name;

	/* Distinct x values (numeric order when all are numbers) and lines, over ok rows. */
	char **xs;
	double *x_num;
	size_t n_x;
	bool x_numeric;
	char **lines; /* "plugin axis=value ..." */
	size_t n_lines;
	long *row_x, *row_line; /* per row; -1 for rows not plotted */

	/* The repeats of each (line, x): cell[line * n_x + x], NULL where none succeeded. */
	struct agg_table table;
	struct agg_groups groups;
	const struct agg_group **cell;
};

static int set_err(struct plot_ctx *c, int ret, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_err(struct plot_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->err_len, fmt, ap);
	va_end(ap);
	return ret;
}

static int report_add(struct plot_report *rep, const char *path)
{
	char **w = realloc(rep->written, (rep->n_written + 1) * sizeof(*w));

	if (!w)
		return -ENOMEM;
	rep->written = w;
	w[rep->n_written] = strdup(path);
	if (!w[rep->n_written])
		return -ENOMEM;
	rep->n_written++;
	return 0;
}

/* File names come from column names in the CSV: keep them to a safe alphabet. */
static void sanitize_name(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			*s = '_';
}

/* Text that goes into a gnuplot argument list or data file: one line, no '"' or '|'. */
static void sanitize_label(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '|')
			*s = *s == '"' ? '\'' : (*s == '|' ? '/' : ' ');
}

/* ---- the table: x values, lines and which rows count ---- */

static long find_index(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return (long)i;
	return -1;
}

static int push_str(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static char *line_label(struct plot_ctx *c, char **row)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	len = (size_t)snprintf(s, cap, "%s", row[c->c_plugin]);
	for (size_t i = 0; i < c->n_other; i++) {
		const char *name = c->t.header[c->other_axes[i]];
		const char *dot = strrchr(name, '.');
		char *part = util_asprintf(" %s=%s", dot ? dot + 1 : name, row[c->other_axes[i]]);

		if (!part) {
			free(s);
			return NULL;
		}
		if (len + strlen(part) + 1 > cap) {
			cap = len + strlen(part) + 256;
			char *ns = realloc(s, cap);

			if (!ns) {
				free(part);
				free(s);
				return NULL;
			}
			s = ns;
		}
		strcpy(s + len, part);
		len += strlen(part);
		free(part);
	}
	sanitize_label(s);
	return s;
}

static int cmp_x(const void *a, const void *b, void *arg)
{
	const double *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	return (x[i] > x[j]) - (x[i] < x[j]);
}

/* The repeats of each (line, x) as one group of the shared aggregation. */
static int group_rows(struct plot_ctx *c)
{
	long *key = malloc((c->t.n_rows + 1) * sizeof(*key));
	int ret = -ENOMEM;

	c->table = (struct agg_table){.rows = (char *const *const *)c->t.rows,
				      .n_rows = c->t.n_rows,
				      .c_status = (size_t)c->c_status};
	c->cell = calloc(c->n_lines * c->n_x + 1, sizeof(*c->cell));
	if (!key || !c->cell)
		goto out;
	for (size_t r = 0; r < c->t.n_rows; r++)
		key[r] = c->row_x[r] < 0 ? -1 : c->row_line[r] * (long)c->n_x + c->row_x[r];
	ret = agg_group_by(&c->table, key, &c->groups);
	for (size_t i = 0; !ret && i < c->groups.n; i++)
		c->cell[c->groups.g[i].key] = &c->groups.g[i];
out:
	free(key);
	return ret;
}

static int index_rows(struct plot_ctx *c)
{
	struct csv_table *t = &c->t;
	size_t n_ok = 0;

	c->row_x = malloc((t->n_rows + 1) * sizeof(long));
	c->row_line = malloc((t->n_rows + 1) * sizeof(long));
	if (!c->row_x || !c->row_line)
		return -ENOMEM;

	for (size_t r = 0; r < t->n_rows; r++) {
		char **row = t->rows[r];

		c->row_x[r] = c->row_line[r] = -1;
		if (strcmp(row[c->c_status], "ok"))
			continue;
		n_ok++;
		long xi = find_index(c->xs, c->n_x, row[c->c_x]);

		if (xi < 0) {
			if (push_str(&c->xs, &c->n_x, row[c->c_x]))
				return -ENOMEM;
			xi = (long)c->n_x - 1;
		}
		char *label = line_label(c, row);

		if (!label)
			return -ENOMEM;
		long li = find_index(c->lines, c->n_lines, label);

		if (li < 0) {
			if (push_str(&c->lines, &c->n_lines, label)) {
				free(label);
				return -ENOMEM;
			}
			li = (long)c->n_lines - 1;
		}
		free(label);
		c->row_x[r] = xi;
		c->row_line[r] = li;
	}

	/* Numeric x (CPUs, cmds_per_sync): sort by value; otherwise keep first-seen order. */
	c->x_num = calloc(c->n_x + 1, sizeof(double));
	if (!c->x_num)
		return -ENOMEM;
	c->x_numeric = true;
	for (size_t i = 0; i < c->n_x; i++)
		if (!agg_value(c->xs[i], &c->x_num[i]))
			c->x_numeric = false;
	if (c->x_numeric && c->n_x > 1) {
		size_t *order = malloc(c->n_x * sizeof(*order));
		long *rank = malloc(c->n_x * sizeof(*rank));
		char **xs = malloc(c->n_x * sizeof(*xs));
		double *xn = malloc(c->n_x * sizeof(*xn));

		if (!order || !rank || !xs || !xn) {
			free(order);
			free(rank);
			free(xs);
			free(xn);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->n_x; i++)
			order[i] = i;
		qsort_r(order, c->n_x, sizeof(*order), cmp_x, c->x_num);
		for (size_t i = 0; i < c->n_x; i++) {
			rank[order[i]] = (long)i;
			xs[i] = c->xs[order[i]];
			xn[i] = c->x_num[order[i]];
		}
		for (size_t r = 0; r < t->n_rows; r++)
			if (c->row_x[r] >= 0)
				c->row_x[r] = rank[c->row_x[r]];
		free(c->xs);
		free(c->x_num);
		c->xs = xs;
		c->x_num = xn;
		free(order);
		free(rank);
	}
	return n_ok ? group_rows(c) : -ENODATA;
}

/* Mean and CI of column col over the ok rows of (line, x). Returns the number of values. */
static size_t aggregate(struct plot_ctx *c, long col, size_t line, size_t xi, double *vals,
			struct mean_ci *out)
{
	const struct agg_group *g = c->cell[line * c->n_x + xi];

	*out = g ? agg_mean_ci(&c->table, g, (size_t)col, vals) : stats_mean_ci(vals, 0);
	return out->n;
}

static bool column_has_value(struct plot_ctx *c, long col)
{
	for (size_t r = 0; r < c->t.n_rows; r++)
		if (c->row_x[r] >= 0 && c->t.rows[r][col][0])
			return true;
	return false;
}

/* ---- gnuplot ---- */

static bool is_executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* The program to run: a path as given, or a bare name looked up in PATH like execvp would. */
static char *find_program(const char *prog)
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
		struct timespec ts = {0, 10 * 1000 * 1000};

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
static int render(struct plot_ctx *c, const char *name, const char *template,
		  const char *const args[6])
{
	char *gp = util_asprintf("%s/%s.gp", c->plots_dir, name);
	char *dat = util_asprintf("%s/%s.dat", c->plots_dir, name);
	char *tpl = util_asprintf("%s/%s", c->template_dir, template);
	char *out[2] = {util_asprintf("%s/%s.png", c->plots_dir, name),
			util_asprintf("%s/%s.svg", c->plots_dir, name)};
	static const char *const ext[2] = {"png", "svg"};
	FILE *f = NULL;
	int ret = -ENOMEM;

	if (!gp || !dat || !tpl || !out[0] || !out[1])
		goto out;

	f = fopen(gp, "w");
	if (!f) {
		ret = set_err(c, -errno, "%s: %s", gp, strerror(errno));
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
		ret = set_err(c, -errno, "%s: %s", gp, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!c->first_graph)
		c->first_graph = strdup(gp);

	if (!c->gnuplot) {
		ret = report_add(c->rep, gp);
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		char *argv[] = {c->gnuplot,
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
				NULL};
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
		ret = report_add(c->rep, out[k]);
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

/* ---- line graphs ---- */

struct series {
	long col;	    /* the CSV column aggregated */
	const char *suffix; /* appended to the line label in the key ("p50"), or NULL */
};

/*
 * One graph: for each line and each series, a data block of x mean ci_low ci_high xtic.
 * With several series per line (p50 and p99), blocks are paired by line.
 */
static int graph_lines(struct plot_ctx *c, const char *name, const char *title,
		       const char *subtitle, const char *ylabel, const struct series *s,
		       size_t n_series)
{
	size_t n_blocks = c->n_lines * n_series;
	struct mean_ci *ci = calloc(n_blocks * c->n_x + 1, sizeof(*ci));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	bool *have_line = calloc(c->n_lines + 1, sizeof(bool));
	char *dat = util_asprintf("%s/%s.dat", c->plots_dir, name);
	char *labels = NULL, *xlabel = NULL, flags[64] = "";
	size_t labels_len = 0;
	FILE *f = NULL, *lf = NULL;
	int ret = -ENOMEM;
	double ymin = INFINITY, ymax = -INFINITY;
	bool any = false, points = c->n_x == 1;

	if (!ci || !vals || !have_line || !dat)
		goto out;

	for (size_t l = 0; l < c->n_lines; l++)
		for (size_t k = 0; k < n_series; k++)
			for (size_t x = 0; x < c->n_x; x++) {
				struct mean_ci *m = &ci[(l * n_series + k) * c->n_x + x];

				if (!aggregate(c, s[k].col, l, x, vals, m))
					continue;
				have_line[l] = any = true;
				if (m->mean > 0 && m->mean < ymin)
					ymin = m->mean;
				if (m->mean > ymax)
					ymax = m->mean;
			}
	if (!any) {
		ret = 0; /* nothing measured: no graph rather than an empty one */
		goto out;
	}

	bool logy = ymin > 0 && isfinite(ymin) && ymax / ymin > 20;
	bool logx =
	    !points && c->x_numeric && c->x_num[0] > 0 && c->x_num[c->n_x - 1] / c->x_num[0] > 16;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	if (!f || !lf) {
		ret = set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	size_t written = 0, line_no = 0;

	for (size_t l = 0; l < c->n_lines; l++) {
		if (!have_line[l])
			continue;
		line_no++;
		for (size_t k = 0; k < n_series; k++) {
			if (written++) {
				fputs("\n\n", f);
				fputc('|', lf);
			}
			fprintf(f, "# %s: %s%s%s\n", name, c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			fprintf(f, "# x mean ci_low ci_high xtic\n");
			fprintf(lf, "%s%s%s", c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			bool rows = false;

			for (size_t x = 0; x < c->n_x; x++) {
				struct mean_ci *m = &ci[(l * n_series + k) * c->n_x + x];

				if (!m->n)
					continue;
				double lo = m->mean - m->half_width, hi = m->mean + m->half_width;

				/* A log axis cannot show a bar below zero: stop it at the mean. */
				if (logy && lo <= 0)
					lo = m->mean;
				if (points)
					fprintf(f, "%zu", line_no);
				else if (c->x_numeric)
					fprintf(f, "%.10g", c->x_num[x]);
				else
					fprintf(f, "%zu", x + 1);
				fprintf(f, " %.10g %.10g %.10g \"%s\"\n", m->mean, lo, hi,
					points ? c->lines[l] : c->xs[x]);
				rows = true;
			}
			/* gnuplot needs at least one point per index it is asked for. */
			if (!rows)
				fputs("? ? ? ? \"\"\n", f);
		}
	}
	if (fclose(lf)) {
		lf = NULL;
		goto out;
	}
	lf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;

	snprintf(flags, sizeof(flags), "%s%s%s%s%s%s", logx ? "logx " : "", logy ? "logy " : "",
		 points ? "points catx " : "", !points && !c->x_numeric ? "catx " : "",
		 !points && c->n_x <= 12 ? "datatics " : "", n_series == 2 ? "paired" : "");
	if (points)
		xlabel = util_asprintf("%s = %s", c->x_name, c->xs[0]);
	else
		xlabel = strdup(c->x_name);
	if (!xlabel)
		goto out;
	sanitize_label(xlabel);

	const char *args[6] = {title, subtitle, xlabel, ylabel, labels, flags};

	ret = render(c, name, "lines.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	free(labels);
	free(xlabel);
	free(ci);
	free(vals);
	free(have_line);
	free(dat);
	return ret;
}

static const char *subtitle_of(bool higher_better)
{
	return higher_better ? "higher is better" : "lower is better";
}

static int plot_latency(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		size_t len = strlen(h);

		if (len <= 7 || strcmp(h + len - 7, "_p50_ns"))
			continue;
		char *metric = strndup(h, len - 7);
		char *p99 = metric ? util_asprintf("%s_p99_ns", metric) : NULL;
		char *name = metric ? util_asprintf("latency-%s", metric) : NULL;
		char *title =
		    metric ? util_asprintf("%s latency: p50 (filled) and p99 (open, dashed), "
					   "mean of repeats with 95%% CI",
					   metric)
			   : NULL;
		int ret = -ENOMEM;

		if (p99 && name && title) {
			sanitize_name(name);
			sanitize_label(title);
			long c99 = csv_column(&c->t, p99);
			struct series s[2] = {{(long)i, "p50"}, {c99, "p99"}};

			ret = graph_lines(c, name, title, subtitle_of(false), "latency (ns)", s,
					  c99 >= 0 ? 2 : 1);
		}
		free(metric);
		free(p99);
		free(name);
		free(title);
		if (ret)
			return ret;
	}
	return 0;
}

static int plot_throughput(struct plot_ctx *c)
{
	long col = csv_column(&c->t, "ops_per_sec");
	struct series s = {col, NULL};

	if (col < 0)
		return 0;
	return graph_lines(c, "throughput",
			   "Throughput: ops/s over all CPUs (mean of repeats, 95% CI)",
			   subtitle_of(true), "ops/s", &s, 1);
}

/* Counters: a column C with a C_per_op column next to it (see results.h). */
static int plot_counters(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		char *per = util_asprintf("%s_per_op", h);
		long cp = per ? csv_column(&c->t, per) : -1;
		int ret = 0;

		free(per);
		if (cp < 0)
			continue;
		bool events = column_has_value(c, cp);

		/* A level (things held) leaves _per_op empty: plot the level itself. */
		if (!events && !column_has_value(c, (long)i))
			continue;
		char *name = util_asprintf("counter-%s", h);
		char *title =
		    events ? util_asprintf("%s per op", h) : util_asprintf("%s at the end", h);
		struct series s = {events ? cp : (long)i, NULL};

		if (name && title) {
			sanitize_name(name);
			sanitize_label(title);
			ret = graph_lines(c, name, title,
					  events ? "per op (events counted / ops completed)"
						 : "level (held at the end of the trial)",
					  events ? "per op" : "level", &s, 1);
		} else {
			ret = -ENOMEM;
		}
		free(name);
		free(title);
		if (ret)
			return ret;
	}
	return 0;
}

/* Phases: stacked bars of mean ns per op in each phase, one bar per line, at the largest x. */
static int plot_phases(struct plot_ctx *c)
{
	size_t n_ph = 0;
	long *cols = malloc((c->t.n_cols + 1) * sizeof(*cols));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	char *dat = util_asprintf("%s/phases.dat", c->plots_dir);
	char *labels = NULL, *title = NULL;
	size_t labels_len = 0, xi = c->n_x - 1, bars = 0;
	FILE *f = NULL, *lf = NULL;
	int ret = -ENOMEM;

	if (!cols || !vals || !dat)
		goto out;
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		size_t len = strlen(h);

		if (len > 9 && !strncmp(h, "phase_", 6) && !strcmp(h + len - 3, "_ns") &&
		    column_has_value(c, (long)i))
			cols[n_ph++] = (long)i;
	}
	ret = 0;
	if (!n_ph)
		goto out;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	if (!f || !lf) {
		ret = set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	fprintf(f, "# phases: mean ns per op in each phase at %s = %s\n# line", c->x_name,
		c->xs[xi]);
	for (size_t p = 0; p < n_ph; p++) {
		const char *h = c->t.header[cols[p]];

		fprintf(f, " %.*s", (int)(strlen(h) - 9), h + 6);
		fprintf(lf, "%s%.*s", p ? "|" : "", (int)(strlen(h) - 9), h + 6);
	}
	fputc('\n', f);
	for (size_t l = 0; l < c->n_lines; l++) {
		struct mean_ci m[64];
		bool any = false;

		for (size_t p = 0; p < n_ph && p < 64; p++)
			if (aggregate(c, cols[p], l, xi, vals, &m[p]))
				any = true;
		if (!any)
			continue;
		fprintf(f, "\"%s\"", c->lines[l]);
		for (size_t p = 0; p < n_ph && p < 64; p++)
			fprintf(f, " %.10g", m[p].n ? m[p].mean : 0.0);
		fputc('\n', f);
		bars++;
	}
	if (fclose(lf)) {
		lf = NULL;
		ret = -ENOMEM;
		goto out;
	}
	lf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!bars)
		goto out;
	for (char *p = labels; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '"')
			*p = '_';
	title = util_asprintf("Time per op in each phase at %s = %s (mean of repeats)", c->x_name,
			      c->xs[xi]);
	if (!title) {
		ret = -ENOMEM;
		goto out;
	}
	sanitize_label(title);

	const char *args[6] = {title, subtitle_of(false), "", "ns per op", labels, ""};

	ret = render(c, "phases", "phases.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	free(labels);
	free(title);
	free(cols);
	free(vals);
	free(dat);
	return ret;
}

/* ---- setup ---- */

/* Copy the templates next to the data so DIR/plots/ renders on any machine with gnuplot. */
static int copy_templates(struct plot_ctx *c)
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
			ret = set_err(c, -errno, "%s: %s (is the plot template directory right?)",
				      src, strerror(errno));
			goto next;
		}
		out = fopen(dst, "wb");
		if (!out) {
			ret = set_err(c, -errno, "%s: %s", dst, strerror(errno));
			goto next;
		}
		for (size_t n; (n = fread(buf, 1, sizeof(buf), in)) > 0;)
			if (fwrite(buf, 1, n, out) != n) {
				ret = set_err(c, -EIO, "%s: write failed", dst);
				goto next;
			}
	next:
		if (in)
			fclose(in);
		if (out && fclose(out) && !ret)
			ret = set_err(c, -EIO, "%s: write failed", dst);
		free(src);
		free(dst);
		if (ret)
			return ret;
	}
	return 0;
}

static int load_table(struct plot_ctx *c)
{
	char *path = util_asprintf("%s/trials.csv", c->dir);
	int ret;

	if (!path)
		return -ENOMEM;
	ret = csv_read(path, &c->t, c->err, c->err_len);
	if (ret)
		goto out;

	c->c_plugin = csv_column(&c->t, "plugin");
	c->c_status = csv_column(&c->t, "status");
	if (c->c_plugin < 0 || c->c_status < 0) {
		ret = set_err(c, -EINVAL, "%s:1: no '%s' column: not an iommulab trials.csv", path,
			      c->c_plugin < 0 ? "plugin" : "status");
		goto out;
	}
	/* The sweep axes sit between plugin and status; x is the first, or the CPU count. */
	if (c->c_status > c->c_plugin + 1) {
		c->c_x = c->c_plugin + 1;
		c->n_other = (size_t)(c->c_status - c->c_plugin - 2);
		c->other_axes = malloc((c->n_other + 1) * sizeof(long));
		if (!c->other_axes) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < c->n_other; i++)
			c->other_axes[i] = c->c_x + 1 + (long)i;
	} else {
		c->c_x = csv_column(&c->t, "cpus");
		if (c->c_x < 0) {
			ret = set_err(c, -EINVAL, "%s:1: no sweep axis and no 'cpus' column", path);
			goto out;
		}
	}
	c->x_name = c->t.header[c->c_x];
	ret = 0;
out:
	free(path);
	return ret;
}

static void ctx_free(struct plot_ctx *c)
{
	for (size_t i = 0; i < c->n_x; i++)
		free(c->xs[i]);
	for (size_t i = 0; i < c->n_lines; i++)
		free(c->lines[i]);
	free(c->xs);
	free(c->x_num);
	free(c->lines);
	free(c->row_x);
	free(c->row_line);
	free((void *)c->cell);
	agg_groups_free(&c->groups);
	free(c->other_axes);
	csv_free(&c->t);
	free(c->plots_dir);
	free(c->gnuplot);
	free(c->log_path);
	free(c->first_graph);
	if (c->log_fd >= 0)
		close(c->log_fd);
}

int plot_results(const char *results_dir, const char *template_dir, const char *gnuplot,
		 struct plot_report *report, char *err, size_t err_len)
{
	struct plot_ctx c = {.dir = results_dir,
			     .template_dir = template_dir,
			     .rep = report,
			     .err = err,
			     .err_len = err_len,
			     .log_fd = -1};
	int ret;

	memset(report, 0, sizeof(*report));
	if (err_len)
		err[0] = '\0';

	ret = load_table(&c);
	if (ret)
		goto out;
	ret = index_rows(&c);
	if (ret == -ENODATA) {
		snprintf(report->note, sizeof(report->note),
			 "%s/trials.csv has no successful trial: nothing to plot", results_dir);
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;

	c.plots_dir = util_asprintf("%s/plots", results_dir);
	if (!c.plots_dir) {
		ret = -ENOMEM;
		goto out;
	}
	if (mkdir(c.plots_dir, 0755) && errno != EEXIST) {
		ret = set_err(&c, -errno, "%s: %s", c.plots_dir, strerror(errno));
		goto out;
	}
	ret = copy_templates(&c);
	if (ret)
		goto out;

	c.gnuplot = find_program(gnuplot ? gnuplot : "gnuplot");
	if (c.gnuplot) {
		c.log_path = util_asprintf("%s/gnuplot.log", c.plots_dir);
		if (!c.log_path) {
			ret = -ENOMEM;
			goto out;
		}
		c.log_fd = open(c.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (c.log_fd < 0) {
			ret = set_err(&c, -errno, "%s: %s", c.log_path, strerror(errno));
			goto out;
		}
	}

	ret = plot_latency(&c);
	if (!ret)
		ret = plot_throughput(&c);
	if (!ret)
		ret = plot_phases(&c);
	if (!ret)
		ret = plot_counters(&c);
	if (ret) {
		if (err_len && !err[0])
			snprintf(err, err_len, "%s: %s", c.plots_dir, strerror(-ret));
		goto out;
	}

	if (!c.gnuplot) {
		report->rendered = 0;
		snprintf(
		    report->note, sizeof(report->note),
		    "gnuplot not found; the data and scripts are in %s: render with: gnuplot %s",
		    c.plots_dir, c.first_graph ? c.first_graph : "<name>.gp");
	} else if (c.n_render_failed) {
		ret = set_err(&c, -EIO, "gnuplot failed on %d render(s); see %s", c.n_render_failed,
			      c.log_path);
	} else {
		report->rendered = 1;
	}
out:
	ctx_free(&c);
	return ret;
}

void plot_report_free(struct plot_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_written; i++)
		free(r->written[i]);
	free(r->written);
	r->written = NULL;
	r->n_written = 0;
}
