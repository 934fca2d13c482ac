/* SPDX-License-Identifier: MIT */
/*
 * JUnit XML as test programs write it: pytest --junitxml, ctest
 * --output-junit, googletest --gtest_output=xml, and most CI tools.
 *
 *   <testsuites><testsuite name tests failures ...>
 *     <testcase classname="test_mod.TestC" name="test_x" time="0.01">
 *       <failure message="assert 1 == 2">traceback</failure>  (or <error>)
 *       <skipped message="no device"/>
 *     </testcase>
 *
 * A testcase is a test wherever it is nested; its name is
 * "classname.name" (just name when the classname is empty or the same,
 * as ctest writes it).  ctest's status="notrun"/"disabled" is a skip too.
 *
 * The reader is the small part of XML these files use: elements,
 * attributes in either quote, the five named entities and character
 * references, comments, CDATA, a prolog and a DOCTYPE without an internal
 * subset.  Anything else, unbalanced tags included, is refused at its line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/util.h"
#include "parsers/parse_testresults.h"
#include "parsers/parsers.h"

#define DEPTH_MAX 64
#define ATTR_MAX 16
#define TEXT_KEEP 480

struct xr {
	const char *s, *p, *end;
	unsigned line;		/* of p */
	char *err;
	size_t errsz;
};

struct attr {
	char name[32];
	char *value;
};

struct elem {
	char name[64];
	struct attr a[ATTR_MAX];
	unsigned na;
	bool empty;		/* <x/> */
	unsigned line;
};

static void adv(struct xr *x, size_t n)
{
	for (size_t i = 0; i < n && x->p < x->end; i++, x->p++)
		if (*x->p == '\n')
			x->line++;
}

static bool at(struct xr *x, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(x->end - x->p) >= n && !memcmp(x->p, lit, n);
}

/* Skip past the next occurrence of lit; false when there is none. */
static bool skip_past(struct xr *x, const char *lit)
{
	size_t n = strlen(lit);

	while ((size_t)(x->end - x->p) >= n) {
		if (!memcmp(x->p, lit, n)) {
			adv(x, n);
			return true;
		}
		adv(x, 1);
	}
	return false;
}

static void skip_ws(struct xr *x)
{
	while (x->p < x->end && isspace((unsigned char)*x->p))
		adv(x, 1);
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == ':';
}

static int read_name(struct xr *x, char *buf, size_t size)
{
	size_t n = 0;

	while (x->p < x->end && name_char(*x->p)) {
		if (n + 1 < size)
			buf[n++] = *x->p;
		adv(x, 1);
	}
	buf[n] = '\0';
	return n ? 0 : -1;
}

/* Decode entities of s[0..n) into out (appended). */
static int decode(struct xr *x, const char *s, size_t n, struct sb *out)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '&') {
			sb_addc(out, s[i]);
			continue;
		}
		const char *semi = memchr(s + i, ';', n - i);
		static const struct { const char *e; char c; } ents[] = {
			{ "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&apos;", '\'' },
		};
		bool done = false;

		if (!semi || semi - (s + i) > 12)
			return rq_parse_error(x->err, x->errsz, x->line, "a '&' that starts no entity");
		for (size_t k = 0; k < ARRAY_SIZE(ents); k++)
			if ((size_t)(semi - (s + i) + 1) == strlen(ents[k].e) &&
			    !memcmp(s + i, ents[k].e, strlen(ents[k].e))) {
				sb_addc(out, ents[k].c);
				done = true;
			}
		if (!done && s[i + 1] == '#') {
			char *endp;
			unsigned long cp = s[i + 2] == 'x' ? strtoul(s + i + 3, &endp, 16)
							   : strtoul(s + i + 2, &endp, 10);

			if (endp != semi || cp == 0 || cp > 0x10FFFF)
				return rq_parse_error(x->err, x->errsz, x->line, "a bad character reference");
			/* UTF-8 */
			if (cp < 0x80) {
				sb_addc(out, (char)cp);
			} else if (cp < 0x800) {
				sb_addc(out, (char)(0xC0 | (cp >> 6)));
				sb_addc(out, (char)(0x80 | (cp & 0x3F)));
			} else if (cp < 0x10000) {
				sb_addc(out, (char)(0xE0 | (cp >> 12)));
				sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
				sb_addc(out, (char)(0x80 | (cp & 0x3F)));
			} else {
				sb_addc(out, (char)(0xF0 | (cp >> 18)));
				sb_addc(out, (char)(0x80 | ((cp >> 12) & 0x3F)));
				sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
				sb_addc(out, (char)(0x80 | (cp & 0x3F)));
			}
			done = true;
		}
		if (!done)
			return rq_parse_error(x->err, x->errsz, x->line, "unknown entity \"%.*s\"",
					      (int)(semi - (s + i) + 1), s + i);
		i = (size_t)(semi - s);
	}
	return 0;
}

