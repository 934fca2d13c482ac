/* SPDX-License-Identifier: MIT */
/*
 * capture and replay: capturing a node tree (--root) and replaying the copy
 * through every node kind gives the same rows, verdicts and reasons as the
 * original; a redacted copy too, with GUIDs, MACs and the hostname gone;
 * the manifest drives tool replay; redaction keeps what checks need.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qual/capture.h"
#include "nodecase.h"
#include "qual/sysroot.h"
#include "check_main.h"

static const char *const kinds[] = { "driver", "pcie", "mtu", "irq-affinity" };
static const char *const driver_kv[] = { "min_fw=16.35.2000,20.35.1012,22.36.1010,28.39.1002", NULL };
static const char *const fixtures[] = { "cx5-edr-ib-oldfw", "cx6dx-roce-farnuma", "cx7-ndr-ib-raildown",
					"cx6dx-roce-mtu4180", "rxe-vm1" };

static void capture_to(const char *fixture, char *tmp, bool redact)
{
	char src[4096], err[512] = "";
	struct capture_opts o = { .src = src, .dst = tmp, .redact = redact };
	struct capture_stats st;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(src, sizeof(src), "%s/%s", nc_fixture_dir(), fixture);
	ck_assert_msg(rq_capture(&o, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_gt(st.files, 20);
	ck_assert_uint_gt(st.links, 3);
	ck_assert_uint_ge(st.tools, 3);
}

/* Row-by-row identical outcome of kind on two trees. */
static void same_outcome(const char *kind, const char *a, const char *b)
{
	struct nodecase x, y;
	const char *const *kv = !strcmp(kind, "driver") ? driver_kv : NULL;

	nc_init(&x, kind, a, kv);
	nc_init(&y, kind, b, kv);
	nc_run(&x);
	nc_run(&y);
	ck_assert_uint_eq(x.out.n, y.out.n);
	for (size_t i = 0; i < x.out.n; i++) {
		struct rq_result *r = x.out.v[i], *s = y.out.v[i];

		ck_assert_str_eq(r->id, s->id);
		ck_assert_msg(r->verdict == s->verdict, "%s %s: %s vs %s (%s)", kind, r->id,
			      rq_verdict_name(r->verdict), rq_verdict_name(s->verdict), s->reason ? s->reason : "");
		if (r->reason || s->reason)
			ck_assert_str_eq(r->reason, s->reason);
		ck_assert_uint_eq(r->judged, s->judged);
		ck_assert_uint_eq(r->nfigs, s->nfigs);
	}
	nc_release(&x);
	nc_release(&y);
}

START_TEST(capture_replays_identically)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX";

	capture_to(fixtures[_i], tmp, false);
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		same_outcome(kinds[k], fixtures[_i], tmp);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

