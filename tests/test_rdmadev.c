/* SPDX-License-Identifier: MIT */
/*
 * rdmadev: device/port scan against the synthesized node trees in
 * fixtures/nodes/ (see their READMEs), device selection, GID choice and
 * the sysfs value parsers.
 */
#include <check.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/kind.h"
#include "rdma/rdmadev.h"
#include "core/util.h"
#include "check_main.h"

static char rootbuf[PATH_MAX];

static const char *fixture(const char *name)
{
	const char *base = getenv("RQ_FIXTURES");

	snprintf(rootbuf, sizeof(rootbuf), "%s/%s", base ? base : "fixtures/nodes", name);
	return rootbuf;
}

static int no_tool(struct rq_ctx *ctx, const char *const *argv, int64_t t, struct proc_result *r)
{
	r->exec_failed = true;
	r->exec_errno = ENOENT;
	r->exit_code = 127;
	return 0;
}

struct env {
	struct rq_case c;
	struct rq_results out;
	struct rq_ctx ctx;
	struct rdma_devs d;
};

static void env_init(struct env *e, const char *fix, const char *devices, int port)
{
	memset(e, 0, sizeof(*e));
	e->c.name = (char *)"t.case";
	e->c.devices = (char *)devices;
	e->c.port = port;
	e->c.gid_index = -1;
	e->ctx.c = &e->c;
	e->ctx.target = "sysroot";
	e->ctx.root = fixture(fix);
	e->ctx.replay = true;
	e->ctx.log_fd = -1;
	e->ctx.tool = no_tool;
	e->ctx.out = &e->out;
	ck_assert_int_eq(rdma_devs_scan(&e->ctx, &e->d), 0);
}

static void env_release(struct env *e)
{
	rdma_devs_release(&e->d);
}

START_TEST(scan_cx6_ib)
{
	struct env e;
	const struct rdma_dev *d;
	const struct rdma_port *p;

	env_init(&e, "cx6-hdr-ib", "all", 0);
	ck_assert_int_eq(e.d.n, 1);
	d = &e.d.v[0];
	/* rdma-core persistent naming: never assume mlx5_0 */
	ck_assert_str_eq(d->name, "ibp59s0");
	ck_assert_str_eq(d->pci, "0000:3b:00.0");
	ck_assert_str_eq(d->driver, "mlx5_core");
	ck_assert(!d->is_virtual);
	ck_assert_uint_eq(d->vendor, 0x15b3);
	ck_assert_uint_eq(d->device, 0x101b);
	ck_assert_str_eq(d->fw_ver, "20.35.1012");
	ck_assert_str_eq(d->hca_type, "MT4123");
	ck_assert_str_eq(d->node_type, "CA");
	ck_assert_str_eq(d->uverbs, "uverbs0");
	ck_assert_int_eq(d->numa_node, 0);
	ck_assert_int_eq(d->nports, 1);
	p = rdma_dev_port(d, 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->state, PORT_ACTIVE);
	ck_assert_str_eq(p->state_str, "ACTIVE");
	ck_assert_int_eq(p->phys_state, 5);
	ck_assert_str_eq(p->phys_str, "LinkUp");
	ck_assert_str_eq(p->link_layer, "InfiniBand");
	ck_assert(p->rate_gbps == 200.0);
	ck_assert_uint_eq(p->lid, 0x2fa);
	ck_assert_uint_eq(p->sm_lid, 8);
	ck_assert_str_eq(p->netdev, "ibp59s0");
	ck_assert_ptr_null(rdma_dev_port(d, 2));
	env_release(&e);
}
END_TEST

START_TEST(scan_cx6dx_roce)
{
	struct env e;
	char gid[64];

	env_init(&e, "cx6dx-roce-2numa", NULL, 0);
	ck_assert_int_eq(e.d.n, 3);
	ck_assert_str_eq(e.d.v[0].name, "rocep175s0f0");
	ck_assert_int_eq(e.d.v[0].numa_node, 1);
	ck_assert_str_eq(e.d.v[0].pci, "0000:af:00.0");
	ck_assert_str_eq(e.d.v[0].ports[0].netdev, "ens5f0np0");
	ck_assert_str_eq(e.d.v[0].ports[0].link_layer, "Ethernet");
	ck_assert(e.d.v[0].ports[0].rate_gbps == 100.0);
	ck_assert_str_eq(e.d.v[1].name, "rocep59s0f0");
	ck_assert_str_eq(e.d.v[2].ports[0].netdev, "ens1f1np1");
	ck_assert_uint_eq(e.d.v[2].device, 0x101d);
	/* Distinct uverbs per device */
	ck_assert_str_ne(e.d.v[0].uverbs, e.d.v[1].uverbs);

	/* RoCE v2 with an IPv4-mapped address: index 3 (0,1 link-local v1/v2, 2 IPv4 v1) */
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "rocep59s0f0", 1, "ens1f0np0", gid, sizeof(gid)), 3);
	ck_assert_str_eq(gid, "0000:0000:0000:0000:0000:ffff:c0a8:320b");
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "rocep59s0f0", 1, NULL, gid, sizeof(gid)), 3);
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "rocep59s0f0", 1, "eth9", gid, sizeof(gid)), -ENOENT);
	ck_assert_str_eq(gid, "");
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "rocep59s0f0", 2, NULL, gid, sizeof(gid)), -ENOENT);
	env_release(&e);
}
END_TEST

