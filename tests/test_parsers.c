/* SPDX-License-Identifier: MIT */
/*
 * What every parser shares (parsers.h): the line iterator, the error
 * formatter, the missing-field list, and the UTF-8-safe JSON text helper of
 * core/json_text.h; and the lenient JSON reader of perftest's --out_json.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "parsers/lenient_json.h"
#include "parsers/parsers.h"
#include "parsers/parse_fwmanager.h"
#include "parsers/parse_nvtopo.h"
#include "check_main.h"
#include "real_outputs.h"

START_TEST(lines_numbered_trimmed)
{
	/* CRLF, trailing blanks, blank lines and a last line without newline */
	static const char t[] = "a \r\n\n  b\t\nlast";
	struct rq_lines l;
	char *s;

	rq_lines_init(&l, t, sizeof(t) - 1);
	ck_assert_str_eq(rq_lines_next(&l), "a");
	ck_assert_uint_eq(l.no, 1);
	ck_assert_str_eq(rq_lines_next(&l), "");
	ck_assert_str_eq(rq_lines_next(&l), "  b");	/* leading blanks kept */
	ck_assert_uint_eq(l.no, 3);
	ck_assert_uint_eq(l.raw_len, 4);
	s = rq_lines_next(&l);
	ck_assert_str_eq(s, "last");
	ck_assert_uint_eq(l.no, 4);
	ck_assert_ptr_null(rq_lines_next(&l));
	rq_lines_release(&l);
}
END_TEST

START_TEST(lines_nul)
{
	static const char t[] = "ok\nx\0y\nz\n";
	struct rq_lines l;

	rq_lines_init(&l, t, sizeof(t) - 1);
	rq_lines_next(&l);
	ck_assert(!l.nul);
	ck_assert_str_eq(rq_lines_next(&l), "x");	/* a NUL ends the line */
	ck_assert(l.nul);
	ck_assert_uint_eq(l.raw_len, 3);
	ck_assert_str_eq(rq_lines_next(&l), "z");	/* and only the line */
	ck_assert(!l.nul);
	ck_assert_ptr_null(rq_lines_next(&l));
	rq_lines_release(&l);
}
END_TEST

START_TEST(error_shapes)
{
	char err[32];

	ck_assert_int_eq(rq_parse_error(err, sizeof(err), 7, "expected %s", "x"), -EINVAL);
	ck_assert_str_eq(err, "line 7: expected x");
	rq_parse_error(err, sizeof(err), 0, "no block");
	ck_assert_str_eq(err, "no block");
	rq_parse_error_at(err, sizeof(err), "a.net", 3, "bad");
	ck_assert_str_eq(err, "a.net:3: bad");
	/* cut, still terminated */
	rq_parse_error(err, 8, 12345, "long message");
	ck_assert_str_eq(err, "line 12");
	ck_assert_int_eq(rq_parse_error(NULL, 0, 1, "x"), -EINVAL);
}
END_TEST

START_TEST(missing_list)
{
	struct rq_missing m = { .n = 0 };
	json_t *o = json_object();

	rq_missing_json(o, &m);
	ck_assert_ptr_null(json_object_get(o, "missing"));	/* only when any */
	rq_missing_add(&m, "guid");
	rq_missing_add(&m, "guid");
	rq_missing_add(&m, "state");
	ck_assert_uint_eq(m.n, 2);
	ck_assert(rq_missing_has(&m, "state"));
	ck_assert(!rq_missing_has(&m, "lid"));
	rq_missing_json(o, &m);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "missing"), 1)), "state");
	json_decref(o);
}
END_TEST

START_TEST(json_text_utf8)
{
	json_t *j = rq_json_text("a\xff" "b"), *o = json_object();

	ck_assert_str_eq(json_string_value(j), "a\xef\xbf\xbd" "b");
	json_decref(j);
	j = rq_json_text(NULL);
	ck_assert(json_is_null(j));
	json_decref(j);
	j = rq_json_textn("a\0b", 3);
	ck_assert_uint_eq(json_string_length(j), 3);
	json_decref(j);
	rq_json_set_text(o, "k\xfe", json_true());
	ck_assert_uint_eq(json_object_size(o), 1);	/* kept, not dropped */
	json_decref(o);
	j = rq_json_num(INFINITY);	/* JSON has no Inf: null, not a dropped field */
	ck_assert(json_is_null(j));
	json_decref(j);
}
END_TEST

