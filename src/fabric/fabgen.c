/* SPDX-License-Identifier: MIT */
/*
 * Fabric specs to ibsim net files (see fabgen.h).  The fabric is built as a
 * model (nodes, cables) once; the plan is written from it, then the faults
 * are applied to a copy and the simulated file written from that, so the
 * two differ exactly by the faults.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/fabgen.h"
#include "core/util.h"

#define SW_GUID_BASE 0x0002c90200000000ULL
#define CA_GUID_BASE 0x0002c90300000000ULL

struct gnode {
	char id[32], desc[40];
	bool sw;
	int nports;
	uint64_t guid;
};

struct gcable {
	int a, ap, b, bp;
	int wmask, smask;	/* ibsim enable masks on both ends; 0: the file default */
	bool gone;
};

struct model {
	struct gnode *n;
	int nn;
	struct gcable *c;
	int nc, capc;
	int speed;		/* the file's speed= mask */
	int speedext;		/* its extspeed= mask (FDR, EDR, HDR); 0 none */
	char dup_guid_of[32];	/* dup-guid: node id whose GUID is replaced */
	uint64_t dup_guid;
	char no_sl2vl_of[32];	/* no-sl2vl: node id whose port 1 drops SL-to-VL MADs */
};

struct spec {
	char type[16];
	int leaves, spines, hpl, ports, links, hosts, rails;
	int speed, speedext;
	unsigned faults;
};

enum {
	F_MISSING = 1, F_SWAPPED = 2, F_1X = 4, F_SLOW = 8, F_DUP_GUID = 16, F_DUP_DESC = 32,
	F_DUP_PORT_GUID = 64, F_NO_SL2VL = 128,
};

static const char *const fault_names[] = { "missing", "swapped", "1x", "slow", "dup-guid", "dup-desc",
					   "dup-port-guid", "no-sl2vl" };

bool fabgen_is_spec(const char *s)
{
	return s && (str_starts(s, "fat-tree:") || str_starts(s, "rail:") || str_starts(s, "ring:"));
}

static int bad(char *err, size_t errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errsz, "fabric spec: ");

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < errsz)
		vsnprintf(err + n, errsz - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_spec(const char *text, struct spec *s, char *err, size_t errsz)
{
	const char *colon = strchr(text, ':');
	char *copy, *save = NULL;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	s->ports = 36;
	s->links = 1;
	s->rails = 2;
	s->speed = 7;
	s->leaves = s->spines = s->hpl = s->hosts = -1;
	if (!colon || (size_t)(colon - text) >= sizeof(s->type))
		return bad(err, errsz, "\"%s\" is not TYPE:key=value,... (fat-tree, rail, ring)", text);
	memcpy(s->type, text, (size_t)(colon - text));
	if (strcmp(s->type, "fat-tree") && strcmp(s->type, "rail") && strcmp(s->type, "ring"))
		return bad(err, errsz, "unknown fabric type \"%s\" (fat-tree, rail, ring)", s->type);
	copy = xstrdup(colon + 1);
	for (char *kv = strtok_r(copy, ",", &save); kv && !ret; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '='), *end;
		long v;

		kv = strtrim(kv);
		if (!eq) {
			ret = bad(err, errsz, "\"%s\" is not key=value", kv);
			break;
		}
		*eq = '\0';
		const char *val = strtrim(eq + 1);

		if (!strcmp(kv, "fault")) {
			size_t i;

			for (i = 0; i < ARRAY_SIZE(fault_names); i++)
				if (!strcmp(val, fault_names[i]))
					break;
			if (i == ARRAY_SIZE(fault_names))
				ret = bad(err, errsz, "unknown fault \"%s\" (missing, swapped, 1x, slow, dup-guid, "
					  "dup-desc, dup-port-guid, no-sl2vl)", val);
			else
				s->faults |= 1u << i;
			continue;
		}
		if (!strcmp(kv, "speed")) {
			if (!strcasecmp(val, "SDR"))
				s->speed = 1;
			else if (!strcasecmp(val, "DDR"))
				s->speed = 3;
			else if (!strcasecmp(val, "QDR"))
				s->speed = 7;
			/* ibsim 0.10's extended speeds (sim.h LINKSPEEDEXT_*), QDR enabled below them */
			else if (!strcasecmp(val, "FDR"))
				s->speed = 7, s->speedext = 1;
			else if (!strcasecmp(val, "EDR"))
				s->speed = 7, s->speedext = 3;
			else if (!strcasecmp(val, "HDR"))
				s->speed = 7, s->speedext = 7;
			else
				ret = bad(err, errsz, "speed \"%s\": ibsim 0.10 simulates SDR, DDR, QDR, FDR, EDR or HDR", val);
			continue;
		}
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || end == val || *end || v < 0 || v > 100000) {
			ret = bad(err, errsz, "%s=%s is not a count", kv, val);
			break;
		}
		if (!strcmp(kv, "leaves"))
			s->leaves = (int)v;
		else if (!strcmp(kv, "spines"))
			s->spines = (int)v;
		else if (!strcmp(kv, "hosts-per-leaf"))
			s->hpl = (int)v;
		else if (!strcmp(kv, "ports"))
			s->ports = (int)v;
		else if (!strcmp(kv, "links"))
			s->links = (int)v;
		else if (!strcmp(kv, "hosts") && !strcmp(s->type, "rail"))
			s->hosts = (int)v;
		else if (!strcmp(kv, "rails") && !strcmp(s->type, "rail"))
			s->rails = (int)v;
		else if (!strcmp(kv, "switches") && !strcmp(s->type, "ring"))
			s->leaves = (int)v;
		else if (!strcmp(kv, "hosts-per-switch") && !strcmp(s->type, "ring"))
			s->hpl = (int)v;
		else
			ret = bad(err, errsz, "unknown key \"%s\" for %s (%s, ports, speed, fault)", kv, s->type,
				  !strcmp(s->type, "rail") ? "hosts, rails, spines" :
				  !strcmp(s->type, "ring") ? "switches, hosts-per-switch" : "leaves, spines, hosts-per-leaf, links");
	}
	free(copy);
	return ret;
}

