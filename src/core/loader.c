/* SPDX-License-Identifier: MIT */
/*
 * The case-file loader.  A file is one YAML document: a mapping with an
 * optional `defaults:` mapping and a `cases:` sequence of case mappings.
 * Every key of a case is a row of a key table (rq_common_keys, then the
 * kind's own) and one generic converter turns YAML scalars into typed
 * values with range checks (keyconv.c).
 *
 * Errors are collected, never fatal: a user fixing a file wants every
 * mistake in one run, each as file:line:column with what was expected.
 * Cases of a file with any error are dropped as a whole, so a run never
 * starts on half a file.
 *
 * The loader also keeps, for every case, its effective keys as written,
 * with their positions (struct rq_src_key): the agent in a VM or on a peer
 * gets them (case_wire.c) and loads the same case with the same code.
 *
 * This file walks the YAML (top level, defaults:, cases, merge keys) and
 * builds cases; the parts it uses are split by concern: diagnostics
 * (loader_diag.c), typed conversion (keyconv.c), key-table text and sanity
 * (keys.c), the common keys (common_keys.c), the needs: syntax
 * (needs_parse.c) and the wire form (case_wire.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>
#include "core/case.h"
#include "core/kind.h"
#include "core/loader_int.h"
#include "core/util.h"

/* ---- key/value entries of one mapping ------------------------------------ */

void ents_add(struct ents *e, const struct ent *x)
{
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
	e->v[e->n++] = *x;
}

struct ent *ents_find(const struct ents *e, const char *key)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->v[i].key, key))
			return &e->v[i];
	return NULL;
}

/*
 * Collect a mapping's pairs, refusing non-scalar and duplicate keys.
 * YAML merge keys ("<<: *anchor", or a list of anchors) are honoured:
 * their pairs fill in what the mapping does not set itself, nested merges
 * included.  Aliases can make merges fan out exponentially, so the pairs a
 * merge may visit are budgeted.
 */
#define MERGE_DEPTH 8
#define MERGE_BUDGET 10000

static void collect_mapping(struct ld *ld, yaml_node_t *map, struct ents *e, int depth)
{
	yaml_node_pair_t *p;

	if (depth == 0)
		ld->merge_budget = MERGE_BUDGET;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ld->doc, p->key), *v = node_at(ld->doc, p->value);
		struct ent *old;

		if (!k || !v)
			continue;
		if (depth > 0 && --ld->merge_budget < 0)
			return;
		if (k->type != YAML_SCALAR_NODE || is_null(k)) {
			lerr(ld, NPOS(k), "expected a key name, got %s", what_node(k));
			continue;
		}
		if (!scalar_ok(ld, k, "key"))
			continue;
		if (!strcmp(stext(k), "<<") && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			continue;	/* merged below, after the mapping's own keys */
		old = ents_find(e, stext(k));
		if (old) {
			if (depth == 0)
				lerr(ld, NPOS(k), "duplicate key \"%s\" (first at line %u)",
				     stext(k), (unsigned)old->knode->start_mark.line + 1);
			continue;
		}
		ents_add(e, &(struct ent){ .key = stext(k), .knode = k, .v = v });
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ld->doc, p->key), *v = node_at(ld->doc, p->value);

		if (!k || !v || k->type != YAML_SCALAR_NODE || strcmp(stext(k), "<<") ||
		    k->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			continue;
		if (depth >= MERGE_DEPTH) {
			lerr(ld, NPOS(k), "<<: merges nested too deep (at most %d)", MERGE_DEPTH);
			return;
		}
		if (v->type == YAML_MAPPING_NODE) {
			collect_mapping(ld, v, e, depth + 1);
		} else if (v->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top && ld->merge_budget >= 0; it++) {
				yaml_node_t *m = node_at(ld->doc, *it);
				if (m && m->type == YAML_MAPPING_NODE)
					collect_mapping(ld, m, e, depth + 1);
				else if (m)
					lerr(ld, NPOS(m), "<<: expected a mapping to merge, got %s",
					     what_node(m));
			}
		} else {
			lerr(ld, NPOS(v), "<<: expected a mapping to merge, got %s", what_node(v));
		}
		if (depth == 0 && ld->merge_budget < 0) {
			lerr(ld, NPOS(k), "<<: merges expand to more than %d keys", MERGE_BUDGET);
			return;
		}
	}
}

