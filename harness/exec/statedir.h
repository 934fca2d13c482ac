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

/*
 * A report dir that `run --resume` may continue, whose journal says what
 * to run (as root, perhaps): dir, after realpath (real), must be the
 * euid's and writable by no one else, every ancestor root's or the euid's
 * (or sticky), journal.jsonl a regular file of the euid with one link and
 * no group/other write, logs/ (if there) the same as a directory.  Returns
 * an O_DIRECTORY|O_NOFOLLOW fd of the dir, or -1 with err filled.
 */
int rundir_trust(const char *dir, char *real, size_t realsz, char *err, size_t errsz);

#endif
