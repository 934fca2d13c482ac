/* SPDX-License-Identifier: MIT */
/*
 * TAP and Python unittest's verbose output (JUnit XML is parse_junit.c),
 * and the rdmaqual parse adapters of all three.
 *
 * TAP, as kselftest, blktests-style scripts and Test::More/prove write it
 * (TAP 13 and 14):
 *   ok 1 - name            not ok 2 name # TODO why     ok 3 # SKIP why
 *   1..3                   Bail out! why                # a diagnostic
 * Subtests come before the line of the test they belong to, indented by
 * four spaces (TAP 14) or prefixed "# " per level (kselftest's runner
 * wraps each test's own KTAP output so); they are named "parent/child".
 * Diagnostics after a failed test (Test::More's "#   Failed test ...") or,
 * when none follow, the ones just before it (kselftest prints a test's
 * output before its result line) become its message.  Directives: SKIP
 * (ok or not ok) is a skip; TODO on a "not ok" is a skip (a known
 * failure, TAP's "not a failure"), on an "ok" a pass; kselftest's XFAIL is
 * a pass; TIMEOUT and anything else a "not ok" says fail.  A YAML block
 * ("  ---" to "  ...") after a test is skipped except its duration_ms.
 *
 * unittest -v (stderr of `python3 -m unittest -v`, run_tests.py -v):
 *   test_x (mod.Class.test_x) ... ok         (3.11; before: "(mod.Class)")
 *   test_y (mod.Class.test_y)                a docstring follows on the
 *   What it checks ... skipped 'no device'   next line, then the verdict
 * The verdict may come lines later when the test prints.  The details
 * ("FAIL: test_z (mod.Class.test_z)", traceback) give a failure's message:
 * the exception line of the traceback (not assertEqual's diff after it).  setUpClass failures appear only there, and
 * become an ERROR test of their own.  "Ran N tests" and "OK (skipped=2)"
 * / "FAILED (failures=1)" are kept.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/util.h"
#include "parsers/parse_testresults.h"
#include "parsers/parsers.h"

#define MSG_MAX 480	/* bytes of a message kept: one readable line in a report */

static struct tr_test *add_test(struct tr_report *r, const char *name, size_t nlen,
				enum tr_verdict v, unsigned line)
{
	struct tr_test *t;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	t = &r->v[r->n++];
	*t = (struct tr_test){ .name = xstrndup(name, nlen), .v = v, .time_s = -1, .line = line };
	r->count[v]++;
	return t;
}

static void set_verdict(struct tr_report *r, struct tr_test *t, enum tr_verdict v)
{
	r->count[t->v]--;
	t->v = v;
	r->count[v]++;
}

/* Append a line to a message, bounded; the first cut is marked. */
static void msg_add(char **msg, const char *s, size_t n)
{
	size_t have = *msg ? strlen(*msg) : 0;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n || have >= MSG_MAX)
		return;
	if (have + 2 + n > MSG_MAX)
		n = MSG_MAX - have - 2 > 0 ? MSG_MAX - have - 2 : 0;
	*msg = xrealloc(*msg, have + n + 3);
	if (have) {
		memcpy(*msg + have, "; ", 2);
		have += 2;
	}
	memcpy(*msg + have, s, n);
	(*msg)[have + n] = '\0';
}

/* ---- TAP ----------------------------------------------------------------- */

#define TAP_DEPTH 8
#define PRE_LINES 3

struct tap_level {
	size_t first_child;		/* r->n when this level's current test began */
	char *pre[PRE_LINES];		/* the diagnostics since the last test line */
	unsigned npre;
	long long last;			/* index of the last test at this depth, or -1 */
	bool last_wants_diag;		/* a failed test without a directive */
	unsigned diag_after;		/* diagnostics taken after it */
	char *held;			/* the diagnostics before it, its message if none follow */
};

/* The last test of a level is complete: the diagnostics before it, if none came after. */
static void level_settle(struct tr_report *r, struct tap_level *lv)
{
	if (lv->last >= 0 && lv->last_wants_diag && !r->v[lv->last].msg && lv->held) {
		r->v[lv->last].msg = lv->held;
		lv->held = NULL;
	}
	free(lv->held);
	lv->held = NULL;
	lv->last_wants_diag = false;
}

static void pre_clear(struct tap_level *lv)
{
	for (unsigned i = 0; i < lv->npre; i++)
		free(lv->pre[i]);
	lv->npre = 0;
}

