/* SPDX-License-Identifier: MIT */
/* partitions.conf and smpquery pkeys (see partitions.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <inttypes.h>
#include <jansson.h>

#include "parsers/parsers.h"
#include "parsers/partitions.h"
#include "core/json_text.h"
#include "core/util.h"

/*
 * The parser follows opensm's own (opensm/osm_prtn_config.c), which reads
 * the file a line at a time (fgets): a '#' ends the line, ';' ends a
 * statement, a statement runs on over lines, and only ' ', '\t' and '\n'
 * are blanks ('\r' is not: a CRLF file's "... ;\r" leaves a statement
 * without ':', which opensm refuses).  Words match by prefix, case-sensitive
 * (strncmp(word, "full", strlen(word))): "=limi" is limited, "=ful" full,
 * "=FULL" no flag opensm knows (limited, said at VERBOSE only).  A file
 * opensm refuses (a PARSE ERROR, or no statement at all) is not an error
 * here: opensm logs "Partition configuration in error; retrying with
 * default config" and runs its defaults (osm_prtn.c:
 * osm_prtn_make_partitions), and so does the model.
 */

static bool hex_or_dec(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* opensm's "word is a prefix of whole" (its strncmp(word, whole, strlen(word))). */
static bool pfx(const char *word, const char *whole)
{
	return !strncmp(word, whole, strlen(word));
}

static bool osm_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* osm_prtn_config.c: parse_name_token, "name=val" with its blanks stripped; val NULL without '='. */
static void name_token(char *tok, char **name, char **val)
{
	char *q, *e;

	while (osm_blank(*tok))
		tok++;
	*val = NULL;
	q = strchr(tok, '=');
	if (q) {
		*q++ = '\0';
		while (osm_blank(*q))
			q++;
		for (e = q + strlen(q); e > q && osm_blank(e[-1]); e--)
			;
		*e = '\0';
		*val = q;
	}
	for (e = tok + strlen(tok); e > tok && osm_blank(e[-1]); e--)
		;
	*e = '\0';
	*name = tok;
}

static void note(struct partitions *out, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(struct partitions *out, unsigned line, const char *fmt, ...)
{
	char one[240];
	size_t have = out->notes ? strlen(out->notes) : 0;
	va_list ap;

	if (out->nnotes++ >= 5)
		return;	/* counted, not all kept: a file of many is not read quadratically */
	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	out->notes = xrealloc(out->notes, have + strlen(one) + 32);
	snprintf(out->notes + have, strlen(one) + 32, "%sline %u: %s", have ? "; " : "", line, one);
}

static int reject(struct partitions *out, unsigned line, const char *why)
{
	out->rejected = true;
	out->rejected_line = line;
	snprintf(out->why, sizeof(out->why), "line %u: %s", line, why);
	return -1;
}

/*
 * The statement being read: its partition in out->v and opensm's
 * conf->membership (defmember=); and what numbering a partition without a
 * PKEY needs, kept so that a file of many statements stays linear: the
 * P_Keys taken (a bitmap) and the first P_Key of each name (a hash).
 */
struct pstate {
	bool open;
	size_t idx;
	bool defmember_full;
	uint16_t counter;	/* osm_prtn.c: global_pkey_counter */
	uint8_t used[0x8000 / 8];
	struct { size_t idx; uint16_t pkey; } *byname;	/* idx + 1 in out->v; 0 free */
	size_t cap, count;
};

static bool pkey_used(const struct pstate *st, uint16_t k)
{
	return k == DEFAULT_PKEY || (st->used[k >> 3] & (1u << (k & 7)));
}

static size_t name_hash(const char *s, size_t cap)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h & (cap - 1));
}

/* The first P_Key a name was given (osm_prtn_find_by_name finds the first); 0 none. */
static uint16_t name_pkey(const struct pstate *st, const struct partitions *out, const char *name)
{
	if (!st->cap)
		return 0;
	for (size_t i = name_hash(name, st->cap); st->byname[i].idx; i = (i + 1) & (st->cap - 1))
		if (!strcmp(out->v[st->byname[i].idx - 1].name, name))
			return st->byname[i].pkey;
	return 0;
}

