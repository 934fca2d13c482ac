/* SPDX-License-Identifier: MIT */
/*
 * fabric-consistency's judgements on parsed text, where ibsim cannot plant
 * the fault: ibsim refuses a link whose ends enable different widths and
 * trains every link at the best both ends enable (sim_net.c
 * get_active_linkwidth), keeps no PartitionEnforcement bits, lets no tool
 * change a P_Key table, runs no IPoIB (nothing joins a multicast group) and
 * answers no vendor MAD.  The portinfo, pkeys and ibroute -M texts here are
 * written as infiniband-diags prints them (smpquery.c, ibroute.c dump_mlid),
 * with the fields of an ibsim capture and, for HDR, the speed lists a
 * ConnectX-6 and a Quantum switch report; the firmware versions are those
 * of the real ibdiagnet2 log's FW check (read in place).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/ibcheck.h"
#include "parsers/parse_ibdiag.h"
#include "core/util.h"
#include "real_outputs.h"
#include "check_main.h"

/* A PortInfo dump with the fields the link check reads. */
static void portinfo(struct ib_kvs *kv, const char *wen, const char *wsup, const char *wact, const char *ssup,
		     const char *sact, const char *xsup, const char *xact, const char *mtu, const char *mtucap,
		     const char *opvls)
{
	struct sb t = SB_INIT;
	char err[256];

	sb_addf(&t, "# Port info: Lid 2 port 1\n"
		"Mkey:............................<not displayed>\n"
		"LinkWidthEnabled:................%s\n"
		"LinkWidthSupported:..............%s\n"
		"LinkWidthActive:.................%s\n"
		"LinkSpeedSupported:..............%s\n"
		"LinkState:.......................Active\n"
		"PhysLinkState:...................LinkUp\n"
		"LinkSpeedActive:.................%s\n"
		"LinkSpeedEnabled:................%s\n"
		"NeighborMTU:.....................%s\n"
		"VLCap:...........................VL0-7\n"
		"MtuCap:..........................%s\n"
		"OperVLs:.........................%s\n"
		"PartEnforceInb:..................1\n"
		"PartEnforceOutb:.................1\n"
		"LinkSpeedExtActive:..............%s\n"
		"LinkSpeedExtSupported:...........%s\n"
		"LinkSpeedExtEnabled:.............%s\n",
		wen, wsup, wact, ssup, sact, ssup, mtu, mtucap, opvls, xact, xsup, xsup);
	ck_assert_int_eq(smpquery_parse(t.buf, t.len, kv, err, sizeof(err)), 0);
	sb_release(&t);
}

#define SDR_QDR "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"
#define FDR_HDR "14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps"
#define FDR_EDR "14.0625 Gbps or 25.78125 Gbps"

