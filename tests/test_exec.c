/* SPDX-License-Identifier: MIT */
/*
 * The unit executor (harness/exec/unit.c) against fake agents: a child
 * process on the far end of a socketpair that speaks the agent protocol
 * and answers each run request as its script says (rows, a failure, a
 * malformed row, nothing, or dies).  Checks the rows and reasons that come
 * out, the grace rule, a server's failure explaining its client, N sides,
 * and the ids a lab run's rows get.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/proc.h"
#include "core/util.h"
#include "exec/journal.h"
#include "exec/par.h"
#include "exec/unit.h"
#include "check_main.h"

/*
 * UNDECIDED: a row that judged twice, both ok, sent without a verdict (NONE).
 * STOP_REAPED, STOP_LEFTOVER: silent until cancelled, then answer the run
 * as the agent does once its processes are gone, or are not.
 */
enum script { PASS, FAIL, SILENT, TIMED_OUT, MALFORMED, NO_ROWS, DIE, SLOW_PASS, UNDECIDED, SKIP,
	      STOP_REAPED, STOP_LEFTOVER };

/* The child: answer every run request as the script says. */
static void fake_agent(int fd, enum script how, const char *reason)
{
	FILE *in = fdopen(fd, "r");
	char line[65536];

	while (in && fgets(line, sizeof(line), in)) {
		json_t *req = json_loads(line, 0, NULL), *ans;
		json_int_t id = json_integer_value(json_object_get(req, "id"));
		const char *op = json_string_value(json_object_get(req, "op"));
		struct rq_result *r;

		if (op && !strcmp(op, "cancel")) {
			json_int_t run = json_integer_value(json_object_get(req, "target_id"));

			json_decref(req);
			if (how != STOP_REAPED && how != STOP_LEFTOVER)
				continue;
			ans = json_pack("{s:i, s:I, s:b, s:s}", "v", RQ_AGENT_PROTO, "id", run, "ok", 0,
					"error", "cancelled");
			if (how == STOP_REAPED)
				json_object_set_new(ans, "reaped", json_true());
			else
				json_object_set_new(ans, "leftover", json_string(reason));
			goto send;
		}
		json_decref(req);
		ans = json_pack("{s:i, s:I, s:s}", "v", RQ_AGENT_PROTO, "id", id, "log", "agent log\n");
		switch (how) {
		case DIE:
			_exit(0);
		case SILENT:
		case STOP_REAPED:
		case STOP_LEFTOVER:
			json_decref(ans);
			continue;
		case SLOW_PASS:
			usleep(400 * 1000);
			/* fall through */
		case PASS:
		case FAIL:
		case SKIP:
			r = rq_result_new("t.case", NULL, 0);
			rq_result_set(r, how == FAIL ? RQ_FAIL : how == SKIP ? RQ_SKIP : RQ_PASS, "%s",
				      reason ? reason : "ok");
			json_object_set_new(ans, "ok", json_true());
			json_object_set_new(ans, "rows", json_pack("[o]", rq_result_to_json(r, false)));
			rq_result_free(r);
			break;
		case UNDECIDED:
			r = rq_result_new("t.case", NULL, 0);
			rq_judge(r, true, "first");
			rq_judge(r, true, "second");
			json_object_set_new(ans, "ok", json_true());
			json_object_set_new(ans, "rows", json_pack("[o]", rq_result_to_json(r, false)));
			rq_result_free(r);
			break;
		case TIMED_OUT:
			json_object_set_new(ans, "ok", json_false());
			json_object_set_new(ans, "error", json_string("timed out"));
			break;
		case MALFORMED:
			json_object_set_new(ans, "ok", json_true());
			json_object_set_new(ans, "rows", json_pack("[{s:i}]", "verdict", 42));
			break;
		case NO_ROWS:
			json_object_set_new(ans, "ok", json_true());
			json_object_set_new(ans, "rows", json_array());
			break;
		}
send:;
		char *t = json_dumps(ans, JSON_COMPACT);

		json_decref(ans);
		if (write_full(fd, t, strlen(t)) || write_full(fd, "\n", 1))
			_exit(1);
		free(t);
	}
	_exit(0);
}

