/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the reporters: a fixed set of rows, one per outcome,
 * rendered to junit.xml and results.json and compared with golden files in
 * tests/golden/ (fixed run id, times, hostname and paths, so nothing needs
 * normalising; RQ_UPDATE_GOLDEN=1 rewrites them).  junit.xml is checked by
 * xmllint for well-formedness and against tests/junit-10.xsd, including a
 * log full of control bytes and invalid UTF-8.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <jansson.h>
#include "report/html.h"
#include "report/report.h"
#include "report/html.h"
#include "xmllint.h"
#include "check_main.h"

static char srcdir[256];

static char *src_path(const char *rel)
{
	return xasprintf("%s/%s", srcdir, rel);
}

static struct rq_result *row(const char *file, const char *name, const char *dev, int port,
			     double dur)
{
	struct rq_result *r = rq_result_new(name, dev, port);

	r->file = file ? xstrdup(file) : NULL;
	r->kind = xstrdup("test");
	r->duration_s = dur;
	r->target = xstrdup("rxe-vm");
	r->target_why = xstrdup("auto: no RDMA PCI device");
	r->log_path = xasprintf("logs/%s.log", r->id);
	return r;
}

static void fixture(struct rq_run_info *ri, struct rq_results *rs)
{
	struct rq_result *r;

	memset(ri, 0, sizeof(*ri));
	ri->run_id = xstrdup("RUNID");
	ri->started = xstrdup("2026-01-01T00:00:00Z");
	ri->finished = xstrdup("2026-01-01T00:00:42Z");
	ri->hostname = xstrdup("HOST");
	ri->version = xstrdup("0.0-test");
	ri->argv = xstrdup("rdmaqual run cases/");
	ri->duration_s = 42;
	rq_run_info_fact(ri, "kernel", "6.1.0-test");
	rq_run_info_fact(ri, "rdma_core", "44.0");
	memset(rs, 0, sizeof(*rs));

	r = row("cases/mtu/roce.yaml", "mtu.roce", "rxe0", 1, 1.2345);
	rq_judge(r, true, "active_mtu 4096 == 4096");
	rq_figure_add(r, "active_mtu", 4096, "B");
	rq_fact_add(r, "netdev", "eth0");
	rq_result_finish(r);
	rq_results_add(rs, r);

	r = row("cases/bw/write.yaml", "bw.write", "mlx5_0", 1, 3.5);
	r->target = (free(r->target), xstrdup("hca"));
	r->target_why = (free(r->target_why), xstrdup("forced by --target"));
	rq_figure_add(r, "bw_avg", 10.25, "Gb/s");
	rq_judge(r, false, "bw_avg 10.25 Gb/s < 90 Gb/s (90%% of 100 Gb/s) & \"low\" <x>");
	rq_result_finish(r);
	rq_results_add(rs, r);

	r = row("cases/driver/basic.yaml", "driver.loaded", NULL, 0, 0.01);
	rq_result_set(r, RQ_SKIP, "unmet: needs root, module:rdma_rxe");
	rq_result_finish(r);
	rq_results_add(rs, r);

	r = row("cases/sm/bringup.yaml", "sm.bringup", NULL, 0, 30.0004);
	rq_result_set(r, RQ_ERROR, "opensm timed out after 30.0 s");
	sb_adds(&r->log, "opensm said: \x01\x02\x1b[31mred\x1b[0m \xff\xfe bad utf8 & <tag> ]]>\n");
	sb_add(&r->log, "nul:\0:end\n", 10);
	rq_result_finish(r);
	rq_results_add(rs, r);

	/* same file as the first row, later: grouped into its testsuite */
	r = row("cases/mtu/roce.yaml", "mtu.roce", "rxe0", 2, 0.5);
	rq_figure_add(r, "active_mtu", 1024, "B");
	rq_result_finish(r);	/* judged nothing: SKIP */
	rq_results_add(rs, r);

	/* a row with no case file (e.g. a harness-level error) */
	r = row(NULL, "run.setup", NULL, 0, 0);
	rq_result_set(r, RQ_ERROR, "lock held by pid 1");
	rq_result_finish(r);
	rq_results_add(rs, r);
}

