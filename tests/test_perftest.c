/* SPDX-License-Identifier: MIT */
/*
 * perftest, ibv_*_pingpong and rping parsers against real outputs
 * (../shared/real-outputs, or $RQ_REAL_OUTPUTS; those tests skip when the
 * folder is absent) and against the project's own labelled fixtures in
 * fixtures/perftest/.  Real samples carry "#! expect:" lines written from
 * the sample itself; the checker below compares every figure they name.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "parsers/parse_perftest.h"
#include "parsers/parse_pingpong.h"
#include "parsers/parsers.h"
#include "core/util.h"
#include "check_main.h"

extern const struct rq_parser rq_parser_perftest;

static const char *real_dir(void)
{
	const char *d = getenv("RQ_REAL_OUTPUTS");

	return d && *d ? d : "../shared/real-outputs";
}

static bool have_real(void)
{
	DIR *d = opendir(real_dir());

	if (!d)
		return false;
	closedir(d);
	return true;
}

#define SKIP_IF_NO_REAL()						\
	do {								\
		if (!have_real()) {					\
			fprintf(stderr, "SKIP %s: %s absent\n", __func__, real_dir()); \
			return;						\
		}							\
	} while (0)

/* Read a sample, split into body (without "#! " lines) and its expect lines. */
static void load(const char *path, struct sb *body, struct sb *expect)
{
	struct sb raw = SB_INIT;
	const char *p, *end;

	ck_assert_msg(read_file(path, &raw, 0) == 0, "cannot read %s", path);
	sb_init(body);
	if (expect)
		sb_init(expect);
	for (p = raw.buf, end = raw.buf + raw.len; p < end;) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		if (n >= 3 && !strncmp(p, "#! ", 3)) {
			if (expect && n > 11 && !strncmp(p, "#! expect: ", 11))
				sb_add(expect, p + 11, n - 11);
		} else {
			sb_add(body, p, n);
		}
		p += n;
	}
	sb_release(&raw);
}

