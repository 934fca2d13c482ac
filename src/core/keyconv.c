/* SPDX-License-Identifier: MIT */
/*
 * Typed conversion of YAML values: one generic converter turns a scalar
 * (or a list of them) into the C type a key_def row names, with range
 * checks and messages that say what was expected (fio's parse.c does the
 * same for job files).  The text-to-number rules themselves are in
 * convert.c, shared with the CLI.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/loader_int.h"

/*
 * Convert one scalar node to type t (a key's type, or a list's element
 * type).  Errors name the key and what was expected.
 */
bool conv_scalar(struct ld *ld, const struct key_def *k, enum key_type t,
		 const yaml_node_t *n, union val *out)
{
	struct sb ex = SB_INIT;
	const char *s;
	bool ok = false;
	int r;

	expected_text(k, t, &ex);
	if (n->type != YAML_SCALAR_NODE || is_null(n)) {
		lerr(ld, NPOS(n), "%s: expected %s, got %s", k->name, ex.buf, what_node(n));
		goto out;
	}
	if (!scalar_ok(ld, n, k->name))
		goto out;
	s = stext(n);
	switch (t) {
	case KEY_STR:
		out->s = xstrdup(s);
		ok = true;
		break;
	case KEY_INT:
		r = parse_ll(s, &out->i);
		if (r == -ERANGE) {
			lerr(ld, NPOS(n), "%s: integer \"%s\" is too large", k->name, s);
			break;
		}
		if (r) {
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"", k->name, ex.buf, s);
			break;
		}
		if (has_range(k) && (out->i < k->min || out->i > k->max)) {
			struct sb rt = SB_INIT;
			range_text(k, t, &rt);
			lerr(ld, NPOS(n), "%s: %lld is out of range %s", k->name, out->i, rt.buf);
			sb_release(&rt);
			break;
		}
		ok = true;
		break;
	case KEY_DOUBLE:
		r = parse_double(s, &out->d);
		if (r) {
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"", k->name, ex.buf, s);
			break;
		}
		if ((k->dmin || k->dmax) && (out->d < k->dmin || out->d > k->dmax)) {
			struct sb rt = SB_INIT;
			range_text(k, t, &rt);
			lerr(ld, NPOS(n), "%s: %g is out of range %s", k->name, out->d, rt.buf);
			sb_release(&rt);
			break;
		}
		ok = true;
		break;
	case KEY_BOOL:
		if (parse_bool(s, &out->b)) {
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"", k->name, ex.buf, s);
			break;
		}
		ok = true;
		break;
	case KEY_ENUM:
		for (int i = 0; k->choices && k->choices[i]; i++) {
			if (!strcmp(k->choices[i], s)) {
				out->e = i;
				ok = true;
				break;
			}
		}
		if (!ok) {
			struct hint h = { .word = s };
			char hb[300];
			for (int i = 0; k->choices && k->choices[i]; i++)
				hint_try(&h, k->choices[i]);
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"%s", k->name, ex.buf, s,
			     hint_text(&h, hb, sizeof(hb)));
		}
		break;
	case KEY_DURATION:
		r = parse_duration_ms(s, &out->ms);
		if (r == -ERANGE) {
			lerr(ld, NPOS(n), "%s: duration \"%s\" is too long", k->name, s);
			break;
		}
		if (r) {
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"", k->name, ex.buf, s);
			break;
		}
		if (has_range(k) && (out->ms < k->min || out->ms > k->max)) {
			struct sb rt = SB_INIT;
			range_text(k, t, &rt);
			lerr(ld, NPOS(n), "%s: %s is out of range %s", k->name, s, rt.buf);
			sb_release(&rt);
			break;
		}
		ok = true;
		break;
	case KEY_SIZE:
		r = parse_size(s, &out->sz);
		if (r == -ERANGE) {
			lerr(ld, NPOS(n), "%s: size \"%s\" is too large", k->name, s);
			break;
		}
		if (r) {
			lerr(ld, NPOS(n), "%s: expected %s, got \"%s\"", k->name, ex.buf, s);
			break;
		}
		if (has_range(k) &&
		    ((k->min > 0 && out->sz < (uint64_t)k->min) ||
		     (k->max < 0 || out->sz > (uint64_t)k->max))) {
			struct sb rt = SB_INIT;
			range_text(k, t, &rt);
			lerr(ld, NPOS(n), "%s: %s is out of range %s", k->name, s, rt.buf);
			sb_release(&rt);
			break;
		}
		ok = true;
		break;
	case KEY_LIST:
		/* lists of lists are not a thing: caught by the caller */
		lerr(ld, NPOS(n), "%s: nested lists are not supported", k->name);
		break;
	}
out:
	sb_release(&ex);
	return ok;
}

void list_release(struct rq_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->str[i]);
	free(l->str);
	free(l->num);
	memset(l, 0, sizeof(*l));
}

