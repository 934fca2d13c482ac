/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the InfiniBand diagnostics (see parse_ibdiag.h) and their
 * `rdmaqual parse` adapters.  Formats from infiniband-diags' sources
 * (sminfo.c, iblinkinfo.c, perfquery.c, ibnetdiscover.c, ibstat.c) and
 * from what the tools print here under ibsim.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "parsers/ibnet.h"
#include "parsers/parse_ibdiag.h"
#include "parsers/parsers.h"
#include "core/util.h"

/* Lines every parser skips: blank, and umad2sim/libibmad warnings. */
bool ib_diag_noise(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s || str_starts(s, "ibwarn:") || str_starts(s, "ibwarn ");
}

static void copy(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static const char *skipws(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Unsigned number (decimal or 0x); advances *s; false when none. */
static bool take_num(const char **s, uint64_t *v)
{
	const char *p = skipws(*s);
	char *end;

	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	*v = strtoull(p, &end, 0);
	if (errno || end == p)
		return false;
	*s = end;
	return true;
}

/* ---- sminfo ---- */

const char *ib_sminfo_state_name(int state)
{
	static const char *const n[] = { "NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER" };

	return state >= 0 && state < 4 ? n[state] : "UNKNOWN";
}

/*
 * A whole token (up to a blank or ',') as an unsigned number in base (0: C
 * rules, 16: with or without 0x) no larger than max; false when it is not
 * one, as "0x2cGUID" or "..." are.
 */
static bool token_num(const char *t, size_t n, int base, uint64_t max, uint64_t *v)
{
	char buf[32], *end;
	unsigned long long x;

	if (!n || n >= sizeof(buf) || !isxdigit((unsigned char)t[0]))
		return false;
	memcpy(buf, t, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoull(buf, &end, base);
	if (errno || *end || x > max)
		return false;
	*v = x;
	return true;
}

/* The value after key in s: its start and length (to a blank or ','); NULL when key is absent. */
static const char *after_key(const char *s, const char *key, size_t *n)
{
	const char *p = strstr(s, key);

	if (!p)
		return NULL;
	p += strlen(key);
	*n = strcspn(p, " ,");
	return p;
}

static int sminfo_line(const char *s, struct ib_sminfo *si)
{
	/* sminfo.c: "sminfo: sm lid %d sm guid 0x%" PRIx64 ", activity count %u priority %d state %d %s" */
	static const struct { const char *key, *name; int base; uint64_t max; } f[] = {
		{ "sminfo: sm lid ", "lid", 10, 0xffff },
		{ " sm guid ", "guid", 16, UINT64_MAX },
		{ " activity count ", "activity", 10, UINT32_MAX },
		{ " priority ", "priority", 10, 15 },
		{ " state ", "state", 10, 3 },
	};
	const char *p = s, *v[ARRAY_SIZE(f)];
	size_t n[ARRAY_SIZE(f)];
	uint64_t x;
	bool any = false;

	/* every key, in order: what is not an sminfo line is refused */
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (!(v[i] = after_key(p, f[i].key, &n[i])) || (i == 0 && !str_starts(s, f[0].key)))
			return -EINVAL;
		p = v[i] + n[i];
	}
	si->priority = si->state = -1;
	snprintf(si->state_name, sizeof(si->state_name), "%.*s", (int)strcspn(skipws(p), " "),
		 skipws(p));
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (!token_num(v[i], n[i], f[i].base, f[i].max, &x)) {
			if (i == 4)
				break;	/* the state: below */
			rq_missing_add(&si->missing, f[i].name);
			continue;
		}
		any = true;
		switch (i) {
		case 0: si->lid = (unsigned)x; break;
		case 1: si->guid = x; break;
		case 2: si->activity = (unsigned long)x; break;
		case 3: si->priority = (int)x; break;
		case 4: si->state = (int)x; break;
		}
	}
	if (si->state < 0) {
		/* the number was redacted: the name tells it, if it is there */
		static const char *const names[] = { "SMINFO_NOTACT", "SMINFO_DISCOVER",
						     "SMINFO_STANDBY", "SMINFO_MASTER" };

		for (int i = 0; i < 4; i++)
			if (!strcmp(si->state_name, names[i]))
				si->state = i;
		if (si->state >= 0)
			any = true;
		else
			rq_missing_add(&si->missing, "state");
	}
	return any ? 0 : -EINVAL;
}

int sminfo_parse(const char *text, size_t len, struct ib_sminfo *si, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	int ret = -EINVAL;
	bool seen = false;

	memset(si, 0, sizeof(*si));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		struct ib_sminfo one = { .lid = 0 };

		if (ib_diag_noise(s))
			continue;
		/* "sminfo: iberror: failed: query" (nothing answered). */
		if (strstr(s, "iberror") || strstr(s, "failed")) {
			ret = -ENOENT;
			rq_parse_error(err, errsz, l.no, "no SM answered: %s", s);
			goto out;
		}
		if (sminfo_line(s, &one)) {
			ret = rq_parse_error(err, errsz, l.no, "not an sminfo line: %.80s", s);
			goto out;
		}
		if (seen) {
			ret = rq_parse_error(err, errsz, l.no, "a second sminfo line");
			goto out;
		}
		*si = one;
		seen = true;
	}
	if (!seen) {
		ret = rq_parse_error(err, errsz, 0, "no sminfo line in the output");
		goto out;
	}
	ret = 0;
out:
	rq_lines_release(&l);
	return ret;
}

