/* SPDX-License-Identifier: MIT */
/*
 * ibv_devinfo [-v] parser: the real outputs in ../shared/real-outputs/
 * ibv_devinfo (read in place; skipped when that folder is absent: set
 * RQ_REAL_OUTPUTS), the synthesized captures of fixtures/nodes, and
 * malformed input that must be refused with the line, not guessed.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parsers/parse_devinfo.h"
#include "parsers/parsers.h"
#include "core/util.h"
#include "real_outputs.h"
#include "check_main.h"

static void parse_ok(const char *text, struct devinfo *d)
{
	char err[256] = "";
	int ret = ibv_devinfo_parse(text, strlen(text), d, err, sizeof(err));

	ck_assert_msg(ret == 0, "parse failed: %s", err);
}

START_TEST(real_rxe_two_devices)
{
	struct sb s = SB_INIT;
	struct devinfo d;
	const struct devinfo_port *p;

	if (!real_sample("ibv_devinfo/ibv_devinfo-rxe-2dev-ubuntu2404.txt", &s)) {
		sb_release(&s);
		return;	/* real outputs absent (CI): nothing to check */
	}
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.n, 2);
	ck_assert_str_eq(d.v[0].name, "rxe_server");
	ck_assert_str_eq(d.v[0].transport, "InfiniBand (0)");
	ck_assert_str_eq(d.v[0].fw_ver, "0.0.0");
	ck_assert_str_eq(d.v[0].node_guid, "9c7f:f4ff:feaf:f293");
	ck_assert_uint_eq(d.v[0].vendor_id, 0xffffff);
	ck_assert_uint_eq(d.v[0].vendor_part_id, 0);
	ck_assert_int_eq(d.v[0].phys_port_cnt, 1);
	p = devinfo_port(&d, "rxe_server", 1);
	ck_assert_int_eq(p->state, 4);
	ck_assert_str_eq(p->state_str, "PORT_ACTIVE");
	ck_assert_int_eq(p->max_mtu, 4096);
	ck_assert_int_eq(p->active_mtu, 1024);
	ck_assert_int_eq(p->sm_lid, 0);
	ck_assert_int_eq(p->lid, 0);
	ck_assert_str_eq(p->link_layer, "Ethernet");
	ck_assert_str_eq(d.v[1].name, "rxe_client");
	ck_assert_str_eq(d.v[1].node_guid, "fcc7:bfff:fe44:ca52");
	ck_assert_int_eq(devinfo_port(&d, "rxe_client", 1)->active_mtu, 1024);
	ck_assert_ptr_null(devinfo_port(&d, "rxe_client", 2));
	devinfo_release(&d);
	sb_release(&s);
}
END_TEST

START_TEST(real_rxe_verbose_spaces)
{
	struct sb s = SB_INIT;
	struct devinfo d;
	const struct devinfo_port *p;

	if (!real_sample("ibv_devinfo/ibv_devinfo-v-rxe0-ens160.txt", &s)) {
		sb_release(&s);
		return;
	}
	/* tabs converted to spaces in the source */
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.n, 1);
	ck_assert_int_eq(d.v[0].max_qp, 1048560);
	ck_assert_int_eq(d.v[0].num_comp_vectors, 4);
	p = devinfo_port(&d, "rxe0", 1);
	ck_assert_int_eq(p->active_mtu, 1024);
	ck_assert_str_eq(p->active_width, "1X");
	ck_assert_str_eq(p->active_speed, "10.0 Gbps");
	ck_assert_str_eq(p->phys_state, "LINK_UP");
	ck_assert_int_eq(p->ngids, 2);
	ck_assert_str_eq(p->gids[0].gid, "fe80::250:56ff:fea7:7d03");
	ck_assert_str_eq(p->gids[0].type, "RoCE v2");
	ck_assert_int_eq(p->gids[1].index, 1);
	ck_assert_str_eq(p->gids[1].gid, "::ffff:10.1.16.62");
	devinfo_release(&d);
	sb_release(&s);
}
END_TEST

START_TEST(real_rxe_verbose_tabs)
{
	struct sb s = SB_INIT;
	struct devinfo d;
	const struct devinfo_port *p;

	if (!real_sample("ibv_devinfo/ibv_devinfo-v-rxe0-tabs-kernel6.8.txt", &s)) {
		sb_release(&s);
		return;
	}
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.v[0].num_comp_vectors, 12);
	ck_assert_str_eq(d.v[0].node_guid, "f816:3eff:fea3:1662");
	p = devinfo_port(&d, "rxe0", 1);
	ck_assert_int_eq(p->max_mtu, 4096);
	ck_assert_int_eq(p->active_mtu, 1024);
	ck_assert_str_eq(p->active_speed, "2.5 Gbps");
	ck_assert_str_eq(p->gids[1].gid, "::ffff:172.30.0.25");
	devinfo_release(&d);
	sb_release(&s);
}
END_TEST

