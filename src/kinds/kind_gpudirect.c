/* SPDX-License-Identifier: MIT */
/*
 * gpudirect: can every rail move GPU memory by GPUDirect RDMA, and well?
 * (read-only)
 *
 * A GPU node passes every network check and still trains at a fraction of
 * its speed when GPUDirect RDMA is off or crosses the CPU: the NIC then
 * reads GPU memory through the root complex or not at all (NCCL falls back
 * to staging through host memory).  What decides it is on the host:
 *
 *  - where each rail sits against the GPUs: behind the same PCIe switch
 *    (PIX, PXB) the peer traffic stays in the switch; across a host bridge
 *    (PHB), between host bridges (NODE) or sockets (SYS) it crosses the
 *    CPU.  Found from the sysfs paths (their deepest common bridge) and
 *    from `nvidia-smi topo -m` where the tool is there.  Judged per GPU:
 *    each needs a NIC behind its own switch; storage and in-band NICs in
 *    CPU slots (by design on DGX) serve no GPU and are no rails;
 *  - a peer-memory path for the verbs: the nvidia_peermem module (the
 *    NVIDIA driver's; nv_peer_mem was its MLNX_OFED-era predecessor), or
 *    DMA-BUF (ibv_reg_dmabuf_mr: kernel 5.12's ib_umem_dmabuf, rdma-core
 *    34, and NVIDIA's open kernel modules from R515);
 *  - ACS on the switch ports between GPU and NIC: P2P Request Redirect
 *    and Completion Redirect (PCIe ACS Control register, lspci's ACSCtl
 *    ReqRedir+/CmpltRedir+) send every peer request up to the root
 *    complex, which NCCL's troubleshooting guide tells to disable;
 *  - the IOMMU: GPUDirect RDMA needs every device to see the same
 *    physical addresses, so NVIDIA's GPUDirect RDMA guide requires the
 *    IOMMU off or in pass-through (group type "identity",
 *    drivers/iommu/iommu.c iommu_group_show_type()).
 *
 * Every failing row says what to change (a slot, `modprobe`, `setpci`, the
 * kernel command line); nothing is changed here.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "core/proc.h"
#include "core/util.h"
#include "parsers/parse_nvtopo.h"
#include "rdma/nodeinfo.h"
#include "rdma/rdmadev.h"

enum { IOMMU_PASSTHROUGH, IOMMU_ANY };
static const char *const iommu_names[] = { "passthrough", "any", NULL };

struct gd_cfg {
	bool nearness;
	bool peer_memory;
	bool acs;
	int iommu;
	bool topo;
};

static const struct key_def gd_keys[] = {
	{ .name = "nearness", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct gd_cfg, nearness),
	  .help = "a rail whose nearest GPU is across the CPU (PHB, NODE, SYS) fails on a node where other rails have a GPU behind their PCIe switch (PIX, PXB)" },
	{ .name = "peer_memory", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct gd_cfg, peer_memory),
	  .help = "a peer-memory path must exist: nvidia_peermem (or nv_peer_mem) loaded, or DMA-BUF (kernel >= 5.12, NVIDIA open kernel module >= 515, rdma-core >= 34)" },
	{ .name = "acs", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct gd_cfg, acs),
	  .help = "no PCIe switch port between a rail and its GPUs may have ACS P2P Request or Completion Redirect on" },
	{ .name = "iommu", .type = KEY_ENUM, .choices = iommu_names, .def = "passthrough",
	  .offset = offsetof(struct gd_cfg, iommu),
	  .help = "passthrough: the IOMMU groups of rails and GPUs must be identity (or no IOMMU); any: recorded only" },
	{ .name = "topo", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct gd_cfg, topo),
	  .help = "ask nvidia-smi topo -m where it exists (its matrix is judged; the sysfs walk is recorded beside it)" },
	KEY_END
};

#define MAX_GPUS 64
#define MAX_DEPTH 16

/* A PCI device by its sysfs path: "pci0000:17", "0000:17:01.0", ..., the device. */
struct pcipath {
	char comp[MAX_DEPTH][16];
	int n;
};

struct gpu {
	char bdf[16];
	int numa;
	int index;		/* nvidia-smi's GPU<index>: the PCI bus order */
	struct pcipath path;
};

static bool is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return strlen(s) == 12 && sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

