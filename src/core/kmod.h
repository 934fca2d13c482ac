/* SPDX-License-Identifier: MIT */
/*
 * A case's modules: key: kernel modules loaded on the node (a guest, a
 * host) before its programs start, and afterwards unloaded again where this
 * case loaded them, dependencies included.
 */
#ifndef RQ_KMOD_H
#define RQ_KMOD_H

#include <stddef.h>
#include "core/ctx.h"
#include "core/result.h"

/*
 * Load each module with modprobe (the node's /lib/modules/RELEASE).  Before
 * that, the modules loaded now are written to the case's scratch directory,
 * so that rq_kmod_unload() (also in the worker that cleans up after a
 * killed case) knows which ones are the case's.
 * RQ_NONE: all loaded; RQ_SKIP: a module does not exist for this kernel,
 * no module tree, not root, a captured tree; RQ_ERROR: modprobe failed.
 * why says which module and kernel.
 */
enum rq_verdict rq_kmod_load(struct rq_ctx *ctx, char *const *mods, size_t n,
			     char *why, size_t whysz);
/* Unload the modules loaded since rq_kmod_load() (those still in use stay, logged). */
void rq_kmod_unload(struct rq_ctx *ctx);

/* Is name a module name modprobe takes ([A-Za-z0-9_-], not starting with -, at most 55 bytes)? */
bool rq_kmod_name_ok(const char *name);

#endif