static struct rq_agent *fake(const char *label, enum script how, const char *reason)
{
	int sv[2];
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		/* only its own end: an inherited end of another fake would keep that one from EOF */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != sv[1])
				close(fd);
		fake_agent(sv[1], how, reason);
	}
	close(sv[1]);
	return rq_agent_attach(sv[0], sv[0], pid, label);
}

static struct rq_case tcase_of(int64_t timeout_ms)
{
	return (struct rq_case){ .name = (char *)"t.case", .kind = rq_kind_find("command"),
				 .file = (char *)"cases/t.yaml", .timeout_ms = timeout_ms };
}

static void set_side(struct rq_unit *u, size_t s, struct rq_agent *a, const char *label,
		     bool reports)
{
	u->side[s].ag = a;
	u->side[s].req = json_pack("{s:s}", "op", "run");
	u->side[s].label = label;
	u->side[s].reports = reports;
}

/* Run u, its rows into rows (the case log into log). */
static void run(struct rq_unit *u, struct rq_results *rows, struct sb *log)
{
	rq_unit_run(u, NULL, NULL);
	rq_unit_rows(u, rows, log);
}

static void setup(void)
{
	/* 10 s of "late" becomes 1 s, a 3 s grace 0.3 s */
	rq_timeout_mul = 0.1;
}

START_TEST(one_side_rows_stamped)
{
	struct rq_case c = tcase_of(5000);
	struct rq_agent *a = fake("fake", PASS, NULL);
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_unit u;

	sb_adds(&log, "# case log\n");
	rq_unit_init(&u, &c, 1);
	set_side(&u, 0, a, NULL, true);
	run(&u, &rows, &log);
	ck_assert_uint_eq(rows.n, 1);
	struct rq_stamp st = { .target = "local", .target_why = "listed", .log = &log,
			       .duration_s = 2.0 };

	rq_rows_stamp(rows.v, rows.n, &c, &st);
	ck_assert_int_eq(rows.v[0]->verdict, RQ_PASS);
	ck_assert_str_eq(rows.v[0]->id, "t.case");
	ck_assert_str_eq(rows.v[0]->target, "local");
	ck_assert_str_eq(rows.v[0]->target_why, "listed");
	ck_assert_str_eq(rows.v[0]->kind, "command");
	ck_assert_str_eq(rows.v[0]->file, "cases/t.yaml");
	ck_assert_ptr_null(rows.v[0]->node);
	/* the case log, then the agent's */
	ck_assert_str_eq(rows.v[0]->log.buf, "# case log\nagent log\n");
	ck_assert(rows.v[0]->duration_s > 0);
	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
	rq_agent_close(a);
}
END_TEST

START_TEST(no_answer_times_out)
{
	struct rq_case c = tcase_of(200);
	struct rq_agent *a = fake("fake", SILENT, NULL);
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_unit u;
	int64_t t0 = now_ms();

	rq_unit_init(&u, &c, 1);
	set_side(&u, 0, a, NULL, true);
	run(&u, &rows, &log);
	/* the timeout (20 ms) and 1 s "late": not sooner, and not much later */
	ck_assert_int_ge(now_ms() - t0, 1000);
	ck_assert_int_lt(now_ms() - t0, 3000);
	ck_assert_uint_eq(rows.n, 1);
	ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
	ck_assert_msg(str_starts(rows.v[0]->reason, "timed out after 1.0 s: agent fake did not answer"),
		      "%s", rows.v[0]->reason);
	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
	rq_agent_close(a);
}
END_TEST

/* The agent's own timeout reads the same in a plain and in a lab run. */
START_TEST(timeout_reason_plain_and_lab)
{
	struct rq_case c = tcase_of(5000);
	char *reason[2];

	for (int lab = 0; lab < 2; lab++) {
		struct rq_agent *a = fake(lab ? "node01" : "local", TIMED_OUT, NULL);
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;
		struct rq_stamp st = { .target = "local", .target_why = "w",
				       .node = lab ? "node01" : NULL };

		rq_unit_init(&u, &c, 1);
		set_side(&u, 0, a, NULL, true);
		run(&u, &rows, &log);
		rq_rows_stamp(rows.v, rows.n, &c, &st);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
		reason[lab] = xstrdup(rows.v[0]->reason);
		ck_assert_str_eq(rows.v[0]->id, lab ? "t.case[node01]" : "t.case");
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(a);
	}
	ck_assert_str_eq(reason[0], "timed out after 0.5 s");
	ck_assert_str_eq(reason[1], reason[0]);
	free(reason[0]);
	free(reason[1]);
}
END_TEST

