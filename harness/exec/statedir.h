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
 * Make dir (0700) if missing; refuse (after saying why) one that is a
 * link, not a directory, not owned by the euid or open to group/others.
 */
int statedir_check(const char *dir);
/*
 * Take the node lock (non-blocking).  Fills dir (the chosen dir).  Returns
 * the lock fd, or -1 after printing who holds it.
 */
int statedir_lock(const char *want, char *dir, size_t dirsz);
/* Run every target's cleanup_stale(); verbose prints what was done. */
void statedir_cleanup(const struct rq_run_opts *o, bool verbose);

#endif