static void pre_push(struct tap_level *lv, const char *s)
{
	if (lv->npre == PRE_LINES) {
		free(lv->pre[0]);
		memmove(lv->pre, lv->pre + 1, (PRE_LINES - 1) * sizeof(*lv->pre));
		lv->npre--;
	}
	lv->pre[lv->npre++] = xstrdup(s);
}

/* Strip the depth markers: four spaces or "# " per level, while a TAP line is underneath. */
static const char *tap_depth(const char *s, unsigned *depth)
{
	*depth = 0;
	for (;;) {
		const char *in = NULL;

		if (!strncmp(s, "    ", 4))
			in = s + 4;
		else if (!strncmp(s, "# ", 2) && (!strncmp(s + 2, "ok", 2) || !strncmp(s + 2, "not ok", 6) ||
						  !strncmp(s + 2, "1..", 3) || !strncmp(s + 2, "TAP version", 11) ||
						  !strncmp(s + 2, "# ", 2) || !strncmp(s + 2, "    ", 4) ||
						  !strncmp(s + 2, "Bail out!", 9)))
			in = s + 2;
		if (!in)
			return s;
		s = in;
		(*depth)++;
	}
}

/* "ok", "not ok" followed by the end or a blank (not "okay"). */
static int tap_result(const char *s, const char **rest)
{
	if (!strncmp(s, "not ok", 6) && (!s[6] || s[6] == ' ' || s[6] == '\t')) {
		*rest = s + 6;
		return 0;
	}
	if (!strncmp(s, "ok", 2) && (!s[2] || s[2] == ' ' || s[2] == '\t')) {
		*rest = s + 2;
		return 1;
	}
	return -1;
}

/* The unescaped '#' that starts a directive, or NULL. */
static const char *tap_hash(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '#')
			return p;
	}
	return NULL;
}

static bool word_ci(const char *s, const char *w)
{
	size_t n = strlen(w);

	return !strncasecmp(s, w, n);
}