START_TEST(malformed_and_empty_answers)
{
	struct rq_case c = tcase_of(5000);
	static const enum script how[] = { MALFORMED, NO_ROWS };
	static const char *const want[] = { "agent sent a malformed row: ",
					    "agent answered without rows" };

	for (int i = 0; i < 2; i++) {
		struct rq_agent *a = fake("fake", how[i], NULL);
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;

		rq_unit_init(&u, &c, 1);
		set_side(&u, 0, a, NULL, true);
		run(&u, &rows, &log);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
		ck_assert_msg(str_starts(rows.v[0]->reason, want[i]), "%s", rows.v[0]->reason);
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(a);
	}
}
END_TEST

/* A server that failed explains its client: PASS becomes FAIL, a failure gets the why. */
START_TEST(server_failure_explains_client)
{
	struct rq_case c = tcase_of(5000);
	static const enum script client[] = { PASS, FAIL };
	static const char *const want[] = { "server side: device rxe9 not found",
					    "no reply (server side: device rxe9 not found)" };

	for (int i = 0; i < 2; i++) {
		struct rq_agent *cl = fake("cl", client[i], "no reply");
		struct rq_agent *sv = fake("sv", FAIL, "device rxe9 not found");
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;

		rq_unit_init(&u, &c, 2);
		set_side(&u, 0, cl, "client", true);
		set_side(&u, 1, sv, "server", false);
		run(&u, &rows, &log);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_int_eq(rows.v[0]->verdict, RQ_FAIL);
		ck_assert_str_eq(rows.v[0]->reason, want[i]);
		/* the server's log under its own header */
		ck_assert_ptr_nonnull(strstr(log.buf, "agent log\n\n----- server side -----\nagent log\n"));
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(cl);
		rq_agent_close(sv);
	}
}
END_TEST

/*
 * Three sides, the client reporting: a third side that did not answer fails
 * the client whatever the second said, and a row sent without a verdict is
 * judged by what it judged before a side explains it (found by fuzzing: an
 * undecided client row was explained, then finished into a PASS beside the
 * failed side; an undecided server row failed a client that had passed).
 */
START_TEST(three_sides_undecided_rows)
{
	struct rq_case c = tcase_of(60000);
	static const enum script client[] = { UNDECIDED, PASS };
	static const enum script second[] = { PASS, UNDECIDED };
	static const enum script third[] = { SILENT, PASS };
	static const enum rq_verdict want_v[] = { RQ_FAIL, RQ_PASS };
	static const char *const want[] = {
		/* after the client or the server: whichever answered first */
		"rank 2 side: cancelled 1.0 s after the ", NULL };

	for (int i = 0; i < 2; i++) {
		struct rq_agent *a[3] = { fake("cl", client[i], NULL), fake("sv", second[i], NULL),
					  fake("r2", third[i], NULL) };
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;

		rq_unit_init(&u, &c, 3);
		set_side(&u, 0, a[0], "client", true);
		set_side(&u, 1, a[1], "server", false);
		set_side(&u, 2, a[2], "rank 2", false);
		run(&u, &rows, &log);
		struct rq_stamp st = { .target = "local", .target_why = "w", .node = "n1" };

		rq_rows_stamp(rows.v, rows.n, &c, &st);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_msg(rows.v[0]->verdict == want_v[i], "case %d: %s: %s", i,
			      rq_verdict_name(rows.v[0]->verdict), rows.v[0]->reason);
		if (want[i])
			ck_assert_msg(str_starts(rows.v[0]->reason, want[i]), "%s", rows.v[0]->reason);
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		for (int k = 0; k < 3; k++)
			rq_agent_close(a[k]);
	}
}
END_TEST

/*
 * A node that lacks the device SKIPs the pair on whichever side it is, and
 * the row names it; its partner is cancelled after the short grace (it has
 * nothing to wait for), not the one after a side that finished.
 */
