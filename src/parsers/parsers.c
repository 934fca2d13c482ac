/* SPDX-License-Identifier: MIT */
/*
 * The `rdmaqual parse` registry, generated from parsers.def.  What every
 * parser shares is lines.c: the registry points at the parsers, they do
 * not point back.
 */
#include <string.h>
#include "parsers/parsers.h"

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
