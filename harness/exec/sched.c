/* SPDX-License-Identifier: MIT */
/*
 * Running one case: choose its target, open the target once, place the
 * case, and run it as a unit (exec/unit.h) on the agent(s) of the
 * placement: one side, or a two-sided case's server and client sent at
 * once (the client's out-of-band connect retries until its deadline, so
 * there is no "sleep to let the server bind").
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
#include "exec/unit.h"
#include "report/report.h"


static size_t t_index(const struct sched *s, const struct rq_target *t)
{
	size_t i = 0;

	while (i < s->ntargets && s->targets[i] != t)
		i++;
	return i;
}

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
	s->time = xrealloc(s->time, (s->ntargets + 1) * sizeof(*s->time));
	s->time[s->ntargets] = (struct sched_time){ 0 };
	snprintf(s->time[s->ntargets].target, sizeof(s->time[0].target), "%s", name);
	s->ntime = s->ntargets + 1;
	s->targets[s->ntargets++] = t;
	return t;
}

bool sched_choose(struct sched *s, const struct rq_case *c, char *name, size_t namesz,
		  char *why, size_t whysz)
{
	return rq_target_choose(c, s->opts, name, namesz, why, whysz);
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

/* The case on its one side, or as client (side 0) and server (side 1); rows into rows. */
static void run_placed(struct sched *s, const struct rq_case *c, const char *tname,
		       const struct rq_placement *p, struct rq_results *rows, struct sb *log)
{
	struct rq_unit u;

	rq_unit_init(&u, c, c->kind->two_sided ? 2 : 1);
	if (c->kind->two_sided) {
		int port = rq_unit_oob_port_of(s->port_pid ? s->port_pid : (int)getpid(),
					       s->case_seq++);

		u.side[0] = (struct rq_unit_side){ .ag = p->side[0], .label = "client", .reports = true,
			.req = build_request(s, c, tname, p, ROLE_CLIENT, 0, port) };
		u.side[1] = (struct rq_unit_side){ .ag = p->side[1], .label = "server",
			.req = build_request(s, c, tname, p, ROLE_SERVER, 1, port) };
	} else {
		u.side[0].ag = p->side[0];
		u.side[0].req = build_request(s, c, tname, p, ROLE_SINGLE, 0, 0);
	}
	rq_unit_run(&u, s->tick, s->tick_arg);
	rq_unit_rows(&u, rows, log);
	/* a stopped side's processes should be gone before the next case runs beside them */
	if (!rq_interrupted && rq_unit_settle(&u, now_ms() + scaled_ms(RQ_UNIT_SETTLE_MS)))
		for (size_t i = 0; i < u.nsides; i++) {
			const struct rq_unit_side *sd = &u.side[i];

			if (!sd->leftover[0])
				continue;
			sb_addf(log, "# %s: %s\n", sd->label ? sd->label : "the case", sd->leftover);
			fprintf(stderr, "rdmaqual: warning: %s (%s): %s; the cases after it may fail "
				"beside what it left\n", c->name, sd->label ? sd->label : "its run",
				sd->leftover);
		}
	rq_unit_release(&u);
}

