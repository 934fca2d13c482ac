/* SPDX-License-Identifier: MIT */
/*
 * The ibsim / ibnetdiscover topology format (see ibnet.h).  Width and speed
 * follow ibsim's rules (sim_net.c): a port's w= and s= options are the
 * LinkWidthEnabled / LinkSpeedEnabled masks, defaulting to the file's
 * width= / speed= lines (4X and SDR when absent), and a link trains at the
 * widest width and fastest speed both ends enable.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "parsers/ibnet.h"
#include "parsers/parsers.h"
#include "core/paths.h"
#include "core/util.h"

#define IBNET_MAX_INCLUDE 8
#define IBNET_MAX_LINE 512

/* One port line before links are paired: both ends list each link. */
struct half {
	int node, port;
	char remote[72];
	int rport;
	int wmask, smask;	/* ibsim enable masks; 0: from the file defaults */
	int emask;		/* ibsim's e= (LinkSpeedExtEnabled: 1 FDR, 2 EDR, 4 HDR); -1: the file default */
	int width;		/* ibnetdiscover "4xSDR": lanes, 0 none */
	double gbps;
	char where[64];
	unsigned lid, rlid;	/* ibnetdiscover's "lid N" of this end (CA) and of the remote */
	int lmc;
	uint64_t pguid, rpguid;	/* "(100004)": this end's (CA) or the remote's port GUID */
};

struct pstate {
	struct ibnet *net;
	struct half *h;
	size_t nh, caph;
	int netwidth, netspeed;	/* ibsim defaults: LINKWIDTH_4x, LINKSPEED_SDR */
	int netspeedext;	/* extspeed=: ibsim's default none */
	uint64_t next_guid;	/* from the last switchguid=/caguid= line */
	char *err;
	size_t errsz;
	int depth;
};

static const struct {
	const char *name;
	double gbps;
} speeds[] = {
	{ "SDR", 2.5 }, { "DDR", 5.0 }, { "QDR", 10.0 }, { "FDR10", 10.3125 },
	{ "FDR", 14.0625 }, { "EDR", 25.78125 }, { "HDR", 53.125 }, { "NDR", 106.25 },
};

double ibnet_speed_gbps(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(speeds); i++)
		if (!strcasecmp(name, speeds[i].name))
			return speeds[i].gbps;
	return 0;
}

const char *ibnet_speed_name(double gbps)
{
	for (size_t i = 0; i < ARRAY_SIZE(speeds); i++)
		if (gbps > speeds[i].gbps - 0.01 && gbps < speeds[i].gbps + 0.01)
			return speeds[i].name;
	return "?";
}

