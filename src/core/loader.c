/* SPDX-License-Identifier: MIT */
/*
 * The case-file loader.  A file is one YAML document: a mapping with an
 * optional `defaults:` mapping and a `cases:` sequence of case mappings.
 * Every key of a case is a row of a key table (rq_common_keys, then the
 * kind's own) and one generic converter turns YAML scalars into typed
 * values with range checks (fio's parse.c does the same for job files).
 *
 * Errors are collected, never fatal: a user fixing a file wants every
 * mistake in one run, each as file:line:column with what was expected.
 * Cases of a file with any error are dropped as a whole, so a run never
 * starts on half a file.
 *
 * The loader also keeps, for every case, its effective keys as JSON text
 * (struct rq_raw): the agent in a VM or on a peer gets that text and loads
 * the same case with the same code (rq_load_case_text).
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <jansson.h>
#include <yaml.h>
#include "core/case.h"
#include "core/kind.h"
#include "core/target.h"
#include "core/util.h"

#define MAX_ERRORS 100		/* per file; the rest are counted, not listed */

/* The common keys land here first, then move into struct rq_case. */
struct common {
	char *name;
	char *kind;
	char *summary;
	struct rq_list tags;
	struct rq_list targets;
	struct rq_list needs;
	int64_t timeout_ms;
	char *devices;
	long long port;
	long long gid_index;
};

enum {
	CK_NAME, CK_KIND, CK_SUMMARY, CK_TAGS, CK_TARGETS, CK_NEEDS, CK_TIMEOUT,
	CK_DEVICES, CK_PORT, CK_GID_INDEX, CK_COUNT
};

#define CO(f) offsetof(struct common, f)
const struct key_def rq_common_keys[] = {
	[CK_NAME] = { .name = "name", .type = KEY_STR, .offset = CO(name), .required = true,
		.help = "unique case name, [A-Za-z0-9_.-]+ (suite.case by convention)" },
	[CK_KIND] = { .name = "kind", .type = KEY_STR, .offset = CO(kind), .required = true,
		.help = "what the case does: one of the kinds (rdmaqual help)" },
	[CK_SUMMARY] = { .name = "summary", .type = KEY_STR, .offset = CO(summary),
		.help = "one line shown in reports" },
	[CK_TAGS] = { .name = "tags", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(tags),
		.help = "labels for --tag filters; merged with defaults' tags" },
	[CK_TARGETS] = { .name = "targets", .type = KEY_LIST, .elem = KEY_STR,
		.offset = CO(targets),
		.help = "targets the case may run on (hca, rxe-vm, rxe-host, ibsim, local, sysroot); default: the kind's" },
	[CK_NEEDS] = { .name = "needs", .type = KEY_LIST, .elem = KEY_STR, .offset = CO(needs),
		.help = "requirements checked on the target: root, device, module:NAME, cmd:NAME, link_layer:IB or link_layer:Ethernet, memlock:SIZE, file:PATH; merged with defaults' needs" },
	[CK_TIMEOUT] = { .name = "timeout", .type = KEY_DURATION, .offset = CO(timeout_ms),
		.def = "60s", .min = 1, .max = 24LL * 3600 * 1000,
		.help = "deadline for the whole case (scaled by --timeout-mul)" },
	[CK_DEVICES] = { .name = "devices", .type = KEY_STR, .offset = CO(devices), .def = "all",
		.help = "all (every device and port, a row each), first-active, or a list of device names" },
	[CK_PORT] = { .name = "port", .type = KEY_INT, .offset = CO(port), .def = "0",
		.min = 0, .max = 255, .help = "port number; 0: every port (or the first active one)" },
	[CK_GID_INDEX] = { .name = "gid_index", .type = KEY_INT, .offset = CO(gid_index),
		.def = "-1", .min = -1, .max = 255,
		.help = "GID table index; -1: resolve (RoCE v2 IPv4-mapped GID)" },
	KEY_END,
};
#undef CO

/* Target names a case may list; fixed so it does not depend on what is compiled in. */
static const char *const known_targets[] = {
	"hca", "rxe-vm", "rxe-host", "ibsim", "local", "sysroot", NULL
};

