/* SPDX-License-Identifier: MIT */
/*
 * Per-test results: the TAP, JUnit and unittest parsers against the
 * outputs real tools wrote (fixtures/tool-output/testresults, captured by
 * its capture.sh: unittest -v, pytest --junitxml, ctest --output-junit,
 * Test::More; the kselftest runner's layout synthesized), malformed
 * input refused at its line, and the import into rows: verdicts, the
 * judgement of the whole, and 100,000 results kept to a bounded report.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/util.h"
#include "kinds/app_results.h"
#include "parsers/parse_testresults.h"
#include "check_main.h"

#define FIX "fixtures/tool-output/testresults/"

static void fixture(const char *name, struct sb *s)
{
	char path[256];

	snprintf(path, sizeof(path), FIX "%s", name);
	sb_reset(s);
	ck_assert_msg(read_file(path, s, 0) >= 0, "cannot read %s", path);
}

static const struct tr_test *find(const struct tr_report *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	ck_abort_msg("no test \"%s\"", name);
	return NULL;
}

static void expect(const struct tr_report *r, const char *name, enum tr_verdict v, const char *msg)
{
	const struct tr_test *t = find(r, name);

	ck_assert_msg(t->v == v, "%s: %s, expected %s", name, tr_verdict_name(t->v), tr_verdict_name(v));
	if (msg)
		ck_assert_str_eq(t->msg, msg);
	else
		ck_assert_ptr_null(t->msg);
}

START_TEST(unittest_real_mixed)
{
	struct sb s = SB_INIT;
	struct tr_report r;
	char err[256] = "";

	fixture("unittest-v-mixed.txt", &s);
	ck_assert_msg(unittest_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 8);
	ck_assert_int_eq(r.planned, 7);
	ck_assert_str_eq(r.summary, "FAILED (failures=1, errors=2, skipped=2, expected failures=1)");
	/* a docstring line between the name and the verdict */
	expect(&r, "test_sample.Basic.test_docstring", TR_SKIP, "no atomic write on this kernel");
	expect(&r, "test_sample.Basic.test_error", TR_ERROR, "RuntimeError: device rxe0 vanished");
	expect(&r, "test_sample.Basic.test_fail", TR_FAIL, "AssertionError: 1 != 2");
	expect(&r, "test_sample.Basic.test_pass", TR_PASS, NULL);
	/* the test printed between "..." and its verdict */
	expect(&r, "test_sample.Basic.test_prints", TR_PASS, NULL);
	expect(&r, "test_sample.Basic.test_skip", TR_SKIP, "needs a ConnectX");
	expect(&r, "test_sample.Basic.test_xfail", TR_PASS, "expected failure");
	/* a setUpClass failure is in the details only */
	expect(&r, "test_sample.BrokenSetup.setUpClass", TR_ERROR, "OSError: cannot open rxe0");
	ck_assert_uint_eq(r.count[TR_PASS], 3);
	ck_assert_uint_eq(r.count[TR_FAIL], 1);
	ck_assert_uint_eq(r.count[TR_ERROR], 2);
	ck_assert_uint_eq(r.count[TR_SKIP], 2);
	/* unittest -v prints no times */
	ck_assert(find(&r, "test_sample.Basic.test_pass")->time_s < 0);
	tr_report_release(&r);
	sb_release(&s);
}
END_TEST

