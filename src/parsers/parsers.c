/* SPDX-License-Identifier: MIT */
/* The `rdmaqual parse` registry, generated from parsers.def. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "parsers/parsers.h"
#include "core/util.h"

#define PARSER(sym) extern const struct rq_parser rq_parser_##sym;
#include "parsers/parsers.def"
#undef PARSER

const struct rq_parser *const rq_parsers[] = {
#define PARSER(sym) &rq_parser_##sym,
#include "parsers/parsers.def"
#undef PARSER
	NULL
};

const struct rq_parser *rq_parser_find(const char *name)
{
	for (size_t i = 0; rq_parsers[i]; i++)
		if (!strcmp(rq_parsers[i]->name, name))
			return rq_parsers[i];
	return NULL;
}

json_t *rq_json_text(const char *s)
{
	struct sb sb = SB_INIT;
	json_t *j;

	sb_add_utf8(&sb, s, strlen(s));
	j = json_stringn(sb.buf, sb.len);
	sb_release(&sb);
	return j ? j : json_string("");
}

void rq_json_set_text(json_t *o, const char *key, json_t *v)
{
	struct sb sb = SB_INIT;

	sb_add_utf8(&sb, key, strlen(key));
	json_object_set_new(o, sb.buf, v);
	sb_release(&sb);
}

json_t *rq_json_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void rq_parse_error(char *err, size_t errsz, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errsz)
		return;
	if (line)
		n = snprintf(err, errsz, "line %u: ", line);
	if (n < 0 || (size_t)n >= errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errsz - n, fmt, ap);
	va_end(ap);
}