static const char *const need_words[] = {
	"root", "device", "module", "cmd", "link_layer", "memlock", "file", NULL
};

struct ld {
	const char *file;
	yaml_document_t *doc;
	struct rq_diags *diags;
	size_t diag_start;	/* this file's first diag (for de-duplication) */
	int nerr;		/* errors listed */
	int nhidden;		/* errors past MAX_ERRORS */
	bool quiet;		/* converting a built-in default: count, don't list */
	int nquiet;
	int nall;		/* every error seen, repeats included (per-case checks) */
	int merge_budget;	/* pairs merge keys may still visit */
};

/* ---- diagnostics ------------------------------------------------------- */

static void diag_add(struct rq_diags *d, const char *file, unsigned line, unsigned col,
		     char *msg)
{
	d->v = xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	d->v[d->n++] = (struct rq_diag){
		.file = xstrdup(file), .line = line, .col = col, .msg = msg,
	};
}

static void __attribute__((format(printf, 4, 5)))
lerr(struct ld *ld, unsigned line, unsigned col, const char *fmt, ...)
{
	struct sb sb = SB_INIT;
	va_list ap;

	if (ld->quiet) {
		ld->nquiet++;
		return;
	}
	ld->nall++;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	/*
	 * A bad value in defaults: is seen once per case that inherits it;
	 * say it once.
	 */
	for (size_t i = ld->diag_start; i < ld->diags->n; i++) {
		const struct rq_diag *o = &ld->diags->v[i];
		if (o->line == line && o->col == col && !strcmp(o->msg, sb.buf)) {
			sb_release(&sb);
			return;
		}
	}
	if (ld->nerr >= MAX_ERRORS) {
		ld->nhidden++;
		sb_release(&sb);
		return;
	}
	diag_add(ld->diags, ld->file, line, col, sb_detach(&sb));
	ld->nerr++;
}

#define NPOS(n) (unsigned)(n)->start_mark.line + 1, (unsigned)(n)->start_mark.column + 1

void rq_diags_release(struct rq_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

void rq_diags_print(const struct rq_diags *d, FILE *fp)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct rq_diag *g = &d->v[i];
		if (g->line)
			fprintf(fp, "%s:%u:%u: error: %s\n", g->file, g->line, g->col, g->msg);
		else
			fprintf(fp, "%s: error: %s\n", g->file, g->msg);
	}
}

/* ---- "did you mean" ---------------------------------------------------- */

struct hint {
	const char *word;
	const char *best;
	unsigned d;
};

static void hint_try(struct hint *h, const char *cand)
{
	/* "RC" for "rc" is the likeliest slip of all: rank it first */
	unsigned d = strcasecmp(h->word, cand) ? edit_distance(h->word, cand) : 0;

	if (!h->best || d < h->d) {
		h->best = cand;
		h->d = d;
	}
}

/* "; did you mean "x"?" when the best candidate is close enough, else "". */
static const char *hint_text(const struct hint *h, char *buf, size_t size)
{
	size_t len = strlen(h->word);
	unsigned lim = len <= 3 ? 1 : len <= 6 ? 2 : 3;

	if (!h->best || h->d > lim) {
		buf[0] = 0;
		return buf;
	}
	snprintf(buf, size, "; did you mean \"%s\"?", h->best);
	return buf;
}

/* ---- YAML nodes ---------------------------------------------------------- */

static yaml_node_t *node_at(yaml_document_t *doc, int idx)
{
	return yaml_document_get_node(doc, idx);
}