START_TEST(link_ends)
{
	struct ib_kvs a, b;
	struct sb msg = SB_INIT, caps = SB_INIT;

	/* healthy HDR link, and the ibsim QDR one as ibsim answers it (no extended speed) */
	portinfo(&a, "1X or 4X or 2X", "1X or 4X or 2X", "4X", SDR_QDR, "10.0 Gbps", FDR_HDR, "53.125 Gbps", "4096", "4096", "VL0-7");
	portinfo(&b, "1X or 4X or 2X", "1X or 4X or 2X", "4X", SDR_QDR, "10.0 Gbps", FDR_HDR, "53.125 Gbps", "4096", "4096", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "h1 port 1", &b, "leaf port 1", &msg, &caps), 0);
	ck_assert_msg(strstr(caps.buf, "h1 port 1: 4X 53.125 Gb/s MTU 4096 VL0-7"), "%s", caps.buf);
	ib_kvs_release(&a);
	ib_kvs_release(&b);
	portinfo(&a, "4X", "1X or 4X or 8X or 12X or 2X", "4X", SDR_QDR, "10.0 Gbps", "0", "No Extended Speed", "2048", "2048", "VL0-7");
	portinfo(&b, "4X", "1X or 4X or 8X or 12X or 2X", "4X", SDR_QDR, "10.0 Gbps", "0", "No Extended Speed", "2048", "2048", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "a", &b, "b", &msg, NULL), 0);
	ib_kvs_release(&a);
	ib_kvs_release(&b);

	/* an HDR HCA on an EDR switch runs EDR: the lesser end, no problem */
	portinfo(&a, "1X or 4X", "1X or 4X", "4X", SDR_QDR, "10.0 Gbps", FDR_HDR, "25.78125 Gbps", "4096", "4096", "VL0-7");
	portinfo(&b, "1X or 4X", "1X or 4X", "4X", SDR_QDR, "10.0 Gbps", FDR_EDR, "25.78125 Gbps", "4096", "4096", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "a", &b, "b", &msg, NULL), 0);
	ib_kvs_release(&a);
	ib_kvs_release(&b);

	/* both HDR, running EDR at 2X: below what both support, named with both ends and figures */
	portinfo(&a, "1X or 4X or 2X", "1X or 4X or 2X", "2X", SDR_QDR, "10.0 Gbps", FDR_HDR, "25.78125 Gbps", "4096", "4096", "VL0-7");
	portinfo(&b, "1X or 4X or 2X", "1X or 4X or 2X", "2X", SDR_QDR, "10.0 Gbps", FDR_HDR, "25.78125 Gbps", "4096", "4096", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "h1 port 1", &b, "leaf01 port 1", &msg, NULL), 2);
	ck_assert_msg(strstr(msg.buf, "runs 2X, both ends enable and support 4X (h1 port 1: 1X or 4X or 2X of 1X or 4X or 2X; "
			     "leaf01 port 1:"), "%s", msg.buf);
	ck_assert_msg(strstr(msg.buf, "runs 25.7812 Gb/s a lane, both ends enable and support 53.125 Gb/s"), "%s", msg.buf);
	ib_kvs_release(&a);
	ib_kvs_release(&b);
	sb_reset(&msg);

	/* MTU below both caps, ends that disagree on MTU and on VLs */
	portinfo(&a, "4X", "1X or 4X", "4X", SDR_QDR, "10.0 Gbps", "0", "No Extended Speed", "2048", "4096", "VL0-7");
	portinfo(&b, "4X", "1X or 4X", "4X", SDR_QDR, "10.0 Gbps", "0", "No Extended Speed", "2048", "4096", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "a", &b, "b", &msg, NULL), 1);
	ck_assert_msg(strstr(msg.buf, "NeighborMTU 2048, below both ends' MtuCap (a 4096, b 4096)"), "%s", msg.buf);
	ib_kvs_release(&a);
	ib_kvs_release(&b);
	sb_reset(&msg);
	portinfo(&a, "4X", "1X or 4X", "4X", SDR_QDR, "10.0 Gbps", "0", "No Extended Speed", "4096", "4096", "VL0-3");
	portinfo(&b, "4X", "1X or 4X", "1X", SDR_QDR, "5.0 Gbps", "0", "No Extended Speed", "2048", "4096", "VL0-7");
	ck_assert_uint_eq(ib_link_ends_judge(&a, "a", &b, "b", &msg, NULL), 4);
	ck_assert_msg(strstr(msg.buf, "active width differs: a 4X, b 1X"), "%s", msg.buf);
	ck_assert_msg(strstr(msg.buf, "active lane rate differs: a 10 Gb/s, b 5 Gb/s"), "%s", msg.buf);
	ck_assert_msg(strstr(msg.buf, "NeighborMTU differs: a 4096, b 2048"), "%s", msg.buf);
	ck_assert_msg(strstr(msg.buf, "OperVLs differ: a VL0-3, b VL0-7"), "%s", msg.buf);
	ib_kvs_release(&a);
	ib_kvs_release(&b);
	sb_release(&msg);
	sb_release(&caps);
	ck_assert_uint_eq(ib_width_set("1X or 4X or 8X or 12X or 2X"), (1u << 1) | (1u << 2) | (1u << 4) | (1u << 8) | (1u << 12));
}
END_TEST

/* smpquery pkeys of a port as ibsim printed it (64 entries, capacity line) */
static void pkeys_text(struct sb *t, const char *first_row)
{
	sb_addf(t, "ibwarn: [998] sim_connect: attached as client 0 at node \"h01\"\n   0: %s\n", first_row);
	for (int i = 8; i < 64; i += 8)
		sb_addf(t, "  %2d: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n", i);
	sb_adds(t, "64 pkeys capacity for this port\n");
}

