/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/qual/compare.c: row matching, verdict transitions, figure
 * judgement (tolerance edges, direction by unit and name), facts, targets
 * and HCA models that differ, and input documents that are not results.json.
 * Documents are built from small JSON texts shaped like harness/report/json.c's.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "qual/compare.h"
#include "check_main.h"

/* A results.json document; rows is the text of the "results" array's items. */
static json_t *doc(const char *facts, const char *rows)
{
	char *text = NULL;
	json_error_t je;
	json_t *d;

	ck_assert(asprintf(&text, "{\"schema\": \"rdmaqual-results/1\", "
			   "\"run\": {\"id\": \"r\", \"complete\": true}, "
			   "\"facts\": {%s}, \"results\": [%s]}", facts ? facts : "", rows) > 0);
	d = json_loads(text, 0, &je);
	if (!d)
		ck_abort_msg("bad test JSON: %s: %s", je.text, text);
	free(text);
	return d;
}

/* One row; extra is more members ("\"figures\": [...]"), may be "". */
static char *row(const char *id, const char *verdict, const char *extra)
{
	char *s = NULL;
	const char *reason = strcmp(verdict, "PASS") ? "\"why\"" : "null";

	ck_assert(asprintf(&s, "{\"id\": \"%s\", \"case\": \"%s\", \"verdict\": \"%s\", \"reason\": %s, "
			   "\"target\": \"local\"%s%s}", id, id, verdict, reason, *extra ? ", " : "",
			   extra) > 0);
	return s;
}

static char *fig(const char *name, double v, const char *unit)
{
	char *s = NULL;

	ck_assert(asprintf(&s, "\"figures\": [{\"name\": \"%s\", \"value\": %.17g, \"unit\": \"%s\"}]",
			   name, v, unit) > 0);
	return s;
}

static struct cmp_report rep;
static struct cmp_opts opts;

/* Compare two documents (consumed) with opts; fails the test on error. */
static void run_cmp(json_t *b, json_t *a)
{
	char err[400];

	cmp_report_release(&rep);
	ck_assert_msg(!cmp_compare(b, a, &opts, &rep, err, sizeof(err)), "%s", err);
	json_decref(b);
	json_decref(a);
}

/* One row on each side, each with one figure. */
static void cmp_fig(const char *name, double before, double after, const char *unit)
{
	char *fb = fig(name, before, unit), *fa = fig(name, after, unit);
	char *rb = row("bw.write[mlx5_0/1]", "PASS", fb), *ra = row("bw.write[mlx5_0/1]", "PASS", fa);

	run_cmp(doc(NULL, rb), doc(NULL, ra));
	free(fb);
	free(fa);
	free(rb);
	free(ra);
}

static const struct cmp_finding *find(enum cmp_type t, const char *row_id, const char *name)
{
	for (size_t i = 0; i < rep.n; i++) {
		const struct cmp_finding *f = &rep.v[i];

		if (f->type == t && (!row_id || (f->row && !strcmp(f->row, row_id))) &&
		    (!name || (f->name && !strcmp(f->name, name))))
			return f;
	}
	return NULL;
}

static void setup(void)
{
	cmp_opts_init(&opts);
	memset(&rep, 0, sizeof(rep));
}

static void teardown(void)
{
	cmp_report_release(&rep);
	cmp_opts_release(&opts);
}

START_TEST(tolerance_args)
{
	char err[200];

	ck_assert_double_eq(opts.tol_pct, 5.0);
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "2.5%", err, sizeof(err)), 0);
	ck_assert_double_eq(opts.tol_pct, 2.5);
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "0", err, sizeof(err)), 0);
	ck_assert_double_eq(opts.tol_pct, 0);
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "lat_*=10", err, sizeof(err)), 0);
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "lat_p99=20%", err, sizeof(err)), 0);
	ck_assert_double_eq(cmp_tolerance_for(&opts, "lat_mean"), 10);
	ck_assert_double_eq(cmp_tolerance_for(&opts, "lat_p99"), 20);	/* later, more specific */
	ck_assert_double_eq(cmp_tolerance_for(&opts, "bw_avg"), 0);
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "lat_*=1", err, sizeof(err)), 0);
	ck_assert_double_eq(cmp_tolerance_for(&opts, "lat_p99"), 1);	/* last match wins */

	static const char *const bad[] = { "", "abc", "-1", "5%%", "=5", "x=", "x=-2", "x=nan",
					   "inf", " 5", "5 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		ck_assert_msg(cmp_opts_tolerance(&opts, bad[i], err, sizeof(err)) < 0, "accepted \"%s\"", bad[i]);
		ck_assert_msg(err[0], "no reason for \"%s\"", bad[i]);
	}
	ck_assert_double_eq(opts.tol_pct, 0);	/* a rejected argument changes nothing */
}
END_TEST

