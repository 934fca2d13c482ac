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

#include <stdbool.h>
#include <stddef.h>
#include "core/json_text.h"

struct json_t;

struct rq_parser {
	const char *name;	/* "perftest", "ibv_devinfo", "sminfo", ... */
	const char *help;
	int (*parse)(const char *text, size_t len, struct json_t **out, char *err, size_t errsz);
};

/*
 * Fill err with "line N: " (when line > 0) and the message: the one shape of
 * every parser's refusal.  err may be NULL.  Returns -EINVAL, so that a
 * parser can `return rq_parse_error(...)`.
 */
int rq_parse_error(char *err, size_t errsz, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with a file name: "FILE:LINE: message" (files that include others). */
int rq_parse_error_at(char *err, size_t errsz, const char *file, unsigned line,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The one line iterator of every parser.  rq_lines_next() returns the next
 * line without its newline and trailing white space (a CR included; leading
 * white space is kept, since some formats indent meaningfully), numbered from
 * 1 in l->no; NULL at the end.  The buffer is reused: a line is valid until
 * the next call.  A NUL byte ends the line (the text after one is not a
 * tool's) and sets l->nul, for parsers that refuse such text; l->raw_len is
 * the line's length as it was in the input.
 */
struct rq_lines {
	const char *p, *end;
	unsigned no;
	bool nul;
	size_t raw_len;
	char *buf;
	size_t cap;
};

void rq_lines_init(struct rq_lines *l, const char *text, size_t len);
char *rq_lines_next(struct rq_lines *l);
void rq_lines_release(struct rq_lines *l);
/*
 * The next line of a text that may hold no NUL byte, trimmed at both ends
 * (the table parsers: nccl-tests, OSU, rdmaqual-coll): NULL at the end, or
 * at a NUL byte with *ret the error naming its line.
 */
char *rq_lines_next_text(struct rq_lines *l, int *ret, char *err, size_t errsz);

/*
 * Fields that a parser found but could not read (a redacted GUID, "..." in
 * place of a value, a line an older tool version does not print), by name.
 * Real outputs are pasted and redacted: they still give what they hold, and
 * say what they do not.  Names are string literals.
 */
#define RQ_MISSING_MAX 16
struct rq_missing {
	const char *name[RQ_MISSING_MAX];
	unsigned n;
};

void rq_missing_add(struct rq_missing *m, const char *name);
bool rq_missing_has(const struct rq_missing *m, const char *name);
/*
 * When any field is missing: sets "missing": ["name", ...] on o, and each
 * of o's keys of those names to null (the struct holds a placeholder, 0 or
 * "", which is no reading).
 */
void rq_missing_json(struct json_t *o, const struct rq_missing *m);

extern const struct rq_parser *const rq_parsers[];
const struct rq_parser *rq_parser_find(const char *name);

#endif
