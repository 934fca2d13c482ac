/* SPDX-License-Identifier: MIT */
/*
 * Fabrics of real size: the spec generator (fabgen.h) against the counts a
 * fat tree and a rail layout must have, its limits (ibsim's and the switch
 * radix), each planted fault exactly where documented and nothing else
 * changed; ibnetdiscover's LID and port-GUID annotations in the topology
 * reader; and `fabric import`'s writer read back.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parsers/fabgen.h"
#include "parsers/ibnet.h"
#include "core/util.h"
#include "check_main.h"

static void gen_ok(const char *spec, struct fabgen *g, struct ibnet *sim, struct ibnet *plan)
{
	char err[512];

	ck_assert_msg(fabgen_build(spec, g, err, sizeof(err)) == 0, "%s: %s", spec, err);
	ck_assert_msg(ibnet_parse(g->sim.buf, g->sim.len, "sim.net", sim, err, sizeof(err)) == 0, "sim: %s", err);
	ck_assert_msg(ibnet_parse(g->planned.buf, g->planned.len, "plan.net", plan, err, sizeof(err)) == 0,
		      "plan: %s", err);
}

static unsigned count_switches(const struct ibnet *n)
{
	unsigned s = 0;

	for (size_t i = 0; i < n->nnodes; i++)
		s += n->nodes[i].is_switch;
	return s;
}

START_TEST(fat_tree_648)
{
	struct fabgen g;
	struct ibnet sim, plan;

	gen_ok("fat-tree:leaves=36,spines=18,hosts-per-leaf=18", &g, &sim, &plan);
	ck_assert_uint_eq(g.hosts, 648);
	ck_assert_uint_eq(g.switches, 54);
	ck_assert_uint_eq(plan.nnodes, 702);
	ck_assert_uint_eq(count_switches(&plan), 54);
	/* 648 host cables + 36 x 18 leaf-spine cables */
	ck_assert_uint_eq(plan.nlinks, 648 + 648);
	ck_assert_uint_eq(sim.nlinks, plan.nlinks);
	ck_assert_int_eq(g.nfaults, 0);
	ck_assert_str_eq(g.sim.buf + strcspn(g.sim.buf, "\n"), g.planned.buf + strcspn(g.planned.buf, "\n"));
	/* every link at 4X QDR, every node with its own GUID */
	for (size_t i = 0; i < plan.nlinks; i++) {
		ck_assert_int_eq(plan.links[i].width, 4);
		ck_assert(plan.links[i].gbps > 9.99 && plan.links[i].gbps < 10.01);
	}
	for (size_t i = 1; i < plan.nnodes; i++)
		ck_assert(plan.nodes[i].guid && plan.nodes[i].guid != plan.nodes[i - 1].guid);
	/* the 36th leaf's last uplink is spine18's port 36 */
	int leaf = ibnet_find_node(&plan, "leaf36"), peer, pp;

	ck_assert_int_ge(leaf, 0);
	ck_assert_ptr_nonnull(ibnet_link_at(&plan, leaf, 36, &peer, &pp));
	ck_assert_str_eq(plan.nodes[peer].id, "spine18");
	ck_assert_int_eq(pp, 36);
	ibnet_release(&sim);
	ibnet_release(&plan);
	fabgen_release(&g);
}
END_TEST

START_TEST(rail_layout)
{
	struct fabgen g;
	struct ibnet sim, plan;
	int h, peer, pp;

	gen_ok("rail:hosts=36,rails=4,spines=18", &g, &sim, &plan);
	ck_assert_uint_eq(g.hosts, 36);
	ck_assert_uint_eq(g.cas, 144);
	/* 36 hosts at 18 a leaf: 2 leaves per rail, 8 leaves, 18 spines */
	ck_assert_uint_eq(g.switches, 26);
	h = ibnet_find_node(&plan, "h20r3");
	ck_assert_int_ge(h, 0);
	ck_assert_str_eq(plan.nodes[h].desc, "h20 HCA-3");
	ck_assert_ptr_nonnull(ibnet_link_at(&plan, h, 1, &peer, &pp));
	ck_assert_str_eq(plan.nodes[peer].id, "rail3-leaf02");
	ck_assert_int_eq(pp, 2);
	ibnet_release(&sim);
	ibnet_release(&plan);
	fabgen_release(&g);
}
END_TEST

