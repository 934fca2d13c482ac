/* SPDX-License-Identifier: MIT */
/* Pairing policies and their rounds (see plan.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/plan.h"
#include "core/case.h"
#include "core/util.h"

static void rounds_add(struct rq_rounds *r, size_t *cap, uint32_t client, uint32_t server)
{
	if (r->npairs == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		r->pairs = xrealloc(r->pairs, *cap * sizeof(*r->pairs));
	}
	r->pairs[r->npairs++] = (struct rq_pair){ client, server };
}

static void rounds_close(struct rq_rounds *r)
{
	r->start = xrealloc(r->start, (r->nrounds + 2) * sizeof(*r->start));
	r->start[++r->nrounds] = r->npairs;
}

/*
 * The circle method: node m-1 stays put, the others turn one place per
 * round; in round k node k meets m-1 and (k+i) meets (k-i).  With odd N a
 * phantom node m-1 = N makes the count even and its partner sits out.
 * Directions alternate so each node is client in about half its pairs.
 */
static void plan_all(size_t n, struct rq_rounds *r)
{
	size_t m = n % 2 ? n + 1 : n, cap = (n * (n - 1)) / 2;

	r->pairs = xmalloc((cap ? cap : 1) * sizeof(*r->pairs));
	for (size_t k = 0; k + 1 < m; k++) {
		uint32_t fixed = (uint32_t)(m - 1);

		if (fixed < n)
			rounds_add(r, &cap, k % 2 ? fixed : (uint32_t)k, k % 2 ? (uint32_t)k : fixed);
		for (size_t i = 1; i < m / 2; i++) {
			uint32_t a = (uint32_t)((k + i) % (m - 1));
			uint32_t b = (uint32_t)((k + (m - 1) - i) % (m - 1));

			rounds_add(r, &cap, i % 2 ? a : b, i % 2 ? b : a);
		}
		rounds_close(r);
	}
}

/*
 * First fit: each pair goes to the first round where neither node is busy.
 * busy[node] holds a bit per round for the first 64 rounds, then a plain
 * scan; lists this long are rare and written by hand.
 */
static void plan_first_fit(const struct rq_pair *v, size_t nv, size_t n, struct rq_rounds *r)
{
	size_t *round_of = xmalloc((nv ? nv : 1) * sizeof(*round_of));
	uint64_t *busy = xcalloc(n ? n : 1, sizeof(*busy));
	size_t nrounds = 0, cap = nv;

	for (size_t i = 0; i < nv; i++) {
		size_t k = 0;

		for (;; k++) {
			bool taken;

			if (k < 64) {
				taken = ((busy[v[i].client] | busy[v[i].server]) >> k) & 1;
			} else {
				taken = false;
				for (size_t j = 0; j < i && !taken; j++)
					taken = round_of[j] == k &&
						(v[j].client == v[i].client || v[j].server == v[i].client ||
						 v[j].client == v[i].server || v[j].server == v[i].server);
			}
			if (!taken)
				break;
		}
		round_of[i] = k;
		if (k < 64) {
			busy[v[i].client] |= 1ULL << k;
			busy[v[i].server] |= 1ULL << k;
		}
		if (k + 1 > nrounds)
			nrounds = k + 1;
	}
	r->pairs = xmalloc((nv ? nv : 1) * sizeof(*r->pairs));
	for (size_t k = 0; k < nrounds; k++) {
		for (size_t i = 0; i < nv; i++)
			if (round_of[i] == k)
				rounds_add(r, &cap, v[i].client, v[i].server);
		rounds_close(r);
	}
	free(busy);
	free(round_of);
}

void rq_plan_rounds(const struct rq_pairs_policy *p, size_t n, struct rq_rounds *r)
{
	memset(r, 0, sizeof(*r));
	r->start = xcalloc(1, sizeof(*r->start));
	if (p->kind == RQ_PAIRS_ALL) {
		if (n >= 2)
			plan_all(n, r);
		return;
	}
	if (p->kind == RQ_PAIRS_LIST) {
		plan_first_fit(p->list, p->nlist, n, r);
		return;
	}
	/* ring: the even links, then the odd ones; first fit puts them in 2 (or 3) rounds */
	size_t nl = n < 2 ? 0 : n == 2 ? 1 : n, j = 0;
	struct rq_pair *v = xmalloc((nl ? nl : 1) * sizeof(*v));

	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = pass; i < nl; i += 2)
			v[j++] = (struct rq_pair){ (uint32_t)i, (uint32_t)((i + 1) % n) };
	plan_first_fit(v, nl, n, r);
	free(v);
}

void rq_rounds_release(struct rq_rounds *r)
{
	free(r->pairs);
	free(r->start);
	memset(r, 0, sizeof(*r));
}

int rq_pairs_parse(const char *text, const struct rq_hosts *nodes, struct rq_pairs_policy *p,
		   char *err, size_t errsz)
{
	memset(p, 0, sizeof(*p));
	if (rq_pairs_syntax(text, err, errsz))
		return -1;
	if (!strcmp(text, "ring") || !strcmp(text, "all")) {
		uint64_t n = nodes->n, np = text[0] == 'a' ? n * (n ? n - 1 : 0) / 2 : n;

		if (np > RQ_PAIRS_MAX) {
			snprintf(err, errsz, "--pairs %s of %llu nodes is %llu pairs per two-sided "
				 "case, over the limit of %u (all pairs of 1448 nodes): use ring, "
				 "or list the pairs", text, (unsigned long long)n,
				 (unsigned long long)np, RQ_PAIRS_MAX);
			return -1;
		}
		p->kind = text[0] == 'r' ? RQ_PAIRS_RING : RQ_PAIRS_ALL;
		return 0;
	}
	p->kind = RQ_PAIRS_LIST;
	for (const char *s = text;;) {
		const char *e = strchrnul(s, ','), *colon = memchr(s, ':', (size_t)(e - s));
		char *a = xstrndup(s, (size_t)(colon - s)), *b = xstrndup(colon + 1, (size_t)(e - colon - 1));
		long ia = rq_hosts_find(nodes, a), ib = rq_hosts_find(nodes, b);
		int bad = ia < 0 || ib < 0 || ia == ib;

		if (bad)
			snprintf(err, errsz, ia < 0 || ib < 0 ? "pair %s:%s names a node that is not "
				 "in --nodes (%s)" : "pair %s:%s pairs a node with itself%s",
				 a, b, ia < 0 ? a : ib < 0 ? b : "");
		free(a);
		free(b);
		if (bad) {
			rq_pairs_release(p);
			return -1;
		}
		if (p->nlist >= RQ_PAIRS_MAX) {
			snprintf(err, errsz, "--pairs lists over %u pairs, the limit", RQ_PAIRS_MAX);
			rq_pairs_release(p);
			return -1;
		}
		p->list = xrealloc(p->list, (p->nlist + 1) * sizeof(*p->list));
		p->list[p->nlist++] = (struct rq_pair){ (uint32_t)ia, (uint32_t)ib };
		if (!*e)
			return 0;
		s = e + 1;
	}
}

void rq_pairs_release(struct rq_pairs_policy *p)
{
	free(p->list);
	memset(p, 0, sizeof(*p));
}