static void elem_release(struct elem *e)
{
	for (unsigned i = 0; i < e->na; i++)
		free(e->a[i].value);
	e->na = 0;
}

static const char *attr_get(const struct elem *e, const char *name)
{
	for (unsigned i = 0; i < e->na; i++)
		if (!strcmp(e->a[i].name, name))
			return e->a[i].value;
	return NULL;
}

/* At '<' of a start tag: read it. */
static int read_start(struct xr *x, struct elem *e)
{
	memset(e, 0, sizeof(*e));
	e->line = x->line;
	adv(x, 1);
	if (read_name(x, e->name, sizeof(e->name)))
		return rq_parse_error(x->err, x->errsz, x->line, "expected an element name after '<'");
	for (;;) {
		struct sb v = SB_INIT;
		char q;
		const char *vs;

		skip_ws(x);
		if (at(x, "/>")) {
			adv(x, 2);
			e->empty = true;
			return 0;
		}
		if (at(x, ">")) {
			adv(x, 1);
			return 0;
		}
		if (x->p >= x->end)
			return rq_parse_error(x->err, x->errsz, e->line, "<%s> is not closed", e->name);
		char an[32];

		if (read_name(x, an, sizeof(an)))
			return rq_parse_error(x->err, x->errsz, x->line, "expected an attribute of <%s>",
					      e->name);
		skip_ws(x);
		if (!at(x, "="))
			return rq_parse_error(x->err, x->errsz, x->line, "attribute %s of <%s> has no value",
					      an, e->name);
		adv(x, 1);
		skip_ws(x);
		q = x->p < x->end ? *x->p : 0;
		if (q != '"' && q != '\'')
			return rq_parse_error(x->err, x->errsz, x->line, "attribute %s of <%s>: expected a quoted value",
					      an, e->name);
		adv(x, 1);
		vs = x->p;
		while (x->p < x->end && *x->p != q) {
			if (*x->p == '<')
				return rq_parse_error(x->err, x->errsz, x->line, "'<' in attribute %s", an);
			adv(x, 1);
		}
		if (x->p >= x->end)
			return rq_parse_error(x->err, x->errsz, e->line, "attribute %s of <%s> is not closed",
					      an, e->name);
		if (decode(x, vs, (size_t)(x->p - vs), &v)) {
			sb_release(&v);
			return -EINVAL;
		}
		adv(x, 1);
		if (e->na < ATTR_MAX) {
			snprintf(e->a[e->na].name, sizeof(e->a[e->na].name), "%s", an);
			e->a[e->na++].value = sb_detach(&v);
		} else {
			sb_release(&v);
		}
	}
}

/* The test a <testcase> stands for, once its end is seen. */
struct tcase {
	bool open;
	char *name;
	unsigned line;
	double time_s;
	enum tr_verdict v;
	char *msg;
	bool msg_from_text;	/* no message attribute: take the first line of the text */
	struct sb text;
};