/* The components of a device's real sysfs path from its host bridge down. */
static int pci_path_of(struct rq_ctx *ctx, const char *bdf, struct pcipath *p)
{
	char path[PATH_MAX], real[PATH_MAX], *s, *save = NULL;
	bool on = false;

	p->n = 0;
	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	if (!realpath(path, real))
		return -errno;
	for (s = strtok_r(real, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (!on && !strncmp(s, "pci", 3) && strchr(s, ':'))
			on = true;
		if (on && p->n < MAX_DEPTH)
			snprintf(p->comp[p->n++], sizeof(p->comp[0]), "%s", s);
	}
	return p->n >= 2 && is_bdf(p->comp[p->n - 1]) ? 0 : -ENOENT;
}

/*
 * nvidia-smi's connection type between two devices, from their sysfs
 * paths: under one switch (each at most a downstream port below the
 * deepest common bridge) PIX, deeper PXB; only the host bridge in common
 * PHB; other host bridges NODE on one NUMA node, else SYS.  The common
 * bridge of a root port's two children is itself a switch port, so a
 * common root port alone means the traffic turns in the root complex.
 */
static int sysfs_level(const struct pcipath *a, int numa_a, const struct pcipath *b, int numa_b, int *common)
{
	int c = 0;

	*common = -1;
	if (strcmp(a->comp[0], b->comp[0]))
		return numa_a >= 0 && numa_a == numa_b ? NVT_NODE : NVT_SYS;
	while (c + 1 < a->n - 1 && c + 1 < b->n - 1 && !strcmp(a->comp[c + 1], b->comp[c + 1]))
		c++;
	*common = c;
	if (c <= 1)
		return NVT_PHB;
	return a->n - 1 - c <= 2 && b->n - 1 - c <= 2 ? NVT_PIX : NVT_PXB;
}

static int bdf_cmp(const void *x, const void *y)
{
	return strcmp(((const struct gpu *)x)->bdf, ((const struct gpu *)y)->bdf);
}

/* NVIDIA GPUs: vendor 0x10de, class 3D controller (0x0302) or VGA (0x0300). */
static int scan_gpus(struct rq_ctx *ctx, struct gpu *g, int max)
{
	char path[PATH_MAX], v[32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices");
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)) && n < max) {
		unsigned long cls;

		if (!is_bdf(e->d_name))
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (read_line(path, v, sizeof(v)) || strtoul(v, NULL, 16) != 0x10de)
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/class", e->d_name);
		if (read_line(path, v, sizeof(v)))
			continue;
		cls = strtoul(v, NULL, 16) >> 8;
		if (cls != 0x0302 && cls != 0x0300)
			continue;
		memset(&g[n], 0, sizeof(g[n]));
		snprintf(g[n].bdf, sizeof(g[n].bdf), "%.15s", e->d_name);
		g[n].numa = -1;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", e->d_name);
		if (!read_line(path, v, sizeof(v)))
			g[n].numa = atoi(v);
		if (pci_path_of(ctx, g[n].bdf, &g[n].path) == 0)
			n++;
	}
	closedir(d);
	qsort(g, (size_t)n, sizeof(*g), bdf_cmp);
	for (int i = 0; i < n; i++)
		g[i].index = i;
	return n;
}

/* `nvidia-smi topo -m`, parsed; NULL with why. */
static struct nvtopo *read_topo(struct rq_ctx *ctx, char *why, size_t whysz)
{
	static const char *const argv[] = { "nvidia-smi", "topo", "-m", NULL };
	struct nvtopo *t = NULL;
	struct proc_result r;
	char err[256];

	proc_result_init(&r);
	if (rq_tool(ctx, argv, 20000, &r) < 0 || r.exec_failed) {
		snprintf(why, whysz, "not run: %s", ctx->replay ? "the capture holds no nvidia-smi output" :
			 "nvidia-smi is not installed");
	} else if (r.timed_out || r.exit_code != 0) {
		snprintf(why, whysz, "nvidia-smi topo -m failed (exit %d): %.120s", r.exit_code,
			 r.out.buf ? strtrim(r.out.buf) : "");
	} else {
		t = xcalloc(1, sizeof(*t));
		if (nvtopo_parse(r.out.buf ? r.out.buf : "", r.out.len, t, err, sizeof(err))) {
			snprintf(why, whysz, "nvidia-smi topo -m: %.200s", err);
			free(t);
			t = NULL;
		}
	}
	proc_result_release(&r);
	return t;
}

/* ---- config space: the ACS extended capability (PCIe Base Spec 7.7.8) ---- */

#define PCI_EXT_CAP_ID_ACS 0x000d
#define ACS_RR 0x0004	/* P2P Request Redirect */
#define ACS_CR 0x0008	/* P2P Completion Redirect */

static unsigned le16(const unsigned char *b) { return b[0] | (unsigned)b[1] << 8; }
static uint32_t le32(const unsigned char *b) { return le16(b) | (uint32_t)le16(b + 2) << 16; }

/*
 * The offset of extended capability id in a 4 KiB config space, 0 when
 * absent, -1 when the extended space was not readable (sysfs `config`
 * gives 256 bytes to a non-root reader, and 64 past the header to some).
 * The walk is bounded: a corrupt `next` cannot loop.
 */