static const char *stext(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static bool is_null(const yaml_node_t *n)
{
	const char *s;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	s = stext(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL");
}

static const char *what_node(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SCALAR_NODE:
		return is_null(n) ? "an empty value" : "a scalar";
	default:
		return "nothing";
	}
}

/* Scalars with NUL bytes ("\0" escapes) cannot be C strings: refuse them. */
static bool scalar_ok(struct ld *ld, const yaml_node_t *n, const char *key)
{
	if (memchr(n->data.scalar.value, 0, n->data.scalar.length)) {
		lerr(ld, NPOS(n), "%s: value contains a NUL byte", key);
		return false;
	}
	return true;
}

/* ---- key/value entries of one mapping ------------------------------------ */

struct ent {
	const char *key;
	yaml_node_t *knode;
	yaml_node_t *v;
	yaml_node_t *pre;	/* defaults' part of a merged list (tags, needs) */
	bool from_def;
	bool used;
};

struct ents {
	struct ent *v;
	size_t n;
};

static void ents_add(struct ents *e, const struct ent *x)
{
	e->v = xrealloc(e->v, (e->n + 1) * sizeof(*e->v));
	e->v[e->n++] = *x;
}

static struct ent *ents_find(const struct ents *e, const char *key)
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

/* ---- the generic converter ----------------------------------------------- */

const char *rq_key_type_name(enum key_type t)
{
	switch (t) {
	case KEY_STR: return "string";
	case KEY_INT: return "int";
	case KEY_DOUBLE: return "number";
	case KEY_BOOL: return "bool";
	case KEY_ENUM: return "enum";
	case KEY_DURATION: return "duration";
	case KEY_SIZE: return "size";
	case KEY_LIST: return "list";
	}
	return "?";
}

static void add_choices(struct sb *sb, const char *const *ch, const char *sep)
{
	for (size_t i = 0; ch && ch[i]; i++)
		sb_addf(sb, "%s%s", i ? sep : "", ch[i]);
}

/* What a value of type t looks like, for "expected ..." messages. */
static void expected_text(const struct key_def *k, enum key_type t, struct sb *sb)
{
	switch (t) {
	case KEY_STR:
		sb_adds(sb, "a string");
		break;
	case KEY_INT:
		sb_adds(sb, "an integer");
		break;
	case KEY_DOUBLE:
		sb_adds(sb, "a number");
		break;
	case KEY_BOOL:
		sb_adds(sb, "true or false (or yes/no, on/off)");
		break;
	case KEY_ENUM:
		sb_adds(sb, "one of ");
		add_choices(sb, k->choices, ", ");
		break;
	case KEY_DURATION:
		sb_adds(sb, "a duration with unit (ms, s, m, h)");
		break;
	case KEY_SIZE:
		sb_adds(sb, "a size in bytes, optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
		break;
	case KEY_LIST:
		sb_adds(sb, "a list ([a, b] or one \"- item\" per line)");
		break;
	}
}

static bool has_range(const struct key_def *k)
{
	return k->min || k->max;
}

static void range_text(const struct key_def *k, enum key_type t, struct sb *sb)
{
	char a[32], b[32];

	if (t == KEY_DURATION) {
		fmt_duration(k->min, a, sizeof(a));
		fmt_duration(k->max, b, sizeof(b));
	} else if (t == KEY_SIZE) {
		fmt_size(k->min > 0 ? (uint64_t)k->min : 0, a, sizeof(a));
		fmt_size(k->max > 0 ? (uint64_t)k->max : 0, b, sizeof(b));
	} else if (t == KEY_DOUBLE) {
		snprintf(a, sizeof(a), "%g", k->dmin);
		snprintf(b, sizeof(b), "%g", k->dmax);
	} else {
		snprintf(a, sizeof(a), "%lld", k->min);
		snprintf(b, sizeof(b), "%lld", k->max);
	}
	sb_addf(sb, "%s..%s", a, b);
}

union val {
	char *s;
	long long i;
	double d;
	bool b;
	int e;
	int64_t ms;
	uint64_t sz;
};

/*
 * Convert one scalar node to type t (a key's type, or a list's element
 * type).  Errors name the key and what was expected.
 */
static bool conv_scalar(struct ld *ld, const struct key_def *k, enum key_type t,
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

static void list_release(struct rq_list *l)
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

/* Element check for a list key, beyond its type (common keys). */
typedef bool (*elem_check_fn)(struct ld *ld, const yaml_node_t *n);

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

/*
 * Convert a value into dst at k->offset.  pre (may be NULL) is a list from
 * defaults: that is merged in front of the case's own.
 */
static bool conv_key(struct ld *ld, yaml_document_t *doc, const struct key_def *k,
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

/* A key's built-in default (key_def.def), written as YAML, converted like a value. */
static bool apply_default(struct ld *ld, const struct key_def *k, void *dst)
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

/* ---- common key checks --------------------------------------------------- */

static bool name_chars_ok(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return true;
}

static bool check_name(struct ld *ld, const yaml_node_t *n)
{
	if (name_chars_ok(stext(n), "_.-"))
		return true;
	lerr(ld, NPOS(n), "name: \"%s\" is not a valid case name (expected [A-Za-z0-9_.-]+)",
	     stext(n));
	return false;
}

static bool target_known(const char *s)
{
	for (int i = 0; known_targets[i]; i++)
		if (!strcmp(known_targets[i], s))
			return true;
	if (str_starts(s, "sysroot:") && s[8])
		return true;
	return rq_target_ops_find(s) != NULL;
}

static bool check_target(struct ld *ld, const yaml_node_t *n)
{
	const char *s = stext(n);
	struct hint h = { .word = s };
	char hb[300];

	if (target_known(s))
		return true;
	if (!strcmp(s, "sysroot:")) {
		lerr(ld, NPOS(n), "targets: \"sysroot:\" needs a directory (sysroot:DIR)");
		return false;
	}
	for (int i = 0; known_targets[i]; i++)
		hint_try(&h, known_targets[i]);
	lerr(ld, NPOS(n), "targets: unknown target \"%s\" (expected hca, rxe-vm, rxe-host, "
	     "ibsim, local or sysroot:DIR)%s", s, hint_text(&h, hb, sizeof(hb)));
	return false;
}

/* Parse "root", "module:rdma_rxe", "memlock:64MiB"...; 0 or -EINVAL with err. */
static int need_parse(const char *s, struct rq_need *nd, char *err, size_t errsz)
{
	const char *colon = strchr(s, ':');
	size_t wl = colon ? (size_t)(colon - s) : strlen(s);
	const char *arg = colon ? colon + 1 : NULL;

	memset(nd, 0, sizeof(*nd));
#define WORD(w) (wl == strlen(w) && !strncmp(s, w, wl))
	if (WORD("root") || WORD("device")) {
		if (arg) {
			snprintf(err, errsz, "need \"%.*s\" takes no argument", (int)wl, s);
			return -EINVAL;
		}
		nd->type = WORD("root") ? NEED_ROOT : NEED_DEVICE;
		return 0;
	}
	if (!WORD("module") && !WORD("cmd") && !WORD("link_layer") && !WORD("memlock") &&
	    !WORD("file")) {
		char word[64], hb[300];
		struct hint h = { .word = word };
		snprintf(word, sizeof(word), "%.*s", (int)(wl < 63 ? wl : 63), s);
		for (int i = 0; need_words[i]; i++)
			hint_try(&h, need_words[i]);
		snprintf(err, errsz, "unknown need \"%s\" (expected root, device, module:NAME, "
			 "cmd:NAME, link_layer:IB|Ethernet, memlock:SIZE or file:PATH)%s",
			 s, hint_text(&h, hb, sizeof(hb)));
		return -EINVAL;
	}
	if (!arg || !*arg) {
		snprintf(err, errsz, "need \"%.*s\" takes an argument (%.*s:...)", (int)wl, s,
			 (int)wl, s);
		return -EINVAL;
	}
	if (WORD("module")) {
		if (!name_chars_ok(arg, "_-")) {
			snprintf(err, errsz, "module:%s: not a module name", arg);
			return -EINVAL;
		}
		nd->type = NEED_MODULE;
		nd->arg = xstrdup(arg);
		/* /sys/module spells dashes as underscores */
		for (char *p = nd->arg; *p; p++)
			if (*p == '-')
				*p = '_';
	} else if (WORD("cmd")) {
		if (!name_chars_ok(arg, "_.+-")) {
			snprintf(err, errsz, "cmd:%s: not a command name (no paths, looked up in PATH)",
				 arg);
			return -EINVAL;
		}
		nd->type = NEED_CMD;
		nd->arg = xstrdup(arg);
	} else if (WORD("link_layer")) {
		const char *ll;
		if (!strcasecmp(arg, "IB") || !strcasecmp(arg, "InfiniBand"))
			ll = "InfiniBand";
		else if (!strcasecmp(arg, "Ethernet") || !strcasecmp(arg, "eth") ||
			 !strcasecmp(arg, "RoCE"))
			ll = "Ethernet";
		else {
			snprintf(err, errsz, "link_layer:%s: expected IB, InfiniBand or Ethernet", arg);
			return -EINVAL;
		}
		nd->type = NEED_LINK_LAYER;
		nd->arg = xstrdup(ll);
	} else if (WORD("memlock")) {
		uint64_t sz;
		if (!strcmp(arg, "unlimited")) {
			sz = UINT64_MAX;
		} else if (parse_size(arg, &sz)) {
			snprintf(err, errsz, "memlock:%s: expected a size (64MiB) or unlimited", arg);
			return -EINVAL;
		}
		nd->type = NEED_MEMLOCK;
		nd->arg = xstrdup(arg);
		nd->size = sz;
	} else {
		if (arg[0] != '/') {
			snprintf(err, errsz, "file:%s: expected an absolute path", arg);
			return -EINVAL;
		}
		nd->type = NEED_FILE;
		nd->arg = xstrdup(arg);
	}
#undef WORD
	return 0;
}

static bool check_need(struct ld *ld, const yaml_node_t *n)
{
	struct rq_need nd;
	char err[512];

	if (need_parse(stext(n), &nd, err, sizeof(err))) {
		lerr(ld, NPOS(n), "needs: %s", err);
		return false;
	}
	free(nd.arg);
	return true;
}

/* devices: all | first-active | name[,name...] (a list of names is accepted too). */
static bool check_device_list(struct ld *ld, const yaml_node_t *n, const char *s)
{
	char *dup = xstrdup(s), *save = NULL;
	bool ok = true, any = false;

	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		t = strtrim(t);
		any = true;
		if (!name_chars_ok(t, "_.:-")) {
			lerr(ld, NPOS(n), "devices: \"%s\" is not a device name", t);
			ok = false;
		}
	}
	if (!any) {
		lerr(ld, NPOS(n), "devices: expected all, first-active or device names");
		ok = false;
	}
	free(dup);
	return ok;
}

static bool conv_devices(struct ld *ld, yaml_document_t *doc, const yaml_node_t *n,
			 struct common *cc)
{
	const struct key_def *k = &rq_common_keys[CK_DEVICES];
	struct sb sb = SB_INIT;
	bool ok = true;

	if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			yaml_node_t *e = node_at(doc, *it);
			union val v;
			if (!e)
				continue;
			if (!conv_scalar(ld, k, KEY_STR, e, &v)) {
				ok = false;
				continue;
			}
			if (strchr(v.s, ',') || !strcmp(v.s, "all") || !strcmp(v.s, "first-active") ||
			    !check_device_list(ld, e, v.s)) {
				if (strchr(v.s, ',') || !strcmp(v.s, "all") ||
				    !strcmp(v.s, "first-active"))
					lerr(ld, NPOS(e), "devices: \"%s\" in a list: expected a device name",
					     v.s);
				ok = false;
			} else {
				sb_addf(&sb, "%s%s", sb.len ? "," : "", strtrim(v.s));
			}
			free(v.s);
		}
		if (ok && !sb.len) {
			lerr(ld, NPOS(n), "devices: expected all, first-active or device names, got an empty list");
			ok = false;
		}
	} else {
		union val v;
		if (!conv_scalar(ld, k, KEY_STR, n, &v))
			return false;
		if (!strcmp(v.s, "all") || !strcmp(v.s, "first-active")) {
			sb_adds(&sb, v.s);
		} else if (check_device_list(ld, n, v.s)) {
			char *save = NULL;
			for (char *t = strtok_r(v.s, ",", &save); t; t = strtok_r(NULL, ",", &save))
				sb_addf(&sb, "%s%s", sb.len ? "," : "", strtrim(t));
		} else {
			ok = false;
		}
		free(v.s);
	}
	if (!ok) {
		sb_release(&sb);
		return false;
	}
	free(cc->devices);
	cc->devices = sb_detach(&sb);
	return true;
}

static bool conv_common(struct ld *ld, int ck, const struct ent *e, struct common *cc)
{
	const struct key_def *k = &rq_common_keys[ck];
	elem_check_fn check = NULL;
	bool dedup = false;

	switch (ck) {
	case CK_DEVICES:
		return conv_devices(ld, ld->doc, e->v, cc);
	case CK_NAME:
		check = check_name;
		break;
	case CK_TARGETS:
		check = check_target;
		break;
	case CK_NEEDS:
		check = check_need;
		dedup = true;
		break;
	case CK_TAGS:
		dedup = true;
		break;
	}
	return conv_key(ld, ld->doc, k, e->pre, e->v, cc, check, dedup);
}

static int common_index(const char *key)
{
	for (int i = 0; i < CK_COUNT; i++)
		if (!strcmp(rq_common_keys[i].name, key))
			return i;
	return -1;
}

static const struct key_def *kind_key(const struct rq_kind *kind, const char *key)
{
	for (const struct key_def *k = kind ? kind->keys : NULL; k && k->name; k++)
		if (!strcmp(k->name, key))
			return k;
	return NULL;
}

/* ---- raw JSON ------------------------------------------------------------ */

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

static char *raw_json(yaml_document_t *doc, const struct ent *e, bool dedup)
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

static void raw_add(struct rq_case *c, const char *key, char *json)
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
	if (c->kind && c->cfg)
		rq_cfg_release(c->kind->keys, c->cfg);
	free(c->cfg);
	free(c->file);
	for (size_t i = 0; i < c->nraw; i++) {
		free(c->raw[i].key);
		free(c->raw[i].json);
	}
	free(c->raw);
	free(c);
}