static void tcase_begin(struct tcase *tc, const struct elem *e)
{
	const char *n = attr_get(e, "name"), *cls = attr_get(e, "classname"), *t = attr_get(e, "time");
	const char *status = attr_get(e, "status");

	memset(tc, 0, sizeof(*tc));
	tc->open = true;
	tc->line = e->line;
	tc->text = (struct sb)SB_INIT;
	if (!n || !*n)
		n = "(unnamed)";
	if (cls && *cls && strcmp(cls, n))
		tc->name = xasprintf("%s.%s", cls, n);
	else
		tc->name = xstrdup(n);
	tc->time_s = -1;
	if (t) {
		char *end;
		double d = strtod(t, &end);

		if (end != t && d >= 0 && d < 1e9)
			tc->time_s = d;
	}
	tc->v = TR_PASS;
	if (status && (!strcmp(status, "notrun") || !strcmp(status, "disabled") ||
		       !strcmp(status, "skipped"))) {
		tc->v = TR_SKIP;
		tc->msg = xstrdup(status);	/* a <skipped message> replaces it */
		tc->msg_from_text = false;
	}
}

static void tcase_outcome(struct tcase *tc, const struct elem *e)
{
	const char *m = attr_get(e, "message");
	enum tr_verdict v = !strcmp(e->name, "failure") ? TR_FAIL :
			    !strcmp(e->name, "error") ? TR_ERROR : TR_SKIP;

	/* a failure outranks a skip; the first of its rank gives the message */
	if (tc->v == TR_SKIP && v == TR_SKIP && m && *m) {
		free(tc->msg);
		tc->msg = NULL;
	}
	if (tc->v == TR_PASS || (tc->v == TR_SKIP && v != TR_SKIP) || (tc->v == v && !tc->msg)) {
		if (tc->v != v) {
			free(tc->msg);
			tc->msg = NULL;
		}
		tc->v = v;
		if (m && *m && !tc->msg) {
			size_t n = strcspn(m, "\n");

			tc->msg = xstrndup(m, n > TEXT_KEEP ? TEXT_KEEP : n);
			tc->msg_from_text = false;
		} else if (!tc->msg) {
			tc->msg_from_text = true;
			sb_reset(&tc->text);
		}
	}
}

static void tcase_end(struct tcase *tc, struct tr_report *r)
{
	struct tr_test *t;

	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	t = &r->v[r->n++];
	*t = (struct tr_test){ .name = tc->name, .v = tc->v, .time_s = tc->time_s, .line = tc->line };
	if (!tc->msg && tc->msg_from_text && tc->text.len) {
		const char *s = tc->text.buf;

		while (*s && isspace((unsigned char)*s))
			s++;
		size_t n = strcspn(s, "\n");

		tc->msg = xstrndup(s, n > TEXT_KEEP ? TEXT_KEEP : n);
	}
	t->msg = tc->msg;
	r->count[t->v]++;
	sb_release(&tc->text);
	memset(tc, 0, sizeof(*tc));
}

