/* SPDX-License-Identifier: MIT */
/* One case on 1, 2 or N agents, and its answers as rows (exec/unit.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/proc.h"
#include "core/term.h"
#include "exec/unit.h"

/* A side ended: the others get a short grace, not the rest of the timeout. */
#define GRACE_OK_MS	10000
#define GRACE_FAIL_MS	3000
/* The agent kills a case at its timeout; this long after, the agent itself is wedged. */
#define LATE_MS		10000

int rq_unit_oob_port_of(int pid, unsigned n)
{
	return 20000 + (int)(((unsigned)pid * 37u + n * 7u) % 20000u);
}

int rq_unit_oob_port(unsigned n)
{
	return rq_unit_oob_port_of((int)getpid(), n);
}

void rq_unit_init(struct rq_unit *u, const struct rq_case *c, size_t n)
{
	*u = (struct rq_unit){ .c = c, .nsides = n, .side = xcalloc(n ? n : 1, sizeof(*u->side)) };
	for (size_t s = 0; s < n; s++)
		u->side[s].reports = true;
}

void rq_unit_release(struct rq_unit *u)
{
	for (size_t s = 0; s < u->nsides; s++) {
		json_decref(u->side[s].req);
		json_decref(u->side[s].ans);
	}
	free(u->side);
	u->side = NULL;
	u->nsides = 0;
}

static const char *side_name(const struct rq_unit_side *sd, char *buf, size_t size)
{
	if (sd->label)
		snprintf(buf, size, "the %s side", sd->label);
	else
		snprintf(buf, size, "the agent");
	return buf;
}

/* In reasons: "server side", or "server side on node n2" in a lab run. */
static const char *side_ref(const struct rq_unit_side *sd, char *buf, size_t size)
{
	const char *label = sd->label ? sd->label : "other";

	if (sd->node)
		snprintf(buf, size, "%s side on node %s", label, sd->node);
	else
		snprintf(buf, size, "%s side", label);
	return buf;
}

/*
 * Did the side skip: answered ok with rows, every one SKIP?  It lacked
 * what the case needs (a device, a port, a tool) and ran nothing, so its
 * partners have nothing to wait for.
 */
static bool answer_skipped(const json_t *ans)
{
	const json_t *rows = json_object_get(ans, "rows"), *r;
	size_t i;

	if (!json_is_true(json_object_get(ans, "ok")) || !json_array_size(rows))
		return false;
	json_array_foreach(rows, i, r) {
		const char *v = json_string_value(json_object_get(r, "verdict"));

		if (!v || strcmp(v, "SKIP"))
			return false;
	}
	return true;
}

static void side_gone(struct rq_unit *u, size_t s)
{
	struct rq_unit_side *sd = &u->side[s];

	sd->gone = true;
	sd->id = 0;
	snprintf(sd->why, sizeof(sd->why), "%s",
		 !sd->ag ? "no agent" : sd->ag->dead ? sd->ag->dead_why : "cannot send to the agent");
	if (u->gone)
		u->gone(u, s, u->arg);
}

/* What an agent's answer to a stopped run says about its processes. */
static void note_stopped(struct rq_unit_side *sd, const json_t *a)
{
	const char *left = json_string_value(json_object_get(a, "leftover"));

	/* it ended on its own before the cancel came: its tools went with it */
	if (json_is_true(json_object_get(a, "ok")))
		return;
	if (left)
		snprintf(sd->leftover, sizeof(sd->leftover), "%s", left);
	else if (!json_is_true(json_object_get(a, "reaped")))
		snprintf(sd->leftover, sizeof(sd->leftover),
			 "the agent did not confirm the stopped run's processes gone");
}

static void cancel_side(struct rq_unit_side *sd, const char *why)
{
	if (!sd->id)
		return;
	rq_agent_cancel(sd->ag, sd->id);
	sd->stopped = sd->id;
	sd->id = 0;
	snprintf(sd->why, sizeof(sd->why), "%s", why);
}