START_TEST(unittest_real_allskip_and_old_names)
{
	struct sb s = SB_INIT;
	struct tr_report r;
	char err[256] = "";
	/* Python before 3.11 names only the class in the parentheses */
	const char *old = "test_a (tests.test_qp.QPTest) ... ok\n"
			  "test_b (tests.test_qp.QPTest) ... skipped 'no rdma_cm'\n\n"
			  "----------------------------------------------------------------------\n"
			  "Ran 2 tests in 0.1s\n\nOK (skipped=1)\n";

	fixture("unittest-v-allskip.txt", &s);
	ck_assert_msg(unittest_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.count[TR_SKIP], 2);
	ck_assert_str_eq(r.summary, "OK (skipped=2)");
	expect(&r, "test_allskip.AllSkip.test_a", TR_SKIP, "No devices with rdma_cm");
	tr_report_release(&r);
	ck_assert_int_eq(unittest_parse(old, strlen(old), &r, err, sizeof(err)), 0);
	expect(&r, "tests.test_qp.QPTest.test_a", TR_PASS, NULL);
	tr_report_release(&r);
	/* assertEqual of strings prints a diff after the exception line */
	const char *diff = "test_n (t.G.test_n) ... FAIL\n\n"
			   "======================================================================\n"
			   "FAIL: test_n (t.G.test_n)\n"
			   "----------------------------------------------------------------------\n"
			   "Traceback (most recent call last):\n"
			   "  File \"/x/t.py\", line 9, in test_n\n"
			   "    self.assertEqual(os.uname().nodename, \"not-this-guest\")\n"
			   "AssertionError: 'vm0' != 'not-this-guest'\n- vm0\n+ not-this-guest\n\n\n"
			   "----------------------------------------------------------------------\n"
			   "Ran 1 test in 0.001s\n\nFAILED (failures=1)\n";

	ck_assert_int_eq(unittest_parse(diff, strlen(diff), &r, err, sizeof(err)), 0);
	expect(&r, "t.G.test_n", TR_FAIL, "AssertionError: 'vm0' != 'not-this-guest'");
	tr_report_release(&r);
	ck_assert_int_eq(unittest_parse(old, strlen(old), &r, err, sizeof(err)), 0);
	expect(&r, "tests.test_qp.QPTest.test_a", TR_PASS, NULL);
	expect(&r, "tests.test_qp.QPTest.test_b", TR_SKIP, "no rdma_cm");
	tr_report_release(&r);
	sb_release(&s);
}
END_TEST

START_TEST(junit_real_pytest_ctest)
{
	struct sb s = SB_INIT;
	struct tr_report r;
	char err[256] = "";

	fixture("pytest-junit.xml", &s);
	ck_assert_msg(junit_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 7);
	expect(&r, "test_pt.test_ok", TR_PASS, NULL);
	ck_assert(fabs(find(&r, "test_pt.test_ok")->time_s - 0.001) < 1e-9);
	/* the message attribute's first line; &#10; is a newline */
	expect(&r, "test_pt.test_bad", TR_FAIL, "assert [1, 2] == [1, 3]");
	expect(&r, "test_pt.test_skipped", TR_SKIP, "no RDMA device");
	expect(&r, "test_pt.test_xfail", TR_SKIP, "rxe lacks XRC");
	expect(&r, "test_pt.test_error", TR_ERROR, "failed on setup with \"RuntimeError: fixture failed\"");
	expect(&r, "test_pt.TestGroup.test_sizes[64]", TR_PASS, NULL);
	expect(&r, "test_pt.TestGroup.test_sizes[4096]", TR_FAIL, "assert 4096 < 1000");
	tr_report_release(&r);

	fixture("ctest-junit.xml", &s);
	ck_assert_msg(junit_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 4);
	/* ctest repeats the name as the classname: not "passes.passes" */
	expect(&r, "passes", TR_PASS, NULL);
	expect(&r, "fails", TR_FAIL, NULL);
	expect(&r, "skips", TR_SKIP, "SKIP_RETURN_CODE=77");
	expect(&r, "disabled", TR_SKIP, "disabled");
	tr_report_release(&r);
	sb_release(&s);
}
END_TEST