/* The link between two named ends in a net; NULL when not cabled so. */
static const struct ibnet_link *between(const struct ibnet *n, const char *a, int ap, const char *b, int bp)
{
	int na = ibnet_find_node(n, a), peer, pp;
	const struct ibnet_link *k;

	if (na < 0)
		return NULL;
	k = ibnet_link_at(n, na, ap, &peer, &pp);
	return k && !strcmp(n->nodes[peer].id, b) && pp == bp ? k : NULL;
}

START_TEST(faults_where_documented)
{
	struct fabgen g;
	struct ibnet sim, plan;

	gen_ok("fat-tree:leaves=3,spines=2,hosts-per-leaf=3,fault=missing,fault=swapped,fault=1x,fault=slow,"
	       "fault=dup-desc,fault=dup-guid", &g, &sim, &plan);
	ck_assert_int_eq(g.nfaults, 6);
	ck_assert(g.sm_blocked);
	/* missing: leaf01's first uplink */
	ck_assert_ptr_nonnull(between(&plan, "leaf01", 4, "spine01", 1));
	ck_assert_ptr_null(between(&sim, "leaf01", 4, "spine01", 1));
	ck_assert_uint_eq(sim.nlinks, plan.nlinks - 1);
	/* slow: leaf01's last uplink at SDR in the simulation only */
	ck_assert(between(&plan, "leaf01", 5, "spine02", 1)->gbps > 9.9);
	ck_assert(between(&sim, "leaf01", 5, "spine02", 1)->gbps < 2.6);
	/* swapped: the first two hosts of leaf02 */
	ck_assert_ptr_nonnull(between(&plan, "leaf02", 1, "h04", 1));
	ck_assert_ptr_nonnull(between(&sim, "leaf02", 1, "h05", 1));
	ck_assert_ptr_nonnull(between(&sim, "leaf02", 2, "h04", 1));
	/* 1x: the last host */
	ck_assert_int_eq(between(&sim, "leaf03", 3, "h09", 1)->width, 1);
	ck_assert_int_eq(between(&plan, "leaf03", 3, "h09", 1)->width, 4);
	/* dup-desc: h02 described as h01, in the simulation only */
	ck_assert_str_eq(sim.nodes[ibnet_find_node(&sim, "h02")].desc, "h01 HCA-1");
	ck_assert_str_eq(plan.nodes[ibnet_find_node(&plan, "h02")].desc, "h02 HCA-1");
	/* dup-guid: ibsim's Guid command at the end of the simulated file */
	ck_assert_ptr_nonnull(strstr(g.sim.buf, "\ndo Guid \"h09\" 0x0002c90300000010\n"));
	ck_assert_ptr_null(strstr(g.planned.buf, "do Guid"));
	ck_assert_ptr_nonnull(strstr(g.fault[2], "swapped: h05 HCA-1 is on leaf02 port 1"));
	ibnet_release(&sim);
	ibnet_release(&plan);
	fabgen_release(&g);
}
END_TEST

START_TEST(limits_and_mistakes)
{
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "fat-tree:leaves=37,spines=18,hosts-per-leaf=18", "a spine needs 37 ports (37 leaves x 1 links), it has 36" },
		{ "fat-tree:leaves=2,spines=2,hosts-per-leaf=35", "a leaf needs 37 ports" },
		{ "fat-tree:leaves=64,spines=32,hosts-per-leaf=32,ports=64", "2144 nodes, beyond ibsim's 2048" },
		{ "fat-tree:leaves=2,spines=1,hosts-per-leaf=2,fault=cut", "unknown fault \"cut\"" },
		{ "fat-tree:leaves=2,spines=1,hosts=2", "unknown key \"hosts\" for fat-tree" },
		{ "fat-tree:leaves=2,spines=1,hosts-per-leaf=x", "hosts-per-leaf=x is not a count" },
		{ "fat-tree:leaves=2,spines=0,hosts-per-leaf=2", "2 leaves and no spine" },
		{ "fat-tree:leaves=2,spines=1,hosts-per-leaf=2,speed=EDR", "ibsim simulates SDR, DDR or QDR" },
		{ "fat-tree:leaves=1,spines=0,hosts-per-leaf=2,fault=missing", "fault=missing needs an uplink" },
		{ "torus:x=2", "unknown fabric type \"torus\"" },
		{ "rail:hosts=32,rails=4,spines=2", "a spine needs 72 ports" },
		{ "fat-tree:leaves=2,spines=1,hosts-per-leaf=2,ports=300", "ports=300: a switch has 4 to 64 ports" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct fabgen g;
		char err[512] = "";

		ck_assert_int_eq(fabgen_build(bad[i].spec, &g, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].msg), "%s: got \"%s\", expected \"%s\"", bad[i].spec, err, bad[i].msg);
		ck_assert_msg(str_starts(err, "fabric spec: "), "%s", err);
	}
	ck_assert(fabgen_is_spec("fat-tree:leaves=1"));
	ck_assert(!fabgen_is_spec("2sw2path4hca"));
	ck_assert(!fabgen_is_spec(NULL));
}
END_TEST