/* Every side still out is cancelled: a side's agent died, its partners' work means nothing. */
static void cancel_for_gone(struct rq_unit *u, size_t s)
{
	char name[128], why[256];

	snprintf(why, sizeof(why), "cancelled: %s's agent is gone",
		 side_name(&u->side[s], name, sizeof(name)));
	for (size_t o = 0; o < u->nsides; o++)
		cancel_side(&u->side[o], why);
}

bool rq_unit_start(struct rq_unit *u)
{
	u->start = now_ms();
	u->deadline = u->start + scaled_ms(u->c->timeout_ms) + scaled_ms(LATE_MS);
	u->graced = false;
	/* The last side first: servers are placed after their clients. */
	for (size_t s = u->nsides; s-- > 0;) {
		struct rq_unit_side *sd = &u->side[s];

		sd->id = sd->ag && sd->req ? rq_agent_send(sd->ag, sd->req) : 0;
		json_decref(sd->req);
		sd->req = NULL;
		if (!sd->id) {
			side_gone(u, s);
			cancel_for_gone(u, s);
			return false;
		}
	}
	u->running = true;
	return true;
}

bool rq_unit_poll(struct rq_unit *u)
{
	int64_t now = now_ms();
	size_t gone = u->nsides;
	bool out = false;

	for (size_t s = 0; s < u->nsides; s++) {
		struct rq_unit_side *sd = &u->side[s];
		json_t *a;

		if (!sd->id)
			continue;
		if ((a = rq_agent_take(sd->ag, sd->id))) {
			sd->ans = a;
			sd->id = 0;
			/* the agent stopped it at its timeout: what did that leave? */
			if (!json_is_true(json_object_get(a, "ok")) &&
			    (json_object_get(a, "reaped") || json_object_get(a, "leftover")))
				note_stopped(sd, a);
			bool skip = answer_skipped(a);
			bool ok = json_is_true(json_object_get(a, "ok")) && !skip;
			int64_t grace = now + scaled_ms(ok ? GRACE_OK_MS : GRACE_FAIL_MS);

			if (grace < u->deadline) {
				u->deadline = grace;
				u->graced = true;
				u->grace_side = s;
				u->grace_ok = ok;
				u->grace_skip = skip;
				u->grace_ms = grace - now;
			}
		} else if (sd->ag->dead) {
			side_gone(u, s);
			if (gone == u->nsides)
				gone = s;
		}
	}
	if (gone < u->nsides)
		cancel_for_gone(u, gone);
	for (size_t s = 0; s < u->nsides; s++)
		out = out || u->side[s].id;
	if (out && now >= u->deadline) {
		char why[512], name[128];

		if (u->graced)
			snprintf(why, sizeof(why), "cancelled %.1f s after %s %s", u->grace_ms / 1000.0,
				 side_name(&u->side[u->grace_side], name, sizeof(name)),
				 u->grace_ok ? "finished" : u->grace_skip ? "skipped" : "failed");
		for (size_t s = 0; s < u->nsides; s++) {
			struct rq_unit_side *sd = &u->side[s];

			if (!u->graced)
				snprintf(why, sizeof(why), "timed out after %.1f s: agent %s did not answer",
					 (now - u->start) / 1000.0, sd->ag->label);
			if (sd->id && u->graced)
				sd->graced_out = true;
			cancel_side(sd, why);
		}
		out = false;
	}
	if (!out)
		u->running = false;
	return !out;
}

size_t rq_unit_settle(struct rq_unit *u, int64_t deadline)
{
	struct rq_agent **ags = xcalloc(u->nsides ? u->nsides : 1, sizeof(*ags));
	int64_t t0 = now_ms();
	size_t bad = 0;
	bool intr = false;

	for (;;) {
		size_t n = 0;

		for (size_t s = 0; s < u->nsides; s++) {
			struct rq_unit_side *sd = &u->side[s];
			json_t *a;

			if (!sd->stopped)
				continue;
			if ((a = rq_agent_take(sd->ag, sd->stopped))) {
				note_stopped(sd, a);
				json_decref(a);
				sd->stopped = 0;
			} else if (sd->ag->dead) {
				snprintf(sd->leftover, sizeof(sd->leftover), "%s", sd->ag->dead_why);
				sd->stopped = 0;
			} else {
				bool seen = false;

				for (size_t i = 0; i < n && !seen; i++)
					seen = ags[i] == sd->ag;
				if (!seen)
					ags[n++] = sd->ag;
			}
		}
		if (!n || now_ms() >= deadline)
			break;
		if (rq_agent_poll(ags, n, deadline) == -2) {
			intr = true;
			break;
		}
	}
	for (size_t s = 0; s < u->nsides; s++) {
		struct rq_unit_side *sd = &u->side[s];

		if (sd->stopped) {
			if (intr)
				snprintf(sd->leftover, sizeof(sd->leftover),
					 "interrupted before its stopped run was confirmed gone");
			else
				snprintf(sd->leftover, sizeof(sd->leftover),
					 "its stopped run was not confirmed gone within %.1f s",
					 (deadline - t0) / 1000.0);
			sd->stopped = 0;
		}
		bad += sd->leftover[0] != '\0';
	}
	free(ags);
	return bad;
}

