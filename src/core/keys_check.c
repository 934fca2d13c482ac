/* SPDX-License-Identifier: MIT */
/*
 * The sanity check every kind's key table passes (tests and `make
 * docs-check` run it): names, offsets against cfg_size, ranges, enum
 * choices, defaults that convert, help text.
 */
#include <stdlib.h>
#include <string.h>
#include "core/kind.h"
#include "core/loader_int.h"

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
		if (common_allowed(common_index(k->name), kind) || !strcmp(k->name, "<<"))
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