/* ---- iblinkinfo ---- */

int ib_width_lanes(const char *w)
{
	int n = atoi(w);

	return n > 0 ? n : 0;
}

/*
 * The part between "==(" and ")==>": "4X 2.5 Gbps Active/  LinkUp" or
 * "Down/ Polling".  The state is the word before '/', the width the first
 * token when it ends in X, the speed what lies between.
 */
static int link_middle(const char *m, size_t n, struct ib_link *k)
{
	char buf[96], *slash, *tok[8];
	int nt = 0;

	copy(buf, sizeof(buf), m, n);
	slash = strchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(k->phys, sizeof(k->phys), "%s", skipws(slash + 1));
	for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t && nt < 8;
	     t = strtok_r(NULL, " \t", &save))
		tok[nt++] = t;
	if (nt < 1)
		return -1;
	snprintf(k->state, sizeof(k->state), "%s", tok[nt - 1]);
	if (nt >= 2) {
		size_t wl = strlen(tok[0]);
		int first = 0;

		if (wl && toupper((unsigned char)tok[0][wl - 1]) == 'X') {
			snprintf(k->width, sizeof(k->width), "%s", tok[0]);
			first = 1;
		}
		k->speed[0] = '\0';
		for (int i = first; i < nt - 1; i++) {
			size_t cur = strlen(k->speed);

			snprintf(k->speed + cur, sizeof(k->speed) - cur, "%s%s", cur ? " " : "", tok[i]);
		}
		k->gbps = strtod(k->speed, NULL);
	}
	return 0;
}

/* A port line: "[GUID] LID PORT[..] ==( ... )==> RLID RPORT[..] "RNAME" ( ... )". */
static int link_line(const char *s, bool ca, struct ib_link *k)
{
	const char *p = s, *a, *b, *q1, *q2;
	uint64_t v;

	if (ca) {
		if (!take_num(&p, &v))
			return -1;
		k->guid = v;
	}
	if (!take_num(&p, &v))
		return -1;
	k->lid = (unsigned)v;
	if (!take_num(&p, &v))
		return -1;
	k->port = (int)v;
	a = strstr(p, "==(");
	b = a ? strstr(a, ")==>") : NULL;
	if (!a || !b || link_middle(a + 3, (size_t)(b - a - 3), k))
		return -1;
	p = b + 4;
	q1 = strchr(p, '"');
	q2 = q1 ? strchr(q1 + 1, '"') : NULL;
	if (!q1 || !q2)
		return -1;
	copy(k->rnode, sizeof(k->rnode), q1 + 1, (size_t)(q2 - q1 - 1));
	/* Remote LID and port, when connected: numbers before the quote. */
	if (take_num(&p, &v) && p < q1) {
		k->rlid = (unsigned)v;
		if (take_num(&p, &v) && p < q1) {
			k->rport = (int)v;
			k->connected = true;
		}
	}
	return 0;
}

