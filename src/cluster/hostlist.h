/* SPDX-License-Identifier: MIT */
/*
 * Which nodes a lab run covers.  A node list is written as Slurm writes it
 * (`node[01-16,20]`, `rack[1-2]n[1-4]`, `a,b,c`), as `@FILE` (one host per
 * line, # comments), or as `slurm`: the current allocation's
 * SLURM_JOB_NODELIST.  Ranges keep the zero padding of their lower bound,
 * as Slurm does (`n[08-10]` is n08 n09 n10).
 */
#ifndef RQ_CLUSTER_HOSTLIST_H
#define RQ_CLUSTER_HOSTLIST_H

#include <stddef.h>

#define RQ_HOSTS_MAX 65536	/* a typo such as n[1-99999999] must not eat memory */
#define RQ_HOST_NAME_MAX 255

struct rq_hosts {
	char **v;
	size_t n, cap;
};

/*
 * Expand a hostlist expression, appending to out.  0, or -1 with err
 * saying where the expression is wrong ("column 7: ...").
 */
int rq_hostlist_expand(const char *expr, struct rq_hosts *out, char *err, size_t errsz);
/* --nodes: "slurm", "@FILE" or a hostlist; duplicates are refused. */
int rq_nodes_resolve(const char *spec, struct rq_hosts *out, char *err, size_t errsz);
/* Index of name in h, or -1. */
long rq_hosts_find(const struct rq_hosts *h, const char *name);
void rq_hosts_release(struct rq_hosts *h);

#endif
