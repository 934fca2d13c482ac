/* SPDX-License-Identifier: MIT */
/*
 * The run request (agent/request.h): every field survives to_json and
 * from_json, the case arrives loaded with its file's positions, and the
 * timeout multiplier reaches a kind's own tool timeouts in the agent's
 * worker process (it once stayed at x1 there: --timeout-mul was set only
 * in the runner's process).
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "agent/request.h"
#include "core/kind.h"
#include "core/util.h"
#include "check_main.h"

/*
 * A test-only kind: runs `sleep 0.4` with an internal timeout of 200 ms
 * (unscaled, as kinds write them) and passes when the tool finished.
 * Only a multiplier of 2 or more lets it finish.
 */
struct slow_cfg {
	char *note;
};

static const struct key_def slow_keys[] = {
	{ .name = "note", .type = KEY_STR, .offset = offsetof(struct slow_cfg, note),
	  .def = "x", .help = "unused" },
	KEY_END,
};

static void slow_run(struct rq_ctx *ctx, const void *cfg)
{
	static const char *const argv[] = { "sleep", "0.4", NULL };
	struct proc_result r;

	(void)cfg;
	proc_result_init(&r);
	if (rq_tool(ctx, argv, 200, &r)) {
		rq_result_set(ctx->main, RQ_ERROR, "sleep did not start");
		return;
	}
	rq_judge(ctx->main, !r.timed_out, "sleep 0.4 in a 200 ms tool timeout: %s",
		 r.timed_out ? "timed out" : "finished");
	proc_result_release(&r);
}

static const struct rq_kind slow_kind = {
	.name = "test-slow-tool", .summary = "test", .doc = "test", .keys = slow_keys,
	.cfg_size = sizeof(struct slow_cfg), .default_targets = "local", .run = slow_run,
};

static const char case_text[] =
	"defaults:\n"
	"  timeout: 20s\n"
	"cases:\n"
	"  - name: slow\n"
	"    kind: test-slow-tool\n"
	"    note: hello\n";

static struct rq_suite S;
static struct rq_diags D;

static void setup(void)
{
	static bool registered;

	if (!registered)
		rq_kind_register_extra(&slow_kind);
	registered = true;
	memset(&S, 0, sizeof(S));
	memset(&D, 0, sizeof(D));
	ck_assert_int_eq(rq_load_buffer("cases/slow.yaml", case_text, sizeof(case_text) - 1,
					&S, &D), 0);
}

static void teardown(void)
{
	rq_suite_release(&S);
	rq_diags_release(&D);
	rq_timeout_mul = 1.0;
}