static int fail(struct pstate *s, const char *name, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct pstate *s, const char *name, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rq_parse_error_at(s->err, s->errsz, name, line, "%s", msg);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The quoted string at or after p; advances *end past the closing quote. */
static bool quoted(const char *p, char *dst, size_t size, const char **end)
{
	const char *a = strchr(p, '"'), *b = a ? strchr(a + 1, '"') : NULL;
	size_t n;

	if (!a || !b)
		return false;
	n = (size_t)(b - a - 1);
	if (n >= size)
		n = size - 1;
	memcpy(dst, a + 1, n);
	dst[n] = '\0';
	if (end)
		*end = b + 1;
	return true;
}

/* "(5c25730300e6706e)": a port GUID; "(1/1/1)", a switch's port label, is none (0). */
static uint64_t paren_guid(const char *p)
{
	char *end;
	uint64_t g;

	if (*p != '(' || !isxdigit((unsigned char)p[1]))
		return 0;
	g = strtoull(p + 1, &end, 16);
	return *end == ')' ? g : 0;
}

static uint64_t guid_of_id(const char *id)
{
	/* ibnetdiscover names nodes it cannot describe "S-<guid>" / "H-<guid>". */
	if ((id[0] == 'S' || id[0] == 'H' || id[0] == 'R') && id[1] == '-' && isxdigit((unsigned char)id[2]))
		return strtoull(id + 2, NULL, 16);
	return 0;
}

static int header(struct pstate *s, const char *name, unsigned line, const char *l, bool sw)
{
	struct ibnet *net = s->net;
	struct ibnet_node n = { 0 };
	const char *p = l, *after, *hash;

	while (*p && !isdigit((unsigned char)*p) && *p != '"')
		p++;
	n.nports = atoi(p);
	if (n.nports <= 0 || n.nports > 255)
		return fail(s, name, line, "node header without a port count (1-255)");
	if (!quoted(l, n.id, sizeof(n.id), &after) || !n.id[0])
		return fail(s, name, line, "node header without a quoted node id");
	snprintf(n.desc, sizeof(n.desc), "%s", n.id);
	hash = strchr(after, '#');
	if (hash) {
		const char *d = hash + 1;

		while (isspace((unsigned char)*d))
			d++;
		if (*d == '"')
			quoted(d, n.desc, sizeof(n.desc), &d);
		/* ibnetdiscover: "# "Switch2" base port 0 lid 3 lmc 0" */
		const char *lid = strstr(d, " lid "), *lmc = strstr(d, " lmc ");

		if (lid)
			n.lid = (unsigned)strtoul(lid + 5, NULL, 10);
		if (lmc)
			n.lmc = (int)strtol(lmc + 5, NULL, 10);
	}
	n.is_switch = sw;
	/* a switchguid=/caguid= line is what ibsim gives the node; an "S-<guid>" id only names it */
	n.guid = s->next_guid ? s->next_guid : guid_of_id(n.id);
	s->next_guid = 0;
	if (ibnet_find_node(net, n.id) >= 0)
		return fail(s, name, line, "node \"%s\" declared twice", n.id);
	net->nodes = xrealloc(net->nodes, (net->nnodes + 1) * sizeof(*net->nodes));
	net->nodes[net->nnodes++] = n;
	return 0;
}

static int port_line(struct pstate *s, const char *name, unsigned line, const char *l)
{
	struct half h = { 0 };
	const struct ibnet_node *node;
	const char *p = l + 1, *after, *hash;
	char *end;

	if (!s->net->nnodes)
		return fail(s, name, line, "port line before any node header");
	node = &s->net->nodes[s->net->nnodes - 1];
	h.node = (int)s->net->nnodes - 1;
	h.port = (int)strtol(p, &end, 10);
	if (end == p || *end != ']' || h.port < 0 || h.port > node->nports ||
	    (!node->is_switch && h.port == 0))
		return fail(s, name, line, "bad port number in \"%.40s\" (node \"%s\" has %d ports)",
			    l, node->id, node->nports);
	/*
	 * ibnetdiscover prints a CA port's own GUID after its number:
	 * [1](100004); ibdiagnet's file a Quantum-2 port label there,
	 * [1](1/1/1), which is no GUID.
	 */
	if (end[1] == '(')
		h.pguid = paren_guid(end + 1);
	if (!quoted(end, h.remote, sizeof(h.remote), &after) || !h.remote[0])
		return fail(s, name, line, "port line without a quoted remote node id");
	h.rport = 1;	/* ibsim's default when no [port] follows */
	if (*after == '[') {
		h.rport = (int)strtol(after + 1, &end, 10);
		if (end == after + 1 || *end != ']' || h.rport < 0 || h.rport > 255)
			return fail(s, name, line, "bad remote port number");
		after = end + 1;
		/* ... and a remote CA port's after the remote: "H-..."[1](100004) */
		if (*after == '(')
			h.rpguid = paren_guid(after);
	}
	/* ibsim options (w=, s=, e=) before any comment; ibnetdiscover's "4xSDR" after '#'. */
	hash = strchr(after, '#');
	h.emask = -1;
	for (const char *o = after; *o && (!hash || o < hash); o++) {
		if ((*o == 'w' || *o == 's' || *o == 'e') && o[1] == '=' &&
		    (o == after || isspace((unsigned char)o[-1]))) {
			long v = strtol(o + 2, &end, 0);

			/* sim_net.c: is_linkwidth_valid 1-31, is_linkspeed_valid 1-7, is_linkspeedext_valid 0-7 */
			if (end == o + 2 || v < (*o == 'e' ? 0 : 1) || v > (*o == 'w' ? 31 : 7))
				return fail(s, name, line, "bad %c= option (width mask 1-31, speed mask 1-7, "
					    "extended speed mask 0-7)", *o);
			if (*o == 'w')
				h.wmask = (int)v;
			else if (*o == 's')
				h.smask = (int)v;
			else
				h.emask = (int)v;
		}
	}
	if (hash) {
		char buf[256], *save = NULL;
		bool before_desc = true;

		/* "# lid 6 lmc 0 "Switch2" lid 3 4xSDR": this end's LID before the remote's description */
		for (const char *q = hash + 1; *q; q++) {
			if (*q == '"') {
				const char *e = strchr(q + 1, '"');

				before_desc = false;
				if (!e)
					break;
				q = e;
			} else if (!strncmp(q, "lid ", 4) && (q == hash + 1 || isspace((unsigned char)q[-1]))) {
				unsigned v = (unsigned)strtoul(q + 4, NULL, 10);

				if (before_desc && !node->is_switch)
					h.lid = v;
				else if (!before_desc)
					h.rlid = v;
			} else if (!strncmp(q, "lmc ", 4) && before_desc && !node->is_switch) {
				h.lmc = (int)strtol(q + 4, NULL, 10);
			}
		}
		snprintf(buf, sizeof(buf), "%s", hash + 1);
		for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
			char *x = strchr(t, 'x');

			if (x && x > t && isdigit((unsigned char)t[0]) && ibnet_speed_gbps(x + 1) > 0) {
				h.width = atoi(t);
				h.gbps = ibnet_speed_gbps(x + 1);
			}
		}
	}
	snprintf(h.where, sizeof(h.where), "%s:%u", base_name(name), line);
	if (s->nh == s->caph) {
		s->caph = s->caph ? 2 * s->caph : 32;
		s->h = xrealloc(s->h, s->caph * sizeof(*s->h));
	}
	s->h[s->nh++] = h;
	return 0;
}

