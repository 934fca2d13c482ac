/* SPDX-License-Identifier: MIT */
/* Unit tests for src/core/result.c: verdict rules and the JSON round trip,
 * including garbage from an untrusted agent; and results.json read back
 * (src/core/run_doc.c). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "core/result.h"
#include "core/run_doc.h"
#include "report/report.h"
#include "check_main.h"

START_TEST(ids)
{
	struct rq_result *a = rq_result_new("mtu.roce", "rxe0", 1);
	struct rq_result *b = rq_result_new("mtu.roce", "mlx5_0", 0);
	struct rq_result *c = rq_result_new("driver.loaded", NULL, 0);

	ck_assert_str_eq(a->id, "mtu.roce[rxe0/1]");
	ck_assert_str_eq(b->id, "mtu.roce[mlx5_0]");
	ck_assert_str_eq(c->id, "driver.loaded");
	rq_result_free(a);
	rq_result_free(b);
	rq_result_free(c);
}
END_TEST

START_TEST(finish_rules)
{
	struct rq_result *r = rq_result_new("c", NULL, 0);

	/* nothing judged: never PASS, figures in the reason */
	rq_figure_add(r, "bw_avg", 12.5, "Gb/s");
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	ck_assert_str_eq(r->reason, "nothing was judged (figures: bw_avg=12.5 Gb/s)");
	rq_result_free(r);

	r = rq_result_new("c", NULL, 0);
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	ck_assert_str_eq(r->reason, "nothing was judged");
	rq_result_free(r);

	/* all ok -> PASS */
	r = rq_result_new("c", NULL, 0);
	ck_assert(rq_judge(r, true, "a %d", 1));
	ck_assert(rq_judge(r, true, "b"));
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_PASS);
	ck_assert_uint_eq(r->judged, 2);
	ck_assert(strstr(r->log.buf, "ok: a 1\n"));
	rq_result_free(r);

	/* first failure is the reason; one line */
	r = rq_result_new("c", NULL, 0);
	rq_judge(r, true, "fine");
	ck_assert(!rq_judge(r, false, "mtu %d != %d\nmore", 1024, 4096));
	ck_assert(!rq_judge(r, false, "second"));
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "mtu 1024 != 4096 more");
	ck_assert_uint_eq(r->failed, 2);
	rq_result_free(r);

	/* an explanation follows a failed judgement's reason; a passing row has none */
	r = rq_result_new("c", NULL, 0);
	rq_result_explain(r, "not failed yet");
	ck_assert_ptr_null(r->reason);
	rq_judge(r, false, "exited with status 1 (expected exit 0)");
	rq_result_explain(r, "no test failed; %d line\noutside", 1);
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_FAIL);
	ck_assert_str_eq(r->reason, "exited with status 1 (expected exit 0); no test failed; 1 line "
			 "outside");
	ck_assert(strstr(r->log.buf, "note: no test failed; 1 line\noutside\n"));
	rq_result_free(r);

	/* a set verdict is sticky and wins over judgements */
	r = rq_result_new("c", NULL, 0);
	rq_result_set(r, RQ_SKIP, "needs root");
	rq_result_set(r, RQ_ERROR, "later");
	rq_judge(r, false, "after skip");
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	ck_assert_str_eq(r->reason, "needs root");
	rq_result_free(r);

	/* a non-PASS verdict always carries a reason */
	r = rq_result_new("c", NULL, 0);
	rq_result_set(r, RQ_ERROR, "%s", "");
	rq_result_finish(r);
	ck_assert_int_eq(r->verdict, RQ_ERROR);
	ck_assert_ptr_nonnull(r->reason);
	ck_assert_str_ne(r->reason, "");
	rq_result_free(r);
}
END_TEST

START_TEST(verdict_names)
{
	enum rq_verdict v;
	const enum rq_verdict all[] = { RQ_PASS, RQ_FAIL, RQ_SKIP, RQ_ERROR };

	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(rq_verdict_parse(rq_verdict_name(all[i]), &v), 0);
		ck_assert_int_eq(v, all[i]);
	}
	ck_assert_int_ne(rq_verdict_parse("pass", &v), 0);
	ck_assert_int_ne(rq_verdict_parse("", &v), 0);
}
END_TEST

