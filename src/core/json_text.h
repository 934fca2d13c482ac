/* SPDX-License-Identifier: MIT */
/*
 * Text into JSON, safely.  Tool output, node descriptions, logs and case
 * facts are not always UTF-8 (a node description is whatever the node set,
 * a log may hold Latin-1, a copy into a fixed-size field may cut a
 * character), and jansson refuses such a string: json_string() returns NULL
 * and json_object_set_new() then drops the field silently.  These turn each
 * invalid byte into U+FFFD instead.  The one place that does it: parsers,
 * results, reports and compare all write through here.
 */
#ifndef RQ_JSON_TEXT_H
#define RQ_JSON_TEXT_H

#include <stddef.h>

struct json_t;

/* A JSON string of s (NULL: JSON null); never NULL. */
struct json_t *rq_json_text(const char *s);
/* The same for n bytes that may hold NULs. */
struct json_t *rq_json_textn(const char *s, size_t n);
/* json_object_set_new() with a key that may not be UTF-8. */
void rq_json_set_text(struct json_t *o, const char *key, struct json_t *v);
/* A figure: JSON has no Inf/NaN (json_real() returns NULL for them): null. */
struct json_t *rq_json_num(double v);

#endif
