/* SPDX-License-Identifier: MIT */
/*
 * `ibv_devinfo` and `ibv_devinfo -v` output (rdma-core devinfo.c; tabs or
 * spaces, as blogs convert them): per device the identity lines and, per
 * port, state, MTUs, LIDs, link layer, width/speed and GIDs.  The values
 * only verbs can give (active_mtu, num_comp_vectors) come from here.
 * Pure: text in, structs out.
 */
#ifndef RQ_PARSE_DEVINFO_H
#define RQ_PARSE_DEVINFO_H

#include <stddef.h>
#include "parsers/parsers.h"

struct devinfo_gid {
	int index;
	char gid[48];		/* as printed: full (IB, RoCE v1) or compressed (RoCE v2) */
	char type[16];		/* "RoCE v2", "IB/RoCE v1", "" on IB */
};

struct devinfo_port {
	int num;
	int state;		/* 4 of "PORT_ACTIVE (4)", -1 unknown */
	char state_str[24];	/* "PORT_ACTIVE" */
	int max_mtu, active_mtu;	/* bytes, 0 unknown */
	long sm_lid, lid;	/* -1 unknown */
	char link_layer[16];	/* "" unknown (libibverbs before 1.1.4 prints none) */
	char phys_state[24];	/* "LINK_UP" */
	char active_width[16];	/* "4X" */
	char active_speed[24];	/* "25.0 Gbps" */
	struct devinfo_gid *gids;
	int ngids;
	struct rq_missing missing;	/* "link_layer" when it was not printed */
};

struct devinfo_dev {
	char name[64];
	char transport[32];
	char fw_ver[64];
	char node_guid[32];
	char board_id[64];
	unsigned long vendor_id, vendor_part_id;
	int phys_port_cnt;		/* -1 unknown */
	int num_comp_vectors;		/* -v only, -1 unknown */
	long long max_qp;		/* -v only, -1 unknown */
	struct devinfo_port *ports;
	int nports;
};

struct devinfo {
	struct devinfo_dev *v;
	int n;
};

/*
 * Parse a whole output.  0, or -EINVAL with err naming the line ("line 3:
 * port line outside a device") or the port whose state, MTU or LID lines
 * are absent (a cut output).  "No IB devices found" parses as 0 devices.
 */
int ibv_devinfo_parse(const char *text, size_t len, struct devinfo *out, char *err, size_t errsz);
void devinfo_release(struct devinfo *d);
const struct devinfo_dev *devinfo_dev(const struct devinfo *d, const char *name);
const struct devinfo_port *devinfo_port(const struct devinfo *d, const char *dev, int port);

#endif
