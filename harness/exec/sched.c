/* SPDX-License-Identifier: MIT */
/*
 * Running one case: choose its target, open the target once, place the
 * case, send it to the agent(s) of the placement with a deadline, and turn
 * whatever comes back (rows, an error, silence) into rows.  Two-sided cases
 * send the server role and the client role at once (the client's
 * out-of-band connect retries until its deadline, so there is no "sleep to
 * let the server bind"); when one side fails the other is cancelled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "agent/request.h"
#include "core/kind.h"
#include "core/proc.h"
#include "exec/sched.h"


static struct rq_target *target_get(struct sched *s, const char *name, char *err, size_t errsz)
{
	const char *colon = strchr(name, ':');
	char base[64];
	const struct rq_target_ops *ops;
	struct rq_target *t;

	for (size_t i = 0; i < s->ntargets; i++)
		if (!strcmp(s->targets[i]->name, name))
			return s->targets[i];
	snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
	ops = rq_target_ops_find(base);
	if (!ops) {
		snprintf(err, errsz, "target %s is not built into this rdmaqual", base);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->ops = ops;
	t->name = xstrdup(name);
	t->arg = colon ? xstrdup(colon + 1) : NULL;
	t->opts = s->opts;
	s->targets = xrealloc(s->targets, (s->ntargets + 1) * sizeof(*s->targets));
	s->targets[s->ntargets++] = t;
	return t;
}

bool sched_choose(struct sched *s, const struct rq_case *c, char *name, size_t namesz,
		  char *why, size_t whysz)
{
	return rq_target_choose(c, s->opts, name, namesz, why, whysz);
}

static struct rq_result *error_row(const struct rq_case *c, enum rq_verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static struct rq_result *error_row(const struct rq_case *c, enum rq_verdict v, const char *fmt, ...)
{
	struct rq_result *r = rq_result_new(c->name, NULL, 0);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq_result_set(r, v, "%s", msg);
	return r;
}

/*
 * rq_agent_wait_any() in slices of a second, calling s->tick between them;
 * the same answer and the same deadline as one wait.
 */
static int wait_ticking(struct sched *s, struct rq_agent **a, const uint64_t *ids, int n,
			int64_t deadline, json_t **resp, char *why, size_t whysz)
{
	for (;;) {
		int64_t slice = now_ms() + 1000;
		int r = rq_agent_wait_any(a, ids, n, s->tick && slice < deadline ? slice : deadline,
					  resp, why, whysz);

		bool waiting = false;

		if (r != -1 || !s->tick || now_ms() >= deadline)
			return r;
		for (int i = 0; i < n; i++) {
			if (ids[i] && a[i]->dead)
				return r;
			waiting |= ids[i] != 0;
		}
		if (!waiting)
			return r;
		s->tick(s->tick_arg);
	}
}

/* The run request for one side of a placed case, as JSON to send. */
static json_t *build_request(struct sched *s, const struct rq_case *c, const char *tname,
			     const struct rq_placement *p, enum rq_role role, int side, int port)
{
	struct rq_request r;
	/* the node's run-state dir only to an agent on this node */
	bool local = p->side[side] && rq_agent_is_local(p->side[side]);
	json_t *j;

	rq_request_init(&r, c, tname, role);
	rq_request_place(&r, p, side, port, local ? s->opts->state_dir : NULL,
			 s->opts->allow_sm_takeover);
	j = rq_request_to_json(&r);
	rq_request_release(&r);
	return j;
}

/* Turn one answer into rows; log text goes into each row. */
static void answer_rows(const struct rq_case *c, json_t *ans, const char *failure,
			struct rq_results *rows, struct sb *log)
{
	json_t *jrows = ans ? json_object_get(ans, "rows") : NULL;
	json_t *jlog = ans ? json_object_get(ans, "log") : NULL;
	char err[256];

	if (json_is_string(jlog))
		sb_add(log, json_string_value(jlog), json_string_length(jlog));
	if (!ans) {
		rq_results_add(rows, error_row(c, RQ_ERROR, "%s", failure));
		return;
	}
	if (!json_is_true(json_object_get(ans, "ok"))) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		if (e && !strcmp(e, "timed out"))
			rq_results_add(rows, error_row(c, RQ_ERROR, "timed out after %.1f s",
						       scaled_ms(c->timeout_ms) / 1000.0));
		else
			rq_results_add(rows, error_row(c, RQ_ERROR, "agent: %s",
						       e ? e : "failed without a reason"));
		return;
	}
	if (!json_is_array(jrows) || json_array_size(jrows) == 0) {
		rq_results_add(rows, error_row(c, RQ_ERROR, "agent answered without rows"));
		return;
	}
	for (size_t i = 0; i < json_array_size(jrows); i++) {
		struct rq_result *r = rq_result_from_json(json_array_get(jrows, i), err, sizeof(err));

		if (!r)
			r = error_row(c, RQ_ERROR, "agent sent a malformed row: %s", err);
		rq_results_add(rows, r);
	}
}