static int parse_text(struct pstate *s, const char *text, size_t len, const char *name);

static int include_file(struct pstate *s, const char *name, unsigned line, const char *l)
{
	char file[PATH_MAX], *path;
	const char *slash = strrchr(name, '/');
	struct sb sb = SB_INIT;
	int ret;

	if (!quoted(l, file, sizeof(file), NULL))
		return fail(s, name, line, "include without a quoted file name");
	if (file[0] == '/' || !slash)
		path = xstrdup(file);
	else
		path = xasprintf("%.*s/%s", (int)(slash - name), name, file);
	if (s->depth >= IBNET_MAX_INCLUDE) {
		free(path);
		return fail(s, name, line, "includes nested deeper than %d", IBNET_MAX_INCLUDE);
	}
	ret = read_file(path, &sb, 4u << 20);
	if (ret < 0) {
		ret = fail(s, name, line, "cannot read included %s: %s", path, strerror(-ret));
	} else {
		s->depth++;
		ret = parse_text(s, sb.buf, sb.len, path);
		s->depth--;
	}
	free(path);
	sb_release(&sb);
	return ret;
}

static int assign(struct pstate *s, const char *name, unsigned line, const char *l, long long *v)
{
	const char *eq = strchr(l, '=');
	char *end;

	if (!eq)
		return fail(s, name, line, "assignment without '='");
	*v = strtoll(eq + 1, &end, 0);
	if (end == eq + 1)
		return fail(s, name, line, "assignment without a number");
	return 0;
}

static int parse_text(struct pstate *s, const char *text, size_t len, const char *name)
{
	struct rq_lines lines;
	unsigned line = 0;
	char *l;
	int ret = 0;

	rq_lines_init(&lines, text, len);
	while (!ret && (l = rq_lines_next(&lines))) {
		long long v;

		line = lines.no;
		/* ibsim reads a line into a 512-byte buffer */
		if (lines.raw_len >= IBNET_MAX_LINE) {
			ret = fail(s, name, line, "line longer than %d bytes", IBNET_MAX_LINE - 1);
			break;
		}
		/* ibsim reads records by the first characters of a line, as here. */
		if (!l[0] || l[0] == '#' || str_starts(l, "ibwarn"))
			continue;
		if (str_starts(l, "Switch"))
			ret = header(s, name, line, l, true);
		else if (str_starts(l, "Hca") || str_starts(l, "Ca") || str_starts(l, "Rt"))
			ret = header(s, name, line, l, false);
		else if (l[0] == '[')
			ret = port_line(s, name, line, l);
		else if (l[0] == '@')
			ret = fail(s, name, line, "port aliases (@) are not supported");
		else if (str_starts(l, "include")) {
			if (s->depth < 0)
				ret = fail(s, name, line, "include in text without a file to be relative to");
			else
				ret = include_file(s, name, line, l);
		} else if (str_starts(l, "switchguid") || str_starts(l, "caguid") ||
			   str_starts(l, "hcaguids") || str_starts(l, "rtguid")) {
			const char *eq = strchr(l, '=');

			if (!eq)
				ret = fail(s, name, line, "guid line without '='");
			else
				s->next_guid = strtoull(eq + 1, NULL, 0);
		} else if (str_starts(l, "width")) {
			if (!(ret = assign(s, name, line, l, &v)) && (v < 1 || v > 31))
				ret = fail(s, name, line, "width mask %lld out of 1-31", v);
			s->netwidth = (int)v;
		} else if (str_starts(l, "extspeed")) {
			if (!(ret = assign(s, name, line, l, &v)) && (v < 0 || v > 7))
				ret = fail(s, name, line, "extended speed mask %lld out of 0-7", v);
			s->netspeedext = (int)v;
		} else if (str_starts(l, "speed")) {
			if (!(ret = assign(s, name, line, l, &v)) && (v < 1 || v > 7))
				ret = fail(s, name, line, "speed mask %lld out of 1-7", v);
			s->netspeed = (int)v;
		}
		/* vendid=, devid=, sysimgguid=, module=, do ..., pdebug: nothing to wire. */
	}
	rq_lines_release(&lines);
	return ret;
}

static int width_of(int mask)
{
	if (mask & 8)
		return 12;
	if (mask & 4)
		return 8;
	if (mask & 2)
		return 4;
	if (mask & 16)
		return 2;	/* LINKWIDTH_2x, below 4X in ibsim's get_active_linkwidth */
	if (mask & 1)
		return 1;
	return 0;
}

