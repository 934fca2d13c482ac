/* SPDX-License-Identifier: MIT */
/*
 * A case as it travels to an agent (the "case" of a run request):
 *
 *   {"file": "/abs/cases/x.yaml", "at": [LINE, COL],
 *    "keys": [{"key": "needs", "at": [L, C],
 *              "value": {"list": [{"text": "root", "at": [L, C]}], "at": [L, C]}},
 *             {"key": "timeout", "at": [L, C],
 *              "value": {"text": "30s", "at": [L, C]}}, ...]}
 *
 * These are the case's effective keys as the file wrote them (struct
 * rq_src_key: defaults: and merge keys resolved, merged lists de-duplicated)
 * with the position of every key and value.  The agent rebuilds a libyaml
 * document from them, node by node with those positions, and hands it to
 * the same load_case() a file goes through: the same checks, and any error
 * (a peer built from other sources, a hand-written request) names the case
 * file's own line and column.  No text is rendered and parsed again.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "core/loader_int.h"

static json_t *at(unsigned line, unsigned col)
{
	return json_pack("[I,I]", (json_int_t)line, (json_int_t)col);
}

static json_t *text_node(const struct rq_src_val *v)
{
	return json_pack("{s:s%,s:o}", "text", v->text, strlen(v->text), "at",
			 at(v->line, v->col));
}

json_t *rq_case_wire(const struct rq_case *c)
{
	json_t *keys = json_array();
	char *abs = c->file ? realpath(c->file, NULL) : NULL;
	json_t *j;

	for (size_t i = 0; i < c->nsrc; i++) {
		const struct rq_src_key *k = &c->src[i];
		json_t *v;

		if (k->list) {
			json_t *items = json_array();

			for (size_t n = 0; n < k->nv; n++)
				json_array_append_new(items, text_node(&k->v[n]));
			v = json_pack("{s:o,s:o}", "list", items, "at", at(k->vline, k->vcol));
		} else {
			v = text_node(&k->v[0]);
		}
		json_array_append_new(keys, json_pack("{s:s,s:o,s:o}", "key", k->key, "at",
						      at(k->line, k->col), "value", v));
	}
	/* Kinds resolve files a case names (fabrics, configs) next to the case file. */
	j = json_pack("{s:s,s:o,s:o}", "file", abs ? abs : c->file ? c->file : "",
		      "at", at(c->pos.line, c->pos.col), "keys", keys);
	free(abs);
	return j;
}

void rq_case_wire_set(json_t *j, const char *key, const char *text)
{
	json_t *keys = json_object_get(j, "keys"), *k, *v = json_pack("{s:s}", "text", text);
	size_t i;

	json_array_foreach(keys, i, k)
		if (!strcmp(json_string_value(json_object_get(k, "key")) ?: "", key)) {
			json_object_set_new(k, "value", v);
			return;
		}
	json_array_append_new(keys, json_pack("{s:s,s:o}", "key", key, "value", v));
}

/* ---- the agent side: a libyaml document from the wire form ----------------- */

/*
 * [LINE, COL] into a 0-based libyaml mark.  Anything else is no position:
 * a mark of SIZE_MAX, which the loader's "mark + 1" (NPOS) wraps to 0, the
 * diagnostics' "no line" (a hand-written request must not point at 1:1).
 */
static yaml_mark_t mark_of(const json_t *a)
{
	yaml_mark_t m = { .line = SIZE_MAX, .column = SIZE_MAX };
	json_int_t l = json_integer_value(json_array_get(a, 0));
	json_int_t c = json_integer_value(json_array_get(a, 1));

	if (l > 0 && c > 0 && l < INT_MAX && c < INT_MAX) {
		m.line = (size_t)l - 1;
		m.column = (size_t)c - 1;
	}
	return m;
}

static void set_mark(yaml_document_t *doc, int id, const json_t *a)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);

	/* nodes live in one array that grows: look the node up after each add */
	n->start_mark = n->end_mark = mark_of(a);
}

/* Scalars keep their text as a quoted YAML scalar would: "~" stays a string. */
static int add_text(yaml_document_t *doc, const json_t *node)
{
	const json_t *t = json_object_get(node, "text");
	int id;

	if (!json_is_string(t))
		return 0;
	id = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)json_string_value(t),
				      (int)json_string_length(t), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	if (id)
		set_mark(doc, id, json_object_get(node, "at"));
	return id;
}

static int add_value(yaml_document_t *doc, const json_t *node)
{
	const json_t *list = json_object_get(node, "list");
	size_t i;
	json_t *it;
	int id;

	if (!json_is_array(list))
		return add_text(doc, node);
	id = yaml_document_add_sequence(doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
	if (!id)
		return 0;
	set_mark(doc, id, json_object_get(node, "at"));
	json_array_foreach(list, i, it) {
		int e = add_text(doc, it);

		if (!e || !yaml_document_append_sequence_item(doc, id, e))
			return 0;
	}
	return id;
}

/*
 * Build the case's mapping; false with what is wrong when the object is
 * not a case in the wire form (or a scalar is not UTF-8: libyaml refuses).
 */
static bool build_doc(yaml_document_t *doc, const json_t *j, const char **why)
{
	const json_t *keys = json_object_get(j, "keys");
	size_t i;
	json_t *k;
	int root;

	*why = "expected a case object with \"keys\"";
	if (!json_is_array(keys))
		return false;
	root = yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
	if (!root)
		return false;
	set_mark(doc, root, json_object_get(j, "at"));
	*why = "a key is not {\"key\": TEXT, \"value\": ...} with UTF-8 text";
	json_array_foreach(keys, i, k) {
		const json_t *name = json_object_get(k, "key");
		int kid, vid;

		if (!json_is_string(name))
			return false;
		kid = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)json_string_value(name),
					       (int)json_string_length(name),
					       YAML_PLAIN_SCALAR_STYLE);
		if (!kid)
			return false;
		set_mark(doc, kid, json_object_get(k, "at"));
		vid = add_value(doc, json_object_get(k, "value"));
		if (!vid || !yaml_document_append_mapping_pair(doc, root, kid, vid))
			return false;
	}
	return true;
}

int rq_case_wire_load(const json_t *j, struct rq_suite *suite, struct rq_diags *diags)
{
	const char *file = json_string_value(json_object_get(j, "file"));
	yaml_document_t doc;
	const char *why = "expected a JSON object";
	int r;

	if (!file || !*file)
		file = "request";
	if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1)) {
		diag_add(diags, file, 0, 0, xstrdup("out of memory"));
		return 1;
	}
	if (!json_is_object(j) || !build_doc(&doc, j, &why)) {
		diag_add(diags, file, 0, 0, xasprintf("the case in the request: %s", why));
		yaml_document_delete(&doc);
		return 1;
	}
	r = load_case_doc(file, &doc, suite, diags);
	yaml_document_delete(&doc);
	return r;
}