static int ext_cap(const unsigned char *cfg, size_t n, unsigned id)
{
	unsigned off = 0x100;

	if (n < 4096)
		return -1;
	for (int hops = 0; off >= 0x100 && off <= 4096 - 8 && hops < 96; hops++) {
		uint32_t h = le32(cfg + off);

		if (!h || h == 0xffffffff)
			return 0;
		if ((h & 0xffff) == id)
			return (int)off;
		off = (h >> 20) & 0xffc;
	}
	return 0;
}

/* "SrcValid+ TransBlk- ReqRedir+ ..." as lspci -vvv prints ACSCtl. */
static void acs_text(unsigned ctl, char *buf, size_t size)
{
	static const char *const bit[] = { "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd",
					   "EgressCtrl", "DirectTrans" };

	buf[0] = '\0';
	for (unsigned i = 0; i < 7; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s%c", i ? " " : "", bit[i],
			 ctl & (1u << i) ? '+' : '-');
}

/* The sysfs directory of path component k: /sys/devices/pci0000:3a/0000:3a:01.0/... */
static void comp_dir(const struct pcipath *p, int k, char *buf, size_t size)
{
	snprintf(buf, size, "/sys/devices");
	for (int i = 0; i <= k && i < p->n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "/%s", p->comp[i]);
}

/* ACS Control of the bridge at dir: 1 redirecting, 0 not (or no ACS), -1 unreadable. */
static int acs_redirects(struct rq_ctx *ctx, const char *dir, char *ctltxt, size_t size)
{
	char path[PATH_MAX];
	struct sb cfg = SB_INIT;
	int off, ret;

	ctltxt[0] = '\0';
	rq_path(ctx, path, sizeof(path), "%s/config", dir);
	if (read_file(path, &cfg, 4096) < 0) {
		sb_release(&cfg);
		return -1;
	}
	off = ext_cap((const unsigned char *)cfg.buf, cfg.len, PCI_EXT_CAP_ID_ACS);
	if (off <= 0) {
		ret = off < 0 ? -1 : 0;
		if (!off)
			snprintf(ctltxt, size, "no ACS capability");
	} else {
		unsigned ctl = le16((const unsigned char *)cfg.buf + off + 6);

		acs_text(ctl, ctltxt, size);
		ret = (ctl & (ACS_RR | ACS_CR)) != 0;
	}
	sb_release(&cfg);
	return ret;
}

/* The IOMMU group type of a device ("identity", "DMA", "DMA-FQ"); -ENOENT: no group. */
static int iommu_type(struct rq_ctx *ctx, const char *bdf, char *type, size_t size, char *group, size_t gsz)
{
	char path[PATH_MAX], real[PATH_MAX];
	const char *b;

	rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	if (!realpath(path, real))
		return -ENOENT;
	b = strrchr(real, '/');
	snprintf(group, gsz, "%.24s", b ? b + 1 : real);
	rq_path(ctx, path, sizeof(path), "/sys/kernel/iommu_groups/%s/type", group);
	if (read_line(path, type, size))
		snprintf(type, size, "unknown");
	return 0;
}

/* ---- the peer-memory path (one row for the node) ---- */

static long version_major(const char *v)
{
	char *end;
	long m = strtol(v, &end, 10);

	return end == v ? -1 : m;
}