static const struct key_def *kind_key(const struct rq_kind *kind, const char *key)
{
	for (const struct key_def *k = kind ? kind->keys : NULL; k && k->name; k++)
		if (!strcmp(k->name, key))
			return k;
	return NULL;
}

/* ---- cases ---------------------------------------------------------------- */

static void case_free(struct rq_case *c)
{
	if (!c)
		return;
	free(c->name);
	free(c->summary);
	for (size_t i = 0; i < c->ntags; i++)
		free(c->tags[i]);
	free(c->tags);
	for (size_t i = 0; i < c->ntargets; i++)
		free(c->targets[i]);
	free(c->targets);
	for (size_t i = 0; i < c->nneeds; i++)
		free(c->needs[i].arg);
	free(c->needs);
	free(c->devices);
	free(c->pairs);
	free(c->fabric);
	free(c->routing_engine);
	free(c->sm_config);
	free(c->qos_policy);
	free(c->sm_partitions);
	for (size_t i = 0; i < c->nmodules; i++)
		free(c->modules[i]);
	free(c->modules);
	free(c->judge);
	free(c->daemon_allowed);
	if (c->kind && c->cfg)
		rq_cfg_release(c->kind->keys, c->cfg);
	free(c->cfg);
	free(c->file);
	for (size_t i = 0; i < c->nsrc; i++) {
		for (size_t j = 0; j < c->src[i].nv; j++)
			free(c->src[i].v[j].text);
		free(c->src[i].v);
		free(c->src[i].key);
	}
	free(c->src);
	free(c);
}

/* Split "hca,rxe-vm" into a fresh array. */
static char **split_commas(const char *s, size_t *n)
{
	char *dup = xstrdup(s), *save = NULL, **v = NULL;

	*n = 0;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		t = strtrim(t);
		if (!*t)
			continue;
		v = xrealloc(v, (*n + 1) * sizeof(*v));
		v[(*n)++] = xstrdup(t);
	}
	free(dup);
	return v;
}

/* Per file: what the loader knows across its cases. */
struct file_state {
	struct ents defs;		/* defaults: entries */
	struct rq_case **cases;
	size_t ncases;
	struct {
		const char *name;
		unsigned line, col;
	} *names;
	size_t nnames, capnames;
	struct strmap byname;		/* name -> index in names */
	const struct rq_kind **kinds;	/* kinds the file's cases use */
	size_t nkinds;
	bool kind_unknown;		/* some case's kind could not be resolved */
};

static void note_kind(struct file_state *fs, const struct rq_kind *k)
{
	for (size_t i = 0; i < fs->nkinds; i++)
		if (fs->kinds[i] == k)
			return;
	fs->kinds = xrealloc(fs->kinds, (fs->nkinds + 1) * sizeof(*fs->kinds));
	fs->kinds[fs->nkinds++] = k;
}

static void src_val(struct rq_src_key *k, const yaml_node_t *n, bool dedup)
{
	for (size_t i = 0; dedup && i < k->nv; i++)
		if (!strcmp(k->v[i].text, stext(n)))
			return;
	k->v = xrealloc(k->v, (k->nv + 1) * sizeof(*k->v));
	k->v[k->nv++] = (struct rq_src_val){ .text = xstrdup(stext(n)), NPOS_INIT(n) };
}

static void src_list_part(struct rq_src_key *k, yaml_document_t *doc, const yaml_node_t *n,
			  bool dedup)
{
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(doc, *it);

		if (e && e->type == YAML_SCALAR_NODE)
			src_val(k, e, dedup);
	}
}

/*
 * Record a key as written (it converted, so it is a scalar or a list of
 * scalars); a defaults: list merged in front (tags, needs) comes first.
 */
