/* SPDX-License-Identifier: MIT */
/*
 * pcie: does every HCA's PCIe path run as fast as it can, and carry the card?
 *
 * A card that trained at x8 instead of x16, or a slot link degraded above
 * a card's own PCIe switch, halves its bandwidth without any error
 * anywhere; the bandwidth cases then "fail" for a reason nobody looks at.
 * Like the kernel's pcie_bandwidth_available(), this walks from the
 * function up through every bridge: each link must train at the best both
 * of its ends allow (a Gen5 card in a Gen4 slot at Gen4 is healthy), the
 * slowest link is named by BDF, and the path must carry the data rates of
 * all the card's active ports; a multi-PF (Socket Direct) card's links
 * carry them together.  A VF (speed Unknown, width 0) and virtual devices
 * (rxe, siw) SKIP.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "rdma/pci_ids.h"
#include "rdma/rdmadev.h"
#include "core/util.h"

struct pcie_cfg {
	bool capacity;
	long long min_width;
	double min_speed;
	bool numa_known;
};

static const struct key_def pcie_keys[] = {
	{ .name = "capacity", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct pcie_cfg, capacity),
	  .help = "the path's usable bandwidth (its slowest link: GT/s x width x encoding) must carry the data rates of all active ports of the card" },
	{ .name = "min_width", .type = KEY_INT, .def = "0", .min = 0, .max = 32,
	  .offset = offsetof(struct pcie_cfg, min_width),
	  .help = "minimum negotiated width (lanes), besides the best both ends of each link allow" },
	{ .name = "min_speed", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 128,
	  .offset = offsetof(struct pcie_cfg, min_speed),
	  .help = "minimum negotiated speed in GT/s (16 = Gen4, 32 = Gen5), besides the best both ends of each link allow" },
	{ .name = "numa_known", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct pcie_cfg, numa_known),
	  .help = "on a machine with several NUMA nodes, the function's numa_node must not be -1" },
	KEY_END
};

/* "16.0 GT/s PCIe" / "8 GT/s" / "Unknown" -> GT/s, 0 unknown. */
static double parse_gts(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && strstr(end, "GT/s") ? v : 0;
}

/*
 * Usable data rate in Gb/s, as the kernel's PCIE_SPEED2MBS_ENC counts it:
 * 8b/10b at 2.5 and 5 GT/s, 128b/130b from 8 to 32 GT/s, and Gen6 (64 GT/s)
 * in Flit mode, where the kernel counts no line-coding loss (1/1).
 */
static double pcie_gbps(double gts, long width)
{
	double enc = gts >= 64.0 ? 1.0 : gts >= 8.0 ? 128.0 / 130.0 : 0.8;

	return gts * (double)width * enc;
}

/* One PCI device on the path from the HCA's function up to the root port. */
struct hop {
	char bdf[16];
	bool known;		/* its link attributes were readable */
	double cur, max;	/* GT/s */
	long curw, maxw;
};

#define MAX_HOPS 12

