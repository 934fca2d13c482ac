/* SPDX-License-Identifier: MIT */
/*
 * The run request: everything an agent needs to run one role of one case,
 * as one struct with one JSON form (request.c).  The controller fills it
 * (rq_request_init, then rq_request_place for where it runs) and sends
 * rq_request_to_json(); the agent's worker turns the line back into the
 * same struct with rq_request_from_json(), which loads the case once.
 *
 * Its JSON (the "run" op of agent.h):
 *   "case"        the case in its wire form (core/case.h: rq_case_wire)
 *   "role"        "single" | "server" | "client"
 *   "target"      target name as reported ("rxe-vm", "sysroot:DIR", ...)
 *   "timeout_ms"  the case's time, already scaled; the deadline is this
 *                 long after the agent reads the request (clocks of a VM
 *                 or a peer are not the controller's)
 *   "timeout_mul" --timeout-mul: the agent's worker scales every tool
 *                 timeout and every wait of the kind by it
 *   "where"       where it runs, for the kind (core/where.h's wire form)
 *   "root", "replay"            sysroot: the tree, and replay tools
 *   "state_dir"                 the node's run-state dir (local agent)
 *   "peer_addr", "local_addr"   IPv4 addresses of a two-sided case
 *   "oob_port"                  its out-of-band TCP port
 *   "env", "tool_cwd"           tools' extra environment and cwd (ibsim)
 * Fields that are unset are left out.
 */
#ifndef RQ_AGENT_REQUEST_H
#define RQ_AGENT_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include "core/case.h"
#include "core/ctx.h"
#include "core/target.h"

struct json_t;

struct rq_request {
	const struct rq_case *c;
	enum rq_role role;
	const char *target;
	int64_t timeout_ms;		/* scaled */
	double timeout_mul;
	struct rq_where where;		/* owned: a copy of the placement's, or decoded */
	const char *root;		/* NULL or "": the live system */
	bool replay;
	const char *state_dir;
	const char *peer_addr, *local_addr;
	int oob_port;
	const char *const *env;		/* NULL-terminated, or NULL */
	const char *tool_cwd;
	/* case keys the runner sets for this run (a lab pair's rail: devices, port) */
	struct {
		const char *key, *text;
	} set[4];
	size_t nset;

	/* rq_request_from_json(): what the strings above point into */
	struct json_t *json;
	struct rq_suite suite;		/* the loaded case (c) */
	const char **env_owned;		/* env, when from_json allocated it */
};

/*
 * A request for role of case c on target: its timeout scaled by and the
 * multiplier set from rq_timeout_mul; everything else unset.
 */
void rq_request_init(struct rq_request *r, const struct rq_case *c, const char *target,
		     enum rq_role role);
/*
 * Where it runs: side (0: single or client, 1: server) of placement p.
 * The placement's where is copied in, with the run-wide switches every
 * kind may consult (allow_sm_takeover).  state_dir: the node's run-state
 * dir when the side is this node's agent, else NULL.
 */
void rq_request_place(struct rq_request *r, const struct rq_placement *p, int side,
		      int oob_port, const char *state_dir, bool allow_sm_takeover);
/*
 * Run the case with key set to text (as if the file said so, without a
 * position): a lab pair gives each side its own rail's device and port.
 */
void rq_request_set_key(struct rq_request *r, const char *key, const char *text);
/* The "run" op's JSON (without v and id, which rq_agent_send adds). */
struct json_t *rq_request_to_json(const struct rq_request *r);
/*
 * Parse a "run" request and load its case (errors in diags, at the case
 * file's positions).  0, or -1 with why.  Call rq_request_release either way.
 */
int rq_request_from_json(struct rq_request *r, struct json_t *j, struct rq_diags *diags,
			 char *why, size_t whysz);
void rq_request_release(struct rq_request *r);

const char *rq_role_name(enum rq_role role);

#endif