static void check_golden(const char *rel, const char *got, size_t len)
{
	char *p = src_path(rel);
	struct sb want = SB_INIT;

	if (getenv("RQ_UPDATE_GOLDEN")) {
		ck_assert_int_eq(write_file_atomic(p, got, len), 0);
		fprintf(stderr, "updated %s\n", p);
	}
	ck_assert_msg(read_file(p, &want, 0) == 0, "cannot read %s", p);
	if (want.len != len || memcmp(want.buf, got, len)) {
		char *out = xasprintf("/tmp/rq-golden-%s", strrchr(rel, '/') + 1);
		write_file_atomic(out, got, len);
		ck_abort_msg("%s differs from the output (written to %s; "
			     "RQ_UPDATE_GOLDEN=1 to accept)", p, out);
	}
	sb_release(&want);
	free(p);
}

START_TEST(junit_golden_and_schema)
{
	struct rq_run_info ri;
	struct rq_results rs;
	struct sb out = SB_INIT;

	fixture(&ri, &rs);
	rq_junit_render(&out, &ri, &rs);
	check_golden("golden/junit.xml", out.buf, out.len);
	/* structure the golden file pins: one suite per file, first-seen order */
	ck_assert(strstr(out.buf, "<testsuite name=\"mtu.roce\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"1\""));
	ck_assert(strstr(out.buf, "<testsuite name=\"rdmaqual\" tests=\"1\""));
	ck_assert(strstr(out.buf, "name=\"mtu.roce[rxe0/1].active_mtu\" value=\"4096 B\""));
	ck_assert(strstr(out.buf, "<failure message=\"bw_avg 10.25 Gb/s &lt; 90 Gb/s (90% of 100 Gb/s) &amp; &quot;low&quot; &lt;x&gt;\" type=\"FAIL\"/>"));
	ck_assert(strstr(out.buf, "\\x01\\x02\\x1b[31mred"));

	char *xsd = src_path("junit-10.xsd");
	int ok = xmllint_check(out.buf, out.len, NULL);
	if (ok < 0) {
		fprintf(stderr, "xmllint not installed: schema checks skipped\n");
	} else {
		ck_assert_int_eq(ok, 1);
		ck_assert_int_eq(xmllint_check(out.buf, out.len, xsd), 1);
		/* the schema is strict: properties inside a testcase are refused */
		const char *bad = "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase name=\"c\">"
				  "<properties/></testcase></testsuite></testsuites>";
		ck_assert(xmllint_refuses(bad, strlen(bad), xsd));
		const char *badtime = "<testsuites><testsuite name=\"s\" tests=\"1\">"
				      "<testcase name=\"c\" time=\"1.23456\"/></testsuite></testsuites>";
		ck_assert(xmllint_refuses(badtime, strlen(badtime), xsd));
	}
	free(xsd);
	sb_release(&out);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

START_TEST(junit_hostile_log_bounded)
{
	struct rq_run_info ri;
	struct rq_results rs;
	struct sb out = SB_INIT;
	struct rq_result *r;

	fixture(&ri, &rs);
	r = row("cases/x/y.yaml", "x.hostile", NULL, 0, 1);
	rq_result_set(r, RQ_FAIL, "reason with \x01 and \xc3 and \xef\xbf\xbf");
	rq_fact_add(r, "fw\x02", "v\x7f\xff");
	/* 1 MiB of every byte value, plus a split multibyte char at the cut */
	for (int k = 0; k < 4096; k++)
		for (int b = 0; b < 256; b++)
			sb_addc(&r->log, (char)b);
	sb_adds(&r->log, "\xe2\x82\xac END-OF-LOG\n");
	rq_results_add(&rs, r);
	rq_junit_render(&out, &ri, &rs);
	ck_assert(strstr(out.buf, "bytes omitted"));
	ck_assert(strstr(out.buf, "END-OF-LOG"));
	/* 64 KiB of log, each byte escaped to at most 4 */
	ck_assert_uint_lt(out.len, 4 * RQ_JUNIT_LOG_TAIL + 16384);
	int ok = xmllint_check(out.buf, out.len, NULL);
	if (ok >= 0) {
		char *xsd = src_path("junit-10.xsd");
		ck_assert_int_eq(ok, 1);
		ck_assert_int_eq(xmllint_check(out.buf, out.len, xsd), 1);
		free(xsd);
	}
	sb_release(&out);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

START_TEST(json_golden_and_parse)
{
	struct rq_run_info ri;
	struct rq_results rs;
	char err[256];

	fixture(&ri, &rs);
	char *text = rq_json_render(&ri, &rs);
	check_golden("golden/results.json", text, strlen(text));

	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	ck_assert_msg(j, "%s", je.text);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), "rdmaqual-results/1");
	json_t *run = json_object_get(j, "run");
	ck_assert(json_is_true(json_object_get(run, "complete")));
	ck_assert_str_eq(json_string_value(json_object_get(run, "hostname")), "HOST");
	json_t *counts = json_object_get(j, "counts");
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "total")), 6);
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "pass")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "fail")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "skip")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(counts, "error")), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "facts"), "kernel")),
			 "6.1.0-test");
	json_t *rows = json_object_get(j, "results");
	ck_assert_uint_eq(json_array_size(rows), rs.n);
	for (size_t i = 0; i < rs.n; i++) {
		struct rq_result *b = rq_result_from_json(json_array_get(rows, i), err, sizeof(err));
		ck_assert_msg(b, "%s", err);
		ck_assert_str_eq(b->id, rs.v[i]->id);
		ck_assert_int_eq(b->verdict, rs.v[i]->verdict);
		ck_assert_str_eq(b->log_path, rs.v[i]->log_path);
		ck_assert_uint_eq(b->nfigs, rs.v[i]->nfigs);
		ck_assert_uint_eq(b->log.len, 0);	/* logs stay in their files */
		rq_result_free(b);
	}
	json_decref(j);
	free(text);

	/* an unfinished run says so */
	free(ri.finished);
	ri.finished = NULL;
	text = rq_json_render(&ri, &rs);
	j = json_loads(text, 0, NULL);
	ck_assert(json_is_false(json_object_get(json_object_get(j, "run"), "complete")));
	ck_assert(json_is_null(json_object_get(json_object_get(j, "run"), "finished")));
	json_decref(j);
	free(text);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

