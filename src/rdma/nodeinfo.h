/* SPDX-License-Identifier: MIT */
/*
 * Small node facts shared by the node kinds (driver, pcie, mtu,
 * irq-affinity), all read under ctx->root: module state, stack versions,
 * firmware version order, CPU lists.
 */
#ifndef RQ_NODEINFO_H
#define RQ_NODEINFO_H

#include <stdbool.h>
#include <stddef.h>
#include "core/ctx.h"

/*
 * Is module NAME live?  0: live (initstate "live", or built in: the
 * /sys/module dir exists without initstate); -ENOENT: not loaded; -EAGAIN:
 * present but not live (state copied into state, e.g. "coming").
 */
int node_module_live(struct rq_ctx *ctx, const char *name, char *state, size_t statesz);

/*
 * Stack versions as facts on row: kernel, rdma_core (pkg-config, else the
 * libibverbs.so.1 link name), ofed (ofed_info -s, else "inbox"),
 * mlx5_core_version when MLNX_OFED exposes one.
 */
void node_version_facts(struct rq_ctx *ctx, struct rq_result *row);

/* Compare dotted numeric versions ("20.35.1012"): <0, 0, >0. */
int fw_cmp(const char *a, const char *b);
/* The first number of a version ("20" of "20.35.1012"), -1 if none. */
long fw_major(const char *v);

/*
 * CPU list "0-7,16-23" <-> bitmap of up to RQ_MAX_CPUS.  Returns the number
 * of CPUs set, or -EINVAL.
 */
#define RQ_MAX_CPUS 1024
struct cpuset {
	unsigned long bits[RQ_MAX_CPUS / (8 * sizeof(unsigned long))];
};
int cpuset_parse(const char *list, struct cpuset *s);
void cpuset_format(const struct cpuset *s, char *buf, size_t size);
bool cpuset_has(const struct cpuset *s, int cpu);
void cpuset_add(struct cpuset *s, int cpu);
int cpuset_count(const struct cpuset *s);
bool cpuset_subset(const struct cpuset *a, const struct cpuset *b);

/* Process names (/proc/<pid>/comm under root): is one called NAME running? */
bool node_proc_running(struct rq_ctx *ctx, const char *name);

/*
 * `ibv_devinfo -v` through rq_tool (live: runs it; sysroot: the capture),
 * parsed.  0; -ENOENT when the tool is not there; -EIO when it failed;
 * -EINVAL when its output made no sense.  why says which.
 */
struct devinfo;
int node_devinfo(struct rq_ctx *ctx, struct devinfo *di, char *why, size_t whysz);

#endif