static void src_add(struct rq_case *c, yaml_document_t *doc, const struct ent *e, bool dedup)
{
	struct rq_src_key *k;

	c->src = xrealloc(c->src, (c->nsrc + 1) * sizeof(*c->src));
	k = &c->src[c->nsrc++];
	*k = (struct rq_src_key){
		.key = xstrdup(e->key),
		.line = (unsigned)e->knode->start_mark.line + 1,
		.col = (unsigned)e->knode->start_mark.column + 1,
		.vline = (unsigned)e->v->start_mark.line + 1,
		.vcol = (unsigned)e->v->start_mark.column + 1,
	};
	if (e->v->type == YAML_SEQUENCE_NODE) {
		k->list = true;
		if (e->pre && e->pre->type == YAML_SEQUENCE_NODE)
			src_list_part(k, doc, e->pre, dedup);
		src_list_part(k, doc, e->v, dedup);
	} else {
		src_val(k, e->v, false);
	}
}

static void load_case(struct ld *ld, struct file_state *fs, yaml_node_t *cn)
{
	struct ents e = { 0 };
	struct common cc = { 0 };
	const struct rq_kind *kind = NULL;
	struct ent *ke;
	bool seen_common[CK_COUNT] = { 0 };
	bool *seen_kind = NULL;
	size_t nkeys = 0;
	void *cfg = NULL;
	int err0 = ld->nall;
	struct rq_case *c;

	if (cn->type != YAML_MAPPING_NODE) {
		lerr(ld, NPOS(cn), "expected a case (a mapping with name:, kind:, ...), got %s",
		     what_node(cn));
		fs->kind_unknown = true;
		return;
	}
	collect_mapping(ld, cn, &e, 0);

	/* The kind decides which keys exist: resolve it first. */
	ke = ents_find(&e, "kind");
	if (!ke)
		ke = ents_find(&fs->defs, "kind");
	if (ke && ke->v->type == YAML_SCALAR_NODE && !is_null(ke->v) &&
	    scalar_ok(ld, ke->v, "kind")) {
		kind = rq_kind_find(stext(ke->v));
		if (!kind) {
			struct hint h = { .word = stext(ke->v) };
			const struct rq_kind *k;
			char hb[300];
			for (size_t i = 0; (k = rq_kind_iter(i)); i++)
				hint_try(&h, k->name);
			lerr(ld, NPOS(ke->v), "kind: unknown kind \"%s\"%s", stext(ke->v),
			     hint_text(&h, hb, sizeof(hb)));
		}
	}
	if (kind) {
		note_kind(fs, kind);
		for (const struct key_def *k = kind->keys; k && k->name; k++)
			nkeys++;
		seen_kind = xcalloc(nkeys + 1, sizeof(*seen_kind));
		cfg = xcalloc(1, kind->cfg_size ? kind->cfg_size : 1);
	} else {
		fs->kind_unknown = true;
	}

	/* Merge defaults: the case's own keys win; tags and needs add up. */
	for (size_t i = 0; i < fs->defs.n; i++) {
		struct ent *d = &fs->defs.v[i];
		int ck = common_index(d->key);
		struct ent *own = ents_find(&e, d->key);

		if (ck == CK_NAME)
			continue;
		if (!common_allowed(ck, kind) && !kind_key(kind, d->key))
			continue;
		d->used = true;
		if (!own)
			ents_add(&e, &(struct ent){ .key = d->key, .knode = d->knode, .v = d->v,
						    .from_def = true });
		else if (ck == CK_TAGS || ck == CK_NEEDS)
			own->pre = d->v;
	}

	for (size_t i = 0; i < e.n; i++) {
		struct ent *x = &e.v[i];
		int ck = common_index(x->key);
		const struct key_def *k;

		if (common_allowed(ck, kind)) {
			seen_common[ck] = true;
			conv_common(ld, ck, x, &cc);
		} else if ((k = kind_key(kind, x->key))) {
			seen_kind[k - kind->keys] = true;
			conv_key(ld, ld->doc, k, NULL, x->v, cfg, NULL, false);
		} else if (kind) {
			struct hint h = { .word = x->key };
			char hb[300];
			for (int j = 0; j < CK_COUNT; j++)
				if (common_allowed(j, kind))
					hint_try(&h, rq_common_keys[j].name);
			for (k = kind->keys; k && k->name; k++)
				hint_try(&h, k->name);
			lerr(ld, NPOS(x->knode), "unknown key \"%s\" for kind %s%s", x->key,
			     kind->name, hint_text(&h, hb, sizeof(hb)));
		}
		/* no kind: which keys exist is unknown; the kind error says enough */
	}

	/* Required keys, then built-in defaults for what is still unset. */
	for (int j = 0; j < CK_COUNT; j++) {
		const struct key_def *k = &rq_common_keys[j];
		if (seen_common[j])
			continue;
		if (k->required)
			lerr(ld, NPOS(cn), "missing required key \"%s\"", k->name);
		else if (k->def && !apply_default(ld, k, &cc))
			lerr(ld, NPOS(cn), "internal error: default \"%s\" of key \"%s\" is invalid",
			     k->def, k->name);
	}
	for (size_t j = 0; kind && j < nkeys; j++) {
		const struct key_def *k = &kind->keys[j];
		if (seen_kind[j])
			continue;
		if (k->required)
			lerr(ld, NPOS(cn), "missing required key \"%s\" for kind %s", k->name,
			     kind->name);
		else if (k->def && !apply_default(ld, k, cfg))
			lerr(ld, NPOS(cn), "internal error: kind %s: default \"%s\" of key \"%s\" "
			     "is invalid", kind->name, k->def, k->name);
	}

	/* Duplicate names within the file, at the second one. */
	if (cc.name) {
		struct ent *ne = ents_find(&e, "name");
		size_t *first = strmap_get(&fs->byname, cc.name);
		bool added;

		if (first)
			lerr(ld, NPOS(ne->v), "duplicate case name \"%s\" (first at line %u)",
			     cc.name, fs->names[*first].line);
		if (fs->nnames == fs->capnames) {
			fs->capnames = fs->capnames ? 2 * fs->capnames : 64;
			fs->names = xrealloc(fs->names, fs->capnames * sizeof(*fs->names));
		}
		fs->names[fs->nnames].name = stext(ne->v);
		strmap_put(&fs->byname, fs->names[fs->nnames].name, fs->nnames, &added);
		fs->names[fs->nnames].line = (unsigned)ne->v->start_mark.line + 1;
		fs->names[fs->nnames].col = (unsigned)ne->v->start_mark.column + 1;
		fs->nnames++;
	}

	/* nall, not nerr: an inherited bad default is listed once but fails every case */
	if (ld->nall > err0 || !kind) {
		common_release(&cc);
		if (kind)
			rq_cfg_release(kind->keys, cfg);
		free(cfg);
		goto out;
	}

	c = xcalloc(1, sizeof(*c));
	c->name = cc.name;
	c->kind = kind;
	c->summary = cc.summary;
	c->tags = cc.tags.str;
	c->ntags = cc.tags.n;
	free(cc.tags.num);
	if (cc.targets.n) {
		c->targets = cc.targets.str;
		c->ntargets = cc.targets.n;
	} else {
		free(cc.targets.str);
		if (kind->default_targets)
			c->targets = split_commas(kind->default_targets, &c->ntargets);
	}
	free(cc.targets.num);
	c->needs = cc.needs.n ? xcalloc(cc.needs.n, sizeof(*c->needs)) : NULL;
	for (size_t j = 0; j < cc.needs.n; j++) {
		char err[512];
		if (!rq_need_parse(cc.needs.str[j], &c->needs[c->nneeds], err, sizeof(err)))
			c->nneeds++;
	}
	list_release(&cc.needs);
	free(cc.kind);
	c->timeout_ms = cc.timeout_ms;
	c->devices = cc.devices;
	c->port = cc.port;
	c->gid_index = cc.gid_index;
	c->vm_cpus = (int)cc.vm_cpus;
	c->vm_memory = cc.vm_memory;
	c->pairs = cc.pairs;
	c->fabric = cc.fabric;
	c->routing_engine = cc.routing_engine;
	c->sm_config = cc.sm_config;
	c->qos_policy = cc.qos_policy;
	c->sm_partitions = cc.sm_partitions;
	c->fabric_sm = seen_common[CK_FABRIC_SM] ? cc.fabric_sm : kind->fabric_sm;
	c->modules = cc.modules.str;
	c->nmodules = cc.modules.n;
	free(cc.modules.num);
	c->fresh_guest = cc.fresh_guest;
	c->vm_scratch = cc.vm_scratch;
	c->udev = cc.udev;
	c->daemon_allowed = cc.daemon_allowed;
	if (cc.judge.n) {
		struct sb j = SB_INIT;

		for (size_t i = 0; i < cc.judge.n; i++)
			sb_addf(&j, "%s%s", i ? " " : "", cc.judge.str[i]);
		c->judge = j.buf;
	}
	list_release(&cc.judge);
	c->cfg = cfg;
	c->pos = (struct rq_pos){ .line = (unsigned)cn->start_mark.line + 1,
				  .col = (unsigned)cn->start_mark.column + 1 };
	c->file = xstrdup(ld->file);
	c->pos.file = c->file;

	/* Keys as written in table order, so the wire form of a case is canonical. */
	for (int j = 0; j < CK_COUNT; j++) {
		struct ent *x = ents_find(&e, rq_common_keys[j].name);
		if (x && common_allowed(j, kind))
			src_add(c, ld->doc, x, j == CK_TAGS || j == CK_NEEDS);
	}
	for (size_t j = 0; j < nkeys; j++) {
		struct ent *x = ents_find(&e, kind->keys[j].name);
		if (x)
			src_add(c, ld->doc, x, false);
	}

	if (kind->validate) {
		char err[512] = "";
		if (kind->validate(c, err, sizeof(err))) {
			lerr(ld, NPOS(cn), "%s", err[0] ? err : "the kind refused this case");
			case_free(c);
			goto out;
		}
	}
	fs->cases = xrealloc(fs->cases, (fs->ncases + 1) * sizeof(*fs->cases));
	fs->cases[fs->ncases++] = c;
out:
	free(seen_kind);
	free(e.v);
}

