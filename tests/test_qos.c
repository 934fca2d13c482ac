/* SPDX-License-Identifier: MIT */
/*
 * qos-policy.conf lint and opensm's qos_* tables (src/parsers/qos_policy.c):
 * the real policies of opensm's documentation lint clean (read in place
 * from ../shared/real-outputs, skipped when absent), each mistake is named
 * at its line and column, and the tables opensm programs come out of
 * opensm.conf's options with opensm's fallbacks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parsers/partitions.h"
#include "fabric/pkeys.h"
#include "parsers/qos_policy.h"
#include "fabric/qos.h"
#include "real_outputs.h"
#include "check_main.h"

/* Lint text; return the diagnostics as "L:C: msg" lines (errors and warnings). */
static int lint(const char *text, int vlcap, struct sb *out)
{
	struct qos_policy p;
	struct qos_lint_opts o = { .vlcap = vlcap };
	int ret = qos_policy_lint(text, strlen(text), &o, &p);

	for (size_t i = 0; i < p.nd; i++)
		sb_addf(out, "%u:%u: %s%s\n", p.d[i].line, p.d[i].col, p.d[i].warning ? "warning: " : "", p.d[i].msg);
	qos_policy_release(&p);
	return ret;
}

#define HAS(sb, s) ck_assert_msg(strstr((sb).buf, s), "missing \"%s\" in:\n%s", s, (sb).buf)

START_TEST(real_policies_lint_clean)
{
	static const char *const files[] = {
		"opensm-qos/qos-policy-full-example-opensm-doc.txt",
		"opensm-qos/qos-policy-simplified-qos-ulps-all-keywords-opensm-doc.txt",
	};
	unsigned seen = 0;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct sb text = SB_INIT;
		struct qos_policy p;

		if (!real_sample(files[i], &text))
			continue;
		seen++;
		ck_assert_msg(qos_policy_lint(text.buf, text.len, NULL, &p) == 0, "%s: %u errors, first %u:%u %s",
			      files[i], p.errors, p.nd ? p.d[0].line : 0, p.nd ? p.d[0].col : 0, p.nd ? p.d[0].msg : "");
		ck_assert_uint_eq(p.nd, 0);
		if (i == 0) {
			/* the sample's expect: 4 port groups, 2 levels, 4 match rules */
			ck_assert_uint_eq(p.port_groups, 4);
			ck_assert_uint_eq(p.qos_levels, 2);
			ck_assert_uint_eq(p.match_rules, 4);
		} else {
			ck_assert_uint_eq(p.ulp_rules, 15);	/* default + 14 */
		}
		qos_policy_release(&p);
		sb_release(&text);
	}
	if (!seen)
		fprintf(stderr, "SKIP real policies: ../shared/real-outputs absent\n");
}
END_TEST

