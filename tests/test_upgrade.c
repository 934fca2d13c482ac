/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the upgrade-qualification parts: folding repeats into
 * medians (src/qual/repeat.c), baselines (src/qual/baseline.c) and the
 * HTML pages (harness/report/html_*.c): escaping, counts, no external asset,
 * the heat map's cells.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cli.h"
#include "core/result.h"
#include "core/run_doc.h"
#include "core/util.h"
#include "qual/baseline.h"
#include "qual/compare.h"
#include "qual/repeat.h"
#include "report/html.h"
#include "report/report.h"
#include "check_main.h"

static json_t *doc(const char *rows)
{
	char *text = NULL;
	json_error_t je;
	json_t *d;

	ck_assert(asprintf(&text, "{\"schema\": \"rdmaqual-results/1\", "
			   "\"run\": {\"id\": \"r\", \"complete\": true, \"duration_s\": 1.0}, "
			   "\"facts\": {\"vm.guest_kernel\": \"6.1.0-57-amd64\"}, \"results\": [%s]}", rows) > 0);
	d = json_loads(text, 0, &je);
	if (!d)
		ck_abort_msg("bad test JSON: %s: %s", je.text, text);
	free(text);
	return d;
}

/* A bandwidth row on rxe0 with one figure. */
static char *bwrow(const char *verdict, double gbps)
{
	char *s = NULL;

	ck_assert(asprintf(&s, "{\"id\": \"bw.w[rxe0/1]\", \"case\": \"bw.w\", \"kind\": \"bandwidth\", "
			   "\"device\": \"rxe0\", \"port\": 1, \"verdict\": \"%s\", \"reason\": %s, "
			   "\"target\": \"rxe-vm\", \"target_why\": \"t\", \"judged\": 1, \"failed\": 0, "
			   "\"figures\": [{\"name\": \"bw_64KiB\", \"value\": %g, \"unit\": \"Gb/s\"}], "
			   "\"facts\": {}, \"duration_s\": 3.0, \"log_path\": \"logs/x.log\", \"file\": \"f\"}",
			   verdict, strcmp(verdict, "PASS") ? "\"slow <x>\"" : "null", gbps) > 0);
	return s;
}

static json_t *fig(json_t *d, const char *name)
{
	json_t *r = json_array_get(json_object_get(d, "results"), 0), *f;
	size_t i;

	json_array_foreach(json_object_get(r, "figures"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "name")), name))
			return f;
	return NULL;
}

START_TEST(median)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 };

	ck_assert(rq_median(a, 3) == 3);
	ck_assert(rq_median(b, 4) == 2.5);
	ck_assert(isnan(rq_median(a, 0)));
}
END_TEST

/* One lookup of a row by id for repeat, qualify and the compare page. */
START_TEST(doc_row)
{
	json_t *d = doc("{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"FAIL\"}, "
			"{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"PASS\"}, "
			"{\"id\": \"b\", \"case\": \"b\", \"verdict\": \"SKIP\"}");
	struct rq_run_doc rd;
	char err[256];

	rq_run_doc_init(&rd);
	rq_run_doc_from_json(&rd, d);
	ck_assert_int_eq(rq_run_doc_check(&rd, err, sizeof(err)), 0);
	/* the first of repeated rows */
	ck_assert_int_eq(rq_run_doc_find(&rd, "a")->verdict, RQ_FAIL);
	ck_assert_ptr_eq(rq_run_doc_find(&rd, "b"), rd.rows[2]);
	ck_assert_ptr_null(rq_run_doc_find(&rd, "c"));
	ck_assert_ptr_null(rq_run_doc_find(&rd, NULL));
	rq_run_doc_release(&rd);
	json_decref(d);
}
END_TEST