/* sim_net.c: get_active_linkspeedext, HDR before EDR before FDR; 0 none. */
static double speed_ext_of(int mask)
{
	if (mask & 4)
		return 53.125;
	if (mask & 2)
		return 25.78125;
	if (mask & 1)
		return 14.0625;
	return 0;
}

static double speed_of(int mask)
{
	if (mask & 4)
		return 10.0;
	if (mask & 2)
		return 5.0;
	if (mask & 1)
		return 2.5;
	return 0;
}

/* Pair the halves into links; each end must name the other. */
static int pair(struct pstate *s)
{
	struct ibnet *net = s->net;
	bool *used = xcalloc(s->nh ? s->nh : 1, sizeof(bool));
	int ret = 0;

	for (size_t i = 0; i < s->nh && !ret; i++) {
		const struct half *a = &s->h[i];
		int rn = ibnet_find_node(net, a->remote);
		size_t j;

		if (used[i])
			continue;
		if (rn < 0) {
			snprintf(s->err, s->errsz, "%s: port %d of \"%s\" is cabled to unknown node \"%s\"",
				 a->where, a->port, net->nodes[a->node].id, a->remote);
			ret = -EINVAL;
			break;
		}
		if (a->rport > net->nodes[rn].nports || (!net->nodes[rn].is_switch && a->rport == 0)) {
			snprintf(s->err, s->errsz, "%s: \"%s\" has no port %d", a->where,
				 net->nodes[rn].id, a->rport);
			ret = -EINVAL;
			break;
		}
		for (j = i + 1; j < s->nh; j++)
			if (!used[j] && s->h[j].node == rn && s->h[j].port == a->rport)
				break;
		struct ibnet_link k = { .a = a->node, .aport = a->port, .b = rn, .bport = a->rport,
					.alid = a->lid, .almc = a->lmc, .apguid = a->pguid,
					.blid = a->rlid, .bpguid = a->rpguid };

		snprintf(k.where, sizeof(k.where), "%s", a->where);
		if (j < s->nh) {
			const struct half *b = &s->h[j];

			if (ibnet_find_node(net, b->remote) != a->node || b->rport != a->port) {
				snprintf(s->err, s->errsz, "%s: \"%s\"[%d] is cabled to \"%s\"[%d], not back to \"%s\"[%d]",
					 b->where, net->nodes[rn].id, b->port, b->remote, b->rport,
					 net->nodes[a->node].id, a->port);
				ret = -EINVAL;
				break;
			}
			used[j] = true;
			if (b->lid) {
				k.blid = b->lid;
				k.blmc = b->lmc;
			}
			if (b->pguid)
				k.bpguid = b->pguid;
			if (!k.alid && b->rlid && !net->nodes[a->node].is_switch)
				k.alid = b->rlid;
			if (!k.apguid)
				k.apguid = b->rpguid;
			if (a->width || b->width) {
				k.width = a->width ? a->width : b->width;
				k.gbps = a->gbps ? a->gbps : b->gbps;
			} else {
				int wa = a->wmask ? a->wmask : s->netwidth, wb = b->wmask ? b->wmask : s->netwidth;
				int sa = a->smask ? a->smask : s->netspeed, sb = b->smask ? b->smask : s->netspeed;
				int ea = a->emask >= 0 ? a->emask : s->netspeedext;
				int eb = b->emask >= 0 ? b->emask : s->netspeedext;

				k.width = width_of(wa & wb);
				k.gbps = speed_of(sa & sb);
				if (k.gbps && speed_ext_of(ea & eb))
					k.gbps = speed_ext_of(ea & eb);
				if (!k.width || !k.gbps) {
					snprintf(s->err, s->errsz, "%s: the ends of \"%s\"[%d] - \"%s\"[%d] enable no common %s",
						 a->where, net->nodes[a->node].id, a->port, net->nodes[rn].id,
						 a->rport, k.width ? "speed" : "width");
					ret = -EINVAL;
					break;
				}
			}
		} else {
			/* One end only (ibnetdiscover of a partial fabric): take what it says. */
			k.width = a->width ? a->width : width_of(a->wmask ? a->wmask : s->netwidth);
			k.gbps = a->gbps ? a->gbps : speed_of(a->smask ? a->smask : s->netspeed);
			if (!a->gbps && speed_ext_of(a->emask >= 0 ? a->emask : s->netspeedext))
				k.gbps = speed_ext_of(a->emask >= 0 ? a->emask : s->netspeedext);
		}
		used[i] = true;
		net->links = xrealloc(net->links, (net->nlinks + 1) * sizeof(*net->links));
		net->links[net->nlinks++] = k;
	}
	free(used);
	return ret;
}

static int finish(struct pstate *s, int ret)
{
	if (!ret)
		ret = pair(s);
	if (!ret && !s->net->nnodes) {
		snprintf(s->err, s->errsz, "no node in the topology");
		ret = -EINVAL;
	}
	free(s->h);
	if (ret)
		ibnet_release(s->net);
	return ret;
}