START_TEST(each_mistake_named_at_line_and_column)
{
	struct sb d = SB_INIT;
	const char *policy =
		"port-groups\n"				/* 1 */
		"    port-group\n"			/* 2 */
		"        name: Storage\n"		/* 3 */
		"        prot-guid: 0x1\n"		/* 4: unknown keyword */
		"        sl: 3\n"			/* 5: keyword of qos-level */
		"        node-type: CA, HUB\n"		/* 6: bad node type */
		"        port-name: h1 HCA-1\n"		/* 7: no /P */
		"    end-port-group\n"			/* 8 */
		"    port-group\n"			/* 9 */
		"        name: Storage\n"		/* 10: duplicate */
		"    end-port-group\n"			/* 11 */
		"end-port-groups\n"			/* 12 */
		"qos-levels\n"				/* 13 */
		"    qos-level\n"			/* 14 */
		"        name: DEFAULT\n"		/* 15 */
		"        sl: 16\n"			/* 16: SL out of range */
		"        mtu-limit: 6\n"		/* 17 */
		"    end-qos-level\n"			/* 18 */
		"end-qos-levels\n"			/* 19 */
		"qos-match-rules\n"			/* 20 */
		"    qos-match-rule\n"			/* 21 */
		"        source: Storage, Stroage\n"	/* 22: undefined group */
		"        qos-level-name: Gold\n"	/* 23: undefined level */
		"    end-qos-match-rule\n"		/* 24 */
		"end-qos-match-rules\n"			/* 25 */
		"qos-setup\n"				/* 26 */
		"  sl2vl-tables\n"			/* 27: warning */
		"    sl2vl-scope\n"			/* 28 */
		"      group: Storage\n"		/* 29 */
		"      sl2vl-table: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"	/* 30: VL 8+ > VL0-7 */
		"    end-sl2vl-scope\n"			/* 31 */
		"  end-sl2vl-tables\n"			/* 32 */
		"  vlarb-tables\n"			/* 33 */
		"    vlarb-scope\n"			/* 34 */
		"      vlarb-high: 0:4, 9:2, 1:300\n"	/* 35 */
		"    end-vlarb-scope\n"			/* 36 */
		"  end-vlarb-tables\n"			/* 37 */
		"end-qos-setup\n"			/* 38 */
		"qos-ulps\n"				/* 39 */
		"    default : 0\n"			/* 40 */
		"    sdp, port-num 70000 : 1\n"		/* 41 */
		"    nfs : 2\n"				/* 42 */
		"    ipoib : 17\n"			/* 43 */
		"    port-group\n";			/* 44: not closed at EOF: qos-ulps; this is a rule */

	ck_assert_int_eq(lint(policy, 8, &d), -EINVAL);
	HAS(d, "4:9: unknown keyword 'prot-guid' in port-group (expected name, use, port-guid");
	HAS(d, "5:9: misplaced keyword 'sl' in port-group");
	HAS(d, "6:24: node-type: \"HUB\" is not CA, SWITCH, ROUTER, ALL or SELF");
	HAS(d, "7:20: port-name: \"h1 HCA-1\" is not NODE-DESCRIPTION/PN");
	HAS(d, "10:15: port-group \"Storage\" defined twice (first at line 3)");
	HAS(d, "16:13: sl: 16 is out of range (an SL is 0 to 15)");
	HAS(d, "17:20: mtu-limit: 6 is out of range");
	HAS(d, "22:26: port-group \"Stroage\" is used but not defined");
	HAS(d, "23:25: qos-level \"Gold\" is used but not defined");
	HAS(d, "27:3: warning: opensm parses sl2vl-tables and ignores it");
	HAS(d, "30:36: sl2vl-table: VL 8 is beyond the ports' VLCap (VL0-7)");
	HAS(d, "35:24: vlarb-high: VL 9 is beyond the ports' VLCap (VL0-7)");
	HAS(d, "35:31: vlarb-high: weight 300 is beyond 255");
	HAS(d, "41:19: port-num: 70000 is beyond 0xffff");
	HAS(d, "42:5: unknown ULP \"nfs\"");
	HAS(d, "43:13: qos-ulps: SL 17 is out of range");
	HAS(d, "39:1: qos-ulps is not closed (end-qos-ulps missing)");
	/* the VL 15 of an SL2VL table is the drop VL: not an error */
	ck_assert_ptr_null(strstr(d.buf, "VL 15"));
	sb_release(&d);
}
END_TEST

START_TEST(structure_mistakes)
{
	struct sb d = SB_INIT;

	ck_assert_int_eq(lint("port-group\n  name: a\nend-port-group\n", 0, &d), -EINVAL);
	HAS(d, "1:1: 'port-group' outside port-groups");
	HAS(d, "3:1: 'end-port-group' without port-group");
	HAS(d, "1:1: no qos-level named DEFAULT");
	sb_reset(&d);
	ck_assert_int_eq(lint("qos-levels\n qos-level\n  name: default\n end-qos-levels\n", 0, &d), -EINVAL);
	HAS(d, "4:2: 'end-qos-levels' while qos-level (line 2) is open");
	HAS(d, "2:2: qos-level is not closed");
	sb_reset(&d);
	ck_assert_int_eq(lint("qos-levels\n qos-level\n  use: x\n end-qos-level\nend-qos-levels\nqos-ulps\n default: 0\nend-qos-ulps\n",
			      0, &d), -EINVAL);
	HAS(d, "2:2: qos-level without a name");
	HAS(d, "2:2: qos-level without an sl");
	sb_reset(&d);
	ck_assert_int_eq(lint("qos-ulps\n  default : 0\n  srp : 2\n  any : 3\n  iser, pkey 1 : 1\nend-qos-ulps\nbogus\n", 0, &d),
			 -EINVAL);
	HAS(d, "3:3: qos-ulps: srp needs a qualifier (target-port-guid)");
	HAS(d, "4:3: qos-ulps: any needs a qualifier");
	HAS(d, "5:9: qos-ulps: \"pkey\" is not a qualifier of iser (port-num)");
	HAS(d, "7:1: unknown keyword 'bogus' (sections:");
	sb_reset(&d);
	/* An empty qualifier ("srp, :"): an error, not a loop (found by fuzz_parsers) */
	ck_assert_int_eq(lint("qos-ulps\n  default : 0\n  srp, : 5\nend-qos-ulps\n", 0, &d), -EINVAL);
	HAS(d, "3:8: qos-ulps: \"\" is not a qualifier of srp (target-port-guid)");
	sb_reset(&d);
	/* the smallest valid policies */
	ck_assert_int_eq(lint("qos-ulps\n  default : 0   # all\nend-qos-ulps\n", 0, &d), 0);
	ck_assert_int_eq(lint("qos-levels\n  qos-level\n    name: DEFAULT\n    sl: 0\n  end-qos-level\nend-qos-levels\n", 0, &d), 0);
	ck_assert_str_eq(d.buf, "");
	sb_release(&d);
}
END_TEST