/* ibnetdiscover's annotations: a switch's LID, a CA port's LID, LMC and GUID. */
START_TEST(ibnetdiscover_lids)
{
	struct sb text = SB_INIT;
	struct ibnet net;
	char err[256];
	int sw, ca, peer, pp;
	const struct ibnet_link *k;

	ck_assert_int_eq(read_file("fixtures/tool-output/ibsim/ibnetdiscover-2sw2path4hca.txt", &text, 0), 0);
	ck_assert_int_eq(ibnet_parse(text.buf, text.len, "ibnetdiscover", &net, err, sizeof(err)), 0);
	sw = ibnet_find_node(&net, "Switch2");
	ca = ibnet_find_node(&net, "Hca4");
	ck_assert_int_ge(sw, 0);
	ck_assert_int_ge(ca, 0);
	ck_assert_uint_eq(net.nodes[sw].lid, 3);
	k = ibnet_link_at(&net, ca, 1, &peer, &pp);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(peer, sw);
	ck_assert_int_eq(pp, 2);
	if (k->a == ca) {
		ck_assert_uint_eq(k->alid, 6);
		ck_assert_uint_eq(k->apguid, 0x10000a);
	} else {
		ck_assert_uint_eq(k->blid, 6);
		ck_assert_uint_eq(k->bpguid, 0x10000a);
	}
	ibnet_release(&net);
	sb_release(&text);
}
END_TEST

/* fabric import: what ibnet_write writes reads back as the same fabric. */
START_TEST(import_round_trip)
{
	struct sb text = SB_INIT, out = SB_INIT, notes = SB_INIT;
	struct ibnet a, b;
	char err[256];

	ck_assert_int_eq(read_file("fixtures/tool-output/ibsim/ibnetdiscover-2sw2path4hca.txt", &text, 0), 0);
	ck_assert_int_eq(ibnet_parse(text.buf, text.len, "ibnetdiscover", &a, err, sizeof(err)), 0);
	ibnet_write(&a, "test", &out, &notes);
	ck_assert_msg(ibnet_parse(out.buf, out.len, "written", &b, err, sizeof(err)) == 0, "%s\n%s", err, out.buf);
	ck_assert_uint_eq(a.nnodes, b.nnodes);
	ck_assert_uint_eq(a.nlinks, b.nlinks);
	for (size_t i = 0; i < a.nnodes; i++) {
		ck_assert_str_eq(a.nodes[i].desc, b.nodes[i].desc);
		ck_assert_uint_eq(a.nodes[i].guid, b.nodes[i].guid);
	}
	for (size_t i = 0; i < a.nlinks; i++) {
		int peer, pp;
		const struct ibnet_link *k = ibnet_link_at(&b, a.links[i].a, a.links[i].aport, &peer, &pp);

		ck_assert_ptr_nonnull(k);
		ck_assert_int_eq(peer, a.links[i].b);
		ck_assert_int_eq(pp, a.links[i].bport);
		ck_assert_int_eq(k->width, a.links[i].width);
		ck_assert(k->gbps == a.links[i].gbps);
	}
	ck_assert_uint_eq(notes.len, 0);
	ibnet_release(&a);
	ibnet_release(&b);
	sb_release(&text);
	sb_release(&out);
	sb_release(&notes);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, fat_tree_648);
	tcase_add_test(tc, rail_layout);
	tcase_add_test(tc, faults_where_documented);
	tcase_add_test(tc, limits_and_mistakes);
	tcase_add_test(tc, ibnetdiscover_lids);
	tcase_add_test(tc, import_round_trip);
}

RQ_CHECK_MAIN("fabric", add_tests)