static void name_add(struct pstate *st, const struct partitions *out, size_t idx)
{
	const char *name = out->v[idx].name;
	size_t i;

	if (!*name || name_pkey(st, out, name))
		return;
	if (2 * (st->count + 1) > st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		__typeof__(st->byname) old = st->byname;

		st->byname = xcalloc(cap, sizeof(*st->byname));
		for (size_t j = 0; j < st->cap; j++)
			if (old[j].idx) {
				i = name_hash(out->v[old[j].idx - 1].name, cap);
				while (st->byname[i].idx)
					i = (i + 1) & (cap - 1);
				st->byname[i] = old[j];
			}
		free(old);
		st->cap = cap;
	}
	i = name_hash(name, st->cap);
	while (st->byname[i].idx)
		i = (i + 1) & (st->cap - 1);
	st->byname[i].idx = idx + 1;
	st->byname[i].pkey = out->v[idx].pkey;
	st->count++;
}

/* Room for one more of n elements, doubling (a file of many statements or members stays linear). */
static void *grow(void *v, size_t n, size_t size)
{
	return n & (n - 1) ? v : xrealloc(v, (n ? 2 * n : 1) * size);
}

static void header_flag(struct partitions *out, struct pstate *st, unsigned line, char *flag, char *val)
{
	static const char *const group[] = { "mtu", "rate", "scope", "Q_Key", "TClass", "sl", "FlowLabel" };

	/* parse_group_flag first: the IPoIB group's flags, then partition_add_flag's */
	for (size_t i = 0; i < ARRAY_SIZE(group); i++)
		if (pfx(flag, group[i]))
			return;
	if (pfx(flag, "ipoib"))
		return;
	if (pfx(flag, "defmember")) {
		if (val && pfx(val, "full"))
			st->defmember_full = true;
		else if (val && pfx(val, "both"))
			st->defmember_full = true;	/* both: full without allow_both_pkeys */
		else if (val && pfx(val, "limited"))
			st->defmember_full = false;
		else
			note(out, line, "defmember=%s is not full, limited or both (opensm skips it)", val ? val : "");
		return;
	}
	if (!strcmp(flag, "indx0"))
		return;
	note(out, line, "partition flag '%s' is not one opensm knows (ipoib, defmember, indx0, mtu, rate, sl, "
		  "scope, Q_Key, TClass, FlowLabel, by prefix and case): ignored", flag);
}

static int add_port(struct partitions *out, struct pstate *st, unsigned line, char *name, char *flag)
{
	static const struct {
		const char *name;
		enum part_who who;
	} words[] = {
		{ "ALL", PM_ALL }, { "ALL_CAS", PM_ALL_CAS }, { "ALL_SWITCHES", PM_ALL_SWITCHES },
		{ "ALL_ROUTERS", PM_ALL_ROUTERS }, { "SELF", PM_SELF },
	};
	struct partition *p = &out->v[st->idx];
	struct part_member m = { .full = st->defmember_full, .line = line };
	size_t i;

	if (!*name || pfx(name, "NONE"))
		return 0;
	if (flag) {
		/* partition_add_port: a flag resets the default to limited */
		m.full = pfx(flag, "full") || pfx(flag, "both");
		if (!m.full && !pfx(flag, "limited"))
			note(out, line, "membership flag '%s' is not one opensm knows (full, limited, both, by prefix "
				  "and case): opensm makes the port a limited member", flag);
	}
	for (i = 0; i < ARRAY_SIZE(words) && !pfx(name, words[i].name); i++)
		;
	if (i < ARRAY_SIZE(words)) {
		m.who = words[i].who;
	} else {
		char *end;

		errno = 0;
		m.guid = strtoull(name, &end, 0);
		if (!m.guid || *end)
			return reject(out, line, "bad PortGUID");
		m.who = PM_GUID;
	}
	p->m = grow(p->m, p->nm, sizeof(*p->m));
	p->m[p->nm++] = m;
	return 0;
}

