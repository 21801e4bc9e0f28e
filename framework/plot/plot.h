/* SPDX-License-Identifier: MIT */
/*
 * plot -- turn a results directory's trials.csv into gnuplot data and graphs.
 *
 * Reads DIR/trials.csv (the single source of truth: used after a run and by `iommulab plot`),
 * aggregates repeats (mean, 95% CI), and writes under DIR/plots/:
 *   latency.dat/.gp        p50 and p99 of each metric against the x key, one line per plugin
 *   throughput.dat/.gp     ops/s against the x key (higher is better)
 *   phases.dat/.gp         mean ns per op per phase, stacked bars per plugin (at each x)
 *   counters.dat/.gp       each counter's per-op value against the x key, one panel each
 * Each .gp is a small script that loads the template plots/<kind>.gp with the shared
 * plots/style.gp; it is run as `gnuplot -c TEMPLATE DATA OUT TITLE ...` for png and svg.
 * The x key is the first swept key of the run (CPUs if none was swept).
 */
#ifndef IOMMULAB_PLOT_H
#define IOMMULAB_PLOT_H

#include <stddef.h>

struct plot_report {
	char **written;	  /* paths of the .png/.svg produced (or .gp when not rendered) */
	size_t n_written;
	int rendered;	  /* 1 if gnuplot ran and produced the images */
	char note[512];	  /* e.g. "gnuplot not found: render with: gnuplot DIR/plots/x.gp" */
};

/*
 * template_dir: where the templates style.gp, lines.gp, phases.gp are (the build/installed
 * location of plots/; the caller resolves
 * IOMMULAB_PLOT_DIR etc.). gnuplot: the program to run, or NULL to look for "gnuplot" in PATH.
 * 0 (graphs made, or gnuplot missing with the note set) or -errno with err set (bad results).
 */
int plot_results(const char *results_dir, const char *template_dir, const char *gnuplot,
		 struct plot_report *report, char *err, size_t err_len);

void plot_report_free(struct plot_report *r);

#endif /* IOMMULAB_PLOT_H */
