/* SPDX-License-Identifier: MIT */
/*
 * Where a case runs, as the kind sees it: one typed struct that every
 * target's place() and the lab fill, that the run request carries to the
 * agent (one encoder, one decoder: rq_where_to_json, rq_where_from_json),
 * and that kinds read as ctx->where.  Nothing here is looked up by a
 * string key outside this file.
 *
 * Sides are indexed as a unit's are: [0] the single side or the client,
 * [1] the server; a kind on side s takes [s] for itself and [!s] for its
 * peer.  Every string is owned by the struct (rq_where_release frees
 * them) and is NULL when the target does not know it; a decoded struct
 * has "" instead, so a kind may test s[0].
 */
#ifndef RQ_WHERE_H
#define RQ_WHERE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* A node of a case that spans a lab or a set of guests (an MPI launch). */
struct rq_where_node {
	char *name;		/* its host name */
	char *addr;		/* the address the launching node reaches it at; NULL: name */
};

/* The simulated fabric and its subnet manager (ibsim), or nothing. */
struct rq_where_fabric {
	bool sim;			/* an ibsim fabric */
	char *topology;			/* the net file ibsim runs */
	char *planned;			/* a generated fabric's plan (the healthy fabric) */
	char *socket;			/* ibsim's socket name (IBSIM_SOCKNAME of the tools' env) */
	bool target_sm;			/* the target started an opensm ... */
	bool sm_up;			/* ... which brought the subnet up */
	char *sm_log;			/* its log */
	char *sm_config;		/* the opensm.conf it was given */
	char *sm_partitions;		/* its partitions.conf */
	char *qos_policy;		/* its qos-policy.conf */
	char *routing_engine;		/* -R, NULL: opensm's default */
	int64_t ibsim_start_ms;		/* now_ms() when ibsim was started, 0 unknown */
	int64_t ibsim_ready_ms;		/* ibsim start to its first client */
	int64_t sm_settle_ms;		/* opensm start to a subnet up (or settled) */
};

struct rq_where {
	char *host[2];			/* each side's host name ({peer_host}), a lab node's or a guest's */
	char *rdma_addr[2];		/* each side's IPv4 on the RDMA side (a lab rail, a node pair) */
	char *rdma_gid[2];		/* each side's GID on that rail */
	int rail;			/* the lab rail the unit runs on, -1 none */
	char *rdma_dev, *netdev;	/* the device the target set up (rxe-vm: rxe0 on eth0); NULL: select */
	struct rq_where_node *nodes;	/* every node of a spanning case */
	size_t nnodes;
	int slots;			/* CPUs (MPI slots) of each, 0 unknown */
	struct rq_where_fabric fabric;
	char *case_file;		/* the case file's absolute path, when the target resolved it */
	bool allow_sm_takeover;		/* --allow-sm-takeover */
};

void rq_where_init(struct rq_where *w);
void rq_where_release(struct rq_where *w);
/* A deep copy of src into dst (initialized or released). */
void rq_where_copy(struct rq_where *dst, const struct rq_where *src);
/* Append node name (addr may be NULL). */
void rq_where_add_node(struct rq_where *w, const char *name, const char *addr);
/* The name a launcher uses for node i: its address, else its name. */
const char *rq_where_node_reach(const struct rq_where *w, size_t i);

/* The wire form: an object with only the fields that are set. */
struct json_t *rq_where_to_json(const struct rq_where *w);
/*
 * Back from the wire (j may be NULL: nothing known); every string "" when
 * absent.  0, or -1 with why (a field of the wrong type).
 */
int rq_where_from_json(struct rq_where *w, const struct json_t *j, char *why, size_t whysz);

#endif