START_TEST(every_field_round_trips)
{
	static const char *const env[] = { "A=1", "B=two", NULL };
	struct rq_placement p = { .root = "fixtures/nodes/x", .tool_cwd = "/tmp/cwd" };
	struct rq_request r, b;
	struct rq_diags d = { 0 };
	char why[256], *text;
	json_error_t jerr;
	json_t *j;

	snprintf(p.addr[0], sizeof(p.addr[0]), "10.0.0.1");
	snprintf(p.addr[1], sizeof(p.addr[1]), "10.0.0.2");
	p.env = (char **)env;
	rq_where_init(&p.where);
	p.where.host[0] = xstrdup("vm0");
	p.where.host[1] = xstrdup("vm1");
	p.where.rdma_addr[1] = xstrdup("192.168.52.12");
	p.where.rdma_gid[0] = xstrdup("fe80::1");
	p.where.rail = 2;
	p.where.rdma_dev = xstrdup("rxe0");
	rq_where_add_node(&p.where, "n1", "10.9.0.1");
	rq_where_add_node(&p.where, "n2", NULL);
	p.where.slots = 4;
	p.where.case_file = xstrdup("/cases/f.yaml");
	p.where.fabric.sim = true;
	p.where.fabric.topology = xstrdup("f.net");
	p.where.fabric.routing_engine = xstrdup("lash");
	p.where.fabric.ibsim_start_ms = 5000000000LL;	/* beyond 32 bits */
	rq_timeout_mul = 2.5;
	rq_request_init(&r, S.cases[0], "sysroot:x", ROLE_CLIENT);
	rq_request_place(&r, &p, 0, 4242, "/run/rq", true);
	/* a lab pair runs each side on its own rail */
	rq_request_set_key(&r, "devices", "mlx5_1");
	rq_request_set_key(&r, "port", "2");
	ck_assert_int_eq(r.timeout_ms, 50000);
	j = rq_request_to_json(&r);
	rq_request_release(&r);
	rq_where_release(&p.where);

	/* over the wire: one line of text */
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	j = json_loads(text, 0, &jerr);
	free(text);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "op")), "run");
	ck_assert_int_eq(rq_request_from_json(&b, j, &d, why, sizeof(why)), 0);
	json_decref(j);
	ck_assert_str_eq(b.c->name, "slow");
	ck_assert_ptr_eq(b.c->kind, &slow_kind);
	ck_assert_str_eq(((struct slow_cfg *)b.c->cfg)->note, "hello");
	ck_assert_int_eq(b.c->timeout_ms, 20000);	/* from defaults: */
	ck_assert_str_eq(b.c->devices, "mlx5_1");
	ck_assert_int_eq(b.c->port, 2);
	ck_assert_uint_eq(b.c->pos.line, 4);
	ck_assert_uint_eq(b.c->pos.col, 5);
	ck_assert_int_eq(b.role, ROLE_CLIENT);
	ck_assert_str_eq(b.target, "sysroot:x");
	ck_assert_int_eq(b.timeout_ms, 50000);
	ck_assert(b.timeout_mul == 2.5);
	ck_assert_str_eq(b.root, "fixtures/nodes/x");
	ck_assert(b.replay);
	ck_assert_str_eq(b.state_dir, "/run/rq");
	ck_assert_str_eq(b.local_addr, "10.0.0.1");
	ck_assert_str_eq(b.peer_addr, "10.0.0.2");
	ck_assert_int_eq(b.oob_port, 4242);
	ck_assert_str_eq(b.env[0], "A=1");
	ck_assert_str_eq(b.env[1], "B=two");
	ck_assert_ptr_null(b.env[2]);
	ck_assert_str_eq(b.tool_cwd, "/tmp/cwd");
	/* where it runs, typed, with the run-wide switches; what was unset is "" */
	const struct rq_where *w = &b.where;

	ck_assert_str_eq(w->host[0], "vm0");
	ck_assert_str_eq(w->host[1], "vm1");
	ck_assert_str_eq(w->rdma_addr[0], "");
	ck_assert_str_eq(w->rdma_addr[1], "192.168.52.12");
	ck_assert_str_eq(w->rdma_gid[0], "fe80::1");
	ck_assert_int_eq(w->rail, 2);
	ck_assert_str_eq(w->rdma_dev, "rxe0");
	ck_assert_str_eq(w->netdev, "");
	ck_assert_uint_eq(w->nnodes, 2);
	ck_assert_str_eq(rq_where_node_reach(w, 0), "10.9.0.1");
	ck_assert_str_eq(rq_where_node_reach(w, 1), "n2");
	ck_assert_int_eq(w->slots, 4);
	ck_assert_str_eq(w->case_file, "/cases/f.yaml");
	ck_assert(w->fabric.sim);
	ck_assert(!w->fabric.target_sm);
	ck_assert_str_eq(w->fabric.topology, "f.net");
	ck_assert_str_eq(w->fabric.routing_engine, "lash");
	ck_assert_str_eq(w->fabric.sm_log, "");
	ck_assert_int_eq(w->fabric.ibsim_start_ms, 5000000000LL);
	ck_assert(w->allow_sm_takeover);
	rq_request_release(&b);
	rq_diags_release(&d);
}
END_TEST