START_TEST(scan_rxe)
{
	struct env e;
	char gid[64];
	const struct rdma_dev *d;

	env_init(&e, "rxe-vm1", "all", 0);
	ck_assert_int_eq(e.d.n, 1);
	d = &e.d.v[0];
	ck_assert_str_eq(d->name, "rxe0");
	ck_assert(d->is_virtual);
	ck_assert_str_eq(d->driver, "rxe");
	ck_assert_str_eq(d->parent, "eth0");
	ck_assert_str_eq(d->pci, "");
	ck_assert_int_eq(d->numa_node, -1);
	ck_assert_uint_eq(d->vendor, 0);
	ck_assert_str_eq(d->fw_ver, "0.0.0");
	ck_assert_str_eq(d->hca_type, "");
	ck_assert_str_eq(d->uverbs, "uverbs0");
	ck_assert_str_eq(d->ports[0].netdev, "eth0");
	ck_assert(d->ports[0].rate_gbps == 2.5);
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "rxe0", 1, "eth0", gid, sizeof(gid)), 1);
	ck_assert_str_eq(gid, "0000:0000:0000:0000:0000:ffff:0a63:0001");
	env_release(&e);
}
END_TEST

START_TEST(scan_ib_gid0)
{
	struct env e;
	char gid[64];

	env_init(&e, "cx5-edr-ib", "all", 0);
	ck_assert_int_eq(e.d.n, 2);
	ck_assert_int_eq(rdma_pick_gid(&e.ctx, "mlx5_1", 1, NULL, gid, sizeof(gid)), 0);
	ck_assert_str_eq(gid, "fe80:0000:0000:0000:0c42:a103:00e4:b2a1");
	ck_assert_str_eq(e.d.v[1].ports[0].netdev, "ib1");
	env_release(&e);
}
END_TEST

START_TEST(select_devices)
{
	struct env e;
	int idx[16];
	char miss[64];

	env_init(&e, "cx7-ndr-ib-raildown", "all", 0);
	ck_assert_int_eq(e.d.n, 8);
	ck_assert_int_eq(rdma_devs_select(&e.ctx, &e.d, idx, 16), 8);
	ck_assert_int_eq(rdma_devs_find(&e.d, "mlx5_5")->ports[0].state, PORT_DOWN);
	ck_assert_str_eq(rdma_devs_find(&e.d, "mlx5_5")->ports[0].phys_str, "Disabled");
	ck_assert_ptr_null(rdma_devs_find(&e.d, "mlx5_8"));

	e.c.devices = (char *)" mlx5_5 ,mlx5_2,mlx5_5";
	ck_assert_int_eq(rdma_devs_select(&e.ctx, &e.d, idx, 16), 2);
	ck_assert_str_eq(e.d.v[idx[0]].name, "mlx5_5");
	ck_assert_str_eq(e.d.v[idx[1]].name, "mlx5_2");

	e.c.devices = (char *)"mlx5_2,mlx5_9";
	ck_assert_int_eq(rdma_devs_select2(&e.ctx, &e.d, idx, 16, miss, sizeof(miss)), -ENODEV);
	ck_assert_str_eq(miss, "mlx5_9");

	e.c.devices = (char *)"first-active";
	ck_assert_int_eq(rdma_devs_select(&e.ctx, &e.d, idx, 16), 1);
	ck_assert_str_eq(e.d.v[idx[0]].name, "mlx5_0");

	/* max bounds the output */
	e.c.devices = (char *)"all";
	ck_assert_int_eq(rdma_devs_select(&e.ctx, &e.d, idx, 3), 3);

	e.c.port = 2;
	ck_assert(!rdma_port_selected(&e.ctx, 1));
	ck_assert(rdma_port_selected(&e.ctx, 2));
	e.c.devices = (char *)"first-active";
	ck_assert_int_eq(rdma_devs_select(&e.ctx, &e.d, idx, 16), 0);
	env_release(&e);
}
END_TEST

START_TEST(no_devices)
{
	struct env e;

	env_init(&e, "does-not-exist", "all", 0);
	ck_assert_int_eq(e.d.n, 0);
	ck_assert(!rdma_have_mlx_pci(fixture("does-not-exist")));
	ck_assert(!rdma_have_mlx_pci(fixture("rxe-vm1")));
	ck_assert(rdma_have_mlx_pci(fixture("cx5-edr-ib")));
	env_release(&e);
}
END_TEST

/*
 * A plain copy that dereferenced every symlink (cp -rL) still scans: the
 * PCI address and driver then come from device/uevent.
 */