/* Check defaults: once, so a bad value is reported even without cases. */
static void check_defaults(struct ld *ld, struct file_state *fs)
{
	for (size_t i = 0; i < fs->defs.n; i++) {
		struct ent *d = &fs->defs.v[i];
		int ck = common_index(d->key);
		struct common cc = { 0 };

		if (ck == CK_NAME) {
			lerr(ld, NPOS(d->knode), "defaults: \"name\" cannot have a default (every case needs its own)");
			continue;
		}
		if (ck >= 0) {
			conv_common(ld, ck, d, &cc);
			common_release(&cc);
		}
	}
}

/* Defaults that no case could take (kind keys of no kind in this file). */
static void check_defaults_used(struct ld *ld, struct file_state *fs)
{
	if (fs->kind_unknown)
		return;	/* cannot tell: the kind error is the one to fix */
	for (size_t i = 0; i < fs->defs.n; i++) {
		struct ent *d = &fs->defs.v[i];
		struct hint h = { .word = d->key };
		int ck = common_index(d->key);
		char hb[300];

		/* a fabric key in a file without fabric kinds: as unknown as a kind key */
		if ((ck >= 0 && ck != CK_FABRIC && ck != CK_FABRIC_SM && ck != CK_ROUTING &&
		     ck != CK_SM_CONFIG && ck != CK_QOS_POLICY && ck != CK_SM_PARTITIONS) || d->used)
			continue;
		for (int j = 0; j < CK_COUNT; j++)
			hint_try(&h, rq_common_keys[j].name);
		for (size_t j = 0; j < fs->nkinds; j++)
			for (const struct key_def *k = fs->kinds[j]->keys; k && k->name; k++)
				hint_try(&h, k->name);
		lerr(ld, NPOS(d->knode), "defaults: unknown key \"%s\" (not a common key, nor a "
		     "key of any kind this file uses)%s", d->key, hint_text(&h, hb, sizeof(hb)));
	}
}

