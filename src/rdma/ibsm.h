/* SPDX-License-Identifier: MIT */
/*
 * Subnet-manager plumbing shared by the ibsim target and the SM/fabric
 * kinds: starting opensm under a deadline with its log in a file of ours,
 * asking the fabric how far it came up (sminfo + iblinkinfo, never the
 * buffered opensm log), and the run-state records that let `rdmaqual
 * cleanup` kill an ibsim or opensm a killed run left behind.
 *
 * Tools are run through a callback so the same code serves the target (in
 * the runner: proc_run with the placement's environment) and kinds (in the
 * agent: rq_tool, which logs and replays).
 */
#ifndef RQ_IBSM_H
#define RQ_IBSM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "parsers/ibnet.h"
#include "parsers/parse_ibdiag.h"
#include "core/proc.h"

/* Where libumad2sim lives (Debian libumad2sim0); $RQ_UMAD2SIM overrides.  NULL: absent. */
const char *ibsm_umad2sim_path(void);

typedef int (*ibsm_run_fn)(void *arg, const char *const *argv, int64_t timeout_ms,
			   struct proc_result *r);

struct ibsm_tools {
	ibsm_run_fn run;
	void *arg;
};

/* opensm invocation. */
struct ibsm_opensm {
	const char *guid;		/* -g; NULL: opensm picks (one port: that one) */
	int priority;			/* -p 0..15 */
	bool once;			/* -o: configure once and exit */
	int sweep_s;			/* -s; ignored with once */
	const char *config;		/* -F; NULL: none */
	const char *routing;		/* -R engine[,engine...]; NULL: opensm's default (minhop) */
	bool qos;			/* -Q: QoS on (SL2VL and VLArb tables from the config's qos_* options) */
	const char *qos_policy;		/* -Y policy file (with qos); NULL: none */
	const char *partitions;		/* -P partitions.conf; NULL: opensm's default path */
	const char *log_path;		/* -f (required) */
	const char *out_path;		/* stdout+stderr file (required) */
	const char *const *env;		/* added env (preload, IBSIM_SOCKNAME, OSM_*), may be NULL */
	const char *sim_host;		/* ibsim: SIM_HOST node to attach at; NULL: the first node */
	const char *cwd;		/* umad2sim writes sys-<pid>/ here */
};

/* Spawn opensm; pid > 0, or -errno with err. */
pid_t ibsm_opensm_start(const struct ibsm_opensm *o, char *err, size_t errsz);
/* SIGTERM, a grace, SIGKILL; reaps.  opensm first, ibsim after (see ibsm.c). */
void ibsm_stop(pid_t pid, int64_t grace_ms);

/* What a poll of the fabric saw. */
struct ibsm_view {
	bool sm_answered;		/* sminfo parsed */
	struct ib_sminfo sm;
	bool links_read;		/* iblinkinfo parsed */
	struct ib_links links;
	char why[512];			/* what is not up yet, or the tool failure */
};

void ibsm_view_release(struct ibsm_view *v);
/* Run sminfo and iblinkinfo once.  0 when both ran and parsed. */
int ibsm_look(const struct ibsm_tools *t, struct ibsm_view *v, int64_t tool_timeout_ms);

/*
 * Is the subnet up against the expectation?  A MASTER answers sminfo and
 * every link of expect (or, when expect is NULL, every port iblinkinfo
 * shows with a physical link) is Active with a LID.  false: why says the
 * first thing that is not (node, port, state).
 */
bool ibsm_subnet_up(const struct ibsm_view *v, const struct ibnet *expect, char *why, size_t whysz);

/*
 * Poll until ibsm_subnet_up() or the deadline (now_ms based), with backoff
 * from 50 ms to 500 ms.  alive (may be NULL) is checked between polls: an
 * SM that exited ends the wait early.  Returns 0 (up; v holds the last
 * view), -ETIMEDOUT or -ESRCH (alive said no), v->why set.
 */
int ibsm_wait_up(const struct ibsm_tools *t, const struct ibnet *expect, int64_t deadline_ms,
		 pid_t alive, struct ibsm_view *v);

/*
 * For a fabric no SM can bring up (a planted duplicated GUID): poll until
 * an SM answers sminfo and what the fabric shows (the SM's state, every
 * port's state) stayed the same over three polls 500 ms apart, or the
 * subnet is up.  0 settled, -ETIMEDOUT, -ESRCH as ibsm_wait_up.
 */
int ibsm_wait_answer(const struct ibsm_tools *t, int64_t deadline_ms, pid_t alive, struct ibsm_view *v);

/*
 * Run-state records (state_dir/ibsm-<writer pid>.run): one line per
 * daemon, "pid PID CMDLINE-HEX", and per scratch dir, "dir PATH".  Written
 * and fsynced before the daemon starts (the pid line after: spawn gives the
 * pid), removed when it is stopped.  state_dir NULL: no-op.
 */
int ibsm_record_dir(const char *state_dir, const char *dir);
int ibsm_record_pid(const char *state_dir, pid_t pid);
void ibsm_unrecord(const char *state_dir, const char *what);	/* "pid 123" or "dir /tmp/..." prefix */
/* Kill recorded daemons whose writer is gone (cmdline verified first), remove their dirs. */
int ibsm_cleanup_stale(const char *state_dir, struct sb *msgs);

#endif