int ibnet_parse(const char *text, size_t len, const char *name, struct ibnet *net,
		     char *err, size_t errsz)
{
	struct pstate s = { .net = net, .netwidth = 2, .netspeed = 1, .err = err, .errsz = errsz,
			    .depth = -1 };

	memset(net, 0, sizeof(*net));
	return finish(&s, parse_text(&s, text, len, name));
}

int ibnet_load(const char *path, struct ibnet *net, char *err, size_t errsz)
{
	struct pstate s = { .net = net, .netwidth = 2, .netspeed = 1, .err = err, .errsz = errsz };
	struct sb sb = SB_INIT;
	int ret;

	memset(net, 0, sizeof(*net));
	ret = read_file(path, &sb, 4u << 20);
	if (ret < 0) {
		snprintf(err, errsz, "cannot read %s: %s", path, strerror(-ret));
		sb_release(&sb);
		return ret;
	}
	ret = finish(&s, parse_text(&s, sb.buf, sb.len, path));
	sb_release(&sb);
	return ret;
}

void ibnet_release(struct ibnet *net)
{
	free(net->nodes);
	free(net->links);
	memset(net, 0, sizeof(*net));
}

/* ---- ibdiagnet2.lst: one link a line, "{ CA Ports:01 ... PN:01 } { SW ... PN:0c } PHY=4x LOG=ACT SPD=100" */

struct lst_end {
	bool sw;
	int nports, port;
	uint64_t node_guid, port_guid;
	unsigned lid;
	char desc[72];
};

/* The hex value after "KEY:" inside rec (up to its end); false when absent. */
static bool lst_hex(const char *rec, const char *end, const char *key, uint64_t *v)
{
	const char *p = strstr(rec, key);
	char *e;

	if (!p || p >= end)
		return false;
	p += strlen(key);
	*v = strtoull(p, &e, 16);
	return e > p;
}

/* One "{ TYPE ... }" record from *p; false when the line has none. */
static bool lst_record(const char **p, struct lst_end *r)
{
	const char *b = strchr(*p, '{'), *d, *de, *e;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	if (!b)
		return false;
	b++;
	while (*b == ' ')
		b++;
	if (!str_starts(b, "CA ") && !str_starts(b, "SW ") && !str_starts(b, "RT "))
		return false;
	r->sw = str_starts(b, "SW ");
	/* the description is a braced field of its own: the record ends at the '}' after it */
	d = strchr(b, '{');
	de = d ? strchr(d + 1, '}') : NULL;
	e = de ? strchr(de + 1, '}') : NULL;
	if (!d || !de || !e)
		return false;
	snprintf(r->desc, sizeof(r->desc), "%.*s", (int)(de - d - 1), d + 1);
	if (!lst_hex(b, d, "Ports:", &v) || !v || v > 255)
		return false;
	r->nports = (int)v;
	if (!lst_hex(b, d, "NodeGUID:", &r->node_guid) || !lst_hex(b, d, "PortGUID:", &r->port_guid))
		return false;
	if (lst_hex(de, e, "LID:", &v))
		r->lid = (unsigned)v;
	if (!lst_hex(de, e, "PN:", &v) || v > (uint64_t)r->nports)
		return false;
	r->port = (int)v;
	*p = e + 1;
	return true;
}

static int lst_node(struct ibnet *net, const struct lst_end *r)
{
	struct ibnet_node n = { 0 };

	for (size_t i = 0; i < net->nnodes; i++)
		if (net->nodes[i].guid == r->node_guid && net->nodes[i].is_switch == r->sw)
			return (int)i;
	snprintf(n.id, sizeof(n.id), "%s-%016" PRIx64, r->sw ? "S" : "H", r->node_guid);
	snprintf(n.desc, sizeof(n.desc), "%s", r->desc[0] ? r->desc : n.id);
	n.is_switch = r->sw;
	n.nports = r->nports;
	n.guid = r->node_guid;
	if (r->sw)
		n.lid = r->lid;
	net->nodes = xrealloc(net->nodes, (net->nnodes + 1) * sizeof(*net->nodes));
	net->nodes[net->nnodes] = n;
	return (int)net->nnodes++;
}