START_TEST(pkeys_across_a_link)
{
	struct ib_pkeys ca, sw;
	struct sb t = SB_INIT, msg = SB_INIT;
	char err[256];

	pkeys_text(&t, "0xffff 0x8002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000");
	ck_assert_int_eq(ib_pkeys_read(t.buf, t.len, &ca, err, sizeof(err)), 0);
	ck_assert_uint_eq(ca.n, 2);
	sb_reset(&t);
	pkeys_text(&t, "0xffff 0x8002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000");
	ck_assert_int_eq(ib_pkeys_read(t.buf, t.len, &sw, err, sizeof(err)), 0);
	ck_assert_uint_eq(ib_pkeys_link_judge(&ca, "h01 HCA-1 port 1", &sw, "leaf01 port 1", &msg), 0);
	/* the switch port lacks the storage partition: it drops the CA's packets on it */
	sb_reset(&t);
	pkeys_text(&t, "0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000");
	ck_assert_int_eq(ib_pkeys_read(t.buf, t.len, &sw, err, sizeof(err)), 0);
	ck_assert_uint_eq(ib_pkeys_link_judge(&ca, "h01 HCA-1 port 1", &sw, "leaf01 port 1", &msg), 1);
	ck_assert_msg(strstr(msg.buf, "h01 HCA-1 port 1 has P_Key 0x8002, leaf01 port 1 (enforcing) has none of its partition"),
		      "%s", msg.buf);
	/* another membership on the switch side */
	sb_reset(&t);
	sb_reset(&msg);
	pkeys_text(&t, "0xffff 0x0002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000");
	ck_assert_int_eq(ib_pkeys_read(t.buf, t.len, &sw, err, sizeof(err)), 0);
	ck_assert_uint_eq(ib_pkeys_link_judge(&ca, "h01", &sw, "leaf01 port 1", &msg), 1);
	ck_assert_msg(strstr(msg.buf, "h01 has P_Key 0x8002 (full member), leaf01 port 1 0x0002 (limited member)"), "%s", msg.buf);
	sb_release(&t);
	sb_release(&msg);
}
END_TEST

/* ibroute -M LID 0xc000 0xc000 of a 36-port switch, ports marked */
static void mft_text(struct sb *t, unsigned lid, const char *desc, const int *ports, int n)
{
	char row[200];

	sb_addf(t, "Multicast mlids [0xc000-0xc000] of switch Lid %u guid 0x0002c9020000000%u (%s):\n", lid, lid, desc);
	sb_adds(t, "            0                   1                   2                   3              \n");
	sb_adds(t, "     Ports: 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 \n");
	sb_adds(t, " MLid\n");
	if (n) {
		memset(row, ' ', sizeof(row));
		for (int i = 0; i < n; i++)
			row[ports[i] * 2] = 'x';
		row[37 * 2] = '\0';
		sb_addf(t, "0xc000      %s\n", row);
	}
	sb_addf(t, "%d valid mlids dumped \n", n ? 1 : 0);
}

static const char two_leaves[] =
	"Switch 36 \"leaf01\"\n[1] \"h1\"[1]\n[2] \"h2\"[1]\n[3] \"spine\"[1]\n\n"
	"Switch 36 \"leaf02\"\n[1] \"h3\"[1]\n[2] \"h4\"[1]\n[3] \"spine\"[2]\n\n"
	"Switch 36 \"spine\"\n[1] \"leaf01\"[3]\n[2] \"leaf02\"[3]\n\n"
	"Hca 1 \"h1\"\n[1] \"leaf01\"[1]\n\nHca 1 \"h2\"\n[1] \"leaf01\"[2]\n\n"
	"Hca 1 \"h3\"\n[1] \"leaf02\"[1]\n\nHca 1 \"h4\"\n[1] \"leaf02\"[2]\n";

