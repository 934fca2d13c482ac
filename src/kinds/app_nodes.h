/* SPDX-License-Identifier: MIT */
/*
 * The nodes of a case that runs once, on the first node, for all nodes (an
 * MPI launch): their names from the target (rxe-vm's guests: the
 * placement's "nodes" and "slots"), else this node alone; a hostfile of
 * them; and this node's RDMA device, its netdev and line rate, for {dev},
 * {netdev} and the bandwidth judgement.  Shared by command and collective.
 */
#ifndef RQ_APP_NODES_H
#define RQ_APP_NODES_H

#include <stdbool.h>
#include <stddef.h>

struct rq_ctx;

struct app_nodes {
	char **name;		/* "vm0", "vm1", ... */
	size_t n;
	int slots;		/* ranks per node (the target's CPUs per node; 1 when unknown) */
	bool from_target;	/* false: this node alone */
	char hosts[1024];	/* "vm0,vm1,vm2" */
	char hostfile[512];	/* written by app_nodes_hostfile(), "" before */
};

/* 0, or -1 with err (a target's list that is not a list of names). */
int app_nodes_get(struct rq_ctx *ctx, struct app_nodes *nd, char *err, size_t errsz);
/* ctx->scratch/hostfile, one line a node: "vm0 slots=1"; 0 or -1 with err. */
int app_nodes_hostfile(struct rq_ctx *ctx, struct app_nodes *nd, char *err, size_t errsz);
void app_nodes_release(struct app_nodes *nd);

struct app_dev {
	char dev[64], netdev[64];
	int port;
	double rate_gbps;	/* the port's data rate (after line coding), 0 unknown */
};

/* The target's device (rxe0 on rxe-vm), else the first selected ACTIVE port; 0 or -1. */
int app_dev_find(struct rq_ctx *ctx, struct app_dev *d);

#endif