/* A placement field of the wrong type is refused, named; nothing is half-read. */
START_TEST(where_wrong_type_refused)
{
	struct rq_where w;
	char why[128];
	json_t *j = json_pack("{s:s,s:s}", "topology", "f.net", "sim", "yes");

	ck_assert_int_eq(rq_where_from_json(&w, j, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "placement field \"sim\" is not a boolean");
	ck_assert_ptr_null(w.fabric.topology);	/* released */
	json_decref(j);
	j = json_pack("{s:[s]}", "host", "vm0");
	ck_assert_int_eq(rq_where_from_json(&w, j, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "placement field \"host\" is not a pair");
	json_decref(j);
	/* and nothing known is every string "", the rail none */
	ck_assert_int_eq(rq_where_from_json(&w, NULL, why, sizeof(why)), 0);
	ck_assert_str_eq(w.fabric.sm_config, "");
	ck_assert_int_eq(w.rail, -1);
	rq_where_release(&w);
}
END_TEST

START_TEST(bad_case_names_its_position)
{
	struct rq_request r;
	char why[256];
	json_t *j = json_pack("{s:s,s:{s:s,s:[i,i],s:[{s:s,s:[i,i],s:{s:s,s:[i,i]}}]}}",
			      "op", "run", "case", "file", "cases/c.yaml", "at", 7, 5, "keys",
			      "key", "name", "at", 7, 5, "value", "text", "bad name", "at", 7, 11);

	ck_assert_int_eq(rq_request_from_json(&r, j, &D, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "could not load the case"));
	ck_assert_uint_ge(D.n, 1);
	ck_assert_str_eq(D.v[0].file, "cases/c.yaml");
	ck_assert_uint_eq(D.v[0].line, 7);
	ck_assert_uint_eq(D.v[0].col, 11);
	rq_request_release(&r);
	json_decref(j);
}
END_TEST

/* Run the case in an agent (forked, serving a socketpair) at mul; its verdict. */
static const char *run_in_agent(double mul)
{
	static char verdict[32];
	struct rq_request r;
	struct rq_agent *a;
	char why[256] = "";
	int sv[2];
	pid_t pid;
	json_t *req, *ans, *row;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(rq_agent_serve(sv[1], sv[1]) ? 1 : 0);
	}
	close(sv[1]);
	a = rq_agent_attach(sv[0], sv[0], -1, "test");
	/* The runner's process at x1: only the request carries the multiplier. */
	rq_timeout_mul = 1.0;
	rq_request_init(&r, S.cases[0], "local", ROLE_SINGLE);
	r.timeout_mul = mul;
	req = rq_request_to_json(&r);
	rq_request_release(&r);
	ans = rq_agent_call(a, req, 15000, why, sizeof(why));
	json_decref(req);
	ck_assert_msg(ans != NULL, "agent: %s", why);
	ck_assert_msg(json_is_true(json_object_get(ans, "ok")), "agent: %s",
		      json_string_value(json_object_get(ans, "error")));
	row = json_array_get(json_object_get(ans, "rows"), 0);
	snprintf(verdict, sizeof(verdict), "%s",
		 json_string_value(json_object_get(row, "verdict")) ?: "?");
	json_decref(ans);
	req = json_pack("{s:s}", "op", "shutdown");
	json_decref(rq_agent_call(a, req, 5000, why, sizeof(why)));
	json_decref(req);
	rq_agent_close(a);
	waitpid(pid, NULL, 0);
	return verdict;
}

START_TEST(timeout_mul_reaches_kind_tools)
{
	ck_assert_str_eq(run_in_agent(1.0), "FAIL");
	ck_assert_str_eq(run_in_agent(3.0), "PASS");
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_field_round_trips);
	tcase_add_test(tc, where_wrong_type_refused);
	tcase_add_test(tc, bad_case_names_its_position);
	tcase_add_test(tc, timeout_mul_reaches_kind_tools);
}

RQ_CHECK_MAIN("request", add_tests)