int iblinkinfo_parse(const char *text, size_t len, struct ib_links *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s, node[72] = "";
	bool in_block = false, sw = false;
	uint64_t swguid = 0;
	size_t cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		struct ib_link k = { 0 };

		if (ib_diag_noise(s))
			continue;
		if (str_starts(s, "CA: ") || str_starts(s, "Switch: ") || str_starts(s, "Router: ")) {
			size_t n = strlen(s);
			const char *name;

			if (s[n - 1] != ':') {
				ret = rq_parse_error(err, errsz, l.no, "node header without its final ':'");
				break;
			}
			s[n - 1] = '\0';
			sw = str_starts(s, "Switch: ");
			name = strchr(s, ' ') + 1;
			if (sw) {
				const char *p = name;
				uint64_t g;

				if (!take_num(&p, &g)) {
					ret = rq_parse_error(err, errsz, l.no, "switch header without a GUID");
					break;
				}
				swguid = g;
				name = skipws(p);
			}
			snprintf(node, sizeof(node), "%s", name);
			in_block = true;
			continue;
		}
		if (!in_block) {
			ret = rq_parse_error(err, errsz, l.no, "port line before any CA:/Switch: header: %.60s", s);
			break;
		}
		if (link_line(s, !sw, &k)) {
			ret = rq_parse_error(err, errsz, l.no, "not an iblinkinfo port line: %.80s", s);
			break;
		}
		snprintf(k.node, sizeof(k.node), "%s", node);
		k.is_switch = sw;
		if (sw)
			k.guid = swguid;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 32;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		out->v[out->n++] = k;
	}
	rq_lines_release(&l);
	if (ret)
		ib_links_release(out);
	return ret;
}

void ib_links_release(struct ib_links *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

const struct ib_link *ib_links_find(const struct ib_links *l, const char *node, int port)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].port == port && !strcmp(l->v[i].node, node))
			return &l->v[i];
	return NULL;
}

/* ---- perfquery ---- */

int perfquery_parse(const char *text, size_t len, struct ib_perf *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	size_t cap = 0, ccap = 0;
	struct ib_perf_block *b = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		const char *dots, *p;
		uint64_t v;

		if (ib_diag_noise(s))
			continue;
		if (s[0] == '#') {
			unsigned lid;
			int port;
			const char *h = strstr(s, "counters: Lid ");

			if (!h || sscanf(h, "counters: Lid %u port %d", &lid, &port) != 2) {
				ret = rq_parse_error(err, errsz, l.no, "not a perfquery header: %.80s", s);
				break;
			}
			if (out->n == cap) {
				cap = cap ? 2 * cap : 4;
				out->v = xrealloc(out->v, cap * sizeof(*out->v));
			}
			b = &out->v[out->n++];
			memset(b, 0, sizeof(*b));
			b->lid = lid;
			b->port = port;
			b->extended = strstr(s, "extended") != NULL;
			ccap = 0;
			continue;
		}
		if (!b) {
			ret = rq_parse_error(err, errsz, l.no, "counter before any '# Port counters' header");
			break;
		}
		dots = strchr(s, ':');
		if (!dots || dots == s) {
			ret = rq_parse_error(err, errsz, l.no, "not a 'Name:....value' line: %.80s", s);
			break;
		}
		p = dots + 1;
		while (*p == '.')
			p++;
		if (!take_num(&p, &v) || *skipws(p)) {
			ret = rq_parse_error(err, errsz, l.no, "counter value is not a number: %.80s", s);
			break;
		}
		if (b->n == ccap) {
			ccap = ccap ? 2 * ccap : 32;
			b->c = xrealloc(b->c, ccap * sizeof(*b->c));
		}
		copy(b->c[b->n].name, sizeof(b->c[b->n].name), s, (size_t)(dots - s));
		b->c[b->n++].value = v;
	}
	rq_lines_release(&l);
	if (!ret && !out->n)
		ret = rq_parse_error(err, errsz, 0, "no '# Port counters' block in the output");
	if (ret)
		ib_perf_release(out);
	return ret;
}

