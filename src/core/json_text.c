/* SPDX-License-Identifier: MIT */
/* UTF-8-safe JSON strings (see json_text.h). */
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "core/json_text.h"
#include "core/util.h"

json_t *rq_json_textn(const char *s, size_t n)
{
	struct sb sb = SB_INIT;
	json_t *j;

	sb_add_utf8(&sb, s, n);
	j = json_stringn(sb.buf, sb.len);
	sb_release(&sb);
	return j ? j : json_string("");
}

json_t *rq_json_text(const char *s)
{
	return s ? rq_json_textn(s, strlen(s)) : json_null();
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