static void loadf(struct sb *body, struct sb *expect, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void loadf(struct sb *body, struct sb *expect, const char *fmt, ...)
{
	char path[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	load(path, body, expect);
}

static void near(double got, double want, const char *what, const char *file)
{
	ck_assert_msg(!isnan(got) && fabs(got - want) <= 1e-9 + fabs(want) * 1e-9,
		      "%s: %s = %g, expected %g", file, what, got, want);
}

/*
 * Check "#! expect:" lines: "test=Send BW, connection=RC, mtu=1024" and
 * "size=65536 iterations=1000 bw_avg_MBps=360.91 ...".  A size= opens the
 * row that the figures after it are compared with.  Returns how many
 * figures were compared, so a sample whose expect lines we cannot read
 * fails rather than passes.
 */
static int check_expect(const struct pt_report *r, const char *expect, const char *file)
{
	char *copy = xstrdup(expect), *save = NULL, *line;
	int compared = 0;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct pt_row *row = NULL;
		char *t = strstr(line, "test="), *tok, *s2 = NULL;

		if (t) {
			char *e = strchr(t, ',');
			char name[64];

			snprintf(name, sizeof(name), "%.*s", e ? (int)(e - t - 5) : (int)strlen(t + 5), t + 5);
			ck_assert_msg(!strcmp(r->test, name), "%s: test '%s', expected '%s'",
				      file, r->test, name);
			compared++;
			memset(t, ' ', e ? (size_t)(e - t) : strlen(t));
		}
		for (tok = strtok_r(line, " ,;", &s2); tok; tok = strtok_r(NULL, " ,;", &s2)) {
			char *eq = strchr(tok, '=');
			const char *k, *v;
			double d;

			if (!eq)
				continue;
			*eq = '\0';
			k = tok;
			v = eq + 1;
			d = strtod(v, NULL);
			if (!strcmp(k, "size")) {
				row = pt_find_row(r, strtoull(v, NULL, 10));
				ck_assert_msg(row, "%s: no row for size %s", file, v);
			} else if (!strcmp(k, "connection")) {
				ck_assert_str_eq(r->conn, v);
			} else if (!strcmp(k, "link_type")) {
				ck_assert_str_eq(r->link_type, v);
			} else if (!strcmp(k, "device")) {
				ck_assert_str_eq(r->device, v);
			} else if (!strcmp(k, "unit")) {
				ck_assert_str_eq(pt_unit_name(r->unit), v);
			} else if (!strcmp(k, "mtu")) {
				ck_assert_int_eq(r->mtu, atoi(v));
			} else if (!strcmp(k, "gid_index")) {
				ck_assert_int_eq(r->gid_index, atoi(v));
			} else if (!strcmp(k, "qps")) {
				ck_assert_int_eq(r->qps, atoi(v));
			} else if (!strcmp(k, "tx_depth")) {
				ck_assert_int_eq(r->tx_depth, atoi(v));
			} else if (row) {
				static const struct { const char *k; enum pt_col c; } m[] = {
					{ "iterations", PT_C_ITERS },
					{ "bw_peak_MBps", PT_C_BW_PEAK }, { "bw_peak_MiBps", PT_C_BW_PEAK },
					{ "bw_peak_Gbps", PT_C_BW_PEAK }, { "bw_avg_MBps", PT_C_BW_AVG },
					{ "bw_avg_MiBps", PT_C_BW_AVG }, { "bw_avg_Gbps", PT_C_BW_AVG },
					{ "msgrate_Mpps", PT_C_MSGRATE }, { "t_min_us", PT_C_T_MIN },
					{ "t_max_us", PT_C_T_MAX }, { "t_typical_us", PT_C_T_TYPICAL },
					{ "t_avg_us", PT_C_T_AVG }, { "t_stdev_us", PT_C_T_STDEV },
					{ "p99_us", PT_C_P99 }, { "p99.9_us", PT_C_P999 },
				};
				size_t i;

				for (i = 0; i < ARRAY_SIZE(m); i++)
					if (!strcmp(k, m[i].k))
						break;
				if (i == ARRAY_SIZE(m))
					continue;
				/* the unit in the key must be the sample's own */
				if (strstr(k, "_MBps"))
					ck_assert_int_eq(r->unit, PT_MBS);
				if (strstr(k, "_MiBps"))
					ck_assert_int_eq(r->unit, PT_MIBS);
				if (strstr(k, "_Gbps"))
					ck_assert_int_eq(r->unit, PT_GBS);
				near(row->v[m[i].c], d, k, file);
			} else {
				continue;
			}
			compared++;
		}
	}
	free(copy);
	return compared;
}

static void check_dir(const char *sub, enum pt_kind kind)
{
	char dir[512];
	struct dirent **ents;
	int n, files = 0;

	snprintf(dir, sizeof(dir), "%s/%s", real_dir(), sub);
	n = scandir(dir, &ents, NULL, alphasort);
	ck_assert_msg(n > 0, "cannot list %s", dir);
	for (int i = 0; i < n; i++) {
		struct sb body, expect;
		struct pt_report r;
		char err[256], path[1024];

		if (ents[i]->d_name[0] == '.') {
			free(ents[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		load(path, &body, &expect);
		ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0,
			      "%s: %s", path, err);
		ck_assert_msg(r.kind == kind, "%s: kind %d", path, r.kind);
		ck_assert_msg(r.nrows > 0, "%s: no rows", path);
		ck_assert_msg(!r.error[0], "%s: error '%s'", path, r.error);
		ck_assert_msg(check_expect(&r, expect.buf, path) >= 5,
			      "%s: too few expected figures compared", path);
		pt_report_release(&r);
		sb_release(&body);
		sb_release(&expect);
		free(ents[i]);
		files++;
	}
	free(ents);
	ck_assert_int_ge(files, 1);
}

START_TEST(real_bw_tables)
{
	SKIP_IF_NO_REAL();
	check_dir("perftest-bw", PT_BW);
}
END_TEST

START_TEST(real_lat_tables)
{
	SKIP_IF_NO_REAL();
	check_dir("perftest-lat", PT_LAT);
}
END_TEST

START_TEST(real_server_side_and_repeats)
{
	struct sb body;
	struct pt_report r;
	char err[256];

	SKIP_IF_NO_REAL();
	loadf(&body, NULL, "%s/perftest-bw/ib_send_bw-rxe-veth-server.txt", real_dir());
	ck_assert_int_eq(perftest_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	ck_assert(r.server);
	ck_assert_int_eq(r.tx_depth, 0);	/* servers print RX depth only */
	pt_report_release(&r);
	sb_release(&body);

	/* both sides' stdout concatenated: two rows of one size, both kept */
	loadf(&body, NULL, "%s/perftest-bw/ib_write_bw-loopback-8M-ib0-superbench.txt", real_dir());
	ck_assert_int_eq(perftest_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.nrows, 2);
	ck_assert_int_eq(r.rows[0].bytes, 8388608);
	ck_assert_int_eq(r.rows[1].bytes, 8388608);
	pt_report_release(&r);
	sb_release(&body);

	/* interleaved: 23 sizes, the last repeated after the closing line */
	loadf(&body, NULL, "%s/perftest-bw/ib_write_bw-loopback-all-sizes-interleaved-superbench.txt",
	      real_dir());
	ck_assert_int_eq(perftest_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.nrows, 24);
	ck_assert_int_eq(r.rows[0].bytes, 2);
	ck_assert_int_eq(r.rows[22].bytes, 8388608);
	ck_assert_int_eq(r.rows[23].bytes, 8388608);
	pt_report_release(&r);
	sb_release(&body);

	/* Gb/sec is 10^9 bit/s; MiB/sec converts with 2^20 * 8 */
	loadf(&body, NULL, "%s/perftest-bw/ib_write_bw-perftest24.10-MiB-roce-client-debian12.txt",
	      real_dir());
	ck_assert_int_eq(perftest_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	near(pt_gbps(&r, r.rows[0].v[PT_C_BW_AVG]), 11030.45 * 1048576 * 8 / 1e9, "gbps", "24.10");
	pt_report_release(&r);
	sb_release(&body);
}
END_TEST

START_TEST(real_json_valid)
{
	struct sb body;
	struct pt_report r;
	char err[256];
	const struct pt_row *row;

	SKIP_IF_NO_REAL();
	loadf(&body, NULL, "%s/perftest-json/ib_write_bw-out_json-mlx5_11-roce-dpf.txt", real_dir());
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.json && r.json_strict);
	ck_assert_int_eq(r.kind, PT_BW);
	ck_assert_str_eq(r.test, "RDMA_Write_BW");
	ck_assert_str_eq(r.device, "mlx5_11");
	ck_assert_str_eq(r.conn, "RC");
	ck_assert_str_eq(r.link_type, "Ethernet");
	ck_assert_int_eq(r.mtu, 1024);
	ck_assert_int_eq(r.gid_index, 1);
	ck_assert_int_eq(r.tx_depth, 128);
	ck_assert_int_eq(r.qps, 1);
	row = pt_find_row(&r, 65536);
	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(row->iters, 5000);
	near(row->v[PT_C_BW_PEAK], 5293.52, "BW_peak", "json");
	near(row->v[PT_C_BW_AVG], 2229.27, "BW_average", "json");
	near(row->v[PT_C_MSGRATE], 0.035668, "MsgRate", "json");
	pt_report_release(&r);
	sb_release(&body);
}
END_TEST

/* ---- the project's own fixtures (fixtures/perftest/README says what each is) ---- */

START_TEST(fixture_json_45_invalid)
{
	struct sb body;
	struct pt_report r;
	char err[256];
	const struct pt_row *row;
	json_error_t je;
	json_t *strict;

	/* captured from perftest 4.5+0.17-1 in this project's rxe guests */
	loadf(&body, NULL, "fixtures/perftest/ib_write_bw-4.5-out_json-client-rxe-captured.json");
	/* the point of this fixture: a strict reader refuses it */
	strict = json_loadb(body.buf, body.len, 0, &je);
	ck_assert_ptr_null(strict);
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.json && !r.json_strict);
	ck_assert_int_eq(r.kind, PT_BW);
	ck_assert_str_eq(r.test, "RDMA_Write_BW");
	ck_assert_str_eq(r.device, "rxe0");
	ck_assert_str_eq(r.conn, "RC");
	ck_assert_str_eq(r.link_type, "Ethernet");
	ck_assert_int_eq(r.mtu, 1024);
	ck_assert_int_eq(r.gid_index, 1);
	ck_assert_int_eq(r.tx_depth, 128);
	ck_assert_int_eq(r.qps, 1);
	row = pt_find_row(&r, 65536);
	ck_assert_ptr_nonnull(row);
	ck_assert_uint_eq(row->iters, 63);
	near(row->v[PT_C_BW_AVG], 1.96, "BW_average", "4.5 json");
	near(row->v[PT_C_MSGRATE], 0.000031, "MsgRate", "4.5 json");
	pt_report_release(&r);
	sb_release(&body);

	loadf(&body, NULL, "fixtures/perftest/ib_send_lat-4.5-out_json-server-rxe-captured.json");
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.kind, PT_LAT);
	ck_assert_str_eq(r.test, "Send_Latency");
	row = pt_find_row(&r, 2);
	ck_assert_ptr_nonnull(row);
	ck_assert_uint_eq(row->iters, 100);
	near(row->v[PT_C_T_TYPICAL], 296.93, "t_typical", "4.5 lat json");
	near(row->v[PT_C_T_AVG], 742.38, "t_avg", "4.5 lat json");
	near(row->v[PT_C_P999], 3530.84, "percentile_99.9", "4.5 lat json");
	pt_report_release(&r);
	sb_release(&body);

	/* and the text both sides printed in that run */
	loadf(&body, NULL, "fixtures/perftest/ib_write_bw-4.5-D2-server-rxe-captured.txt");
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.server);
	ck_assert_int_eq(r.unit, PT_MBS);
	row = pt_find_row(&r, 65536);
	ck_assert_ptr_nonnull(row);
	near(row->v[PT_C_BW_AVG], 1.96, "server BW average", "4.5 text");
	pt_report_release(&r);
	sb_release(&body);
	loadf(&body, NULL, "fixtures/perftest/ib_write_bw-4.5-D2-client-rxe-captured.txt");
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!r.server);
	ck_assert_int_eq(r.tx_depth, 128);
	ck_assert_int_eq(r.nrows, 1);
	ck_assert_uint_eq(r.rows[0].iters, 63);
	pt_report_release(&r);
	sb_release(&body);
}
END_TEST