static bool rows_pass(const struct rq_results *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i]->verdict != RQ_PASS)
			return false;
	return rows->n > 0;
}

static const char *first_reason(const struct rq_results *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i]->verdict != RQ_PASS && rows->v[i]->reason)
			return rows->v[i]->reason;
	return "no reason given";
}

static void run_one_sided(struct sched *s, const struct rq_case *c, const char *tname,
			  struct rq_placement *p, struct rq_results *rows, struct sb *log)
{
	int64_t deadline = now_ms() + scaled_ms(c->timeout_ms) + scaled_ms(10000);
	json_t *req = build_request(s, c, tname, p, ROLE_SINGLE, 0, 0);
	uint64_t id = rq_agent_send(p->side[0], req);
	char why[512] = "";
	json_t *ans = NULL;

	json_decref(req);
	if (!id) {
		answer_rows(c, NULL, p->side[0]->dead_why, rows, log);
		return;
	}
	int r = wait_ticking(s, &p->side[0], &id, 1, deadline, &ans, why, sizeof(why));

	if (r == -2) {
		rq_agent_cancel(p->side[0], id);
		snprintf(why, sizeof(why), "interrupted by signal %d", (int)rq_interrupted);
	} else if (r < 0 && !p->side[0]->dead) {
		/* The agent itself is wedged: make sure its worker goes. */
		rq_agent_cancel(p->side[0], id);
	}
	answer_rows(c, ans, why, rows, log);
	json_decref(ans);
}

static void run_two_sided(struct sched *s, const struct rq_case *c, const char *tname,
			  struct rq_placement *p, struct rq_results *rows, struct sb *log)
{
	int port = 20000 + (int)((getpid() * 37u + s->case_seq++ * 7u) % 20000u);
	int64_t deadline = now_ms() + scaled_ms(c->timeout_ms) + scaled_ms(10000);
	struct rq_agent *ag[2] = { p->side[1], p->side[0] };	/* server, client */
	uint64_t ids[2] = { 0, 0 };
	json_t *ans[2] = { NULL, NULL };
	char why[2][512] = { "", "" };
	struct rq_results srows = { 0 };
	struct sb slog = SB_INIT;

	for (int i = 0; i < 2; i++) {
		json_t *req = build_request(s, c, tname, p, i ? ROLE_CLIENT : ROLE_SERVER,
					     i ? 0 : 1, port);

		ids[i] = rq_agent_send(ag[i], req);
		json_decref(req);
		if (!ids[i])
			snprintf(why[i], sizeof(why[i]), "%s", ag[i]->dead_why);
	}
	while (ids[0] || ids[1]) {
		json_t *a = NULL;
		char w[512] = "";
		int k = wait_ticking(s, ag, ids, 2, deadline, &a, w, sizeof(w));

		if (k < 0) {
			for (int i = 0; i < 2; i++)
				if (ids[i]) {
					rq_agent_cancel(ag[i], ids[i]);
					snprintf(why[i], sizeof(why[i]), "%s", k == -2 ?
						 "interrupted" : w);
					ids[i] = 0;
				}
			break;
		}
		ans[k] = a;
		ids[k] = 0;
		int other = !k;

		if (!ids[other])
			continue;
		/*
		 * One side is done, so the other should be too, soon: a client
		 * that finished leaves the server only its teardown, and a side
		 * that failed leaves the other nothing to wait for.  Either way
		 * the survivor gets a short grace, not the rest of the timeout.
		 */
		bool ok = json_is_true(json_object_get(a, "ok"));
		int64_t grace = now_ms() + scaled_ms(ok ? 10000 : 3000);

		if (grace < deadline)
			deadline = grace;
	}
	answer_rows(c, ans[1], why[1][0] ? why[1] : "client side did not answer", rows, log);
	answer_rows(c, ans[0], why[0][0] ? why[0] : "server side did not answer", &srows, &slog);
	if (slog.len) {
		sb_adds(log, "\n----- server side -----\n");
		sb_add(log, slog.buf, slog.len);
	}
	/* A server that failed explains a client failure better than the client can. */
	if (!rows_pass(&srows)) {
		const char *sr = first_reason(&srows);

		for (size_t i = 0; i < rows->n; i++) {
			struct rq_result *r = rows->v[i];

			if (r->verdict == RQ_PASS) {
				free(r->reason);
				r->reason = NULL;
				r->verdict = RQ_NONE;
				rq_result_set(r, srows.v[0]->verdict == RQ_SKIP ? RQ_SKIP : RQ_FAIL,
					      "server side: %s", sr);
			} else {
				char *nr = xasprintf("%s (server side: %s)", r->reason ? r->reason : "", sr);

				free(r->reason);
				r->reason = nr;
			}
		}
	}
	rq_results_release(&srows);
	sb_release(&slog);
	json_decref(ans[0]);
	json_decref(ans[1]);
}