START_TEST(tap_real_test_more_and_kselftest)
{
	struct sb s = SB_INIT;
	struct tr_report r;
	char err[256] = "";

	fixture("tap-test-more.txt", &s);
	ck_assert_msg(tap_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.planned, 6);
	ck_assert_uint_eq(r.ntop, 6);
	ck_assert_uint_eq(r.n, 8);
	expect(&r, "opens the device", TR_PASS, NULL);
	/* Test::More's diagnostics follow the failure */
	expect(&r, "queries the port", TR_FAIL, "Failed test 'queries the port'; at t.t line 5.");
	expect(&r, "test 3", TR_SKIP, "skip no IB link layer");
	/* a TODO failure is not a failure */
	expect(&r, "opens an XRC domain", TR_SKIP, "TODO rxe has no XRC");
	/* a subtest, indented four spaces before its parent's line */
	expect(&r, "memory registration/registers 4 KiB", TR_PASS, NULL);
	expect(&r, "memory registration/registers 1 GiB", TR_FAIL,
	       "Failed test 'registers 1 GiB'; at t.t line 17.");
	expect(&r, "memory registration", TR_FAIL, "Failed test 'memory registration'; at t.t line 18.");
	tr_report_release(&r);

	fixture("tap-kselftest-runner.txt", &s);
	ck_assert_msg(tap_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.planned, 3);
	ck_assert_uint_eq(r.ntop, 3);
	ck_assert_uint_eq(r.n, 5);
	/* KTAP nested under "# ", its output before the result line */
	expect(&r, "selftests: rdma: rxe_rping/rping loopback", TR_PASS, NULL);
	expect(&r, "selftests: rdma: rxe_rping/rping over eth0", TR_FAIL, "rping: server did not answer");
	expect(&r, "selftests: rdma: rxe_rping", TR_FAIL, "exit=1");
	expect(&r, "selftests: rdma: rxe_ipv6", TR_SKIP, "SKIP: no IPv6 address on eth0");
	expect(&r, "selftests: rdma: rxe_create", TR_PASS, NULL);
	tr_report_release(&r);
	sb_release(&s);
}
END_TEST

