/* SPDX-License-Identifier: MIT */
/*
 * Key tables as text and as data to check: type names and "expected ..."
 * phrases for the loader's messages, the one-line descriptions `rdmaqual
 * help KIND` and docs/kinds.md print.  The sanity check every kind's table
 * passes is keys_check.c (it converts defaults, so it sits above keyconv.c,
 * which uses these phrases).
 */
#include <stdlib.h>
#include <string.h>
#include "core/kind.h"
#include "core/loader_int.h"

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

void expected_text(const struct key_def *k, enum key_type t, struct sb *sb)
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

bool has_range(const struct key_def *k)
{
	return k->min || k->max;
}

void range_text(const struct key_def *k, enum key_type t, struct sb *sb)
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


/* A name of letters, digits and the characters of extra (case, kind and key names). */
bool name_chars_ok(const char *s, const char *extra)
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
