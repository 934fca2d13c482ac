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

/*
 * Fill err with "line N: " (when line > 0) and the message: the one shape of
 * every parser's refusal.  err may be NULL.
 */
void rq_parse_error(char *err, size_t errsz, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

extern const struct rq_parser *const rq_parsers[];
const struct rq_parser *rq_parser_find(const char *name);

/*
 * For adapters: tool text is not always UTF-8 (a node description is
 * whatever the node set, a log may hold Latin-1, a copy into a fixed-size
 * field may cut a character), and jansson refuses such a string: json_string()
 * returns NULL and json_object_set_new() then drops the field silently.
 * These turn invalid bytes into U+FFFD instead; never NULL.
 */
struct json_t *rq_json_text(const char *s);
/* json_object_set_new() with a key from tool text. */
void rq_json_set_text(struct json_t *o, const char *key, struct json_t *v);
/* A figure read from tool text: JSON has no Inf/NaN (json_real() returns NULL): null. */
struct json_t *rq_json_num(double v);

#endif
