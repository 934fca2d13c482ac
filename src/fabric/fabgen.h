/* SPDX-License-Identifier: MIT */
/*
 * Fabrics of real size from a one-line spec, written as ibsim net files:
 *
 *   fat-tree:leaves=36,spines=18,hosts-per-leaf=18[,ports=36][,links=1][,speed=QDR]
 *   rail:hosts=64,rails=4,spines=4[,ports=36][,speed=QDR]
 *   ring:switches=5,hosts-per-switch=2[,ports=36][,speed=QDR]
 *   ... ,fault=missing,fault=swapped,fault=1x,fault=slow,fault=dup-guid,fault=dup-desc,
 *       fault=dup-port-guid,fault=no-sl2vl
 *
 * A two-level fat tree: every leaf has hosts-per-leaf single-port HCAs
 * ("h001 HCA-1") on its first ports and `links` cables to every spine on the
 * next.  Rail-optimized: every host has `rails` HCAs ("h001 HCA-1" ...
 * "h001 HCA-R"), HCA r of every host on the leaves of rail r (ports/2 hosts
 * a leaf), every leaf with ports/2 uplinks spread evenly over the spines.
 * A ring: switches cabled in a cycle, each with its hosts; shortest-path
 * routing on a ring of five or more has a credit loop, which is what it is
 * for (a fabric-routing check that must fail).
 *
 * Two texts come out: the fabric simulated, with the planted faults, and
 * the plan (the same fabric healthy), which is what the fabric is judged
 * against.  Each fault is planted at a fixed, documented place, and named:
 *   missing   the first uplink of the first leaf is not cabled;
 *   swapped   the cables of the first two hosts of the second leaf (the
 *             first when there is one) are exchanged at the leaf;
 *   1x        the last host of the last leaf trains at 1X (w=1 both ends);
 *   slow      the last uplink of the first leaf trains at SDR (s=1);
 *   dup-guid  the last HCA takes the first HCA's node GUID (ibsim's
 *             "Guid" command at the end of the file); opensm refuses such
 *             a subnet (ERR 0D01) and stays DISCOVERING;
 *   dup-desc  the second HCA has the first one's node description;
 *   dup-port-guid  the second HCA's cabled port has the first HCA's port
 *             GUID (opensm: ERR 0D15, that port stays INIT without a LID);
 *   no-sl2vl  the last HCA's port drops every SL-to-VL mapping MAD (ibsim's
 *             "Error" command): the SM cannot set its table (fabric-qos).
 * Node GUIDs are explicit (switchguid=/caguid= before each node), so the
 * plan names every node by GUID as ibnetdiscover would.
 *
 * Limits are ibsim 0.10's (sim.h): 256 switches, 2048 nodes, 13312 ports,
 * and a switch has 4..64 ports.  Pure: text in, text out.
 */
#ifndef RQ_FABGEN_H
#define RQ_FABGEN_H

#include <stdbool.h>
#include "core/util.h"

#define FABGEN_MAX_SWITCHES 256
#define FABGEN_MAX_NODES 2048
#define FABGEN_MAX_PORTS 13312
#define FABGEN_MAX_FAULTS 8

struct fabgen {
	struct sb sim;			/* the net file ibsim runs */
	struct sb planned;		/* the healthy plan */
	unsigned hosts, cas, switches, links;
	char fault[FABGEN_MAX_FAULTS][256];	/* what each planted fault did, both ends named */
	unsigned nfaults;
	bool sm_blocked;		/* a fault keeps any SM from bringing the subnet up */
};

/* Is s a spec ("fat-tree:...", "rail:...", "ring:...") rather than a file name? */
bool fabgen_is_spec(const char *s);
/* 0, or -EINVAL with "fabric spec: what" in err (unknown key, beyond a limit, ...). */
int fabgen_build(const char *spec, struct fabgen *g, char *err, size_t errsz);
void fabgen_release(struct fabgen *g);

#endif