void ib_perf_release(struct ib_perf *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].c);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

bool ib_perf_get(const struct ib_perf_block *b, const char *name, uint64_t *v)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->c[i].name, name)) {
			*v = b->c[i].value;
			return true;
		}
	return false;
}

/* ---- ibnetdiscover --ports ---- */

static bool take_word(const char **s, char *dst, size_t size)
{
	const char *p = skipws(*s), *e = p;

	while (*e && !isspace((unsigned char)*e))
		e++;
	if (e == p)
		return false;
	copy(dst, size, p, (size_t)(e - p));
	*s = e;
	return true;
}

static bool take_quoted(const char **s, char *dst, size_t size)
{
	const char *a = strchr(*s, '\''), *b = a ? strchr(a + 1, '\'') : NULL;

	if (!a || !b)
		return false;
	copy(dst, size, a + 1, (size_t)(b - a - 1));
	*s = b + 1;
	return true;
}

int ibnetdiscover_ports_parse(const char *text, size_t len, struct ib_netports *out,
			       char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	size_t cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		struct ib_netport k = { 0 };
		const char *p = s;
		uint64_t v;

		if (ib_diag_noise(s))
			continue;
		if (!take_word(&p, k.type, sizeof(k.type)) || !take_num(&p, &v))
			goto bad_line;
		k.lid = (unsigned)v;
		if (!take_num(&p, &v))
			goto bad_line;
		k.port = (int)v;
		if (!take_num(&p, &k.guid) || !take_word(&p, k.width, sizeof(k.width)) ||
		    !take_word(&p, k.speed, sizeof(k.speed)))
			goto bad_line;
		p = skipws(p);
		if (*p == '-') {
			p++;
			if (!take_word(&p, k.rtype, sizeof(k.rtype)) || !take_num(&p, &v))
				goto bad_line;
			k.rlid = (unsigned)v;
			if (!take_num(&p, &v))
				goto bad_line;
			k.rport = (int)v;
			if (!take_num(&p, &k.rguid) || !take_quoted(&p, k.name, sizeof(k.name)) ||
			    !take_quoted(&p, k.rname, sizeof(k.rname)))
				goto bad_line;
			k.connected = true;
		} else if (!take_quoted(&p, k.name, sizeof(k.name))) {
			goto bad_line;
		}
		if (strcmp(k.type, "CA") && strcmp(k.type, "SW") && strcmp(k.type, "RT"))
			goto bad_line;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 32;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		out->v[out->n++] = k;
		continue;
bad_line:
		ret = rq_parse_error(err, errsz, l.no, "not an 'ibnetdiscover --ports' line: %.80s", s);
		break;
	}
	rq_lines_release(&l);
	if (ret)
		ib_netports_release(out);
	return ret;
}