START_TEST(skip_on_either_side)
{
	struct rq_case c = tcase_of(60000);
	static const struct {
		enum script cl, sv;
		const char *cwhy, *swhy, *want;
	} t[] = {
		{ SKIP, SILENT, "no RDMA device on this client side", NULL,
		  "client side on node n1: no RDMA device on this client side" },
		{ SILENT, SKIP, NULL, "no RDMA device on this server side",
		  "server side on node n2: no RDMA device on this server side" },
		{ FAIL, SKIP, "no server side: connection refused", "no RDMA device on this server side",
		  "server side on node n2: no RDMA device on this server side "
		  "(client side on node n1: no server side: connection refused)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct rq_agent *cl = fake("cl", t[i].cl, t[i].cwhy);
		struct rq_agent *sv = fake("sv", t[i].sv, t[i].swhy);
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;
		int64_t t0 = now_ms();

		rq_unit_init(&u, &c, 2);
		set_side(&u, 0, cl, "client", true);
		set_side(&u, 1, sv, "server", false);
		u.side[0].node = "n1";
		u.side[1].node = "n2";
		run(&u, &rows, &log);
		/* the 3 s grace (scaled: 0.3 s) after a side skipped, not the 10 s one */
		ck_assert_int_lt(now_ms() - t0, 900);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_msg(rows.v[0]->verdict == RQ_SKIP, "%zu: %s: %s", i,
			      rq_verdict_name(rows.v[0]->verdict), rows.v[0]->reason);
		ck_assert_str_eq(rows.v[0]->reason, t[i].want);
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(cl);
		rq_agent_close(sv);
	}
}
END_TEST

/*
 * A side cancelled after the other's grace is confirmed gone only by its
 * agent's answer to the cancelled run: processes reaped, or what is left;
 * no answer by the deadline is not a confirmation either.
 */
START_TEST(settle_after_cancel)
{
	struct rq_case c = tcase_of(60000);
	static const struct {
		enum script sv;
		size_t bad;
		const char *want;
	} t[] = {
		{ STOP_REAPED, 0, "" },
		{ STOP_LEFTOVER, 1, "process group 4242 of the stopped case is still there" },
		{ SILENT, 1, "its stopped run was not confirmed gone within 0.5 s" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct rq_agent *cl = fake("cl", FAIL, "bind failed");
		struct rq_agent *sv = fake("sv", t[i].sv, t[i].want);
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;

		rq_unit_init(&u, &c, 2);
		set_side(&u, 0, cl, "client", true);
		set_side(&u, 1, sv, "server", false);
		run(&u, &rows, &log);
		ck_assert(u.side[1].graced_out);
		ck_assert_uint_ne(u.side[1].stopped, 0);
		int64_t t0 = now_ms();

		ck_assert_uint_eq(rq_unit_settle(&u, now_ms() + 500), t[i].bad);
		ck_assert_str_eq(u.side[1].leftover, t[i].want);
		ck_assert_str_eq(u.side[0].leftover, "");
		/* an answer ends the wait; only silence waits out the deadline */
		if (t[i].sv == SILENT)
			ck_assert_int_ge(now_ms() - t0, 500);
		else
			ck_assert_int_lt(now_ms() - t0, 400);
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(cl);
		rq_agent_close(sv);
	}
}
END_TEST

/*
 * A side that ends leaves the other a grace (10 s after an answer, 3 s after
 * a failure to run), then it is cancelled and says so.
 */
START_TEST(grace_after_a_side_ends)
{
	struct rq_case c = tcase_of(60000);
	static const enum script server[] = { FAIL, TIMED_OUT };
	static const int64_t grace[] = { 1000, 300 };
	static const char *const want[] = {
		"cancelled 1.0 s after the server side finished (server side: bind failed)",
		"cancelled 0.3 s after the server side failed (server side: timed out after 6.0 s)",
	};

	for (int i = 0; i < 2; i++) {
		struct rq_agent *cl = fake("cl", SILENT, NULL);
		struct rq_agent *sv = fake("sv", server[i], "bind failed");
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		struct rq_unit u;
		int64_t t0 = now_ms();

		rq_unit_init(&u, &c, 2);
		set_side(&u, 0, cl, "client", true);
		set_side(&u, 1, sv, "server", false);
		run(&u, &rows, &log);
		/* the grace (scaled), not the 60 s timeout */
		ck_assert_int_ge(now_ms() - t0, grace[i]);
		ck_assert_int_lt(now_ms() - t0, grace[i] + 1500);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
		ck_assert_str_eq(rows.v[0]->reason, want[i]);
		rq_unit_release(&u);
		rq_results_release(&rows);
		sb_release(&log);
		rq_agent_close(cl);
		rq_agent_close(sv);
	}
}
END_TEST

static int gone_calls;

static void on_gone(struct rq_unit *u, size_t side, void *arg)
{
	gone_calls++;
	snprintf(u->side[side].why, sizeof(u->side[side].why), "%s gone", (const char *)arg);
}

/* An agent that dies: every row ERROR with the hook's why, the partner cancelled. */
START_TEST(agent_gone)
{
	struct rq_case c = tcase_of(60000);
	struct rq_agent *cl = fake("cl", SILENT, NULL);
	struct rq_agent *sv = fake("sv", DIE, NULL);
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_unit u;
	int64_t t0 = now_ms();

	gone_calls = 0;
	rq_unit_init(&u, &c, 2);
	u.gone = on_gone;
	u.arg = (void *)"node02";
	set_side(&u, 0, cl, "client", true);
	set_side(&u, 1, sv, "server", false);
	run(&u, &rows, &log);
	ck_assert_int_lt(now_ms() - t0, 2000);
	ck_assert_int_eq(gone_calls, 1);
	ck_assert(u.side[1].gone);
	ck_assert(!u.side[0].gone);
	ck_assert_str_eq(u.side[0].why, "cancelled: the server side's agent is gone");
	ck_assert_uint_eq(rows.n, 1);
	ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
	ck_assert_str_eq(rows.v[0]->reason, "node02 gone");
	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
	rq_agent_close(cl);
	rq_agent_close(sv);
}
END_TEST

/* N sides, all reporting (a collective's ranks): a row each, each log under its rank. */
START_TEST(n_sides)
{
	struct rq_case c = tcase_of(5000);
	struct rq_agent *a[3];
	static const char *const label[] = { "rank 0", "rank 1", "rank 2" };
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT;
	struct rq_unit u;

	rq_unit_init(&u, &c, 3);
	for (int i = 0; i < 3; i++) {
		a[i] = fake(label[i], i == 2 ? SLOW_PASS : PASS, NULL);
		set_side(&u, (size_t)i, a[i], label[i], true);
	}
	run(&u, &rows, &log);
	ck_assert_uint_eq(rows.n, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(rows.v[i]->verdict, RQ_PASS);
	ck_assert_str_eq(log.buf, "agent log\n\n----- rank 1 side -----\nagent log\n"
			 "\n----- rank 2 side -----\nagent log\n");
	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
	for (int i = 0; i < 3; i++)
		rq_agent_close(a[i]);
}
END_TEST

/* A lab run's ids: the node goes into the kind's id; a pair's id replaces it. */
START_TEST(lab_ids)
{
	struct rq_case c = tcase_of(5000);
	struct rq_result *r[3] = { rq_result_new("t.case", NULL, 0),
				   rq_result_new("t.case", "mlx5_0", 1),
				   rq_result_new("t.case", NULL, 0) };

	for (int i = 0; i < 3; i++)
		rq_result_set(r[i], RQ_PASS, "ok");
	struct rq_stamp node = { .target = "hca", .target_why = "lab run: node node01 via ssh",
				 .node = "node01", .hostname = "h1" };
	struct rq_stamp pair = { .target = "hca", .target_why = "w", .node = "node01",
				 .peer_node = "node02", .id = "t.case[node01->node02]" };

	rq_rows_stamp(r, 2, &c, &node);
	rq_rows_stamp(r + 2, 1, &c, &pair);
	ck_assert_str_eq(r[0]->id, "t.case[node01]");
	ck_assert_str_eq(r[1]->id, "t.case[node01:mlx5_0/1]");
	ck_assert_str_eq(r[0]->node, "node01");
	ck_assert_uint_eq(r[0]->nfacts, 1);
	ck_assert_str_eq(r[0]->facts[0].key, "node.hostname");
	ck_assert_str_eq(r[0]->facts[0].value, "h1");
	ck_assert_str_eq(r[2]->id, "t.case[node01->node02]");
	ck_assert_str_eq(r[2]->peer_node, "node02");
	ck_assert_ptr_null(r[0]->peer_node);
	for (int i = 0; i < 3; i++)
		rq_result_free(r[i]);
}
END_TEST

/*
 * A journal torn mid-line (ENOSPC at 4096 bytes): opening it for appending
 * cuts the fragment, so the next unit's line is whole and a resume finds it
 * (appended onto the fragment, that unit reran on every --resume).
 */
START_TEST(journal_torn_line)
{
	char dir[] = "/tmp/rq-test-journal.XXXXXX", *argv[] = { "rdmaqual", "run", NULL }, p[256];
	struct rq_journal j = { .fd = -1 };
	struct rq_result *r = rq_result_new("u.one", NULL, 0);
	struct sb text = SB_INIT;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(rq_journal_start(dir, 2, argv), 0);
	snprintf(p, sizeof(p), "%s/journal.jsonl", dir);
	fd = open(p, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write_full(fd, "{\"unit\":\"u.torn\",\"rows\":[{\"id\":", 31), 0);
	close(fd);
	ck_assert_int_eq(rq_journal_open(&j, dir, true), 0);
	ck_assert_ptr_null(rq_journal_done(&j, "u.torn"));
	rq_result_set(r, RQ_PASS, "ok");
	ck_assert_int_eq(rq_journal_unit(&j, "u.one", &r, 1), 0);
	rq_journal_close(&j);
	ck_assert_int_eq(read_file(p, &text, 1 << 20), 0);
	ck_assert_ptr_null(strstr(text.buf, "u.torn"));
	ck_assert_int_eq(text.buf[text.len - 1], '\n');
	ck_assert_int_eq(rq_journal_open(&j, dir, true), 0);
	ck_assert_ptr_nonnull(rq_journal_done(&j, "u.one"));
	rq_journal_close(&j);
	sb_release(&text);
	rq_result_free(r);
	ck_assert_int_eq(rm_rf(dir), 0);
}
END_TEST

/*
 * A node answers only for the case asked: a row of another case name, or a
 * second row with an id it already sent, is refused (an ERROR naming it),
 * never counted as a result or a repeat.
 */
START_TEST(rows_not_asked_for)
{
	static const char *const extra[] = {
		"{\"id\": \"other.case\", \"case\": \"other.case\", \"verdict\": \"PASS\", \"judged\": 1}",
		"{\"id\": \"t.case\", \"case\": \"t.case\", \"verdict\": \"PASS\", \"judged\": 1}",
	};
	static const char *const want[] = {
		"agent sent a row not asked for (of another case): other.case",
		"agent sent a row not asked for (with an id it already sent): t.case",
	};
	struct rq_case c = tcase_of(5000);

	for (int i = 0; i < 2; i++) {
		struct rq_results rows = { 0 };
		struct sb log = SB_INIT;
		char *text = xasprintf("{\"ok\": true, \"rows\": [{\"id\": \"t.case\", \"case\": \"t.case\", "
				       "\"verdict\": \"PASS\", \"judged\": 1}, %s]}", extra[i]);
		json_t *ans = json_loads(text, 0, NULL);

		ck_assert_ptr_nonnull(ans);
		rq_answer_rows(&c, ans, "x", &rows, &log);
		ck_assert_uint_eq(rows.n, 1);
		ck_assert_str_eq(rows.v[0]->id, "t.case");
		ck_assert_int_eq(rows.v[0]->verdict, RQ_ERROR);
		ck_assert_str_eq(rows.v[0]->reason, want[i]);
		json_decref(ans);
		free(text);
		rq_results_release(&rows);
		sb_release(&log);
	}
}
END_TEST

/*
 * run --jobs: which targets' cases go to workers.  Forced targets, so the
 * plan is the same on any host: the lint case always runs on local.
 */
static const char plan_text[] =
	"cases:\n"
	"  - name: p.lint\n"
	"    kind: opensm-conf\n"
	"    file: fixtures/opensm/good.conf\n"
	"  - name: p.cmd\n"
	"    kind: command\n"
	"    targets: [local, rxe-host, ibsim, sysroot]\n"
	"    argv: [\"true\"]\n"
	"  - name: p.vm\n"
	"    kind: command\n"
	"    targets: [rxe-vm]\n"
	"    argv: [\"true\"]\n";

static struct rq_suite plan_suite;
static struct rq_diags plan_diags;

static unsigned plan_of(const char *target, unsigned jobs, size_t repeat, struct par *p)
{
	static struct rq_run_opts o;
	static struct sched s;

	rq_suite_release(&plan_suite);
	rq_diags_release(&plan_diags);
	memset(&plan_suite, 0, sizeof(plan_suite));
	memset(&plan_diags, 0, sizeof(plan_diags));
	ck_assert_int_eq(rq_load_buffer("plan.yaml", plan_text, sizeof(plan_text) - 1, &plan_suite, &plan_diags), 0);
	ck_assert_uint_eq(plan_suite.ncases, 3);
	o = (struct rq_run_opts){ .target = target };
	s = (struct sched){ .opts = &o };
	*p = (struct par){ .s = &s, .sel = plan_suite.cases, .nsel = 3, .total = 3 * repeat, .jobs = jobs };
	return par_plan(p);
}

static const struct par_target *tg_named(const struct par *p, const char *name)
{
	for (size_t i = 0; i < p->ntg; i++)
		if (!strcmp(p->tg[i].name, name))
			return &p->tg[i];
	return NULL;
}

START_TEST(par_plan_groups)
{
	struct par p;

	/* a replay and local in two workers; the case with no target here is the runner's SKIP */
	ck_assert_uint_eq(plan_of("sysroot:fixtures/nodes/cx6-hdr-ib", 2, 1, &p), 2);
	ck_assert_uint_eq(p.nworkers, 2);
	ck_assert_uint_eq(p.ntg, 2);
	ck_assert_str_eq(p.tg[0].name, "local");	/* first-use order */
	ck_assert(!p.tg[0].parent && !p.tg[1].parent && p.tg[0].lane != p.tg[1].lane);
	ck_assert_int_eq(p.item_tg[2], -1);
	par_release(&p);
	/* --jobs 1: case by case */
	ck_assert_uint_eq(plan_of("sysroot:fixtures/nodes/cx6-hdr-ib", 1, 1, &p), 1);
	par_release(&p);
	/* rxe-host changes the host: local stays beside it in the runner, one group */
	ck_assert_uint_eq(plan_of("rxe-host", 4, 1, &p), 1);
	ck_assert(tg_named(&p, "local")->parent && tg_named(&p, "rxe-host")->parent);
	par_release(&p);
	/* the guests' cases in the runner, local in a worker beside them; more jobs add nothing */
	ck_assert_uint_eq(plan_of("rxe-vm", 8, 1, &p), 2);
	ck_assert_uint_eq(p.nworkers, 1);
	ck_assert(tg_named(&p, "rxe-vm")->parent && !tg_named(&p, "local")->parent);
	par_release(&p);
	/* ibsim and local, the runner idle: a worker each */
	ck_assert_uint_eq(plan_of("ibsim", 2, 2, &p), 2);
	ck_assert_uint_eq(p.nworkers, 2);
	/* --repeat: the second round's items go where the first's went */
	for (size_t k = 3; k < 6; k++)
		ck_assert_int_eq(p.item_tg[k], p.item_tg[k - 3]);
	par_release(&p);
	rq_suite_release(&plan_suite);
	rq_diags_release(&plan_diags);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, one_side_rows_stamped);
	tcase_add_test(tc, no_answer_times_out);
	tcase_add_test(tc, timeout_reason_plain_and_lab);
	tcase_add_test(tc, malformed_and_empty_answers);
	tcase_add_test(tc, server_failure_explains_client);
	tcase_add_test(tc, grace_after_a_side_ends);
	tcase_add_test(tc, agent_gone);
	tcase_add_test(tc, n_sides);
	tcase_add_test(tc, three_sides_undecided_rows);
	tcase_add_test(tc, skip_on_either_side);
	tcase_add_test(tc, settle_after_cancel);
	tcase_add_test(tc, lab_ids);
	tcase_add_test(tc, journal_torn_line);
	tcase_add_test(tc, rows_not_asked_for);
	tcase_add_test(tc, par_plan_groups);
}

RQ_CHECK_MAIN("exec", add_tests)
