/* SPDX-License-Identifier: MIT */
/*
 * Which node (or link) is bad, by pairwise elimination: a pair that fails
 * blames the end that fails with everyone over the end that passes with
 * someone else.  Pure: outcomes in, suspects with their evidence out.
 *
 *   - a node that failed a node-local case (or could not be reached) is a
 *     suspect, with the first failure as evidence;
 *   - a failed pair A-B where B passed with another node and A with none
 *     blames A ("A->B failed; B passed with C");
 *   - both ends passed elsewhere: the link A-B is the suspect, not a node;
 *     a node in two or more suspect links that fails more pairs than it
 *     passes becomes the suspect instead of its links;
 *   - neither end passed anywhere (two nodes, or both bad): both, saying so.
 * Pairs with a node that was down (unreachable, died) are left out: they
 * say nothing about the partner.
 */
#ifndef RQ_CLUSTER_SUSPECTS_H
#define RQ_CLUSTER_SUSPECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rq_node_outcome {
	bool down;		/* unreachable, or died during the run */
	unsigned fails;		/* node-local rows that failed or errored */
	const char *first;	/* "driver.hca[mlx5_1/1]: port DOWN", or the launcher's error */
};

struct rq_pair_outcome {
	uint32_t client, server;
	bool bad;		/* a row failed or errored, or a figure far below its peers' */
	const char *what;	/* what went wrong: "bw.write[n1:mlx5_0/1->n2:mlx5_0/1] FAIL: ..." */
};

struct rq_suspect {
	uint32_t node;
	long link;		/* -1: the node; else the other end of a suspect link */
	char *reason;		/* one line of evidence */
};

struct rq_suspects {
	struct rq_suspect *v;
	size_t n;
};

void rq_suspects_find(size_t nnodes, const char *const *names, const struct rq_node_outcome *nodes,
		      const struct rq_pair_outcome *pairs, size_t npairs, struct rq_suspects *out);
void rq_suspects_release(struct rq_suspects *s);
/*
 * Whether list, hosts separated by blanks or commas as a job over every
 * node names its suspects ("vm2 vm5", "n1,n3"), names host (exactly: "n1"
 * is not "n10").  NULL or empty host: false.
 */
bool rq_suspects_names(const char *list, const char *host);

#endif