START_TEST(merge_repeats)
{
	char *r1 = bwrow("PASS", 1.0), *r2 = bwrow("PASS", 9.0), *r3 = bwrow("FAIL", 2.0);
	json_t *d[3] = { doc(r1), doc(r2), doc(r3) };
	char err[256];
	json_t *m = rq_repeat_merge(d, 3, err, sizeof(err));
	json_t *row, *f, *sp;

	ck_assert_msg(m, "%s", err);
	row = json_array_get(json_object_get(m, "results"), 0);
	/* The worst verdict wins and the reason says the runs disagreed. */
	ck_assert_str_eq(json_string_value(json_object_get(row, "verdict")), "FAIL");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(row, "reason")),
				     "over 3 runs: 2 PASS, 1 FAIL"));
	f = fig(m, "bw_64KiB");
	ck_assert(json_number_value(json_object_get(f, "value")) == 2.0);	/* median of 1, 9, 2 */
	sp = json_object_get(f, "spread");
	ck_assert(json_number_value(json_object_get(sp, "min")) == 1.0);
	ck_assert(json_number_value(json_object_get(sp, "max")) == 9.0);
	ck_assert_int_eq(json_integer_value(json_object_get(sp, "n")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "counts"), "fail")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "run"), "repeats")), 3);
	/* Inputs untouched */
	ck_assert(json_number_value(json_object_get(fig(d[1], "bw_64KiB"), "value")) == 9.0);
	json_decref(m);

	/* A document that is not a results.json is named. */
	json_t *bad = json_pack("{s:s}", "schema", "nope");
	json_t *d2[2] = { d[0], bad };

	ck_assert_ptr_null(rq_repeat_merge(d2, 2, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "run 2 of 2"));
	json_decref(bad);
	for (int i = 0; i < 3; i++)
		json_decref(d[i]);
	free(r1);
	free(r2);
	free(r3);
}
END_TEST

/* n runs a side, merged, compared; the finding about bw_64KiB. */
static const struct cmp_finding *noise_case(const double *b, const double *a, size_t n, struct cmp_report *rep)
{
	json_t *db[16], *da[16], *mb, *ma;
	struct cmp_opts o;
	char err[256];

	ck_assert_uint_le(n, 16);
	for (size_t i = 0; i < n; i++) {
		char *rb = bwrow("PASS", b[i]), *ra = bwrow("PASS", a[i]);

		db[i] = doc(rb);
		da[i] = doc(ra);
		free(rb);
		free(ra);
	}
	mb = rq_repeat_merge(db, n, err, sizeof(err));
	ma = rq_repeat_merge(da, n, err, sizeof(err));
	ck_assert(mb && ma);
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(fig(mb, "bw_64KiB"), "spread"),
							 "samples")), n);
	cmp_opts_init(&o);
	ck_assert_int_eq(cmp_compare(mb, ma, &o, rep, err, sizeof(err)), 0);
	cmp_opts_release(&o);
	for (size_t i = 0; i < n; i++) {
		json_decref(db[i]);
		json_decref(da[i]);
	}
	json_decref(mb);
	json_decref(ma);
	for (size_t i = 0; i < rep->n; i++)
		if (rep->v[i].name && !strcmp(rep->v[i].name, "bw_64KiB"))
			return &rep->v[i];
	ck_abort_msg("no finding about bw_64KiB");
	return NULL;
}

START_TEST(noise_judged)
{
	static const double before[4] = { 1.0, 1.2, 0.8, 1.1 };
	static const double noise[3] = { 0.9, 0.85, 0.95 };	/* median 0.9: -10 %, but in the noise */
	static const double slower[4] = { 0.5, 0.55, 0.6, 0.52 };	/* beyond it, at n=4 */
	static const double tight_b[5] = { 1.0, 1.01, 0.99, 1.02, 0.98 };
	static const double tight_a[5] = { 1.01, 0.99, 1.0, 0.98, 1.02 };
	struct cmp_report rep;
	const struct cmp_finding *f;

	f = noise_case(before, noise, 3, &rep);
	ck_assert_int_eq(f->type, CMP_FIG_UNSURE);
	ck_assert(!f->regression);
	ck_assert_uint_eq(rep.regressions, 0);
	ck_assert_uint_eq(f->nb, 3);
	ck_assert_str_eq(f->method, "bootstrap");
	ck_assert_ptr_nonnull(strstr(f->msg, "inconclusive: -10.0% \u00b1"));
	ck_assert_ptr_nonnull(strstr(f->msg, "at n=3/3"));
	ck_assert_ptr_nonnull(strstr(f->msg, "repeats a side would resolve a 5% change"));
	ck_assert_uint_gt(f->need_n, 3);
	cmp_report_release(&rep);

	f = noise_case(before, slower, 4, &rep);
	ck_assert_int_eq(f->type, CMP_FIG_WORSE);
	ck_assert_uint_eq(rep.regressions, 1);
	ck_assert(f->hi_pct < -5);
	ck_assert_ptr_nonnull(strstr(f->msg, "worse by 49.0% (tolerance 5%)"));
	ck_assert_ptr_nonnull(strstr(f->msg, "at n=4/4"));
	cmp_report_release(&rep);

	f = noise_case(tight_b, tight_a, 5, &rep);
	ck_assert_int_eq(f->type, CMP_FIG_SAME);
	ck_assert(f->lo_pct >= -5 && f->hi_pct <= 5);
	cmp_report_release(&rep);
}
END_TEST

