/* SPDX-License-Identifier: MIT */
/* Routing from the forwarding tables (see routing.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/routing.h"
#include "core/util.h"

#define NO_ROUTE 0xff

enum { ST_UNKNOWN, ST_OK, ST_BAD, ST_STACK };

struct rt {
	const struct ibnet *t;
	size_t *base;			/* (node, port) -> slot: base[node] + port */
	int *peer, *peer_port;		/* per slot; -1 none */
	int *sw_of;			/* node -> switch number, -1 for a CA */
	int *sw_node;			/* switch number -> node */
	size_t nsw;
	unsigned maxlid;
	uint8_t *lft;			/* nsw x (maxlid + 1) out ports */
	int *owner, *owner_port;	/* LID -> CA node and port; -1 none */
	int *rank;			/* switch -> hops from the nearest CA-bearing switch */
};

struct edge {
	uint32_t from, to;		/* channel = slot of the switch port it leaves by */
	uint16_t dlid;
};

static uint8_t lft_at(const struct rt *x, int sw, unsigned lid)
{
	return lid <= x->maxlid ? x->lft[(size_t)sw * (x->maxlid + 1) + lid] : NO_ROUTE;
}

static size_t slot(const struct rt *x, int node, int port)
{
	return x->base[node] + (size_t)port;
}

static void add_problem(struct rt_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_problem(struct rt_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nproblems < RT_MAX_PROBLEMS) {
		va_start(ap, fmt);
		vsnprintf(r->problem[r->nproblems], sizeof(r->problem[0]), fmt, ap);
		va_end(ap);
	}
	r->nproblems++;
}

static const char *name(const struct rt *x, int node)
{
	return x->t->nodes[node].desc;
}

/* The CA port that owns lid, named ("h01 HCA-1 port 1 (LID 7)"). */
static void dest_name(const struct rt *x, unsigned lid, char *buf, size_t size)
{
	snprintf(buf, size, "%s port %d (LID %u)", name(x, x->owner[lid]), x->owner_port[lid], lid);
}