static int add_node(struct model *m, bool sw, int nports, const char *id, const char *desc)
{
	struct gnode *n = &m->n[m->nn];

	snprintf(n->id, sizeof(n->id), "%s", id);
	snprintf(n->desc, sizeof(n->desc), "%s", desc);
	n->sw = sw;
	n->nports = nports;
	return m->nn++;
}

static void add_cable(struct model *m, int a, int ap, int b, int bp)
{
	if (m->nc == m->capc) {
		m->capc = m->capc ? 2 * m->capc : 256;
		m->c = xrealloc(m->c, (size_t)m->capc * sizeof(*m->c));
	}
	m->c[m->nc++] = (struct gcable){ .a = a, .ap = ap, .b = b, .bp = bp };
}

static int digits(int n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d < 2 ? 2 : d;
}

/* Limits of the switch radix and of ibsim; 0 or -EINVAL naming the one exceeded. */
static int check_limits(int switches, int cas, int ports, char *err, size_t errsz)
{
	int total_ports = switches * (ports + 1) + cas;

	if (switches > FABGEN_MAX_SWITCHES)
		return bad(err, errsz, "%d switches, beyond ibsim's %d", switches, FABGEN_MAX_SWITCHES);
	if (switches + cas > FABGEN_MAX_NODES)
		return bad(err, errsz, "%d nodes, beyond ibsim's %d", switches + cas, FABGEN_MAX_NODES);
	if (total_ports > FABGEN_MAX_PORTS)
		return bad(err, errsz, "%d ports, beyond ibsim's %d", total_ports, FABGEN_MAX_PORTS);
	return 0;
}