START_TEST(fixture_lat_duration_table)
{
	struct sb body;
	struct pt_report r;
	char err[256];

	loadf(&body, NULL, "fixtures/perftest/ib_read_lat-duration-client.txt");
	ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.kind, PT_LAT);
	ck_assert_int_eq(r.nrows, 1);
	near(r.rows[0].v[PT_C_T_AVG], 412.07, "t_avg", "duration");
	near(r.rows[0].v[PT_C_TPS], 2426.76, "tps", "duration");
	ck_assert(isnan(r.rows[0].v[PT_C_T_TYPICAL]));
	pt_report_release(&r);
	sb_release(&body);
}
END_TEST

START_TEST(fixture_failures)
{
	static const struct { const char *file, *error; } cases[] = {
		{ "ib_write_bw-server-wrong-device.txt", "IB device rxe9 not found" },
		{ "ib_write_bw-client-no-server.txt", "Couldn't connect to 10.99.0.2:18515" },
		{ "ib_write_bw-no-devices-captured.txt", "Did not detect devices" },
		{ "ib_write_bw-below-limit.txt", "Error: BW result is below bw limit" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sb body;
		struct pt_report r;
		char err[256];

		loadf(&body, NULL, "fixtures/perftest/%s", cases[i].file);
		ck_assert_msg(perftest_parse(body.buf, body.len, &r, err, sizeof(err)) == 0,
			      "%s: %s", cases[i].file, err);
		ck_assert_msg(!strcmp(r.error, cases[i].error), "%s: error '%s'",
			      cases[i].file, r.error);
		ck_assert_int_ge(r.error_line, 1);
		pt_report_release(&r);
		sb_release(&body);
	}
}
END_TEST

START_TEST(fixture_rejects)
{
	struct sb body;
	struct pt_report r;
	char err[256];
	const char *garbage = "hello world\nthis is not perftest\n";
	const char *badrow = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
			     " 65536      1000             397.24             360.91\n";
	const char *huge_row = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
			       " 65536      1e30             1e999              1e308                -1\n";
	const char *latinkey = "{\n\"caf\xe9\": 1\n}\n";
	const char *badkey = "{\n\"test_info\": {\n\"test\": \"RDMA_Write_BW_Test\",\n\"Device: x\n}\n}\n";

	ck_assert_int_eq(perftest_parse(garbage, strlen(garbage), &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(str_starts(err, "line 1: "), "%s", err);
	ck_assert_int_eq(perftest_parse(badrow, strlen(badrow), &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(str_starts(err, "line 2: row has 4 numbers"), "%s", err);
	ck_assert_int_eq(perftest_parse("{\n\"a\": [1, 2\n", 13, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(str_starts(err, "line "), "%s", err);
	/* an unterminated quoted key leaked what it had read (fuzzing found it) */
	ck_assert_int_eq(perftest_parse(badkey, strlen(badkey), &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "unterminated string"), "%s", err);
	/* numbers out of range: converting them to integers was UB, Inf was dropped (fuzz_parsers) */
	const struct rq_parser *ad = rq_parser_find("perftest");
	json_t *o = NULL, *row;

	ck_assert_int_eq(ad->parse(huge_row, strlen(huge_row), &o, err, sizeof(err)), 0);
	row = json_array_get(json_object_get(o, "rows"), 0);
	ck_assert(json_integer_value(json_object_get(row, "iterations")) == INT64_MAX);
	ck_assert(json_is_null(json_object_get(row, "bw_peak")));
	ck_assert(json_is_null(json_object_get(row, "bw_avg_gbps")));
	json_decref(o);
	ck_assert_int_eq(perftest_parse(huge_row, strlen(huge_row), &r, err, sizeof(err)), 0);
	ck_assert(r.rows[0].iters == UINT64_MAX);
	pt_report_release(&r);
	/* an int field out of int's range converted with UB; it stays unset now */
	const char *bigmtu = "{\"test_info\": {\"test\": \"RDMA_Write_BW_Test\", \"Mtu\": 1e112, "
			     "\"GID_index\": -1e30, \"TX_depth\": 128},\n"
			     "\"results\": {\"MsgSize\": 65536, \"BW_average\": 1.5}}\n";
	ck_assert_int_eq(perftest_parse(bigmtu, strlen(bigmtu), &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r.mtu, 0);
	ck_assert_int_eq(r.gid_index, -1);
	ck_assert_int_eq(r.tx_depth, 128);
	pt_report_release(&r);
	/* a key that is not UTF-8 was dropped silently; refused now, as values are */
	ck_assert_int_eq(perftest_parse(latinkey, strlen(latinkey), &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "key is not UTF-8"), "%s", err);

	loadf(&body, NULL, "fixtures/perftest/version-captured.txt");
	ck_assert_int_eq(perftest_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.version, "6.06");
	pt_report_release(&r);
	sb_release(&body);
}
END_TEST

START_TEST(adapter_json)
{
	const struct rq_parser *p = rq_parser_find("perftest");
	const char *t = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
			"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
			" 2       1000          2.86           87.64        2.95     \t       3.25"
			"        \t2.72   \t\t8.92    \t\t87.64\n";
	json_t *o = NULL, *row;
	char err[256];

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->parse(t, strlen(t), &o, err, sizeof(err)), 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "lat");
	row = json_array_get(json_object_get(o, "rows"), 0);
	near(json_real_value(json_object_get(row, "t_typical_us")), 2.95, "t_typical_us", "adapter");
	near(json_real_value(json_object_get(row, "p99_9_us")), 87.64, "p99_9_us", "adapter");
	ck_assert(json_is_true(json_object_get(o, "ok")));
	json_decref(o);
	ck_assert_ptr_nonnull(rq_parser_find("ibv_rc_pingpong"));
	ck_assert_ptr_nonnull(rq_parser_find("rping"));
}
END_TEST

/* ---- pingpong and rping ---- */

START_TEST(real_pingpong)
{
	struct sb body;
	struct pp_report r;
	char err[256];

	SKIP_IF_NO_REAL();
	loadf(&body, NULL, "%s/pingpong/ibv_rc_pingpong-rxe-veth-client.txt", real_dir());
	ck_assert_msg(pingpong_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.local.set && r.remote.set && r.has_bw && r.has_lat);
	ck_assert_uint_eq(r.local.qpn, 0x12);
	ck_assert_uint_eq(r.local.psn, 0xdedad9);
	ck_assert_uint_eq(r.remote.qpn, 0x11);
	ck_assert_str_eq(r.remote.gid, "fe80::9c7f:f4ff:feaf:f293");
	ck_assert_uint_eq(r.bytes, 8192000);
	near(r.mbit_per_sec, 2956.87, "Mbit/sec", "rc client");
	ck_assert_uint_eq(r.iters, 1000);
	near(r.usec_per_iter, 22.16, "usec/iter", "rc client");
	sb_release(&body);

	/* ud prints ": GID" on the local line */
	loadf(&body, NULL, "%s/pingpong/ibv_ud_pingpong-rxe-server.txt", real_dir());
	ck_assert_msg(pingpong_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.local.gid, "::ffff:10.1.16.61");
	ck_assert_uint_eq(r.local.qpn, 0x33);
	near(r.usec_per_iter, 1060.80, "usec/iter", "ud server");
	near(r.mbit_per_sec, 15.44, "Mbit/sec", "ud server");
	sb_release(&body);

	loadf(&body, NULL, "%s/pingpong/ibv_ud_pingpong-rxe-size-over-mtu-error.txt", real_dir());
	ck_assert_int_eq(pingpong_parse(body.buf, body.len, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.error, "Requested size larger than port MTU (1024)");
	ck_assert(!r.has_lat && !r.local.set);
	sb_release(&body);
}
END_TEST

START_TEST(real_rping)
{
	struct sb body;
	struct rping_report r;
	char err[256];

	SKIP_IF_NO_REAL();
	loadf(&body, NULL, "%s/pingpong/rping-c-C5-v-rxe-client.txt", real_dir());
	ck_assert_msg(rping_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.pings, 5);
	ck_assert_int_eq(r.first_seq, 0);
	ck_assert_int_eq(r.last_seq, 4);
	ck_assert(r.in_order && r.data_ok && r.disconnected && !r.error[0]);
	sb_release(&body);

	loadf(&body, NULL, "%s/pingpong/rping-s-debug-v-rxe-server.txt", real_dir());
	ck_assert_msg(rping_parse(body.buf, body.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.pings, 5);
	ck_assert(r.in_order && r.data_ok && r.established && r.disconnected);
	ck_assert_uint_eq(r.nevents, 3);
	ck_assert_str_eq(r.events[0], "RDMA_CM_EVENT_CONNECT_REQUEST");
	ck_assert_str_eq(r.events[1], "RDMA_CM_EVENT_ESTABLISHED");
	ck_assert_str_eq(r.events[2], "RDMA_CM_EVENT_DISCONNECTED");
	ck_assert_msg(!r.error[0], "error '%s'", r.error);
	sb_release(&body);
}
END_TEST

START_TEST(rping_corruption_and_errors)
{
	const char *flipped = "ping data: rdma-ping-0: ABCDEFGHIJ\n"
			      "ping data: rdma-ping-1: BCDEFXHIJK\n";
	const char *gap = "ping data: rdma-ping-0: ABC\nping data: rdma-ping-2: CDE\n";
	const char *rej = "cma event RDMA_CM_EVENT_REJECTED, error 8\nconnect error -1\n";
	const char *huge = "ping data: rdma-ping-9223372036854775807: A\n"
			   "ping data: rdma-ping-99999999999999999999: A\n";
	struct rping_report r;
	struct pp_report pr;
	char err[256];

	ck_assert_int_eq(rping_parse(flipped, strlen(flipped), &r, err, sizeof(err)), 0);
	ck_assert(!r.data_ok);
	ck_assert_uint_eq(r.bad_line, 2);
	ck_assert_int_eq(rping_parse(gap, strlen(gap), &r, err, sizeof(err)), 0);
	ck_assert(!r.in_order && r.data_ok);
	ck_assert_int_eq(rping_parse(rej, strlen(rej), &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.events[0], "RDMA_CM_EVENT_REJECTED");
	ck_assert_str_eq(r.error, "cma event RDMA_CM_EVENT_REJECTED, error 8");
	ck_assert_int_eq(rping_parse("nothing\n", 8, &r, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pingpong_parse("what is this\n", 13, &pr, err, sizeof(err)), -EINVAL);
	ck_assert_msg(str_starts(err, "line 1: "), "%s", err);
	/* the line after sequence number LONG_MAX overflowed last_seq + 1 (UBSan under fuzz_parsers) */
	ck_assert_int_eq(rping_parse(huge, strlen(huge), &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.pings, 2);
	ck_assert(!r.in_order);

	/* an error line that is not UTF-8 was dropped from the adapter's answer (fuzz_parsers) */
	const struct rq_parser *pp = rq_parser_find("ibv_rc_pingpong");
	const char *latin = "Couldn't connect to caf\xe9:18515\n";
	json_t *j = NULL;

	ck_assert_int_eq(pp->parse(latin, strlen(latin), &j, err, sizeof(err)), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "error")), "Couldn't connect to caf\xef\xbf\xbd:18515");
	json_decref(j);
}
END_TEST

/*
 * Tool output is untrusted: mutated samples (flipped, inserted and
 * deleted bytes, truncation) must parse or be refused, never crash or
 * read out of bounds (this binary runs under ASan and UBSan).
 */
START_TEST(mutations_do_not_crash)
{
	static const char *const files[] = {
		"fixtures/perftest/ib_write_bw-4.5-D2-client-rxe-captured.txt",
		"fixtures/perftest/ib_write_bw-4.5-out_json-client-rxe-captured.json",
		"fixtures/perftest/ib_send_lat-4.5-out_json-server-rxe-captured.json",
		"fixtures/perftest/ib_read_lat-duration-client.txt",
	};
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct sb body;

		loadf(&body, NULL, "%s", files[f]);
		for (int k = 0; k < 400; k++) {
			size_t n = body.len;
			char *m = xmalloc(n + 8), err[256];
			struct pt_report r;
			struct pp_report pr;
			struct rping_report rr;
			json_t *o = NULL;

			memcpy(m, body.buf, n);
			for (int e = 0; e < 1 + k % 8; e++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				size_t at = n ? x % n : 0;

				switch ((x >> 32) % 4) {
				case 0: if (n) m[at] = (char)(x >> 40); break;
				case 1: if (n) m[at] = "{}:,\"\n\t0 -."[(x >> 40) % 12]; break;
				case 2: n = at; break;				/* truncate */
				case 3: if (n) memmove(m + at, m + at + 1, n - at - 1), n--; break;
				}
			}
			if (perftest_parse(m, n, &r, err, sizeof(err)) == 0)
				pt_report_release(&r);
			pingpong_parse(m, n, &pr, err, sizeof(err));
			rping_parse(m, n, &rr, err, sizeof(err));
			if (rq_parser_perftest.parse(m, n, &o, err, sizeof(err)) == 0)
				json_decref(o);
			free(m);
		}
		sb_release(&body);
	}
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, real_bw_tables);
	tcase_add_test(tc, real_lat_tables);
	tcase_add_test(tc, real_server_side_and_repeats);
	tcase_add_test(tc, real_json_valid);
	tcase_add_test(tc, fixture_json_45_invalid);
	tcase_add_test(tc, fixture_lat_duration_table);
	tcase_add_test(tc, fixture_failures);
	tcase_add_test(tc, fixture_rejects);
	tcase_add_test(tc, adapter_json);
	tcase_add_test(tc, real_pingpong);
	tcase_add_test(tc, real_rping);
	tcase_add_test(tc, rping_corruption_and_errors);
	tcase_add_test(tc, mutations_do_not_crash);
}

RQ_CHECK_MAIN("perftest", add_tests)
