/* SPDX-License-Identifier: MIT */
/*
 * What a case starts is killed when the case ends, daemons included.
 *
 * A tool's process group and PR_SET_PDEATHSIG do not reach a daemon: one
 * that forks, calls setsid() and forks again leaves the group, and its
 * parent is gone before the case ends.  So each worker (one case, one
 * role) runs in a cgroup v2 of its own where the agent can make one (a
 * child of the agent's own cgroup, which must be cgroup2 and writable:
 * root, or a delegated subtree), and is a child subreaper in any case: an
 * orphan of the case is re-parented to its worker, not to init, so the
 * worker finds it among its children even without a cgroup (a guest, a
 * cgroup v1 host, RQ_NO_CGROUP=1).
 *
 * At the case's end the worker names what is left (pid, comm, argv[0])
 * and kills it: cgroup.kill where the kernel has it (5.14), else SIGKILL
 * to every pid of cgroup.procs and to every child until none is left or
 * the deadline passes.  After the worker is gone the agent does the same
 * to the cgroup (a worker killed at its deadline leaves its tools there)
 * and removes it.
 */
#ifndef RQ_AGENT_CONTAIN_H
#define RQ_AGENT_CONTAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sb;

/*
 * The agent's own cgroup, as a dir fd, where cases' cgroups are made:
 * -1 (why says so) when the cgroup2 hierarchy is not mounted, the agent's
 * cgroup is not in it, or RQ_NO_CGROUP=1 (the fallback, for tests and for
 * a host whose cgroup manager must not see foreign cgroups).
 */
int rq_contain_parent(char *why, size_t size);

/*
 * Make the cgroup of one case under parent: "rdmaqual-case-<agent pid>-<tag>"
 * (name gets it, size >= 64).  Its dir fd, or -errno.
 */
int rq_contain_create(int parent, const char *tag, char *name, size_t size);

/* In the worker: move this process into the cgroup cg.  0 or -errno. */
int rq_contain_enter(int cg);

/*
 * What is left of a case: the processes of cgroup cg (-1: none) other
 * than self, and, when children is set, the children of this process
 * (a subreaper's adopted orphans) other than those in skip (n_skip).
 * Each is named in names ("pid 123 sleep (argv[0] sleep)", "; " between,
 * the first 8, then "and N more"), killed (cgroup.kill when self is not in
 * cg, else SIGKILL each) and reaped when it is our child, until none is
 * left or deadline (now_ms()).  Zombies are reaped, not named.  Returns
 * how many were named and killed; *left (may be NULL) is set when some
 * were still there at the deadline.
 */
int rq_contain_sweep(int cg, bool children, const pid_t *skip, size_t n_skip,
		     int64_t deadline, struct sb *names, bool *left);

/*
 * rdmaqual cleanup: the case cgroups under ours whose agent is gone (an
 * agent SIGKILLed with its run: its workers die of PDEATHSIG, a daemon of
 * a case lives on in the cgroup): their processes are named, killed and
 * the cgroups removed.  A live case's cgroup is flocked by its agent and
 * its worker (rq_contain_create), and left alone.  Returns how many were
 * removed; msgs (may be NULL) gets a line for each.
 */
int rq_contain_sweep_stale(struct sb *msgs);

/* Remove the (empty) cgroup name under parent and close cg.  0 or -errno. */
int rq_contain_remove(int parent, const char *name, int cg);

#endif
