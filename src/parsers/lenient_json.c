/* SPDX-License-Identifier: MIT */
/* The lenient JSON reader (see lenient_json.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "parsers/lenient_json.h"
#include "parsers/parsers.h"
#include "core/util.h"

struct lj {
	const char *p, *start, *end;
	char *err;
	size_t errsz;
	int depth;
};

static unsigned lj_line(const struct lj *j)
{
	unsigned n = 1;

	for (const char *q = j->start; q < j->p && q < j->end; q++)
		n += *q == '\n';
	return n;
}

static void lj_ws(struct lj *j)
{
	while (j->p < j->end && isspace((unsigned char)*j->p))
		j->p++;
}

static json_t *lj_value(struct lj *j);

/* A quoted string (JSON escapes \" \\ \n \t kept simple) into sb. */
static int lj_string(struct lj *j, struct sb *sb)
{
	j->p++;	/* opening quote */
	while (j->p < j->end && *j->p != '"') {
		if (*j->p == '\\' && j->p + 1 < j->end) {
			j->p++;
			switch (*j->p) {
			case 'n': sb_addc(sb, '\n'); break;
			case 't': sb_addc(sb, '\t'); break;
			default: sb_addc(sb, *j->p); break;
			}
		} else if (*j->p == '\n') {
			rq_parse_error(j->err, j->errsz, lj_line(j), "unterminated string");
			return -EINVAL;
		} else {
			sb_addc(sb, *j->p);
		}
		j->p++;
	}
	if (j->p >= j->end) {
		rq_parse_error(j->err, j->errsz, lj_line(j), "unterminated string");
		return -EINVAL;
	}
	j->p++;
	return 0;
}

/* A bare token up to , } ] : or end of line (stop_colon for keys). */
static void lj_bare(struct lj *j, struct sb *sb, bool stop_colon)
{
	while (j->p < j->end && *j->p != ',' && *j->p != '}' && *j->p != ']' &&
	       *j->p != '\n' && !(stop_colon && *j->p == ':'))
		sb_addc(sb, *j->p++);
	sb_rtrim(sb);
}

static json_t *lj_scalar(const char *s)
{
	char *end;
	double d;

	if (!strcmp(s, "true"))
		return json_true();
	if (!strcmp(s, "false"))
		return json_false();
	if (!strcmp(s, "null"))
		return json_null();
	d = strtod(s, &end);
	if (*s && end != s && *end == '\0' && isfinite(d)) {	/* "1e999": kept as text */
		if (!strpbrk(s, ".eE") && d >= -9e15 && d <= 9e15)
			return json_integer((json_int_t)d);
		return json_real(d);
	}
	return json_string(s);
}

static bool utf8_valid(const char *s)
{
	size_t n = strlen(s), l;
	uint32_t cp;

	for (size_t i = 0; i < n; i += l)
		if (!(l = utf8_decode((const unsigned char *)s + i, n - i, &cp)))
			return false;
	return true;
}

static json_t *lj_object(struct lj *j, bool braced)
{
	json_t *o = json_object();

	if (braced)
		j->p++;
	if (++j->depth > 32) {
		rq_parse_error(j->err, j->errsz, lj_line(j), "nesting too deep");
		goto fail;
	}
	for (;;) {
		struct sb key = SB_INIT;
		json_t *v;

		lj_ws(j);
		if (j->p >= j->end) {
			if (!braced)
				break;
			rq_parse_error(j->err, j->errsz, lj_line(j), "expected '}' before end of input");
			goto fail;
		}
		if (*j->p == '}') {
			if (!braced) {
				rq_parse_error(j->err, j->errsz, lj_line(j), "unexpected '}'");
				goto fail;
			}
			j->p++;
			break;
		}
		if (*j->p == ',') {	/* trailing or doubled comma: the 4.5 build */
			j->p++;
			continue;
		}
		if (*j->p == '"') {
			if (lj_string(j, &key) < 0) {
				sb_release(&key);
				goto fail;
			}
		} else {
			lj_bare(j, &key, true);
		}
		lj_ws(j);
		if (j->p >= j->end || *j->p != ':' || !key.len) {
			rq_parse_error(j->err, j->errsz, lj_line(j), "expected 'key: value'");
			sb_release(&key);
			goto fail;
		}
		j->p++;
		v = lj_value(j);
		if (!v) {
			sb_release(&key);
			goto fail;
		}
		if (!utf8_valid(strtrim(key.buf))) {
			/* jansson would drop the pair silently: refuse, as for values */
			rq_parse_error(j->err, j->errsz, lj_line(j), "key is not UTF-8");
			json_decref(v);
			sb_release(&key);
			goto fail;
		}
		json_object_set_new(o, strtrim(key.buf), v);
		sb_release(&key);
	}
	j->depth--;
	return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *lj_value(struct lj *j)
{
	lj_ws(j);
	if (j->p >= j->end) {
		rq_parse_error(j->err, j->errsz, lj_line(j), "expected a value before end of input");
		return NULL;
	}
	if (*j->p == '{')
		return lj_object(j, true);
	if (*j->p == '[') {
		json_t *a = json_array();

		j->p++;
		if (++j->depth > 32) {
			rq_parse_error(j->err, j->errsz, lj_line(j), "nesting too deep");
			json_decref(a);
			return NULL;
		}
		for (;;) {
			json_t *v;

			lj_ws(j);
			if (j->p < j->end && *j->p == ']') {
				j->p++;
				break;
			}
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			v = lj_value(j);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		j->depth--;
		return a;
	}
	if (*j->p == '"') {
		struct sb s = SB_INIT;
		json_t *v = NULL;

		if (lj_string(j, &s) == 0)
			v = json_string(s.buf);
		sb_release(&s);
		if (!v && !j->err[0])
			rq_parse_error(j->err, j->errsz, lj_line(j), "string is not UTF-8");
		return v;
	} else {
		struct sb s = SB_INIT;
		json_t *v;

		lj_bare(j, &s, false);
		if (!s.len) {
			rq_parse_error(j->err, j->errsz, lj_line(j), "expected a value");
			sb_release(&s);
			return NULL;
		}
		v = lj_scalar(s.buf);
		sb_release(&s);
		if (!v)
			rq_parse_error(j->err, j->errsz, lj_line(j), "value is not UTF-8");
		return v;
	}
}

json_t *lenient_json_parse(const char *text, size_t len, char *err, size_t errsz)
{
	char ebuf[256] = "";
	struct lj j = { .p = text, .start = text, .end = text + len, .err = ebuf,
			.errsz = sizeof(ebuf) };
	json_t *root;

	lj_ws(&j);
	root = lj_object(&j, j.p < j.end && *j.p == '{');
	if (root) {
		lj_ws(&j);
		if (j.p < j.end) {
			rq_parse_error(ebuf, sizeof(ebuf), lj_line(&j), "text after the JSON object");
			json_decref(root);
			root = NULL;
		}
	}
	if (!root)
		rq_parse_error(err, errsz, 0, "%s", ebuf);
	return root;
}