static int build(struct rt *x, const struct ibnet *t, const struct ib_lfts *l, struct rt_report *r,
		 char *err, size_t errsz)
{
	size_t nslots;

	memset(x, 0, sizeof(*x));
	x->t = t;
	x->base = xcalloc(t->nnodes + 1, sizeof(*x->base));
	for (size_t i = 0; i < t->nnodes; i++)
		x->base[i + 1] = x->base[i] + (size_t)t->nodes[i].nports + 1;
	nslots = x->base[t->nnodes];
	x->peer = xcalloc(nslots + 1, sizeof(int));
	x->peer_port = xcalloc(nslots + 1, sizeof(int));
	for (size_t i = 0; i < nslots; i++)
		x->peer[i] = -1;
	x->sw_of = xcalloc(t->nnodes + 1, sizeof(int));
	x->sw_node = xcalloc(t->nnodes + 1, sizeof(int));
	for (size_t i = 0; i < t->nnodes; i++) {
		x->sw_of[i] = -1;
		if (t->nodes[i].is_switch) {
			x->sw_node[x->nsw] = (int)i;
			x->sw_of[i] = (int)x->nsw++;
		}
	}
	/* LIDs of the CA ports: the highest decides the table width */
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];
		unsigned hi_a = k->alid + (1u << k->almc) - 1, hi_b = k->blid + (1u << k->blmc) - 1;

		x->peer[slot(x, k->a, k->aport)] = k->b;
		x->peer_port[slot(x, k->a, k->aport)] = k->bport;
		x->peer[slot(x, k->b, k->bport)] = k->a;
		x->peer_port[slot(x, k->b, k->bport)] = k->aport;
		if (k->alid && !t->nodes[k->a].is_switch && hi_a > x->maxlid)
			x->maxlid = hi_a;
		if (k->blid && !t->nodes[k->b].is_switch && hi_b > x->maxlid)
			x->maxlid = hi_b;
	}
	if (!x->maxlid || x->maxlid > 0xbfff) {
		snprintf(err, errsz, x->maxlid ? "CA LIDs beyond the unicast range (0xbfff)"
			 : "no CA port with a LID in the topology (ibnetdiscover of a subnet without an SM?)");
		return -EINVAL;
	}
	x->owner = xcalloc(x->maxlid + 1, sizeof(int));
	x->owner_port = xcalloc(x->maxlid + 1, sizeof(int));
	for (unsigned i = 0; i <= x->maxlid; i++)
		x->owner[i] = -1;
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		for (int end = 0; end < 2; end++) {
			int n = end ? k->b : k->a, p = end ? k->bport : k->aport, lmc = end ? k->blmc : k->almc;
			unsigned lid = end ? k->blid : k->alid;

			if (!lid || t->nodes[n].is_switch)
				continue;
			for (unsigned j = 0; j < (1u << lmc); j++) {
				x->owner[lid + j] = n;
				x->owner_port[lid + j] = p;
			}
		}
	}
	/* the tables, by switch GUID */
	x->lft = xmalloc(x->nsw * (x->maxlid + 1) + 1);
	memset(x->lft, NO_ROUTE, x->nsw * (x->maxlid + 1) + 1);
	for (size_t s = 0; s < x->nsw; s++) {
		const struct ibnet_node *n = &t->nodes[x->sw_node[s]];
		const struct ib_lft *f = NULL;

		for (size_t j = 0; j < l->nsw && !f; j++)
			if (l->sw[j].guid == n->guid)
				f = &l->sw[j];
		if (!f) {
			if (!r->unmatched_lfts++)
				snprintf(r->unmatched, sizeof(r->unmatched), "%s (GUID 0x%016" PRIx64 ") has no forwarding table",
					 n->desc, n->guid);
			continue;
		}
		for (size_t j = 0; j < f->n; j++) {
			const struct ib_lft_entry *e = &l->e[f->first + j];

			if (e->lid <= x->maxlid)
				x->lft[s * (x->maxlid + 1) + e->lid] = e->port;
		}
	}
	/* ranks: hops from the switches CAs hang on */
	x->rank = xcalloc(x->nsw + 1, sizeof(int));
	int *queue = xcalloc(x->nsw + 1, sizeof(int));
	size_t qh = 0, qt = 0;

	for (size_t s = 0; s < x->nsw; s++) {
		int node = x->sw_node[s];

		x->rank[s] = -1;
		for (int p = 1; p <= t->nodes[node].nports; p++) {
			int pr = x->peer[slot(x, node, p)];

			if (pr >= 0 && !t->nodes[pr].is_switch) {
				x->rank[s] = 0;
				queue[qt++] = (int)s;
				break;
			}
		}
	}
	while (qh < qt) {
		int s = queue[qh++], node = x->sw_node[s];

		for (int p = 1; p <= t->nodes[node].nports; p++) {
			int pr = x->peer[slot(x, node, p)];

			if (pr >= 0 && x->sw_of[pr] >= 0 && x->rank[x->sw_of[pr]] < 0) {
				x->rank[x->sw_of[pr]] = x->rank[s] + 1;
				queue[qt++] = x->sw_of[pr];
			}
		}
	}
	free(queue);
	r->switches = x->nsw;
	for (size_t i = 0; i < t->nlinks; i++) {
		const struct ibnet_link *k = &t->links[i];

		r->sources += k->alid && !t->nodes[k->a].is_switch && t->nodes[k->b].is_switch;
		r->sources += k->blid && !t->nodes[k->b].is_switch && t->nodes[k->a].is_switch;
	}
	return 0;
}

static void release(struct rt *x)
{
	free(x->base);
	free(x->peer);
	free(x->peer_port);
	free(x->sw_of);
	free(x->sw_node);
	free(x->lft);
	free(x->owner);
	free(x->owner_port);
	free(x->rank);
}