int ibnet_parse_lst(const char *text, size_t len, const char *name, struct ibnet *net, char *err, size_t errsz)
{
	struct rq_lines lines;
	char *l;
	int ret = 0;

	memset(net, 0, sizeof(*net));
	rq_lines_init(&lines, text, len);
	while (!ret && (l = rq_lines_next(&lines))) {
		const char *p = l, *q;
		struct lst_end e[2];
		struct ibnet_link k = { 0 };
		int a, b;

		if (!strchr(l, '{'))
			continue;	/* the "# This database file ..." header, blank lines */
		if (!lst_record(&p, &e[0]) || !lst_record(&p, &e[1])) {
			snprintf(err, errsz, "%s:%u: not a link line of ibdiagnet2.lst (\"{ CA|SW Ports:.. "
				 "NodeGUID:.. PortGUID:.. {desc} LID:.. PN:.. } { ... } PHY=.. SPD=..\")",
				 base_name(name), lines.no);
			ret = -EINVAL;
			break;
		}
		a = lst_node(net, &e[0]);
		b = lst_node(net, &e[1]);
		if ((!e[0].sw && !e[0].port) || (!e[1].sw && !e[1].port) ||
		    ibnet_link_at(net, a, e[0].port, NULL, NULL) || ibnet_link_at(net, b, e[1].port, NULL, NULL))
			continue;	/* a port listed twice: the first line holds */
		k.a = a;
		k.aport = e[0].port;
		k.b = b;
		k.bport = e[1].port;
		/* PHY=4x: the lanes; SPD=100: the lane rate in Gb/s, rounded (100 NDR, 50 HDR, 25 EDR, 14 FDR) */
		if ((q = strstr(p, "PHY=")))
			k.width = atoi(q + 4);
		if ((q = strstr(p, "SPD="))) {
			static const struct { double spd, gbps; } r[] = {
				{ 2.5, 2.5 }, { 5, 5.0 }, { 10, 10.0 }, { 14, 14.0625 }, { 25, 25.78125 },
				{ 50, 53.125 }, { 100, 106.25 }, { 200, 212.5 },
			};
			double v = strtod(q + 4, NULL);

			for (size_t i = 0; i < ARRAY_SIZE(r); i++)
				if (v > r[i].spd - 0.01 && v < r[i].spd + 0.01)
					k.gbps = r[i].gbps;
		}
		if (!e[0].sw) {
			k.alid = e[0].lid;
			k.apguid = e[0].port_guid;
		}
		if (!e[1].sw) {
			k.blid = e[1].lid;
			k.bpguid = e[1].port_guid;
		}
		snprintf(k.where, sizeof(k.where), "%s:%u", base_name(name), lines.no);
		net->links = xrealloc(net->links, (net->nlinks + 1) * sizeof(*net->links));
		net->links[net->nlinks++] = k;
	}
	rq_lines_release(&lines);
	if (!ret && !net->nnodes) {
		snprintf(err, errsz, "%s: no link line of ibdiagnet2.lst", base_name(name));
		ret = -EINVAL;
	}
	if (ret)
		ibnet_release(net);
	return ret;
}

