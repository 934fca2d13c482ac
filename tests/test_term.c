/* SPDX-License-Identifier: MIT */
/*
 * Text a node supplies reaches a terminal or a one-line-per-entry list as
 * inert text (core/term.h): the rules of term_safe(), then a hostile node
 * end to end.  A fake agent on a socketpair (as in test_exec.c) answers a
 * FAIL row whose reason holds ESC ] 0 ; ... BEL (a window title), ESC [ 2 J
 * (clear the screen), CR and LF followed by a forged "PASS" line, an 8-bit
 * CSI and a bidi override; the node also reports a hostname with escapes.
 * The console row, the lab report's suspects block and the drain list must
 * hold none of ESC, BEL, CR or C1, one line per entry (no forged line), and
 * results.json, junit.xml and report.html their own escapes of it.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>
#include "agent/agent.h"
#include "core/kind.h"
#include "core/term.h"
#include "core/util.h"
#include "exec/unit.h"
#include "lab/lab_int.h"
#include "report/html.h"
#include "report/report.h"
#include "xmllint.h"
#include "check_main.h"

/* valid UTF-8 (it travels in JSON): C0, C1 as U+009B, a bidi override */
static const char hostile[] =
	"port down\r\n\033[2J\033]0;owned\007PASS  forged.case                          0.0s\n"
	"\xc2\x9b" "31mred \xe2\x80\xae" "desrever\tend";

/* No byte a terminal acts on: C0 (but the line's own '\n'), DEL, C1, bidi, bad UTF-8. */
static void assert_inert(const char *s, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		ck_assert_msg(c >= 0x20 || c == '\n', "%s: control byte 0x%02x at %zu in: %s", what, c, i, s);
		ck_assert_msg(c != 0x7f, "%s: DEL at %zu", what, i);
		ck_assert_msg(!(c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
				(unsigned char)s[i + 1] <= 0x9f), "%s: a C1 control at %zu", what, i);
		ck_assert_msg(!(c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
				(unsigned char)s[i + 2] >= 0xa8 && (unsigned char)s[i + 2] <= 0xae),
			      "%s: a bidi override or line separator at %zu", what, i);
	}
	ck_assert_msg(!strstr(s, "\nPASS  forged"), "%s: a forged line in: %s", what, s);
}

START_TEST(term_safe_rules)
{
	char *t = term_safe("a\033[2Jb\007c\r\nd\te\x7f" "f");

	ck_assert_str_eq(t, "a?[2Jb?c??d?e?f");
	free(t);
	/* UTF-8 text stays; C1 controls, overlong forms, stray bytes and bidi overrides do not */
	t = term_safe("r\xc3\xa9seau \xe2\x82\xac \xc2\x9b" "1m \xc0\xaf \x9b \xe2\x80\xae" "x \xe2\x80\xa8 \xf0\x9f\x98\x80");
	ck_assert_str_eq(t, "r\xc3\xa9seau \xe2\x82\xac ?1m ?? ? ?x ? \xf0\x9f\x98\x80");
	free(t);
	/* a sequence cut by the end of the string */
	t = term_safe("ab\xe2\x82");
	ck_assert_str_eq(t, "ab??");
	free(t);
	t = term_safe(NULL);
	ck_assert_str_eq(t, "");
	free(t);
}
END_TEST