START_TEST(direction)
{
	ck_assert_int_eq(cmp_direction("bw_avg", "Gb/s"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("x", "MB/s"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("msg_rate", "msg/s"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("pcie_speed", "GT/s"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("x", "Gbps"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("cpu_s_per_GB", "s/GB"), CMP_LOWER);
	ck_assert_int_eq(cmp_direction("tcp_cpu_s_per_GB", "s/GB"), CMP_LOWER);
	ck_assert_int_eq(cmp_direction("lat_p99", "us"), CMP_LOWER);
	ck_assert_int_eq(cmp_direction("x", "ns"), CMP_LOWER);
	ck_assert_int_eq(cmp_direction("connect_ms", "ms"), CMP_LOWER);
	/* the unit wins over the name */
	ck_assert_int_eq(cmp_direction("lat_weird", "Gb/s"), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("bw_time", "us"), CMP_LOWER);
	/* no unit: the name's words decide */
	ck_assert_int_eq(cmp_direction("bw_avg", ""), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("peak.BW", NULL), CMP_HIGHER);
	ck_assert_int_eq(cmp_direction("lat_p99", ""), CMP_LOWER);
	ck_assert_int_eq(cmp_direction("write_latency", "cycles?"), CMP_LOWER);
	/* unknown: reported, never judged */
	ck_assert_int_eq(cmp_direction("elapsed", "s"), CMP_DIR_UNKNOWN);
	ck_assert_int_eq(cmp_direction("active_mtu", "B"), CMP_DIR_UNKNOWN);
	ck_assert_int_eq(cmp_direction("width", "lanes"), CMP_DIR_UNKNOWN);
	ck_assert_int_eq(cmp_direction("symbol_error", ""), CMP_DIR_UNKNOWN);
	ck_assert_int_eq(cmp_direction("translation", ""), CMP_DIR_UNKNOWN);	/* "lat" only as a word */
	ck_assert_int_eq(cmp_direction("bw_lat", ""), CMP_DIR_UNKNOWN);		/* says both */
	ck_assert_int_eq(cmp_direction("x", "/s"), CMP_DIR_UNKNOWN);
}
END_TEST

START_TEST(verdicts)
{
	char *b[9], *a[9];
	const struct cmp_finding *f;

	b[0] = row("p2f", "PASS", "");	a[0] = row("p2f", "FAIL", "");
	b[1] = row("p2e", "PASS", "");	a[1] = row("p2e", "ERROR", "");
	b[2] = row("f2p", "FAIL", "");	a[2] = row("f2p", "PASS", "");
	b[3] = row("p2s", "PASS", "");	a[3] = row("p2s", "SKIP", "");
	b[4] = row("s2f", "SKIP", "");	a[4] = row("s2f", "FAIL", "");
	b[5] = row("gone_pass", "PASS", "");	a[5] = row("new_row", "FAIL", "");
	b[6] = row("gone_fail", "FAIL", "");	a[6] = row("p2p", "PASS", "");
	b[7] = row("p2p", "PASS", "");	a[7] = row("e2p", "PASS", "");
	b[8] = row("e2p", "ERROR", "");	a[8] = strdup("{\"id\": \"f2f\", \"case\": \"f2f\", \"verdict\": \"FAIL\", \"reason\": \"other\"}");
	char *bs = NULL, *as = NULL;

	ck_assert(asprintf(&bs, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
			   "{\"id\": \"f2f\", \"case\": \"f2f\", \"verdict\": \"FAIL\", \"reason\": \"one\"}") > 0);
	ck_assert(asprintf(&as, "%s,%s,%s,%s,%s,%s,%s,%s,%s", a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]) > 0);

	run_cmp(doc(NULL, bs), doc(NULL, as));
	ck_assert_uint_eq(rep.before.rows, 10);
	ck_assert_uint_eq(rep.after.rows, 9);
	ck_assert_uint_eq(rep.matched, 8);
	ck_assert((f = find(CMP_REGRESSED, "p2f", NULL)) && f->regression);
	ck_assert_str_eq(f->before, "PASS");
	ck_assert_str_eq(f->after, "FAIL");
	ck_assert_str_eq(f->msg, "why");
	ck_assert((f = find(CMP_REGRESSED, "p2e", NULL)) && f->regression);
	ck_assert((f = find(CMP_FIXED, "f2p", NULL)) && !f->regression);
	ck_assert((f = find(CMP_FIXED, "e2p", NULL)) && !f->regression);
	ck_assert((f = find(CMP_NEW_SKIP, "p2s", NULL)) && f->regression);
	ck_assert((f = find(CMP_VERDICT, "s2f", NULL)) && !f->regression);
	ck_assert((f = find(CMP_MISSING, "gone_pass", NULL)) && f->regression);
	ck_assert(!f->after);
	ck_assert((f = find(CMP_GONE, "gone_fail", NULL)) && !f->regression);
	ck_assert((f = find(CMP_NEW_ROW, "new_row", NULL)) && !f->regression);
	ck_assert_str_eq(f->after, "FAIL");
	ck_assert((f = find(CMP_REASON, "f2f", NULL)) && !f->regression);
	ck_assert(strstr(f->msg, "other") && strstr(f->msg, "one"));
	ck_assert(!find(CMP_REASON, "p2p", NULL) && !find(CMP_REGRESSED, "p2p", NULL));
	/* p2f, p2e, p2s, gone_pass */
	ck_assert_uint_eq(rep.regressions, 4);

	/* --allow-new-skips: PASS -> SKIP reported, not counted */
	opts.allow_new_skips = true;
	run_cmp(doc(NULL, bs), doc(NULL, as));
	ck_assert((f = find(CMP_NEW_SKIP, "p2s", NULL)) && !f->regression);
	ck_assert_uint_eq(rep.regressions, 3);

	for (int i = 0; i < 9; i++) {
		free(b[i]);
		free(a[i]);
	}
	free(bs);
	free(as);
}
END_TEST

START_TEST(tolerance_edges)
{
	const struct cmp_finding *f;

	/* higher is better: exactly 5% worse is within, a hair more is not */
	cmp_fig("bw_avg", 100, 95, "Gb/s");
	ck_assert((f = find(CMP_FIG_SAME, NULL, "bw_avg")));
	ck_assert_double_eq_tol(f->change_pct, -5.0, 1e-9);
	ck_assert_double_eq(f->tol_pct, 5);
	ck_assert_int_eq(f->dir, CMP_HIGHER);
	ck_assert_uint_eq(rep.regressions, 0);
	cmp_fig("bw_avg", 100, 94.99, "Gb/s");
	ck_assert((f = find(CMP_FIG_WORSE, NULL, "bw_avg")) && f->regression);
	ck_assert_double_eq(f->vbefore, 100);
	ck_assert_double_eq(f->vafter, 94.99);
	ck_assert_uint_eq(rep.regressions, 1);
	/* real values whose difference is not exact in binary */
	cmp_fig("bw_avg", 97.53, 92.6535, "Gb/s");
	ck_assert(find(CMP_FIG_SAME, NULL, "bw_avg"));
	/* higher is better: an increase is an improvement, never a regression */
	cmp_fig("bw_avg", 100, 150, "Gb/s");
	ck_assert((f = find(CMP_FIG_BETTER, NULL, "bw_avg")) && !f->regression);

	/* lower is better: the same edges mirrored */
	cmp_fig("lat_p99", 10, 10.5, "us");
	ck_assert(find(CMP_FIG_SAME, NULL, "lat_p99"));
	cmp_fig("lat_p99", 10, 10.51, "us");
	ck_assert(find(CMP_FIG_WORSE, NULL, "lat_p99"));
	cmp_fig("lat_p99", 10, 5, "us");
	ck_assert(find(CMP_FIG_BETTER, NULL, "lat_p99"));

	/* per-figure override */
	char err[100];
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "lat_*=10", err, sizeof(err)), 0);
	cmp_fig("lat_p99", 10, 10.9, "us");
	ck_assert((f = find(CMP_FIG_SAME, NULL, "lat_p99")));
	ck_assert_double_eq(f->tol_pct, 10);
	cmp_fig("bw_avg", 100, 93, "Gb/s");	/* the default still applies elsewhere */
	ck_assert(find(CMP_FIG_WORSE, NULL, "bw_avg"));

	/* zero tolerance: any worsening is a regression, no change is not */
	ck_assert_int_eq(cmp_opts_tolerance(&opts, "0", err, sizeof(err)), 0);
	cmp_fig("bw_avg", 100, 99.999, "Gb/s");
	ck_assert(find(CMP_FIG_WORSE, NULL, "bw_avg"));
	cmp_fig("bw_avg", 100, 100, "Gb/s");
	ck_assert(find(CMP_FIG_SAME, NULL, "bw_avg"));
	ck_assert_uint_eq(rep.regressions, 0);
}
END_TEST

START_TEST(figures_unjudged)
{
	const struct cmp_finding *f;

	/* unknown direction: the change is shown, never judged, however big */
	cmp_fig("elapsed", 1, 100, "s");
	ck_assert((f = find(CMP_FIG_UNJUDGED, NULL, "elapsed")) && !f->regression);
	ck_assert_double_eq_tol(f->change_pct, 9900, 1e-9);
	ck_assert(isnan(f->tol_pct));
	ck_assert(strstr(f->msg, "direction unknown"));
	/* before 0: no relative change */
	cmp_fig("bw_avg", 0, 10, "Gb/s");
	ck_assert((f = find(CMP_FIG_UNJUDGED, NULL, "bw_avg")) && strstr(f->msg, "before is 0"));
	ck_assert(isnan(f->change_pct));
	ck_assert_uint_eq(rep.regressions, 0);

	/* a value that was not finite (written as null) */
	char *rb = row("x", "PASS", "\"figures\": [{\"name\": \"bw_avg\", \"value\": null, \"unit\": \"Gb/s\"}]");
	char *ra = row("x", "PASS", "\"figures\": [{\"name\": \"bw_avg\", \"value\": 1, \"unit\": \"Gb/s\"}]");
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_UNJUDGED, "x", "bw_avg")) && strstr(f->msg, "no value before"));
	ck_assert_str_eq(f->before, "(no value)");
	free(rb);
	free(ra);

	/* the unit changed: no silent conversion */
	rb = row("x", "PASS", "\"figures\": [{\"name\": \"bw\", \"value\": 100, \"unit\": \"Gb/s\"}]");
	ra = row("x", "PASS", "\"figures\": [{\"name\": \"bw\", \"value\": 1, \"unit\": \"MB/s\"}]");
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_UNJUDGED, "x", "bw")) && strstr(f->msg, "unit changed"));
	ck_assert_uint_eq(rep.regressions, 0);
	free(rb);
	free(ra);

	/* a figure on one side only: reported both ways, not judged */
	rb = row("x", "PASS", "\"figures\": [{\"name\": \"bw_peak\", \"value\": 100, \"unit\": \"Gb/s\"},"
		 "{\"name\": \"bw_avg\", \"value\": 90, \"unit\": \"Gb/s\"}]");
	ra = row("x", "PASS", "\"figures\": [{\"name\": \"bw_avg\", \"value\": 90, \"unit\": \"Gb/s\"},"
		 "{\"name\": \"msg_rate\", \"value\": 5e6, \"unit\": \"msg/s\"}]");
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_ONE_SIDE, "x", "bw_peak")) && !f->regression);
	ck_assert(f->before && !f->after);
	ck_assert_str_eq(f->msg, "only before");
	ck_assert((f = find(CMP_FIG_ONE_SIDE, "x", "msg_rate")) && !f->before && f->after);
	ck_assert(find(CMP_FIG_SAME, "x", "bw_avg"));
	ck_assert_uint_eq(rep.count[CMP_FIG_ONE_SIDE], 2);
	ck_assert_uint_eq(rep.regressions, 0);
	free(rb);
	free(ra);
}
END_TEST

