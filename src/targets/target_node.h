/* SPDX-License-Identifier: MIT */
/*
 * What the targets that run on this node share (local, hca): this node's
 * agent, and with --peer HOST a second node's agent over ssh that takes the
 * server role of two-sided cases.
 */
#ifndef RQ_TARGET_NODE_H
#define RQ_TARGET_NODE_H

#include "core/target.h"

/* Sets t->priv; 0, or -1 with err (nothing left open). */
int node_agents_open(struct rq_target *t, char *err, size_t errsz);
/* Client here; server on the peer for two-sided cases when there is one. */
void node_agents_place(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl);
/*
 * With --peer, a two-sided case's RDMA side: each node's first ACTIVE port
 * (of the case's devices/port) with an IPv4 address, found by that node's
 * agent (RoCE: the IPv4-mapped RoCE v2 GID of the netdev; IB: the IPoIB
 * netdev's address), passed as param "rdma_addrs" [client, server].  No
 * peer or one-sided: nothing.  0, or -1 with err when a side has none.
 */
int node_agents_rdma_addrs(struct rq_target *t, const struct rq_case *c, struct rq_placement *pl,
			   char *err, size_t errsz);
/* The address node_agents_rdma_addrs takes from rdma-links rows; 0, or -1 with why. */
int node_rail_pick(const struct rq_results *rows, char *ip, size_t ipsz, char *why, size_t whysz);
/* The peer's environment facts as peer.*, for the report. */
void node_agents_peer_facts(struct rq_target *t, struct rq_result *sink);
void node_agents_close(struct rq_target *t);

#endif