static void fs_release(struct file_state *fs)
{
	for (size_t i = 0; i < fs->ncases; i++)
		case_free(fs->cases[i]);
	free(fs->cases);
	free(fs->defs.v);
	free(fs->names);
	strmap_release(&fs->byname);
	free(fs->kinds);
}

static void load_file_root(struct ld *ld, struct file_state *fs, yaml_node_t *root)
{
	struct ents top = { 0 };
	struct ent *d, *cs;

	if (root->type != YAML_MAPPING_NODE) {
		lerr(ld, NPOS(root), "expected a mapping with \"cases:\" (and optionally "
		     "\"defaults:\") at the top of the file, got %s", what_node(root));
		return;
	}
	collect_mapping(ld, root, &top, 0);
	for (size_t i = 0; i < top.n; i++) {
		struct ent *x = &top.v[i];
		/* x-*: free for anchors (&base) that cases merge, as docker-compose does */
		if (str_starts(x->key, "x-"))
			continue;
		if (strcmp(x->key, "defaults") && strcmp(x->key, "cases")) {
			struct hint h = { .word = x->key };
			char hb[300];
			hint_try(&h, "defaults");
			hint_try(&h, "cases");
			lerr(ld, NPOS(x->knode), "unknown top-level key \"%s\" (expected defaults, "
			     "cases, or x-NAME for anchors)%s", x->key, hint_text(&h, hb, sizeof(hb)));
		}
	}
	d = ents_find(&top, "defaults");
	if (d) {
		if (d->v->type == YAML_MAPPING_NODE) {
			collect_mapping(ld, d->v, &fs->defs, 0);
			check_defaults(ld, fs);
		} else if (!is_null(d->v)) {
			lerr(ld, NPOS(d->v), "defaults: expected a mapping of keys, got %s",
			     what_node(d->v));
		}
	}
	cs = ents_find(&top, "cases");
	if (!cs) {
		lerr(ld, NPOS(root), "missing \"cases:\" (a list of cases)");
	} else if (cs->v->type != YAML_SEQUENCE_NODE) {
		lerr(ld, NPOS(cs->v), "cases: expected a list of cases, got %s", what_node(cs->v));
	} else {
		for (yaml_node_item_t *it = cs->v->data.sequence.items.start;
		     it < cs->v->data.sequence.items.top; it++) {
			yaml_node_t *cn = node_at(ld->doc, *it);
			if (cn)
				load_case(ld, fs, cn);
		}
	}
	check_defaults_used(ld, fs);
	free(top.v);
}