/*
 * Resolve switch s's forwarding of lid, and every switch on the way,
 * into st[] (ST_OK / ST_BAD) and hops[]; a problem is named once where it
 * is (the switch whose entry is wrong).
 */
static void resolve(const struct rt *x, unsigned lid, int s, uint8_t *st, unsigned *hops, int *stack,
		    struct rt_report *r)
{
	size_t depth = 0;
	int cur = s;
	uint8_t result = ST_OK;
	unsigned h = 0;
	char d[128];

	while (st[cur] == ST_UNKNOWN) {
		int node = x->sw_node[cur], pr;
		uint8_t o = lft_at(x, cur, lid);

		st[cur] = ST_STACK;
		stack[depth++] = cur;
		if (o == NO_ROUTE) {
			dest_name(x, lid, d, sizeof(d));
			add_problem(r, "hole: %s has no route to %s", name(x, node), d);
			result = ST_BAD;
			break;
		}
		if (o == 0 || o > x->t->nodes[node].nports || (pr = x->peer[slot(x, node, o)]) < 0) {
			dest_name(x, lid, d, sizeof(d));
			add_problem(r, "dead end: %s routes %s out of port %u, %s", name(x, node), d, o,
				    o == 0 ? "itself" : "which is not cabled");
			result = ST_BAD;
			break;
		}
		if (x->sw_of[pr] < 0) {
			if (pr != x->owner[lid] || x->peer_port[slot(x, node, o)] != x->owner_port[lid]) {
				dest_name(x, lid, d, sizeof(d));
				add_problem(r, "misroute: %s port %u delivers %s to %s port %d", name(x, node), o, d,
					    name(x, pr), x->peer_port[slot(x, node, o)]);
				result = ST_BAD;
			}
			h = 0;
			break;
		}
		cur = x->sw_of[pr];
	}
	if (depth && st[cur] == ST_STACK && stack[depth - 1] != cur) {
		/* came back to a switch of this walk: a loop */
		dest_name(x, lid, d, sizeof(d));
		add_problem(r, "loop: traffic to %s circles through %s and %s", d, name(x, x->sw_node[cur]),
			    name(x, x->sw_node[stack[depth - 1]]));
		result = ST_BAD;
	} else if (depth && st[cur] == ST_STACK && result == ST_OK && lft_at(x, cur, lid) != NO_ROUTE &&
		   x->sw_of[x->peer[slot(x, x->sw_node[cur], lft_at(x, cur, lid))]] >= 0) {
		/* the last switch pointed at itself through a cable to itself: a loop too */
		dest_name(x, lid, d, sizeof(d));
		add_problem(r, "loop: %s sends %s back to itself", name(x, x->sw_node[cur]), d);
		result = ST_BAD;
	} else if (st[cur] == ST_OK || st[cur] == ST_BAD) {
		result = st[cur];
		h = hops[cur];
	}
	while (depth) {
		int sw = stack[--depth];

		st[sw] = result;
		hops[sw] = ++h;
	}
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return 0;
}

/* "leaf01/19 -> spine01/1" style name of a channel (the port it leaves by). */
static void channel_name(const struct rt *x, uint32_t ch, char *buf, size_t size)
{
	size_t lo = 0, hi = x->t->nnodes;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (x->base[mid] <= ch)
			lo = mid;
		else
			hi = mid;
	}
	snprintf(buf, size, "%s/%u", name(x, (int)lo), (unsigned)(ch - x->base[lo]));
}

/*
 * Iterative DFS for a cycle over nodes channel << shift | vl (shift 0: one
 * VL, the channel alone; 4: a channel on each of 16 VLs); the first cycle
 * found is described in cycle.  True when there is one.
 */