static bool is_bdf(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return strlen(s) == 12 && sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

static void read_hop(const char *dir, struct hop *h)
{
	char path[PATH_MAX + 32], cs[64], ms[64], cw[16], mw[16];

#define HOPF(buf, attr) (snprintf(path, sizeof(path), "%s/" attr, dir), read_line(path, buf, sizeof(buf)))
	h->known = !(HOPF(cs, "current_link_speed") || HOPF(ms, "max_link_speed") ||
		     HOPF(cw, "current_link_width") || HOPF(mw, "max_link_width"));
#undef HOPF
	if (!h->known)
		return;
	h->cur = parse_gts(cs);
	h->max = parse_gts(ms);
	h->curw = strtol(cw, NULL, 10);
	h->maxw = strtol(mw, NULL, 10);
}

/*
 * The PCI devices from the function up through every bridge to the root
 * port, read from the real sysfs path (/sys/devices/pci0000:3a/0000:3a:00.0/
 * 0000:3b:00.0): the same walk as the kernel's pcie_bandwidth_available(),
 * which follows pci_upstream_bridge().  Returns the number of hops.
 */
static int pcie_path(struct rq_ctx *ctx, const char *dev, struct hop *h, int max)
{
	char path[PATH_MAX], real[PATH_MAX];
	int n = 0;

	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	if (!realpath(path, real))
		return 0;
	while (n < max) {
		char *slash = strrchr(real, '/');

		if (!slash || !is_bdf(slash + 1))
			break;
		memset(&h[n], 0, sizeof(h[n]));
		snprintf(h[n].bdf, sizeof(h[n].bdf), "%s", slash + 1);
		read_hop(real, &h[n]);
		n++;
		*slash = '\0';
	}
	return n;
}

static double dmin(double a, double b) { return a < b ? a : b; }

/*
 * Are a and b functions of one adapter?  Functions behind one link share
 * domain:bus:device ("0000:3b:00").  A multi-PF card (Socket Direct: one
 * port served through two PCIe links, one PF per socket, as the kernel's
 * Documentation/networking/multi-pf-netdev.rst describes it) puts its PFs
 * on other buses, even other root complexes; what they share is the
 * adapter: the system image GUID the firmware reports for every function
 * of one device (sysfs sys_image_guid, drivers/infiniband/core/sysfs.c)
 * and the board id (PSID).  Both must match: one PSID is on every card of
 * a model, and the GUID alone is not trusted when it reads zero.
 */
static bool same_card(const struct rdma_dev *a, const struct rdma_dev *b)
{
	if (!a->pci[0] || !b->pci[0] || a->is_virtual || b->is_virtual)
		return false;
	if (!strncmp(a->pci, b->pci, 10))
		return true;
	return a->sys_image_guid[0] && strcmp(a->sys_image_guid, "0000:0000:0000:0000") &&
	       !strcmp(a->sys_image_guid, b->sys_image_guid) && a->board_id[0] &&
	       !strcmp(a->board_id, b->board_id);
}

/* What a path carries: its slowest link (pcie_bandwidth_available()). */
static double path_gbps(const struct hop *h, int nh, int *lim)
{
	double avail = pcie_gbps(h[0].cur, h[0].curw);

	*lim = 0;
	for (int k = 1; k < nh; k++)
		if (h[k].known && h[k].cur > 0 && h[k].curw > 0 && pcie_gbps(h[k].cur, h[k].curw) < avail) {
			avail = pcie_gbps(h[k].cur, h[k].curw);
			*lim = k;
		}
	return avail;
}

/* One PCIe link of a card: its functions' active ports and what it carries. */
struct card_link {
	char key[16];		/* domain:bus:device */
	char bdf[16];		/* the first function behind it */
	double ports;		/* Gb/s of the active ports its functions see */
	int nports;
	double avail;		/* Gb/s its path carries, 0 unknown */
};

#define MAX_CARD_LINKS 8

/*
 * The card that holds d, link by link.  Functions behind one link share
 * it, so their ports add up.  The PFs of a multi-PF card each see the
 * card's ports (one physical port, several PFs), so the card needs what
 * one link's functions see, and its links together carry the sum of what
 * each carries.  Returns the number of links.
 */
static int card_links(struct rq_ctx *ctx, const struct rdma_devs *devs, const struct rdma_dev *d,
		      struct card_link *l, int max)
{
	int n = 0;

	for (int i = 0; i < devs->n; i++) {
		const struct rdma_dev *o = &devs->v[i];
		int k;

		if (!same_card(d, o))
			continue;
		for (k = 0; k < n && strncmp(l[k].key, o->pci, 10); k++)
			;
		if (k == n) {
			struct hop h[MAX_HOPS];
			int nh, lim;

			if (n == max)
				continue;
			memset(&l[n], 0, sizeof(l[n]));
			snprintf(l[n].key, sizeof(l[n].key), "%.10s", o->pci);
			snprintf(l[n].bdf, sizeof(l[n].bdf), "%.15s", o->pci);
			nh = pcie_path(ctx, o->name, h, MAX_HOPS);
			if (nh > 0 && h[0].known && h[0].cur > 0 && h[0].curw > 0)
				l[n].avail = path_gbps(h, nh, &lim);
			n++;
		}
		for (int j = 0; j < o->nports; j++)
			if (o->ports[j].state == PORT_ACTIVE && o->ports[j].data_gbps > 0) {
				l[k].ports += o->ports[j].data_gbps;
				l[k].nports++;
			}
	}
	return n;
}

/*
 * Can the card's PCIe links carry its active ports?  One link: every
 * function behind it shares it, their ports add up.  Several (a multi-PF
 * card): the links add up, against the ports one PF sees.
 */
static void judge_capacity(struct rq_ctx *ctx, const struct pcie_cfg *cfg, const struct rdma_devs *devs,
			   const struct rdma_dev *d, struct rq_result *row, double avail,
			   const struct hop *lim)
{
	struct card_link l[MAX_CARD_LINKS];
	int nl = card_links(ctx, devs, d, l, MAX_CARD_LINKS), nports = 0;
	double ports = 0, sum = 0;
	char list[256] = "", one[64];

	for (int k = 0; k < nl; k++)
		if (l[k].ports > ports) {
			ports = l[k].ports;
			nports = l[k].nports;
		}
	if (ports > 0)
		rq_figure_add(row, "card_ports_data_rate", ports, "Gb/s");
	if (nl <= 1) {
		if (cfg->capacity && ports > 0)
			rq_judge(row, avail >= ports,
				 "%s (%s): PCIe carries %.0f Gb/s (limited by %s at %.1f GT/s x%ld), less than the %.0f Gb/s of the card's %d active port%s",
				 d->name, d->pci, avail, lim->bdf, lim->cur, lim->curw, ports, nports,
				 nports == 1 ? "" : "s");
		return;
	}
	for (int k = 0; k < nl; k++) {
		sum += l[k].avail;
		snprintf(one, sizeof(one), "%s%s %.0f Gb/s", k ? " + " : "", l[k].bdf, l[k].avail);
		strncat(list, one, sizeof(list) - strlen(list) - 1);
	}
	rq_fact_add(row, "card_links", list);
	rq_figure_add(row, "card_pcie_bandwidth", sum, "Gb/s");
	rq_log(ctx, "%s %s: one card on %d PCIe links (multi-PF / Socket Direct): %s", d->name, d->pci, nl, list);
	if (cfg->capacity && ports > 0)
		rq_judge(row, sum >= ports,
			 "%s (%s): the card's %d PCIe links carry %.0f Gb/s (%s), less than the %.0f Gb/s of its %d active port%s",
			 d->name, d->pci, nl, sum, list, ports, nports, nports == 1 ? "" : "s");
}

static void judge_dev(struct rq_ctx *ctx, const struct pcie_cfg *cfg, const struct rdma_devs *devs,
		      const struct rdma_dev *d, struct rq_result *row)
{
	struct hop h[MAX_HOPS];
	const struct mlx_model *m = d->vendor == PCI_VENDOR_MELLANOX ? mlx_model_find(d->device) : NULL;
	int nh = pcie_path(ctx, d->name, h, MAX_HOPS), lim = 0;
	double avail;
	char buf[160];

	rq_fact_add(row, "pci", d->pci);
	if (nh == 0 || !h[0].known) {
		rq_result_set(row, RQ_ERROR, "%s (%s): PCIe link attributes unreadable", d->name, d->pci);
		return;
	}
	rq_figure_add(row, "pcie_speed", h[0].cur, "GT/s");
	rq_figure_add(row, "pcie_max_speed", h[0].max, "GT/s");
	rq_figure_add(row, "pcie_width", (double)h[0].curw, "lanes");
	rq_figure_add(row, "pcie_max_width", (double)h[0].maxw, "lanes");
	rq_log(ctx, "%s %s: PCIe %.1f GT/s x%ld (capable of %.1f GT/s x%ld)", d->name, d->pci,
	       h[0].cur, h[0].curw, h[0].max, h[0].maxw);
	/* A VF's link registers are reserved (pci_iov): "Unknown" speed, width 0. */
	if (h[0].cur <= 0 || h[0].curw <= 0 || h[0].max <= 0 || h[0].maxw <= 0) {
		rq_result_set(row, RQ_SKIP, "%s (%s): PCIe link speed/width unknown (%.1f GT/s x%ld)%s",
			      d->name, d->pci, h[0].cur, h[0].curw,
			      m && m->vf ? ": a virtual function has no link of its own (its PF's is judged)" : "");
		return;
	}
	/*
	 * Each physical link joins a device with its upstream bridge: the
	 * function with the port above it, a switch's upstream port with the
	 * port above that; between a switch's upstream and downstream ports
	 * there is no wire.  A link should train at the best both ends allow;
	 * less is a degraded link (a bad slot, riser or card), named by BDF.
	 */
	for (int k = 0; k < nh; k += 2) {
		const struct hop *c = &h[k], *up = k + 1 < nh && h[k + 1].known ? &h[k + 1] : NULL;
		double want = c->max;
		long wantw = c->maxw;

		if (!c->known || c->cur <= 0 || c->curw <= 0)
			continue;
		if (up && up->max > 0 && up->maxw > 0) {
			want = dmin(want, up->max);
			wantw = c->maxw < up->maxw ? c->maxw : up->maxw;
		}
		if (k == 0 && up) {
			snprintf(buf, sizeof(buf), "%.15s %.1f GT/s x%ld", up->bdf, up->max, up->maxw);
			rq_fact_add(row, "pcie_slot", buf);
		}
		if (up)
			rq_judge(row, c->curw >= wantw && c->cur >= want,
				 "%s (%s): PCIe link %s-%s at %.1f GT/s x%ld, both ends capable of %.1f GT/s x%ld (%.0f of %.0f Gb/s)",
				 d->name, d->pci, c->bdf, up->bdf, c->cur, c->curw, want, wantw,
				 pcie_gbps(c->cur, c->curw), pcie_gbps(want, wantw));
		else
			rq_judge(row, c->curw >= wantw && c->cur >= want,
				 "%s (%s): PCIe link at %.1f GT/s x%ld, capable of %.1f GT/s x%ld (%.0f of %.0f Gb/s)",
				 d->name, d->pci, c->cur, c->curw, want, wantw,
				 pcie_gbps(c->cur, c->curw), pcie_gbps(want, wantw));
	}
	/* The path carries what its slowest link carries (pcie_bandwidth_available). */
	avail = path_gbps(h, nh, &lim);
	rq_figure_add(row, "pcie_bandwidth", avail, "Gb/s");
	snprintf(buf, sizeof(buf), "%.15s %.1f GT/s x%ld", h[lim].bdf, h[lim].cur, h[lim].curw);
	rq_fact_add(row, "pcie_limiting_link", buf);
	if (cfg->min_width)
		rq_judge(row, h[0].curw >= cfg->min_width, "%s (%s): PCIe width x%ld, at least x%lld expected",
			 d->name, d->pci, h[0].curw, cfg->min_width);
	if (cfg->min_speed > 0)
		rq_judge(row, h[0].cur >= cfg->min_speed, "%s (%s): PCIe %.1f GT/s, at least %.1f GT/s expected",
			 d->name, d->pci, h[0].cur, cfg->min_speed);
	judge_capacity(ctx, cfg, devs, d, row, avail, &h[lim]);
}

static int numa_nodes(struct rq_ctx *ctx)
{
	char path[PATH_MAX];
	int n = 0;

	for (;; n++) {
		char v[8];

		rq_path(ctx, path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		if (read_line(path, v, sizeof(v)))
			break;
	}
	return n;
}

static void pcie_run(struct rq_ctx *ctx, const void *p)
{
	const struct pcie_cfg *cfg = p;
	struct rdma_devs devs;
	int *idx, n, nnodes = numa_nodes(ctx);

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device selected: no PCIe link to check");
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct rq_result *row = rq_ctx_row(ctx, d->name, 0);
		char v[16];

		if (d->is_virtual || !d->pci[0]) {
			rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: no PCIe link", d->name,
				      d->driver[0] ? d->driver : "software");
			continue;
		}
		judge_dev(ctx, cfg, &devs, d, row);
		if (row->verdict != RQ_NONE)
			continue;
		snprintf(v, sizeof(v), "%d", d->numa_node);
		rq_fact_add(row, "numa_node", v);
		if (cfg->numa_known && nnodes > 1)
			rq_judge(row, d->numa_node >= 0, "%s (%s): NUMA node unknown (-1) on a %d-node machine",
				 d->name, d->pci, nnodes);
	}
	free(idx);
	rdma_devs_release(&devs);
}

