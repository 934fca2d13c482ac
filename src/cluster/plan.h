/* SPDX-License-Identifier: MIT */
/*
 * Pairing nodes for two-sided cases, as rounds in which no node is in two
 * pairs at once (so a pair's figures are its link's, not a share of a busy
 * node's).  Pure: numbers in, numbers out; nodes are indexes into the run's
 * node list.
 *
 *   ring   each node with the next (i -> i+1, the last with the first):
 *          N pairs in 2 rounds for even N, 3 for odd N.
 *   all    every unordered pair once, by the circle method of round-robin
 *          tournaments: N-1 rounds of N/2 pairs for even N, N rounds of
 *          (N-1)/2 for odd N (one node sits out each round).
 *   list   the pairs written (a:b,c:d), packed first-fit into rounds.
 */
#ifndef RQ_CLUSTER_PLAN_H
#define RQ_CLUSTER_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "cluster/hostlist.h"

enum rq_pairing { RQ_PAIRS_RING, RQ_PAIRS_ALL, RQ_PAIRS_LIST };

struct rq_pair {
	uint32_t client, server;	/* node indexes; the client's rows are the pair's */
};

struct rq_pairs_policy {
	enum rq_pairing kind;
	struct rq_pair *list;		/* RQ_PAIRS_LIST */
	size_t nlist;
};

/* Round r is pairs[start[r] .. start[r + 1]). */
struct rq_rounds {
	struct rq_pair *pairs;
	size_t npairs;
	size_t *start;			/* nrounds + 1 entries */
	size_t nrounds;
};

/*
 * At most this many pairs per two-sided case: all pairs of 1,448 nodes.
 * All pairs of 20,000 nodes are 200 million (the plan alone took 1.6 GB
 * and 81 s to print); such a plan is refused up front with its count.
 */
#define RQ_PAIRS_MAX (1u << 20)

/*
 * "ring", "all" or "A:B,C:D" (node names from nodes; A is the client).
 * 0, or -1 with err (also for more than RQ_PAIRS_MAX pairs).
 */
int rq_pairs_parse(const char *text, const struct rq_hosts *nodes, struct rq_pairs_policy *p,
		   char *err, size_t errsz);
void rq_pairs_release(struct rq_pairs_policy *p);

/* Plan the rounds of a policy over nnodes nodes. */
void rq_plan_rounds(const struct rq_pairs_policy *p, size_t nnodes, struct rq_rounds *out);
void rq_rounds_release(struct rq_rounds *r);

#endif
