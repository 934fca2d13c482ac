/* SPDX-License-Identifier: MIT */
/*
 * The MPI benchmark parsers: OSU micro-benchmarks and nccl-tests, against
 * the real published outputs of ../shared/real-outputs/osu and
 * .../nccl-tests (read in place, skipped when absent), and malformed or
 * hostile text (synthesized here, from the tools' print formats); and
 * rdmaqual's own benchmark, rdmaqual-coll, against its outputs captured in
 * fixtures/tool-output/mpi.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "parsers/parse_coll.h"
#include "parsers/parse_mpi_used.h"
#include "parsers/parse_nccl.h"
#include "parsers/parse_osu.h"
#include "parsers/parsers.h"
#include "core/util.h"
#include "real_outputs.h"
#include "check_main.h"

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-6, "%f != %f", (double)(a), (double)(b))

static bool sample(const char *name, struct sb *s)
{
	if (real_sample(name, s))
		return true;
	fprintf(stderr, "skip: real sample %s absent\n", name);
	return false;
}

static const struct osu_row *osu_size(const struct osu_report *r, uint64_t size)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->row[i].size == size)
			return &r->row[i];
	ck_abort_msg("no row of size %llu", (unsigned long long)size);
	return NULL;
}

START_TEST(osu_alltoall_75)
{
	struct sb s = SB_INIT;
	struct osu_report r;
	char err[256] = "";

	if (!sample("osu/osu_alltoall-v7.5-36ranks-1node-oci.txt", &s))
		goto out;
	ck_assert_msg(osu_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.version, "7.5");
	ck_assert_str_eq(r.test, "All-to-All Personalized Exchange Latency Test");
	ck_assert_str_eq(r.datatype, "MPI_CHAR");
	ck_assert_uint_eq(r.nrows, 27);
	ck_assert_uint_eq(r.ncols, 1);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_LAT), 0);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_LAT_MIN), -1);
	NEAR(osu_size(&r, 1)->v[0], 10.29);
	NEAR(osu_size(&r, 64)->v[0], 114.09);
	NEAR(osu_size(&r, 128)->v[0], 88.31);	/* non-monotonic, kept as printed */
	NEAR(osu_size(&r, 2048)->v[0], 584.21);
	NEAR(osu_size(&r, 4096)->v[0], 57.71);
	NEAR(osu_size(&r, 1048576)->v[0], 14171.51);
	NEAR(osu_size(&r, 67108864)->v[0], 747888.64);
	ck_assert_uint_eq(r.row[26].size, 67108864);
	osu_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(osu_bibw_datatype_after_header)
{
	struct sb s = SB_INIT;
	struct osu_report r;
	char err[256] = "";

	if (!sample("osu/osu_bibw-v7.1-datatype-after-header-oneapi.txt", &s))
		goto out;
	ck_assert_msg(osu_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.version, "7.1");
	ck_assert_str_eq(r.test, "Bi-Directional Bandwidth Test");
	ck_assert_str_eq(r.datatype, "MPI_CHAR");
	ck_assert_uint_eq(r.nrows, 23);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_BW), 0);
	NEAR(osu_size(&r, 1)->v[0], 6.10);
	NEAR(osu_size(&r, 1024)->v[0], 4087.70);
	NEAR(osu_size(&r, 131072)->v[0], 34041.75);
	NEAR(osu_size(&r, 262144)->v[0], 18963.82);
	NEAR(osu_size(&r, 4194304)->v[0], 18822.70);
	osu_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(osu_latency_50_banner)
{
	struct sb s = SB_INIT;
	struct osu_report r;
	char err[256] = "";

	if (!sample("osu/osu_latency-v5.0-srun-2nodes-libfabric-cray859.txt", &s))
		goto out;
	/* the poster's ### lines and the srun echo before OMB's banner */
	ck_assert_msg(osu_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.version, "5.0");
	ck_assert_str_eq(r.test, "Latency Test");
	ck_assert_str_eq(r.datatype, "");
	ck_assert_uint_eq(r.nrows, 24);
	ck_assert_str_eq(r.col_name[0], "Latency (us)");
	ck_assert_int_eq(r.col[0], OSU_COL_LAT);
	ck_assert_uint_eq(r.row[0].size, 0);
	NEAR(osu_size(&r, 0)->v[0], 1.84);
	NEAR(osu_size(&r, 1)->v[0], 1.85);
	NEAR(osu_size(&r, 8)->v[0], 1.86);
	NEAR(osu_size(&r, 4096)->v[0], 3.16);
	NEAR(osu_size(&r, 16384)->v[0], 13.62);
	NEAR(osu_size(&r, 1048576)->v[0], 117.07);
	NEAR(osu_size(&r, 4194304)->v[0], 497.37);
	osu_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(osu_mbw_mr_pairs)
{
	struct sb s = SB_INIT;
	struct osu_report r;
	char err[256] = "";
	json_t *o = NULL;

	if (!sample("osu/osu_mbw_mr-v5.7-620pairs-slingshot-shsdocs.txt", &s))
		goto out;
	ck_assert_msg(osu_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.version, "5.7");
	ck_assert_uint_eq(r.pairs, 620);
	ck_assert_uint_eq(r.window, 64);
	ck_assert_uint_eq(r.nrows, 23);
	ck_assert_uint_eq(r.ncols, 2);
	ck_assert_int_eq(r.col[0], OSU_COL_BW);
	ck_assert_int_eq(r.col[1], OSU_COL_MSG_RATE);
	NEAR(osu_size(&r, 1)->v[0], 1348.55);
	NEAR(osu_size(&r, 1)->v[1], 1348549706.72);
	NEAR(osu_size(&r, 64)->v[1], 1322896425.33);
	NEAR(osu_size(&r, 4096)->v[0], 367815.47);
	NEAR(osu_size(&r, 4194304)->v[0], 378065.80);
	NEAR(osu_size(&r, 4194304)->v[1], 90137.91);
	osu_release(&r);
	/* the adapter of `rdmaqual parse osu` */
	ck_assert_int_eq(rq_parser_find("osu")->parse(s.buf, s.len, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pairs")), 620);
	json_t *last = json_array_get(json_object_get(o, "rows"), 22);

	NEAR(json_real_value(json_object_get(last, "bandwidth_MBps")), 378065.80);
	NEAR(json_real_value(json_object_get(last, "messages_per_s")), 90137.91);
	json_decref(o);
out:
	sb_release(&s);
}
END_TEST

START_TEST(osu_reduce_full)
{
	struct sb s = SB_INIT;
	struct osu_report r;
	char err[256] = "";
	const struct osu_row *w;

	if (!sample("osu/osu_reduce-f-full-v6.2-200nodes-openib.txt", &s))
		goto out;
	ck_assert_msg(osu_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.test, "Reduce Latency Test");
	ck_assert_uint_eq(r.nrows, 6);
	ck_assert_uint_eq(r.ncols, 4);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_LAT), 0);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_LAT_MIN), 1);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_LAT_MAX), 2);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_ITERS), 3);
	w = osu_size(&r, 100000);
	NEAR(w->v[0], 132.14);
	NEAR(w->v[1], 31.23);
	NEAR(w->v[2], 831.04);
	NEAR(w->v[3], 100);
	w = osu_size(&r, 800000);
	NEAR(w->v[0], 8297.08);
	NEAR(w->v[2], 9236.95);
	w = osu_size(&r, 3200000);
	NEAR(w->v[0], 276274.93);
	NEAR(w->v[1], 1630.58);
	NEAR(w->v[2], 281278.16);
	osu_release(&r);