void rq_unit_cancel(struct rq_unit *u, const char *why)
{
	for (size_t s = 0; s < u->nsides; s++)
		cancel_side(&u->side[s], why);
	u->running = false;
}

size_t rq_unit_agents(const struct rq_unit *u, struct rq_agent **a, size_t have, size_t max)
{
	size_t n = have;

	for (size_t s = 0; s < u->nsides && n < max; s++) {
		bool seen = false;

		if (!u->side[s].id)
			continue;
		for (size_t i = 0; i < n && !seen; i++)
			seen = a[i] == u->side[s].ag;
		if (!seen)
			a[n++] = u->side[s].ag;
	}
	return n - have;
}

void rq_unit_run(struct rq_unit *u, void (*tick)(void *), void *tick_arg)
{
	struct rq_agent **ags = xcalloc(u->nsides ? u->nsides : 1, sizeof(*ags));
	int64_t ticked = now_ms();

	if (!rq_unit_start(u))
		goto out;
	while (!rq_unit_poll(u)) {
		size_t n = rq_unit_agents(u, ags, 0, u->nsides);
		int64_t now = now_ms(), until = u->deadline;

		/* slices of a second while the reports want ticks; the same deadline */
		if (tick && now + 1000 < until)
			until = now + 1000;
		if (rq_agent_poll(ags, n, until) == -2) {
			char why[64];

			snprintf(why, sizeof(why), "interrupted by signal %d", (int)rq_interrupted);
			rq_unit_cancel(u, why);
			break;
		}
		if (tick && now_ms() - ticked >= 1000) {
			ticked = now_ms();
			tick(tick_arg);
		}
	}
out:
	free(ags);
}

/* ---- answers -> rows ------------------------------------------------ */

struct rq_result *rq_verdict_row(const char *case_name, enum rq_verdict v, const char *fmt, ...)
{
	struct rq_result *r = rq_result_new(case_name, NULL, 0);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rq_result_set(r, v, "%s", msg);
	return r;
}

void rq_answer_rows(const struct rq_case *c, const json_t *ans, const char *failure,
		    struct rq_results *rows, struct sb *log)
{
	json_t *jrows = ans ? json_object_get(ans, "rows") : NULL;
	json_t *jlog = ans ? json_object_get(ans, "log") : NULL;
	char err[256];

