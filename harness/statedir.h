/* SPDX-License-Identifier: MIT */
/*
 * The node's run-state directory: the lock that keeps two runs from
 * changing the same node at once, and the records targets and kinds leave
 * there (started VMs and daemons, settings to undo) so that `rdmaqual
 * cleanup`, run automatically at the next start, can finish what a killed
 * run left.
 */
#ifndef RQ_STATEDIR_H
#define RQ_STATEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include "core/target.h"

/*
 * Take the node lock (non-blocking).  Fills dir (the chosen dir).  Returns
 * the lock fd, or -1 after printing who holds it.
 */
int statedir_lock(const char *want, char *dir, size_t dirsz);
/* Run every target's cleanup_stale(); verbose prints what was done. */
void statedir_cleanup(const struct rq_run_opts *o, bool verbose);

#endif
