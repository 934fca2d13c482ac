/* SPDX-License-Identifier: MIT */
/*
 * Where rdmaqual's own files are.  Two layouts, told apart by what lies
 * beside the running binary (/proc/self/exe), so neither needs a
 * configuration file and an installed tree can be moved as a whole:
 *
 *   checkout   ROOT/rdmaqual or ROOT/build/san/rdmaqual, with ROOT/cases/
 *              and ROOT/vm/kernel.sh: data is ROOT, scripts are ROOT/vm,
 *              the guest image cache ROOT/vm/cache (as it always was).
 *   installed  PREFIX/bin/rdmaqual (make install, the packages): data in
 *              PREFIX/share/rdmaqual, the image scripts and the guest's
 *              init in PREFIX/libexec/rdmaqual, the image cache in
 *              /var/cache/rdmaqual (root) or $XDG_CACHE_HOME/rdmaqual.
 *
 * A binary found in neither (copied to a peer for --peer) falls back to the
 * prefix it was built for (RQ_PREFIX), which only matters if it is asked
 * for cases or images there.
 *
 * Both are used only where nobody but root and the euid can change them
 * (the tree, the dirs named above and every parent: the image cache's
 * rule), since their scripts and cases run, often as root.  An install is
 * looked for first and nothing above its prefix is considered; a checkout
 * is the binary's own dir or, for build/san and build/rel, two levels up;
 * ./ never.  A tree that fails says why in refused: a checkout is then not
 * one, and an untrusted install provides no scripts, cases or fixtures.
 */
#ifndef RQ_PATHS_H
#define RQ_PATHS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct rq_paths {
	bool checkout;			/* running from a source tree */
	bool untrusted;			/* an install another user may change: none of it is used */
	char datadir[PATH_MAX];		/* holds cases/ and fixtures/ */
	char libexecdir[PATH_MAX];	/* holds kernel.sh, initramfs.sh, init */
	char refused[512];		/* why a tree beside the binary is not used, "" if none */
};

/* Computed once from /proc/self/exe; never NULL. */
const struct rq_paths *rq_paths(void);
/* The same for a binary at EXE (an absolute path); for tests. */
void rq_paths_find(const char *exe, struct rq_paths *p);

/*
 * The shipped cases: "cases" (relative, as a checkout always ran them) or
 * PREFIX/share/rdmaqual/cases.
 */
const char *rq_default_cases(void);

/*
 * The guest image cache of an installed rdmaqual: /var/cache/rdmaqual for
 * root, else $XDG_CACHE_HOME/rdmaqual, else ~/.cache/rdmaqual.  Created when
 * missing (0755 for root's, 0700 for a user's; parents of a user's 0700 too)
 * and refused unless it is a directory of ours that nobody else may write:
 * the scripts run what they unpack there.  0 or -errno with err set.
 */
int rq_cache_dir(char *buf, size_t size, char *err, size_t errsz);
/*
 * Any image cache (RQ_VM_CACHE, a checkout's vm/cache, rq_cache_dir's):
 * created 0700 when missing; then its physical path goes to real, and it
 * must be a directory of the euid that nobody else may write, under
 * directories that only root or the euid can change (sticky ones aside).
 * 0 or -errno with err set.
 */
int rq_cache_check(const char *dir, char *real, size_t size, char *err, size_t errsz);

#endif
