/* SPDX-License-Identifier: MIT */
/*
 * A reader of a superset of JSON, for tools that write almost-JSON: the
 * --out_json file of perftest 4.5 has bare keys, bare values, trailing and
 * doubled commas, and may lack its outer braces.  Strings take the escapes
 * \n, \t and \<char>; a bare value is a number, true/false/null, or text up
 * to the next , } ] or end of line.  Keys and strings must be UTF-8
 * (jansson would drop them silently otherwise).  Nesting deeper than 32 is
 * refused.  Pure: text in, a jansson object out.
 */
#ifndef RQ_LENIENT_JSON_H
#define RQ_LENIENT_JSON_H

#include <stddef.h>

struct json_t;

/*
 * The object the text holds (with or without its outer braces), or NULL
 * with err "line N: what was expected".
 */
struct json_t *lenient_json_parse(const char *text, size_t len, char *err, size_t errsz);

#endif