START_TEST(tap_forms)
{
	struct tr_report r;
	char err[256] = "";
	const char *t = "TAP version 14\n1..4\nok 1 - a\n  ---\n  duration_ms: 12.5\n  ...\n"
			"not ok 2 b # TIMEOUT 45 seconds\nok 3 c # XFAIL known\nok\n"
			"okay this is text\nBail out! lost the device\n";

	ck_assert_msg(tap_parse(t, strlen(t), &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 4);
	ck_assert(fabs(find(&r, "a")->time_s - 0.0125) < 1e-9);
	expect(&r, "b", TR_FAIL, "TIMEOUT 45 seconds");
	expect(&r, "c", TR_PASS, "XFAIL known");
	ck_assert_uint_eq(find(&r, "test at line 9")->line, 9);
	ck_assert(r.bailed);
	ck_assert_str_eq(r.bail, "lost the device");
	tr_report_release(&r);
}
END_TEST

/*
 * blktests' ./check as it prints without a terminal (synthesized after its
 * _output_status(): the name, the description, padding, the status; the
 * indented lines under it): the last run's line without a status first,
 * a device test, a group whose prepare() refused, a diff under a failure.
 */
/*
 * Real ./check output (blktests of 2026-11, NVMET_TRTYPES=rdma USE_RXE=1 in
 * an rxe-vm guest, 6.1 kernel): a test run once per condition names it
 * before its description, each of its runs is a row of its own; the
 * status-less lines carry padding.
 */
START_TEST(blktests_conditions)
{
	struct tr_report r;
	char err[256] = "";
	const char *t =
		"./check: gawk is not available. Install GNU awk.\n"
		"nvme/003 (tr=rdma) (test if we're sending keep-alives to a discovery controller)\n"
		"nvme/003 (tr=rdma) (test if we're sending keep-alives to a discovery controller) [passed]\n"
		"    runtime    ...  20.123s\n"
		"nvme/006 (tr=rdma bd=device) (create an NVMeOF target)      \n"
		"nvme/006 (tr=rdma bd=device) (create an NVMeOF target)       [passed]\n"
		"    runtime    ...  8.676s\n"
		"nvme/006 (tr=rdma bd=file) (create an NVMeOF target)        \n"
		"nvme/006 (tr=rdma bd=file) (create an NVMeOF target)         [passed]\n"
		"    runtime    ...  4.481s\n"
		"nvme/048 (tr=rdma) (Test queue count changes on reconnect)  \n"
		"nvme/048 (tr=rdma) (Test queue count changes on reconnect)   [not run]\n"
		"    minimum 2 cpus required\n"
		"nvme/048 (tr=rdma) (Test queue count changes on reconnect)   [failed]\n"
		"    runtime    ...  23.655s\n"
		"    --- tests/nvme/048.out\t2026-12-02 15:03:11.424166224 +0000\n"
		"    +++ /scratch/blktests-results/nodev_tr_rdma/nvme/048.out.bad\t2026-12-02 15:37:08.008929794 +0000\n"
		"    @@ -1,3 +1,5 @@\n"
		"     Running nvme/048\n"
		"    +expected queue count 2 not set\n"
		"    +FAIL\n"
		/* a description in parentheses that is not a condition stays out of the name */
		"nvme/999 (a (nested) note) (more)                            [passed]\n"
		/* " (" right before the status: nothing after it to read */
		"nvme/998 ([passed]\n";

	ck_assert_msg(blktests_parse(t, strlen(t), &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 7);
	ck_assert(fabs(find(&r, "nvme/003 (tr=rdma)")->time_s - 20.123) < 1e-9);
	ck_assert(fabs(find(&r, "nvme/006 (tr=rdma bd=device)")->time_s - 8.676) < 1e-9);
	ck_assert(fabs(find(&r, "nvme/006 (tr=rdma bd=file)")->time_s - 4.481) < 1e-9);
	expect(&r, "nvme/048 (tr=rdma)", TR_SKIP, "minimum 2 cpus required");
	ck_assert_ptr_nonnull(find(&r, "nvme/999"));
	ck_assert_ptr_nonnull(find(&r, "nvme/998"));
	ck_assert_uint_eq(r.count[TR_PASS], 5);
	ck_assert_uint_eq(r.count[TR_FAIL], 1);
	ck_assert_uint_eq(r.count[TR_SKIP], 1);
	/* ./check's own warning is outside any test; the status-less lines are not */
	ck_assert_uint_eq(r.outside, 1);
	ck_assert_str_eq(r.outside_first, "./check: gawk is not available. Install GNU awk.");
	tr_report_release(&r);
}
END_TEST

/*
 * Real ./check output (the same blktests, the 6.12 guest, whose release is
 * "6.12.95+deb12-amd64"): nvme/047's requires() calls _have_kver, whose
 * sed leaves "95deb12" for bash's integer read; the error kills the test's
 * subshell before it prints a line, so nvme/047 is in no row and ./check
 * exits 1 with no test failed.  Its stderr comes after the stdout here,
 * as the command kind hands both over.
 */
START_TEST(blktests_test_died)
{
	struct tr_report r;
	char err[256] = "";
	const char *t =
		"nvme/045 (tr=rdma) (Test re-authentication)                 \n"
		"nvme/045 (tr=rdma) (Test re-authentication)                  [passed]\n"
		"    runtime    ...  10.360s\n"
		"nvme/048 (tr=rdma) (Test queue count changes on reconnect)  \n"
		"nvme/048 (tr=rdma) (Test queue count changes on reconnect)   [passed]\n"
		"    runtime    ...  10.175s\n"
		"srp/***                                                      [not run]\n"
		"    module scsi_debug is not available\n"
		"\n"
		"common/rc: line 235: read: 95deb12: value too great for base (error token is "
		"\"95deb12\")\n";

	ck_assert_msg(blktests_parse(t, strlen(t), &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.count[TR_FAIL], 0);
	ck_assert_uint_eq(r.outside, 1);
	ck_assert_str_eq(r.outside_first, "common/rc: line 235: read: 95deb12: value too great for "
			 "base (error token is \"95deb12\")");
	tr_report_release(&r);
	ck_assert_ptr_null(r.outside_first);

	/* ./check nvme/047 alone: its only line is the error, which the parse error names */
	t = "common/rc: line 235: read: 95deb12: value too great for base (error token is "
	    "\"95deb12\")\n";
	ck_assert_int_eq(blktests_parse(t, strlen(t), &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "expected blktests ./check output: no \"GROUP/NNN (...) [passed|failed|"
			 "not run]\" line (the first line: \"common/rc: line 235: read: 95deb12: value "
			 "too great for base (error token is \"95deb12\")\")");
	ck_assert_ptr_null(r.outside_first);
}
END_TEST

START_TEST(blktests_check_output)
{
	struct tr_report r;
	char err[256] = "";
	const char *t =
		"nvme/002 (create many subsystems and test discovery)         [not run]\n"
		"    nvme_trtype=rdma is not supported in this test\n"
		"nvme/003 (test if we're sending keep-alives to a discovery controller)\n"
		"    runtime  10.115s  ...\n"
		"nvme/003 (test if we're sending keep-alives to a discovery controller) [passed]\n"
		"    runtime  10.115s  ...  10.117s\n"
		"nvme/004 (test nvme and nvmet UUID NS descriptors)           [failed]\n"
		"    runtime  1.500s  ...  1.612s\n"
		"    --- tests/nvme/004.out\n"
		"    +udevadm settle: Running in chroot, ignoring request.\n"
		"nvme/012 => nvme0n1 (run mkfs and data verification fio job) [passed]\n"
		"    runtime    ...  30.1s\n"
		"srp/***                                                      [not run]\n"
		"    module scsi_debug is not available\n"
		"    and a second reason\n";

	ck_assert_msg(blktests_parse(t, strlen(t), &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.n, 5);	/* the status-less line is the last run's, not a test */
	ck_assert_uint_eq(r.count[TR_PASS], 2);
	ck_assert_uint_eq(r.count[TR_FAIL], 1);
	ck_assert_uint_eq(r.count[TR_SKIP], 2);
	expect(&r, "nvme/002", TR_SKIP, "nvme_trtype=rdma is not supported in this test");
	ck_assert(fabs(find(&r, "nvme/003")->time_s - 10.117) < 1e-9);
	ck_assert_ptr_null(find(&r, "nvme/003")->msg);
	expect(&r, "nvme/004", TR_FAIL, "--- tests/nvme/004.out; +udevadm settle: Running in chroot, "
	       "ignoring request.");
	ck_assert(fabs(find(&r, "nvme/012 => nvme0n1")->time_s - 30.1) < 1e-9);
	expect(&r, "srp/***", TR_SKIP, "module scsi_debug is not available; and a second reason");
	tr_report_release(&r);
	ck_assert_int_eq(blktests_parse("TAP version 13\nok 1 x\n", 21, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "expected blktests ./check output: no \"GROUP/NNN (...) [passed|failed|not "
			 "run]\" line (the first line: \"TAP version 13\")");
}
END_TEST

START_TEST(malformed_refused_at_line)
{
	struct tr_report r;
	char err[256];
	static const struct { enum tr_format f; const char *text; const char *err; } bad[] = {
		{ TR_TAP, "", "line 1: expected TAP: no \"ok\"/\"not ok\" line and no 1..N plan" },
		{ TR_TAP, "hello\nworld\n", "line 2: expected TAP: no \"ok\"/\"not ok\" line and no 1..N plan" },
		{ TR_TAP, "ok 1\n1..x\n", "line 2: a TAP plan is 1..N, not \"1..x\"" },
		{ TR_UNITTEST, "\nRan 3 tests in 0.1s\n\nOK\n",
		  "line 2: \"Ran 3 tests\" without a line per test: run unittest with -v" },
		{ TR_UNITTEST, "Traceback (most recent call last):\n  x\n",
		  "line 2: expected unittest -v output: no \"test (module.Class) ... ok\" line and no \"Ran N tests\"" },
		{ TR_JUNIT, "", "line 1: expected JUnit XML (<testsuites> or <testsuite>): no element" },
		{ TR_JUNIT, "<?xml version=\"1.0\"?>\n<html>\n</html>\n",
		  "line 2: expected JUnit XML (<testsuites> or <testsuite>), found <html>" },
		{ TR_JUNIT, "<testsuite>\n<testcase name=\"a\">\n</testsuite>\n",
		  "line 3: </testsuite> where </testcase> was expected" },
		{ TR_JUNIT, "<testsuite>\n<testcase name=\"a\"/>\n", "line 3: the file ends inside <testsuite>" },
		{ TR_JUNIT, "<testsuite>\n<testcase name=a/>\n</testsuite>\n",
		  "line 2: attribute name of <testcase>: expected a quoted value" },
		{ TR_JUNIT, "<testsuite>\n\n<testcase name=\"&bogus;\"/></testsuite>",
		  "line 3: unknown entity \"&bogus;\"" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		ck_assert_msg(tr_parse(bad[i].f, bad[i].text, strlen(bad[i].text), &r, err, sizeof(err)) == -EINVAL,
			      "case %zu parsed", i);
		ck_assert_msg(!strcmp(err, bad[i].err), "case %zu: \"%s\", expected \"%s\"", i, err, bad[i].err);
		ck_assert_uint_eq(r.n, 0);
	}
}
END_TEST

/* ---- import into rows ---- */

struct imp {
	struct rq_case c;
	struct rq_results rows;
	struct rq_ctx ctx;
	struct rq_result *main;
	char dir[64];
};

static void imp_init(struct imp *m)
{
	memset(m, 0, sizeof(*m));
	m->c.name = (char *)"suite.tests";
	snprintf(m->dir, sizeof(m->dir), "/tmp/rq-test-tr-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(m->dir));
	m->ctx = (struct rq_ctx){ .c = &m->c, .log_fd = -1, .scratch = m->dir, .out = &m->rows };
	m->main = rq_result_new(m->c.name, NULL, 0);
	rq_results_add(&m->rows, m->main);
	m->ctx.main = m->main;
}

static void imp_release(struct imp *m)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/r.xml", m->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/link.xml", m->dir);
	unlink(path);
	rmdir(m->dir);
	rq_results_release(&m->rows);
}

static double fig(const struct rq_result *r, const char *name)
{
	for (size_t i = 0; i < r->nfigs; i++)
		if (!strcmp(r->figs[i].name, name))
			return r->figs[i].value;
	return NAN;
}

static struct rq_result *row(struct imp *m, const char *id)
{
	for (size_t i = 0; i < m->rows.n; i++)
		if (!strcmp(m->rows.v[i]->id, id))
			return m->rows.v[i];
	ck_abort_msg("no row %s", id);
	return NULL;
}

START_TEST(import_judges_the_whole)
{
	struct imp m;
	struct app_results res = { .format = TR_UNITTEST + 1, .min_passed = 1, .max_skipped = -1,
				   .max_rows = 1000 };
	struct sb s = SB_INIT;

	fixture("unittest-v-allskip.txt", &s);
	imp_init(&m);
	app_results_import(&m.ctx, m.main, &res, s.buf, s.len, false, app_results_clock());
	rq_result_finish(m.main);
	/* unittest exits 0 and says OK, but nothing passed */
	ck_assert_int_eq(m.main->verdict, RQ_FAIL);
	ck_assert_str_eq(m.main->reason, "0 tests passed, fewer than min_passed 1 (2 skipped of 2)");
	ck_assert_uint_eq(m.rows.n, 3);
	ck_assert_int_eq(row(&m, "suite.tests[test_allskip.AllSkip.test_a]")->verdict, RQ_SKIP);
	ck_assert_str_eq(row(&m, "suite.tests[test_allskip.AllSkip.test_b]")->reason, "No devices with rdma_cm");
	ck_assert(fig(m.main, "tests_skipped") == 2);
	imp_release(&m);

	/* max_skipped, and a failure named */
	fixture("unittest-v-mixed.txt", &s);
	imp_init(&m);
	res.max_skipped = 1;
	res.min_passed = 0;
	app_results_import(&m.ctx, m.main, &res, s.buf, s.len, false, app_results_clock());
	rq_result_finish(m.main);
	ck_assert_int_eq(m.main->verdict, RQ_FAIL);
	ck_assert_str_eq(m.main->reason, "3 of 8 tests failed (1 failures, 2 errors; first: test_sample.Basic.test_error)");
	ck_assert_uint_eq(m.main->failed, 2);	/* ... and 2 skipped, more than 1 */
	ck_assert_int_eq(row(&m, "suite.tests[test_sample.Basic.test_fail]")->verdict, RQ_FAIL);
	ck_assert_int_eq(row(&m, "suite.tests[test_sample.Basic.test_error]")->verdict, RQ_ERROR);
	rq_result_finish(row(&m, "suite.tests[test_sample.Basic.test_pass]"));
	ck_assert_int_eq(row(&m, "suite.tests[test_sample.Basic.test_pass]")->verdict, RQ_PASS);
	imp_release(&m);

	/* a TAP plan that is not met */
	const char *tap = "1..3\nok 1 a\nok 2 a\n";

	imp_init(&m);
	res = (struct app_results){ .format = TR_TAP + 1, .min_passed = 1, .max_skipped = -1, .max_rows = 10 };
	app_results_import(&m.ctx, m.main, &res, tap, strlen(tap), false, app_results_clock());
	rq_result_finish(m.main);
	ck_assert_int_eq(m.main->verdict, RQ_FAIL);
	ck_assert_str_eq(m.main->reason, "TAP plan 1..3, but 2 tests reported");
	/* two tests of one name: two rows */
	row(&m, "suite.tests[a]");
	row(&m, "suite.tests[a #2]");
	imp_release(&m);
	sb_release(&s);
}
END_TEST

START_TEST(import_file_errors)
{
	struct imp m;
	char path[128], lnk[128];
	struct app_results res = { .format = TR_JUNIT + 1, .min_passed = 1, .max_skipped = -1,
				   .max_rows = 1000, .file = path };
	int64_t t0 = app_results_clock();

	imp_init(&m);
	snprintf(path, sizeof(path), "%s/r.xml", m.dir);
	app_results_import(&m.ctx, m.main, &res, "", 0, false, t0);
	ck_assert_int_eq(m.main->verdict, RQ_ERROR);
	ck_assert_ptr_nonnull(strstr(m.main->reason, "results file /tmp/rq-test-tr-"));
	ck_assert_ptr_nonnull(strstr(m.main->reason, "/r.xml: No such file or directory"));
	imp_release(&m);

	/* unparsable: the file and the line */
	imp_init(&m);
	snprintf(path, sizeof(path), "%s/r.xml", m.dir);
	ck_assert_int_eq(write_file_atomic(path, "<testsuite>\n<testcase name=\"x\">\n", 32), 0);
	app_results_import(&m.ctx, m.main, &res, "", 0, false, t0);
	ck_assert_int_eq(m.main->verdict, RQ_ERROR);
	char want[300];

	snprintf(want, sizeof(want), "results (junit) in %s: line 3: the file ends inside <testcase>", path);
	ck_assert_str_eq(m.main->reason, want);
	imp_release(&m);

	/* a link is not followed; a file older than the program is stale */
	imp_init(&m);
	snprintf(path, sizeof(path), "%s/link.xml", m.dir);
	snprintf(lnk, sizeof(lnk), "%s/r.xml", m.dir);
	ck_assert_int_eq(write_file_atomic(lnk, "<testsuite/>", 12), 0);
	ck_assert_int_eq(symlink(lnk, path), 0);
	app_results_import(&m.ctx, m.main, &res, "", 0, false, t0);
	ck_assert_int_eq(m.main->verdict, RQ_ERROR);
	ck_assert_ptr_nonnull(strstr(m.main->reason, "(a symbolic link: not followed)"));
	imp_release(&m);

	imp_init(&m);
	snprintf(path, sizeof(path), "%s/r.xml", m.dir);
	ck_assert_int_eq(write_file_atomic(path, "<testsuite/>", 12), 0);
	app_results_import(&m.ctx, m.main, &res, "", 0, false, app_results_clock() + 60000000000LL);
	ck_assert_int_eq(m.main->verdict, RQ_ERROR);
	ck_assert_ptr_nonnull(strstr(m.main->reason, "not written during this case"));
	imp_release(&m);
}
END_TEST

START_TEST(import_100000_bounded)
{
	struct imp m;
	struct sb tap = SB_INIT;
	struct app_results res = { .format = TR_TAP + 1, .min_passed = 1, .max_skipped = -1,
				   .max_rows = 1000 };
	size_t nfail = 0, nskip = 0, npass = 0;

	sb_adds(&tap, "TAP version 13\n1..100000\n");
	for (int i = 1; i <= 100000; i++) {
		if (i % 10000 == 0)
			sb_addf(&tap, "not ok %d case %d\n# broke at %d\n", i, i, i);
		else if (i % 1000 == 0)
			sb_addf(&tap, "ok %d case %d # SKIP no device\n", i, i);
		else
			sb_addf(&tap, "ok %d case %d\n", i, i);
	}
	imp_init(&m);
	app_results_import(&m.ctx, m.main, &res, tap.buf, tap.len, false, app_results_clock());
	rq_result_finish(m.main);
	/* 1000 rows of tests plus the case's own */
	ck_assert_uint_eq(m.rows.n, 1001);
	ck_assert(fig(m.main, "tests") == 100000);
	ck_assert(fig(m.main, "tests_failed") == 10);
	ck_assert(fig(m.main, "tests_skipped") == 90);
	ck_assert(fig(m.main, "tests_passed") == 99900);
	ck_assert(fig(m.main, "tests_rows_omitted") == 99000);
	for (size_t i = 1; i < m.rows.n; i++) {
		rq_result_finish(m.rows.v[i]);
		nfail += m.rows.v[i]->verdict == RQ_FAIL;
		nskip += m.rows.v[i]->verdict == RQ_SKIP;
		npass += m.rows.v[i]->verdict == RQ_PASS;
	}
	/* every failure and skip kept, passes fill the rest */
	ck_assert_uint_eq(nfail, 10);
	ck_assert_uint_eq(nskip, 90);
	ck_assert_uint_eq(npass, 900);
	ck_assert_str_eq(row(&m, "suite.tests[case 50000]")->reason, "broke at 50000");
	ck_assert_int_eq(m.main->verdict, RQ_FAIL);
	ck_assert_str_eq(m.main->reason, "10 of 100000 tests failed (10 failures, 0 errors; first: case 10000)");
	imp_release(&m);
	sb_release(&tap);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unittest_real_mixed);
	tcase_add_test(tc, unittest_real_allskip_and_old_names);
	tcase_add_test(tc, junit_real_pytest_ctest);
	tcase_add_test(tc, tap_real_test_more_and_kselftest);
	tcase_add_test(tc, tap_forms);
	tcase_add_test(tc, blktests_check_output);
	tcase_add_test(tc, blktests_test_died);
	tcase_add_test(tc, blktests_conditions);
	tcase_add_test(tc, malformed_refused_at_line);
	tcase_add_test(tc, import_judges_the_whole);
	tcase_add_test(tc, import_file_errors);
	tcase_add_test(tc, import_100000_bounded);
}

RQ_CHECK_MAIN("testresults", add_tests)