START_TEST(lenient_json)
{
	static const char bare[] = "test_info: {\n test: RDMA_Write_BW,\n Mtu: 1024,\n},\n"
				   "results: { BW_peak: 1.5, },\n";
	char err[128] = "";
	json_t *o = lenient_json_parse(bare, sizeof(bare) - 1, err, sizeof(err));

	ck_assert_msg(o, "%s", err);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "test_info"), "test")),
			 "RDMA_Write_BW");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "test_info"), "Mtu")), 1024);
	ck_assert(json_is_real(json_object_get(json_object_get(o, "results"), "BW_peak")));
	json_decref(o);
	ck_assert_ptr_null(lenient_json_parse("{a: 1}\n}", 9, err, sizeof(err)));
	ck_assert_str_eq(err, "line 2: text after the JSON object");
	ck_assert_ptr_null(lenient_json_parse("a: 1\n}", 6, err, sizeof(err)));
	ck_assert_str_eq(err, "line 2: unexpected '}'");
	ck_assert_ptr_null(lenient_json_parse("{a: \"x\n\"}", 9, err, sizeof(err)));
	ck_assert_str_eq(err, "line 1: unterminated string");
}
END_TEST

/*
 * mlxfwmanager --query (MFT's text layout; synthesized, no captured sample
 * in this project): two devices, a component name with spaces, a key line
 * unindented as some releases print it, the staged "FW (Running)" row.
 */
