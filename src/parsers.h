/* SPDX-License-Identifier: MIT */
/*
 * Tool-output parsers are pure: text in, figures out; no processes, no
 * files.  Each parser module has its own typed API (parse_perftest.h, ...)
 * and registers a JSON adapter here for `rdmaqual parse TOOL FILE`.
 *
 * An adapter returns 0 and a JSON object, or -EINVAL with err naming the
 * line it could not make sense of ("line 12: expected ..."), never a guess.
 */
#ifndef RQ_PARSERS_H
#define RQ_PARSERS_H

#include <stddef.h>

struct json_t;

struct rq_parser {
	const char *name;	/* "perftest", "ibv_devinfo", "sminfo", ... */
	const char *help;
	int (*parse)(const char *text, size_t len, struct json_t **out, char *err, size_t errsz);
};

extern const struct rq_parser *const rq_parsers[];
const struct rq_parser *rq_parser_find(const char *name);

#endif
