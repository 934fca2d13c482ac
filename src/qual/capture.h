/* SPDX-License-Identifier: MIT */
/*
 * `rdmaqual capture DIR`: copy what the node kinds read (sysfs, procfs,
 * module files: each kind's rq_kind.reads) and what the tools print (`ibv_devinfo -v`, `ibstat`,
 * `rdma link show`...) into a tree that `--target sysroot:DIR` replays.
 * Symlinks are reproduced (relative, as sysfs has them) together with the
 * directories they point at, so readers that resolve them under a root
 * prefix see the node's layout; capture/manifest (sysroot.h) records links,
 * device nodes and the files that could not be read (unused GID entries).
 */
#ifndef RQ_CAPTURE_H
#define RQ_CAPTURE_H

#include <stdbool.h>
#include "core/reads.h"
#include "core/util.h"

struct capture_opts {
	const char *src;	/* root to capture: "" or "/" for this node, or a tree */
	const char *dst;	/* output directory (created; must be empty or absent) */
	bool redact;		/* GUIDs, MACs, GID interface ids, hostname: qual/redact.h */
	struct sb *log;		/* optional: what was done */
};

struct capture_stats {
	unsigned files, links, dirs, failed, devnodes, tools;
};

int rq_capture(const struct capture_opts *o, struct capture_stats *st, char *err, size_t errsz);

/*
 * What is copied comes from the kinds (rq_kind.reads, core/reads.h) and
 * from capture's own base list: what the device layer reads (rdmadev, the
 * node facts) and the node's record, which no one kind owns.
 */
const struct rq_read *rq_capture_base_reads(void);
/* reads in words, one line each (`code` marked as markdown marks it), appended to out. */
void rq_capture_reads_describe(const struct rq_read *reads, struct sb *out);

#endif
