/* SPDX-License-Identifier: MIT */
/*
 * pcie: does every HCA's PCIe link run at its maximum width and speed?
 *
 * A card that trained at x8 instead of x16, or at Gen4 in a Gen5-capable
 * slot, halves its bandwidth without any error anywhere; the bandwidth
 * cases then "fail" for a reason nobody looks at.  This reads the PCI
 * function's current_link_{speed,width} and max_link_{speed,width}
 * (RDMA_REFERENCE.md §1.5), reports both as figures, checks that the link
 * can carry the port's rate, and that the NUMA node is known on a
 * multi-node machine (the IRQ and memory placement depends on it).
 * Virtual devices (rxe, siw) have no PCIe link: SKIP.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
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
	  .help = "the link's usable bandwidth (GT/s x width x encoding) must carry the sum of the function's port rates" },
	{ .name = "min_width", .type = KEY_INT, .def = "0", .min = 0, .max = 32,
	  .offset = offsetof(struct pcie_cfg, min_width),
	  .help = "minimum negotiated width (lanes), besides current == max" },
	{ .name = "min_speed", .type = KEY_DOUBLE, .def = "0", .dmin = 0, .dmax = 128,
	  .offset = offsetof(struct pcie_cfg, min_speed),
	  .help = "minimum negotiated speed in GT/s (16 = Gen4, 32 = Gen5), besides current == max" },
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

/* Usable data rate in Gb/s: 8b/10b up to 5 GT/s, 128b/130b from 8 GT/s. */
static double pcie_gbps(double gts, long width)
{
	return gts * (double)width * (gts >= 8.0 ? 128.0 / 130.0 : 0.8);
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
	char missing[64];
	int *idx, n, nnodes = numa_nodes(ctx);

	if (rdma_devs_scan(ctx, &devs) < 0) {
		rq_result_set(ctx->main, RQ_ERROR, "cannot read /sys/class/infiniband");
		return;
	}
	idx = xcalloc((size_t)devs.n + 1, sizeof(*idx));
	n = rdma_devs_select2(ctx, &devs, idx, devs.n, missing, sizeof(missing));
	if (n == -ENODEV)
		rq_judge(ctx->main, false, "device %s not found", missing);
	else if (n == 0)
		rq_result_set(ctx->main, RQ_SKIP, "no RDMA device selected: no PCIe link to check");
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];
		struct rq_result *row = rq_ctx_row(ctx, d->name, 0);
		char cs[64], ms[64], cw[16], mw[16], path[PATH_MAX];
		double cur, max, ports = 0;
		long curw, maxw;

		if (d->is_virtual || !d->pci[0]) {
			rq_result_set(row, RQ_SKIP, "%s is a virtual %s device: no PCIe link", d->name,
				      d->driver[0] ? d->driver : "software");
			continue;
		}
		rq_fact_add(row, "pci", d->pci);
#define DEVF(buf, attr) (rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/device/" attr, \
				 d->name), read_line(path, buf, sizeof(buf)))
		if (DEVF(cs, "current_link_speed") || DEVF(ms, "max_link_speed") ||
		    DEVF(cw, "current_link_width") || DEVF(mw, "max_link_width")) {
			rq_result_set(row, RQ_ERROR, "%s (%s): PCIe link attributes unreadable", d->name, d->pci);
			continue;
		}
#undef DEVF
		cur = parse_gts(cs);
		max = parse_gts(ms);
		curw = strtol(cw, NULL, 10);
		maxw = strtol(mw, NULL, 10);
		rq_figure_add(row, "pcie_speed", cur, "GT/s");
		rq_figure_add(row, "pcie_max_speed", max, "GT/s");
		rq_figure_add(row, "pcie_width", (double)curw, "lanes");
		rq_figure_add(row, "pcie_max_width", (double)maxw, "lanes");
		rq_figure_add(row, "pcie_bandwidth", pcie_gbps(cur, curw), "Gb/s");
		rq_log(ctx, "%s %s: PCIe %s x%ld (capable of %s x%ld)", d->name, d->pci, cs, curw, ms, maxw);
		if (!rq_judge(row, cur > 0 && max > 0 && curw > 0 && maxw > 0,
			      "%s (%s): link speed/width unknown (%s x%s, max %s x%s)", d->name, d->pci,
			      cs, cw, ms, mw))
			continue;
		rq_judge(row, curw >= maxw && cur >= max,
			 "%s (%s): PCIe link at %.1f GT/s x%ld, capable of %.1f GT/s x%ld (%.0f of %.0f Gb/s)",
			 d->name, d->pci, cur, curw, max, maxw, pcie_gbps(cur, curw), pcie_gbps(max, maxw));
		if (cfg->min_width)
			rq_judge(row, curw >= cfg->min_width, "%s (%s): PCIe width x%ld, at least x%lld expected",
				 d->name, d->pci, curw, cfg->min_width);
		if (cfg->min_speed > 0)
			rq_judge(row, cur >= cfg->min_speed, "%s (%s): PCIe %.1f GT/s, at least %.1f GT/s expected",
				 d->name, d->pci, cur, cfg->min_speed);
		for (int j = 0; j < d->nports; j++)
			ports += d->ports[j].rate_gbps;
		if (cfg->capacity && ports > 0)
			rq_judge(row, pcie_gbps(cur, curw) >= ports,
				 "%s (%s): PCIe %.1f GT/s x%ld carries %.0f Gb/s, less than its ports' %.0f Gb/s",
				 d->name, d->pci, cur, curw, pcie_gbps(cur, curw), ports);
		snprintf(path, sizeof(path), "%d", d->numa_node);
		rq_fact_add(row, "numa_node", path);
		if (cfg->numa_known && nnodes > 1)
			rq_judge(row, d->numa_node >= 0, "%s (%s): NUMA node unknown (-1) on a %d-node machine",
				 d->name, d->pci, nnodes);
	}
	free(idx);
	rdma_devs_release(&devs);
}

const struct rq_kind rq_kind_pcie = {
	.name = "pcie",
	.summary = "every HCA's PCIe link at its maximum width and speed, able to carry its ports, NUMA node known",
	.doc = "A card at x8 instead of x16, or at Gen4 in a Gen5-capable card, halves its bandwidth "
	       "silently.  Per device: current vs maximum link speed and width (both reported as "
	       "figures), usable bandwidth against the ports' rate, and a known NUMA node on "
	       "multi-node machines.  Virtual devices (rxe) have no PCIe link and SKIP.",
	.keys = pcie_keys,
	.cfg_size = sizeof(struct pcie_cfg),
	.default_targets = "hca,sysroot",
	.run = pcie_run,
};