/* Hand what a load produced to the suite: all of the file's cases, or none. */
static int load_end(struct ld *ld, struct file_state *fs, struct rq_suite *suite)
{
	if (ld->nhidden)
		diag_add(ld->diags, ld->file, 0, 0,
			 xasprintf("%d more errors not shown", ld->nhidden));
	if (!ld->nerr && fs->ncases) {
		suite->cases = xrealloc(suite->cases,
					(suite->ncases + fs->ncases) * sizeof(*suite->cases));
		memcpy(suite->cases + suite->ncases, fs->cases, fs->ncases * sizeof(*fs->cases));
		suite->ncases += fs->ncases;
		fs->ncases = 0;
	}
	fs_release(fs);
	return ld->nerr + ld->nhidden;
}

static int load_text(const char *name, const char *text, size_t len,
		     struct rq_suite *suite, struct rq_diags *diags)
{
	struct ld ld = { .file = name, .diags = diags, .diag_start = diags->n };
	struct file_state fs = { 0 };
	yaml_parser_t parser;
	yaml_document_t doc, doc2;
	yaml_node_t *root;
	int r;

	if (!yaml_parser_initialize(&parser)) {
		lerr(&ld, 0, 0, "out of memory while parsing YAML");
		return ld.nerr;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rq_yaml_error(&ld, &parser, text, len);
		yaml_parser_delete(&parser);
		return ld.nerr;
	}
	ld.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		lerr(&ld, 0, 0, "empty file: expected a mapping with \"cases:\"");
		goto done;
	}
	/* One document per file: a second one is most likely a pasting accident. */
	if (!yaml_parser_load(&parser, &doc2)) {
		rq_yaml_error(&ld, &parser, text, len);
	} else {
		yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
		if (r2)
			lerr(&ld, (unsigned)doc2.start_mark.line + 1,
			     (unsigned)doc2.start_mark.column + 1,
			     "a second YAML document: a case file holds one (\"cases:\" lists them all)");
		yaml_document_delete(&doc2);
	}
	load_file_root(&ld, &fs, root);
