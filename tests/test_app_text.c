/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/kinds/app_text.c: placeholders of command-pair argv
 * and figures pulled out of output by NAME=REGEX rules, memlock: values.  The outputs are
 * the real ones the shipped cases/apps saw on rxe (qperf -uu, ucx_perftest
 * "Final:" lines, fi_pingpong's table), copied from a run's logs.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "kinds/app_text.h"
#include "check_main.h"

static const char *const vals[PH_COUNT] = {
	[PH_PEER_IP] = "10.77.0.2", [PH_PEER_HOST] = "vm1", [PH_DEV] = "rxe0",
	[PH_PORT] = "38488", [PH_GID_INDEX] = "1", [PH_NETDEV] = "eth0", [PH_IP] = "10.77.0.1",
};

START_TEST(expand_every_placeholder)
{
	char err[256];
	char *s = app_ph_expand("{peer_ip}:{port} {peer_host} {dev}/{gid_index}@{netdev} from {ip}",
				vals, NULL, err, sizeof(err));

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "10.77.0.2:38488 vm1 rxe0/1@eth0 from 10.77.0.1");
	free(s);
	/* UCX_NET_DEVICES={dev}:1 is the shape the ucx cases use */
	s = app_ph_expand("UCX_NET_DEVICES={dev}:1", vals, NULL, err, sizeof(err));
	ck_assert_str_eq(s, "UCX_NET_DEVICES=rxe0:1");
	free(s);
}
END_TEST