static unsigned mcast(const struct ibnet *t, const int (*ports)[4], const int *np, bool all, unsigned *members,
		      struct sb *msg)
{
	struct ib_mft m[16];
	const struct ib_mft *by[16] = { 0 };
	char err[256];
	unsigned n;

	for (size_t i = 0; i < t->nnodes; i++) {
		struct sb txt = SB_INIT;
		int k;

		memset(&m[i], 0, sizeof(m[i]));
		if (!t->nodes[i].is_switch)
			continue;
		k = !strcmp(t->nodes[i].id, "leaf01") ? 0 : !strcmp(t->nodes[i].id, "leaf02") ? 1 : 2;
		mft_text(&txt, (unsigned)k + 1, t->nodes[i].id, ports[k], np[k]);
		ck_assert_msg(mft_parse(txt.buf, txt.len, &m[i], err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(m[i].lid, (unsigned)k + 1);
		ck_assert_str_eq(m[i].desc, t->nodes[i].id);
		by[i] = &m[i];
		sb_release(&txt);
	}
	n = ib_mcast_judge(t, by, 0xc000, all, members, msg);
	for (size_t i = 0; i < t->nnodes; i++)
		ib_mft_release(&m[i]);
	return n;
}

START_TEST(mcast_tree)
{
	struct ibnet t;
	struct sb msg = SB_INIT, txt = SB_INIT;
	struct ib_mft m;
	char err[256];
	unsigned members;
	/* the tree opensm builds: each leaf to its hosts and the spine, the spine to both leaves */
	const int healthy[3][4] = { { 1, 2, 3 }, { 1, 2, 3 }, { 1, 2 } }, nh[3] = { 3, 3, 2 };
	/* the spine lost its branch to leaf02 */
	const int cut[3][4] = { { 1, 2, 3 }, { 1, 2, 3 }, { 1 } }, nc[3] = { 3, 3, 1 };
	/* h4 never joined: leaf02 does not forward to its port 2 */
	const int nojoin[3][4] = { { 1, 2, 3 }, { 1, 3 }, { 1, 2 } }, nj[3] = { 3, 2, 2 };

	ck_assert_int_eq(ibnet_parse(two_leaves, strlen(two_leaves), "t.net", &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(mcast(&t, healthy, nh, true, &members, &msg), 0);
	ck_assert_uint_eq(members, 4);
	/* h1 and h2 reach nothing beyond the spine; h3 and h4 still reach them */
	ck_assert_uint_eq(mcast(&t, cut, nc, true, &members, &msg), 2);
	ck_assert_msg(strstr(msg.buf, "MLID 0xc000 from h1 port 1 does not reach h3 port 1, h4 port 1 (2 member(s))"), "%s", msg.buf);
	sb_reset(&msg);
	ck_assert_uint_eq(mcast(&t, nojoin, nj, true, &members, &msg), 1);
	ck_assert_uint_eq(members, 3);
	ck_assert_msg(strstr(msg.buf, "h4 port 1 is no member of MLID 0xc000 (leaf02 port 2 does not forward it)"), "%s", msg.buf);
	sb_reset(&msg);
	ck_assert_uint_eq(mcast(&t, nojoin, nj, false, &members, &msg), 0);
	ibnet_release(&t);

	/* ibsim's answer with no member (nothing joins there), and a malformed row */
	sb_adds(&txt, "ibwarn: [1] sim_connect: attached as client 1 at node \"h01\"\n"
		"Multicast mlids [0xc000-0xc3ff] of switch Lid 2 guid 0x0002c90200000001 (leaf01):\n"
		"            0                   1                   2                   3             \n"
		"     Ports: 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 \n"
		" MLid\n0 valid mlids dumped \n");
	ck_assert_int_eq(mft_parse(txt.buf, txt.len, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_uint_eq(m.guid, 0x0002c90200000001ull);
	ib_mft_release(&m);
	sb_reset(&txt);
	sb_adds(&txt, "Multicast mlids [0xc000-0xc000] of switch Lid 2 guid 0x1 (s):\n0xc000      x y\n");
	ck_assert_int_ne(mft_parse(txt.buf, txt.len, &m, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "line 2: port 1 of MLID 0xc000 is 'y'"), "%s", err);
	sb_release(&txt);
	sb_release(&msg);
}
END_TEST

START_TEST(firmware_skew)
{
	struct ib_fw v[4];
	struct sb msg = SB_INIT, log = SB_INIT;
	char err[256];
	/* vendstat.c's GeneralInfo lines (IS4-era three-part version) */
	static const char gi[] = "hw_dev_rev:  0x00a0\nhw_dev_id:   0xd2f2\nhw_uptime:   0x0001e240\n"
				 "fw_version:  31.2012.1068\nfw_build_id: 0x0000\nfw_date:     03/14/2023\n"
				 "fw_psid:     'MT_0000000579'\nfw_ini_ver:  0\nsw_version:  00.00.00\n";

	ck_assert_int_eq(vendstat_gi_parse(gi, strlen(gi), &v[0], err, sizeof(err)), 0);
	ck_assert_uint_eq(v[0].devid, 0xd2f2);
	ck_assert_str_eq(v[0].psid, "MT_0000000579");
	ck_assert_str_eq(v[0].fw, "31.2012.1068");
	ck_assert_int_ne(vendstat_gi_parse("vendstat: iberror: failed: classportinfo query\n", 47, &v[1], err, sizeof(err)), 0);
	ck_assert_int_lt(ib_fw_cmp("31.2012.1024", "31.2012.1068"), 0);
	ck_assert_int_gt(ib_fw_cmp("31.2012.1068", "31.999.1"), 0);	/* 2012 > 999 as numbers */
	ck_assert_int_eq(ib_fw_cmp("28.41.1000", "28.41.1000"), 0);

	/*
	 * The real ibdiagnet2 log: devid 54002 PSID MT_0000000579 has
	 * 31.2012.1024 on five switches while the newest is 31.2012.1068, and
	 * another PSID of the same devid at 31.2012.1024 is no skew.
	 */
	if (real_sample("ib-fabric/ibdiagnet2-log-ndr-9sw-256ca-fw-skew-warnings-0-errors-sequoia.txt", &log)) {
		ck_assert(strstr(log.buf, "PSID: MT_0000000579, Latest FW Version:31.2012.1068"));
		ck_assert(strstr(log.buf, "Devid: 54002(0xd2f2), PSID: MT_0000000577, Latest FW Version:31.2012.1024"));
	}
	memset(v, 0, sizeof(v));
	snprintf(v[0].name, sizeof(v[0].name), "spine01");
	snprintf(v[1].name, sizeof(v[1].name), "spine02");
	snprintf(v[2].name, sizeof(v[2].name), "leaf01");
	snprintf(v[3].name, sizeof(v[3].name), "leaf02");
	for (int i = 0; i < 4; i++)
		v[i].devid = 54002;
	snprintf(v[0].psid, sizeof(v[0].psid), "MT_0000000579");
	snprintf(v[1].psid, sizeof(v[1].psid), "MT_0000000579");
	snprintf(v[2].psid, sizeof(v[2].psid), "MT_0000000577");
	snprintf(v[3].psid, sizeof(v[3].psid), "MT_0000000577");
	snprintf(v[0].fw, sizeof(v[0].fw), "31.2012.1068");
	snprintf(v[1].fw, sizeof(v[1].fw), "31.2012.1024");
	snprintf(v[2].fw, sizeof(v[2].fw), "31.2012.1024");
	snprintf(v[3].fw, sizeof(v[3].fw), "31.2012.1024");
	ck_assert_uint_eq(ib_fw_skew(v, 4, &msg), 1);
	ck_assert_str_eq(msg.buf, "spine02 (devid 0xd2f2, PSID MT_0000000579) runs 31.2012.1024, the newest of its kind "
			 "on this fabric 31.2012.1068");
	sb_reset(&msg);
	/* all equal, as on ibsim */
	ck_assert_uint_eq(ib_fw_skew(v + 2, 2, &msg), 0);
	sb_release(&msg);
	sb_release(&log);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, link_ends);
	tcase_add_test(tc, pkeys_across_a_link);
	tcase_add_test(tc, mcast_tree);
	tcase_add_test(tc, firmware_skew);
}

RQ_CHECK_MAIN("ibcheck", add_tests)