	if (json_is_string(jlog))
		sb_add(log, json_string_value(jlog), json_string_length(jlog));
	if (!ans) {
		rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR, "%s", failure));
		return;
	}
	if (!json_is_true(json_object_get(ans, "ok"))) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		/* the agent killed the case at its timeout: said the same in every run */
		if (e && !strcmp(e, "timed out"))
			rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR, "timed out after %.1f s",
							    scaled_ms(c->timeout_ms) / 1000.0));
		else
			rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR, "agent: %s",
							    e ? e : "failed without a reason"));
		return;
	}
	if (!json_is_array(jrows) || json_array_size(jrows) == 0) {
		rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR, "agent answered without rows"));
		return;
	}
	size_t first = rows->n;

	for (size_t i = 0; i < json_array_size(jrows); i++) {
		struct rq_result *r = rq_result_from_json(json_array_get(jrows, i), err, sizeof(err));
		const char *bad = NULL;

		/*
		 * Only rows of the case asked for, each id once: a hostile node
		 * added rows of other case names (and duplicates, which compare
		 * took as repeats) under its own name.  Such an answer is no
		 * result at all: its rows go, one ERROR says why.
		 */
		if (r && strcmp(r->case_name, c->name))
			bad = "of another case";
		for (size_t k = first; r && !bad && k < rows->n; k++)
			if (rows->v[k]->id && r->id && !strcmp(rows->v[k]->id, r->id))
				bad = "with an id it already sent";
		if (bad) {
			char *id = term_safe(r->id);

			rq_result_free(r);
			while (rows->n > first)
				rq_result_free(rows->v[--rows->n]);
			rq_results_add(rows, rq_verdict_row(c->name, RQ_ERROR,
							    "agent sent a row not asked for (%s): %.200s", bad, id));
			free(id);
			return;
		}
		if (!r)
			r = rq_verdict_row(c->name, RQ_ERROR, "agent sent a malformed row: %s", err);
		/*
		 * The agent finishes its rows before it sends them; one that came
		 * without a verdict is decided here, from what it judged, as the
		 * agent would have.  rq_unit_rows explains a client by its
		 * server's verdict and turns a PASS into a FAIL: left undecided
		 * until stamping, a client row was explained as "not PASS" and
		 * then finished into a PASS beside a failed server, and an
		 * undecided server row failed a client that had passed.
		 */
		rq_result_finish(r);
		rq_results_add(rows, r);
	}
}

static const struct rq_result *first_not_pass(const struct rq_results *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		if (rows->v[i]->verdict != RQ_PASS)
			return rows->v[i];
	return NULL;
}

static void reset_row(struct rq_result *r, enum rq_verdict v, const char *reason)
{
	free(r->reason);
	r->reason = NULL;
	r->verdict = RQ_NONE;
	rq_result_set(r, v, "%s", reason);
}

void rq_unit_rows(const struct rq_unit *u, struct rq_results *rows, struct sb *log)
{
	const struct rq_case *c = u->c;
	size_t first = rows->n, gone = u->nsides, why_side = u->nsides;
	const struct rq_result *why_row = NULL;
	struct rq_results srows = { 0 };
	size_t *row_side = NULL;	/* the side each reported row came from */
	bool bare = true;	/* the first reporting side's log goes in without a header */
	char ref[256], wref[256];

	for (size_t s = 0; s < u->nsides; s++) {
		const struct rq_unit_side *sd = &u->side[s];
		struct rq_results *dst = sd->reports ? rows : &srows;
		struct sb slog = SB_INIT;
		char failure[1100];
		size_t had = srows.n, had_rows = rows->n;

		if (sd->why[0])
			snprintf(failure, sizeof(failure), "%s", sd->why);
		else if (sd->label)
			snprintf(failure, sizeof(failure), "%s side did not answer", sd->label);
		else
			snprintf(failure, sizeof(failure), "the agent did not answer");
		rq_answer_rows(c, sd->ans, failure, dst, &slog);
		row_side = xrealloc(row_side, (rows->n - first + 1) * sizeof(*row_side));
		for (size_t i = had_rows; i < rows->n; i++)
			row_side[i - first] = s;
		if (slog.len && (!sd->reports || !bare))
			sb_addf(log, "\n----- %s side -----\n", sd->label ? sd->label : "other");
		sb_add(log, slog.buf, slog.len);
		bare = bare && !sd->reports;
		sb_release(&slog);
		if (sd->gone && gone == u->nsides)
			gone = s;
		/*
		 * A side that does not report and failed explains the others'
		 * failure; one that skipped explains it before any that failed
		 * (the rest failed for want of it: a rank cancelled after it).
		 */
		if (!sd->reports && (!why_row || why_row->verdict != RQ_SKIP)) {
			struct rq_results mine = { .v = srows.v + had, .n = srows.n - had };
			const struct rq_result *w = first_not_pass(&mine);

			if (w && (!why_row || w->verdict == RQ_SKIP)) {
				why_row = w;
				why_side = s;
			}
		}
	}
	if (why_row)
		side_ref(&u->side[why_side], wref, sizeof(wref));
	for (size_t i = first; i < rows->n; i++) {
		struct rq_result *r = rows->v[i];
		const struct rq_unit_side *mine = &u->side[row_side[i - first]];

		if (gone < u->nsides) {
			/* An agent died: no side's result says anything about the case. */
			reset_row(r, RQ_ERROR, u->side[gone].why);
		} else if (why_row && why_row->verdict == RQ_SKIP) {
			/*
			 * The other side lacked what the case needs and ran nothing:
			 * this side's result, whatever it is, measured no pair.  The
			 * same SKIP as when this side lacks it, naming the node.
			 */
			const char *sr = why_row->reason ? why_row->reason : "no reason given";
			char *w;

			if (r->verdict == RQ_PASS || mine->graced_out || !r->reason)
				w = xasprintf("%s: %s", wref, sr);
			else
				w = xasprintf("%s: %s (%s: %s)", wref, sr,
					      side_ref(mine, ref, sizeof(ref)), r->reason);
			reset_row(r, RQ_SKIP, w);
			free(w);
		} else if (r->verdict == RQ_SKIP && u->nsides > 1 &&
			   (!why_row || u->side[why_side].graced_out)) {
			/*
			 * This side lacked it: the others were only cancelled for
			 * it.  Say which node, as the other side's SKIP would.
			 */
			if (mine->node) {
				char *w = xasprintf("%s: %s", side_ref(mine, ref, sizeof(ref)),
						    r->reason ? r->reason : "no reason given");

				free(r->reason);
				r->reason = w;
			}
		} else if (why_row) {
			const char *sr = why_row->reason ? why_row->reason : "no reason given";

			if (r->verdict == RQ_PASS) {
				char *w = xasprintf("%s: %s", wref, sr);

				reset_row(r, RQ_FAIL, w);
				free(w);
			} else {
				char *nr = xasprintf("%s (%s: %s)", r->reason ? r->reason : "", wref, sr);

				free(r->reason);
				r->reason = nr;
			}
		}
	}
	free(row_side);
	rq_results_release(&srows);
}