static void judge_peer_memory(struct rq_ctx *ctx, const struct gd_cfg *cfg, struct rq_result *row)
{
	char path[PATH_MAX], v[256], st[32], nvver[256] = "", kern[64] = "", why[512] = "";
	bool peermem = !node_module_live(ctx, "nvidia_peermem", st, sizeof(st)),
	     legacy = !node_module_live(ctx, "nv_peer_mem", st, sizeof(st)), open_km = false;
	long kmaj = -1, kmin = -1, nvmaj = -1, rdma = -1;
	const char *rc = NULL;
	struct sb text = SB_INIT;

	rq_fact_add(row, "nvidia_peermem", peermem ? "loaded" : "not loaded");
	if (legacy)
		rq_fact_add(row, "nv_peer_mem", "loaded");
	/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..." */
	rq_path(ctx, path, sizeof(path), "/proc/driver/nvidia/version");
	if (read_file(path, &text, 8192) == 0 && text.buf) {
		char *l = strstr(text.buf, "NVRM version:"), *nl;

		if (l) {
			if ((nl = strchr(l, '\n')))
				*nl = '\0';
			snprintf(nvver, sizeof(nvver), "%s", strtrim(l + strlen("NVRM version:")));
			open_km = strstr(nvver, "Open Kernel Module") != NULL;
			for (char *p = nvver; *p; p++)
				if (p[0] == ' ' && p[1] == ' ' && p[2] >= '0' && p[2] <= '9') {
					nvmaj = version_major(p + 2);
					break;
				}
		}
	}
	sb_release(&text);
	rq_fact_add(row, "nvidia_driver", nvver[0] ? nvver : "not loaded (no /proc/driver/nvidia/version)");
	node_version_facts(ctx, row);
	for (size_t i = 0; i < row->nfacts; i++)
		if (!strcmp(row->facts[i].key, "rdma_core"))
			rc = row->facts[i].value;
	rdma = rc ? version_major(rc) : -1;
	rq_path(ctx, path, sizeof(path), "/proc/sys/kernel/osrelease");
	if (!read_line(path, kern, sizeof(kern)))
		sscanf(kern, "%ld.%ld", &kmaj, &kmin);

	if (!nvver[0]) {
		rq_judge(row, false, "the NVIDIA kernel driver is not loaded (no /proc/driver/nvidia/version): "
			 "no GPU memory can be registered; load it (modprobe nvidia) or install the driver");
		return;
	}
	/* DMA-BUF: ib_umem_dmabuf (5.12), ibv_reg_dmabuf_mr (rdma-core 34), open modules R515+ */
	if (kmaj < 5 || (kmaj == 5 && kmin < 12))
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%skernel %s < 5.12", why[0] ? ", " : "", kern);
	if (rdma < 34)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%srdma-core %s < 34 (no ibv_reg_dmabuf_mr)",
			 why[0] ? ", " : "", rc ? rc : "unknown");
	if (!open_km)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sthe NVIDIA driver is the proprietary "
			 "kernel module (DMA-BUF export needs the open one)", why[0] ? ", " : "");
	else if (nvmaj < 515)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sNVIDIA driver %ld < 515",
			 why[0] ? ", " : "", nvmaj);
	snprintf(v, sizeof(v), "%s", why[0] ? why : "possible");
	rq_fact_add(row, "dmabuf", why[0] ? v : "possible (kernel >= 5.12, rdma-core >= 34, open kernel module >= 515)");
	if (cfg->peer_memory)
		rq_judge(row, peermem || legacy || !why[0],
			 "no peer-memory path for GPUDirect RDMA: nvidia_peermem is not loaded and DMA-BUF is not "
			 "possible (%s): `modprobe nvidia_peermem` (and list it in /etc/modules-load.d/), or move "
			 "to the open kernel module with kernel >= 5.12 and rdma-core >= 34", why);
	else
		rq_judge(row, true, "peer memory recorded (peer_memory: false)");
}

/* ---- per rail ---- */

struct rail_near {
	int level;		/* nearest GPU's, -1 unknown */
	int sysfs_level;
	char gpus[256];		/* "GPU0 (0000:19:00.0)" ... */
	int best[MAX_GPUS], nbest;
	signed char lv[MAX_GPUS];	/* to each GPU (nvidia-smi's where it has it), -1 unknown */
	int serves;		/* GPUs it has behind their PCIe switch (PIX/PXB): a rail when > 0 */
};

/* Behind one PCIe switch: the peer traffic turns in the switch, not the CPU. */
static bool behind_switch(int level)
{
	return level == NVT_PIX || level == NVT_PXB;
}

static void rail_nearness(const struct rdma_dev *d, const struct pcipath *rp, const struct gpu *g, int ng,
			  const struct nvtopo *t, struct rail_near *rn)
{
	int lv[MAX_GPUS], col = t ? nvtopo_find(t, d->name) : -1;

	rn->level = rn->sysfs_level = -1;
	rn->nbest = rn->serves = 0;
	rn->gpus[0] = '\0';
	for (int i = 0; i < ng; i++) {
		int common, s = rp->n ? sysfs_level(rp, d->numa_node, &g[i].path, g[i].numa, &common) : -1;
		char name[16];
		int gc;

		lv[i] = s;
		if (s >= 0 && (rn->sysfs_level < 0 || s < rn->sysfs_level))
			rn->sysfs_level = s;
		snprintf(name, sizeof(name), "GPU%d", g[i].index);
		if (col >= 0 && (gc = nvtopo_find(t, name)) >= 0 && t->level[col][gc] >= 0)
			lv[i] = t->level[col][gc];
		if (lv[i] >= 0 && (rn->level < 0 || lv[i] < rn->level))
			rn->level = lv[i];
		rn->lv[i] = (signed char)lv[i];
		rn->serves += behind_switch(lv[i]);
	}
	for (int i = 0; i < ng; i++)
		if (lv[i] == rn->level && rn->level >= 0) {
			rn->best[rn->nbest++] = i;
			snprintf(rn->gpus + strlen(rn->gpus), sizeof(rn->gpus) - strlen(rn->gpus), "%sGPU%d (%s)",
				 rn->nbest > 1 ? ", " : "", g[i].index, g[i].bdf);
		}
}