void ib_netports_release(struct ib_netports *p)
{
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* ---- ibstat ---- */

static bool kv_split(char *s, char **key, char **val)
{
	char *c = strchr(s, ':');

	if (!c)
		return false;
	*c = '\0';
	*key = strtrim(s);
	*val = strtrim(c + 1);
	return true;
}

/* A value someone replaced by "..." (or "0x...") before pasting. */
static bool elided(const char *v)
{
	return strstr(v, "...") != NULL;
}

/* A text field: copied, or named missing when elided. */
static void stat_text(char *dst, size_t size, const char *v, struct rq_missing *m, const char *name)
{
	if (elided(v))
		rq_missing_add(m, name);
	else
		snprintf(dst, size, "%s", v);
}

/* A numeric field: read whole, or named missing. */
static void stat_num(const char *v, int base, uint64_t max, uint64_t *dst, struct rq_missing *m,
		     const char *name)
{
	if (!token_num(v, strlen(v), base, max, dst))
		rq_missing_add(m, name);
}

int ibstat_parse(const char *text, size_t len, struct ib_stat *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	size_t cap = 0;
	struct ib_stat_ca *ca = NULL;
	struct ib_stat_port *pt = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		char *key, *val;
		uint64_t v;
		int num;

		if (ib_diag_noise(s))
			continue;
		/* ibstat failed on a CA (libibumad's IBPANIC): keep the first, go on */
		if (str_starts(skipws(s), "ibpanic:")) {
			if (!out->error[0]) {
				snprintf(out->error, sizeof(out->error), "%s", skipws(s));
				out->error_line = l.no;
			}
			continue;
		}
		/* two quotes: "Switch '" alone would make the name's length -1 */
		if ((str_starts(s, "CA '") || str_starts(s, "Switch '")) && s[strlen(s) - 1] == '\'' &&
		    strchr(s, '\'') != strrchr(s, '\'')) {
			const char *q = strchr(s, '\'');

			if (out->n == cap) {
				cap = cap ? 2 * cap : 4;
				out->v = xrealloc(out->v, cap * sizeof(*out->v));
			}
			ca = &out->v[out->n++];
			memset(ca, 0, sizeof(*ca));
			copy(ca->name, sizeof(ca->name), q + 1, strlen(q + 1) - 1);
			ca->is_switch = s[0] == 'S';
			pt = NULL;
			continue;
		}
		/*
		 * "..." alone: lines left out by whoever pasted the output, also
		 * before the first CA block (a paste that starts mid-output)
		 */
		if (!strcmp(skipws(s), "..."))
			continue;
		if (!ca) {
			ret = rq_parse_error(err, errsz, l.no, "line outside a CA block: %.60s", s);
			break;
		}
		if (sscanf(s, " Port %d:", &num) == 1 && str_ends(s, ":")) {
			ca->ports = xrealloc(ca->ports, (ca->nport_blocks + 1) * sizeof(*ca->ports));
			pt = &ca->ports[ca->nport_blocks++];
			memset(pt, 0, sizeof(*pt));
			pt->num = num;
			continue;
		}
		if (!kv_split(s, &key, &val)) {
			ret = rq_parse_error(err, errsz, l.no, "not a 'Key: value' line: %.60s", s);
			break;
		}
		if (!pt) {
			struct rq_missing *m = &ca->missing;

			if (!strcmp(key, "CA type") || !strcmp(key, "Switch type")) {
				stat_text(ca->ca_type, sizeof(ca->ca_type), val, m, "ca_type");
			} else if (!strcmp(key, "Number of ports")) {
				stat_num(val, 10, 255, &v, m, "nports");
				ca->nports = rq_missing_has(m, "nports") ? 0 : (int)v;
			} else if (!strcmp(key, "Firmware version")) {
				stat_text(ca->fw, sizeof(ca->fw), val, m, "fw");
			} else if (!strcmp(key, "Hardware version")) {
				stat_text(ca->hw, sizeof(ca->hw), val, m, "hw");
			} else if (!strcmp(key, "Node GUID")) {
				stat_num(val, 16, UINT64_MAX, &ca->node_guid, m, "node_guid");
			} else if (!strcmp(key, "System image GUID")) {
				stat_num(val, 16, UINT64_MAX, &ca->sys_guid, m, "sys_guid");
			}
			/* Other keys (newer rdma-core) are kept out, not refused. */
			continue;
		}
		v = 0;
		if (!strcmp(key, "State")) {
			stat_text(pt->state, sizeof(pt->state), val, &pt->missing, "state");
		} else if (!strcmp(key, "Physical state")) {
			stat_text(pt->phys, sizeof(pt->phys), val, &pt->missing, "phys_state");
		} else if (!strcmp(key, "Rate")) {
			stat_text(pt->rate, sizeof(pt->rate), val, &pt->missing, "rate");
		} else if (!strcmp(key, "Base lid")) {
			stat_num(val, 0, UINT32_MAX, &v, &pt->missing, "base_lid");
			pt->base_lid = (unsigned)v;
		} else if (!strcmp(key, "LMC")) {
			stat_num(val, 0, UINT32_MAX, &v, &pt->missing, "lmc");
			pt->lmc = (unsigned)v;
		} else if (!strcmp(key, "SM lid")) {
			stat_num(val, 0, UINT32_MAX, &v, &pt->missing, "sm_lid");
			pt->sm_lid = (unsigned)v;
		} else if (!strcmp(key, "Capability mask")) {
			stat_num(val, 16, UINT32_MAX, &v, &pt->missing, "capmask");
			pt->capmask = (uint32_t)v;
		} else if (!strcmp(key, "Port GUID")) {
			stat_num(val, 16, UINT64_MAX, &pt->port_guid, &pt->missing, "port_guid");
		} else if (!strcmp(key, "Link layer")) {
			stat_text(pt->link_layer, sizeof(pt->link_layer), val, &pt->missing, "link_layer");
		}
	}
	rq_lines_release(&l);
	if (!ret && !out->n && !out->error[0])
		ret = rq_parse_error(err, errsz, 0, "no CA block in the output");
	if (ret)
		ib_stat_release(out);
	return ret;
}

