/* SPDX-License-Identifier: MIT */
/*
 * Routing as the switches' forwarding tables make it: the topology with its
 * LIDs (ibnetdiscover) and every switch's LFT (dump_fts) in, three verdicts
 * out.
 *
 * - Reachability: from every CA port with a LID to every other CA port's
 *   LIDs (base .. base + 2^LMC - 1), following the LFTs hop by hop: no
 *   missing entry (a hole), no entry out of an uncabled port or back to the
 *   switch itself (a dead end), no loop, no delivery to another CA.
 * - Credit loops: the channel dependency graph the routes induce (a channel
 *   is a switch-to-switch link in one direction; a route entering a switch
 *   on channel a and leaving on channel b makes a depend on b) must be
 *   acyclic, the Dally-Seitz condition for deadlock freedom, as ibdmchk
 *   checks it.  rt_analyze takes all traffic to share one VL; where that
 *   graph has a cycle, rt_analyze_vls builds it again with a channel per
 *   VL: each route on the SL the SM gives its path, each hop on the VL the
 *   switch's SL2VL table maps that SL to for the ports it enters and
 *   leaves by.  Engines that break cycles with VLs (lash, dfsssp, Nue,
 *   torus-2QoS) are judged by the lanes they really use; an acyclic
 *   one-VL graph needs no second pass, since no VL assignment can add a
 *   cycle.
 * - Balance: on every switch with uplinks (a port to a switch farther from
 *   the CAs, by hop count), how many destination LIDs each uplink carries;
 *   max and min per switch.
 *
 * The forwarding of a destination is a tree, so each switch's next hop is
 * resolved once per destination and shared by every source behind it: the
 * work is switches x destination LIDs, not ports squared, and each
 * (source, destination) pair is one route counted.
 */
#ifndef RQ_ROUTING_H
#define RQ_ROUTING_H

#include <stdbool.h>
#include <stddef.h>
#include "parsers/ibnet.h"
#include "parsers/parse_fabric.h"

#define RT_MAX_PROBLEMS 16

struct rt_balance {
	int sw;			/* topology node index */
	unsigned uplinks;
	unsigned max, min;	/* destination LIDs on its busiest / idlest uplink */
	int max_port, min_port;
};

struct rt_report {
	size_t switches, dest_lids, sources;
	size_t routes;			/* (source port, destination LID) pairs followed */
	size_t unreachable;		/* ... of which reach nowhere or elsewhere */
	unsigned max_hops;		/* switch hops of the longest route */
	char problem[RT_MAX_PROBLEMS][256];	/* the first distinct problems, switch/port/destination named */
	size_t nproblems;		/* distinct (switch, destination) problems, counted beyond the named */
	size_t channels, dependencies;	/* of the channel dependency graph */
	bool credit_loop;
	char cycle[1024];		/* the loop, channel by channel, and a destination that closes it */
	struct rt_balance *bal;
	size_t nbal;
	size_t unmatched_lfts;		/* switches of the topology without a table (or the reverse) */
	char unmatched[256];
};

/* 0, or -EINVAL with err (nothing to route: no CA port with a LID). */
int rt_analyze(const struct ibnet *topo, const struct ib_lfts *lfts, struct rt_report *r, char *err, size_t errsz);
void rt_report_release(struct rt_report *r);

/*
 * What the VL pass asks, as it needs it (a caller asks the SA and the
 * switches lazily, and only for the routes that cross two switches).
 * path_sl: the SL of the path from source LID slid (a CA port's base LID)
 * to dlid, 0..15, or -1 unknown.  sl2vl: the VL switch topo->nodes[node]
 * sends SL sl on out of port out, having received it on port in, 0..15
 * (15: dropped), or -1 unknown.
 */
struct rt_vl_source {
	int (*path_sl)(void *arg, unsigned slid, unsigned dlid);
	int (*sl2vl)(void *arg, int node, int in, int out, unsigned sl);
	void *arg;
};

struct rt_vl_report {
	size_t routes;			/* routes that cross two switches or more */
	size_t sl_unknown;		/* ... whose SL path_sl did not give (taken as SL 0) */
	size_t vl_unknown;		/* hops whose VL sl2vl did not give (taken as VL 0) */
	size_t dropped;			/* routes an SL2VL table maps to VL 15 */
	uint16_t sls, vls;		/* the SLs and VLs the routes use, a bit each */
	size_t dependencies;		/* of the graph with a channel per VL */
	bool credit_loop;
	char cycle[1024];		/* channel and VL by channel and VL, and a destination that closes it */
};

/* 0, or -EINVAL with err as rt_analyze. */
int rt_analyze_vls(const struct ibnet *topo, const struct ib_lfts *lfts, const struct rt_vl_source *src,
		   struct rt_vl_report *r, char *err, size_t errsz);

#endif
