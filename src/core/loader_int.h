/* SPDX-License-Identifier: MIT */
/*
 * Private to the case loader (loader.c and the files it is split into:
 * loader_diag.c, keyconv.c, keys.c, common_keys.c, needs_parse.c,
 * case_wire.c).  Nothing outside src/core/ includes this.
 */
#ifndef RQ_LOADER_INT_H
#define RQ_LOADER_INT_H

#include <stdbool.h>
#include <yaml.h>
#include "core/case.h"
#include "core/util.h"

/* One load: the document, where errors go and how many were seen. */
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


/* ---- diagnostics (loader_diag.c) ---------------------------------------- */

void diag_add(struct rq_diags *d, const char *file, unsigned line, unsigned col, char *msg);
/* An error at line:col of ld's file; repeats said once, MAX_ERRORS listed. */
void lerr(struct ld *ld, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A libyaml parse failure, at its position. */
void rq_yaml_error(struct ld *ld, const yaml_parser_t *p, const char *text, size_t len);

#define NPOS(n) (unsigned)(n)->start_mark.line + 1, (unsigned)(n)->start_mark.column + 1
#define NPOS_INIT(n) .line = (unsigned)(n)->start_mark.line + 1, \
		     .col = (unsigned)(n)->start_mark.column + 1

struct hint {
	const char *word;
	const char *best;
	unsigned d;
};

void hint_try(struct hint *h, const char *cand);
/* "; did you mean "x"?" when the best candidate is close enough, else "". */
const char *hint_text(const struct hint *h, char *buf, size_t size);

static inline yaml_node_t *node_at(yaml_document_t *doc, int idx)
{
	return yaml_document_get_node(doc, idx);
}

static inline const char *stext(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

bool is_null(const yaml_node_t *n);
const char *what_node(const yaml_node_t *n);
/* Scalars with NUL bytes ("\0" escapes) cannot be C strings: refuse them. */
bool scalar_ok(struct ld *ld, const yaml_node_t *n, const char *key);

/* ---- key/value entries of one mapping (loader.c) ------------------------- */


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

void ents_add(struct ents *e, const struct ent *x);
struct ent *ents_find(const struct ents *e, const char *key);

/* ---- typed conversion of YAML values (keyconv.c) ------------------------- */

union val {
	char *s;
	long long i;
	double d;
	bool b;
	int e;
	int64_t ms;
	uint64_t sz;
};


/* Element check for a list key, beyond its type (common keys). */
typedef bool (*elem_check_fn)(struct ld *ld, const yaml_node_t *n);

bool conv_scalar(struct ld *ld, const struct key_def *k, enum key_type t,
		 const yaml_node_t *n, union val *out);
/*
 * Convert a value into dst at k->offset.  pre (may be NULL) is a list from
 * defaults: that is merged in front of the case's own.
 */
bool conv_key(struct ld *ld, yaml_document_t *doc, const struct key_def *k,
	      const yaml_node_t *pre, const yaml_node_t *n, void *dst,
	      elem_check_fn check, bool dedup);
/* A key's built-in default (key_def.def), written as YAML, converted like a value. */
bool apply_default(struct ld *ld, const struct key_def *k, void *dst);
void list_release(struct rq_list *l);

/* ---- key-table text (keys.c) --------------------------------------------- */

/* What a value of type t looks like, for "expected ..." messages. */
void expected_text(const struct key_def *k, enum key_type t, struct sb *sb);
bool has_range(const struct key_def *k);
void range_text(const struct key_def *k, enum key_type t, struct sb *sb);

/* ---- the common keys (common_keys.c) ------------------------------------- */

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
	long long vm_cpus;
	uint64_t vm_memory;
	char *pairs;
	char *fabric;
	bool fabric_sm;
	char *routing_engine;
	char *sm_config, *qos_policy, *sm_partitions;
	struct rq_list modules;
	bool fresh_guest;
	bool vm_scratch;
	bool udev;
	struct rq_list judge;
	char *daemon_allowed;
};

enum {
	CK_NAME, CK_KIND, CK_SUMMARY, CK_TAGS, CK_TARGETS, CK_NEEDS, CK_TIMEOUT,
	CK_DEVICES, CK_PORT, CK_GID_INDEX, CK_VM_CPUS, CK_VM_MEMORY, CK_PAIRS, CK_FABRIC,
	CK_FABRIC_SM, CK_ROUTING, CK_MODULES, CK_FRESH_GUEST, CK_SM_CONFIG,
	CK_QOS_POLICY, CK_SM_PARTITIONS, CK_JUDGE, CK_DAEMON_ALLOWED, CK_VM_SCRATCH,
	CK_UDEV, CK_COUNT
};

/*
 * May a case of kind have common key ck?  The fabric keys are for the
 * kinds that need one (needs_fabric); to any other kind they are unknown
 * keys, as they would be if the kinds declared them.
 */
bool common_allowed(int ck, const struct rq_kind *kind);


int common_index(const char *key);
bool conv_common(struct ld *ld, int ck, const struct ent *e, struct common *cc);
void common_release(struct common *cc);
/* [A-Za-z0-9] plus the characters of extra, at least one. */
bool name_chars_ok(const char *s, const char *extra);

/* ---- loading (loader.c) -------------------------------------------------- */

/* Load doc's root as one case mapping (the agent's wire form, case_wire.c). */
int load_case_doc(const char *name, yaml_document_t *doc, struct rq_suite *suite,
		  struct rq_diags *diags);

#endif