static bool find_cycle(const struct rt *x, struct edge *e, size_t ne, unsigned shift, char *cycle, size_t cyclesz)
{
	size_t nnodes = x->base[x->t->nnodes] << shift;
	size_t *first = xcalloc(nnodes + 2, sizeof(size_t));
	uint8_t *color = xcalloc(nnodes + 1, 1);
	uint32_t *stack = xcalloc(nnodes + 1, sizeof(uint32_t));
	size_t *next = xcalloc(nnodes + 1, sizeof(size_t));
	bool found = false;

	for (size_t i = 0; i < ne; i++)
		first[e[i].from + 1]++;
	for (size_t i = 0; i < nnodes; i++)
		first[i + 1] += first[i];
	for (size_t root = 0; root < nnodes && !found; root++) {
		size_t depth = 0;

		if (color[root] || first[root] == first[root + 1])
			continue;
		stack[depth++] = (uint32_t)root;
		next[root] = first[root];
		color[root] = 1;
		while (depth && !found) {
			uint32_t v = stack[depth - 1];

			if (next[v] == first[v + 1]) {
				color[v] = 2;
				depth--;
				continue;
			}
			const struct edge *ed = &e[next[v]++];
			uint32_t w = ed->to;

			if (color[w] == 1) {
				struct sb sb = SB_INIT;
				char c[96], d[128];
				size_t at = depth;

				while (at && stack[at - 1] != w)
					at--;
				for (size_t i = at ? at - 1 : 0; i <= depth; i++) {
					uint32_t n = i < depth ? stack[i] : w;

					channel_name(x, n >> shift, c, sizeof(c));
					if (shift)
						sb_addf(&sb, "%s VL%u", c, n & ((1u << shift) - 1));
					else
						sb_adds(&sb, c);
					sb_adds(&sb, i < depth ? " -> " : "");
				}
				dest_name(x, ed->dlid, d, sizeof(d));
				sb_addf(&sb, " (closed by the routes to %s)", d);
				snprintf(cycle, cyclesz, "%s", sb.buf);
				sb_release(&sb);
				found = true;
			} else if (!color[w]) {
				color[w] = 1;
				next[w] = first[w];
				stack[depth++] = w;
			}
		}
	}
	free(first);
	free(color);
	free(stack);
	free(next);
	return found;
}

/* Sort and deduplicate; the number of distinct edges. */
static size_t unique_edges(struct edge *e, size_t ne)
{
	size_t u = 0;

	qsort(e, ne, sizeof(*e), cmp_edge);
	for (size_t i = 0; i < ne; i++)
		if (!u || cmp_edge(&e[u - 1], &e[i]))
			e[u++] = e[i];
	return u;
}

static void add_edge(struct edge **e, size_t *ne, size_t *cap, uint32_t from, uint32_t to, unsigned dlid)
{
	if (*ne == *cap) {
		*cap = *cap ? 2 * *cap : 4096;
		*e = xrealloc(*e, *cap * sizeof(**e));
	}
	(*e)[(*ne)++] = (struct edge){ from, to, (uint16_t)dlid };
}