/* leaf index -> node, spine index -> node, in m; uplinks from port first_up. */
static int build_fat_tree(const struct spec *s, struct model *m, char *err, size_t errsz)
{
	int hw, sw_w, ret;
	char id[32], desc[40];

	if (s->leaves < 1 || s->hpl < 1 || s->spines < 0)
		return bad(err, errsz, "fat-tree needs leaves>=1, spines>=0 and hosts-per-leaf>=1");
	if (s->spines == 0 && s->leaves > 1)
		return bad(err, errsz, "%d leaves and no spine: the leaves are not connected", s->leaves);
	if (s->links < 1)
		return bad(err, errsz, "links=%d: at least one cable from each leaf to each spine", s->links);
	if (s->hpl + s->spines * s->links > s->ports)
		return bad(err, errsz, "a leaf needs %d ports (%d hosts + %d spines x %d links), it has %d",
			   s->hpl + s->spines * s->links, s->hpl, s->spines, s->links, s->ports);
	if (s->spines && s->leaves * s->links > s->ports)
		return bad(err, errsz, "a spine needs %d ports (%d leaves x %d links), it has %d",
			   s->leaves * s->links, s->leaves, s->links, s->ports);
	ret = check_limits(s->leaves + s->spines, s->leaves * s->hpl, s->ports, err, errsz);
	if (ret)
		return ret;
	m->n = xcalloc((size_t)(s->leaves + s->spines + s->leaves * s->hpl), sizeof(*m->n));
	hw = digits(s->leaves * s->hpl);
	sw_w = digits(s->leaves > s->spines ? s->leaves : s->spines);
	for (int l = 0; l < s->leaves; l++) {
		snprintf(id, sizeof(id), "leaf%0*d", sw_w & 7, l + 1);
		add_node(m, true, (int)s->ports, id, id);
	}
	for (int p = 0; p < s->spines; p++) {
		snprintf(id, sizeof(id), "spine%0*d", sw_w & 7, p + 1);
		add_node(m, true, (int)s->ports, id, id);
	}
	for (int l = 0; l < s->leaves; l++)
		for (int h = 0; h < s->hpl; h++) {
			int hn = l * s->hpl + h + 1;

			snprintf(id, sizeof(id), "h%0*d", hw & 7, hn);
			snprintf(desc, sizeof(desc), "%s HCA-1", id);
			add_cable(m, add_node(m, false, 1, id, desc), 1, (int)l, (int)h + 1);
		}
	for (int l = 0; l < s->leaves; l++)
		for (int p = 0; p < s->spines; p++)
			for (int k = 0; k < s->links; k++)
				add_cable(m, (int)l, (int)(s->hpl + p * s->links + k + 1),
					  (int)(s->leaves + p), (int)(l * s->links + k + 1));
	return 0;
}

static int build_rail(const struct spec *s, struct model *m, char *err, size_t errsz)
{
	int down = s->ports / 2, lpr, leaves, links, hw, sw_w, ret;
	char id[32], desc[40];

	if (s->hosts < 1 || s->rails < 1 || s->spines < 1)
		return bad(err, errsz, "rail needs hosts>=1, rails>=1 and spines>=1");
	if (s->ports < 4 || s->ports > 64)
		return bad(err, errsz, "ports=%d: a switch has 4 to 64 ports", s->ports);
	lpr = (s->hosts + down - 1) / down;
	leaves = lpr * s->rails;
	if (down % s->spines)
		return bad(err, errsz, "%d uplinks a leaf do not spread evenly over %d spines", down, s->spines);
	links = down / s->spines;
	if (leaves * links > s->ports)
		return bad(err, errsz, "a spine needs %d ports (%d leaves x %d links), it has %d",
			   leaves * links, leaves, links, s->ports);
	ret = check_limits(leaves + s->spines, s->hosts * s->rails, s->ports, err, errsz);
	if (ret)
		return (int)ret;
	m->n = xcalloc((size_t)(leaves + s->spines + s->hosts * s->rails), sizeof(*m->n));
	hw = digits(s->hosts);
	sw_w = digits(lpr > s->spines ? lpr : s->spines);
	for (int r = 0; r < s->rails; r++)
		for (int l = 0; l < lpr; l++) {
			snprintf(id, sizeof(id), "rail%d-leaf%0*d", r + 1, (int)(sw_w & 7), l + 1);
			add_node(m, true, (int)s->ports, id, id);
		}
	for (int p = 0; p < s->spines; p++) {
		snprintf(id, sizeof(id), "spine%0*d", (int)(sw_w & 7), p + 1);
		add_node(m, true, (int)s->ports, id, id);
	}
	for (int h = 0; h < s->hosts; h++)
		for (int r = 0; r < s->rails; r++) {
			int leaf = (int)(r * lpr + h / down);

			snprintf(id, sizeof(id), "h%0*dr%d", (int)(hw & 7), h + 1, r + 1);
			snprintf(desc, sizeof(desc), "h%0*d HCA-%d", (int)(hw & 7), h + 1, r + 1);
			add_cable(m, add_node(m, false, 1, id, desc), 1, leaf, (int)(h % down) + 1);
		}
	for (int l = 0; l < leaves; l++)
		for (int p = 0; p < s->spines; p++)
			for (int k = 0; k < links; k++)
				add_cable(m, (int)l, (int)(down + p * links + k + 1), (int)(leaves + p),
					  (int)(l * links + k + 1));
	return 0;
}