static void tap_test(struct tr_report *r, struct tap_level *lv, unsigned depth, bool ok,
		     const char *rest, unsigned line)
{
	const char *p = rest, *hash, *dir = NULL;
	char name[512];
	long num = -1;
	enum tr_verdict v = ok ? TR_PASS : TR_FAIL;
	size_t nlen;
	struct tr_test *t;
	char *msg = NULL;

	while (*p == ' ' || *p == '\t')
		p++;
	if (isdigit((unsigned char)*p)) {
		num = strtol(p, (char **)&p, 10);
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (*p == '-' && (p[1] == ' ' || !p[1]))
		p += p[1] ? 2 : 1;
	hash = tap_hash(p);
	nlen = hash ? (size_t)(hash - p) : strlen(p);
	while (nlen && isspace((unsigned char)p[nlen - 1]))
		nlen--;
	if (hash) {
		dir = hash + 1;
		while (*dir == ' ' || *dir == '\t')
			dir++;
		if (word_ci(dir, "skip")) {
			v = TR_SKIP;
		} else if (word_ci(dir, "todo")) {
			v = ok ? TR_PASS : TR_SKIP;
		} else if (word_ci(dir, "xfail")) {
			v = TR_PASS;
		} else if (!*dir) {
			dir = NULL;
		}
		if (dir)
			msg_add(&msg, dir, strlen(dir));
	}
	if (nlen)
		snprintf(name, sizeof(name), "%.*s", (int)nlen, p);
	else if (num >= 0)
		snprintf(name, sizeof(name), "test %ld", num);
	else
		snprintf(name, sizeof(name), "test at line %u", line);
	/* Children reported before this line are its subtests: name them under it. */
	if (depth + 1 < TAP_DEPTH) {
		struct tap_level *cl = &lv[depth + 1];

		for (size_t i = cl->first_child; i < r->n; i++) {
			char *old = r->v[i].name;

			r->v[i].name = xasprintf("%s/%s", name, old);
			free(old);
		}
		level_settle(r, cl);
		pre_clear(cl);
		cl->last = -1;
	}
	level_settle(r, &lv[depth]);
	if (v == TR_SKIP && dir && !strcasecmp(dir, "skip") && lv[depth].npre) {
		/* kselftest's bare "# SKIP": the reason is the test's last line before it */
		free(msg);
		msg = NULL;
		msg_add(&msg, lv[depth].pre[lv[depth].npre - 1], strlen(lv[depth].pre[lv[depth].npre - 1]));
	}
	t = add_test(r, name, strlen(name), v, line);
	t->msg = msg;
	if (!depth)
		r->ntop++;
	lv[depth].last = (long long)(r->n - 1);
	/*
	 * A failure without a directive takes the diagnostics that follow it
	 * (Test::More), else those just before it (kselftest prints a test's
	 * output before its result line).
	 */
	lv[depth].last_wants_diag = v == TR_FAIL && !msg;
	lv[depth].diag_after = 0;
	if (lv[depth].last_wants_diag)
		for (unsigned i = 0; i < lv[depth].npre; i++)
			msg_add(&lv[depth].held, lv[depth].pre[i], strlen(lv[depth].pre[i]));
	pre_clear(&lv[depth]);
	/* the next test at this depth starts collecting its own children */
	for (unsigned d = depth + 1; d < TAP_DEPTH; d++)
		lv[d].first_child = r->n;
}

int tap_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz)
{
	struct tap_level lv[TAP_DEPTH];
	struct rq_lines l;
	const char *line;
	bool any = false, in_yaml = false;
	unsigned yaml_depth = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->planned = -1;
	memset(lv, 0, sizeof(lv));
	for (unsigned d = 0; d < TAP_DEPTH; d++)
		lv[d].last = -1;
	rq_lines_init(&l, text, len);
	while (!ret && (line = rq_lines_next(&l))) {
		unsigned depth;
		const char *s, *rest;
		int res;

		if (l.nul) {
			ret = rq_parse_error(err, errsz, l.no, "NUL byte in TAP output");
			break;
		}
		if (in_yaml) {
			const char *y = line;

			while (*y == ' ')
				y++;
			if (!strcmp(y, "...")) {
				in_yaml = false;
			} else if (!strncmp(y, "duration_ms:", 12) && lv[yaml_depth].last >= 0) {
				char *end;
				double ms = strtod(y + 12, &end);

				if (end != y + 12 && isfinite(ms) && ms >= 0)
					r->v[lv[yaml_depth].last].time_s = ms / 1000.0;
			}
			continue;
		}
		s = tap_depth(line, &depth);
		if (depth >= TAP_DEPTH)
			continue;	/* deeper than any real suite nests: text */
		if ((res = tap_result(s, &rest)) >= 0) {
			tap_test(r, lv, depth, res == 1, rest, l.no);
			any = true;
		} else if (!strncmp(s, "1..", 3)) {
			char *end;
			long long n = strtoll(s + 3, &end, 10);

			if (end == s + 3 || n < 0 || (*end && *end != ' ' && *end != '\t')) {
				ret = rq_parse_error(err, errsz, l.no, "a TAP plan is 1..N, not \"%.60s\"", s);
				break;
			}
			if (depth == 0)
				r->planned = n;
			any = true;
		} else if (!strncmp(s, "Bail out!", 9)) {
			r->bailed = true;
			free(r->bail);
			r->bail = xstrdup(s[9] == ' ' ? s + 10 : s + 9);
			any = true;
		} else if (!strncmp(s, "TAP version", 11)) {
			any = true;
		} else if (s[0] == ' ' && !strcmp(s + strspn(s, " "), "---") && any) {
			/* a YAML block about the test just reported */
			in_yaml = true;
			yaml_depth = depth;
		} else if (s[0] == '#') {
			const char *d = s + 1;
			struct tap_level *L = &lv[depth];

			while (*d == ' ')
				d++;
			/* summaries of the whole, not of a test (kselftest, Test::More) */
			if (!*d || !strncasecmp(d, "Subtest:", 8) || !strncmp(d, "Totals:", 7) ||
			    !strncmp(d, "Looks like you", 14))
				continue;
			if (L->last_wants_diag && L->diag_after < 4) {
				msg_add(&r->v[L->last].msg, d, strlen(d));
				L->diag_after++;
			} else {
				pre_push(L, d);
			}
		}
		/* anything else is a program's own text, which TAP ignores */
	}
	rq_lines_release(&l);
	for (unsigned d = 0; d < TAP_DEPTH; d++) {
		level_settle(r, &lv[d]);
		pre_clear(&lv[d]);
	}
	if (!ret && !any)
		ret = rq_parse_error(err, errsz, l.no ? l.no : 1,
				     "expected TAP: no \"ok\"/\"not ok\" line and no 1..N plan");
	if (ret)
		tr_report_release(r);
	return ret;
}