out:
	sb_release(&s);
}
END_TEST

/* OMB 7's -c adds Validation (osu_util.c prints Pass or Fail per size) */
START_TEST(osu_validation_and_bad)
{
	static const char ok[] =
		"# OSU MPI Allreduce Latency Test v7.3\n"
		"# Datatype: MPI_INT.\n"
		"# Size       Avg Latency(us)        Validation\n"
		"4                       1.62              Pass\n"
		"8                       1.60              Fail\n";
	static const char shortrow[] =
		"# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n4\n";
	static const char word[] =
		"# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n4   fast\n";
	static const char none[] = "ssh: connect to host vm1 port 22: Connection refused\n";
	static const char twice[] =
		"# OSU MPI Latency Test v7.3\n# Size  Latency (us)\n# OSU MPI Latency Test v7.3\n";
	static const char died[] =
		"# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n0   1.5\n"
		"mpirun noticed that process rank 1 with PID 0 on node vm1 exited on signal 9 (Killed).\n";
	struct osu_report r;
	char err[256] = "";

	ck_assert_msg(osu_parse(ok, sizeof(ok) - 1, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(osu_col_find(&r, OSU_COL_VALID), 1);
	ck_assert_uint_eq(r.failed_rows, 1);
	NEAR(r.row[0].v[1], 1);
	NEAR(r.row[1].v[1], 0);
	osu_release(&r);
	ck_assert_int_eq(osu_parse(shortrow, sizeof(shortrow) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 3: 0 figures, the header has 1 columns");
	ck_assert_int_eq(osu_parse(word, sizeof(word) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 3: expected a figure under 'Latency (us)', got 'fast'");
	ck_assert_int_eq(osu_parse(none, sizeof(none) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "no '# OSU ... Test' banner: not OSU micro-benchmarks output");
	ck_assert_int_eq(osu_parse(twice, sizeof(twice) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 3: a second OSU banner: one test's output per file");
	/* a run killed after its first size: the rows it printed */
	ck_assert_msg(osu_parse(died, sizeof(died) - 1, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.nrows, 1);
	osu_release(&r);
}
END_TEST

static const struct nccl_row *nccl_size(const struct nccl_report *r, uint64_t size)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->row[i].size == size)
			return &r->row[i];
	ck_abort_msg("no row of size %llu", (unsigned long long)size);
	return NULL;
}

START_TEST(nccl_allreduce_h100)
{
	struct sb s = SB_INIT;
	struct nccl_report r;
	char err[256] = "";
	const struct nccl_row *w;
	unsigned hosts = 0;

	if (!sample("nccl-tests/all_reduce_perf-h100-16ranks-2vm-a3mega.txt", &s))
		goto out;
	ck_assert_msg(nccl_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.new_layout);
	ck_assert_uint_eq(r.nranks, 16);
	for (size_t i = 0; i < r.nranks; i++) {
		ck_assert_int_eq(r.rank[i].rank, (int)i);
		ck_assert_str_eq(r.rank[i].name, "NVIDIA H100 80GB HBM3");
		hosts += !i || strcmp(r.rank[i].host, r.rank[i - 1].host);
	}
	ck_assert_uint_eq(hosts, 2);
	ck_assert_str_eq(r.rank[8].host, "ztan-mig-gq73");
	ck_assert_str_eq(r.rank[0].busid, "0000:04:00");
	ck_assert_int_eq(r.rank[15].group, 0);
	ck_assert_uint_eq(r.nrows, 31);
	ck_assert_uint_eq(r.iters, 20);
	ck_assert_uint_eq(r.warmup_iters, 5);
	ck_assert_int_eq(r.validation, 1);
	for (size_t i = 0; i < r.nrows; i++) {
		ck_assert_int_eq(r.row[i].oop.wrong, 0);
		ck_assert_int_eq(r.row[i].ip.wrong, 0);
		ck_assert_str_eq(r.row[i].redop, "sum");
		ck_assert_int_eq(r.row[i].root, -1);
	}
	w = nccl_size(&r, 8);
	ck_assert_uint_eq(w->count, 2);
	NEAR(w->oop.time_us, 135.8);
	NEAR(w->oop.busbw, 0);
	NEAR(w->ip.time_us, 123.5);
	w = nccl_size(&r, 1073741824);
	NEAR(w->oop.time_us, 6759.0);
	NEAR(w->oop.algbw, 158.86);
	NEAR(w->oop.busbw, 297.86);
	NEAR(w->ip.busbw, 298.82);
	w = nccl_size(&r, 8589934592ULL);
	ck_assert_uint_eq(w->count, 2147483648ULL);
	NEAR(w->oop.time_us, 47535);	/* no decimal point at this size */
	NEAR(w->oop.algbw, 180.71);
	NEAR(w->oop.busbw, 338.82);
	NEAR(w->ip.time_us, 47743);
	NEAR(w->ip.algbw, 179.92);
	NEAR(w->ip.busbw, 337.35);
	ck_assert(r.has_oob && r.oob == 0 && r.oob_ok);
	NEAR(r.avg_busbw, 70.742);
	nccl_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(nccl_allreduce_old_layout)
{
	struct sb s = SB_INIT;
	struct nccl_report r;
	char err[256] = "";
	const struct nccl_row *w;

	if (!sample("nccl-tests/all_reduce_perf-a100-8gpu-old-error-column-superbench.txt", &s))
		goto out;
	/* the NCCL INFO line between the header and the first row is skipped */
	ck_assert_msg(nccl_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(!r.new_layout);
	ck_assert_uint_eq(r.nrows, 34);
	ck_assert_uint_eq(r.ngpus, 8);
	ck_assert_int_eq(r.validation, 0);
	ck_assert_uint_eq(r.nranks, 8);
	ck_assert_int_eq(r.rank[7].rank, 7);
	ck_assert_int_eq(r.rank[7].group, -1);
	ck_assert_int_eq(r.rank[7].pid, 112424);
	ck_assert_str_eq(r.rank[7].name, "A100-SXM4-40GB");
	ck_assert_uint_eq(r.row[0].size, 0);
	NEAR(r.row[0].oop.time_us, 35.20);
	ck_assert_str_eq(r.row[0].type, "float");
	ck_assert_str_eq(r.row[0].redop, "sum");
	for (size_t i = 0; i < r.nrows; i++) {
		NEAR(r.row[i].oop.error, -1);	/* N/A */
		ck_assert_int_eq(r.row[i].oop.wrong, -1);
	}
	w = nccl_size(&r, 1073741824);
	ck_assert_uint_eq(w->count, 268435456);
	NEAR(w->oop.time_us, 8159.5);
	NEAR(w->oop.algbw, 131.59);
	NEAR(w->oop.busbw, 230.29);
	NEAR(w->ip.time_us, 8176.5);
	NEAR(w->ip.algbw, 131.32);
	NEAR(w->ip.busbw, 229.81);
	w = &r.row[33];
	ck_assert_uint_eq(w->size, 8589934592ULL);
	NEAR(w->oop.time_us, 63896);
	NEAR(w->ip.busbw, 235.03);
	NEAR(r.avg_busbw, 68.4048);
	ck_assert(r.oob_ok);
	nccl_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(nccl_alltoall_empty_redop)
{
	struct sb s = SB_INIT;
	struct nccl_report r;
	char err[256] = "";
	const struct nccl_row *w;

	if (!sample("nccl-tests/alltoall_perf-a100-8gpu-empty-redop-superbench.txt", &s))
		goto out;
	ck_assert_msg(nccl_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.nrows, 34);
	for (size_t i = 0; i < r.nrows; i++)
		ck_assert_str_eq(r.row[i].redop, "");
	w = nccl_size(&r, 32);
	ck_assert_uint_eq(w->count, 1);
	NEAR(w->oop.time_us, 89.00);
	NEAR(w->ip.time_us, 85.13);
	w = nccl_size(&r, 1073741824);
	ck_assert_uint_eq(w->count, 33554432);
	NEAR(w->oop.time_us, 4335.5);
	NEAR(w->oop.algbw, 247.66);
	NEAR(w->oop.busbw, 216.71);
	NEAR(w->ip.algbw, 251.22);
	NEAR(w->ip.busbw, 219.81);
	w = &r.row[33];
	NEAR(w->oop.busbw, 224.31);
	NEAR(w->ip.busbw, 226.16);
	NEAR(r.avg_busbw, 58.6481);
	ck_assert_uint_eq(r.nranks, 8);
	nccl_release(&r);
out:
	sb_release(&s);
}
END_TEST

START_TEST(nccl_one_rank_na)
{
	struct sb s = SB_INIT;
	struct nccl_report r;
	char err[256] = "";
	json_t *o = NULL;

	if (!sample("nccl-tests/alltoall_perf-rtx5090-1gpu-inplace-NA-avgbw0-issue287.txt", &s))
		goto out;
	/* the shell prompt and sudo's password prompt are not the table */
	ck_assert_msg(nccl_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.nranks, 1);
	ck_assert_str_eq(r.rank[0].name, "NVIDIA GeForce RTX 5090");
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert_uint_eq(r.row[0].size, 33554432);
	ck_assert_uint_eq(r.row[0].count, 8388608);
	ck_assert_str_eq(r.row[0].redop, "none");
	ck_assert_int_eq(r.row[0].root, -1);
	NEAR(r.row[0].oop.time_us, 19.56);
	NEAR(r.row[0].oop.algbw, 1715.44);
	NEAR(r.row[0].oop.busbw, 0);
	ck_assert_int_eq(r.row[0].oop.wrong, 0);
	NEAR(r.row[0].ip.time_us, 0.78);
	NEAR(r.row[0].ip.algbw, 43046.10);
	ck_assert_int_eq(r.row[0].ip.wrong, -1);	/* N/A */
	ck_assert(r.has_avg_busbw);
	NEAR(r.avg_busbw, 0);
	nccl_release(&r);
	ck_assert_int_eq(rq_parser_find("nccl-tests")->parse(s.buf, s.len, &o, err, sizeof(err)), 0);
	json_t *row = json_array_get(json_object_get(o, "rows"), 0);

	ck_assert(json_is_null(json_object_get(json_object_get(row, "in_place"), "wrong")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(row, "out_of_place"),
							    "wrong")), 0);
	json_decref(o);
out:
	sb_release(&s);
}
END_TEST

/* nccl-tests' current layout (src/common.cu): a failed check counts #wrong */
START_TEST(nccl_wrong_and_bad)
{
	static const char hdr[] =
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
	static const char wrong[] =
		"    1048576        262144     float     sum      -1    203.2    5.16    9.68      3    207.2    5.06    9.49      0\n"
		"# Out of bounds values : 3 FAILED\n";
	static const char shortrow[] = "    1048576        262144     float     sum      -1    203.2    5.16\n";
	static const char badwrong[] =
		"    1048576        262144     float     sum      -1    203.2    5.16    9.68      x    207.2    5.06    9.49      0\n";
	struct nccl_report r;
	char err[256] = "", text[1024];

	snprintf(text, sizeof(text), "%s%s", hdr, wrong);
	ck_assert_msg(nccl_parse(text, strlen(text), &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.row[0].oop.wrong, 3);
	ck_assert(r.has_oob && r.oob == 3 && !r.oob_ok);
	nccl_release(&r);
	snprintf(text, sizeof(text), "%s%s", hdr, shortrow);
	ck_assert_int_eq(nccl_parse(text, strlen(text), &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: 7 cells, a row has size, count, type, [redop], [root] and "
			 "eight figures");
	snprintf(text, sizeof(text), "%s%s", hdr, badwrong);
	ck_assert_int_eq(nccl_parse(text, strlen(text), &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: expected a count or N/A under #wrong, got 'x'");
	ck_assert_int_eq(nccl_parse(wrong, sizeof(wrong) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "no '#  size  count  type ...' column header: not nccl-tests output");
}
END_TEST

static void fixture(const char *name, struct sb *s)
{
	char path[256];

	snprintf(path, sizeof(path), "fixtures/tool-output/mpi/%s", name);
	ck_assert_int_ge(read_file(path, s, 0), 0);
}

START_TEST(coll_allreduce)
{
	struct sb s = SB_INIT;
	struct coll_report r;
	char err[256] = "";

	fixture("rdmaqual-coll-allreduce-4ranks.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.op, "allreduce");
	ck_assert_int_eq(r.nranks, 4);
	ck_assert_uint_eq(r.iters, 10);
	ck_assert_uint_eq(r.warmup, 2);
	ck_assert(r.check && r.ended);
	ck_assert_uint_eq(r.total_wrong, 0);
	ck_assert_str_eq(r.host[3], "vm");
	ck_assert_uint_eq(r.nrows, 14);	/* 8 B .. 64 KiB */
	ck_assert_uint_eq(r.row[0].size, 8);
	ck_assert_uint_eq(r.row[0].count, 2);
	ck_assert_uint_eq(r.row[13].size, 65536);
	for (size_t i = 0; i < r.nrows; i++) {
		const struct coll_row *w = &r.row[i];
		double sum = 0;

		ck_assert_ptr_nonnull(w->rank_us);
		ck_assert_ptr_null(w->pair_bw);
		for (int k = 0; k < r.nranks; k++)
			sum += w->rank_us[k];
		/* the row is what its rank times say, to the printed precision */
		ck_assert_msg(fabs(sum / 4 - w->avg_us) < 0.01, "avg %f of %f", w->avg_us, sum / 4);
		NEAR(w->rank_us[w->min_rank], w->min_us);
		NEAR(w->rank_us[w->max_rank], w->max_us);
		/* nccl-tests' busbw for allreduce: algbw x 2(n-1)/n */
		ck_assert_msg(fabs(w->busbw - w->algbw * 1.5) <= 0.0015, "%f %f", w->busbw, w->algbw);
		ck_assert_uint_eq(w->wrong, 0);
	}
	coll_release(&r);
	sb_release(&s);
}
END_TEST

START_TEST(coll_bisection_pairs)
{
	struct sb s = SB_INIT;
	struct coll_report r;
	char err[256] = "";
	json_t *o = NULL;

	fixture("rdmaqual-coll-bisection-4ranks.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.op, "bisection");
	ck_assert_uint_eq(r.nrows, 4);	/* 1, 4, 16, 64 KiB */
	for (size_t i = 0; i < r.nrows; i++) {
		const struct coll_row *w = &r.row[i];
		double agg = 0;

		ck_assert_ptr_nonnull(w->pair_bw);
		/* each rank of one half with its partner in the other */
		ck_assert_int_eq(w->pair_to[0], 2);
		ck_assert_int_eq(w->pair_to[1], 3);
		ck_assert_int_eq(w->pair_to[2], 0);
		ck_assert_int_eq(w->pair_to[3], 1);
		for (int k = 0; k < 4; k++) {
			/* a link's GB/s is the size over that rank's time */
			ck_assert_msg(fabs(w->pair_bw[k] - w->size / w->rank_us[k] / 1e3) < 0.002,
				      "%f", w->pair_bw[k]);
			agg += w->pair_bw[k];
		}
		ck_assert(w->has_aggregate);
		ck_assert_msg(fabs(agg - w->aggregate) < 0.005, "%f %f", agg, w->aggregate);
		NEAR(w->busbw, w->algbw);
	}
	coll_release(&r);
	ck_assert_int_eq(rq_parser_find("rdmaqual-coll")->parse(s.buf, s.len, &o, err, sizeof(err)), 0);
	json_t *p = json_array_get(json_object_get(json_array_get(json_object_get(o, "rows"), 3),
						   "pairs"), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(p, "to")), 3);
	json_decref(o);
	sb_release(&s);
}
END_TEST

START_TEST(coll_wrong_and_late)
{
	struct sb s = SB_INIT;
	struct coll_report r;
	char err[256] = "";

	fixture("rdmaqual-coll-alltoall-wrong-rank2.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.op, "alltoall");
	ck_assert_uint_eq(r.total_wrong, 1);
	ck_assert_uint_eq(r.nwrong, 1);
	ck_assert_uint_eq(r.wrong[0].size, 16384);
	ck_assert_int_eq(r.wrong[0].rank, 2);
	ck_assert_uint_eq(r.wrong[0].elements, 1);
	ck_assert_uint_eq(r.wrong[0].first, 2048);
	ck_assert_int_eq(r.wrong[0].got, r.wrong[0].expected + 1);
	ck_assert_uint_eq(r.row[2].wrong, 1);
	ck_assert_uint_eq(r.row[1].wrong, 0);
	coll_release(&r);
	sb_reset(&s);
	/* rank 1 sleeps 2 ms before each operation: the others wait for it */
	fixture("rdmaqual-coll-allreduce-late-rank1.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < r.nrows; i++) {
		ck_assert_int_eq(r.row[i].min_rank, 1);
		ck_assert_msg(r.row[i].max_us > 1500, "%f", r.row[i].max_us);
	}
	coll_release(&r);
	sb_release(&s);
}
END_TEST

/* a run killed half-way; malformed text */
START_TEST(coll_bad)
{
	static const char died[] =
		"# rdmaqual-coll 1 op allreduce nranks 2 type int32 iters 5 warmup 1 check 1\n"
		"# rank 0 host vm0 pid 10\n# rank 1 host vm1 pid 11\n"
		"           8          2      12.00      11.00      13.00      0.001      0.001        0        0        1\n"
		"# ranks 8: 11.00 13.00\n"
		"mpirun noticed that process rank 1 with PID 11 on node vm1 exited on signal 9 (Killed).\n";
	static const char badrank[] =
		"# rdmaqual-coll 1 op allreduce nranks 2 type int32 iters 5 warmup 1 check 1\n"
		"           8          2      12.00      11.00      13.00      0.001      0.001        0        0        2\n";
	static const char fewtimes[] =
		"# rdmaqual-coll 1 op allreduce nranks 2 type int32 iters 5 warmup 1 check 1\n"
		"           8          2      12.00      11.00      13.00      0.001      0.001        0        0        1\n"
		"# ranks 8: 11.00\n";
	static const char v2[] = "# rdmaqual-coll 2 op allreduce nranks 2 type int32 iters 5 warmup 1 check 1\n";
	static const char none[] = "ORTE was unable to reliably start one or more daemons.\n";
	struct coll_report r;
	char err[256] = "";

	ck_assert_msg(coll_parse(died, sizeof(died) - 1, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.nrows, 1);
	ck_assert(!r.ended);
	ck_assert_str_eq(r.host[1], "vm1");
	coll_release(&r);
	ck_assert_int_eq(coll_parse(badrank, sizeof(badrank) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: a rank outside 0..1");
	ck_assert_int_eq(coll_parse(fewtimes, sizeof(fewtimes) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 3: expected 2 rank times");
	ck_assert_int_eq(coll_parse(v2, sizeof(v2) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: rdmaqual-coll output version 2 (this parser reads 1)");
	ck_assert_int_eq(coll_parse(none, sizeof(none) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "no '# rdmaqual-coll' header: not rdmaqual-coll output");
}
END_TEST

/* Two rxe guests, Open MPI's UCX pml on rc_verbs: the ports carried it. */
START_TEST(coll_rxe_ucx_counters)
{
	struct sb s = SB_INIT;
	struct coll_report r;
	struct mpi_used u = MPI_USED_INIT;
	char err[256] = "", why[256];

	fixture("rdmaqual-coll-allreduce-rxe-ucx-2guests.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.ended);
	ck_assert_uint_eq(r.ncounters, 2);
	ck_assert_str_eq(r.counter[0].host, "vm0");
	ck_assert_str_eq(r.counter[1].host, "vm1");
	ck_assert_str_eq(r.counter[1].port, "rxe0/1");
	ck_assert(!r.counter[0].words);
	ck_assert_uint_eq(r.counter[0].xmit, 1900);
	ck_assert_uint_eq(r.counter[1].rcv, 1900);
	coll_release(&r);
	mpi_used_scan(&u, s.buf, s.len);
	ck_assert_str_eq(u.pml, "ucx");
	ck_assert_str_eq(u.ucx.buf, "rc_verbs/rxe0:1");
	ck_assert_str_eq(u.btl.buf, "");
	ck_assert(u.rdma && !u.tcp);
	ck_assert(!mpi_used_refused(s.buf, s.len, why, sizeof(why)));
	mpi_used_release(&u);
	sb_release(&s);
}
END_TEST

/* The same guests with ob1: TCP carried it, and the rxe ports nothing. */
START_TEST(coll_rxe_ob1_tcp)
{
	struct sb s = SB_INIT;
	struct coll_report r;
	struct mpi_used u = MPI_USED_INIT;
	char err[256] = "";

	fixture("rdmaqual-coll-allreduce-rxe-ob1-tcp-2guests.txt", &s);
	ck_assert_msg(coll_parse(s.buf, s.len, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(r.ncounters, 2);
	ck_assert_uint_eq(r.counter[0].xmit + r.counter[0].rcv + r.counter[1].xmit +
			  r.counter[1].rcv, 0);
	coll_release(&r);
	mpi_used_scan(&u, s.buf, s.len);
	ck_assert_str_eq(u.pml, "ob1");
	ck_assert_str_eq(u.btl.buf, "tcp");
	ck_assert(u.tcp && !u.rdma);
	mpi_used_release(&u);
	sb_release(&s);
}
END_TEST

/* vm1 without its rxe link: the UCX pml cannot open there, and says so. */
START_TEST(mpi_refused_samples)
{
	struct sb s = SB_INIT;
	char why[256] = "";

	fixture("rdmaqual-coll-allreduce-rxe-gone-on-vm1.txt", &s);
	ck_assert(mpi_used_refused(s.buf, s.len, why, sizeof(why)));
	ck_assert_msg(strstr(why, "[vm1:") && strstr(why, "PML ucx cannot be selected"), "%s", why);
	sb_release(&s);
	/* published: rc_verbs alone, no wire-up transport (the UCX line comes first) */
	if (sample("mpi-rxe/mpirun-pml-ucx-rc_verbs-only-rxe0-gid1-no-auxiliary-transport-"
		   "destination-unreachable-ompi416.txt", &s)) {
		struct mpi_used u = MPI_USED_INIT;

		ck_assert(mpi_used_refused(s.buf, s.len, why, sizeof(why)));
		ck_assert_str_eq(why, "[1783006936.387299] [node1:16949:0]          select.c:629  "
				 "UCX  ERROR   no auxiliary transport to <no debug data>: Unsupported "
				 "operation");
		mpi_used_scan(&u, s.buf, s.len);
		ck_assert(!u.rdma && !u.tcp);
		mpi_used_release(&u);
	}
	sb_release(&s);
	/* published working run: no refusal in it */
	if (sample("mpi-rxe/osu_allreduce-v7.4-pml-ucx-rc_verbs-ud_verbs-rxe0-gid0-working-2vm.txt",
		   &s))
		ck_assert(!mpi_used_refused(s.buf, s.len, why, sizeof(why)));
	sb_release(&s);
}
END_TEST

/* A NUL byte is not a tool's output: each table parser refuses it at its line (rq_lines_next_text). */
START_TEST(tables_refuse_nul)
{
	static const char text[] = "# a header\nx\0y\n";
	struct nccl_report n;
	struct osu_report o;
	struct coll_report c;
	char err[128];

	ck_assert_int_ne(nccl_parse(text, sizeof(text) - 1, &n, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "line 2: NUL byte in text");
	nccl_release(&n);
	ck_assert_int_ne(osu_parse(text, sizeof(text) - 1, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "line 2: NUL byte in text");
	osu_release(&o);
	ck_assert_int_ne(coll_parse(text, sizeof(text) - 1, &c, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "line 2: NUL byte in text");
	coll_release(&c);
}
END_TEST

START_TEST(coll_counters_bad)
{
	static const char bad[] =
		"# rdmaqual-coll 1 op allreduce nranks 2 type int32 iters 5 warmup 1 check 1\n"
		"# end wrong 0\n"
		"# counters host vm0 none\n"
		"# counters host vm1 port mlx5_0/1 unit words xmit 10 rcv 12\n"
		"# counters host vm1 port mlx5_0/1 unit bytes xmit 10 rcv 12\n";
	struct coll_report r;
	char err[256] = "";

	ck_assert_int_eq(coll_parse(bad, sizeof(bad) - 1, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "line 5: expected '# counters host H port"), "%s", err);
	ck_assert_int_eq(coll_parse(bad, sizeof(bad) - 1 - 60, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.ncounters, 2);
	coll_release(&r);
	/* a cputime that reads lower than before (6.12's vtime accounting) is 0, not an error */
	static const char lower[] =
		"# rdmaqual-coll 1 op allreduce nranks 1 type int32 iters 5 warmup 1 check 1\n"
		"# end wrong 0\n"
		"# cpu rank 0 host vm0 user_s 0.412 sys_s -0.004\n"
		"# node host vm0 busy_s 1.930 softirq_s -0.010\n";

	ck_assert_msg(coll_parse(lower, sizeof(lower) - 1, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert(r.sys_s[0] == 0 && r.user_s[0] > 0.41);
	ck_assert(r.nnodes == 1 && r.node[0].softirq_s == 0 && r.node[0].busy_s > 1.9);
	coll_release(&r);
	ck_assert_int_eq(coll_parse(bad, sizeof(bad) - 1 - 60, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.counter[0].port, "");
	ck_assert(r.counter[1].words);
	ck_assert_uint_eq(r.counter[1].rcv, 12);
	coll_release(&r);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, coll_allreduce);
	tcase_add_test(tc, coll_bisection_pairs);
	tcase_add_test(tc, coll_wrong_and_late);
	tcase_add_test(tc, coll_bad);
	tcase_add_test(tc, coll_rxe_ucx_counters);
	tcase_add_test(tc, coll_rxe_ob1_tcp);
	tcase_add_test(tc, mpi_refused_samples);
	tcase_add_test(tc, coll_counters_bad);
	tcase_add_test(tc, tables_refuse_nul);
	tcase_add_test(tc, osu_alltoall_75);
	tcase_add_test(tc, osu_bibw_datatype_after_header);
	tcase_add_test(tc, osu_latency_50_banner);
	tcase_add_test(tc, osu_mbw_mr_pairs);
	tcase_add_test(tc, osu_reduce_full);
	tcase_add_test(tc, osu_validation_and_bad);
	tcase_add_test(tc, nccl_allreduce_h100);
	tcase_add_test(tc, nccl_allreduce_old_layout);
	tcase_add_test(tc, nccl_alltoall_empty_redop);
	tcase_add_test(tc, nccl_one_rank_na);
	tcase_add_test(tc, nccl_wrong_and_bad);
}

RQ_CHECK_MAIN("parse_mpi", add_tests)
