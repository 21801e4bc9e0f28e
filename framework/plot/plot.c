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
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "plot/plot_internal.h"
#include "util/fs.h"

int plot_set_err(struct plot_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->err_len, fmt, ap);
	va_end(ap);
	return ret;
}

int plot_report_add_graph(struct plot_report *rep, const char *name, const char *title)
{
	struct plot_graph *g = realloc(rep->graphs, (rep->n_graphs + 1) * sizeof(*g));

	if (!g)
		return -ENOMEM;
	rep->graphs = g;
	g[rep->n_graphs].name = strdup(name);
	g[rep->n_graphs].title = strdup(title);
	if (!g[rep->n_graphs].name || !g[rep->n_graphs].title) {
		free(g[rep->n_graphs].name);
		free(g[rep->n_graphs].title);
		return -ENOMEM;
	}
	rep->n_graphs++;
	return 0;
}

int plot_report_add(struct plot_report *rep, const char *path)
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
void plot_sanitize_label(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '|')
			*s = *s == '"' ? '\'' : (*s == '|' ? '/' : ' ');
}

/* ---- styles ---- */

/*
 * Filled markers, and the open version of each for a pair's second series (gnuplot's
 * pointtypes: 7/6 circle, 5/4 square, 9/8 triangle, 11/10 inverted triangle, 13/12 diamond,
 * 15/14 pentagon; 1 plus and 2 cross have no open form, 3 star stands in).
 */
static const int marker_filled[8] = { 7, 5, 9, 11, 13, 15, 1, 2 };
static const int marker_open[8] = { 6, 4, 8, 10, 12, 14, 3, 3 };

void plot_style_of(size_t plugin, size_t variant, bool second, struct plot_style *s)
{
	/* style.gp defines colours 1..8; past 8 plugins the colour repeats with a new marker. */
	size_t m = (plugin + plugin / 8) % 8;

	s->lt = (int)(plugin % 8) + 1;
	s->pt = second ? marker_open[m] : marker_filled[m];
	/* dash 1 solid, 2 dashed (the second series); 3, 4, 5 for the other axes' variants. */
	s->dt = variant ? 3 + (int)((variant - 1) % 3) : (second ? 2 : 1);
}

/* ---- line graphs ---- */

struct series {
	long col;	    /* the CSV column aggregated */
	const char *suffix; /* appended to the line label in the key ("p50"), or NULL */
};

/* A horizontal reference line (a device ceiling) drawn dashed across the graph. */
struct ref_line {
	double y;
	char label[200];
};

/* Whether blocks a and b (n_x means each) hold the same values at the same x. */
static bool same_values(const struct mean_ci *a, const struct mean_ci *b, size_t n_x)
{
	bool any = false;

	for (size_t x = 0; x < n_x; x++) {
		if (!a[x].n != !b[x].n)
			return false;
		if (!a[x].n)
			continue;
		double d = fabs(a[x].mean - b[x].mean), s = fmax(fabs(a[x].mean), fabs(b[x].mean));

		if (d > 1e-9 * s)
			return false;
		any = true;
	}
	return any;
}

/*
 * One graph: for each line and each series, a data block of x mean ci_low ci_high xtic, then
 * one block per reference line. With several series per line (p50 and p99), blocks are
 * paired by line. si: the values are ns or ops/s, whose log axis may use k/M/G prefixes.
 */
