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

#include "fabric/fabgen.h"
#include "parsers/ibnet.h"
#include "parsers/parse_fabric.h"
#include "fabric/routing.h"
#include "kinds/ibkind.h"
#include "core/ctx.h"
#include "core/result.h"
#include "core/util.h"
#include "real_outputs.h"
#include "check_main.h"

static void own(const char *name, struct sb *out)
{
	char path[512];

	snprintf(path, sizeof(path), "fixtures/tool-output/ibsim/%s", name);
	ck_assert_msg(read_file(path, out, 0) == 0, "cannot read %s", path);
}

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
	ck_assert(!ibnet_has_dup_guid(&plan));
	/* ibsim attaches its clients to the file's first node: a host's HCA, as discovery starts on a real fabric */
	ck_assert(!sim.nodes[0].is_switch && !plan.nodes[0].is_switch);
	ck_assert_str_eq(sim.nodes[0].id, "h001");
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

/* speed=HDR: ibsim 0.10's extended speeds (extspeed=7), the slow fault's cable at SDR without them (e=0). */
START_TEST(fabric_at_hdr)
{
	struct fabgen g;
	struct ibnet sim, plan;

	gen_ok("fat-tree:leaves=2,spines=2,hosts-per-leaf=2,speed=HDR,fault=slow", &g, &sim, &plan);
	ck_assert_ptr_nonnull(strstr(g.sim.buf, "\nspeed=7\nextspeed=7\n"));
	ck_assert_ptr_nonnull(strstr(g.sim.buf, " s=1 e=0\n"));
	for (size_t i = 0; i < plan.nlinks; i++)
		ck_assert(plan.links[i].gbps > 53.12 && plan.links[i].gbps < 53.13);
	ck_assert(between(&sim, "leaf01", 4, "spine02", 1)->gbps < 2.6);
	ibnet_release(&sim);
	ibnet_release(&plan);
	fabgen_release(&g);
}
END_TEST

