/* SPDX-License-Identifier: MIT */
/*
 * The placement's wire form (where.h).  One table names every field once:
 * the encoder, the decoder, the copy and the release walk it, so a field
 * cannot be sent by the controller and missed by the agent.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "core/where.h"
#include "core/util.h"

enum wf_type { WF_STR, WF_STR2, WF_BOOL, WF_INT, WF_I64 };

struct wf {
	const char *name;
	enum wf_type type;
	size_t off;
};

#define W(f) offsetof(struct rq_where, f)
#define F(f) (offsetof(struct rq_where, fabric) + offsetof(struct rq_where_fabric, f))

static const struct wf fields[] = {
	{ "host", WF_STR2, W(host) },
	{ "rdma_addr", WF_STR2, W(rdma_addr) },
	{ "rdma_gid", WF_STR2, W(rdma_gid) },
	{ "rail", WF_INT, W(rail) },
	{ "rdma_dev", WF_STR, W(rdma_dev) },
	{ "netdev", WF_STR, W(netdev) },
	{ "slots", WF_INT, W(slots) },
	{ "case_file", WF_STR, W(case_file) },
	{ "allow_sm_takeover", WF_BOOL, W(allow_sm_takeover) },
	{ "sim", WF_BOOL, F(sim) },
	{ "topology", WF_STR, F(topology) },
	{ "planned", WF_STR, F(planned) },
	{ "socket", WF_STR, F(socket) },
	{ "target_sm", WF_BOOL, F(target_sm) },
	{ "sm_up", WF_BOOL, F(sm_up) },
	{ "sm_log", WF_STR, F(sm_log) },
	{ "sm_config", WF_STR, F(sm_config) },
	{ "sm_partitions", WF_STR, F(sm_partitions) },
	{ "qos_policy", WF_STR, F(qos_policy) },
	{ "routing_engine", WF_STR, F(routing_engine) },
	{ "ibsim_start_ms", WF_I64, F(ibsim_start_ms) },
	{ "ibsim_ready_ms", WF_I64, F(ibsim_ready_ms) },
	{ "sm_settle_ms", WF_I64, F(sm_settle_ms) },
};

#define AT(w, f, T) ((T *)((char *)(w) + (f)->off))
#define CAT(w, f, T) ((T const *)((const char *)(w) + (f)->off))

void rq_where_init(struct rq_where *w)
{
	memset(w, 0, sizeof(*w));
	w->rail = -1;
}

void rq_where_release(struct rq_where *w)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct wf *f = &fields[i];

		if (f->type == WF_STR)
			free(*AT(w, f, char *));
		else if (f->type == WF_STR2)
			for (int k = 0; k < 2; k++)
				free(AT(w, f, char *)[k]);
	}
	for (size_t i = 0; i < w->nnodes; i++) {
		free(w->nodes[i].name);
		free(w->nodes[i].addr);
	}
	free(w->nodes);
	rq_where_init(w);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void rq_where_copy(struct rq_where *dst, const struct rq_where *src)
{
	*dst = *src;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct wf *f = &fields[i];

		if (f->type == WF_STR)
			*AT(dst, f, char *) = dup_or_null(*CAT(src, f, char *));
		else if (f->type == WF_STR2)
			for (int k = 0; k < 2; k++)
				AT(dst, f, char *)[k] = dup_or_null(CAT(src, f, char *)[k]);
	}
	dst->nodes = NULL;
	dst->nnodes = 0;
	for (size_t i = 0; i < src->nnodes; i++)
		rq_where_add_node(dst, src->nodes[i].name, src->nodes[i].addr);
}

void rq_where_add_node(struct rq_where *w, const char *name, const char *addr)
{
	w->nodes = xrealloc(w->nodes, (w->nnodes + 1) * sizeof(*w->nodes));
	w->nodes[w->nnodes].name = xstrdup(name);
	w->nodes[w->nnodes++].addr = addr && *addr ? xstrdup(addr) : NULL;
}

const char *rq_where_node_reach(const struct rq_where *w, size_t i)
{
	return w->nodes[i].addr && *w->nodes[i].addr ? w->nodes[i].addr : w->nodes[i].name;
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *rq_where_to_json(const struct rq_where *w)
{
	json_t *j = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct wf *f = &fields[i];
		const char *s;

		switch (f->type) {
		case WF_STR:
			if ((s = *CAT(w, f, char *)) && *s)
				json_object_set_new(j, f->name, json_string(s));
			break;
		case WF_STR2: {
			char *const *v = CAT(w, f, char *);

			if ((v[0] && *v[0]) || (v[1] && *v[1]))
				json_object_set_new(j, f->name, json_pack("[o,o]", str_or_null(v[0]), str_or_null(v[1])));
			break;
		}
		case WF_BOOL:
			if (*CAT(w, f, bool))
				json_object_set_new(j, f->name, json_true());
			break;
		case WF_INT:
			if (*CAT(w, f, int) != (f->off == W(rail) ? -1 : 0))
				json_object_set_new(j, f->name, json_integer(*CAT(w, f, int)));
			break;
		case WF_I64:
			if (*CAT(w, f, int64_t))
				json_object_set_new(j, f->name, json_integer(*CAT(w, f, int64_t)));
			break;
		}
	}
	if (w->nnodes) {
		json_t *a = json_array();

		for (size_t i = 0; i < w->nnodes; i++)
			json_array_append_new(a, w->nodes[i].addr ?
					      json_pack("{s:s,s:s}", "name", w->nodes[i].name, "addr", w->nodes[i].addr) :
					      json_pack("{s:s}", "name", w->nodes[i].name));
		json_object_set_new(j, "nodes", a);
	}
	return j;
}

static int bad(char *why, size_t whysz, const char *name, const char *want)
{
	snprintf(why, whysz, "placement field \"%s\" is not %s", name, want);
	return -1;
}

/* A string field's value: "" when absent or null. */
static int get_str(const json_t *v, const char *name, char **out, char *why, size_t whysz)
{
	if (v && !json_is_null(v) && !json_is_string(v))
		return bad(why, whysz, name, "a string");
	*out = xstrdup(json_is_string(v) ? json_string_value(v) : "");
	return 0;
}

