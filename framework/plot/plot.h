/* SPDX-License-Identifier: MIT */
/*
 * plot -- turn a results directory's trials.csv into gnuplot data and graphs.
 *
 * Reads DIR/trials.csv (the single source of truth: used after a run and by `iommulab plot`),
 * by column name, uses the rows with status "ok", aggregates repeats per (x value, line)
 * (mean, 95% CI), and writes under DIR/plots/, each graph as NAME.dat, NAME.gp, NAME.png and
 * NAME.svg:
 *   latency-M       p50 and p99 of metric M against x, one pair of lines per line (lower better)
 *   throughput      ops/s against x (higher is better)
 *   phases          mean ns per op in each phase, stacked bars per line, at the largest x
 *   counter-C       counter C per op against x (or its level, for a counter whose _per_op
 *                   column is empty: a LEVEL counter)
 * x is the first sweep axis (the columns between "plugin" and "status"), or "cpus" if none;
 * a line is a plugin plus the values of the other axes ("cmpxchg cmds_per_sync=4"). With a
 * single x value the graph shows points with error bars, one x position per line.
 * .dat: one gnuplot block per line (two blank lines apart, first comment names it), columns
 * x mean ci_low ci_high "xtic". NAME.gp re-renders with the copies of the templates
 * (style.gp, lines.gp, phases.gp) written next to it: `gnuplot DIR/plots/NAME.gp` from any
 * directory or machine. Rendering runs `gnuplot -c TEMPLATE DATA OUT TITLE SUBTITLE XLABEL
 * YLABEL LABELS FLAGS png|svg` without a shell; gnuplot's output goes to DIR/plots/gnuplot.log.
 */
#ifndef IOMMULAB_PLOT_H
#define IOMMULAB_PLOT_H

#include <stddef.h>

struct plot_report {
	char **written; /* paths of the .png/.svg produced (or .gp when not rendered) */
	size_t n_written;
	int rendered;	/* 1 if gnuplot ran and produced the images */
	char note[512]; /* e.g. "gnuplot not found: render with: gnuplot DIR/plots/x.gp" */
};

/*
 * template_dir: where the templates style.gp, lines.gp, phases.gp are (the build/installed
 * location of plots/; the caller resolves IOMMULAB_PLOT_DIR etc.). gnuplot: the program to
 * run (a path, or a name looked up in PATH), or NULL for "gnuplot" in PATH.
 * Returns 0 when the graphs were made, when gnuplot is missing (rendered = 0, note says how
 * to render), or when no trial succeeded (note says so); -errno with err set otherwise:
 * -EINVAL "DIR/trials.csv:LINE: ..." for a malformed file, -ENOENT for a missing template,
 * -EIO when gnuplot failed (see DIR/plots/gnuplot.log).
 */
int plot_results(const char *results_dir, const char *template_dir, const char *gnuplot,
		 struct plot_report *report, char *err, size_t err_len);

void plot_report_free(struct plot_report *r);

#endif /* IOMMULAB_PLOT_H */