/* osm_prtn_config.c: parse_part_conf on one ';'-free segment; -1 when opensm refuses the file. */
static int segment(struct partitions *out, struct pstate *st, char *s, unsigned line)
{
	char *tok, *next;

	if (*s == '\t' || *s == '\n')
		s++;
	if (!st->open) {
		char *colon = strchr(s, ':'), *name, *id;
		struct partition p = { .line = line };

		if (!colon)
			return reject(out, line, "no partition definition found");
		*colon = '\0';
		next = strchr(s, ',');
		if (next)
			*next++ = '\0';
		name_token(s, &name, &id);
		st->defmember_full = false;
		for (tok = next; tok; tok = next) {
			char *flag, *val;

			next = strchr(tok, ',');
			if (next)
				*next++ = '\0';
			name_token(tok, &flag, &val);
			header_flag(out, st, line, flag, val);
		}
		/* partition_create */
		if (!id && isdigit((unsigned char)*name)) {
			id = name;
			name = "";
		}
		if (id) {
			char *end;
			unsigned long v = strtoul(id, &end, 0);

			if (end == id || *end)
				return reject(out, line, "bad partition definition");
			p.pkey = (uint16_t)(v & 0x7fff);
		}
		if (!p.pkey) {
			/* osm_prtn_make_new: found by name, else the next number no partition has */
			if (!strcmp(name, "Default"))
				p.pkey = DEFAULT_PKEY;
			if (!p.pkey && *name)
				p.pkey = name_pkey(st, out, name);
			while (!p.pkey && st->counter < DEFAULT_PKEY - 1)
				if (!pkey_used(st, ++st->counter))
					p.pkey = st->counter;
			if (!p.pkey)
				return reject(out, line, "bad partition definition");
			p.numbered = !id;
		}
		snprintf(p.name, sizeof(p.name), "%s", name);
		out->v = grow(out->v, out->n, sizeof(*out->v));
		out->v[out->n] = p;
		st->used[p.pkey >> 3] |= (uint8_t)(1u << (p.pkey & 7));
		st->idx = out->n++;
		name_add(st, out, st->idx);
		st->open = true;
		s = colon + 1;
	}
	for (tok = s; tok; tok = next) {
		char *name, *flag;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		name_token(tok, &name, &flag);
		if (!strcmp(name, "mgid"))
			return 0;	/* a multicast group: the rest of the segment is its flags */
		if (add_port(out, st, line, name, flag))
			return -1;
	}
	return 0;
}

int partitions_parse(const char *text, size_t len, struct partitions *out, char *err, size_t errsz)
{
	struct pstate *st = xcalloc(1, sizeof(*st));
	unsigned line = 0;
	bool any = false;

	memset(out, 0, sizeof(*out));
	(void)err;
	(void)errsz;
	for (size_t at = 0; at < len && !out->rejected;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
		char *buf = xmalloc(l + 1), *p, *q;

		memcpy(buf, text + at, l);
		buf[l] = '\0';
		at += l + 1;
		line++;
		if ((q = memchr(buf, '#', l)))
			*q = '\0';
		/* osm_prtn_config_parse_file: statements of the line, each up to its ';' */
		p = buf;
		do {
			while (osm_blank(*p))
				p++;
			if (!*p)
				break;
			q = strchr(p, ';');
			if (q)
				*q = '\0';
			if (segment(out, st, p, line))
				break;
			any = true;
			if (q) {
				st->open = false;
				p = q + 1;
			}
		} while (q);
		free(buf);
	}
	if (!out->rejected && !any)
		reject(out, line ? line : 1, "no partition statement (the file is empty)");
	free(st->byname);
	free(st);
	return 0;
}

void partitions_release(struct partitions *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].m);
	free(p->v);
	free(p->notes);
	memset(p, 0, sizeof(*p));
}

