/* SPDX-License-Identifier: MIT */
/*
 * capture and replay: capturing a node tree (--root) and replaying the copy
 * through every node kind gives the same rows, verdicts and reasons as the
 * original; a redacted copy too, with GUIDs, MACs and the hostname gone;
 * the manifest drives tool replay; redaction keeps what checks need.
 */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qual/capture.h"
#include "qual/redact.h"
#include "nodecase.h"
#include "qual/sysroot.h"
#include "core/kind.h"
#include "core/proc.h"
#include "core/util.h"
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
	ck_assert_int_eq(rmdir(tmp), 0);	/* capture makes its dir itself */
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

/*
 * Every kind's declared reads (rq_kind.reads) are in the copy: for each
 * read, each instance the source tree has (a path or glob match, a PCI
 * device's attribute in the read's scope, a netdev's attribute, a module,
 * a daemon's comm, a tool's output with {pci} and {netdev} made each
 * device) must be found in the capture, through the copied links as a
 * replay finds it.  The fixtures between them hold every kind of read.
 */
static const char *const reads_fixtures[] = { "cx6dx-roce-lag-lossless", "hgx-h100-cstates", "gpu-node-peermem",
					       "ofed-node-mokpending", "cx7-ndr-ib", "rxe-vm1" };

struct rd_check {
	const char *src, *dst, *kind;
	unsigned found;		/* instances checked */
};

static bool rd_exists(const char *root, const char *rel)
{
	char p[8192];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return lstat(p, &st) == 0;
}

/* rel (through the source's links) is in the source: then it must be in the copy. */
static void rd_expect(struct rd_check *k, const char *rel, const char *what)
{
	if (!rd_exists(k->src, rel))
		return;
	k->found++;
	ck_assert_msg(rd_exists(k->dst, rel), "%s: %s reads %s (%s), which the source has and the capture lacks",
		      k->src, k->kind, rel, what);
}

/* The source's canonical relative path of rel, or false. */
static bool rd_real(struct rd_check *k, const char *rel, char *out, size_t size)
{
	char p[8192], real[PATH_MAX];
	size_t sl = strlen(k->src);

	snprintf(p, sizeof(p), "%s%s", k->src, rel);
	if (!realpath(p, real) || strncmp(real, k->src, sl))
		return false;
	snprintf(out, size, "%s", real + sl);
	return true;
}