START_TEST(scan_dereferenced_copy)
{
	char tmp[] = "/tmp/rq-rdmadev-XXXXXX", dst[PATH_MAX], src[PATH_MAX + 32];
	struct env e;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(src, sizeof(src), "%s/sys/class", fixture("cx6-hdr-ib"));
	snprintf(dst, sizeof(dst), "%s/sys", tmp);
	ck_assert_int_eq(mkdir_p(dst, 0755), 0);
	{
		const char *argv[] = { "cp", "-rL", src, dst, NULL };
		pid_t pid = fork();
		int st;

		if (!pid) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 2);
			execvp(argv[0], (char *const *)argv);
			_exit(127);
		}
		/* cp reports sysfs' cyclic links (driver/<bdf>) and goes on. */
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st) && WEXITSTATUS(st) <= 1);
	}
	memset(&e, 0, sizeof(e));
	e.c.name = (char *)"t";
	e.ctx.c = &e.c;
	e.ctx.root = tmp;
	e.ctx.log_fd = -1;
	e.ctx.tool = no_tool;
	e.ctx.out = &e.out;
	ck_assert_int_eq(rdma_devs_scan(&e.ctx, &e.d), 0);
	ck_assert_int_eq(e.d.n, 1);
	ck_assert(!e.d.v[0].is_virtual);
	ck_assert_str_eq(e.d.v[0].pci, "0000:3b:00.0");
	ck_assert_str_eq(e.d.v[0].driver, "mlx5_core");
	ck_assert_str_eq(e.d.v[0].ports[0].state_str, "ACTIVE");
	env_release(&e);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

START_TEST(parsers)
{
	double g = -1;
	int n = -1;
	char name[32];

	ck_assert_int_eq(parse_port_rate("100 Gb/sec (4X EDR)", &g), 0);
	ck_assert(g == 100.0);
	ck_assert_int_eq(parse_port_rate("2.5 Gb/sec (1X SDR)", &g), 0);
	ck_assert(g == 2.5);
	ck_assert_int_eq(parse_port_rate("400 Gb/sec (4X NDR)", &g), 0);
	ck_assert(g == 400.0);
	ck_assert_int_eq(parse_port_rate("53.125 Gb/sec (1X HDR)", &g), 0);
	ck_assert(g == 53.125);
	ck_assert_int_eq(parse_port_rate("fast", &g), -EINVAL);
	ck_assert_int_eq(parse_port_rate("100 MB/s", &g), -EINVAL);
	ck_assert_int_eq(parse_port_rate("", &g), -EINVAL);

	/* data rates: 8b/10b to QDR, 64b/66b for FDR10/FDR, data from EDR on */
	ck_assert(rdma_rate_data_gbps("40 Gb/sec (4X QDR)", "InfiniBand") == 32.0);
	ck_assert(rdma_rate_data_gbps("10 Gb/sec (4X SDR)", "InfiniBand") == 8.0);
	ck_assert(rdma_rate_data_gbps("20 Gb/sec (4X DDR)", "InfiniBand") == 16.0);
	ck_assert(fabs(rdma_rate_data_gbps("56 Gb/sec (4X FDR)", "InfiniBand") - 54.545) < 0.01);
	/* FDR10 signals 10.3125 GBd: 64b/66b leaves 10 Gb/s a lane */
	ck_assert(fabs(rdma_rate_data_gbps("40 Gb/sec (4X FDR10)", "InfiniBand") - 40.0) < 0.01);
	ck_assert(rdma_rate_data_gbps("100 Gb/sec (4X EDR)", "InfiniBand") == 100.0);
	ck_assert(rdma_rate_data_gbps("200 Gb/sec (2X NDR)", "InfiniBand") == 200.0);
	ck_assert(rdma_rate_data_gbps("800 Gb/sec (4X XDR)", "InfiniBand") == 800.0);
	/* Ethernet: the IB names are display only (40GbE shows as 4X QDR) */
	ck_assert(rdma_rate_data_gbps("40 Gb/sec (4X QDR)", "Ethernet") == 40.0);
	ck_assert(rdma_rate_data_gbps("25 Gb/sec (1X EDR)", "Ethernet") == 25.0);
	ck_assert(rdma_rate_data_gbps("fast", "InfiniBand") == 0);

	ck_assert_int_eq(parse_state("4: ACTIVE", &n, name, sizeof(name)), 0);
	ck_assert_int_eq(n, 4);
	ck_assert_str_eq(name, "ACTIVE");
	ck_assert_int_eq(parse_state("5: LinkUp\n", &n, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "LinkUp");
	ck_assert_int_eq(parse_state("ACTIVE", &n, name, sizeof(name)), -EINVAL);
	ck_assert_int_eq(parse_state("4:", &n, name, sizeof(name)), -EINVAL);
	ck_assert_int_eq(parse_state("4 ACTIVE", &n, name, sizeof(name)), -EINVAL);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_test(tc, scan_cx6_ib);
	tcase_add_test(tc, scan_cx6dx_roce);
	tcase_add_test(tc, scan_rxe);
	tcase_add_test(tc, scan_ib_gid0);
	tcase_add_test(tc, select_devices);
	tcase_add_test(tc, no_devices);
	tcase_add_test(tc, scan_dereferenced_copy);
	tcase_add_test(tc, parsers);
}

RQ_CHECK_MAIN("rdmadev", add_tests)