/* A fake node: answers every run request with one FAIL row with the hostile reason. */
static void fake_node(int fd)
{
	FILE *in = fdopen(fd, "r");
	char line[65536];

	while (in && fgets(line, sizeof(line), in)) {
		json_t *req = json_loads(line, 0, NULL), *ans;
		json_int_t id = json_integer_value(json_object_get(req, "id"));
		const char *op = json_string_value(json_object_get(req, "op"));
		struct rq_result *r;

		if (op && !strcmp(op, "cancel")) {
			json_decref(req);
			continue;
		}
		json_decref(req);
		r = rq_result_new("t.case", NULL, 0);
		rq_result_set(r, RQ_FAIL, "placeholder");
		json_t *row = rq_result_to_json(r, false);

		/* a hostile node writes its JSON itself: the reason as it likes */
		json_object_set_new(row, "reason", json_string(hostile));
		ans = json_pack("{s:i, s:I, s:s, s:b, s:[o]}", "v", RQ_AGENT_PROTO, "id", id, "log",
				"log \033[2J\n", "ok", 1, "rows", row);
		rq_result_free(r);
		char *t = json_dumps(ans, JSON_COMPACT);

		json_decref(ans);
		if (write_full(fd, t, strlen(t)) || write_full(fd, "\n", 1))
			_exit(1);
		free(t);
	}
	_exit(0);
}

static struct rq_agent *fake(const char *label)
{
	int sv[2];
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != sv[1])
				close(fd);
		fake_node(sv[1]);
	}
	close(sv[1]);
	return rq_agent_attach(sv[0], sv[0], pid, label);
}

