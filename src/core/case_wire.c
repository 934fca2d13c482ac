/* SPDX-License-Identifier: MIT */
/*
 * A case as the agent receives it: its effective keys (after defaults:
 * merged) as one JSON object of text values, and the load of that object
 * back into a case by the same loader, so a VM or a peer converts and
 * checks every key exactly as the controller did.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/loader_int.h"

/*
 * A JSON string that libyaml reads back as the same text: besides JSON's
 * own escapes, everything YAML treats as a line break (NEL, LS, PS) or
 * refuses raw (C0/C1 controls, DEL, BOM, U+FFFE/U+FFFF) is written \uXXXX.
 * Input comes from libyaml, so it is valid UTF-8.
 */
static void json_str(struct sb *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	sb_addc(o, '"');
	while (*p) {
		unsigned cp;
		int len;

		if (*p < 0x80) {
			cp = *p;
			len = 1;
		} else if ((*p & 0xe0) == 0xc0 && p[1]) {
			cp = ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
			len = 2;
		} else if ((*p & 0xf0) == 0xe0 && p[1] && p[2]) {
			cp = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
			len = 3;
		} else if ((*p & 0xf8) == 0xf0 && p[1] && p[2] && p[3]) {
			cp = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3fu) << 12) |
			     ((p[2] & 0x3fu) << 6) | (p[3] & 0x3fu);
			len = 4;
		} else {
			/* not UTF-8 (cannot come from libyaml): keep the byte visible */
			sb_addf(o, "\\u%04x", *p);
			p++;
			continue;
		}
		switch (cp) {
		case '"': sb_adds(o, "\\\""); break;
		case '\\': sb_adds(o, "\\\\"); break;
		case '\n': sb_adds(o, "\\n"); break;
		case '\r': sb_adds(o, "\\r"); break;
		case '\t': sb_adds(o, "\\t"); break;
		default:
			if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
			    cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
				sb_addf(o, "\\u%04x", cp);
			else
				sb_add(o, p, (size_t)len);
		}
		p += len;
	}
	sb_addc(o, '"');
}

static void raw_list_part(struct sb *o, yaml_document_t *doc, const yaml_node_t *n,
			  struct rq_list *seen, bool dedup)
{
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(doc, *it);
		bool dup = false;
		if (!e || e->type != YAML_SCALAR_NODE)
			continue;
		for (size_t i = 0; dedup && i < seen->n; i++)
			dup |= !strcmp(seen->str[i], stext(e));
		if (dup)
			continue;
		seen->str = xrealloc(seen->str, (seen->n + 1) * sizeof(*seen->str));
		seen->str[seen->n++] = (char *)stext(e);
		if (seen->n > 1)
			sb_addc(o, ',');
		json_str(o, stext(e));
	}
}

char *raw_json(yaml_document_t *doc, const struct ent *e, bool dedup)
{
	struct sb o = SB_INIT;

	if (e->v->type == YAML_SEQUENCE_NODE) {
		struct rq_list seen = { 0 };
		sb_addc(&o, '[');
		if (e->pre && e->pre->type == YAML_SEQUENCE_NODE)
			raw_list_part(&o, doc, e->pre, &seen, dedup);
		raw_list_part(&o, doc, e->v, &seen, dedup);
		sb_addc(&o, ']');
		free(seen.str);
	} else {
		json_str(&o, stext(e->v));
	}
	return sb_detach(&o);
}

void raw_add(struct rq_case *c, const char *key, char *json)
{
	c->raw = xrealloc(c->raw, (c->nraw + 1) * sizeof(*c->raw));
	c->raw[c->nraw++] = (struct rq_raw){ .key = xstrdup(key), .json = json };
}

char *rq_case_to_json(const struct rq_case *c)
{
	struct sb o = SB_INIT;

	sb_addc(&o, '{');
	for (size_t i = 0; i < c->nraw; i++) {
		if (i)
			sb_addc(&o, ',');
		json_str(&o, c->raw[i].key);
		sb_addc(&o, ':');
		sb_adds(&o, c->raw[i].json);
	}
	sb_addc(&o, '}');
	return sb_detach(&o);
}

/*
 * JSON as YAML reads it back unchanged: strings through json_str() (JSON
 * writers such as jansson leave DEL, NEL, U+2028 raw, which YAML refuses or
 * folds as line breaks), everything else as plain scalars the converter
 * reads as text.
 */
static void json_as_yaml(struct sb *o, json_t *j, int depth)
{
	const char *k;
	json_t *v;
	size_t i;
	bool first = true;

	if (depth > 64) {
		sb_adds(o, "null");
		return;
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		sb_addc(o, '{');
		json_object_foreach(j, k, v) {
			if (!first)
				sb_addc(o, ',');
			first = false;
			json_str(o, k);
			sb_addc(o, ':');
			json_as_yaml(o, v, depth + 1);
		}
		sb_addc(o, '}');
		break;
	case JSON_ARRAY:
		sb_addc(o, '[');
		json_array_foreach(j, i, v) {
			if (i)
				sb_addc(o, ',');
			json_as_yaml(o, v, depth + 1);
		}
		sb_addc(o, ']');
		break;
	case JSON_STRING:
		/* embedded NULs (\u0000) would be cut here: say so in the value */
		if (strlen(json_string_value(j)) != json_string_length(j))
			sb_adds(o, "\"\\0\"");
		else
			json_str(o, json_string_value(j));
		break;
	case JSON_INTEGER:
		sb_addf(o, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		break;
	case JSON_REAL: {
		char *t = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
		sb_adds(o, t ? t : "null");
		free(t);
		break;
	}
	case JSON_TRUE:
		sb_adds(o, "true");
		break;
	case JSON_FALSE:
		sb_adds(o, "false");
		break;
	case JSON_NULL:
		sb_adds(o, "null");
		break;
	}
}

int rq_load_case_text(const char *name, const char *text, size_t len,
		      struct rq_suite *suite, struct rq_diags *diags)
{
	json_error_t jerr;
	json_t *j = json_loadb(text, len, 0, &jerr);
	struct sb sb = SB_INIT;
	int r;

	/* Not JSON (or not an object): YAML's flow syntax, with its positions. */
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return load_text(name, text, len, true, suite, diags);
	}
	json_as_yaml(&sb, j, 0);
	json_decref(j);
	size_t first = diags->n;

	r = load_text(name, sb.buf, sb.len, true, suite, diags);
	/*
	 * Positions are in the YAML rendering: the sender's text only when the
	 * rendering is that text (compact JSON, nothing re-escaped).  Otherwise
	 * say none rather than a wrong one (fuzz_loader found col 627 in a
	 * 247-byte case whose DEL bytes were re-escaped).
	 */
	if (sb.len != len || memcmp(sb.buf, text, len))
		for (size_t i = first; i < diags->n; i++)
			diags->v[i].line = diags->v[i].col = 0;
	sb_release(&sb);
	return r;
}
