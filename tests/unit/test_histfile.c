/* SPDX-License-Identifier: MIT */
/*
 * test_histfile -- histograms.csv (results/histfile.h): a histogram written and read back is
 * the same histogram (every bucket, every percentile, mean and standard deviation); the writer
 * beside trials.csv (results_append) and a resume that drops what trials.csv lacks; every
 * damaged or foreign file refused with its line and reason, every prefix of a good file read
 * or refused without harm; and the Mann-Whitney U test of two histograms (stats/compare.h)
 * against the one of the values listed one by one.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/histfile.h"
#include "results/results.h"
#include "stats/compare.h"
#include "util/fs.h"

static struct hist *hist_new(void)
{
	struct hist *h = malloc(sizeof(*h));

	cr_assert_not_null(h);
	hist_reset(h);
	return h;
}

/* A spread of values from a few ns to seconds, with a long tail (a fixed xorshift stream). */
static void fill(struct hist *h, uint64_t seed, size_t n, uint64_t scale)
{
	uint64_t x = seed | 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = scale + (x % scale);

		if (!(x % 97))
			v *= 1000 + x % 5000; /* the tail */
		hist_record(h, v);
	}
}

/* h written as histograms.csv text and parsed back into one histogram. */
static struct hist *round_trip(const struct hist *h, char **text_out)
{
	struct histfile out = { 0 }, in;
	struct hist *back = hist_new();
	char *text = NULL, err[512];
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	cr_assert_not_null(m);
	cr_assert_eq(histfile_add_hist(&out, 42, "op", h), 0);
	histfile_write_header(m);
	histfile_write_rec(m, &out.recs[0]);
	fclose(m);
	cr_assert_eq(histfile_parse(text, len, "t.csv", &in, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(in.n, 1);
	cr_assert_eq(in.recs[0].trial, 42);
	cr_assert_str_eq(in.recs[0].metric, "op");
	histfile_rec_merge(back, &in.recs[0]);
	histfile_free(&in);
	histfile_free(&out);
	if (text_out)
		*text_out = text;
	else
		free(text);
	return back;
}

Test(histfile, round_trip_is_the_same_histogram, .timeout = 30)
{
	static const uint64_t scales[] = { 1, 60, 1000, 40000, 3000000000ull };

	for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++) {
		struct hist *h = hist_new(), *back;
		struct lat_summary a, b;

		fill(h, 7 + s, 20000, scales[s]);
		back = round_trip(h, NULL);
		hist_summarize(h, &a);
		hist_summarize(back, &b);
		cr_assert_eq(memcmp(h->buckets, back->buckets, sizeof(h->buckets)), 0,
			     "scale %llu: the buckets differ", (unsigned long long)scales[s]);
		cr_assert(h->count == back->count && h->min == back->min && h->max == back->max &&
			  h->sum == back->sum && h->sumsq == back->sumsq);
		cr_assert(a.p50 == b.p50 && a.p90 == b.p90 && a.p99 == b.p99 && a.p999 == b.p999,
			  "scale %llu: p50 %llu/%llu p99 %llu/%llu", (unsigned long long)scales[s],
			  (unsigned long long)a.p50, (unsigned long long)b.p50,
			  (unsigned long long)a.p99, (unsigned long long)b.p99);
		cr_assert(a.mean == b.mean && a.stddev == b.stddev);
		for (double q = 0.001; q < 1; q += 0.0137)
			cr_assert_eq(hist_quantile(h, q), hist_quantile(back, q), "q %g", q);
		free(h);
		free(back);
	}
}

Test(histfile, empty_and_extreme_histograms, .timeout = 30)
{
	struct hist *h = hist_new(), *back;
	char *text;

	back = round_trip(h, &text);
	cr_assert_eq(back->count, 0);
	cr_assert(strstr(text, "\n42,op,0,0,0,0,0,\n"), "%s", text);
	free(text);
	free(back);

	/* The largest value there is: its square needs all 128 bits of sumsq. */
	hist_record(h, UINT64_MAX);
	hist_record(h, 0);
	hist_record(h, 127);
	hist_record(h, 128);
	back = round_trip(h, &text);
	cr_assert(h->sumsq == back->sumsq && h->max == back->max && h->min == 0);
	cr_assert_eq(memcmp(h->buckets, back->buckets, sizeof(h->buckets)), 0);
	cr_assert(strstr(text, " 127:1 128:1 "), "%s", text);
	free(text);
	free(back);
	free(h);
}

static char tmp[64];

static void make_tmp(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/iommulab-histfile-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
}

static void remove_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_assert_eq(system(cmd), 0);
}

