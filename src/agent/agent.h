/* SPDX-License-Identifier: MIT */
/*
 * The agent protocol, version 1: one JSON object per line, both ways, over
 * any byte stream (pipe, virtio-serial socket, ssh stdio).  Lines longer
 * than RQ_AGENT_LINE_MAX are rejected with an error answer and skipped.
 *
 * Requests (controller -> agent), each with "v":1 and a numeric "id":
 *   {"op":"hello"}                               -> {"agent":"rdmaqual","version":"..","proto":1}
 *   {"op":"facts"}                               -> {"facts":{"kernel":..,...}}
 *   {"op":"run","case":{..},"role":"single|server|client","target":"..",
 *    "timeout_ms":N,"timeout_mul":X,"where":{..},"root":"..","replay":B,
 *    "state_dir":"..","peer_addr":"..","local_addr":"..","oob_port":N,
 *    "env":["K=V"],"tool_cwd":".."}
 *                                                -> {"rows":[result...],"log":"..."}
 *       The run request: one struct with one JSON form, agent/request.h,
 *       which says what each field means; "case" is the case's wire form
 *       (core/case_wire.c).  Workers time a run at its timeout_mul.  Both
 *       ends are always the same build (a guest runs the host's binary over
 *       9p, a peer a copy checked by its SHA-256), so the case's form can
 *       change without a protocol version.
 *   {"op":"exec","argv":[..],"timeout_ms":N}      -> {"exit":N,"out":"..","err":".."}
 *   {"op":"cancel","target_id":N}                -> {} (the run answers with an error)
 *       A run stopped (cancelled, timed out) or whose worker died answers
 *       once the agent killed every process group it started and its
 *       cgroup's processes (contain.h) and waited for them: "reaped":true,
 *       or "leftover":"why" when one stayed.  What any run left running
 *       is killed before its answer and named in its rows
 *       (leftover_processes).
 *   {"op":"shutdown"}                            -> {} then the agent exits
 * Every answer carries the request's "id", "v":1 and "ok"; when ok is
 * false, "error" says why in one line.  Answers may come out of order:
 * runs are served by forked workers so both roles of a loopback case can
 * run in one agent at once.
 */
#ifndef RQ_AGENT_H
#define RQ_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/ctx.h"

#define RQ_AGENT_PROTO 1
#define RQ_AGENT_LINE_MAX (4u << 20)

struct json_t;

/* Facts about the machine the agent runs on (kernel, hostname, cpus, rdma-core). */
struct json_t *rq_agent_facts(void);

/* Serve requests from in_fd, answer on out_fd, until shutdown, EOF or SIGTERM. */
int rq_agent_serve(int in_fd, int out_fd);
/* The tool runner of replay requests (sysroot); see agent_serve.c. */
void rq_agent_set_replay(rq_tool_fn fn);
/*
 * Remove /tmp/rq-agent-<pid>-XXXXXX dirs of ours whose agent is gone: its
 * flock on <dir>/lock is free (a dir without one, from an older agent, by
 * its pid; older unnumbered ones when a day old); returns how many.  msgs
 * may be NULL.
 */
struct sb;
int rq_agent_sweep_stale(struct sb *msgs);

/* Controller side. */
struct rq_agent {
	char *label;		/* "local", "vm0", "peer:node2" */
	int rfd, wfd;
	pid_t pid;		/* process we started for it (agent, ssh), or -1 */
	uint64_t next_id;
	char *rbuf;		/* partial line buffer */
	size_t rlen, rcap;
	size_t blank;		/* bytes of empty lines since the last line: they count
				   against RQ_AGENT_LINE_MAX, else a node sending only
				   newlines is never dead and costs the controller CPU */
	struct json_t *stash;	/* answers that arrived for ids nobody waits on yet */
	struct json_t *inflight;	/* ids sent and not answered: only these are accepted */
	bool dead;		/* EOF or protocol breakage seen */
	char dead_why[256];
	char *peer_host, *peer_dir;	/* an ssh peer's copy of rdmaqual (agent_ssh.c) */
	/* Removes that copy when the peer's shell could not (set by the launcher). */
	void (*peer_remove)(const char *host, const char *dir);
	/* ssh's stderr reader (agent_ssh.c): ended by rq_agent_close once ssh has gone */
	void *err_pump;
	void (*err_pump_end)(void *pump);
};