static void common_release(struct common *cc)
{
	rq_cfg_release(rq_common_keys, cc);
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
	size_t nnames;
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
		if (ck < 0 && !kind_key(kind, d->key))
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

		if (ck >= 0) {
			seen_common[ck] = true;
			conv_common(ld, ck, x, &cc);
		} else if ((k = kind_key(kind, x->key))) {
			seen_kind[k - kind->keys] = true;
			conv_key(ld, ld->doc, k, NULL, x->v, cfg, NULL, false);
		} else if (kind) {
			struct hint h = { .word = x->key };
			char hb[300];
			for (int j = 0; j < CK_COUNT; j++)
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
		for (size_t j = 0; j < fs->nnames; j++) {
			if (!strcmp(fs->names[j].name, cc.name)) {
				lerr(ld, NPOS(ne->v), "duplicate case name \"%s\" (first at line %u)",
				     cc.name, fs->names[j].line);
				break;
			}
		}
		fs->names = xrealloc(fs->names, (fs->nnames + 1) * sizeof(*fs->names));
		fs->names[fs->nnames].name = stext(ne->v);
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
		if (!need_parse(cc.needs.str[j], &c->needs[c->nneeds], err, sizeof(err)))
			c->nneeds++;
	}
	list_release(&cc.needs);
	free(cc.kind);
	c->timeout_ms = cc.timeout_ms;
	c->devices = cc.devices;
	c->port = cc.port;
	c->gid_index = cc.gid_index;
	c->cfg = cfg;
	c->pos = (struct rq_pos){ .line = (unsigned)cn->start_mark.line + 1,
				  .col = (unsigned)cn->start_mark.column + 1 };
	c->file = xstrdup(ld->file);
	c->pos.file = c->file;

	/* Raw keys in table order, so the JSON of a case is canonical. */
	for (int j = 0; j < CK_COUNT; j++) {
		struct ent *x = ents_find(&e, rq_common_keys[j].name);
		if (x)
			raw_add(c, x->key, raw_json(ld->doc, x, j == CK_TAGS || j == CK_NEEDS));
	}
	for (size_t j = 0; j < nkeys; j++) {
		struct ent *x = ents_find(&e, kind->keys[j].name);
		if (x)
			raw_add(c, x->key, raw_json(ld->doc, x, false));
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
		char hb[300];

		if (common_index(d->key) >= 0 || d->used)
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

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_pos(const char *text, size_t len, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static void yaml_error(struct ld *ld, const yaml_parser_t *p, const char *text, size_t len)
{
	unsigned line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		lerr(ld, 0, 0, "out of memory while parsing YAML");
		break;
	case YAML_READER_ERROR:
		offset_pos(text, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			lerr(ld, line, col, "invalid YAML input: %s (byte 0x%02x)",
			     p->problem ? p->problem : "unreadable", (unsigned)p->problem_value & 0xff);
		else
			lerr(ld, line, col, "invalid YAML input: %s",
			     p->problem ? p->problem : "unreadable");
		break;
	default:
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
		if (p->context)
			lerr(ld, line, col, "YAML syntax error: %s (%s at line %u column %u)",
			     p->problem ? p->problem : "unknown problem", p->context,
			     (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
		else
			lerr(ld, line, col, "YAML syntax error: %s",
			     p->problem ? p->problem : "unknown problem");
		break;
	}
}

static int load_text(const char *name, const char *text, size_t len, bool one_case,
		     struct rq_suite *suite, struct rq_diags *diags)
{
	struct ld ld = { .file = name, .diags = diags, .diag_start = diags->n };
	struct file_state fs = { 0 };
	yaml_parser_t parser;
	yaml_document_t doc, doc2;
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser)) {
		lerr(&ld, 0, 0, "out of memory while parsing YAML");
		return ld.nerr;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_error(&ld, &parser, text, len);
		yaml_parser_delete(&parser);
		return ld.nerr;
	}
	ld.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		lerr(&ld, 0, 0, one_case ? "empty case text" :
		     "empty file: expected a mapping with \"cases:\"");
		goto done;
	}
	/* One document per file: a second one is most likely a pasting accident. */
	if (!yaml_parser_load(&parser, &doc2)) {
		yaml_error(&ld, &parser, text, len);
	} else {
		yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
		if (r2)
			lerr(&ld, (unsigned)doc2.start_mark.line + 1,
			     (unsigned)doc2.start_mark.column + 1,
			     "a second YAML document: a case file holds one (\"cases:\" lists them all)");
		yaml_document_delete(&doc2);
	}
	if (one_case)
		load_case(&ld, &fs, root);
	else
		load_file_root(&ld, &fs, root);
done:
	if (ld.nhidden)
		diag_add(diags, name, 0, 0, xasprintf("%d more errors not shown", ld.nhidden));
	if (!ld.nerr && fs.ncases) {
		suite->cases = xrealloc(suite->cases,
					(suite->ncases + fs.ncases) * sizeof(*suite->cases));
		memcpy(suite->cases + suite->ncases, fs.cases, fs.ncases * sizeof(*fs.cases));
		suite->ncases += fs.ncases;
		fs.ncases = 0;
	}
	fs_release(&fs);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return ld.nerr + ld.nhidden;
}

int rq_load_buffer(const char *name, const char *text, size_t len,
		   struct rq_suite *suite, struct rq_diags *diags)
{
	return load_text(name, text, len, false, suite, diags);
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

int rq_load_file(const char *path, struct rq_suite *suite, struct rq_diags *diags)
{
	struct sb sb = SB_INIT;
	int r = read_file(path, &sb, 0);

	if (r) {
		diag_add(diags, path, 0, 0, xasprintf("cannot read: %s", strerror(-r)));
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
	int n = 0;

	/* Quadratic, but suites are hundreds of cases, not millions. */
	for (size_t i = 1; i < suite->ncases; i++) {
		const struct rq_case *c = suite->cases[i];
		for (size_t j = 0; j < i; j++) {
			const struct rq_case *f = suite->cases[j];
			if (strcmp(c->name, f->name))
				continue;
			diag_add(diags, c->file, c->pos.line, c->pos.col,
				 xasprintf("duplicate case name \"%s\" (first at %s:%u:%u)",
					   c->name, f->file, f->pos.line, f->pos.col));
			n++;
			break;
		}
	}
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

/* ---- key table sanity --------------------------------------------------- */

static size_t key_size(enum key_type t)
{
	switch (t) {
	case KEY_STR: return sizeof(char *);
	case KEY_INT: return sizeof(long long);
	case KEY_DOUBLE: return sizeof(double);
	case KEY_BOOL: return sizeof(bool);
	case KEY_ENUM: return sizeof(int);
	case KEY_DURATION: return sizeof(int64_t);
	case KEY_SIZE: return sizeof(uint64_t);
	case KEY_LIST: return sizeof(struct rq_list);
	}
	return 0;
}

int rq_kind_check_keys(const struct rq_kind *kind, struct sb *out)
{
	int n = 0;
	struct ld ld = { .file = kind->name };
	struct rq_diags scratch = { 0 };

	ld.diags = &scratch;
#define BAD(...) do { sb_addf(out, "kind %s: ", kind->name); sb_addf(out, __VA_ARGS__); \
		      sb_addc(out, '\n'); n++; } while (0)
	if (!kind->name || !name_chars_ok(kind->name, "_-"))
		BAD("kind name is not [A-Za-z0-9_-]+");
	for (const struct key_def *k = kind->keys; k && k->name; k++) {
		enum key_type t = k->type == KEY_LIST ? k->elem : k->type;

		if (!name_chars_ok(k->name, "_"))
			BAD("key \"%s\": name is not [A-Za-z0-9_]+", k->name);
		if (common_index(k->name) >= 0 || !strcmp(k->name, "<<"))
			BAD("key \"%s\": shadows a common key", k->name);
		for (const struct key_def *o = kind->keys; o < k; o++)
			if (!strcmp(o->name, k->name))
				BAD("key \"%s\": listed twice", k->name);
		if (k->offset + key_size(k->type) > kind->cfg_size)
			BAD("key \"%s\": offset %zu is outside cfg_size %zu", k->name, k->offset,
			    kind->cfg_size);
		if (k->type == KEY_LIST && k->elem == KEY_LIST)
			BAD("key \"%s\": a list of lists", k->name);
		if (t == KEY_ENUM && (!k->choices || !k->choices[0]))
			BAD("key \"%s\": an enum without choices", k->name);
		if (k->min > k->max)
			BAD("key \"%s\": min %lld > max %lld", k->name, k->min, k->max);
		if (k->dmin > k->dmax)
			BAD("key \"%s\": dmin > dmax", k->name);
		if (k->required && k->def)
			BAD("key \"%s\": required keys have no default", k->name);
		if (!k->help || !*k->help)
			BAD("key \"%s\": no help text", k->name);
		if (k->def) {
			/* each default in a scratch cfg of its own: the table may overlap */
			struct key_def one[2] = { *k, KEY_END };
			void *cfg = xcalloc(1, k->offset + key_size(k->type));
			if (!apply_default(&ld, k, cfg))
				BAD("key \"%s\": default \"%s\" is not a valid value", k->name,
				    k->def);
			rq_cfg_release(one, cfg);
			free(cfg);
		}
	}
#undef BAD
	rq_diags_release(&scratch);
	return n;
}

/* ---- help text for key tables ------------------------------------------ */

void rq_keys_describe(const struct key_def *k, struct sb *out)
{
	enum key_type t = k->type == KEY_LIST ? k->elem : k->type;

	if (k->type == KEY_LIST)
		sb_addf(out, "list of %s", rq_key_type_name(k->elem));
	else
		sb_adds(out, rq_key_type_name(k->type));
	/* no '|' here: this text lands in markdown table cells */
	if (t == KEY_ENUM) {
		sb_adds(out, " (");
		add_choices(out, k->choices, ", ");
		sb_adds(out, ")");
	}
	if (t == KEY_DURATION)
		sb_adds(out, " (ms, s, m, h)");
	if (t == KEY_SIZE)
		sb_adds(out, " (bytes; KiB, MiB, GiB, KB, MB, GB)");
	if ((t == KEY_DOUBLE && (k->dmin || k->dmax)) ||
	    ((t == KEY_INT || t == KEY_DURATION || t == KEY_SIZE) && has_range(k))) {
		sb_adds(out, ", ");
		range_text(k, t, out);
	}
	if (k->required)
		sb_adds(out, ", required");
	else if (k->def)
		sb_addf(out, ", default %s", k->def);
}