/* The switch ports a peer transfer crosses: below the common bridge on both sides, and it. */
static void judge_acs(struct rq_ctx *ctx, struct rq_result *row, const struct rdma_dev *d,
		      const struct pcipath *rp, const struct gpu *g, const char *const seen_in[], int *nseen)
{
	int common;
	const struct pcipath *side[2] = { rp, &g->path };
	char ctl[160], bad[512] = "", unread[256] = "", dir[PATH_MAX];

	if (sysfs_level(rp, d->numa_node, &g->path, g->numa, &common) > NVT_PXB || common < 1)
		return;
	for (int s = 0; s < 2; s++)
		for (int k = s ? common + 1 : common; k < side[s]->n - 1; k++) {
			const char *b = side[s]->comp[k];
			int r, dup = 0;

			for (int j = 0; j < *nseen; j++)
				dup |= !strcmp(seen_in[j], b);
			if (dup)
				continue;
			comp_dir(side[s], k, dir, sizeof(dir));
			r = acs_redirects(ctx, dir, ctl, sizeof(ctl));
			if (r == 1)
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s (ACSCtl: %s)",
					 bad[0] ? ", " : "", b, ctl);
			else if (r < 0)
				snprintf(unread + strlen(unread), sizeof(unread) - strlen(unread), "%s%s",
					 unread[0] ? " " : "", b);
		}
	if (unread[0])
		rq_fact_add(row, "acs_unread", unread);
	rq_judge(row, !bad[0], "%s (%s): ACS redirects peer traffic to GPU%d (%s) up to the root complex at %s: "
		 "disable it (setpci -s BDF ECAP_ACS+0x6.w=0000 per port until reboot; for good, PCIe ACS "
		 "off in the BIOS)", d->name, d->pci, g->index, g->bdf, bad);
}

static void judge_iommu(struct rq_ctx *ctx, const struct gd_cfg *cfg, struct rq_result *row, const char *who,
			const char *bdf, char *facts, size_t fsz)
{
	char type[32], grp[32];
	size_t l = strlen(facts);

	if (iommu_type(ctx, bdf, type, sizeof(type), grp, sizeof(grp))) {
		snprintf(facts + l, fsz - l, "%s%s: no IOMMU group (IOMMU off)", l ? "; " : "", who);
		return;
	}
	snprintf(facts + l, fsz - l, "%s%s: group %s %s", l ? "; " : "", who, grp, type);
	if (cfg->iommu == IOMMU_PASSTHROUGH)
		rq_judge(row, !strcmp(type, "identity"),
			 "%s (%s): IOMMU group %s translates DMA (type %s): GPUDirect RDMA needs pass-through; boot "
			 "with iommu=pt (intel_iommu=on iommu=pt, amd_iommu=on iommu=pt), or set the group's type "
			 "to identity with its drivers unbound", who, bdf, grp, type);
}

/*
 * Per GPU, not per NIC: every GPU needs a rail behind its own PCIe switch
 * (PIX/PXB), on a node whose design has any (a server without switches has
 * none, by design: recorded).  A GPU with none FAILs naming it, its nearest
 * NIC, and any GPU that has two or more (where the missing card usually
 * went).  Several rails for one GPU are a fact, not a fault: DGX A100
 * shares two NICs between two GPUs per switch.
 */