START_TEST(different_targets)
{
	const struct cmp_finding *f;
	const char *b = "{\"id\": \"bw[rxe0/1]\", \"case\": \"bw\", \"verdict\": \"PASS\", \"target\": \"hca\","
		"\"figures\": [{\"name\": \"bw_avg\", \"value\": 100, \"unit\": \"Gb/s\"}]}";
	const char *a = "{\"id\": \"bw[rxe0/1]\", \"case\": \"bw\", \"verdict\": \"FAIL\", \"reason\": \"r\","
		"\"target\": \"rxe-vm\", \"figures\": [{\"name\": \"bw_avg\", \"value\": 1, \"unit\": \"Gb/s\"}]}";

	run_cmp(doc(NULL, b), doc(NULL, a));
	ck_assert((f = find(CMP_WARNING, "bw[rxe0/1]", "target")));
	ck_assert(strstr(f->msg, "hca") && strstr(f->msg, "rxe-vm"));
	ck_assert((f = find(CMP_FIG_UNJUDGED, "bw[rxe0/1]", "bw_avg")) && strstr(f->msg, "targets differ"));
	ck_assert_double_eq_tol(f->change_pct, -99, 1e-9);	/* still shown */
	ck_assert(!find(CMP_FIG_WORSE, NULL, NULL));
	/* the verdict still counts: it passed before and does not now */
	ck_assert(find(CMP_REGRESSED, "bw[rxe0/1]", NULL));
	ck_assert_uint_eq(rep.regressions, 1);
}
END_TEST