int rt_analyze(const struct ibnet *topo, const struct ib_lfts *lfts, struct rt_report *r, char *err, size_t errsz)
{
	struct rt x;
	uint8_t *st;
	unsigned *hops, *cnt;
	int *stack;
	struct edge *e = NULL;
	size_t ne = 0, cape = 0, nslots;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = build(&x, topo, lfts, r, err, errsz);
	if (ret) {
		release(&x);
		return ret;
	}
	nslots = x.base[topo->nnodes];
	st = xcalloc(x.nsw + 1, 1);
	hops = xcalloc(x.nsw + 1, sizeof(unsigned));
	stack = xcalloc(x.nsw + 1, sizeof(int));
	cnt = xcalloc(nslots + 1, sizeof(unsigned));
	for (unsigned lid = 1; lid <= x.maxlid; lid++) {
		if (x.owner[lid] < 0)
			continue;
		r->dest_lids++;
		memset(st, ST_UNKNOWN, x.nsw);
		/* every source CA port: the switch it hangs on */
		for (size_t i = 0; i < topo->nlinks; i++) {
			const struct ibnet_link *k = &topo->links[i];

			for (int end = 0; end < 2; end++) {
				int ca = end ? k->b : k->a, sw = end ? k->a : k->b, cap = end ? k->bport : k->aport;
				unsigned slid = end ? k->blid : k->alid;

				if (topo->nodes[ca].is_switch || !slid || x.sw_of[sw] < 0)
					continue;
				if (ca == x.owner[lid] && cap == x.owner_port[lid])
					continue;	/* to itself */
				resolve(&x, lid, x.sw_of[sw], st, hops, stack, r);
				r->routes++;
				if (st[x.sw_of[sw]] != ST_OK)
					r->unreachable++;
				else if (hops[x.sw_of[sw]] > r->max_hops)
					r->max_hops = hops[x.sw_of[sw]];
			}
		}
		/* dependencies: switch s forwards to switch t, which forwards to a switch */
		for (size_t s = 0; s < x.nsw; s++) {
			int node = x.sw_node[s], t;
			uint8_t o = lft_at(&x, (int)s, lid), o2;

			if (st[s] != ST_OK || o == NO_ROUTE || o == 0)
				continue;
			t = x.peer[slot(&x, node, o)];
			if (t < 0 || x.sw_of[t] < 0)
				continue;
			o2 = lft_at(&x, x.sw_of[t], lid);
			if (o2 == NO_ROUTE || o2 == 0 || x.peer[slot(&x, t, o2)] < 0 || x.sw_of[x.peer[slot(&x, t, o2)]] < 0)
				continue;
			add_edge(&e, &ne, &cape, (uint32_t)slot(&x, node, o), (uint32_t)slot(&x, t, o2), lid);
		}
		/* balance: what each uplink carries by the tables, traffic or not */
		for (size_t s = 0; s < x.nsw; s++) {
			uint8_t o = lft_at(&x, (int)s, lid);
			int node = x.sw_node[s], t;

			if (o == NO_ROUTE || o == 0 || o > topo->nodes[node].nports || x.rank[s] < 0)
				continue;
			t = x.peer[slot(&x, node, o)];
			if (t >= 0 && x.sw_of[t] >= 0 && x.rank[x.sw_of[t]] > x.rank[s])
				cnt[slot(&x, node, o)]++;
		}
	}
	/* the graph: unique edges, then a cycle */
	size_t u = unique_edges(e, ne);

	r->dependencies = u;
	for (size_t s = 0; s < x.nsw; s++) {
		int node = x.sw_node[s];

		for (int p = 1; p <= topo->nodes[node].nports; p++) {
			int pr = x.peer[slot(&x, node, p)];

			if (pr >= 0 && x.sw_of[pr] >= 0)
				r->channels++;
		}
	}
	r->credit_loop = find_cycle(&x, e, u, 0, r->cycle, sizeof(r->cycle));
	/* balance per switch with two uplinks or more */
	for (size_t s = 0; s < x.nsw; s++) {
		int node = x.sw_node[s];
		struct rt_balance b = { .sw = node, .min = ~0u, .max_port = -1, .min_port = -1 };

		for (int p = 1; p <= topo->nodes[node].nports; p++) {
			int pr = x.peer[slot(&x, node, p)];
			unsigned c = cnt[slot(&x, node, p)];

			if (pr < 0 || x.sw_of[pr] < 0 || x.rank[s] < 0 || x.rank[x.sw_of[pr]] <= x.rank[s])
				continue;
			b.uplinks++;
			if (c > b.max || b.max_port < 0) {
				b.max = c;
				b.max_port = p;
			}
			if (c < b.min) {
				b.min = c;
				b.min_port = p;
			}
		}
		if (b.uplinks < 2)
			continue;
		r->bal = xrealloc(r->bal, (r->nbal + 1) * sizeof(*r->bal));
		r->bal[r->nbal++] = b;
	}
	free(e);
	free(st);
	free(hops);
	free(stack);
	free(cnt);
	release(&x);
	return 0;
}