static void judge_gpu_rails(struct rq_result *node, const struct gpu *g, int ng, const struct rdma_devs *devs,
			    const int *idx, int n, const struct rail_near *rn, bool named)
{
	char map[1024] = "", none[512] = "", many[512] = "";
	int nwith = 0, nnone = 0;

	for (int k = 0; k < ng; k++) {
		char names[192] = "", near[192] = "";
		int cnt = 0, nearlv = -1;

		for (int i = 0; i < n; i++) {
			int lv = rn[i].lv[k];

			if (rn[i].level < 0)
				continue;
			if (behind_switch(lv)) {
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 cnt ? ", " : "", devs->v[idx[i]].name);
				cnt++;
			} else if (lv >= 0 && (nearlv < 0 || lv < nearlv)) {
				nearlv = lv;
			}
		}
		/* its nearest NICs that serve no GPU: where its rail most likely went */
		for (int i = 0; i < n && !cnt && nearlv >= 0; i++)
			if (rn[i].level >= 0 && rn[i].lv[k] == nearlv && !rn[i].serves && strlen(near) < 150)
				snprintf(near + strlen(near), sizeof(near) - strlen(near), "%s%s", near[0] ? ", " : "",
					 devs->v[idx[i]].name);
		if (strlen(map) < sizeof(map) - 240)
			snprintf(map + strlen(map), sizeof(map) - strlen(map), "%sGPU%d: %s", k ? "; " : "",
				 g[k].index, cnt ? names : "none");
		if (cnt)
			nwith++;
		if (cnt > 1 && strlen(many) < sizeof(many) - 240)
			snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sGPU%d (%s) has %d (%s)",
				 many[0] ? ", " : "", g[k].index, g[k].bdf, cnt, names);
		if (!cnt && strlen(none) < sizeof(none) - 120) {
			nnone++;
			if (nearlv >= 0)
				snprintf(none + strlen(none), sizeof(none) - strlen(none), "%sGPU%d (%s): nearest %s%s%s",
					 none[0] ? ", " : "", g[k].index, g[k].bdf, nvtopo_level_name(nearlv),
					 near[0] ? ", NICs serving no GPU there: " : "", near);
			else
				snprintf(none + strlen(none), sizeof(none) - strlen(none), "%sGPU%d (%s): no NIC",
					 none[0] ? ", " : "", g[k].index, g[k].bdf);
		}
	}
	rq_fact_add(node, "gpu_rails", map);
	if (many[0])
		rq_fact_add(node, "gpus_with_several_rails", many);
	if (!nwith) {
		rq_fact_add(node, "rails", "no GPU has a NIC behind its PCIe switch (no PIX/PXB: a design "
			    "without switches): GPUDirect RDMA crosses the CPU on every GPU");
		return;
	}
	if (named) {
		/* devices: picked some NICs: a GPU without one of them may have another */
		rq_judge(node, true, "rails recorded (devices: selects NICs; every GPU's rail is judged over all of them)");
		return;
	}
	rq_judge(node, !nnone, "%d of %d GPUs have no rail behind their PCIe switch (PIX/PXB): %s%s%s: their "
		 "GPUDirect RDMA crosses the CPU; put a NIC in a slot behind each GPU's switch", nnone, ng, none,
		 many[0] ? "; while " : "", many);
}

/*
 * Each GPU's own PCIe link.  Its speed is no fault below the maximum: an
 * idle NVIDIA GPU drops the link to 2.5 GT/s to save power and trains up
 * under load, so a snapshot sees that on healthy nodes (recorded).  Its
 * width is: a GPU at x8 of an x16 it and its port are capable of moves half
 * the data.  Fact `gpu_links`.
 */
static void judge_gpu_links(struct rq_ctx *ctx, struct rq_result *row, const struct gpu *g, int ng)
{
	char facts[1024] = "", bad[512] = "";

	for (int k = 0; k < ng; k++) {
		char path[PATH_MAX], cs[32] = "", ms[32] = "", cw[8] = "", mw[8] = "", pw[8] = "";
		int cap;

		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_speed", g[k].bdf);
		if (read_line(path, cs, sizeof(cs)))
			continue;
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_speed", g[k].bdf);
		read_line(path, ms, sizeof(ms));
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_width", g[k].bdf);
		read_line(path, cw, sizeof(cw));
		rq_path(ctx, path, sizeof(path), "/sys/bus/pci/devices/%s/max_link_width", g[k].bdf);
		read_line(path, mw, sizeof(mw));
		/* the port above it: the slot's width */
		if (g[k].path.n >= 3) {
			char dir[PATH_MAX];

			comp_dir(&g[k].path, g[k].path.n - 2, dir, sizeof(dir));
			rq_path(ctx, path, sizeof(path), "%s/max_link_width", dir);
			read_line(path, pw, sizeof(pw));
		}
		if (strlen(facts) < sizeof(facts) - 120)
			snprintf(facts + strlen(facts), sizeof(facts) - strlen(facts), "%sGPU%d %s x%s (max %s x%s)%s",
				 facts[0] ? "; " : "", g[k].index, cs, cw, ms, mw,
				 strcmp(cs, ms) && ms[0] ? " idle or power saving" : "");
		cap = atoi(mw);
		if (pw[0] && atoi(pw) < cap)
			cap = atoi(pw);
		if (cw[0] && cap > 0 && atoi(cw) > 0 && atoi(cw) < cap && strlen(bad) < sizeof(bad) - 100)
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%sGPU%d (%s) at x%s of x%d",
				 bad[0] ? ", " : "", g[k].index, g[k].bdf, cw, cap);
	}
	if (!facts[0]) {
		rq_result_set(row, RQ_SKIP, "no GPU's link files (current_link_speed) readable");
		return;
	}
	rq_fact_add(row, "gpu_links", facts);
	rq_judge(row, !bad[0], "%s: PCIe link narrower than GPU and slot allow (reseat the GPU board, check its "
		 "riser; a speed below the maximum is power saving, not this)", bad);
}

