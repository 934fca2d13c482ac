/* SPDX-License-Identifier: MIT */
/*
 * Replaying a captured node (`rdmaqual capture DIR`, or a synthesized tree
 * under fixtures/nodes/).  Layout of DIR:
 *
 *   sys/... proc/...              the files the kinds read, symlinks kept
 *   capture/manifest              optional, see below
 *   capture/tools/<name>.out      what a tool printed on stdout
 *   capture/tools/<name>.err      (optional) its stderr
 *
 * <name> is the argv joined with '_', every byte outside [A-Za-z0-9.-]
 * turned into '_' ("ibv_devinfo -v" -> "ibv_devinfo_-v").  The manifest is a
 * text file of tab-separated records, one per line:
 *
 *   rdmaqual-capture  1                          (first line: format version)
 *   meta   KEY   VALUE                           (captured TIME, source, redacted,
 *                                                synthesized BY: see below)
 *   file   PATH  SIZE                            (copied regular file)
 *   link   PATH  TARGET                          (symlink, reproduced in the tree)
 *   dir    PATH
 *   chr|blk PATH MAJ:MIN                         (device nodes: recorded, not created)
 *   fail   PATH  ERRNO                           (could not be read: unused GIDs...)
 *   tool   FILE  EXIT  ARGV0 ARGV1 ...           (a tool's captured output)
 *
 * A tree without a manifest (a plain copy) replays too: tools are then
 * looked up by the naming rule with exit status 0.
 *
 * Where a tree comes from is said by its manifest, and every report of a
 * replay says it (rq_sysroot_origin): `meta synthesized BY` marks a tree
 * made from documented formats, not read off a machine (the fixtures of
 * fixtures/nodes, BY naming what made it); a capture of such a tree keeps
 * the record.  A manifest without it was written by `rdmaqual capture`
 * (`meta captured TIME`); a tree without a manifest is of unknown origin.
 */
#ifndef RQ_SYSROOT_H
#define RQ_SYSROOT_H

#include <stddef.h>
#include <stdint.h>
#include "core/ctx.h"

#define RQ_CAPTURE_DIR "capture"
#define RQ_MANIFEST_MAGIC "rdmaqual-capture"

/* "ibv_devinfo -v" -> "ibv_devinfo_-v" (the capture file name, no suffix). */
void rq_tool_file_name(const char *const *argv, char *buf, size_t size);

/*
 * Find the capture of argv under root: 0 with the .out path and the
 * recorded exit status, or -ENOENT.
 */
int rq_sysroot_find(const char *root, const char *const *argv, char *path, size_t size,
		    int *exit_code);

/*
 * The rq_tool_fn of sysroot targets: replays argv's captured output under
 * ctx->root as if the tool had run.  `ibv_devinfo [-v] -d DEV` is cut from
 * the whole-node capture when there is no capture for that device alone.
 * A tool with no capture is reported as not found (exec_failed, ENOENT),
 * exactly like a tool missing from PATH on a live node.
 */
int rq_tool_replay(struct rq_ctx *ctx, const char *const *argv, int64_t timeout_ms,
		    struct proc_result *r);

enum rq_tree_origin {
	RQ_TREE_UNKNOWN,	/* no manifest: a plain copy, origin not said */
	RQ_TREE_CAPTURED,	/* written by `rdmaqual capture` */
	RQ_TREE_SYNTHESIZED,	/* made from documented formats (meta synthesized) */
};

struct rq_tree_meta {
	enum rq_tree_origin origin;
	char synthesized[256];	/* meta synthesized: what made it */
	char captured[64];	/* meta captured: when */
	char source[256];	/* meta source: the root captured ("/" for a live node) */
};

/* Read root's capture/manifest meta records (resolved inside root). */
void rq_sysroot_origin(const char *root, struct rq_tree_meta *m);
/* "captured", "synthesized", "unknown" */
const char *rq_tree_origin_name(enum rq_tree_origin o);

#endif
