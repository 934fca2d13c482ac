/* SPDX-License-Identifier: MIT */
/*
 * A unit of work: one case placed on 1, 2 or N sides, each side a request
 * to an agent.  Every side is sent at once (the last first: a server's
 * listener is up sooner, and a client's out-of-band connect retries until
 * its deadline anyway) and waited on against one deadline, the case's
 * timeout and 10 s.  When a side ends, the others get a grace instead of
 * the rest of the timeout: 10 s after a side that answered ok (a finished
 * client leaves the server its teardown), 3 s after one that failed or
 * skipped (it leaves the others nothing to wait for); a side still out
 * then is cancelled and says so.  When a side's agent dies the others are
 * cancelled: their work means nothing without it.
 *
 * Then the answers become rows (rq_unit_rows): the rows of the sides that
 * report, with the first failure of a side that does not report (a
 * server) explaining them, and every row ERROR when a side's agent died.
 * A side that SKIPped (its node lacks the device, port or tool the case
 * needs) makes the unit's rows SKIP whichever side it was: a client could
 * not have measured anything against a server that never ran.
 * rq_rows_stamp is the one place rows get what the runner knows: target,
 * kind, file, node, log, duration, and a lab row's id.
 *
 * Plain runs (exec/sched.c: one unit at a time) and lab runs (lab/run.c:
 * up to --fanout units polled at once) both run cases through this file.
 * A unit has one side or two (a pair's client and server); a case that
 * spans nodes (a collective over N ranks) is a unit of one side, on the
 * first node, whose launcher (mpirun, srun) reaches the others.
 */
#ifndef RQ_EXEC_UNIT_H
#define RQ_EXEC_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/case.h"
#include "core/result.h"

struct json_t;
struct rq_agent;

struct rq_unit_side {
	/* set by the caller before rq_unit_start */
	struct rq_agent *ag;
	struct json_t *req;	/* the request to send (owned; freed once sent) */
	const char *label;	/* in reasons: "server", "rank 3"; NULL: one side alone */
	const char *node;	/* lab: the side's --nodes name, in reasons; else NULL */
	bool reports;		/* its rows are the unit's (else it only explains them) */
	/* the executor's */
	uint64_t id;		/* in flight; 0: not (any more) */
	struct json_t *ans;	/* its answer, or NULL */
	char why[1024];		/* why there is no answer */
	bool gone;		/* its agent died under the unit */
	bool graced_out;	/* cancelled at the end of another side's grace */
	uint64_t stopped;	/* a run cancelled and not yet confirmed gone (its id) */
	char leftover[256];	/* the agent could not confirm a stopped run gone: why */
};

struct rq_unit {
	const struct rq_case *c;
	size_t nsides;
	struct rq_unit_side *side;
	int64_t start, deadline;	/* now_ms() */
	bool running;			/* sent, not over */
	/* the deadline is a grace: grace_ms after side grace_side ended (ok or not, or skipped) */
	bool graced, grace_ok, grace_skip;
	size_t grace_side;
	int64_t grace_ms;
	/*
	 * Called when a side's agent is found dead (a failed send, EOF while
	 * waiting), before the others are cancelled; may rewrite side->why
	 * (a lab run names the node and marks it down).  NULL: why is the
	 * agent's dead_why.
	 */
	void (*gone)(struct rq_unit *u, size_t side, void *arg);
	void *arg;
};

/* A unit of n sides, all zero but c; every side reports until told otherwise. */
void rq_unit_init(struct rq_unit *u, const struct rq_case *c, size_t n);
/*
 * The out-of-band TCP port of this runner's n-th two-sided unit.  A unit
 * uses it and the two above it on its server (the CM listens on +1, a
 * command pair's or perftest's program on +2), so units are 7 apart and two
 * units of one run never share a port; the pid spreads two runners on one
 * host (two `make check`s) over the range 20000..39999.
 */
int rq_unit_oob_port(unsigned n);
/* The same for the runner pid (run --jobs: a worker's cases take the runner's ports). */
int rq_unit_oob_port_of(int pid, unsigned n);
void rq_unit_release(struct rq_unit *u);

/* Send every side's request.  false: the unit is already over (a side could not be sent). */
bool rq_unit_start(struct rq_unit *u);
/*
 * Take the answers that have arrived (after rq_agent_poll on the unit's
 * agents), notice dead agents, apply the grace and the deadline.  true
 * when the unit is over.
 */
bool rq_unit_poll(struct rq_unit *u);
/*
 * After the unit: wait, until deadline, for the answers to the runs it
 * cancelled.  The agent answers a stopped run once its worker and every
 * process group the run started are gone ("reaped"), or says what is left
 * ("leftover").  Returns how many sides are not confirmed clean, each with
 * its leftover set (no answer by the deadline, what the agent said is
 * left, or its agent died); such a side's node must not run a new unit
 * beside what the last one left.
 */
size_t rq_unit_settle(struct rq_unit *u, int64_t deadline);
/* How long rq_unit_settle is given: the agent's cleanup of a stopped run, its group kill, and slack. */
#define RQ_UNIT_SETTLE_MS 40000
/* Cancel every side still in flight, with why (an interrupt). */
void rq_unit_cancel(struct rq_unit *u, const char *why);
/*
 * The distinct agents of the sides still in flight, appended to a[have..max)
 * (an agent already in a[0..have) is not listed again: two sides of a
 * loopback pair share one).  Returns how many were added.
 */
size_t rq_unit_agents(const struct rq_unit *u, struct rq_agent **a, size_t have, size_t max);
/*
 * Run one unit to its end: start, then wait (calling tick about once a
 * second, for the run's reports), cancelling on an interrupt.
 */
void rq_unit_run(struct rq_unit *u, void (*tick)(void *), void *tick_arg);

/*
 * The unit's rows, appended to rows: each reporting side's rows from its
 * answer (or a row that says why there is none), explained by the first
 * side that does not report and did not pass; ERROR when a side's agent
 * died.  The sides' logs go to log (a side that does not report under a
 * "----- LABEL side -----" line).
 */
void rq_unit_rows(const struct rq_unit *u, struct rq_results *rows, struct sb *log);
/*
 * One answer (or its absence) as rows: "timed out after N s", "agent:
 * ERROR", "agent answered without rows", "agent sent a malformed row: ...".
 * Every row it adds has its verdict (a row sent undecided is finished from
 * what it judged).  The part rq_unit_rows does for each side; the fuzzer
 * feeds it forged answers.
 */
void rq_answer_rows(const struct rq_case *c, const struct json_t *ans, const char *failure,
		    struct rq_results *rows, struct sb *log);

/* A row with a verdict and a reason, for the case (no id suffix). */
struct rq_result *rq_verdict_row(const char *case_name, enum rq_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What the runner knows about rows, stamped onto each by rq_rows_stamp. */
struct rq_stamp {
	const char *target;		/* what the rows ran on */
	const char *target_why;		/* why that target */
	const char *node;		/* lab: the --nodes name (row node; id "case[node...]"), else NULL */
	const char *peer_node;		/* lab pairs: the server's node, else NULL */
	const char *hostname;		/* lab: the node's own hostname (fact node.hostname), else NULL */
	const char *id;			/* a pair's id for every row (replaces the kind's), else NULL */
	const struct sb *log;		/* the case log, put before what each row carried */
	double duration_s;		/* split over the rows that have none */
};
void rq_rows_stamp(struct rq_result *const *v, size_t n, const struct rq_case *c,
		   const struct rq_stamp *st);

#endif