static void gd_run(struct rq_ctx *ctx, const void *p)
{
	const struct gd_cfg *cfg = p;
	struct gpu *g = xcalloc(MAX_GPUS, sizeof(*g));
	struct rail_near *rn;
	struct rdma_devs devs;
	struct nvtopo *t = NULL;
	struct rq_result *node;
	char why[256], buf[512];
	int *idx, n, ng = scan_gpus(ctx, g, MAX_GPUS), nnear = 0, nrails = 0;
	const char *sel = ctx->c ? ctx->c->devices : NULL;
	bool named = sel && *sel && strcmp(sel, "all") && strcmp(sel, "first-active");

	if (!ng) {
		rq_result_set(ctx->main, RQ_SKIP, "no NVIDIA GPU (PCI vendor 0x10de, class 0x0302/0x0300): "
			      "no GPUDirect RDMA to check");
		free(g);
		return;
	}
	if (!nodekind_scan(ctx, &devs)) {
		free(g);
		return;
	}
	node = rq_ctx_row(ctx, "peer-memory", 0);
	if (cfg->topo && !(t = read_topo(ctx, why, sizeof(why))))
		rq_fact_add(node, "nvidia_smi_topo", why);
	else if (t)
		rq_fact_add(node, "nvidia_smi_topo", "read");
	snprintf(buf, sizeof(buf), "%d", ng);
	rq_fact_add(node, "gpus", buf);
	rn = xcalloc((size_t)devs.n + 1, sizeof(*rn));
	n = nodekind_select(ctx, &devs, &idx, NULL);

	judge_peer_memory(ctx, cfg, node);

	/* pass 1: each rail's nearest GPUs; is any rail behind a GPU's switch? */
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct pcipath rp = { .n = 0 };

		rn[i].level = -1;
		if (d->is_virtual || !d->pci[0])
			continue;
		pci_path_of(ctx, d->pci, &rp);
		rail_nearness(d, &rp, g, ng, t, &rn[i]);
		nrails++;
		if (rn[i].serves)
			nnear++;
	}
	if (cfg->nearness && n > 0)
		judge_gpu_rails(rq_ctx_row(ctx, "rails", 0), g, ng, &devs, idx, n, rn, named);
	judge_gpu_links(ctx, rq_ctx_row(ctx, "gpu-links", 0), g, ng);
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct rq_result *row = rq_ctx_row(ctx, d->name, 0);
		struct pcipath rp = { .n = 0 };
		const char *seen[2 * MAX_DEPTH];
		int nseen = 0;

		if (d->is_virtual || !d->pci[0]) {
			rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: no PCIe path to a GPU", d->name,
				      d->driver[0] ? d->driver : "software");
			continue;
		}
		rq_fact_add(row, "pci", d->pci);
		pci_path_of(ctx, d->pci, &rp);
		if (rn[i].level < 0) {
			rq_result_set(row, RQ_SKIP, "%s (%s): its PCIe path is not in sysfs: nearness unknown",
				      d->name, d->pci);
			continue;
		}
		rq_fact_add(row, "nearest_gpus", rn[i].gpus);
		rq_fact_add(row, "gpu_connection", rn[i].level == NVT_NVLINK ? "NV" : nvtopo_level_name(rn[i].level));
		snprintf(buf, sizeof(buf), "%s%s", nvtopo_level_name(rn[i].sysfs_level),
			 t && rn[i].sysfs_level != rn[i].level ? " (nvidia-smi topo -m says otherwise: it is judged)" : "");
		rq_fact_add(row, "sysfs_connection", buf);
		/*
		 * A NIC that serves no GPU (a storage or in-band card in a CPU
		 * slot, by design on DGX/HGX) is no rail: left out, unless the
		 * case names it in devices:.
		 */
		if (!rn[i].serves && !named) {
			rq_result_set(row, RQ_SKIP, "%s (%s): serves no GPU (nearest %s %s): not a GPUDirect rail "
				      "(a storage or in-band NIC); name it in devices: to hold it to one", d->name,
				      d->pci, rn[i].gpus, nvtopo_level_name(rn[i].level));
			continue;
		}
		if (cfg->nearness && nnear > 0)
			rq_judge(row, rn[i].level <= NVT_PXB,
				 "%s (%s): the nearest GPU%s, %s, %s %s (%s), while %d other rail%s of this node "
				 "%s a GPU behind %s PCIe switch (PIX/PXB): GPUDirect RDMA on this rail crosses "
				 "the CPU; put the card in a slot behind its GPU's switch",
				 d->name, d->pci, rn[i].nbest > 1 ? "s" : "", rn[i].gpus,
				 rn[i].nbest > 1 ? "are" : "is", nvtopo_level_name(rn[i].level),
				 rn[i].level == NVT_PHB ? "through the host bridge" :
				 rn[i].level == NVT_NODE ? "across the host bridges of a NUMA node" :
				 "across the socket interconnect", nnear, nnear == 1 ? "" : "s",
				 nnear == 1 ? "has" : "have", nnear == 1 ? "its" : "their");
		else
			rq_judge(row, true, "%s: nearest GPU %s, %s (no PIX/PXB layout on this node to hold it to)",
				 d->name, rn[i].gpus, nvtopo_level_name(rn[i].level));
		for (int k = 0; k < rn[i].nbest && cfg->acs; k++) {
			judge_acs(ctx, row, d, &rp, &g[rn[i].best[k]], seen, &nseen);
			/* a bridge shared by two GPUs' paths is judged once per row */
			for (int c = 1; c < rp.n - 1 && nseen < 2 * MAX_DEPTH; c++)
				seen[nseen++] = rp.comp[c];
		}
		buf[0] = '\0';
		judge_iommu(ctx, cfg, row, d->name, d->pci, buf, sizeof(buf));
		for (int k = 0; k < rn[i].nbest; k++) {
			char who[24];

			snprintf(who, sizeof(who), "GPU%d", g[rn[i].best[k]].index);
			judge_iommu(ctx, cfg, row, who, g[rn[i].best[k]].bdf, buf, sizeof(buf));
		}
		rq_fact_add(row, "iommu", buf);
	}
	if (n >= 0 && !nrails)
		rq_fact_add(node, "rails", "no RDMA device with a PCIe function");
	free(t);
	free(rn);
	free(idx);
	free(g);
	rdma_devs_release(&devs);
}

