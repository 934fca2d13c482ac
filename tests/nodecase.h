/* SPDX-License-Identifier: MIT */
/*
 * Test helper for the node kinds: build a case and its kind config from
 * "key=value" strings through the kind's own key table (defaults first),
 * and run the kind against a node tree the way the agent does (root =
 * tree, tools replayed from its capture), without the loader or an agent.
 */
#ifndef RQ_TEST_NODECASE_H
#define RQ_TEST_NODECASE_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "qual/sysroot.h"
#include "core/util.h"

struct nodecase {
	struct rq_case c;
	struct rq_results out;
	struct rq_ctx ctx;
	const struct rq_kind *k;
	char root[4096];
};

static inline const char *nc_fixture_dir(void)
{
	const char *base = getenv("RQ_FIXTURES");

	return base ? base : "fixtures/nodes";
}

static inline void nc_set(const struct rq_kind *k, void *cfg, const char *key, const char *val)
{
	for (const struct key_def *d = k->keys; d->name; d++) {
		char *p = (char *)cfg + d->offset;

		if (strcmp(d->name, key))
			continue;
		switch (d->type) {
		case KEY_STR:
			free(*(char **)p);
			*(char **)p = xstrdup(val);
			return;
		case KEY_INT:
			*(long long *)p = strtoll(val, NULL, 0);
			return;
		case KEY_DURATION: {
			char *end;
			double v = strtod(val, &end);

			*(int64_t *)p = (int64_t)(v * (!strcmp(end, "ms") ? 1 : !strcmp(end, "m") ? 60000 : 1000));
			return;
		}
		case KEY_DOUBLE:
			*(double *)p = strtod(val, NULL);
			return;
		case KEY_BOOL:
			*(bool *)p = !strcmp(val, "true") || !strcmp(val, "yes");
			return;
		case KEY_ENUM:
			for (int i = 0; d->choices[i]; i++)
				if (!strcmp(d->choices[i], val)) {
					*(int *)p = i;
					return;
				}
			ck_abort_msg("%s: no choice %s", key, val);
			return;
		case KEY_LIST: {
			/* comma-separated, or a YAML flow list "[a, b]" as defaults are written */
			struct rq_list *l = (struct rq_list *)p;
			char *copy = xstrdup(val), *save = NULL, *t;

			for (t = strtok_r(copy, ",[]", &save); t; t = strtok_r(NULL, ",[]", &save)) {
				l->str = xrealloc(l->str, (l->n + 1) * sizeof(*l->str));
				l->num = xrealloc(l->num, (l->n + 1) * sizeof(*l->num));
				l->str[l->n] = xstrdup(strtrim(t));
				l->num[l->n] = strtoll(l->str[l->n], NULL, 0);
				l->n++;
			}
			free(copy);
			return;
		}
		default:
			ck_abort_msg("%s: type not supported by the test helper", key);
		}
	}
	ck_abort_msg("kind %s has no key %s", k->name, key);
}

/* kv: NULL-terminated "key=value" strings. */
static inline void nc_init(struct nodecase *nc, const char *kind, const char *fixture,
			   const char *const *kv)
{
	memset(nc, 0, sizeof(*nc));
	nc->k = rq_kind_find(kind);
	ck_assert_msg(nc->k != NULL, "no kind %s", kind);
	nc->c.name = (char *)"t.case";
	nc->c.kind = nc->k;
	nc->c.devices = (char *)"all";
	nc->c.gid_index = -1;
	nc->c.timeout_ms = 30000;
	nc->c.cfg = xcalloc(1, nc->k->cfg_size);
	for (const struct key_def *d = nc->k->keys; d->name; d++)
		if (d->def)
			nc_set(nc->k, nc->c.cfg, d->name, d->def);
	for (size_t i = 0; kv && kv[i]; i++) {
		char *s = xstrdup(kv[i]), *eq = strchr(s, '=');

		ck_assert_msg(eq != NULL, "bad kv %s", kv[i]);
		*eq = '\0';
		if (!strcmp(s, "devices"))
			nc->c.devices = (char *)kv[i] + (eq - s) + 1;
		else if (!strcmp(s, "port"))
			nc->c.port = atoi(eq + 1);
		else
			nc_set(nc->k, nc->c.cfg, s, eq + 1);
		free(s);
	}
	if (fixture[0] == '/')
		snprintf(nc->root, sizeof(nc->root), "%s", fixture);
	else
		snprintf(nc->root, sizeof(nc->root), "%s/%s", nc_fixture_dir(), fixture);
	nc->ctx.c = &nc->c;
	nc->ctx.target = "sysroot";
	nc->ctx.root = nc->root;
	nc->ctx.replay = true;
	nc->ctx.log_fd = -1;
	nc->ctx.tool = rq_tool_replay;
	nc->ctx.out = &nc->out;
	nc->ctx.state = xcalloc(1, nc->k->state_size ? nc->k->state_size : 1);
	nc->ctx.main = rq_result_new(nc->c.name, NULL, 0);
	rq_results_add(&nc->out, nc->ctx.main);
}