/* The entries of dir in the source (names), into names; their count. */
static size_t rd_list(struct rd_check *k, const char *dir, char names[][256], size_t max)
{
	char p[8192];
	struct dirent **ents = NULL;
	size_t m = 0;
	int n;

	snprintf(p, sizeof(p), "%s%s", k->src, dir);
	n = scandir(p, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && m < max)
			snprintf(names[m++], 256, "%s", ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return m;
}

static void rd_attr(struct rd_check *k, const char *dir, const struct rq_read *r)
{
	char rel[8192], t[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", dir, r->path);
	rd_expect(k, rel, "an attribute");
	if (r->follow && rd_real(k, rel, t, sizeof(t)))
		rd_expect(k, t, "where the attribute links to");
}

/* A PCI attribute on each device of its scope. */
static void rd_pci(struct rd_check *k, const struct rq_read *r)
{
	char names[64][256], rel[8192], fn[PATH_MAX], up[PATH_MAX];
	size_t n = rd_list(k, "/sys/class/infiniband", names, 64);

	for (size_t i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device", names[i]);
		if (!rd_real(k, rel, fn, sizeof(fn)) || str_starts(fn, "/sys/devices/virtual"))
			continue;
		if (r->flags & RQ_PCI_FUNCTION)
			rd_attr(k, fn, r);
		if (r->flags & RQ_PCI_BRIDGES)
			for (char *slash; (slash = strrchr(fn, '/')) && slash != fn;) {
				*slash = '\0';
				slash = strrchr(fn, '/');
				if (!slash || strlen(slash + 1) != 12 || slash[5] != ':')
					break;
				rd_attr(k, fn, r);
			}
	}
	n = rd_list(k, "/sys/class/net", names, 64);
	for (size_t i = 0; i < n && (r->flags & RQ_PCI_PARENT); i++) {
		snprintf(rel, sizeof(rel), "/sys/class/net/%s/device/..", names[i]);
		if (rd_real(k, rel, up, sizeof(up)))
			rd_attr(k, up, r);
	}
}

static void rd_path(struct rd_check *k, const struct rq_read *r)
{
	char pat[8192], kver[256], p[8192];
	const char *kw = strstr(r->path, "{kernel}");
	glob_t g;

	if (kw) {
		snprintf(p, sizeof(p), "%s/proc/sys/kernel/osrelease", k->src);
		if (read_line(p, kver, sizeof(kver)))
			return;
		snprintf(pat, sizeof(pat), "%s%.*s%s%s", k->src, (int)(kw - r->path), r->path, kver, kw + 8);
	} else {
		snprintf(pat, sizeof(pat), "%s%s", k->src, r->path);
	}
	if (glob(pat, GLOB_NOCHECK, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *rel = g.gl_pathv[i] + strlen(k->src);
		char t[PATH_MAX], names[256][256];

		rd_expect(k, rel, "a path");
		if (r->follow && rd_real(k, rel, t, sizeof(t)))
			rd_expect(k, t, "where the path links to");
		if (r->depth && !r->follow) {
			size_t n = rd_list(k, rel, names, 256);

			for (size_t j = 0; j < n; j++) {
				snprintf(t, sizeof(t), "%s/%s", rel, names[j]);
				rd_expect(k, t, "an entry of a directory read");
			}
		}
	}
	globfree(&g);
}

/* The tool answers from the copy as it answers from the source. */
static void rd_tool(struct rd_check *k, const char *const *argv)
{
	struct rq_ctx a = { .root = k->src, .replay = true, .log_fd = -1, .tool = rq_tool_replay };
	struct rq_ctx b = { .root = k->dst, .replay = true, .log_fd = -1, .tool = rq_tool_replay };
	struct proc_result x, y;

	proc_result_init(&x);
	proc_result_init(&y);
	if (rq_tool_replay(&a, argv, 20000, &x) == 0 && !x.exec_failed) {
		k->found++;
		ck_assert_msg(rq_tool_replay(&b, argv, 20000, &y) == 0 && !y.exec_failed,
			      "%s: %s reads `%s ...`, which the source answers and the capture does not", k->src,
			      k->kind, argv[0]);
		ck_assert_int_eq(x.exit_code, y.exit_code);
	}
	proc_result_release(&x);
	proc_result_release(&y);
}

static void rd_tool_each(struct rd_check *k, const struct rq_read *r)
{
	char names[64][256], p[8192], v[64];
	bool pci = false, nd = false;
	size_t n;

	for (size_t j = 0; r->argv[j]; j++) {
		pci |= !strcmp(r->argv[j], "{pci}");
		nd |= !strcmp(r->argv[j], "{netdev}");
	}
	if (!pci && !nd) {
		rd_tool(k, r->argv);
		return;
	}
	n = rd_list(k, pci ? "/sys/class/infiniband" : "/sys/class/net", names, 64);
	for (size_t i = 0; i < n; i++) {
		const char *argv[16], *val = names[i];
		char t[PATH_MAX];
		size_t j;

		if (pci) {
			snprintf(p, sizeof(p), "/sys/class/infiniband/%s/device", names[i]);
			if (!rd_real(k, p, t, sizeof(t)) || !strrchr(t, '/'))
				continue;
			val = strrchr(t, '/') + 1;
		} else {
			snprintf(p, sizeof(p), "%s/sys/class/net/%s/type", k->src, names[i]);
			if (read_line(p, v, sizeof(v)) || strcmp(v, "1"))
				continue;
		}
		for (j = 0; r->argv[j] && j + 1 < ARRAY_SIZE(argv); j++)
			argv[j] = !strcmp(r->argv[j], "{pci}") || !strcmp(r->argv[j], "{netdev}") ? val : r->argv[j];
		argv[j] = NULL;
		rd_tool(k, argv);
	}
}

static void rd_check_read(struct rd_check *k, const struct rq_read *r)
{
	char names[1024][256], rel[8192], p[8192], comm[64];
	size_t n;

	switch (r->type) {
	case RQ_READ_PATH:
		rd_path(k, r);
		break;
	case RQ_READ_PCI:
		rd_pci(k, r);
		break;
	case RQ_READ_PCI_VENDOR:
		n = rd_list(k, "/sys/bus/pci/devices", names, 1024);
		for (size_t i = 0; i < n; i++) {
			snprintf(p, sizeof(p), "%s/sys/bus/pci/devices/%s/vendor", k->src, names[i]);
			if (!read_line(p, comm, sizeof(comm)) && strtoul(comm, NULL, 16) == r->flags) {
				snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/vendor", names[i]);
				rd_expect(k, rel, "a function of a vendor read");
			}
		}
		break;
	case RQ_READ_NETDEV:
		n = rd_list(k, "/sys/class/net", names, 1024);
		for (size_t i = 0; i < n; i++) {
			snprintf(rel, sizeof(rel), "/sys/class/net/%s", names[i]);
			rd_attr(k, rel, r);
		}
		break;
	case RQ_READ_MODULE: {
		const char *mi[] = { "modinfo", r->path, NULL };

		snprintf(rel, sizeof(rel), "/sys/module/%s/initstate", r->path);
		rd_expect(k, rel, "a module's state");
		if (r->flags & (RQ_MOD_MODINFO | RQ_MOD_MODINFO_GPU))
			rd_tool(k, mi);
		break;
	}
	case RQ_READ_PROCESS:
		n = rd_list(k, "/proc", names, 1024);
		for (size_t i = 0; i < n; i++) {
			snprintf(p, sizeof(p), "%s/proc/%s/comm", k->src, names[i]);
			if (!read_line(p, comm, sizeof(comm)) && !strcmp(comm, r->path)) {
				snprintf(rel, sizeof(rel), "/proc/%s/comm", names[i]);
				rd_expect(k, rel, "a daemon's comm");
			}
		}
		break;
	case RQ_READ_TOOL:
		rd_tool_each(k, r);
		break;
	case RQ_READ_END:
		break;
	}
}

START_TEST(kinds_reads_are_captured)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", src[4096], real[PATH_MAX];
	const struct rq_kind *kind;
	unsigned found = 0, nreads = 0;

	struct capture_opts o = { .src = src, .dst = tmp };
	struct capture_stats st;
	char err[512] = "";

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(rmdir(tmp), 0);
	snprintf(src, sizeof(src), "%s/%s", nc_fixture_dir(), reads_fixtures[_i]);
	ck_assert_msg(rq_capture(&o, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(realpath(src, real));
	for (size_t i = 0; (kind = rq_kind_iter(i)); i++) {
		struct rd_check k = { .src = real, .dst = tmp, .kind = kind->name };

		for (const struct rq_read *r = kind->reads; r && r->type != RQ_READ_END; r++, nreads++)
			rd_check_read(&k, r);
		found += k.found;
	}
	/* the kinds declare reads, and this fixture holds instances of them */
	ck_assert_uint_gt(nreads, 50);
	ck_assert_uint_gt(found, 20);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* A read list in words (help KIND, kinds.md): one line a read, attributes of one scope joined. */
START_TEST(reads_describe)
{
	const struct rq_read reads[] = {	/* (compound literals: not static in a function) */
		RQ_READS_PCI("config", RQ_PCI_FUNCTION | RQ_PCI_BRIDGES),
		RQ_READS_PCI("iommu_group", RQ_PCI_FUNCTION | RQ_PCI_BRIDGES),
		RQ_READS_PCI_TREE("msi_irqs", 2, RQ_PCI_FUNCTION),
		RQ_READS_NETDEV("mtu"), RQ_READS_NETDEV("mode"),
		RQ_READS_LINK("/lib/modules/{kernel}/build"),
		RQ_READS_MODULE("ib_core", RQ_MOD_MODINFO | RQ_MOD_EXPORTS),
		RQ_READS_PROCESS("irqbalance"),
		RQ_READS_TOOL("mstflint", "-d", "{pci}", "q"),
		RQ_READS_END,
	};
	struct sb d = SB_INIT;

	rq_capture_reads_describe(reads, &d);
	ck_assert_str_eq(d.buf,
		"`config`, `iommu_group` of each RDMA PCI function and the bridges above it\n"
		"`msi_irqs` of each RDMA PCI function (2 levels below it)\n"
		"`mtu`, `mode` of every netdev (`/sys/class/net/*/`)\n"
		"`/lib/modules/{kernel}/build` and what it links to\n"
		"module `ib_core` (`/sys/module/ib_core`, `modinfo ib_core` where it is loaded, "
		"`modprobe --show-exports` of its file)\n"
		"whether `irqbalance` runs (`/proc/*/comm`)\n"
		"`mstflint -d {pci} q` for each RDMA device's PCI function\n");
	sb_release(&d);
	sb_init(&d);
	rq_capture_reads_describe(NULL, &d);
	ck_assert_uint_eq(d.len, 0);
	sb_release(&d);
}
END_TEST

/*
 * capture writes only into a dir it makes: an existing one, even empty, is
 * refused (a planted DIR/capture -> VICTIM got the manifest), and so is a
 * parent that others may rename entries in (not sticky).
 */
START_TEST(capture_dir_must_be_new)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", dst[4200], victim[4200], link[4300], src[4096], err[512];
	struct capture_opts o = { .src = src, .dst = dst };
	struct capture_stats st;
	struct stat sb;

	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(src, sizeof(src), "%s/rxe-vm1", nc_fixture_dir());
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	ck_assert_int_eq(mkdir(victim, 0700), 0);
	/* an empty dir with a link where capture/ would go */
	snprintf(dst, sizeof(dst), "%s/empty", tmp);
	ck_assert_int_eq(mkdir(dst, 0777), 0);
	snprintf(link, sizeof(link), "%s/capture", dst);
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(rq_capture(&o, &st, err, sizeof(err)), -EEXIST);
	ck_assert_msg(strstr(err, "exists: capture into a new directory"), "%s", err);
	snprintf(link, sizeof(link), "%s/manifest", victim);
	ck_assert_int_ne(lstat(link, &sb), 0);
	/* DIR itself a link */
	snprintf(dst, sizeof(dst), "%s/alink", tmp);
	ck_assert_int_eq(symlink(victim, dst), 0);
	ck_assert_int_eq(rq_capture(&o, &st, err, sizeof(err)), -EEXIST);
	/* a new DIR under a parent anyone may write, not sticky */
	snprintf(dst, sizeof(dst), "%s/open", tmp);
	ck_assert_int_eq(mkdir(dst, 0777), 0);
	ck_assert_int_eq(chmod(dst, 0777), 0);
	snprintf(dst, sizeof(dst), "%s/open/cap", tmp);
	ck_assert_int_eq(rq_capture(&o, &st, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "with mode 0777: another user could swap"), "%s", err);
	ck_assert_int_ne(lstat(dst, &sb), 0);
	/* sticky, as /tmp: fine */
	snprintf(dst, sizeof(dst), "%s/open", tmp);
	ck_assert_int_eq(chmod(dst, 01777), 0);
	snprintf(dst, sizeof(dst), "%s/open/cap", tmp);
	ck_assert_msg(rq_capture(&o, &st, err, sizeof(err)) == 0, "%s", err);
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

/*
 * The binary config space: the Device Serial Number (ext. cap 0x0003) is a
 * ConnectX node GUID.  Found by walking the capability list (here behind an
 * AER capability), rewritten as the GUID's text spelling is, and a loop of
 * next pointers ends.
 */
START_TEST(redact_pci_config_dsn)
{
	uint8_t cfg[4096] = { 0 }, keep[4096];
	struct rq_redact rd;
	struct sb s = SB_INIT;
	char want[17], got[17];
	uint64_t v = 0;

	/* 0x100: AER (id 1, version 2, next 0x148); 0x148: DSN (id 3, version 1, next 0) */
	cfg[0x100] = 0x01; cfg[0x102] = 0x82; cfg[0x103] = 0x14;
	cfg[0x148] = 0x03; cfg[0x14a] = 0x01;
	/* serial 0xb8599f030022626e, lower dword first, little-endian */
	for (int i = 0; i < 8; i++)
		cfg[0x14c + i] = (uint8_t)(0xb8599f030022626eull >> (8 * i));
	rq_redact_init(&rd, NULL);
	memcpy(keep, cfg, sizeof(cfg));
	ck_assert_uint_eq(rq_redact_pci_config(&rd, cfg, sizeof(cfg)), 1);
	for (int i = 7; i >= 0; i--)
		v = v << 8 | cfg[0x14c + i];
	ck_assert_uint_ne(v, 0xb8599f030022626eull);
	snprintf(got, sizeof(got), "%016llx", (unsigned long long)v);
	/* the same pseudonym as the GUID's text spelling */
	sb_adds(&s, "Port GUID: 0xb8599f030022626e\n");
	rq_redact_text(&rd, &s);
	ck_assert_ptr_nonnull(strstr(s.buf, "0x"));
	snprintf(want, sizeof(want), "%.16s", strstr(s.buf, "0x") + 2);
	ck_assert_str_eq(got, want);
	/* nothing else in the space changed */
	memcpy(keep + 0x14c, cfg + 0x14c, 8);
	ck_assert_int_eq(memcmp(keep, cfg, sizeof(cfg)), 0);
	/* a next pointer to itself ends; a 256-byte space has no extended list */
	cfg[0x14a] = 0x81; cfg[0x14b] = 0x14;	/* next 0x148 */
	ck_assert_uint_eq(rq_redact_pci_config(&rd, cfg, sizeof(cfg)), 1);
	ck_assert_uint_eq(rq_redact_pci_config(&rd, cfg, 256), 0);
	sb_release(&s);
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
	struct rq_redact rd;

	rq_redact_init(&rd, "edr-node01");
	rq_redact_text(&rd, &s);
	ck_assert_ptr_null(strstr(s.buf, "b859:9f03"));
	ck_assert_ptr_null(strstr(s.buf, "b8599f03"));
	ck_assert_ptr_null(strstr(s.buf, "1270:fdff"));
	ck_assert_ptr_null(strstr(s.buf, "10:70:fd:b4"));
	ck_assert_ptr_null(strstr(s.buf, "edr-node01"));
	/* the FQDN goes whole: its domain named the site */
	ck_assert_ptr_nonnull(strstr(s.buf, "host host-redacted says hi to host-redacted\n"));
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

/*
 * Spellings the review found kept: a MAC in dotted fours and as one 0x
 * number, and the host name in another case or as an FQDN.  The MAC maps
 * as its colon spelling does; a longer name that starts with the host's is
 * another host.
 */
START_TEST(redact_more_spellings)
{
	struct sb s = SB_INIT;
	static const char in[] =
		"mac dead.beef.1234 as number 0xdeadbeef1234 and de:ad:be:ef:12:34\n"
		"NodeDescription: NODE9.lab.example.com mlx5_0\n"
		"peer Node9 and node99 and node9.\n"
		"fw 16.35.2000 ver 1.2.3\n";
	struct rq_redact rd;
	char a[20], b[20], c[20];

	sb_adds(&s, in);
	rq_redact_init(&rd, "node9");
	rq_redact_text(&rd, &s);
	ck_assert_ptr_null(strcasestr(s.buf, "dead.beef"));
	ck_assert_ptr_null(strcasestr(s.buf, "deadbeef"));
	ck_assert_ptr_null(strcasestr(s.buf, "de:ad:be"));
	ck_assert_ptr_null(strcasestr(s.buf, "example.com"));
	ck_assert_ptr_null(strstr(s.buf, "NODE9"));
	ck_assert_ptr_null(strstr(s.buf, "Node9"));
	ck_assert_ptr_nonnull(strstr(s.buf, "NodeDescription: host-redacted mlx5_0\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "peer host-redacted and node99 and host-redacted.\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "fw 16.35.2000 ver 1.2.3\n"));
	/* one MAC, one pseudonym, in each spelling's own form */
	ck_assert_int_eq(sscanf(s.buf, "mac %14s as number 0x%12s and %17s", a, b, c), 3);
	ck_assert_uint_eq(strlen(a), 14);
	ck_assert(a[4] == '.' && a[9] == '.');
	char da[13], dc[13];
	size_t k = 0;

	for (size_t i = 0; a[i]; i++)
		if (a[i] != '.')
			da[k++] = a[i];
	da[k] = '\0';
	k = 0;
	for (size_t i = 0; c[i]; i++)
		if (c[i] != ':')
			dc[k++] = c[i];
	dc[k] = '\0';
	ck_assert_str_eq(da, dc);
	ck_assert_str_eq(b, dc);
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

	struct rq_redact rd;

	sb_adds(&s, in);
	rq_redact_init(&rd, NULL);
	rq_redact_text(&rd, &s);
	ck_assert_ptr_null(strcasestr(s.buf, "fdff:feb4"));
	ck_assert_ptr_null(strstr(s.buf, "c123:4560"));
	ck_assert_ptr_null(strstr(s.buf, "10:70:fd:b4"));
	/* a dot inside a token still keeps it whole */
	ck_assert_ptr_nonnull(strstr(s.buf, "pci 0000:3b:00.0 fw 20.35.1012"));
	sb_release(&s);
}
END_TEST

/* The token after the first occurrence of prefix, up to a blank, comma or end of line. */
static void token_after(const char *text, const char *prefix, char *out, size_t size)
{
	const char *p = strstr(text, prefix);
	size_t n = 0;

	ck_assert_msg(p != NULL, "no \"%s\" in:\n%s", prefix, text);
	p += strlen(prefix);
	while (*p == ' ' || *p == '\t')
		p++;
	while (p[n] && !strchr(" \t\n,", p[n]) && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* Only the hex digits of s, lower case. */
static void digits_of(const char *s, char *out)
{
	for (; *s; s++)
		if (isxdigit((unsigned char)*s))
			*out++ = (char)tolower((unsigned char)*s);
	*out = '\0';
}

static unsigned hexdigit(char c)
{
	return isdigit((unsigned char)c) ? (unsigned)(c - '0') : (unsigned)(tolower((unsigned char)c) - 'a' + 10);
}

/* A 64-bit id's station (qual/redact.h): bytes 0-2 and 5-7, 12 digits. */
static void station_of(const char *hex16, char *out)
{
	snprintf(out, 13, "%.6s%.6s", hex16, hex16 + 10);
}

/* The EUI-64 interface id of a MAC (12 digits): U/L bit flipped, ff:fe inserted. */
static void eui64_of(const char *mac, char *out)
{
	char b0[3] = { mac[0], mac[1], 0 };

	snprintf(out, 17, "%02lx%.4sfffe%.6s", strtoul(b0, NULL, 16) ^ 2, mac + 2, mac + 6);
}

/*
 * Every spelling of one GUID, of the MAC made from it and of the GID made
 * from the MAC maps to one pseudonym, each in its own form (case,
 * separators, length); values that are not identifiers stay as they are.
 */
START_TEST(redact_spellings)
{
	static const char in[] =
		"sysfs 1070:fd03:00b4:f0f0\n"
		"ibstat Node GUID: 0x1070fd0300b4f0f0\n"
		"mstflint Base GUID:             1070fd0300b4f0f0        4\n"
		"mstflint Base MAC:              1070fdb4f0f0            4\n"
		"upper GUID 1070FD0300B4F0F0\n"
		"upper 0x 0X1070FD0300B4F0F0\n"
		"bytes 10:70:fd:03:00:b4:f0:f0\n"
		"mac 10:70:fd:b4:f0:f0\n"
		"dashed 10-70-fd-b4-f0-f0\n"
		"macup 10:70:FD:B4:F0:F0\n"
		"bare 1070FDB4F0F0\n"
		"gid fe80:0000:0000:0000:1270:fdff:feb4:f0f0, RoCE v1\n"
		"cgid fe80::1270:fdff:feb4:f0f0, RoCE v2\n"
		"CGID FE80::1270:FDFF:FEB4:F0F0\n"
		"other de-ad-be-ef-12-34 and DEADBEEF1234 and deadbeef1234\n"
		"labelled Base MAC: 001122334455\n"
		"counter port_xmit_data 123456789012 and 1234567890123456\n"
		"uuid SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c\n"
		"brd ff:ff:ff:ff:ff:ff max_mr_size: 0xffffffffffffffff\n"
		"masks 0xfffffffffffff000 0x7fffffffffffffff 0x00000000ffffffff\n"
		"psid MT_0000000359 pci 0000:3b:00.0 fw 22.36.1010\n";
	struct sb s = SB_INIT, s2 = SB_INIT;
	struct rq_redact rd, rd2;
	char t[64], g[20], m[16], st[16], eui[20], x[64];

	sb_adds(&s, in);
	rq_redact_init(&rd, NULL);
	rq_redact_text(&rd, &s);
	ck_assert_uint_eq(s.len, strlen(in));
	ck_assert_ptr_null(strcasestr(s.buf, "b4f0f0"));
	ck_assert_ptr_null(strcasestr(s.buf, "b4:f0:f0"));
	ck_assert_ptr_null(strcasestr(s.buf, "b4-f0-f0"));
	ck_assert_ptr_null(strcasestr(s.buf, "feb4:f0f0"));

	token_after(s.buf, "sysfs", t, sizeof(t));
	ck_assert_int_eq((int)strlen(t), 19);
	ck_assert(t[4] == ':' && t[9] == ':' && t[14] == ':');
	digits_of(t, g);
	ck_assert_int_eq(strncmp(g + 6, "0300", 4), 0);		/* bytes 3-4 are kept */
	station_of(g, st);
	/* unicast, globally administered, as the original */
	ck_assert_uint_eq(hexdigit(st[1]) & 3, 0);

	token_after(s.buf, "Node GUID:", t, sizeof(t));
	ck_assert(str_starts(t, "0x"));
	ck_assert_str_eq(t + 2, g);
	token_after(s.buf, "mstflint Base GUID:", t, sizeof(t));
	ck_assert_str_eq(t, g);
	token_after(s.buf, "mstflint Base MAC:", t, sizeof(t));
	ck_assert_str_eq(t, st);
	snprintf(m, sizeof(m), "%s", st);
	/* upper case stays upper case */
	token_after(s.buf, "upper GUID", t, sizeof(t));
	ck_assert_int_eq(strcasecmp(t, g), 0);
	for (const char *p = t; *p; p++)
		ck_assert(!islower((unsigned char)*p));
	token_after(s.buf, "upper 0x", t, sizeof(t));
	ck_assert(str_starts(t, "0X"));
	ck_assert_int_eq(strcasecmp(t + 2, g), 0);
	token_after(s.buf, "bytes", t, sizeof(t));
	snprintf(x, sizeof(x), "%.2s:%.2s:%.2s:%.2s:%.2s:%.2s:%.2s:%.2s", g, g + 2, g + 4, g + 6, g + 8,
		 g + 10, g + 12, g + 14);
	ck_assert_str_eq(t, x);
	/* the MAC, in each of its forms */
	snprintf(x, sizeof(x), "%.2s:%.2s:%.2s:%.2s:%.2s:%.2s", m, m + 2, m + 4, m + 6, m + 8, m + 10);
	token_after(s.buf, "mac ", t, sizeof(t));
	ck_assert_str_eq(t, x);
	token_after(s.buf, "macup", t, sizeof(t));
	ck_assert_int_eq(strcasecmp(t, x), 0);
	for (const char *p = t; *p; p++)
		ck_assert(!islower((unsigned char)*p));
	snprintf(x, sizeof(x), "%.2s-%.2s-%.2s-%.2s-%.2s-%.2s", m, m + 2, m + 4, m + 6, m + 8, m + 10);
	token_after(s.buf, "dashed", t, sizeof(t));
	ck_assert_str_eq(t, x);
	token_after(s.buf, "bare", t, sizeof(t));
	ck_assert_int_eq(strcasecmp(t, m), 0);
	ck_assert(!islower((unsigned char)t[strcspn(t, "abcdefABCDEF")]));
	/* the GIDs made from the MAC: the EUI-64 of the MAC's pseudonym */
	eui64_of(m, eui);
	snprintf(x, sizeof(x), "fe80:0000:0000:0000:%.4s:%.4s:%.4s:%.4s", eui, eui + 4, eui + 8, eui + 12);
	token_after(s.buf, "gid ", t, sizeof(t));
	ck_assert_str_eq(t, x);
	snprintf(x, sizeof(x), "fe80::%.4s:%.4s:%.4s:%.4s", eui, eui + 4, eui + 8, eui + 12);
	token_after(s.buf, "cgid", t, sizeof(t));
	ck_assert_str_eq(t, x);
	token_after(s.buf, "CGID", t, sizeof(t));
	ck_assert_int_eq(strcasecmp(t, x), 0);
	ck_assert(str_starts(t, "FE80::"));
	/* one other MAC in three spellings: one pseudonym */
	ck_assert_ptr_null(strcasestr(s.buf, "deadbeef1234"));
	ck_assert_ptr_null(strstr(s.buf, "de-ad-be-ef-12-34"));
	{
		char a[32], b[32], c[32], da[16];
		const char *o = strstr(s.buf, "other ");

		ck_assert_int_eq(sscanf(o, "other %31s and %31s and %31s", a, b, c), 3);
		digits_of(a, da);
		ck_assert_int_eq(strcasecmp(da, b), 0);
		ck_assert_str_eq(da, c);
		for (const char *p = b; *p; p++)
			ck_assert(!islower((unsigned char)*p));
	}
	/* an all-digit run is a MAC only where its line says so */
	ck_assert_ptr_null(strstr(s.buf, "001122334455"));
	ck_assert_ptr_nonnull(strstr(s.buf, "counter port_xmit_data 123456789012 and 1234567890123456\n"));
	/* kept: a UUID, broadcast, masks, PSIDs, PCI addresses, versions */
	ck_assert_ptr_nonnull(strstr(s.buf, "uuid SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "brd ff:ff:ff:ff:ff:ff max_mr_size: 0xffffffffffffffff\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "masks 0xfffffffffffff000 0x7fffffffffffffff 0x00000000ffffffff\n"));
	ck_assert_ptr_nonnull(strstr(s.buf, "psid MT_0000000359 pci 0000:3b:00.0 fw 22.36.1010\n"));

	/* another capture, another key: other pseudonyms */
	sb_adds(&s2, in);
	rq_redact_init(&rd2, NULL);
	rq_redact_text(&rd2, &s2);
	token_after(s2.buf, "sysfs", t, sizeof(t));
	digits_of(t, x);
	ck_assert_str_ne(x, g);
	sb_release(&s);
	sb_release(&s2);
}
END_TEST

/* A node tree with mstflint and mlxfwmanager outputs: every file agrees on each port's pseudonym. */
START_TEST(redacted_capture_fw_tools)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", path[4200], v[128], g[20], st[16], eui[20], x[80], t[64];
	struct sb s = SB_INIT;
	static const char *const port[2][3] = {
		{ "rocep59s0f0", "ens1f0np0", "0000_3b_00.0" },
		{ "rocep59s0f1", "ens1f1np1", "0000_3b_00.1" },
	};
	char first[20] = "";

	capture_to("cx6dx-roce-fwpending", tmp, true);
	same_outcome("driver", "cx6dx-roce-fwpending", tmp);
	for (size_t k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s/node_guid", tmp, port[k][0]);
		ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
		ck_assert_int_eq((int)strlen(v), 19);
		digits_of(v, g);
		ck_assert_msg(strncmp(g, "1070fd0300b4f0f", 15), "GUID %s kept", v);
		station_of(g, st);
		eui64_of(st, eui);
		if (!k)
			snprintf(first, sizeof(first), "%s", g);
		else
			ck_assert_str_ne(g, first);	/* two ports, two pseudonyms */
		/* the netdev's MAC is the GUID's station */
		snprintf(path, sizeof(path), "%s/sys/class/net/%s/address", tmp, port[k][1]);
		ck_assert_int_eq(read_line(path, v, sizeof(v)), 0);
		snprintf(x, sizeof(x), "%.2s:%.2s:%.2s:%.2s:%.2s:%.2s", st, st + 2, st + 4, st + 6, st + 8, st + 10);
		ck_assert_str_eq(v, x);
		/* mstflint and mlxfwmanager: Base GUID and Base MAC */
		snprintf(path, sizeof(path), "%s/capture/tools/mstflint_-d_%s_q.out", tmp, port[k][2]);
		sb_reset(&s);
		ck_assert_int_eq(read_file(path, &s, 0), 0);
		token_after(s.buf, "Base GUID:", t, sizeof(t));
		ck_assert_str_eq(t, g);
		token_after(s.buf, "Base MAC:", t, sizeof(t));
		ck_assert_str_eq(t, st);
		ck_assert_ptr_nonnull(strstr(s.buf, "PSID:                  MT_0000000359\n"));
		snprintf(path, sizeof(path), "%s/capture/tools/mlxfwmanager_--query_-d_%s.out", tmp, port[k][2]);
		sb_reset(&s);
		ck_assert_int_eq(read_file(path, &s, 0), 0);
		token_after(s.buf, "Base GUID:", t, sizeof(t));
		ck_assert_str_eq(t, g);
		token_after(s.buf, "Base MAC:", t, sizeof(t));
		ck_assert_str_eq(t, st);
		ck_assert_ptr_nonnull(strstr(s.buf, "FW             22.39.1002     N/A"));
		/* ibstat and ibv_devinfo -v, the GIDs made from the MAC included */
		snprintf(path, sizeof(path), "%s/capture/tools/ibv_devinfo_-v.out", tmp);
		sb_reset(&s);
		ck_assert_int_eq(read_file(path, &s, 0), 0);
		snprintf(x, sizeof(x), "fe80:0000:0000:0000:%.4s:%.4s:%.4s:%.4s, IB/RoCE v1", eui, eui + 4,
			 eui + 8, eui + 12);
		ck_assert_msg(strstr(s.buf, x), "no %s in\n%s", x, s.buf);
		snprintf(x, sizeof(x), "fe80::%.4s:%.4s:%.4s:%.4s, RoCE v2", eui, eui + 4, eui + 8, eui + 12);
		ck_assert_msg(strstr(s.buf, x), "no %s", x);
		snprintf(x, sizeof(x), "node_guid:\t\t\t%.4s:%.4s:%.4s:%.4s", g, g + 4, g + 8, g + 12);
		ck_assert_msg(strstr(s.buf, x), "no %s", x);
		snprintf(path, sizeof(path), "%s/capture/tools/ibstat.out", tmp);
		sb_reset(&s);
		ck_assert_int_eq(read_file(path, &s, 0), 0);
		snprintf(x, sizeof(x), "0x%s", g);
		ck_assert_msg(strstr(s.buf, x), "no %s in ibstat", x);
	}
	/* nothing of the node's ids is left anywhere in the tool outputs */
	snprintf(path, sizeof(path), "%s/capture/tools", tmp);
	{
		struct dirent **ents = NULL;
		int n = scandir(path, &ents, NULL, alphasort);

		ck_assert_int_gt(n, 8);
		for (int i = 0; i < n; i++) {
			char f[4600];

			snprintf(f, sizeof(f), "%s/%s", path, ents[i]->d_name);
			sb_reset(&s);
			if (ents[i]->d_name[0] != '.' && read_file(f, &s, 0) == 0) {
				ck_assert_msg(!strcasestr(s.buf, "b4f0f") && !strcasestr(s.buf, "b4:f0:f") &&
					      !strcasestr(s.buf, "feb4:f0f"), "%s keeps an id", ents[i]->d_name);
			}
			free(ents[i]);
		}
		free(ents);
	}
	sb_release(&s);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

/* Where a tree comes from: its manifest says so, and a capture of a synthesized tree keeps it. */
START_TEST(tree_origin)
{
	char tmp[] = "/tmp/rq-capture-XXXXXX", src[4200], path[4300];
	struct rq_tree_meta m;

	snprintf(src, sizeof(src), "%s/cx6dx-roce-2numa", nc_fixture_dir());
	rq_sysroot_origin(src, &m);
	ck_assert_int_eq(m.origin, RQ_TREE_SYNTHESIZED);
	ck_assert(str_starts(m.synthesized, "fixtures/nodes/mkfixtures.py"));
	capture_to("cx6dx-roce-2numa", tmp, false);
	rq_sysroot_origin(tmp, &m);
	ck_assert_int_eq(m.origin, RQ_TREE_SYNTHESIZED);
	ck_assert(str_starts(m.synthesized, "fixtures/nodes/mkfixtures.py"));
	ck_assert(m.captured[0]);
	/* the same capture without the record: a capture */
	snprintf(path, sizeof(path), "%s/capture/manifest", tmp);
	{
		struct sb man = SB_INIT, out = SB_INIT;

		ck_assert_int_eq(read_file(path, &man, 0), 0);
		for (char *l = man.buf, *nl; *l; l = nl + 1) {
			nl = strchr(l, '\n');
			if (!str_starts(l, "meta\tsynthesized\t"))
				sb_add(&out, l, (size_t)(nl - l + 1));
		}
		ck_assert_uint_lt(out.len, man.len);
		ck_assert_int_eq(write_file_atomic(path, out.buf, out.len), 0);
		sb_release(&man);
		sb_release(&out);
	}
	rq_sysroot_origin(tmp, &m);
	ck_assert_int_eq(m.origin, RQ_TREE_CAPTURED);
	ck_assert(strstr(m.source, "/fixtures/nodes/cx6dx-roce-2numa"));
	/* no manifest, or not one: origin unknown */
	ck_assert_int_eq(unlink(path), 0);
	rq_sysroot_origin(tmp, &m);
	ck_assert_int_eq(m.origin, RQ_TREE_UNKNOWN);
	ck_assert_int_eq(write_file_atomic(path, "meta\tsynthesized\tx\n", 18), 0);
	rq_sysroot_origin(tmp, &m);
	ck_assert_int_eq(m.origin, RQ_TREE_UNKNOWN);
	ck_assert_int_eq(rm_rf(tmp), 0);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, capture_replays_identically, 0, (int)ARRAY_SIZE(fixtures));
	tcase_add_loop_test(tc, kinds_reads_are_captured, 0, (int)ARRAY_SIZE(reads_fixtures));
	tcase_add_test(tc, reads_describe);
	tcase_add_test(tc, capture_dir_must_be_new);
	tcase_add_test(tc, redacted_capture);
	tcase_add_test(tc, manifest_tool_lookup);
	tcase_add_test(tc, redact_text);
	tcase_add_test(tc, redact_pci_config_dsn);
	tcase_add_test(tc, redact_more_spellings);
	tcase_add_test(tc, redact_text_edges);
	tcase_add_test(tc, redact_spellings);
	tcase_add_test(tc, redacted_capture_fw_tools);
	tcase_add_test(tc, tree_origin);
}

RQ_CHECK_MAIN("capture", add_tests)
