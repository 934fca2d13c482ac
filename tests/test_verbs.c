/* SPDX-License-Identifier: MIT */
/*
 * The parts of the verbs engine that need no device: the address a side
 * sends the other (round trip, and refusal of what a broken or hostile
 * peer could send), the latency statistics, size names.
 */
#include <check.h>
#include <string.h>
#include "rdma/verbs.h"
#include "rdma/verbs_pair.h"
#include "check_main.h"

START_TEST(peer_roundtrip)
{
	struct vb_peer a = {
		.nqp = 2, .lid = 0x12, .rkey = 0xdeadbeef, .addr = 0x7f0011223344ull,
		.size = 1 << 20, .mtu = IBV_MTU_1024,
		.qp = { { .qpn = 0x11, .psn = 0xabcdef }, { .qpn = 0xffffff, .psn = 0 } },
	}, b;
	char text[512], why[256];

	for (int i = 0; i < 16; i++)
		a.gid[i] = (uint8_t)(i * 17);
	vb_peer_fmt(&a, text, sizeof(text));
	ck_assert_int_eq(vb_peer_parse(&b, text, why, sizeof(why)), 0);
	ck_assert_int_eq(b.nqp, 2);
	ck_assert_uint_eq(b.lid, 0x12);
	ck_assert_uint_eq(b.rkey, 0xdeadbeef);
	ck_assert_uint_eq(b.addr, 0x7f0011223344ull);
	ck_assert_uint_eq(b.size, 1 << 20);
	ck_assert_int_eq(b.mtu, IBV_MTU_1024);
	ck_assert_mem_eq(b.gid, a.gid, 16);
	ck_assert_uint_eq(b.qp[1].qpn, 0xffffff);
	ck_assert_uint_eq(b.qp[0].psn, 0xabcdef);
	/* unknown keys from a newer peer are ignored */
	strcat(text, " future=1");
	ck_assert_int_eq(vb_peer_parse(&b, text, why, sizeof(why)), 0);
}
END_TEST

START_TEST(peer_refuses_garbage)
{
	static const char *const bad[] = {
		"",
		"hello",
		"vb2 nqp=1 qp=1:1",
		"vb1 nqp=2 qp=1:1",				/* fewer QPs than announced */
		"vb1 nqp=1 qp=1:1 qp=2:2",			/* more */
		"vb1 nqp=17 qp=1:1",				/* above VB_MAX_QP */
		"vb1 nqp=1 qp=16777216:1",			/* QPN is 24 bits */
		"vb1 nqp=1 qp=1:1 gid=00",			/* short GID */
		"vb1 nqp=1 qp=1:1 gid=zz000000000000000000000000000000",
		"vb1 nqp=1 qp=1:1 mtu=9",			/* no such MTU enum */
		"vb1 nqp=1 qp=1:1 lid=70000",
		"vb1 nqp=1 qp=1:1 rkey=-1",
		"vb1 nqp=1 qp=1:1 size=99999999999999999999999",
		"vb1 nqp=1 qp=1:1x",
		"vb1 nqp=1 qp=1:1 noequals",
	};
	struct vb_peer p;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(vb_peer_parse(&p, bad[i], why, sizeof(why)) == -EPROTO, "accepted '%s'", bad[i]);
		ck_assert_msg(why[0], "no reason for '%s'", bad[i]);
	}
}
END_TEST

START_TEST(stats_and_names)
{
	double v[] = { 5, 1, 4, 2, 3, 100 };
	struct vp_stats st;
	char name[32];

	vp_stats(v, 6, &st);
	ck_assert(st.min == 1 && st.max == 100);
	ck_assert(st.median == 3.5);
	ck_assert(st.mean > 19.16 && st.mean < 19.17);
	ck_assert(st.p99 == 100);	/* nearest rank: ceil(0.99 * 6) = 6th */
	double one[] = { 7 };
	vp_stats(one, 1, &st);
	ck_assert(st.median == 7 && st.p99 == 7);
	vp_size_name(4096, name, sizeof(name));
	ck_assert_str_eq(name, "4KiB");
	vp_size_name(1 << 20, name, sizeof(name));
	ck_assert_str_eq(name, "1MiB");
	vp_size_name(1000, name, sizeof(name));
	ck_assert_str_eq(name, "1000B");
	ck_assert_int_eq(vb_mtu_bytes(IBV_MTU_4096), 4096);
	ck_assert_int_eq(vb_mtu_bytes(0), 0);
	ck_assert_int_eq(vp_verdict_for(-ENETDOWN), RQ_SKIP);
	ck_assert_int_eq(vp_verdict_for(-EOPNOTSUPP), RQ_SKIP);
	ck_assert_int_eq(vp_verdict_for(-EINVAL), RQ_FAIL);
}
END_TEST

/*
 * Two TCG guests on a busy host: with 14 (67 ms) the requester timed out
 * on data that had arrived and rxe (6.1) failed the retransmitted SENDs
 * ("remote operation error"); software devices get the long timeout, an
 * HCA perftest's, and a case's own value wins on both.
 */
START_TEST(ack_timeout_per_device)
{
	struct vp_port hca = { .dev = "mlx5_0", .port = 1 };
	struct vp_port rxe = { .dev = "rxe0", .port = 1, .is_virtual = true };

	ck_assert_int_eq(vp_ack_timeout(&hca, 0), 14);
	ck_assert_int_eq(vp_ack_timeout(&rxe, 0), 19);
	ck_assert_int_eq(vp_ack_timeout(&hca, 20), 20);
	ck_assert_int_eq(vp_ack_timeout(&rxe, 14), 14);
	ck_assert_int_eq(vp_ack_timeout(&rxe, 32), 19);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, peer_roundtrip);
	tcase_add_test(tc, peer_refuses_garbage);
	tcase_add_test(tc, stats_and_names);
	tcase_add_test(tc, ack_timeout_per_device);
}

RQ_CHECK_MAIN("verbs", add_tests)