/* Switches in a ring, each with its hosts: a topology shortest paths deadlock on. */
static int build_ring(const struct spec *s, struct model *m, char *err, size_t errsz)
{
	char id[32], desc[40];
	int ret, w;

	if (s->leaves < 3 || s->hpl < 1)
		return bad(err, errsz, "ring needs switches>=3 and hosts-per-switch>=1");
	if (s->hpl + 2 > s->ports)
		return bad(err, errsz, "a ring switch needs %d ports (%d hosts + 2 neighbours), it has %d",
			   s->hpl + 2, s->hpl, s->ports);
	ret = check_limits(s->leaves, s->leaves * s->hpl, s->ports, err, errsz);
	if (ret)
		return ret;
	m->n = xcalloc((size_t)(s->leaves + s->leaves * s->hpl), sizeof(*m->n));
	w = digits(s->leaves * s->hpl);
	for (int i = 0; i < s->leaves; i++) {
		snprintf(id, sizeof(id), "sw%0*d", digits(s->leaves) & 7, i + 1);
		add_node(m, true, s->ports, id, id);
	}
	for (int i = 0; i < s->leaves; i++)
		for (int h = 0; h < s->hpl; h++) {
			snprintf(id, sizeof(id), "h%0*d", w & 7, i * s->hpl + h + 1);
			snprintf(desc, sizeof(desc), "%s HCA-1", id);
			add_cable(m, add_node(m, false, 1, id, desc), 1, i, h + 1);
		}
	for (int i = 0; i < s->leaves; i++)
		add_cable(m, i, s->hpl + 1, (i + 1) % s->leaves, s->hpl + 2);
	return 0;
}

static void assign_guids(struct model *m)
{
	uint64_t sw = 0, ca = 0;

	for (int i = 0; i < m->nn; i++)
		m->n[i].guid = m->n[i].sw ? SW_GUID_BASE + ++sw : CA_GUID_BASE + (++ca << 4);
}

/* The cable at node n port p; -1 when none. */
static int cable_at(const struct model *m, int n, int p)
{
	for (int i = 0; i < m->nc; i++)
		if (!m->c[i].gone && ((m->c[i].a == n && m->c[i].ap == p) || (m->c[i].b == n && m->c[i].bp == p)))
			return i;
	return -1;
}

static int first_ca(const struct model *m, int skip)
{
	for (int i = 0; i < m->nn; i++)
		if (!m->n[i].sw && skip-- == 0)
			return i;
	return -1;
}

static int last_ca(const struct model *m)
{
	for (int i = m->nn - 1; i >= 0; i--)
		if (!m->n[i].sw)
			return i;
	return -1;
}

/* Uplinks of leaf 0: its cables to another switch, in port order. */
static int uplink(const struct model *m, int leaf, bool last)
{
	int found = -1;

	for (int p = 1; p <= m->n[leaf].nports; p++) {
		int c = cable_at(m, leaf, p);

		if (c >= 0 && m->n[m->c[c].a].sw && m->n[m->c[c].b].sw) {
			found = c;
			if (!last)
				break;
		}
	}
	return found;
}

static void name_cable(const struct model *m, const struct gcable *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s port %d <-> %s port %d", m->n[c->a].desc, c->ap, m->n[c->b].desc, c->bp);
}