START_TEST(real_rxe_plain)
{
	struct sb s = SB_INIT;
	struct devinfo d;

	if (!real_sample("ibv_devinfo/ibv_devinfo-rxe0-ens160.txt", &s)) {
		sb_release(&s);
		return;
	}
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.n, 1);
	ck_assert_int_eq(d.v[0].num_comp_vectors, -1);	/* not in the short form */
	ck_assert_int_eq(devinfo_port(&d, "rxe0", 1)->active_mtu, 1024);
	devinfo_release(&d);
	sb_release(&s);
}
END_TEST

/* The fixtures' captures: mlx5 layout with board_id, IB and RoCE GIDs. */
START_TEST(fixture_captures)
{
	struct sb s = SB_INIT;
	struct devinfo d;
	const struct devinfo_port *p;

	ck_assert_int_eq(read_file("fixtures/nodes/cx6dx-roce-mtu4180/capture/tools/ibv_devinfo_-v.out", &s, 0), 0);
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.n, 3);
	ck_assert_str_eq(d.v[0].board_id, "MT_0000000359");
	ck_assert_uint_eq(d.v[0].vendor_id, 0x02c9);
	ck_assert_uint_eq(d.v[0].vendor_part_id, 4125);
	p = devinfo_port(&d, "rocep59s0f1", 1);
	ck_assert_int_eq(p->active_mtu, 2048);
	ck_assert_int_eq(p->ngids, 4);
	ck_assert_str_eq(p->gids[3].gid, "::ffff:192.168.51.11");
	ck_assert_str_eq(p->gids[2].type, "IB/RoCE v1");
	devinfo_release(&d);
	sb_reset(&s);

	ck_assert_int_eq(read_file("fixtures/nodes/cx7-ndr-ib-raildown/capture/tools/ibv_devinfo_-v.out", &s, 0), 0);
	parse_ok(s.buf, &d);
	ck_assert_int_eq(d.n, 8);
	p = devinfo_port(&d, "mlx5_5", 1);
	ck_assert_int_eq(p->state, 1);
	ck_assert_str_eq(p->state_str, "PORT_DOWN");
	ck_assert_str_eq(p->link_layer, "InfiniBand");
	ck_assert_str_eq(p->gids[0].gid, "fe80:0000:0000:0000:946d:ae03:00a0:b050");
	ck_assert_str_eq(p->gids[0].type, "");
	devinfo_release(&d);
	sb_release(&s);
}
END_TEST

START_TEST(malformed)
{
	struct devinfo d;
	char err[256];
	static const char trunc[] = "hca_id:\tmlx5_0\n\tfw_ver:\t\t\t\t20.35.1012\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n";

	ck_assert_int_eq(ibv_devinfo_parse("\tfw_ver: 1.2.3\n", 15, &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: expected \"hca_id:\" before device lines");
	ck_assert_int_eq(ibv_devinfo_parse("hca_id:\tx\n\t\tport:\tone\n", 22, &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: port number expected after \"port:\"");
	ck_assert_int_eq(ibv_devinfo_parse("hca_id:\tx\n\t\t\tGID[  0]:\t\tfe80::1\n", 31, &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: GID line outside a port");
	ck_assert_int_eq(ibv_devinfo_parse(trunc, strlen(trunc), &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "mlx5_0 port 1: state or link_layer missing (truncated output?)");
	/* No devices is not an error: zero devices. */
	ck_assert_int_eq(ibv_devinfo_parse("No IB devices found\n", 20, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(d.n, 0);
	devinfo_release(&d);
}
END_TEST

START_TEST(json_adapter)
{
	const struct rq_parser *p = rq_parser_find("ibv_devinfo");
	struct sb s = SB_INIT;
	json_t *j = NULL;
	char err[256];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(read_file("fixtures/nodes/rxe-vm1/capture/tools/ibv_devinfo_-v.out", &s, 0), 0);
	ck_assert_int_eq(p->parse(s.buf, s.len, &j, err, sizeof(err)), 0);
	json_t *port = json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 0), "ports"), 0);

	ck_assert_int_eq(json_integer_value(json_object_get(port, "active_mtu")), 1024);
	ck_assert_str_eq(json_string_value(json_object_get(port, "link_layer")), "Ethernet");
	json_decref(j);
	ck_assert_int_eq(p->parse("garbage\n", 8, &j, err, sizeof(err)), -EINVAL);

	/* a name that is not UTF-8 was dropped from the answer (fuzz_parsers) */
	char *at = strstr(s.buf, "rxe0");
	ck_assert_ptr_nonnull(at);
	at[2] = '\xe9';
	ck_assert_int_eq(p->parse(s.buf, s.len, &j, err, sizeof(err)), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "devices"), 0),
							    "hca_id")), "rx\xef\xbf\xbd" "0");
	json_decref(j);
	sb_release(&s);
}
END_TEST