/* Fork+exec `self_exe agent --stdio` with pipes. */
struct rq_agent *rq_agent_spawn(const char *self_exe, const char *label, char *err, size_t errsz);
/* Wrap a connected fd pair (sockets to a VM's virtio-serial, ssh pipes). */
struct rq_agent *rq_agent_attach(int rfd, int wfd, pid_t pid, const char *label);
void rq_agent_close(struct rq_agent *a);	/* kills pid's group if any */

/* Send a request (adds v and id); returns the id or 0 on failure. */
uint64_t rq_agent_send(struct rq_agent *a, struct json_t *req);
/*
 * Wait for the answer to id until deadline (now_ms based).  Answers for
 * other ids that arrive meanwhile are dropped (only one request per agent is
 * outstanding in practice, except loopback two-sided cases; for those use
 * rq_agent_wait_any).  Returns the answer (caller json_decref) or NULL with
 * why set (timeout, EOF, garbage).
 */
struct json_t *rq_agent_wait(struct rq_agent *a, uint64_t id, int64_t deadline_ms,
			     char *why, size_t whysz);
/*
 * Wait for whichever of n (agent, id) pairs answers first.  Returns the
 * index answered (answer in *resp), or -1 on deadline/failure with why.
 */
int rq_agent_wait_any(struct rq_agent **a, const uint64_t *ids, int n, int64_t deadline_ms,
		      struct json_t **resp, char *why, size_t whysz);
/*
 * Many agents at once (lab runs): wait until one of the n agents (NULL
 * entries skipped) has sent something or is dead, or until deadline_ms,
 * reading whatever is there (each agent at most once in a: the channel is
 * read once per wake-up, and a second read would block).  0 when something may have arrived (look with
 * rq_agent_take, and at ->dead), -1 at the deadline, -2 on an interrupt.
 */
int rq_agent_poll(struct rq_agent **a, size_t n, int64_t deadline_ms);
/* The answer to id if it has arrived (caller json_decref), else NULL. */
struct json_t *rq_agent_take(struct rq_agent *a, uint64_t id);
/*
 * The process-wide local agent (a forked `rdmaqual agent --stdio`), shared
 * by the local, hca, sysroot, ibsim and rxe-host targets; started on first
 * use, and replaced by a fresh one when it died (targets ask again for
 * every case, so one broken case never costs the next).
 */
struct rq_agent *rq_agent_local(const char *self_exe, char *err, size_t errsz);
void rq_agent_local_close(void);
/* Is a the local agent (on this node, so it shares the node's run-state dir)? */
bool rq_agent_is_local(const struct rq_agent *a);
/*
 * A second node: copy this build to HOST if it is not there yet, start
 * `ssh HOST .../rdmaqual agent --stdio` and greet it (agent_ssh.c).
 * ssh's stderr (its own words and the node's) never reaches our terminal
 * raw: each line is shown on stderr through term_safe, named by the peer,
 * and its bytes go as they came to log_path (appended; NULL: none).
 */
struct rq_agent *rq_agent_ssh(const char *host, const char *self_exe, const char *log_path,
			      char *err, size_t errsz);
/* Nonzero when HOST can go to ssh as a host (no leading '-', no blanks or quotes). */
int rq_ssh_host_ok(const char *host);
/* The IPv4 address ssh would connect to for HOST (ssh_config aliases applied). */
int rq_ssh_resolve4(const char *host, char *buf, size_t size);
/* Remove a peer's copy dir over ssh (bounded, best effort). */
void rq_ssh_peer_remove(const char *host, const char *dir);
/* Cancel a request: the agent kills its worker and answers it with an error. */
void rq_agent_cancel(struct rq_agent *a, uint64_t id);

/* One-shot request/answer. */
struct json_t *rq_agent_call(struct rq_agent *a, struct json_t *req, int64_t timeout_ms,
			     char *why, size_t whysz);

#endif