int junit_parse(const char *text, size_t len, struct tr_report *r, char *err, size_t errsz)
{
	struct xr x = { .s = text, .p = text, .end = text + len, .line = 1, .err = err, .errsz = errsz };
	char stack[DEPTH_MAX][64];
	unsigned depth = 0, outcome_depth = 0;
	bool root_seen = false;
	struct tcase tc = { 0 };
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->planned = -1;
	if (memchr(text, '\0', len)) {
		x.end = memchr(text, '\0', len);
		adv(&x, (size_t)(x.end - x.p));
		return rq_parse_error(err, errsz, x.line, "NUL byte in JUnit XML");
	}
	/* a UTF-8 byte order mark */
	if (at(&x, "\xEF\xBB\xBF"))
		adv(&x, 3);
	while (!ret && x.p < x.end) {
		if (at(&x, "<?")) {
			if (!skip_past(&x, "?>"))
				ret = rq_parse_error(err, errsz, x.line, "<? without ?>");
		} else if (at(&x, "<!--")) {
			unsigned l0 = x.line;

			if (!skip_past(&x, "-->"))
				ret = rq_parse_error(err, errsz, l0, "a comment that does not end");
		} else if (at(&x, "<![CDATA[")) {
			const char *s0;

			adv(&x, 9);
			s0 = x.p;
			if (!skip_past(&x, "]]>")) {
				ret = rq_parse_error(err, errsz, x.line, "CDATA that does not end");
			} else if (tc.open && outcome_depth && tc.msg_from_text && tc.text.len < TEXT_KEEP) {
				sb_add(&tc.text, s0, (size_t)(x.p - 3 - s0));
			}
		} else if (at(&x, "<!")) {
			if (root_seen) {
				ret = rq_parse_error(err, errsz, x.line, "a declaration inside the document");
			} else {
				for (; x.p < x.end && *x.p != '>'; adv(&x, 1))
					if (*x.p == '[') {
						ret = rq_parse_error(err, errsz, x.line,
								     "a DOCTYPE with an internal subset");
						break;
					}
				adv(&x, 1);
			}
		} else if (at(&x, "</")) {
			char name[64];

			adv(&x, 2);
			if (read_name(&x, name, sizeof(name)) || (skip_ws(&x), !at(&x, ">"))) {
				ret = rq_parse_error(err, errsz, x.line, "a bad end tag");
				break;
			}
			adv(&x, 1);
			if (!depth || strcmp(stack[depth - 1], name)) {
				ret = depth ? rq_parse_error(err, errsz, x.line, "</%s> where </%s> was expected",
							     name, stack[depth - 1])
					    : rq_parse_error(err, errsz, x.line, "</%s> without its start", name);
				break;
			}
			depth--;
			if (outcome_depth && depth < outcome_depth)
				outcome_depth = 0;
			if (tc.open && !strcmp(name, "testcase") && !outcome_depth) {
				bool nested = false;

				for (unsigned d = 0; d < depth; d++)
					nested |= !strcmp(stack[d], "testcase");
				if (!nested)
					tcase_end(&tc, r);
			}
		} else if (at(&x, "<")) {
			struct elem e;

			if (read_start(&x, &e)) {
				ret = -EINVAL;
				elem_release(&e);
				break;
			}
			if (!root_seen) {
				root_seen = true;
				if (strcmp(e.name, "testsuites") && strcmp(e.name, "testsuite")) {
					ret = rq_parse_error(err, errsz, e.line, "expected JUnit XML (<testsuites> "
							     "or <testsuite>), found <%s>", e.name);
					elem_release(&e);
					break;
				}
			} else if (!depth) {
				ret = rq_parse_error(err, errsz, e.line, "a second root element <%s>", e.name);
				elem_release(&e);
				break;
			}
			if (!strcmp(e.name, "testcase") && !tc.open) {
				tcase_begin(&tc, &e);
				if (e.empty)
					tcase_end(&tc, r);
			} else if (tc.open && (!strcmp(e.name, "failure") || !strcmp(e.name, "error") ||
					       !strcmp(e.name, "skipped"))) {
				tcase_outcome(&tc, &e);
				if (!e.empty)
					outcome_depth = depth + 1;
			}
			if (!e.empty) {
				if (depth == DEPTH_MAX) {
					ret = rq_parse_error(err, errsz, e.line, "elements nested deeper than %d",
							     DEPTH_MAX);
					elem_release(&e);
					break;
				}
				snprintf(stack[depth++], sizeof(stack[0]), "%s", e.name);
			}
			elem_release(&e);
		} else {
			/* character data: a failure's text gives its message when no attribute did */
			const char *s0 = x.p;

			while (x.p < x.end && *x.p != '<')
				adv(&x, 1);
			if (!depth) {
				for (const char *q = s0; q < x.p; q++)
					if (!isspace((unsigned char)*q)) {
						ret = rq_parse_error(err, errsz, x.line, "text outside the root element");
						break;
					}
			} else if (tc.open && outcome_depth && tc.msg_from_text && tc.text.len < TEXT_KEEP) {
				ret = decode(&x, s0, (size_t)(x.p - s0), &tc.text);
			}
		}
	}
	if (!ret && !root_seen)
		ret = rq_parse_error(err, errsz, x.line, "expected JUnit XML (<testsuites> or <testsuite>): "
				     "no element");
	else if (!ret && depth)
		ret = rq_parse_error(err, errsz, x.line, "the file ends inside <%s>", stack[depth - 1]);
	if (tc.open) {
		free(tc.name);
		free(tc.msg);
		sb_release(&tc.text);
	}
	if (ret)
		tr_report_release(r);
	return ret;
}