/* What histfile_parse says of text ("" when it reads it). */
static const char *parse_error(const char *text)
{
	static char err[512];
	struct histfile hf;

	err[0] = '\0';
	if (!histfile_parse(text, strlen(text), "h.csv", &hf, err, sizeof(err))) {
		histfile_free(&hf);
		err[0] = '\0';
	}
	return err;
}

#define HEAD "# iommulab histograms v1\n" HISTFILE_COLUMNS "\n"

Test(histfile, damaged_files_are_refused_with_line_and_reason, .timeout = 30)
{
	static const char *const cases[][2] = {
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1\n", "" },
		{ "", "h.csv:1: empty: not a histograms.csv" },
		{ "trial,point\n0,1\n",
		  "h.csv:1: the first line is not '# iommulab histograms v1'" },
		{ "# iommulab histograms v2\n" HISTFILE_COLUMNS "\n",
		  "h.csv:1: '# iommulab histograms v2': this iommulab reads version 1 of the "
		  "format only" },
		{ "# iommulab histograms v1\ntrial,metric\n", "h.csv:2: the columns are not" },
		{ "# iommulab histograms v1\n", "h.csv:2: no column line" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1",
		  "h.csv:3: the last line has no newline" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1\n1,op,3,5\n", "h.csv:4: 4 fields" },
		{ HEAD "0,op,3,5,200,210,40050\n", "h.csv:3: 7 fields where" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1,x\n", "h.csv:3: more than the 8 fields" },
		{ HEAD "-1,op,3,5,200,210,40050,5:2 200:1\n",
		  "h.csv:3: trial '-1' is not a trial" },
		{ HEAD "0,o p,3,5,200,210,40050,5:2 200:1\n", "h.csv:3: metric 'o p' is not" },
		{ HEAD "0,op,03,5,200,210,40050,5:2 200:1\n",
		  "h.csv:3: count '03' is not a whole" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 201:1\n",
		  "h.csv:3: bucket 2 starts at 201 ns, not a bucket boundary" },
		{ HEAD "0,op,3,5,200,210,40050,200:1 5:2\n",
		  "h.csv:3: bucket 2 (5 ns) is not above the one before it" },
		{ HEAD "0,op,3,5,200,210,40050,5:3 200:0\n",
		  "h.csv:3: bucket 2 (200 ns) has count 0" },
		{ HEAD "0,op,4,5,200,210,40050,5:2 200:1\n",
		  "h.csv:3: the buckets hold 3 values, count says 4" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1 \n", "ends with a space" },
		{ HEAD "0,op,3,5,200,210,40050,5:2  200:1\n",
		  "h.csv:3: bucket 2, '', is not LOWER:COUNT" },
		{ HEAD "0,op,3,6,200,210,40050,5:2 200:1\n",
		  "h.csv:3: min_ns 6 or max_ns 200 is not" },
		{ HEAD "0,op,3,5,200,9999,40050,5:2 200:1\n", "h.csv:3: sum_ns 9999 is outside" },
		{ HEAD "0,op,3,5,200,210,4,5:2 200:1\n", "h.csv:3: sumsq_ns2 is below" },
		{ HEAD "0,op,0,1,0,0,0,\n", "h.csv:3: count is 0 but min" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1\n1,op,0,0,0,0,0,\n0,op,0,0,0,0,0,\n",
		  "h.csv:5: trial 0's op histogram is also on line 3" },
		{ HEAD "0,op,3,5,200,210,40050,5:2 200:1\n\n", "h.csv:4: 1 fields" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = parse_error(cases[i][0]);

		if (!cases[i][1][0])
			cr_assert_str_empty(err, "case %zu: %s", i, err);
		else
			cr_assert(strstr(err, cases[i][1]), "case %zu: '%s' is not '%s...'", i, err,
				  cases[i][1]);
	}
	/* A NUL byte anywhere. */
	struct histfile hf;
	char err[256];
	const char nul[] = HEAD "0,op,0,0,0,0,0,\n\0\n";

	cr_assert_eq(histfile_parse(nul, sizeof(nul) - 1, "h.csv", &hf, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "a NUL byte"), "%s", err);
}

Test(histfile, every_prefix_is_read_or_refused, .timeout = 60)
{
	struct hist *h = hist_new();
	struct histfile out = { 0 };
	char *text = NULL, err[512];
	size_t len = 0, whole_lines = 0;
	FILE *m = open_memstream(&text, &len);

	fill(h, 3, 3000, 500);
	cr_assert_eq(histfile_add_hist(&out, 0, "map", h), 0);
	cr_assert_eq(histfile_add_hist(&out, 0, "unmap", h), 0);
	cr_assert_eq(histfile_add_hist(&out, 1, "map", h), 0);
	histfile_write_header(m);
	for (size_t i = 0; i < out.n; i++)
		histfile_write_rec(m, &out.recs[i]);
	fclose(m);
	for (size_t cut = 0; cut <= len; cut++) {
		struct histfile in;
		int rc = histfile_parse(text, cut, "h.csv", &in, err, sizeof(err));

		/* Only a prefix that ends a line after the header reads. */
		bool at_line_end = cut > 0 && text[cut - 1] == '\n';
		size_t lines = 0;

		for (size_t k = 0; k < cut; k++)
			lines += text[k] == '\n';
		if (at_line_end && lines >= 2) {
			cr_assert_eq(rc, 0, "cut %zu: %s", cut, err);
			cr_assert_eq(in.n, lines - 2);
			whole_lines++;
			histfile_free(&in);
		} else {
			cr_assert_eq(rc, -EINVAL, "cut %zu", cut);
			cr_assert(!strncmp(err, "h.csv:", 6), "cut %zu: %s", cut, err);
		}
	}
	cr_assert_eq(whole_lines, 4);
	/* Every single byte changed: read (a change that still makes sense) or refused. */
	for (size_t at = 0; at < len; at += 3) {
		struct histfile in;
		char was = text[at];

		text[at] = was == '9' ? '1' : was == ' ' ? ',' : '9';
		if (!histfile_parse(text, len, "h.csv", &in, err, sizeof(err)))
			histfile_free(&in);
		text[at] = was;
	}
	free(text);
	histfile_free(&out);
	free(h);
}

TestSuite(histfile_dir, .init = make_tmp, .fini = remove_tmp);

static const char *const metric_names[] = { "alloc", "free" };

static const struct results_layout layout = { .metrics = metric_names, .n_metrics = 2 };

/* Trial i: two metrics, each with its own values. */
static void trial(struct trial_result *t, uint32_t i)
{
	memset(t, 0, sizeof(*t));
	t->index = i;
	t->plugin = "null";
	t->status = TRIAL_OK;
	t->engine = "sim";
	t->device_mode = "inline";
	t->n_metrics = 2;
	for (uint32_t m = 0; m < 2; m++) {
		t->metrics[m].name = metric_names[m];
		hist_reset(&t->metrics[m].hist);
		fill(&t->metrics[m].hist, 11 + i * 2 + m, 500, 100 + 50 * m);
		hist_summarize(&t->metrics[m].hist, &t->metrics[m].lat);
	}
}

static char *slurp(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	return util_read_file(path, NULL);
}

Test(histfile_dir, written_beside_trials_csv_and_resumed, .timeout = 60)
{
	struct trial_result *t = malloc(sizeof(*t));
	struct histfile hf;
	char err[512], path[128], *whole, *cut;
	struct results *r;

	cr_assert_not_null(t);
	r = results_create(tmp, &layout, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	for (uint32_t i = 0; i < 3; i++) {
		trial(t, i);
		cr_assert_eq(results_append(r, t), 0);
	}
	results_close(r);
	whole = slurp(HISTFILE_NAME);
	snprintf(path, sizeof(path), "%s/%s", tmp, HISTFILE_NAME);
	cr_assert_eq(histfile_read(path, &hf, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(hf.n, 6);
	for (uint32_t i = 0; i < 3; i++) {
		size_t n;
		const size_t *at = histfile_find(&hf, i, &n);

		cr_assert_eq(n, 2);
		trial(t, i);
		for (size_t k = 0; k < 2; k++) {
			struct hist *back = hist_new();

			cr_assert_str_eq(hf.recs[at[k]].metric, metric_names[k]);
			histfile_rec_merge(back, &hf.recs[at[k]]);
			cr_assert_eq(memcmp(back->buckets, t->metrics[k].hist.buckets,
					    sizeof(back->buckets)),
				     0);
			free(back);
		}
	}
	histfile_free(&hf);

	/* A crash after trial 2's histograms, before its trials.csv row, its last line torn: a
	 * resume drops them, and trial 2 written again gives the same file. */
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && head -n 3 trials.csv > t && mv t trials.csv && printf '9,alloc,1' "
		 ">> " HISTFILE_NAME,
		 tmp);
	cr_assert_eq(system(cmd), 0);
	r = results_resume(tmp, &layout, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	cut = slurp(HISTFILE_NAME);
	cr_assert_eq(strncmp(cut, whole, strlen(cut)), 0);
	cr_assert_eq(strlen(cut), (size_t)(strstr(whole, "\n2,alloc,") + 1 - whole));
	trial(t, 2);
	cr_assert_eq(results_append(r, t), 0);
	results_close(r);
	free(cut);
	cut = slurp(HISTFILE_NAME);
	cr_assert_str_eq(cut, whole);
	free(cut);

	/* A damaged line in the middle is not repaired: the resume is refused, saying how. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && sed -i '4s/,alloc,/,al loc,/;4s/,free,/,fr ee,/' %s",
		 tmp, HISTFILE_NAME);
	cr_assert_eq(system(cmd), 0);
	cr_assert_null(results_resume(tmp, &layout, err, sizeof(err)));
	cr_assert(strstr(err, "/" HISTFILE_NAME ":4: metric 'fr ee' is not a metric name"), "%s",
		  err);
	cr_assert(strstr(err, "to resume without it, move"), "%s", err);

	/* A second run into the directory is refused before it touches either file. */
	cr_assert_null(results_create(tmp, &layout, err, sizeof(err)));
	free(whole);
	free(t);
}

Test(histfile_dir, a_trial_whose_histograms_fail_keeps_its_row, .timeout = 30)
{
	struct trial_result *t = malloc(sizeof(*t));
	char err[512], *text;
	struct results *r;

	cr_assert_not_null(t);
	r = results_create(tmp, &layout, err, sizeof(err));
	cr_assert_not_null(r, "%s", err);
	trial(t, 0);
	cr_assert_eq(results_append(r, t), 0);
	/* A name histograms.csv cannot hold: none of the trial's lines, its row all the same. */
	trial(t, 1);
	t->metrics[1].name = "fr ee";
	cr_assert_eq(results_append(r, t), 0);
	cr_assert_eq(results_n_rows(r), 2);
	results_close(r);
	text = slurp(HISTFILE_NAME);
	cr_assert(strstr(text, "\n0,alloc,") && strstr(text, "\n0,free,"), "%s", text);
	cr_assert_null(strstr(text, "\n1,"), "%s", text);
	free(text);
	text = slurp("trials.csv");
	cr_assert(strstr(text, "\n1,"), "%s", text);
	free(text);
	free(t);
}

/* The values of h listed one by one, each as its bucket's index (a value per bucket). */
static double *expand(const struct hist *h, size_t *n)
{
	double *v = malloc((h->count + 1) * sizeof(*v));

	*n = 0;
	for (uint32_t b = 0; v && b < HIST_N_BUCKETS; b++)
		for (uint64_t k = 0; k < h->buckets[b]; k++)
			v[(*n)++] = b;
	return v;
}

Test(histfile, mann_whitney_of_buckets_is_that_of_the_values, .timeout = 30)
{
	static const uint64_t shift[] = { 0, 3, 40 };

	for (size_t s = 0; s < sizeof(shift) / sizeof(shift[0]); s++) {
		struct hist *a = hist_new(), *b = hist_new();
		struct stats_mwu uh, uv;
		size_t na, nb;
		double a12, *va, *vb;

		fill(a, 5, 400, 200);
		fill(b, 9, 300, 200 + shift[s]);
		va = expand(a, &na);
		vb = expand(b, &nb);
		cr_assert_eq(stats_mann_whitney_hist(a, b, &uh, &a12), 0);
		cr_assert_eq(stats_mann_whitney_normal(va, na, vb, nb, &uv), 0);
		cr_assert_float_eq(uh.u, uv.u, 1e-6, "shift %llu: U %g against %g",
				   (unsigned long long)shift[s], uh.u, uv.u);
		cr_assert_float_eq(uh.p, uv.p, 1e-9 + 1e-6 * uv.p, "p %g against %g", uh.p, uv.p);
		cr_assert_float_eq(a12, 1 - uv.u / ((double)na * (double)nb), 1e-12);
		if (shift[s] >= 40) {
			cr_assert_lt(uh.p, 1e-6, "a shift of 20%% is found: p %g", uh.p);
			cr_assert_gt(a12, STATS_A12_SMALL, "b is slower: a12 %g", a12);
		}
		free(va);
		free(vb);
		free(a);
		free(b);
	}
	/* The same histogram twice: U is half the pairs, p is 1; one value: refused. */
	struct hist *a = hist_new(), *one = hist_new();
	struct stats_mwu u;
	double a12;

	fill(a, 5, 400, 200);
	cr_assert_eq(stats_mann_whitney_hist(a, a, &u, &a12), 0);
	cr_assert_float_eq(a12, 0.5, 1e-12);
	cr_assert_float_eq(u.p, 1, 1e-12);
	hist_record(one, 5);
	cr_assert_eq(stats_mann_whitney_hist(a, one, &u, &a12), -EINVAL);
	free(a);
	free(one);
}