/* Append one converted element; dedup drops repeats (merged tags/needs). */
static void list_push(struct rq_list *l, enum key_type et, const struct key_def *k,
		      const yaml_node_t *n, const union val *v, bool dedup)
{
	char *text;

	if (et == KEY_STR)
		text = v->s;
	else if (et == KEY_ENUM)
		text = xstrdup(k->choices[v->e]);
	else
		text = xstrdup(stext(n));
	if (dedup) {
		for (size_t i = 0; i < l->n; i++) {
			if (!strcmp(l->str[i], text)) {
				free(text);
				return;
			}
		}
	}
	l->str = xrealloc(l->str, (l->n + 1) * sizeof(*l->str));
	l->num = xrealloc(l->num, (l->n + 1) * sizeof(*l->num));
	l->str[l->n] = text;
	switch (et) {
	case KEY_INT: l->num[l->n] = v->i; break;
	case KEY_ENUM: l->num[l->n] = v->e; break;
	case KEY_SIZE: l->num[l->n] = (int64_t)v->sz; break;
	case KEY_DURATION: l->num[l->n] = v->ms; break;
	case KEY_BOOL: l->num[l->n] = v->b; break;
	default: l->num[l->n] = 0; break;
	}
	l->n++;
}

static bool conv_list_part(struct ld *ld, yaml_document_t *doc, const struct key_def *k,
			   const yaml_node_t *n, struct rq_list *l, bool dedup,
			   elem_check_fn check)
{
	bool ok = true;

	if (n->type != YAML_SEQUENCE_NODE) {
		struct sb ex = SB_INIT;
		expected_text(k, KEY_LIST, &ex);
		lerr(ld, NPOS(n), "%s: expected %s, got %s", k->name, ex.buf, what_node(n));
		sb_release(&ex);
		return false;
	}
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(doc, *it);
		union val v;

		if (!e)
			continue;
		if (e->type != YAML_SCALAR_NODE) {
			struct sb ex = SB_INIT;
			expected_text(k, k->elem, &ex);
			lerr(ld, NPOS(e), "%s: expected a list of %s, got %s in the list",
			     k->name, rq_key_type_name(k->elem), what_node(e));
			sb_release(&ex);
			ok = false;
			continue;
		}
		if (!conv_scalar(ld, k, k->elem, e, &v)) {
			ok = false;
			continue;
		}
		if (check && !check(ld, e)) {
			if (k->elem == KEY_STR)
				free(v.s);
			ok = false;
			continue;
		}
		list_push(l, k->elem, k, e, &v, dedup);
	}
	return ok;
}

bool conv_key(struct ld *ld, yaml_document_t *doc, const struct key_def *k,
	      const yaml_node_t *pre, const yaml_node_t *n, void *dst,
	      elem_check_fn check, bool dedup)
{
	char *p = (char *)dst + k->offset;
	union val v;

	if (k->type == KEY_LIST) {
		struct rq_list l = { 0 };
		bool ok = true;

		if (pre)
			ok = conv_list_part(ld, doc, k, pre, &l, dedup, check);
		ok = conv_list_part(ld, doc, k, n, &l, dedup, check) && ok;
		if (!ok) {
			list_release(&l);
			return false;
		}
		list_release((struct rq_list *)p);
		memcpy(p, &l, sizeof(l));
		return true;
	}
	if (!conv_scalar(ld, k, k->type, n, &v))
		return false;
	if (k->check) {
		char err[300] = "";

		if (k->check(k->type == KEY_STR ? v.s : stext(n), err, sizeof(err))) {
			lerr(ld, NPOS(n), "%s: %s", k->name, err[0] ? err : "not a value it takes");
			if (k->type == KEY_STR)
				free(v.s);
			return false;
		}
	}
	if (check && !check(ld, n)) {
		if (k->type == KEY_STR)
			free(v.s);
		return false;
	}
	switch (k->type) {
	case KEY_STR:
		free(*(char **)p);
		*(char **)p = v.s;
		break;
	case KEY_INT: *(long long *)p = v.i; break;
	case KEY_DOUBLE: *(double *)p = v.d; break;
	case KEY_BOOL: *(bool *)p = v.b; break;
	case KEY_ENUM: *(int *)p = v.e; break;
	case KEY_DURATION: *(int64_t *)p = v.ms; break;
	case KEY_SIZE: *(uint64_t *)p = v.sz; break;
	case KEY_LIST: break;
	}
	return true;
}

bool apply_default(struct ld *ld, const struct key_def *k, void *dst)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	bool ok = false;

	if (!yaml_parser_initialize(&parser))
		return false;
	yaml_parser_set_input_string(&parser, (const unsigned char *)k->def, strlen(k->def));
	if (yaml_parser_load(&parser, &doc)) {
		root = yaml_document_get_root_node(&doc);
		if (root) {
			bool q = ld->quiet;
			ld->quiet = true;
			ok = conv_key(ld, &doc, k, NULL, root, dst, NULL, false);
			ld->quiet = q;
		}
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	return ok;
}

void rq_cfg_release(const struct key_def *keys, void *cfg)
{
	if (!keys || !cfg)
		return;
	for (const struct key_def *k = keys; k->name; k++) {
		char *p = (char *)cfg + k->offset;
		if (k->type == KEY_STR) {
			free(*(char **)p);
			*(char **)p = NULL;
		} else if (k->type == KEY_LIST) {
			list_release((struct rq_list *)p);
		}
	}
}