/* ---- Python unittest -v ---------------------------------------------------- */

static bool is_ident(const char *s, size_t n, bool dots)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (dots && s[i] == '.')))
			return false;
	return true;
}

/*
 * "name (mod.Class.name)" at the start of a line: fills the full test name
 * and returns what follows the closing parenthesis, or NULL.
 */
static const char *ut_start(const char *s, char *full, size_t size)
{
	const char *sp = strchr(s, ' '), *close;

	if (!sp || sp[1] != '(' || !is_ident(s, (size_t)(sp - s), false))
		return NULL;
	close = strchr(sp + 2, ')');
	if (!close || !is_ident(sp + 2, (size_t)(close - sp - 2), true))
		return NULL;
	size_t nl = (size_t)(sp - s), pl = (size_t)(close - sp - 2);
	const char *paren = sp + 2;

	/* 3.11 writes the whole id; older ones only the class */
	if (pl > nl && paren[pl - nl - 1] == '.' && !memcmp(paren + pl - nl, s, nl))
		snprintf(full, size, "%.*s", (int)pl, paren);
	else
		snprintf(full, size, "%.*s.%.*s", (int)pl, paren, (int)nl, s);
	return close + 1;
}

/* A verdict word at the start of s: "ok", "FAIL", "ERROR", "skipped 'why'", ... */
static int ut_verdict(const char *s, enum tr_verdict *v, const char **why)
{
	*why = NULL;
	if (!strcmp(s, "ok") || !strcmp(s, "expected failure")) {
		*v = TR_PASS;
		if (s[0] == 'e')
			*why = s;
		return 0;
	}
	if (!strcmp(s, "FAIL") || !strcmp(s, "unexpected success")) {
		*v = TR_FAIL;
		if (s[0] == 'u')
			*why = s;
		return 0;
	}
	if (!strcmp(s, "ERROR")) {
		*v = TR_ERROR;
		return 0;
	}
	if (!strncmp(s, "skipped", 7) && (!s[7] || s[7] == ' ')) {
		*v = TR_SKIP;
		*why = s[7] ? s + 8 : NULL;
		return 0;
	}
	return -1;
}

static struct tr_test *ut_find(struct tr_report *r, const char *name)
{
	/* the details come in the order of the tests: search from the end */
	for (size_t i = r->n; i-- > 0;)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	return NULL;
}

static void ut_set_why(struct tr_test *t, const char *why)
{
	size_t n;

	if (!why)
		return;
	n = strlen(why);
	/* skipped 'reason': the quotes are repr()'s */
	if (n >= 2 && why[0] == '\'' && why[n - 1] == '\'') {
		why++;
		n -= 2;
	}
	msg_add(&t->msg, why, n);
}

