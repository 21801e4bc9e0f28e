/* SPDX-License-Identifier: MIT */
/* Unit tests of report.html: escaping of every text, the sections, the SVGs inlined. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/report.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/iommulab-test-report-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tree(void)
{
	char cmd[128];

	/* Only our own mkdtemp() directory, whose name has no shell metacharacters. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(report, .init = make_tmpdir, .fini = remove_tree);

static void put(const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static char *page(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/report.html", tmpdir);
	FILE *f = fopen(path, "r");

	cr_assert_not_null(f, "%s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);

	rewind(f);
	char *buf = calloc(1, (size_t)n + 1);

	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

Test(report, escape_every_special_character, .timeout = 10)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_html_escape(f, "<a href=\"x\">&'\x01\tok\n");
	fclose(f);
	cr_assert_str_eq(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\tok\n");
	free(buf);
}

static const char csv[] =
	"trial,point,repeat,plugin,scenario.cpus,status,ops_per_sec,op_p50_ns,op_p99_ns,error\n"
	"0,0,0,<script>alert(1)</script>,1,ok,1000000,800,2000,\n"
	"1,0,1,<script>alert(1)</script>,1,ok,1200000,900,2100,\n"
	"2,0,0,cmpxchg,1,failed,0,,,\"boom & <bust>\"\n";

Test(report, page_escapes_text_and_summarises, .timeout = 10)
{
	put("trials.csv", csv);
	put("machine.txt", "host: a<b\n");
	char err[256] = "";

	cr_assert_eq(report_html_write(tmpdir, NULL, err, sizeof(err)), 0, "%s", err);
	char *html = page();

	cr_assert_null(strstr(html, "<script"), "no markup from the data:\n%s", html);
	cr_assert_not_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"), "%s", html);
	cr_assert_not_null(strstr(html, "host: a&lt;b"), "%s", html);
	/* Mean of 1.0 M and 1.2 M ops/s, the p50 mean, the failed trial with its reason. */
	cr_assert_not_null(strstr(html, "<td>1.1 M &plusmn; "), "%s", html);
	cr_assert_not_null(strstr(html, "<td>850 ns &plusmn; "), "%s", html);
	cr_assert_not_null(strstr(html, "boom &amp; &lt;bust&gt;"), "%s", html);
	cr_assert_not_null(strstr(html, "plugins.txt is not in this results directory"), "%s",
			   html);
	free(html);
}

Test(report, graphs_inline_with_unique_ids, .timeout = 10)
{
	char path[512], err[256] = "";

	put("trials.csv", csv);
	snprintf(path, sizeof(path), "%s/plots", tmpdir);
	cr_assert_eq(mkdir(path, 0755), 0);
	put("plots/throughput.svg", "<?xml version=\"1.0\"?>\n<svg viewBox='0 0 10 10'><defs>"
				    "<path id='gpPt0' d='M0,0'/></defs><use xlink:href='#gpPt0'/>"
				    "</svg>\n");
	struct plot_graph g[2] = { { "throughput", "Throughput <ops/s>" },
				   { "latency-op", "op latency" } };
	struct plot_report rep = { .graphs = g, .n_graphs = 2, .n_left_out = 4 };

	cr_assert_eq(report_html_write(tmpdir, &rep, err, sizeof(err)), 0, "%s", err);
	char *html = page();

	cr_assert_null(strstr(html, "<?xml"), "the SVG from its <svg> on:\n%s", html);
	cr_assert_not_null(strstr(html, "<path id='g0-gpPt0'"), "%s", html);
	cr_assert_not_null(strstr(html, "xlink:href='#g0-gpPt0'"), "%s", html);
	cr_assert_not_null(strstr(html, "Throughput &lt;ops/s&gt;"), "%s", html);
	cr_assert_not_null(strstr(html, "render with <code>gnuplot plots/latency-op.gp"), "%s",
			   html);
	cr_assert_not_null(strstr(html, "4 counter graphs left out"), "%s", html);
	free(html);
}

Test(report, missing_trials_csv_is_an_error, .timeout = 10)
{
	char err[256] = "";

	cr_assert_lt(report_html_write(tmpdir, NULL, err, sizeof(err)), 0);
	cr_assert_not_null(strstr(err, "trials.csv"), "%s", err);
}