static struct rq_result *result_row(double gbps)
{
	struct rq_result *r = rq_result_new("bw.w", "rxe0", 1);

	r->target = xstrdup("rxe-vm");
	rq_figure_add(r, "bw_64KiB", gbps, "Gb/s");
	rq_figure_add(r, "runner_peak_rss", 3, "MiB");
	rq_judge(r, true, "ran");
	rq_result_finish(r);
	return r;
}

/*
 * run --baseline judges the figures compare and qualify judge: the row's
 * key figures (its case's judge:, else its kind's), all of them only when
 * the baseline was saved with --all-figures.
 */
static struct rq_result *pp_row(double lat_min, double lat_p99, const char *judge)
{
	struct rq_result *r = rq_result_new("pp", "rxe0", 1);

	r->target = xstrdup("rxe-vm");
	r->kind = xstrdup("verbs-pingpong");
	r->judge = judge ? xstrdup(judge) : NULL;
	rq_figure_add(r, "lat_min", lat_min, "us");
	rq_figure_add(r, "lat_p99", lat_p99, "us");
	rq_judge(r, true, "ran");
	rq_result_finish(r);
	return r;
}

START_TEST(baseline_key_figures)
{
	const char *row = "{\"id\": \"pp[rxe0/1]\", \"case\": \"pp\", \"kind\": \"verbs-pingpong\", "
			  "\"device\": \"rxe0\", \"port\": 1, \"verdict\": \"PASS\", \"target\": \"rxe-vm\", "
			  "\"figures\": [{\"name\": \"lat_min\", \"value\": 10, \"unit\": \"us\"}, "
			  "{\"name\": \"lat_p99\", \"value\": 20, \"unit\": \"us\"}]}";
	char path[] = "/tmp/rq-test-baseline.XXXXXX", err[512];
	int fd = mkstemp(path);
	json_t *d = doc(row);
	struct cmp_opts all;
	struct rq_baseline b;
	struct rq_result *r;

	ck_assert_int_ge(fd, 0);
	close(fd);
	cmp_opts_init(&all);
	for (int pass = 0; pass < 2; pass++) {
		all.all_figures = pass == 1;
		json_t *bl = rq_baseline_from_results(d, &all, "r");

		ck_assert(json_is_true(json_object_get(bl, "all_figures")) == (pass == 1));
		ck_assert_int_eq(json_dump_file(bl, path, 0), 0);
		json_decref(bl);
		ck_assert_int_eq(rq_baseline_load(&b, path, err, sizeof(err)), 0);
		/* lat_p99 50 % worse, lat_min as good: only --all-figures sees it by default. */
		r = pp_row(10, 30, NULL);
		ck_assert_uint_eq(rq_baseline_judge(&b, r, rq_baseline_model(r)), pass ? 2 : 1);
		ck_assert_int_eq(r->verdict, pass ? RQ_FAIL : RQ_PASS);
		rq_result_free(r);
		/* The case names lat_p99 its figure: judged, and the row fails either way. */
		r = pp_row(10, 30, "lat_p99");
		ck_assert_uint_eq(rq_baseline_judge(&b, r, rq_baseline_model(r)), pass ? 2 : 1);
		ck_assert_int_eq(r->verdict, RQ_FAIL);
		ck_assert_ptr_nonnull(strstr(r->reason, "lat_p99 30 us is 50.0% higher than the baseline 20"));
		rq_result_free(r);
		rq_baseline_release(&b);
	}
	/* Anything but a boolean is refused, naming the key. */
	ck_assert_int_ge(fd = open(path, O_WRONLY | O_TRUNC), 0);
	ck_assert(dprintf(fd, "{\"schema\": \"rdmaqual-baseline/1\", \"all_figures\": 1, \"entries\": []}") > 0);
	close(fd);
	ck_assert_int_eq(rq_baseline_load(&b, path, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "all_figures: not true or false"));
	cmp_opts_release(&all);
	json_decref(d);
	unlink(path);
}
END_TEST