/* A .net file that repeats a node GUID: the ibsim target starts ibsim -I and waits for the SM to settle. */
START_TEST(dup_guid_file)
{
	struct ibnet n;
	char err[256];

	ck_assert_msg(ibnet_load("tests/integration/fabric-cases/dup-guids.net", &n, err, sizeof(err)) == 0, "%s", err);
	ck_assert(ibnet_has_dup_guid(&n));
	ck_assert_uint_eq(n.nodes[ibnet_find_node(&n, "h15")].guid, 0x0002c90300000020ULL);
	ibnet_release(&n);
	ck_assert_msg(ibnet_load("fixtures/fabrics/2sw2path4hca.net", &n, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!ibnet_has_dup_guid(&n));	/* no GUIDs stated: ibsim numbers them */
	ibnet_release(&n);
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
		{ "fat-tree:leaves=2,spines=1,hosts-per-leaf=2,speed=NDR", "ibsim 0.10 simulates SDR, DDR, QDR, FDR, EDR or HDR" },
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
	/* the first CA first (ibsim attaches its clients to the first node): nodes found by id */
	ck_assert(!b.nodes[0].is_switch);
	for (size_t i = 0; i < a.nnodes; i++) {
		int j = ibnet_find_node(&b, a.nodes[i].id);

		ck_assert_int_ge(j, 0);
		ck_assert_str_eq(a.nodes[i].desc, b.nodes[j].desc);
		ck_assert_uint_eq(a.nodes[i].guid, b.nodes[j].guid);
	}
	for (size_t i = 0; i < a.nlinks; i++) {
		int peer, pp;
		const struct ibnet_link *k = ibnet_link_at(&b, ibnet_find_node(&b, a.nodes[a.links[i].a].id),
							   a.links[i].aport, &peer, &pp);

		ck_assert_ptr_nonnull(k);
		ck_assert_str_eq(b.nodes[peer].id, a.nodes[a.links[i].b].id);
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

/* The link between a's node named id port p, as written and read back; NULL none. */
static const struct ibnet_link *link_of(const struct ibnet *n, const char *id, int p)
{
	int i = ibnet_find_node(n, id);

	return i < 0 ? NULL : ibnet_link_at(n, i, p, NULL, NULL);
}

/*
 * fabric import keeps what ibsim 0.10 can simulate (sim_net.c): 2X width
 * (w=16), EDR and HDR (e=3, e=7 with s=7), and a CA port's own GUID (ibsim
 * answers node GUID + port: the node GUID moves, the port GUID stays).
 */
START_TEST(import_keeps_width_speed_port_guid)
{
	const char *topo =
		"switchguid=0xfc6a1c030091cf00\n"
		"Switch\t8 \"S-fc6a1c030091cf00\"\t\t# \"leaf\" base port 0 lid 2 lmc 0\n"
		"[1]\t\"H-5c25730300e6706e\"[1](5c25730300e6706e)\t\t# \"h1 mlx5_0\" lid 1 4xHDR\n"
		"[2]\t\"H-0002c90300000010\"[1](2c90300000011)\t\t# \"h2 mlx4_0\" lid 3 2xEDR\n"
		"[3]\t\"H-0002c90300000020\"[1](2c90300000021)\t\t# \"h3 mlx4_0\" lid 4 4xNDR\n"
		"\ncaguid=0x5c25730300e6706e\n"
		"Ca\t1 \"H-5c25730300e6706e\"\t\t# \"h1 mlx5_0\"\n"
		"[1](5c25730300e6706e) \t\"S-fc6a1c030091cf00\"[1]\t\t# lid 1 lmc 0 \"leaf\" lid 2 4xHDR\n"
		"\ncaguid=0x0002c90300000010\n"
		"Ca\t1 \"H-0002c90300000010\"\t\t# \"h2 mlx4_0\"\n"
		"[1](2c90300000011) \t\"S-fc6a1c030091cf00\"[2]\t\t# lid 3 lmc 0 \"leaf\" lid 2 2xEDR\n"
		"\ncaguid=0x0002c90300000020\n"
		"Ca\t1 \"H-0002c90300000020\"\t\t# \"h3 mlx4_0\"\n"
		"[1](2c90300000021) \t\"S-fc6a1c030091cf00\"[3]\t\t# lid 4 lmc 0 \"leaf\" lid 2 4xNDR\n";
	struct sb out = SB_INIT, notes = SB_INIT;
	struct ibnet a, b;
	char err[256];

	ck_assert_msg(ibnet_parse(topo, strlen(topo), "ibnetdiscover", &a, err, sizeof(err)) == 0, "%s", err);
	ibnet_write(&a, "test", &out, &notes);
	ck_assert_msg(strstr(out.buf, "[2]\t\"H-0002c90300000010\"[1] w=16 s=7 e=3\n"), "%s", out.buf);
	ck_assert_msg(strstr(out.buf, "[1]\t\"H-5c25730300e6706e\"[1] s=7 e=7\n"), "%s", out.buf);
	/* mlx5: port GUID = node GUID, so the simulated node is one below; mlx4's port is node + 1 already */
	ck_assert_msg(strstr(out.buf, "caguid=0x5c25730300e6706d\nHca\t1 \"H-5c25730300e6706e\""), "%s", out.buf);
	ck_assert_msg(strstr(out.buf, "caguid=0x0002c90300000010\nHca\t1 \"H-0002c90300000010\""), "%s", out.buf);
	ck_assert_msg(strstr(notes.buf, "1 CA node GUID(s) moved so that each port keeps its port GUID"), "%s", notes.buf);
	ck_assert_msg(strstr(notes.buf, "1 link(s) at a speed ibsim 0.10 cannot set (NDR and beyond: simulated at HDR"),
		      "%s", notes.buf);
	ck_assert_msg(ibnet_parse(out.buf, out.len, "written", &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(link_of(&b, "S-fc6a1c030091cf00", 2)->width, 2);
	ck_assert(link_of(&b, "S-fc6a1c030091cf00", 2)->gbps > 25.78 && link_of(&b, "S-fc6a1c030091cf00", 2)->gbps < 25.79);
	ck_assert(link_of(&b, "S-fc6a1c030091cf00", 1)->gbps > 53.12 && link_of(&b, "S-fc6a1c030091cf00", 1)->gbps < 53.13);
	ck_assert(link_of(&b, "S-fc6a1c030091cf00", 3)->gbps > 53.12);	/* NDR at HDR */
	ck_assert_msg(!strstr(notes.buf, "twice in the copy"), "%s", notes.buf);
	/* the written caguid= line is the node's GUID, not its "H-<guid>" id */
	ck_assert_uint_eq(b.nodes[ibnet_find_node(&b, "H-5c25730300e6706e")].guid, 0x5c25730300e6706dULL);
	ibnet_release(&a);
	ibnet_release(&b);
	sb_release(&out);
	sb_release(&notes);
}
END_TEST

/* A node GUID moved onto another node's (an mlx5 port one above its switch's GUID) is said. */
START_TEST(import_moved_guid_collision)
{
	const char *topo =
		"Switch\t4 \"S-000000000000001f\"\t\t# \"leaf\"\n"
		"[1]\t\"H-0000000000000020\"[1](20) \t\t# \"h1\" lid 1 4xQDR\n"
		"Ca\t1 \"H-0000000000000020\"\t\t# \"h1\"\n"
		"[1](20) \t\"S-000000000000001f\"[1]\t\t# lid 1 lmc 0 \"leaf\" lid 2 4xQDR\n";
	struct sb out = SB_INIT, notes = SB_INIT;
	struct ibnet a;
	char err[256];

	ck_assert_msg(ibnet_parse(topo, strlen(topo), "ibnetdiscover", &a, err, sizeof(err)) == 0, "%s", err);
	ibnet_write(&a, "test", &out, &notes);
	ck_assert_msg(strstr(notes.buf, "node GUID 0x000000000000001f twice in the copy"), "%s", notes.buf);
	ibnet_release(&a);
	sb_release(&out);
	sb_release(&notes);
}
END_TEST

/* Stub headers for the nodes a truncated sample names but does not describe (its ports stay one-ended). */
static void stub_missing(struct sb *text)
{
	struct sb have = SB_INIT, add = SB_INIT;

	/* the declared: each "Switch"/"Ca" line's quoted id */
	for (const char *l = text->buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *q = strchr(l, '"'), *e = q ? strchr(q + 1, '"') : NULL;

		if ((!strncmp(l, "Switch", 6) || !strncmp(l, "Ca", 2)) && e)
			sb_addf(&have, "%.*s\n", (int)(e - q + 1), q);
	}
	for (const char *p = text->buf; (p = strchr(p, '"'));) {
		const char *e = strchr(p + 1, '"');
		char id[80];

		if (!e)
			break;
		snprintf(id, sizeof(id), "%.*s\n", (int)(e - p + 1), p);
		if ((id[1] == 'S' || id[1] == 'H') && id[2] == '-' && e[1] == '[' && !strstr(have.buf, id)) {
			sb_adds(&have, id);
			id[strlen(id) - 1] = '\0';
			sb_addf(&add, "\n%s\t%d %s\n", id[1] == 'S' ? "Switch" : "Ca", id[1] == 'S' ? 65 : 1, id);
		}
		p = e + 1;
	}
	sb_add(text, add.buf ? add.buf : "", add.len);
	sb_release(&have);
	sb_release(&add);
}

/* ibdiagnet's own files: its ibnetdiscover-format topology (port labels) and ibdiagnet2.lst. */
START_TEST(import_ibdiagnet_files)
{
	struct sb text = SB_INIT, out = SB_INIT, notes = SB_INIT;
	struct ibnet n;
	char err[256];
	int sw, peer, pp;

	if (!real_sample("ib-fabric/ibdiagnet2-ibnetdiscover-file-ndr-quantum2-port-labels-sequoia-truncated.txt", &text))
		return;
	stub_missing(&text);
	ck_assert_msg(ibnet_parse(text.buf, text.len, "ibdiagnet2.ibnetdiscover", &n, err, sizeof(err)) == 0, "%s", err);
	sw = ibnet_find_node(&n, "S-b0cf0e0300d33fc0");
	ck_assert_int_ge(sw, 0);
	ck_assert_int_eq(n.nodes[sw].nports, 65);
	ck_assert_uint_eq(n.nodes[sw].lid, 180);
	for (int p = 1; p <= 8; p++) {
		const struct ibnet_link *k = ibnet_link_at(&n, sw, p, &peer, &pp);

		ck_assert_ptr_nonnull(k);
		ck_assert_int_eq(pp, 63);
		ck_assert_int_eq(k->width, 4);
		ck_assert(k->gbps > 106.2 && k->gbps < 106.3);	/* 4xNDR */
		ck_assert_uint_eq(k->apguid, 0);	/* "(1/1/1)" is a port label, not a GUID */
		ck_assert_uint_eq(k->bpguid, 0);
	}
	sw = ibnet_find_node(&n, "S-fc6a1c030091cf00");
	ck_assert_uint_eq(n.nodes[sw].lid, 13);
	/* "[1](1/1/1) "H-5c25730300e6706e"[1](5c25730300e6706e)": the remote CA port's GUID */
	const struct ibnet_link *k = ibnet_link_at(&n, sw, 1, &peer, &pp);

	ck_assert_ptr_nonnull(k);
	ck_assert_str_eq(n.nodes[peer].desc, "H-5c25730300e6706e");
	ck_assert_uint_eq(k->a == sw ? k->bpguid : k->apguid, 0x5c25730300e6706eULL);
	ibnet_write(&n, "test", &out, &notes);
	ck_assert_msg(strstr(out.buf, "caguid=0x5c25730300e6706d\nHca\t1 \"H-5c25730300e6706e\""), "%s", out.buf);
	ibnet_release(&n);
	sb_reset(&text);
	sb_reset(&out);
	sb_reset(&notes);
	if (!real_sample("ib-fabric/ibdiagnet2-lst-ndr-link-list-sequoia-truncated.txt", &text))
		goto out;
	ck_assert(ibnet_is_lst(text.buf, text.len));
	ck_assert_msg(ibnet_parse_lst(text.buf, text.len, "ibdiagnet2.lst", &n, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(n.nlinks, 20);
	ck_assert_uint_eq(n.nnodes, 28);
	/* the first link: CA 'is-north-7-compute-12 mlx5_0' LID 0xb5 PN 01 <-> SW fc6a1c030091f9c0 LID 0xb6 PN 0x0c */
	ck_assert_str_eq(n.nodes[n.links[0].a].desc, "is-north-7-compute-12 mlx5_0");
	ck_assert_str_eq(n.nodes[n.links[0].a].id, "H-5c257303009ab1c0");
	ck_assert_int_eq(n.links[0].aport, 1);
	ck_assert_uint_eq(n.links[0].alid, 0xb5);
	ck_assert_uint_eq(n.links[0].apguid, 0x5c257303009ab1c0ULL);
	ck_assert_str_eq(n.nodes[n.links[0].b].id, "S-fc6a1c030091f9c0");
	ck_assert_int_eq(n.nodes[n.links[0].b].nports, 65);
	ck_assert_uint_eq(n.nodes[n.links[0].b].lid, 0xb6);
	ck_assert_int_eq(n.links[0].bport, 12);
	ck_assert_int_eq(n.links[0].width, 4);
	ck_assert(n.links[0].gbps > 106.2 && n.links[0].gbps < 106.3);	/* SPD=100: NDR */
	ibnet_write(&n, "test", &out, &notes);
	ck_assert_msg(strstr(notes.buf, "20 CA node GUID(s) moved"), "%s", notes.buf);
	ibnet_release(&n);
	ck_assert_int_eq(ibnet_parse_lst("# header\n{ CA Ports:01 }\n", 26, "x.lst", &n, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "x.lst:2: not a link line of ibdiagnet2.lst"), "%s", err);
out:
	sb_release(&text);
	sb_release(&out);
	sb_release(&notes);
}
END_TEST

/* A real QDR/DDR fabric (ConnectX: port GUID = node GUID + 1): imported with nothing moved, nothing faster. */
START_TEST(import_real_qdr_ddr)
{
	struct sb text = SB_INIT, out = SB_INIT, notes = SB_INIT;
	struct ibnet a, b;
	char err[256];

	if (!real_sample("ib-fabric/ibnetdiscover-full-qdr-ddr-11sw-89ca-voltaire-psmn-x5.txt", &text))
		return;
	ck_assert_msg(ibnet_parse(text.buf, text.len, "ibnetdiscover", &a, err, sizeof(err)) == 0, "%s", err);
	ibnet_write(&a, "test", &out, &notes);
	ck_assert_msg(!strstr(notes.buf ? notes.buf : "", "moved"), "%s", notes.buf);
	ck_assert_msg(!strstr(out.buf, " e="), "QDR and DDR need no extended speed");
	ck_assert_msg(ibnet_parse(out.buf, out.len, "written", &b, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(a.nlinks, b.nlinks);
	for (size_t i = 0; i < a.nlinks; i++) {
		const struct ibnet_link *k = ibnet_link_at(&b, ibnet_find_node(&b, a.nodes[a.links[i].a].id),
							   a.links[i].aport, NULL, NULL);

		ck_assert_ptr_nonnull(k);
		ck_assert_int_eq(k->width, a.links[i].width);
		ck_assert(k->gbps == a.links[i].gbps);
	}
	ibnet_release(&a);
	ibnet_release(&b);
	sb_release(&text);
	sb_release(&out);
	sb_release(&notes);
}
END_TEST

/* ---- parsers, against the published samples and our own ibsim captures ---- */

START_TEST(lfts_real_and_own)
{
	struct sb text = SB_INIT;
	struct ib_lfts l;
	char err[256];

	if (real_sample("ib-fabric/ibroute-switch-lid1-ibsim.txt", &text)) {
		ck_assert_msg(lfts_parse(text.buf, text.len, &l, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(l.nsw, 1);
		ck_assert_uint_eq(l.sw[0].lid, 1);
		ck_assert_uint_eq(l.sw[0].guid, 0x200000);
		ck_assert_str_eq(l.sw[0].name, "Switch1");
		ck_assert_uint_eq(l.sw[0].hi, 5);
		ck_assert_uint_eq(l.sw[0].n, 4);
		/* 0x0001->000, 0x0002->001, 0x0003->003, 0x0005->003 */
		ck_assert_uint_eq(l.e[1].lid, 2);
		ck_assert_uint_eq(l.e[1].port, 1);
		ck_assert_uint_eq(l.e[3].lid, 5);
		ck_assert_uint_eq(l.e[3].port, 3);
		ib_lfts_release(&l);
	}
	sb_reset(&text);
	own("dump_fts-ft4x2x4-ftree.txt", &text);
	ck_assert_msg(lfts_parse(text.buf, text.len, &l, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(l.nsw, 6);
	ck_assert_uint_eq(l.sw[0].lid, 0);	/* dump_fts names switches by DR path */
	/* 16 CAs + 6 switches in the leaves' tables; ftree gives a spine no route to the other spine */
	ck_assert_uint_eq(l.ne, 4 * 22 + 2 * 21);
	ib_lfts_release(&l);
	/* a cut output: the count line does not match */
	char *cut = xstrdup(text.buf), *last = strstr(cut, "\n0x");

	ck_assert_ptr_nonnull(last);
	memmove(last + 1, strchr(last + 1, '\n') + 1, strlen(strchr(last + 1, '\n') + 1) + 1);
	ck_assert_int_eq(lfts_parse(cut, strlen(cut), &l, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "valid lids dumped, 21 lines read (output cut?)"), "%s", err);
	free(cut);
	ck_assert_int_eq(lfts_parse("Port info: nothing\n", 19, &l, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "line 1: not a forwarding-table line"), "%s", err);
	sb_release(&text);
}
END_TEST

START_TEST(sl2vl_vlarb_real_and_own)
{
	struct sb text = SB_INIT;
	struct ib_sl2vl t;
	struct ib_vlarb v;
	char err[256];
	static const uint8_t qos[16] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2 };

	if (real_sample("ib-fabric/smpquery-sl2vl-switch-after-qos-ibsim.txt", &text)) {
		ck_assert_msg(sl2vl_parse(text.buf, text.len, &t, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(t.lid, 1);
		ck_assert_uint_eq(t.n, 9);
		for (size_t i = 0; i < t.n; i++) {
			ck_assert_int_eq(t.rows[i].in, (int)i);
			ck_assert_int_eq(t.rows[i].out, 1);
			ck_assert_mem_eq(t.rows[i].vl, qos, 16);
		}
		ib_sl2vl_release(&t);
	}
	sb_reset(&text);
	if (real_sample("ib-fabric/smpquery-sl2vl-switch-default-sl15-vl7-ibsim.txt", &text)) {
		ck_assert_int_eq(sl2vl_parse(text.buf, text.len, &t, err, sizeof(err)), 0);
		ck_assert_int_eq(t.rows[8].vl[14], 14);
		ck_assert_int_eq(t.rows[8].vl[15], 7);
		ib_sl2vl_release(&t);
	}
	sb_reset(&text);
	if (real_sample("ib-fabric/smpquery-vlarb-hca-after-qos-ibsim.txt", &text)) {
		ck_assert_msg(vlarb_parse(text.buf, text.len, &v, err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(v.lid, 2);
		ck_assert_int_eq(v.port, 1);
		ck_assert_uint_eq(v.low_cap, 8);
		ck_assert_uint_eq(v.high_cap, 8);
		ck_assert_uint_eq(v.low.n, 8);
		ck_assert_int_eq(v.low.vl[0], 1);
		ck_assert_int_eq(v.low.weight[0], 0x1c);
		ck_assert_int_eq(v.low.vl[1], 2);
		ck_assert_int_eq(v.low.weight[1], 4);
		ck_assert_int_eq(v.high.weight[0], 4);
		ck_assert_int_eq(v.high.weight[1], 0);
	}
	sb_reset(&text);
	own("smpquery-vlarb-ft4x2x4-h01.txt", &text);
	ck_assert_int_eq(vlarb_parse(text.buf, text.len, &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v.low.weight[1], 4);
	ck_assert_int_eq(v.low.vl[7], 7);
	sb_reset(&text);
	own("smpquery-sl2vl-ft4x2x4-leaf01.txt", &text);
	ck_assert_int_eq(sl2vl_parse(text.buf, text.len, &t, err, sizeof(err)), 0);
	ck_assert_uint_eq(t.n, 37);	/* in ports 0..36 of a 36-port leaf */
	ck_assert_int_eq(t.rows[0].out, 5);
	ib_sl2vl_release(&t);
	ck_assert_int_eq(sl2vl_parse("# SL2VL table: Lid 1\nports: in  0, out  1: | 0| 1|\n", 52, &t, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "line 2: expected 16 VLs"), "%s", err);
	ck_assert_int_eq(vlarb_parse("VL    : |0x1 |\n", 15, &v, err, sizeof(err)), -EINVAL);
	sb_release(&text);
}
END_TEST

START_TEST(ibqueryerrors_and_saquery_own)
{
	struct sb text = SB_INIT;
	struct ib_qerrs q;
	struct ib_sa_records r;
	char err[256];

	own("ibqueryerrors-2sw2path4hca-errors.txt", &text);
	ck_assert_msg(ibqueryerrors_parse(text.buf, text.len, &q, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(q.n, 1);
	ck_assert_str_eq(q.v[0].node, "Hca2");
	ck_assert_uint_eq(q.v[0].guid, 0x100004);
	ck_assert_int_eq(q.v[0].port, 1);
	ck_assert_uint_eq(q.v[0].nc, 2);
	ck_assert_str_eq(q.v[0].c[0].name, "SymbolErrorCounter");
	ck_assert_uint_eq(q.v[0].c[0].value, 57);
	ck_assert_uint_eq(q.v[0].c[1].value, 3);
	ck_assert_uint_eq(q.nodes_checked, 6);
	ck_assert_uint_eq(q.bad_ports, 1);
	ib_qerrs_release(&q);
	sb_reset(&text);
	own("ibqueryerrors-ft4x2x4.txt", &text);
	ck_assert_int_eq(ibqueryerrors_parse(text.buf, text.len, &q, err, sizeof(err)), 0);
	ck_assert_uint_eq(q.n, 0);
	ck_assert_uint_eq(q.nodes_checked, 22);
	ib_qerrs_release(&q);
	/* cut before its summary: refused */
	ck_assert_int_eq(ibqueryerrors_parse("Errors for \"Hca2\"\n", 18, &q, err, sizeof(err)), -EINVAL);
	sb_reset(&text);
	own("saquery-ft4x2x4.txt", &text);
	ck_assert_msg(saquery_parse(text.buf, text.len, &r, err, sizeof(err)) == 0, "%s", err);
	/* ibsim answers an SA query with its first record only (no RMPP through umad2sim) */
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].type, "NodeRecord");
	ck_assert_str_eq(ib_sa_get(&r.v[0], "node_type"), "Channel Adapter");
	ck_assert_ptr_nonnull(ib_sa_get(&r.v[0], "NodeDescription"));
	ib_sa_records_release(&r);
	sb_release(&text);
}
END_TEST

/* ---- routing: our captures as they are, then with one route planted wrong ---- */

static void load_routes(const char *topo, const char *fts, struct ibnet *t, struct ib_lfts *l, struct sb *ftext)
{
	struct sb tt = SB_INIT;
	char err[256];

	own(topo, &tt);
	own(fts, ftext);
	ck_assert_msg(ibnet_parse(tt.buf, tt.len, topo, t, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(lfts_parse(ftext->buf, ftext->len, l, err, sizeof(err)) == 0, "%s", err);
	sb_release(&tt);
}

/* The table entry of switch name for lid. */
static struct ib_lft_entry *entry(struct ib_lfts *l, const char *sw, unsigned lid)
{
	for (size_t i = 0; i < l->nsw; i++)
		if (!strcmp(l->sw[i].name, sw))
			for (size_t j = 0; j < l->sw[i].n; j++)
				if (l->e[l->sw[i].first + j].lid == lid)
					return &l->e[l->sw[i].first + j];
	return NULL;
}

/* The LID of a CA port, by description. */
static unsigned ca_lid(const struct ibnet *t, const char *desc)
{
	int n = ibnet_find_node(t, desc), peer, pp;
	const struct ibnet_link *k = ibnet_link_at(t, n, 1, &peer, &pp);

	return k->a == n ? k->alid : k->blid;
}

START_TEST(routing_fat_tree_ftree)
{
	struct ibnet t;
	struct ib_lfts l;
	struct sb f = SB_INIT;
	struct rt_report r;
	char err[256];

	load_routes("ibnetdiscover-ft4x2x4.txt", "dump_fts-ft4x2x4-ftree.txt", &t, &l, &f);
	ck_assert_msg(rt_analyze(&t, &l, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.switches, 6);
	ck_assert_uint_eq(r.sources, 16);
	ck_assert_uint_eq(r.dest_lids, 16);
	ck_assert_uint_eq(r.routes, 16 * 15);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.nproblems, 0);
	ck_assert_uint_eq(r.max_hops, 3);
	ck_assert(!r.credit_loop);
	ck_assert_uint_eq(r.channels, 16);
	/* ftree: 12 remote destinations a leaf, 6 on each of its 2 uplinks */
	ck_assert_uint_eq(r.nbal, 4);
	for (size_t i = 0; i < r.nbal; i++) {
		ck_assert_uint_eq(r.bal[i].uplinks, 2);
		ck_assert_uint_eq(r.bal[i].max, 6);
		ck_assert_uint_eq(r.bal[i].min, 6);
	}
	rt_report_release(&r);

	/* a hole: leaf02 loses its entry for h01 */
	unsigned h01 = ca_lid(&t, "h01 HCA-1");
	struct ib_lft_entry *e = entry(&l, "leaf02", h01), saved = *e;

	e->lid = 0xbfff;
	ck_assert_int_eq(rt_analyze(&t, &l, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.unreachable, 4);	/* the four hosts of leaf02 */
	ck_assert_uint_eq(r.nproblems, 1);
	ck_assert_msg(strstr(r.problem[0], "hole: leaf02 has no route to h01 HCA-1 port 1"), "%s", r.problem[0]);
	rt_report_release(&r);
	*e = saved;

	/* a dead end: out of a port that is not cabled */
	e->port = 30;
	ck_assert_int_eq(rt_analyze(&t, &l, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.unreachable, 4);
	ck_assert_msg(strstr(r.problem[0], "dead end: leaf02 routes h01 HCA-1 port 1"), "%s", r.problem[0]);
	ck_assert_msg(strstr(r.problem[0], "out of port 30, which is not cabled"), "%s", r.problem[0]);
	rt_report_release(&r);

	/* a misdelivery: out of leaf02's port 1, to h05 */
	e->port = 1;
	ck_assert_int_eq(rt_analyze(&t, &l, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.unreachable, 4);	/* h05's own traffic to h01 comes back to h05 */
	ck_assert_msg(strstr(r.problem[0], "misroute: leaf02 port 1 delivers h01 HCA-1 port 1"), "%s", r.problem[0]);
	rt_report_release(&r);
	*e = saved;

	/* a loop: the spine leaf02 sends h01 to sends it back to leaf02 */
	int l2 = ibnet_find_node(&t, "leaf02"), sp, spp;

	ibnet_link_at(&t, l2, saved.port, &sp, &spp);
	struct ib_lft_entry *back = entry(&l, t.nodes[sp].desc, h01), bsaved = *back;

	back->port = (uint8_t)spp;
	ck_assert_int_eq(rt_analyze(&t, &l, &r, err, sizeof(err)), 0);
	ck_assert_uint_ge(r.unreachable, 4);
	ck_assert_msg(strstr(r.problem[0], "loop: traffic to h01 HCA-1 port 1"), "%s", r.problem[0]);
	rt_report_release(&r);
	*back = bsaved;

	/* imbalance: leaf01 sends every remote destination up its first uplink */
	unsigned moved = 0;

	for (size_t i = 0; i < l.nsw; i++)
		if (!strcmp(l.sw[i].name, "leaf01"))
			for (size_t j = 0; j < l.sw[i].n; j++)
				if (l.e[l.sw[i].first + j].port == 6) {
					l.e[l.sw[i].first + j].port = 5;
					moved++;
				}
	ck_assert_uint_ge(moved, 6);
	ck_assert_int_eq(rt_analyze(&t, &l, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.unreachable, 0);
	bool seen = false;

	for (size_t i = 0; i < r.nbal; i++)
		if (!strcmp(t.nodes[r.bal[i].sw].desc, "leaf01")) {
			ck_assert_uint_eq(r.bal[i].min, 0);
			ck_assert_uint_eq(r.bal[i].min_port, 6);
			ck_assert_uint_eq(r.bal[i].max_port, 5);
			seen = true;
		}
	ck_assert(seen);
	rt_report_release(&r);
	ib_lfts_release(&l);
	ibnet_release(&t);
	sb_release(&f);
}
END_TEST

START_TEST(routing_ring_credit_loop)
{
	struct ibnet t;
	struct ib_lfts l;
	struct sb f = SB_INIT;
	struct rt_report r;
	char err[256];

	load_routes("ibnetdiscover-ring5.txt", "dump_fts-ring5-minhop.txt", &t, &l, &f);
	ck_assert_msg(rt_analyze(&t, &l, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert_uint_eq(r.channels, 10);
	ck_assert(r.credit_loop);
	/* five channels round the ring, one way */
	unsigned arrows = 0;

	for (const char *p = r.cycle; (p = strstr(p, " -> ")); p++)
		arrows++;
	ck_assert_msg(arrows == 5, "%s", r.cycle);
	ck_assert_msg(strstr(r.cycle, "(closed by the routes to h"), "%s", r.cycle);
	ck_assert_uint_eq(r.nbal, 0);	/* a ring has no uplinks */
	rt_report_release(&r);
	ib_lfts_release(&l);
	ibnet_release(&t);
	sb_release(&f);
}
END_TEST

/*
 * lash on a ring of six, as ibsim and opensm 3.3.23 answered (captured
 * by capture-fabric.sh): the SLs of every path and the switches' SL2VL
 * tables, looked up as the kind asks them.
 */
struct vl_fix {
	struct ib_sa_records pr;
	struct ib_sl2vl tab[16];
	size_t ntab;
	const struct ibnet *t;
	int force_vl;			/* >= 0: every SL to this VL */
	bool no_sl;
};

static int fix_path_sl(void *arg, unsigned slid, unsigned dlid)
{
	struct vl_fix *f = arg;

	for (size_t i = 0; !f->no_sl && i < f->pr.n; i++)
		if (strtoul(ib_sa_get(&f->pr.v[i], "slid"), NULL, 0) == slid &&
		    strtoul(ib_sa_get(&f->pr.v[i], "dlid"), NULL, 0) == dlid)
			return (int)strtoul(ib_sa_get(&f->pr.v[i], "sl"), NULL, 0);
	return -1;
}

static int fix_sl2vl(void *arg, int node, int in, int out, unsigned sl)
{
	struct vl_fix *f = arg;

	for (size_t i = 0; i < f->ntab; i++)
		for (size_t r = 0; f->tab[i].lid == f->t->nodes[node].lid && r < f->tab[i].n; r++)
			if (f->tab[i].rows[r].in == in && f->tab[i].rows[r].out == out)
				return f->force_vl >= 0 ? f->force_vl : f->tab[i].rows[r].vl[sl];
	return -1;
}

START_TEST(routing_credit_loop_broken_by_vls)
{
	struct ibnet t;
	struct ib_lfts l;
	struct sb f = SB_INIT, pr = SB_INIT, sl = SB_INIT;
	struct rt_report r;
	struct rt_vl_report v;
	struct vl_fix fx = { .force_vl = -1 };
	struct rt_vl_source src = { fix_path_sl, fix_sl2vl, &fx };
	char err[256];

	load_routes("ibnetdiscover-ring6-lash.txt", "dump_fts-ring6-lash.txt", &t, &l, &f);
	fx.t = &t;
	own("saquery-p-ring6-lash.txt", &pr);
	ck_assert_msg(saquery_parse(pr.buf, pr.len, &fx.pr, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(fx.pr.n, 30);		/* 6 CAs, every ordered pair */
	own("smpquery-sl2vl-ring6-lash.txt", &sl);
	/* one smpquery output a table: split at its header */
	for (char *p = sl.buf, *next; p && *p; p = next) {
		next = strstr(p + 1, "# SL2VL table:");
		ck_assert_int_eq(sl2vl_parse(p, next ? (size_t)(next - p) : strlen(p), &fx.tab[fx.ntab], err,
					     sizeof(err)), 0);
		fx.ntab++;
	}
	ck_assert_uint_eq(fx.ntab, 12);		/* two ring ports on each of six switches */

	/* on one VL the lash routes close a cycle round the ring */
	ck_assert_msg(rt_analyze(&t, &l, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.unreachable, 0);
	ck_assert(r.credit_loop);
	rt_report_release(&r);

	/* on the SLs lash gave them, each layer on its own VL, they do not */
	ck_assert_msg(rt_analyze_vls(&t, &l, &src, &v, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(!v.credit_loop, "%s", v.cycle);
	ck_assert_uint_eq(v.sls, 0x7);		/* "Lanes needed: 3" in opensm's log */
	ck_assert_uint_eq(v.vls, 0x7);
	ck_assert_uint_eq(v.sl_unknown, 0);
	ck_assert_uint_eq(v.vl_unknown, 0);
	ck_assert_uint_eq(v.routes, 30);	/* one host a switch: every route crosses two */

	/* the same SLs with every SL2VL table mapping them to VL 0: the loop is back */
	fx.force_vl = 0;
	ck_assert_int_eq(rt_analyze_vls(&t, &l, &src, &v, err, sizeof(err)), 0);
	ck_assert(v.credit_loop);
	ck_assert_msg(strstr(v.cycle, " VL0 -> ") && strstr(v.cycle, "(closed by the routes to h"), "%s", v.cycle);
	ck_assert_uint_eq(v.vls, 0x1);

	/* no SL from the SA: counted, taken as SL 0 */
	fx.force_vl = -1;
	fx.no_sl = true;
	ck_assert_int_eq(rt_analyze_vls(&t, &l, &src, &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v.sl_unknown, v.routes);
	ck_assert(v.credit_loop);

	for (size_t i = 0; i < fx.ntab; i++)
		ib_sl2vl_release(&fx.tab[i]);
	ib_sa_records_release(&fx.pr);
	sb_release(&pr);
	sb_release(&sl);
	ib_lfts_release(&l);
	ibnet_release(&t);
	sb_release(&f);
}
END_TEST

/* A topology without LIDs (no SM ran): nothing to route, said so. */
START_TEST(routing_refuses_no_lids)
{
	struct fabgen g;
	struct ibnet plan;
	struct ib_lfts l = { 0 };
	struct rt_report r;
	char err[256];

	ck_assert_int_eq(fabgen_build("fat-tree:leaves=2,spines=1,hosts-per-leaf=2", &g, err, sizeof(err)), 0);
	ck_assert_int_eq(ibnet_parse(g.planned.buf, g.planned.len, "plan", &plan, err, sizeof(err)), 0);
	ck_assert_int_eq(rt_analyze(&plan, &l, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "no CA port with a LID"), "%s", err);
	ibnet_release(&plan);
	fabgen_release(&g);
}
END_TEST

/*
 * Item 9: an SM-written table is judged only once two reads a sweep apart
 * agree.  The fake SM answers sminfo with an ActCount that moves by ten
 * between answers (a sweep each time); the table changes on its first two
 * reads (the SM folding it onto new OperVLs), then stays.  A table that
 * changes on every read is an ERROR naming it.
 */
static long long fake_act;

static int fake_sminfo(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms, struct proc_result *r)
{
	(void)ctx;
	(void)timeout_ms;
	ck_assert_str_eq(argv[0], "sminfo");
	fake_act += 10;
	sb_addf(&r->out, "sminfo: sm lid 1 sm guid 0x2c90300000011, activity count %lld priority 0 state 3 SMINFO_MASTER\n",
		fake_act);
	r->exit_code = 0;
	return 0;
}

static int reads;

static bool table_settles(struct rq_ctx *ctx, void *arg, struct sb *out, char *why, size_t whysz)
{
	(void)ctx;
	(void)why;
	(void)whysz;
	reads++;
	sb_addf(out, "SL2VL: %d\n", *(bool *)arg ? (reads < 3 ? reads : 3) : reads);
	return true;
}

START_TEST(settled_reads)
{
	struct rq_ctx ctx = { .log_fd = -1, .tool = fake_sminfo };
	struct sb out = SB_INIT;
	char why[128] = "";
	bool settles = true;
	int64_t ms;

	ctx.main = rq_result_new("q", NULL, 0);
	ctx.deadline_ms = now_ms() + 4000;
	reads = 0;
	ms = ibkind_settled(&ctx, "sl2vl", table_settles, &settles, &out, why, sizeof(why));
	ck_assert_int_ge(ms, 0);
	/* read 1 and 2 differ, 2 and 3 differ, 3 and 4 agree: judged on the fourth */
	ck_assert_int_eq(reads, 4);
	ck_assert_str_eq(out.buf, "SL2VL: 3\n");
	ck_assert_uint_eq(ctx.main->nfacts, 1);
	ck_assert_str_eq(ctx.main->facts[0].key, "settle_sl2vl");
	ck_assert_msg(strstr(ctx.main->facts[0].value, " ms"), "%s", ctx.main->facts[0].value);
	ck_assert_int_eq(ctx.main->verdict, RQ_NONE);
	rq_result_free(ctx.main);

	ctx.main = rq_result_new("q", NULL, 0);
	ctx.deadline_ms = now_ms() + 3500;
	settles = false;
	reads = 0;
	ms = ibkind_settled(&ctx, "vlarb", table_settles, &settles, &out, why, sizeof(why));
	ck_assert_int_eq(ms, -1);
	ck_assert_int_eq(ctx.main->verdict, RQ_ERROR);
	ck_assert_msg(strstr(ctx.main->reason, "the vlarb never settled: it changed between every two reads a sweep apart"),
		      "%s", ctx.main->reason);
	rq_result_free(ctx.main);
	sb_release(&out);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, settled_reads);
	tcase_add_test(tc, lfts_real_and_own);
	tcase_add_test(tc, sl2vl_vlarb_real_and_own);
	tcase_add_test(tc, ibqueryerrors_and_saquery_own);
	tcase_add_test(tc, routing_fat_tree_ftree);
	tcase_add_test(tc, routing_ring_credit_loop);
	tcase_add_test(tc, routing_credit_loop_broken_by_vls);
	tcase_add_test(tc, routing_refuses_no_lids);
	tcase_add_test(tc, fat_tree_648);
	tcase_add_test(tc, rail_layout);
	tcase_add_test(tc, faults_where_documented);
	tcase_add_test(tc, limits_and_mistakes);
	tcase_add_test(tc, dup_guid_file);
	tcase_add_test(tc, fabric_at_hdr);
	tcase_add_test(tc, import_keeps_width_speed_port_guid);
	tcase_add_test(tc, import_ibdiagnet_files);
	tcase_add_test(tc, import_real_qdr_ddr);
	tcase_add_test(tc, import_moved_guid_collision);
	tcase_add_test(tc, ibnetdiscover_lids);
	tcase_add_test(tc, import_round_trip);
}

RQ_CHECK_MAIN("fabric", add_tests)
