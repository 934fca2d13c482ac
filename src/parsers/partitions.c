/* SPDX-License-Identifier: MIT */
/* partitions.conf and smpquery pkeys (see partitions.h). */
#include <ctype.h>
#include <errno.h>
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

#define DEFAULT_PKEY 0x7fff

static int bad(char *err, size_t errsz, unsigned line, const char *what, const char *text)
{
	snprintf(err, errsz, "line %u: %s \"%.60s\"", line, what, text);
	return -EINVAL;
}

static bool hex_or_dec(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static int member(struct partition *p, char *tok, bool defmember_full, unsigned line, char *err, size_t errsz)
{
	static const struct {
		const char *name;
		enum part_who who;
	} words[] = {
		{ "ALL", PM_ALL }, { "ALL_CAS", PM_ALL_CAS }, { "ALL_SWITCHES", PM_ALL_SWITCHES },
		{ "ALL_ROUTERS", PM_ALL_ROUTERS }, { "SELF", PM_SELF },
	};
	struct part_member m = { .full = defmember_full };
	char *eq;
	size_t i;

	tok = strtrim(tok);
	eq = strchr(tok, '=');
	if (!strncasecmp(tok, "mgid", 4))
		return 0;	/* a multicast group of the partition, not a port */
	if (eq) {
		*eq = '\0';
		char *how = strtrim(eq + 1);

		if (!strcasecmp(how, "full") || !strcasecmp(how, "both"))
			m.full = true;
		else if (!strcasecmp(how, "limited"))
			m.full = false;
		else
			return bad(err, errsz, line, "membership is full, limited or both, not", how);
	}
	tok = strtrim(tok);
	for (i = 0; i < ARRAY_SIZE(words) && strcmp(tok, words[i].name); i++)
		;
	if (i < ARRAY_SIZE(words))
		m.who = words[i].who;
	else if (hex_or_dec(tok, &m.guid))
		m.who = PM_GUID;
	else
		return bad(err, errsz, line, "not a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF:", tok);
	p->m = xrealloc(p->m, (p->nm + 1) * sizeof(*p->m));
	p->m[p->nm++] = m;
	return 0;
}

static int statement(struct partitions *out, char *s, unsigned line, char *err, size_t errsz)
{
	char *colon = strchr(s, ':'), *save = NULL, *tok;
	struct partition p = { .line = line };
	bool defmember_full = false, first = true;
	int ret = 0;

	if (!colon)
		return bad(err, errsz, line, "a partition is NAME[=PKEY][,FLAGS] : MEMBERS ;, no ':' in", s);
	*colon = '\0';
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = false) {
		char *eq = strchr(tok, '=');

		tok = strtrim(tok);
		if (first) {
			uint64_t v;

			if (eq) {
				*eq = '\0';
				if (!hex_or_dec(strtrim(eq + 1), &v) || (v & 0x7fff) == 0)
					return bad(err, errsz, line, "not a P_Key:", strtrim(eq + 1));
				p.pkey = (uint16_t)(v & 0x7fff);
			}
			snprintf(p.name, sizeof(p.name), "%s", strtrim(tok));
			if (!p.name[0])
				return bad(err, errsz, line, "a partition without a name:", tok);
			if (!eq && strcmp(p.name, "Default"))
				return bad(err, errsz, line, "a partition without a P_Key (opensm numbers it itself):", p.name);
			if (!eq)
				p.pkey = DEFAULT_PKEY;
		} else if (!strncasecmp(tok, "defmember", 9) && eq) {
			char *how = strtrim(strchr(tok, '=') + 1);

			defmember_full = !strcasecmp(how, "full") || !strcasecmp(how, "both");
			if (!defmember_full && strcasecmp(how, "limited"))
				return bad(err, errsz, line, "defmember is full, limited or both, not", how);
		}
		/* ipoib, rate=, mtu=, sl=, scope=, Q_Key=, TClass=, indx0: the multicast groups, not the tables */
	}
	save = NULL;
	for (tok = strtok_r(colon + 1, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save))
		if (*strtrim(tok))
			ret = member(&p, tok, defmember_full, line, err, errsz);
	if (ret) {
		free(p.m);
		return ret;
	}
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = p;
	return 0;
}

static bool blank(const struct sb *sb)
{
	for (size_t i = 0; i < sb->len; i++)
		if (!isspace((unsigned char)sb->buf[i]))
			return false;
	return true;
}

int partitions_parse(const char *text, size_t len, struct partitions *out, char *err, size_t errsz)
{
	struct sb st = SB_INIT;
	unsigned line = 1, st_line = 1;
	bool comment = false;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < len && !ret; i++) {
		char ch = text[i];

		if (ch == '\n') {
			line++;
			comment = false;
			sb_addc(&st, ' ');
			continue;
		}
		if (comment)
			continue;
		if (ch == '#') {
			comment = true;
			continue;
		}
		if (ch == ';') {
			if (!blank(&st))
				ret = statement(out, st.buf, st_line, err, errsz);
			sb_reset(&st);
			continue;
		}
		if (blank(&st))
			st_line = line;
		sb_addc(&st, ch);
	}
	if (!ret && !blank(&st))
		ret = bad(err, errsz, st_line, "a statement without its closing ';':", strtrim(st.buf));
	sb_release(&st);
	if (ret)
		partitions_release(out);
	return ret;
}

void partitions_release(struct partitions *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].m);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

size_t partitions_port_pkeys(const struct partitions *p, uint64_t port_guid, bool sm_port,
			     uint16_t *pkeys, const char **names, size_t max)
{
	/* pkeys without the bit, and whether full: Default first, then each statement in order */
	uint16_t key[128];
	bool full[128];
	const char *from[128];
	size_t n = 0;

	key[0] = DEFAULT_PKEY;
	full[0] = !p || sm_port;
	from[0] = "Default";
	n = 1;
	for (size_t i = 0; p && i < p->n; i++) {
		const struct partition *pt = &p->v[i];

		for (size_t j = 0; j < pt->nm; j++) {
			const struct part_member *m = &pt->m[j];
			bool match = m->who == PM_ALL || m->who == PM_ALL_CAS ||
				     (m->who == PM_GUID && m->guid == port_guid) || (m->who == PM_SELF && sm_port);
			size_t k;

			if (!match)
				continue;
			for (k = 0; k < n && key[k] != pt->pkey; k++)
				;
			if (k == n) {
				if (n == ARRAY_SIZE(key))
					continue;
				key[n] = pt->pkey;
				n++;
			}
			full[k] = m->full || (sm_port && pt->pkey == DEFAULT_PKEY);
			from[k] = pt->name;
		}
	}
	/* sort by the entry, names alongside */
	uint16_t e[128];
	size_t out = 0;

	for (size_t k = 0; k < n; k++)
		e[k] = (uint16_t)(key[k] | (full[k] ? 0x8000 : 0));
	qsort(e, n, sizeof(e[0]), cmp_u16);
	for (size_t k = 0; k < n && out < max; k++, out++) {
		pkeys[out] = e[k];
		if (names)
			for (size_t q = 0; q < n; q++)
				if ((uint16_t)(key[q] | (full[q] ? 0x8000 : 0)) == e[k])
					names[out] = from[q];
	}
	return out;
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
		json_array_append_new(a, json_pack("{s:o, s:s, s:i, s:o}", "name", rq_json_text(p.v[i].name), "pkey", k,
						   "line", (int)p.v[i].line, "members", m));
	}
	*out = json_pack("{s:o}", "partitions", a);
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
