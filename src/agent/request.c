/* SPDX-License-Identifier: MIT */
/*
 * The run request (request.h): built in one place, written and read in
 * one place.  The controller (the scheduler, `rdmaqual vm bench`) and the
 * agent's worker both go through here, so a field cannot be sent by one
 * and missed by the other.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "agent/request.h"
#include "core/util.h"

const char *rq_role_name(enum rq_role role)
{
	switch (role) {
	case ROLE_SERVER: return "server";
	case ROLE_CLIENT: return "client";
	case ROLE_SINGLE: break;
	}
	return "single";
}

void rq_request_init(struct rq_request *r, const struct rq_case *c, const char *target,
		     enum rq_role role)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	r->target = target;
	r->role = role;
	r->timeout_ms = scaled_ms(c->timeout_ms);
	r->timeout_mul = rq_timeout_mul;
	rq_where_init(&r->where);
}

void rq_request_place(struct rq_request *r, const struct rq_placement *p, int side,
		      int oob_port, const char *state_dir, bool allow_sm_takeover)
{
	r->oob_port = oob_port;
	r->state_dir = state_dir;
	if (p->root && *p->root) {
		r->root = p->root;
		r->replay = true;
	}
	if (p->addr[side][0])
		r->local_addr = p->addr[side];
	/* Each side's peer is the other side (command-pair's {peer_ip} on the server too). */
	if (p->addr[!side][0] && (side == 0 || r->role == ROLE_SERVER))
		r->peer_addr = p->addr[!side];
	r->env = (const char *const *)p->env;
	r->tool_cwd = p->tool_cwd;
	rq_where_release(&r->where);
	rq_where_copy(&r->where, &p->where);
	r->where.allow_sm_takeover = allow_sm_takeover;
}

void rq_request_set_key(struct rq_request *r, const char *key, const char *text)
{
	if (r->nset < sizeof(r->set) / sizeof(r->set[0])) {
		r->set[r->nset].key = key;
		r->set[r->nset++].text = text;
	}
}

static void set_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

json_t *rq_request_to_json(const struct rq_request *r)
{
	json_t *j = json_object();

	json_object_set_new(j, "op", json_string("run"));
	json_t *jc = rq_case_wire(r->c);

	for (size_t i = 0; i < r->nset; i++)
		rq_case_wire_set(jc, r->set[i].key, r->set[i].text);
	json_object_set_new(j, "case", jc);
	json_object_set_new(j, "role", json_string(rq_role_name(r->role)));
	set_str(j, "target", r->target);
	json_object_set_new(j, "timeout_ms", json_integer(r->timeout_ms));
	json_object_set_new(j, "timeout_mul", json_real(r->timeout_mul > 0 ? r->timeout_mul : 1));
	json_object_set_new(j, "where", rq_where_to_json(&r->where));
	if (r->root && *r->root) {
		set_str(j, "root", r->root);
		json_object_set_new(j, "replay", json_boolean(r->replay));
	}
	set_str(j, "state_dir", r->state_dir);
	set_str(j, "peer_addr", r->peer_addr);
	set_str(j, "local_addr", r->local_addr);
	json_object_set_new(j, "oob_port", json_integer(r->oob_port));
	if (r->env) {
		json_t *e = json_array();

		for (size_t i = 0; r->env[i]; i++)
			json_array_append_new(e, json_string(r->env[i]));
		json_object_set_new(j, "env", e);
	}
	set_str(j, "tool_cwd", r->tool_cwd);
	return j;
}

static const char *get_str(json_t *o, const char *k, const char *def)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : def;
}

int rq_request_from_json(struct rq_request *r, json_t *j, struct rq_diags *diags,
			 char *why, size_t whysz)
{
	const char *role = get_str(j, "role", "single");
	json_t *v;

	memset(r, 0, sizeof(*r));
	rq_where_init(&r->where);
	r->json = json_incref(j);
	r->target = get_str(j, "target", "local");
	r->role = !strcmp(role, "server") ? ROLE_SERVER :
		  !strcmp(role, "client") ? ROLE_CLIENT : ROLE_SINGLE;
	r->root = get_str(j, "root", "");
	r->replay = json_is_true(json_object_get(j, "replay"));
	r->state_dir = get_str(j, "state_dir", NULL);
	r->peer_addr = get_str(j, "peer_addr", NULL);
	r->local_addr = get_str(j, "local_addr", NULL);
	r->tool_cwd = get_str(j, "tool_cwd", NULL);
	r->oob_port = (int)json_integer_value(json_object_get(j, "oob_port"));
	/* What --timeout-mul accepts; anything else is a request to ignore it. */
	v = json_object_get(j, "timeout_mul");
	r->timeout_mul = json_is_number(v) && json_number_value(v) >= 0.1 &&
			 json_number_value(v) <= 100 ? json_number_value(v) : 1;
	if (rq_where_from_json(&r->where, json_object_get(j, "where"), why, whysz))
		return -1;
	v = json_object_get(j, "env");
	if (json_is_array(v)) {
		size_t n = json_array_size(v), k = 0;

		r->env_owned = xcalloc(n + 1, sizeof(*r->env_owned));
		for (size_t i = 0; i < n; i++)
			if (json_is_string(json_array_get(v, i)))
				r->env_owned[k++] = json_string_value(json_array_get(v, i));
		r->env = r->env_owned;
	}
	if (rq_case_wire_load(json_object_get(j, "case"), &r->suite, diags) ||
	    r->suite.ncases != 1) {
		snprintf(why, whysz, "the agent could not load the case: %s",
			 diags->n ? diags->v[0].msg : "no case in request");
		return -1;
	}
	r->c = r->suite.cases[0];
	v = json_object_get(j, "timeout_ms");
	r->timeout_ms = json_is_integer(v) ? json_integer_value(v) :
			(int64_t)((double)r->c->timeout_ms * r->timeout_mul);
	return 0;
}

void rq_request_release(struct rq_request *r)
{
	rq_where_release(&r->where);
	json_decref(r->json);
	rq_suite_release(&r->suite);
	free(r->env_owned);
	memset(r, 0, sizeof(*r));
}