START_TEST(write_both_atomically)
{
	struct rq_run_info ri;
	struct rq_results rs;
	char dir[] = "/tmp/rq-report-XXXXXX";
	struct sb got = SB_INIT, want = SB_INIT;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	fixture(&ri, &rs);
	char *sub = xasprintf("%s/reports/run1", dir);
	ck_assert_int_eq(rq_reports_write(sub, &ri, &rs), 0);
	char *p = xasprintf("%s/junit.xml", sub);
	ck_assert_int_eq(read_file(p, &got, 0), 0);
	rq_junit_render(&want, &ri, &rs);
	ck_assert_uint_eq(got.len, want.len);
	ck_assert(!memcmp(got.buf, want.buf, got.len));
	free(p);
	p = xasprintf("%s/results.json", sub);
	sb_reset(&got);
	ck_assert_int_eq(read_file(p, &got, 0), 0);
	char *js = rq_json_render(&ri, &rs);
	ck_assert_str_eq(got.buf, js);
	free(js);
	free(p);
	/* rewriting after another row leaves exactly the four files (trend.json: the index later pages read) */
	rq_results_add(&rs, row("cases/a/b.yaml", "a.b", NULL, 0, 1));
	rs.v[rs.n - 1]->verdict = RQ_PASS;
	ck_assert_int_eq(rq_reports_write(sub, &ri, &rs), 0);
	const char *ls[] = { "ls", "-A", sub, NULL };
	struct proc_opts o = { .argv = ls, .timeout_ms = scaled_ms(10000), .log_fd = -1 };
	struct proc_result pr;
	proc_result_init(&pr);
	ck_assert_int_eq(proc_run(&o, &pr), 0);
	ck_assert_str_eq(pr.out.buf, "junit.xml\nreport.html\nresults.json\ntrend.json\n");
	proc_result_release(&pr);
	/* an unwritable place is an error, not a crash */
	ck_assert_int_lt(rq_reports_write("/proc/rq-no-such/dir", &ri, &rs), 0);
	free(sub);
	sb_release(&got);
	sb_release(&want);
	rm_rf(dir);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

START_TEST(console_lines)
{
	struct rq_run_info ri;
	struct rq_results rs;
	struct sb out = SB_INIT;

	fixture(&ri, &rs);
	rq_console_render_row(&out, rs.v[0], false);
	ck_assert_str_eq(out.buf, "PASS  mtu.roce[rxe0/1]                      1.2s\n");
	sb_reset(&out);
	rq_console_render_row(&out, rs.v[2], false);
	ck_assert_str_eq(out.buf, "SKIP  driver.loaded                         0.0s  unmet: needs root, module:rdma_rxe\n");
	sb_reset(&out);
	rq_console_render_row(&out, rs.v[3], false);
	ck_assert_str_eq(out.buf, "ERROR sm.bringup                            30.0s  opensm timed out after 30.0 s\n");
	sb_reset(&out);
	/* control characters never reach the terminal */
	free(rs.v[1]->reason);
	rs.v[1]->reason = xstrdup("evil \x1b]0;title\x07 end");
	rq_console_render_row(&out, rs.v[1], false);
	ck_assert_ptr_null(strchr(out.buf, '\x1b'));
	ck_assert(strstr(out.buf, "evil ?]0;title? end"));
	sb_reset(&out);
	rq_console_render_row(&out, rs.v[1], true);
	ck_assert(str_starts(out.buf, "\033[1;31mFAIL \033[0m bw.write"));
	sb_reset(&out);
	rq_console_render_summary(&out, &ri, &rs, false);
	ck_assert_str_eq(out.buf, "6 rows: 1 passed, 1 failed, 2 skipped, 2 errors in 42.0s\n");
	sb_reset(&out);

	/* colour: never on a pipe, never with NO_COLOR */
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert(!rq_console_color(p[1]));
	close(p[0]);
	close(p[1]);
	int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (tty >= 0) {
		setenv("NO_COLOR", "1", 1);
		ck_assert(!rq_console_color(tty));
		unsetenv("NO_COLOR");
		close(tty);
	}
	sb_release(&out);
	rq_results_release(&rs);
	rq_run_info_release(&ri);
}
END_TEST

START_TEST(run_info)
{
	struct rq_run_info ri;
	char *argv[] = { "rdmaqual", "run", "--tag", "smoke", NULL };

	rq_run_info_init(&ri, "1.2.3", 4, argv);
	ck_assert_str_eq(ri.argv, "rdmaqual run --tag smoke");
	ck_assert_str_eq(ri.version, "1.2.3");
	ck_assert_uint_eq(strlen(ri.started), 20);
	ck_assert(strchr(ri.run_id, '-'));
	ck_assert_ptr_null(ri.finished);
	ck_assert(ri.hostname[0]);
	rq_run_info_fact(&ri, "kernel", "a");
	rq_run_info_fact(&ri, "kernel", "b");
	ck_assert_uint_eq(ri.nfacts, 1);
	ck_assert_str_eq(ri.facts[0].value, "b");
	rq_run_info_finish(&ri);
	ck_assert_ptr_nonnull(ri.finished);
	ck_assert(ri.duration_s >= 0);
	rq_run_info_release(&ri);
}
END_TEST

/* Every file in dir, read whole, for comparing two report dirs. */
static void read_report(const char *dir, const char *name, struct sb *out)
{
	char *p = xasprintf("%s/%s", dir, name);

	sb_reset(out);
	ck_assert_msg(read_file(p, out, 0) == 0, "cannot read %s", p);
	free(p);
}

/*
 * A lab run's rows leave memory for the spool (core/spool.c): the binary
 * form keeps every field bit for bit (NULLs, NUL and non-UTF-8 bytes in a
 * log, a NaN, doubles that 10 digits would round), and junit.xml,
 * results.json and report.html drawn from a spool are byte for byte those
 * drawn from memory.  Lab-shaped rows too: node suites, a pairs suite.
 */
START_TEST(spooled_rows_same_reports)
{
	struct rq_run_info ri;
	struct rq_results mem, sp = { 0 };
	char dir[] = "/tmp/rq-spool-XXXXXX";
	struct sb a = SB_INIT, b = SB_INIT, packed = SB_INIT;
	const char *const files[] = { "junit.xml", "results.json", "report.html" };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	fixture(&ri, &mem);
	for (int k = 0; k < 40; k++) {
		struct rq_result *r = row(NULL, "lab.node", k % 2 ? "mlx5_0" : NULL, k % 3, 0.1 * k);

		r->node = xasprintf("n%02d", k % 7);
		if (k % 5 == 0)
			r->peer_node = xasprintf("n%02d", (k + 1) % 7);
		if (k % 6 == 1)
			r->judge = xstrdup("lat_*");
		r->repeat = (unsigned)(k % 4);
		rq_figure_add(r, "bw_avg", 97.123456789012345 + k, "Gb/s");
		rq_figure_add(r, "lat_p99", k == 3 ? NAN : 1.0 / 3.0, "us");
		rq_fact_add(r, "node.hostname", "clone");
		rq_judge(r, k % 4 != 0, "judged %d", k);
		rq_result_finish(r);
		rq_results_add(&mem, r);
	}
	/* one row through the binary form and back is the same row */
	for (size_t i = 0; i < mem.n; i++) {
		struct rq_result *back;
		struct sb again = SB_INIT;

		sb_reset(&packed);
		rq_result_pack(mem.v[i], &packed);
		back = rq_result_unpack(packed.buf, packed.len);
		ck_assert_ptr_nonnull(back);
		rq_result_pack(back, &again);
		ck_assert_uint_eq(again.len, packed.len);
		ck_assert(!memcmp(again.buf, packed.buf, packed.len));
		ck_assert_uint_eq(back->log.len, mem.v[i]->log.len);
		ck_assert(!memcmp(back->log.buf, mem.v[i]->log.buf, back->log.len));
		ck_assert(mem.v[i]->judge ? back->judge && !strcmp(back->judge, mem.v[i]->judge) : !back->judge);
		ck_assert_uint_eq(back->repeat, mem.v[i]->repeat);
		sb_release(&again);
		rq_result_free(back);
	}
	/* a cut record is refused, not read past its end */
	ck_assert_ptr_null(rq_result_unpack(packed.buf, packed.len - 1));

	/* enough rows for a page over 1 MiB: it is written in pieces as it is drawn */
	for (int k = 0; k < 6000; k++) {
		struct rq_result *r = row(NULL, "lab.many", "mlx5_1", 1, 0.25);

		r->node = xasprintf("m%04d", k);
		rq_figure_add(r, "bw_avg", 100 + k, "Gb/s");
		rq_judge(r, true, "ok");
		rq_result_finish(r);
		rq_results_add(&mem, r);
	}
	/* the same rows, spilled in three goes, the last few still in memory */
	ck_assert_int_eq(rq_results_spool(&sp, dir), 0);
	for (size_t i = 0; i < mem.n; i++) {
		sb_reset(&packed);
		rq_result_pack(mem.v[i], &packed);
		rq_results_add(&sp, rq_result_unpack(packed.buf, packed.len));
		if (i == 3 || i == 20 || i + 5 == mem.n)
			rq_results_spill(&sp);
	}
	ck_assert_uint_eq(sp.n, 4);
	ck_assert_uint_gt(mem.n, 6000);
	ck_assert_uint_eq(rq_results_total(&sp), mem.n);
	struct rq_counts cm, cs;

	rq_results_count(&mem, &cm);
	rq_results_count(&sp, &cs);
	ck_assert(!memcmp(&cm, &cs, sizeof(cm)));
	char *dm = xasprintf("%s/mem", dir), *ds = xasprintf("%s/spool", dir);

	ck_assert_int_eq(rq_reports_write(dm, &ri, &mem), 0);
	ck_assert_int_eq(rq_reports_write(ds, &ri, &sp), 0);
	for (size_t f = 0; f < 3; f++) {
		read_report(dm, files[f], &a);
		read_report(ds, files[f], &b);
		ck_assert_msg(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
			      "%s differs between rows in memory and spooled", files[f]);
	}
	/* the strings agree with the files written in pieces */
	char *js = rq_json_render(&ri, &sp);

	read_report(dm, "results.json", &a);
	ck_assert_str_eq(js, a.buf);
	free(js);
	json_t *head = rq_json_head(&ri, &sp);
	char *ht = json_dumps(head, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_t *hd = json_loads(ht, 0, NULL);

	sb_reset(&b);
	rq_html_run_rows(&b, hd, &sp, ds, NULL);
	read_report(ds, "report.html", &a);
	ck_assert_uint_gt(a.len, 1u << 20);
	ck_assert_msg(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
		      "report.html written in pieces differs from the page drawn whole");
	json_decref(head);
	json_decref(hd);
	free(ht);
	/* and the spool's file is not in the dir: it was unlinked when made */
	const char *ls[] = { "ls", "-A", dir, NULL };
	struct proc_opts o = { .argv = ls, .timeout_ms = scaled_ms(10000), .log_fd = -1 };
	struct proc_result pr;

	proc_result_init(&pr);
	ck_assert_int_eq(proc_run(&o, &pr), 0);
	ck_assert_str_eq(pr.out.buf, "mem\nspool\n");
	proc_result_release(&pr);
	free(dm);
	free(ds);
	sb_release(&a);
	sb_release(&b);
	sb_release(&packed);
	rm_rf(dir);
	rq_results_release(&mem);
	rq_results_release(&sp);
	rq_run_info_release(&ri);
}
END_TEST

/*
 * A replay of a synthesized tree says so in every report; a captured one
 * in none (the fact sysroot.origin the sysroot target records).
 */
START_TEST(synthesized_in_every_report)
{
	for (int synth = 0; synth < 2; synth++) {
		struct rq_run_info ri;
		struct rq_results rs;
		struct sb out = SB_INIT;

		fixture(&ri, &rs);
		rq_run_info_fact(&ri, "sysroot", "fixtures/nodes/cx5-edr-ib");
		rq_run_info_fact(&ri, "sysroot.origin", synth ? "synthesized" : "captured");
		if (synth)	/* manifest text is shared data: printed inert, escaped */
			rq_run_info_fact(&ri, "sysroot.synthesized_by", "mkfixtures.py <b>\033]0;x\007");
		ck_assert(rq_run_info_synthesized(&ri) == (synth == 1));

		char *text = rq_json_render(&ri, &rs);
		json_t *doc = json_loads(text, 0, NULL);

		ck_assert_ptr_nonnull(doc);
		ck_assert(json_is_boolean(json_object_get(json_object_get(doc, "run"), "synthesized")));
		ck_assert(json_is_true(json_object_get(json_object_get(doc, "run"), "synthesized")) == (synth == 1));

		rq_junit_render(&out, &ri, &rs);
		ck_assert((strstr(out.buf, "<property name=\"synthesized\" value=\"true\"/>") != NULL) == (synth == 1));
		sb_reset(&out);

		rq_html_run(&out, doc, "/nonexistent", NULL);
		ck_assert((strstr(out.buf, "<p id=\"synthesized\"") != NULL) == (synth == 1));
		if (synth) {
			ck_assert_ptr_nonnull(strstr(out.buf, "Synthesized node tree."));
			ck_assert_ptr_nonnull(strstr(out.buf, "mkfixtures.py &lt;b&gt;"));
			ck_assert_ptr_null(strchr(out.buf, '\033'));
		}
		sb_reset(&out);

		rq_console_render_summary(&out, &ri, &rs, false);
		if (synth) {
			ck_assert_str_eq(out.buf, "6 rows: 1 passed, 1 failed, 2 skipped, 2 errors in 42.0s\n"
				"note: replayed fixtures/nodes/cx5-edr-ib, a synthesized node tree (made by "
				"mkfixtures.py <b>?]0;x?), not a capture of a machine\n");
		} else {
			ck_assert_str_eq(out.buf, "6 rows: 1 passed, 1 failed, 2 skipped, 2 errors in 42.0s\n");
		}
		json_decref(doc);
		free(text);
		sb_release(&out);
		rq_results_release(&rs);
		rq_run_info_release(&ri);
	}
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	/* golden files and the XSD live beside this source file */
	snprintf(srcdir, sizeof(srcdir), "%s", __FILE__);
	char *slash = strrchr(srcdir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(srcdir, ".");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, junit_golden_and_schema);
	tcase_add_test(tc, junit_hostile_log_bounded);
	tcase_add_test(tc, json_golden_and_parse);
	tcase_add_test(tc, write_both_atomically);
	tcase_add_test(tc, spooled_rows_same_reports);
	tcase_add_test(tc, console_lines);
	tcase_add_test(tc, run_info);
	tcase_add_test(tc, synthesized_in_every_report);
}

RQ_CHECK_MAIN("report", add_tests)
