/* SPDX-License-Identifier: MIT */
/* Lab runs: what lab.c, run.c and report.c share. */
#ifndef RQ_CLUSTER_INT_H
#define RQ_CLUSTER_INT_H

#include <stdint.h>
#include <jansson.h>
#include "exec/journal.h"
#include "lab/lab.h"
#include "cluster/hostlist.h"
#include "cluster/plan.h"

enum launcher { LAUNCH_SSH, LAUNCH_SLURM, LAUNCH_LOCAL };

/* One port of a node, as its rdma_links row reported it: rail i pairs with rail i. */
struct rail {
	char dev[64];
	int port;
	char ipv4[64];
	char gid[64];
};

struct cnode {
	char *name;		/* as --nodes wrote it: ids, drain list */
	char *hostname;		/* what the node says its hostname is: a fact, never an id */
	char *exe;		/* the rdmaqual serving there: installed, or our copy */
	long same_host;		/* index of an earlier node reporting this hostname, or -1 */
	char *root;		/* local launcher with a sysroot: its tree, else NULL */
	char *target;		/* what its rows say they ran on */
	struct rq_agent *ag;
	bool down;		/* unreachable, or gone during the run */
	char down_why[400];
	char mgmt[64];		/* the address the out-of-band exchange uses */
	struct rail *rails;
	size_t nrails;
	bool rails_known;
	char rails_why[512];	/* why they are not known */
	unsigned fails;		/* node-local rows that failed or errored */
	unsigned poll_epoch;	/* run_units: already in this round's poll set */
	char *first_fail;
	char *launch_log;	/* srun's or ssh's stderr, logs/srun-NODE.log, logs/ssh-NODE.log */
};

/* A two-sided case's pairs, for the matrix and the suspects. */
struct cpair {
	const struct rq_case *c;
	uint32_t client, server;
	unsigned round;
	enum rq_verdict verdict;	/* worst over the rails (PASS < SKIP < FAIL < ERROR) */
	bool has_fig;
	double fig;			/* the weakest rail's main figure (--repeat: the rounds' median) */
	double *rounds;			/* --repeat: each earlier round's figure */
	size_t nrounds;
	unsigned fig_repeat;		/* the round fig is of */
	bool soft;			/* its rows ran on a software device (rxe, siw) */
	char fig_name[48], unit[16];
	char *what;			/* "case[a:d/p->b:d/p]: reason" of its worst row */
};

struct cluster {
	struct cluster_opts co;
	unsigned repeat;		/* the round of --repeat being run (1..N); 0: not repeating */
	const struct rq_run_opts *o;
	enum launcher launcher;
	struct rq_hosts hosts;
	struct cnode *nodes;
	size_t n;
	struct rq_pairs_policy policy;
	const char *policy_text;
	char *sysroot;			/* --target sysroot:DIR with the local launcher */
	/* launching */
	bool launched;
	void *pool;			/* the launcher threads (lab.c) */
	/* running */
	bool rails_done;		/* every node's rails asked for (once a run) */
	unsigned port_seq;
	unsigned poll_epoch;
	struct rq_journal journal;	/* resume: its done units too */
	struct cpair *pairs;
	size_t npairs;
	const struct rq_case **pair_cases;	/* two-sided cases run, in order */
	size_t npair_cases;
	double plan_ms;			/* planning time of the rounds, all cases */
	size_t units;			/* node-cases sent to agents (pair rails count once) */
};

/* lab.c */
void cluster_launch(struct cluster *cl);
void cluster_node_down(struct cluster *cl, struct cnode *nd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cluster_journal_open(struct cluster *cl, const char *run_dir);
void cluster_journal_unit(struct cluster *cl, const char *key, const struct rq_results *rows,
			  size_t first);
/*
 * --resume: a unit the journal has; its rows go to out and sink when every
 * one is of the plan's unit: case case_name on node (NULL: the controller),
 * against peer (NULL: none).  Else false, after saying why: it runs again.
 */
bool cluster_resume_unit(struct cluster *cl, const char *key, const char *case_name,
			 const char *node, const char *peer, struct rq_results *out,
			 const struct rq_run_sink *sink);
bool cluster_runs_on_nodes(const struct rq_case *c);
bool cluster_case_is_pairs(const struct rq_case *c);
/* The rounds of a case's policy (its pairs:, else the run's --pairs); -1 with err. */
int cluster_case_rounds(struct cluster *cl, const struct rq_case *c, struct rq_rounds *r,
			char *err, size_t errsz);
const char *cluster_case_policy(const struct cluster *cl, const struct rq_case *c);
/* run.c (and cluster_run, lab.h) */
const struct rq_figure *cluster_main_figure(const struct rq_result *r);
bool cluster_higher_better(const char *unit);

#endif