int unittest_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz)
{
	enum { BODY, DETAIL_HEAD, DETAIL_TB } st = BODY;
	struct rq_lines l;
	const char *line;
	char full[512], pending[512] = "", detail[512] = "", last_tb[MSG_MAX + 1] = "";
	unsigned pending_line = 0, ran_line = 0, detail_line = 0;
	enum tr_verdict detail_v = TR_FAIL;
	bool tb_have = false;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->planned = -1;
	rq_lines_init(&l, text, len);
	while (!ret && (line = rq_lines_next(&l))) {
		const char *after, *why;
		enum tr_verdict v;

		if (l.nul) {
			ret = rq_parse_error(err, errsz, l.no, "NUL byte in unittest output");
			break;
		}
		bool rule_eq = !strncmp(line, "======", 6) && strspn(line, "=") == strlen(line);
		bool rule_dash = !strncmp(line, "------", 6) && strspn(line, "-") == strlen(line);

		if (rule_eq || (rule_dash && st == DETAIL_TB)) {
			/* the end of a traceback: its last line is the message */
			if (st == DETAIL_TB && detail[0]) {
				struct tr_test *t = ut_find(r, detail);

				if (!t) {
					t = add_test(r, detail, strlen(detail), detail_v, detail_line);
				} else if (t->v == TR_PASS) {
					set_verdict(r, t, detail_v);
				}
				if (last_tb[0] && !t->msg)
					msg_add(&t->msg, last_tb, strlen(last_tb));
			}
			detail[0] = last_tb[0] = '\0';
			tb_have = false;
			st = rule_eq ? DETAIL_HEAD : BODY;
			pending[0] = '\0';
			continue;
		}
		if (st == DETAIL_HEAD) {
			if (!strncmp(line, "FAIL: ", 6) || !strncmp(line, "ERROR: ", 7)) {
				const char *p = line + (line[0] == 'F' ? 6 : 7);
				const char *tail = ut_start(p, full, sizeof(full));

				detail_v = line[0] == 'F' ? TR_FAIL : TR_ERROR;
				detail_line = l.no;
				if (tail) {
					snprintf(detail, sizeof(detail), "%s", full);
				} else {
					/* "setUpClass (mod.Class)": no test of that name ran */
					snprintf(detail, sizeof(detail), "%s", p);
				}
			} else if (rule_dash) {
				st = DETAIL_TB;
			}
			continue;
		}
		if (st == DETAIL_TB) {
			/*
			 * The exception is the first unindented line after the
			 * last frame; what follows it (assertEqual's diff) is not.
			 */
			if (line[0] == ' ')
				tb_have = false;
			else if (line[0] && !tb_have) {
				snprintf(last_tb, sizeof(last_tb), "%s", line);
				tb_have = true;
			}
			if (!strncmp(line, "Ran ", 4)) {
				st = BODY;
			} else {
				continue;
			}
		}
		if (!strncmp(line, "Ran ", 4) && isdigit((unsigned char)line[4])) {
			r->planned = strtoll(line + 4, NULL, 10);
			ran_line = l.no;
			continue;
		}
		if (ran_line && (!strncmp(line, "OK", 2) || !strncmp(line, "FAILED", 6))) {
			free(r->summary);
			r->summary = xstrdup(line);
			continue;
		}
		if ((after = ut_start(line, full, sizeof(full)))) {
			const char *dots = strstr(after, " ... ");

			if (dots && !ut_verdict(dots + 5, &v, &why)) {
				ut_set_why(add_test(r, full, strlen(full), v, l.no), why);
				pending[0] = '\0';
			} else {
				/* the verdict follows: after a docstring, or after the test's own output */
				snprintf(pending, sizeof(pending), "%s", full);
				pending_line = l.no;
			}
			continue;
		}
		if (pending[0]) {
			const char *dots = strstr(line, " ... ");
			const char *vs = dots ? dots + 5 : line;

			if (!ut_verdict(vs, &v, &why)) {
				ut_set_why(add_test(r, pending, strlen(pending), v, pending_line), why);
				pending[0] = '\0';
			}
		}
	}
	rq_lines_release(&l);
	if (!ret && !r->n && ran_line && r->planned > 0)
		ret = rq_parse_error(err, errsz, ran_line, "\"Ran %lld tests\" without a line per test: "
				     "run unittest with -v", r->planned);
	else if (!ret && !r->n && !ran_line)
		ret = rq_parse_error(err, errsz, l.no ? l.no : 1,
				     "expected unittest -v output: no \"test (module.Class) ... ok\" line "
				     "and no \"Ran N tests\"");
	if (ret)
		tr_report_release(r);
	return ret;
}

/*
 * blktests' ./check, as its _output_status() prints each test when stdout
 * is not a terminal (no tput):
 *
 *   nvme/003 (test if we're sending keep-alives to a discovery controller) [passed]
 *       runtime  10.115s  ...  10.117s
 *   nvme/012 => nvme0n1 (run mkfs and data verification fio job) [failed]
 *       runtime    ...  3.004s
 *       --- tests/nvme/012.out ...
 *   nvme/048 (Test queue count changes on reconnect)             [not run]
 *       nvme_trtype=loop is not supported in this test
 *   nvme/006 (tr=rdma bd=file) (create an NVMeOF target)         [passed]
 *
 * (a group whose prepare() refuses prints GROUP, a slash and three
 * asterisks, [not run], and its reason: one skipped row for the group)
 * A test's name is its GROUP/NNN (with " => DEV" for a device test, and
 * the condition a test runs under, "(tr=rdma bd=file)", when it has one); the
 * indented lines under it are its runtime ("... LAST" is this run's) and
 * why it failed or was not run.  A line with the name and no status is
 * the last run's, printed before this one: not a test.
 */