/* Run f with stdout into a file; its text into out. */
static void capture_stdout(void (*f)(void *), void *arg, struct sb *out)
{
	char path[] = "/tmp/rq-term-XXXXXX";
	int fd = mkstemp(path), saved;

	ck_assert_int_ge(fd, 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	f(arg);
	fflush(stdout);
	ck_assert_int_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	close(fd);
	ck_assert_int_eq(read_file(path, out, 0), 0);
	unlink(path);
}

struct report_call {
	struct cluster *cl;
	const struct rq_results *rs;
	json_t *lab;
	char *html;
};

static void call_report(void *arg)
{
	struct report_call *rc = arg;

	rc->lab = cluster_report(rc->cl, rc->rs, &rc->html);
}

START_TEST(hostile_node_inert_everywhere)
{
	struct rq_case c = { .name = (char *)"t.case", .kind = rq_kind_find("command"),
			     .file = (char *)"cases/t.yaml", .timeout_ms = 5000 };
	struct rq_agent *a = fake("n2");
	struct rq_results rows = { 0 };
	struct sb log = SB_INIT, out = SB_INIT;
	struct rq_unit u;

	rq_unit_init(&u, &c, 1);
	u.side[0].ag = a;
	u.side[0].req = json_pack("{s:s}", "op", "run");
	u.side[0].reports = true;
	rq_unit_run(&u, NULL, NULL);
	rq_unit_rows(&u, &rows, &log);
	/* as a lab run stamps them: the --nodes name, and what the node says its hostname is */
	struct rq_stamp st = { .target = "local", .target_why = "listed", .log = &log, .node = "n2",
			       .hostname = "evil\033]0;pwned\007\r\nPASS" };

	rq_rows_stamp(rows.v, rows.n, &c, &st);
	ck_assert_uint_eq(rows.n, 1);
	ck_assert_int_eq(rows.v[0]->verdict, RQ_FAIL);
	/* the row keeps what the node said; printing it is what must be safe */
	ck_assert_str_eq(rows.v[0]->reason, hostile);

	/* the console row: one line, inert */
	rq_console_render_row(&out, rows.v[0], false);
	assert_inert(out.buf, out.len, "console row");
	ck_assert_ptr_eq(strchr(out.buf, '\n'), out.buf + out.len - 1);
	ck_assert_ptr_nonnull(strstr(out.buf, "port down??"));
	sb_reset(&out);
	rq_console_render_row(&out, rows.v[0], true);	/* colour: our escapes only */
	ck_assert(str_starts(out.buf, "\033[1;31mFAIL \033[0m "));
	assert_inert(out.buf + strlen("\033[1;31mFAIL \033[0m "),
		     out.len - strlen("\033[1;31mFAIL \033[0m "), "coloured console row");
	sb_reset(&out);

	/* the lab report: n2 failed a node-local case, n1 did not; n2 said a hostile hostname */
	char dpath[] = "/tmp/rq-term-drain-XXXXXX";
	int dfd = mkstemp(dpath);

	ck_assert_int_ge(dfd, 0);
	close(dfd);
	struct cnode nodes[2] = {
		{ .name = (char *)"n1", .hostname = (char *)"n1", .target = (char *)"local", .same_host = -1 },
		{ .name = (char *)"n2", .hostname = (char *)"evil\033]0;pwned\007\r\nPASS",
		  .target = (char *)"local", .same_host = -1, .fails = 1 },
	};
	nodes[1].first_fail = xasprintf("%s: %s", rows.v[0]->id, rows.v[0]->reason);
	struct cluster cl = { .nodes = nodes, .n = 2, .launcher = LAUNCH_LOCAL, .policy_text = "ring" };

	cl.co.drain_list = dpath;
	cl.co.fanout = 2;
	struct report_call rc = { .cl = &cl, .rs = &rows };

	capture_stdout(call_report, &rc, &out);
	assert_inert(out.buf, out.len, "suspects block");
	ck_assert_msg(strstr(out.buf, "suspects (pairwise elimination):\n  node n2: t.case[n2]: port down??"),
		      "%s", out.buf);
	/* every line is ours: the block's header, one line per suspect, the drain list's line */
	for (const char *p = out.buf; *p; p = strchr(p, '\n') + 1) {
		ck_assert_msg(*p == '\n' || str_starts(p, "suspects") || str_starts(p, "  node n2: ") ||
			      str_starts(p, "drain list: "), "a line not of the report: %s", p);
		if (!strchr(p, '\n'))
			break;
	}
	sb_reset(&out);
	ck_assert_int_eq(read_file(dpath, &out, 0), 0);
	assert_inert(out.buf, out.len, "drain list");
	ck_assert_msg(str_starts(out.buf, "n2 t.case[n2]: port down??"), "%s", out.buf);
	ck_assert_ptr_eq(strchr(out.buf, '\n'), out.buf + out.len - 1);	/* one line */
	/* results.json keeps the text, JSON-escaped */
	char *j = json_dumps(rc.lab, JSON_COMPACT);

	ck_assert_msg(strcasestr(j, "\\u001b]0;pwned\\u0007\\r\\nPASS"), "%s", j);
	free(j);
	json_decref(rc.lab);
	free(rc.html);
	unlink(dpath);
	free(nodes[1].first_fail);

	/* junit.xml: well-formed, no raw control byte; report.html: escaped */
	struct rq_run_info ri;
	char *argv[] = { "rdmaqual", "run", NULL };

	rq_run_info_init(&ri, "0", 2, argv);
	sb_reset(&out);
	rq_junit_render(&out, &ri, &rows);
	for (size_t i = 0; i < out.len; i++)
		ck_assert_msg((unsigned char)out.buf[i] >= 0x20 || out.buf[i] == '\n' || out.buf[i] == '\t',
			      "junit.xml: byte 0x%02x", (unsigned char)out.buf[i]);
	int ok = xmllint_check(out.buf, out.len, NULL);

	if (ok >= 0)
		ck_assert_int_eq(ok, 1);
	char *text = rq_json_render(&ri, &rows);
	json_t *doc = json_loads(text, 0, NULL);

	ck_assert_ptr_nonnull(doc);
	sb_reset(&out);
	rq_html_run(&out, doc, "/nonexistent", NULL);
	ck_assert_ptr_null(strchr(out.buf, '\033'));
	ck_assert_ptr_null(strchr(out.buf, '\007'));
	ck_assert_ptr_null(strchr(out.buf, '\r'));
	json_decref(doc);
	free(text);
	rq_run_info_release(&ri);

	rq_unit_release(&u);
	rq_results_release(&rows);
	sb_release(&log);
	sb_release(&out);
	rq_agent_close(a);
}
END_TEST

static void add_tests(Suite *s, TCase *tc)
{
	(void)s;
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, term_safe_rules);
	tcase_add_test(tc, hostile_node_inert_everywhere);
}

RQ_CHECK_MAIN("term", add_tests)