START_TEST(baseline)
{
	char *r1 = bwrow("PASS", 10.0), path[] = "/tmp/rq-test-baseline.XXXXXX", err[512];
	json_t *d = doc(r1), *bl = rq_baseline_from_results(d, NULL, "r");
	struct rq_baseline b;
	int fd = mkstemp(path);
	struct rq_result *ok, *slow, *other;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(json_array_size(json_object_get(bl, "entries")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(bl, "entries"), 0),
							    "hca_model")), "rxe");
	ck_assert_int_eq(json_dump_file(bl, path, 0), 0);
	ck_assert_int_eq(rq_baseline_load(&b, path, err, sizeof(err)), 0);

	ok = result_row(9.8);		/* -2 %: within 5 % */
	ck_assert_uint_eq(rq_baseline_judge(&b, ok, rq_baseline_model(ok)), 1);	/* MiB: not judged */
	ck_assert_int_eq(ok->verdict, RQ_PASS);
	slow = result_row(8.0);		/* -20 % */
	ck_assert_uint_eq(rq_baseline_judge(&b, slow, rq_baseline_model(slow)), 1);
	ck_assert_int_eq(slow->verdict, RQ_FAIL);
	ck_assert_ptr_nonnull(strstr(slow->reason, "bw_64KiB 8 Gb/s is 20.0% lower than the baseline 10"));
	other = result_row(1.0);	/* another HCA model: no entry, nothing judged */
	ck_assert_uint_eq(rq_baseline_judge(&b, other, "MT4123"), 0);
	ck_assert_int_eq(other->verdict, RQ_PASS);
	rq_result_free(ok);
	rq_result_free(slow);
	rq_result_free(other);
	rq_baseline_release(&b);

	/* A top-level tolerance is checked as the per-glob ones are. */
	{
		static const char *const badtol[] = { "-50", "1e308", "\"5\"" };

		for (size_t k = 0; k < 3; k++) {
			json_t *v = json_loads(badtol[k], JSON_DECODE_ANY, NULL);
			json_t *bt = json_deep_copy(bl);

			json_object_set_new(bt, "tolerance_pct", v);
			ck_assert_int_eq(json_dump_file(bt, path, 0), 0);
			ck_assert_int_lt(rq_baseline_load(&b, path, err, sizeof(err)), 0);
			ck_assert_ptr_nonnull(strstr(err, "tolerance_pct"));
			json_decref(bt);
		}
	}

	/* A per-glob tolerance whose pct is missing or a string is an error, not 0 %. */
	{
		static const char *const badglob[] = { "{\"glob\": \"bw_*\"}", "{\"glob\": \"bw_*\", \"pct\": \"10\"}" };
		static const char *const why[] = { "tolerances[0]: pct is missing", "tolerances[0]: pct is not a number" };

		for (size_t k = 0; k < 2; k++) {
			json_t *bt = json_deep_copy(bl), *arr = json_array();

			json_array_append_new(arr, json_loads(badglob[k], 0, NULL));
			json_object_set_new(bt, "tolerances", arr);
			ck_assert_int_eq(json_dump_file(bt, path, 0), 0);
			ck_assert_int_eq(rq_baseline_load(&b, path, err, sizeof(err)), -EINVAL);
			ck_assert_msg(strstr(err, why[k]), "%s", err);
			json_decref(bt);
		}
	}

	/* Not a baseline: the file is named with what is wrong. */
	ck_assert_int_eq(json_dump_file(d, path, 0), 0);
	ck_assert_int_lt(rq_baseline_load(&b, path, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "rdmaqual-baseline/1"));
	unlink(path);
	json_decref(bl);
	json_decref(d);
	free(r1);
}
END_TEST