START_TEST(different_hca)
{
	const struct cmp_finding *f;
	/* The model is on the driver row of the same device; the bw row has none. */
	const char *b = "{\"id\": \"driver.hca[mlx5_0]\", \"case\": \"driver.hca\", \"device\": \"mlx5_0\","
		"\"verdict\": \"PASS\", \"target\": \"hca\", \"facts\": {\"model\": \"ConnectX-6\"}},"
		"{\"id\": \"bw[mlx5_0/1]\", \"case\": \"bw\", \"device\": \"mlx5_0\", \"port\": 1, \"verdict\": \"PASS\","
		"\"target\": \"hca\", \"figures\": [{\"name\": \"bw_avg\", \"value\": 190, \"unit\": \"Gb/s\"}]}";
	const char *a = "{\"id\": \"driver.hca[mlx5_0]\", \"case\": \"driver.hca\", \"device\": \"mlx5_0\","
		"\"verdict\": \"PASS\", \"target\": \"hca\", \"facts\": {\"model\": \"ConnectX-5\"}},"
		"{\"id\": \"bw[mlx5_0/1]\", \"case\": \"bw\", \"device\": \"mlx5_0\", \"port\": 1, \"verdict\": \"PASS\","
		"\"target\": \"hca\", \"figures\": [{\"name\": \"bw_avg\", \"value\": 95, \"unit\": \"Gb/s\"}]}";

	run_cmp(doc(NULL, b), doc(NULL, a));
	ck_assert((f = find(CMP_WARNING, "bw[mlx5_0/1]", "model")));
	ck_assert(strstr(f->msg, "ConnectX-6") && strstr(f->msg, "ConnectX-5"));
	ck_assert((f = find(CMP_FIG_UNJUDGED, "bw[mlx5_0/1]", "bw_avg")) && strstr(f->msg, "HCA model differs"));
	ck_assert((f = find(CMP_FACT, "driver.hca[mlx5_0]", "model")));
	ck_assert_uint_eq(rep.regressions, 0);

	/* the same model via a run fact "model:<device>": judged, and worse */
	const char *b2 = "{\"id\": \"bw[mlx5_0/1]\", \"case\": \"bw\", \"device\": \"mlx5_0\", \"port\": 1,"
		"\"verdict\": \"PASS\", \"figures\": [{\"name\": \"bw_avg\", \"value\": 190, \"unit\": \"Gb/s\"}]}";
	const char *a2 = "{\"id\": \"bw[mlx5_0/1]\", \"case\": \"bw\", \"device\": \"mlx5_0\", \"port\": 1,"
		"\"verdict\": \"PASS\", \"figures\": [{\"name\": \"bw_avg\", \"value\": 95, \"unit\": \"Gb/s\"}]}";
	run_cmp(doc("\"model:mlx5_0\": \"ConnectX-6\"", b2), doc("\"model:mlx5_0\": \"ConnectX-6\"", a2));
	ck_assert(!find(CMP_WARNING, NULL, NULL));
	ck_assert((f = find(CMP_FIG_WORSE, "bw[mlx5_0/1]", "bw_avg")) && f->regression);
	run_cmp(doc("\"model:mlx5_0\": \"ConnectX-6\"", b2), doc("\"model:mlx5_0\": \"ConnectX-7\"", a2));
	ck_assert(find(CMP_WARNING, "bw[mlx5_0/1]", "model"));
	ck_assert(find(CMP_FIG_UNJUDGED, "bw[mlx5_0/1]", "bw_avg"));
	ck_assert(find(CMP_FACT, NULL, "model:mlx5_0"));
	ck_assert_uint_eq(rep.regressions, 0);
}
END_TEST