/* Each link of the path to the root port, and the NUMA node's CPUs */
static const struct rq_read pcie_reads[] = {
	RQ_READS_PCI("current_link_speed", RQ_PCI_ALL), RQ_READS_PCI("current_link_width", RQ_PCI_ALL),
	RQ_READS_PCI("max_link_speed", RQ_PCI_ALL), RQ_READS_PCI("max_link_width", RQ_PCI_ALL),
	RQ_READS_GLOB("/sys/devices/system/node/node[0-9]*/cpulist"),
	RQ_READS_END,
};

const struct rq_kind rq_kind_pcie = {
	.name = "pcie",
	.summary = "every HCA's PCIe path at the best its links allow, able to carry the card's ports, NUMA node known",
	.doc = "A card at x8 instead of x16, or a slot link degraded above a card's own PCIe switch, "
	       "halves its bandwidth silently.  Per device, from the function up through every "
	       "bridge to the root port: each link at the best speed and width both its ends allow "
	       "(a Gen5 card in a Gen4 slot at Gen4 passes), the limiting link named by BDF, the "
	       "path's bandwidth (8b/10b, 128b/130b, Gen6 Flit 1/1) against the data rates of all "
	       "the card's active ports (a multi-PF / Socket Direct card's PFs, found by their shared "
	       "sys_image_guid and board id, on all its links together), and a known NUMA node on "
	       "multi-node machines.  VFs (link "
	       "unknown, width 0) and virtual devices (rxe) SKIP.",
	.keys = pcie_keys,
	.reads = pcie_reads,
	.cfg_size = sizeof(struct pcie_cfg),
	.default_targets = "hca,sysroot",
	.run = pcie_run,
};