/* "case[dev/1]" -> "case[node:dev/1]", "case" -> "case[node]" */
static char *node_id(const char *id, const char *node)
{
	const char *b = strchr(id, '[');

	if (!b)
		return xasprintf("%s[%s]", id, node);
	return xasprintf("%.*s[%s:%s", (int)(b - id), id, node, b + 1);
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

void rq_rows_stamp(struct rq_result *const *v, size_t n, const struct rq_case *c,
		   const struct rq_stamp *st)
{
	for (size_t i = 0; i < n; i++) {
		struct rq_result *r = v[i];

		if (st->id || st->node) {
			char *id = st->id ? xstrdup(st->id) : node_id(r->id, st->node);

			free(r->id);
			r->id = id;
		}
		if (st->peer_node)
			set_str(&r->peer_node, st->peer_node);
		if (st->node)
			set_str(&r->node, st->node);
		if (st->hostname)
			rq_fact_add(r, "node.hostname", st->hostname);
		set_str(&r->target, st->target);
		set_str(&r->target_why, st->target_why);
		set_str(&r->kind, c->kind->name);
		if (c->judge)
			set_str(&r->judge, c->judge);
		set_str(&r->file, c->file ? c->file : "");
		if (r->duration_s <= 0)
			r->duration_s = st->duration_s / (double)n;
		/*
		 * The case log first, then what the row carried (unplace: console tails,
		 * kernel log).  A plain run's row that carried nothing shares the first
		 * row's copy: a fabric case has a row per link, 1297 on 648 hosts, and
		 * 1297 copies of its 300 KiB log were 400 MiB of runner.
		 */
		struct sb rowlog = r->log;

		if (i > 0 && !rowlog.len && !st->node && !st->peer_node && st->log && st->log->len) {
			r->log_of_first = true;
		} else {
			sb_init(&r->log);
			if (st->log)
				sb_add(&r->log, st->log->buf, st->log->len);
			sb_add(&r->log, rowlog.buf, rowlog.len);
			sb_release(&rowlog);
		}
		if (r->verdict == RQ_NONE)
			rq_result_finish(r);
	}
}
