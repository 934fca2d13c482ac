/* SPDX-License-Identifier: MIT */
/*
 * The prologue every node kind shares: the node's RDMA devices, and the
 * ones the case selects (devices:, port:), with the verdicts that follow
 * from them said the same way by every kind.
 */
#ifndef RQ_NODEKIND_H
#define RQ_NODEKIND_H

#include "core/ctx.h"
#include "rdma/rdmadev.h"

/*
 * The node's RDMA devices (rdma_devs_scan), or false with ctx->main an
 * ERROR: /sys/class/infiniband could not be read.
 */
bool nodekind_scan(struct rq_ctx *ctx, struct rdma_devs *devs);
/*
 * The selected devices' indexes into devs, in a new *idx (free it), and
 * how many.  A device the case names that is absent FAILs ctx->main and
 * gives -1; none selected SKIPs ctx->main with none_why ("no RDMA device
 * selected"; NULL: no SKIP, the kind judges that itself) and gives 0.
 */
int nodekind_select(struct rq_ctx *ctx, const struct rdma_devs *devs, int **idx, const char *none_why);

#endif
