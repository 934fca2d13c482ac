/* SPDX-License-Identifier: MIT */
/*
 * rdma-links: what each RDMA port of a node offers as a link to other
 * nodes: state, link layer, rate, its netdev, the IPv4 address RoCE
 * traffic uses (from the port's RoCE v2 IPv4-mapped GID) and the GID that
 * verbs traffic addresses.  One row per device and port.
 *
 * A lab run (--nodes) runs it on every node before its two-sided cases:
 * the rows tell the controller which address and GID each rail of each
 * node has, so traffic between nodes goes over their RDMA links while the
 * out-of-band exchange stays on the management network.  As a case it
 * checks that every selected port is ACTIVE and addressable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "kinds/nodekind.h"
#include "rdma/rdmadev.h"
#include "core/util.h"

struct links_cfg {
	bool port_active;
	bool addressable;
};

static const struct key_def links_keys[] = {
	{ .name = "port_active", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct links_cfg, port_active),
	  .help = "every selected port must be ACTIVE" },
	{ .name = "addressable", .type = KEY_BOOL, .def = "true",
	  .offset = offsetof(struct links_cfg, addressable),
	  .help = "every selected port must have a GID (RoCE: an IPv4-mapped RoCE v2 GID)" },
	KEY_END
};

/* "0000:0000:0000:0000:0000:ffff:0a00:0002" -> "10.0.0.2" */
static bool gid_ipv4(const char *gid, char *buf, size_t size)
{
	unsigned a, b;

	if (!str_starts(gid, "0000:0000:0000:0000:0000:ffff:") ||
	    sscanf(gid + 30, "%4x:%4x", &a, &b) != 2)
		return false;
	snprintf(buf, size, "%u.%u.%u.%u", a >> 8, a & 255, b >> 8, b & 255);
	return true;
}

/* IPoIB: the live netdev's IPv4 (a captured tree has no addresses). */
static bool netdev_ipv4(struct rq_ctx *ctx, const char *netdev, char *buf, size_t size)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if ((ctx->root && *ctx->root) || !netdev[0] || getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, netdev)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
				  (socklen_t)size);
			found = true;
		}
	freeifaddrs(ifa);
	return found;
}

/* gid_attrs/ndevs/N of the GID in use (IB has none: the port's netdev). */
static const char *gid_ndev(struct rq_ctx *ctx, const char *dev, int port, int gi, const char *dflt,
			    char *buf, size_t size)
{
	char path[4096];

	rq_path(ctx, path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", dev,
		port, gi);
	if (read_line(path, buf, size) || !buf[0])
		return dflt;
	return buf;
}

static void links_run(struct rq_ctx *ctx, const void *vcfg)
{
	const struct links_cfg *cfg = vcfg;
	struct rdma_devs devs = { 0 };
	int *idx, n;

	if (!nodekind_scan(ctx, &devs))
		return;
	n = nodekind_select(ctx, &devs, &idx, "no RDMA device on this node");
	for (int i = 0; i < n; i++) {
		const struct rdma_dev *d = &devs.v[idx[i]];

		for (int j = 0; j < d->nports; j++) {
			const struct rdma_port *p = &d->ports[j];
			struct rq_result *row;
			char gid[64] = "", ip[64] = "", num[16], gnd[64];
			int gi;

			if (!rdma_port_selected(ctx, p->num))
				continue;
			row = rq_ctx_row(ctx, d->name, p->num);
			gi = rdma_pick_gid(ctx, d->name, p->num, p->netdev, gid, sizeof(gid));
			if (!gid_ipv4(gid, ip, sizeof(ip)))
				netdev_ipv4(ctx, p->netdev, ip, sizeof(ip));
			rq_fact_add(row, "state", p->state_str);
			rq_fact_add(row, "link_layer", p->link_layer);
			rq_fact_add(row, "netdev", p->netdev);
			/* the GID's own netdev: a VLAN over the port's netdev carries RoCE there */
			rq_fact_add(row, "gid_netdev", gi < 0 ? "" :
				    gid_ndev(ctx, d->name, p->num, gi, p->netdev, gnd, sizeof(gnd)));
			rq_fact_add(row, "ipv4", ip);
			rq_fact_add(row, "gid", gid);
			snprintf(num, sizeof(num), "%d", gi);
			rq_fact_add(row, "gid_index", gi >= 0 ? num : "");
			if (p->rate_gbps > 0)
				rq_figure_add(row, "rate", p->rate_gbps, "Gb/s");
			rq_log(ctx, "%s/%d %s %s netdev=%s ipv4=%s gid[%d]=%s", d->name, p->num,
			       p->state_str, p->link_layer, p->netdev[0] ? p->netdev : "-",
			       ip[0] ? ip : "-", gi, gid[0] ? gid : "-");
			if (cfg->port_active)
				rq_judge(row, p->state == PORT_ACTIVE, "%s/%d is %s, not ACTIVE",
					 d->name, p->num, p->state_str[0] ? p->state_str : "in no state");
			if (cfg->addressable)
				rq_judge(row, gi >= 0, "%s/%d has no usable GID%s", d->name, p->num,
					 strcmp(p->link_layer, "Ethernet") ? "" :
					 " (no RoCE v2 GID with an IPv4 address: is the netdev up with an address?)");
			else
				rq_judge(row, true, "inventory only");
		}
	}
	free(idx);
	rdma_devs_release(&devs);
}

const struct rq_kind rq_kind_rdma_links = {
	.name = "rdma-links",
	.summary = "every RDMA port's state, link layer, netdev, IPv4 address and GID (the node's rails)",
	.doc = "The addresses other nodes reach this node's rails at: per device and port, the "
	       "state, link layer, rate, netdev, RoCE IPv4 address (from the IPv4-mapped RoCE v2 "
	       "GID of the port's netdev, else of a VLAN netdev over it, named by the fact "
	       "gid_netdev; IPoIB from the live netdev) and the GID verbs traffic uses, as row "
	       "facts.  A lab run (--nodes) runs it on every node first and pairs rail i with "
	       "rail i from these rows; hca with --peer takes each side's address from it.  Judged: every selected port ACTIVE and addressable.",
	.keys = links_keys,
	.cfg_size = sizeof(struct links_cfg),
	.default_targets = "hca,rxe-vm,rxe-host,sysroot",
	.run = links_run,
};
