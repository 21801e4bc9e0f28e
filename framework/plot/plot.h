/* SPDX-License-Identifier: MIT */
/*
 * plot -- turn a results directory's trials.csv into gnuplot data and graphs.
 *
 * Reads DIR/trials.csv (the single source of truth: used after a run and by `iommulab plot`),
 * by column name, uses the rows with status "ok", aggregates repeats per (x value, line)
 * (mean, 95% CI), and writes under DIR/plots/, each graph as NAME.dat, NAME.gp, NAME.png and
 * NAME.svg:
 *   latency-M       p50 and p99 of metric M against x, one pair of lines per line (lower better)
 *   throughput      ops/s against x (higher is better), with the device's ceiling dashed where
 *                   the device model gives one (cmdq workload; see plot.c, device_ceilings)
 *   phases          mean ns per op in each phase, stacked bars per line, one panel per x value
 *   counter-C       (PLOT_ALL only) counter C per op against x (or its level, for a counter
 *                   whose _per_op column is empty: a LEVEL counter); all-zero counters are
 *                   left out, and a counter with a zero is drawn on a linear axis
 * x is the first sweep axis (the columns between "plugin" and "status"), or "cpus" if none;
 * a line is a plugin plus the values of the other axes ("cmpxchg cmds_per_sync=4"). A plugin
 * keeps one colour and marker in every graph of a run: its place in the order plugins first
 * appear in trials.csv (the scenario's order); other axes' values vary the dash. A line whose
 * values equal an earlier line's says so in its key ("(same as X)"), as it is drawn under it.
 * With a single x value the graph shows points with error bars, one x position per line.
 * .dat: one gnuplot block per line (two blank lines apart, first comment names it), columns
 * x mean ci_low ci_high "xtic". NAME.gp re-renders with the copies of the templates
 * (style.gp, lines.gp, stacked.gp) written next to it: `gnuplot DIR/plots/NAME.gp` from any
 * directory or machine; render-all.gp re-renders every graph. Rendering runs one gnuplot
 * process for all graphs (`gnuplot DIR/plots/render-all.gp`, without a shell), and each
 * graph alone only when that one failed; gnuplot's output goes to DIR/plots/gnuplot.log.
 */
#ifndef IOMMULAB_PLOT_H
#define IOMMULAB_PLOT_H

#include <stddef.h>

/* One graph of the run, in drawing order: what a report page shows. */
struct plot_graph {
	char *name;  /* "throughput": DIR/plots/NAME.svg, .png, .dat, .gp */
	char *title; /* the graph's title line */
};

struct plot_report {
	char **written; /* paths of the .png/.svg produced (or .gp when not rendered) */
	size_t n_written;
	struct plot_graph *graphs; /* every graph written, rendered or not */
	size_t n_graphs;
	size_t n_left_out; /* counter graphs not drawn without PLOT_ALL */
	int rendered;	   /* 1 if gnuplot ran and produced the images */
	char note[512];	   /* e.g. "gnuplot not found: render with: gnuplot DIR/plots/x.gp" */
};

/* plot_results flags */
#define PLOT_ALL (1u << 0) /* also a graph per counter (`--plots all`) */

/*
 * template_dir: where the templates style.gp, lines.gp, stacked.gp are (the build/installed
 * location of plots/; the caller resolves IOMMULAB_PLOT_DIR etc.). gnuplot: the program to
 * run (a path, or a name looked up in PATH), or NULL for "gnuplot" in PATH.
 * Returns 0 when the graphs were made, when gnuplot is missing (rendered = 0, note says how
 * to render), or when no trial succeeded (note says so); -errno with err set otherwise:
 * -EINVAL "DIR/trials.csv:LINE: ..." for a malformed file, -ENOENT for a missing template,
 * -EIO when gnuplot failed (see DIR/plots/gnuplot.log).
 */
int plot_results(const char *results_dir, const char *template_dir, const char *gnuplot,
		 unsigned flags, struct plot_report *report, char *err, size_t err_len);

void plot_report_free(struct plot_report *r);

#endif /* IOMMULAB_PLOT_H */