START_TEST(facts)
{
	const struct cmp_finding *f;
	char *rb = row("driver.hca[mlx5_0]", "PASS", "\"facts\": {\"fw_ver\": \"20.31.1014\", \"pci\": \"0000:01:00.0\"}");
	char *ra = row("driver.hca[mlx5_0]", "PASS", "\"facts\": {\"pci\": \"0000:01:00.0\", \"fw_ver\": \"20.35.2000\"}");

	run_cmp(doc("\"host.kernel\": \"6.1.0-28\", \"ofed\": \"inbox\", \"same\": \"x\"", rb),
		doc("\"same\": \"x\", \"host.kernel\": \"6.1.0-30\", \"mlx5_core_version\": \"24.10\"", ra));
	ck_assert((f = find(CMP_FACT, NULL, "host.kernel")) && !f->regression);
	ck_assert(!f->row);
	ck_assert_str_eq(f->before, "6.1.0-28");
	ck_assert_str_eq(f->after, "6.1.0-30");
	ck_assert((f = find(CMP_FACT, NULL, "ofed")) && f->before && !f->after);
	ck_assert((f = find(CMP_FACT, NULL, "mlx5_core_version")) && !f->before && f->after);
	ck_assert((f = find(CMP_FACT, "driver.hca[mlx5_0]", "fw_ver")));
	ck_assert_str_eq(f->after, "20.35.2000");
	ck_assert(!find(CMP_FACT, NULL, "same") && !find(CMP_FACT, NULL, "pci"));
	ck_assert_uint_eq(rep.count[CMP_FACT], 4);
	ck_assert_uint_eq(rep.regressions, 0);
	/* sorted by key, whatever order the runs recorded them in */
	size_t ih = rep.n, im = rep.n, io = rep.n;
	for (size_t i = 0; i < rep.n; i++) {
		if (rep.v[i].name && !strcmp(rep.v[i].name, "host.kernel")) ih = i;
		if (rep.v[i].name && !strcmp(rep.v[i].name, "mlx5_core_version")) im = i;
		if (rep.v[i].name && !strcmp(rep.v[i].name, "ofed")) io = i;
	}
	ck_assert(ih < im && im < io);
	free(rb);
	free(ra);
}
END_TEST

START_TEST(bad_documents)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "[]", "not a JSON object" },
		{ "{\"results\": []}", "no \"schema\"" },
		{ "{\"schema\": \"rdmaqual-results/2\", \"results\": []}", "unknown schema \"rdmaqual-results/2\"" },
		{ "{\"schema\": \"junit\", \"results\": []}", "unknown schema" },
		{ "{\"schema\": \"rdmaqual-results/1\"}", "\"results\" is missing" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": {}}", "not an array" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"MAYBE\"}]}",
		  "results[0]: result: unknown verdict" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"results\": [{\"id\": \"a\"}]}", "results[0]" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"facts\": {\"k\": 1}, \"results\": []}", "fact \"k\"" },
		{ "{\"schema\": \"rdmaqual-results/1\", \"facts\": [], \"results\": []}", "\"facts\" is not an object" },
	};
	char err[300];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		json_t *d = json_loads(cases[i].text, 0, NULL), *good = doc(NULL, "");

		ck_assert(d);
		err[0] = '\0';
		ck_assert_int_lt(cmp_check_doc(d, err, sizeof(err)), 0);
		ck_assert_msg(strstr(err, cases[i].want), "case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].want);
		/* cmp_compare says which side is bad */
		ck_assert_int_lt(cmp_compare(good, d, &opts, &rep, err, sizeof(err)), 0);
		ck_assert_msg(!strncmp(err, "after: ", 7), "%s", err);
		ck_assert_int_lt(cmp_compare(d, good, &opts, &rep, err, sizeof(err)), 0);
		ck_assert_msg(!strncmp(err, "before: ", 8), "%s", err);
		json_decref(d);
		json_decref(good);
	}
	json_t *g = doc(NULL, "");
	ck_assert_int_eq(cmp_check_doc(g, err, sizeof(err)), 0);
	json_decref(g);
}
END_TEST

START_TEST(warnings)
{
	const char *dup = "{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"PASS\"},"
		"{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"FAIL\", \"reason\": \"r\"}";
	json_t *inc = json_loads("{\"schema\": \"rdmaqual-results/1\", \"run\": {\"complete\": false},"
				 "\"results\": []}", 0, NULL);
	const struct cmp_finding *f;

	/* duplicate ids: warned, the first row counts (PASS both sides) */
	run_cmp(doc(NULL, dup), doc(NULL, dup));
	ck_assert_uint_eq(rep.count[CMP_WARNING], 2);
	ck_assert((f = find(CMP_WARNING, "a", NULL)) && strstr(f->msg, "more than once"));
	ck_assert_uint_eq(rep.matched, 1);
	ck_assert_uint_eq(rep.regressions, 0);

	/* an incomplete after run: warned, and the missing PASS row still counts */
	run_cmp(doc(NULL, "{\"id\": \"a\", \"case\": \"a\", \"verdict\": \"PASS\"}"), inc);
	ck_assert((f = find(CMP_WARNING, NULL, NULL)) && strstr(f->msg, "after run is incomplete"));
	ck_assert(!rep.after.complete && rep.before.complete);
	ck_assert(find(CMP_MISSING, "a", NULL));
	ck_assert_uint_eq(rep.regressions, 1);

	/* runs from two hosts: warned, not judged */
	run_cmp(json_loads("{\"schema\": \"rdmaqual-results/1\", \"run\": {\"complete\": true, \"hostname\": \"n1\"},"
			   "\"results\": []}", 0, NULL),
		json_loads("{\"schema\": \"rdmaqual-results/1\", \"run\": {\"complete\": true, \"hostname\": \"n2\"},"
			   "\"results\": []}", 0, NULL));
	ck_assert((f = find(CMP_WARNING, NULL, "hostname")) && strstr(f->msg, "different hosts"));
	ck_assert_str_eq(f->before, "n1");
	ck_assert_uint_eq(rep.count[CMP_WARNING], 1);
	ck_assert_uint_eq(rep.regressions, 0);
}
END_TEST