START_TEST(redacted_capture)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", path[4200], v[128];
	struct sb s = SB_INIT;

	capture_to("cx6dx-roce-2numa", tmp, true);
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		same_outcome(kinds[k], "cx6dx-roce-2numa", tmp);
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/rocep59s0f0/node_guid", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_ne(v, "1070:fd03:00b4:c2d0");
	ck_assert_int_eq((int)strlen(v), 19);
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/hostname", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_eq(v, "host-redacted");
	snprintf(path, sizeof(path), "%s/sys/class/net/ens1f0np0/address", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_ne(v, "10:70:fd:b4:c2:d0");
	/* The IPv4-mapped GID the verbs kinds pick stays as it was. */
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/rocep59s0f0/ports/1/gids/3", tmp);
	ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
	ck_assert_str_eq(v, "0000:0000:0000:0000:0000:ffff:c0a8:320b");
	snprintf(path, sizeof(path), "%s/capture/tools/ibstat.out", tmp);
	ck_assert_int_eq(read_file(path, &s, 0), 0);
	ck_assert_ptr_null(strstr(s.buf, "0x1070fd0300b4c2d0"));
	ck_assert_ptr_nonnull(strstr(s.buf, "Node GUID: 0x"));
	sb_reset(&s);
	snprintf(path, sizeof(path), "%s/capture/manifest", tmp);
	ck_assert_int_eq(read_file(path, &s, 0), 0);
	ck_assert(str_starts(s.buf, "rdmaqual-capture\t1\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "meta\tredacted\tyes\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "link\t/sys/class/infiniband/rocep59s0f0\t../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/rocep59s0f0\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "tool\tcapture/tools/ibv_devinfo_-v.out\t0\tibv_devinfo\t-v\n"));
	sb_release(&s);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* The manifest names each tool's file: replay follows it, not the naming rule. */
START_TEST(manifest_tool_lookup)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", a[4200], b[4200], path[4200];
	struct sb m = SB_INIT, out = SB_INIT;
	struct rq_ctx ctx = { .root = tmp, .replay = true, .log_fd = -1, .tool = rq_tool_replay };
	struct proc_result r;
	static const char *const ibstat[] = { "/usr/sbin/ibstat", NULL };
	static const char *const devx[] = { "ibv_devinfo", "-d", "rocep175s0f0", "-v", NULL };
	static const char *const devbad[] = { "ibv_devinfo", "-d", "mlx5_9", NULL };
	static const char *const none[] = { "perfquery", NULL };
	char err[64];

	capture_to("cx6dx-roce-2numa", tmp, false);
	snprintf(a, sizeof(a), "%s/capture/tools/ibstat.out", tmp);
	snprintf(b, sizeof(b), "%s/capture/tools/renamed.txt", tmp);
	ck_assert_int_eq(rename(a, b), 0);
	snprintf(path, sizeof(path), "%s/capture/manifest", tmp);
	ck_assert_int_eq(read_file(path, &m, 0), 0);
	char *hit = strstr(m.buf, "capture/tools/ibstat.out");

	ck_assert_ptr_nonnull(hit);
	sb_add(&out, m.buf, (size_t)(hit - m.buf));
	sb_adds(&out, "capture/tools/renamed.txt");
	sb_adds(&out, hit + strlen("capture/tools/ibstat.out"));
	ck_assert_int_eq(write_file_atomic(path, out.buf, out.len), 0);

	proc_result_init(&r);
	ck_assert_int_eq(rq_tool_replay(&ctx, ibstat, 1000, &r), 0);
	ck_assert(!r.exec_failed);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert(str_starts(r.out.buf, "CA 'rocep59s0f0'"));
	proc_result_release(&r);

	/* -d DEV is cut from the node-wide capture */
	proc_result_init(&r);
	ck_assert_int_eq(rq_tool_replay(&ctx, devx, 1000, &r), 0);
	ck_assert(str_starts(r.out.buf, "hca_id:\trocep175s0f0\n"));
	ck_assert_ptr_null(strstr(r.out.buf, "rocep59s0f0"));
	proc_result_release(&r);
	proc_result_init(&r);
	ck_assert_int_eq(rq_tool_replay(&ctx, devbad, 1000, &r), 0);
	ck_assert_int_eq(r.exit_code, 255);
	ck_assert_str_eq(r.err.buf, "IB device 'mlx5_9' wasn't found\n");
	proc_result_release(&r);

	/* Not captured: like a tool missing from PATH. */
	proc_result_init(&r);
	ck_assert_int_eq(rq_tool_replay(&ctx, none, 1000, &r), 0);
	ck_assert(r.exec_failed);
	ck_assert_int_eq(r.exec_errno, ENOENT);
	proc_result_release(&r);

	/* A second capture into a non-empty directory is refused. */
	{
		struct capture_opts o = { .src = tmp, .dst = tmp };
		struct capture_stats st;

		ck_assert_int_eq(rq_capture(&o, &st, err, sizeof(err)), -EEXIST);
	}
	sb_release(&m);
	sb_release(&out);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

START_TEST(redact_text)
{
	struct sb s = SB_INIT;
	static const char in[] =
		"node_guid: b859:9f03:0022:626e\n"
		"Port GUID: 0xb8599f030022626e\n"
		"GID[  0]: fe80:0000:0000:0000:b859:9f03:0022:626e\n"
		"GID[  3]: ::ffff:192.168.50.11, RoCE v2\n"
		"GID[  1]: fe80::1270:fdff:feb4:c2d0, RoCE v2\n"
		"gid 0000:0000:0000:0000:0000:ffff:c0a8:320b\n"
		"pci 0000:3b:00.0 fw 20.35.1012 vendor 0x15b3 mask 0000ffff,00000000\n"
		"subnet_prefix fe80:0000:0000:0000 lid 66\n"
		"mac 10:70:fd:b4:c2:d0 zero 0000:0000:0000:0000\n"
		"host edr-node01 says hi to edr-node01.lab\n";
	char guid1[20], guid2[20];

	sb_adds(&s, in);
	capture_redact(&s, "edr-node01");
	ck_assert_ptr_null(strstr(s.buf, "b859:9f03"));
	ck_assert_ptr_null(strstr(s.buf, "b8599f03"));
	ck_assert_ptr_null(strstr(s.buf, "1270:fdff"));
	ck_assert_ptr_null(strstr(s.buf, "10:70:fd:b4"));
	ck_assert_ptr_null(strstr(s.buf, "edr-node01"));
	ck_assert_ptr_nonnull(strstr(s.buf, "host host-redacted says hi to host-redacted.lab"));
	/* what checks need is kept */
	ck_assert_ptr_nonnull(strstr(s.buf, "::ffff:192.168.50.11, RoCE v2"));
	ck_assert_ptr_nonnull(strstr(s.buf, "0000:0000:0000:0000:0000:ffff:c0a8:320b"));
	ck_assert_ptr_nonnull(strstr(s.buf, "pci 0000:3b:00.0 fw 20.35.1012 vendor 0x15b3 mask 0000ffff,00000000"));
	ck_assert_ptr_nonnull(strstr(s.buf, "subnet_prefix fe80:0000:0000:0000 lid 66"));
	ck_assert_ptr_nonnull(strstr(s.buf, "zero 0000:0000:0000:0000"));
	ck_assert_ptr_nonnull(strstr(s.buf, "GID[  0]: fe80:0000:0000:0000:"));
	/* one GUID, one pseudonym, wherever it appears */
	sscanf(strstr(s.buf, "node_guid: ") + 11, "%19s", guid1);
	sscanf(strstr(s.buf, "GID[  0]: fe80:0000:0000:0000:") + 30, "%19s", guid2);
	ck_assert_str_eq(guid1, guid2);
	sb_release(&s);
}
END_TEST

/* What fuzz_inputs found the redaction missing (tests/fuzz/corpus-inputs/regress-redact-*). */
START_TEST(redact_text_edges)
{
	struct sb s = SB_INIT;
	static const char in[] =
		"gid FE80::FDFF:FEB4:C2D0 upper case, zeros compressed\n"
		"port GID fe80:0000:0000:0000:c123:4560:1234:ffa3. Then\n"
		"mac 10:70:fd:b4:c2:d1.\n"
		"pci 0000:3b:00.0 fw 20.35.1012\n";

	sb_adds(&s, in);
	capture_redact(&s, NULL);
	ck_assert_ptr_null(strcasestr(s.buf, "fdff:feb4"));
	ck_assert_ptr_null(strstr(s.buf, "c123:4560"));
	ck_assert_ptr_null(strstr(s.buf, "10:70:fd:b4"));
	/* a dot inside a token still keeps it whole */
	ck_assert_ptr_nonnull(strstr(s.buf, "pci 0000:3b:00.0 fw 20.35.1012"));
	sb_release(&s);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, capture_replays_identically, 0, (int)ARRAY_SIZE(fixtures));
	tcase_add_test(tc, redacted_capture);
	tcase_add_test(tc, manifest_tool_lookup);
	tcase_add_test(tc, redact_text);
	tcase_add_test(tc, redact_text_edges);
}

RQ_CHECK_MAIN("capture", add_tests)