void sched_run_case(struct sched *s, const struct rq_case *c, struct rq_results *out)
{
	char tname[256], why[512], err[512] = "";
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_target *t = NULL;
	struct rq_placement p = { 0 };
	int64_t start = now_ms();
	bool placed = false;

	if (!sched_choose(s, c, tname, sizeof(tname), why, sizeof(why))) {
		/* A forced target the case does not list, or nothing usable: not a failure. */
		rq_results_add(&rows, error_row(c, RQ_SKIP, "%s", why));
		snprintf(tname, sizeof(tname), "none");
		goto done;
	}
	t = target_get(s, tname, err, sizeof(err));
	if (!t) {
		rq_results_add(&rows, error_row(c, RQ_ERROR, "%s", err));
		goto done;
	}
	if (!t->opened && !t->open_err) {
		int64_t t0 = now_ms();

		sb_addf(&log, "# opening target %s\n", tname);
		t->open_err = t->ops->open ? t->ops->open(t, t->open_msg, sizeof(t->open_msg)) : 0;
		if (t->open_err && !t->open_msg[0])
			snprintf(t->open_msg, sizeof(t->open_msg), "open failed (%d)", t->open_err);
		t->opened = !t->open_err;
		/* A VM boot is the target's cost, not the first case's: time it apart. */
		sb_addf(&log, "# target %s %s in %.1f s\n", tname,
			t->opened ? "opened" : "failed to open", (now_ms() - t0) / 1000.0);
		start = now_ms();
	}
	if (t->open_err) {
		/* Remembered: a VM that did not boot is not retried for every case. */
		rq_results_add(&rows, error_row(c, RQ_ERROR, "target %s: %s", tname, t->open_msg));
		goto done;
	}
	if (t->ops->place(t, c, &p, err, sizeof(err))) {
		rq_results_add(&rows, error_row(c, RQ_ERROR, "target %s: %s", tname,
						err[0] ? err : "cannot place the case"));
		goto done;
	}
	placed = true;
	if (c->kind->two_sided)
		run_two_sided(s, c, tname, &p, &rows, &log);
	else
		run_one_sided(s, c, tname, &p, &rows, &log);
done:
	if (placed && t->ops->unplace)
		t->ops->unplace(t, c, &p, &rows);
	if (placed) {
		json_decref(p.param);
		if (p.env)
			for (size_t i = 0; p.env[i]; i++)
				free(p.env[i]);
		free(p.env);
		free(p.tool_cwd);
	}
	double dur = (now_ms() - start) / 1000.0;

	for (size_t i = 0; i < rows.n; i++) {
		struct rq_result *r = rows.v[i];

		free(r->target);
		r->target = xstrdup(tname);
		free(r->target_why);
		r->target_why = xstrdup(why);
		free(r->kind);
		r->kind = xstrdup(c->kind->name);
		free(r->file);
		r->file = xstrdup(c->file ? c->file : "");
		if (r->duration_s <= 0)
			r->duration_s = dur / (double)rows.n;
		/* The case log first, then what the row carried (unplace: console tails, kernel log). */
		struct sb rowlog = r->log;

		sb_init(&r->log);
		sb_add(&r->log, log.buf, log.len);
		sb_add(&r->log, rowlog.buf, rowlog.len);
		sb_release(&rowlog);
		if (r->verdict == RQ_NONE)
			rq_result_finish(r);
		rq_results_add(out, r);
	}
	free(rows.v);
	sb_release(&log);
}

void sched_facts(struct sched *s, struct rq_result *sink)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i]->opened && s->targets[i]->ops->facts)
			s->targets[i]->ops->facts(s->targets[i], sink);
}

void sched_close(struct sched *s)
{
	for (size_t i = s->ntargets; i-- > 0;) {
		struct rq_target *t = s->targets[i];

		if (t->opened && t->ops->close)
			t->ops->close(t);
		free(t->name);
		free(t->arg);
		free(t);
	}
	free(s->targets);
	s->targets = NULL;
	s->ntargets = 0;
	rq_agent_local_close();
}