/* The GPUs, the path's ACS and IOMMU groups, the topology, the driver and peer memory */
static const struct rq_read gpudirect_reads[] = {
	RQ_READS_PCI_VENDOR(0x10de),
	RQ_READS_PCI("numa_node", RQ_PCI_ALL),
	RQ_READS_PCI("current_link_speed", RQ_PCI_ALL), RQ_READS_PCI("current_link_width", RQ_PCI_ALL),
	RQ_READS_PCI("max_link_speed", RQ_PCI_ALL), RQ_READS_PCI("max_link_width", RQ_PCI_ALL),
	RQ_READS_PCI("config", RQ_PCI_FUNCTION | RQ_PCI_BRIDGES),
	RQ_READS_PCI("iommu_group", RQ_PCI_FUNCTION | RQ_PCI_BRIDGES),
	RQ_READS_PCI("iommu_group/type", RQ_PCI_FUNCTION),
	RQ_READS_TOOL("nvidia-smi", "topo", "-m"),
	RQ_READS_FILE("/proc/driver/nvidia/version"),
	RQ_READS_MODULE("nvidia_peermem", 0),
	RQ_READS_END,
};

const struct rq_kind rq_kind_gpudirect = {
	.name = "gpudirect",
	.summary = "GPUDirect RDMA readiness: each rail's nearest GPUs (PIX/PXB vs across the CPU), a peer-memory path, no ACS redirect between them, IOMMU pass-through (read-only)",
	.doc = "A GPU node can pass every network check and still train at a fraction of its speed "
	       "when GPUDirect RDMA is off or crosses the CPU.  Per rail: its nearest GPUs from the "
	       "sysfs paths (deepest common bridge) and `nvidia-smi topo -m` where present (PIX, PXB, "
	       "PHB, NODE, SYS).  Judged per GPU (row `rails`): every GPU needs a rail, a NIC behind its own "
	       "PCIe switch (PIX/PXB), on a node whose design has any; a GPU with none FAILs naming it and any "
	       "GPU with two.  A NIC that serves no GPU (storage, in-band) SKIPs unless `devices:` names it.  "
	       "Row `gpu-links`: a GPU's link narrower than it and its slot allow FAILs; a speed below the "
	       "maximum is an idle GPU's power saving, recorded.  ACS P2P Request/Completion Redirect on any switch port between a rail "
	       "and its GPUs (config space, as lspci's ACSCtl) FAILs; IOMMU groups of rails and GPUs "
	       "must be identity (iommu=pt).  A node row `peer-memory`: nvidia_peermem loaded, or "
	       "DMA-BUF possible (kernel >= 5.12, rdma-core >= 34, NVIDIA open kernel module >= 515).  "
	       "Every failure says what to change; nothing is changed.  No NVIDIA GPU: SKIP.",
	.keys = gd_keys,
	.reads = gpudirect_reads,
	.cfg_size = sizeof(struct gd_cfg),
	.default_targets = "hca,sysroot",
	.run = gd_run,
};
