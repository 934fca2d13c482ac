/* SPDX-License-Identifier: MIT */
/*
 * RDMA devices and ports as sysfs shows them, read under a root prefix so
 * the same code reads a live node and a captured tree.  Never assume
 * mlx5_0: names come from /sys/class/infiniband.
 */
#ifndef RQ_RDMADEV_H
#define RQ_RDMADEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rq_ctx;

enum ib_port_state { PORT_NOP = 0, PORT_DOWN, PORT_INIT, PORT_ARMED, PORT_ACTIVE, PORT_ACTIVE_DEFER };

struct rdma_port {
	int num;
	int state;		/* enum ib_port_state */
	char state_str[32];	/* "ACTIVE" */
	int phys_state;		/* 5 = LinkUp */
	char phys_str[48];
	char link_layer[16];	/* "InfiniBand" / "Ethernet" */
	double rate_gbps;	/* from "100 Gb/sec (4X EDR)"; 0 unknown */
	double data_gbps;	/* what the link carries after line coding; 0 unknown */
	char rate_str[64];
	unsigned lid, sm_lid;
	char netdev[32];	/* RoCE: gid_attrs/ndevs of the first GID; IPoIB when found */
};

struct rdma_dev {
	char name[64];		/* mlx5_0, rxe0, ibp59s0 */
	char driver[32];	/* "mlx5_core", "rxe" (virtual), ... */
	bool is_virtual;	/* resolves under /devices/virtual (rxe, siw) */
	char pci[32];		/* BDF for PCI devices, "" otherwise */
	unsigned vendor, device;/* PCI ids, 0 unknown */
	char fw_ver[64];
	char hca_type[32];
	char board_id[64];
	char parent[32];	/* rxe parent netdev */
	char node_guid[32];
	char sys_image_guid[32];/* the adapter's: shared by all its PFs (sysfs.c) */
	int numa_node;		/* -1 unknown */
	char uverbs[16];	/* "uverbs0" from /sys/class/infiniband_verbs, "" none */
	char node_type[16];	/* "CA", "RNIC", ... */
	struct rdma_port *ports;
	int nports;
};

struct rdma_devs {
	struct rdma_dev *v;
	int n;
};

/* Enumerate /sys/class/infiniband under ctx->root; 0 or -errno (no dir: 0 devices). */
int rdma_devs_scan(struct rq_ctx *ctx, struct rdma_devs *out);
void rdma_devs_release(struct rdma_devs *d);
/*
 * Apply the case's `devices:` selection ("all" or unset: every device;
 * "first-active": the first device with an ACTIVE port; "a,b": those names):
 * fills idx[] of chosen devices and returns how many (>= 0), or -ENODEV
 * when a named device does not exist (missing[] then names the first one,
 * if given).  Ports are filtered separately with rdma_port_selected().
 */
int rdma_devs_select(struct rq_ctx *ctx, const struct rdma_devs *d, int *idx, int max);
int rdma_devs_select2(struct rq_ctx *ctx, const struct rdma_devs *d, int *idx, int max,
		      char *missing, size_t missingsz);

/* Is port selected by the case's `port:` key (0 = all)? */
bool rdma_port_selected(struct rq_ctx *ctx, int port);
/* The device's port by number, or NULL. */
const struct rdma_port *rdma_dev_port(const struct rdma_dev *d, int port);
/* Find a device by name in d; NULL when absent. */
const struct rdma_dev *rdma_devs_find(const struct rdma_devs *d, const char *name);

/* "100 Gb/sec (4X EDR)" -> 100.0; returns 0 on success. */
int parse_port_rate(const char *s, double *gbps);
/*
 * The data rate of a port's sysfs rate: what the wire carries after line
 * coding.  InfiniBand up to QDR signals 8b/10b (QDR 40 -> 32 Gb/s), FDR10
 * and FDR 64b/66b (56 -> 54.5), and from EDR on the kernel's figure is the
 * data rate already (EDR 25.78125 GBd 64b/66b = 25 Gb/s a lane, HDR/NDR/XDR
 * PAM4 lanes of 50/100/200 Gb/s).  On Ethernet the kernel maps the link
 * speed into an IB speed and width for display only: the figure is the
 * Ethernet data rate.  0 when the text makes no sense.
 */
double rdma_rate_data_gbps(const char *rate, const char *link_layer);
/* "4: ACTIVE" -> 4, copies "ACTIVE" into name. */
int parse_state(const char *s, int *num, char *name, size_t namesz);

/*
 * GID selection (RoCE v2 with an IPv4-mapped address on the intended
 * netdev, or the port's GID 0 on IB).  Returns the index or -ENOENT, and the
 * GID text in gid (39 chars + NUL).
 */
int rdma_pick_gid(struct rq_ctx *ctx, const char *dev, int port, const char *netdev,
		  char *gid, size_t gidsz);

/* The index of the port's link-local (fe80::/64) RoCE v2 GID, or -ENOENT. */
int rdma_link_local_gid(struct rq_ctx *ctx, const char *dev, int port);

/* Is there any PCI function with vendor 0x15b3 under root (bound or not)? */
bool rdma_have_mlx_pci(const char *root);
/*
 * A software device (rxe, siw) by its name alone, where only the name is
 * at hand (a row on the lab controller, a rank's device); with the device
 * itself, rdma_dev.is_virtual (sysfs) says it.
 */
bool rdma_soft_dev_name(const char *dev);

#endif