bool ibnet_is_lst(const char *text, size_t len)
{
	const char *p = memmem(text, len, "{ CA Ports:", 11);

	if (!p)
		p = memmem(text, len, "{ SW Ports:", 11);
	return p && memmem(text, len, " PN:", 4);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool ibnet_has_dup_guid(const struct ibnet *net)
{
	uint64_t *g = xcalloc(net->nnodes + 1, sizeof(*g));
	size_t n = 0;
	bool dup = false;

	for (size_t i = 0; i < net->nnodes; i++)
		if (net->nodes[i].guid)
			g[n++] = net->nodes[i].guid;
	qsort(g, n, sizeof(*g), cmp_u64);
	for (size_t i = 1; i < n && !dup; i++)
		dup = g[i] == g[i - 1];
	free(g);
	return dup;
}

int ibnet_find_node(const struct ibnet *net, const char *name)
{
	for (size_t i = 0; i < net->nnodes; i++)
		if (!strcmp(net->nodes[i].id, name))
			return (int)i;
	for (size_t i = 0; i < net->nnodes; i++)
		if (!strcmp(net->nodes[i].desc, name))
			return (int)i;
	return -1;
}

const struct ibnet_link *ibnet_link_at(const struct ibnet *net, int n, int port, int *peer, int *peer_port)
{
	for (size_t i = 0; i < net->nlinks; i++) {
		const struct ibnet_link *k = &net->links[i];

		if (k->a == n && k->aport == port) {
			if (peer)
				*peer = k->b;
			if (peer_port)
				*peer_port = k->bport;
			return k;
		}
		if (k->b == n && k->bport == port) {
			if (peer)
				*peer = k->a;
			if (peer_port)
				*peer_port = k->aport;
			return k;
		}
	}
	return NULL;
}

/* Node ids and descriptions are tool text: rq_json_text() (parsers.h). */
json_t *ibnet_to_json(const struct ibnet *net)
{
	json_t *nodes = json_array(), *links = json_array();

	for (size_t i = 0; i < net->nnodes; i++) {
		const struct ibnet_node *n = &net->nodes[i];
		char g[24];

		snprintf(g, sizeof(g), "0x%016" PRIx64, n->guid);
		json_array_append_new(nodes, json_pack("{s:o, s:o, s:s, s:i, s:s}", "id", rq_json_text(n->id),
						       "desc", rq_json_text(n->desc), "type", n->is_switch ? "switch" : "ca",
						       "ports", n->nports, "guid", g));
	}
	for (size_t i = 0; i < net->nlinks; i++) {
		const struct ibnet_link *k = &net->links[i];

		json_array_append_new(links, json_pack("{s:o, s:i, s:o, s:i, s:i, s:f, s:s}",
						       "a", rq_json_text(net->nodes[k->a].desc), "aport", k->aport,
						       "b", rq_json_text(net->nodes[k->b].desc), "bport", k->bport,
						       "width", k->width, "gbps", k->gbps,
						       "speed", ibnet_speed_name(k->gbps)));
	}
	return json_pack("{s:o, s:o}", "nodes", nodes, "links", links);
}

static bool is_file(const char *p)
{
	return access(p, R_OK) == 0;
}

/* Try one candidate path (malloc'd, consumed); true and copied to out when readable. */
static bool try_path(char *cand, char *out, size_t outsz, struct sb *tried)
{
	bool ok = is_file(cand) && strlen(cand) < outsz;

	if (ok)
		snprintf(out, outsz, "%s", cand);
	else
		sb_addf(tried, "%s%s", tried->len ? ", " : "", cand);
	free(cand);
	return ok;
}

int ibnet_resolve(const char *name, const char *case_file, char *out, size_t outsz,
		  char *err, size_t errsz)
{
	const char *env = getenv("RQ_FABRICS");
	struct sb tried = SB_INIT;
	bool ok = false;

	if (!name || !*name) {
		snprintf(err, errsz, "no topology named");
		return -ENOENT;
	}
	if (name[0] == '/') {
		ok = try_path(xstrdup(name), out, outsz, &tried);
	} else if (strchr(name, '/')) {
		if (case_file && strchr(case_file, '/'))
			ok = try_path(xasprintf("%.*s/%s", (int)(strrchr(case_file, '/') - case_file),
						case_file, name), out, outsz, &tried);
		if (!ok)
			ok = try_path(xstrdup(name), out, outsz, &tried);
	} else {
		const char *ext = str_ends(name, ".net") ? "" : ".net";

		if (env && *env)
			ok = try_path(xasprintf("%s/%s%s", env, name, ext), out, outsz, &tried);
		/*
		 * The shipped topologies, where core/paths.c found the data (a
		 * checkout's root, PREFIX/share/rdmaqual): never a dir above the
		 * binary, never ./ (a planted fixtures/ there is anybody's).
		 */
		if (!ok && !rq_paths()->untrusted)
			ok = try_path(xasprintf("%s/fixtures/fabrics/%s%s", rq_paths()->datadir, name, ext),
				      out, outsz, &tried);
	}
	if (!ok)
		snprintf(err, errsz, "topology \"%s\" not found (tried %s)", name, tried.buf);
	sb_release(&tried);
	return ok ? 0 : -ENOENT;
}

/* ibsim's LinkWidthEnabled bit of a width in lanes (sim.h LINKWIDTH_*); 0: none. */
static int width_mask(int lanes)
{
	switch (lanes) {
	case 1: return 1;
	case 4: return 2;
	case 8: return 4;
	case 12: return 8;
	case 2: return 16;
	default: return 0;
	}
}

/* ibsim's LinkSpeedEnabled mask for a lane rate: every speed up to it (SDR 1, DDR 3, QDR 7). */
static int speed_mask(double gbps)
{
	if (gbps < 2.6)
		return 1;
	if (gbps < 5.1)
		return 3;
	return 7;
}

/*
 * ibsim 0.10's LinkSpeedExtEnabled (e=) for a lane rate beyond QDR, every
 * extended speed up to it: FDR 1, EDR 3, HDR 7 (sim.h LINKSPEEDEXT_*); NDR
 * is beyond 0.10 (HDR); FDR10 is a vendor speed no port option sets (0).
 */
static int speed_ext_mask(double gbps)
{
	if (gbps > 53.0)
		return 7;
	if (gbps > 25.0)
		return 3;
	if (gbps > 14.0)
		return 1;
	return 0;
}

void ibnet_write(const struct ibnet *net, const char *title, struct sb *out, struct sb *notes)
{
	unsigned faster = 0, moved = 0;
	char example[300] = "";
	uint64_t *written = xcalloc(net->nnodes + 1, sizeof(*written));
	size_t *base = xcalloc(net->nnodes + 1, sizeof(*base));
	int *at;

	/* (node, port) -> link, so that writing stays linear in ports */
	for (size_t i = 0; i < net->nnodes; i++)
		base[i + 1] = base[i] + (size_t)net->nodes[i].nports + 1;
	at = xcalloc(base[net->nnodes] + 1, sizeof(*at));
	for (size_t i = 0; i < base[net->nnodes]; i++)
		at[i] = -1;
	for (size_t i = 0; i < net->nlinks; i++) {
		at[base[net->links[i].a] + (size_t)net->links[i].aport] = (int)i;
		at[base[net->links[i].b] + (size_t)net->links[i].bport] = (int)i;
	}

	sb_addf(out, "# %s (written by rdmaqual)\n", title);
	/*
	 * The first CA first: ibsim attaches opensm and the tools to the
	 * file's first node (ibsim.c: set_default_port), and on the lab they
	 * run on a host, so discovery starts at an HCA as it does there.
	 */
	size_t ca0 = net->nnodes;

	for (size_t i = 0; i < net->nnodes && ca0 == net->nnodes; i++)
		if (!net->nodes[i].is_switch)
			ca0 = i;
	for (size_t o = 0; o <= net->nnodes; o++) {
		size_t i = o == 0 ? ca0 : o - 1;

		if (i >= net->nnodes || (o > 0 && i == ca0))
			continue;
		const struct ibnet_node *n = &net->nodes[i];
		uint64_t guid = n->guid;

		/*
		 * ibsim answers a CA port's GUID as node GUID + port number
		 * (sim_mad.c), a ConnectX-4 and later port's GUID is its node's:
		 * the port GUIDs are what partitions.conf, a QoS policy and the
		 * SM's own GUID name, so they are kept, and the node GUID moved
		 * to match the first cabled port that has one.
		 */
		for (int p = 1; !n->is_switch && p <= n->nports; p++) {
			int li = at[base[i] + (size_t)p];
			uint64_t pg;

			if (li < 0)
				continue;
			pg = net->links[li].a == (int)i && net->links[li].aport == p ? net->links[li].apguid :
			     net->links[li].bpguid;
			if (!pg || pg == guid + (uint64_t)p)
				continue;
			if (guid == n->guid) {
				guid = pg - (uint64_t)p;
				if (!moved++)
					snprintf(example, sizeof(example), "%s: 0x%016" PRIx64 " simulated as 0x%016" PRIx64
						 ", port %d keeping 0x%016" PRIx64, n->desc, n->guid, guid, p, pg);
			} else if (notes) {
				sb_addf(notes, "%s: port %d's GUID 0x%016" PRIx64 " is not kept: ibsim answers 0x%016" PRIx64
					"\n", n->desc, p, pg, guid + (uint64_t)p);
			}
		}
		written[i] = guid;
		if (guid)
			sb_addf(out, "\n%s=0x%016" PRIx64 "\n", n->is_switch ? "switchguid" : "caguid", guid);
		else
			sb_addc(out, '\n');
		sb_addf(out, "%s\t%d \"%s\"\t# \"%s\"\n", n->is_switch ? "Switch" : "Hca", n->nports, n->id, n->desc);
		for (int p = 0; p <= n->nports; p++) {
			int li = at[base[i] + (size_t)p], peer, pp, wm;
			const struct ibnet_link *k;

			if (li < 0)
				continue;
			k = &net->links[li];
			peer = k->a == (int)i && k->aport == p ? k->b : k->a;
			pp = k->a == (int)i && k->aport == p ? k->bport : k->aport;
			sb_addf(out, "[%d]\t\"%s\"[%d]", p, net->nodes[peer].id, pp);
			wm = width_mask(k->width);
			if (wm && wm != 2)
				sb_addf(out, " w=%d", wm);
			if (k->gbps > 0)
				sb_addf(out, " s=%d", speed_mask(k->gbps));
			if (speed_ext_mask(k->gbps))
				sb_addf(out, " e=%d", speed_ext_mask(k->gbps));
			sb_addc(out, '\n');
			if ((k->gbps > 54.0 || (k->gbps > 10.01 && !speed_ext_mask(k->gbps))) && (int)i == k->a &&
			    p == k->aport)
				faster++;
			if (k->width && !wm && notes && (int)i == k->a && p == k->aport)
				sb_addf(notes, "%s: %s port %d <-> %s port %d is %dX, which ibsim has no width for; simulated at 4X\n",
					k->where, n->desc, p, net->nodes[peer].desc, pp, k->width);
		}
	}
	/* a moved node GUID that another node has: the copy would hold a duplicate the lab does not */
	qsort(written, net->nnodes, sizeof(*written), cmp_u64);
	for (size_t i = 1; moved && notes && i < net->nnodes; i++)
		if (written[i] && written[i] == written[i - 1] && (i < 2 || written[i] != written[i - 2]))
			sb_addf(notes, "node GUID 0x%016" PRIx64 " twice in the copy, where a node GUID was moved onto "
				"another node's: the lab does not have that duplicate\n", written[i]);
	if (moved && notes)
		sb_addf(notes, "%u CA node GUID(s) moved so that each port keeps its port GUID (ibsim answers node "
			"GUID + port number; a ConnectX-4 or later port's GUID is its node's), e.g. %s\n", moved, example);
	if (faster && notes)
		sb_addf(notes, "%u link(s) at a speed ibsim 0.10 cannot set (NDR and beyond: simulated at HDR; "
			"FDR10: at QDR): judge them against this file, not the original\n", faster);
	free(written);
	free(at);
	free(base);
}