void ib_stat_release(struct ib_stat *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].ports);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* ---- smpquery dumps ---- */

int smpquery_parse(const char *text, size_t len, struct ib_kvs *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	size_t cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		char *dots, *val;

		if (ib_diag_noise(s))
			continue;
		if (s[0] == '#') {
			snprintf(out->header, sizeof(out->header), "%s", skipws(s + 1));
			continue;
		}
		/* Capability names listed under CapMask: continuation lines, kept out. */
		if (isspace((unsigned char)s[0]) && !strchr(s, ':'))
			continue;
		dots = strchr(s, ':');
		if (!dots || dots == s || dots[1] != '.') {
			ret = rq_parse_error(err, errsz, l.no, "not a 'Key:....value' line: %.80s", s);
			break;
		}
		*dots = '\0';
		val = dots + 1;
		while (*val == '.')
			val++;
		if (out->n == cap) {
			cap = cap ? 2 * cap : 64;
			out->v = xrealloc(out->v, cap * sizeof(*out->v));
		}
		snprintf(out->v[out->n].key, sizeof(out->v[out->n].key), "%s", strtrim(s));
		snprintf(out->v[out->n].value, sizeof(out->v[out->n].value), "%s", strtrim(val));
		out->n++;
	}
	rq_lines_release(&l);
	if (!ret && !out->n)
		ret = rq_parse_error(err, errsz, 0, "no 'Key:....value' line in the output");
	if (ret)
		ib_kvs_release(out);
	return ret;
}

void ib_kvs_release(struct ib_kvs *k)
{
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

const char *ib_kvs_get(const struct ib_kvs *k, const char *key)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i].key, key))
			return k->v[i].value;
	return NULL;
}

/* ---- saquery -s ---- */

int saquery_sm_parse(const char *text, size_t len, struct ib_sm_ports *out, char *err, size_t errsz)
{
	struct rq_lines l;
	char *s;
	bool in_sm = false, any_header = false;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		const char *t = skipws(s);
		unsigned v;

		if (ib_diag_noise(s))
			continue;
		if (!strcmp(t, "IsSM ports")) {
			in_sm = any_header = true;
			continue;
		}
		if (!strcmp(t, "IsSMdisabled ports")) {
			in_sm = false;
			any_header = true;
			continue;
		}
		if (!in_sm)
			continue;
		if (sscanf(t, "EndPortLid.%*[.]%u", &v) == 1) {
			if (out->n < ARRAY_SIZE(out->lid))
				out->lid[out->n++] = v;
		} else if (sscanf(t, "master_sm_base_lid.%*[.]%u", &v) == 1) {
			if (!out->master_lid)
				out->master_lid = v;
		}
	}
	rq_lines_release(&l);
	if (!any_header)
		ret = rq_parse_error(err, errsz, 0, "no 'IsSM ports' section: not saquery -s output");
	return ret;
}

/* ---- opensm log / stdout ---- */