int pkeys_parse(const char *text, size_t len, uint16_t *pkeys, size_t max, size_t *n, char *err, size_t errsz)
{
	unsigned line = 0, rows = 0;

	*n = 0;
	for (const char *p = text; p < text + len;) {
		const char *e = memchr(p, '\n', (size_t)(text + len - p)), *end = e ? e : text + len;
		char buf[256], *save = NULL, *tok;
		size_t l = (size_t)(end - p);

		line++;
		if (l >= sizeof(buf))
			l = sizeof(buf) - 1;
		memcpy(buf, p, l);
		buf[l] = '\0';
		p = e ? e + 1 : end;
		char *colon = strchr(buf, ':'), *s = strtrim(buf);

		/* "   0: 0xffff ..." rows; the "64 pkeys capacity" line and umad2sim's ibwarn lines aside */
		if (!colon || !isdigit((unsigned char)*s) || strncmp(strtrim(colon + 1), "0x", 2))
			continue;
		rows++;
		for (tok = strtok_r(colon + 1, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			uint64_t v;

			if (!hex_or_dec(tok, &v) || v > 0xffff) {
				snprintf(err, errsz, "line %u: \"%.20s\" is not a P_Key", line, tok);
				return -EINVAL;
			}
			if (v && *n < max)
				pkeys[(*n)++] = (uint16_t)v;
		}
	}
	if (!rows) {
		snprintf(err, errsz, "no P_Key table rows");
		return -EINVAL;
	}
	return 0;
}

/* ---- rdmaqual parse partitions / pkeys */
static int partitions_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	static const char *const who[] = { "guid", "ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF" };
	struct partitions p;
	json_t *a;

	if (partitions_parse(text, len, &p, err, errsz))
		return -EINVAL;
	a = json_array();
	for (size_t i = 0; i < p.n; i++) {
		json_t *m = json_array();
		char k[8];

		for (size_t j = 0; j < p.v[i].nm; j++) {
			char g[24];

			snprintf(g, sizeof(g), "0x%016" PRIx64, p.v[i].m[j].guid);
			json_array_append_new(m, json_pack("{s:s, s:s, s:b}", "who", who[p.v[i].m[j].who], "guid",
							   p.v[i].m[j].who == PM_GUID ? g : "", "full", p.v[i].m[j].full));
		}
		snprintf(k, sizeof(k), "0x%04x", p.v[i].pkey);
		json_array_append_new(a, json_pack("{s:o, s:s, s:i, s:b, s:o}", "name", rq_json_text(p.v[i].name), "pkey", k,
						   "line", (int)p.v[i].line, "numbered_by_opensm", p.v[i].numbered,
						   "members", m));
	}
	*out = json_pack("{s:o, s:b, s:o, s:o}", "partitions", a, "rejected", p.rejected, "rejected_why",
			 p.rejected ? rq_json_text(p.why) : json_null(), "notes",
			 p.notes ? rq_json_text(p.notes) : json_null());
	partitions_release(&p);
	return 0;
}

static int pkeys_adapter(const char *text, size_t len, json_t **out, char *err, size_t errsz)
{
	uint16_t k[1024];
	size_t n;
	json_t *a;

	if (pkeys_parse(text, len, k, ARRAY_SIZE(k), &n, err, errsz))
		return -EINVAL;
	a = json_array();
	for (size_t i = 0; i < n; i++) {
		char s[8];

		snprintf(s, sizeof(s), "0x%04x", k[i]);
		json_array_append_new(a, json_string(s));
	}
	*out = json_pack("{s:o}", "pkeys", a);
	return 0;
}

const struct rq_parser rq_parser_partitions = {
	.name = "partitions",
	.help = "an opensm partitions.conf: each partition's name, P_Key, line and members (port GUID or ALL..., full or limited)",
	.parse = partitions_adapter,
};

const struct rq_parser rq_parser_pkeys = {
	.name = "pkeys",
	.help = "smpquery pkeys output: a port's non-zero P_Key table entries (0x8000: full member)",
	.parse = pkeys_adapter,
};