/* A baseline of five runs keeps each figure's distribution and judges against its noise. */
START_TEST(baseline_distribution)
{
	static const double wide[5] = { 10, 6, 14, 8, 12 }, tight[5] = { 10, 10.1, 9.9, 10.05, 9.95 };
	char path[] = "/tmp/rq-test-baseline.XXXXXX", err[512];
	const double *sets[2] = { wide, tight };
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	for (int s = 0; s < 2; s++) {
		json_t *d[5], *bl, *f;
		struct rq_baseline b;
		struct rq_result *r;

		for (int i = 0; i < 5; i++) {
			char *row = bwrow("PASS", sets[s][i]);

			d[i] = doc(row);
			free(row);
		}
		bl = rq_baseline_from_runs(d, 5, NULL, "r");
		f = json_array_get(json_object_get(json_array_get(json_object_get(bl, "entries"), 0), "figures"), 0);
		ck_assert_int_eq(json_integer_value(json_object_get(f, "n")), 5);
		ck_assert_int_eq(json_array_size(json_object_get(f, "samples")), 5);
		ck_assert(json_number_value(json_object_get(f, "value")) == 10);
		ck_assert_int_eq(json_dump_file(bl, path, 0), 0);
		ck_assert_int_eq(rq_baseline_load(&b, path, err, sizeof(err)), 0);
		/* 8.5 is -15 %: inside the wide baseline's noise, far outside the tight one's. */
		r = result_row(8.5);
		rq_baseline_judge(&b, r, rq_baseline_model(r));
		if (s == 0) {
			ck_assert_int_eq(r->verdict, RQ_PASS);
			ck_assert_ptr_nonnull(strstr(r->log.buf, "baseline n=5"));
			ck_assert_ptr_nonnull(strstr(r->log.buf, "inconclusive): ok"));
		} else {
			ck_assert_int_eq(r->verdict, RQ_FAIL);
			ck_assert_ptr_nonnull(strstr(r->reason, "bw_64KiB 8.5 Gb/s is 15.0% lower than the baseline 10 "
						     "(tolerance 5%; baseline n=5"));
		}
		rq_result_free(r);
		rq_baseline_release(&b);
		json_decref(bl);
		for (int i = 0; i < 5; i++)
			json_decref(d[i]);
	}
	/* A sample that no rate can be: the file and the entry are named. */
	FILE *fp = fopen(path, "w");

	fputs("{\"schema\": \"rdmaqual-baseline/1\", \"entries\": [{\"case\": \"c\", \"target\": \"t\", "
	      "\"hca_model\": \"m\", \"figures\": [{\"name\": \"bw\", \"value\": 1, \"unit\": \"Gb/s\", "
	      "\"samples\": [1, -2]}]}]}", fp);
	fclose(fp);
	struct rq_baseline b;

	ck_assert_int_lt(rq_baseline_load(&b, path, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "entries[0] (c) figure bw: sample 2 is not a number a rate can be"));
	unlink(path);
}
END_TEST

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

START_TEST(html_run)
{
	char *r1 = bwrow("FAIL", 1.5), *rows = NULL;
	struct sb out = SB_INIT;
	json_t *d;

	ck_assert(asprintf(&rows, "%s, %s", r1, r1) > 0);
	d = doc(rows);
	rq_html_run(&out, d, NULL, NULL);
	ck_assert_uint_eq(count(out.buf, "<tr class=\"row\" data-verdict=\"FAIL\""), 2);
	ck_assert_uint_eq(count(out.buf, "<div class=\"failure\""), 2);
	/* The reason's markup is escaped, the chart is drawn, nothing is fetched. */
	ck_assert_ptr_nonnull(strstr(out.buf, "slow &lt;x&gt;"));
	ck_assert_ptr_null(strstr(out.buf, "slow <x>"));
	ck_assert_ptr_nonnull(strstr(out.buf, "data-family=\"bw\""));
	ck_assert_ptr_nonnull(strstr(out.buf, "Content-Security-Policy"));
	ck_assert_ptr_null(strstr(out.buf, "src="));
	/* Links only within the page: the grid's cells to their rows. */
	for (const char *p = out.buf; (p = strstr(p, "href=")); p++)
		ck_assert_msg(!strncmp(p, "href=\"#row-", 11), "a link out of the page: %.40s", p);
	ck_assert_ptr_nonnull(strstr(out.buf, "<td class=\"cell g-FAIL\" data-verdict=\"FAIL\"><a href=\"#row-0\">FAIL"));
	ck_assert_ptr_nonnull(strstr(out.buf, "id=\"row-0\""));
	sb_release(&out);

	/* A row of 30 figures shows its judged ones and folds the rest. */
	struct sb many = SB_INIT, fig = SB_INIT;

	sb_adds(&fig, "\"figures\": [{\"name\": \"bw_avg\", \"value\": 1, \"unit\": \"Gb/s\"}");
	for (int i = 0; i < 29; i++)
		sb_addf(&fig, ", {\"name\": \"counter_%d\", \"value\": %d, \"unit\": \"\"}", i, i);
	sb_adds(&fig, "]");
	json_t *d2;
	char *r30 = NULL;

	ck_assert(asprintf(&r30, "{\"id\": \"link.health[mlx5_0/1]\", \"case\": \"link.health\", \"verdict\": "
			   "\"PASS\", \"target\": \"hca\", %s}", fig.buf) > 0);
	d2 = doc(r30);
	rq_html_run(&many, d2, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(many.buf, "bw_avg=1 Gb/s<details class=\"figs\"><summary>29 more figures</summary>"));
	ck_assert_uint_eq(count(many.buf, "counter_"), 29);
	sb_release(&many);
	sb_release(&fig);
	json_decref(d2);
	free(r30);
	json_decref(d);
	free(rows);
	free(r1);
}
END_TEST