/*
 * libibverbs before 1.1.4 prints no link_layer line.  Synthesized from that
 * devinfo.c's format (a ConnectX-2 era port), and the real rxe sample with
 * its link_layer line taken out in memory: both parse, link layer unknown
 * and named missing.
 */
START_TEST(old_libibverbs_no_link_layer)
{
	static const char old[] =
		"hca_id:\tmlx4_0\n"
		"\tfw_ver:\t\t\t\t2.7.000\n"
		"\tnode_guid:\t\t\t0002:c903:0007:e2a0\n"
		"\tsys_image_guid:\t\t\t0002:c903:0007:e2a3\n"
		"\tvendor_id:\t\t\t0x02c9\n"
		"\tvendor_part_id:\t\t\t26428\n"
		"\thw_ver:\t\t\t\t0xB0\n"
		"\tboard_id:\t\t\tMT_0D80110009\n"
		"\tphys_port_cnt:\t\t\t1\n"
		"\t\tport:\t1\n"
		"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
		"\t\t\tmax_mtu:\t\t2048 (4)\n"
		"\t\t\tactive_mtu:\t\t2048 (4)\n"
		"\t\t\tsm_lid:\t\t\t1\n"
		"\t\t\tport_lid:\t\t3\n"
		"\t\t\tport_lmc:\t\t0x00\n";
	struct sb s = SB_INIT, cut = SB_INIT;
	struct devinfo d;
	const struct devinfo_port *p;
	char err[256];
	json_t *j = NULL, *jp;

	ck_assert_msg(ibv_devinfo_parse(old, strlen(old), &d, err, sizeof(err)) == 0, "%s", err);
	p = devinfo_port(&d, "mlx4_0", 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->active_mtu, 2048);
	ck_assert_int_eq(p->lid, 3);
	ck_assert_str_eq(p->link_layer, "");
	ck_assert_uint_eq(p->missing.n, 1);
	ck_assert_str_eq(p->missing.name[0], "link_layer");
	devinfo_release(&d);
	ck_assert_int_eq(rq_parser_find("ibv_devinfo")->parse(old, strlen(old), &j, err, sizeof(err)), 0);
	jp = json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 0), "ports"), 0);
	ck_assert(json_is_null(json_object_get(jp, "link_layer")));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(jp, "missing"), 0)), "link_layer");
	json_decref(j);

	if (!real_sample("ibv_devinfo/ibv_devinfo-rxe0-ens160.txt", &s)) {
		fprintf(stderr, "skip: real sample absent\n");
		sb_release(&s);
		return;
	}
	for (const char *q = s.buf; *q;) {
		const char *nl = strchr(q, '\n');
		size_t n = nl ? (size_t)(nl - q + 1) : strlen(q);

		if (!strstr(q, "link_layer:") || strstr(q, "link_layer:") >= q + n)
			sb_add(&cut, q, n);
		q += n;
	}
	ck_assert_uint_lt(cut.len, s.len);
	ck_assert_msg(ibv_devinfo_parse(cut.buf, cut.len, &d, err, sizeof(err)) == 0, "%s", err);
	p = devinfo_port(&d, "rxe0", 1);
	ck_assert_int_eq(p->active_mtu, 1024);
	ck_assert(rq_missing_has(&p->missing, "link_layer"));
	devinfo_release(&d);
	sb_release(&cut);
	sb_release(&s);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, real_rxe_two_devices);
	tcase_add_test(tc, real_rxe_verbose_spaces);
	tcase_add_test(tc, real_rxe_verbose_tabs);
	tcase_add_test(tc, real_rxe_plain);
	tcase_add_test(tc, fixture_captures);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, json_adapter);
	tcase_add_test(tc, old_libibverbs_no_link_layer);
}

RQ_CHECK_MAIN("parse_devinfo", add_tests)