done:
	r = load_end(&ld, &fs, suite);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int load_case_doc(const char *name, yaml_document_t *doc, struct rq_suite *suite,
		  struct rq_diags *diags)
{
	struct ld ld = { .file = name, .diags = diags, .diag_start = diags->n, .doc = doc };
	struct file_state fs = { 0 };
	yaml_node_t *root = yaml_document_get_root_node(doc);

	if (root)
		load_case(&ld, &fs, root);
	else
		lerr(&ld, 0, 0, "empty case");
	return load_end(&ld, &fs, suite);
}

int rq_load_buffer(const char *name, const char *text, size_t len,
		   struct rq_suite *suite, struct rq_diags *diags)
{
	return load_text(name, text, len, suite, diags);
}

int rq_load_file(const char *path, struct rq_suite *suite, struct rq_diags *diags)
{
	struct sb sb = SB_INIT;
	int r = read_file(path, &sb, 0);

	if (r) {
		/* Never a silent cut: a file cut at the limit lost its last cases. */
		diag_add(diags, path, 0, 0, r == -EFBIG ?
			 xstrdup("larger than 16 MiB, the most a case file may hold") :
			 xasprintf("cannot read: %s", strerror(-r)));
		sb_release(&sb);
		return 1;
	}
	r = rq_load_buffer(path, sb.buf, sb.len, suite, diags);
	sb_release(&sb);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.yaml / *.yml under dir, recursively, skipping dot-names. */
static void collect_dir(const char *dir, char ***files, size_t *n, struct rq_diags *diags,
			int *nerr, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		diag_add(diags, dir, 0, 0, xasprintf("cannot open directory: %s", strerror(errno)));
		(*nerr)++;
		return;
	}
	while ((de = readdir(d))) {
		char *p;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (stat(p, &st) != 0) {
			free(p);
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth < 32) {
			collect_dir(p, files, n, diags, nerr, depth + 1);
			free(p);
		} else if (S_ISREG(st.st_mode) &&
			   (str_ends(de->d_name, ".yaml") || str_ends(de->d_name, ".yml"))) {
			*files = xrealloc(*files, (*n + 1) * sizeof(**files));
			(*files)[(*n)++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
}

int rq_load_paths(char *const *paths, size_t npaths, struct rq_suite *suite,
		  struct rq_diags *diags)
{
	int nerr = 0;

	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		char **files = NULL;
		size_t n = 0;

		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			size_t len = strlen(paths[i]);
			char *dir = xstrdup(paths[i]);
			while (len > 1 && dir[len - 1] == '/')
				dir[--len] = 0;
			collect_dir(dir, &files, &n, diags, &nerr, 0);
			free(dir);
			/* Sorted, so the order of a run does not depend on the filesystem. */
			qsort(files, n, sizeof(*files), cmp_str);
			for (size_t j = 0; j < n; j++) {
				nerr += rq_load_file(files[j], suite, diags);
				free(files[j]);
			}
			free(files);
		} else {
			nerr += rq_load_file(paths[i], suite, diags);
		}
	}
	return nerr;
}

int rq_suite_check_dups(struct rq_suite *suite, struct rq_diags *diags)
{
	struct strmap seen = { 0 };
	int n = 0;

	/* Hashed: a scan per case took 10 s for 40k cases. */
	for (size_t i = 0; i < suite->ncases; i++) {
		const struct rq_case *c = suite->cases[i], *f;
		bool added;
		size_t *first = strmap_put(&seen, c->name, i, &added);

		if (added)
			continue;
		f = suite->cases[*first];
		diag_add(diags, c->file, c->pos.line, c->pos.col,
			 xasprintf("duplicate case name \"%s\" (first at %s:%u:%u)",
				   c->name, f->file, f->pos.line, f->pos.col));
		n++;
	}
	strmap_release(&seen);
	return n;
}

void rq_suite_release(struct rq_suite *suite)
{
	for (size_t i = 0; i < suite->ncases; i++)
		case_free(suite->cases[i]);
	free(suite->cases);
	suite->cases = NULL;
	suite->ncases = 0;
}