START_TEST(tables_from_opensm_conf)
{
	struct qos_tables t;
	struct sb conf = SB_INIT;
	char err[256];
	static const uint8_t want[16] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2 };

	/* opensm's defaults without a file */
	ck_assert_int_eq(qos_tables_build(NULL, 0, QOS_CA, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.sl2vl[15], 7);
	ck_assert_uint_eq(t.sl2vl[14], 14);
	ck_assert_uint_eq(t.high_vl[0], 0);
	ck_assert_uint_eq(t.high_w[0], 4);
	ck_assert_uint_eq(t.low_vl[1], 1);
	ck_assert_uint_eq(t.low_w[1], 4);
	ck_assert_str_eq(t.src_sl2vl, "opensm's default");
	/* the tutorial's opensm.conf, read in place */
	if (real_sample("opensm-qos/opensm-conf-qos-fragment-ibsim-tutorial.txt", &conf)) {
		ck_assert(qos_conf_enabled(conf.buf, conf.len));
		ck_assert_int_eq(qos_tables_build(conf.buf, conf.len, QOS_SWE, &t, err, sizeof(err)), 0);
		ck_assert_mem_eq(t.sl2vl, want, 16);
		ck_assert_str_eq(t.src_sl2vl, "qos_sl2vl");
		ck_assert_uint_eq(t.high_vl[0], 0);
		ck_assert_uint_eq(t.high_w[0], 4);
		ck_assert_uint_eq(t.high_w[1], 0);
		ck_assert_uint_eq(t.low_vl[0], 1);
		ck_assert_uint_eq(t.low_w[0], 28);
		ck_assert_uint_eq(t.low_vl[1], 2);
		ck_assert_uint_eq(t.low_w[1], 4);
		ck_assert_int_eq(t.high_limit, 4);
	}
	sb_release(&conf);
	/* a type's own option first, the generic one after */
	const char *c2 = "qos TRUE\nqos_sl2vl 0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1\nqos_ca_sl2vl 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n"
			 "qos_swe_vlarb_low (null)\n";

	ck_assert_int_eq(qos_tables_build(c2, strlen(c2), QOS_CA, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.sl2vl[0], 1);
	ck_assert_str_eq(t.src_sl2vl, "qos_ca_sl2vl");
	ck_assert_int_eq(qos_tables_build(c2, strlen(c2), QOS_SWE, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.sl2vl[0], 0);
	ck_assert_uint_eq(t.sl2vl[8], 1);
	ck_assert_str_eq(t.src_low, "opensm's default");
	/* a value opensm would read as zeros is refused, naming the line */
	const char *c3 = "qos TRUE\n\nqos_vlarb_low 1:28,2\n";

	ck_assert_int_eq(qos_tables_build(c3, strlen(c3), QOS_CA, &t, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "line 3: qos_vlarb_low: \"2\" is not VL:WEIGHT"), "%s", err);
	ck_assert(!qos_conf_enabled("qos FALSE\n", 10));
}
END_TEST

START_TEST(partitions_and_pkey_tables)
{
	struct partitions p;
	uint16_t k[16];
	const char *names[16];
	size_t n;
	char err[256];
	const char *conf =
		"# partitions\n"
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"storage=0x0002, rate=7 : 0x0002c90300000011=full,\n"
		"    0x0002c90300000021 ;   # limited by default\n"
		"gpu=0x8003, defmember=full : 0x0002c90300000021, mgid=ff12:401b::1 ;\n";

	ck_assert_msg(partitions_parse(conf, strlen(conf), &p, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(p.n, 3);
	ck_assert_uint_eq(p.v[1].line, 3);
	ck_assert_uint_eq(p.v[2].pkey, 0x0003);	/* the membership bit is not the key */
	n = partitions_port_pkeys(&p, 0x0002c90300000011, false, k, names, 16);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(k[0], 0x8002);
	ck_assert_str_eq(names[0], "storage");
	ck_assert_uint_eq(k[1], 0xffff);
	n = partitions_port_pkeys(&p, 0x0002c90300000021, false, k, NULL, 16);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(k[0], 0x0002);
	ck_assert_uint_eq(k[1], 0x8003);
	ck_assert_uint_eq(k[2], 0xffff);
	partitions_release(&p);
	/* opensm without a file: Default, full; with one that does not say ALL=full: limited, the SM full */
	ck_assert_uint_eq(partitions_port_pkeys(NULL, 1, false, k, NULL, 16), 1);
	ck_assert_uint_eq(k[0], 0xffff);
	ck_assert_int_eq(partitions_parse("a=0x10 : ALL_CAS ;", 18, &p, err, sizeof(err)), 0);
	n = partitions_port_pkeys(&p, 5, false, k, NULL, 16);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(k[0], 0x0010);
	ck_assert_uint_eq(k[1], 0x7fff);
	ck_assert_uint_eq(partitions_port_pkeys(&p, 5, true, k, NULL, 16), 2);
	ck_assert_uint_eq(k[1], 0xffff);
	unsigned line;

	ck_assert(!partitions_sm_limited(&p, 5, &line));
	partitions_release(&p);
	/* a partition without a P_Key: opensm's number, the lowest no partition has */
	ck_assert_int_eq(partitions_parse("a=0x1 : ALL ;\nx : ALL ;\na : ALL ;", 33, &p, err, sizeof(err)), 0);
	ck_assert(!p.rejected);
	ck_assert_uint_eq(p.v[1].pkey, 0x0002);
	ck_assert(p.v[1].numbered);
	ck_assert_uint_eq(p.v[2].pkey, 0x0001);	/* found by its name */
	partitions_release(&p);
	/* words by prefix and case, as osm_prtn_config.c matches them (strncmp(word, "full", strlen(word))) */
	const char *pre = "Default=0x7fff : ALL=ful ;\n"
			  "s=0x2, defmem=full : 0x11=limi, 0x21, 0x31=FULL, 0x41=Full ;\n";

	ck_assert_int_eq(partitions_parse(pre, strlen(pre), &p, err, sizeof(err)), 0);
	ck_assert(!p.rejected);
	ck_assert(p.v[0].m[0].full);
	ck_assert(!p.v[1].m[0].full);	/* =limi */
	ck_assert(p.v[1].m[1].full);	/* defmem= is defmember=, full */
	ck_assert(!p.v[1].m[2].full);	/* =FULL: no flag opensm knows, limited */
	ck_assert(!p.v[1].m[3].full);
	ck_assert_uint_eq(p.nnotes, 2);
	ck_assert_msg(strstr(p.notes, "line 2: membership flag 'FULL' is not one opensm knows"), "%s", p.notes);
	n = partitions_port_pkeys(&p, 0x31, false, k, NULL, 16);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(k[0], 0x0002);
	ck_assert_uint_eq(k[1], 0xffff);
	partitions_release(&p);
	/* the SM's port made limited: Default without a flag (the man page's ALL, SELF=full names it full again) */
	ck_assert_int_eq(partitions_parse("Default=0x7fff : ALL ;\n", 23, &p, err, sizeof(err)), 0);
	ck_assert(partitions_sm_limited(&p, 0x11, &line));
	ck_assert_uint_eq(line, 1);
	ck_assert_uint_eq(partitions_port_pkeys(&p, 0x11, true, k, NULL, 16), 1);
	ck_assert_uint_eq(k[0], 0x7fff);
	partitions_release(&p);
	ck_assert_int_eq(partitions_parse("Default=0x7fff : ALL, SELF=full ;", 33, &p, err, sizeof(err)), 0);
	ck_assert(!partitions_sm_limited(&p, 0x11, &line));
	partitions_release(&p);
	/* the documentation's multicast example: an mgid entry takes the rest of its line */
	const char *mc = "Default=0x7fff,ipoib:\n"
			 "        mgid=ff12:401b::0707,sl=1 # random IPv4 group\n"
			 "        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group\n"
			 "        ALL=full;\n";

	ck_assert_int_eq(partitions_parse(mc, strlen(mc), &p, err, sizeof(err)), 0);
	ck_assert(!p.rejected);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_uint_eq(p.v[0].nm, 1);
	ck_assert(p.v[0].m[0].full);
	partitions_release(&p);
	/* a missing final ';' is no mistake to opensm: the statement ends with the file */
	ck_assert_int_eq(partitions_parse("a=0x1 : ALL\n", 12, &p, err, sizeof(err)), 0);
	ck_assert(!p.rejected);
	ck_assert_uint_eq(p.v[0].nm, 1);
	partitions_release(&p);
	/* files opensm refuses, and then runs its defaults: every port full in Default only */
	static const struct {
		const char *text, *why;
	} refused[] = {
		{ "a=0x1 : h01=full ;", "line 1: bad PortGUID" },
		{ "\nx=0x1z : ALL ;", "line 2: bad partition definition" },
		{ "x=0x1 ALL ;", "line 1: no partition definition found" },
		{ "Default=0x7fff : ALL=full ;\r\n", "line 1: no partition definition found" },	/* '\r' is no blank */
		{ "# nothing\n\n", "line 2: no partition statement (the file is empty)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		ck_assert_int_eq(partitions_parse(refused[i].text, strlen(refused[i].text), &p, err, sizeof(err)), 0);
		ck_assert_msg(p.rejected, "%s", refused[i].text);
		ck_assert_str_eq(p.why, refused[i].why);
		ck_assert_uint_eq(partitions_port_pkeys(&p, 0x11, false, k, NULL, 16), 1);
		ck_assert_uint_eq(k[0], 0xffff);
		partitions_release(&p);
	}
	/* smpquery pkeys as ibsim answered it after opensm -P (umad2sim's ibwarn line first) */
	const char *out = "ibwarn: [1] sim_connect: attached as client 2 at node \"Switch1\"\n"
			  "   0: 0xffff 0x8002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n"
			  "   8: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n"
			  "64 pkeys capacity for this port\n";

	ck_assert_int_eq(pkeys_parse(out, strlen(out), k, 16, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(k[1], 0x8002);
	ck_assert_int_eq(pkeys_parse("64 pkeys capacity\n", 18, k, 16, &n, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pkeys_parse("   0: 0xffff 0x1ffff\n", 21, k, 16, &n, err, sizeof(err)), -EINVAL);
}
END_TEST

/*
 * Blanks in bulk are read in linear time: 100,000 '\r' took 3.2 s and
 * 10 MB over a minute when every character rescanned the statement so far
 * (quadratic); libcheck's timeout stops a parse that is quadratic again.
 */
START_TEST(partitions_blanks_linear)
{
	size_t len = 4u << 20;
	char *text = xmalloc(len);
	struct partitions p;
	char err[256];

	for (size_t i = 0; i < len; i++)
		text[i] = " \t\n"[i % 3];
	ck_assert_int_eq(partitions_parse(text, len, &p, err, sizeof(err)), 0);
	ck_assert(p.rejected);
	ck_assert_str_eq(p.why, "line 1398102: no partition statement (the file is empty)");
	partitions_release(&p);
	/* a statement after them is read at its line */
	memcpy(text + len - 24, "Default=0x7fff:ALL=full;", 24);
	ck_assert_int_eq(partitions_parse(text, len, &p, err, sizeof(err)), 0);
	ck_assert(!p.rejected);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_uint_eq(p.v[0].line, 1398094);
	partitions_release(&p);
	/* '\r' is no blank to opensm: a megabyte of them is one statement without ':' */
	memset(text, '\r', 1u << 20);
	ck_assert_int_eq(partitions_parse(text, 1u << 20, &p, err, sizeof(err)), 0);
	ck_assert_str_eq(p.why, "line 1: no partition definition found");
	partitions_release(&p);
	free(text);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, partitions_and_pkey_tables);
	tcase_add_test(tc, partitions_blanks_linear);
	tcase_add_test(tc, real_policies_lint_clean);
	tcase_add_test(tc, each_mistake_named_at_line_and_column);
	tcase_add_test(tc, structure_mistakes);
	tcase_add_test(tc, tables_from_opensm_conf);
}

RQ_CHECK_MAIN("qos", add_tests)