START_TEST(counts)
{
	struct rq_results rs = { 0 };
	const enum rq_verdict vs[] = { RQ_PASS, RQ_PASS, RQ_FAIL, RQ_SKIP, RQ_ERROR, RQ_NONE };

	for (size_t i = 0; i < ARRAY_SIZE(vs); i++) {
		struct rq_result *r = rq_result_new("c", NULL, 0);
		r->verdict = vs[i];
		rq_results_add(&rs, r);
	}
	struct rq_counts c;
	rq_results_count(&rs, &c);
	ck_assert_uint_eq(c.pass, 2);
	ck_assert_uint_eq(c.fail, 1);
	ck_assert_uint_eq(c.skip, 1);
	ck_assert_uint_eq(c.error, 2);	/* an undecided row is an error */
	ck_assert_uint_eq(c.total, 6);
	rq_results_release(&rs);
}
END_TEST

START_TEST(json_round_trip)
{
	struct rq_result *r = rq_result_new("bw.write", "mlx5_0", 1);
	char err[256];

	r->kind = xstrdup("perftest");
	r->judge = xstrdup("bw_avg t_*");
	r->repeat = 3;
	r->target = xstrdup("hca");
	r->target_why = xstrdup("PCI 15b3 present");
	r->log_path = xstrdup("logs/bw.write.log");
	r->file = xstrdup("cases/bw/write.yaml");
	r->duration_s = 3.25;
	rq_judge(r, false, "bw 10 < 90 \xff bad utf8");
	rq_figure_add(r, "bw_avg", 10.0, "Gb/s");
	rq_figure_add(r, "weird", NAN, "");
	rq_fact_add(r, "fw_ver:mlx5_0", "20.31");
	rq_fact_add(r, "fw_ver:mlx5_0", "20.32");	/* replaces */
	rq_fact_add(r, "kernel", "6.1");
	sb_add(&r->log, "\0nul", 4);
	rq_result_finish(r);

	json_t *j = rq_result_to_json(r, true);
	ck_assert_ptr_nonnull(j);
	char *text = json_dumps(j, JSON_COMPACT);
	ck_assert_ptr_nonnull(text);
	json_decref(j);
	json_error_t je;
	j = json_loads(text, JSON_ALLOW_NUL, &je);
	ck_assert_ptr_nonnull(j);
	struct rq_result *b = rq_result_from_json(j, err, sizeof(err));
	ck_assert_msg(b, "%s", err);
	ck_assert_str_eq(b->id, "bw.write[mlx5_0/1]");
	ck_assert_str_eq(b->case_name, "bw.write");
	ck_assert_str_eq(b->device, "mlx5_0");
	ck_assert_int_eq(b->port, 1);
	ck_assert_int_eq(b->verdict, RQ_FAIL);
	ck_assert_str_eq(b->reason, "bw 10 < 90 \xef\xbf\xbd bad utf8");
	ck_assert_str_eq(b->kind, "perftest");
	ck_assert_str_eq(b->judge, "bw_avg t_*");
	ck_assert_uint_eq(b->repeat, 3);
	ck_assert_str_eq(b->target, "hca");
	ck_assert_str_eq(b->target_why, "PCI 15b3 present");
	ck_assert_str_eq(b->log_path, "logs/bw.write.log");
	ck_assert_str_eq(b->file, "cases/bw/write.yaml");
	ck_assert_uint_eq(b->judged, 1);
	ck_assert_uint_eq(b->failed, 1);
	ck_assert(fabs(b->duration_s - 3.25) < 1e-9);
	ck_assert_uint_eq(b->nfigs, 2);
	ck_assert_str_eq(b->figs[0].name, "bw_avg");
	ck_assert(b->figs[0].value == 10.0);
	ck_assert_str_eq(b->figs[0].unit, "Gb/s");
	ck_assert(isnan(b->figs[1].value));
	ck_assert_uint_eq(b->nfacts, 2);
	ck_assert_str_eq(b->facts[0].key, "fw_ver:mlx5_0");
	ck_assert_str_eq(b->facts[0].value, "20.32");
	/* the log keeps its NUL; invalid UTF-8 became U+FFFD */
	struct sb want = SB_INIT;
	sb_add_utf8(&want, r->log.buf, r->log.len);
	ck_assert_uint_eq(b->log.len, want.len);
	ck_assert(!memcmp(b->log.buf, want.buf, want.len));
	ck_assert(memchr(b->log.buf, '\0', b->log.len));
	sb_release(&want);

	/* and the second trip is identical to the first */
	json_t *j2 = rq_result_to_json(b, true);
	char *text2 = json_dumps(j2, JSON_COMPACT);
	ck_assert_str_eq(text, text2);
	free(text);
	free(text2);
	json_decref(j);
	json_decref(j2);
	rq_result_free(r);
	rq_result_free(b);
}
END_TEST

