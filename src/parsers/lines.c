/* SPDX-License-Identifier: MIT */
/*
 * What every parser shares: lines of text, errors that name their line,
 * and the list of fields a tool showed but the parser could not read.
 * Apart from the registry (parsers.c), which points at every parser.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/util.h"
#include "parsers/parsers.h"

int rq_parse_error_at(char *err, size_t errsz, const char *file, unsigned line,
		      const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errsz)
		return -EINVAL;
	if (file && line)
		n = snprintf(err, errsz, "%s:%u: ", file, line);
	else if (line)
		n = snprintf(err, errsz, "line %u: ", line);
	if (n < 0 || (size_t)n >= errsz)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errsz - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int rq_parse_error(char *err, size_t errsz, unsigned line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rq_parse_error_at(err, errsz, NULL, line, "%s", msg);
}

void rq_lines_init(struct rq_lines *l, const char *text, size_t len)
{
	memset(l, 0, sizeof(*l));
	l->p = text;
	l->end = text + len;
}

char *rq_lines_next(struct rq_lines *l)
{
	const char *nl;
	size_t n;

	if (l->p >= l->end)
		return NULL;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
	if (n + 1 > l->cap) {
		l->cap = n + 64;
		l->buf = xrealloc(l->buf, l->cap);
	}
	memcpy(l->buf, l->p, n);
	l->buf[n] = '\0';
	l->raw_len = n;
	l->nul = strlen(l->buf) != n;
	n = strlen(l->buf);
	while (n && isspace((unsigned char)l->buf[n - 1]))
		l->buf[--n] = '\0';
	l->p = nl ? nl + 1 : l->end;
	l->no++;
	return l->buf;
}

void rq_lines_release(struct rq_lines *l)
{
	free(l->buf);
	l->buf = NULL;
	l->cap = 0;
}

void rq_missing_add(struct rq_missing *m, const char *name)
{
	if (!rq_missing_has(m, name) && m->n < RQ_MISSING_MAX)
		m->name[m->n++] = name;
}

bool rq_missing_has(const struct rq_missing *m, const char *name)
{
	for (unsigned i = 0; i < m->n; i++)
		if (!strcmp(m->name[i], name))
			return true;
	return false;
}

void rq_missing_json(json_t *o, const struct rq_missing *m)
{
	json_t *a;

	if (!m->n)
		return;
	a = json_array();
	for (unsigned i = 0; i < m->n; i++) {
		json_array_append_new(a, json_string(m->name[i]));
		/* the placeholder the struct holds (0, "") is no reading: null */
		if (json_object_get(o, m->name[i]))
			json_object_set_new(o, m->name[i], json_null());
	}
	json_object_set_new(o, "missing", a);
}

char *rq_lines_next_text(struct rq_lines *l, int *ret, char *err, size_t errsz)
{
	char *s = rq_lines_next(l);

	if (s && l->nul) {
		*ret = rq_parse_error(err, errsz, l->no, "NUL byte in text");
		return NULL;
	}
	return s ? strtrim(s) : NULL;
}