int rq_where_from_json(struct rq_where *w, const json_t *j, char *why, size_t whysz)
{
	rq_where_init(w);
	if (j && !json_is_object(j)) {
		snprintf(why, whysz, "the placement is not an object");
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct wf *f = &fields[i];
		const json_t *v = j ? json_object_get(j, f->name) : NULL;

		switch (f->type) {
		case WF_STR:
			if (get_str(v, f->name, AT(w, f, char *), why, whysz))
				goto fail;
			break;
		case WF_STR2:
			if (v && (!json_is_array(v) || json_array_size(v) != 2)) {
				bad(why, whysz, f->name, "a pair");
				goto fail;
			}
			for (int k = 0; k < 2; k++)
				if (get_str(v ? json_array_get(v, (size_t)k) : NULL, f->name, &AT(w, f, char *)[k], why,
					    whysz))
					goto fail;
			break;
		case WF_BOOL:
			if (v && !json_is_boolean(v)) {
				bad(why, whysz, f->name, "a boolean");
				goto fail;
			}
			*AT(w, f, bool) = json_is_true(v);
			break;
		case WF_INT:
		case WF_I64:
			if (v && (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
				  (f->type == WF_INT && json_integer_value(v) > INT32_MAX))) {
				bad(why, whysz, f->name, "an integer");
				goto fail;
			}
			if (f->type == WF_INT && v)
				*AT(w, f, int) = (int)json_integer_value(v);
			else if (v)
				*AT(w, f, int64_t) = json_integer_value(v);
			break;
		}
	}
	const json_t *nodes = j ? json_object_get(j, "nodes") : NULL;

	if (nodes && !json_is_array(nodes)) {
		bad(why, whysz, "nodes", "a list");
		goto fail;
	}
	for (size_t i = 0; nodes && i < json_array_size(nodes); i++) {
		const json_t *n = json_array_get(nodes, i), *name = json_object_get(n, "name"),
			     *addr = json_object_get(n, "addr");

		if (!json_is_string(name) || (addr && !json_is_string(addr))) {
			snprintf(why, whysz, "placement node %zu has no name", i);
			goto fail;
		}
		rq_where_add_node(w, json_string_value(name), json_string_value(addr));
	}
	return 0;
fail:
	rq_where_release(w);
	return -1;
}
