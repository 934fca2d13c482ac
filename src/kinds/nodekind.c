/* SPDX-License-Identifier: MIT */
/* The node kinds' shared prologue (see nodekind.h). */
#include <errno.h>
#include "kinds/nodekind.h"
#include "core/util.h"

bool nodekind_scan(struct rq_ctx *ctx, struct rdma_devs *devs)
{
	if (rdma_devs_scan(ctx, devs) >= 0)
		return true;
	rq_result_set(ctx->main, RQ_ERROR, "cannot read /sys/class/infiniband");
	return false;
}

int nodekind_select(struct rq_ctx *ctx, const struct rdma_devs *devs, int **idx, const char *none_why)
{
	char missing[128];
	int n;

	*idx = xcalloc((size_t)devs->n + 1, sizeof(**idx));
	n = rdma_devs_select2(ctx, devs, *idx, devs->n, missing, sizeof(missing));
	if (n == -ENODEV) {
		rq_judge(ctx->main, false, "device %s not found", missing);
		return -1;
	}
	if (n == 0 && none_why)
		rq_result_set(ctx->main, RQ_SKIP, "%s", none_why);
	return n;
}