static int graph_lines(struct plot_ctx *c, const char *name, const char *title,
		       const char *subtitle, const char *ylabel, const struct series *s,
		       size_t n_series, const struct ref_line *refs, size_t n_refs, bool si)
{
	size_t n_blocks = c->n_lines * n_series;
	struct mean_ci *ci = calloc(n_blocks * c->n_x + 1, sizeof(*ci));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	bool *have_line = calloc(c->n_lines + 1, sizeof(bool));
	char *dat = util_asprintf("%s/%s.dat", c->plots_dir, name);
	char *labels = NULL, *styles = NULL, *xlabel = NULL, flags[64] = "";
	size_t labels_len = 0, styles_len = 0;
	FILE *f = NULL, *lf = NULL, *sf = NULL;
	int ret = -ENOMEM;
	double ymin = INFINITY, ymax = -INFINITY;
	bool any = false, points = c->n_x == 1;

	if (!ci || !vals || !have_line || !dat)
		goto out;

	double ypos = INFINITY; /* the smallest value above zero */

	for (size_t l = 0; l < c->n_lines; l++)
		for (size_t k = 0; k < n_series; k++)
			for (size_t x = 0; x < c->n_x; x++) {
				struct mean_ci *m = &ci[(l * n_series + k) * c->n_x + x];

				if (!plot_aggregate(c, s[k].col, l, x, vals, m))
					continue;
				have_line[l] = any = true;
				ymin = fmin(ymin, m->mean);
				ymax = fmax(ymax, m->mean);
				if (m->mean > 0)
					ypos = fmin(ypos, m->mean);
			}
	if (!any) {
		ret = 0; /* nothing measured: no graph rather than an empty one */
		goto out;
	}
	for (size_t i = 0; i < n_refs; i++) {
		ymin = fmin(ymin, refs[i].y);
		ymax = fmax(ymax, refs[i].y);
		ypos = fmin(ypos, refs[i].y);
	}

	/*
	 * A zero has no place on a log axis. A counter with zeros stays linear (its zeros are
	 * the finding). Latency and ops/s span decades (a linear axis would flatten all but the
	 * worst line), and their zeros are a plugin that does nothing there (null): those stay
	 * log, and the key says which lines are off it.
	 */
	bool logy = isfinite(ypos) && ymax / ypos > 20 && (si || ymin > 0);
	bool logx = !points && c->x_numeric && c->x_num[0] > 0 &&
		    c->x_num[c->n_x - 1] / c->x_num[0] > 16;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	sf = open_memstream(&styles, &styles_len);
	if (!f || !lf || !sf) {
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	size_t written = 0, line_no = 0;
	double x_first = 0, x_last = 0;

	for (size_t l = 0; l < c->n_lines; l++) {
		if (!have_line[l])
			continue;
		line_no++;
		for (size_t k = 0; k < n_series; k++) {
			const struct mean_ci *mk = &ci[(l * n_series + k) * c->n_x];
			struct plot_style st;

			if (written++) {
				fputs("\n\n", f);
				fputc('|', lf);
			}
			fprintf(f, "# %s: %s%s%s\n", name, c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			fprintf(f, "# x mean ci_low ci_high xtic\n");
			fprintf(lf, "%s%s%s", c->lines[l], s[k].suffix ? " " : "",
				s[k].suffix ? s[k].suffix : "");
			/* Drawn over an earlier line, it would vanish: the key says where it is. */
			for (size_t l2 = 0; l2 < l; l2++) {
				if (!have_line[l2] ||
				    !same_values(&ci[(l2 * n_series + k) * c->n_x], mk, c->n_x))
					continue;
				fprintf(lf, " (same as %s)", c->lines[l2]);
				break;
			}
			bool zero = false, drawn = false;

			for (size_t x = 0; x < c->n_x; x++) {
				zero |= mk[x].n && mk[x].mean <= 0;
				drawn |= mk[x].n && mk[x].mean > 0;
			}
			if (logy && zero)
				fputs(drawn ? " (zeros off the log axis)"
					    : " (zero: off the log axis)",
				      lf);
			plot_style_of(c->line_plugin[l], c->line_variant[l], k == 1, &st);
			fprintf(sf, "%s%d %d %d 1.2", written > 1 ? " " : "", st.lt, st.pt, st.dt);
			bool rows = false;

			for (size_t x = 0; x < c->n_x; x++) {
				const struct mean_ci *m = &mk[x];
				double xv;

				if (!m->n)
					continue;
				double lo = m->n > 1 ? m->low : m->mean,
				       hi = m->n > 1 ? m->high : m->mean;

				/* A log axis cannot show a bar below zero: stop it at the mean. */
				if (logy && lo <= 0)
					lo = m->mean;
				if (points)
					xv = (double)line_no;
				else if (c->x_numeric)
					xv = c->x_num[x];
				else
					xv = (double)(x + 1);
				fprintf(f, "%.10g %.10g %.10g %.10g \"%s\"\n", xv, m->mean, lo, hi,
					points ? c->lines[l] : c->xs[x]);
				rows = true;
			}
			/* gnuplot needs at least one point per index it is asked for. */
			if (!rows)
				fputs("? ? ? ? \"\"\n", f);
		}
	}
	if (points) {
		x_first = 1;
		x_last = (double)line_no;
	} else if (c->x_numeric) {
		x_first = c->x_num[0];
		x_last = c->x_num[c->n_x - 1];
	} else {
		x_first = 1;
		x_last = (double)c->n_x;
	}
	for (size_t i = 0; i < n_refs; i++) {
		fprintf(f, "\n\n# %s: %s\n# x y y y xtic\n", name, refs[i].label);
		fprintf(f, "%.10g %.10g %.10g %.10g \"\"\n", x_first, refs[i].y, refs[i].y,
			refs[i].y);
		fprintf(f, "%.10g %.10g %.10g %.10g \"\"\n", x_last, refs[i].y, refs[i].y,
			refs[i].y);
		fprintf(lf, "|%s", refs[i].label);
		fprintf(sf, " 9 0 %zu 0", 3 + i);
	}
	if (fclose(lf) | fclose(sf)) {
		lf = sf = NULL;
		goto out;
	}
	lf = sf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;

	/* k/M/G tics only where every value is 0 or 1 and more: a 0.5 must not read "500m". */
	snprintf(flags, sizeof(flags), "%s%s%s%s%s%s", logx ? "logx " : "", logy ? "logy " : "",
		 si && ypos >= 1 ? "si " : "", points ? "points catx " : "",
		 !points && !c->x_numeric ? "catx " : "",
		 !points && c->n_x <= 12 ? "datatics" : "");
	if (points)
		xlabel = util_asprintf("%s = %s", c->x_name, c->xs[0]);
	else
		xlabel = strdup(c->x_name);
	if (!xlabel)
		goto out;
	plot_sanitize_label(xlabel);

	const char *args[7] = { title, subtitle, xlabel, ylabel, labels, flags, styles };

	ret = plot_render(c, name, "lines.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	if (sf)
		fclose(sf);
	free(labels);
	free(styles);
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
			plot_sanitize_label(title);
			long c99 = csv_column(&c->t, p99);
			struct series s[2] = { { (long)i, "p50" }, { c99, "p99" } };

			ret = graph_lines(c, name, title, subtitle_of(false), "latency (ns)", s,
					  c99 >= 0 ? 2 : 1, NULL, 0, true);
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

/* ---- the device's ceiling ---- */

/* The keys of DIR/scenario.ini (the resolved scenario) the ceiling is computed from. */
struct device_keys {
	char workload[32];
	double fetch_ns, tlbi_va_ns, inv_slots, sync_ns, cmds_per_sync;
	unsigned have; /* one bit per number read */
	bool mixed;    /* [workload.cmdq] mixed: ops of differing shapes */
};

static int device_key(void *arg, const char *section, const char *key, const char *value)
{
	static const struct {
		const char *section, *key;
		size_t off;
	} want[] = {
		{ "smmu", "fetch_ns", offsetof(struct device_keys, fetch_ns) },
		{ "smmu", "tlbi_va_ns", offsetof(struct device_keys, tlbi_va_ns) },
		{ "smmu", "inv_slots", offsetof(struct device_keys, inv_slots) },
		{ "smmu", "sync_ns", offsetof(struct device_keys, sync_ns) },
		{ "workload.cmdq", "cmds_per_sync", offsetof(struct device_keys, cmds_per_sync) },
	};
	struct device_keys *k = arg;

	if (!strcmp(section, "scenario") && !strcmp(key, "workload"))
		snprintf(k->workload, sizeof(k->workload), "%s", value);
	if (!strcmp(section, "workload.cmdq") && !strcmp(key, "mixed"))
		k->mixed = !strcmp(value, "true");
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strcmp(section, want[i].section) && !strcmp(key, want[i].key) &&
		    agg_value(value, (double *)((char *)k + want[i].off)))
			k->have |= 1u << i;
	return 1;
}

static void format_rate(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.3g G", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3g M", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.3g K", v / 1e3);
	else
		snprintf(buf, len, "%.3g ", v);
}

/*
 * The most ops/s the device model (framework/device/smmu.c) can complete, for the cmdq
 * workload, where an op is cmds_per_sync TLBI_NH_VAs and a CMD_SYNC. The model fetches one
 * command per fetch_ns in order, keeps inv_slots TLBIs in flight tlbi_va_ns each, and
 * completes CMD_SYNCs one after another, sync_ns each. So whatever the strategy:
 *   ops/s <= 1e9 / max(n * fetch_ns, n * tlbi_va_ns / inv_slots)
 * (a strategy may share one CMD_SYNC among many CPUs' ops, so syncs do not bound it), and a
 * strategy that issues one CMD_SYNC per op also has
 *   ops/s <= 1e9 / max(sync_ns, (n + 1) * fetch_ns, the bound above).
 * Other workloads (iova: no device; dma: the op is mostly CPU work around a strict unmap's
 * invalidation) have no single ceiling, nor does a run that sweeps a device key or
 * cmds_per_sync (each line would have its own) or issues mixed shapes (an op is not n
 * commands and a CMD_SYNC there): *why says so, and nothing is drawn.
 */
static size_t device_ceilings(struct plot_ctx *c, struct ref_line refs[2], char *why,
			      size_t why_len)
{
	struct device_keys k = { 0 };
	char *ini = util_asprintf("%s/scenario.ini", c->dir);
	char rate[32];
	size_t n = 0;

	why[0] = '\0';
	if (!ini)
		return 0;
	int rc = ini_parse(ini, device_key, &k);

	free(ini);
	if (rc || strcmp(k.workload, "cmdq") || k.have != 0x1f)
		return 0;
	if (k.mixed) {
		snprintf(why, why_len, "; no device ceiling: workload.cmdq.mixed is on");
		return 0;
	}
	for (long a = c->c_plugin + 1; a < c->c_status; a++) {
		const char *h = c->t.header[a];

		if (!strncmp(h, "smmu.", 5) || !strcmp(h, "workload.cmdq.cmds_per_sync") ||
		    !strcmp(h, "workload.cmdq.mixed")) {
			snprintf(why, why_len, "; no device ceiling: %s is swept", h);
			return 0;
		}
	}
	double cmds = k.cmds_per_sync;
	double t_cmd = fmax(cmds * k.fetch_ns, cmds * k.tlbi_va_ns / fmax(k.inv_slots, 1));
	double t_sync = fmax(fmax(k.sync_ns, (cmds + 1) * k.fetch_ns), t_cmd);

	if (t_sync > 0 && t_sync > t_cmd) {
		format_rate(1e9 / t_sync, rate, sizeof(rate));
		refs[n].y = 1e9 / t_sync;
		snprintf(refs[n++].label, sizeof(refs[0].label),
			 "device max, 1 CMD_SYNC per op: %sops/s", rate);
	}
	if (t_cmd > 0) {
		format_rate(1e9 / t_cmd, rate, sizeof(rate));
		refs[n].y = 1e9 / t_cmd;
		snprintf(refs[n++].label, sizeof(refs[0].label),
			 "device max, any strategy: %sops/s", rate);
	}
	return n;
}

static int plot_throughput(struct plot_ctx *c)
{
	long col = csv_column(&c->t, "ops_per_sec");
	struct series s = { col, NULL };
	struct ref_line refs[2];
	char why[160], subtitle[256];

	if (col < 0)
		return 0;
	size_t n_refs = device_ceilings(c, refs, why, sizeof(why));

	snprintf(subtitle, sizeof(subtitle), "%s%s%s", subtitle_of(true),
		 n_refs ? "; dashed: what the device model can complete at most" : "", why);
	return graph_lines(c, "throughput",
			   "Throughput: ops/s over all CPUs (mean of repeats, 95% CI)", subtitle,
			   "ops/s", &s, 1, refs, n_refs, true);
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
		bool events = plot_column_has_value(c, cp);
		long col = events ? cp : (long)i;

		/* A level (things held) leaves _per_op empty: plot the level itself. A counter
		 * that stayed zero everywhere says nothing a graph could show. */
		if (!plot_column_has_value(c, col) || plot_column_all_zero(c, col))
			continue;
		if (!(c->flags & PLOT_ALL)) {
			c->rep->n_left_out++;
			continue;
		}
		char *name = util_asprintf("counter-%s", h);
		char *title =
			events ? util_asprintf("%s per op", h) : util_asprintf("%s at the end", h);
		struct series s = { col, NULL };

		if (name && title) {
			sanitize_name(name);
			plot_sanitize_label(title);
			ret = graph_lines(c, name, title,
					  events ? "per op (events counted / ops completed)"
						 : "level (held at the end of the trial)",
					  events ? "per op" : "level", &s, 1, NULL, 0, false);
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

/*
 * Phases: stacked bars of mean ns per op in each phase, one bar per line, one panel per x
 * value (all on one y scale, so the panels compare).
 */
static int plot_phases(struct plot_ctx *c)
{
	size_t n_ph = 0, panels = 0;
	long *cols = malloc((c->t.n_cols + 1) * sizeof(*cols));
	double *vals = malloc((c->t.n_rows + 1) * sizeof(*vals));
	char *dat = util_asprintf("%s/phases.dat", c->plots_dir);
	char *labels = NULL, *titles = NULL, flags[64];
	size_t labels_len = 0, titles_len = 0;
	FILE *f = NULL, *lf = NULL, *tf = NULL;
	double ymax = 0; /* the tallest bar, for the unit */
	int ret = -ENOMEM;

	if (!cols || !vals || !dat)
		goto out;
	for (size_t i = 0; i < c->t.n_cols; i++) {
		const char *h = c->t.header[i];
		size_t len = strlen(h);

		if (len > 9 && !strncmp(h, "phase_", 6) && !strcmp(h + len - 3, "_ns") &&
		    plot_column_has_value(c, (long)i) && n_ph < 64)
			cols[n_ph++] = (long)i;
	}
	ret = 0;
	if (!n_ph)
		goto out;

	f = fopen(dat, "w");
	lf = open_memstream(&labels, &labels_len);
	tf = open_memstream(&titles, &titles_len);
	if (!f || !lf || !tf) {
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	for (size_t p = 0; p < n_ph; p++) {
		const char *h = c->t.header[cols[p]];

		char *ph = strndup(h + 6, strlen(h) - 9);

		if (!ph) {
			ret = -ENOMEM;
			goto out;
		}
		plot_sanitize_label(ph);
		fprintf(lf, "%s%s", p ? "|" : "", ph);
		free(ph);
	}
	for (size_t xi = 0; xi < c->n_x; xi++) {
		bool header = false;

		for (size_t l = 0; l < c->n_lines; l++) {
			struct mean_ci m[64];
			bool any = false;
			double sum = 0;

			for (size_t p = 0; p < n_ph; p++)
				if (plot_aggregate(c, cols[p], l, xi, vals, &m[p]))
					any = true;
			if (!any)
				continue;
			if (!header) {
				fprintf(f,
					"%s# phases: mean ns per op in each phase at %s = %s\n# "
					"line",
					panels ? "\n\n" : "", c->x_name, c->xs[xi]);
				for (size_t p = 0; p < n_ph; p++) {
					const char *h = c->t.header[cols[p]];

					fprintf(f, " %.*s", (int)(strlen(h) - 9), h + 6);
				}
				fputc('\n', f);
				char *t = util_asprintf("%s = %s", c->x_name, c->xs[xi]);

				if (!t) {
					ret = -ENOMEM;
					goto out;
				}
				plot_sanitize_label(t);
				fprintf(tf, "%s%s", panels ? "|" : "", t);
				free(t);
				header = true;
				panels++;
			}
			fprintf(f, "\"%s\"", c->lines[l]);
			for (size_t p = 0; p < n_ph; p++) {
				double v = m[p].n ? m[p].mean : 0.0;

				fprintf(f, " %.10g", v);
				sum += v;
			}
			fputc('\n', f);
			ymax = fmax(ymax, sum);
		}
	}
	if (fclose(lf) | fclose(tf)) {
		lf = tf = NULL;
		ret = -ENOMEM;
		goto out;
	}
	lf = tf = NULL;
	if (fclose(f)) {
		f = NULL;
		ret = plot_set_err(c, -errno, "%s: %s", dat, strerror(errno));
		goto out;
	}
	f = NULL;
	if (!panels)
		goto out;
	/* gnuplot would label ns per op in the millions "2e+06": say it in us or ms instead. */
	double unit = ymax >= 1e6 ? 1e6 : ymax >= 1e4 ? 1e3 : 1;

	snprintf(flags, sizeof(flags), "scale=%.0f", unit);

	const char *args[7] = { "Time per op in each phase, at each sweep point (mean of repeats)",
				"lower is better; each panel has its own scale",
				"",
				unit == 1e6   ? "ms per op"
				: unit == 1e3 ? "us per op"
					      : "ns per op",
				labels,
				flags,
				titles };

	ret = plot_render(c, "phases", "stacked.gp", args);
out:
	if (f)
		fclose(f);
	if (lf)
		fclose(lf);
	if (tf)
		fclose(tf);
	free(labels);
	free(titles);
	free(cols);
	free(vals);
	free(dat);
	return ret;
}

/* ---- setup ---- */

static int load_table(struct plot_ctx *c)
{
	char *path = util_asprintf("%s/trials.csv", c->dir);
	int ret;

	if (!path)
		return -ENOMEM;
	ret = csv_read(path, &c->t, c->err, c->err_len);
	if (!ret)
		ret = agg_check_numbers(&c->t, path, c->err, c->err_len);
	if (ret)
		goto out;

	c->c_plugin = csv_column(&c->t, "plugin");
	c->c_status = csv_column(&c->t, "status");
	if (c->c_plugin < 0 || c->c_status < 0) {
		ret = plot_set_err(c, -EINVAL, "%s:1: no '%s' column: not an iommulab trials.csv",
				   path, c->c_plugin < 0 ? "plugin" : "status");
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
			ret = plot_set_err(c, -EINVAL, "%s:1: no sweep axis and no 'cpus' column",
					   path);
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
	for (size_t i = 0; i < c->n_plugins; i++)
		free(c->plugins[i]);
	free(c->plugins);
	free(c->line_plugin);
	free(c->line_variant);
	for (size_t i = 0; i < c->n_pending; i++)
		free(c->pending[i]);
	free(c->pending);
	if (c->batch)
		fclose(c->batch);
	free(c->batch_text);
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
		 unsigned flags, struct plot_report *report, char *err, size_t err_len)
{
	struct plot_ctx c = { .dir = results_dir,
			      .flags = flags,
			      .template_dir = template_dir,
			      .rep = report,
			      .err = err,
			      .err_len = err_len,
			      .log_fd = -1 };
	int ret;

	memset(report, 0, sizeof(*report));
	if (err_len)
		err[0] = '\0';

	ret = load_table(&c);
	if (ret)
		goto out;
	ret = plot_index_rows(&c);
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
		ret = plot_set_err(&c, -errno, "%s: %s", c.plots_dir, strerror(errno));
		goto out;
	}
	ret = plot_copy_templates(&c);
	if (ret)
		goto out;

	c.gnuplot = plot_find_program(gnuplot ? gnuplot : "gnuplot");
	if (c.gnuplot) {
		c.log_path = util_asprintf("%s/gnuplot.log", c.plots_dir);
		if (!c.log_path) {
			ret = -ENOMEM;
			goto out;
		}
		c.log_fd = open(c.log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (c.log_fd < 0) {
			ret = plot_set_err(&c, -errno, "%s: %s", c.log_path, strerror(errno));
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
	if (!ret)
		ret = plot_render_all(&c);
	if (ret) {
		if (err_len && !err[0])
			snprintf(err, err_len, "%s: %s", c.plots_dir, strerror(-ret));
		goto out;
	}

	if (!c.gnuplot) {
		report->rendered = 0;
		snprintf(report->note, sizeof(report->note),
			 "gnuplot not found; the data and scripts are in %s: render with: gnuplot "
			 "%s",
			 c.plots_dir, c.first_graph ? c.first_graph : "<name>.gp");
	} else if (c.n_render_failed) {
		ret = plot_set_err(&c, -EIO, "gnuplot failed on %d graph(s); see %s",
				   c.n_render_failed, c.log_path);
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
	for (size_t i = 0; i < r->n_graphs; i++) {
		free(r->graphs[i].name);
		free(r->graphs[i].title);
	}
	free(r->graphs);
	r->graphs = NULL;
	r->n_graphs = 0;
}