START_TEST(fwmanager_query)
{
	static const char t[] =
		"Querying Mellanox devices firmware ...\n\nDevice #1:\n----------\n\n"
		"Device Type:      BlueField2\n"
		"  PSID:             MT_0000000768\n"
		"  PCI Device Name:  /dev/mst/mt41686_pciconf0\n"
		"  Versions:         Current        Available     \n"
		"     FW             24.40.1000     N/A           \n"
		"     FW (Running)   24.35.2000     N/A           \n"
		"     UEFI Virtio net   21.4.0010      N/A\n\n"
		"  Status:           No matching image found\n\n"
		"Device #2:\n----------\n\n"
		"  Device Type:      ConnectX7\n  PSID:             MT_0000000838\n"
		"  Some New Key:     kept out\n"
		"  Versions:         Current        Available\n"
		"     FW             28.47.1026     28.47.1026\n\n"
		"  Status:           Up to date\n\n---------\nFound 2 device(s) requiring firmware update...\n";
	struct fwm_query q;
	char err[200] = "";
	json_t *o = NULL;

	ck_assert_int_eq(fwmanager_parse(t, sizeof(t) - 1, &q, err, sizeof(err)), 0);
	ck_assert_uint_eq(q.n, 2);
	ck_assert_str_eq(q.dev[0].type, "BlueField2");
	ck_assert_str_eq(fwm_current(&q.dev[0], "FW"), "24.40.1000");
	ck_assert_str_eq(fwm_current(&q.dev[0], "FW (Running)"), "24.35.2000");
	ck_assert_str_eq(fwm_current(&q.dev[0], "UEFI Virtio net"), "21.4.0010");
	ck_assert_str_eq(q.dev[0].status, "No matching image found");
	ck_assert_ptr_null(fwm_current(&q.dev[1], "FW (Running)"));
	ck_assert_str_eq(q.dev[1].v[0].available, "28.47.1026");
	ck_assert_str_eq(q.dev[1].psid, "MT_0000000838");
	fwmanager_release(&q);

	ck_assert_int_eq(rq_parser_find("mlxfwmanager")->parse(t, sizeof(t) - 1, &o, err, sizeof(err)), 0);
	json_t *d0 = json_array_get(json_object_get(o, "devices"), 0);

	ck_assert(json_is_true(json_object_get(d0, "fw_pending")));
	ck_assert_str_eq(json_string_value(json_object_get(d0, "fw_running")), "24.35.2000");
	ck_assert(json_is_false(json_object_get(json_array_get(json_object_get(o, "devices"), 1),
						"fw_pending")));
	json_decref(o);

	static const char bad[] = "Device #1:\n  Versions:  Current Available\n     FW\n";
	ck_assert_int_eq(fwmanager_parse(bad, sizeof(bad) - 1, &q, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 3: expected a version row (component, current, available), got 'FW'");
	static const char noise[] = "PSID: before any device\n";
	ck_assert_int_eq(fwmanager_parse(noise, sizeof(noise) - 1, &q, err, sizeof(err)), -EINVAL);
	static const char e[] = "-E- No devices found or specified, mst might be stopped.\n";
	ck_assert_int_eq(fwmanager_parse(e, sizeof(e) - 1, &q, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: mlxfwmanager reported an error: -E- No devices found or "
			 "specified, mst might be stopped.");
}
END_TEST

/*
 * nvidia-smi topo -m: the tab-separated layout the driver writes to a pipe
 * (" X " on the diagonal, an empty cell before GPU NUMA ID, the legends),
 * the same matrix pasted from a terminal (runs of spaces, the header
 * underlined with ANSI escapes), and refusals naming the line.
 */
START_TEST(nvtopo_matrix)
{
	static const char tabs[] =
		"\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
		"GPU0\t X \tNV18\tPIX\tSYS\t0-55,112-167\t0\t\tN/A\n"
		"GPU1\tNV18\t X \tSYS\tPXB\t56-111,168-223\t1\t\tN/A\n"
		"NIC0\tPIX\tSYS\t X \tSYS\n"
		"NIC1\tSYS\tPXB\tSYS\t X \n\n"
		"Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect "
		"between NUMA nodes (e.g., QPI/UPI)\n  NV#  = Connection traversing a bonded set of # NVLinks\n\n"
		"NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n\n";
	static const char spaces[] =
		"        \x1b[4mGPU0    GPU1    mlx5_0  CPU Affinity    NUMA Affinity\x1b[0m\n"
		"GPU0     X      NODE    PHB     0-47,96-143     0\n"
		"GPU1    NODE     X      SOC     48-95,144-191   1\n"
		"mlx5_0  PHB     SOC      X \n";
	struct nvtopo *t = calloc(1, sizeof(*t));
	char err[200] = "";
	int links, c;
	json_t *o = NULL;

	ck_assert_int_eq(nvtopo_parse(tabs, sizeof(tabs) - 1, t, err, sizeof(err)), 0);
	ck_assert_int_eq(t->n, 4);
	c = nvtopo_find(t, "mlx5_1");
	ck_assert_int_eq(c, 3);
	ck_assert_str_eq(t->name[c], "NIC1");
	ck_assert_int_eq(t->level[c][nvtopo_find(t, "GPU1")], NVT_PXB);
	ck_assert_int_eq(t->level[0][1], NVT_NVLINK);
	ck_assert_int_eq(t->nvlinks[0][1], 18);
	ck_assert_int_eq(t->level[2][2], NVT_SELF);
	ck_assert_str_eq(t->cpu_affinity[1], "56-111,168-223");
	ck_assert_str_eq(t->numa_affinity[1], "1");
	ck_assert_str_eq(t->cpu_affinity[2], "");

	ck_assert_int_eq(nvtopo_parse(spaces, sizeof(spaces) - 1, t, err, sizeof(err)), 0);
	ck_assert_int_eq(t->n, 3);
	ck_assert_str_eq(t->name[2], "mlx5_0");
	ck_assert_int_eq(t->level[2][0], NVT_PHB);
	ck_assert_int_eq(t->level[1][2], NVT_SYS);	/* SOC, the old name */
	ck_assert_str_eq(t->numa_affinity[0], "0");

	ck_assert_int_eq(nvtopo_level_of("NV4", &links), NVT_NVLINK);
	ck_assert_int_eq(links, 4);
	ck_assert_int_eq(nvtopo_level_of("NV", &links), -1);
	ck_assert_int_eq(nvtopo_level_of("NVx", &links), -1);
	ck_assert_int_eq(nvtopo_level_of("pix", &links), -1);

	static const char badcell[] = "\tGPU0\tNIC0\nGPU0\t X \tPCI\n";
	ck_assert_int_eq(nvtopo_parse(badcell, sizeof(badcell) - 1, t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: row GPU0, column NIC0: 'PCI' is no connection type (X, NV#, PIX, PXB, PHB, NODE, SYS)");
	static const char short_row[] = "\tGPU0\tNIC0\nNIC0\tPIX\n";
	ck_assert_int_eq(nvtopo_parse(short_row, sizeof(short_row) - 1, t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: row NIC0 has 1 cells, the header 2 devices");
	static const char stranger[] = "\tGPU0\nGPU9\t X \n";
	ck_assert_int_eq(nvtopo_parse(stranger, sizeof(stranger) - 1, t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 2: row 'GPU9' is not a device of the header");
	/* found by the fuzzer: a header cell that is not a name (not UTF-8 here) */
	static const char badname[] = "\tGPU0\tN\377\377\nGPU0\t X \tPIX\n";
	ck_assert_int_eq(nvtopo_parse(badname, sizeof(badname) - 1, t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: header column 2: 'N\377\377' is no device name");
	ck_assert_int_eq(nvtopo_parse("", 0, t, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "no topology matrix (empty output)");
	static const char failed[] = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n";
	ck_assert_int_eq(nvtopo_parse(failed, sizeof(failed) - 1, t, err, sizeof(err)), -EINVAL);
	free(t);

	ck_assert_int_eq(rq_parser_find("nvidia-smi-topo")->parse(tabs, sizeof(tabs) - 1, &o, err, sizeof(err)), 0);
	json_t *nic1 = json_array_get(json_object_get(o, "devices"), 3);

	ck_assert_str_eq(json_string_value(json_object_get(nic1, "nic")), "mlx5_1");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(nic1, "to"), "GPU1")), "PXB");
	json_decref(o);
}
END_TEST

/*
 * The real `nvidia-smi topo -m` samples, in place: each parses, and each
 * GPU's rails (NICs behind its PCIe switch: PIX/PXB) are what the sample's
 * README line says.  gpudirect's rule (per GPU, kind_gpudirect.c): every
 * GPU has a rail, or no GPU has one (a design without switches, recorded);
 * NICs that serve no GPU (storage, in-band) are left out.
 */
static const struct {
	const char *file;
	int gpus, nics;
	const char *rails;		/* "GPU0: mlx5_0; GPU1: ..." */
	const char *unused;		/* NICs serving no GPU */
	const char *verdict;		/* "every GPU has a rail" / "no switch design" / "GPUn has none" */
	const char *gpu, *cpus, *numa;	/* one GPU's affinity columns */
} topo_samples[] = {
	{ "topo-m-asus-esc8000a-4x-rtx6000ada-2x-cx7-no-switch-stelline.txt", 4, 4,
	  "GPU0: none; GPU1: none; GPU2: none; GPU3: none", "mlx5_0,mlx5_1,mlx5_2,mlx5_3", "no switch design",
	  "GPU2", "32-63", "1" },
	{ "topo-m-dgx-a100-8gpu-10nics-pxb-pairs-numa-3-1-7-5.txt", 8, 10,
	  "GPU0: mlx5_0,mlx5_1; GPU1: mlx5_0,mlx5_1; GPU2: mlx5_2,mlx5_3; GPU3: mlx5_2,mlx5_3; "
	  "GPU4: mlx5_4,mlx5_5; GPU5: mlx5_4,mlx5_5; GPU6: mlx5_6,mlx5_7; GPU7: mlx5_6,mlx5_7",
	  "mlx5_8,mlx5_9", "every GPU has a rail", "GPU4", "112-127,240-255", "7" },
	{ "topo-m-dgx1-v100-4x-mlx5-unsorted-columns-old-legend-pytorch.txt", 8, 4,
	  "GPU0: mlx5_0; GPU1: mlx5_0; GPU2: mlx5_1; GPU3: mlx5_1; GPU4: mlx5_2; GPU5: mlx5_2; GPU6: mlx5_3; "
	  "GPU7: mlx5_3", "", "every GPU has a rail", "GPU7", "0-19,40-59", "" },
	{ "topo-m-h100-12nics-cx7-ib-cx6dx-eth-pix-gpu0-gpu4-mooncake2039.txt", 8, 12,
	  "GPU0: mlx5_0,mlx5_1,mlx5_2; GPU1: mlx5_3; GPU2: mlx5_4; GPU3: mlx5_5; GPU4: mlx5_6,mlx5_7,mlx5_8; "
	  "GPU5: mlx5_9; GPU6: mlx5_10; GPU7: mlx5_11", "", "every GPU has a rail", "GPU4", "1,3,5,7,9,11", "1" },
	{ "topo-m-h200-8gpu-12nics-pxb-compute-pix-pairs-tabs-book.txt", 8, 12,
	  "GPU0: mlx5_0; GPU1: mlx5_3; GPU2: mlx5_4; GPU3: mlx5_5; GPU4: mlx5_6; GPU5: mlx5_9; GPU6: mlx5_10; "
	  "GPU7: mlx5_11", "mlx5_1,mlx5_2,mlx5_7,mlx5_8", "every GPU has a rail", "GPU0", "0-55,112-167", "0" },
};

static const char *topo_nic(const struct nvtopo *t, int c)
{
	return t->nic[c][0] ? t->nic[c] : t->name[c];
}

START_TEST(nvtopo_real_samples)
{
	struct nvtopo *t = calloc(1, sizeof(*t));
	char path[256], err[256], rails[1024] = "", unused[256] = "", verdict[64];
	struct sb s = SB_INIT;
	int gpus = 0, nics = 0, with = 0, without = -1, c;

	snprintf(path, sizeof(path), "nvidia-smi-topo/%s", topo_samples[_i].file);
	if (!real_sample(path, &s)) {
		sb_release(&s);
		free(t);
		return;
	}
	ck_assert_msg(nvtopo_parse(s.buf, s.len, t, err, sizeof(err)) == 0, "%s: %s", path, err);
	for (int g = 0; g < t->n; g++) {
		int r[NVTOPO_MAX], nr;

		if (!nvtopo_is_gpu(t, g)) {
			bool serves = false;

			nics++;
			for (int k = 0; k < t->n; k++)
				serves |= nvtopo_is_gpu(t, k) && (t->level[g][k] == NVT_PIX || t->level[g][k] == NVT_PXB);
			if (!serves)
				snprintf(unused + strlen(unused), sizeof(unused) - strlen(unused), "%s%s",
					 unused[0] ? "," : "", topo_nic(t, g));
			continue;
		}
		gpus++;
		nr = nvtopo_rails_of(t, g, r, NVTOPO_MAX);
		with += nr > 0;
		if (!nr && without < 0)
			without = g;
		snprintf(rails + strlen(rails), sizeof(rails) - strlen(rails), "%s%s: ", rails[0] ? "; " : "",
			 t->name[g]);
		if (!nr)
			snprintf(rails + strlen(rails), sizeof(rails) - strlen(rails), "none");
		/* in the NICs' own order (the old format's columns are mlx5_2, mlx5_0, ...) */
		for (int pass = 0, first = 1; pass < NVTOPO_MAX && nr; pass++) {
			char want[16];

			snprintf(want, sizeof(want), "mlx5_%d", pass);
			for (int k = 0; k < nr; k++)
				if (!strcmp(topo_nic(t, r[k]), want)) {
					snprintf(rails + strlen(rails), sizeof(rails) - strlen(rails), "%s%s",
						 first ? "" : ",", want);
					first = 0;
				}
		}
	}
	if (!with)
		snprintf(verdict, sizeof(verdict), "no switch design");
	else if (with == gpus)
		snprintf(verdict, sizeof(verdict), "every GPU has a rail");
	else
		snprintf(verdict, sizeof(verdict), "%s has none", t->name[without]);
	ck_assert_int_eq(gpus, topo_samples[_i].gpus);
	ck_assert_int_eq(nics, topo_samples[_i].nics);
	ck_assert_str_eq(rails, topo_samples[_i].rails);
	ck_assert_str_eq(unused, topo_samples[_i].unused);
	ck_assert_str_eq(verdict, topo_samples[_i].verdict);
	ck_assert_int_ge(c = nvtopo_find(t, topo_samples[_i].gpu), 0);
	ck_assert_str_eq(t->cpu_affinity[c], topo_samples[_i].cpus);
	ck_assert_str_eq(t->numa_affinity[c], topo_samples[_i].numa);
	sb_release(&s);
	free(t);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, lines_numbered_trimmed);
	tcase_add_test(tc, lines_nul);
	tcase_add_test(tc, error_shapes);
	tcase_add_test(tc, missing_list);
	tcase_add_test(tc, json_text_utf8);
	tcase_add_test(tc, lenient_json);
	tcase_add_test(tc, fwmanager_query);
	tcase_add_test(tc, nvtopo_matrix);
	tcase_add_loop_test(tc, nvtopo_real_samples, 0, (int)(sizeof(topo_samples) / sizeof(topo_samples[0])));
}

RQ_CHECK_MAIN("parsers", add_tests)