static int plant(const struct spec *s, struct model *m, struct fabgen *g, char *err, size_t errsz)
{
	char what[160];
	int leaf0 = 0, leafs = 0, c;

	for (int i = 0; i < m->nn; i++)
		if (m->n[i].sw && cable_at(m, i, 1) >= 0 && !m->n[m->c[cable_at(m, i, 1)].a].sw)
			leafs++;
	if (s->faults & F_SLOW) {
		c = uplink(m, leaf0, true);
		if (c < 0 || (s->faults & F_MISSING && uplink(m, leaf0, false) == c))
			return bad(err, errsz, "fault=slow needs a second uplink on the first leaf");
		if (s->speed == 1)
			return bad(err, errsz, "fault=slow on an SDR fabric: nothing is slower");
		m->c[c].smask = 1;
		name_cable(m, &m->c[c], what, sizeof(what));
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]), "slow: %s trains at SDR", what);
	}
	if (s->faults & F_MISSING) {
		c = uplink(m, leaf0, false);
		if (c < 0)
			return bad(err, errsz, "fault=missing needs an uplink (spines>=1)");
		name_cable(m, &m->c[c], what, sizeof(what));
		m->c[c].gone = true;
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]), "missing: cable %s not cabled", what);
	}
	if (s->faults & F_SWAPPED) {
		int leaf = leafs > 1 ? 1 : 0, c1 = cable_at(m, leaf, 1), c2 = cable_at(m, leaf, 2);

		if (c1 < 0 || c2 < 0 || m->n[m->c[c1].a].sw || m->n[m->c[c2].a].sw)
			return bad(err, errsz, "fault=swapped needs two hosts on a leaf");
		int h1 = m->c[c1].a, h2 = m->c[c2].a;

		m->c[c1].a = h2;
		m->c[c2].a = h1;
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]),
			 "swapped: %s is on %s port 1 and %s on port 2 (planned the other way round)",
			 m->n[h2].desc, m->n[leaf].desc, m->n[h1].desc);
	}
	if (s->faults & F_1X) {
		int h = last_ca(m);

		c = cable_at(m, h, 1);
		m->c[c].wmask = 1;
		name_cable(m, &m->c[c], what, sizeof(what));
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]), "1x: %s trains at 1X", what);
	}
	if (s->faults & F_DUP_DESC) {
		int a = first_ca(m, 0), b = first_ca(m, 1);

		if (b < 0)
			return bad(err, errsz, "fault=dup-desc needs two HCAs");
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]), "dup-desc: %s (%s) is described \"%s\"",
			 m->n[b].id, m->n[b].desc, m->n[a].desc);
		memcpy(m->n[b].desc, m->n[a].desc, sizeof(m->n[b].desc));
	}
	if (s->faults & F_DUP_GUID) {
		int a = first_ca(m, 0), b = last_ca(m);

		if (a == b)
			return bad(err, errsz, "fault=dup-guid needs two HCAs");
		snprintf(m->dup_guid_of, sizeof(m->dup_guid_of), "%s", m->n[b].id);
		m->dup_guid = m->n[a].guid;
		g->sm_blocked = true;
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]),
			 "dup-guid: %s has the node GUID 0x%016" PRIx64 " of %s", m->n[b].desc, m->n[a].guid,
			 m->n[a].desc);
	}
	if (s->faults & F_DUP_PORT_GUID) {
		/*
		 * ibsim gives port P of a node the GUID node GUID + P (its Guid
		 * command on a port is not what NodeInfo answers), so the second
		 * HCA becomes a two-port HCA one below the first's node GUID,
		 * cabled at its port 2: that port's GUID is the first HCA's port 1.
		 */
		int a = first_ca(m, 0), b = first_ca(m, 1);

		if (b < 0 || (s->faults & F_DUP_GUID && b == last_ca(m)))
			return bad(err, errsz, "fault=dup-port-guid needs two HCAs (three with dup-guid)");
		c = cable_at(m, b, 1);
		m->n[b].guid = m->n[a].guid - 1;
		m->n[b].nports = 2;
		if (m->c[c].a == b)
			m->c[c].ap = 2;
		else
			m->c[c].bp = 2;
		g->sm_blocked = true;
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]),
			 "dup-port-guid: %s port 2 has the port GUID 0x%016" PRIx64 " of %s port 1", m->n[b].desc,
			 m->n[a].guid + 1, m->n[a].desc);
	}
	if (s->faults & F_NO_SL2VL) {
		int h = last_ca(m);

		/* ibsim's Error command: port 1 drops every SLtoVLMappingTable (0x17) MAD */
		snprintf(m->no_sl2vl_of, sizeof(m->no_sl2vl_of), "%s", m->n[h].id);
		snprintf(g->fault[g->nfaults++], sizeof(g->fault[0]),
			 "no-sl2vl: %s port 1 answers no SL-to-VL mapping MAD (the SM cannot set its table)",
			 m->n[h].desc);
	}
	return 0;
}