START_TEST(expand_literal_braces_and_plain_text)
{
	char err[256];
	char *s = app_ph_expand("{{json}} {{{port}}}", vals, NULL, err, sizeof(err));

	ck_assert_str_eq(s, "{json} {38488}");
	free(s);
	s = app_ph_expand("", vals, NULL, err, sizeof(err));
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(expand_missing_value_names_it)
{
	const char *v[PH_COUNT] = { [PH_PEER_IP] = "10.0.0.2" };
	const char *why[PH_COUNT] = { [PH_GID_INDEX] = "no RoCE v2 IPv4 GID" };
	char err[256];

	ck_assert_ptr_null(app_ph_expand("-x {gid_index}", v, why, err, sizeof(err)));
	ck_assert_str_eq(err, "cannot fill {gid_index}: no RoCE v2 IPv4 GID");
	ck_assert_ptr_null(app_ph_expand("{dev}", v, NULL, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "cannot fill {dev}"));
}
END_TEST

START_TEST(scan_reports_use_and_errors)
{
	unsigned used = 0;
	char err[256];

	ck_assert_int_eq(app_ph_scan("{peer_ip} {port} {port}", &used, err, sizeof(err)), 0);
	ck_assert_uint_eq(used, (1u << PH_PEER_IP) | (1u << PH_PORT));
	used = 0;
	ck_assert_int_eq(app_ph_scan("{{peer_ip}}", &used, err, sizeof(err)), 0);
	ck_assert_uint_eq(used, 0);
	ck_assert_int_eq(app_ph_scan("{peer}", &used, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown placeholder {peer}"));
	ck_assert_int_eq(app_ph_scan("a{port", &used, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "without its"));
	ck_assert_int_eq(app_ph_scan("a}b", &used, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "lone"));
}
END_TEST

static double apply(const char *rule, const char *text, int want_rc)
{
	struct app_fig_rule r;
	char err[256];
	double v = -1;

	ck_assert_int_eq(app_fig_rule_parse(rule, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(app_fig_rule_apply(&r, text, &v, err, sizeof(err)), want_rc);
	app_fig_rule_release(&r);
	return v;
}

START_TEST(regex_figures_from_real_outputs)
{
	static const char qperf[] = "rc_bw:\n    bw  =  10223616 bytes/sec\nrc_lat:\n"
				    "    latency  =  1357773 ns\n";
	static const char ucx[] =
		"[thread 0]                50     27.000 22934.079 22934.079        2.73       2.73          44          44\n"
		"Final:                   200  11764.000 58207.835 30807.760        1.07       2.03          17          32\n";
	static const char fi[] =
		"bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"
		"4k      200     =200     1.6m        5.41s      0.30   13536.15       0.00\n";
	struct app_fig_rule r;
	char err[256];

	ck_assert_double_eq(apply("rc_bw[B/s]=bw += +([0-9.]+) bytes/sec", qperf, 0), 10223616);
	ck_assert_double_eq(apply("rc_lat[ns]=latency += +([0-9.]+) ns", qperf, 0), 1357773);
	ck_assert_double_eq_tol(apply("bw[MB/s]=^Final:[[:space:]]+[0-9]+[[:space:]]+[0-9.]+[[:space:]]+"
				      "[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+([0-9.]+)",
				      ucx, 0), 2.03, 1e-9);
	ck_assert_double_eq_tol(apply("usec[us]=^[0-9]+[kmg]?[[:space:]]+[0-9]+[[:space:]]+=[0-9]+"
				      "[[:space:]]+[0-9.]+[kmg]?[[:space:]]+[0-9.]+s[[:space:]]+[0-9.]+"
				      "[[:space:]]+([0-9.]+)", fi, 0), 13536.15, 1e-9);
	/* the unit is kept, the name is the part before it */
	ck_assert_int_eq(app_fig_rule_parse("rc_bw[B/s]=bw = ([0-9]+)", &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.name, "rc_bw");
	ck_assert_str_eq(r.unit, "B/s");
	app_fig_rule_release(&r);
}
END_TEST

START_TEST(regex_last_match_counts)
{
	ck_assert_double_eq(apply("x=^x=([0-9]+)$", "x=1\nx=2\nx=3\n", 0), 3);
	/* ^ anchors at every line, not only at the start of the text */
	ck_assert_double_eq(apply("y=^y ([0-9]+)", "a y 9\ny 4\n", 0), 4);
}
END_TEST

START_TEST(regex_no_match_and_not_a_number)
{
	char err[256];
	struct app_fig_rule r;
	double v;

	apply("bw=bw = ([0-9.]+)", "nothing here\n", 1);
	ck_assert_int_eq(app_fig_rule_parse("bw=bw = ([a-z.]+)", &r, err, sizeof(err)), 0);
	ck_assert_int_eq(app_fig_rule_apply(&r, "bw = nan\n", &v, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "captured \"nan\", not a number"));
	ck_assert_int_eq(app_fig_rule_apply(&r, "bw = .\n", &v, err, sizeof(err)), -1);
	app_fig_rule_release(&r);
}
END_TEST

START_TEST(regex_rules_refused_at_load)
{
	struct app_fig_rule r;
	char err[256];

	ck_assert_int_eq(app_fig_rule_parse("no equals sign", &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "expected NAME=REGEX"));
	ck_assert_int_eq(app_fig_rule_parse("bad name=([0-9]+)", &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "the name must be"));
	ck_assert_int_eq(app_fig_rule_parse("x=[0-9]+", &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "exactly one (group)"));
	ck_assert_int_eq(app_fig_rule_parse("x=([0-9]+) ([0-9]+)", &r, err, sizeof(err)), -1);
	ck_assert_int_eq(app_fig_rule_parse("x=(", &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "bad regular expression"));
	ck_assert_int_eq(app_fig_rule_parse("x[MB/s=([0-9]+)", &r, err, sizeof(err)), -1);
}
END_TEST

START_TEST(memlock_values)
{
	bool unl;
	uint64_t b;
	char err[256];

	ck_assert_int_eq(app_memlock_parse("unlimited", &unl, &b, err, sizeof(err)), 0);
	ck_assert(unl);
	ck_assert_int_eq(app_memlock_parse("64MiB", &unl, &b, err, sizeof(err)), 0);
	ck_assert(!unl);
	ck_assert_uint_eq(b, 64u << 20);
	ck_assert_int_eq(app_memlock_parse("lots", &unl, &b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "neither a size (64MiB) nor unlimited"));
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, expand_every_placeholder);
	tcase_add_test(tc, expand_literal_braces_and_plain_text);
	tcase_add_test(tc, expand_missing_value_names_it);
	tcase_add_test(tc, scan_reports_use_and_errors);
	tcase_add_test(tc, regex_figures_from_real_outputs);
	tcase_add_test(tc, regex_last_match_counts);
	tcase_add_test(tc, regex_no_match_and_not_a_number);
	tcase_add_test(tc, regex_rules_refused_at_load);
	tcase_add_test(tc, memlock_values);
}

RQ_CHECK_MAIN("app_text", add_tests)