/* Run check/run/cleanup as the agent does; drop an untouched main row. */
static inline void nc_run(struct nodecase *nc)
{
	char why[512] = "";
	enum rq_verdict v = nc->k->check ? nc->k->check(&nc->ctx, nc->c.cfg, why, sizeof(why)) : RQ_NONE;

	if (v != RQ_NONE) {
		rq_result_set(nc->ctx.main, v, "%s", why[0] ? why : "not applicable");
	} else {
		nc->k->run(&nc->ctx, nc->c.cfg);
		if (nc->k->cleanup)
			nc->k->cleanup(&nc->ctx, nc->c.cfg);
	}
	size_t j = 0;

	for (size_t i = 0; i < nc->out.n; i++) {
		struct rq_result *r = nc->out.v[i];

		if (r == nc->ctx.main && nc->out.n > 1 && !r->judged && r->verdict == RQ_NONE && !r->nfigs) {
			rq_result_free(r);
			continue;
		}
		rq_result_finish(r);
		nc->out.v[j++] = r;
	}
	nc->out.n = j;
}

/* The row for device/port (NULL device: node-wide), or NULL. */
static inline struct rq_result *nc_row(struct nodecase *nc, const char *dev, int port)
{
	for (size_t i = 0; i < nc->out.n; i++) {
		struct rq_result *r = nc->out.v[i];

		if (((!dev && !r->device) || (dev && r->device && !strcmp(dev, r->device))) &&
		    r->port == port)
			return r;
	}
	return NULL;
}

static inline unsigned nc_count(struct nodecase *nc, enum rq_verdict v)
{
	unsigned n = 0;

	for (size_t i = 0; i < nc->out.n; i++)
		n += nc->out.v[i]->verdict == v;
	return n;
}

static inline const char *nc_fact(struct rq_result *r, const char *key)
{
	for (size_t i = 0; r && i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, key))
			return r->facts[i].value;
	return NULL;
}

static inline void nc_dump(struct nodecase *nc, const char *tag)
{
	for (size_t i = 0; i < nc->out.n; i++) {
		struct rq_result *r = nc->out.v[i];

		fprintf(stderr, "  %s %s %s/%d %s: %s\n", tag, nc->k->name, r->device ? r->device : "-",
			r->port, rq_verdict_name(r->verdict), r->reason ? r->reason : "");
	}
}

static inline void nc_release(struct nodecase *nc)
{
	free(nc->ctx.state);
	for (const struct key_def *d = nc->k->keys; d->name; d++) {
		char *p = (char *)nc->c.cfg + d->offset;

		if (d->type == KEY_STR) {
			free(*(char **)p);
		} else if (d->type == KEY_LIST) {
			struct rq_list *l = (struct rq_list *)p;

			for (size_t i = 0; i < l->n; i++)
				free(l->str[i]);
			free(l->str);
			free(l->num);
		}
	}
	free(nc->c.cfg);
	rq_results_release(&nc->out);
}

#endif