/* qualify's page: each figure judged with repeats shows both samples, the band and the outcome. */
START_TEST(html_noise)
{
	static const double b[6] = { 1.0, 1.01, 0.99, 1.02, 0.98, 1.0 }, a[6] = { 0.7, 0.71, 0.69, 0.7, 0.72, 0.68 };
	json_t *db[6], *da[6], *mb, *ma, *cj;
	struct rq_run_doc rdb, rda;
	struct cmp_opts o;
	struct cmp_report rep;
	struct sb out = SB_INIT;
	char err[256];

	for (int i = 0; i < 6; i++) {
		char *rb = bwrow("PASS", b[i]), *ra = bwrow("PASS", a[i]);

		db[i] = doc(rb);
		da[i] = doc(ra);
		free(rb);
		free(ra);
	}
	mb = rq_repeat_merge(db, 6, err, sizeof(err));
	ma = rq_repeat_merge(da, 6, err, sizeof(err));
	cmp_opts_init(&o);
	ck_assert_int_eq(cmp_compare(mb, ma, &o, &rep, err, sizeof(err)), 0);
	cj = cmp_report_json(&rep, &o);
	char *runs_b[] = { "/q/before/r1", "/q/before/r3" }, *runs_a[] = { "/q/after/r2", "/q/after/r4" };
	struct rq_html_side hb = { .label = "before", .doc = &rdb, .runs = runs_b, .nruns = 2 },
			    ha = { .label = "after", .doc = &rda, .runs = runs_a, .nruns = 2 };

	rq_run_doc_init(&rdb);
	rq_run_doc_init(&rda);
	rq_run_doc_from_json(&rdb, mb);
	rq_run_doc_from_json(&rda, ma);

	rq_html_compare(&out, "q", &hb, &ha, cj);
	ck_assert_ptr_nonnull(strstr(out.buf, "<section id=\"noise\">"));
	/* every repeat of a side, a link to its page beside the qualification's */
	ck_assert_uint_eq(count(out.buf, "<a class=\"side-run\""), 4);
	ck_assert_ptr_nonnull(strstr(out.buf, "2 runs:<br><a class=\"side-run\" href=\"before/r1/report.html\">r1</a>"
					      "<br><a class=\"side-run\" href=\"before/r3/report.html\">r3</a>"));
	ck_assert_ptr_nonnull(strstr(out.buf, "href=\"after/r4/report.html\">r4</a>"));
	ck_assert_ptr_nonnull(strstr(out.buf, "<tr class=\"judged\" data-outcome=\"regression\">"));
	ck_assert_uint_eq(count(out.buf, "<circle class=\"sample s0\""), 6);
	ck_assert_uint_eq(count(out.buf, "<circle class=\"sample s1\""), 6);
	ck_assert_uint_eq(count(out.buf, "<rect class=\"band\""), 1);
	ck_assert_ptr_nonnull(strstr(out.buf, "worse by 30.0% (tolerance 5%)"));
	sb_release(&out);
	json_decref(cj);
	cmp_report_release(&rep);
	cmp_opts_release(&o);
	for (int i = 0; i < 6; i++) {
		json_decref(db[i]);
		json_decref(da[i]);
	}
	rq_run_doc_release(&rdb);
	rq_run_doc_release(&rda);
	json_decref(mb);
	json_decref(ma);
}
END_TEST