START_TEST(json_document)
{
	char err[100];
	json_t *j, *fs, *f;
	size_t i;
	bool seen = false;

	ck_assert_int_eq(cmp_opts_tolerance(&opts, "lat_*=10", err, sizeof(err)), 0);
	cmp_fig("bw_avg", 100, 80, "Gb/s");
	j = cmp_report_json(&rep, &opts);
	ck_assert_str_eq(json_string_value(json_object_get(j, "schema")), RQ_COMPARE_SCHEMA);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "regressions")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "figure_worse")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "counts"), "matched")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "before"), "id")), "r");
	ck_assert(json_is_true(json_object_get(json_object_get(j, "before"), "complete")));
	ck_assert_double_eq(json_real_value(json_object_get(json_object_get(j, "options"), "tolerance_pct")), 5);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(j, "options"), "tolerances"), 0), "glob")), "lat_*");
	fs = json_object_get(j, "findings");
	json_array_foreach(fs, i, f) {
		if (strcmp(json_string_value(json_object_get(f, "type")), "figure_worse"))
			continue;
		seen = true;
		ck_assert(json_is_true(json_object_get(f, "regression")));
		ck_assert_str_eq(json_string_value(json_object_get(f, "row")), "bw.write[mlx5_0/1]");
		ck_assert_str_eq(json_string_value(json_object_get(f, "name")), "bw_avg");
		ck_assert_double_eq(json_number_value(json_object_get(f, "before_value")), 100);
		ck_assert_double_eq(json_number_value(json_object_get(f, "after_value")), 80);
		ck_assert_double_eq_tol(json_number_value(json_object_get(f, "change_pct")), -20, 1e-9);
		ck_assert_str_eq(json_string_value(json_object_get(f, "better")), "higher");
		ck_assert_str_eq(json_string_value(json_object_get(f, "unit")), "Gb/s");
	}
	ck_assert(seen);
	json_decref(j);
}
END_TEST

/*
 * 20k rows on four devices whose model only the last row of each records,
 * and 5k rows sharing one id: each row used to scan every other (19 s for
 * 20k rows), past check's 4 s test timeout; indexed, it is well under.
 * The answers must stay those of the scan: the device's model from any row
 * of it, and the first of equal ids in document order.
 */
START_TEST(many_rows)
{
	enum { N = 20000, DUPS = 5000 };
	struct { char *buf; size_t len; } t[2] = { { 0 } };

	for (int side = 0; side < 2; side++) {
		FILE *fp = open_memstream(&t[side].buf, &t[side].len);

		for (int i = 0; i < N; i++) {
			const char *model = i >= N - 4 ? (side ? "ConnectX-7" : "ConnectX-6") : NULL;
			int dup = i < DUPS;

			fprintf(fp, "%s{\"id\": \"%s%d\", \"case\": \"c\", \"device\": \"mlx5_%d\", "
				"\"verdict\": \"%s\"%s%s%s, \"figures\": [{\"name\": \"bw_avg\", "
				"\"value\": 100, \"unit\": \"Gb/s\"}]}", i ? "," : "",
				dup ? "dup" : "r", dup ? 0 : i, i % 4,
				dup && i == 0 && side ? "FAIL" : "PASS",
				model ? ", \"facts\": {\"model\": \"" : "", model ? model : "", model ? "\"}" : "");
		}
		fclose(fp);
	}
	run_cmp(doc(NULL, t[0].buf), doc(NULL, t[1].buf));
	/* the model differs on every device: no figure judged, each warned */
	ck_assert(find(CMP_WARNING, "r5000", "model"));
	ck_assert_uint_eq(rep.count[CMP_FIG_WORSE] + rep.count[CMP_FIG_BETTER], 0);
	/* of the 5000 "dup0" rows the first is compared: PASS -> FAIL */
	ck_assert(find(CMP_WARNING, "dup0", NULL));
	ck_assert_uint_eq(rep.regressions, 1);
	ck_assert_uint_eq(rep.matched, N - DUPS + 1);
	free(t[0].buf);
	free(t[1].buf);
}
END_TEST

/* Rows with one figure each, named id, values v[0..n-1]: a run with repeated rows. */
static char *rows_of(const char *id, const double *v, size_t n)
{
	struct { char *buf; size_t len; } t = { 0 };
	FILE *fp = open_memstream(&t.buf, &t.len);

	for (size_t i = 0; i < n; i++) {
		char *f = fig("bw_avg", v[i], "Gb/s"), *r = row(id, "PASS", f);

		fprintf(fp, "%s%s", i ? ", " : "", r);
		free(f);
		free(r);
	}
	fclose(fp);
	return t.buf;
}