/*
 * A test that runs once per condition (nvme's transports and backends)
 * prints it in parentheses before its description, as words KEY=VALUE:
 * "nvme/006 (tr=rdma bd=device) (create an NVMeOF target)".  It names the
 * test with the condition, as blktests' own results directory does, so
 * that each run of it is a row of its own.  p: after "(", end: the status.
 */
static bool blk_cond(const char *p, const char *end)
{
	const char *e = p < end ? memchr(p, ')', (size_t)(end - p)) : NULL;
	bool word = false, eq = false;

	if (!e || e == p || end - e < 3 || memcmp(e, ") (", 3))
		return false;
	for (; p <= e; p++) {
		if (*p == ' ' || p == e) {
			if (word && !eq)
				return false;
			word = eq = false;
		} else {
			word = true;
			eq |= *p == '=';
		}
	}
	return true;
}

static bool blk_status(const char *line, size_t *name_len, enum tr_verdict *v,
		       const char **status)
{
	static const struct { const char *word; enum tr_verdict v; } st[] = {
		{ "[passed]", TR_PASS }, { "[failed]", TR_FAIL }, { "[not run]", TR_SKIP },
	};
	size_t n = strlen(line);

	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	if (!n || isspace((unsigned char)line[0]) || !memchr(line, '/', n))
		return false;
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		size_t w = strlen(st[i].word);

		if (n > w && !memcmp(line + n - w, st[i].word, w)) {
			/* the name: up to " (" (the description) or the padding */
			const char *d = strstr(line, " (");
			size_t k = d && (size_t)(d - line) < n - w ? (size_t)(d - line) : n - w;

			/* ... and the condition before the description, part of it */
			if (d && (size_t)(d - line) < n - w && blk_cond(d + 2, line + n - w))
				k = (size_t)(strchr(d + 2, ')') + 1 - line);

			while (k && isspace((unsigned char)line[k - 1]))
				k--;
			*name_len = k;
			*v = st[i].v;
			*status = line + n - w;
			return k > 0;
		}
	}
	return false;
}

/*
 * Does the line begin with a test's name, GROUP/NNN or GROUP/***?  The
 * rest are printed outside any test: ./check's warnings ("./check: gawk is
 * not available"), or a shell's error from a test's requires() that killed
 * its subshell before it printed a line ("common/rc: line 235: read:
 * 95deb12: value too great for base" from _have_kver on a kernel release
 * of "6.12.95+deb12-amd64"): that test is then missing from the rows, and
 * ./check exits 1 with no test failed.
 */
static bool blk_named(const char *line)
{
	size_t n = strcspn(line, " \t");
	const char *slash = memchr(line, '/', n);
	size_t k;

	if (!slash || slash == line)
		return false;
	k = (size_t)(line + n - slash - 1);
	if (k == 3 && !memcmp(slash + 1, "***", 3))
		return true;
	return k && strspn(slash + 1, "0123456789") == k;
}

int blktests_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz)
{
	struct rq_lines l;
	const char *line;
	struct tr_test *cur = NULL;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->planned = -1;
	rq_lines_init(&l, text, len);
	while ((line = rq_lines_next(&l))) {
		size_t nl;
		enum tr_verdict v;
		const char *status;

		if (l.nul) {
			ret = rq_parse_error(err, errsz, l.no, "NUL byte in blktests output");
			break;
		}
		if (blk_status(line, &nl, &v, &status)) {
			cur = add_test(r, line, nl, v, l.no);
			continue;
		}
		if (!isspace((unsigned char)line[0])) {
			cur = NULL;	/* the last run's line, a header, the shell's */
			if (*line && !blk_named(line)) {
				if (!r->outside++)
					r->outside_first = xstrdup(line);
			}
			continue;
		}
		if (!cur)
			continue;
		const char *s = line + strspn(line, " \t");

		if (!strncmp(s, "runtime", 7)) {
			/* "runtime  10.115s  ...  10.117s": this run's is the last */
			const char *last = strrchr(s, ' ');
			double t;

			if (last && sscanf(last + 1, "%lfs", &t) == 1)
				cur->time_s = t;
		} else if (cur->v != TR_PASS && *s) {
			msg_add(&cur->msg, s, strlen(s));
		}
	}
	rq_lines_release(&l);
	if (!ret && !r->n)
		ret = rq_parse_error(err, errsz, 0, "expected blktests ./check output: no "
				     "\"GROUP/NNN (...) [passed|failed|not run]\" line%s%s%s",
				     r->outside ? " (the first line: \"" : "",
				     r->outside ? r->outside_first : "", r->outside ? "\")" : "");
	if (ret)
		tr_report_release(r);
	return ret;
}