void sched_run_case(struct sched *s, const struct rq_case *c, struct rq_results *out)
{
	char tname[256], why[512], err[512] = "";
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_target *t = NULL;
	struct rq_placement p = { 0 };
	int64_t start = now_ms(), t_place = 0, t_run = 0;
	struct sched_time *tm = NULL;
	bool placed = false;

	if (!sched_choose(s, c, tname, sizeof(tname), why, sizeof(why))) {
		/* A forced target the case does not list, or nothing usable: not a failure. */
		rq_results_add(&rows, rq_verdict_row(c->name, RQ_SKIP, "%s", why));
		snprintf(tname, sizeof(tname), "none");
		goto done;
	}
	t = target_get(s, tname, err, sizeof(err));
	if (!t) {
		rq_results_add(&rows, rq_verdict_row(c->name, RQ_ERROR, "%s", err));
		goto done;
	}
	tm = &s->time[t_index(s, t)];
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
		tm->open_s += (start - t0) / 1000.0;
	}
	if (t->open_err) {
		/* Remembered: a VM that did not boot is not retried for every case. */
		rq_results_add(&rows, rq_verdict_row(c->name, RQ_ERROR, "target %s: %s", tname, t->open_msg));
		goto done;
	}
	rq_where_init(&p.where);
	t_place = now_ms();
	tm->cases++;
	if (t->ops->place(t, c, &p, err, sizeof(err))) {
		rq_results_add(&rows, rq_verdict_row(c->name, RQ_ERROR, "target %s: %s", tname,
						err[0] ? err : "cannot place the case"));
		goto done;
	}
	placed = true;
	t_run = now_ms();
	tm->place_s += (t_run - t_place) / 1000.0;
	run_placed(s, c, tname, &p, &rows, &log);
	tm->run_s += (now_ms() - t_run) / 1000.0;
done:
	if (placed && t->ops->unplace) {
		int64_t t0 = now_ms();

		t->ops->unplace(t, c, &p, &rows);
		tm->unplace_s += (now_ms() - t0) / 1000.0;
	}
	if (placed) {
		if (p.env)
			for (size_t i = 0; p.env[i]; i++)
				free(p.env[i]);
		free(p.env);
		free(p.tool_cwd);
	}
	rq_where_release(&p.where);	/* also what a failed place() had filled */
	struct rq_stamp st = { .target = tname, .target_why = why, .log = &log,
			       .duration_s = (now_ms() - start) / 1000.0 };

	rq_rows_stamp(rows.v, rows.n, c, &st);
	for (size_t i = 0; i < rows.n; i++)
		rq_results_add(out, rows.v[i]);
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
		int64_t t0 = now_ms();

		if (t->opened && t->ops->close)
			t->ops->close(t);
		s->time[i].close_s += (now_ms() - t0) / 1000.0;
		free(t->name);
		free(t->arg);
		free(t);
	}
	free(s->targets);
	s->targets = NULL;
	s->ntargets = 0;
	rq_agent_local_close();
}

static void time_line(const struct sched_time *t, struct sb *sb)
{
	sb_addf(sb, "open %.1f s, %u case%s: place %.1f s, run %.1f s, unplace %.1f s; close %.1f s",
		t->open_s, t->cases, t->cases == 1 ? "" : "s", t->place_s, t->run_s, t->unplace_s, t->close_s);
}

void sched_profile_print(const struct sched *s, FILE *fp)
{
	struct sched_time all = { .target = "all" };

	fprintf(fp, "profile (wall seconds):\n  %-24s %6s %6s %8s %8s %8s %7s\n", "target", "open", "cases",
		"place", "run", "unplace", "close");
	for (size_t i = 0; i <= s->ntime; i++) {
		const struct sched_time *t = i < s->ntime ? &s->time[i] : &all;

		if (i == s->ntime && s->ntime < 2)
			break;	/* one target: its line is the total */
		fprintf(fp, "  %-24s %6.1f %6u %8.1f %8.1f %8.1f %7.1f\n", t->target, t->open_s, t->cases,
			t->place_s, t->run_s, t->unplace_s, t->close_s);
		if (i < s->ntime) {
			all.open_s += t->open_s;
			all.cases += t->cases;
			all.place_s += t->place_s;
			all.run_s += t->run_s;
			all.unplace_s += t->unplace_s;
			all.close_s += t->close_s;
		}
	}
}

void sched_profile_facts(const struct sched *s, struct rq_run_info *info)
{
	for (size_t i = 0; i < s->ntime; i++) {
		struct sb sb = SB_INIT;
		char *key = xasprintf("profile.%s", s->time[i].target);

		time_line(&s->time[i], &sb);
		rq_run_info_fact(info, key, sb.buf);
		free(key);
		sb_release(&sb);
	}
}

void sched_profile_release(struct sched *s)
{
	free(s->time);
	s->time = NULL;
	s->ntime = 0;
}