START_TEST(noise)
{
	static const double b[] = { 100, 60, 140, 90, 120, 75 };
	static const double a[] = { 70, 42, 98, 63, 84, 52 };	/* 30 % lower, as noisy */
	static const double tb[] = { 100, 101, 99, 100.5, 99.5, 100.2 };
	static const double ta[] = { 70, 70.7, 69.3, 70.4, 69.7, 70.1 };
	const struct cmp_finding *f;
	char *rb, *ra;

	/* Repeated rows are the samples: 30 % lower inside +-40 % noise is not a verdict. */
	rb = rows_of("r", b, 6);
	ra = rows_of("r", a, 6);
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_UNSURE, "r", "bw_avg")));
	ck_assert(!f->regression);
	ck_assert_uint_eq(f->nb, 6);
	ck_assert_ptr_nonnull(strstr(f->msg, "inconclusive: -30.0% ±"));
	ck_assert_uint_eq(rep.regressions, 0);
	/* --strict fails it. */
	opts.strict = true;
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_UNSURE, "r", "bw_avg")) && f->regression);
	ck_assert_uint_eq(rep.regressions, 1);
	opts.strict = false;
	/* --absolute judges the medians' change alone. */
	opts.absolute = true;
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_WORSE, "r", "bw_avg")) && f->regression);
	ck_assert_str_eq(f->method, "absolute");
	opts.absolute = false;
	free(rb);
	free(ra);

	/* The same change in little noise is a regression, with its interval. */
	rb = rows_of("r", tb, 6);
	ra = rows_of("r", ta, 6);
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_WORSE, "r", "bw_avg")) && f->regression);
	ck_assert(f->hi_pct < -25 && f->lo_pct > -35);
	ck_assert(f->p_value < 0.01);
	ck_assert_ptr_nonnull(strstr(f->msg, "worse by 30.0% (tolerance 5%), 95% interval"));
	json_t *j = cmp_report_json(&rep, &opts);
	bool seen = false;
	size_t i;
	json_t *x;

	json_array_foreach(json_object_get(j, "findings"), i, x)
		if (!strcmp(json_string_value(json_object_get(x, "type")), "figure_worse")) {
			seen = true;
			ck_assert_int_eq(json_integer_value(json_object_get(x, "n_before")), 6);
			ck_assert_str_eq(json_string_value(json_object_get(x, "method")), "bootstrap");
			ck_assert_int_eq(json_array_size(json_object_get(x, "interval_pct")), 2);
		}
	ck_assert(seen);
	ck_assert(json_is_number(json_object_get(json_object_get(j, "options"), "confidence")));
	json_decref(j);
	free(rb);
	free(ra);

	/* One value a side: compare's fixed limit, unless noise is required. */
	cmp_fig("bw_avg", 100, 70, "Gb/s");
	ck_assert(find(CMP_FIG_WORSE, NULL, "bw_avg"));
	opts.single_absolute = false;
	cmp_fig("bw_avg", 100, 70, "Gb/s");
	ck_assert((f = find(CMP_FIG_UNSURE, NULL, "bw_avg")) && !f->regression);
	ck_assert_ptr_nonnull(strstr(f->msg, "no noise measured (n=1/1)"));
}
END_TEST

/* n rows of one id and kind, each with two figures 30 % apart between the sides. */
static char *kind_rows_j(const char *id, const char *kind, const char *judge, const char *f1, const char *f2,
			 const char *unit, double scale, size_t n)
{
	struct { char *buf; size_t len; } t = { 0 };
	FILE *fp = open_memstream(&t.buf, &t.len);

	for (size_t i = 0; i < n; i++) {
		double v = scale * (100 + (double)(i % 3) - 1);

		fprintf(fp, "%s{\"id\": \"%s\", \"case\": \"c\", \"kind\": \"%s\", %s%s%s\"verdict\": \"PASS\", "
			"\"target\": \"rxe-vm\", \"figures\": [{\"name\": \"%s\", \"value\": %.17g, \"unit\": \"%s\"}, "
			"{\"name\": \"%s\", \"value\": %.17g, \"unit\": \"%s\"}]}", i ? ", " : "", id, kind,
			judge ? "\"judge\": \"" : "", judge ? judge : "", judge ? "\", " : "", f1, v, unit, f2, v * 2,
			unit);
	}
	fclose(fp);
	return t.buf;
}

static char *kind_rows(const char *id, const char *kind, const char *f1, const char *f2, const char *unit,
		       double scale, size_t n)
{
	return kind_rows_j(id, kind, NULL, f1, f2, unit, scale, n);
}

/*
 * By default only a kind's key figures are judged (rq_kind.key_figures), so
 * that the confidence is shared by a handful of figures, not by every one a
 * row carries; the others are reported.  --all-figures judges them all.
 */
START_TEST(key_figures)
{
	const struct cmp_finding *f;
	char *rb, *ra;

	ck_assert(cmp_key_figure("verbs-pingpong", NULL, "lat_min"));
	ck_assert(cmp_key_figure("verbs-pingpong", NULL, "lat_median"));
	ck_assert(!cmp_key_figure("verbs-pingpong", NULL, "lat_p99"));
	ck_assert(cmp_key_figure("bandwidth", NULL, "bw_64KiB"));
	ck_assert(!cmp_key_figure("bandwidth", NULL, "msg_rate_64KiB"));
	ck_assert(cmp_key_figure("perftest", NULL, "t_typical"));
	ck_assert(!cmp_key_figure("perftest", NULL, "bw_peak"));
	/* A kind naming none, one this program does not know, no kind: every figure. */
	ck_assert(cmp_key_figure("driver", NULL, "anything"));
	ck_assert(cmp_key_figure("no-such-kind", NULL, "lat_p99"));
	ck_assert(cmp_key_figure(NULL, NULL, "lat_p99"));

	/* Both figures 30 % slower in little noise: the key one is a regression at 95 %, m=1. */
	rb = kind_rows("pp[rxe0/1]", "verbs-pingpong", "lat_min", "lat_p99", "us", 1, 6);
	ra = kind_rows("pp[rxe0/1]", "verbs-pingpong", "lat_min", "lat_p99", "us", 1.3, 6);
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_WORSE, "pp[rxe0/1]", "lat_min")) && f->regression);
	ck_assert(fabs(f->confidence - 0.95) < 1e-12);
	ck_assert((f = find(CMP_FIG_UNJUDGED, "pp[rxe0/1]", "lat_p99")) && !f->regression);
	ck_assert_str_eq(f->msg, "not judged: not a key figure of verbs-pingpong (--all-figures judges it)");
	ck_assert_uint_eq(rep.regressions, 1);
	/* --all-figures: both judged, each at 97.5 % (Bonferroni over two). */
	opts.all_figures = true;
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_WORSE, "pp[rxe0/1]", "lat_min")) && fabs(f->confidence - 0.975) < 1e-12);
	ck_assert((f = find(CMP_FIG_WORSE, "pp[rxe0/1]", "lat_p99")) && f->regression);
	ck_assert_uint_eq(rep.regressions, 2);
	json_t *j = cmp_report_json(&rep, &opts);

	ck_assert(json_is_true(json_object_get(json_object_get(j, "options"), "all_figures")));
	json_decref(j);
	opts.all_figures = false;
	free(rb);
	free(ra);

	/* bandwidth: bw_SIZE is judged, msg_rate_SIZE (the same change) reported. */
	rb = kind_rows("bw[rxe0/1]", "bandwidth", "bw_64KiB", "msg_rate_64KiB", "Gb/s", 1, 6);
	ra = kind_rows("bw[rxe0/1]", "bandwidth", "bw_64KiB", "msg_rate_64KiB", "Gb/s", 0.7, 6);
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert(find(CMP_FIG_WORSE, "bw[rxe0/1]", "bw_64KiB"));
	ck_assert(find(CMP_FIG_UNJUDGED, "bw[rxe0/1]", "msg_rate_64KiB"));
	ck_assert_uint_eq(rep.regressions, 1);
	free(rb);
	free(ra);
}
END_TEST