int tr_parse(enum tr_format f, const char *text, size_t len, struct tr_report *r,
	     char *err, size_t errsz)
{
	switch (f) {
	case TR_TAP:
		return tap_parse(text, len, r, err, errsz);
	case TR_JUNIT:
		return junit_parse(text, len, r, err, errsz);
	case TR_UNITTEST:
		return unittest_parse(text, len, r, err, errsz);
	case TR_BLKTESTS:
		return blktests_parse(text, len, r, err, errsz);
	}
	return rq_parse_error(err, errsz, 0, "unknown results format");
}

/* ---- rdmaqual parse tap|junit|unittest ----------------------------------- */

static int tr_json(enum tr_format f, const char *text, size_t len, json_t **out,
		   char *err, size_t errsz)
{
	struct tr_report r;
	json_t *o, *tests;

	if (tr_parse(f, text, len, &r, err, errsz))
		return -EINVAL;
	o = json_object();
	tests = json_array();
	for (size_t i = 0; i < r.n; i++) {
		json_t *t = json_pack("{s:o,s:s,s:i}", "name", rq_json_text(r.v[i].name),
				      "verdict", tr_verdict_name(r.v[i].v), "line", (int)r.v[i].line);

		if (r.v[i].time_s >= 0)
			json_object_set_new(t, "time_s", json_real(r.v[i].time_s));
		if (r.v[i].msg)
			json_object_set_new(t, "message", rq_json_text(r.v[i].msg));
		json_array_append_new(tests, t);
	}
	json_object_set_new(o, "tests", tests);
	json_object_set_new(o, "passed", json_integer((json_int_t)r.count[TR_PASS]));
	json_object_set_new(o, "failed", json_integer((json_int_t)r.count[TR_FAIL]));
	json_object_set_new(o, "errors", json_integer((json_int_t)r.count[TR_ERROR]));
	json_object_set_new(o, "skipped", json_integer((json_int_t)r.count[TR_SKIP]));
	json_object_set_new(o, "planned", r.planned >= 0 ? json_integer(r.planned) : json_null());
	if (r.bailed)
		json_object_set_new(o, "bail_out", rq_json_text(r.bail));
	if (r.summary)
		json_object_set_new(o, "summary", rq_json_text(r.summary));
	if (r.outside) {
		json_object_set_new(o, "lines_outside", json_integer((json_int_t)r.outside));
		json_object_set_new(o, "first_outside", rq_json_text(r.outside_first));
	}
	tr_report_release(&r);
	*out = o;
	return 0;
}

static int tap_json(const char *t, size_t n, json_t **o, char *e, size_t es)
{
	return tr_json(TR_TAP, t, n, o, e, es);
}

static int junit_json(const char *t, size_t n, json_t **o, char *e, size_t es)
{
	return tr_json(TR_JUNIT, t, n, o, e, es);
}

static int unittest_json(const char *t, size_t n, json_t **o, char *e, size_t es)
{
	return tr_json(TR_UNITTEST, t, n, o, e, es);
}

static int blktests_json(const char *t, size_t n, json_t **o, char *e, size_t es)
{
	return tr_json(TR_BLKTESTS, t, n, o, e, es);
}

const struct rq_parser rq_parser_blktests = {
	.name = "blktests",
	.help = "blktests' ./check output: GROUP/NNN [passed|failed|not run], the runtime, why a "
		"test failed or was not run",
	.parse = blktests_json,
};

const struct rq_parser rq_parser_tap = {
	.name = "tap",
	.help = "TAP 13/14 (kselftest, prove-style scripts): tests, subtests, SKIP/TODO",
	.parse = tap_json,
};

const struct rq_parser rq_parser_junit = {
	.name = "junit",
	.help = "JUnit XML as programs write it (pytest --junitxml, ctest --output-junit)",
	.parse = junit_json,
};

const struct rq_parser rq_parser_unittest = {
	.name = "unittest",
	.help = "Python unittest -v output (rdma-core's run_tests.py -v): tests, skips, failures",
	.parse = unittest_json,
};