int opensm_log_parse(const char *text, size_t len, struct osm_summary *o)
{
	struct rq_lines l;
	char *s;

	memset(o, 0, sizeof(*o));
	rq_lines_init(&l, text, len);
	while ((s = rq_lines_next(&l))) {
		const char *m = strstr(s, " -> "), *p;

		/* Log lines: "Mon DD HH:MM:SS usec [THREAD] 0xLL -> message"; stdout has bare messages. */
		m = m ? m + 4 : skipws(s);
		if (str_starts(m, "OpenSM $ "))
			m += 9;
		if (str_starts(m, "OpenSM ") && !o->version[0] && isdigit((unsigned char)m[7]))
			snprintf(o->version, sizeof(o->version), "%s", m);
		else if ((p = strstr(m, "Using default GUID 0x")))
			o->guid = strtoull(p + 19, NULL, 16);
		else if (!o->guid && (p = strstr(m, "binding to port GUID 0x")))
			o->guid = strtoull(p + 21, NULL, 16);
		if ((p = strstr(m, "Entering ")) && strstr(p, " state")) {
			char st[24] = "";

			sscanf(p, "Entering %23[A-Z ] state", st);
			for (size_t n = strlen(st); n && st[n - 1] == ' ';)
				st[--n] = '\0';
			snprintf(o->last_state, sizeof(o->last_state), "%s", st);
			if (!strcmp(st, "DISCOVERING"))
				o->discovering = true;
			else if (!strcmp(st, "MASTER"))
				o->master = true;
			else if (!strcmp(st, "STANDBY"))
				o->standby = true;
			else if (!strcmp(st, "NOT-ACTIVE") || !strcmp(st, "NOT ACTIVE"))
				o->inactive = true;
		}
		if (strstr(m, "SUBNET UP"))
			o->subnet_up++;
		/* "osm_ucast_mgr_process: ftree tables configured on all switches": the engine that routed */
		if ((p = strstr(m, " tables configured on all switches"))) {
			const char *b = p;

			while (b > m && !isspace((unsigned char)b[-1]))
				b--;
			snprintf(o->routing, sizeof(o->routing), "%.*s", (int)(p - b), b);
		}
		if ((p = strstr(m, "cannot build lid matrices")) || (p = strstr(m, "disabling UPDN algorithm")) ||
		    ((p = strstr(m, "routing engine")) && strstr(m, "fail")))
			snprintf(o->routing_failure, sizeof(o->routing_failure), "%s", m);
		if (strstr(m, "Exiting SM"))
			o->exiting = true;
		if (strstr(m, "Error from osm_opensm_bind") || strstr(m, "bind failed"))
			o->bind_failed = true;
		if (strstr(m, "No local ports detected"))
			o->no_ports = true;
		if ((p = strstr(m, "ERR ")) && isxdigit((unsigned char)p[4])) {
			/* "No previous bind" errors are the echo of an earlier failure. */
			if (o->nerrs < OSM_MAX_ERRS)
				o->errs[o->nerrs] = xstrdup(p);
			o->nerrs++;
		}
	}
	rq_lines_release(&l);
	return 0;
}

void osm_summary_release(struct osm_summary *s)
{
	for (size_t i = 0; i < s->nerrs && i < OSM_MAX_ERRS; i++)
		free(s->errs[i]);
	memset(s, 0, sizeof(*s));
}

void osm_summary_reason(const struct osm_summary *s, char *buf, size_t size)
{
	if (s->no_ports)
		snprintf(buf, size, "opensm found no local IB port (\"No local ports detected\")");
	else if (s->nerrs)
		snprintf(buf, size, "opensm: %s%s", s->errs[0],
			 s->bind_failed ? " (could not bind its port)" : "");
	else if (s->bind_failed)
		snprintf(buf, size, "opensm could not bind its port");
	else if (!s->discovering)
		snprintf(buf, size, "opensm never started discovering");
	else if (!s->master && !s->standby)
		snprintf(buf, size, "opensm never became MASTER or STANDBY (last state %s)",
			 s->last_state[0] ? s->last_state : "none");
	else
		snprintf(buf, size, "opensm reached %s", s->last_state);
}