/*
 * Every route again, hop by hop, each switch-to-switch channel taken on the
 * VL the route's SL is mapped to there: a route from a CA port enters its
 * first switch on the port the CA is cabled to, and each later switch on
 * the port the previous one's channel arrives at, so a table that maps by
 * in-port (torus-2QoS's dateline lanes) is followed as the switch applies
 * it.  The resolution of rt_analyze is redone first (which routes reach):
 * an unreachable route adds nothing here, it is reachability's finding.
 */
int rt_analyze_vls(const struct ibnet *topo, const struct ib_lfts *lfts, const struct rt_vl_source *src,
		   struct rt_vl_report *r, char *err, size_t errsz)
{
	struct rt_report scratch = { 0 };
	struct rt x;
	struct edge *e = NULL;
	size_t ne = 0, cape = 0;
	uint8_t *st;
	unsigned *hops;
	int *stack, ret;

	memset(r, 0, sizeof(*r));
	ret = build(&x, topo, lfts, &scratch, err, errsz);
	if (ret) {
		release(&x);
		return ret;
	}
	st = xcalloc(x.nsw + 1, 1);
	hops = xcalloc(x.nsw + 1, sizeof(unsigned));
	stack = xcalloc(x.nsw + 1, sizeof(int));
	for (unsigned lid = 1; lid <= x.maxlid; lid++) {
		if (x.owner[lid] < 0)
			continue;
		memset(st, ST_UNKNOWN, x.nsw);
		for (size_t i = 0; i < topo->nlinks; i++) {
			const struct ibnet_link *k = &topo->links[i];

			for (int end = 0; end < 2; end++) {
				int ca = end ? k->b : k->a, sw = end ? k->a : k->b, cap = end ? k->bport : k->aport;
				int in = end ? k->aport : k->bport, cur, sl;
				unsigned slid = end ? k->blid : k->alid, n = 0;
				uint32_t prev = UINT32_MAX;

				if (topo->nodes[ca].is_switch || !slid || x.sw_of[sw] < 0 ||
				    (ca == x.owner[lid] && cap == x.owner_port[lid]))
					continue;
				resolve(&x, lid, x.sw_of[sw], st, hops, stack, &scratch);
				if (st[x.sw_of[sw]] != ST_OK || hops[x.sw_of[sw]] < 2)
					continue;	/* unreachable, or one switch: no dependency */
				r->routes++;
				sl = src->path_sl(src->arg, slid, lid);
				if (sl < 0 || sl > 15) {
					r->sl_unknown++;
					sl = 0;
				}
				r->sls |= (uint16_t)(1u << sl);
				for (cur = x.sw_of[sw]; n++ <= x.nsw;) {
					int node = x.sw_node[cur], t, vl;
					uint8_t o = lft_at(&x, cur, lid);
					uint32_t ch;

					t = x.peer[slot(&x, node, o)];
					if (x.sw_of[t] < 0)
						break;		/* delivered */
					vl = src->sl2vl(src->arg, node, in, o, (unsigned)sl);
					if (vl < 0 || vl > 15) {
						r->vl_unknown++;
						vl = 0;
					}
					if (vl == 15) {
						r->dropped++;
						break;
					}
					r->vls |= (uint16_t)(1u << vl);
					ch = (uint32_t)(slot(&x, node, o) << 4 | (size_t)vl);
					if (prev != UINT32_MAX)
						add_edge(&e, &ne, &cape, prev, ch, lid);
					prev = ch;
					in = x.peer_port[slot(&x, node, o)];
					cur = x.sw_of[t];
				}
			}
		}
	}
	r->dependencies = unique_edges(e, ne);
	r->credit_loop = find_cycle(&x, e, r->dependencies, 4, r->cycle, sizeof(r->cycle));
	free(e);
	free(st);
	free(hops);
	free(stack);
	rt_report_release(&scratch);
	release(&x);
	return 0;
}

void rt_report_release(struct rt_report *r)
{
	free(r->bal);
	memset(r, 0, sizeof(*r));
}
