/* SPDX-License-Identifier: MIT */
/*
 * report -- DIR/report.html: one static page a user opens to read a run: the plan, the
 * machine, the summary table, failed and noisy trials, and every graph inline as SVG. No
 * network, no JavaScript, no file outside the page needed (the SVGs are copied in).
 *
 * Its own folder because it sits above results/ (trials.csv, the aggregation) and plot/ (the
 * graphs) and composes them; neither of those knows about the page.
 */
#ifndef IOMMULAB_REPORT_H
#define IOMMULAB_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "plot/plot.h"

/*
 * Write DIR/report.html from DIR/trials.csv, scenario.ini, machine.txt, plugins.txt and
 * summary.json (each optional but trials.csv) and the graphs plots lists (NULL: none; a graph
 * whose SVG is missing gets the command that renders it). 0, or -errno with err set.
 */
int report_html_write(const char *results_dir, const struct plot_report *plots, char *err,
		      size_t err_len);

/* Write s as HTML text (element content or a quoted attribute value): & < > " ' escaped,
 * control characters other than tab and newline dropped. */
void report_html_escape(FILE *f, const char *s);

#endif /* IOMMULAB_REPORT_H */