static void write_net(const struct model *m, const struct spec *s, const char *spec_text,
		      const char *what, struct sb *out)
{
	sb_addf(out, "# %s of %s (written by rdmaqual)\n", what, spec_text);
	sb_addf(out, "speed=%d\n", m->speed);
	if (m->speedext)
		sb_addf(out, "extspeed=%d\n", m->speedext);
	/*
	 * The first HCA first: ibsim attaches its clients (opensm, the tools)
	 * to the file's first node, and on a real fabric discovery starts at a
	 * host's HCA, never at a switch (ibsim.c: set_default_port).
	 */
	int ca0 = first_ca(m, 0);

	for (int o = -1; o < m->nn; o++) {
		int i = o < 0 ? ca0 : o;
		const struct gnode *n;

		if (i < 0 || (o >= 0 && i == ca0))
			continue;
		n = &m->n[i];

		sb_addf(out, "\n%s=0x%016" PRIx64 "\n", n->sw ? "switchguid" : "caguid", n->guid);
		sb_addf(out, "%s\t%d \"%s\"\t# \"%s\"\n", n->sw ? "Switch" : "Hca", n->nports, n->id, n->desc);
		for (int p = 1; p <= n->nports; p++) {
			int c = cable_at(m, i, p);
			const struct gcable *k;
			bool a;

			if (c < 0)
				continue;
			k = &m->c[c];
			a = k->a == i && k->ap == p;
			sb_addf(out, "[%d]\t\"%s\"[%d]", p, m->n[a ? k->b : k->a].id, a ? k->bp : k->ap);
			if (k->wmask)
				sb_addf(out, " w=%d", k->wmask);
			if (k->smask)
				sb_addf(out, " s=%d%s", k->smask, m->speedext ? " e=0" : "");
			sb_addc(out, '\n');
		}
	}
	if (m->dup_guid_of[0])
		sb_addf(out, "\ndo Guid \"%s\" 0x%016" PRIx64 "\n", m->dup_guid_of, m->dup_guid);
	if (m->no_sl2vl_of[0])
		sb_addf(out, "\ndo Error \"%s\"[1] 100 0x17\n", m->no_sl2vl_of);
	(void)s;
}

int fabgen_build(const char *spec, struct fabgen *g, char *err, size_t errsz)
{
	struct spec s;
	struct model m = { 0 };
	int ret;

	memset(g, 0, sizeof(*g));
	sb_init(&g->sim);
	sb_init(&g->planned);
	ret = parse_spec(spec, &s, err, errsz);
	if (!ret && (s.ports < 4 || s.ports > 64))
		ret = bad(err, errsz, "ports=%d: a switch has 4 to 64 ports", s.ports);
	if (!ret)
		ret = !strcmp(s.type, "fat-tree") ? build_fat_tree(&s, &m, err, errsz) :
		      !strcmp(s.type, "ring") ? build_ring(&s, &m, err, errsz) : build_rail(&s, &m, err, errsz);
	if (ret)
		goto out;
	m.speed = s.speed;
	m.speedext = s.speedext;
	assign_guids(&m);
	for (int i = 0; i < m.nn; i++) {
		if (m.n[i].sw)
			g->switches++;
		else
			g->cas++;
	}
	g->hosts = !strcmp(s.type, "rail") ? (unsigned)s.hosts : g->cas;
	g->links = (unsigned)m.nc;
	write_net(&m, &s, spec, "plan", &g->planned);
	ret = plant(&s, &m, g, err, errsz);
	if (ret)
		goto out;
	write_net(&m, &s, spec, "simulated fabric", &g->sim);
out:
	free(m.n);
	free(m.c);
	if (ret)
		fabgen_release(g);
	return ret;
}

void fabgen_release(struct fabgen *g)
{
	sb_release(&g->sim);
	sb_release(&g->planned);
}
