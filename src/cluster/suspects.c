/* SPDX-License-Identifier: MIT */
/* Pairwise elimination (see suspects.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/suspects.h"
#include "core/util.h"

struct acc {
	unsigned good, bad, links;
	long passed_with;	/* a partner it passed with, for the evidence; -1 none */
	bool blamed;
	unsigned nwhy;		/* evidence items seen; the first few are kept */
	struct sb why;
};

static void add_why(struct acc *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_why(struct acc *a, const char *fmt, ...)
{
	va_list ap;

	/* Evidence stays one readable line: the first items, then a count. */
	if (a->nwhy++ >= 2)
		return;
	if (a->why.len)
		sb_adds(&a->why, "; ");
	va_start(ap, fmt);
	sb_vaddf(&a->why, fmt, ap);
	va_end(ap);
}

static void push(struct rq_suspects *out, uint32_t node, long link, char *reason)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
	out->v[out->n++] = (struct rq_suspect){ node, link, reason };
}

static bool counted(const struct rq_node_outcome *nodes, const struct rq_pair_outcome *p)
{
	return !nodes[p->client].down && !nodes[p->server].down;
}

void rq_suspects_find(size_t n, const char *const *names, const struct rq_node_outcome *nodes,
		      const struct rq_pair_outcome *pairs, size_t np, struct rq_suspects *out)
{
	struct acc *a = xcalloc(n ? n : 1, sizeof(*a));
	bool *link_kept = xcalloc(np ? np : 1, sizeof(*link_kept));

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		sb_init(&a[i].why);
		a[i].passed_with = -1;
	}
	for (size_t i = 0; i < np; i++) {
		const struct rq_pair_outcome *p = &pairs[i];

		if (!counted(nodes, p))
			continue;
		if (p->bad) {
			a[p->client].bad++;
			a[p->server].bad++;
		} else {
			a[p->client].good++;
			a[p->server].good++;
			a[p->client].passed_with = p->server;
			a[p->server].passed_with = p->client;
		}
	}
	for (size_t i = 0; i < np; i++) {
		const struct rq_pair_outcome *p = &pairs[i];
		uint32_t c = p->client, s = p->server;
		bool cc, sc;

		if (!p->bad || !counted(nodes, p))
			continue;
		cc = a[c].good > 0;
		sc = a[s].good > 0;
		if (cc && sc) {
			link_kept[i] = true;
			a[c].links++;
			a[s].links++;
		} else if (!cc && sc) {
			a[c].blamed = true;
			add_why(&a[c], "%s, while %s passed with %s",
				p->what, names[s], names[a[s].passed_with]);
		} else if (cc && !sc) {
			a[s].blamed = true;
			add_why(&a[s], "%s, while %s passed with %s",
				p->what, names[c], names[a[c].passed_with]);
		} else {
			a[c].blamed = a[s].blamed = true;
			add_why(&a[c], "%s, and neither end passed with any node", p->what);
			add_why(&a[s], "%s, and neither end passed with any node", p->what);
		}
	}
	/* A node in several suspect links that mostly fails is the common factor. */
	for (size_t i = 0; i < np; i++) {
		const struct rq_pair_outcome *p = &pairs[i];

		if (!link_kept[i])
			continue;
		for (int e = 0; e < 2; e++) {
			uint32_t x = e ? p->server : p->client;

			if (a[x].links >= 2 && a[x].bad > a[x].good) {
				a[x].blamed = true;
				add_why(&a[x], "%s (%u of its %u pairs failed, the partners "
					"passed with other nodes)", p->what, a[x].bad, a[x].bad + a[x].good);
				link_kept[i] = false;
			}
		}
	}
	for (size_t x = 0; x < n; x++) {
		struct sb why = SB_INIT;

		if (nodes[x].down || nodes[x].fails) {
			sb_addf(&why, "%s%s", nodes[x].down ? "down: " : "", nodes[x].first ?
				nodes[x].first : "failed a node check");
			if (nodes[x].fails > 1)
				sb_addf(&why, " (and %u more node checks)", nodes[x].fails - 1);
		}
		if (a[x].blamed) {
			sb_addf(&why, "%s%s", why.len ? "; " : "", a[x].why.buf);
			if (a[x].nwhy > 2)
				sb_addf(&why, " (and %u more failed pairs)", a[x].nwhy - 2);
		}
		if (why.len)
			push(out, (uint32_t)x, -1, sb_detach(&why));
		else
			sb_release(&why);
	}
	for (size_t i = 0; i < np; i++)
		if (link_kept[i] && !a[pairs[i].client].blamed && !a[pairs[i].server].blamed)
			push(out, pairs[i].client, pairs[i].server,
			     xasprintf("%s, while both ends passed with other nodes", pairs[i].what));
	for (size_t i = 0; i < n; i++)
		sb_release(&a[i].why);
	free(link_kept);
	free(a);
}

void rq_suspects_release(struct rq_suspects *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].reason);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

bool rq_suspects_names(const char *list, const char *host)
{
	size_t hl = host ? strlen(host) : 0;

	if (!list || !hl)
		return false;
	for (const char *p = list + strspn(list, " ,"); *p; p += strspn(p, " ,")) {
		size_t l = strcspn(p, " ,");

		if (l == hl && !strncmp(p, host, l))
			return true;
		p += l;
	}
	return false;
}