static const char *const garbage[] = {
	"[]", "1", "null", "\"PASS\"", "{}",
	"{\"id\":1,\"case\":\"c\",\"verdict\":\"PASS\"}",
	"{\"id\":\"c\",\"verdict\":\"PASS\"}",
	"{\"id\":\"c\",\"case\":\"c\"}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"MAYBE\"}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"port\":-1}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"port\":\"1\"}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"port\":1e99}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"judged\":-5}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":{}}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":[1]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":[{\"name\":\"x\"}]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":[{\"name\":\"x\",\"value\":\"1\"}]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"figures\":[{\"name\":2,\"value\":1}]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"facts\":[]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"facts\":{\"k\":1}}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"reason\":[]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"duration_s\":\"1\"}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"log\":5}",
	"{\"id\":\"c\\u0000x\",\"case\":\"c\",\"verdict\":\"PASS\"}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"device\":{}}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"judge\":[\"lat_min\"]}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"repeat\":1001}",
	"{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"PASS\",\"repeat\":-1}",
};

START_TEST(json_garbage_rejected)
{
	char err[128];

	for (size_t i = 0; i < ARRAY_SIZE(garbage); i++) {
		json_error_t je;
		json_t *j = json_loads(garbage[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
		ck_assert_msg(j, "test input %zu does not parse: %s", i, je.text);
		err[0] = '\0';
		struct rq_result *r = rq_result_from_json(j, err, sizeof(err));
		ck_assert_msg(!r, "accepted: %s", garbage[i]);
		ck_assert_msg(err[0], "no error text for %s", garbage[i]);
		json_decref(j);
	}
	ck_assert_ptr_null(rq_result_from_json(NULL, NULL, 0));

	/* minimal valid record */
	json_t *j = json_loads("{\"id\":\"c\",\"case\":\"c\",\"verdict\":\"SKIP\","
			       "\"future_field\":[1,2]}", 0, NULL);
	struct rq_result *r = rq_result_from_json(j, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	ck_assert_int_eq(r->verdict, RQ_SKIP);
	rq_result_free(r);
	json_decref(j);
}
END_TEST

/* Mutate a valid record at random: whatever comes out must be rejected or
 * parsed, never crash (ASan watches). */
START_TEST(json_mutations)
{
	struct rq_result *r = rq_result_new("bw.write", "mlx5_0", 1);
	rq_figure_add(r, "bw", 1, "Gb/s");
	rq_fact_add(r, "k", "v");
	rq_result_finish(r);
	json_t *j = rq_result_to_json(r, true);
	char *text = json_dumps(j, JSON_COMPACT);
	size_t len = strlen(text);
	json_decref(j);
	rq_result_free(r);
	unsigned seed = 12345;
	const char alphabet[] = "{}[]\":,0123456789-.eE\\untrufalse \x01\xff";

	for (int iter = 0; iter < 3000; iter++) {
		char *m = xstrdup(text);
		int nmut = 1 + rand_r(&seed) % 4;
		for (int k = 0; k < nmut; k++)
			m[rand_r(&seed) % len] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		json_t *mj = json_loads(m, JSON_DECODE_ANY, NULL);
		if (mj) {
			char err[128];
			struct rq_result *x = rq_result_from_json(mj, err, sizeof(err));
			if (x) {
				json_t *back = rq_result_to_json(x, true);
				ck_assert_ptr_nonnull(back);
				json_decref(back);
			}
			rq_result_free(x);
			json_decref(mj);
		}
		free(m);
	}
	free(text);
}
END_TEST

/* ---- results.json read back (core/run_doc.h) ---- */

static char *tmp_write(const char *text)
{
	char *path = xstrdup("/tmp/rq-test-rundoc.XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* What the runner writes is what the reader gives back, field by field and byte for byte. */
START_TEST(run_doc_round_trip)
{
	char *argv[] = { "rdmaqual", "run", "bw" };
	struct rq_run_info ri;
	struct rq_results rs = { 0 };
	struct rq_result *a = rq_result_new("bw.write", "rxe0", 1), *b = rq_result_new("drv", NULL, 0);
	struct rq_run_doc d;
	char err[512], *text, *path, *again;
	json_t *j;

	rq_run_info_init(&ri, "1.0", 3, argv);
	free(ri.run_id);
	ri.run_id = xstrdup("20260101T000000Z-1");
	rq_run_info_fact(&ri, "kernel", "6.1");
	rq_run_info_fact(&ri, "sysroot.synthesized_by", "me");
	rq_run_info_finish(&ri);
	ri.lab = json_pack("{s:[s]}", "nodes", "n1");	/* after the rows: the rewrite keeps it there */
	a->kind = xstrdup("perftest");
	a->target = xstrdup("rxe-vm");
	a->log_path = xstrdup("logs/a.log");
	a->node = xstrdup("n1");
	a->duration_s = 1.5;
	rq_figure_add(a, "bw_64KiB", 9.25, "Gb/s");
	rq_figure_add(a, "odd", NAN, "");
	rq_fact_add(a, "hca_model", "rxe");
	rq_judge(a, true, "fine");
	rq_result_finish(a);
	rq_result_set(b, RQ_FAIL, "gone");
	rq_results_add(&rs, a);
	rq_results_add(&rs, b);
	text = rq_json_render(&ri, &rs);
	path = tmp_write(text);

	rq_run_doc_init(&d);
	ck_assert_msg(!rq_run_doc_load(&d, path, err, sizeof(err)), "%s", err);
	ck_assert_str_eq(d.schema, RQ_RUN_DOC_SCHEMA);
	ck_assert(d.has_run);
	ck_assert_str_eq(d.run.id, "20260101T000000Z-1");
	ck_assert_str_eq(d.run.version, "1.0");
	ck_assert_str_eq(d.run.argv, "rdmaqual run bw");
	ck_assert_ptr_nonnull(d.run.finished);
	ck_assert(d.run.complete);
	ck_assert(!d.run.synthesized);
	ck_assert_uint_eq(d.run.repeats, 0);
	ck_assert_uint_eq(d.nfacts, 2);
	ck_assert_str_eq(rq_run_doc_fact(&d, "kernel"), "6.1");
	ck_assert_ptr_null(rq_run_doc_fact(&d, "nope"));
	ck_assert_uint_eq(d.counts.total, 2);
	ck_assert_uint_eq(d.counts.pass, 1);
	ck_assert_uint_eq(d.counts.fail, 1);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_str_eq(d.rows[0]->id, "bw.write[rxe0/1]");
	ck_assert_str_eq(d.rows[0]->node, "n1");
	ck_assert_str_eq(d.rows[0]->log_path, "logs/a.log");
	ck_assert(d.rows[0]->figs[0].value == 9.25);
	ck_assert(isnan(d.rows[0]->figs[1].value));
	ck_assert_ptr_null(d.rows[0]->figs[0].spread);
	ck_assert_int_eq(d.rows[1]->verdict, RQ_FAIL);
	ck_assert_ptr_eq(rq_run_doc_find(&d, "drv"), d.rows[1]);
	ck_assert_ptr_nonnull(d.lab);

	/* Written again, it is the file: the streamed head keeps its keys' order. */
	j = rq_run_doc_to_json(&d);
	again = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	ck_assert_ptr_nonnull(again);
	ck_assert_uint_eq(strlen(again) + 1, strlen(text));
	ck_assert(!strncmp(again, text, strlen(again)));
	free(again);
	json_decref(j);
	rq_run_doc_release(&d);

	/* A compact reader drops what compare does not read. */
	rq_run_doc_init(&d);
	d.flags = RQ_RUN_DOC_COMPACT;
	ck_assert_msg(!rq_run_doc_load(&d, path, err, sizeof(err)), "%s", err);
	ck_assert_ptr_null(d.rows[0]->log_path);
	ck_assert_str_eq(d.rows[0]->kind, "perftest");
	rq_run_doc_release(&d);

	unlink(path);
	free(path);
	free(text);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

/* A merged figure's spread survives the row's JSON both ways. */
START_TEST(run_doc_spread)
{
	struct rq_result *r = rq_result_new("bw", NULL, 0), *back;
	const double s[3] = { 3, 1, 2 };
	char err[256];
	json_t *j;

	rq_result_set(r, RQ_PASS, "ok");
	rq_figure_add(r, "bw_avg", 2, "Gb/s");
	rq_figure_set_spread(r, 0, 3, 1, 3, s, 3);
	j = rq_result_to_json(r, false);
	back = rq_result_from_json(j, err, sizeof(err));
	ck_assert_msg(back != NULL, "%s", err);
	ck_assert_ptr_nonnull(back->figs[0].spread);
	ck_assert_uint_eq(back->figs[0].spread->n, 3);
	ck_assert(back->figs[0].spread->min == 1 && back->figs[0].spread->max == 3);
	ck_assert_uint_eq(back->figs[0].spread->nsamples, 3);
	ck_assert(back->figs[0].spread->samples[0] == 3 && back->figs[0].spread->samples[2] == 2);
	rq_result_free(back);
	json_decref(j);
	rq_result_free(r);
}
END_TEST

/* One bad thing each; the error names the file and says what is wrong. */
START_TEST(run_doc_malformed)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "{\"schema\": \"rdmaqual-results/1\", \"run\": {}}",
		  ": \"results\" is missing or not an array" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": {}}",
		  ": \"results\" is missing or not an array" },
		{ "{\"results\": []}", ": not a results.json: no \"schema\" string" },
		{ "{\"schema\": \"rdmaqual-results/9\", \"results\": []}", ": unknown schema \"rdmaqual-results/9\"" },
		{ "[1, 2]", ": not a results.json: the document is not a JSON object" },
		{ "{\"schema\": ", ": not a results.json: not JSON (line 1" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"facts\": {\"k\": 1}, \"results\": []}",
		  ": fact \"k\" is not a string" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"facts\": [], \"results\": []}", ": \"facts\" is not an object" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\", \"case\": \"a\", "
		  "\"verdict\": \"PASS\"}, {\"id\": \"b\", \"case\": \"b\", \"verdict\": \"PASS\", \"port\": \"1\"}]}",
		  ": results[1]: result: \"port\" must be an integer 0..65535" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\", \"case\": \"a\"}]}",
		  ": results[0]: result: missing \"verdict\"" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\", \"case\": \"a\", "
		  "\"verdict\": \"PASS\", \"figures\": [{\"name\": \"bw\", \"value\": 1, \"spread\": "
		  "{\"samples\": [1, \"x\"]}}]}]}",
		  ": results[0] (a): figure bw: sample 2 is not a finite number" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\", \"case\": \"a\", "
		  "\"verdict\": \"PASS\", \"figures\": [{\"name\": \"bw\", \"value\": 1, \"spread\": 3}]}]}",
		  ": results[0] (a): figure bw: spread is not an object" },
		/* the head's faults come before a row's, as compare has always reported them */
		{ "{\"results\": [{\"id\": 1}], \"schema\": \"x\"}", ": unknown schema \"x\"" },
	};
	char err[600];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *path = tmp_write(bad[i].text), *want = xasprintf("%s%s", path, bad[i].want);
		struct rq_run_doc d;

		rq_run_doc_init(&d);
		ck_assert_int_eq(rq_run_doc_load(&d, path, err, sizeof(err)), -EINVAL);
		ck_assert_msg(!strncmp(err, want, strlen(want)), "case %zu: got \"%s\", want \"%s...\"", i, err, want);
		rq_run_doc_release(&d);
		unlink(path);
		free(path);
		free(want);
	}
	/* a file that is not there */
	struct rq_run_doc d;

	rq_run_doc_init(&d);
	ck_assert_int_eq(rq_run_doc_load(&d, "/nonexistent/results.json", err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "/nonexistent/results.json: No such file or directory");
	rq_run_doc_release(&d);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, ids);
	tcase_add_test(tc, finish_rules);
	tcase_add_test(tc, verdict_names);
	tcase_add_test(tc, counts);
	tcase_add_test(tc, json_round_trip);
	tcase_add_test(tc, json_garbage_rejected);
	tcase_add_test(tc, json_mutations);
	tcase_add_test(tc, run_doc_round_trip);
	tcase_add_test(tc, run_doc_spread);
	tcase_add_test(tc, run_doc_malformed);
}

RQ_CHECK_MAIN("result", add_tests)