/*
 * A case's judge: names the figures judged in place of its kind's key
 * figures: lat_p99 judged, lat_min (a key figure of the kind) reported.
 */
START_TEST(case_judge_overrides_kind)
{
	const struct cmp_finding *f;
	char *rb, *ra;

	ck_assert(cmp_key_figure("verbs-pingpong", "lat_p99 bw_*", "lat_p99"));
	ck_assert(cmp_key_figure("verbs-pingpong", "lat_p99 bw_*", "bw_4KiB"));
	ck_assert(!cmp_key_figure("verbs-pingpong", "lat_p99 bw_*", "lat_min"));
	/* An empty list judges nothing, unlike no list. */
	ck_assert(!cmp_key_figure("verbs-pingpong", "", "lat_min"));

	rb = kind_rows_j("pp[rxe0/1]", "verbs-pingpong", "lat_p99", "lat_min", "lat_p99", "us", 1, 6);
	ra = kind_rows_j("pp[rxe0/1]", "verbs-pingpong", "lat_p99", "lat_min", "lat_p99", "us", 1.3, 6);
	run_cmp(doc(NULL, rb), doc(NULL, ra));
	ck_assert((f = find(CMP_FIG_WORSE, "pp[rxe0/1]", "lat_p99")) && f->regression);
	ck_assert((f = find(CMP_FIG_UNJUDGED, "pp[rxe0/1]", "lat_min")) && !f->regression);
	ck_assert_str_eq(f->msg, "not judged: not a key figure of the case (judge: lat_p99; --all-figures judges it)");
	ck_assert_uint_eq(rep.regressions, 1);
	free(rb);
	free(ra);
}
END_TEST

START_TEST(bad_rates_refused)
{
	char *fb = fig("bw_avg", 10, "Gb/s"), *fa = fig("bw_avg", -1, "Gb/s");
	char *rb = row("bw.w[mlx5_0/1]", "PASS", fb), *ra = row("bw.w[mlx5_0/1]", "PASS", fa);
	json_t *d = doc(NULL, ra);
	char err[300];

	ck_assert_int_eq(cmp_check_doc(d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "results[0] (bw.w[mlx5_0/1]): figure bw_avg: value -1 Gb/s is negative "
				    "where a rate is expected"));
	json_decref(d);
	d = doc(NULL, "{\"id\": \"x\", \"case\": \"x\", \"verdict\": \"PASS\", \"figures\": [{\"name\": "
		"\"bw\", \"value\": 1, \"unit\": \"Gb/s\", \"spread\": {\"samples\": [1, null]}}]}");
	ck_assert_int_eq(cmp_check_doc(d, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "results[0] (x): figure bw: sample 2 is not a finite number"));
	json_decref(d);
	/* A negative time is an offset, not refused. */
	d = doc(NULL, "{\"id\": \"x\", \"case\": \"x\", \"verdict\": \"PASS\", \"figures\": [{\"name\": "
		"\"skew\", \"value\": -3, \"unit\": \"us\"}]}");
	ck_assert_int_eq(cmp_check_doc(d, err, sizeof(err)), 0);
	json_decref(d);
	ck_assert_int_eq(cmp_opts_confidence(&opts, "0.5", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(cmp_opts_confidence(&opts, "0.999", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(cmp_opts_confidence(&opts, "99%", err, sizeof(err)), 0);
	ck_assert(fabs(opts.confidence - 0.99) < 1e-12);
	free(fb);
	free(fa);
	free(rb);
	free(ra);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, noise);
	tcase_add_test(tc, key_figures);
	tcase_add_test(tc, case_judge_overrides_kind);
	tcase_add_test(tc, bad_rates_refused);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tolerance_args);
	tcase_add_test(tc, direction);
	tcase_add_test(tc, verdicts);
	tcase_add_test(tc, tolerance_edges);
	tcase_add_test(tc, figures_unjudged);
	tcase_add_test(tc, different_targets);
	tcase_add_test(tc, different_hca);
	tcase_add_test(tc, facts);
	tcase_add_test(tc, bad_documents);
	tcase_add_test(tc, warnings);
	tcase_add_test(tc, json_document);
	/* Its own 10 s bound (the scan took 19 s; indexed, about 1 s under ASan). */
	TCase *big = tcase_create("many rows");

	tcase_add_checked_fixture(big, setup, teardown);
	tcase_set_timeout(big, 10);
	tcase_add_test(big, many_rows);
	suite_add_tcase(s, big);
}

RQ_CHECK_MAIN("compare", add_tests)