/* run dir top/NAME holding what a run writes (its trend.json by the real writer), started at `started`. */
static void trend_run(const char *top, const char *name, const char *started, double gbps, size_t pad)
{
	char p[512], err[256];
	struct rq_run_info ri;
	struct rq_results rs = { 0 };
	char *r = bwrow("PASS", gbps);
	json_t *j = json_loads(r, 0, NULL);
	int dfd;

	snprintf(p, sizeof(p), "%s/%s", top, name);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	rq_run_info_init(&ri, "test", 0, NULL);
	free(ri.started);
	ri.started = xstrdup(started);
	rq_results_add(&rs, rq_result_from_json(j, err, sizeof(err)));
	/* a padded row id makes the index larger (the byte budget) */
	for (size_t k = 0; k < pad / 4096; k++) {
		char id[4200];
		struct rq_result *x;

		snprintf(id, sizeof(id), "pad%zu.%4000d", k, 0);
		x = rq_result_new(id, NULL, 0);
		rq_figure_add(x, "bw_64KiB", 1.0, "Gb/s");
		rq_results_add(&rs, x);
	}
	dfd = open(p, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(rq_trend_index_write(dfd, &ri, &rs), 0);
	close(dfd);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
	json_decref(j);
	free(r);
}

/* qualify's "every row is an ERROR" line: the guest's reason is inert on the terminal. */
START_TEST(qualify_error_side_inert)
{
	json_t *d = doc("{\"id\": \"x\", \"case\": \"x\", \"verdict\": \"ERROR\", "
			"\"reason\": \"boom\\u001b]0;OWNED\\u0007\\u001b[2J\\nPASS  forged\"}");
	char buf[512] = "";
	FILE *fp = fmemopen(buf, sizeof(buf) - 1, "w");
	struct rq_run_doc rd;

	rq_run_doc_init(&rd);
	rq_run_doc_from_json(&rd, d);
	ck_assert_int_eq(qualify_side_usable("before", &rd, fp), -1);
	rq_run_doc_release(&rd);
	fclose(fp);
	ck_assert_str_eq(buf, "rdmaqual qualify: every row of the before side is an ERROR, nothing to compare; "
			 "the first: boom?]0;OWNED??[2J?PASS  forged\n");
	json_decref(d);
}
END_TEST

/* A run's page shows each judged figure's trend over the earlier runs beside it. */
START_TEST(html_trend)
{
	char top[] = "/tmp/rq-test-trend.XXXXXX", p[512];
	struct sb out = SB_INIT;
	json_t *d;
	char *r;

	ck_assert_ptr_nonnull(mkdtemp(top));
	for (int i = 1; i <= 3; i++) {
		char name[16], when[32];

		snprintf(name, sizeof(name), "run%d", i);
		snprintf(when, sizeof(when), "2026-11-30T10:0%d:00Z", i);
		trend_run(top, name, when, 10.0 + i, 0);
	}
	r = bwrow("PASS", 14.0);
	d = doc(r);
	free(r);
	json_object_set_new(json_object_get(d, "run"), "started", json_string("2026-11-30T10:04:00Z"));
	snprintf(p, sizeof(p), "%s/latest", top);
	ck_assert_int_eq(symlink("run3", p), 0);	/* followed never, counted once */
	snprintf(p, sizeof(p), "%s/run4", top);
	rq_html_run(&out, d, p, NULL);
	ck_assert_ptr_nonnull(strstr(out.buf, "<svg class=\"trend\" data-runs=\"3\""));
	ck_assert_ptr_nonnull(strstr(out.buf, "3 earlier runs: 11 .. 14"));
	sb_release(&out);
	/* The first run of a directory has no trend. */
	rq_html_run(&out, d, "/nonexistent/run", NULL);
	ck_assert_ptr_null(strstr(out.buf, "class=\"trend\""));
	sb_release(&out);
	json_decref(d);
	ck_assert_int_eq(rm_rf(top), 0);
}
END_TEST

/*
 * The trend reads the small index beside each run, never a whole
 * results.json; only the caller's own run dirs; and at most its byte
 * budget in all (five 30 MB siblings took 54 s and 2.2 GB).
 */
START_TEST(html_trend_bounded)
{
	char top[] = "/tmp/rq-test-trend.XXXXXX", p[512];
	struct sb out = SB_INIT;
	json_t *d, *old;
	char *r;

	ck_assert_ptr_nonnull(mkdtemp(top));
	/* two runs of results.json only (no index): not read */
	r = bwrow("PASS", 50.0);
	old = doc(r);
	free(r);
	for (int i = 1; i <= 2; i++) {
		snprintf(p, sizeof(p), "%s/old%d", top, i);
		ck_assert_int_eq(mkdir(p, 0700), 0);
		json_object_set_new(json_object_get(old, "run"), "started", json_string("2026-11-30T09:00:00Z"));
		snprintf(p, sizeof(p), "%s/old%d/results.json", top, i);
		ck_assert_int_eq(json_dump_file(old, p, 0), 0);
	}
	json_decref(old);
	r = bwrow("PASS", 14.0);
	d = doc(r);
	free(r);
	json_object_set_new(json_object_get(d, "run"), "started", json_string("2026-11-30T11:00:00Z"));
	snprintf(p, sizeof(p), "%s/run9", top);
	rq_html_run(&out, d, p, NULL);
	ck_assert_ptr_null(strstr(out.buf, "class=\"trend\""));
	sb_release(&out);
	/* six runs whose indexes are ~450 KB each (under the 1 MiB a file), newest first in
	 * a 4 MiB budget: at most the 9 newest fit; more runs beside them are not read */
	for (int i = 1; i <= 12; i++) {
		char name[16], when[32];

		snprintf(name, sizeof(name), "r%02d", i);
		snprintf(when, sizeof(when), "2026-11-30T10:%02d:00Z", i);
		trend_run(top, name, when, 10.0 + i, 450u << 10);
	}
	rq_html_run(&out, d, p, NULL);
	ck_assert_msg(strstr(out.buf, "<svg class=\"trend\" data-runs=\"9\""), "%.300s",
		      strstr(out.buf, "<svg class=\"trend\"") ?: "no trend");
	ck_assert_ptr_nonnull(strstr(out.buf, "9 earlier runs: 14 .. 22"));
	sb_release(&out);
	/* another user's run dir is not read (as root: give the newest ones away) */
	if (geteuid() == 0) {
		for (int i = 9; i <= 12; i++) {
			snprintf(p, sizeof(p), "%s/r%02d", top, i);
			ck_assert_int_eq(chown(p, 65534, 65534), 0);
		}
		snprintf(p, sizeof(p), "%s/run9", top);
		rq_html_run(&out, d, p, NULL);
		ck_assert_ptr_nonnull(strstr(out.buf, "<svg class=\"trend\" data-runs=\"8\""));
		ck_assert_ptr_nonnull(strstr(out.buf, "8 earlier runs: 11 .. 18"));
		sb_release(&out);
	}
	json_decref(d);
	ck_assert_int_eq(rm_rf(top), 0);
}
END_TEST

START_TEST(html_heatmap)
{
	const char *labels[] = { "node01", "node02", "<n3>" };
	double m[9] = { NAN, 90, 88, 91, NAN, 45, 89, 44, NAN };
	struct sb out = SB_INIT;

	rq_html_heatmap(&out, "bw node x node", labels, 3, m, "Gb/s", true);
	ck_assert_uint_eq(count(out.buf, "<rect class=\"cell\""), 9);
	ck_assert_uint_eq(count(out.buf, ": no figure</title>"), 3);
	ck_assert_ptr_nonnull(strstr(out.buf, "&lt;n3&gt;"));
	ck_assert_ptr_nonnull(strstr(out.buf, "data-nodes=\"3\""));
	sb_release(&out);
}
END_TEST

START_TEST(html_escape)
{
	struct sb out = SB_INIT;

	rq_html_escape(&out, "a&b\"c'<\x01\xff");
	ck_assert_str_eq(out.buf, "a&amp;b&quot;c&#39;&lt;\xef\xbf\xbd\xef\xbf\xbd");
	sb_release(&out);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, median);
	tcase_add_test(tc, merge_repeats);
	tcase_add_test(tc, doc_row);
	tcase_add_test(tc, noise_judged);
	tcase_add_test(tc, baseline_distribution);
	tcase_add_test(tc, baseline);
	tcase_add_test(tc, baseline_key_figures);
	tcase_add_test(tc, html_run);
	tcase_add_test(tc, html_noise);
	tcase_add_test(tc, html_trend);
	tcase_add_test(tc, html_trend_bounded);
	tcase_add_test(tc, qualify_error_side_inert);
	tcase_add_test(tc, html_heatmap);
	tcase_add_test(tc, html_escape);
}

RQ_CHECK_MAIN("upgrade", add_tests)
